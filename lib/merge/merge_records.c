/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_records.c — the snapshot's hosts: a record per host, written only
 * when a merge touched it, in slabs shared by the snapshots.
 *
 * Snapshot hosts (snapshot.h): a merge writes a record only for the hosts
 * it touched (and those new to it), into one new slab; the other hosts
 * keep the record of the merge that last touched them, and the snapshot
 * lists them by pointer, holding a reference to every slab with a record
 * still current. So a merge writes 8 bytes per host (the pointer array,
 * patched in place: records.g_pos) plus one 712-byte record per touched
 * host, instead of every host's record. A touched host's averages continue
 * from its previous record's (kept dense in records.g_avg, beside the
 * counters, rather than read back from the scattered record), decayed to
 * the previous merge (dpmon_avg_decay: the steps with rate 0 it was not
 * given), then one EWMA step. A slab whose live records fall below a
 * quarter of its size has them moved (copied verbatim) into a new one, as
 * have the smallest slabs when more than SLABS_MAX are live, so memory
 * stays within four times the live records (about 1.5 times with random
 * touches) and a snapshot lists few slabs. A reload copies every record
 * (new subnets), its averages brought to the previous merge with the time
 * constant the merges until then used (avg_rebase): the reload may change
 * it, and a record's averages are read and continued with the current one
 * from its t_s on.
 */
#include "merge_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_debug.h>

/* ------------------------------------------------------------------------
 * A record's averages, after a reload.
 * --------------------------------------------------------------------- */

/* Multiply every average of @p a by @p k (as dpmon_dir_avgs_scale does a record's). */
static void
avg_scale(struct avg_dir *a, double k)
{
	a->pps *= k;
	a->bps *= k;
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		a->proto_pps[p] *= k;
		a->proto_bps[p] *= k;
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++)
		a->flag_pps[f] *= k;
}

/*
 * Bring the averages of record @p h and of global id @p id's state, as of
 * merge time g_avg[id].t_s, to the previous merge (m->clock.t_prev),
 * decayed with the time constant the merges in between used
 * (m->avg.tau_prev_s): the record is then read, and continued, with the
 * current time constant from there only. Its seq (freshness) is kept.
 * After a reload (file comment).
 */
static void
avg_rebase(struct dpmon_merge *m, struct dpmon_snap_host *h, uint32_t id)
{
	struct host_avg *avg = &m->records.g_avg[id];
	double k = dpmon_avg_decay(m->clock.t_prev - avg->t_s, m->avg.tau_prev_s);

	RTE_ASSERT(h->t_s == avg->t_s); /* so the record's averages are avg's */
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		avg_scale(&avg->a.d[d], k);
		dpmon_dir_avgs_scale(&h->dir[d], k);
	}
	h->t_s = avg->t_s = m->clock.t_prev;
}

/* ------------------------------------------------------------------------
 * Slabs and current records.
 * --------------------------------------------------------------------- */

/* Take a reference-holding slot in records.slabs for @p b (room reserved by the caller). */
static void
slab_add(struct dpmon_merge *m, struct dpmon_host_slab *b)
{
	RTE_ASSERT(m->records.n_slabs < m->records.cap_slabs);
	m->records.slabs[m->records.n_slabs++] = b;
}

/* Global id @p id's record is replaced: its slab loses a live record. */
static void
record_retire(struct dpmon_merge *m, uint32_t id)
{
	struct dpmon_host_slab *b = m->records.g_slab[id];

	if (m->records.g_rec[id] == NULL)
		return;
	RTE_ASSERT(b->live > 0);
	if (--b->live > 0)
		return;
	for (uint32_t i = 0; i < m->records.n_slabs; i++) {
		if (m->records.slabs[i] == b) {
			m->records.slabs[i] = m->records.slabs[--m->records.n_slabs];
			dpmon_host_slab_unref(b);
			return;
		}
	}
	RTE_ASSERT(0); /* a slab with live records is listed */
}

void
merge_record_drop(struct dpmon_merge *m, uint32_t id)
{
	record_retire(m, id);
	m->records.g_rec[id] = NULL;
	m->records.g_pos[id] = NO_POS;
}

/* Make record @p b->h[b->n] (written by the caller) global id @p id's current one. */
static void
record_install(struct dpmon_merge *m, struct dpmon_host_slab *b, uint32_t id)
{
	const struct dpmon_snap_host *h = &b->h[b->n];

	RTE_ASSERT(b->n < b->cap);
	record_retire(m, id);
	b->gid[b->n++] = id;
	b->live++;
	m->records.g_rec[id] = h;
	m->records.g_slab[id] = b;
	if (!m->records.order_stale && m->records.g_pos[id] != NO_POS)
		m->records.order[m->records.g_pos[id]] = h;
}

/* ------------------------------------------------------------------------
 * This merge's records.
 * --------------------------------------------------------------------- */

/* Whether any packet count of @p cur differs from @p prev's (the host sent or received). */
static inline bool
pair_moved(const struct dpmon_pair_ctr *cur, const struct dpmon_pair_ctr *prev)
{
	for (int d = 0; d < DPMON_DIR_MAX; d++)
		for (int p = 0; p < DPMON_PROTO_MAX; p++)
			if (cur->dir[d].proto[p].packets != prev->dir[d].proto[p].packets)
				return true;
	return false;
}

/*
 * Write global id @p id's record for this merge into @p b (rates over
 * @p dt s); @p fp: its flows and peers when touched, NULL when not.
 */
static void
record_write(struct dpmon_merge *m, struct dpmon_host_slab *b, uint32_t id,
	     const struct host_fp *fp, double dt)
{
	struct dpmon_snap_host *h = &b->h[b->n];
	struct host_avg *avg = &m->records.g_avg[id];
	const struct dpmon_pair_ctr *prev = &m->fold.g_prev[id];
	const struct dpmon_pair_ctr *cur = fp != NULL ? &m->fold.g_cur[id] : prev;
	/* A new id's averages are still zero (grow_hosts): any k keeps them so. */
	double k = dpmon_avg_decay(m->clock.t_prev - avg->t_s, m->avg.tau_s);

	if (m->records.g_rec[id] == NULL) /* a new host (or one back after it left) */
		m->hosts.g_first[id] = m->hosts.g_last[id] = m->clock.t_now;
	if (fp != NULL && pair_moved(cur, prev))
		m->hosts.g_last[id] = m->clock.t_now;
	h->addr = m->hosts.g_addr[id];
	h->subnet = m->hosts.g_subnet[id];
	h->seq = m->seq;
	h->t_s = m->clock.t_now;
	h->first_seen = m->clock.unix_start_s + m->hosts.g_first[id];
	h->last_seen = m->clock.unix_start_s + m->hosts.g_last[id];
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		merge_dir_stats(&h->dir[d], &cur->dir[d], &cur->flags[d], &prev->dir[d],
				&prev->flags[d], dt);
		merge_avg_update(m, &h->dir[d], &avg->a.d[d], k);
		h->dir[d].flows = fp != NULL ? fp->flows[d] : m->cfg->flow_sketches ? 0 : -1;
		h->dir[d].peers = fp != NULL ? fp->peers[d] : m->cfg->flow_sketches ? 0 : -1;
	}
	avg->t_s = m->clock.t_now;
	if (fp != NULL)
		m->fold.g_prev[id] = m->fold.g_cur[id]; /* while both lines are in the cache */
	record_install(m, b, id);
}

/*
 * True when touched global id @p id (flows and peers @p fp) may keep its
 * record: it has one, no packet moved its counters since, and it has no
 * flows or peers in this interval, so the record read as stale (its rates,
 * flows and peers 0, or null without flow sketches; its averages decayed
 * to this snapshot: dpmon_snap_host_dir) says what a new one would. A
 * visited host did not move when its entries were stamped only by bursts
 * of the previous interval that the previous merge had not fully seen.
 */
static bool
record_still(const struct dpmon_merge *m, uint32_t id, const struct host_fp *fp)
{
	if (m->records.g_rec[id] == NULL || m->reload.resubnet ||
	    pair_moved(&m->fold.g_cur[id], &m->fold.g_prev[id]))
		return false;
	for (int d = 0; d < DPMON_DIR_MAX; d++)
		if (fp->flows[d] > 0 || fp->peers[d] > 0)
			return false;
	return true;
}

/*
 * Records for this merge: the touched hosts' and those of new hosts not
 * touched (none of these normally: a host is published with a stamp).
 * The latter are the new ids (hosts.new_ids) still without a record once
 * the touched ones have theirs (not chosen by mark: every id the snapshot
 * lists must get one). Room in m->records.slabs is reserved by the caller.
 */
static int
write_records(struct dpmon_merge *m, double dt)
{
	struct merge_hosts *h = &m->hosts;
	uint32_t n = m->fold.n_touched;
	struct dpmon_host_slab *b;

	RTE_ASSERT(h->n_new_sorted == h->n_new); /* merge_sort_new_hosts ran */
	for (uint32_t j = 0; j < h->n_new; j++)
		n += m->records.g_rec[h->new_ids[j]] == NULL &&
		     m->fold.mark[h->new_ids[j]] != m->fold.n_collects;
	if (n == 0)
		return 0;
	b = dpmon_host_slab_alloc(n);
	if (b == NULL)
		return -ENOMEM;
	slab_add(m, b);
	b->live = 1; /* keeps it listed while its own records are installed */
	for (uint32_t t = 0; t < m->fold.n_touched; t++)
		if (!record_still(m, m->fold.touched[t], &m->fold.t_fp[t]))
			record_write(m, b, m->fold.touched[t], &m->fold.t_fp[t], dt);
	for (uint32_t j = 0; j < h->n_new; j++)
		if (m->records.g_rec[h->new_ids[j]] == NULL)
			record_write(m, b, h->new_ids[j], NULL, dt);
	RTE_ASSERT(b->n <= n);
	if (--b->live == 0) { /* every touched host kept its record */
		RTE_ASSERT(m->records.slabs[m->records.n_slabs - 1] == b);
		m->records.n_slabs--;
		dpmon_host_slab_unref(b);
		b = NULL;
	}
	h->n_new = h->n_new_sorted = 0;
	m->timing.written = b != NULL ? b->n : 0;
	return 0;
}

/* ------------------------------------------------------------------------
 * Compaction of mostly dead slabs.
 * --------------------------------------------------------------------- */

/* Fewer live records first; then the larger share of dead ones. */
static int
cmp_live(const void *x, const void *y)
{
	const struct dpmon_host_slab *a = *(struct dpmon_host_slab *const *)x;
	const struct dpmon_host_slab *b = *(struct dpmon_host_slab *const *)y;

	if (a->live != b->live)
		return (a->live > b->live) - (a->live < b->live);
	return (a->n < b->n) - (a->n > b->n);
}

/*
 * The slabs compact_slabs moves (below): the listed slabs copied into
 * @p pick, then the chosen ones first; their live records in @p moved.
 * @return how many were chosen.
 */
static uint32_t
pick_slabs(const struct dpmon_merge *m, struct dpmon_host_slab **pick, uint32_t *moved)
{
	const uint32_t n = m->records.n_slabs;
	/* The smallest ones past SLABS_MAX: down to SLABS_MAX / 2. */
	const uint32_t over = n > SLABS_MAX ? n - SLABS_MAX / 2 : 0;
	const uint32_t budget = RTE_MAX(m->fold.n_touched, m->hosts.n_sorted / 64);
	uint32_t n_pick = 0;

	*moved = 0;
	memcpy(pick, m->records.slabs, sizeof(*pick) * n);
	if (m->reload.resubnet) {
		for (uint32_t i = 0; i < n; i++)
			*moved += pick[i]->live;
		return n;
	}
	qsort(pick, n, sizeof(*pick), cmp_live);
	for (uint32_t i = 0; i < n; i++) {
		if ((i < over || pick[i]->live * 4 < pick[i]->n) &&
		    *moved + pick[i]->live <= budget) {
			*moved += pick[i]->live;
			pick[n_pick++] = pick[i];
		}
	}
	return n_pick;
}

/* Copy the current records of slab @p o into @p b (after a reload: new subnet, rebased). */
static void
move_records(struct dpmon_merge *m, struct dpmon_host_slab *b, struct dpmon_host_slab *o)
{
	dpmon_host_slab_ref(o); /* its last live record may leave it */
	for (uint32_t j = 0; j < o->n; j++) {
		uint32_t id = o->gid[j];

		if (m->records.g_rec[id] != &o->h[j])
			continue;
		b->h[b->n] = o->h[j];
		b->h[b->n].subnet = m->hosts.g_subnet[id];
		if (m->reload.resubnet)
			avg_rebase(m, &b->h[b->n], id);
		record_install(m, b, id);
	}
	dpmon_host_slab_unref(o);
}

/*
 * Move into one new slab the current records of the slabs less than a
 * quarter live (moving W records then frees 3 W: the moves cost at most a
 * third of the writes that emptied them), of the smallest ones past
 * SLABS_MAX, or of all after a reload (with their new subnet). Except
 * after a reload, a merge moves at most as many records as it wrote, or
 * 1/64 of the hosts (the fewest live first), so no merge pays for the
 * moves of many: a large slab waits until it fits. Room in
 * m->records.slabs is reserved by the caller. On allocation failure
 * nothing moves (memory is only wasted), except after a reload: -ENOMEM,
 * and it is tried again next merge.
 */
static int
compact_slabs(struct dpmon_merge *m)
{
	struct dpmon_host_slab *pick[m->records.n_slabs ? m->records.n_slabs : 1], *b;
	uint32_t moved, n_pick = pick_slabs(m, pick, &moved);

	if (n_pick == 0 || (n_pick == 1 && !m->reload.resubnet && moved == pick[0]->n))
		return 0;
	b = dpmon_host_slab_alloc(moved);
	if (b == NULL)
		return m->reload.resubnet ? -ENOMEM : 0;
	slab_add(m, b);
	b->live = 1; /* as in write_records */
	for (uint32_t i = 0; i < n_pick; i++)
		move_records(m, b, pick[i]);
	b->live--;
	RTE_ASSERT(b->n == moved);
	m->timing.moved += moved;
	m->reload.resubnet = false;
	return 0;
}

/* ------------------------------------------------------------------------
 * The snapshot's hosts.
 * --------------------------------------------------------------------- */

/* Listed hosts by address, and each one's place, from scratch (new hosts, reload). */
static void
rebuild_order(struct dpmon_merge *m)
{
	uint32_t k = 0;

	for (uint32_t j = 0; j < m->hosts.n_sorted; j++) {
		uint32_t id = m->hosts.sorted[j];

		if (m->hosts.g_subnet[id] == DPMON_NO_SUBNET) {
			m->records.g_pos[id] = NO_POS;
			continue; /* no longer monitored (reload) */
		}
		RTE_ASSERT(m->records.g_rec[id] != NULL);
		m->records.g_pos[id] = k;
		m->records.order[k++] = m->records.g_rec[id];
	}
	m->records.n_order = k;
	m->records.order_stale = false;
}

/* Room for @p need slabs in records.slabs (twice as much when it grows). 0 or -ENOMEM. */
static int
reserve_slabs(struct dpmon_merge *m, uint32_t need)
{
	void *p;

	if (need <= m->records.cap_slabs)
		return 0;
	p = realloc(m->records.slabs, sizeof(*m->records.slabs) * need * 2);
	if (p == NULL)
		return -ENOMEM;
	m->records.slabs = p;
	m->records.cap_slabs = need * 2;
	return 0;
}

int
merge_fill_hosts(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	/* A reload's moves, write_records and compact_slabs each add at most one slab. */
	uint32_t need = m->records.n_slabs + 3;

	if (reserve_slabs(m, need) != 0)
		return -ENOMEM;
	m->timing.written = m->timing.moved = 0;
	s->slabs = malloc(sizeof(*s->slabs) * need);
	if (s->slabs == NULL || (m->reload.resubnet && compact_slabs(m) != 0) ||
	    write_records(m, dt) != 0)
		return -ENOMEM;
	(void)compact_slabs(m); /* cannot fail without a reload pending */
	if (m->records.order_stale)
		rebuild_order(m);
	RTE_ASSERT(m->records.n_order == s->n_hosts);
	memcpy(s->host_at, m->records.order, sizeof(*m->records.order) * m->records.n_order);
	for (uint32_t i = 0; i < m->records.n_slabs; i++) {
		dpmon_host_slab_ref(m->records.slabs[i]);
		s->slabs[i] = m->records.slabs[i];
	}
	s->n_slabs = m->records.n_slabs;
	s->avg_tau_s = m->avg.tau_s;
	m->timing.touched = m->fold.n_touched;
	return 0;
}
