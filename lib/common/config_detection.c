/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_detection.c — the configuration's "detection" section:
 * thresholds, hostgroups, the whitelist and the ignored sources
 * (docs/detection.md has the semantics, docs/configuration.md the keys).
 *
 * Hostgroups are parsed after the other keys of the section whatever the
 * file order, since they inherit its "ban" and "thresholds". Two checks
 * across entries follow the per-key ones: duplicate hostgroup names, and
 * a prefix listed by two hostgroups (or twice in one, or twice in the
 * whitelist), found by sorting a copy of every prefix tagged with where it
 * came from, so that equal prefixes are adjacent. The ignored sources are
 * checked once the subnets are known (config_check_ignore_sources): each
 * must be remote, and listed once.
 */
#include "config_private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefix.h"
#include "stats.h"

/* ------------------------------------------------------------------------
 * Metric names.
 * --------------------------------------------------------------------- */

static const char *const metric_names[DPMON_METRIC_MAX] = {
	[DPMON_METRIC_PPS] = "pps",
	[DPMON_METRIC_BPS] = "bps",
	[DPMON_METRIC_FLOWS] = "flows",
	[DPMON_METRIC_TCP_PPS] = "tcp_pps",
	[DPMON_METRIC_TCP_BPS] = "tcp_bps",
	[DPMON_METRIC_UDP_PPS] = "udp_pps",
	[DPMON_METRIC_UDP_BPS] = "udp_bps",
	[DPMON_METRIC_ICMP_PPS] = "icmp_pps",
	[DPMON_METRIC_ICMP_BPS] = "icmp_bps",
	[DPMON_METRIC_TCP_SYN_PPS] = "tcp_syn_pps",
	[DPMON_METRIC_FRAGMENTS_PPS] = "fragments_pps",
};

const char *
dpmon_metric_name(int m)
{
	return m >= 0 && m < DPMON_METRIC_MAX ? metric_names[m] : NULL;
}

/* The metric named @p name, or -1. */
static int
metric_index(const char *name)
{
	for (int m = 0; m < DPMON_METRIC_MAX; m++)
		if (strcmp(name, dpmon_metric_name(m)) == 0)
			return m;
	return -1;
}

/* ------------------------------------------------------------------------
 * Thresholds.
 * --------------------------------------------------------------------- */

/* A non-negative finite number (integer or real) into @p out. */
static bool
check_limit(struct dpmon_check *c, const char *path, const json_t *v, double *out)
{
	double x;

	if (!json_is_number(v)) {
		dpmon_check_type(c, path, "number", v);
		return false;
	}
	x = json_number_value(v);
	if (!(x >= 0) || x > 1e18) {
		dpmon_check_report(c, path, "must be a number 0..1e18 (0 = not watched), got %g",
				   x);
		return false;
	}
	*out = x;
	return true;
}

/* {"pps": N, "tcp_syn_pps": N, ...}: the limits of one direction. */
static void
parse_dir_limits(struct dpmon_check *c, const char *path, json_t *obj, double *limit)
{
	struct dpmon_check_member m;
	char names[256];
	int metric;

	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if ((metric = metric_index(m.key)) >= 0) {
			check_limit(c, m.path, m.v, &limit[metric]);
			continue;
		}
		names[0] = '\0';
		for (int i = 0, n = 0; i < DPMON_METRIC_MAX; i++)
			n += snprintf(names + n, sizeof(names) - (size_t)n, "%s%s", i ? ", " : "",
				      dpmon_metric_name(i));
		dpmon_check_report(c, m.path, "unknown metric (expected one of %s)", names);
	}
}

void
config_parse_thresholds(struct dpmon_check *c, const char *path, json_t *obj,
			struct dpmon_thresholds *t)
{
	struct dpmon_check_member m;

	memset(t, 0, sizeof(*t));
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "ingress") == 0)
			parse_dir_limits(c, m.path, m.v, t->limit[DPMON_DIR_INGRESS]);
		else if (strcmp(m.key, "egress") == 0)
			parse_dir_limits(c, m.path, m.v, t->limit[DPMON_DIR_EGRESS]);
		else
			dpmon_check_unknown(c, m.path);
	}
}

static bool
thresholds_any(const struct dpmon_thresholds *t)
{
	for (int d = 0; d < DPMON_DIR_MAX; d++)
		for (int m = 0; m < DPMON_METRIC_MAX; m++)
			if (t->limit[d][m] > 0)
				return true;
	return false;
}

/* ------------------------------------------------------------------------
 * Prefix lists: the hostgroups' and the whitelist.
 * --------------------------------------------------------------------- */

/*
 * An IPv6 prefix inside ::ffff:0:0/96 (IPv4-mapped): it can match no host,
 * since IPv4 hosts are matched by IPv4 prefixes and no host is counted at
 * a mapped IPv6 address.
 */
static bool
is_mapped_prefix(const struct dpmon_prefix *p)
{
	return p->family == 6 && p->depth >= 96 && dpmon_addr_is_v4(&p->addr);
}

static void
report_mapped_prefix(struct dpmon_check *c, const char *path, const struct dpmon_prefix *p,
		     const char *text)
{
	struct dpmon_prefix v4 = {.addr = p->addr, .family = 4, .depth = (uint8_t)(p->depth - 96)};
	char q[DPMON_CHECK_PATH_LEN], t[DPMON_PREFIX_STRLEN];

	dpmon_check_report(c, path,
			   "an IPv4-mapped IPv6 prefix never matches (IPv4 hosts are "
			   "matched by IPv4 prefixes): write %s, got %s",
			   dpmon_prefix_format(&v4, t, sizeof(t)),
			   dpmon_check_quote(text, q, sizeof(q)));
}

/*
 * An array of CIDR prefixes (at least @p min) into a malloc'd @p *out;
 * the invalid ones are reported and left out.
 */
static void
parse_prefix_list(struct dpmon_check *c, const char *path, const json_t *arr, size_t min,
		  struct dpmon_prefix **out, uint32_t *n_out)
{
	char ipath[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN];
	const char *why;
	size_t i, n;
	json_t *v;

	if (!dpmon_check_array(c, path, arr, min, DPMON_MAX_GROUP_PREFIXES))
		return;
	n = json_array_size(arr);
	free(*out);
	*n_out = 0;
	*out = calloc(n ? n : 1, sizeof(**out));
	if (*out == NULL) {
		dpmon_check_report(c, path, "out of memory for %zu prefixes", n);
		return;
	}
	json_array_foreach(arr, i, v)
	{
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		if (!json_is_string(v))
			dpmon_check_type(c, ipath, "string", v);
		else if (dpmon_prefix_parse(json_string_value(v), &(*out)[*n_out], &why) != 0)
			dpmon_check_report(c, ipath, "%s, got %s", why,
					   dpmon_check_quote(json_string_value(v), q, sizeof(q)));
		else if (is_mapped_prefix(&(*out)[*n_out]))
			report_mapped_prefix(c, ipath, &(*out)[*n_out], json_string_value(v));
		else
			(*n_out)++;
	}
}

/* Where a prefix of a list came from, for duplicate messages. */
struct prefix_origin {
	struct dpmon_prefix prefix;
	uint32_t group; /* hostgroup index, or UINT32_MAX for the whitelist */
	uint32_t entry; /* index among the parsed prefixes of that list */
};

static int
prefix_origin_cmp(const void *a, const void *b)
{
	const struct prefix_origin *x = a, *y = b;
	int r = dpmon_prefix_cmp(&x->prefix, &y->prefix);

	if (r != 0)
		return r;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static void
origin_path(char *buf, size_t len, const struct prefix_origin *o)
{
	if (o->group == UINT32_MAX)
		snprintf(buf, len, "$.detection.whitelist");
	else
		snprintf(buf, len, "$.detection.hostgroups[%u].prefixes", o->group);
}

/*
 * A prefix may belong to one hostgroup only (else the longest-prefix
 * match could not choose), and appear once in the whitelist. Sorting puts
 * equal prefixes side by side; each one after the first is reported.
 */
static void
check_duplicate_group_prefixes(struct dpmon_check *c, const struct dpmon_detect_conf *d)
{
	struct prefix_origin *all;
	size_t n = d->n_whitelist, k = 0;
	char path[DPMON_CHECK_PATH_LEN], first[DPMON_CHECK_PATH_LEN], text[DPMON_PREFIX_STRLEN];

	for (uint32_t g = 0; g < d->n_hostgroups; g++)
		n += d->hostgroups[g].n_prefixes;
	all = malloc((n ? n : 1) * sizeof(*all));
	if (all == NULL) {
		dpmon_check_report(c, "$.detection",
				   "out of memory checking for duplicate prefixes");
		return;
	}
	for (uint32_t g = 0; g < d->n_hostgroups; g++)
		for (uint32_t i = 0; i < d->hostgroups[g].n_prefixes; i++)
			all[k++] = (struct prefix_origin){d->hostgroups[g].prefixes[i], g, i};
	for (uint32_t i = 0; i < d->n_whitelist; i++)
		all[k++] = (struct prefix_origin){d->whitelist[i], UINT32_MAX, i};
	qsort(all, n, sizeof(*all), prefix_origin_cmp);
	for (size_t i = 1, run = 0; i < n; i++) {
		if (!dpmon_prefix_equal(&all[i].prefix, &all[run].prefix)) {
			run = i;
			continue;
		}
		if ((all[i].group == UINT32_MAX) != (all[run].group == UINT32_MAX)) {
			/* A hostgroup prefix may also be whitelisted; the whitelist's
			 * own copies (sorted after) compare with its first. */
			run = i;
			continue;
		}
		origin_path(path, sizeof(path), &all[i]);
		origin_path(first, sizeof(first), &all[run]);
		dpmon_check_report(c, path, "duplicate prefix %s (also in %s)",
				   dpmon_prefix_format(&all[i].prefix, text, sizeof(text)), first);
	}
	free(all);
}

/* ------------------------------------------------------------------------
 * Hostgroups.
 * --------------------------------------------------------------------- */

/*
 * One hostgroup; @p set[0] says whether it had a "ban" key, @p set[1] a
 * "mitigation" key.
 */
static void
parse_hostgroup(struct dpmon_check *c, const char *path, json_t *obj,
		struct dpmon_hostgroup_conf *g, bool *set, bool *thresholds_set)
{
	struct dpmon_check_member m;

	if (!dpmon_check_object(c, path, obj))
		return;
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "name") == 0) {
			dpmon_check_string(c, m.path, m.v, 1, DPMON_NAME_LEN - 1, g->name);
		} else if (strcmp(m.key, "prefixes") == 0) {
			parse_prefix_list(c, m.path, m.v, 1, &g->prefixes, &g->n_prefixes);
		} else if (strcmp(m.key, "enabled") == 0 || strcmp(m.key, "ban") == 0) {
			if (!json_is_boolean(m.v))
				dpmon_check_type(c, m.path, "boolean", m.v);
			else if (m.key[0] == 'e')
				g->enabled = json_is_true(m.v);
			else {
				g->ban = json_is_true(m.v);
				set[0] = true;
			}
		} else if (strcmp(m.key, "thresholds") == 0) {
			config_parse_thresholds(c, m.path, m.v, &g->thresholds);
			*thresholds_set = true;
		} else if (strcmp(m.key, "mitigation") == 0) {
			set[1] = config_parse_mitigation(c, m.path, m.v, &g->mitigation);
		} else if (strcmp(m.key, "flowspec_action") == 0) {
			g->flowspec_action_set =
				config_parse_flowspec_action(c, m.path, m.v, &g->flowspec_action);
		} else if (!dpmon_check_is_comment(m.key)) {
			dpmon_check_unknown(c, m.path);
		}
	}
	dpmon_check_require(c, path, obj, "name");
	dpmon_check_require(c, path, obj, "prefixes");
}

/* Each hostgroup whose name an earlier one has. */
static void
check_duplicate_group_names(struct dpmon_check *c, const struct dpmon_detect_conf *d)
{
	char path[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN];

	for (uint32_t i = 1; i < d->n_hostgroups; i++)
		for (uint32_t j = 0; d->hostgroups[i].name[0] && j < i; j++)
			if (strcmp(d->hostgroups[i].name, d->hostgroups[j].name) == 0) {
				snprintf(path, sizeof(path), "$.detection.hostgroups[%u].name", i);
				dpmon_check_report(
					c, path,
					"duplicate hostgroup name %s "
					"(also $.detection.hostgroups[%u])",
					dpmon_check_quote(d->hostgroups[i].name, q, sizeof(q)), j);
				break;
			}
}

static void
parse_hostgroups(struct dpmon_check *c, const char *path, const json_t *arr,
		 struct dpmon_detect_conf *d, bool (*ban_set)[2], bool *thr_set)
{
	char ipath[DPMON_CHECK_PATH_LEN];
	size_t i, n;
	json_t *v;

	if (!dpmon_check_array(c, path, arr, 0, DPMON_MAX_HOSTGROUPS))
		return;
	n = json_array_size(arr);
	if (n > DPMON_MAX_HOSTGROUPS)
		n = DPMON_MAX_HOSTGROUPS; /* reported; the rest is not kept */
	d->hostgroups = calloc(n ? n : 1, sizeof(*d->hostgroups));
	if (d->hostgroups == NULL) {
		dpmon_check_report(c, path, "out of memory for %zu hostgroups", n);
		return;
	}
	d->n_hostgroups = (uint32_t)n;
	json_array_foreach(arr, i, v)
	{
		if (i >= n)
			break;
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		d->hostgroups[i].enabled = true;
		parse_hostgroup(c, ipath, v, &d->hostgroups[i], ban_set[i], &thr_set[i]);
	}
	check_duplicate_group_names(c, d);
}

/* ------------------------------------------------------------------------
 * The section.
 * --------------------------------------------------------------------- */

/* "start_intervals", "hold_s" and "recent_alerts". */
static const struct dpmon_check_int_key detection_ints[] = {
	DPMON_CHECK_U32_KEY("start_intervals", 1, 3600, struct dpmon_detect_conf, start_intervals),
	DPMON_CHECK_U32_KEY("hold_s", 0, 86400, struct dpmon_detect_conf, hold_s),
	DPMON_CHECK_U32_KEY("recent_alerts", 0, 100000, struct dpmon_detect_conf, recent_alerts),
};

/*
 * Hostgroups without a "ban", "mitigation" or "thresholds" of their own
 * (@p ban_set[g][0], [1], @p thr_set false) take the section's.
 * @return whether a threshold is set: in the section, or in an enabled
 *         hostgroup (the default of "enabled").
 */
static bool
inherit(struct dpmon_detect_conf *d, bool (*ban_set)[2], const bool *thr_set)
{
	bool any = thresholds_any(&d->thresholds);

	for (uint32_t g = 0; g < d->n_hostgroups; g++) {
		struct dpmon_hostgroup_conf *hg = &d->hostgroups[g];

		if (!ban_set[g][0])
			hg->ban = d->ban;
		if (!ban_set[g][1])
			hg->mitigation = d->mitigation;
		if (!thr_set[g])
			hg->thresholds = d->thresholds;
		any = any || (hg->enabled && thresholds_any(&hg->thresholds));
	}
	return any;
}

void
config_parse_detection(struct dpmon_check *c, const char *path, json_t *obj,
		       struct dpmon_config *cfg)
{
	struct dpmon_check_member m;
	struct dpmon_detect_conf *d = &cfg->detect;
	bool ban_set[DPMON_MAX_HOSTGROUPS][2] = {{false}}, thr_set[DPMON_MAX_HOSTGROUPS] = {false};
	bool enabled_set = false, any;
	char kpath[DPMON_CHECK_PATH_LEN];
	json_t *groups = NULL;

	if (!dpmon_check_object(c, path, obj))
		return;
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "enabled") == 0 || strcmp(m.key, "ban") == 0) {
			if (!json_is_boolean(m.v))
				dpmon_check_type(c, m.path, "boolean", m.v);
			else if (m.key[0] == 'e') {
				d->enabled = json_is_true(m.v);
				enabled_set = true;
			} else {
				d->ban = json_is_true(m.v);
			}
		} else if (strcmp(m.key, "thresholds") == 0) {
			config_parse_thresholds(c, m.path, m.v, &d->thresholds);
		} else if (strcmp(m.key, "subnet_thresholds") == 0) {
			config_parse_thresholds(c, m.path, m.v, &d->subnet_thresholds);
		} else if (strcmp(m.key, "hostgroups") == 0) {
			groups = m.v; /* after the globals: hostgroups inherit ban and thresholds */
		} else if (strcmp(m.key, "whitelist") == 0) {
			parse_prefix_list(c, m.path, m.v, 0, &d->whitelist, &d->n_whitelist);
		} else if (strcmp(m.key, "ignore_sources") == 0) {
			parse_prefix_list(c, m.path, m.v, 0, &d->ignore_sources,
					  &d->n_ignore_sources);
		} else if (strcmp(m.key, "mitigation") == 0) {
			config_parse_mitigation(c, m.path, m.v, &d->mitigation);
		} else if (!dpmon_check_int_key(c, m.path, m.key, m.v,
						DPMON_CHECK_KEYS(detection_ints), d) &&
			   !dpmon_check_is_comment(m.key)) {
			dpmon_check_unknown(c, m.path);
		}
	}
	if (groups != NULL) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, "hostgroups");
		parse_hostgroups(c, kpath, groups, d, ban_set, thr_set);
	}
	any = inherit(d, ban_set, thr_set);
	if (!enabled_set)
		d->enabled = any;
	check_duplicate_group_prefixes(c, d);
}

void
config_finish_detection(struct dpmon_config *cfg, bool enabled_set)
{
	struct dpmon_detect_conf *d = &cfg->detect;
	bool any = false;

	for (uint32_t i = 0; i < cfg->n_subnets; i++) {
		struct dpmon_subnet_conf *sc = &cfg->subnets[i];

		if (!sc->thresholds_set)
			sc->thresholds = d->subnet_thresholds;
		any = any || (sc->detection && thresholds_any(&sc->thresholds));
	}
	d->subnets = cfg->n_subnets > 0 ? cfg->subnets : NULL;
	d->n_subnets = cfg->n_subnets;
	if (!enabled_set && any)
		d->enabled = true;
}

/* ------------------------------------------------------------------------
 * Ignored sources: remote prefixes only.
 * --------------------------------------------------------------------- */

/* True when @p x and @p y share an address (one contains the other). */
static bool
prefixes_overlap(const struct dpmon_prefix *x, const struct dpmon_prefix *y)
{
	if (x->family != y->family)
		return false;
	return x->depth <= y->depth ? dpmon_prefix_contains(x, &y->addr)
				    : dpmon_prefix_contains(y, &x->addr);
}

void
config_check_ignore_sources(struct dpmon_check *c, const struct dpmon_config *cfg)
{
	const struct dpmon_detect_conf *d = &cfg->detect;
	char path[DPMON_CHECK_PATH_LEN], a[DPMON_PREFIX_STRLEN], b[DPMON_PREFIX_STRLEN];

	/* A few prefixes against the subnets: a quadratic check is enough here
	 * (at most DPMON_MAX_GROUP_PREFIXES x DPMON_MAX_SUBNETS, once per load). */
	for (uint32_t i = 0; i < d->n_ignore_sources; i++) {
		const struct dpmon_prefix *p = &d->ignore_sources[i];

		snprintf(path, sizeof(path), "$.detection.ignore_sources[%u]", i);
		for (uint32_t k = 0; k < i; k++)
			if (dpmon_prefix_equal(&d->ignore_sources[k], p)) {
				dpmon_check_report(
					c, path,
					"duplicate prefix %s (also $.detection.ignore_sources[%u])",
					dpmon_prefix_format(p, a, sizeof(a)), k);
				break;
			}
		for (uint32_t s = 0; s < cfg->n_subnets; s++)
			if (prefixes_overlap(p, &cfg->subnets[s].prefix)) {
				dpmon_check_report(
					c, path,
					"%s overlaps the monitored subnet %s ($.subnets[%u]): an "
					"ignored source must be a remote prefix",
					dpmon_prefix_format(p, a, sizeof(a)),
					dpmon_prefix_format(&cfg->subnets[s].prefix, b, sizeof(b)),
					s);
				break;
			}
	}
}
