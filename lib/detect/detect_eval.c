/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect_eval.c — pass 1 of the detector: each host and each monitored
 * subnet of a snapshot against its thresholds (detect_private.h; rules in
 * docs/detection.md).
 *
 * Hosts in address order, merge-joined with the states (sorted by address
 * too). A host with a state, or above one of the smallest limits (watch),
 * is evaluated: whitelist and hostgroup by longest-prefix match (cached in
 * the state), then for each direction the watched metric exceeding its
 * limit by the largest factor. Evaluated hosts that are above, or under
 * alert, keep (or get) a state in the next state array; the others are
 * dropped. Subnets likewise, their states sorted by prefix. What happens
 * to an alert is the life cycle's (detect_alerts.c).
 */
#include "detect_private.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Hostgroups, whitelist, subnets and the smallest limits.
 * --------------------------------------------------------------------- */

/* Hostgroup index of @p a, GROUP_GLOBAL, or GROUP_WHITELIST. */
int32_t
detect_group_of(const struct dpmon_detect *d, const struct dpmon_addr *a)
{
	if (d->conf->n_whitelist > 0 && dpmon_prefix_table_lookup(&d->whitelist, a) >= 0)
		return GROUP_WHITELIST;
	if (d->conf->n_hostgroups == 0)
		return GROUP_GLOBAL;
	return (int32_t)dpmon_prefix_table_lookup(&d->groups, a);
}

/* The subnet entry of prefix @p p, or SUBNET_GONE; @p hint: its likely index. */
int32_t
detect_subnet_entry_of(const struct dpmon_detect *d, uint32_t hint, const struct dpmon_prefix *p)
{
	uint32_t lo = 0, hi = d->n_subnets;

	if (hint < d->n_subnets && dpmon_prefix_equal(&d->subnets[hint].prefix, p))
		return (int32_t)hint; /* the snapshot's order is the configuration's */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = dpmon_prefix_cmp(&d->subnets[d->subnet_order[mid]].prefix, p);

		if (c == 0)
			return (int32_t)d->subnet_order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SUBNET_GONE;
}

void
detect_watch_limits(struct dpmon_detect *d)
{
	const struct dpmon_detect_conf *c = d->conf;

	for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
		for (int m = 0; m < DPMON_METRIC_MAX; m++) {
			double lo = INFINITY;

			for (int32_t g = GROUP_GLOBAL; g < (int32_t)c->n_hostgroups; g++) {
				const struct dpmon_thresholds *t = thresholds_of(d, g);

				if (t != NULL && t->limit[dir][m] > 0 && t->limit[dir][m] < lo)
					lo = t->limit[dir][m];
			}
			if (lo < INFINITY) {
				d->watch[d->n_watch].dir = (uint8_t)dir;
				d->watch[d->n_watch].metric = (uint8_t)m;
				d->watch[d->n_watch++].limit = lo;
			}
		}
}

/* ------------------------------------------------------------------------
 * Above a limit.
 * --------------------------------------------------------------------- */

/*
 * True when some metric of @p h is above its smallest limit anywhere, as
 * of this run's snapshot: a record older than it has decayed averages and
 * no flows (snapshot.h), its stored values scaled by the decay (at most
 * 1: a stored value within its limit needs no decay, the usual case).
 */
static bool
above_min(const struct dpmon_detect *d, const struct dpmon_snap_host *h)
{
	double k = -1; /* not computed yet */

	for (unsigned i = 0; i < d->n_watch; i++) {
		double v = detect_metric_value(&h->dir[d->watch[i].dir], d->watch[i].metric);

		if (!(v > d->watch[i].limit))
			continue;
		if (dpmon_snap_host_fresh(d->snap, h))
			return true;
		if (k < 0)
			k = dpmon_snap_host_decay(d->snap, h);
		if (d->watch[i].metric != DPMON_METRIC_FLOWS && v * k > d->watch[i].limit)
			return true;
	}
	return false;
}

/* The metric of @p s above its limit in @p lim by the largest factor, or -1. */
static int
fired_metric(const struct dpmon_dir_stats *s, const double *lim)
{
	double best = 0;
	int fired = -1;

	for (int m = 0; m < DPMON_METRIC_MAX; m++) {
		double v;

		if (!(lim[m] > 0))
			continue;
		v = detect_metric_value(s, m);
		/* v > lim decides; the ratio only ranks (it may round to 1). */
		if (v > lim[m] && (fired < 0 || v / lim[m] > best)) {
			best = v / lim[m];
			fired = m;
		}
	}
	return fired;
}

/* ------------------------------------------------------------------------
 * Hosts: states merge-joined with the hosts.
 * --------------------------------------------------------------------- */

/* Room for @p need states in @p *arr (of @p *cap). */
static int
reserve_states(struct host_state **arr, uint32_t *cap_io, uint32_t need)
{
	uint32_t cap = *cap_io ? *cap_io : 64;
	void *p;

	while (cap < need)
		cap *= 2;
	if (cap == *cap_io)
		return 0;
	p = realloc(*arr, sizeof(**arr) * cap);
	if (p == NULL)
		return -ENOMEM;
	*arr = p;
	*cap_io = cap;
	return 0;
}

/* Room for @p need next host states. */
static int
reserve_next(struct dpmon_detect *d, uint32_t need)
{
	return reserve_states(&d->next, &d->cap_next, need);
}

/*
 * The values of direction @p dir that @p t's limits compare with: @p v
 * less @p ign, the packets of ignored sources (ingress only; NULL: none).
 */
static int
fired_less_ignored(const struct dpmon_dir_stats *v, const struct dpmon_dir_stats *ign, int dir,
		   const double *lim)
{
	struct dpmon_dir_stats tmp;

	if (ign != NULL && dir == DPMON_DIR_INGRESS)
		v = detect_minus_ignored(&tmp, v, ign);
	return fired_metric(v, lim);
}

/*
 * Evaluate host @p h (NULL: not in the snapshot) with its previous state
 * @p old (NULL: none; then @p addr names it) into the next states, whose
 * room the caller reserved. @p ign: @p h's ingress from ignored sources
 * (NULL: none), left out of what its limits compare.
 */
static void
evaluate(struct dpmon_detect *d, const struct dpmon_snap_host *h, const struct host_state *old,
	 const struct dpmon_addr *addr, const struct dpmon_dir_stats *ign)
{
	int32_t group = old != NULL ? old->group : detect_group_of(d, addr);
	const struct dpmon_thresholds *t = thresholds_of(d, group);
	int8_t fired[DPMON_DIR_MAX] = {-1, -1};
	struct host_state *st;

	for (int dir = 0; h != NULL && t != NULL && dir < DPMON_DIR_MAX; dir++) {
		struct dpmon_dir_stats tmp;

		fired[dir] = (int8_t)fired_less_ignored(dpmon_snap_host_dir(d->snap, h, dir, &tmp),
							ign, dir, t->limit[dir]);
	}
	if (fired[0] < 0 && fired[1] < 0 && (old == NULL || !has_alert(old)))
		return; /* nothing to remember; @p old's counts end here */
	assert(d->n_next < d->cap_next);
	st = &d->next[d->n_next++];
	if (old != NULL) {
		*st = *old;
	} else {
		memset(st, 0, sizeof(*st));
		st->addr = *addr;
		st->group = group;
		st->sub_entry = SUBNET_NONE;
	}
	st->fired[0] = fired[0];
	st->fired[1] = fired[1];
	st->host = h;
	st->ignored = h != NULL ? ign : NULL;
}

/*
 * One pass over the hosts, merge-joined with the states (both sorted by
 * address). Room for every old state is reserved first, so an old state
 * (and its alerts) is never lost; a new host above a limit that finds no
 * memory is left untracked for this interval (counted).
 * @return 0, or -ENOMEM before anything changed.
 */
/* The ingress from ignored sources of @p h, whose entry, if any, is at or
 * after @p *q in @p s's ignored hosts (both sorted by address); NULL: none. */
static const struct dpmon_dir_stats *
ignored_of(const struct dpmon_snapshot *s, uint32_t *q, const struct dpmon_snap_host *h)
{
	int c = 1;

	while (*q < s->n_ignored && (c = dpmon_addr_cmp(&s->ignored[*q].addr, &h->addr)) < 0)
		(*q)++;
	return *q < s->n_ignored && c == 0 ? &s->ignored[*q].in : NULL;
}

int
detect_pass_hosts(struct dpmon_detect *d, const struct dpmon_snapshot *s)
{
	uint32_t j = 0, q = 0;

	d->n_next = 0;
	if (reserve_next(d, d->n_states + 1) != 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_hosts; i++) {
		const struct dpmon_snap_host *h = dpmon_snap_host_at(s, i);
		int c = 1;

		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_INGRESS);
		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_EGRESS);

		while (j < d->n_states && (c = dpmon_addr_cmp(&d->states[j].addr, &h->addr)) < 0) {
			evaluate(d, NULL, &d->states[j], NULL,
				 NULL); /* gone (hand-built snapshots) */
			j++;
		}
		if (j < d->n_states && c == 0) {
			evaluate(d, h, &d->states[j], NULL, ignored_of(s, &q, h));
			j++;
		} else if (above_min(d, h)) {
			if (d->n_next + (d->n_states - j) + 1 > d->cap_next &&
			    reserve_next(d, d->cap_next * 2) != 0) {
				d->untracked++;
				continue;
			}
			evaluate(d, h, NULL, &h->addr, ignored_of(s, &q, h));
		}
	}
	for (; j < d->n_states; j++)
		evaluate(d, NULL, &d->states[j], NULL, NULL);
	return 0;
}

/* ------------------------------------------------------------------------
 * Subnets: every subnet of the snapshot with limits, or a state.
 * --------------------------------------------------------------------- */

static int
state_prefix_cmp(const void *x, const void *y)
{
	return dpmon_prefix_cmp(&((const struct host_state *)x)->prefix,
				&((const struct host_state *)y)->prefix);
}

/* The current state of subnet @p p, or NULL (binary search: sorted by prefix). */
static struct host_state *
subnet_state_of(struct dpmon_detect *d, const struct dpmon_prefix *p)
{
	struct host_state key = {.prefix = *p};

	return d->n_sstates == 0
		       ? NULL
		       : bsearch(&key, d->sstates, d->n_sstates, sizeof(key), state_prefix_cmp);
}

/*
 * Evaluate subnet @p sub (NULL: not in the snapshot) under entry @p entry
 * with its previous state @p old (NULL: none) into the next subnet states,
 * whose room the caller reserved.
 */
static void
evaluate_subnet(struct dpmon_detect *d, const struct dpmon_snap_subnet *sub, int32_t entry,
		const struct host_state *old)
{
	const struct dpmon_snapshot *s = d->snap;
	const struct dpmon_dir_stats *ign = sub != NULL && s->ignored_subnets != NULL
						    ? &s->ignored_subnets[sub - s->subnets]
						    : NULL;
	const struct dpmon_thresholds *t =
		entry >= 0 && d->subnets[entry].watched ? &d->subnets[entry].thresholds : NULL;
	int8_t fired[DPMON_DIR_MAX] = {-1, -1};
	struct host_state *st;

	for (int dir = 0; sub != NULL && t != NULL && dir < DPMON_DIR_MAX; dir++)
		fired[dir] = (int8_t)fired_less_ignored(&sub->dir[dir], ign, dir, t->limit[dir]);
	if (fired[0] < 0 && fired[1] < 0 && (old == NULL || !has_alert(old)))
		return;
	assert(d->n_snext < d->cap_snext);
	st = &d->snext[d->n_snext++];
	if (old != NULL) {
		*st = *old;
	} else {
		memset(st, 0, sizeof(*st));
		st->prefix = sub->prefix;
		st->addr = sub->prefix.addr;
		st->group = GROUP_GLOBAL;
	}
	st->sub_entry = entry;
	st->fired[0] = fired[0];
	st->fired[1] = fired[1];
	st->sub = sub;
	st->ignored = ign;
}

/*
 * The subnets of @p s against their thresholds. Room for every old state
 * is kept reserved, as for hosts; a new subnet above a limit that finds no
 * memory is left untracked for this interval. Costs nothing while no
 * subnet has limits or a state.
 * @return 0, or -ENOMEM before anything changed.
 */
int
detect_pass_subnets(struct dpmon_detect *d, const struct dpmon_snapshot *s)
{
	d->n_snext = 0;
	if (reserve_states(&d->snext, &d->cap_snext, d->n_sstates + 1) != 0)
		return -ENOMEM;
	if (d->n_subnets_watched == 0 && d->n_sstates == 0)
		return 0;
	for (uint32_t i = 0; i < d->n_sstates; i++)
		d->sstates[i].seen = false;
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		const struct dpmon_snap_subnet *sub = &s->subnets[i];
		int32_t e = detect_subnet_entry_of(d, i, &sub->prefix);
		struct host_state *old = subnet_state_of(d, &sub->prefix);

		if (old != NULL) {
			old->seen = true;
		} else if (e < 0 || !d->subnets[e].watched) {
			continue;
		} else if (reserve_states(&d->snext, &d->cap_snext,
					  d->n_snext + d->n_sstates + 1) != 0) {
			d->untracked++;
			continue;
		}
		evaluate_subnet(d, sub, e, old);
	}
	for (uint32_t i = 0; i < d->n_sstates; i++)
		if (!d->sstates[i].seen) /* gone from the snapshot */
			evaluate_subnet(d, NULL, d->sstates[i].sub_entry, &d->sstates[i]);
	qsort(d->snext, d->n_snext, sizeof(*d->snext), state_prefix_cmp);
	return 0;
}
