/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_conn.h — the HTTP guard's connection records: a fixed pool, the
 * lists of connections waiting for a request head (oldest first, so a
 * deadline sweep looks only at their heads), the lingering ones, and the
 * counts toward the limits (total and per client address, http_addr.h).
 * Private to lib/serve (http_guard.c). No lock: the guard's thread alone
 * uses it.
 */
#ifndef DPMON_HTTP_CONN_H
#define DPMON_HTTP_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http_addr.h"

struct dpmon_http_guard;
struct MHD_Connection;

enum conn_where {
	CONN_FREE,
	CONN_PEEK,   /* held here, its first request head not yet complete */
	CONN_MHD,    /* handed over to libmicrohttpd */
	CONN_LINGER, /* refused here, half-closed, input drained until EOF */
};

enum conn_list {
	LIST_FRESH,  /* never completed a request, head not complete */
	LIST_IDLE,   /* keep-alive, waiting for its next request head */
	LIST_LINGER, /* CONN_LINGER, oldest first */
	LIST_MAX,
	LIST_NONE = LIST_MAX /* busy with a request, or free */
};

struct conn {
	struct conn *prev, *next;   /* in g->lists[list], or the free list */
	struct dpmon_http_guard *g; /* its guard, for libmicrohttpd's callbacks */
	int fd;
	enum conn_where where;
	enum conn_list list;
	bool counted;              /* counts toward the limits (not cut yet) */
	bool tls_done;             /* TLS listener: its handshake was seen complete */
	struct MHD_Connection *mc; /* libmicrohttpd's connection, once CONN_MHD */
	uint64_t since_ms;
	uint8_t key[16]; /* the client address, IPv4 as ::ffff:a.b.c.d */
	struct sockaddr_storage ss;
	socklen_t ss_len;
};

struct conn_dl {
	struct conn *head, *tail;
};

/* The pool of connection records, their lists and their counts. */
struct http_conns {
	struct conn *pool;
	unsigned pool_n;
	struct conn *free;
	struct conn_dl lists[LIST_MAX];
	unsigned n_conns;             /* counted connections */
	struct http_addr_table addrs; /* counted connections per client address */
};

/**
 * Allocate @p cs with @p n records, all free.
 * @return 0, or -ENOMEM. Thread-safety: the thread that creates the guard.
 */
int http_conns_init(struct http_conns *cs, unsigned n);

/**
 * Close the connections the guard still holds (not yet handed over, or
 * lingering) and free @p cs. Thread-safety: the thread that destroys the
 * guard, its thread stopped.
 */
void http_conns_free(struct http_conns *cs);

/**
 * @return a free record, taking the oldest lingering connection's (closed)
 *         when none is free; NULL when there is none at all.
 * Thread-safety: the guard's thread.
 */
struct conn *http_conn_alloc(struct http_conns *cs);

/** Count @p c (its key set) toward the limits. Thread-safety: the guard's thread. */
void http_conn_count(struct http_conns *cs, struct conn *c);

/** @p c no longer counts toward the limits. Thread-safety: the guard's thread. */
void http_conn_uncount(struct http_conns *cs, struct conn *c);

/** Take @p c off its list (LIST_NONE: busy, or free). Thread-safety: the guard's thread. */
void http_conn_unlist(struct http_conns *cs, struct conn *c);

/**
 * Append @p c to list @p which with its clock started at @p now (ms, the
 * monotonic clock). Thread-safety: the guard's thread.
 */
void http_conn_push(struct http_conns *cs, struct conn *c, enum conn_list which, uint64_t now);

/**
 * Give @p c's record back (uncounted, off its list); its descriptor is
 * not closed here. Thread-safety: the guard's thread.
 */
void http_conn_free(struct http_conns *cs, struct conn *c);

/**
 * Close a connection the guard holds (closing also leaves the epoll set)
 * and give its record back. Thread-safety: the guard's thread.
 */
void http_conn_close(struct http_conns *cs, struct conn *c);

/**
 * Cut @p c: closed here, or, when libmicrohttpd holds it, shut down for
 * libmicrohttpd to close (in the guard's thread the descriptor is still
 * libmicrohttpd's, never closed and reused under it).
 * Thread-safety: the guard's thread.
 */
void http_conn_cut(struct http_conns *cs, struct conn *c);

/**
 * @return the oldest waiting connection of client address @p key (NULL:
 *         of any address) among those that never completed a request,
 *         else among idle keep-alive ones; NULL when there is none.
 * Thread-safety: the guard's thread.
 */
struct conn *http_conn_evictable(struct http_conns *cs, const uint8_t *key);

#endif /* DPMON_HTTP_CONN_H */
