/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_addr.h — the HTTP guard's count of open connections per client
 * address, for its per-address limit (DPMON_HTTP_MAX_PER_ADDR). Private
 * to lib/serve (http_guard.c). No lock: the guard's thread alone uses it.
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

/** @return the connections counted for @p key. Thread-safety: the guard's thread. */
uint32_t http_addr_count(const struct http_addr_table *t, const uint8_t key[16]);

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
