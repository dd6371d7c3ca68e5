/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_guard.h — connection admission in front of libmicrohttpd: the
 * listening socket, the event loop thread (epoll) that runs the daemon,
 * the connection limits (total and per client address, evicting the
 * oldest connection that has not sent a whole request), the header
 * deadline, and the check of every connection's first request head
 * before libmicrohttpd reads it. Private to lib/serve (http.c).
 */
#ifndef DPMON_HTTP_GUARD_H
#define DPMON_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

/** Connections at once, all addresses (the file-descriptor limit may lower it). */
#define DPMON_HTTP_MAX_CONNECTIONS    4096
/** Connections at once from one client address. */
#define DPMON_HTTP_MAX_PER_ADDR       64
/** A request (line, header fields and body) must be read whole this long after
 *  the connection opened or its previous response was sent (ms). */
#define DPMON_HTTP_HEADER_DEADLINE_MS 5000
/** Longest request line (method, target, version) of a first request (bytes). */
#define DPMON_HTTP_LINE_MAX           8192
/** Longest request head, line and header fields, of a first request (bytes). */
#define DPMON_HTTP_HEAD_MAX           16384
/** Most header fields in one request. */
#define DPMON_HTTP_MAX_FIELDS         64

struct dpmon_http_guard;

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
 * Create the guard: raise the soft file-descriptor limit up to the hard
 * one, size the connection limit to fit (DPMON_HTTP_MAX_CONNECTIONS at
 * most) and open the listening socket on @p sa.
 * @param sa   IPv4 or IPv6 address and port (0 = the kernel chooses).
 * @param len  the length of @p sa in bytes.
 * @return the guard, or NULL with errno set (EADDRINUSE, EACCES, ENOMEM, ...).
 * Thread-safety: the thread that starts the server.
 */
struct dpmon_http_guard *dpmon_http_guard_create(const struct sockaddr *sa, socklen_t len);

/** @return the TCP port @p g listens on. Thread-safety: any thread. */
uint16_t dpmon_http_guard_port(const struct dpmon_http_guard *g);

/**
 * @return the connection limit libmicrohttpd is to be started with
 *         (MHD_OPTION_CONNECTION_LIMIT): the guard's own limit and room for
 *         the connections it cut that libmicrohttpd has not yet closed.
 * Thread-safety: any thread.
 */
unsigned dpmon_http_guard_mhd_limit(const struct dpmon_http_guard *g);

/**
 * libmicrohttpd's connection notification (MHD_OPTION_NOTIFY_CONNECTION,
 * with @p g as its closure): links a handed-over connection to its record
 * on MHD_CONNECTION_NOTIFY_STARTED and frees the record on
 * MHD_CONNECTION_NOTIFY_CLOSED.
 * Thread-safety: the guard's thread (libmicrohttpd's callbacks run there).
 */
void dpmon_http_guard_notify(void *g, struct MHD_Connection *c, void **socket_context,
			     enum MHD_ConnectionNotificationCode toe);

/**
 * Note that connection @p c is answering a request (its response is being
 * queued; the request was read whole, or is refused before its body): it
 * no longer runs against the header deadline, which thus also bounds the
 * upload of a body, and cannot be evicted until its response is sent.
 * Sending the response is bounded by libmicrohttpd's idle timeout.
 * Thread-safety: the guard's thread (from the access handler).
 */
void dpmon_http_guard_answering(struct MHD_Connection *c);

/**
 * Note that connection @p c sent its response (request-completed
 * callback): the header deadline starts again for its next request.
 * Thread-safety: the guard's thread.
 */
void dpmon_http_guard_request_done(struct MHD_Connection *c);

/**
 * Start the guard's thread, which accepts connections, checks their first
 * request head, hands them to @p daemon (started with MHD_USE_EPOLL and
 * MHD_USE_NO_LISTEN_SOCKET, no internal thread) and runs it.
 * @return 0, or a negative errno.
 * Thread-safety: the thread that created @p g, once.
 */
int dpmon_http_guard_start(struct dpmon_http_guard *g, struct MHD_Daemon *daemon);

/**
 * Stop the guard's thread and wait for it (no libmicrohttpd call runs
 * after it returns; the caller then stops the daemon).
 * Thread-safety: the thread that started it.
 */
void dpmon_http_guard_stop(struct dpmon_http_guard *g);

/**
 * Close the listening socket and the connections the guard still holds,
 * and free @p g. Call after MHD_stop_daemon (whose close notifications
 * use @p g). NULL is ignored.
 * Thread-safety: the thread that created @p g.
 */
void dpmon_http_guard_destroy(struct dpmon_http_guard *g);

#endif /* DPMON_HTTP_GUARD_H */
