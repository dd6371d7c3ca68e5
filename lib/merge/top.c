/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * top.c — top hosts of a snapshot by a ranking (see top.h).
 *
 * A min-heap of at most n host indices keeps the worst host kept at its
 * root: a host better than the root replaces it and sinks. At the end a
 * heap sort puts the best first.
 */
#include "top.h"

#include <stdbool.h>

struct heap {
	const struct dpmon_snapshot *s;
	dpmon_top_before_fn before;
	const void *ctx;
	uint32_t *idx;
	uint32_t n, cap;
};

uint64_t
dpmon_top_host_bytes(const struct dpmon_snap_host *h)
{
	return h->dir[DPMON_DIR_INGRESS].total.bytes + h->dir[DPMON_DIR_EGRESS].total.bytes;
}

/* True when @p x ranks before @p y: more bytes, then lower address. */
static bool
more_bytes(const struct dpmon_snap_host *x, const struct dpmon_snap_host *y, const void *ctx)
{
	(void)ctx;
	uint64_t bx = dpmon_top_host_bytes(x), by = dpmon_top_host_bytes(y);

	return bx != by ? bx > by : dpmon_addr_cmp(&x->addr, &y->addr) < 0;
}

/* True when slot @p i holds a worse host than slot @p j. */
static bool
worse(const struct heap *t, uint32_t i, uint32_t j)
{
	return t->before(dpmon_snap_host_at(t->s, t->idx[j]), dpmon_snap_host_at(t->s, t->idx[i]),
			 t->ctx);
}

static void
swap_slots(struct heap *t, uint32_t i, uint32_t j)
{
	uint32_t x = t->idx[i];

	t->idx[i] = t->idx[j];
	t->idx[j] = x;
}

static void
sift_down(struct heap *t, uint32_t pos, uint32_t n)
{
	for (;;) {
		uint32_t l = 2 * pos + 1, r = l + 1, m = pos;

		if (l < n && worse(t, l, m))
			m = l;
		if (r < n && worse(t, r, m))
			m = r;
		if (m == pos)
			return;
		swap_slots(t, pos, m);
		pos = m;
	}
}

static void
sift_up(struct heap *t, uint32_t pos)
{
	while (pos > 0 && worse(t, pos, (pos - 1) / 2)) {
		swap_slots(t, pos, (pos - 1) / 2);
		pos = (pos - 1) / 2;
	}
}

static void
offer(struct heap *t, uint32_t h)
{
	if (t->n < t->cap) {
		t->idx[t->n] = h;
		sift_up(t, t->n++);
	} else if (t->cap > 0 && t->before(dpmon_snap_host_at(t->s, h),
					   dpmon_snap_host_at(t->s, t->idx[0]), t->ctx)) {
		t->idx[0] = h;
		sift_down(t, 0, t->n);
	}
}

uint32_t
dpmon_top_hosts_by(const struct dpmon_snapshot *s, int subnet, uint32_t n,
		   dpmon_top_before_fn before, const void *ctx, uint32_t *idx, uint32_t *matched)
{
	struct heap t = {.s = s, .before = before, .ctx = ctx, .idx = idx, .cap = n};
	uint32_t count = 0;

	for (uint32_t i = 0; i < s->n_hosts; i++) {
		/* Both directions: rankings read either, more_bytes both. */
		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_INGRESS);
		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_EGRESS);
		if (subnet >= 0 && dpmon_snap_host_at(s, i)->subnet != (uint32_t)subnet)
			continue;
		count++;
		offer(&t, i);
	}
	for (uint32_t k = t.n; k > 1; k--) {
		swap_slots(&t, 0, k - 1);
		sift_down(&t, 0, k - 1);
	}
	if (matched != NULL)
		*matched = count;
	return t.n;
}

uint32_t
dpmon_top_hosts(const struct dpmon_snapshot *s, int subnet, uint32_t n, uint32_t *idx,
		uint32_t *matched)
{
	return dpmon_top_hosts_by(s, subnet, n, more_bytes, NULL, idx, matched);
}
