/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_hold.h — the bound on the memory held by answers being sent: the
 * bytes of every large answer queued and not yet sent (or dropped with its
 * connection), per client address and in all. A client that requests large
 * answers and never reads them gets a 503 past the bound instead of
 * growing dpmon's memory. Private to lib/serve (http_render.c; http.c reads its counts). No lock: the HTTP
 * event loop thread alone uses it (libmicrohttpd's callbacks run there).
 */
#ifndef DPMON_HTTP_HOLD_H
#define DPMON_HTTP_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_addr.h"

/** Answers up to this many bytes are not counted (the connection limits
 *  bound them: http_guard.h). */
#define DPMON_HTTP_HOLD_SMALL    (64u << 10)
/** Bytes of large answers being sent to one client address at most. */
#define DPMON_HTTP_HOLD_PER_ADDR (64u << 20)
/** Bytes of large answers being sent to all clients at most. */
#define DPMON_HTTP_HOLD_TOTAL    (256u << 20)

/* What is held, per client address and in all. */
struct http_hold {
	struct http_addr_table addrs; /* bytes per client address */
	uint64_t total;               /* bytes, all addresses */
	uint64_t refused;             /* answers refused at a bound (atomic loads elsewhere) */
};

/**
 * Initialise @p h for up to @p n client addresses at once.
 * @return 0, or -ENOMEM. Thread-safety: the thread that starts the server.
 */
int http_hold_init(struct http_hold *h, uint32_t n);

/** Free @p h's table. Thread-safety: the thread that stops the server. */
void http_hold_free(struct http_hold *h);

/**
 * Whether client @p key holds DPMON_HTTP_HOLD_PER_ADDR bytes already, or
 * all clients DPMON_HTTP_HOLD_TOTAL: a large answer to it would be
 * refused, so it need not even be rendered.
 * Thread-safety: the HTTP event loop thread.
 */
bool http_hold_full(const struct http_hold *h, const uint8_t key[16]);

/**
 * Count an answer of @p len bytes to client @p key as held, or refuse it
 * (and count the refusal) when it would pass either bound. Answers of at
 * most DPMON_HTTP_HOLD_SMALL bytes are always accepted and not counted.
 * @return 0, or -ENOBUFS when refused.
 * Thread-safety: the HTTP event loop thread.
 */
int http_hold_take(struct http_hold *h, const uint8_t key[16], size_t len);

/**
 * The answer of @p len bytes to @p key that http_hold_take accepted was
 * sent or dropped. Thread-safety: the HTTP event loop thread.
 */
void http_hold_release(struct http_hold *h, const uint8_t key[16], size_t len);

/**
 * Count one refusal made without http_hold_take (http_hold_full).
 * Thread-safety: the HTTP event loop thread.
 */
void http_hold_refuse(struct http_hold *h);

/** @return the answers refused at a bound so far. Thread-safety: any thread. */
uint64_t http_hold_refused(const struct http_hold *h);

/** @return the bytes held now, all clients. Thread-safety: any thread. */
uint64_t http_hold_total(const struct http_hold *h);

#endif /* DPMON_HTTP_HOLD_H */
