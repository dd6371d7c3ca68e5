/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_history.c — what a merge adds to the counters of the totals and
 * subnets: their distinct flows, estimated from the workers' sketches, and
 * the history ring of their rates.
 *
 * A flow sketch's registers are tagged with the merge epoch that wrote
 * them, and its blocks of registers with that of their last write
 * (counters.h), so a merge reads, without clearing anything, the blocks
 * and registers of the epoch it handed out, takes their maximum over the
 * workers and estimates (hll.h). Subnets past the fixed sketches take
 * pool slots, tagged the same way. Just after a reload the retired
 * generation's sketches are read once more (merge_reload.c).
 *
 * The history ring holds the last history_s of rates as refcounted
 * points: each snapshot takes a reference to every point, so a merge adds
 * one point and copies pointers.
 */
#include "merge_private.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_debug.h>

#include "hll.h"

/* ------------------------------------------------------------------------
 * Flows of the totals and subnets.
 * --------------------------------------------------------------------- */

/*
 * t = register-wise max(t, registers of @p s tagged with @p tag). A block
 * of DPMON_FLOW_BLOCK registers whose block tag is not @p tag holds none
 * of them (the worker stores a block's tag before any register of it:
 * counters.h) and costs one compare; in the others, two registers come
 * per relaxed 64-bit load (a sketch is cache aligned: rte_zmalloc), and a
 * pair neither of which is tagged with this epoch costs one test.
 */
static void
sketch_max(uint8_t *t, const struct dpmon_flow_sketch *s, uint32_t tag)
{
	typedef uint64_t __attribute__((may_alias)) word_t; /* reads two registers */
	/* The shift of register i (even) in the word of i and i + 1. */
	const unsigned lo = RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN ? 0 : 32, hi = 32 - lo;
	const uint64_t mask = (uint64_t)0xffffff00 << lo | (uint64_t)0xffffff00 << hi;
	const uint64_t want = (uint64_t)tag << (8 + lo) | (uint64_t)tag << (8 + hi);

	RTE_ASSERT(((uintptr_t)s->reg & 7) == 0);
	for (uint32_t b = 0; b < RTE_DIM(s->blk); b++) {
		uint32_t end = (b + 1) * DPMON_FLOW_BLOCK;

		if (__atomic_load_n(&s->blk[b], __ATOMIC_RELAXED) != tag)
			continue;
		for (uint32_t i = b * DPMON_FLOW_BLOCK; i < end; i += 2) {
			uint64_t w = __atomic_load_n((const word_t *)(const void *)&s->reg[i],
						     __ATOMIC_RELAXED);
			uint64_t x = (w & mask) ^ want; /* a register's half is 0 where tagged */
			bool t0 = (uint32_t)(x >> lo) == 0, t1 = (uint32_t)(x >> hi) == 0;

			if (!(t0 | t1))
				continue;
			if (t0 && (uint8_t)(w >> lo) > t[i])
				t[i] = (uint8_t)(w >> lo);
			if (t1 && (uint8_t)(w >> hi) > t[i + 1])
				t[i + 1] = (uint8_t)(w >> hi);
		}
	}
}

/*
 * Distinct flows of sketch @p k (its index in each core's flow_tot when
 * @p sub is false, else in the current generation's flow_sub, plus the
 * retired generation's just after a reload) in the current epoch: the
 * registers tagged with it, maximum over the cores, estimated (hll.h).
 */
static double
sketch_flows(struct dpmon_merge *m, bool sub, uint32_t k)
{
	const uint32_t tag = m->epoch & 0xffffff;
	uint8_t *t = m->sketch.flow_tmp;

	memset(t, 0, sizeof(m->sketch.flow_tmp));
	for (unsigned c = 0; c < m->workers.n; c++) {
		const struct dpmon_generation *r = m->reload.retired[c];
		const struct dpmon_flow_sketch *own =
			sub ? &m->subnets.gen[c]->flow_sub[k] : &m->workers.core[c]->flow_tot[k];

		sketch_max(t, own, tag);
		/* Just after a reload: the same subnet's sketch in the previous
		 * generation, which counted the first part of this interval. */
		if (sub && r != NULL) {
			uint32_t old = m->reload.old_of_new[k / DPMON_DIR_MAX];

			if (old < r->n_flow_subnets)
				sketch_max(t, &r->flow_sub[old * DPMON_DIR_MAX + k % DPMON_DIR_MAX],
					   tag);
		}
	}
	return dpmon_hll_estimate(t, DPMON_FLOW_P);
}

/*
 * Distinct flows of subnet @p i (past the fixed sketches) in direction
 * @p d: the pool slots the cores took for it in the current epoch
 * (counters.h); -1 when a core found its pool empty (a partial count).
 */
static double
pooled_flows(struct dpmon_merge *m, uint32_t i, int d)
{
	const uint32_t tag = m->epoch & 0xffffff;

	memset(m->sketch.flow_tmp, 0, sizeof(m->sketch.flow_tmp));
	for (unsigned c = 0; c < m->workers.n; c++) {
		const struct dpmon_core *core = m->workers.core[c];
		const struct dpmon_generation *g = m->subnets.gen[c];
		uint32_t v = __atomic_load_n(
			&g->flow_slot[(i - g->n_flow_subnets) * DPMON_DIR_MAX + (uint32_t)d],
			__ATOMIC_RELAXED);

		if ((v >> 8) != tag || (v & 0xff) == 0)
			continue; /* no packet in this epoch (0: a zeroed slot) */
		if ((v & 0xff) == DPMON_FLOW_SLOT_NONE)
			return -1;
		sketch_max(m->sketch.flow_tmp, &core->flow_pool[(v & 0xff) - 1], tag);
	}
	return dpmon_hll_estimate(m->sketch.flow_tmp, DPMON_FLOW_P);
}

/* "flow_sketches": false: no flows or peers measured anywhere (null). */
static void
merge_no_flows(struct dpmon_snapshot *s)
{
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		s->totals[t].flows = s->totals[t].peers = -1;
	for (uint32_t i = 0; i < s->n_subnets; i++)
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			s->subnets[i].dir[d].flows = s->subnets[i].dir[d].peers = -1;
}

void
merge_fill_flows(struct dpmon_merge *m, struct dpmon_snapshot *s)
{
	uint32_t nfs = m->workers.n ? m->subnets.gen[0]->n_flow_subnets : 0;

	s->no_flows = !m->cfg->flow_sketches;
	if (s->no_flows) {
		merge_no_flows(s);
		for (unsigned c = 0; c < m->workers.n; c++)
			m->reload.retired[c] = NULL;
		return;
	}
	s->totals[DPMON_TOTAL_INGRESS].flows = sketch_flows(m, false, DPMON_DIR_INGRESS);
	s->totals[DPMON_TOTAL_EGRESS].flows = sketch_flows(m, false, DPMON_DIR_EGRESS);
	s->totals[DPMON_TOTAL_INTERNAL].flows = -1;
	s->totals[DPMON_TOTAL_EXTERNAL].flows = -1;
	if (m->workers.n == 0) {
		s->totals[DPMON_TOTAL_INGRESS].flows = s->totals[DPMON_TOTAL_EGRESS].flows = 0;
	}
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		s->totals[t].peers = -1;
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		for (int d = 0; d < DPMON_DIR_MAX; d++) {
			s->subnets[i].dir[d].flows =
				m->workers.n == 0 ? 0
				: i < nfs ? sketch_flows(m, true, i * DPMON_DIR_MAX + (uint32_t)d)
					  : pooled_flows(m, i, d);
			s->subnets[i].dir[d].peers = -1;
		}
	}
	/* The previous generation's sketches served their last interval (its
	 * pool slots are not read: pooled subnets count from the reload on). */
	for (unsigned c = 0; c < m->workers.n; c++)
		m->reload.retired[c] = NULL;
}

/* ------------------------------------------------------------------------
 * The history ring.
 * --------------------------------------------------------------------- */

/* History point @p p: the rates of the totals and subnets of @p s. */
static void
point_fill(struct dpmon_hist_point *p, const struct dpmon_snapshot *s)
{
	p->seq = s->seq;
	p->uptime_s = s->uptime_s;
	p->interval_s = s->interval_s;
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		p->totals[t] =
			(struct dpmon_hist_rate){s->totals[t].total.pps, s->totals[t].total.bps};
	for (uint32_t i = 0; i < s->n_subnets; i++)
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			p->sub[i * DPMON_DIR_MAX + d] = (struct dpmon_hist_rate){
				s->subnets[i].dir[d].total.pps, s->subnets[i].dir[d].total.bps};
}

/* Append @p p (its reference) to the ring, dropping the oldest point when full. */
static void
ring_push(struct merge_history *h, struct dpmon_hist_point *p)
{
	if (h->n == h->cap) { /* drop the oldest */
		dpmon_hist_point_unref(h->ring[h->head]);
		h->ring[h->head] = p;
		h->head = (h->head + 1) % h->cap;
	} else {
		h->ring[(h->head + h->n++) % h->cap] = p;
	}
}

void
merge_fill_history(struct dpmon_merge *m, struct dpmon_snapshot *s)
{
	struct merge_history *h = &m->history;
	struct dpmon_hist_point *p;

	if (h->cap == 0)
		return;
	p = dpmon_hist_point_alloc(s->n_subnets);
	s->history = malloc(sizeof(*s->history) * (h->n < h->cap ? h->n + 1 : h->cap));
	if (p == NULL || s->history == NULL) {
		dpmon_hist_point_unref(p);
		free(s->history);
		s->history = NULL;
		return;
	}
	point_fill(p, s);
	ring_push(h, p);
	for (uint32_t i = 0; i < h->n; i++) {
		struct dpmon_hist_point *q = h->ring[(h->head + i) % h->cap];

		dpmon_hist_point_ref(q);
		s->history[i] = q;
	}
	s->n_history = h->n;
}
