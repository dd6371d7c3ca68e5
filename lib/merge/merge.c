/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge.c — every merge interval, the worker lcores' tables into one
 * immutable snapshot (merge.h): the merger's life cycle and the sequence
 * of one merge, the parts of which have a file each.
 *
 * A merge reads the workers' own counters first, then maps the hosts
 * they published by then (merge_hosts.c), folds the counters of the hosts
 * touched since the previous merge (merge_fold.c) and writes and lists
 * their records (merge_records.c), then reads the subnets' and the
 * totals' counters, here, and adds their flows and the history
 * (merge_history.c): the opposite of the order in which the workers store
 * them (counters.h), so the snapshot holds every packet its worker counts
 * claim. Around that, the hosts' life cycle (merge_life.c): the workers'
 * answers to retire requests first, and new requests once this merge's
 * touched hosts are known. Between two merges a reload moves the merger
 * to new subnets without losing a count (merge_reload.c).
 */
#include "merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_debug.h>

#include "merge_private.h"
#include "rates.h"

/* ------------------------------------------------------------------------
 * Create and free.
 * --------------------------------------------------------------------- */

/*
 * The worker tables @p cores, the lcores they run on, and a map of each
 * one's entries; adds their capacity to @p entries. 0 or -ENOMEM.
 */
static int
workers_init(struct dpmon_merge *m, struct dpmon_core *const *cores, const unsigned *lcores,
	     uint64_t *entries)
{
	struct merge_workers *w = &m->workers;

	w->core = calloc(w->n, sizeof(*w->core));
	w->lcore = calloc(w->n, sizeof(*w->lcore));
	w->map = calloc(w->n, sizeof(*w->map));
	w->prev_busy = calloc(w->n ? w->n : 1, sizeof(*w->prev_busy));
	if (!w->core || !w->lcore || !w->map || !w->prev_busy)
		return -ENOMEM;
	for (unsigned c = 0; c < w->n; c++) {
		struct core_map *map = &w->map[c];

		w->core[c] = cores[c];
		w->lcore[c] = lcores[c];
		map->gid = malloc(sizeof(uint32_t) * cores[c]->capacity);
		map->next = malloc(sizeof(uint32_t) * cores[c]->capacity);
		map->carry = calloc(cores[c]->capacity, sizeof(uint32_t));
		map->state = calloc(cores[c]->capacity, sizeof(uint8_t));
		map->last_ds = calloc(cores[c]->capacity, sizeof(uint32_t));
		map->free = malloc(sizeof(uint32_t) * cores[c]->capacity);
		if (!map->gid || !map->next || !map->carry || !map->state || !map->last_ds ||
		    !map->free)
			return -ENOMEM;
		*entries += cores[c]->capacity;
	}
	return 0;
}

/* Counters of the configuration's subnets, read from each core's generation @p gens. */
static int
subnets_init(struct dpmon_merge *m, struct dpmon_generation *const *gens)
{
	struct merge_subnets *sn = &m->subnets;
	uint32_t n = m->cfg->n_subnets ? m->cfg->n_subnets : 1;
	unsigned n_cores = m->workers.n ? m->workers.n : 1;

	sn->n = m->cfg->n_subnets;
	sn->cur = calloc(n, sizeof(*sn->cur));
	sn->prev = calloc(n, sizeof(*sn->prev));
	sn->base = calloc(n, sizeof(*sn->base));
	sn->avg = calloc(n, sizeof(*sn->avg));
	sn->gen = calloc(n_cores, sizeof(*sn->gen));
	m->reload.retired = calloc(n_cores, sizeof(*m->reload.retired));
	if (!sn->cur || !sn->prev || !sn->base || !sn->avg || !sn->gen || !m->reload.retired)
		return -ENOMEM;
	for (unsigned c = 0; c < m->workers.n; c++)
		sn->gen[c] = gens[c];
	return 0;
}

/* The history ring: history_s of merges every merge_interval_ms. 0 or -ENOMEM. */
static int
history_init(struct dpmon_merge *m)
{
	const struct dpmon_config *cfg = m->cfg;
	struct merge_history *h = &m->history;

	h->cap = (uint32_t)((uint64_t)cfg->history_s * 1000 /
			    (cfg->merge_interval_ms ? cfg->merge_interval_ms : 1000));
	h->ring = calloc(h->cap ? h->cap : 1, sizeof(*h->ring));
	return h->ring != NULL ? 0 : -ENOMEM;
}

/* Wall-clock time, seconds since the epoch. */
static double
unix_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct dpmon_merge *
dpmon_merge_create(const struct dpmon_config *cfg, struct dpmon_core *const *cores,
		   struct dpmon_generation *const *gens, const unsigned *lcores, unsigned n_cores,
		   uint64_t start_tsc, uint64_t tsc_hz)
{
	struct dpmon_merge *m = calloc(1, sizeof(*m));
	uint64_t entries = 0;

	if (m == NULL || n_cores > MAX_CORES) {
		free(m);
		return NULL;
	}
	m->cfg = cfg;
	m->epoch = 1;
	m->clock.unix_start_s = unix_now_s() - (double)(rte_rdtsc() - start_tsc) / (double)tsc_hz;
	m->workers.n = n_cores;
	m->clock.start_tsc = m->clock.prev_tsc = start_tsc;
	m->clock.tsc_hz = tsc_hz;
	if (workers_init(m, cores, lcores, &entries) != 0 || subnets_init(m, gens) != 0 ||
	    history_init(m) != 0 || merge_hosts_init(m, entries) != 0) {
		dpmon_merge_free(m);
		return NULL;
	}
	return m;
}

static void
workers_free(struct dpmon_merge *m)
{
	for (unsigned c = 0; m->workers.map && c < m->workers.n; c++) {
		free(m->workers.map[c].gid);
		free(m->workers.map[c].next);
		free(m->workers.map[c].carry);
		free(m->workers.map[c].state);
		free(m->workers.map[c].last_ds);
		free(m->workers.map[c].free);
	}
	free(m->workers.map);
	free(m->workers.prev_busy);
	free(m->workers.core);
	free(m->workers.lcore);
}

/* The subnets' counters, and what a reload left of the previous ones. */
static void
subnets_free(struct dpmon_merge *m)
{
	free(m->subnets.cur);
	free(m->subnets.prev);
	free(m->subnets.avg);
	free(m->subnets.base);
	free(m->subnets.gen);
	free(m->reload.retired);
	free(m->reload.old_of_new);
}

/* The history ring's points (snapshots may hold them still) and the ring. */
static void
history_free(struct dpmon_merge *m)
{
	struct merge_history *h = &m->history;

	for (uint32_t i = 0; h->ring && i < h->n; i++)
		dpmon_hist_point_unref(h->ring[(h->head + i) % h->cap]);
	free(h->ring);
}

/* The merger's reference to each slab with a current record, and the list. */
static void
records_free(struct dpmon_merge *m)
{
	for (uint32_t i = 0; m->records.slabs && i < m->records.n_slabs; i++)
		dpmon_host_slab_unref(m->records.slabs[i]);
	free(m->records.slabs);
}

void
dpmon_merge_free(struct dpmon_merge *m)
{
	if (m == NULL)
		return;
	workers_free(m);
	free(m->fold.carries);
	free(m->fold.bases);
	free(m->fold.free_bases);
	subnets_free(m);
	history_free(m);
	records_free(m);
	merge_hosts_free(m);
	merge_ignored_free(m);
	free(m);
}

void
dpmon_merge_last_timing(const struct dpmon_merge *m, struct dpmon_merge_timing *t)
{
	*t = m->timing;
}

uint32_t
dpmon_merge_hosts(const struct dpmon_merge *m)
{
	return m->hosts.n - m->hosts.n_free_ids;
}

/* ------------------------------------------------------------------------
 * The workers' own counters.
 * --------------------------------------------------------------------- */

/*
 * Load of worker @p c: cumulative busy seconds, and the busy share of the
 * @p dt_cycles since the previous merge (clamped to 0..1: a burst that
 * straddles the read is attributed to the interval in which it ends).
 */
static void
read_load(struct dpmon_merge *m, unsigned c, uint64_t dt_cycles, struct dpmon_snap_worker *w)
{
	const struct dpmon_core_stats *st = &m->workers.core[c]->stats;
	uint64_t busy = dpmon_count_read(&st->busy_cycles);
	double ratio =
		dt_cycles > 0 ? (double)(busy - m->workers.prev_busy[c]) / (double)dt_cycles : 0;

	w->polls = dpmon_count_read(&st->polls);
	w->busy_s = (double)busy / (double)m->clock.tsc_hz;
	w->busy_ratio = ratio > 1.0 ? 1.0 : ratio;
	m->workers.prev_busy[c] = busy;
}

/*
 * Read the workers' packet counts first (acquire: they are stored last in a
 * burst, with release), so every packet they include is also in the host,
 * subnet and total counters read after them.
 */
static void
read_workers(struct dpmon_merge *m, struct dpmon_snap_worker *w, uint64_t reasons[DPMON_REASON_MAX],
	     uint64_t dt_cycles)
{
	memset(reasons, 0, sizeof(uint64_t) * DPMON_REASON_MAX);
	for (unsigned c = 0; c < m->workers.n; c++) {
		const struct dpmon_core *core = m->workers.core[c];

		/* Before the packet count: every burst this merge does not fully
		 * see runs in this epoch or a later one (counters.h). */
		m->workers.map[c].w_now = __atomic_load_n(&core->worker_epoch, __ATOMIC_ACQUIRE);
		w[c].lcore = m->workers.lcore[c];
		w[c].packets = __atomic_load_n(&core->stats.packets, __ATOMIC_ACQUIRE);
		w[c].bursts = dpmon_count_read(&core->stats.bursts);
		w[c].host_table_full = dpmon_count_read(&core->stats.host_table_full);
		w[c].host_v4mapped = dpmon_count_read(&core->stats.host_v4mapped);
		w[c].host_ext_full = dpmon_count_read(&core->stats.host_ext_full);
		w[c].host_flow_full = dpmon_count_read(&core->stats.host_flow_full);
		w[c].ignored_full = dpmon_count_read(&core->stats.ignored_full);
		w[c].host_evictions = dpmon_count_read(&core->stats.host_evictions);
		w[c].host_expired = dpmon_count_read(&core->stats.host_expired);
		w[c].hosts = dpmon_core_hosts_published(core); /* less the retired: merge_run */
		w[c].host_capacity = core->capacity;
		for (int r = 1; r < DPMON_REASON_MAX; r++)
			reasons[r] += dpmon_count_read(&core->stats.reasons[r]);
		read_load(m, c, dt_cycles, &w[c]);
	}
}

/* Sum the workers' anomaly and ip_stats counters (read after their packet counts). */
static void
read_parse_notes(const struct dpmon_merge *m, struct dpmon_snapshot *s)
{
	for (unsigned c = 0; c < m->workers.n; c++) {
		const struct dpmon_core_stats *st = &m->workers.core[c]->stats;

		for (int a = 0; a < DPMON_ANOM_MAX; a++)
			s->anomalies[a] += dpmon_count_read(&st->anomalies[a]);
		for (int i = 0; i < DPMON_IPSTAT_MAX; i++)
			s->ip_stats[i] += dpmon_count_read(&st->ip_stats[i]);
	}
}

/* ------------------------------------------------------------------------
 * Rates and averages of one direction (merge_private.h).
 * --------------------------------------------------------------------- */

/* Cumulative value and rate of one counter pair over @p dt seconds. */
static void
rate_of(struct dpmon_rate *r, const struct dpmon_ctr *cur, const struct dpmon_ctr *prev, double dt)
{
	r->packets = cur->packets;
	r->bytes = cur->bytes;
	r->pps = dpmon_rate_per_s(cur->packets, prev->packets, dt);
	r->bps = 8 * dpmon_rate_per_s(cur->bytes, prev->bytes, dt);
}

void
merge_dir_stats(struct dpmon_dir_stats *out, const struct dpmon_dir_ctr *cur,
		const struct dpmon_flag_ctr *flag_cur, const struct dpmon_dir_ctr *prev,
		const struct dpmon_flag_ctr *flag_prev, double dt)
{
	memset(&out->total, 0, sizeof(out->total));
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		struct dpmon_rate *r = &out->proto[p];

		rate_of(r, &cur->proto[p], &prev->proto[p], dt);
		out->total.packets += r->packets;
		out->total.bytes += r->bytes;
		out->total.pps += r->pps;
		out->total.bps += r->bps;
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++)
		rate_of(&out->flag[f], &flag_cur->flag[f], &flag_prev->flag[f], dt);
}

void
merge_avg_update(const struct dpmon_merge *m, struct dpmon_dir_stats *d, struct avg_dir *a,
		 double k)
{
	const double alpha = m->avg.alpha;

	a->pps = dpmon_ewma_step(a->pps * k, d->total.pps, alpha);
	a->bps = dpmon_ewma_step(a->bps * k, d->total.bps, alpha);
	d->avg_pps = a->pps;
	d->avg_bps = a->bps;
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		a->proto_pps[p] = dpmon_ewma_step(a->proto_pps[p] * k, d->proto[p].pps, alpha);
		a->proto_bps[p] = dpmon_ewma_step(a->proto_bps[p] * k, d->proto[p].bps, alpha);
		d->avg_proto_pps[p] = a->proto_pps[p];
		d->avg_proto_bps[p] = a->proto_bps[p];
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++) {
		a->flag_pps[f] = dpmon_ewma_step(a->flag_pps[f] * k, d->flag[f].pps, alpha);
		d->avg_flag_pps[f] = a->flag_pps[f];
	}
}

/* ------------------------------------------------------------------------
 * Totals and subnets.
 * --------------------------------------------------------------------- */

/* The totals of @p s (rates over @p dt s, averages), summed over the workers. */
static void
fill_totals(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	struct dpmon_dir_ctr cur[DPMON_TOTAL_MAX];
	struct dpmon_flag_ctr flag_cur[DPMON_TOTAL_MAX];

	memset(cur, 0, sizeof(cur));
	memset(flag_cur, 0, sizeof(flag_cur));
	for (unsigned c = 0; c < m->workers.n; c++) {
		for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
			dir_read_add(&cur[t], &m->workers.core[c]->totals[t]);
			flag_read_add(&flag_cur[t], &m->workers.core[c]->flag_totals[t]);
		}
	}
	for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
		merge_dir_stats(&s->totals[t], &cur[t], &flag_cur[t], &m->totals.prev[t],
				&m->totals.flag_prev[t], dt);
		merge_avg_update(m, &s->totals[t], &m->totals.avg[t], 1.0);
	}
	memcpy(m->totals.prev, cur, sizeof(cur));
	memcpy(m->totals.flag_prev, flag_cur, sizeof(flag_cur));
}

/*
 * The subnets of @p s (rates over @p dt s, averages): the earlier
 * generations' final counts (subnets.base) plus the sum over the workers'
 * current generation.
 */
static void
fill_subnets(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	struct merge_subnets *sn = &m->subnets;
	uint32_t n = sn->n;
	struct dpmon_pair_ctr *t;

	RTE_ASSERT(n == m->cfg->n_subnets);
	memcpy(sn->cur, sn->base, sizeof(*sn->cur) * n);
	for (unsigned c = 0; c < m->workers.n; c++)
		for (uint32_t i = 0; i < n; i++)
			pair_read_add(&sn->cur[i], &sn->gen[c]->subnets[i]);
	for (uint32_t i = 0; i < n; i++) {
		struct dpmon_snap_subnet *ss = &s->subnets[i];

		ss->prefix = m->cfg->subnets[i].prefix;
		memcpy(ss->name, m->cfg->subnets[i].name, sizeof(ss->name));
		ss->host_prefix_len = (uint8_t)dpmon_subnet_host_len(&m->cfg->subnets[i]);
		for (int d = 0; d < DPMON_DIR_MAX; d++) {
			merge_dir_stats(&ss->dir[d], &sn->cur[i].dir[d], &sn->cur[i].flags[d],
					&sn->prev[i].dir[d], &sn->prev[i].flags[d], dt);
			merge_avg_update(m, &ss->dir[d], &sn->avg[i].d[d], 1.0);
		}
	}
	t = sn->prev;
	sn->prev = sn->cur;
	sn->cur = t;
}

/* ------------------------------------------------------------------------
 * One merge.
 * --------------------------------------------------------------------- */

/* Hand the next epoch to the workers (counters.h). */
static void
advance_epochs(struct dpmon_merge *m)
{
	m->epoch++;
	/* Sketch registers and pool slots carry the low 24 bits as their tag
	 * and start zeroed: a tag of 0 would make a zeroed slot look taken
	 * in this epoch (slot index -1). Every 2^24 merges, skip it. */
	if ((m->epoch & 0xffffff) == 0)
		m->epoch++;
	for (unsigned c = 0; c < m->workers.n; c++) {
		m->workers.map[c].w_prev = m->workers.map[c].w_now;
		__atomic_store_n(&m->workers.core[c]->merge_epoch, m->epoch, __ATOMIC_RELAXED);
	}
}

/* The sequence number, times and NIC counters of snapshot @p s. */
static void
snapshot_head(const struct dpmon_merge *m, struct dpmon_snapshot *s, uint64_t now_tsc, double dt,
	      const struct dpmon_port_stats *ports, uint32_t n_ports)
{
	s->seq = m->seq;
	s->uptime_s = (double)(now_tsc - m->clock.start_tsc) / (double)m->clock.tsc_hz;
	s->interval_s = dt;
	s->interval_ms = m->cfg->merge_interval_ms;
	if (n_ports > 0)
		memcpy(s->ports, ports, sizeof(*ports) * n_ports);
}

/*
 * This merge's time constant and weight of the averages (the configuration
 * may have changed), the previous merge's uptime and this one's, @p now_s.
 */
static void
clock_step(struct dpmon_merge *m, double now_s, double dt)
{
	m->avg.tau_s = m->cfg->average_time_constant_ms / 1000.0;
	m->avg.alpha = dpmon_ewma_alpha(dt, m->avg.tau_s);
	m->clock.t_prev =
		(double)(m->clock.prev_tsc - m->clock.start_tsc) / (double)m->clock.tsc_hz;
	m->clock.t_now = now_s;
}

/*
 * After a merge that made a snapshot: the next epoch, and this merge's
 * time constant, timing (TSC at its start, and at the end of its fold)
 * and TSC @p now_tsc, for the next one.
 */
static void
end_merge(struct dpmon_merge *m, uint64_t now_tsc, uint64_t t_start, uint64_t t_fold)
{
	advance_epochs(m);
	m->avg.tau_prev_s = m->avg.tau_s;
	m->timing.fold_s = (double)(t_fold - t_start) / (double)m->clock.tsc_hz;
	m->timing.snapshot_s = (double)(rte_rdtsc() - t_fold) / (double)m->clock.tsc_hz;
	m->clock.prev_tsc = now_tsc;
}

struct dpmon_snapshot *
dpmon_merge_run(struct dpmon_merge *m, uint64_t now_tsc, const struct dpmon_port_stats *ports,
		uint32_t n_ports)
{
	double dt = (double)(now_tsc - m->clock.prev_tsc) / (double)m->clock.tsc_hz;
	struct dpmon_snap_worker workers[m->workers.n];
	uint64_t reasons[DPMON_REASON_MAX];
	uint64_t t_start = rte_rdtsc(), t_fold;
	struct dpmon_snapshot *s;

	m->clock.now_ds = (uint32_t)((now_tsc - m->clock.start_tsc) * DS_PER_S / m->clock.tsc_hz);
	/* Order matters (counters.h): worker packet counts, then the hosts
	 * published by then, then host, subnet and total counters, which the
	 * workers write in the opposite order. So the snapshot holds every
	 * packet its worker counts claim, and sum(hosts) <= subnet <= totals. */
	read_workers(m, workers, reasons, now_tsc - m->clock.prev_tsc);
	/* Entries retired and reused since the last merge (merge_life.c). */
	if (merge_drain_events(m) != 0 || merge_map_new_hosts(m) != 0 ||
	    merge_sort_new_hosts(m) != 0)
		return NULL;
	/* After the mapping: a host back in a new entry meanwhile stays. */
	merge_remove_dying(m);
	for (unsigned c = 0; c < m->workers.n; c++)
		workers[c].hosts -= m->workers.map[c].n_dead;
	m->seq++;
	merge_collect_touched(m);
	/* Before the fold: the workers answer while the merge goes on. */
	merge_request_retire(m);
	if (merge_fold_touched(m) != 0) {
		m->seq--;
		return NULL;
	}
	t_fold = rte_rdtsc();
	s = dpmon_snapshot_alloc_shared_hosts(n_ports, m->workers.n, m->subnets.n,
					      m->hosts.n_sorted - m->hosts.n_unmonitored);
	if (s == NULL) {
		m->seq--;
		return NULL;
	}
	memcpy(s->workers, workers, sizeof(workers));
	memcpy(s->parse_errors, reasons, sizeof(reasons));
	read_parse_notes(m, s);
	snapshot_head(m, s, now_tsc, dt, ports, n_ports);
	clock_step(m, s->uptime_s, dt);
	if (merge_fill_hosts(m, s, dt) != 0) {
		dpmon_snapshot_free(s);
		m->seq--;
		return NULL;
	}
	fill_subnets(m, s, dt);
	fill_totals(m, s, dt);
	/* Before the flows, which drop a retired generation. Out of memory,
	 * the snapshot lists no ignored packets: detection compares them too. */
	(void)merge_fill_ignored(m, s, dt);
	merge_fill_flows(m, s);
	merge_fill_history(m, s);
	end_merge(m, now_tsc, t_start, t_fold);
	/* The answers to this merge's requests, waited for a moment: their
	 * entries are then free for the next interval, not one later (an
	 * error is retried next merge, where it stops the merge). */
	merge_await_answers(m);
	s->merge_s = (double)(rte_rdtsc() - now_tsc) / (double)m->clock.tsc_hz;
	return s;
}
