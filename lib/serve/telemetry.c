/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry.c — /dpmon/... commands on DPDK's telemetry socket (see
 * telemetry.h).
 *
 * Design
 * ------
 *
 * rte_telemetry (DPDK 22.11) calls a command's callback from its own
 * thread with no user context, and a command cannot be unregistered. So the
 * store being read is a module variable guarded by a mutex: a callback
 * holds the mutex while it takes a snapshot reference, renders and drops
 * the reference, and dpmon_telemetry_detach clears the variable under the
 * same mutex before the store is destroyed. Commands are rare (a human or
 * a poller), so the mutex costs nothing that matters, and the merge never
 * waits for it: publication uses the store's own lock only.
 *
 * What a reply can hold is limited by DPDK 22.11: dictionary keys are
 * letters, digits, '_' and '/', so entries are keyed by index, port id or
 * lcore id and addresses are values; numbers are integers, so rates are
 * rounded to whole packets and bits per second and durations are given in
 * ms or µs; a reply is at most 16 KiB, so lists are bounded
 * (DPMON_TEL_SUBNETS_MAX subnets per page, DPMON_TEL_HOSTS_MAX hosts).
 * Errors answer {"error": "..."} rather than a bare null.
 */
#include "telemetry.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "stats.h"
#include "top.h"

#ifndef DPMON_VERSION
#define DPMON_VERSION "0.0.0"
#endif

typedef int (*render_fn)(const struct dpmon_snapshot *s, const char *params,
			 struct rte_tel_data *d);

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dpmon_snap_store *tel_store; /* guarded by tel_lock */
static bool tel_registered;                /* main lcore only */

/* ------------------------------------------------------------------------
 * Small helpers.
 * --------------------------------------------------------------------- */

/* A rate or duration as the nearest non-negative integer. */
static uint64_t
whole(double x)
{
	return isfinite(x) && x > 0 ? (x < 1.8e19 ? (uint64_t)llround(x) : UINT64_MAX) : 0;
}

static int
error_reply(struct rte_tel_data *d, const char *msg)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
	return 0;
}

static struct rte_tel_data *
new_dict(void)
{
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c != NULL)
		rte_tel_data_start_dict(c);
	return c;
}

/* Add container @p c under @p name (freed if that fails). */
static void
add_container(struct rte_tel_data *d, const char *name, struct rte_tel_data *c)
{
	if (c != NULL && rte_tel_data_add_dict_container(d, name, c, 0) != 0)
		rte_tel_data_free(c);
}

/* "<prefix>packets", "<prefix>bytes", "<prefix>pps", "<prefix>bps". */
static void
add_rate(struct rte_tel_data *d, const char *prefix, const struct dpmon_rate *r)
{
	char name[64];

	snprintf(name, sizeof(name), "%spackets", prefix);
	rte_tel_data_add_dict_u64(d, name, r->packets);
	snprintf(name, sizeof(name), "%sbytes", prefix);
	rte_tel_data_add_dict_u64(d, name, r->bytes);
	snprintf(name, sizeof(name), "%spps", prefix);
	rte_tel_data_add_dict_u64(d, name, whole(r->pps));
	snprintf(name, sizeof(name), "%sbps", prefix);
	rte_tel_data_add_dict_u64(d, name, whole(r->bps));
}

/* ingress_* and egress_* totals of a subnet or host. */
static void
add_dirs(struct rte_tel_data *d, const struct dpmon_dir_stats dir[DPMON_DIR_MAX])
{
	add_rate(d, "ingress_", &dir[DPMON_DIR_INGRESS].total);
	add_rate(d, "egress_", &dir[DPMON_DIR_EGRESS].total);
}

/* ------------------------------------------------------------------------
 * /dpmon/summary
 * --------------------------------------------------------------------- */

static struct rte_tel_data *
totals_dict(const struct dpmon_snapshot *s)
{
	struct rte_tel_data *c = new_dict();

	for (int t = 0; c != NULL && t < DPMON_TOTAL_MAX; t++) {
		struct rte_tel_data *one = new_dict();

		if (one != NULL)
			add_rate(one, "", &s->totals[t].total);
		add_container(c, dpmon_total_name((enum dpmon_total)t), one);
	}
	return c;
}

static struct rte_tel_data *
parse_errors_dict(const struct dpmon_snapshot *s)
{
	struct rte_tel_data *c = new_dict();

	for (int r = DPMON_REASON_OK + 1; c != NULL && r < DPMON_REASON_MAX; r++)
		rte_tel_data_add_dict_u64(c, dpmon_reason_name((enum dpmon_reason)r),
					  s->parse_errors[r]);
	return c;
}

/* Ports keyed by port id. */
static struct rte_tel_data *
ports_dict(const struct dpmon_snapshot *s)
{
	struct rte_tel_data *c = new_dict();
	char key[16];

	for (uint32_t i = 0; c != NULL && i < s->n_ports; i++) {
		const struct dpmon_port_stats *p = &s->ports[i];
		struct rte_tel_data *one = new_dict();

		if (one != NULL) {
			rte_tel_data_add_dict_string(one, "device", p->device);
			rte_tel_data_add_dict_u64(one, "rx_queues", p->rx_queues);
			rte_tel_data_add_dict_u64(one, "ipackets", p->ipackets);
			rte_tel_data_add_dict_u64(one, "ibytes", p->ibytes);
			rte_tel_data_add_dict_u64(one, "imissed", p->imissed);
			rte_tel_data_add_dict_u64(one, "ierrors", p->ierrors);
			rte_tel_data_add_dict_u64(one, "rx_nombuf", p->rx_nombuf);
		}
		snprintf(key, sizeof(key), "%u", (unsigned)p->port_id);
		add_container(c, key, one);
	}
	return c;
}

/* Workers keyed by lcore id. */
static struct rte_tel_data *
workers_dict(const struct dpmon_snapshot *s)
{
	struct rte_tel_data *c = new_dict();
	char key[16];

	for (uint32_t i = 0; c != NULL && i < s->n_workers; i++) {
		const struct dpmon_snap_worker *w = &s->workers[i];
		struct rte_tel_data *one = new_dict();

		if (one != NULL) {
			rte_tel_data_add_dict_u64(one, "packets", w->packets);
			rte_tel_data_add_dict_u64(one, "bursts", w->bursts);
			rte_tel_data_add_dict_u64(one, "polls", w->polls);
			rte_tel_data_add_dict_u64(one, "busy_percent",
						  whole(100.0 * w->busy_ratio));
			rte_tel_data_add_dict_u64(one, "host_table_full", w->host_table_full);
			rte_tel_data_add_dict_u64(one, "hosts", w->hosts);
			rte_tel_data_add_dict_u64(one, "host_capacity", w->host_capacity);
		}
		snprintf(key, sizeof(key), "%u", w->lcore);
		add_container(c, key, one);
	}
	return c;
}

static int
render_summary(const struct dpmon_snapshot *s, const char *params, struct rte_tel_data *d)
{
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", DPMON_VERSION);
	rte_tel_data_add_dict_u64(d, "snapshot_seq", s->seq);
	rte_tel_data_add_dict_u64(d, "uptime_ms", whole(s->uptime_s * 1e3));
	rte_tel_data_add_dict_u64(d, "interval_us", whole(s->interval_s * 1e6));
	rte_tel_data_add_dict_u64(d, "merge_us", whole(s->merge_s * 1e6));
	rte_tel_data_add_dict_u64(d, "subnets", s->n_subnets);
	rte_tel_data_add_dict_u64(d, "hosts", s->n_hosts);
	rte_tel_data_add_dict_u64(d, "alerts_active", s->alerts_active);
	add_container(d, "totals", totals_dict(s));
	add_container(d, "parse_errors", parse_errors_dict(s));
	add_container(d, "ports", ports_dict(s));
	add_container(d, "workers", workers_dict(s));
	return 0;
}

/* ------------------------------------------------------------------------
 * /dpmon/subnets[,FIRST]
 * --------------------------------------------------------------------- */

/* A decimal index; false for anything else. */
static bool
parse_index(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (text == NULL || *text == '\0') {
		*out = 0;
		return true;
	}
	if (strspn(text, "0123456789") != strlen(text) || strlen(text) > 9)
		return false;
	v = strtoul(text, &end, 10);
	*out = (uint32_t)v;
	return true;
}

static int
render_subnets(const struct dpmon_snapshot *s, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *list;
	char key[16], p[DPMON_PREFIX_STRLEN];
	uint32_t first;

	if (!parse_index(params, &first))
		return error_reply(d, "usage: /dpmon/subnets[,FIRST] (FIRST: a subnet index)");
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "snapshot_seq", s->seq);
	rte_tel_data_add_dict_u64(d, "count", s->n_subnets);
	rte_tel_data_add_dict_u64(d, "first", first);
	list = new_dict();
	for (uint32_t i = first;
	     list != NULL && i < s->n_subnets && i - first < DPMON_TEL_SUBNETS_MAX; i++) {
		struct rte_tel_data *one = new_dict();

		if (one != NULL) {
			rte_tel_data_add_dict_string(
				one, "prefix",
				dpmon_prefix_format(&s->subnets[i].prefix, p, sizeof(p)));
			rte_tel_data_add_dict_string(one, "name", s->subnets[i].name);
			add_dirs(one, s->subnets[i].dir);
		}
		snprintf(key, sizeof(key), "%u", i);
		add_container(list, key, one);
	}
	add_container(d, "subnets", list);
	return 0;
}

/* ------------------------------------------------------------------------
 * /dpmon/hosts,SUBNET
 * --------------------------------------------------------------------- */

static struct rte_tel_data *
host_list(const struct dpmon_snapshot *s, const uint32_t *idx, uint32_t n)
{
	struct rte_tel_data *list = new_dict();
	char key[16], a[DPMON_PREFIX_STRLEN];

	for (uint32_t k = 0; list != NULL && k < n; k++) {
		const struct dpmon_snap_host *h = dpmon_snap_host_at(s, idx[k]);
		struct rte_tel_data *one = new_dict();
		struct dpmon_dir_stats dir[DPMON_DIR_MAX];

		if (one != NULL) {
			rte_tel_data_add_dict_string(one, "address",
						     dpmon_host_format(&h->addr,
								       dpmon_snap_host_len(s, h), a,
								       sizeof(a)));
			for (int d = 0; d < DPMON_DIR_MAX; d++)
				dir[d] = *dpmon_snap_host_dir(s, h, d, &dir[d]);
			add_dirs(one, dir);
		}
		snprintf(key, sizeof(key), "%u", k);
		add_container(list, key, one);
	}
	return list;
}

static int
render_hosts(const struct dpmon_snapshot *s, const char *params, struct rte_tel_data *d)
{
	uint32_t idx[DPMON_TEL_HOSTS_MAX], n, matched;
	char msg[200], canon[DPMON_PREFIX_STRLEN];
	const char *why = "missing";
	struct dpmon_prefix p;
	int subnet;

	if (params == NULL || *params == '\0' || strlen(params) >= sizeof(canon) ||
	    dpmon_prefix_parse(params, &p, &why) != 0) {
		snprintf(msg, sizeof(msg),
			 "usage: /dpmon/hosts,SUBNET (a monitored subnet, CIDR): %s", why);
		return error_reply(d, msg);
	}
	dpmon_prefix_format(&p, canon, sizeof(canon));
	subnet = dpmon_snapshot_find_subnet(s, &p);
	if (subnet < 0) {
		snprintf(msg, sizeof(msg), "subnet %s is not monitored", canon);
		return error_reply(d, msg);
	}
	n = dpmon_top_hosts(s, subnet, DPMON_TEL_HOSTS_MAX, idx, &matched);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "snapshot_seq", s->seq);
	rte_tel_data_add_dict_string(d, "subnet", canon);
	rte_tel_data_add_dict_u64(d, "hosts_in_subnet", matched);
	add_container(d, "hosts", host_list(s, idx, n));
	return 0;
}

/* ------------------------------------------------------------------------
 * /dpmon/alerts
 * --------------------------------------------------------------------- */

static int
render_alerts(const struct dpmon_snapshot *s, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *list;
	char id[24], text[DPMON_PREFIX_STRLEN + 64], addr[DPMON_PREFIX_STRLEN];

	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "snapshot_seq", s->seq);
	list = new_dict();

	rte_tel_data_add_dict_u64(d, "active", s->alerts_active);
	/* Active alerts by id: "ADDRESS DIRECTION METRIC TYPE" (GET /api/v1/alerts has the rest). */
	for (uint32_t i = 0; list != NULL && i < s->n_alerts; i++) {
		const struct dpmon_alert *a = s->alerts[i];

		if (a->end_unix_s != 0)
			continue;
		snprintf(id, sizeof(id), "%llu", (unsigned long long)a->id);
		snprintf(text, sizeof(text), "%s %s %s %s",
			 dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr)),
			 dpmon_dir_name(a->dir), dpmon_metric_name(a->metric),
			 dpmon_attack_name(a->type));
		rte_tel_data_add_dict_string(list, id, text);
	}
	add_container(d, "alerts", list);
	return 0;
}

/* ------------------------------------------------------------------------
 * Callbacks and registration.
 * --------------------------------------------------------------------- */

/* Render with @p fn from the current snapshot, under tel_lock. */
static int
answer(const char *params, struct rte_tel_data *d, render_fn fn)
{
	struct dpmon_snapshot *snap;
	int rc;

	pthread_mutex_lock(&tel_lock);
	if (tel_store == NULL) {
		rc = error_reply(d, "dpmon is not running");
	} else if ((snap = dpmon_snap_acquire(tel_store)) == NULL) {
		rc = error_reply(d, "no snapshot yet");
	} else {
		rc = fn(snap, params, d);
		dpmon_snap_release(tel_store, snap);
	}
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

static int
cb_summary(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return answer(params, d, render_summary);
}

static int
cb_subnets(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return answer(params, d, render_subnets);
}

static int
cb_hosts(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return answer(params, d, render_hosts);
}

static int
cb_alerts(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return answer(params, d, render_alerts);
}

static int
register_all(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{"/dpmon/summary", cb_summary,
		 "dpmon totals, parse errors, ports and workers. No parameters"},
		{"/dpmon/subnets", cb_subnets,
		 "dpmon monitored subnets. Parameter: optional index of the first subnet listed"},
		{"/dpmon/hosts", cb_hosts,
		 "dpmon top hosts of a subnet by bytes. Parameter: the subnet (CIDR)"},
		{"/dpmon/alerts", cb_alerts, "dpmon active alerts. No parameters"},
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int rc = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);

		if (rc != 0)
			return rc;
	}
	return 0;
}

int
dpmon_telemetry_attach(struct dpmon_snap_store *store)
{
	int rc = 0;

	if (!tel_registered) {
		rc = register_all();
		if (rc != 0)
			return rc;
		tel_registered = true;
	}
	pthread_mutex_lock(&tel_lock);
	tel_store = store;
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

void
dpmon_telemetry_detach(void)
{
	pthread_mutex_lock(&tel_lock);
	tel_store = NULL;
	pthread_mutex_unlock(&tel_lock);
}
