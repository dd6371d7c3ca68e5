/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_guard.h — connection admission in front of libmicrohttpd: the
 * listening socket, the event loop thread (epoll) that runs the daemon,
 * the connection limits (total and per client address, evicting the
 * oldest connection that has not sent a whole request), the header
 * deadline, and the check (http_head.h) of every connection's first
 * request head before libmicrohttpd reads it. Private to lib/serve (http.c).
 */
#ifndef DPMON_HTTP_GUARD_H
#define DPMON_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "http_head.h"

/** Connections at once, all addresses (the file-descriptor limit may lower it). */
#define DPMON_HTTP_MAX_CONNECTIONS       4096
/** Connections at once from one client address. */
#define DPMON_HTTP_MAX_PER_ADDR          64
/** A request (line, header fields and body) must be read whole this long after
 *  the connection opened or its previous response was sent (ms). */
#define DPMON_HTTP_HEADER_DEADLINE_MS    5000
/** HTTPS: the TLS handshake must be complete this long after the connection
 *  opened (ms). */
#define DPMON_HTTP_HANDSHAKE_DEADLINE_MS 3000

struct dpmon_http_guard;

/**
 * Create the guard: raise the soft file-descriptor limit up to the hard
 * one, size the connection limit to fit (DPMON_HTTP_MAX_CONNECTIONS at
 * most) and open the listening socket on @p sa.
 * @param sa   IPv4 or IPv6 address and port (0 = the kernel chooses).
 * @param len  the length of @p sa in bytes.
 * @param tls  the daemon speaks TLS (MHD_USE_TLS): a connection whose first
 *             byte is not a TLS handshake record gets a plain-text 400, the
 *             others are handed over at that byte and must complete the
 *             handshake within DPMON_HTTP_HANDSHAKE_DEADLINE_MS; the
 *             request-head checks are then http.c's (after decryption).
 * @return the guard, or NULL with errno set (EADDRINUSE, EACCES, ENOMEM, ...).
 * Thread-safety: the thread that starts the server.
 */
struct dpmon_http_guard *dpmon_http_guard_create(const struct sockaddr *sa, socklen_t len,
						 bool tls);

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
