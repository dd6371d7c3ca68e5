/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_addr.c — a count per client address (http_addr.h): an
 * open-addressing table with linear probing, keyed by the 16-byte address
 * (IPv4 as ::ffff:a.b.c.d), FNV-1a hashed. A leaf of http_guard.c and
 * http_hold.c.
 */
#include "http_addr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

int
http_addr_table_init(struct http_addr_table *t, uint32_t n)
{
	uint32_t slots = 1;

	while (slots < 2 * n)
		slots <<= 1;
	t->mask = slots - 1;
	t->slots = calloc(slots, sizeof(*t->slots));
	return t->slots != NULL ? 0 : -ENOMEM;
}

void
http_addr_table_free(struct http_addr_table *t)
{
	free(t->slots);
	t->slots = NULL;
}

void
http_addr_key(const struct sockaddr_storage *ss, uint8_t key[16])
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
}

static uint32_t
addr_home(const struct http_addr_table *g, const uint8_t key[16])
{
	uint32_t x = 2166136261u;

	for (int i = 0; i < 16; i++)
		x = (x ^ key[i]) * 16777619u;
	return x & g->mask;
}

/* The slot of @p key, or the empty slot where it would go. */
static uint32_t
addr_find(const struct http_addr_table *g, const uint8_t key[16])
{
	uint32_t i = addr_home(g, key);

	while (g->slots[i].count != 0 && memcmp(g->slots[i].key, key, 16) != 0)
		i = (i + 1) & g->mask;
	return i;
}

uint32_t
http_addr_count(const struct http_addr_table *g, const uint8_t key[16])
{
	return g->slots[addr_find(g, key)].count;
}

void
http_addr_add(struct http_addr_table *g, const uint8_t key[16], uint32_t n)
{
	struct addr_slot *a = &g->slots[addr_find(g, key)];

	if (n == 0)
		return;
	if (a->count == 0)
		memcpy(a->key, key, 16);
	a->count += n;
}

void
http_addr_ref(struct http_addr_table *g, const uint8_t key[16])
{
	http_addr_add(g, key, 1);
}

/* An emptied slot is filled from behind (deletion in linear probing
 * without tombstones). */
void
http_addr_sub(struct http_addr_table *g, const uint8_t key[16], uint32_t n)
{
	uint32_t i = addr_find(g, key), j = i;

	if (g->slots[i].count == 0 || n == 0)
		return;
	g->slots[i].count -= n < g->slots[i].count ? n : g->slots[i].count;
	if (g->slots[i].count != 0)
		return;
	for (;;) {
		uint32_t k;

		j = (j + 1) & g->mask;
		if (g->slots[j].count == 0)
			break;
		k = addr_home(g, g->slots[j].key);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue; /* already between its home and here */
		g->slots[i] = g->slots[j];
		g->slots[j].count = 0;
		i = j;
	}
}

void
http_addr_unref(struct http_addr_table *g, const uint8_t key[16])
{
	http_addr_sub(g, key, 1);
}
