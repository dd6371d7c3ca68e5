/*
 * merge.c — builds snapshots from the per-core tables (see merge.h).
 *
 * Global hosts live in growable arrays indexed by a global id; an rte_hash
 * maps address → global id and is consulted only when a worker publishes a
 * host the merger has not mapped yet. A separate index array keeps the
 * global ids sorted by address: new ids are sorted among themselves and
 * merged in (O(new log new + hosts)), so lookups by address in the snapshot
 * are a binary search and no merge re-sorts a million hosts.
 *
 * The fold visits only touched hosts. Every worker entry is mapped to its
 * global id and chained to the other workers' entries of the same host
 * (first[gid], next[core][entry]); a merge scans the entries' epoch stamps
 * (counters.h), marks the global ids of those stamped since the worker's
 * epoch at the previous merge, and recomputes each marked host's
 * cumulative counters as the sum over its chain: low words read from the
 * workers plus the high words the merger keeps from the carry records, all
 * under each worker's wrap_seq (retried when a wrap happened meanwhile).
 * Unmarked hosts keep their cumulative values and get zero rates.
 *
 * Snapshot hosts (snapshot.h): a merge writes a record only for the hosts
 * it touched (and those new to it), into one new slab; the other hosts
 * keep the record of the merge that last touched them, and the snapshot
 * lists them by pointer, holding a reference to every slab with a record
 * still current. So a merge writes 8 bytes per host (the pointer array,
 * patched in place: g_pos) plus one 712-byte record per touched host,
 * instead of every host's record. A touched host's averages continue from
 * its previous record's (kept dense in g_avg, beside the counters, rather
 * than read back from the scattered record), decayed to the previous
 * merge (dpmon_avg_decay: the steps with rate 0 it was not given), then
 * one EWMA step. A slab
 * whose live records fall below a quarter of its size has them moved
 * (copied verbatim) into a new one, as have the smallest slabs when more
 * than SLABS_MAX are live, so memory stays within four times the live
 * records (about 1.5 times with random touches) and a snapshot lists few
 * slabs. A reload copies every record (new subnets), its averages brought
 * to the previous merge with the time constant the merges until then used
 * (avg_rebase): the reload may change it, and a record's averages are read
 * and continued with the current one from its t_s on.
 *
 * Reload (dpmon_merge_reconfigure, docs/architecture.md): the subnet
 * counters of a generation that no worker uses any more are read one last
 * time and folded into sub_base, by exact prefix, so a subnet's cumulative
 * value is sub_base + the sum over the workers' current generation: it
 * continues across any number of reloads. The previous cumulative values
 * and the averages move with the prefix (rates see neither a spike nor a
 * dip); the old generation's flow sketches are read once more, by the next
 * merge, for the interval they shared with the new ones. Hosts are
 * classified again: those outside every new subnet stay in the merger
 * (their counters, should they come back) but leave the snapshots.
 */
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "classify.h"
#include "hll.h"
#include "rates.h"

/* Entry @p idx of worker table @p core, packed; OCC_END ends a chain. */
#define OCC(core, idx) ((uint32_t)(core) << 24 | (idx))
#define OCC_END UINT32_MAX
#define MAX_CORES 255
/* Live slabs above which the smallest are merged into one (file comment). */
#define SLABS_MAX 64
#define NO_POS UINT32_MAX

/* Flows and peers of one touched host, per direction (host_flows). */
struct host_fp {
	double flows[DPMON_DIR_MAX], peers[DPMON_DIR_MAX];
};

/* High words of one worker entry's counters (from carry records). */
struct carry_hi {
	uint32_t hi[DPMON_HOST_SLOTS];
};

/* State of the averages of one direction (rates.h): total, protocols, kinds. */
struct avg_dir {
	double pps, bps;
	double proto_pps[DPMON_PROTO_MAX], proto_bps[DPMON_PROTO_MAX];
	double x_pps[DPMON_XCLASS_MAX];
};

/* State of the averages of one direction pair. */
struct avg_pair {
	struct avg_dir d[DPMON_DIR_MAX];
};

/* A host's averages as of the merge that last touched it (its record's). */
struct host_avg {
	double t_s; /* that merge's uptime */
	struct avg_pair a;
};

struct core_map {
	uint32_t *gid;    /* worker entry → global id */
	uint32_t *next;   /* worker entry → next occurrence of the same host */
	uint32_t *carry;  /* worker entry → index + 1 into dpmon_merge.carries, 0 = none */
	uint32_t mapped;  /* worker entries mapped so far */
	uint32_t w_prev;  /* worker_epoch read by the previous merge */
	uint32_t w_now;   /* worker_epoch read by this merge */
};

struct dpmon_merge {
	const struct dpmon_config *cfg;
	unsigned n_cores;
	struct dpmon_core **cores;
	unsigned *lcores;
	struct core_map *map;
	uint64_t *prev_busy; /* each worker's busy_cycles at the previous merge */
	uint64_t start_tsc, prev_tsc, tsc_hz, seq;

	struct dpmon_dir_ctr prev_totals[DPMON_TOTAL_MAX];
	struct dpmon_xdir_ctr prev_xtotals[DPMON_TOTAL_MAX];
	struct avg_dir tot_avg[DPMON_TOTAL_MAX];
	struct avg_pair *sub_avg; /* n_subnets */
	double alpha;             /* weight of this merge's rates in the averages */
	uint8_t flow_tmp[1u << DPMON_FLOW_P]; /* registers of one sketch, merged over cores */
	/* registers of one promoted host direction, merged over cores */
	uint8_t host_tmp[1u << DPMON_HOST_FLOW_P], peer_tmp[1u << DPMON_HOST_PEER_P];
	struct dpmon_hist_point **hist; /* ring of the last hist_cap points, one reference each */
	uint32_t hist_cap, hist_n, hist_head; /* head: index of the oldest */
	struct dpmon_pair_ctr *sub_cur, *sub_prev; /* n_subnets */
	/* Subnets of the current generation (dpmon_merge_reconfigure). */
	uint32_t n_subnets;
	struct dpmon_generation **gen;             /* per core: its current generation */
	struct dpmon_pair_ctr *sub_base;    /* n_subnets: final counts of earlier generations */
	/* The previous generation, whose sketches the next merge reads once. */
	struct dpmon_generation **retired;         /* per core; NULL when none */
	uint32_t *old_of_new;                 /* new subnet → its old index, UINT32_MAX: none */
	uint32_t n_unmonitored;             /* global hosts outside every subnet (g_subnet) */

	struct rte_hash *ghash; /* address → global id */
	uint32_t n_hosts, cap_hosts;
	struct dpmon_addr *g_addr;
	uint32_t *g_subnet;
	struct dpmon_pair_ctr *g_cur, *g_prev; /* g_cur valid for marked ids only */
	/* Snapshot records (file comment). */
	const struct dpmon_snap_host **g_rec; /* global id → its current record; NULL: none yet */
	struct host_avg *g_avg;               /* global id → its record's averages, kept dense */
	struct dpmon_host_slab **g_slab;      /* global id → the slab of that record */
	uint32_t *g_pos;                      /* global id → index in @c order, NO_POS: not listed */
	const struct dpmon_snap_host **order; /* current records of the listed hosts, by address */
	uint32_t n_order;
	uint32_t n_recorded;                  /* ids [0, n_recorded) have a record, the others none */
	bool order_stale;                     /* new hosts or a reload: rebuild order and g_pos */
	bool resubnet;                        /* a reload: rewrite every record (new subnets) */
	struct dpmon_host_slab **slabs;       /* slabs with a current record, one reference each */
	uint32_t n_slabs, cap_slabs;
	double tau_s;                         /* time constant of the averages, seconds */
	double tau_prev_s;                    /* that of the previous merge (a reload may change it) */
	double t_prev, t_now;                 /* uptime of the previous merge and of this one */
	uint32_t *first;   /* global id → first worker occurrence */
	uint32_t *mark;    /* global id → n_collects of the collect_touched that last marked it */
	uint32_t n_collects; /* collect_touched calls, failed merges' too (never 0 once called) */
	uint32_t *touched; /* global ids marked by this merge */
	struct host_fp *t_fp; /* flows and peers of touched[t] (fold_touched) */
	uint32_t n_touched;
	struct carry_hi *carries;
	uint32_t n_carries, cap_carries;
	uint32_t epoch;    /* merge epoch handed to the workers */
	struct dpmon_merge_timing timing;
	uint32_t *sorted;  /* global ids by address */
	uint32_t n_sorted; /* ids [0, n_sorted) are in @c sorted */
};

static int
grow_hosts(struct dpmon_merge *m, uint32_t need)
{
	uint32_t cap = m->cap_hosts ? m->cap_hosts : 1024;
	void *p;

	while (cap < need)
		cap *= 2;
	if (cap == m->cap_hosts)
		return 0;
#define GROW(field)                                                     \
	do {                                                            \
		p = realloc(m->field, sizeof(*m->field) * cap);         \
		if (p == NULL)                                          \
			return -ENOMEM;                                 \
		m->field = p;                                           \
	} while (0)
	GROW(g_addr);
	GROW(g_subnet);
	GROW(g_cur);
	GROW(g_prev);
	GROW(sorted);
	GROW(first);
	GROW(mark);
	GROW(touched);
	GROW(t_fp);
	GROW(g_rec);
	GROW(g_avg);
	GROW(g_slab);
	GROW(g_pos);
	GROW(order);
#undef GROW
	/* Both halves of the double buffer: they swap every merge, and a new
	 * host's previous cumulative value must read as zero. */
	memset(m->g_prev + m->cap_hosts, 0, sizeof(*m->g_prev) * (cap - m->cap_hosts));
	memset(m->g_cur + m->cap_hosts, 0, sizeof(*m->g_cur) * (cap - m->cap_hosts));
	memset(m->mark + m->cap_hosts, 0, sizeof(*m->mark) * (cap - m->cap_hosts));
	memset(m->g_rec + m->cap_hosts, 0, sizeof(*m->g_rec) * (cap - m->cap_hosts));
	memset(m->g_avg + m->cap_hosts, 0, sizeof(*m->g_avg) * (cap - m->cap_hosts));
	m->cap_hosts = cap;
	return 0;
}

struct dpmon_merge *
dpmon_merge_create(const struct dpmon_config *cfg, struct dpmon_core *const *cores,
		   struct dpmon_generation *const *gens, const unsigned *lcores, unsigned n_cores,
		   uint64_t start_tsc, uint64_t tsc_hz)
{
	static unsigned instance;
	struct dpmon_merge *m = calloc(1, sizeof(*m));
	char name[RTE_HASH_NAMESIZE];
	uint64_t entries = 0;

	if (m == NULL || n_cores > MAX_CORES) {
		free(m);
		return NULL;
	}
	m->cfg = cfg;
	m->epoch = 1;
	m->n_cores = n_cores;
	m->start_tsc = m->prev_tsc = start_tsc;
	m->tsc_hz = tsc_hz;
	m->cores = calloc(n_cores, sizeof(*m->cores));
	m->lcores = calloc(n_cores, sizeof(*m->lcores));
	m->map = calloc(n_cores, sizeof(*m->map));
	m->prev_busy = calloc(n_cores ? n_cores : 1, sizeof(*m->prev_busy));
	m->sub_cur = calloc(cfg->n_subnets ? cfg->n_subnets : 1, sizeof(*m->sub_cur));
	m->sub_prev = calloc(cfg->n_subnets ? cfg->n_subnets : 1, sizeof(*m->sub_prev));
	m->sub_base = calloc(cfg->n_subnets ? cfg->n_subnets : 1, sizeof(*m->sub_base));
	m->n_subnets = cfg->n_subnets;
	m->gen = calloc(n_cores ? n_cores : 1, sizeof(*m->gen));
	m->retired = calloc(n_cores ? n_cores : 1, sizeof(*m->retired));
	m->sub_avg = calloc(cfg->n_subnets ? cfg->n_subnets : 1, sizeof(*m->sub_avg));
	m->hist_cap = (uint32_t)((uint64_t)cfg->history_s * 1000 /
				 (cfg->merge_interval_ms ? cfg->merge_interval_ms : 1000));
	m->hist = calloc(m->hist_cap ? m->hist_cap : 1, sizeof(*m->hist));
	if (!m->cores || !m->lcores || !m->map || !m->prev_busy || !m->sub_cur || !m->sub_prev ||
	    !m->sub_avg || !m->hist || !m->sub_base || !m->gen || !m->retired)
		goto fail;
	for (unsigned c = 0; c < n_cores; c++) {
		m->cores[c] = cores[c];
		m->gen[c] = gens[c];
		m->lcores[c] = lcores[c];
		m->map[c].gid = malloc(sizeof(uint32_t) * cores[c]->capacity);
		m->map[c].next = malloc(sizeof(uint32_t) * cores[c]->capacity);
		m->map[c].carry = calloc(cores[c]->capacity, sizeof(uint32_t));
		if (!m->map[c].gid || !m->map[c].next || !m->map[c].carry)
			goto fail;
		entries += cores[c]->capacity;
	}
	snprintf(name, sizeof(name), "dpmon_g%u", __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED));
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = (uint32_t)(entries < 8 ? 8 : entries > UINT32_MAX / 2 ? UINT32_MAX / 2 : entries),
		.key_len = sizeof(struct dpmon_addr),
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	m->ghash = rte_hash_create(&hp);
	if (m->ghash == NULL || grow_hosts(m, 1024) != 0)
		goto fail;
	return m;
fail:
	dpmon_merge_free(m);
	return NULL;
}

void
dpmon_merge_free(struct dpmon_merge *m)
{
	if (m == NULL)
		return;
	for (unsigned c = 0; m->map && c < m->n_cores; c++) {
		free(m->map[c].gid);
		free(m->map[c].next);
		free(m->map[c].carry);
	}
	free(m->carries);
	free(m->first);
	free(m->mark);
	free(m->touched);
	free(m->t_fp);
	free(m->map);
	free(m->prev_busy);
	free(m->cores);
	free(m->lcores);
	free(m->sub_cur);
	free(m->sub_prev);
	free(m->sub_avg);
	free(m->sub_base);
	free(m->gen);
	free(m->retired);
	free(m->old_of_new);
	for (uint32_t i = 0; m->hist && i < m->hist_n; i++)
		dpmon_hist_point_unref(m->hist[(m->hist_head + i) % m->hist_cap]);
	free(m->hist);
	for (uint32_t i = 0; m->slabs && i < m->n_slabs; i++)
		dpmon_host_slab_unref(m->slabs[i]);
	free(m->slabs);
	free(m->g_rec);
	free(m->g_avg);
	free(m->g_slab);
	free(m->g_pos);
	free(m->order);
	rte_hash_free(m->ghash);
	free(m->g_addr);
	free(m->g_subnet);
	free(m->g_cur);
	free(m->g_prev);
	free(m->sorted);
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
	return m->n_hosts;
}

/* Global id of @p a, creating the host on first sight. */
static int64_t
global_id(struct dpmon_merge *m, const struct dpmon_addr *a, uint32_t subnet)
{
	void *data;
	uint32_t id = m->n_hosts;

	if (rte_hash_lookup_data(m->ghash, a, &data) >= 0)
		return (int64_t)(uintptr_t)data;
	if (grow_hosts(m, id + 1) != 0)
		return -ENOMEM;
	if (rte_hash_add_key_data(m->ghash, a, (void *)(uintptr_t)id) != 0)
		return -ENOSPC;
	m->g_addr[id] = *a;
	/* A host a worker inserted under a newer classifier than the merger's
	 * (the window of a reload that then failed) gets no subnet rather
	 * than an index past m->n_subnets; a reload reclassifies every host. */
	m->g_subnet[id] = subnet < m->n_subnets ? subnet : DPMON_NO_SUBNET;
	m->n_unmonitored += m->g_subnet[id] == DPMON_NO_SUBNET;
	m->first[id] = OCC_END;
	m->n_hosts++;
	return id;
}

/* Map the hosts each worker published since the last merge. */
static int
map_new_hosts(struct dpmon_merge *m)
{
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_core *core = m->cores[c];
		uint32_t n = dpmon_core_hosts_published(core);

		for (uint32_t i = m->map[c].mapped; i < n; i++) {
			int64_t id = global_id(m, &core->meta[i].addr, core->meta[i].subnet);
			if (id < 0)
				return (int)id;
			m->map[c].gid[i] = (uint32_t)id;
			m->map[c].next[i] = m->first[id];
			m->first[id] = OCC(c, i);
			m->map[c].mapped = i + 1;
		}
	}
	return 0;
}

static void
dir_read_add(struct dpmon_dir_ctr *dst, const struct dpmon_dir_ctr *src)
{
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		dst->proto[p].packets += dpmon_count_read(&src->proto[p].packets);
		dst->proto[p].bytes += dpmon_count_read(&src->proto[p].bytes);
	}
}

static void
xdir_read_add(struct dpmon_xdir_ctr *dst, const struct dpmon_xdir_ctr *src)
{
	for (int x = 0; x < DPMON_XCLASS_MAX; x++) {
		dst->x[x].packets += dpmon_count_read(&src->x[x].packets);
		dst->x[x].bytes += dpmon_count_read(&src->x[x].bytes);
	}
}

static void
pair_read_add(struct dpmon_pair_ctr *dst, const struct dpmon_pair_ctr *src)
{
	dir_read_add(&dst->dir[0], &src->dir[0]);
	dir_read_add(&dst->dir[1], &src->dir[1]);
	xdir_read_add(&dst->xdir[0], &src->xdir[0]);
	xdir_read_add(&dst->xdir[1], &src->xdir[1]);
}

/* Cumulative value and rate of one counter pair over @p dt seconds. */
static void
rate_of(struct dpmon_rate *r, const struct dpmon_ctr *cur, const struct dpmon_ctr *prev,
	double dt)
{
	r->packets = cur->packets;
	r->bytes = cur->bytes;
	r->pps = dpmon_rate_per_s(cur->packets, prev->packets, dt);
	r->bps = 8 * dpmon_rate_per_s(cur->bytes, prev->bytes, dt);
}

/*
 * Step the averages @p a, first scaled by @p k (a host's, decayed to the
 * previous merge: record_write; 1 for totals and subnets), with @p d's
 * rates (total, each protocol class, each packet kind's pps) and store
 * them in @p d.
 */
static void
avg_update(const struct dpmon_merge *m, struct dpmon_dir_stats *d, struct avg_dir *a, double k)
{
	a->pps = dpmon_ewma_step(a->pps * k, d->total.pps, m->alpha);
	a->bps = dpmon_ewma_step(a->bps * k, d->total.bps, m->alpha);
	d->avg_pps = a->pps;
	d->avg_bps = a->bps;
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		a->proto_pps[p] = dpmon_ewma_step(a->proto_pps[p] * k, d->proto[p].pps, m->alpha);
		a->proto_bps[p] = dpmon_ewma_step(a->proto_bps[p] * k, d->proto[p].bps, m->alpha);
		d->avg_proto_pps[p] = a->proto_pps[p];
		d->avg_proto_bps[p] = a->proto_bps[p];
	}
	for (int x = 0; x < DPMON_XCLASS_MAX; x++) {
		a->x_pps[x] = dpmon_ewma_step(a->x_pps[x] * k, d->x[x].pps, m->alpha);
		d->avg_x_pps[x] = a->x_pps[x];
	}
}

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
	for (int x = 0; x < DPMON_XCLASS_MAX; x++)
		a->x_pps[x] *= k;
}

/* Cumulative values and rates of one direction (protocols, then kinds). */
static void
dir_stats(struct dpmon_dir_stats *out, const struct dpmon_dir_ctr *cur,
	  const struct dpmon_xdir_ctr *xcur, const struct dpmon_dir_ctr *prev,
	  const struct dpmon_xdir_ctr *xprev, double dt)
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
	for (int x = 0; x < DPMON_XCLASS_MAX; x++)
		rate_of(&out->x[x], &xcur->x[x], &xprev->x[x], dt);
}

static int
cmp_gid(const void *x, const void *y, void *arg)
{
	const struct dpmon_addr *addr = arg;
	return dpmon_addr_cmp(&addr[*(const uint32_t *)x], &addr[*(const uint32_t *)y]);
}

/* Keep m->sorted ordered by address after new ids were appended. */
static int
sort_new_hosts(struct dpmon_merge *m)
{
	uint32_t old = m->n_sorted, added = m->n_hosts - old;
	uint32_t *tmp, i = 0, j = old, k = 0;

	if (added == 0)
		return 0;
	for (uint32_t id = old; id < m->n_hosts; id++)
		m->sorted[id] = id;
	qsort_r(m->sorted + old, added, sizeof(uint32_t), cmp_gid, m->g_addr);
	tmp = malloc(sizeof(uint32_t) * m->n_hosts);
	if (tmp == NULL)
		return -ENOMEM;
	while (i < old && j < m->n_hosts) {
		if (dpmon_addr_cmp(&m->g_addr[m->sorted[i]], &m->g_addr[m->sorted[j]]) < 0)
			tmp[k++] = m->sorted[i++];
		else
			tmp[k++] = m->sorted[j++];
	}
	while (i < old)
		tmp[k++] = m->sorted[i++];
	while (j < m->n_hosts)
		tmp[k++] = m->sorted[j++];
	memcpy(m->sorted, tmp, sizeof(uint32_t) * m->n_hosts);
	free(tmp);
	m->n_sorted = m->n_hosts;
	m->order_stale = true;
	return 0;
}

/*
 * Load of worker @p c: cumulative busy seconds, and the busy share of the
 * @p dt_cycles since the previous merge (clamped to 0..1: a burst that
 * straddles the read is attributed to the interval in which it ends).
 */
static void
read_load(struct dpmon_merge *m, unsigned c, uint64_t dt_cycles, struct dpmon_snap_worker *w)
{
	uint64_t busy = dpmon_count_read(&m->cores[c]->stats.busy_cycles);
	double ratio = dt_cycles > 0 ? (double)(busy - m->prev_busy[c]) / (double)dt_cycles : 0;

	w->polls = dpmon_count_read(&m->cores[c]->stats.polls);
	w->busy_s = (double)busy / (double)m->tsc_hz;
	w->busy_ratio = ratio > 1.0 ? 1.0 : ratio;
	m->prev_busy[c] = busy;
}

/*
 * Read the workers' packet counts first (acquire: they are stored last in a
 * burst, with release), so every packet they include is also in the host,
 * subnet and total counters read after them.
 */
static void
read_workers(struct dpmon_merge *m, struct dpmon_snap_worker *w,
	     uint64_t reasons[DPMON_REASON_MAX], uint64_t dt_cycles)
{
	memset(reasons, 0, sizeof(uint64_t) * DPMON_REASON_MAX);
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_core *core = m->cores[c];

		/* Before the packet count: every burst this merge does not fully
		 * see runs in this epoch or a later one (counters.h). */
		m->map[c].w_now = __atomic_load_n(&core->worker_epoch, __ATOMIC_ACQUIRE);
		w[c].lcore = m->lcores[c];
		w[c].packets = __atomic_load_n(&core->stats.packets, __ATOMIC_ACQUIRE);
		w[c].bursts = dpmon_count_read(&core->stats.bursts);
		w[c].host_table_full = dpmon_count_read(&core->stats.host_table_full);
		w[c].host_v4mapped = dpmon_count_read(&core->stats.host_v4mapped);
		w[c].host_ext_full = dpmon_count_read(&core->stats.host_ext_full);
		w[c].host_flow_full = dpmon_count_read(&core->stats.host_flow_full);
		w[c].hosts = dpmon_core_hosts_published(core);
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
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_core_stats *st = &m->cores[c]->stats;

		for (int a = 0; a < DPMON_ANOM_MAX; a++)
			s->anomalies[a] += dpmon_count_read(&st->anomalies[a]);
		for (int i = 0; i < DPMON_IPSTAT_MAX; i++)
			s->ip_stats[i] += dpmon_count_read(&st->ip_stats[i]);
	}
}

static void
fill_totals(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	struct dpmon_dir_ctr cur[DPMON_TOTAL_MAX];
	struct dpmon_xdir_ctr xcur[DPMON_TOTAL_MAX];

	memset(cur, 0, sizeof(cur));
	memset(xcur, 0, sizeof(xcur));
	for (unsigned c = 0; c < m->n_cores; c++) {
		for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
			dir_read_add(&cur[t], &m->cores[c]->totals[t]);
			xdir_read_add(&xcur[t], &m->cores[c]->xtotals[t]);
		}
	}
	for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
		dir_stats(&s->totals[t], &cur[t], &xcur[t], &m->prev_totals[t],
			  &m->prev_xtotals[t], dt);
		avg_update(m, &s->totals[t], &m->tot_avg[t], 1.0);
	}
	memcpy(m->prev_totals, cur, sizeof(cur));
	memcpy(m->prev_xtotals, xcur, sizeof(xcur));
}

static void
fill_subnets(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	uint32_t n = m->n_subnets;
	struct dpmon_pair_ctr *t;

	RTE_ASSERT(n == m->cfg->n_subnets);
	memcpy(m->sub_cur, m->sub_base, sizeof(*m->sub_cur) * n);
	for (unsigned c = 0; c < m->n_cores; c++)
		for (uint32_t i = 0; i < n; i++)
			pair_read_add(&m->sub_cur[i], &m->gen[c]->subnets[i]);
	for (uint32_t i = 0; i < n; i++) {
		struct dpmon_snap_subnet *ss = &s->subnets[i];

		ss->prefix = m->cfg->subnets[i].prefix;
		memcpy(ss->name, m->cfg->subnets[i].name, sizeof(ss->name));
		for (int d = 0; d < DPMON_DIR_MAX; d++) {
			dir_stats(&ss->dir[d], &m->sub_cur[i].dir[d], &m->sub_cur[i].xdir[d],
				  &m->sub_prev[i].dir[d], &m->sub_prev[i].xdir[d], dt);
			avg_update(m, &ss->dir[d], &m->sub_avg[i].d[d], 1.0);
		}
	}
	t = m->sub_prev;
	m->sub_prev = m->sub_cur;
	m->sub_cur = t;
}

/*
 * Mark the global ids of entries stamped since each worker's previous
 * epoch, with a count of its own: a merge that fails after this leaves
 * nothing to undo (w_prev does not advance, so the next call marks the
 * same hosts again, and more).
 */
static void
collect_touched(struct dpmon_merge *m)
{
	uint32_t mark = ++m->n_collects;

	if (mark == 0) /* 0: never marked (grow_hosts) */
		mark = m->n_collects = 1;

	m->n_touched = 0;
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_host_meta *meta = m->cores[c]->meta;
		const uint32_t *gid = m->map[c].gid;
		uint32_t since = m->map[c].w_prev;

		for (uint32_t i = 0; i < m->map[c].mapped; i++) {
			uint32_t id;

			if (__atomic_load_n(&meta[i].epoch, __ATOMIC_RELAXED) < since)
				continue;
			id = gid[i];
			if (m->mark[id] != mark) {
				m->mark[id] = mark;
				m->touched[m->n_touched++] = id;
			}
		}
	}
}

static struct carry_hi *
carry_of(struct dpmon_merge *m, unsigned c, uint32_t idx)
{
	uint32_t *slot = &m->map[c].carry[idx];

	if (*slot == 0) {
		if (m->n_carries == m->cap_carries) {
			uint32_t cap = m->cap_carries ? m->cap_carries * 2 : 64;
			void *p = realloc(m->carries, sizeof(*m->carries) * cap);

			if (p == NULL)
				return NULL;
			m->carries = p;
			m->cap_carries = cap;
		}
		memset(&m->carries[m->n_carries], 0, sizeof(*m->carries));
		*slot = ++m->n_carries;
	}
	return &m->carries[*slot - 1];
}

/* Apply the carry records core @p c pushed since the last call. */
static int
consume_carries(struct dpmon_merge *m, unsigned c)
{
	struct dpmon_core *core = m->cores[c];
	uint32_t head = __atomic_load_n(&core->carry_head, __ATOMIC_ACQUIRE);
	uint32_t tail = core->carry_tail;

	for (; tail != head; tail++) {
		uint32_t rec = core->carry[tail & (DPMON_CARRY_RING - 1)];
		struct carry_hi *h = carry_of(m, c, rec / DPMON_HOST_SLOTS);

		if (h == NULL)
			return -ENOMEM;
		h->hi[rec % DPMON_HOST_SLOTS]++;
		/* Released one record at a time: on -ENOMEM the rest stays queued. */
		__atomic_store_n(&core->carry_tail, tail + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Add worker entry @p idx of core @p c (low words + kept high words) to @p dst. */
static void
entry_read_add(struct dpmon_merge *m, unsigned c, uint32_t idx, struct dpmon_pair_ctr *dst)
{
	const struct dpmon_core *core = m->cores[c];
	const struct dpmon_host_ctr *h = &core->hosts[idx];
	uint32_t xi = __atomic_load_n(&core->meta[idx].xidx, __ATOMIC_RELAXED);
	uint32_t ci = m->map[c].carry[idx];
	const struct carry_hi *hi = ci ? &m->carries[ci - 1] : NULL;

	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		for (int p = 0; p < DPMON_PROTO_MAX; p++) {
			uint32_t s = dpmon_host_slot((unsigned)d, (unsigned)p);
			uint64_t pk = dpmon_count_read32(&h->packets[d][p]);
			uint64_t by = dpmon_count_read32(&h->bytes[d][p]);

			if (hi != NULL) {
				pk += (uint64_t)hi->hi[s] << 32;
				by += (uint64_t)hi->hi[s + DPMON_HOST_BASE_SLOTS / 2] << 32;
			}
			dst->dir[d].proto[p].packets += pk;
			dst->dir[d].proto[p].bytes += by;
		}
	}
	if (xi == 0)
		return;
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		const struct dpmon_host_xctr *x = &core->xhosts[xi - 1];

		for (int k = 0; k < DPMON_XCLASS_MAX; k++) {
			uint32_t s = dpmon_host_xslot((unsigned)d, (unsigned)k);
			uint64_t pk = dpmon_count_read32(&x->packets[d][k]);
			uint64_t by = dpmon_count_read32(&x->bytes[d][k]);

			if (hi != NULL) {
				pk += (uint64_t)hi->hi[s] << 32;
				by += (uint64_t)hi->hi[s + DPMON_DIR_MAX * DPMON_XCLASS_MAX] << 32;
			}
			dst->xdir[d].x[k].packets += pk;
			dst->xdir[d].x[k].bytes += by;
		}
	}
}

static void host_flows(struct dpmon_merge *m, uint32_t id, int d, double *flows, double *peers);

/*
 * Cumulative counters of every touched host, consistent with the carries,
 * and its flows and peers (host_flows) in the same visit of its worker
 * entries, while their lines are in the cache.
 */
static int
fold_touched(struct dpmon_merge *m)
{
	uint32_t seq_before[MAX_CORES];
	bool retry;

	do {
		for (unsigned c = 0; c < m->n_cores; c++) {
			uint32_t s;

			while ((s = __atomic_load_n(&m->cores[c]->wrap_seq, __ATOMIC_ACQUIRE)) & 1)
				rte_pause(); /* the worker is between two stores */
			seq_before[c] = s;
			if (consume_carries(m, c) != 0)
				return -ENOMEM;
		}
		for (uint32_t t = 0; t < m->n_touched; t++) {
			uint32_t id = m->touched[t];

			memset(&m->g_cur[id], 0, sizeof(m->g_cur[id]));
			for (uint32_t o = m->first[id]; o != OCC_END;) {
				unsigned c = o >> 24;
				uint32_t idx = o & 0xffffff;

				entry_read_add(m, c, idx, &m->g_cur[id]);
				o = m->map[c].next[idx];
			}
			for (int d = 0; d < DPMON_DIR_MAX; d++)
				host_flows(m, id, d, &m->t_fp[t].flows[d], &m->t_fp[t].peers[d]);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		retry = false;
		for (unsigned c = 0; c < m->n_cores; c++)
			if (__atomic_load_n(&m->cores[c]->wrap_seq, __ATOMIC_RELAXED) != seq_before[c])
				retry = true;
	} while (retry);
	return 0;
}

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

	for (uint32_t o = m->first[id]; o != OCC_END;) {
		const struct dpmon_core *core = m->cores[o >> 24];
		const struct dpmon_host_meta *e = &core->meta[o & 0xffffff];
		const struct dpmon_host_sketch *k;
		uint32_t slot;

		o = m->map[o >> 24].next[o & 0xffffff];
		if (__atomic_load_n(&e->epoch, __ATOMIC_ACQUIRE) != m->epoch)
			continue;
		slot = __atomic_load_n(&e->hsk[d], __ATOMIC_ACQUIRE);
		if (slot == 0 || slot > DPMON_HOST_SKETCHES) {
			fb |= __atomic_load_n(&e->flows[d], __ATOMIC_RELAXED);
			pb |= __atomic_load_n(&e->peers[d], __ATOMIC_RELAXED);
			continue;
		}
		if (!promoted) {
			memset(m->host_tmp, 0, sizeof(m->host_tmp));
			memset(m->peer_tmp, 0, sizeof(m->peer_tmp));
			promoted = true;
		}
		k = &core->hsk[slot - 1];
		fb |= k->pre_flows;
		pb |= k->pre_peers;
		dpmon_hll_merge(m->host_tmp, k->flows, DPMON_HOST_FLOW_P);
		dpmon_hll_merge(m->peer_tmp, k->peers, DPMON_HOST_PEER_P);
	}
	if (!promoted) {
		*flows = dpmon_bitmap_estimate(fb);
		*peers = dpmon_bitmap_estimate(pb);
		return;
	}
	*flows = dpmon_hll_estimate(m->host_tmp, DPMON_HOST_FLOW_P) +
		 dpmon_hll_unseen(fb, m->host_tmp, DPMON_HOST_FLOW_P);
	*peers = dpmon_hll_estimate(m->peer_tmp, DPMON_HOST_PEER_P) +
		 dpmon_hll_unseen(pb, m->peer_tmp, DPMON_HOST_PEER_P);
}

/*
 * Bring the averages of record @p h and of global id @p id's state, as of
 * merge time g_avg[id].t_s, to the previous merge (m->t_prev), decayed
 * with the time constant the merges in between used (m->tau_prev_s): the
 * record is then read, and continued, with the current time constant from
 * there only. Its seq (freshness) is kept. After a reload (file comment).
 */
static void
avg_rebase(struct dpmon_merge *m, struct dpmon_snap_host *h, uint32_t id)
{
	struct host_avg *avg = &m->g_avg[id];
	double k = dpmon_avg_decay(m->t_prev - avg->t_s, m->tau_prev_s);

	RTE_ASSERT(h->t_s == avg->t_s); /* so the record's averages are avg's */
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		avg_scale(&avg->a.d[d], k);
		dpmon_dir_avgs_scale(&h->dir[d], k);
	}
	h->t_s = avg->t_s = m->t_prev;
}

/* Take a reference-holding slot in m->slabs for @p b (room reserved by the caller). */
static void
slab_add(struct dpmon_merge *m, struct dpmon_host_slab *b)
{
	RTE_ASSERT(m->n_slabs < m->cap_slabs);
	m->slabs[m->n_slabs++] = b;
}

/* Global id @p id's record is replaced: its slab loses a live record. */
static void
record_retire(struct dpmon_merge *m, uint32_t id)
{
	struct dpmon_host_slab *b = m->g_slab[id];

	if (m->g_rec[id] == NULL)
		return;
	RTE_ASSERT(b->live > 0);
	if (--b->live > 0)
		return;
	for (uint32_t i = 0; i < m->n_slabs; i++) {
		if (m->slabs[i] == b) {
			m->slabs[i] = m->slabs[--m->n_slabs];
			dpmon_host_slab_unref(b);
			return;
		}
	}
	RTE_ASSERT(0); /* a slab with live records is listed */
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
	m->g_rec[id] = h;
	m->g_slab[id] = b;
	if (!m->order_stale && m->g_pos[id] != NO_POS)
		m->order[m->g_pos[id]] = h;
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
	struct host_avg *avg = &m->g_avg[id];
	const struct dpmon_pair_ctr *prev = &m->g_prev[id];
	const struct dpmon_pair_ctr *cur = fp != NULL ? &m->g_cur[id] : prev;
	/* A new id's averages are still zero (grow_hosts): any k keeps them so. */
	double k = dpmon_avg_decay(m->t_prev - avg->t_s, m->tau_s);

	h->addr = m->g_addr[id];
	h->subnet = m->g_subnet[id];
	h->seq = m->seq;
	h->t_s = m->t_now;
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		dir_stats(&h->dir[d], &cur->dir[d], &cur->xdir[d], &prev->dir[d], &prev->xdir[d],
			  dt);
		avg_update(m, &h->dir[d], &avg->a.d[d], k);
		h->dir[d].flows = fp != NULL ? fp->flows[d] : 0;
		h->dir[d].peers = fp != NULL ? fp->peers[d] : 0;
	}
	avg->t_s = m->t_now;
	if (fp != NULL)
		m->g_prev[id] = m->g_cur[id]; /* while both lines are in the cache */
	record_install(m, b, id);
}

/*
 * Records for this merge: the touched hosts' and those of new hosts not
 * touched (none of these normally: a host is published with a stamp).
 * The latter are the new ids still without a record once the touched ones
 * have theirs (not chosen by mark: every id the snapshot lists must get
 * one). Room in m->slabs is reserved by the caller.
 */
static int
write_records(struct dpmon_merge *m, double dt)
{
	/* Without a record: exactly the ids from n_recorded on (its rule). */
	uint32_t n = m->n_touched + (m->n_hosts - m->n_recorded);
	struct dpmon_host_slab *b;

	for (uint32_t t = 0; t < m->n_touched; t++)
		n -= m->touched[t] >= m->n_recorded; /* new and touched: counted twice */
	if (n == 0)
		return 0;
	b = dpmon_host_slab_alloc(n);
	if (b == NULL)
		return -ENOMEM;
	slab_add(m, b);
	b->live = 1; /* keeps it listed while its own records are installed */
	for (uint32_t t = 0; t < m->n_touched; t++)
		record_write(m, b, m->touched[t], &m->t_fp[t], dt);
	for (uint32_t id = m->n_recorded; id < m->n_hosts; id++)
		if (m->g_rec[id] == NULL)
			record_write(m, b, id, NULL, dt);
	RTE_ASSERT(b->n == n);
	b->live--;
	m->n_recorded = m->n_hosts;
	m->timing.written = n;
	return 0;
}

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
 * Move into one new slab the current records of the slabs less than a
 * quarter live (moving W records then frees 3 W: the moves cost at most a
 * third of the writes that emptied them), of the smallest ones past
 * SLABS_MAX, or of all after a reload (with their new subnet). Except
 * after a reload, a merge moves at most as many records as it wrote, or
 * 1/64 of the hosts (the fewest live first), so no merge pays for the
 * moves of many: a large slab waits until it fits. Room in m->slabs is
 * reserved by the caller. On allocation failure nothing moves (memory is
 * only wasted), except after a reload: -ENOMEM, and it is tried again
 * next merge.
 */
static int
compact_slabs(struct dpmon_merge *m)
{
	struct dpmon_host_slab *pick[m->n_slabs ? m->n_slabs : 1], *b;
	uint32_t n_pick = 0, moved = 0;
	uint32_t budget = RTE_MAX(m->n_touched, m->n_hosts / 64);

	memcpy(pick, m->slabs, sizeof(*pick) * m->n_slabs);
	if (m->resubnet) {
		n_pick = m->n_slabs;
	} else {
		/* The smallest ones past SLABS_MAX: down to SLABS_MAX / 2. */
		uint32_t over = m->n_slabs > SLABS_MAX ? m->n_slabs - SLABS_MAX / 2 : 0;

		qsort(pick, m->n_slabs, sizeof(*pick), cmp_live);
		for (uint32_t i = 0; i < m->n_slabs; i++) {
			if ((i < over || pick[i]->live * 4 < pick[i]->n) &&
			    moved + pick[i]->live <= budget) {
				moved += pick[i]->live;
				pick[n_pick++] = pick[i];
			}
		}
	}
	if (m->resubnet)
		for (uint32_t i = 0; i < n_pick; i++)
			moved += pick[i]->live;
	if (n_pick == 0 || (n_pick == 1 && !m->resubnet && moved == pick[0]->n))
		return 0;
	b = dpmon_host_slab_alloc(moved);
	if (b == NULL)
		return m->resubnet ? -ENOMEM : 0;
	slab_add(m, b);
	b->live = 1; /* as in write_records */
	for (uint32_t i = 0; i < n_pick; i++) {
		struct dpmon_host_slab *o = pick[i];

		dpmon_host_slab_ref(o); /* its last live record may leave it */
		for (uint32_t j = 0; j < o->n; j++) {
			uint32_t id = o->gid[j];

			if (m->g_rec[id] != &o->h[j])
				continue;
			b->h[b->n] = o->h[j];
			b->h[b->n].subnet = m->g_subnet[id];
			if (m->resubnet)
				avg_rebase(m, &b->h[b->n], id);
			record_install(m, b, id);
		}
		dpmon_host_slab_unref(o);
	}
	b->live--;
	RTE_ASSERT(b->n == moved);
	m->timing.moved += moved;
	m->resubnet = false;
	return 0;
}

/* Listed hosts by address, and each one's place, from scratch (new hosts, reload). */
static void
rebuild_order(struct dpmon_merge *m)
{
	uint32_t k = 0;

	for (uint32_t j = 0; j < m->n_hosts; j++) {
		uint32_t id = m->sorted[j];

		if (m->g_subnet[id] == DPMON_NO_SUBNET) {
			m->g_pos[id] = NO_POS;
			continue; /* no longer monitored (reload) */
		}
		RTE_ASSERT(m->g_rec[id] != NULL);
		m->g_pos[id] = k;
		m->order[k++] = m->g_rec[id];
	}
	m->n_order = k;
	m->order_stale = false;
}

/*
 * The hosts of @p s: this merge's records, and the earlier ones still
 * current. On -ENOMEM no record of this merge is listed (a reload's moves
 * may be done: they change no value).
 */
static int
fill_hosts(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	/* A reload's moves, write_records and compact_slabs each add at most one slab. */
	uint32_t need = m->n_slabs + 3;

	if (need > m->cap_slabs) {
		void *p = realloc(m->slabs, sizeof(*m->slabs) * need * 2);

		if (p == NULL)
			return -ENOMEM;
		m->slabs = p;
		m->cap_slabs = need * 2;
	}
	m->timing.written = m->timing.moved = 0;
	s->slabs = malloc(sizeof(*s->slabs) * need);
	if (s->slabs == NULL || (m->resubnet && compact_slabs(m) != 0) ||
	    write_records(m, dt) != 0)
		return -ENOMEM;
	(void)compact_slabs(m); /* cannot fail without a reload pending */
	if (m->order_stale)
		rebuild_order(m);
	RTE_ASSERT(m->n_order == s->n_hosts);
	memcpy(s->host_at, m->order, sizeof(*m->order) * m->n_order);
	for (uint32_t i = 0; i < m->n_slabs; i++) {
		dpmon_host_slab_ref(m->slabs[i]);
		s->slabs[i] = m->slabs[i];
	}
	s->n_slabs = m->n_slabs;
	s->avg_tau_s = m->tau_s;
	m->timing.touched = m->n_touched;
	return 0;
}

/* t = register-wise max(t, registers of @p s tagged with @p tag). */
static void
sketch_max(uint8_t *t, const struct dpmon_flow_sketch *s, uint32_t tag)
{
	for (uint32_t i = 0; i < (1u << DPMON_FLOW_P); i++) {
		uint32_t r = __atomic_load_n(&s->reg[i], __ATOMIC_RELAXED);

		if ((r >> 8) == tag && (uint8_t)r > t[i])
			t[i] = (uint8_t)r;
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

	memset(m->flow_tmp, 0, sizeof(m->flow_tmp));
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_generation *r = m->retired[c];

		sketch_max(m->flow_tmp, sub ? &m->gen[c]->flow_sub[k] : &m->cores[c]->flow_tot[k],
			   tag);
		/* Just after a reload: the same subnet's sketch in the previous
		 * generation, which counted the first part of this interval. */
		if (sub && r != NULL) {
			uint32_t old = m->old_of_new[k / DPMON_DIR_MAX];

			if (old < r->n_flow_subnets)
				sketch_max(m->flow_tmp,
					   &r->flow_sub[old * DPMON_DIR_MAX + k % DPMON_DIR_MAX], tag);
		}
	}
	return dpmon_hll_estimate(m->flow_tmp, DPMON_FLOW_P);
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

	memset(m->flow_tmp, 0, sizeof(m->flow_tmp));
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_core *core = m->cores[c];
		const struct dpmon_generation *g = m->gen[c];
		uint32_t v = __atomic_load_n(&g->flow_slot[(i - g->n_flow_subnets) *
							   DPMON_DIR_MAX + (uint32_t)d],
					     __ATOMIC_RELAXED);

		if ((v >> 8) != tag || (v & 0xff) == 0)
			continue; /* no packet in this epoch (0: a zeroed slot) */
		if ((v & 0xff) == DPMON_FLOW_SLOT_NONE)
			return -1;
		sketch_max(m->flow_tmp, &core->flow_pool[(v & 0xff) - 1], tag);
	}
	return dpmon_hll_estimate(m->flow_tmp, DPMON_FLOW_P);
}

/* Flows of the totals and subnets; -1 where none is measured. */
static void
fill_flows(struct dpmon_merge *m, struct dpmon_snapshot *s)
{
	uint32_t nfs = m->n_cores ? m->gen[0]->n_flow_subnets : 0;

	s->totals[DPMON_TOTAL_INGRESS].flows = sketch_flows(m, false, DPMON_DIR_INGRESS);
	s->totals[DPMON_TOTAL_EGRESS].flows = sketch_flows(m, false, DPMON_DIR_EGRESS);
	s->totals[DPMON_TOTAL_INTERNAL].flows = -1;
	s->totals[DPMON_TOTAL_EXTERNAL].flows = -1;
	if (m->n_cores == 0) {
		s->totals[DPMON_TOTAL_INGRESS].flows = s->totals[DPMON_TOTAL_EGRESS].flows = 0;
	}
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		s->totals[t].peers = -1;
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		for (int d = 0; d < DPMON_DIR_MAX; d++) {
			s->subnets[i].dir[d].flows =
				m->n_cores == 0 ? 0
				: i < nfs ? sketch_flows(m, true, i * DPMON_DIR_MAX + (uint32_t)d)
					  : pooled_flows(m, i, d);
			s->subnets[i].dir[d].peers = -1;
		}
	}
	/* The previous generation's sketches served their last interval (its
	 * pool slots are not read: pooled subnets count from the reload on). */
	for (unsigned c = 0; c < m->n_cores; c++)
		m->retired[c] = NULL;
}

/*
 * Append this merge's rates to the history ring and give @p s a reference
 * to every point kept. On allocation failure the snapshot simply has no
 * history (n_history 0); the ring is unchanged.
 */
static void
fill_history(struct dpmon_merge *m, struct dpmon_snapshot *s)
{
	struct dpmon_hist_point *p;

	if (m->hist_cap == 0)
		return;
	p = dpmon_hist_point_alloc(s->n_subnets);
	s->history = malloc(sizeof(*s->history) * (m->hist_n < m->hist_cap ? m->hist_n + 1
									  : m->hist_cap));
	if (p == NULL || s->history == NULL) {
		dpmon_hist_point_unref(p);
		free(s->history);
		s->history = NULL;
		return;
	}
	p->seq = s->seq;
	p->uptime_s = s->uptime_s;
	p->interval_s = s->interval_s;
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		p->totals[t] = (struct dpmon_hist_rate){s->totals[t].total.pps, s->totals[t].total.bps};
	for (uint32_t i = 0; i < s->n_subnets; i++)
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			p->sub[i * DPMON_DIR_MAX + d] = (struct dpmon_hist_rate){
				s->subnets[i].dir[d].total.pps, s->subnets[i].dir[d].total.bps};
	if (m->hist_n == m->hist_cap) { /* drop the oldest */
		dpmon_hist_point_unref(m->hist[m->hist_head]);
		m->hist[m->hist_head] = p;
		m->hist_head = (m->hist_head + 1) % m->hist_cap;
	} else {
		m->hist[(m->hist_head + m->hist_n++) % m->hist_cap] = p;
	}
	for (uint32_t i = 0; i < m->hist_n; i++) {
		struct dpmon_hist_point *q = m->hist[(m->hist_head + i) % m->hist_cap];

		dpmon_hist_point_ref(q);
		s->history[i] = q;
	}
	s->n_history = m->hist_n;
}

/* Subnet of global host @p id under classifier @p cls (DPMON_NO_SUBNET: none). */
static uint32_t
classify_host(const struct dpmon_classifier *cls, const struct dpmon_addr *a)
{
	uint32_t sub;

	if (dpmon_addr_is_v4(a)) {
		uint32_t v4 = dpmon_addr_v4(a);

		dpmon_classify_v4(cls, &v4, &sub, 1);
	} else {
		uint8_t v6[1][16];

		memcpy(v6[0], a->b, 16);
		dpmon_classify_v6(cls, v6, &sub, 1);
	}
	return sub;
}

/*
 * A copy of history point @p p with the subnets renumbered by @p old_of_new
 * (@p n new subnets; a new one has zero rates). NULL on allocation failure.
 */
static struct dpmon_hist_point *
hist_point_remap(const struct dpmon_hist_point *p, const uint32_t *old_of_new, uint32_t n)
{
	struct dpmon_hist_point *q = dpmon_hist_point_alloc(n);

	if (q == NULL)
		return NULL;
	q->seq = p->seq;
	q->uptime_s = p->uptime_s;
	q->interval_s = p->interval_s;
	memcpy(q->totals, p->totals, sizeof(q->totals));
	for (uint32_t i = 0; i < n; i++)
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			q->sub[i * DPMON_DIR_MAX + d] =
				old_of_new[i] < p->n_subnets
					? p->sub[old_of_new[i] * DPMON_DIR_MAX + d]
					: (struct dpmon_hist_rate){0, 0};
	return q;
}

/* Renumber the subnets of every point of the history ring. */
static int
remap_history(struct dpmon_merge *m, const uint32_t *old_of_new, uint32_t n)
{
	struct dpmon_hist_point *fresh[m->hist_n ? m->hist_n : 1];

	for (uint32_t i = 0; i < m->hist_n; i++) {
		fresh[i] = hist_point_remap(m->hist[(m->hist_head + i) % m->hist_cap], old_of_new, n);
		if (fresh[i] == NULL) {
			while (i-- > 0)
				dpmon_hist_point_unref(fresh[i]);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < m->hist_n; i++) {
		uint32_t k = (m->hist_head + i) % m->hist_cap;

		dpmon_hist_point_unref(m->hist[k]); /* snapshots may still hold it */
		m->hist[k] = fresh[i];
	}
	return 0;
}

int
dpmon_merge_reconfigure(struct dpmon_merge *m, const struct dpmon_classifier *cls,
			struct dpmon_generation *const *gens, uint32_t n_subnets,
			const uint32_t *old_of_new)
{
	uint32_t n_old = m->n_subnets;
	struct dpmon_pair_ctr *fin = calloc(n_old ? n_old : 1, sizeof(*fin));
	struct dpmon_pair_ctr *base = calloc(n_subnets ? n_subnets : 1, sizeof(*base));
	struct dpmon_pair_ctr *prev = calloc(n_subnets ? n_subnets : 1, sizeof(*prev));
	struct dpmon_pair_ctr *cur = calloc(n_subnets ? n_subnets : 1, sizeof(*cur));
	struct avg_pair *avg = calloc(n_subnets ? n_subnets : 1, sizeof(*avg));
	/* The merge keeps its own copy of old_of_new (m->old_of_new). */
	uint32_t *own_map = malloc(sizeof(*own_map) * (n_subnets ? n_subnets : 1));
	int rc = -ENOMEM;

	if (!fin || !base || !prev || !cur || !avg || !own_map)
		goto out;
	/* Hosts the old generation inserted, before their subnets renumber. */
	if (map_new_hosts(m) != 0 || sort_new_hosts(m) != 0)
		goto out;
	if (remap_history(m, old_of_new, n_subnets) != 0)
		goto out;
	/* The old generation's final counts (no worker writes them any more). */
	memcpy(fin, m->sub_base, sizeof(*fin) * n_old);
	for (unsigned c = 0; c < m->n_cores; c++)
		for (uint32_t i = 0; i < n_old; i++)
			pair_read_add(&fin[i], &m->gen[c]->subnets[i]);
	for (uint32_t i = 0; i < n_subnets; i++) {
		uint32_t o = old_of_new[i];

		RTE_ASSERT(o == UINT32_MAX || o < n_old);
		own_map[i] = o;
		if (o == UINT32_MAX)
			continue;
		base[i] = fin[o];
		prev[i] = m->sub_prev[o];
		avg[i] = m->sub_avg[o];
	}
	for (unsigned c = 0; c < m->n_cores; c++) {
		m->retired[c] = m->gen[c];
		m->gen[c] = gens[c];
	}
	free(m->old_of_new);
	m->old_of_new = own_map;
	own_map = NULL;
#define SWAP_IN(field, v) do { free(m->field); m->field = (v); (v) = NULL; } while (0)
	SWAP_IN(sub_base, base);
	SWAP_IN(sub_prev, prev);
	SWAP_IN(sub_cur, cur);
	SWAP_IN(sub_avg, avg);
#undef SWAP_IN
	m->n_subnets = n_subnets;
	m->n_unmonitored = 0;
	m->order_stale = true;
	m->resubnet = true;
	for (uint32_t id = 0; id < m->n_hosts; id++) {
		m->g_subnet[id] = classify_host(cls, &m->g_addr[id]);
		if (m->g_subnet[id] == DPMON_NO_SUBNET)
			m->n_unmonitored++;
	}
	rc = 0;
out:
	free(fin);
	free(base);
	free(prev);
	free(cur);
	free(avg);
	free(own_map);
	return rc;
}

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
	for (unsigned c = 0; c < m->n_cores; c++) {
		m->map[c].w_prev = m->map[c].w_now;
		__atomic_store_n(&m->cores[c]->merge_epoch, m->epoch, __ATOMIC_RELAXED);
	}
}

struct dpmon_snapshot *
dpmon_merge_run(struct dpmon_merge *m, uint64_t now_tsc, const struct dpmon_port_stats *ports,
		uint32_t n_ports)
{
	double dt = (double)(now_tsc - m->prev_tsc) / (double)m->tsc_hz;
	struct dpmon_snap_worker workers[m->n_cores];
	uint64_t reasons[DPMON_REASON_MAX];
	uint64_t t_start = rte_rdtsc(), t_fold;
	struct dpmon_snapshot *s;

	/* Order matters (counters.h): worker packet counts, then the hosts
	 * published by then, then host, subnet and total counters, which the
	 * workers write in the opposite order. So the snapshot holds every
	 * packet its worker counts claim, and sum(hosts) <= subnet <= totals. */
	read_workers(m, workers, reasons, now_tsc - m->prev_tsc);
	if (map_new_hosts(m) != 0 || sort_new_hosts(m) != 0)
		return NULL;
	m->seq++;
	collect_touched(m);
	if (fold_touched(m) != 0) {
		m->seq--;
		return NULL;
	}
	t_fold = rte_rdtsc();
	s = dpmon_snapshot_alloc_shared_hosts(n_ports, m->n_cores, m->n_subnets,
					      m->n_hosts - m->n_unmonitored);
	if (s == NULL) {
		m->seq--;
		return NULL;
	}
	memcpy(s->workers, workers, sizeof(workers));
	memcpy(s->parse_errors, reasons, sizeof(reasons));
	read_parse_notes(m, s);
	s->seq = m->seq;
	s->uptime_s = (double)(now_tsc - m->start_tsc) / (double)m->tsc_hz;
	s->interval_s = dt;
	s->interval_ms = m->cfg->merge_interval_ms;
	if (n_ports > 0)
		memcpy(s->ports, ports, sizeof(*ports) * n_ports);
	m->tau_s = m->cfg->average_time_constant_ms / 1000.0;
	m->alpha = dpmon_ewma_alpha(dt, m->tau_s);
	m->t_prev = (double)(m->prev_tsc - m->start_tsc) / (double)m->tsc_hz;
	m->t_now = s->uptime_s;
	if (fill_hosts(m, s, dt) != 0) {
		dpmon_snapshot_free(s);
		m->seq--;
		return NULL;
	}
	fill_subnets(m, s, dt);
	fill_totals(m, s, dt);
	fill_flows(m, s);
	fill_history(m, s);
	advance_epochs(m);
	m->tau_prev_s = m->tau_s;
	m->timing.fold_s = (double)(t_fold - t_start) / (double)m->tsc_hz;
	m->timing.snapshot_s = (double)(rte_rdtsc() - t_fold) / (double)m->tsc_hz;
	m->prev_tsc = now_tsc;
	s->merge_s = (double)(rte_rdtsc() - now_tsc) / (double)m->tsc_hz;
	return s;
}
