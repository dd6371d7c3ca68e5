/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * host_order.c — a snapshot's hosts in the order of a ranking, built once
 * per snapshot and ranking (see host_order.h).
 *
 * Building an order: one pass over the hosts in address order reads each
 * host's key (the only pass that touches the records, prefetched ahead),
 * its subnet, and checks that the snapshot really lists them in address
 * order; then a stable LSD radix sort by the complemented key (8 passes
 * of 8 bits, a pass skipped when every key has the same byte there) puts
 * the largest key first and keeps address order among equal keys; then a
 * stable counting sort by subnet of that order gives the per-subnet
 * groups. A snapshot filled by hand may list its hosts in another order:
 * they are then sorted by address first (qsort), so the ranking's ties
 * still go by address. Memory: 32 B per host while building, 8 B per
 * host kept.
 */
#include "host_order.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* An order and its arrays, in one block (a slot of struct dpmon_host_orders, freed with free()). */
struct order_box {
	struct dpmon_host_order pub;
	uint32_t arrays[]; /* idx (n), by_subnet (n), sub_start (n_subnets + 2) */
};

/* One host while an order is built. */
struct item {
	uint64_t rkey; /* ~key: ascending rkey is descending key */
	uint32_t idx;  /* host index */
	uint32_t sub;  /* subnet index, n_subnets when out of range */
};

/* qsort_r comparator of host indices (@p ctx the snapshot) by address. */
static int
addr_order(const void *x, const void *y, void *ctx)
{
	const struct dpmon_snapshot *s = ctx;

	return dpmon_addr_cmp(&dpmon_snap_host_at(s, ((const struct item *)x)->idx)->addr,
			      &dpmon_snap_host_at(s, ((const struct item *)y)->idx)->addr);
}

/*
 * Stable sort of @p a (@p n items) by rkey, ascending, with @p tmp (room
 * for @p n) as the other buffer. @return the buffer holding the result.
 */
static struct item *
radix_sort(struct item *a, struct item *tmp, uint32_t n)
{
	static const unsigned passes = sizeof(uint64_t);
	uint32_t count[sizeof(uint64_t)][256] = {{0}};

	for (uint32_t i = 0; i < n; i++)
		for (unsigned p = 0; p < passes; p++)
			count[p][(a[i].rkey >> (8 * p)) & 0xff]++;
	for (unsigned p = 0; p < passes; p++) {
		uint32_t *c = count[p], sum = 0;
		bool trivial = false;
		struct item *x;

		for (unsigned b = 0; b < 256; b++) {
			uint32_t k = c[b];

			trivial |= k == n;
			c[b] = sum;
			sum += k;
		}
		if (trivial) /* every key has the same byte here */
			continue;
		for (uint32_t i = 0; i < n; i++)
			tmp[c[(a[i].rkey >> (8 * p)) & 0xff]++] = a[i];
		x = a;
		a = tmp;
		tmp = x;
	}
	return a;
}

/* The order of @p s by @p key, or NULL when out of memory. */
static struct order_box *
order_build(const struct dpmon_snapshot *s, dpmon_host_key_fn key, const void *ctx)
{
	uint32_t n = s->n_hosts, ns = s->n_subnets;
	struct order_box *o = malloc(sizeof(*o) + sizeof(uint32_t) * (2 * (size_t)n + ns + 2));
	struct item *a = malloc(sizeof(*a) * (n ? n : 1));
	struct item *tmp = malloc(sizeof(*tmp) * (n ? n : 1));
	uint32_t *idx, *by, *start;
	const struct dpmon_snap_host *prev = NULL;
	bool sorted = true;
	struct item *r;

	if (o == NULL || a == NULL || tmp == NULL) {
		free(o);
		free(a);
		free(tmp);
		return NULL;
	}
	idx = o->arrays;
	by = idx + n;
	start = by + n;
	memset(start, 0, sizeof(*start) * ((size_t)ns + 2));
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmon_snap_host *h = dpmon_snap_host_at(s, i);

		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_INGRESS);
		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_EGRESS);
		a[i] = (struct item){
			.rkey = ~key(s, h, ctx), .idx = i, .sub = h->subnet < ns ? h->subnet : ns};
		if (prev != NULL && dpmon_addr_cmp(&prev->addr, &h->addr) > 0)
			sorted = false;
		prev = h;
	}
	if (!sorted) /* a snapshot filled by hand: ties must still go by address */
		qsort_r(a, n, sizeof(*a), addr_order, (void *)(uintptr_t)s);
	r = radix_sort(a, tmp, n);
	/* The groups by subnet: counts, starts, then a stable scatter. */
	for (uint32_t i = 0; i < n; i++) {
		idx[i] = r[i].idx;
		start[r[i].sub + 1]++;
	}
	for (uint32_t j = 0; j <= ns; j++)
		start[j + 1] += start[j];
	for (uint32_t i = 0; i < n; i++)
		by[start[r[i].sub]++] = r[i].idx;
	/* The scatter moved each start to the next group's: shift them back. */
	memmove(start + 1, start, sizeof(*start) * ((size_t)ns + 1));
	start[0] = 0;
	free(a);
	free(tmp);
	o->pub = (struct dpmon_host_order){
		.n_hosts = n, .idx = idx, .by_subnet = by, .sub_start = start, .n_subnets = ns};
	return o;
}

const struct dpmon_host_order *
dpmon_host_order_get(const struct dpmon_snapshot *s, unsigned slot, dpmon_host_key_fn key,
		     const void *ctx)
{
	struct dpmon_host_orders *c = s->orders;
	struct order_box *o;

	if (c == NULL || slot >= DPMON_HOST_ORDER_SLOTS)
		return NULL;
	o = __atomic_load_n(&c->slot[slot], __ATOMIC_ACQUIRE);
	if (o != NULL)
		return &o->pub;
	pthread_mutex_lock(&c->lock);
	o = c->slot[slot]; /* another caller may have built it meanwhile */
	if (o == NULL) {
		o = order_build(s, key, ctx);
		if (o != NULL)
			__atomic_store_n(&c->slot[slot], (void *)o, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&c->lock);
	return o != NULL ? &o->pub : NULL;
}

bool
dpmon_host_order_built(const struct dpmon_snapshot *s, unsigned slot)
{
	const struct dpmon_host_orders *c = s->orders;

	return c != NULL && slot < DPMON_HOST_ORDER_SLOTS &&
	       __atomic_load_n(&c->slot[slot], __ATOMIC_ACQUIRE) != NULL;
}
