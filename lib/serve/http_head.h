/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_head.h — the request-head scanner: the verdict on the first bytes a
 * client sends (RFC 9112 request line and header fields) and on a
 * request's message framing (RFC 9112 6.3), and the limits it applies.
 * Pure functions, no state. Private to lib/serve (http_guard.c, http.c),
 * also built alone into its fuzz target (tests/fuzz/fuzz_http_head.c).
 */
#ifndef DPMON_HTTP_HEAD_H
#define DPMON_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>

/** Longest request line (method, target, version) of a first request (bytes). */
#define DPMON_HTTP_LINE_MAX   8192
/** Longest request head, line and header fields, of a first request (bytes). */
#define DPMON_HTTP_HEAD_MAX   16384
/** Most header fields in one request. */
#define DPMON_HTTP_MAX_FIELDS 64
/** Longest request target a request line of DPMON_HTTP_LINE_MAX bytes holds
 *  (a one-byte method, two spaces, "HTTP/1.1"). */
#define DPMON_HTTP_TARGET_MAX (DPMON_HTTP_LINE_MAX - 10)

/** The verdict on a request's framing or head: 0 = acceptable. */
struct dpmon_http_verdict {
	unsigned status;     /**< 0, or the HTTP status of the refusal (400, 414, ...) */
	const char *message; /**< the refusal's text (static), NULL when status is 0 */
};

/** What the framing check needs from a request's header fields. */
struct dpmon_http_framing {
	unsigned n_content_length;     /**< Content-Length fields */
	const char *content_length;    /**< the first one's value (NULL = none) */
	size_t content_length_len;     /**< its length in bytes */
	unsigned n_transfer_encoding;  /**< Transfer-Encoding fields */
	const char *transfer_encoding; /**< the first one's value (NULL = none) */
	size_t transfer_encoding_len;  /**< its length in bytes */
};

/**
 * Judge the message framing of a request (RFC 9112 6.3): both
 * Content-Length and Transfer-Encoding, a repeated Content-Length, a
 * Content-Length that is not 1 to 18 digits, or a transfer coding other
 * than "chunked" alone are refused (400; 501 for an unknown coding), since
 * two readers of such a request could disagree on where it ends.
 * @param f  the counts and first values of the two fields.
 * @return the verdict (status 0 when the framing is sound).
 * Thread-safety: any thread (no state).
 */
struct dpmon_http_verdict dpmon_http_framing_check(const struct dpmon_http_framing *f);

/**
 * Judge the bytes a client sent first (RFC 9112 2 to 6): NUL-free
 * request line "METHOD SP target SP HTTP/1.x", header fields
 * "name: value", the empty line, then the framing check above.
 * @param buf  the bytes received so far (not NUL-terminated).
 * @param len  their count.
 * @param head_len  set to the head's length in bytes (its empty line
 *                  included) when the head is complete and acceptable.
 * @param head_method  set to true when the method is HEAD (the answer has
 *                     no body).
 * @return 1: complete and acceptable; 0: acceptable so far, more is
 *         needed; -1: refused, @p v says why (400 bytes that are not HTTP,
 *         414 a request line over DPMON_HTTP_LINE_MAX, 431 a head over
 *         DPMON_HTTP_HEAD_MAX or more than DPMON_HTTP_MAX_FIELDS fields,
 *         505 another HTTP version, or the framing check's answer).
 * Thread-safety: any thread (no state).
 */
int dpmon_http_head_check(const char *buf, size_t len, size_t *head_len, bool *head_method,
			  struct dpmon_http_verdict *v);

/**
 * Judge the limits of dpmon_http_head_check on a request head another
 * parser read (libmicrohttpd, under TLS or on a keep-alive connection),
 * with the same answers: 414 for a target over DPMON_HTTP_TARGET_MAX bytes,
 * 431 for a head over DPMON_HTTP_HEAD_MAX bytes or over
 * DPMON_HTTP_MAX_FIELDS fields, 505 for a version other than HTTP/1.0 and
 * HTTP/1.1 (RFC 9112 2.3).
 * @param target_over  the request target is longer than DPMON_HTTP_TARGET_MAX bytes.
 * @param head_len     the head's length in bytes (request line, fields, empty line).
 * @param n_fields     its header fields.
 * @param version      its HTTP version ("HTTP/1.1"); NULL is refused.
 * @return the verdict (status 0 when within every limit).
 * Thread-safety: any thread (no state).
 */
struct dpmon_http_verdict dpmon_http_head_limits(bool target_over, size_t head_len,
						 unsigned n_fields, const char *version);

#endif /* DPMON_HTTP_HEAD_H */
