/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect.c — the detector: its settings (thresholds, hostgroups, whitelist,
 * subnets) and their tables, its life, and its run on each snapshot (see
 * detect.h; rules in docs/detection.md).
 *
 * Per interval, for one snapshot, detect.c calls the pieces in this order
 * (detect_private.h); they never call back:
 *
 *   1. pass    hosts, then subnets, against their thresholds
 *              (detect_eval.c), into the next state arrays, swapped in;
 *   2. cycle   the alerts' life cycle on those states (detect_alerts.c);
 *   3. publish the sampler's watch list and the snapshot's alert list
 *              (detect_alerts.c).
 */
#include "detect_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Settings and their tables.
 * --------------------------------------------------------------------- */

/* Copy @p src into @p dst, hostgroups without their prefix lists. */
static int
copy_conf(struct dpmon_detect_conf *dst, const struct dpmon_detect_conf *src)
{
	*dst = *src;
	dst->whitelist = NULL;
	dst->ignore_sources = NULL; /* the classifier holds them (dataplane) */
	dst->n_ignore_sources = 0;
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

/* ------------------------------------------------------------------------
 * Life.
 * --------------------------------------------------------------------- */

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
	detect_watch_limits(d);
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
	detect_watch_limits(d);
	/* Tracked hosts follow the new hostgroups; their alerts go on and end
	 * under the new thresholds (a host now whitelisted: after the hold time).
	 * Tracked subnets likewise (one removed or with detection off: after the
	 * hold time). */
	for (uint32_t i = 0; i < d->n_states; i++)
		d->states[i].group = detect_group_of(d, &d->states[i].addr);
	for (uint32_t i = 0; i < d->n_sstates; i++)
		d->sstates[i].sub_entry =
			detect_subnet_entry_of(d, UINT32_MAX, &d->sstates[i].prefix);
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
 * A run.
 * --------------------------------------------------------------------- */

/* A pass filled the next state list (@p next, @p n_next of @p cap_next):
 * it becomes the current one (@p cur), and the old current list's memory
 * is kept, emptied, for the next pass. */
static void
next_becomes_current(struct host_state **cur, uint32_t *n_cur, uint32_t *cap_cur,
		     struct host_state **next, uint32_t *n_next, uint32_t *cap_next)
{
	struct host_state *old = *cur;
	uint32_t old_cap = *cap_cur;

	*cur = *next;
	*n_cur = *n_next;
	*cap_cur = *cap_next;
	*next = old;
	*cap_next = old_cap;
	*n_next = 0;
}

int
dpmon_detect_run(struct dpmon_detect *d, struct dpmon_snapshot *s, double now_unix_s)
{
	int rc = 0;

	if (d->sampler != NULL)
		dpmon_sampler_drain(d->sampler);
	d->snap = s;
	if (d->conf->enabled) {
		rc = detect_pass_hosts(d, s);
		if (rc == 0) {
			next_becomes_current(&d->states, &d->n_states, &d->cap_states, &d->next,
					     &d->n_next, &d->cap_next);
			detect_cycle(d, d->states, d->n_states, s, now_unix_s);
		}
		if (detect_pass_subnets(d, s) == 0) {
			next_becomes_current(&d->sstates, &d->n_sstates, &d->cap_sstates, &d->snext,
					     &d->n_snext, &d->cap_snext);
			detect_cycle(d, d->sstates, d->n_sstates, s, now_unix_s);
		} else {
			rc = -ENOMEM;
		}
	} else if (d->n_states > 0 || d->n_sstates > 0) {
		detect_end_all(d, now_unix_s);
	}
	if (detect_attach_alerts(d, s, now_unix_s) != 0)
		rc = -ENOMEM;
	d->snap = NULL;
	return rc;
}
