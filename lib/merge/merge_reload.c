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
 * snapshots. The history's points are renumbered to the new subnets.
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

int
dpmon_merge_reconfigure(struct dpmon_merge *m, const struct dpmon_classifier *cls,
			struct dpmon_generation *const *gens, uint32_t n_subnets,
			const uint32_t *old_of_new)
{
	uint32_t n_old = m->subnets.n;
	struct dpmon_pair_ctr *fin = calloc(n_old ? n_old : 1, sizeof(*fin));
	struct dpmon_pair_ctr *base = calloc(n_subnets ? n_subnets : 1, sizeof(*base));
	struct dpmon_pair_ctr *prev = calloc(n_subnets ? n_subnets : 1, sizeof(*prev));
	struct dpmon_pair_ctr *cur = calloc(n_subnets ? n_subnets : 1, sizeof(*cur));
	struct avg_pair *avg = calloc(n_subnets ? n_subnets : 1, sizeof(*avg));
	/* The merge keeps its own copy of old_of_new (m->reload.old_of_new). */
	uint32_t *own_map = malloc(sizeof(*own_map) * (n_subnets ? n_subnets : 1));
	int rc = -ENOMEM;

	if (!fin || !base || !prev || !cur || !avg || !own_map)
		goto out;
	/* Hosts the old generation inserted, before their subnets renumber. */
	if (merge_map_new_hosts(m) != 0 || merge_sort_new_hosts(m) != 0)
		goto out;
	if (remap_history(m, old_of_new, n_subnets) != 0)
		goto out;
	/* The old generation's final counts (no worker writes them any more). */
	memcpy(fin, m->subnets.base, sizeof(*fin) * n_old);
	for (unsigned c = 0; c < m->workers.n; c++)
		for (uint32_t i = 0; i < n_old; i++)
			pair_read_add(&fin[i], &m->subnets.gen[c]->subnets[i]);
	for (uint32_t i = 0; i < n_subnets; i++) {
		uint32_t o = old_of_new[i];

		RTE_ASSERT(o == UINT32_MAX || o < n_old);
		own_map[i] = o;
		if (o == UINT32_MAX)
			continue;
		base[i] = fin[o];
		prev[i] = m->subnets.prev[o];
		avg[i] = m->subnets.avg[o];
	}
	for (unsigned c = 0; c < m->workers.n; c++) {
		m->reload.retired[c] = m->subnets.gen[c];
		m->subnets.gen[c] = gens[c];
	}
	free(m->reload.old_of_new);
	m->reload.old_of_new = own_map;
	own_map = NULL;
#define SWAP_IN(field, v) do { free(m->field); m->field = (v); (v) = NULL; } while (0)
	SWAP_IN(subnets.base, base);
	SWAP_IN(subnets.prev, prev);
	SWAP_IN(subnets.cur, cur);
	SWAP_IN(subnets.avg, avg);
#undef SWAP_IN
	m->subnets.n = n_subnets;
	m->hosts.n_unmonitored = 0;
	m->records.order_stale = true;
	m->reload.resubnet = true;
	for (uint32_t id = 0; id < m->hosts.n; id++) {
		m->hosts.g_subnet[id] = classify_host(cls, &m->hosts.g_addr[id]);
		if (m->hosts.g_subnet[id] == DPMON_NO_SUBNET)
			m->hosts.n_unmonitored++;
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
