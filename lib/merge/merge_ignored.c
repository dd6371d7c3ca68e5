/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_ignored.c — the packets from ignored sources (detection.ignore_sources),
 * folded from the workers' side tables (ignored.h) into each snapshot's
 * ignored hosts and subnets (snapshot.h), for detection to subtract.
 *
 * Each slot of a table is monotonic; the merger keeps what it read last
 * per slot and core (seen), so a read adds the difference to the slot's
 * host (kept sorted by address, found by binary search) and subnet. A
 * reload gives every worker a new generation, hence a new table: the
 * retired one is read a last time, then the new one from zero; the
 * subnets' averages follow their prefixes (reload.old_of_new).
 *
 * The averages are those of the hosts' and subnets' own (rates.h: the
 * same measured interval and weight), so subtracting them from a host's
 * ingress averages leaves exactly the averages of its other packets. A
 * host whose ignored averages fell below DROP_PPS with no new packet is
 * forgotten. Main lcore only, like the rest of the merge.
 */
#include "merge_private.h"

#include <errno.h>
#include <stdlib.h>

#include "worker.h"

/* Averages (packets/s) below which a host without new ignored packets is dropped. */
#define DROP_PPS 1e-3

/* ------------------------------------------------------------------------
 * Counters.
 * --------------------------------------------------------------------- */

static void
ctr_add(struct ign_ctr *dst, const struct ign_ctr *a, const struct ign_ctr *b, int sign)
{
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		dst->in.proto[p].packets +=
			(uint64_t)sign * (a->in.proto[p].packets - b->in.proto[p].packets);
		dst->in.proto[p].bytes +=
			(uint64_t)sign * (a->in.proto[p].bytes - b->in.proto[p].bytes);
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++) {
		dst->flags.flag[f].packets +=
			(uint64_t)sign * (a->flags.flag[f].packets - b->flags.flag[f].packets);
		dst->flags.flag[f].bytes +=
			(uint64_t)sign * (a->flags.flag[f].bytes - b->flags.flag[f].bytes);
	}
}

/* Slot @p e's counters, as the worker stores them. */
static void
slot_read(struct ign_ctr *out, const struct dpmon_ignored_slot *e)
{
	memset(out, 0, sizeof(*out));
	dir_read_add(&out->in, &e->in);
	flag_read_add(&out->flags, &e->flags);
}

/* ------------------------------------------------------------------------
 * Hosts.
 * --------------------------------------------------------------------- */

static int
host_cmp(const void *x, const void *y)
{
	return dpmon_addr_cmp(&((const struct ign_host *)x)->addr,
			      &((const struct ign_host *)y)->addr);
}

/* The host of @p a among @p n_sorted sorted hosts and those added after; NULL: none. */
static struct ign_host *
host_find(struct merge_ignored *g, uint32_t n_sorted, const struct dpmon_addr *a)
{
	struct ign_host key = {.addr = *a}, *h;

	h = n_sorted == 0 ? NULL : bsearch(&key, g->hosts, n_sorted, sizeof(key), host_cmp);
	for (uint32_t i = n_sorted; h == NULL && i < g->n_hosts; i++)
		if (dpmon_addr_eq(&g->hosts[i].addr, a))
			h = &g->hosts[i];
	return h;
}

/* The host of @p a, added (zeroed) when new. NULL: out of memory. */
static struct ign_host *
host_get(struct merge_ignored *g, uint32_t n_sorted, const struct dpmon_addr *a)
{
	struct ign_host *h = host_find(g, n_sorted, a);

	if (h != NULL)
		return h;
	if (g->n_hosts == g->cap_hosts) {
		uint32_t cap = g->cap_hosts ? 2 * g->cap_hosts : 64;
		void *p = realloc(g->hosts, sizeof(*g->hosts) * cap);

		if (p == NULL)
			return NULL;
		g->hosts = p;
		g->cap_hosts = cap;
	}
	h = &g->hosts[g->n_hosts++];
	memset(h, 0, sizeof(*h));
	h->addr = *a;
	return h;
}

/* ------------------------------------------------------------------------
 * Tables.
 * --------------------------------------------------------------------- */

/*
 * The differences since the last read of core @p c's table @p t (of a
 * generation numbering subnets as the merger does when @p current) into
 * the hosts and, when @p current, the subnets. @return 0 or -ENOMEM.
 */
static int
read_table(struct dpmon_merge *m, unsigned c, const struct dpmon_ignored_table *t, bool current,
	   uint32_t n_sorted)
{
	struct merge_ignored *g = &m->ignored;
	uint32_t n = dpmon_ignored_used(t);

	if (g->tab[c] != t) {
		if (g->seen[c] == NULL)
			g->seen[c] = malloc(sizeof(*g->seen[c]) * DPMON_IGNORED_SLOTS);
		if (g->seen[c] == NULL)
			return -ENOMEM;
		memset(g->seen[c], 0, sizeof(*g->seen[c]) * DPMON_IGNORED_SLOTS);
		g->tab[c] = t;
	}
	for (uint32_t j = 0; j < n; j++) {
		uint32_t s = t->used[j];
		const struct dpmon_ignored_slot *e = &t->slot[s];
		struct ign_ctr now;
		struct ign_host *h;

		slot_read(&now, e);
		if (memcmp(&now, &g->seen[c][s], sizeof(now)) == 0)
			continue;
		h = host_get(g, n_sorted, &e->key);
		if (h == NULL)
			return -ENOMEM;
		if (current) {
			h->subnet = e->subnet;
			if (e->subnet < g->n_sub)
				ctr_add(&g->sub_cum[e->subnet], &now, &g->seen[c][s], 1);
		}
		ctr_add(&h->cum, &now, &g->seen[c][s], 1);
		g->seen[c][s] = now;
	}
	return 0;
}

/* After a reload: the subnets' state follows their prefixes, the hosts' subnets too. */
static int
renumber_subnets(struct dpmon_merge *m)
{
	struct merge_ignored *g = &m->ignored;
	uint32_t n = m->subnets.n, n_old = g->n_sub;
	const uint32_t *old_of_new = m->reload.old_of_new;
	struct ign_ctr *cum = calloc(n ? n : 1, sizeof(*cum)),
		       *prev = calloc(n ? n : 1, sizeof(*prev));
	struct avg_dir *avg = calloc(n ? n : 1, sizeof(*avg));
	uint32_t *new_of_old = malloc(sizeof(*new_of_old) * (n_old ? n_old : 1));

	if (cum == NULL || prev == NULL || avg == NULL || new_of_old == NULL) {
		free(cum);
		free(prev);
		free(avg);
		free(new_of_old);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n_old; i++)
		new_of_old[i] = DPMON_NO_SUBNET;
	for (uint32_t i = 0; i < n && old_of_new != NULL; i++) {
		uint32_t o = old_of_new[i];

		if (o >= n_old)
			continue;
		new_of_old[o] = i;
		cum[i] = g->sub_cum[o];
		prev[i] = g->sub_prev[o];
		avg[i] = g->sub_avg[o];
	}
	for (uint32_t i = 0; i < g->n_hosts; i++)
		g->hosts[i].subnet = g->hosts[i].subnet < n_old ? new_of_old[g->hosts[i].subnet]
								: DPMON_NO_SUBNET;
	free(new_of_old);
	free(g->sub_cum);
	free(g->sub_prev);
	free(g->sub_avg);
	g->sub_cum = cum;
	g->sub_prev = prev;
	g->sub_avg = avg;
	g->n_sub = n;
	return 0;
}

/* ------------------------------------------------------------------------
 * The snapshot's ignored hosts and subnets.
 * --------------------------------------------------------------------- */

/* Rates over @p dt of @p cur since @p prev, and the averages @p a, into @p out. */
static void
ign_stats(struct dpmon_merge *m, struct dpmon_dir_stats *out, const struct ign_ctr *cur,
	  const struct ign_ctr *prev, struct avg_dir *a, double dt)
{
	memset(out, 0, sizeof(*out));
	merge_dir_stats(out, &cur->in, &cur->flags, &prev->in, &prev->flags, dt);
	merge_avg_update(m, out, a, 1.0);
	out->flows = -1;
	out->peers = -1;
}

static int
fill_hosts(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	struct merge_ignored *g = &m->ignored;
	uint32_t k = 0;

	if (g->n_hosts > 1) /* qsort's base must not be NULL, even for 0 items */
		qsort(g->hosts, g->n_hosts, sizeof(*g->hosts), host_cmp);
	s->ignored = g->n_hosts ? malloc(sizeof(*s->ignored) * g->n_hosts) : NULL;
	if (g->n_hosts != 0 && s->ignored == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->n_hosts; i++) {
		struct ign_host *h = &g->hosts[i];
		bool fresh = memcmp(&h->cum, &h->prev, sizeof(h->cum)) != 0;
		struct dpmon_snap_ignored *o = &s->ignored[k];

		ign_stats(m, &o->in, &h->cum, &h->prev, &h->avg, dt);
		h->prev = h->cum;
		if (!fresh && h->avg.pps < DROP_PPS)
			continue; /* forgotten */
		o->addr = h->addr;
		o->subnet = h->subnet;
		g->hosts[k++] = *h;
	}
	g->n_hosts = k;
	s->n_ignored = k;
	if (k == 0) {
		free(s->ignored);
		s->ignored = NULL;
	}
	return 0;
}

int
merge_fill_ignored(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt)
{
	struct merge_ignored *g = &m->ignored;
	unsigned n_cores = m->workers.n ? m->workers.n : 1;
	bool any = false;
	uint32_t n_sorted = g->n_hosts;

	if (g->tab == NULL) {
		g->tab = calloc(n_cores, sizeof(*g->tab));
		g->seen = calloc(n_cores, sizeof(*g->seen));
		if (g->tab == NULL || g->seen == NULL)
			return -ENOMEM;
	}
	if (g->n_sub != m->subnets.n ||
	    (m->reload.retired[0] != NULL && g->renumbered != m->reload.old_of_new)) {
		if (renumber_subnets(m) != 0)
			return -ENOMEM;
		g->renumbered = m->reload.old_of_new;
	}
	for (unsigned c = 0; c < m->workers.n; c++) {
		const struct dpmon_generation *r = m->reload.retired[c];
		const struct dpmon_ignored_table *t = m->subnets.gen[c]->ign;

		if (r != NULL && r->ign != NULL && g->tab[c] == r->ign &&
		    read_table(m, c, r->ign, false, n_sorted) != 0)
			return -ENOMEM;
		if (t != NULL && read_table(m, c, t, true, n_sorted) != 0)
			return -ENOMEM;
		any = any || t != NULL;
		s->ignored_full += dpmon_count_read(&m->workers.core[c]->stats.ignored_full);
	}
	if (fill_hosts(m, s, dt) != 0)
		return -ENOMEM;
	if (!any && g->n_hosts == 0) {
		/* No list any more: a later one starts the subnets from zero. */
		if (g->n_sub != 0)
			memset(g->sub_avg, 0, sizeof(*g->sub_avg) * g->n_sub);
		return 0;
	}
	s->ignored_subnets = calloc(s->n_subnets ? s->n_subnets : 1, sizeof(*s->ignored_subnets));
	if (s->ignored_subnets == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->n_sub && i < s->n_subnets; i++) {
		ign_stats(m, &s->ignored_subnets[i], &g->sub_cum[i], &g->sub_prev[i],
			  &g->sub_avg[i], dt);
		g->sub_prev[i] = g->sub_cum[i];
	}
	return 0;
}

void
merge_ignored_free(struct dpmon_merge *m)
{
	struct merge_ignored *g = &m->ignored;

	for (unsigned c = 0; g->seen != NULL && c < m->workers.n; c++)
		free(g->seen[c]);
	free(g->seen);
	free(g->tab);
	free(g->hosts);
	free(g->sub_cum);
	free(g->sub_prev);
	free(g->sub_avg);
	memset(g, 0, sizeof(*g));
}
