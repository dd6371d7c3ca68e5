/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect_alerts.c — the alerts' life cycle, pass 2 and 3 of the detector
 * (detect_private.h; rules in docs/detection.md).
 *
 *   2. cycle   per state and direction: intervals above counted (reset by
 *              one below); start at conf->start_intervals; while active,
 *              peaks follow every metric; end once hold_s seconds passed
 *              since the last interval above.
 *              (Detection off after a reload: every active alert ends at
 *              once, detect_end_all.)
 *   3. publish the sampler's watch list, and the snapshot's alert list:
 *              active alerts and the recent ended ones (a ring of
 *              conf->recent_alerts), newest first, one reference each.
 *
 * A state keeps one reference to the current version of its alert in each
 * direction; the ring one to each ended alert; each snapshot one to every
 * alert it lists. A version is never changed once listed: a change (peaks,
 * sample, end) makes a new version (dpmon_alert_copy). Each start and end
 * is posted to the actions (actions.h).
 */
#include "detect_private.h"
#include "flowspec.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* @p st's values in @p dir as of this run's snapshot, less the packets of
 * ignored sources; NULL when it is not in it. */
static const struct dpmon_dir_stats *
state_dir(const struct dpmon_detect *d, const struct host_state *st, int dir,
	  struct dpmon_dir_stats *tmp)
{
	const struct dpmon_dir_stats *v;

	if (st->sub_entry != SUBNET_NONE)
		v = st->sub != NULL ? &st->sub->dir[dir] : NULL;
	else
		v = st->host != NULL ? dpmon_snap_host_dir(d->snap, st->host, dir, tmp) : NULL;
	if (v != NULL && dir == DPMON_DIR_INGRESS && st->ignored != NULL)
		v = detect_minus_ignored(tmp, v, st->ignored);
	return v;
}

/* What a banning alert of @p st gets: its hostgroup's, or the global, mitigation. */
static enum dpmon_mitigation
mitigation_of(const struct dpmon_detect *d, const struct host_state *st)
{
	if (st->sub_entry == SUBNET_NONE && st->group >= 0)
		return d->conf->hostgroups[st->group].mitigation;
	return d->conf->mitigation;
}

/* Post @p a's start or end (alert of @p st) to the actions thread. */
static void
post(struct dpmon_detect *d, const struct host_state *st, enum dpmon_action_kind kind,
     const struct dpmon_alert *a, double now_unix_s)
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
		.mitigation = mitigation_of(d, st),
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
	a->value = detect_metric_value(ds, m);
	a->threshold = t->limit[dir][m];
	a->type = detect_attack_type(ds);
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
		a->peak[k] = detect_metric_value(ds, k);
	st->alert[dir] = a;
	d->started++;
	post(d, st, DPMON_ACTION_ALERT_START, a, now_unix_s);
	return 0;
}

/* @p *next (taken) replaces @p cur unless equal or NULL; @return whether it changes. */
static bool
json_changes(const json_t *cur, json_t **next)
{
	if (*next != NULL && cur != NULL && json_equal(*next, cur)) {
		json_decref(*next);
		*next = NULL;
	}
	return *next != NULL;
}

/* Replace @p *field with @p next (taken) when not NULL. */
static void
json_take(json_t **field, json_t *next)
{
	if (next == NULL)
		return;
	json_decref(*field);
	*field = next;
}

/*
 * A new version of @p old with @p sample, @p fingerprint and @p flowspec
 * (taken; NULL keeps the old one) and the peaks of @p ds (NULL:
 * unchanged). NULL when nothing changed or on allocation failure (the
 * JSON objects are then released).
 */
static struct dpmon_alert *
new_version(const struct dpmon_alert *old, json_t *sample, json_t *fingerprint, json_t *flowspec,
	    const struct dpmon_dir_stats *ds, bool force)
{
	double peak[DPMON_METRIC_MAX];
	bool changed = force;
	struct dpmon_alert *a;

	memcpy(peak, old->peak, sizeof(peak));
	for (int m = 0; ds != NULL && m < DPMON_METRIC_MAX; m++) {
		double v = detect_metric_value(ds, m);

		if (v > peak[m]) {
			peak[m] = v;
			changed = true;
		}
	}
	changed = json_changes(old->sample, &sample) | changed;
	changed = json_changes(old->fingerprint, &fingerprint) | changed;
	changed = json_changes(old->flowspec, &flowspec) | changed;
	a = changed ? dpmon_alert_copy(old) : NULL;
	if (a == NULL) {
		json_decref(sample);
		json_decref(fingerprint);
		json_decref(flowspec);
		return NULL;
	}
	memcpy(a->peak, peak, sizeof(peak));
	json_take(&a->sample, sample);
	json_take(&a->fingerprint, fingerprint);
	json_take(&a->flowspec, flowspec);
	return a;
}

/* The sampler's summary of alert @p id, or NULL. */
static json_t *
sample_of(struct dpmon_detect *d, uint64_t id)
{
	return d->sampler != NULL ? dpmon_sampler_summary(d->sampler, id) : NULL;
}

/* ------------------------------------------------------------------------
 * The fingerprint and the FlowSpec rules.
 * --------------------------------------------------------------------- */

/* Does alert @p a of @p st get FlowSpec rules? @return NULL if so, else why not. */
static const char *
flowspec_unwanted(const struct dpmon_detect *d, const struct host_state *st,
		  const struct dpmon_alert *a)
{
	enum dpmon_mitigation m = mitigation_of(d, st);

	if (m != DPMON_MITIGATION_FLOWSPEC && m != DPMON_MITIGATION_FLOWSPEC_BLACKHOLE)
		return m == DPMON_MITIGATION_NONE ? "mitigation is none"
						  : "mitigation is blackhole";
	if (a->target == DPMON_TARGET_HOST && !a->ban)
		return "the alert does not ban (ban is false)";
	return NULL;
}

/*
 * The attack's estimated share of the sample: what the fired metric has
 * beyond its limit (the host's own traffic is taken to be at most the
 * limit), at least 5 %. The metric is read at its peak since the alert's
 * start, while the sample was taken: its value at the start is the
 * moving average the moment it crossed the limit, still rising with the
 * attack, and would take almost all of the sample for the host's own.
 */
static double
attack_share(const struct dpmon_alert *a)
{
	double v = a->peak[a->metric] > a->value ? a->peak[a->metric] : a->value;
	double share = v > 0 && a->threshold > 0 ? 1 - a->threshold / v : 1;

	return share < 0.05 ? 0.05 : share > 1 ? 1 : share;
}

/* The rules chosen in @p c, the counts and the reason as the alert's "flowspec". */
static json_t *
choice_json(const struct dpmon_fs_choice *c, uint32_t added, uint32_t refused, bool dry_run,
	    const char *reason)
{
	json_t *rules = json_array();

	for (uint32_t i = 0; rules != NULL && i < c->n_rules; i++) {
		char m[DPMON_FS_TEXT_LEN], act[32];

		dpmon_fs_rule_match_text(&c->rules[i], m, sizeof(m));
		dpmon_fs_action_text(&c->rules[i].action, act, sizeof(act));
		if (json_array_append_new(rules,
					  json_pack("{s:s,s:s,s:I}", "match", m, "action", act,
						    "packets", (json_int_t)c->matched[i])) != 0) {
			json_decref(rules);
			rules = NULL;
		}
	}
	return json_pack("{s:o*,s:f,s:I,s:I,s:I,s:b,s:s?}", "rules", rules, "coverage", c->coverage,
			 "attack_packets", (json_int_t)c->attack_packets, "added",
			 (json_int_t)added, "refused", (json_int_t)refused, "dry_run", dry_run,
			 "reason", reason);
}

/*
 * Choose the rules of alert @p a (of @p st) from fingerprint @p fp (NULL:
 * nothing sampled) and hand them to the actions. @return the alert's
 * "flowspec" JSON.
 */
static json_t *
flowspec_decide(struct dpmon_detect *d, const struct host_state *st, const struct dpmon_alert *a,
		const struct dpmon_fp *fp, const struct dpmon_flowspec_conf *fc)
{
	struct dpmon_fs_choice c;
	struct dpmon_fs_params p = {
		.attack_share = attack_share(a),
		.min_coverage = fc->min_coverage,
		.max_rules = fc->max_rules_per_alert,
		.components = fc->components,
		.action = fc->action,
	};
	const char *why = flowspec_unwanted(d, st, a);
	uint32_t added = 0, refused = 0;
	bool subnet = a->target == DPMON_TARGET_SUBNET;

	memset(&c, 0, sizeof(c));
	if (why != NULL)
		return choice_json(&c, 0, 0, !fc->announce, why);
	if (!subnet && st->group >= 0 && d->conf->hostgroups[st->group].flowspec_action_set)
		p.action = d->conf->hostgroups[st->group].flowspec_action;
	p.family = subnet ? a->prefix.family : dpmon_addr_is_v4(&a->addr) ? 4 : 6;
	p.dst = subnet ? a->prefix.addr : a->addr;
	p.dst_len = (uint8_t)(subnet ? a->prefix.depth : dpmon_alert_host_len(a));
	if (fp == NULL || fp->n == 0)
		snprintf(c.reason, sizeof(c.reason), "no packet was sampled");
	else if (dpmon_fs_choose(fp->pkts, fp->n, &p, &c) != 0)
		snprintf(c.reason, sizeof(c.reason), "out of memory");
	if (d->actions != NULL)
		added = dpmon_actions_flowspec(
			d->actions, a->id, &a->addr,
			!subnet && mitigation_of(d, st) == DPMON_MITIGATION_FLOWSPEC_BLACKHOLE, &c,
			&refused);
	return choice_json(&c, added, refused, !fc->announce,
			   c.n_rules == 0 ? c.reason
			   : refused > 0  ? "flowspec.max_rules reached: rules refused"
					  : NULL);
}

/*
 * The fingerprint of alert @p a (of @p st) as JSON into @p *fp_out, and,
 * the first time its sample is complete or timed out, its FlowSpec rules
 * into @p *fs_out (handed to the actions then). Both NULL once decided:
 * the alert keeps the fingerprint its rules were chosen from.
 */
static void
fingerprint_step(struct dpmon_detect *d, const struct host_state *st, const struct dpmon_alert *a,
		 double now_unix_s, json_t **fp_out, json_t **fs_out)
{
	const struct dpmon_fp *fp;
	const struct dpmon_flowspec_conf *fc;
	enum dpmon_fp_state state;

	*fp_out = NULL;
	*fs_out = NULL;
	if (d->sampler == NULL || a->flowspec != NULL)
		return;
	fc = dpmon_sampler_flowspec(d->sampler);
	fp = dpmon_sampler_fingerprint(d->sampler, a->id);
	if (fp != NULL && fp->want > 0 && fp->n >= fp->want)
		state = DPMON_FP_READY;
	else if (now_unix_s - a->start_unix_s >= fc->sample_timeout_s)
		state = DPMON_FP_TIMED_OUT;
	else
		state = DPMON_FP_SAMPLING;
	if (fp != NULL) {
		*fp_out = dpmon_fp_json(fp, state);
	} else {
		struct dpmon_fp none = {.want = fc->sample_packets};

		*fp_out = dpmon_fp_json(&none, state);
	}
	if (state != DPMON_FP_SAMPLING)
		*fs_out = flowspec_decide(d, st, a, fp, fc);
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
	json_t *fp, *fs;

	fingerprint_step(d, st, old, now_unix_s, &fp, &fs);
	a = new_version(old, sample_of(d, old->id), fp, fs, state_dir(d, st, dir, &tmp), ending);
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
	post(d, st, DPMON_ACTION_ALERT_END, a, now_unix_s);
	push_recent(d, a);
}

/* Pass 2 over @p n states @p states (hosts' or subnets'). */
void
detect_cycle(struct dpmon_detect *d, struct host_state *states, uint32_t n,
	     const struct dpmon_snapshot *s, double now_unix_s)
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
		st->ignored = NULL;
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
		st->ignored = NULL;
		for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
			if (st->alert[dir] != NULL)
				follow_alert(d, st, dir, 0, now_unix_s, true);
		if (has_alert(st))
			states[kept++] = *st;
	}
	return kept;
}

void
detect_end_all(struct dpmon_detect *d, double now_unix_s)
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
int
detect_attach_alerts(struct dpmon_detect *d, struct dpmon_snapshot *s, double now_unix_s)
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
