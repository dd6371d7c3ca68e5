/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http.c — dpmonctl's HTTP client over libcurl (http.h). libcurl keeps
 * the connection open between requests, so --watch polls on one
 * connection; TLS and the CA bundle are libcurl's too.
 */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

/* Whole request, connection included (seconds); the API answers at once. */
#define CTL_HTTP_TIMEOUT_S         10L
#define CTL_HTTP_CONNECT_TIMEOUT_S 3L
/* An answer larger than this is refused (bytes): a top-10000 is ~15 MB. */
#define CTL_HTTP_MAX_BODY          (256u << 20)

struct body_buf {
	char *data;
	size_t len;
	size_t cap;
	int too_big;
};

static size_t
on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct body_buf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n + 1 > CTL_HTTP_MAX_BODY) {
		b->too_big = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (p == NULL)
			return 0;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

int
ctl_http_open(struct ctl_http *c, const char *url, const char *token, const char *cacert, char *err,
	      size_t errlen)
{
	size_t n;

	memset(c, 0, sizeof(*c));
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		snprintf(err, errlen, "invalid URL '%s': expected http://HOST:PORT or https://...",
			 url);
		return -EINVAL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		goto nomem;
	c->base = strdup(url);
	c->token = token ? strdup(token) : NULL;
	c->cacert = cacert ? strdup(cacert) : NULL;
	c->curl = curl_easy_init();
	if (c->base == NULL || (token && c->token == NULL) || (cacert && c->cacert == NULL) ||
	    c->curl == NULL)
		goto nomem;
	n = strlen(c->base);
	while (n > 0 && c->base[n - 1] == '/')
		c->base[--n] = '\0';
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	ctl_http_close(c);
	return -ENOMEM;
}

int
ctl_http_request(struct ctl_http *c, const char *method, const char *path, const char *body,
		 struct ctl_reply *r, char *err, size_t errlen)
{
	struct body_buf b = {0};
	struct curl_slist *headers = NULL;
	char curl_err[CURL_ERROR_SIZE] = "";
	char *url, *auth = NULL;
	CURL *h = c->curl;
	CURLcode rc;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	if (asprintf(&url, "%s%s", c->base, path) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, CTL_HTTP_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CTL_HTTP_CONNECT_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "dpmonctl/" DPMON_VERSION);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->cacert != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (body != NULL)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	/* dpmon refuses a request that changes state without this type, body or not. */
	if (strcmp(method, "GET") != 0)
		headers = curl_slist_append(headers, "Content-Type: application/json");
	if (c->token != NULL && strcmp(method, "GET") != 0) {
		if (asprintf(&auth, "Authorization: Bearer %s", c->token) < 0)
			auth = NULL;
		if (auth != NULL)
			headers = curl_slist_append(headers, auth);
	}
	if (headers != NULL)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	r->token_sent = auth != NULL;
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
		r->body = b.data ? b.data : strdup("");
		r->len = b.len;
		b.data = NULL;
		if (r->body == NULL) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
		}
	} else if (rc == CURLE_COULDNT_CONNECT) {
		snprintf(err, errlen,
			 "cannot connect to %s: %s; is dpmon running? (--url or DPMON_URL)",
			 c->base, curl_err[0] ? curl_err : curl_easy_strerror(rc));
		ret = -ECONNREFUSED;
	} else if (b.too_big) {
		snprintf(err, errlen, "%s %s: answer over %u bytes", method, url,
			 CTL_HTTP_MAX_BODY);
		ret = -EIO;
	} else {
		snprintf(err, errlen, "%s %s: %s", method, url,
			 curl_err[0] ? curl_err : curl_easy_strerror(rc));
		ret = -EIO;
	}
	free(b.data);
	free(auth);
	curl_slist_free_all(headers);
	free(url);
	return ret;
}

char *
ctl_http_escape(struct ctl_http *c, const char *text)
{
	char *e = curl_easy_escape(c->curl, text, 0);
	char *copy;

	if (e == NULL)
		return NULL;
	copy = strdup(e);
	curl_free(e);
	return copy;
}

void
ctl_reply_error(const struct ctl_reply *r, char *buf, size_t buflen)
{
	json_t *doc = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
	const char *msg = NULL;

	if (json_is_object(doc) && json_is_string(json_object_get(doc, "error")))
		msg = json_string_value(json_object_get(doc, "error"));
	/* What to do, beside what dpmon said: a 401 wants a token (or another
	 * one, when the request had one), and an answer that is not dpmon's
	 * JSON error a --url that points at dpmon. */
	if (msg != NULL && r->status == 401 && r->token_sent)
		snprintf(buf, buflen,
			 "%s (HTTP 401; dpmon refused the token dpmonctl sent: the file of "
			 "--token-file or DPMON_TOKEN_FILE must hold http.write_token_file's)",
			 msg);
	else if (msg != NULL && r->status == 401)
		snprintf(buf, buflen,
			 "%s (HTTP 401; give dpmonctl the token with --token-file FILE "
			 "or DPMON_TOKEN_FILE)",
			 msg);
	else if (msg != NULL)
		snprintf(buf, buflen, "%s (HTTP %ld)", msg, r->status);
	else
		snprintf(buf, buflen, "HTTP %ld, not an answer of dpmon's API: is --url dpmon's?",
			 r->status);
	json_decref(doc);
}

void
ctl_reply_free(struct ctl_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

void
ctl_http_close(struct ctl_http *c)
{
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	free(c->base);
	free(c->token);
	free(c->cacert);
	memset(c, 0, sizeof(*c));
}
