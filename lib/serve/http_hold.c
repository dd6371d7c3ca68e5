/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_hold.c — the bound on the memory held by answers being sent
 * (http_hold.h): a byte count per client address (http_addr.h's table)
 * and one in all. An answer is counted whole from the moment it is queued
 * until libmicrohttpd drops it, even when its body is shared with other
 * answers or the response cache, so the count is an upper bound on the
 * memory unread answers keep alive.
 */
#include "http_hold.h"

#include <errno.h>

int
http_hold_init(struct http_hold *h, uint32_t n)
{
	*h = (struct http_hold){.total = 0};
	return http_addr_table_init(&h->addrs, n);
}

void
http_hold_free(struct http_hold *h)
{
	http_addr_table_free(&h->addrs);
}

bool
http_hold_full(const struct http_hold *h, const uint8_t key[16])
{
	return http_addr_count(&h->addrs, key) >= DPMON_HTTP_HOLD_PER_ADDR ||
	       h->total >= DPMON_HTTP_HOLD_TOTAL;
}

int
http_hold_take(struct http_hold *h, const uint8_t key[16], size_t len)
{
	if (len <= DPMON_HTTP_HOLD_SMALL)
		return 0;
	if (len > DPMON_HTTP_HOLD_PER_ADDR ||
	    http_addr_count(&h->addrs, key) + len > DPMON_HTTP_HOLD_PER_ADDR ||
	    h->total + len > DPMON_HTTP_HOLD_TOTAL) {
		http_hold_refuse(h);
		return -ENOBUFS;
	}
	http_addr_add(&h->addrs, key, (uint32_t)len);
	__atomic_store_n(&h->total, h->total + len, __ATOMIC_RELAXED);
	return 0;
}

void
http_hold_release(struct http_hold *h, const uint8_t key[16], size_t len)
{
	if (len <= DPMON_HTTP_HOLD_SMALL)
		return;
	http_addr_sub(&h->addrs, key, (uint32_t)len);
	__atomic_store_n(&h->total, h->total - len, __ATOMIC_RELAXED);
}

void
http_hold_refuse(struct http_hold *h)
{
	__atomic_store_n(&h->refused, h->refused + 1, __ATOMIC_RELAXED);
}

uint64_t
http_hold_refused(const struct http_hold *h)
{
	return __atomic_load_n(&h->refused, __ATOMIC_RELAXED);
}

uint64_t
http_hold_total(const struct http_hold *h)
{
	return __atomic_load_n(&h->total, __ATOMIC_RELAXED);
}
