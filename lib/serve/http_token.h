/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_token.h — bearer tokens of the API (RFC 6750): a request that
 * changes state must carry "Authorization: Bearer TOKEN" with the write
 * token when one is set; with a read token set, every other request
 * (/health excepted) must carry the read or the write token. A missing or
 * wrong token gets 401 with "WWW-Authenticate: Bearer" (RFC 6750 3), is
 * counted and logged (rate limited, log.h).
 *
 * The tokens can be replaced while the server runs (SIGHUP); a mutex
 * guards them, held for one comparison. Private to lib/serve (http.c).
 */
#ifndef DPMON_HTTP_TOKEN_H
#define DPMON_HTTP_TOKEN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_head.h"
#include "token_file.h"

/** The tokens and the count of refusals. */
struct http_tokens {
	pthread_mutex_t lock;            /**< guards the tokens */
	char write[DPMON_TOKEN_MAX + 1]; /**< "" = writes need no token */
	size_t write_len;
	char read[DPMON_TOKEN_MAX + 1]; /**< "" = reads need no token */
	size_t read_len;
	uint64_t unauthorized; /**< 401 answers since start (atomic) */
};

/**
 * Compare @p given (@p given_len bytes) with @p expected (@p expected_len
 * bytes, >= 1) in time that depends only on @p expected_len: one pass
 * over all of @p expected, no early exit.
 * @return true when equal.
 * Thread-safety: any thread.
 */
bool http_token_equal(const char *given, size_t given_len, const char *expected,
		      size_t expected_len);

/**
 * The token of an Authorization value (RFC 6750 2.1: "Bearer" in any
 * case, one or more spaces, a b64token, optional trailing spaces).
 * @param value  the Authorization field value; NULL = absent.
 * @param len    receives the token's length in bytes.
 * @return a pointer to the token inside @p value, or NULL when @p value is
 *         absent, of another scheme or malformed.
 * Thread-safety: any thread.
 */
const char *http_token_from_header(const char *value, size_t *len);

/**
 * Set up @p t with no token.
 * @return 0, or -errno of pthread_mutex_init.
 * Thread-safety: the thread that owns @p t, before any other use.
 */
int http_tokens_init(struct http_tokens *t);

/** Destroy @p t's mutex. Thread-safety: owner, after every other use. */
void http_tokens_destroy(struct http_tokens *t);

/**
 * Read the write and read token files (token_file.h) and, only when both
 * are good, make them @p t's tokens.
 * @param write_path  write token file; NULL or "" = none.
 * @param read_path   read token file; NULL or "" = none.
 * @param err         receives "FILE: reason" on failure; may be NULL.
 * @param errlen      size of @p err in bytes.
 * @return 0, or -errno of dpmon_token_file_read with @p t unchanged.
 * Thread-safety: any thread (takes the lock to replace the tokens).
 */
int http_tokens_load(struct http_tokens *t, const char *write_path, const char *read_path,
		     char *err, size_t errlen);

/**
 * Judge a request: a method other than GET, HEAD and OPTIONS on a
 * resource that changes state (@p changes_state) needs the write token
 * when one is set; any other request except OPTIONS (a CORS preflight
 * carries no credentials) and a read of /health (@p is_health) needs the
 * read or the write token when a read token is set (a write too, when
 * there is no write token).
 * @param authorization  the Authorization field value; NULL = absent.
 * @return status 0, or 401 with a static message (counted).
 * Thread-safety: any thread.
 */
struct dpmon_http_verdict http_tokens_check(struct http_tokens *t, const char *method,
					    bool changes_state, bool is_health,
					    const char *authorization);

/** @return the 401 answers given since start. Thread-safety: any thread. */
uint64_t http_tokens_unauthorized(const struct http_tokens *t);

#endif /* DPMON_HTTP_TOKEN_H */
