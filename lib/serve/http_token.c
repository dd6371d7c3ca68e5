/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_token.c — bearer tokens of the API (http_token.h): the
 * constant-time comparison, the Authorization parser and the verdict. A
 * leaf of http.c; the token files are read by token_file.c.
 */
#include "http_token.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "log.h"

bool
http_token_equal(const char *given, size_t given_len, const char *expected, size_t expected_len)
{
	/* Every byte of @p expected is read whatever @p given holds, so the
	 * time tells nothing of how much of a guess was right. */
	unsigned diff = given_len != expected_len;

	for (size_t i = 0; i < expected_len; i++)
		diff |= (unsigned char)expected[i] ^
			(unsigned char)(i < given_len ? given[i] : expected[i] ^ 0xff);
	return diff == 0;
}

const char *
http_token_from_header(const char *value, size_t *len)
{
	static const char charset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789-._~+/";
	const char *tok;
	size_t n, eq;

	if (value == NULL || strncasecmp(value, "Bearer", 6) != 0 || value[6] != ' ')
		return NULL;
	tok = value + 6 + strspn(value + 6, " ");
	n = strspn(tok, charset);
	eq = strspn(tok + n, "=");
	if (n + eq == 0 || tok[n + eq + strspn(tok + n + eq, " ")] != '\0')
		return NULL;
	*len = n + eq;
	return tok;
}

int
http_tokens_init(struct http_tokens *t)
{
	memset(t, 0, sizeof(*t));
	return -pthread_mutex_init(&t->lock, NULL);
}

void
http_tokens_destroy(struct http_tokens *t)
{
	pthread_mutex_destroy(&t->lock);
}

/* Read @p path (NULL or "" = no token: @p out is "") into @p out. */
static int
load_one(const char *path, char out[DPMON_TOKEN_MAX + 1], size_t *len, char *err, size_t errlen)
{
	char e[160];
	int rc;

	if (path == NULL || path[0] == '\0') {
		out[0] = '\0';
		*len = 0;
		return 0;
	}
	rc = dpmon_token_file_read(path, out, len, e, sizeof(e));
	if (rc != 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", path, e);
	return rc;
}

int
http_tokens_load(struct http_tokens *t, const char *write_path, const char *read_path, char *err,
		 size_t errlen)
{
	char w[DPMON_TOKEN_MAX + 1], r[DPMON_TOKEN_MAX + 1];
	size_t wl, rl;
	int rc = load_one(write_path, w, &wl, err, errlen);

	if (rc == 0)
		rc = load_one(read_path, r, &rl, err, errlen);
	if (rc == 0) {
		pthread_mutex_lock(&t->lock);
		memcpy(t->write, w, wl + 1);
		t->write_len = wl;
		memcpy(t->read, r, rl + 1);
		t->read_len = rl;
		pthread_mutex_unlock(&t->lock);
	}
	explicit_bzero(w, sizeof(w));
	explicit_bzero(r, sizeof(r));
	return rc;
}

struct dpmon_http_verdict
http_tokens_check(struct http_tokens *t, const char *method, bool changes_state, bool is_health,
		  const char *authorization)
{
	bool read_method = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool write = changes_state && !read_method && strcmp(method, "OPTIONS") != 0;
	size_t len = 0;
	const char *tok = http_token_from_header(authorization, &len);
	bool need, ok = false;

	if (strcmp(method, "OPTIONS") == 0 || (is_health && !write))
		return (struct dpmon_http_verdict){.status = 0};
	pthread_mutex_lock(&t->lock);
	/* without a write token, a write is judged as a read */
	write = write && t->write_len > 0;
	need = write || t->read_len > 0;
	if (need && tok != NULL) {
		/* both compared, so the time does not tell which one matched */
		bool w = t->write_len > 0 && http_token_equal(tok, len, t->write, t->write_len);
		bool r = !write && t->read_len > 0 &&
			 http_token_equal(tok, len, t->read, t->read_len);

		ok = w || r;
	}
	pthread_mutex_unlock(&t->lock);
	if (!need || ok)
		return (struct dpmon_http_verdict){.status = 0};
	__atomic_fetch_add(&t->unauthorized, 1, __ATOMIC_RELAXED);
	dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_WARNING, "http: %s answered 401: %s %s token", method,
		  authorization == NULL ? "no" : "wrong", write ? "write" : "read");
	return (struct dpmon_http_verdict){
		.status = 401,
		.message = write ? "this request changes state: it needs Authorization: Bearer "
				   "with the write token (http.write_token_file)"
				 : "reads need Authorization: Bearer with the read token "
				   "(http.read_token_file)"};
}

uint64_t
http_tokens_unauthorized(const struct http_tokens *t)
{
	return __atomic_load_n(&t->unauthorized, __ATOMIC_RELAXED);
}
