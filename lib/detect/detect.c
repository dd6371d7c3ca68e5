/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect.c — thresholds, hostgroups, whitelist and the alert life cycle
 * (see detect.h; rules in docs/detection.md).
 *
 * Per interval, for one snapshot:
 *
 *   1. pass    hosts in address order, merge-joined with the states (sorted
 *              by address too). A host with a state, or above one of the
 *              smallest limits (watch), is evaluated: whitelist and
 *              hostgroup by longest-prefix match (cached in the state), then
 *              for each direction the watched metric exceeding its limit by
 *              the largest factor. Evaluated hosts that are above, or under
 *              alert, keep (or get) a state in the next state array; the
 *              others are dropped.
 *   2. cycle   per state and direction: intervals above counted (reset by
 *              one below); start at conf->start_intervals; while active,
 *              peaks follow every metric; end once hold_s seconds passed
 *              since the last interval above.
 *              (Detection off after a reload: every active alert ends at
 *              once, end_all.)
 *   3. publish the sampler's watch list, and the snapshot's alert list:
 *              active alerts and the recent ended ones (a ring of
 *              conf->recent_alerts), newest first, one reference each.
 *
 * A state keeps one reference to the current version of its alert in each
 * direction; the ring one to each ended alert; each snapshot one to every
 * alert it lists. A version is never changed once listed: a change (peaks,
 * sample, end) makes a new version (dpmon_alert_copy).
 */
#include "detect.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefix_table.h"

/* Share of the interval's packets above which a class names the attack. */
#define ATTACK_SHARE    0.9
/* Hostgroup index of hosts under the global thresholds. */
#define GROUP_GLOBAL    (-1)
/* Hostgroup index of whitelisted hosts (never alert). */
#define GROUP_WHITELIST (-2)
/* sub_entry of a host's state. */
#define SUBNET_NONE     (-1)
/* sub_entry of a subnet no longer configured (it never alerts). */
#define SUBNET_GONE     (-2)

/* A monitored subnet's detection settings: a copy of its configuration's. */
struct subnet_entry {
	struct dpmon_prefix prefix;
	char name[DPMON_NAME_LEN];
	struct dpmon_thresholds thresholds;
	bool watched; /* detection on and some limit set */
};

/*
 * A host or subnet being watched: above a limit now, or under alert.
 * Host states have @c sub_entry SUBNET_NONE; a subnet's state has the
 * subnet's prefix in @c prefix (and its network address in @c addr).
 */
struct host_state {
	struct dpmon_addr addr;
	int32_t group;     /* hostgroup index, GROUP_GLOBAL, GROUP_WHITELIST; subnets: unused */
	int32_t sub_entry; /* a subnet's index in dpmon_detect.subnets, or SUBNET_* */
	struct dpmon_prefix prefix;          /* the subnet */
	const struct dpmon_snap_subnet *sub; /* a subnet in this run's snapshot, or NULL */
	uint32_t above[DPMON_DIR_MAX];       /* consecutive intervals above */
	int8_t fired[DPMON_DIR_MAX];         /* metric above now by the largest factor, -1 none */
	double last_above_s[DPMON_DIR_MAX];  /* uptime of the last interval above */
	struct dpmon_alert *alert[DPMON_DIR_MAX]; /* current version, or NULL */
	const struct dpmon_snap_host *host;       /* in this run's snapshot, or NULL */
	bool seen; /* a subnet's old state: its subnet is in this run's snapshot */
};

struct dpmon_detect {
	/*
	 * The settings in use: a copy of the configuration's (hostgroups
	 * without their prefix lists, which the tables below hold), so a
	 * reload swaps them with the tables in one step (dpmon_detect_reconfigure).
	 */
	struct dpmon_detect_conf own;
	const struct dpmon_detect_conf *conf; /* = &own */
	struct dpmon_sampler *sampler;
	struct dpmon_actions *actions;
	struct dpmon_prefix_table groups, whitelist;
	/* Smallest watched limit per direction and metric; INFINITY = none. */
	/* The (direction, metric) pairs some threshold watches, with the
	 * smallest limit over the global thresholds and enabled hostgroups. */
	struct {
		uint8_t dir, metric;
		double limit;
	} watch[DPMON_DIR_MAX * DPMON_METRIC_MAX];
	unsigned n_watch;
	struct host_state *states, *next; /* sorted by address */
	uint32_t n_states, cap_states, n_next, cap_next;
	struct dpmon_alert **recent; /* ring of ended alerts, oldest at head */
	uint32_t n_recent, recent_head;
	uint64_t last_id, started;
	uint32_t active;
	uint64_t watched[DPMON_SAMPLE_WATCH_MAX];
	unsigned n_watched;
	uint64_t untracked; /* hosts above a limit left out for lack of memory */
	/* Subnets: their settings in configuration order, their indices sorted
	 * by prefix (lookup of a snapshot's subnet), and their states sorted by
	 * prefix, swapped with the next ones like the hosts'. */
	struct subnet_entry *subnets;
	uint32_t *subnet_order;
	uint32_t n_subnets, n_subnets_watched;
	struct host_state *sstates, *snext;
	uint32_t n_sstates, cap_sstates, n_snext, cap_snext;
	uint64_t subnet_started;
	uint32_t subnet_active;
	const struct dpmon_snapshot *snap; /* during a run: its snapshot (host values as of it) */
};

/* ------------------------------------------------------------------------
 * Hostgroup and whitelist tables.
 * --------------------------------------------------------------------- */

/* Hostgroup index of @p a, GROUP_GLOBAL, or GROUP_WHITELIST. */
static int32_t
group_of(const struct dpmon_detect *d, const struct dpmon_addr *a)
{
	if (d->conf->n_whitelist > 0 && dpmon_prefix_table_lookup(&d->whitelist, a) >= 0)
		return GROUP_WHITELIST;
	if (d->conf->n_hostgroups == 0)
		return GROUP_GLOBAL;
	return (int32_t)dpmon_prefix_table_lookup(&d->groups, a);
}

/* Thresholds of hosts in @p group; NULL when they never alert. */
static const struct dpmon_thresholds *
thresholds_of(const struct dpmon_detect *d, int32_t group)
{
	if (group == GROUP_WHITELIST)
		return NULL;
	if (group == GROUP_GLOBAL)
		return &d->conf->thresholds;
	if (!d->conf->hostgroups[group].enabled)
		return NULL;
	return &d->conf->hostgroups[group].thresholds;
}

static void
compute_min_limits(struct dpmon_detect *d)
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

/* Copy @p src into @p dst, hostgroups without their prefix lists. */
static int
copy_conf(struct dpmon_detect_conf *dst, const struct dpmon_detect_conf *src)
{
	*dst = *src;
	dst->whitelist = NULL;
	dst->hostgroups = NULL;
	if (src->n_hostgroups == 0)
		return 0;
	dst->hostgroups = malloc(sizeof(*dst->hostgroups) * src->n_hostgroups);
	if (dst->hostgroups == NULL)
		return -ENOMEM;
	memcpy(dst->hostgroups, src->hostgroups, sizeof(*dst->hostgroups) * src->n_hostgroups);
	for (uint32_t g = 0; g < src->n_hostgroups; g++)
		dst->hostgroups[g].prefixes = NULL;
	return 0;
}

/* @p d's subnet entries, ordered by prefix (qsort_r's context). */
static int
subnet_order_cmp(const void *x, const void *y, void *ctx)
{
	const struct subnet_entry *e = ctx;

	return dpmon_prefix_cmp(&e[*(const uint32_t *)x].prefix, &e[*(const uint32_t *)y].prefix);
}

/*
 * The subnet settings of @p conf into malloc'd @p *entries (configuration
 * order) and @p *order (their indices sorted by prefix).
 * @return how many are watched, or -ENOMEM (nothing allocated).
 */
static int
build_subnets(const struct dpmon_detect_conf *conf, struct subnet_entry **entries, uint32_t **order)
{
	uint32_t n = conf->n_subnets, watched = 0;

	*entries = malloc(sizeof(**entries) * (n ? n : 1));
	*order = malloc(sizeof(**order) * (n ? n : 1));
	if (*entries == NULL || *order == NULL) {
		free(*entries);
		free(*order);
		*entries = NULL;
		*order = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmon_subnet_conf *sc = &conf->subnets[i];
		struct subnet_entry *e = &(*entries)[i];
		bool any = false;

		e->prefix = sc->prefix;
		memcpy(e->name, sc->name, sizeof(e->name));
		e->thresholds = sc->thresholds;
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			for (int m = 0; m < DPMON_METRIC_MAX; m++)
				any = any || sc->thresholds.limit[dir][m] > 0;
		e->watched = sc->detection && any;
		watched += e->watched;
		(*order)[i] = i;
	}
	qsort_r(*order, n, sizeof(**order), subnet_order_cmp, *entries);
	return (int)watched;
}

/* The subnet entry of prefix @p p, or SUBNET_GONE; @p hint: its likely index. */
static int32_t
subnet_entry_of(const struct dpmon_detect *d, uint32_t hint, const struct dpmon_prefix *p)
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

/* Build the hostgroup and whitelist tables of @p conf. @return 0 or -ENOMEM. */
static int
build_tables(const struct dpmon_detect_conf *conf, struct dpmon_prefix_table *groups,
	     struct dpmon_prefix_table *whitelist)
{
	const struct dpmon_prefix **lists = calloc(conf->n_hostgroups + 1, sizeof(*lists));
	uint32_t *counts = calloc(conf->n_hostgroups + 1, sizeof(*counts));
	int rc = -ENOMEM;

	if (lists == NULL || counts == NULL)
		goto out;
	for (uint32_t g = 0; g < conf->n_hostgroups; g++) {
		lists[g] = conf->hostgroups[g].prefixes;
		counts[g] = conf->hostgroups[g].n_prefixes;
	}
	if ((rc = dpmon_prefix_table_build(groups, lists, counts, conf->n_hostgroups, true)) != 0)
		goto out;
	lists[0] = conf->whitelist;
	counts[0] = conf->n_whitelist;
	rc = dpmon_prefix_table_build(whitelist, lists, counts, 1, false);
out:
	free(lists);
	free(counts);
	return rc;
}

struct dpmon_detect *
dpmon_detect_create(const struct dpmon_detect_conf *conf, struct dpmon_sampler *sampler,
		    struct dpmon_actions *actions)
{
	struct dpmon_detect *d = calloc(1, sizeof(*d));
	int rc = -ENOMEM;

	if (d == NULL)
		goto fail;
	d->conf = &d->own;
	d->sampler = sampler;
	d->actions = actions;
	if ((rc = copy_conf(&d->own, conf)) != 0)
		goto fail;
	rc = -ENOMEM;
	d->recent = calloc(conf->recent_alerts ? conf->recent_alerts : 1, sizeof(*d->recent));
	if (d->recent == NULL)
		goto fail;
	if ((rc = build_tables(conf, &d->groups, &d->whitelist)) != 0)
		goto fail;
	if ((rc = build_subnets(conf, &d->subnets, &d->subnet_order)) < 0)
		goto fail;
	d->n_subnets = conf->n_subnets;
	d->n_subnets_watched = (uint32_t)rc;
	compute_min_limits(d);
	return d;
fail:
	dpmon_detect_free(d);
	errno = -rc;
	return NULL;
}

int
dpmon_detect_reconfigure(struct dpmon_detect *d, const struct dpmon_detect_conf *conf)
{
	struct dpmon_detect_conf own;
	struct dpmon_prefix_table groups = {0}, whitelist = {0};
	struct dpmon_alert **recent = NULL;
	struct subnet_entry *subnets = NULL;
	uint32_t cap = conf->recent_alerts, keep, *order = NULL;
	int rc, watched = -ENOMEM;

	if ((rc = copy_conf(&own, conf)) != 0)
		return rc;
	recent = calloc(cap ? cap : 1, sizeof(*recent));
	if (recent == NULL || build_tables(conf, &groups, &whitelist) != 0 ||
	    (watched = build_subnets(conf, &subnets, &order)) < 0) {
		free(own.hostgroups);
		free(recent);
		free(subnets);
		free(order);
		dpmon_prefix_table_free(&groups);
		dpmon_prefix_table_free(&whitelist);
		return -ENOMEM;
	}
	/* The newest ended alerts that fit the new bound stay, oldest first. */
	keep = d->n_recent < cap ? d->n_recent : cap;
	for (uint32_t i = 0; i < d->n_recent; i++) {
		struct dpmon_alert *a = d->recent[(d->recent_head + i) % d->conf->recent_alerts];

		if (i < d->n_recent - keep)
			dpmon_alert_unref(a);
		else
			recent[i - (d->n_recent - keep)] = a;
	}
	free(d->recent);
	d->recent = recent;
	d->recent_head = 0;
	d->n_recent = keep;
	dpmon_prefix_table_free(&d->groups);
	dpmon_prefix_table_free(&d->whitelist);
	d->groups = groups;
	d->whitelist = whitelist;
	free(d->own.hostgroups);
	d->own = own;
	free(d->subnets);
	free(d->subnet_order);
	d->subnets = subnets;
	d->subnet_order = order;
	d->n_subnets = conf->n_subnets;
	d->n_subnets_watched = (uint32_t)watched;
	d->n_watch = 0;
	compute_min_limits(d);
	/* Tracked hosts follow the new hostgroups; their alerts go on and end
	 * under the new thresholds (a host now whitelisted: after the hold time).
	 * Tracked subnets likewise (one removed or with detection off: after the
	 * hold time). */
	for (uint32_t i = 0; i < d->n_states; i++)
		d->states[i].group = group_of(d, &d->states[i].addr);
	for (uint32_t i = 0; i < d->n_sstates; i++)
		d->sstates[i].sub_entry = subnet_entry_of(d, UINT32_MAX, &d->sstates[i].prefix);
	return 0;
}

void
dpmon_detect_free(struct dpmon_detect *d)
{
	if (d == NULL)
		return;
	for (uint32_t i = 0; i < d->n_states; i++)
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			dpmon_alert_unref(d->states[i].alert[dir]);
	for (uint32_t i = 0; i < d->n_sstates; i++)
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			dpmon_alert_unref(d->sstates[i].alert[dir]);
	for (uint32_t i = 0; d->recent != NULL && i < d->n_recent; i++)
		dpmon_alert_unref(d->recent[(d->recent_head + i) % d->conf->recent_alerts]);
	dpmon_prefix_table_free(&d->groups);
	dpmon_prefix_table_free(&d->whitelist);
	free(d->own.hostgroups);
	free(d->recent);
	free(d->states);
	free(d->next);
	free(d->subnets);
	free(d->subnet_order);
	free(d->sstates);
	free(d->snext);
	free(d);
}

uint32_t
dpmon_detect_tracked(const struct dpmon_detect *d)
{
	return d->n_states;
}

/* ------------------------------------------------------------------------
 * Metrics and attack types.
 * --------------------------------------------------------------------- */

/* The value metric @p m compares with its limit: the averaged rates; flows per interval. */
static double
metric_value(const struct dpmon_dir_stats *s, int m)
{
	switch (m) {
	case DPMON_METRIC_PPS:
		return s->avg_pps;
	case DPMON_METRIC_BPS:
		return s->avg_bps;
	case DPMON_METRIC_FLOWS:
		return s->flows; /* -1: not measured, never above */
	case DPMON_METRIC_TCP_PPS:
		return s->avg_proto_pps[DPMON_PROTO_TCP];
	case DPMON_METRIC_TCP_BPS:
		return s->avg_proto_bps[DPMON_PROTO_TCP];
	case DPMON_METRIC_UDP_PPS:
		return s->avg_proto_pps[DPMON_PROTO_UDP];
	case DPMON_METRIC_UDP_BPS:
		return s->avg_proto_bps[DPMON_PROTO_UDP];
	case DPMON_METRIC_ICMP_PPS:
		return s->avg_proto_pps[DPMON_PROTO_ICMP];
	case DPMON_METRIC_ICMP_BPS:
		return s->avg_proto_bps[DPMON_PROTO_ICMP];
	case DPMON_METRIC_TCP_SYN_PPS:
		return s->avg_flag_pps[DPMON_FLAG_SYN];
	case DPMON_METRIC_FRAGMENTS_PPS:
		return s->avg_flag_pps[DPMON_FLAG_FRAG];
	default:
		return 0;
	}
}

/*
 * The attack type of one direction's interval: the first class holding
 * more than 90 % of its packets, in the order tcp_syn, fragments, UDP,
 * ICMP, TCP (SYNs are TCP and fragments are often UDP: the narrower class
 * names the attack); unknown otherwise, or without packets.
 */
static enum dpmon_attack
attack_type(const struct dpmon_dir_stats *s)
{
	double p = s->total.pps;

	if (!(p > 0))
		return DPMON_ATTACK_UNKNOWN;
	if (s->flag[DPMON_FLAG_SYN].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_SYN_FLOOD;
	if (s->flag[DPMON_FLAG_FRAG].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_FRAGMENT_FLOOD;
	if (s->proto[DPMON_PROTO_UDP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_UDP_FLOOD;
	if (s->proto[DPMON_PROTO_ICMP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_ICMP_FLOOD;
	if (s->proto[DPMON_PROTO_TCP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_TCP_FLOOD;
	return DPMON_ATTACK_UNKNOWN;
}

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
		double v = metric_value(&h->dir[d->watch[i].dir], d->watch[i].metric);

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
		v = metric_value(s, m);
		/* v > lim decides; the ratio only ranks (it may round to 1). */
		if (v > lim[m] && (fired < 0 || v / lim[m] > best)) {
			best = v / lim[m];
			fired = m;
		}
	}
	return fired;
}

/* ------------------------------------------------------------------------
 * Pass 1: evaluation, states merge-joined with the hosts.
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

static bool
has_alert(const struct host_state *st)
{
	return st->alert[DPMON_DIR_INGRESS] != NULL || st->alert[DPMON_DIR_EGRESS] != NULL;
}

/*
 * Evaluate host @p h (NULL: not in the snapshot) with its previous state
 * @p old (NULL: none; then @p addr names it) into the next states, whose
 * room the caller reserved.
 */
static void
evaluate(struct dpmon_detect *d, const struct dpmon_snap_host *h, const struct host_state *old,
	 const struct dpmon_addr *addr)
{
	int32_t group = old != NULL ? old->group : group_of(d, addr);
	const struct dpmon_thresholds *t = thresholds_of(d, group);
	int8_t fired[DPMON_DIR_MAX] = {-1, -1};
	struct host_state *st;

	for (int dir = 0; h != NULL && t != NULL && dir < DPMON_DIR_MAX; dir++) {
		struct dpmon_dir_stats tmp;

		fired[dir] = (int8_t)fired_metric(dpmon_snap_host_dir(d->snap, h, dir, &tmp),
						  t->limit[dir]);
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
}

/*
 * One pass over the hosts, merge-joined with the states (both sorted by
 * address). Room for every old state is reserved first, so an old state
 * (and its alerts) is never lost; a new host above a limit that finds no
 * memory is left untracked for this interval (counted).
 * @return 0, or -ENOMEM before anything changed.
 */
static int
pass_hosts(struct dpmon_detect *d, const struct dpmon_snapshot *s)
{
	uint32_t j = 0;

	d->n_next = 0;
	if (reserve_next(d, d->n_states + 1) != 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_hosts; i++) {
		const struct dpmon_snap_host *h = dpmon_snap_host_at(s, i);
		int c = 1;

		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_INGRESS);
		dpmon_snap_host_prefetch(s, i + DPMON_SNAP_PREFETCH_AHEAD, DPMON_DIR_EGRESS);

		while (j < d->n_states && (c = dpmon_addr_cmp(&d->states[j].addr, &h->addr)) < 0) {
			evaluate(d, NULL, &d->states[j], NULL); /* gone (hand-built snapshots) */
			j++;
		}
		if (j < d->n_states && c == 0) {
			evaluate(d, h, &d->states[j], NULL);
			j++;
		} else if (above_min(d, h)) {
			if (d->n_next + (d->n_states - j) + 1 > d->cap_next &&
			    reserve_next(d, d->cap_next * 2) != 0) {
				d->untracked++;
				continue;
			}
			evaluate(d, h, NULL, &h->addr);
		}
	}
	for (; j < d->n_states; j++)
		evaluate(d, NULL, &d->states[j], NULL);
	return 0;
}

/* ------------------------------------------------------------------------
 * Pass 1 for subnets: every subnet of the snapshot with limits, or a state.
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
	const struct dpmon_thresholds *t =
		entry >= 0 && d->subnets[entry].watched ? &d->subnets[entry].thresholds : NULL;
	int8_t fired[DPMON_DIR_MAX] = {-1, -1};
	struct host_state *st;

	for (int dir = 0; sub != NULL && t != NULL && dir < DPMON_DIR_MAX; dir++)
		fired[dir] = (int8_t)fired_metric(&sub->dir[dir], t->limit[dir]);
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
}

/*
 * The subnets of @p s against their thresholds. Room for every old state
 * is kept reserved, as for hosts; a new subnet above a limit that finds no
 * memory is left untracked for this interval. Costs nothing while no
 * subnet has limits or a state.
 * @return 0, or -ENOMEM before anything changed.
 */
static int
pass_subnets(struct dpmon_detect *d, const struct dpmon_snapshot *s)
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
		int32_t e = subnet_entry_of(d, i, &sub->prefix);
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

/* ------------------------------------------------------------------------
 * Pass 2: the life cycle.
 * --------------------------------------------------------------------- */

/* The thresholds of @p st: its hostgroup's, or its subnet's; NULL when it never alerts. */
static const struct dpmon_thresholds *
state_thresholds(const struct dpmon_detect *d, const struct host_state *st)
{
	if (st->sub_entry == SUBNET_NONE)
		return thresholds_of(d, st->group);
	if (st->sub_entry < 0 || !d->subnets[st->sub_entry].watched)
		return NULL;
	return &d->subnets[st->sub_entry].thresholds;
}

/* @p st's values in @p dir as of this run's snapshot; NULL when it is not in it. */
static const struct dpmon_dir_stats *
state_dir(const struct dpmon_detect *d, const struct host_state *st, int dir,
	  struct dpmon_dir_stats *tmp)
{
	if (st->sub_entry != SUBNET_NONE)
		return st->sub != NULL ? &st->sub->dir[dir] : NULL;
	return st->host != NULL ? dpmon_snap_host_dir(d->snap, st->host, dir, tmp) : NULL;
}

/* Post @p a's start or end to the actions thread. */
static void
post(struct dpmon_detect *d, enum dpmon_action_kind kind, const struct dpmon_alert *a,
     double now_unix_s)
{
	struct dpmon_action_event ev = {
		.kind = kind,
		.addr = a->addr,
		.subnet = a->target == DPMON_TARGET_SUBNET,
		.prefix = a->prefix,
		.dir = a->dir,
		.alert_id = a->id,
		.start_unix_s = a->start_unix_s,
		.end_unix_s = a->end_unix_s,
		.ban = a->ban,
	};

	if (d->actions == NULL)
		return;
	/* NULL (out of memory) still posts: the actions send a minimal object. */
	ev.alert = dpmon_alert_json(a, now_unix_s);
	dpmon_actions_post(d->actions, &ev);
}

/* Start the alert of @p st in @p dir (its metric fired for long enough). */
static int
start_alert(struct dpmon_detect *d, struct host_state *st, int dir, double now_unix_s)
{
	struct dpmon_dir_stats tmp;
	const struct dpmon_dir_stats *ds = state_dir(d, st, dir, &tmp);
	const struct dpmon_thresholds *t = state_thresholds(d, st);
	struct dpmon_alert *a = dpmon_alert_alloc();
	int m = st->fired[dir];

	assert(t != NULL && ds != NULL && m >= 0);
	if (a == NULL)
		return -ENOMEM; /* the count stays above: tried again next interval */
	a->id = ++d->last_id;
	a->addr = st->addr;
	/* A subnet's state has no host record: its alert's prefix is st->prefix. */
	a->prefix_len =
		st->sub_entry != SUBNET_NONE ? 0 : (uint8_t)dpmon_snap_host_len(d->snap, st->host);
	a->dir = (enum dpmon_dir)dir;
	a->metric = (enum dpmon_metric)m;
	a->value = metric_value(ds, m);
	a->threshold = t->limit[dir][m];
	a->type = attack_type(ds);
	if (st->sub_entry != SUBNET_NONE) {
		/* A subnet alert never bans: a prefix route would cut off every host in it. */
		a->target = DPMON_TARGET_SUBNET;
		a->prefix = st->prefix;
		memcpy(a->subnet, d->subnets[st->sub_entry].name, sizeof(a->subnet));
		d->subnet_started++;
	} else {
		if (st->group >= 0)
			snprintf(a->hostgroup, sizeof(a->hostgroup), "%s",
				 d->conf->hostgroups[st->group].name);
		a->ban = st->group >= 0 ? d->conf->hostgroups[st->group].ban : d->conf->ban;
	}
	a->start_unix_s = now_unix_s;
	for (int k = 0; k < DPMON_METRIC_MAX; k++)
		a->peak[k] = metric_value(ds, k);
	st->alert[dir] = a;
	d->started++;
	post(d, DPMON_ACTION_ALERT_START, a, now_unix_s);
	return 0;
}

/*
 * A new version of @p old with @p sample (taken; NULL keeps the old one)
 * and the peaks of @p ds (NULL: unchanged). NULL when nothing changed or
 * on allocation failure (@p sample is then released).
 */
static struct dpmon_alert *
new_version(const struct dpmon_alert *old, json_t *sample, const struct dpmon_dir_stats *ds,
	    bool force)
{
	double peak[DPMON_METRIC_MAX];
	bool changed = force;
	struct dpmon_alert *a;

	memcpy(peak, old->peak, sizeof(peak));
	for (int m = 0; ds != NULL && m < DPMON_METRIC_MAX; m++) {
		double v = metric_value(ds, m);

		if (v > peak[m]) {
			peak[m] = v;
			changed = true;
		}
	}
	if (sample != NULL && old->sample != NULL && json_equal(sample, old->sample)) {
		json_decref(sample);
		sample = NULL;
	}
	if (!changed && sample == NULL)
		return NULL;
	a = dpmon_alert_copy(old);
	if (a == NULL) {
		json_decref(sample);
		return NULL;
	}
	memcpy(a->peak, peak, sizeof(peak));
	if (sample != NULL) {
		json_decref(a->sample);
		a->sample = sample;
	}
	return a;
}

/* The sampler's summary of alert @p id, or NULL. */
static json_t *
sample_of(struct dpmon_detect *d, uint64_t id)
{
	return d->sampler != NULL ? dpmon_sampler_summary(d->sampler, id) : NULL;
}

/* Keep ended alert @p a (its reference) among the recent ones. */
static void
push_recent(struct dpmon_detect *d, struct dpmon_alert *a)
{
	uint32_t cap = d->conf->recent_alerts;

	if (cap == 0) {
		dpmon_alert_unref(a);
	} else if (d->n_recent == cap) {
		dpmon_alert_unref(d->recent[d->recent_head]);
		d->recent[d->recent_head] = a;
		d->recent_head = (d->recent_head + 1) % cap;
	} else {
		d->recent[(d->recent_head + d->n_recent++) % cap] = a;
	}
}

/*
 * Peaks and sample of the active alert of @p st in @p dir; its end after the
 * hold time, or now when @p stop (detection turned off).
 */
static void
follow_alert(struct dpmon_detect *d, struct host_state *st, int dir, double uptime_s,
	     double now_unix_s, bool stop)
{
	struct dpmon_alert *old = st->alert[dir], *a;
	struct dpmon_dir_stats tmp;
	bool ending =
		stop || (st->fired[dir] < 0 && uptime_s - st->last_above_s[dir] >= d->conf->hold_s);

	a = new_version(old, sample_of(d, old->id), state_dir(d, st, dir, &tmp), ending);
	if (a == NULL)
		return; /* unchanged; or out of memory, and an end is retried next interval */
	if (ending)
		a->end_unix_s = now_unix_s;
	dpmon_alert_unref(old);
	if (!ending) {
		st->alert[dir] = a;
		return;
	}
	st->alert[dir] = NULL;
	if (d->sampler != NULL)
		dpmon_sampler_forget(d->sampler, a->id); /* its sample is in @p a now */
	post(d, DPMON_ACTION_ALERT_END, a, now_unix_s);
	push_recent(d, a);
}

/* Pass 2 over @p n states @p states (hosts' or subnets'). */
static void
cycle(struct dpmon_detect *d, struct host_state *states, uint32_t n, const struct dpmon_snapshot *s,
      double now_unix_s)
{
	for (uint32_t i = 0; i < n; i++) {
		struct host_state *st = &states[i];

		for (int dir = 0; dir < DPMON_DIR_MAX; dir++) {
			if (st->fired[dir] >= 0) {
				st->above[dir]++;
				st->last_above_s[dir] = s->uptime_s;
			} else {
				st->above[dir] = 0;
			}
			if (st->alert[dir] != NULL)
				follow_alert(d, st, dir, s->uptime_s, now_unix_s, false);
			else if (st->fired[dir] >= 0 && st->above[dir] >= d->conf->start_intervals)
				start_alert(d, st, dir, now_unix_s);
		}
		st->host = NULL; /* the snapshot is published after this run */
		st->sub = NULL;
	}
}

/*
 * Detection is off (a reload turned it off): end every active alert now,
 * with its last sample, and forget the states. A state whose end found no
 * memory stays, and is ended at the next run.
 */
static uint32_t
end_states(struct dpmon_detect *d, struct host_state *states, uint32_t n, double now_unix_s)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct host_state *st = &states[i];

		st->host = NULL;
		st->sub = NULL;
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			if (st->alert[dir] != NULL)
				follow_alert(d, st, dir, 0, now_unix_s, true);
		if (has_alert(st))
			states[kept++] = *st;
	}
	return kept;
}

static void
end_all(struct dpmon_detect *d, double now_unix_s)
{
	d->n_states = end_states(d, d->states, d->n_states, now_unix_s);
	d->n_sstates = end_states(d, d->sstates, d->n_sstates, now_unix_s);
}

/* ------------------------------------------------------------------------
 * Pass 3: the sampler's watch list and the snapshot's alert list.
 * --------------------------------------------------------------------- */

static int
alert_newer(const void *x, const void *y)
{
	const struct dpmon_alert *a = *(struct dpmon_alert *const *)x;
	const struct dpmon_alert *b = *(struct dpmon_alert *const *)y;

	return a->id < b->id ? 1 : a->id > b->id ? -1 : 0;
}

/*
 * Watch the hosts and subnets of the oldest DPMON_SAMPLE_WATCH_MAX active
 * alerts (@p act: newest first); a subnet as its prefix (mapped length).
 * A host or subnet listed for both directions has its ingress alert
 * first, as the sampler expects (sample.h): its egress alert gets the
 * packets it sends.
 */
static void
update_watch(struct dpmon_detect *d, struct dpmon_alert *const *act, uint32_t n_act)
{
	struct dpmon_addr hosts[DPMON_SAMPLE_WATCH_MAX];
	uint8_t depths[DPMON_SAMPLE_WATCH_MAX];
	uint64_t ids[DPMON_SAMPLE_WATCH_MAX];
	enum dpmon_dir dirs[DPMON_SAMPLE_WATCH_MAX];
	unsigned n = 0;

	for (uint32_t i = n_act; i-- > 0 && n < DPMON_SAMPLE_WATCH_MAX;) {
		const struct dpmon_prefix *p = &act[i]->prefix;

		hosts[n] = act[i]->addr;
		/* A subnet as its prefix; a host counted per prefix as that. */
		depths[n] = act[i]->target == DPMON_TARGET_SUBNET
				    ? (uint8_t)dpmon_mapped_bits(p->family, p->depth)
			    : act[i]->prefix_len != 0
				    ? (uint8_t)dpmon_mapped_bits(
					      dpmon_addr_is_v4(&act[i]->addr) ? 4 : 6,
					      act[i]->prefix_len)
				    : 128;
		dirs[n] = act[i]->dir;
		ids[n++] = act[i]->id;
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = i + 1; dirs[i] == DPMON_DIR_EGRESS && k < n; k++)
			if (dpmon_addr_cmp(&hosts[i], &hosts[k]) == 0 && depths[i] == depths[k]) {
				uint64_t id = ids[i];

				assert(dirs[k] == DPMON_DIR_INGRESS); /* one alert per direction */
				ids[i] = ids[k];
				ids[k] = id;
				dirs[k] = DPMON_DIR_EGRESS;
				dirs[i] = DPMON_DIR_INGRESS;
			}
	if (d->sampler == NULL ||
	    (n == d->n_watched && (n == 0 || memcmp(ids, d->watched, sizeof(ids[0]) * n) == 0)))
		return;
	if (dpmon_sampler_watch(d->sampler, hosts, depths, ids, n) == 0) {
		memcpy(d->watched, ids, sizeof(ids[0]) * n);
		d->n_watched = n;
	}
}

/* Attach the active and recent alerts to @p s, newest first. */
static int
attach_alerts(struct dpmon_detect *d, struct dpmon_snapshot *s, double now_unix_s)
{
	uint32_t n = 0, cap = d->n_recent;
	struct dpmon_alert **list;

	for (uint32_t i = 0; i < d->n_states; i++)
		cap += (d->states[i].alert[0] != NULL) + (d->states[i].alert[1] != NULL);
	d->subnet_active = 0;
	for (uint32_t i = 0; i < d->n_sstates; i++)
		d->subnet_active +=
			(d->sstates[i].alert[0] != NULL) + (d->sstates[i].alert[1] != NULL);
	cap += d->subnet_active;
	d->active = cap - d->n_recent;
	s->alerts_active = d->active;
	s->alerts_started = d->started;
	s->subnet_alerts_active = d->subnet_active;
	s->subnet_alerts_started = d->subnet_started;
	s->alerts_unix_s = now_unix_s;
	list = malloc(sizeof(*list) * (cap ? cap : 1));
	if (list == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->n_states; i++)
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			if (d->states[i].alert[dir] != NULL)
				list[n++] = d->states[i].alert[dir];
	for (uint32_t i = 0; i < d->n_sstates; i++)
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			if (d->sstates[i].alert[dir] != NULL)
				list[n++] = d->sstates[i].alert[dir];
	qsort(list, n, sizeof(*list), alert_newer);
	update_watch(d, list, n);
	for (uint32_t i = 0; i < d->n_recent; i++)
		list[n++] = d->recent[(d->recent_head + i) % d->conf->recent_alerts];
	assert(n == cap);
	qsort(list, n, sizeof(*list), alert_newer);
	for (uint32_t i = 0; i < n; i++)
		dpmon_alert_ref(list[i]);
	s->alerts = list;
	s->n_alerts = n;
	return 0;
}

int
dpmon_detect_run(struct dpmon_detect *d, struct dpmon_snapshot *s, double now_unix_s)
{
	int rc = 0;

	if (d->sampler != NULL)
		dpmon_sampler_drain(d->sampler);
	d->snap = s;
	if (d->conf->enabled) {
		rc = pass_hosts(d, s);
		if (rc == 0) {
			struct host_state *t = d->states;
			uint32_t cap = d->cap_states;

			d->states = d->next;
			d->n_states = d->n_next;
			d->cap_states = d->cap_next;
			d->next = t;
			d->cap_next = cap;
			d->n_next = 0;
			cycle(d, d->states, d->n_states, s, now_unix_s);
		}
		if (pass_subnets(d, s) == 0) {
			struct host_state *t = d->sstates;
			uint32_t cap = d->cap_sstates;

			d->sstates = d->snext;
			d->n_sstates = d->n_snext;
			d->cap_sstates = d->cap_snext;
			d->snext = t;
			d->cap_snext = cap;
			d->n_snext = 0;
			cycle(d, d->sstates, d->n_sstates, s, now_unix_s);
		} else {
			rc = -ENOMEM;
		}
	} else if (d->n_states > 0 || d->n_sstates > 0) {
		end_all(d, now_unix_s);
	}
	if (attach_alerts(d, s, now_unix_s) != 0)
		rc = -ENOMEM;
	d->snap = NULL;
	return rc;
}
