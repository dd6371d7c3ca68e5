/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_reload.c — a configuration reload's carry-over: the merger moves
 * to a new generation of subnets without losing a count.
 *
 * Reload (dpmon_merge_reconfigure, docs/architecture.md): the subnet
 * counters of a generation that no worker uses any more are read one last
 * time and folded into subnets.base, by exact prefix, so a subnet's
 * cumulative value is subnets.base + the sum over the workers' current
 * generation: it continues across any number of reloads. The previous
 * cumulative values and the averages move with the prefix (rates see
 * neither a spike nor a dip); the old generation's flow sketches are read
 * once more, by the next merge, for the interval they shared with the new
 * ones. Hosts are classified again: those outside every new subnet stay
 * in the merger (their counters, should they come back) but leave the
 * snapshots, and so do those whose subnet now counts hosts per prefix of
 * another length (host_prefix_len: host_prefix_subnet). The history's
 * points are renumbered to the new subnets.
 */
#include "merge_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_debug.h>

#include "classify.h"

/* ------------------------------------------------------------------------
 * Hosts.
 * --------------------------------------------------------------------- */

/* Subnet of address @p a under classifier @p cls (DPMON_NO_SUBNET: none). */
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

/* ------------------------------------------------------------------------
 * History.
 * --------------------------------------------------------------------- */

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
	struct merge_history *h = &m->history;
	struct dpmon_hist_point *fresh[h->n ? h->n : 1];

	for (uint32_t i = 0; i < h->n; i++) {
		fresh[i] = hist_point_remap(h->ring[(h->head + i) % h->cap], old_of_new, n);
		if (fresh[i] == NULL) {
			while (i-- > 0)
				dpmon_hist_point_unref(fresh[i]);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t k = (h->head + i) % h->cap;

		dpmon_hist_point_unref(h->ring[k]); /* snapshots may still hold it */
		h->ring[k] = fresh[i];
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Subnets.
 * --------------------------------------------------------------------- */

/* The new subnets' state, allocated before anything changes. */
struct subnet_carry {
	struct dpmon_pair_ctr *fin; /* old subnets: the old generation's final counts */
	struct dpmon_pair_ctr *base, *prev, *cur; /* new subnets: subnets.base, .prev, .cur */
	struct avg_pair *avg;                     /* new subnets: subnets.avg */
	uint32_t *own_map; /* new subnets: reload.old_of_new (its own copy) */
};

/* Every array of @p k, for @p n_old and @p n_new subnets. 0 or -ENOMEM. */
static int
carry_alloc(struct subnet_carry *k, uint32_t n_old, uint32_t n_new)
{
	k->fin = calloc(n_old ? n_old : 1, sizeof(*k->fin));
	k->base = calloc(n_new ? n_new : 1, sizeof(*k->base));
	k->prev = calloc(n_new ? n_new : 1, sizeof(*k->prev));
	k->cur = calloc(n_new ? n_new : 1, sizeof(*k->cur));
	k->avg = calloc(n_new ? n_new : 1, sizeof(*k->avg));
	k->own_map = malloc(sizeof(*k->own_map) * (n_new ? n_new : 1));
	if (!k->fin || !k->base || !k->prev || !k->cur || !k->avg || !k->own_map)
		return -ENOMEM;
	return 0;
}

/* What of @p k was not handed to the merger. */
static void
carry_free(struct subnet_carry *k)
{
	free(k->fin);
	free(k->base);
	free(k->prev);
	free(k->cur);
	free(k->avg);
	free(k->own_map);
}

/*
 * The old generation's final counts (no worker writes them any more), and
 * the cumulative values and averages of each new subnet @p i from its old
 * index old_of_new[i] (UINT32_MAX: a new subnet, from zero).
 */
static void
carry_subnets(const struct dpmon_merge *m, struct subnet_carry *k, uint32_t n_subnets,
	      const uint32_t *old_of_new)
{
	uint32_t n_old = m->subnets.n;

	memcpy(k->fin, m->subnets.base, sizeof(*k->fin) * n_old);
	for (unsigned c = 0; c < m->workers.n; c++)
		for (uint32_t i = 0; i < n_old; i++)
			pair_read_add(&k->fin[i], &m->subnets.gen[c]->subnets[i]);
	for (uint32_t i = 0; i < n_subnets; i++) {
		uint32_t o = old_of_new[i];

		RTE_ASSERT(o == UINT32_MAX || o < n_old);
		k->own_map[i] = o;
		if (o == UINT32_MAX)
			continue;
		k->base[i] = k->fin[o];
		k->prev[i] = m->subnets.prev[o];
		k->avg[i] = m->subnets.avg[o];
	}
}

/* Read the new generations @p gens from now on, with the state in @p k; retire the old. */
static void
switch_subnets(struct dpmon_merge *m, struct subnet_carry *k, struct dpmon_generation *const *gens,
	       uint32_t n_subnets)
{
	for (unsigned c = 0; c < m->workers.n; c++) {
		m->reload.retired[c] = m->subnets.gen[c];
		m->subnets.gen[c] = gens[c];
	}
	free(m->reload.old_of_new);
	m->reload.old_of_new = k->own_map;
	k->own_map = NULL;
#define SWAP_IN(field, v)       \
	do {                    \
		free(m->field); \
		m->field = (v); \
		(v) = NULL;     \
	} while (0)
	SWAP_IN(subnets.base, k->base);
	SWAP_IN(subnets.prev, k->prev);
	SWAP_IN(subnets.cur, k->cur);
	SWAP_IN(subnets.avg, k->avg);
#undef SWAP_IN
	m->subnets.n = n_subnets;
}

/*
 * The host prefix length of global id @p id in its new subnet @p sub, of
 * host_prefix_len @p len: the host stays listed only when its address
 * stands for a prefix of that length. A host mapped during the reload
 * (@p window: its entries may have been made under either generation) is
 * taken as of the new one when its address is a prefix of that length.
 * A host of a longer length whose address is one (2001:db8:1:2:: when
 * 128 becomes 64) becomes that prefix: the workers' new keys are its
 * entries' keys, and its counts are the prefix's too. Any other host
 * keeps its length and leaves the snapshots (DPMON_NO_SUBNET) until a
 * reload gives its subnet that length again; a shorter prefix's address
 * never becomes a host of a longer length (2001:db8:1:2:: when 64
 * becomes 128: it holds a whole /64's counts).
 */
static uint32_t
host_prefix_subnet(struct dpmon_merge *m, uint32_t id, uint32_t sub, unsigned len, bool window)
{
	const struct dpmon_addr *a = &m->hosts.g_addr[id];
	struct dpmon_addr masked = *a;
	bool v4 = dpmon_addr_is_v4(a);

	dpmon_addr_mask(&masked, dpmon_mapped_bits(v4 ? 4 : 6, len));
	if (dpmon_addr_eq(&masked, a) && (window || m->hosts.g_plen[id] > len))
		m->hosts.g_plen[id] = (uint8_t)len;
	return m->hosts.g_plen[id] == len ? sub : DPMON_NO_SUBNET;
}

/*
 * Every host's subnet under @p cls and the new configuration's
 * host_prefix_len (host_prefix_subnet; those flagged HOST_WINDOW were
 * mapped during the reload); the next merge rewrites and relists every
 * record.
 */
static void
reclassify_hosts(struct dpmon_merge *m, const struct dpmon_classifier *cls)
{
	m->hosts.n_unmonitored = 0;
	m->records.order_stale = true;
	m->reload.resubnet = true;
	for (uint32_t id = 0; id < m->hosts.n; id++) {
		uint32_t sub;

		if (m->hosts.g_subnet[id] == HOST_REMOVED)
			continue;
		sub = classify_host(cls, &m->hosts.g_addr[id]);
		if (sub != DPMON_NO_SUBNET)
			sub = host_prefix_subnet(m, id, sub,
						 dpmon_subnet_host_len(&m->cfg->subnets[sub]),
						 m->hosts.g_flags[id] & HOST_WINDOW);
		m->hosts.g_flags[id] &= (uint8_t)~HOST_WINDOW;
		m->hosts.g_subnet[id] = sub;
		if (sub == DPMON_NO_SUBNET)
			m->hosts.n_unmonitored++;
	}
}

int
dpmon_merge_map_hosts(struct dpmon_merge *m)
{
	int rc = merge_drain_events(m);

	if (rc == 0)
		rc = merge_map_new_hosts(m);
	return rc != 0 ? rc : merge_sort_new_hosts(m);
}

int
dpmon_merge_reconfigure(struct dpmon_merge *m, const struct dpmon_classifier *cls,
			struct dpmon_generation *const *gens, uint32_t n_subnets,
			const uint32_t *old_of_new)
{
	struct subnet_carry k;
	uint32_t from = m->hosts.n_new;
	int rc = -ENOMEM;

	if (carry_alloc(&k, m->subnets.n, n_subnets) != 0)
		goto out;
	/* Hosts the old generation inserted, before their subnets renumber;
	 * those new now may be keyed under either generation (the window). */
	if (merge_drain_events(m) != 0 || merge_map_new_hosts(m) != 0)
		goto out;
	for (uint32_t j = from; j < m->hosts.n_new; j++)
		m->hosts.g_flags[m->hosts.new_ids[j]] |= HOST_WINDOW;
	if (merge_sort_new_hosts(m) != 0)
		goto out;
	if (remap_history(m, old_of_new, n_subnets) != 0)
		goto out;
	carry_subnets(m, &k, n_subnets, old_of_new);
	switch_subnets(m, &k, gens, n_subnets);
	reclassify_hosts(m, cls);
	rc = 0;
out:
	if (rc != 0) /* the window is this reload's only (the sort may have moved it) */
		for (uint32_t j = 0; j < m->hosts.n_new; j++)
			m->hosts.g_flags[m->hosts.new_ids[j]] &= (uint8_t)~HOST_WINDOW;
	carry_free(&k);
	return rc;
}
