/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_http.c — one HTTP POST to an export server with libcurl (its
 * easy handle is the exporter's own, so connections are kept alive
 * between batches), and a one-line reason when it fails
 * (export_private.h).
 *
 * The transfer's progress callback beats the exporter's progress stamp,
 * so a watchdog sees a thread waiting on a slow server as alive, and ends
 * the request when the exporter must stop.
 */
#include "export_private.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The first line of an error answer, for the reason text; and the whole
 * answer when @c all is set. */
struct answer {
	char text[160];
	size_t len;
	struct xbuf *all;
};

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t total = size * n;

	if (a->all != NULL)
		xbuf_put(a->all, data, total);

	for (size_t i = 0; i < total && a->len + 1 < sizeof(a->text); i++) {
		char c = data[i];

		if (c == '\n' || c == '\r')
			c = ' ';
		if (!isprint((unsigned char)c))
			c = '?';
		a->text[a->len++] = c;
	}
	a->text[a->len] = '\0';
	return total;
}

static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct export_sink *s = arg;
	struct timespec t;
	uint64_t now, deadline;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	clock_gettime(CLOCK_MONOTONIC, &t);
	now = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	if (s->progress_ns != NULL)
		__atomic_store_n(s->progress_ns, now, __ATOMIC_RELAXED);
	if (s->hb != NULL)
		dpmon_heartbeat_beat(s->hb);
	deadline = s->abort_after_ns != NULL ? __atomic_load_n(s->abort_after_ns, __ATOMIC_RELAXED)
					     : 0;
	return deadline != 0 && now > deadline ? 1 : 0;
}

/* Trailing spaces off the answer's text. */
static void
trim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
}

/*
 * export_http_post, the answer's body into @p answer when not NULL; with
 * @p empty, a 2xx answer that has a body is a failure too (a server
 * answers a write with no body: whatever sent one did not take the rows).
 */
static int
post(struct export_sink *s, const char *url, const char *body, size_t len,
     struct curl_slist *headers, bool basic_auth, struct xbuf *answer, bool empty, char *err,
     size_t errlen)
{
	char cerr[CURL_ERROR_SIZE] = "";
	struct answer ans = {.len = 0, .all = answer};
	struct curl_slist *all = NULL;
	long status = 0;
	CURLcode rc;

	s->http_status = 0;
	if (s->curl == NULL) {
		snprintf(err, errlen, "cannot start libcurl");
		return -1;
	}
	curl_easy_reset(s->curl);
	curl_easy_setopt(s->curl, CURLOPT_URL, url);
	curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, body != NULL ? body : "");
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)s->timeout_ms);
	curl_easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(s->timeout_ms < 5000 ? s->timeout_ms : 5000));
	curl_easy_setopt(s->curl, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(s->curl, CURLOPT_WRITEDATA, &ans);
	curl_easy_setopt(s->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(s->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(s->curl, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(s->curl, CURLOPT_USERAGENT, "dpmon");
	/* No "Expect: 100-continue" for large bodies: a server that does not
	 * answer it would cost a second per batch. */
	all = curl_slist_append(NULL, "Expect:");
	for (; all != NULL && headers != NULL; headers = headers->next)
		if (curl_slist_append(all, headers->data) == NULL) {
			curl_slist_free_all(all);
			all = NULL;
		}
	if (all == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, all);
	if (basic_auth && s->sc->user[0] != '\0') {
		curl_easy_setopt(s->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(s->curl, CURLOPT_USERNAME, s->sc->user);
		curl_easy_setopt(s->curl, CURLOPT_PASSWORD, s->secret);
	}
	rc = curl_easy_perform(s->curl);
	curl_slist_free_all(all);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	s->http_status = status;
	trim(ans.text);
	if (status < 200 || status > 299) {
		snprintf(err, errlen, "HTTP %ld: %s", status, ans.len ? ans.text : "(no text)");
		return -1;
	}
	if (empty && ans.len > 0) {
		snprintf(err, errlen, "HTTP %ld with a body, which %s never sends: %s", status,
			 s->be->name, ans.text);
		return -1;
	}
	if (answer != NULL && answer->oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int
export_http_post(struct export_sink *s, const char *url, const char *body, size_t len,
		 struct curl_slist *headers, bool basic_auth, bool empty, char *err, size_t errlen)
{
	return post(s, url, body, len, headers, basic_auth, NULL, empty, err, errlen);
}

int
export_http_query(struct export_sink *s, const char *url, const char *body, size_t len,
		  struct xbuf *answer, char *err, size_t errlen)
{
	return post(s, url, body, len, NULL, true, answer, answer == NULL, err, errlen);
}
