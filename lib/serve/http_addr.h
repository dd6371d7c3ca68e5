/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_addr.h — a count per client address: the HTTP guard's open
 * connections, for its per-address limit (DPMON_HTTP_MAX_PER_ADDR), and
 * the bytes of answers being sent (http_hold.h). Private to lib/serve. No
 * lock: one thread (the guard's, which runs libmicrohttpd) uses a table.
 */
#ifndef DPMON_HTTP_ADDR_H
#define DPMON_HTTP_ADDR_H

#include <stdint.h>
#include <sys/socket.h>

/* One client address and its connections. */
struct addr_slot {
	uint8_t key[16];
	uint32_t count; /* 0 = empty */
};

/* Connections per client address: open addressing, linear probing. */
struct http_addr_table {
	struct addr_slot *slots;
	uint32_t mask; /* slots - 1, slots a power of two */
};

/**
 * Allocate @p t for up to @p n addresses at once (twice as many slots, so
 * probing stays short and a slot is always free).
 * @return 0, or -ENOMEM. Thread-safety: the thread that creates the guard.
 */
int http_addr_table_init(struct http_addr_table *t, uint32_t n);

/** Free @p t's slots. Thread-safety: the thread that destroys the guard. */
void http_addr_table_free(struct http_addr_table *t);

/**
 * The table's key of the client address @p ss into @p key: the IPv6
 * address, or an IPv4 one as ::ffff:a.b.c.d (RFC 4291 2.5.5.2); zeros for
 * another family. Thread-safety: any thread (no state).
 */
void http_addr_key(const struct sockaddr_storage *ss, uint8_t key[16]);

/** @return the count of @p key (0 = none). Thread-safety: the thread that owns the table. */
uint32_t http_addr_count(const struct http_addr_table *t, const uint8_t key[16]);

/**
 * Add @p n to the count of @p key (the table has room: at most as many
 * addresses at once as http_addr_table_init was given; the count stays
 * below 2^32).
 * Thread-safety: the thread that owns the table.
 */
void http_addr_add(struct http_addr_table *t, const uint8_t key[16], uint32_t n);

/**
 * Take @p n (at most its count) from the count of @p key; its slot is
 * emptied at zero. Thread-safety: the thread that owns the table.
 */
void http_addr_sub(struct http_addr_table *t, const uint8_t key[16], uint32_t n);

/**
 * Count one more connection from @p key (the table has room: at most @p n
 * of http_addr_table_init's addresses at once). Thread-safety: the guard's thread.
 */
void http_addr_ref(struct http_addr_table *t, const uint8_t key[16]);

/**
 * Count one connection less from @p key; its slot is emptied at zero.
 * Thread-safety: the guard's thread.
 */
void http_addr_unref(struct http_addr_table *t, const uint8_t key[16]);

#endif /* DPMON_HTTP_ADDR_H */
