/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_snapshot.c — the API's endpoints on a snapshot (api.h, docs/api.md):
 * /health, /api/v1/summary, /api/v1/subnets[/{prefix}/{len}],
 * /api/v1/hosts[/{address}], /api/v1/history, /api/v1/alerts[/{id}].
 *
 * The dispatch (api.c) has checked the method and the query keys, and
 * that there is a snapshot when the endpoint needs one; each endpoint
 * here validates its own arguments (400, 404) and renders its JSON.
 *
 * Rendering only reads the immutable snapshot, so no lock is needed.
 * /api/v1/hosts reads the order of its ranking (sort key and direction)
 * that the snapshot caches (host_order.h): the first request for a
 * ranking on a snapshot computes every host's key once and sorts them,
 * O(hosts); every later one on that snapshot copies out its page, O(limit),
 * also with a subnet filter (the order lists each subnet's hosts apart).
 * Should the order not fit in memory, the request falls back to one pass
 * with a bounded heap (dpmon_top_hosts_by, top.c): O(hosts × log limit).
 * This file only gives the ranking: the sort key's metric, then the
 * address, so equal hosts always come out in the same order.
 */
#include "api_private.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_order.h"
#include "top.h"

#ifndef DPMON_VERSION
#define DPMON_VERSION "0.0.0"
#endif

#define HOSTS_LIMIT_DEFAULT 100
#define HOSTS_LIMIT_MAX     10000

/* ------------------------------------------------------------------------
 * Names of the parameters' values.
 * --------------------------------------------------------------------- */

/* Keys of GET /api/v1/hosts?sort=, in the order the error message lists them. */
enum sort_key {
	SORT_PPS,
	SORT_BPS,
	SORT_PACKETS,
	SORT_BYTES,
	/* Rates other than the total's. */
	SORT_AVG_PPS,
	SORT_AVG_BPS,
	SORT_SYN_PPS,
	SORT_FRAG_PPS,
	SORT_TCP_PPS,
	SORT_TCP_BPS,
	SORT_UDP_PPS,
	SORT_UDP_BPS,
	SORT_ICMP_PPS,
	SORT_ICMP_BPS,
	SORT_FLOWS,
	SORT_PEERS,
	SORT_MAX
};

static const char *const sort_names[SORT_MAX + 1] = {
	[SORT_PPS] = "pps",           [SORT_BPS] = "bps",
	[SORT_PACKETS] = "packets",   [SORT_BYTES] = "bytes",
	[SORT_AVG_PPS] = "avg_pps",   [SORT_AVG_BPS] = "avg_bps",
	[SORT_SYN_PPS] = "syn_pps",   [SORT_FRAG_PPS] = "fragments_pps",
	[SORT_TCP_PPS] = "tcp_pps",   [SORT_TCP_BPS] = "tcp_bps",
	[SORT_UDP_PPS] = "udp_pps",   [SORT_UDP_BPS] = "udp_bps",
	[SORT_ICMP_PPS] = "icmp_pps", [SORT_ICMP_BPS] = "icmp_bps",
	[SORT_FLOWS] = "flows",       [SORT_PEERS] = "peers",
};

/* Values of direction=, NULL-terminated. */
static const char *const dir_names[DPMON_DIR_MAX + 1] = {
	[DPMON_DIR_INGRESS] = "ingress",
	[DPMON_DIR_EGRESS] = "egress",
};

/* Values of GET /api/v1/alerts?state= (1 + index in struct alert_query). */
static const char *const state_names[] = {"active", "ended", NULL};

/* Values of GET /api/v1/alerts?target= (enum dpmon_alert_target). */
static const char *const target_names[DPMON_TARGET_MAX + 1] = {
	[DPMON_TARGET_HOST] = "host",
	[DPMON_TARGET_SUBNET] = "subnet",
};

/* ------------------------------------------------------------------------
 * Arguments.
 * --------------------------------------------------------------------- */

/* Resolve CIDR text to a configured subnet's index; answers 400 or 404. */
static int
subnet_arg(struct request *r, const char *text, size_t n, int *idx)
{
	char buf[ARG_TEXT_MAX], e[ECHO_BUF], canon[DPMON_PREFIX_STRLEN];
	const char *why = "too long";
	struct dpmon_prefix p;

	if (!api_copy_arg(text, n, buf) || dpmon_prefix_parse(buf, &p, &why) != 0)
		return api_reply_error(r, 400, "invalid subnet '%s': %s", api_echo(text, n, e),
				       why);
	*idx = dpmon_snapshot_find_subnet(r->snap, &p);
	if (*idx < 0)
		return api_reply_error(r, 404, "subnet %s is not monitored",
				       dpmon_prefix_format(&p, canon, sizeof(canon)));
	return 0;
}

/* Parse the address text @p text (@p n bytes); answers 400. */
static int
addr_arg(struct request *r, const char *text, size_t n, struct dpmon_addr *out)
{
	char buf[ARG_TEXT_MAX], e[ECHO_BUF];

	if (!api_copy_arg(text, n, buf) || dpmon_addr_parse(buf, out) != 0)
		return api_reply_error(r, 400, "invalid address '%s': not an IPv4 or IPv6 address",
				       api_echo(text, n, e));
	return 0;
}

/* Index of @p v in the NULL-terminated @p names, or -1. */
static int
name_index(const char *const *names, const char *v)
{
	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], v) == 0)
			return i;
	return -1;
}

/* "a, b or c": the @p n names of @p names, into @p buf (@p cap bytes). */
static const char *
name_list(const char *const *names, int n, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s",
					i == 0       ? ""
					: i == n - 1 ? " or "
						     : ", ",
					names[i]);
	return buf;
}

/* 400 for the value @p v of parameter @p what, not one of the @p n @p names. */
static int
invalid_choice(struct request *r, const char *what, const char *v, const char *const *names, int n)
{
	char e[ECHO_BUF], list[MSG_MAX];

	return api_reply_error(r, 400, "invalid %s '%s': expected %s", what,
			       api_echo(v, strlen(v), e), name_list(names, n, list, sizeof(list)));
}

/* A decimal integer 1..HOSTS_LIMIT_MAX, digits only. */
static bool
parse_limit(const char *v, uint32_t *out)
{
	uint32_t n = 0;

	if (*v == '\0')
		return false;
	for (; *v != '\0'; v++) {
		if (*v < '0' || *v > '9')
			return false;
		n = n * 10 + (uint32_t)(*v - '0');
		if (n > HOSTS_LIMIT_MAX)
			return false;
	}
	*out = n;
	return n >= 1;
}

/* ------------------------------------------------------------------------
 * JSON of the snapshot's parts.
 * --------------------------------------------------------------------- */

/* A JSON string of the (at most @p max bytes) text @p s, sanitised to
 * ASCII when it is not valid UTF-8. */
static json_t *
text_json(const char *s, size_t max)
{
	char buf[ARG_TEXT_MAX + 1];
	size_t n = strnlen(s, max);
	json_t *j = json_stringn(s, n);

	if (j != NULL)
		return j;
	if (n > ARG_TEXT_MAX)
		n = ARG_TEXT_MAX;
	for (size_t i = 0; i < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	return json_stringn(buf, n);
}

static json_t *
rate_json(const struct dpmon_rate *x)
{
	return json_pack("{s:I,s:I,s:f,s:f}", "packets", (json_int_t)x->packets, "bytes",
			 (json_int_t)x->bytes, "pps", dpmon_finite_or_zero(x->pps), "bps",
			 dpmon_finite_or_zero(x->bps));
}

json_t *
dpmon_api_dir_json(const struct dpmon_dir_stats *d)
{
	json_t *o = rate_json(&d->total);

	if (o != NULL &&
	    (json_object_set_new(o, "flows",
				 d->flows < 0 ? json_null()
					      : json_integer((json_int_t)llround(d->flows))) != 0 ||
	     json_object_set_new(o, "peers",
				 d->peers < 0 ? json_null()
					      : json_integer((json_int_t)llround(d->peers))) != 0 ||
	     json_object_set_new(o, "avg_pps", json_real(dpmon_finite_or_zero(d->avg_pps))) != 0 ||
	     json_object_set_new(o, "avg_bps", json_real(dpmon_finite_or_zero(d->avg_bps))) != 0)) {
		json_decref(o);
		o = NULL;
	}
	for (int p = 0; o != NULL && p < DPMON_PROTO_MAX; p++) {
		if (json_object_set_new(o, dpmon_proto_name((enum dpmon_proto)p),
					rate_json(&d->proto[p])) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	for (int f = 0; o != NULL && f < DPMON_FLAG_MAX; f++) {
		if (json_object_set_new(o, dpmon_flag_name((enum dpmon_flag)f),
					rate_json(&d->flag[f])) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o;
}

typedef json_t *(*item_json_fn)(const struct dpmon_snapshot *s, uint32_t i);

/* A JSON array of fn(s, 0) .. fn(s, n - 1); NULL on allocation failure. */
static json_t *
array_json(const struct dpmon_snapshot *s, uint32_t n, item_json_fn fn)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a != NULL && i < n; i++) {
		if (json_array_append_new(a, fn(s, i)) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

/* As array_json, into @p t one element's tree at a time (struct xbuf),
 * of elements @p idx[0 .. n-1], or 0 .. n-1 when @p idx is NULL. */
static void
array_text(struct xbuf *t, const struct dpmon_snapshot *s, const uint32_t *idx, uint32_t n,
	   item_json_fn fn)
{
	xbuf_puts(t, "[");
	for (uint32_t i = 0; i < n && !t->oom; i++) {
		if (i > 0)
			xbuf_puts(t, ",");
		api_text_json(t, fn(s, idx != NULL ? idx[i] : i));
	}
	xbuf_puts(t, "]");
}

static json_t *
totals_json(const struct dpmon_snapshot *s)
{
	json_t *o = json_object();

	for (int t = 0; o != NULL && t < DPMON_TOTAL_MAX; t++) {
		if (json_object_set_new(o, dpmon_total_name((enum dpmon_total)t),
					dpmon_api_dir_json(&s->totals[t])) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o;
}

static const char *
reason_name(int i)
{
	return dpmon_reason_name((enum dpmon_reason)i);
}

static const char *
anomaly_name(int i)
{
	return dpmon_anomaly_name((enum dpmon_anomaly)i);
}

static const char *
ipstat_name(int i)
{
	return dpmon_ipstat_name((enum dpmon_ipstat)i);
}

/* {name(i): v[i]} for i in from..n-1: every counter present, even at 0. */
static json_t *
named_counts_json(const uint64_t *v, int from, int n, const char *(*name)(int))
{
	json_t *o = json_object();

	for (int i = from; o != NULL && i < n; i++) {
		if (json_object_set_new(o, name(i), json_integer((json_int_t)v[i])) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o;
}

/* Frames not counted, by reason; anomalies and ip_stats of those counted (docs/parsing.md). */
static json_t *
parse_errors_json(const struct dpmon_snapshot *s)
{
	return named_counts_json(s->parse_errors, DPMON_REASON_OK + 1, DPMON_REASON_MAX,
				 reason_name);
}

static json_t *
anomalies_json(const struct dpmon_snapshot *s)
{
	return named_counts_json(s->anomalies, 0, DPMON_ANOM_MAX, anomaly_name);
}

static json_t *
ip_stats_json(const struct dpmon_snapshot *s)
{
	return named_counts_json(s->ip_stats, 0, DPMON_IPSTAT_MAX, ipstat_name);
}

static json_t *
port_json(const struct dpmon_snapshot *s, uint32_t i)
{
	const struct dpmon_port_stats *p = &s->ports[i];

	return json_pack("{s:o,s:i,s:i,s:I,s:I,s:I,s:I,s:I}", "device",
			 text_json(p->device, sizeof(p->device)), "port_id", (int)p->port_id,
			 "rx_queues", (int)p->rx_queues, "ipackets", (json_int_t)p->ipackets,
			 "ibytes", (json_int_t)p->ibytes, "imissed", (json_int_t)p->imissed,
			 "ierrors", (json_int_t)p->ierrors, "rx_nombuf", (json_int_t)p->rx_nombuf);
}

static json_t *
worker_json(const struct dpmon_snapshot *s, uint32_t i)
{
	const struct dpmon_snap_worker *w = &s->workers[i];

	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "lcore",
			 (json_int_t)w->lcore, "packets", (json_int_t)w->packets, "bursts",
			 (json_int_t)w->bursts, "host_table_full", (json_int_t)w->host_table_full,
			 "host_v4mapped", (json_int_t)w->host_v4mapped, "host_ext_full",
			 (json_int_t)w->host_ext_full, "host_flow_full",
			 (json_int_t)w->host_flow_full, "host_evictions",
			 (json_int_t)w->host_evictions, "host_expired", (json_int_t)w->host_expired,
			 "ignored_full", (json_int_t)w->ignored_full, "hosts", (json_int_t)w->hosts,
			 "host_capacity", (json_int_t)w->host_capacity, "polls",
			 (json_int_t)w->polls, "busy_s", dpmon_finite_or_zero(w->busy_s),
			 "busy_ratio", dpmon_finite_or_zero(w->busy_ratio));
}

static json_t *
subnet_json(const struct dpmon_snapshot *s, uint32_t i)
{
	const struct dpmon_snap_subnet *sn = &s->subnets[i];
	char p[DPMON_PREFIX_STRLEN];

	unsigned host_len =
		sn->host_prefix_len ? sn->host_prefix_len : dpmon_family_bits(sn->prefix.family);

	return json_pack("{s:s,s:o,s:i,s:i,s:o,s:o}", "prefix",
			 dpmon_prefix_format(&sn->prefix, p, sizeof(p)), "name",
			 text_json(sn->name, sizeof(sn->name)), "family", (int)sn->prefix.family,
			 "host_prefix_len", (int)host_len, "ingress",
			 dpmon_api_dir_json(&sn->dir[DPMON_DIR_INGRESS]), "egress",
			 dpmon_api_dir_json(&sn->dir[DPMON_DIR_EGRESS]));
}

static json_t *
host_json(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h)
{
	char a[DPMON_PREFIX_STRLEN], p[DPMON_PREFIX_STRLEN] = "";
	struct dpmon_dir_stats in, out;

	if (h->subnet < s->n_subnets)
		dpmon_prefix_format(&s->subnets[h->subnet].prefix, p, sizeof(p));
	return json_pack(
		"{s:s,s:s,s:I,s:I,s:o,s:o}", "address",
		dpmon_host_format(&h->addr, dpmon_snap_host_len(s, h), a, sizeof(a)), "subnet", p,
		"first_seen", (json_int_t)h->first_seen, "last_seen", (json_int_t)h->last_seen,
		"ingress", dpmon_api_dir_json(dpmon_snap_host_dir(s, h, DPMON_DIR_INGRESS, &in)),
		"egress", dpmon_api_dir_json(dpmon_snap_host_dir(s, h, DPMON_DIR_EGRESS, &out)));
}

/* ------------------------------------------------------------------------
 * The ranking of GET /api/v1/hosts, for dpmon_top_hosts_by (top.c keeps
 * the bounded heap).
 * --------------------------------------------------------------------- */

struct host_query {
	const struct dpmon_snapshot *snap; /* the hosts' snapshot (their rates as of it) */
	int subnet;                        /* configured subnet index; -1 = every host */
	enum sort_key key;
	enum dpmon_dir dir;
	uint32_t limit;
};

/* NaN compares as 0, consistently with how it is printed. */
static int
real_cmp(double x, double y)
{
	x = isnan(x) ? 0.0 : x;
	y = isnan(y) ? 0.0 : y;
	return (x > y) - (x < y);
}

static int
count_cmp(uint64_t x, uint64_t y)
{
	return (x > y) - (x < y);
}

/* Compares the counts of @p x and @p y: packets or bytes, by @p k. */
static int
rate_cmp(const struct dpmon_rate *x, const struct dpmon_rate *y, enum sort_key k)
{
	assert(k == SORT_PACKETS || k == SORT_BYTES);
	return k == SORT_PACKETS ? count_cmp(x->packets, y->packets)
				 : count_cmp(x->bytes, y->bytes);
}

/* The real-valued metric @p k (neither SORT_PACKETS nor SORT_BYTES) of
 * direction @p d. */
static double
dir_metric(const struct dpmon_dir_stats *d, enum sort_key k)
{
	switch (k) {
	case SORT_PPS:
		return d->total.pps;
	case SORT_BPS:
		return d->total.bps;
	case SORT_AVG_PPS:
		return d->avg_pps;
	case SORT_AVG_BPS:
		return d->avg_bps;
	case SORT_SYN_PPS:
		return d->flag[DPMON_FLAG_SYN].pps;
	case SORT_FRAG_PPS:
		return d->flag[DPMON_FLAG_FRAG].pps;
	case SORT_TCP_PPS:
		return d->proto[DPMON_PROTO_TCP].pps;
	case SORT_TCP_BPS:
		return d->proto[DPMON_PROTO_TCP].bps;
	case SORT_UDP_PPS:
		return d->proto[DPMON_PROTO_UDP].pps;
	case SORT_UDP_BPS:
		return d->proto[DPMON_PROTO_UDP].bps;
	case SORT_ICMP_PPS:
		return d->proto[DPMON_PROTO_ICMP].pps;
	case SORT_ICMP_BPS:
		return d->proto[DPMON_PROTO_ICMP].bps;
	case SORT_FLOWS:
		return d->flows;
	case SORT_PEERS:
		return d->peers;
	default:
		return 0;
	}
}

/*
 * Metric @p k of host @p h in the query's direction as of the query's
 * snapshot (snapshot.h): a record older than the snapshot has zero
 * interval rates, flows and peers, decayed averages, its own counts.
 */
static double
host_metric(const struct host_query *q, const struct dpmon_snap_host *h, enum sort_key k)
{
	const struct dpmon_dir_stats *d = &h->dir[q->dir];

	if (dpmon_snap_host_fresh(q->snap, h))
		return dir_metric(d, k);
	if (k == SORT_AVG_PPS || k == SORT_AVG_BPS)
		return dir_metric(d, k) * dpmon_snap_host_decay(q->snap, h);
	return 0;
}

/*
 * The metric of @p x as a key whose unsigned order is real_cmp's: NaN and
 * -0 as 0, then the IEEE bits made monotonic (sign bit set on a positive
 * number, every bit flipped on a negative one).
 */
static uint64_t
real_key(double x)
{
	uint64_t b;

	if (isnan(x) || x == 0)
		x = 0.0;
	memcpy(&b, &x, sizeof(b));
	return (b >> 63) != 0 ? ~b : b | (1ull << 63);
}

/* The key of @p h in the ranking of the struct host_query @p ctx (a
 * dpmon_host_key_fn): ranks_before's order, as one unsigned number. */
static uint64_t
host_key(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h, const void *ctx)
{
	const struct host_query *q = ctx;

	(void)s; /* q->snap */
	if (q->key == SORT_PACKETS)
		return h->dir[q->dir].total.packets;
	if (q->key == SORT_BYTES)
		return h->dir[q->dir].total.bytes;
	return real_key(host_metric(q, h, q->key));
}

/* The slot of the query's ranking among the snapshot's cached orders. */
static unsigned
order_slot(const struct host_query *q)
{
	_Static_assert(SORT_MAX * DPMON_DIR_MAX <= DPMON_HOST_ORDER_SLOTS,
		       "every (sort key, direction) needs an order slot");
	return (unsigned)q->key * DPMON_DIR_MAX + (unsigned)q->dir;
}

/* True when @p a is listed before @p b: larger metric, then lower address.
 * @p ctx is the struct host_query (a dpmon_top_before_fn). */
static bool
ranks_before(const struct dpmon_snap_host *a, const struct dpmon_snap_host *b, const void *ctx)
{
	const struct host_query *q = ctx;
	int c = q->key == SORT_PACKETS || q->key == SORT_BYTES
			? rate_cmp(&a->dir[q->dir].total, &b->dir[q->dir].total, q->key)
			: real_cmp(host_metric(q, a, q->key), host_metric(q, b, q->key));

	return c != 0 ? c > 0 : dpmon_addr_cmp(&a->addr, &b->addr) < 0;
}

/* ------------------------------------------------------------------------
 * Health, summary, subnets and hosts.
 * --------------------------------------------------------------------- */

/* Is the request's health verdict a bad one? */
static bool
unhealthy(const struct request *r)
{
	return r->health != NULL && r->health->n_reasons > 0;
}

int
api_ep_health(struct request *r, const char *rest, size_t n)
{
	const char *status = unhealthy(r) ? "unhealthy" : r->snap != NULL ? "ok" : "starting";

	(void)rest;
	(void)n;
	return api_reply(r, unhealthy(r) ? 503 : 200,
			 json_pack("{s:s,s:I,s:o*}", "status", status, "snapshot_seq",
				   (json_int_t)(r->snap != NULL ? r->snap->seq : 0), "reasons",
				   dpmon_health_reasons_json(r->health)));
}

/* The summary's "health": the verdict of /health, computed at request
 * time; a bad one makes the answer no longer the snapshot's alone. */
static json_t *
health_json(struct request *r)
{
	if (unhealthy(r))
		r->out->of_snapshot = false;
	return json_pack("{s:s,s:o*}", "status", unhealthy(r) ? "unhealthy" : "ok", "reasons",
			 dpmon_health_reasons_json(r->health));
}

/* The last refused reload: time, file, errors and the first one's reason;
 * null before any. */
static json_t *
last_refusal_json(const struct dpmon_snap_config *c)
{
	if (c->reload_refusals == 0)
		return json_null();
	return json_pack("{s:o,s:o,s:I,s:o}", "unix_s",
			 json_real(dpmon_finite_or_zero(c->last_refusal_unix_s)), "file",
			 text_json(c->last_refusal_file, DPMON_PATH_LEN), "errors",
			 (json_int_t)c->last_refusal_errors, "reason",
			 text_json(c->last_refusal_reason, DPMON_REFUSAL_REASON_LEN));
}

/* Reload status: counts, the last attempt's time and result (null before
 * any), and the last refusal. */
static json_t *
config_json(const struct dpmon_snapshot *s)
{
	const struct dpmon_snap_config *c = &s->config;
	bool any = c->reloads + c->reload_failures > 0;

	return json_pack("{s:I,s:I,s:o,s:o,s:I,s:o}", "reloads", (json_int_t)c->reloads,
			 "reload_failures", (json_int_t)c->reload_failures, "last_reload_unix_s",
			 any ? json_real(dpmon_finite_or_zero(c->last_reload_unix_s)) : json_null(),
			 "last_reload_ok", any ? json_boolean(c->last_reload_ok) : json_null(),
			 "reload_refusals", (json_int_t)c->reload_refusals, "last_refusal",
			 last_refusal_json(c));
}

/* Actions and sampler counters; "exabgp_connected" null without a pipe. */
static json_t *
actions_json(const struct dpmon_snapshot *s)
{
	const struct dpmon_snap_actions *a = &s->actions;

	return json_pack("{s:I,s:{s:I,s:I,s:I},s:{s:I,s:I},s:I,s:o}", "events_dropped",
			 (json_int_t)a->events_dropped, "notify", "ok", (json_int_t)a->notify_ok,
			 "failed", (json_int_t)a->notify_failed, "killed",
			 (json_int_t)a->notify_killed, "sample", "copied",
			 (json_int_t)a->sample_copied, "dropped", (json_int_t)a->sample_dropped,
			 "blackholes", (json_int_t)a->blackholes, "exabgp_connected",
			 a->exabgp_configured ? json_boolean(a->exabgp_connected) : json_null());
}

/* One exporter's counters (docs/export.md); the times null before the first. */
static json_t *
exporter_json(const struct dpmon_snapshot *s, uint32_t i)
{
	const struct dpmon_snap_exporter *e = &s->exporters[i];

	return json_pack(
		"{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:f,s:f,s:f}", "name",
		e->name, "intervals", (json_int_t)e->intervals, "rows", (json_int_t)e->rows,
		"batches", (json_int_t)e->batches, "failures", (json_int_t)e->failures,
		"dropped_intervals", (json_int_t)e->dropped_intervals, "handoff_skipped",
		(json_int_t)e->handoff_skipped, "spool_depth", (json_int_t)e->spool_depth,
		"spool_bytes", (json_int_t)e->spool_bytes, "last_rows", (json_int_t)e->last_rows,
		"last_success_unix_s",
		e->last_success_unix_s > 0 ? json_real(e->last_success_unix_s) : json_null(),
		"last_error", e->last_error[0] ? json_string(e->last_error) : json_null(),
		"last_error_unix_s",
		e->last_error_unix_s > 0 ? json_real(e->last_error_unix_s) : json_null(),
		"progress_age_s", dpmon_finite_or_zero(e->progress_age_s), "cpu_s",
		dpmon_finite_or_zero(e->cpu_s), "encode_s", dpmon_finite_or_zero(e->encode_s));
}

static json_t *
exporters_json(const struct dpmon_snapshot *s)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a != NULL && i < s->n_exporters; i++)
		json_array_append_new(a, exporter_json(s, i));
	return a;
}

int
api_ep_summary(struct request *r, const char *rest, size_t n)
{
	const struct dpmon_snapshot *s = r->snap;

	(void)rest;
	(void)n;
	return api_reply(
		r, 200,
		json_pack(
			"{s:s,s:f,s:f,s:I,s:I,s:f,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:o,s:o,s:o,s:o}",
			"version", DPMON_VERSION, "uptime_s", dpmon_finite_or_zero(s->uptime_s),
			"interval_s", dpmon_finite_or_zero(s->interval_s), "interval_ms",
			(json_int_t)s->interval_ms, "snapshot_seq", (json_int_t)s->seq, "merge_s",
			dpmon_finite_or_zero(s->merge_s), "totals", totals_json(s), "parse_errors",
			parse_errors_json(s), "anomalies", anomalies_json(s), "ip_stats",
			ip_stats_json(s), "ports", array_json(s, s->n_ports, port_json), "workers",
			array_json(s, s->n_workers, worker_json), "subnets",
			(json_int_t)s->n_subnets, "hosts", (json_int_t)s->n_hosts, "config",
			config_json(s), "actions", actions_json(s), "health", health_json(r),
			"exporters", exporters_json(s)));
}

/* Every subnet, written one at a time (struct xbuf). */
int
api_ep_subnets(struct request *r, const char *rest, size_t n)
{
	const struct dpmon_snapshot *s = r->snap;
	struct xbuf t = {0};

	(void)rest;
	(void)n;
	xbuf_puts(&t, "{\"subnets\":");
	array_text(&t, s, NULL, s->n_subnets, subnet_json);
	xbuf_printf(&t, ",\"snapshot_seq\":%" PRIu64 "}", s->seq);
	return api_reply_text(r, 200, &t);
}

int
api_ep_subnet(struct request *r, const char *rest, size_t n)
{
	int idx, rc = subnet_arg(r, rest, n, &idx);

	if (rc != 0)
		return rc;
	return api_reply(r, 200, subnet_json(r->snap, (uint32_t)idx));
}

/*
 * The host of @p s named by @p a and @p len (bits of its family): with a
 * whole address, the host of that address or the host prefix holding it
 * (one per host_prefix_len its family's subnets use: host prefixes do not
 * overlap, config_sections.c); with a shorter @p len, the host that is
 * exactly that prefix. NULL when none.
 */
static const struct dpmon_snap_host *
find_host_prefix(const struct dpmon_snapshot *s, const struct dpmon_addr *a, unsigned len)
{
	unsigned family = dpmon_addr_is_v4(a) ? 4 : 6, full = dpmon_family_bits(family);
	const struct dpmon_snap_host *h = dpmon_snapshot_find_host(s, a);
	bool tried[129] = {false};

	if (h != NULL && dpmon_snap_host_len(s, h) == len)
		return h;
	if (len < full)
		return NULL;
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		const struct dpmon_snap_subnet *sn = &s->subnets[i];
		unsigned l = sn->host_prefix_len;
		struct dpmon_addr m = *a;

		if (sn->prefix.family != family || l == 0 || l >= full || tried[l])
			continue;
		tried[l] = true;
		dpmon_addr_mask(&m, dpmon_mapped_bits(family, l));
		h = dpmon_snapshot_find_host(s, &m);
		if (h != NULL && dpmon_snap_host_len(s, h) == l)
			return h;
	}
	return NULL;
}

/* 404 for the host @p text (canonical form) of address @p a that is not
 * in @p s: outside every monitored subnet, or not seen. */
static int
host_not_found(struct request *r, const struct dpmon_addr *a, const char *text)
{
	for (uint32_t i = 0; i < r->snap->n_subnets; i++)
		if (dpmon_prefix_contains(&r->snap->subnets[i].prefix, a))
			return api_reply_error(r, 404, "host %s has not been seen", text);
	return api_reply_error(r, 404, "host %s is not inside any monitored subnet", text);
}

/* GET /api/v1/hosts/{address}: an address, or a host prefix in CIDR form. */
int
api_ep_host(struct request *r, const char *rest, size_t n)
{
	char buf[ARG_TEXT_MAX], e[ECHO_BUF], canon[DPMON_PREFIX_STRLEN];
	const char *why = "too long";
	struct dpmon_prefix p;
	const struct dpmon_snap_host *h;
	int rc;

	if (memchr(rest, '/', n) != NULL) {
		if (!api_copy_arg(rest, n, buf) || dpmon_prefix_parse(buf, &p, &why) != 0)
			return api_reply_error(r, 400, "invalid host '%s': %s",
					       api_echo(rest, n, e), why);
		if (p.family == 6 && dpmon_addr_is_v4(&p.addr))
			return api_reply_error(r, 400,
					       "invalid host '%s': an IPv6 prefix inside "
					       "::ffff:0:0/96 is no host; write the IPv4 form",
					       api_echo(rest, n, e));
		if (p.depth >= dpmon_family_bits(p.family))
			return api_reply_error(r, 400,
					       "invalid host '%s': a whole address is written "
					       "without /LENGTH",
					       api_echo(rest, n, e));
		h = find_host_prefix(r->snap, &p.addr, p.depth);
		if (h == NULL)
			return host_not_found(
				r, &p.addr,
				dpmon_host_format(&p.addr, p.depth, canon, sizeof(canon)));
		return api_reply(r, 200, host_json(r->snap, h));
	}
	if ((rc = addr_arg(r, rest, n, &p.addr)) != 0)
		return rc;
	h = find_host_prefix(r->snap, &p.addr,
			     dpmon_family_bits(dpmon_addr_is_v4(&p.addr) ? 4 : 6));
	if (h == NULL)
		return host_not_found(r, &p.addr, dpmon_addr_format(&p.addr, canon, sizeof(canon)));
	return api_reply(r, 200, host_json(r->snap, h));
}

/* The query of GET /api/v1/hosts: sort, direction, limit, subnet, in this
 * order (the first bad one answers 400, or 404 for an unknown subnet). */
static int
parse_host_query(struct request *r, struct host_query *q)
{
	char e[ECHO_BUF];
	const char *v;
	int i;

	*q = (struct host_query){.snap = r->snap,
				 .subnet = -1,
				 .key = SORT_BPS,
				 .dir = DPMON_DIR_INGRESS,
				 .limit = HOSTS_LIMIT_DEFAULT};
	if ((v = api_arg_value(r, "sort")) != NULL) {
		if ((i = name_index(sort_names, v)) < 0)
			return invalid_choice(r, "sort", v, sort_names, SORT_MAX);
		q->key = (enum sort_key)i;
	}
	if ((v = api_arg_value(r, "direction")) != NULL) {
		if ((i = name_index(dir_names, v)) < 0)
			return invalid_choice(r, "direction", v, dir_names, DPMON_DIR_MAX);
		q->dir = (enum dpmon_dir)i;
	}
	if ((v = api_arg_value(r, "limit")) != NULL && !parse_limit(v, &q->limit))
		return api_reply_error(r, 400, "invalid limit '%s': expected an integer 1..%d",
				       api_echo(v, strlen(v), e), HOSTS_LIMIT_MAX);
	if ((v = api_arg_value(r, "subnet")) != NULL)
		return subnet_arg(r, v, strlen(v), &q->subnet);
	return 0;
}

/* The host of record index @p i (item_json_fn). */
static json_t *
host_at_json(const struct dpmon_snapshot *s, uint32_t i)
{
	return host_json(s, dpmon_snap_host_at(s, i));
}

void
dpmon_api_prebuild_orders(const struct dpmon_snapshot *prev, const struct dpmon_snapshot *next)
{
	for (unsigned slot = 0; slot < SORT_MAX * DPMON_DIR_MAX; slot++) {
		struct host_query q = {.snap = next,
				       .subnet = -1,
				       .key = (enum sort_key)(slot / DPMON_DIR_MAX),
				       .dir = (enum dpmon_dir)(slot % DPMON_DIR_MAX)};

		if (dpmon_host_order_built(prev, slot))
			(void)dpmon_host_order_get(next, order_slot(&q), host_key, &q);
	}
}

int
api_ep_hosts(struct request *r, const char *rest, size_t n)
{
	const struct dpmon_snapshot *s = r->snap;
	const struct dpmon_host_order *order;
	struct host_query q;
	const uint32_t *page;
	uint32_t total = 0, n_page, cap, *idx = NULL;
	struct xbuf t = {0};
	int rc;

	(void)rest;
	(void)n;
	if ((rc = parse_host_query(r, &q)) != 0)
		return rc;
	order = dpmon_host_order_get(s, order_slot(&q), host_key, &q);
	if (order != NULL) {
		page = order->idx;
		total = order->n_hosts;
		if (q.subnet >= 0) {
			page = order->by_subnet + order->sub_start[q.subnet];
			total = order->sub_start[q.subnet + 1] - order->sub_start[q.subnet];
		}
		n_page = q.limit < total ? q.limit : total;
	} else { /* no memory for the order: one pass with a bounded heap */
		cap = q.limit < s->n_hosts ? q.limit : s->n_hosts;
		idx = malloc((cap ? cap : 1) * sizeof(*idx));
		if (idx == NULL)
			return -ENOMEM;
		n_page = dpmon_top_hosts_by(s, q.subnet, cap, ranks_before, &q, idx, &total);
		page = idx;
	}
	xbuf_puts(&t, "{\"hosts\":");
	array_text(&t, s, page, n_page, host_at_json);
	free(idx);
	xbuf_printf(&t, ",\"total\":%" PRIu32 ",\"snapshot_seq\":%" PRIu64 "}", total, s->seq);
	return api_reply_text(r, 200, &t);
}

/* ------------------------------------------------------------------------
 * History.
 * --------------------------------------------------------------------- */

static json_t *
hist_rate_json(const struct dpmon_hist_rate *x)
{
	return json_pack("{s:f,s:f}", "pps", dpmon_finite_or_zero(x->pps), "bps",
			 dpmon_finite_or_zero(x->bps));
}

/* One history point: its totals and subnets' pps and bps. */
static json_t *
hist_point_json(const struct dpmon_hist_point *p)
{
	json_t *tot = json_object(), *subs = json_array();

	for (int t = 0; tot != NULL && t < DPMON_TOTAL_MAX; t++)
		if (json_object_set_new(tot, dpmon_total_name((enum dpmon_total)t),
					hist_rate_json(&p->totals[t])) != 0) {
			json_decref(tot);
			tot = NULL;
		}
	for (uint32_t i = 0; subs != NULL && i < p->n_subnets; i++)
		if (json_array_append_new(
			    subs,
			    json_pack(
				    "{s:o,s:o}", "ingress",
				    hist_rate_json(&p->sub[i * DPMON_DIR_MAX + DPMON_DIR_INGRESS]),
				    "egress",
				    hist_rate_json(
					    &p->sub[i * DPMON_DIR_MAX + DPMON_DIR_EGRESS]))) != 0) {
			json_decref(subs);
			subs = NULL;
		}
	return json_pack("{s:I,s:f,s:f,s:o,s:o}", "seq", (json_int_t)p->seq, "uptime_s",
			 dpmon_finite_or_zero(p->uptime_s), "interval_s",
			 dpmon_finite_or_zero(p->interval_s), "totals", tot, "subnets", subs);
}

/* History point @p i of @p s (item_json_fn). */
static json_t *
hist_json(const struct dpmon_snapshot *s, uint32_t i)
{
	return hist_point_json(s->history[i]);
}

/* The last merges' rates of the totals and subnets, oldest first; written
 * one point at a time (struct xbuf). */
int
api_ep_history(struct request *r, const char *rest, size_t n)
{
	const struct dpmon_snapshot *s = r->snap;
	json_t *prefixes = json_array();
	char p[DPMON_PREFIX_STRLEN];
	struct xbuf t = {0};

	(void)rest;
	(void)n;
	for (uint32_t i = 0; prefixes != NULL && i < s->n_subnets; i++)
		if (json_array_append_new(prefixes,
					  json_string(dpmon_prefix_format(&s->subnets[i].prefix, p,
									  sizeof(p)))) != 0) {
			json_decref(prefixes);
			prefixes = NULL;
		}
	xbuf_printf(&t, "{\"snapshot_seq\":%" PRIu64 ",\"interval_ms\":%d,\"subnets\":", s->seq,
		    (int)s->interval_ms);
	api_text_json(&t, prefixes);
	xbuf_puts(&t, ",\"points\":");
	array_text(&t, s, NULL, s->n_history, hist_json);
	xbuf_puts(&t, "}");
	return api_reply_text(r, 200, &t);
}

/* ------------------------------------------------------------------------
 * Alerts.
 * --------------------------------------------------------------------- */

/* Filters of GET /api/v1/alerts. */
struct alert_query {
	int state; /* 0 any, 1 active, 2 ended */
	bool by_addr;
	struct dpmon_addr addr;
	unsigned addr_len; /* bits of its family: a whole address, or a host prefix's */
	int dir;           /* -1 any */
	int type;          /* -1 any */
	int target;        /* -1 any */
	uint32_t limit;
};

/* The attack type named @p v, or -1. */
static int
attack_index(const char *v)
{
	for (int t = 0; t < DPMON_ATTACK_MAX; t++)
		if (strcmp(dpmon_attack_name(t), v) == 0)
			return t;
	return -1;
}

/* 400 for type=@p v, which names no attack type. */
static int
invalid_type(struct request *r, const char *v)
{
	const char *names[DPMON_ATTACK_MAX];

	for (int t = 0; t < DPMON_ATTACK_MAX; t++)
		names[t] = dpmon_attack_name(t);
	return invalid_choice(r, "type", v, names, DPMON_ATTACK_MAX);
}

/* The filters of GET /api/v1/alerts: state, address, direction, type,
 * target, limit, in this order (the first bad one answers 400). */
static int
parse_alert_query(struct request *r, struct alert_query *q)
{
	char e[ECHO_BUF];
	const char *v;
	int rc;

	*q = (struct alert_query){
		.state = 0, .dir = -1, .type = -1, .target = -1, .limit = HOSTS_LIMIT_DEFAULT};
	if ((v = api_arg_value(r, "state")) != NULL &&
	    (q->state = name_index(state_names, v) + 1) == 0)
		return invalid_choice(r, "state", v, state_names,
				      (int)(sizeof(state_names) / sizeof(state_names[0])) - 1);
	if ((v = api_arg_value(r, "address")) != NULL) {
		struct dpmon_prefix p;
		const char *why;

		if (strchr(v, '/') != NULL) {
			if (dpmon_prefix_parse(v, &p, &why) != 0)
				return api_reply_error(r, 400, "invalid address '%s': %s",
						       api_echo(v, strlen(v), e), why);
			if (p.family == 6 && dpmon_addr_is_v4(&p.addr))
				return api_reply_error(r, 400,
						       "invalid address '%s': an IPv6 prefix "
						       "inside ::ffff:0:0/96 is no host",
						       api_echo(v, strlen(v), e));
			q->addr = p.addr;
			q->addr_len = p.depth;
		} else {
			if ((rc = addr_arg(r, v, strlen(v), &q->addr)) != 0)
				return rc;
			q->addr_len = dpmon_family_bits(dpmon_addr_is_v4(&q->addr) ? 4 : 6);
		}
		q->by_addr = true;
	}
	if ((v = api_arg_value(r, "direction")) != NULL && (q->dir = name_index(dir_names, v)) < 0)
		return invalid_choice(r, "direction", v, dir_names, DPMON_DIR_MAX);
	if ((v = api_arg_value(r, "type")) != NULL && (q->type = attack_index(v)) < 0)
		return invalid_type(r, v);
	if ((v = api_arg_value(r, "target")) != NULL &&
	    (q->target = name_index(target_names, v)) < 0)
		return invalid_choice(r, "target", v, target_names, DPMON_TARGET_MAX);
	if ((v = api_arg_value(r, "limit")) != NULL && !parse_limit(v, &q->limit))
		return api_reply_error(r, 400, "invalid limit '%s': expected an integer 1..%d",
				       api_echo(v, strlen(v), e), HOSTS_LIMIT_MAX);
	return 0;
}

/* Is @p a's host the one @p q names: its prefix, or an address inside it? */
static bool
alert_host_matches(const struct dpmon_alert *a, const struct alert_query *q)
{
	unsigned len = dpmon_alert_host_len(a);
	struct dpmon_addr m = q->addr;

	if (dpmon_addr_is_v4(&m) != dpmon_addr_is_v4(&a->addr))
		return false;
	if (q->addr_len < dpmon_family_bits(dpmon_addr_is_v4(&m) ? 4 : 6))
		return q->addr_len == len && dpmon_addr_eq(&m, &a->addr);
	dpmon_addr_mask(&m, dpmon_mapped_bits(dpmon_addr_is_v4(&m) ? 4 : 6, len));
	return dpmon_addr_eq(&m, &a->addr);
}

static bool
alert_matches(const struct dpmon_alert *a, const struct alert_query *q)
{
	return (q->state == 0 || (q->state == 1) == (a->end_unix_s == 0)) &&
	       (!q->by_addr || alert_host_matches(a, q)) && (q->dir < 0 || (int)a->dir == q->dir) &&
	       (q->type < 0 || (int)a->type == q->type) &&
	       (q->target < 0 || (int)a->target == q->target);
}

/* Active and recent alerts, newest first, filtered (docs/api.md). */
int
api_ep_alerts(struct request *r, const char *rest, size_t n)
{
	const struct dpmon_snapshot *s = r->snap;
	struct alert_query q;
	uint32_t total = 0;
	json_t *list;
	int rc;

	(void)rest;
	(void)n;
	if ((rc = parse_alert_query(r, &q)) != 0)
		return rc;
	list = json_array();
	for (uint32_t i = 0; list != NULL && i < s->n_alerts; i++) {
		if (!alert_matches(s->alerts[i], &q))
			continue;
		if (total++ < q.limit &&
		    json_array_append_new(list, dpmon_alert_json(s->alerts[i], s->alerts_unix_s)) !=
			    0) {
			json_decref(list);
			list = NULL;
		}
	}
	return api_reply(r, 200,
			 json_pack("{s:o,s:I,s:I,s:I,s:I}", "alerts", list, "total",
				   (json_int_t)total, "active", (json_int_t)s->alerts_active,
				   "started", (json_int_t)s->alerts_started, "snapshot_seq",
				   (json_int_t)s->seq));
}

/* One alert by id: 400 for a malformed id, 404 when not listed (any more). */
int
api_ep_alert(struct request *r, const char *rest, size_t n)
{
	const struct dpmon_snapshot *s = r->snap;
	char e[ECHO_BUF];
	uint64_t id = 0;

	for (size_t i = 0; i < n; i++) {
		if (rest[i] < '0' || rest[i] > '9' || i >= 19)
			return api_reply_error(r, 400,
					       "invalid alert id '%s': expected a positive integer",
					       api_echo(rest, n, e));
		id = id * 10 + (uint64_t)(rest[i] - '0');
	}
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (s->alerts[i]->id == id)
			return api_reply(r, 200, dpmon_alert_json(s->alerts[i], s->alerts_unix_s));
	return api_reply_error(r, 404, "alert %llu is neither active nor among the recent ones",
			       (unsigned long long)id);
}
