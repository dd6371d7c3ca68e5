/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_hosts.c — the merger's global hosts: one id per address, whatever
 * worker tables hold it, and those ids in address order.
 *
 * Global hosts live in growable arrays indexed by a global id; an rte_hash
 * maps address → global id and is consulted only when a worker publishes a
 * host the merger has not mapped yet. A separate index array keeps the
 * global ids sorted by address: new ids are sorted among themselves and
 * merged in (O(new log new + hosts)), so lookups by address in the snapshot
 * are a binary search and no merge re-sorts a million hosts.
 *
 * Every array indexed by global id grows here, the fold's and the
 * records' too (HOST_ARRAYS), so that an id is valid in all of them. A
 * removed host's id (merge_life.c) is given to the next new host, so the
 * arrays follow the most hosts listed at once, not all hosts ever seen.
 */
#include "merge_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_debug.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>

/* ------------------------------------------------------------------------
 * Arrays indexed by global id.
 * --------------------------------------------------------------------- */

/* Every array indexed by global id, in the order they grow. */
#define HOST_ARRAYS(X)    \
	X(hosts.g_addr)   \
	X(hosts.g_subnet) \
	X(hosts.g_plen)   \
	X(fold.g_cur)     \
	X(fold.g_prev)    \
	X(hosts.sorted)   \
	X(fold.first)     \
	X(fold.mark)      \
	X(fold.touched)   \
	X(fold.t_fp)      \
	X(records.g_rec)  \
	X(records.g_avg)  \
	X(records.g_slab) \
	X(records.g_pos)  \
	X(records.order)  \
	X(hosts.new_ids)  \
	X(hosts.free_ids) \
	X(hosts.dying)    \
	X(hosts.refold)   \
	X(hosts.g_first)  \
	X(hosts.g_last)   \
	X(hosts.g_flags)  \
	X(hosts.pinned)   \
	X(hosts.g_base)

/* Room for @p need global ids in every array, doubling. 0 or -ENOMEM. */
static int
grow_hosts(struct dpmon_merge *m, uint32_t need)
{
	uint32_t cap = m->hosts.cap ? m->hosts.cap : 1024;
	void *p;

	while (cap < need)
		cap *= 2;
	if (cap == m->hosts.cap)
		return 0;
#define GROW(field)                                             \
	do {                                                    \
		p = realloc(m->field, sizeof(*m->field) * cap); \
		if (p == NULL)                                  \
			return -ENOMEM;                         \
		m->field = p;                                   \
	} while (0);
	HOST_ARRAYS(GROW)
#undef GROW
	/* Both halves of the double buffer: they swap every merge, and a new
	 * host's previous cumulative value must read as zero. */
#define ZERO_NEW(field) memset(m->field + m->hosts.cap, 0, sizeof(*m->field) * (cap - m->hosts.cap))
	ZERO_NEW(fold.g_prev);
	ZERO_NEW(fold.g_cur);
	ZERO_NEW(fold.mark);
	ZERO_NEW(records.g_rec);
	ZERO_NEW(records.g_avg);
	ZERO_NEW(hosts.g_flags);
	ZERO_NEW(hosts.g_base);
#undef ZERO_NEW
	m->hosts.cap = cap;
	return 0;
}

int
merge_hosts_init(struct dpmon_merge *m, uint64_t entries)
{
	static unsigned instance;
	char name[RTE_HASH_NAMESIZE];

	snprintf(name, sizeof(name), "dpmon_g%u",
		 __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED));
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = (uint32_t)(entries < 8                ? 8
				      : entries > UINT32_MAX / 4 ? UINT32_MAX / 2
								 : 2 * entries),
		.key_len = sizeof(struct dpmon_addr),
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	m->hosts.hash = rte_hash_create(&hp);
	if (m->hosts.hash == NULL || grow_hosts(m, 1024) != 0)
		return -ENOMEM;
	return 0;
}

void
merge_hosts_free(struct dpmon_merge *m)
{
	rte_hash_free(m->hosts.hash);
#define FREE(field) free(m->field);
	HOST_ARRAYS(FREE)
#undef FREE
}

/* ------------------------------------------------------------------------
 * New hosts.
 * --------------------------------------------------------------------- */

/* A removed host's id, as a new id would be: zero counters, no record. */
static void
id_recycle(struct dpmon_merge *m, uint32_t id)
{
	memset(&m->fold.g_prev[id], 0, sizeof(m->fold.g_prev[id]));
	memset(&m->fold.g_cur[id], 0, sizeof(m->fold.g_cur[id]));
	memset(&m->records.g_avg[id], 0, sizeof(m->records.g_avg[id]));
	m->records.g_rec[id] = NULL;
	m->records.g_pos[id] = NO_POS;
	RTE_ASSERT(m->hosts.g_base[id] == 0 && m->hosts.g_flags[id] == 0);
}

int64_t
merge_global_id(struct dpmon_merge *m, const struct dpmon_addr *a, uint32_t subnet, unsigned c)
{
	void *data;
	bool recycled = m->hosts.n_free_ids > 0;
	uint32_t id = recycled ? m->hosts.free_ids[m->hosts.n_free_ids - 1] : m->hosts.n;

	if (rte_hash_lookup_data(m->hosts.hash, a, &data) >= 0)
		return (int64_t)(uintptr_t)data;
	if (!recycled && grow_hosts(m, id + 1) != 0)
		return -ENOMEM;
	if (rte_hash_add_key_data(m->hosts.hash, a, (void *)(uintptr_t)id) != 0)
		return -ENOSPC;
	if (recycled) {
		m->hosts.n_free_ids--;
		id_recycle(m, id);
	} else {
		m->hosts.n++;
	}
	m->hosts.new_ids[m->hosts.n_new++] = id;
	m->hosts.g_addr[id] = *a;
	/* A host a worker inserted under a newer classifier than the merger's
	 * (the window of a reload that then failed) gets no subnet rather
	 * than an index past m->subnets.n; a reload reclassifies every host. */
	m->hosts.g_subnet[id] = subnet < m->subnets.n ? subnet : DPMON_NO_SUBNET;
	m->hosts.n_unmonitored += m->hosts.g_subnet[id] == DPMON_NO_SUBNET;
	m->hosts.g_plen[id] =
		(uint8_t)(m->hosts.g_subnet[id] == DPMON_NO_SUBNET
				  ? dpmon_family_bits(dpmon_addr_is_v4(a) ? 4 : 6)
				  : dpmon_generation_host_len(m->subnets.gen[c], subnet,
							      dpmon_addr_is_v4(a)));
	m->fold.first[id] = OCC_END;
	return id;
}

void
merge_map_entry(struct dpmon_merge *m, unsigned c, uint32_t i, uint32_t id)
{
	struct core_map *map = &m->workers.map[c];

	map->gid[i] = id;
	map->next[i] = m->fold.first[id];
	map->state[i] = ENTRY_LIVE;
	map->last_ds[i] = m->clock.now_ds;
	map->taken++;
	m->fold.first[id] = OCC(c, i);
}

int
merge_map_new_hosts(struct dpmon_merge *m)
{
	for (unsigned c = 0; c < m->workers.n; c++) {
		const struct dpmon_core *core = m->workers.core[c];
		uint32_t n = dpmon_core_hosts_published(core);

		for (uint32_t i = m->workers.map[c].mapped; i < n; i++) {
			int64_t id =
				merge_global_id(m, &core->meta[i].addr, core->meta[i].subnet, c);
			if (id < 0)
				return (int)id;
			merge_map_entry(m, c, i, (uint32_t)id);
			m->workers.map[c].mapped = i + 1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Order by address.
 * --------------------------------------------------------------------- */

static int
cmp_gid(const void *x, const void *y, void *arg)
{
	const struct dpmon_addr *addr = arg;
	return dpmon_addr_cmp(&addr[*(const uint32_t *)x], &addr[*(const uint32_t *)y]);
}

/* Merge the sorted runs h->sorted[0, h->n_sorted) and @p add[0, @p n_add) into @p tmp. */
static void
merge_runs(const struct merge_hosts *h, const uint32_t *add, uint32_t n_add, uint32_t *tmp)
{
	uint32_t i = 0, j = 0, k = 0;

	while (i < h->n_sorted && j < n_add) {
		if (dpmon_addr_cmp(&h->g_addr[h->sorted[i]], &h->g_addr[add[j]]) < 0)
			tmp[k++] = h->sorted[i++];
		else
			tmp[k++] = add[j++];
	}
	while (i < h->n_sorted)
		tmp[k++] = h->sorted[i++];
	while (j < n_add)
		tmp[k++] = add[j++];
}

int
merge_sort_new_hosts(struct dpmon_merge *m)
{
	struct merge_hosts *h = &m->hosts;
	uint32_t added = h->n_new - h->n_new_sorted;
	uint32_t *add = h->new_ids + h->n_new_sorted;
	uint32_t *tmp;

	if (added == 0)
		return 0;
	qsort_r(add, added, sizeof(uint32_t), cmp_gid, h->g_addr);
	tmp = malloc(sizeof(uint32_t) * (h->n_sorted + added));
	if (tmp == NULL)
		return -ENOMEM;
	merge_runs(h, add, added, tmp);
	memcpy(h->sorted, tmp, sizeof(uint32_t) * (h->n_sorted + added));
	free(tmp);
	h->n_sorted += added;
	h->n_new_sorted = h->n_new;
	m->records.order_stale = true;
	return 0;
}
