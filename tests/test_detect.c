/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_detect.c — unit tests of lib/detect/detect.c and the alerts API on
 * hand-built snapshots (docs/detection.md): global thresholds for every
 * direction and metric, hostgroup precedence by longest-prefix match (a
 * hostgroup's thresholds replace the global ones entirely), enabled:false,
 * the whitelist, N consecutive intervals, the hold time (injected uptime),
 * attack types, peaks, ids, the bound of the recent list, shared alert
 * objects, GET /api/v1/alerts and /metrics. Ends with an evaluation-time
 * printout on many hosts (reported, never asserted).
 *
 * Values are set directly in the snapshot (the averages detection reads,
 * and the interval rates the attack type reads), so every expectation is
 * exact.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "api_call.h"
#include "config.h"
#include "detect.h"
#include "prom.h"
#include "snapshot.h"
#include "test_eal.h"

#define T0 1700000000.0 /* wall clock of the first run */

/* ------------------------------------------------------------------------
 * Building snapshots.
 * --------------------------------------------------------------------- */

/* A snapshot of @p n hosts at @p text[i] (sorted), all values zero. */
static struct dpmon_snapshot *
snap(uint64_t seq, double uptime_s, const char *const *text, uint32_t n)
{
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(0, 0, 0, n);

	REQUIRE(s != NULL);
	s->seq = seq;
	s->uptime_s = uptime_s;
	s->interval_s = 1.0;
	for (uint32_t i = 0; i < n; i++) {
		REQUIRE(dpmon_addr_parse(text[i], &s->hosts[i].addr) == 0);
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			s->hosts[i].dir[d].flows = -1;
		if (i > 0)
			REQUIRE(dpmon_addr_cmp(&s->hosts[i - 1].addr, &s->hosts[i].addr) < 0);
	}
	return s;
}

/* Set metric @p m of host @p i, direction @p d, to @p v (its averaged value). */
static void
set_metric(struct dpmon_snapshot *s, uint32_t i, int d, int m, double v)
{
	struct dpmon_dir_stats *x = &s->hosts[i].dir[d];

	switch (m) {
	case DPMON_METRIC_PPS:
		x->avg_pps = v;
		break;
	case DPMON_METRIC_BPS:
		x->avg_bps = v;
		break;
	case DPMON_METRIC_FLOWS:
		x->flows = v;
		break;
	case DPMON_METRIC_TCP_PPS:
		x->avg_proto_pps[DPMON_PROTO_TCP] = v;
		break;
	case DPMON_METRIC_TCP_BPS:
		x->avg_proto_bps[DPMON_PROTO_TCP] = v;
		break;
	case DPMON_METRIC_UDP_PPS:
		x->avg_proto_pps[DPMON_PROTO_UDP] = v;
		break;
	case DPMON_METRIC_UDP_BPS:
		x->avg_proto_bps[DPMON_PROTO_UDP] = v;
		break;
	case DPMON_METRIC_ICMP_PPS:
		x->avg_proto_pps[DPMON_PROTO_ICMP] = v;
		break;
	case DPMON_METRIC_ICMP_BPS:
		x->avg_proto_bps[DPMON_PROTO_ICMP] = v;
		break;
	case DPMON_METRIC_TCP_SYN_PPS:
		x->avg_flag_pps[DPMON_FLAG_SYN] = v;
		break;
	case DPMON_METRIC_FRAGMENTS_PPS:
		x->avg_flag_pps[DPMON_FLAG_FRAG] = v;
		break;
	default:
		FAIL("metric %d", m);
	}
}

/* Interval rates of host @p i, direction @p d: total, UDP, TCP, ICMP, SYN, fragment pps. */
static void
set_mix(struct dpmon_snapshot *s, uint32_t i, int d, double total, double udp, double tcp,
	double icmp, double syn, double frag)
{
	struct dpmon_dir_stats *x = &s->hosts[i].dir[d];

	x->total.pps = total;
	x->proto[DPMON_PROTO_UDP].pps = udp;
	x->proto[DPMON_PROTO_TCP].pps = tcp;
	x->proto[DPMON_PROTO_ICMP].pps = icmp;
	x->proto[DPMON_PROTO_OTHER].pps = total - udp - tcp - icmp;
	x->flag[DPMON_FLAG_SYN].pps = syn;
	x->flag[DPMON_FLAG_FRAG].pps = frag;
}

static struct dpmon_config
load(const char *json)
{
	struct dpmon_config cfg;
	char text[8192];

	snprintf(text, sizeof(text),
		 "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		 " \"detection\": %s}",
		 json);
	if (dpmon_config_parse(text, "test", &cfg, stderr) != 0)
		FAIL("bad test configuration %s", json);
	return cfg;
}

/* Run @p d on @p s; the caller frees @p s. */
static void
run(struct dpmon_detect *d, struct dpmon_snapshot *s, double now)
{
	REQUIRE(dpmon_detect_run(d, s, now) == 0);
}

/* The alert of @p s on host @p addr in direction @p dir (active or not), or NULL. */
static const struct dpmon_alert *
find(const struct dpmon_snapshot *s, const char *addr, int dir)
{
	struct dpmon_addr a;

	REQUIRE(dpmon_addr_parse(addr, &a) == 0);
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (dpmon_addr_cmp(&s->alerts[i]->addr, &a) == 0 && (int)s->alerts[i]->dir == dir)
			return s->alerts[i];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Cases.
 * --------------------------------------------------------------------- */

/* Every metric in every direction fires alone, at value > limit, not at = limit. */
static void
test_each_metric(void)
{
	for (int dir = 0; dir < DPMON_DIR_MAX; dir++) {
		for (int m = 0; m < DPMON_METRIC_MAX; m++) {
			static const char *const h[] = {"10.0.0.1", "10.0.0.2"};
			struct dpmon_config cfg = load("{}");
			struct dpmon_snapshot *s = snap(1, 1, h, 2);
			const struct dpmon_alert *a;
			struct dpmon_detect *d;

			cfg.detect.enabled = true;
			cfg.detect.thresholds.limit[dir][m] = 10;
			d = dpmon_detect_create(&cfg.detect, NULL, NULL);
			REQUIRE(d != NULL);
			set_metric(s, 0, dir, m, 10.5);  /* not truncated: 10.5 > 10 */
			set_metric(s, 1, dir, m, 10);    /* at the limit: not above */
			set_metric(s, 0, !dir, m, 1000); /* the other direction: not watched */
			run(d, s, T0);
			CHECK(s->n_alerts == 1 && s->alerts_active == 1 && s->alerts_started == 1);
			a = find(s, "10.0.0.1", dir);
			REQUIRE(a != NULL);
			CHECK(a->id == 1 && a->metric == (enum dpmon_metric)m && a->value == 10.5 &&
			      a->threshold == 10 && a->end_unix_s == 0 && a->start_unix_s == T0);
			CHECK(a->hostgroup[0] == '\0' && !a->ban);
			CHECK(find(s, "10.0.0.1", !dir) == NULL &&
			      find(s, "10.0.0.2", dir) == NULL);
			dpmon_snapshot_free(s);
			dpmon_detect_free(d);
			dpmon_config_free(&cfg);
		}
	}
}

/* The metric that fired is the one above its limit by the largest factor; flows -1 never fires. */
static void
test_fired_metric(void)
{
	static const char *const h[] = {"10.0.0.1", "10.0.0.2"};
	struct dpmon_config cfg =
		load("{\"thresholds\": {\"ingress\": {\"pps\": 1000, \"bps\": 1e6,"
		     " \"flows\": 1}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1, h, 2);
	const struct dpmon_alert *a;

	REQUIRE(d != NULL);
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 3000); /* x3 */
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_BPS, 5e6);  /* x5 */
	s->hosts[1].dir[DPMON_DIR_INGRESS].flows = -1;               /* not measured */
	run(d, s, T0);
	a = find(s, "10.0.0.1", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(a->metric == DPMON_METRIC_BPS && a->value == 5e6 && a->threshold == 1e6);
	CHECK(a->peak[DPMON_METRIC_PPS] == 3000 && a->peak[DPMON_METRIC_FLOWS] == -1);
	CHECK(find(s, "10.0.0.2", DPMON_DIR_INGRESS) == NULL);
	CHECK(s->n_alerts == 1);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/*
 * Hostgroups: longest-prefix match on the host address, independent of
 * the monitored subnets; the group's thresholds replace the global ones
 * entirely (a group with a higher pps limit and no tcp_syn_pps limit is
 * not caught by the global tcp_syn_pps); enabled:false; the whitelist;
 * a group without "thresholds" has the global ones; ban inherited.
 */
static void
test_hostgroups(void)
{
	static const char *const h[] = {
		"10.0.0.5",    /* group "host" (/32 inside "lan" /24 inside "all" /8): disabled */
		"10.0.0.6",    /* group "lan": pps 100000 only */
		"10.0.0.7",    /* whitelisted (also in "lan") */
		"10.9.0.1",    /* group "all": no thresholds key = the global ones */
		"192.0.2.1",   /* no group: global */
		"2001:db8::1", /* group "v6": pps 10 */
		"2001:db9::1", /* no group */
	};
	struct dpmon_config cfg =
		load("{\"ban\": true, \"thresholds\": {\"ingress\": {\"pps\": 1000, "
		     "\"tcp_syn_pps\": 100}},"
		     " \"hostgroups\": ["
		     "  {\"name\": \"all\", \"prefixes\": [\"10.0.0.0/8\"]},"
		     "  {\"name\": \"lan\", \"prefixes\": [\"10.0.0.0/24\"], \"ban\": false,"
		     "   \"thresholds\": {\"ingress\": {\"pps\": 100000}}},"
		     "  {\"name\": \"host\", \"prefixes\": [\"10.0.0.5/32\"], \"enabled\": false},"
		     "  {\"name\": \"v6\", \"prefixes\": [\"2001:db8::/32\"],"
		     "   \"thresholds\": {\"ingress\": {\"pps\": 10}}}],"
		     " \"whitelist\": [\"10.0.0.7/32\"]}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1, h, 7);
	const struct dpmon_alert *a;

	REQUIRE(d != NULL);
	for (uint32_t i = 0; i < 7; i++) { /* a SYN flood of 5000 pps everywhere */
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 5000);
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_TCP_PPS, 5000);
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_TCP_SYN_PPS, 5000);
		set_mix(s, i, DPMON_DIR_INGRESS, 5000, 0, 5000, 0, 5000, 0);
	}
	run(d, s, T0);
	CHECK(find(s, "10.0.0.5", DPMON_DIR_INGRESS) == NULL); /* disabled */
	CHECK(find(s, "10.0.0.6", DPMON_DIR_INGRESS) == NULL); /* group limit not reached */
	CHECK(find(s, "10.0.0.7", DPMON_DIR_INGRESS) == NULL); /* whitelisted */
	a = find(s, "10.9.0.1", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(strcmp(a->hostgroup, "all") == 0 && a->ban && a->metric == DPMON_METRIC_TCP_SYN_PPS &&
	      a->threshold == 100 && a->type == DPMON_ATTACK_SYN_FLOOD);
	a = find(s, "192.0.2.1", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(a->hostgroup[0] == '\0' && a->ban && a->metric == DPMON_METRIC_TCP_SYN_PPS);
	a = find(s, "2001:db8::1", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(strcmp(a->hostgroup, "v6") == 0 && a->metric == DPMON_METRIC_PPS &&
	      a->threshold == 10);
	a = find(s, "2001:db9::1", DPMON_DIR_INGRESS);
	CHECK(a != NULL && a->metric == DPMON_METRIC_TCP_SYN_PPS);
	CHECK(s->n_alerts == 4 && s->alerts_active == 4);
	dpmon_snapshot_free(s);

	/* The /24 group fires above its own limit, as group "lan", not banning. */
	s = snap(2, 2, h, 7);
	set_metric(s, 1, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 200000);
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 200000);
	run(d, s, T0 + 1);
	a = find(s, "10.0.0.6", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(strcmp(a->hostgroup, "lan") == 0 && !a->ban && a->threshold == 100000);
	CHECK(find(s, "10.0.0.5", DPMON_DIR_INGRESS) == NULL);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* Longest-prefix match over nested prefixes of every length, /0 and the last address included. */
static void
test_longest_prefix(void)
{
	static const char *const h[] = {
		"::1", /* sorts before every IPv4-mapped address */
		"9.255.255.255",
		"10.0.0.0",
		"10.1.1.1",
		"10.1.2.5",
		"10.1.2.255",
		"10.1.3.0",
		"10.2.0.1",
		"10.255.255.255",
		"11.0.0.0",
		"255.255.255.254",
		"255.255.255.255",
		"2001:db8::1",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	};
	static const char *const want[] = {
		"G", "A", "B", "C", "D", "E", "C", "H", "B", "A", "A", "F", "I", "J",
	};
	struct dpmon_config cfg =
		load("{\"thresholds\": {\"ingress\": {\"pps\": 1}}, \"hostgroups\": ["
		     " {\"name\": \"D\", \"prefixes\": [\"10.1.2.0/24\"]},"
		     " {\"name\": \"A\", \"prefixes\": [\"0.0.0.0/0\"]},"
		     " {\"name\": \"E\", \"prefixes\": [\"10.1.2.255/32\"]},"
		     " {\"name\": \"C\", \"prefixes\": [\"10.1.0.0/16\"]},"
		     " {\"name\": \"B\", \"prefixes\": [\"10.0.0.0/8\"]},"
		     " {\"name\": \"F\", \"prefixes\": [\"255.255.255.255/32\"]},"
		     " {\"name\": \"G\", \"prefixes\": [\"::/0\"]},"
		     " {\"name\": \"H\", \"prefixes\": [\"10.2.0.0/16\"]},"
		     " {\"name\": \"I\", \"prefixes\": [\"2001:db8::/32\", \"2001:db8::/127\"]},"
		     " {\"name\": \"J\", \"prefixes\": [\"ffff::/16\"]}]}");
	struct dpmon_detect *d;
	struct dpmon_snapshot *s;
	uint32_t n = sizeof(h) / sizeof(h[0]);

	/* Two prefixes of one group, one inside the other: still "I". */
	d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	REQUIRE(d != NULL);
	s = snap(1, 1, h, n);
	for (uint32_t i = 0; i < n; i++)
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 2);
	run(d, s, T0);
	CHECK(s->n_alerts == n);
	for (uint32_t i = 0; i < n; i++) {
		const struct dpmon_alert *a = find(s, h[i], DPMON_DIR_INGRESS);

		REQUIRE(a != NULL);
		if (strcmp(a->hostgroup, want[i]) != 0)
			fprintf(stderr, "host %s: hostgroup '%s', expected '%s'\n", h[i],
				a->hostgroup, want[i]);
		CHECK(strcmp(a->hostgroup, want[i]) == 0);
	}
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* start_intervals consecutive intervals above start an alert; one below restarts the count. */
static void
test_consecutive(void)
{
	static const char *const h[] = {"10.0.0.1"};
	static const int above[] = {1, 1, 0, 1, 1, 1};
	struct dpmon_config cfg =
		load("{\"start_intervals\": 3, \"thresholds\": {\"egress\": {\"pps\": 10}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);

	REQUIRE(d != NULL);
	for (int i = 0; i < 6; i++) {
		struct dpmon_snapshot *s = snap((uint64_t)i + 1, i + 1, h, 1);

		set_metric(s, 0, DPMON_DIR_EGRESS, DPMON_METRIC_PPS, above[i] ? 11 : 9);
		run(d, s, T0 + i);
		CHECK(s->alerts_active == (i == 5));
		CHECK(dpmon_detect_tracked(d) == (uint32_t)above[i]);
		if (i == 5) {
			const struct dpmon_alert *a = find(s, "10.0.0.1", DPMON_DIR_EGRESS);

			REQUIRE(a != NULL);
			CHECK(a->start_unix_s == T0 + 5 && a->dir == DPMON_DIR_EGRESS);
		}
		dpmon_snapshot_free(s);
	}
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/*
 * Hold time: an alert ends once all its metrics stayed below for hold_s
 * seconds of uptime (measured intervals, 1.5 s here); peaks follow the
 * highest values; the ended alert stays listed as recent, the same object
 * in every later snapshot.
 */
static void
test_hold_and_peaks(void)
{
	static const char *const h[] = {"10.0.0.1"};
	/* uptime, pps, bps */
	static const double steps[][3] = {
		{1.5, 20, 100}, {3.0, 50, 900}, {4.5, 30, 2000}, {6.0, 5, 0},  {7.5, 20, 0},
		{9.0, 5, 0},    {10.5, 5, 0},   {12.0, 5, 0},    {13.5, 5, 0}, {15.0, 5, 0},
	};
	struct dpmon_config cfg =
		load("{\"hold_s\": 6, \"thresholds\": {\"ingress\": {\"pps\": 10}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	const struct dpmon_alert *ended = NULL;

	REQUIRE(d != NULL);
	for (int i = 0; i < 10; i++) {
		struct dpmon_snapshot *s = snap((uint64_t)i + 1, steps[i][0], h, 1);
		const struct dpmon_alert *a;

		set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, steps[i][1]);
		set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_BPS, steps[i][2]);
		run(d, s, T0 + 100 * i);
		a = find(s, "10.0.0.1", DPMON_DIR_INGRESS);
		REQUIRE(a != NULL && s->n_alerts == 1 && a->id == 1);
		/* Last above at 7.5 s: still active at 12.0 (4.5 s), ended at 13.5 (6 s). */
		CHECK(s->alerts_active == (i < 8));
		CHECK((a->end_unix_s == 0) == (i < 8));
		CHECK(a->peak[DPMON_METRIC_PPS] == (i == 0 ? 20 : 50));
		CHECK(a->peak[DPMON_METRIC_BPS] == (i == 0 ? 100 : i == 1 ? 900 : 2000));
		CHECK(a->value == 20 && a->start_unix_s == T0);
		if (i == 8) {
			CHECK(a->end_unix_s == T0 + 800);
			ended = a;
		}
		if (i == 9)
			CHECK(a == ended); /* shared, not copied */
		CHECK(s->alerts_started == 1);
		dpmon_snapshot_free(s);
	}
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/*
 * Packets from ignored sources (the snapshot's ignored hosts) are taken out
 * of a host's ingress before the limits see it, averages and interval
 * rates alike; its egress and a host without such packets are compared
 * whole.
 */
static void
test_ignored_sources(void)
{
	static const char *const h[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3"};
	struct dpmon_config cfg = load("{\"thresholds\": {\"ingress\": {\"pps\": 1000, "
				       "\"udp_pps\": 800}, \"egress\": {\"pps\": 1000}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1.0, h, 3);
	const struct dpmon_alert *a;

	REQUIRE(d != NULL);
	for (uint32_t i = 0; i < 3; i++) {
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 5000);
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_UDP_PPS, 4800);
		set_mix(s, i, DPMON_DIR_INGRESS, 5000, 4800, 200, 0, 0, 0);
	}
	set_metric(s, 0, DPMON_DIR_EGRESS, DPMON_METRIC_PPS, 5000);
	s->ignored = calloc(2, sizeof(*s->ignored));
	REQUIRE(s->ignored != NULL);
	s->n_ignored = 2;
	/* 10.0.0.1: 4500 of its 5000 pps from ignored sources, all UDP. */
	REQUIRE(dpmon_addr_parse("10.0.0.1", &s->ignored[0].addr) == 0);
	s->ignored[0].in.avg_pps = 4500;
	s->ignored[0].in.avg_proto_pps[DPMON_PROTO_UDP] = 4500;
	s->ignored[0].in.total.pps = 4500;
	s->ignored[0].in.proto[DPMON_PROTO_UDP].pps = 4500;
	/* 10.0.0.2: 3000 of them. */
	REQUIRE(dpmon_addr_parse("10.0.0.2", &s->ignored[1].addr) == 0);
	s->ignored[1].in.avg_pps = 3000;
	s->ignored[1].in.avg_proto_pps[DPMON_PROTO_UDP] = 3000;
	s->ignored[1].in.total.pps = 3000;
	s->ignored[1].in.proto[DPMON_PROTO_UDP].pps = 3000;
	run(d, s, T0);
	/* 500 pps and 300 UDP pps left: below both limits. */
	CHECK(find(s, "10.0.0.1", DPMON_DIR_INGRESS) == NULL);
	/* Its egress is its own: 5000 pps. */
	a = find(s, "10.0.0.1", DPMON_DIR_EGRESS);
	REQUIRE(a != NULL);
	CHECK(a->metric == DPMON_METRIC_PPS && a->value == 5000);
	/* 2000 pps (2 x its limit) and 1800 UDP pps (2.25 x): UDP fires. */
	a = find(s, "10.0.0.2", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(a->metric == DPMON_METRIC_UDP_PPS && a->value == 1800);
	CHECK(a->peak[DPMON_METRIC_PPS] == 2000 && a->peak[DPMON_METRIC_UDP_PPS] == 1800);
	/* 200 TCP and 1800 UDP of 2000 pps: 90 % is not more than 90 %. */
	CHECK(a->type == DPMON_ATTACK_UNKNOWN);
	/* Nothing ignored: compared whole. */
	a = find(s, "10.0.0.3", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(a->metric == DPMON_METRIC_UDP_PPS && a->value == 4800);
	CHECK(a->type == DPMON_ATTACK_UDP_FLOOD);
	CHECK(s->alerts_active == 3);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* hold_s 0: the first interval below ends it; then a new alert gets a new id. */
static void
test_ids_and_recent_bound(void)
{
	static const char *const h[] = {"10.0.0.1"};
	struct dpmon_config cfg = load("{\"hold_s\": 0, \"recent_alerts\": 2,"
				       " \"thresholds\": {\"ingress\": {\"udp_pps\": 10}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s;

	REQUIRE(d != NULL);
	for (int i = 0; i < 8; i++) { /* above, below, above, below, ... */
		s = snap((uint64_t)i + 1, i + 1, h, 1);
		set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_UDP_PPS, i % 2 == 0 ? 100 : 0);
		run(d, s, T0 + i);
		CHECK(s->alerts_started == (uint64_t)(i / 2 + 1));
		CHECK(s->alerts_active == (i % 2 == 0));
		/* Newest first: the active one (if any), then at most 2 ended. */
		if (i == 6) {
			REQUIRE(s->n_alerts == 3);
			CHECK(s->alerts[0]->id == 4 && s->alerts[0]->end_unix_s == 0);
			CHECK(s->alerts[1]->id == 3 && s->alerts[1]->end_unix_s == T0 + 5);
			CHECK(s->alerts[2]->id == 2 && s->alerts[2]->end_unix_s == T0 + 3);
		}
		if (i == 7) {
			REQUIRE(s->n_alerts == 2);
			CHECK(s->alerts[0]->id == 4 && s->alerts[0]->end_unix_s == T0 + 7);
			CHECK(s->alerts[1]->id == 3);
		}
		dpmon_snapshot_free(s);
	}
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* Attack types from the shares of the interval's packets (> 90 %). */
static void
test_attack_types(void)
{
	static const char *const h[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4",
					"10.0.0.5", "10.0.0.6", "10.0.0.7", "10.0.0.8"};
	/* total, udp, tcp, icmp, syn, frag, expected */
	static const struct {
		double v[6];
		enum dpmon_attack want;
	} mix[] = {
		{{100, 0, 100, 0, 95, 0}, DPMON_ATTACK_SYN_FLOOD},
		{{100, 95, 0, 0, 0, 91}, DPMON_ATTACK_FRAGMENT_FLOOD},
		{{100, 91, 9, 0, 0, 0}, DPMON_ATTACK_UDP_FLOOD},
		{{100, 0, 0, 99, 0, 0}, DPMON_ATTACK_ICMP_FLOOD},
		{{100, 0, 100, 0, 50, 0}, DPMON_ATTACK_TCP_FLOOD},
		{{100, 90, 10, 0, 0, 0}, DPMON_ATTACK_UNKNOWN}, /* exactly 90 %: not more */
		{{100, 50, 50, 0, 0, 0}, DPMON_ATTACK_UNKNOWN},
		{{0, 0, 0, 0, 0, 0}, DPMON_ATTACK_UNKNOWN}, /* no packets this interval */
	};
	struct dpmon_config cfg = load("{\"thresholds\": {\"ingress\": {\"pps\": 10}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1, h, 8);

	REQUIRE(d != NULL);
	for (uint32_t i = 0; i < 8; i++) {
		set_metric(s, i, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 11);
		set_mix(s, i, DPMON_DIR_INGRESS, mix[i].v[0], mix[i].v[1], mix[i].v[2], mix[i].v[3],
			mix[i].v[4], mix[i].v[5]);
		/* The other direction's mix never counts. */
		set_mix(s, i, DPMON_DIR_EGRESS, 1000, 1000, 0, 0, 0, 0);
	}
	run(d, s, T0);
	for (uint32_t i = 0; i < 8; i++) {
		const struct dpmon_alert *a = find(s, h[i], DPMON_DIR_INGRESS);

		REQUIRE(a != NULL);
		if (a->type != mix[i].want)
			fprintf(stderr, "host %s: type %s, expected %s\n", h[i],
				dpmon_attack_name(a->type), dpmon_attack_name(mix[i].want));
		CHECK(a->type == mix[i].want);
	}
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* detection.enabled false: no evaluation, an empty list. */
static void
test_disabled(void)
{
	static const char *const h[] = {"10.0.0.1"};
	struct dpmon_config cfg =
		load("{\"enabled\": false, \"thresholds\": {\"ingress\": {\"pps\": 1}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1, h, 1);

	REQUIRE(d != NULL);
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 100);
	run(d, s, T0);
	CHECK(s->n_alerts == 0 && s->alerts_active == 0 && s->alerts_started == 0);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/*
 * A reload: the new thresholds and hostgroups apply from the next run, the
 * detector no longer needs the configuration it was given (freed here),
 * an active alert goes on and ends under the new settings, and a smaller
 * recent_alerts keeps the newest ended alerts.
 */
static void
test_reconfigure(void)
{
	static const char *const h[] = {"10.0.0.1", "10.0.0.2"};
	struct dpmon_config cfg = load("{\"hold_s\": 0, \"recent_alerts\": 4,"
				       " \"thresholds\": {\"ingress\": {\"pps\": 10}}}");
	struct dpmon_config next = load("{\"hold_s\": 0, \"recent_alerts\": 1,"
					" \"thresholds\": {\"ingress\": {\"pps\": 10}},"
					" \"hostgroups\": [{\"name\": \"quiet\","
					" \"prefixes\": [\"10.0.0.2/32\"], \"enabled\": false},"
					" {\"name\": \"big\", \"prefixes\": [\"10.0.0.1/32\"],"
					" \"thresholds\": {\"ingress\": {\"pps\": 1000}}}]}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s;
	int i = 0;

	REQUIRE(d != NULL);
	dpmon_config_free(&cfg);
	/* Two alerts that end, then both hosts above again: two active. */
	for (int k = 0; k < 3; k++, i++) {
		s = snap((uint64_t)i + 1, i + 1, h, 2);
		set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, k == 1 ? 0 : 100);
		set_metric(s, 1, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, k == 1 ? 0 : 100);
		run(d, s, T0 + i);
		if (k == 2)
			CHECK(s->alerts_active == 2 && s->n_alerts == 4);
		dpmon_snapshot_free(s);
	}
	REQUIRE(dpmon_detect_reconfigure(d, &next.detect) == 0);
	dpmon_config_free(&next);
	/* 100 pps: below "big"'s 1000 for .1, .2 in a disabled group: both
	 * alerts end (hold 0); only the newest ended alert is kept. */
	s = snap((uint64_t)i + 1, i + 1, h, 2);
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 100);
	set_metric(s, 1, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 100);
	run(d, s, T0 + i);
	CHECK(s->alerts_active == 0);
	REQUIRE(s->n_alerts == 1);
	CHECK(s->alerts[0]->id == 4 && s->alerts[0]->end_unix_s == T0 + i);
	dpmon_snapshot_free(s);
	i++;
	/* Above "big"'s limit: a new alert, in that hostgroup. */
	s = snap((uint64_t)i + 1, i + 1, h, 2);
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 2000);
	set_metric(s, 1, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 2000);
	run(d, s, T0 + i);
	CHECK(s->alerts_active == 1 && s->alerts_started == 5);
	CHECK(find(s, "10.0.0.1", DPMON_DIR_INGRESS) != NULL &&
	      strcmp(find(s, "10.0.0.1", DPMON_DIR_INGRESS)->hostgroup, "big") == 0 &&
	      find(s, "10.0.0.1", DPMON_DIR_INGRESS)->threshold == 1000);
	CHECK(find(s, "10.0.0.2", DPMON_DIR_INGRESS) == NULL ||
	      find(s, "10.0.0.2", DPMON_DIR_INGRESS)->end_unix_s != 0);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
}

/*
 * A reload that turns detection off (enabled false, or no threshold left):
 * the active alerts end at the next run, whatever hold_s, and no new one
 * starts (their blackholes are withdrawn by their end).
 */
static void
test_reconfigure_disabled(void)
{
	static const char *const h[] = {"10.0.0.1"};
	struct dpmon_config cfg =
		load("{\"hold_s\": 60, \"thresholds\": {\"ingress\": {\"pps\": 10}}}");
	struct dpmon_config off = load("{\"hold_s\": 60, \"enabled\": false,"
				       " \"thresholds\": {\"ingress\": {\"pps\": 10}}}");
	struct dpmon_config none = load("{\"hold_s\": 60}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s;

	REQUIRE(d != NULL);
	for (int k = 0; k < 2; k++) {
		s = snap(1 + 3 * k, 1 + 3 * k, h, 1);
		set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 100);
		run(d, s, T0 + 3 * k);
		CHECK(s->alerts_active == 1);
		dpmon_snapshot_free(s);
		REQUIRE(dpmon_detect_reconfigure(d, k == 0 ? &off.detect : &none.detect) == 0);
		for (int r = 1; r <= 2; r++) { /* still above: ended at once, none new */
			s = snap(1 + 3 * k + r, 1 + 3 * k + r, h, 1);
			set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 100);
			run(d, s, T0 + 3 * k + r);
			CHECK(s->alerts_active == 0 && s->alerts_started == (uint64_t)k + 1);
			REQUIRE(s->n_alerts == (uint32_t)k + 1);
			CHECK(s->alerts[0]->id == (uint64_t)k + 1 &&
			      s->alerts[0]->end_unix_s == T0 + 3 * k + 1);
			dpmon_snapshot_free(s);
		}
		REQUIRE(dpmon_detect_reconfigure(d, &cfg.detect) == 0);
	}
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
	dpmon_config_free(&off);
	dpmon_config_free(&none);
}

/* ------------------------------------------------------------------------
 * The API and /metrics on a snapshot with alerts.
 * --------------------------------------------------------------------- */

/* GET @p target (api_call.h); checks the status, returns the body. */
static json_t *
get(const struct dpmon_snapshot *s, const char *target, unsigned want_status)
{
	struct dpmon_api_response r;

	REQUIRE(api_call(s, "GET", target, &r) == 0);
	if (r.status != want_status)
		fprintf(stderr, "GET %s: %u, expected %u\n", target, r.status, want_status);
	CHECK(r.status == want_status);
	return r.body;
}

static long long
count_of(json_t *body)
{
	return (long long)json_array_size(json_object_get(body, "alerts"));
}

static void
test_api(void)
{
	static const char *const h[] = {"10.0.0.1", "10.0.0.2", "2001:db8::1"};
	struct dpmon_config cfg =
		load("{\"hold_s\": 0, \"thresholds\": {\"ingress\": {\"pps\": 10},"
		     " \"egress\": {\"udp_bps\": 8000}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s;
	json_t *b, *a;
	char *text = NULL;
	size_t len;

	REQUIRE(d != NULL);
	/* Interval 1: 10.0.0.1 ingress (alert 1) and 2001:db8::1 ingress (alert 2). */
	s = snap(1, 1, h, 3);
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 12.5);
	set_mix(s, 0, DPMON_DIR_INGRESS, 12.5, 12.5, 0, 0, 0, 0);
	set_metric(s, 2, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 20);
	run(d, s, T0);
	dpmon_snapshot_free(s);
	/* Interval 2: 10.0.0.1 ends; 10.0.0.2 egress starts (alert 3). */
	s = snap(2, 2, h, 3);
	set_metric(s, 1, DPMON_DIR_EGRESS, DPMON_METRIC_UDP_BPS, 16000);
	set_metric(s, 2, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 20);
	run(d, s, T0 + 1.5);

	b = get(s, "/api/v1/alerts", 200);
	CHECK(count_of(b) == 3);
	CHECK(json_integer_value(json_object_get(b, "total")) == 3);
	CHECK(json_integer_value(json_object_get(b, "active")) == 2);
	CHECK(json_integer_value(json_object_get(b, "started")) == 3);
	CHECK(json_integer_value(json_object_get(b, "snapshot_seq")) == 2);
	a = json_array_get(json_object_get(b, "alerts"), 0);
	CHECK(json_integer_value(json_object_get(a, "id")) == 3);
	CHECK(strcmp(json_string_value(json_object_get(a, "state")), "active") == 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "address")), "10.0.0.2") == 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "direction")), "egress") == 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "metric")), "udp_bps") == 0);
	CHECK(json_real_value(json_object_get(a, "value")) == 16000);
	CHECK(json_real_value(json_object_get(a, "threshold")) == 8000);
	CHECK(strcmp(json_string_value(json_object_get(a, "type")), "unknown") == 0);
	CHECK(json_is_null(json_object_get(a, "hostgroup")));
	CHECK(json_is_false(json_object_get(a, "ban")));
	CHECK(json_real_value(json_object_get(a, "start_unix_s")) == T0 + 1.5);
	CHECK(json_is_null(json_object_get(a, "end_unix_s")));
	CHECK(json_real_value(json_object_get(a, "duration_s")) == 0);
	CHECK(json_is_null(json_object_get(a, "sample")));
	CHECK(json_real_value(json_object_get(json_object_get(a, "peak"), "udp_bps")) == 16000);
	CHECK(json_is_null(json_object_get(json_object_get(a, "peak"), "flows")));
	CHECK(json_object_size(json_object_get(a, "peak")) == DPMON_METRIC_MAX);
	json_decref(b);

	b = get(s, "/api/v1/alerts/1", 200);
	CHECK(strcmp(json_string_value(json_object_get(b, "state")), "ended") == 0);
	CHECK(strcmp(json_string_value(json_object_get(b, "type")), "udp_flood") == 0);
	CHECK(json_real_value(json_object_get(b, "end_unix_s")) == T0 + 1.5);
	CHECK(json_real_value(json_object_get(b, "duration_s")) == 1.5);
	json_decref(b);
	b = get(s, "/api/v1/alerts/2", 200);
	CHECK(strcmp(json_string_value(json_object_get(b, "address")), "2001:db8::1") == 0);
	CHECK(json_real_value(json_object_get(b, "duration_s")) == 1.5);
	json_decref(b);

	b = get(s, "/api/v1/alerts?state=active", 200);
	CHECK(count_of(b) == 2 && json_integer_value(json_object_get(b, "total")) == 2);
	json_decref(b);
	b = get(s, "/api/v1/alerts?state=ended", 200);
	CHECK(count_of(b) == 1);
	json_decref(b);
	b = get(s, "/api/v1/alerts?address=2001:db8:0::1", 200);
	CHECK(count_of(b) == 1);
	json_decref(b);
	b = get(s, "/api/v1/alerts?direction=egress&type=unknown", 200);
	CHECK(count_of(b) == 1);
	json_decref(b);
	b = get(s, "/api/v1/alerts?type=syn_flood", 200);
	CHECK(count_of(b) == 0);
	json_decref(b);
	b = get(s, "/api/v1/alerts?limit=1", 200);
	CHECK(count_of(b) == 1 && json_integer_value(json_object_get(b, "total")) == 3);
	json_decref(b);

	/* Errors. */
	static const struct {
		const char *target;
		unsigned status;
		const char *msg;
	} bad[] = {
		{"/api/v1/alerts?state=open", 400,
		 "invalid state 'open': expected active or ended"},
		{"/api/v1/alerts?address=10.0.0.300", 400,
		 "invalid address '10.0.0.300': not an IPv4 or IPv6 address"},
		{"/api/v1/alerts?direction=up", 400,
		 "invalid direction 'up': expected ingress or egress"},
		{"/api/v1/alerts?type=flood", 400,
		 "invalid type 'flood': expected unknown, syn_flood, "
		 "fragment_flood, udp_flood, icmp_flood or tcp_flood"},
		{"/api/v1/alerts?limit=0", 400, "invalid limit '0': expected an integer 1..10000"},
		{"/api/v1/alerts?sort=id", 400, "unknown parameter 'sort'"},
		{"/api/v1/alerts/abc", 400, "invalid alert id 'abc': expected a positive integer"},
		{"/api/v1/alerts/99", 404, "alert 99 is neither active nor among the recent ones"},
		{"/api/v1/alerts/1?x=1", 400, "unknown parameter 'x'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = get(s, bad[i].target, bad[i].status);
		if (strcmp(json_string_value(json_object_get(b, "error")), bad[i].msg) != 0)
			fprintf(stderr, "GET %s: error '%s'\n", bad[i].target,
				json_string_value(json_object_get(b, "error")));
		CHECK(strcmp(json_string_value(json_object_get(b, "error")), bad[i].msg) == 0);
		json_decref(b);
	}

	REQUIRE(dpmon_prom_render(s, 0, &text, &len) == 0);
	CHECK(strstr(text, "\ndpmon_alerts_active 2\n") != NULL);
	CHECK(strstr(text, "# TYPE dpmon_alerts_started_total counter\n"
			   "dpmon_alerts_started_total 3\n") != NULL);
	free(text);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* ------------------------------------------------------------------------
 * Cost on many hosts (printed, never asserted: machines differ).
 * --------------------------------------------------------------------- */

static double
seconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
bench(void)
{
	const char *env = getenv("DPMON_DETECT_BENCH_HOSTS");
	uint32_t n = env ? (uint32_t)strtoul(env, NULL, 10) : 262144, hot = n / 1000;
	struct dpmon_config cfg = load(
		"{\"thresholds\": {\"ingress\": {\"pps\": 100000, \"bps\": 1e9, \"tcp_syn_pps\": "
		"10000,"
		" \"udp_pps\": 50000, \"fragments_pps\": 1000}, \"egress\": {\"pps\": 100000}},"
		" \"hostgroups\": [{\"name\": \"web\", \"prefixes\": [\"10.1.0.0/16\"],"
		" \"thresholds\": {\"ingress\": {\"pps\": 200000}}}]}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(0, 0, 0, n);
	double t0, quiet = 0, busy;

	REQUIRE(d != NULL && s != NULL);
	for (uint32_t i = 0; i < n; i++) {
		dpmon_addr_from_v4(&s->hosts[i].addr, 0x0a000000u + i);
		s->hosts[i].dir[0].avg_pps = s->hosts[i].dir[1].avg_pps = 1000;
		s->hosts[i].dir[0].flows = s->hosts[i].dir[1].flows = -1;
	}
	for (int k = 1; k <= 3; k++) { /* the best of three */
		s->seq = (uint64_t)k;
		t0 = seconds_now();
		run(d, s, T0);
		t0 = seconds_now() - t0;
		quiet = k == 1 || t0 < quiet ? t0 : quiet;
		CHECK(s->alerts_active == 0);
		free(s->alerts);
		s->alerts = NULL;
		s->n_alerts = 0;
	}
	for (uint32_t i = 0; i < hot; i++)
		s->hosts[i * 1000].dir[0].avg_pps = 300000;
	s->seq = 4;
	s->uptime_s = 1;
	t0 = seconds_now();
	run(d, s, T0 + 1);
	busy = seconds_now() - t0;
	CHECK(s->alerts_active == hot);
	printf("detect: %u hosts: %.3f ms all below (%.1f ns/host); %.3f ms with %u alerts "
	       "starting\n",
	       n, quiet * 1e3, quiet * 1e9 / n, busy * 1e3, hot);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* A host of a subnet with host_prefix_len 64: its alert is the prefix's. */
static void
test_host_prefix_alert(void)
{
	static const char *const h[] = {"2001:db8:1:2::"};
	struct dpmon_config cfg = load("{\"thresholds\": {\"ingress\": {\"pps\": 10}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1, h, 1);
	struct dpmon_snapshot *s0 = dpmon_snapshot_alloc(0, 0, 1, 0);
	const struct dpmon_alert *a;
	json_t *j;

	REQUIRE(d != NULL && s0 != NULL);
	/* One subnet, counted per /64: the snapshot's own subnets array. */
	free(s->subnets);
	s->subnets = s0->subnets;
	s->n_subnets = 1;
	s0->subnets = NULL;
	s0->n_subnets = 0;
	dpmon_snapshot_free(s0);
	REQUIRE(dpmon_prefix_parse("2001:db8:1::/48", &s->subnets[0].prefix, NULL) == 0);
	s->subnets[0].host_prefix_len = 64;
	s->hosts[0].subnet = 0;
	set_metric(s, 0, DPMON_DIR_INGRESS, DPMON_METRIC_PPS, 11);
	run(d, s, T0);
	a = find(s, "2001:db8:1:2::", DPMON_DIR_INGRESS);
	REQUIRE(a != NULL);
	CHECK(a->prefix_len == 64 && dpmon_alert_host_len(a) == 64);
	j = dpmon_alert_json(a, T0);
	REQUIRE(j != NULL);
	CHECK(strcmp(json_string_value(json_object_get(j, "address")), "2001:db8:1:2::/64") == 0);
	json_decref(j);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

int
main(void)
{
	test_eal_init("test_detect");
	test_each_metric();
	test_fired_metric();
	test_hostgroups();
	test_longest_prefix();
	test_consecutive();
	test_host_prefix_alert();
	test_hold_and_peaks();
	test_ignored_sources();
	test_ids_and_recent_bound();
	test_attack_types();
	test_disabled();
	test_reconfigure();
	test_reconfigure_disabled();
	test_api();
	bench();
	return test_finish("test_detect");
}
