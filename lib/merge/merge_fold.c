/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_fold.c — the fold: the worker tables' counters of the hosts
 * touched since the previous merge, summed into the merger's.
 *
 * The fold visits only touched hosts. Every worker entry is mapped to its
 * global id and chained to the other workers' entries of the same host
 * (fold.first[gid], workers.map[core].next[entry]); a merge scans the
 * entries' epoch stamps (the stamp array beside the meta lines, 4 B per
 * entry: counters.h), marks the global ids of those stamped since the
 * worker's epoch at the previous merge, and recomputes
 * each marked host's cumulative counters as the sum over its chain: low
 * words read from the workers plus the high words the merger keeps from
 * the carry records, all under each worker's wrap_seq (retried when a
 * wrap happened meanwhile). Unmarked hosts keep their cumulative values
 * and get zero rates. The same walk of a host's chain reads its flows and
 * peers, while the entries' lines are in the cache.
 */
#include "merge_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_pause.h>

#include "hll.h"

/* ------------------------------------------------------------------------
 * Touched hosts.
 * --------------------------------------------------------------------- */

void
merge_collect_touched(struct dpmon_merge *m)
{
	uint32_t mark = ++m->fold.n_collects;

	if (mark == 0) /* 0: never marked (grow_hosts) */
		mark = m->fold.n_collects = 1;

	m->fold.n_touched = 0;
	for (unsigned c = 0; c < m->workers.n; c++) {
		const uint32_t *stamps = m->workers.core[c]->stamp;
		const uint32_t *gid = m->workers.map[c].gid;
		uint32_t since = m->workers.map[c].w_prev;
		const uint8_t *state = m->workers.map[c].state;
		uint32_t *last_ds = m->workers.map[c].last_ds;
		uint32_t timeout_ds = m->cfg->host_idle_timeout_s * DS_PER_S;
		uint32_t budget = timeout_ds != 0 ? merge_retire_budget(m, c) : 0;

		for (uint32_t i = 0; i < m->workers.map[c].mapped; i++) {
			uint32_t id;
			uint32_t stamp = __atomic_load_n(&stamps[i], __ATOMIC_RELAXED);

			if (state[i] == ENTRY_FREE)
				continue;
			/* Touched in this interval (this merge's epoch) or in
			 * the previous one after the previous merge read it (its
			 * epoch: a burst during that merge): now, at most one
			 * interval late, never early. An older stamp is a worker
			 * that has not adopted an epoch since (idle). */
			if (stamp + 1 >= m->epoch)
				last_ds[i] = m->clock.now_ds;
			/* Not touched in this interval, idle that long, neither
			 * pinned nor asked for already: ask. */
			else if (budget > 0 && state[i] == ENTRY_LIVE &&
				 m->clock.now_ds - last_ds[i] >= timeout_ds &&
				 !(m->hosts.g_flags[gid[i]] & HOST_PINNED))
				budget -= merge_retire_request(m, c, i, stamp, DPMON_RETIRE_IDLE);
			if (stamp < since)
				continue;
			id = gid[i];
			if (m->fold.mark[id] != mark) {
				m->fold.mark[id] = mark;
				m->fold.touched[m->fold.n_touched++] = id;
			}
		}
	}
	/* Hosts that lost an entry (merge_life.c), touched or not. */
	for (uint32_t j = 0; j < m->hosts.n_refold; j++) {
		uint32_t id = m->hosts.refold[j];

		m->hosts.g_flags[id] &= (uint8_t)~HOST_REFOLD;
		if (m->hosts.g_subnet[id] != HOST_REMOVED && m->fold.mark[id] != mark) {
			m->fold.mark[id] = mark;
			m->fold.touched[m->fold.n_touched++] = id;
		}
	}
	m->hosts.n_refold = 0;
}

/* ------------------------------------------------------------------------
 * One host: its flows and peers over its worker entries.
 * --------------------------------------------------------------------- */

/*
 * Distinct flows and peers of global host @p id in direction @p d in the
 * current epoch (counters.h): the union of its worker entries stamped with
 * it. No entry promoted: linear counting on the OR of their bitmaps.
 * Otherwise: the estimate of the register-wise maximum of the promoted
 * entries' full sketches, plus the flows of the other bitmaps (those at
 * promotion, and those of unpromoted entries) that the sketches never saw
 * (dpmon_hll_unseen).
 */
static void
host_flows(struct dpmon_merge *m, uint32_t id, int d, double *flows, double *peers)
{
	uint64_t fb = 0, pb = 0;
	bool promoted = false;

	for (uint32_t o = m->fold.first[id]; o != OCC_END;) {
		const struct dpmon_core *core = m->workers.core[o >> 24];
		const struct dpmon_host_meta *e = &core->meta[o & 0xffffff];
		const struct dpmon_host_sketch *k;
		uint32_t slot;

		o = m->workers.map[o >> 24].next[o & 0xffffff];
		if (__atomic_load_n(&e->epoch, __ATOMIC_ACQUIRE) != m->epoch)
			continue;
		slot = __atomic_load_n(&e->hsk[d], __ATOMIC_ACQUIRE);
		if (slot == 0 || slot > DPMON_HOST_SKETCHES) {
			fb |= __atomic_load_n(&e->flows[d], __ATOMIC_RELAXED);
			pb |= __atomic_load_n(&e->peers[d], __ATOMIC_RELAXED);
			continue;
		}
		if (!promoted) {
			memset(m->sketch.host_tmp, 0, sizeof(m->sketch.host_tmp));
			memset(m->sketch.peer_tmp, 0, sizeof(m->sketch.peer_tmp));
			promoted = true;
		}
		k = &core->hsk[slot - 1];
		fb |= k->pre_flows;
		pb |= k->pre_peers;
		dpmon_hll_merge(m->sketch.host_tmp, k->flows, DPMON_HOST_FLOW_P);
		dpmon_hll_merge(m->sketch.peer_tmp, k->peers, DPMON_HOST_PEER_P);
	}
	if (!promoted) {
		*flows = dpmon_bitmap_estimate(fb);
		*peers = dpmon_bitmap_estimate(pb);
		return;
	}
	*flows = dpmon_hll_estimate(m->sketch.host_tmp, DPMON_HOST_FLOW_P) +
		 dpmon_hll_unseen(fb, m->sketch.host_tmp, DPMON_HOST_FLOW_P);
	*peers = dpmon_hll_estimate(m->sketch.peer_tmp, DPMON_HOST_PEER_P) +
		 dpmon_hll_unseen(pb, m->sketch.peer_tmp, DPMON_HOST_PEER_P);
}

/* ------------------------------------------------------------------------
 * The fold.
 * --------------------------------------------------------------------- */

/*
 * Wait until no worker is between the two stores of a carry, note each
 * one's wrap_seq in @p seq_before and consume its carries. 0 or -ENOMEM.
 */
static int
wrap_begin(struct dpmon_merge *m, uint32_t *seq_before)
{
	for (unsigned c = 0; c < m->workers.n; c++) {
		const uint32_t *wrap_seq = &m->workers.core[c]->wrap_seq;
		uint32_t s;

		while ((s = __atomic_load_n(wrap_seq, __ATOMIC_ACQUIRE)) & 1)
			rte_pause(); /* the worker is between two stores */
		seq_before[c] = s;
		if (merge_consume_carries(m, c) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Whether a worker carried since wrap_begin: the counters read may be torn. */
static bool
wrap_changed(const struct dpmon_merge *m, const uint32_t *seq_before)
{
	bool retry = false;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (unsigned c = 0; c < m->workers.n; c++)
		if (__atomic_load_n(&m->workers.core[c]->wrap_seq, __ATOMIC_RELAXED) !=
		    seq_before[c])
			retry = true;
	return retry;
}

/* Counters, flows and peers of touched host fold.touched[@p t], over its
 * chain; @p flows: flows and peers are measured ("flow_sketches"). */
static inline void
fold_host(struct dpmon_merge *m, uint32_t t, bool flows)
{
	uint32_t id = m->fold.touched[t];
	struct host_fp *fp = &m->fold.t_fp[t];

	/* Its retired entries' final counts, then its live entries'. */
	if (m->hosts.g_base[id] != 0)
		m->fold.g_cur[id] = m->fold.bases[m->hosts.g_base[id] - 1];
	else
		memset(&m->fold.g_cur[id], 0, sizeof(m->fold.g_cur[id]));
	for (uint32_t o = m->fold.first[id]; o != OCC_END;) {
		unsigned c = o >> 24;
		uint32_t idx = o & 0xffffff;

		merge_entry_read_add(m, c, idx, &m->fold.g_cur[id]);
		o = m->workers.map[c].next[idx];
	}
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		if (flows)
			host_flows(m, id, d, &fp->flows[d], &fp->peers[d]);
		else
			fp->flows[d] = fp->peers[d] = -1; /* not measured */
	}
}

int
merge_fold_touched(struct dpmon_merge *m)
{
	uint32_t seq_before[MAX_CORES];
	const bool flows = m->cfg->flow_sketches;

	do {
		if (wrap_begin(m, seq_before) != 0)
			return -ENOMEM;
		for (uint32_t t = 0; t < m->fold.n_touched; t++)
			fold_host(m, t, flows);
	} while (wrap_changed(m, seq_before));
	return 0;
}
