/*
 * detect.c — thresholds, hostgroups, whitelist and the alert life cycle
 * (see detect.h; rules in docs/detection.md).
 *
 * Per interval, for one snapshot:
 *
 *   1. pass    hosts in address order, merge-joined with the states (sorted
 *              by address too). A host with a state, or above one of the
 *              smallest limits (min_limit), is evaluated: whitelist and
 *              hostgroup by longest-prefix match (cached in the state), then
 *              for each direction the watched metric exceeding its limit by
 *              the largest factor. Evaluated hosts that are above, or under
 *              alert, keep (or get) a state in the next state array; the
 *              others are dropped.
 *   2. cycle   per state and direction: intervals above counted (reset by
 *              one below); start at conf->start_intervals; while active,
 *              peaks follow every metric; end once hold_s seconds passed
 *              since the last interval above.
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
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

/* Share of the interval's packets above which a class names the attack. */
#define ATTACK_SHARE 0.9
/* Hostgroup index of hosts under the global thresholds. */
#define GROUP_GLOBAL (-1)
/* Hostgroup index of whitelisted hosts (never alert). */
#define GROUP_WHITELIST (-2)
/* LPM next hop of the whitelist tables. */
#define WHITELISTED 1

/* A host being watched: above a limit now, or under alert. */
struct host_state {
	struct dpmon_addr addr;
	int32_t group;                          /* hostgroup index, GROUP_GLOBAL, GROUP_WHITELIST */
	uint32_t above[DPMON_DIR_MAX];          /* consecutive intervals above */
	int8_t fired[DPMON_DIR_MAX];            /* metric above now by the largest factor, -1 none */
	double last_above_s[DPMON_DIR_MAX];     /* uptime of the last interval above */
	struct dpmon_alert *alert[DPMON_DIR_MAX]; /* current version, or NULL */
	const struct dpmon_snap_host *host;     /* in this run's snapshot, or NULL */
};

/* Longest-prefix match of addresses to a value, IPv4 and IPv6. */
struct lpm_pair {
	struct rte_lpm *v4;
	struct rte_lpm6 *v6;
	int64_t default4, default6; /* value of a /0 prefix, -1 none (LPM depth is 1..) */
};

struct dpmon_detect {
	const struct dpmon_detect_conf *conf;
	struct dpmon_sampler *sampler;
	struct dpmon_actions *actions;
	struct lpm_pair groups, whitelist;
	/* Smallest watched limit per direction and metric; INFINITY = none. */
	double min_limit[DPMON_DIR_MAX][DPMON_METRIC_MAX];
	/* The (direction, metric) pairs with a finite min_limit, for the pass. */
	struct { uint8_t dir, metric; double limit; } watch[DPMON_DIR_MAX * DPMON_METRIC_MAX];
	unsigned n_watch;
	struct host_state *states, *next; /* sorted by address */
	uint32_t n_states, cap_states, n_next, cap_next;
	struct dpmon_alert **recent;      /* ring of ended alerts, oldest at head */
	uint32_t n_recent, recent_head;
	uint64_t last_id, started;
	uint32_t active;
	uint64_t watched[DPMON_SAMPLE_WATCH_MAX];
	unsigned n_watched;
	double last_run_s;
	uint64_t untracked; /* hosts above a limit left out for lack of memory */
};

/* ------------------------------------------------------------------------
 * Hostgroup and whitelist tables.
 * --------------------------------------------------------------------- */

static void
lpm_pair_free(struct lpm_pair *p)
{
	rte_lpm_free(p->v4);
	rte_lpm6_free(p->v6);
	p->v4 = NULL;
	p->v6 = NULL;
}

/* Create the tables for @p n prefixes (of which tbl8s per family). */
static int
lpm_pair_create(struct lpm_pair *p, const char *tag, uint32_t n4, uint32_t t4, uint32_t n6,
		uint32_t t6)
{
	static unsigned instance;
	unsigned id = __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED);
	char name[RTE_LPM_NAMESIZE];
	struct rte_lpm_config c4 = {.max_rules = n4 ? n4 : 1, .number_tbl8s = t4 + 1};
	struct rte_lpm6_config c6 = {.max_rules = n6 ? n6 : 1, .number_tbl8s = t6 + 1};

	p->default4 = p->default6 = -1;
	snprintf(name, sizeof(name), "dpmon_%s4_%u", tag, id);
	p->v4 = rte_lpm_create(name, (int)rte_socket_id(), &c4);
	snprintf(name, sizeof(name), "dpmon_%s6_%u", tag, id);
	p->v6 = rte_lpm6_create(name, (int)rte_socket_id(), &c6);
	if (p->v4 == NULL || p->v6 == NULL) {
		lpm_pair_free(p);
		return -(rte_errno ? rte_errno : ENOMEM);
	}
	return 0;
}

/* tbl8 groups prefix @p x may need: IPv4 one past /24; IPv6 one per byte past /24. */
static uint32_t
tbl8s_of(const struct dpmon_prefix *x)
{
	if (x->depth <= 24)
		return 0;
	return x->family == 4 ? 1 : (uint32_t)(x->depth - 24 + 7) / 8;
}

static int
lpm_pair_add(struct lpm_pair *p, const struct dpmon_prefix *x, uint32_t value)
{
	if (x->depth == 0) {
		if (x->family == 4)
			p->default4 = value;
		else
			p->default6 = value;
		return 0;
	}
	if (x->family == 4)
		return rte_lpm_add(p->v4, dpmon_addr_v4(&x->addr), x->depth, value);
	return rte_lpm6_add(p->v6, x->addr.b, x->depth, value);
}

/* The value of the longest prefix containing @p a, or -1. */
static int64_t
lpm_pair_lookup(const struct lpm_pair *p, const struct dpmon_addr *a)
{
	uint32_t hop;

	if (dpmon_addr_is_v4(a))
		return rte_lpm_lookup(p->v4, dpmon_addr_v4(a), &hop) == 0 ? hop : p->default4;
	return rte_lpm6_lookup(p->v6, a->b, &hop) == 0 ? hop : p->default6;
}

/* Build @p p from @p n prefixes, each mapped to value(i). */
static int
lpm_pair_build(struct lpm_pair *p, const char *tag, const struct dpmon_prefix *const *lists,
	       const uint32_t *counts, uint32_t n_lists, bool by_list)
{
	uint32_t n4 = 0, t4 = 0, n6 = 0, t6 = 0;
	int rc;

	for (uint32_t l = 0; l < n_lists; l++)
		for (uint32_t i = 0; i < counts[l]; i++) {
			const struct dpmon_prefix *x = &lists[l][i];

			if (x->family == 4) {
				n4++;
				t4 += tbl8s_of(x);
			} else {
				n6++;
				t6 += tbl8s_of(x);
			}
		}
	if ((rc = lpm_pair_create(p, tag, n4, t4, n6, t6)) != 0)
		return rc;
	for (uint32_t l = 0; l < n_lists; l++)
		for (uint32_t i = 0; i < counts[l]; i++)
			if ((rc = lpm_pair_add(p, &lists[l][i], by_list ? l : WHITELISTED)) != 0)
				return rc;
	return 0;
}

/* Hostgroup index of @p a, GROUP_GLOBAL, or GROUP_WHITELIST. */
static int32_t
group_of(const struct dpmon_detect *d, const struct dpmon_addr *a)
{
	if (d->conf->n_whitelist > 0 && lpm_pair_lookup(&d->whitelist, a) >= 0)
		return GROUP_WHITELIST;
	if (d->conf->n_hostgroups == 0)
		return GROUP_GLOBAL;
	return (int32_t)lpm_pair_lookup(&d->groups, a);
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
			d->min_limit[dir][m] = lo;
			if (lo < INFINITY) {
				d->watch[d->n_watch].dir = (uint8_t)dir;
				d->watch[d->n_watch].metric = (uint8_t)m;
				d->watch[d->n_watch++].limit = lo;
			}
		}
}

struct dpmon_detect *
dpmon_detect_create(const struct dpmon_detect_conf *conf, struct dpmon_sampler *sampler,
		    struct dpmon_actions *actions)
{
	struct dpmon_detect *d = calloc(1, sizeof(*d));
	const struct dpmon_prefix **lists = NULL;
	uint32_t *counts = NULL;
	int rc = -ENOMEM;

	if (d == NULL)
		goto fail;
	d->conf = conf;
	d->sampler = sampler;
	d->actions = actions;
	d->recent = calloc(conf->recent_alerts ? conf->recent_alerts : 1, sizeof(*d->recent));
	lists = calloc(conf->n_hostgroups + 1, sizeof(*lists));
	counts = calloc(conf->n_hostgroups + 1, sizeof(*counts));
	if (d->recent == NULL || lists == NULL || counts == NULL)
		goto fail;
	for (uint32_t g = 0; g < conf->n_hostgroups; g++) {
		lists[g] = conf->hostgroups[g].prefixes;
		counts[g] = conf->hostgroups[g].n_prefixes;
	}
	if ((rc = lpm_pair_build(&d->groups, "hg", lists, counts, conf->n_hostgroups, true)) != 0)
		goto fail;
	lists[0] = conf->whitelist;
	counts[0] = conf->n_whitelist;
	if ((rc = lpm_pair_build(&d->whitelist, "wl", lists, counts, 1, false)) != 0)
		goto fail;
	compute_min_limits(d);
	free(lists);
	free(counts);
	return d;
fail:
	free(lists);
	free(counts);
	dpmon_detect_free(d);
	errno = -rc;
	return NULL;
}

void
dpmon_detect_free(struct dpmon_detect *d)
{
	if (d == NULL)
		return;
	for (uint32_t i = 0; i < d->n_states; i++)
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			dpmon_alert_unref(d->states[i].alert[dir]);
	for (uint32_t i = 0; d->recent != NULL && i < d->n_recent; i++)
		dpmon_alert_unref(d->recent[(d->recent_head + i) % d->conf->recent_alerts]);
	lpm_pair_free(&d->groups);
	lpm_pair_free(&d->whitelist);
	free(d->recent);
	free(d->states);
	free(d->next);
	free(d);
}

double
dpmon_detect_last_run_s(const struct dpmon_detect *d)
{
	return d->last_run_s;
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
	case DPMON_METRIC_PPS: return s->avg_pps;
	case DPMON_METRIC_BPS: return s->avg_bps;
	case DPMON_METRIC_FLOWS: return s->flows; /* -1: not measured, never above */
	case DPMON_METRIC_TCP_PPS: return s->avg_proto_pps[DPMON_PROTO_TCP];
	case DPMON_METRIC_TCP_BPS: return s->avg_proto_bps[DPMON_PROTO_TCP];
	case DPMON_METRIC_UDP_PPS: return s->avg_proto_pps[DPMON_PROTO_UDP];
	case DPMON_METRIC_UDP_BPS: return s->avg_proto_bps[DPMON_PROTO_UDP];
	case DPMON_METRIC_ICMP_PPS: return s->avg_proto_pps[DPMON_PROTO_ICMP];
	case DPMON_METRIC_ICMP_BPS: return s->avg_proto_bps[DPMON_PROTO_ICMP];
	case DPMON_METRIC_TCP_SYN_PPS: return s->avg_x_pps[DPMON_XCLASS_SYN];
	case DPMON_METRIC_FRAGMENTS_PPS: return s->avg_x_pps[DPMON_XCLASS_FRAG];
	default: return 0;
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
	if (s->x[DPMON_XCLASS_SYN].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_SYN_FLOOD;
	if (s->x[DPMON_XCLASS_FRAG].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_FRAGMENT_FLOOD;
	if (s->proto[DPMON_PROTO_UDP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_UDP_FLOOD;
	if (s->proto[DPMON_PROTO_ICMP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_ICMP_FLOOD;
	if (s->proto[DPMON_PROTO_TCP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_TCP_FLOOD;
	return DPMON_ATTACK_UNKNOWN;
}

/* True when some metric of @p h is above its smallest limit anywhere. */
static bool
above_min(const struct dpmon_detect *d, const struct dpmon_snap_host *h)
{
	for (unsigned i = 0; i < d->n_watch; i++)
		if (metric_value(&h->dir[d->watch[i].dir], d->watch[i].metric) > d->watch[i].limit)
			return true;
	return false;
}

/* The metric of @p s above its limit in @p lim by the largest factor, or -1. */
static int
fired_metric(const struct dpmon_dir_stats *s, const double *lim)
{
	double best = 1.0;
	int fired = -1;

	for (int m = 0; m < DPMON_METRIC_MAX; m++) {
		double v;

		if (!(lim[m] > 0))
			continue;
		v = metric_value(s, m);
		if (v > lim[m] && v / lim[m] > best) {
			best = v / lim[m];
			fired = m;
		}
	}
	return fired;
}

/* ------------------------------------------------------------------------
 * Pass 1: evaluation, states merge-joined with the hosts.
 * --------------------------------------------------------------------- */

/* Room for @p need next states. */
static int
reserve_next(struct dpmon_detect *d, uint32_t need)
{
	uint32_t cap = d->cap_next ? d->cap_next : 64;
	void *p;

	while (cap < need)
		cap *= 2;
	if (cap == d->cap_next)
		return 0;
	p = realloc(d->next, sizeof(*d->next) * cap);
	if (p == NULL)
		return -ENOMEM;
	d->next = p;
	d->cap_next = cap;
	return 0;
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

	for (int dir = 0; h != NULL && t != NULL && dir < DPMON_DIR_MAX; dir++)
		fired[dir] = (int8_t)fired_metric(&h->dir[dir], t->limit[dir]);
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
		const struct dpmon_snap_host *h = &s->hosts[i];
		int c = 1;

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
 * Pass 2: the life cycle.
 * --------------------------------------------------------------------- */

/* Post @p a's start or end to the actions thread. */
static void
post(struct dpmon_detect *d, enum dpmon_action_kind kind, const struct dpmon_alert *a,
     double now_unix_s)
{
	struct dpmon_action_event ev = {
		.kind = kind, .addr = a->addr, .dir = a->dir, .alert_id = a->id,
		.start_unix_s = a->start_unix_s, .end_unix_s = a->end_unix_s, .ban = a->ban,
	};

	if (d->actions == NULL)
		return;
	ev.alert = dpmon_alert_json(a, now_unix_s);
	if (ev.alert == NULL) {
		fprintf(stderr, "dpmon: detect: out of memory: alert %" PRIu64 " %s not posted\n",
			a->id, kind == DPMON_ACTION_ALERT_START ? "start" : "end");
		return;
	}
	dpmon_actions_post(d->actions, &ev);
}

/* Start the alert of @p st in @p dir (its metric fired for long enough). */
static int
start_alert(struct dpmon_detect *d, struct host_state *st, int dir, double now_unix_s)
{
	const struct dpmon_dir_stats *ds = &st->host->dir[dir];
	const struct dpmon_thresholds *t = thresholds_of(d, st->group);
	struct dpmon_alert *a = dpmon_alert_alloc();
	int m = st->fired[dir];

	assert(t != NULL && m >= 0);
	if (a == NULL)
		return -ENOMEM; /* the count stays above: tried again next interval */
	a->id = ++d->last_id;
	a->addr = st->addr;
	a->dir = (enum dpmon_dir)dir;
	a->metric = (enum dpmon_metric)m;
	a->value = metric_value(ds, m);
	a->threshold = t->limit[dir][m];
	a->type = attack_type(ds);
	if (st->group >= 0)
		snprintf(a->hostgroup, sizeof(a->hostgroup), "%s", d->conf->hostgroups[st->group].name);
	a->ban = st->group >= 0 ? d->conf->hostgroups[st->group].ban : d->conf->ban;
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

/* Peaks and sample of the active alert of @p st in @p dir; its end after the hold time. */
static void
follow_alert(struct dpmon_detect *d, struct host_state *st, int dir, double uptime_s,
	     double now_unix_s)
{
	struct dpmon_alert *old = st->alert[dir], *a;
	bool ending = st->fired[dir] < 0 && uptime_s - st->last_above_s[dir] >= d->conf->hold_s;

	a = new_version(old, sample_of(d, old->id), st->host ? &st->host->dir[dir] : NULL, ending);
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
	post(d, DPMON_ACTION_ALERT_END, a, now_unix_s);
	push_recent(d, a);
}

static void
cycle(struct dpmon_detect *d, const struct dpmon_snapshot *s, double now_unix_s)
{
	for (uint32_t i = 0; i < d->n_states; i++) {
		struct host_state *st = &d->states[i];

		for (int dir = 0; dir < DPMON_DIR_MAX; dir++) {
			if (st->fired[dir] >= 0) {
				st->above[dir]++;
				st->last_above_s[dir] = s->uptime_s;
			} else {
				st->above[dir] = 0;
			}
			if (st->alert[dir] != NULL)
				follow_alert(d, st, dir, s->uptime_s, now_unix_s);
			else if (st->fired[dir] >= 0 && st->above[dir] >= d->conf->start_intervals)
				start_alert(d, st, dir, now_unix_s);
		}
		st->host = NULL; /* the snapshot is published after this run */
	}
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

/* Watch the hosts of the oldest DPMON_SAMPLE_WATCH_MAX active alerts (@p act: newest first). */
static void
update_watch(struct dpmon_detect *d, struct dpmon_alert *const *act, uint32_t n_act)
{
	struct dpmon_addr hosts[DPMON_SAMPLE_WATCH_MAX];
	uint64_t ids[DPMON_SAMPLE_WATCH_MAX];
	unsigned n = 0;

	for (uint32_t i = n_act; i-- > 0 && n < DPMON_SAMPLE_WATCH_MAX;) {
		hosts[n] = act[i]->addr;
		ids[n++] = act[i]->id;
	}
	if (d->sampler == NULL ||
	    (n == d->n_watched && memcmp(ids, d->watched, sizeof(ids[0]) * n) == 0))
		return;
	if (dpmon_sampler_watch(d->sampler, hosts, ids, n) == 0) {
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
	d->active = cap - d->n_recent;
	s->alerts_active = d->active;
	s->alerts_started = d->started;
	s->alerts_unix_s = now_unix_s;
	list = malloc(sizeof(*list) * (cap ? cap : 1));
	if (list == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->n_states; i++)
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			if (d->states[i].alert[dir] != NULL)
				list[n++] = d->states[i].alert[dir];
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
	struct timespec t0, t1;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (d->sampler != NULL)
		dpmon_sampler_drain(d->sampler);
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
			cycle(d, s, now_unix_s);
		}
	}
	if (attach_alerts(d, s, now_unix_s) != 0)
		rc = -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	d->last_run_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return rc;
}
