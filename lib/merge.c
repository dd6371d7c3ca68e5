/*
 * merge.c — builds snapshots from the per-core tables (see merge.h).
 *
 * Global hosts live in growable arrays indexed by a global id; an rte_hash
 * maps address → global id and is consulted only when a worker publishes a
 * host the merger has not mapped yet. A separate index array keeps the
 * global ids sorted by address: new ids are sorted among themselves and
 * merged in (O(new log new + hosts)), so lookups by address in the snapshot
 * are a binary search and no merge re-sorts a million hosts.
 */
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>

struct core_map {
	uint32_t *gid;  /* worker index → global id */
	uint32_t mapped; /* worker entries mapped so far */
};

struct dpmon_merge {
	const struct dpmon_config *cfg;
	unsigned n_cores;
	struct dpmon_core **cores;
	unsigned *lcores;
	struct core_map *map;
	uint64_t start_tsc, prev_tsc, tsc_hz, seq;

	struct dpmon_dir_ctr prev_totals[DPMON_TOTAL_MAX];
	struct dpmon_pair_ctr *sub_cur, *sub_prev; /* n_subnets */

	struct rte_hash *ghash; /* address → global id */
	uint32_t n_hosts, cap_hosts;
	struct dpmon_addr *g_addr;
	uint32_t *g_subnet;
	struct dpmon_pair_ctr *g_cur, *g_prev;
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
#undef GROW
	memset(m->g_prev + m->cap_hosts, 0, sizeof(*m->g_prev) * (cap - m->cap_hosts));
	m->cap_hosts = cap;
	return 0;
}

struct dpmon_merge *
dpmon_merge_create(const struct dpmon_config *cfg, struct dpmon_core *const *cores,
		   const unsigned *lcores, unsigned n_cores, uint64_t start_tsc, uint64_t tsc_hz)
{
	static unsigned instance;
	struct dpmon_merge *m = calloc(1, sizeof(*m));
	char name[RTE_HASH_NAMESIZE];
	uint64_t entries = 0;

	if (m == NULL)
		return NULL;
	m->cfg = cfg;
	m->n_cores = n_cores;
	m->start_tsc = m->prev_tsc = start_tsc;
	m->tsc_hz = tsc_hz;
	m->cores = calloc(n_cores, sizeof(*m->cores));
	m->lcores = calloc(n_cores, sizeof(*m->lcores));
	m->map = calloc(n_cores, sizeof(*m->map));
	m->sub_cur = calloc(cfg->n_subnets, sizeof(*m->sub_cur));
	m->sub_prev = calloc(cfg->n_subnets, sizeof(*m->sub_prev));
	if (!m->cores || !m->lcores || !m->map || !m->sub_cur || !m->sub_prev)
		goto fail;
	for (unsigned c = 0; c < n_cores; c++) {
		m->cores[c] = cores[c];
		m->lcores[c] = lcores[c];
		m->map[c].gid = malloc(sizeof(uint32_t) * cores[c]->capacity);
		if (m->map[c].gid == NULL)
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
	for (unsigned c = 0; m->map && c < m->n_cores; c++)
		free(m->map[c].gid);
	free(m->map);
	free(m->cores);
	free(m->lcores);
	free(m->sub_cur);
	free(m->sub_prev);
	rte_hash_free(m->ghash);
	free(m->g_addr);
	free(m->g_subnet);
	free(m->g_cur);
	free(m->g_prev);
	free(m->sorted);
	free(m);
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
	m->g_subnet[id] = subnet;
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
			int64_t id = global_id(m, &core->host_addr[i], core->host_subnet[i]);
			if (id < 0)
				return (int)id;
			m->map[c].gid[i] = (uint32_t)id;
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
pair_read_add(struct dpmon_pair_ctr *dst, const struct dpmon_pair_ctr *src)
{
	dir_read_add(&dst->dir[0], &src->dir[0]);
	dir_read_add(&dst->dir[1], &src->dir[1]);
}

/* Cumulative values and rates of one direction. */
static void
dir_stats(struct dpmon_dir_stats *out, const struct dpmon_dir_ctr *cur,
	  const struct dpmon_dir_ctr *prev, double dt)
{
	memset(&out->total, 0, sizeof(out->total));
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		struct dpmon_rate *r = &out->proto[p];
		uint64_t dp = cur->proto[p].packets - prev->proto[p].packets;
		uint64_t db = cur->proto[p].bytes - prev->proto[p].bytes;

		r->packets = cur->proto[p].packets;
		r->bytes = cur->proto[p].bytes;
		r->pps = dt > 0 ? (double)dp / dt : 0;
		r->bps = dt > 0 ? (double)db * 8 / dt : 0;
		out->total.packets += r->packets;
		out->total.bytes += r->bytes;
		out->total.pps += r->pps;
		out->total.bps += r->bps;
	}
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
	return 0;
}

/*
 * Read the workers' packet counts first (acquire: they are stored last in a
 * burst, with release), so every packet they include is also in the host,
 * subnet and total counters read after them.
 */
static void
read_workers(struct dpmon_merge *m, struct dpmon_snap_worker *w,
	     uint64_t reasons[DPMON_REASON_MAX])
{
	memset(reasons, 0, sizeof(uint64_t) * DPMON_REASON_MAX);
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_core *core = m->cores[c];

		w[c].lcore = m->lcores[c];
		w[c].packets = __atomic_load_n(&core->stats.packets, __ATOMIC_ACQUIRE);
		w[c].bursts = dpmon_count_read(&core->stats.bursts);
		w[c].host_table_full = dpmon_count_read(&core->stats.host_table_full);
		w[c].hosts = dpmon_core_hosts_published(core);
		for (int r = 1; r < DPMON_REASON_MAX; r++)
			reasons[r] += dpmon_count_read(&core->stats.reasons[r]);
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

	memset(cur, 0, sizeof(cur));
	for (unsigned c = 0; c < m->n_cores; c++)
		for (int t = 0; t < DPMON_TOTAL_MAX; t++)
			dir_read_add(&cur[t], &m->cores[c]->totals[t]);
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		dir_stats(&s->totals[t], &cur[t], &m->prev_totals[t], dt);
	memcpy(m->prev_totals, cur, sizeof(cur));
}

static void
fill_subnets(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	uint32_t n = m->cfg->n_subnets;
	struct dpmon_pair_ctr *t;

	memset(m->sub_cur, 0, sizeof(*m->sub_cur) * n);
	for (unsigned c = 0; c < m->n_cores; c++)
		for (uint32_t i = 0; i < n; i++)
			pair_read_add(&m->sub_cur[i], &m->cores[c]->subnets[i]);
	for (uint32_t i = 0; i < n; i++) {
		struct dpmon_snap_subnet *ss = &s->subnets[i];

		ss->prefix = m->cfg->subnets[i].prefix;
		memcpy(ss->name, m->cfg->subnets[i].name, sizeof(ss->name));
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			dir_stats(&ss->dir[d], &m->sub_cur[i].dir[d], &m->sub_prev[i].dir[d], dt);
	}
	t = m->sub_prev;
	m->sub_prev = m->sub_cur;
	m->sub_cur = t;
}

static void
fill_hosts(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	struct dpmon_pair_ctr *t;

	memset(m->g_cur, 0, sizeof(*m->g_cur) * m->n_hosts);
	for (unsigned c = 0; c < m->n_cores; c++) {
		const struct dpmon_core *core = m->cores[c];
		const uint32_t *gid = m->map[c].gid;

		for (uint32_t i = 0; i < m->map[c].mapped; i++)
			pair_read_add(&m->g_cur[gid[i]], &core->hosts[i]);
	}
	for (uint32_t k = 0; k < s->n_hosts; k++) {
		uint32_t id = m->sorted[k];
		struct dpmon_snap_host *h = &s->hosts[k];

		h->addr = m->g_addr[id];
		h->subnet = m->g_subnet[id];
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			dir_stats(&h->dir[d], &m->g_cur[id].dir[d], &m->g_prev[id].dir[d], dt);
	}
	t = m->g_prev;
	m->g_prev = m->g_cur;
	m->g_cur = t;
}

struct dpmon_snapshot *
dpmon_merge_run(struct dpmon_merge *m, uint64_t now_tsc, const struct dpmon_snap_port *ports,
		uint32_t n_ports)
{
	double dt = (double)(now_tsc - m->prev_tsc) / (double)m->tsc_hz;
	struct dpmon_snap_worker workers[m->n_cores];
	uint64_t reasons[DPMON_REASON_MAX];
	struct dpmon_snapshot *s;

	/* Order matters (counters.h): worker packet counts, then the hosts
	 * published by then, then host, subnet and total counters, which the
	 * workers write in the opposite order. So the snapshot holds every
	 * packet its worker counts claim, and sum(hosts) <= subnet <= totals. */
	read_workers(m, workers, reasons);
	if (map_new_hosts(m) != 0 || sort_new_hosts(m) != 0)
		return NULL;
	s = dpmon_snapshot_alloc(n_ports, m->n_cores, m->cfg->n_subnets, m->n_hosts);
	if (s == NULL)
		return NULL;
	memcpy(s->workers, workers, sizeof(workers));
	memcpy(s->parse_errors, reasons, sizeof(reasons));
	read_parse_notes(m, s);
	s->seq = ++m->seq;
	s->uptime_s = (double)(now_tsc - m->start_tsc) / (double)m->tsc_hz;
	s->interval_s = dt;
	s->interval_ms = m->cfg->merge_interval_ms;
	if (n_ports > 0)
		memcpy(s->ports, ports, sizeof(*ports) * n_ports);
	fill_hosts(m, s, dt);
	fill_subnets(m, s, dt);
	fill_totals(m, s, dt);
	m->prev_tsc = now_tsc;
	s->merge_s = (double)(rte_rdtsc() - now_tsc) / (double)m->tsc_hz;
	return s;
}
