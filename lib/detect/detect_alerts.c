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
		double v = detect_metric_value(ds, m);

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
