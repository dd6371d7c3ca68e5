/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_detect_subnet.c — subnet thresholds (carpet bombing,
 * docs/detection.md) on hand-built snapshots: the configuration keys
 * (detection.subnet_thresholds, subnets[].thresholds replacing them
 * entirely, subnets[].detection) and their errors, a subnet alert's fields
 * with start_intervals and hold_s, no host alert for hosts below their own
 * limits, a subnet's own higher limit, detection: false, a reload that
 * removes the subnet, the API's target= filter and JSON, /metrics, and the
 * sampler's watch list for a prefix (the workers' match on it).
 *
 * Values are set directly in the snapshot (the averages detection reads,
 * the interval rates the attack type reads), so every expectation is exact.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "api.h"
#include "api_call.h"
#include "config.h"
#include "detect.h"
#include "prom.h"
#include "sample.h"
#include "snapshot.h"
#include "test_eal.h"

#define T0 1700000000.0

/* Three subnets: A takes the global subnet limits, B has its own, C has detection off. */
#define SUBNETS                                                                           \
	"\"subnets\": [{\"prefix\": \"10.9.0.0/24\", \"name\": \"customer-a\"},"          \
	" {\"prefix\": \"10.8.0.0/24\", \"thresholds\": {\"ingress\": {\"pps\": 5000}}}," \
	" {\"prefix\": \"10.7.0.0/24\", \"detection\": false}, {\"prefix\": \"2001:db8::/48\"}]"

/* Parse @p json; the error output is returned in *out (free it). */
static int
parse(const char *json, struct dpmon_config *cfg, char **out)
{
	size_t len;
	FILE *f = open_memstream(out, &len);
	int rc;

	REQUIRE(f != NULL);
	rc = dpmon_config_parse(json, "cfg.json", cfg, f);
	fclose(f);
	return rc;
}

static struct dpmon_config
load(const char *detection)
{
	struct dpmon_config cfg;
	char text[4096], *out = NULL;

	snprintf(text, sizeof(text), "{\"ports\": [{\"device\": \"a\"}], " SUBNETS ", %s}",
		 detection);
	if (parse(text, &cfg, &out) != 0)
		FAIL("bad test configuration %s: %s", detection, out);
	free(out);
	return cfg;
}

/* A snapshot of the four subnets of SUBNETS and @p n_hosts hosts 10.9.0.1.. (sorted). */
static struct dpmon_snapshot *
snap(uint64_t seq, double uptime_s, uint32_t n_hosts)
{
	static const char *const prefixes[] = {"10.9.0.0/24", "10.8.0.0/24", "10.7.0.0/24",
					       "2001:db8::/48"};
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(0, 0, 4, n_hosts);
	const char *why;

	REQUIRE(s != NULL);
	s->seq = seq;
	s->uptime_s = uptime_s;
	s->interval_s = 1.0;
	for (uint32_t i = 0; i < 4; i++) {
		REQUIRE(dpmon_prefix_parse(prefixes[i], &s->subnets[i].prefix, &why) == 0);
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			s->subnets[i].dir[d].flows = -1;
	}
	snprintf(s->subnets[0].name, sizeof(s->subnets[0].name), "customer-a");
	for (uint32_t i = 0; i < n_hosts; i++) {
		dpmon_addr_from_v4(&s->hosts[i].addr, 0x0a090001u + i);
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			s->hosts[i].dir[d].flows = -1;
	}
	return s;
}

/* Subnet @p i, ingress: a UDP flood of @p pps packets/s (averaged and in the interval). */
static void
udp_flood(struct dpmon_snapshot *s, uint32_t i, double pps)
{
	struct dpmon_dir_stats *x = &s->subnets[i].dir[DPMON_DIR_INGRESS];

	x->avg_pps = pps;
	x->avg_proto_pps[DPMON_PROTO_UDP] = pps;
	x->avg_bps = pps * 8 * 100;
	x->total.pps = pps;
	x->proto[DPMON_PROTO_UDP].pps = pps;
}

/* Every host of @p s at @p pps ingress (below its threshold). */
static void
hosts_at(struct dpmon_snapshot *s, double pps)
{
	for (uint32_t i = 0; i < s->n_hosts; i++)
		s->hosts[i].dir[DPMON_DIR_INGRESS].avg_pps = pps;
}

static void
run(struct dpmon_detect *d, struct dpmon_snapshot *s, double now)
{
	REQUIRE(dpmon_detect_run(d, s, now) == 0);
}

/* ------------------------------------------------------------------------
 * Configuration.
 * --------------------------------------------------------------------- */

static void
test_config(void)
{
	struct dpmon_config cfg = load("\"detection\": {\"subnet_thresholds\": {\"ingress\": "
				       "{\"pps\": 1000, \"udp_bps\": 2e6}, \"egress\": "
				       "{\"flows\": 300}}}");
	char *out = NULL;

	/* Only subnet thresholds: detection is on. */
	CHECK(cfg.detect.enabled);
	CHECK(cfg.detect.subnet_thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_PPS] == 1000);
	CHECK(cfg.detect.subnet_thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_UDP_BPS] == 2e6);
	CHECK(cfg.detect.subnet_thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_FLOWS] == 300);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_PPS] == 0);
	REQUIRE(cfg.n_subnets == 4 && cfg.detect.n_subnets == 4 &&
		cfg.detect.subnets == cfg.subnets);
	/* A: the global ones. */
	CHECK(!cfg.subnets[0].thresholds_set && cfg.subnets[0].detection);
	CHECK(memcmp(&cfg.subnets[0].thresholds, &cfg.detect.subnet_thresholds,
		     sizeof(cfg.subnets[0].thresholds)) == 0);
	/* B: its own replace them entirely (no udp_bps, no egress flows). */
	CHECK(cfg.subnets[1].thresholds_set && cfg.subnets[1].detection);
	CHECK(cfg.subnets[1].thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_PPS] == 5000);
	CHECK(cfg.subnets[1].thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_UDP_BPS] == 0);
	CHECK(cfg.subnets[1].thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_FLOWS] == 0);
	/* C: off. */
	CHECK(!cfg.subnets[2].detection);
	dpmon_config_free(&cfg);
	CHECK(cfg.detect.subnets == NULL && cfg.detect.n_subnets == 0);

	/* Subnets after the detection section, and only a subnet's own thresholds:
	 * inherited after the whole file; detection on. */
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"detection\": {\"subnet_thresholds\": "
		    "{\"ingress\": {\"bps\": 7}}}, \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK(cfg.detect.enabled &&
	      cfg.subnets[0].thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_BPS] == 7);
	dpmon_config_free(&cfg);
	free(out);
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\", \"thresholds\": {\"egress\": {\"pps\": 9}}}]}",
		    &cfg, &out) == 0);
	CHECK(cfg.detect.enabled &&
	      cfg.subnets[0].thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_PPS] == 9);
	dpmon_config_free(&cfg);
	free(out);
	/* ... but not when that subnet has detection off, or "enabled" says false. */
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\", \"detection\": false, \"thresholds\": {\"egress\": "
		    "{\"pps\": 9}}}]}",
		    &cfg, &out) == 0);
	CHECK(!cfg.detect.enabled);
	dpmon_config_free(&cfg);
	free(out);
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\"}], \"detection\": {\"enabled\": false, "
		    "\"subnet_thresholds\": {\"ingress\": {\"pps\": 1}}}}",
		    &cfg, &out) == 0);
	CHECK(!cfg.detect.enabled);
	dpmon_config_free(&cfg);
	free(out);

	/* Errors, each with its path. */
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\", \"detection\": 1, \"thresholds\": {\"ingress\": "
		    "{\"ppps\": 1}, \"up\": {}}}], \"detection\": {\"subnet_thresholds\": "
		    "{\"egress\": {\"pps\": -1}}}}",
		    &cfg, &out) == 4);
	CHECK(strstr(out, "cfg.json: $.subnets[0].detection: wrong type: expected boolean, got "
			  "integer\n") != NULL);
	CHECK(strstr(out, "cfg.json: $.subnets[0].thresholds.ingress.ppps: unknown metric "
			  "(expected one of pps, bps, flows,") != NULL);
	CHECK(strstr(out, "cfg.json: $.subnets[0].thresholds.up: unknown key\n") != NULL);
	CHECK(strstr(out, "cfg.json: $.detection.subnet_thresholds.egress.pps: must be a number "
			  "0..1e18 (0 = not watched), got -1\n") != NULL);
	free(out);
}

/* ------------------------------------------------------------------------
 * Detection.
 * --------------------------------------------------------------------- */

/* The alerts of @p s on subnet @p prefix (any state), counted; the newest into @p *out. */
static unsigned
subnet_alerts(const struct dpmon_snapshot *s, const char *prefix, const struct dpmon_alert **out)
{
	struct dpmon_prefix p;
	const char *why;
	unsigned n = 0;

	REQUIRE(dpmon_prefix_parse(prefix, &p, &why) == 0);
	*out = NULL;
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (s->alerts[i]->target == DPMON_TARGET_SUBNET &&
		    dpmon_prefix_equal(&s->alerts[i]->prefix, &p)) {
			if (n++ == 0)
				*out = s->alerts[i];
		}
	return n;
}

/*
 * A flood over every host of 10.9.0.0/24, each host below its own limit:
 * one subnet alert after start_intervals, none for a host; peaks; the end
 * after hold_s.
 */
static void
test_life_cycle(void)
{
	struct dpmon_config cfg =
		load("\"detection\": {\"start_intervals\": 2, \"hold_s\": 3, \"thresholds\": "
		     "{\"ingress\": {\"pps\": 500}}, \"subnet_thresholds\": {\"ingress\": "
		     "{\"pps\": 10000, \"bps\": 1e9}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	const struct dpmon_alert *a;
	struct dpmon_snapshot *s;

	REQUIRE(d != NULL);
	/* 1: above (254 hosts at 100 pps: 25400 pps), once: nothing yet. */
	s = snap(1, 1, 254);
	hosts_at(s, 100);
	udp_flood(s, 0, 25400);
	run(d, s, T0);
	CHECK(s->n_alerts == 0 && s->alerts_active == 0 && s->subnet_alerts_active == 0);
	dpmon_snapshot_free(s);
	/* 2: above again: it starts. */
	s = snap(2, 2, 254);
	hosts_at(s, 100);
	udp_flood(s, 0, 25400);
	run(d, s, T0 + 1);
	REQUIRE(s->n_alerts == 1);
	CHECK(s->alerts_active == 1 && s->alerts_started == 1 && s->subnet_alerts_active == 1 &&
	      s->subnet_alerts_started == 1);
	CHECK(subnet_alerts(s, "10.9.0.0/24", &a) == 1);
	REQUIRE(a != NULL);
	CHECK(a->id == 1 && a->target == DPMON_TARGET_SUBNET && a->dir == DPMON_DIR_INGRESS &&
	      a->metric == DPMON_METRIC_PPS && a->value == 25400 && a->threshold == 10000 &&
	      a->type == DPMON_ATTACK_UDP_FLOOD && !a->ban && a->hostgroup[0] == '\0' &&
	      strcmp(a->subnet, "customer-a") == 0 && a->start_unix_s == T0 + 1 &&
	      a->end_unix_s == 0);
	CHECK(a->peak[DPMON_METRIC_PPS] == 25400 && a->peak[DPMON_METRIC_UDP_PPS] == 25400 &&
	      a->peak[DPMON_METRIC_BPS] == 25400 * 800.0 && a->peak[DPMON_METRIC_FLOWS] == -1);
	dpmon_snapshot_free(s);
	/* 3: higher: the peak follows; no host alert ever. */
	s = snap(3, 3, 254);
	hosts_at(s, 120);
	udp_flood(s, 0, 30480);
	run(d, s, T0 + 2);
	REQUIRE(s->n_alerts == 1 && subnet_alerts(s, "10.9.0.0/24", &a) == 1);
	CHECK(a->peak[DPMON_METRIC_PPS] == 30480 && a->value == 25400);
	dpmon_snapshot_free(s);
	/* 4, 5: below; 2 s since the last interval above (3 s): still active. */
	for (int k = 4; k <= 5; k++) {
		s = snap((uint64_t)k, k, 254);
		hosts_at(s, 10);
		udp_flood(s, 0, 2540);
		run(d, s, T0 + k - 1);
		CHECK(s->alerts_active == 1 && s->subnet_alerts_active == 1);
		dpmon_snapshot_free(s);
	}
	/* 6: hold_s (3 s) since the last interval above: it ends. */
	s = snap(6, 6, 254);
	run(d, s, T0 + 5);
	REQUIRE(s->n_alerts == 1 && subnet_alerts(s, "10.9.0.0/24", &a) == 1);
	CHECK(a->end_unix_s == T0 + 5 && s->alerts_active == 0 && s->subnet_alerts_active == 0 &&
	      s->subnet_alerts_started == 1);
	CHECK(a->peak[DPMON_METRIC_PPS] == 30480);
	dpmon_snapshot_free(s);
	/* 7: one interval above resets nothing (start_intervals 2); a host above its
	 * own limit alerts as a host, apart. */
	s = snap(7, 7, 254);
	udp_flood(s, 0, 25400);
	s->hosts[3].dir[DPMON_DIR_INGRESS].avg_pps = 600;
	run(d, s, T0 + 6);
	CHECK(s->alerts_active == 0);
	dpmon_snapshot_free(s);
	s = snap(8, 8, 254);
	s->hosts[3].dir[DPMON_DIR_INGRESS].avg_pps = 600;
	run(d, s, T0 + 7);
	CHECK(s->alerts_active == 1 && s->subnet_alerts_active == 0 && s->n_alerts == 2);
	CHECK(s->alerts[0]->target == DPMON_TARGET_HOST && s->alerts[0]->id == 2);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* A subnet's own higher limit, detection: false, IPv6, egress; a reload without the subnet. */
static void
test_own_limits(void)
{
	struct dpmon_config cfg = load("\"detection\": {\"hold_s\": 0, \"subnet_thresholds\": "
				       "{\"ingress\": {\"pps\": 1000}, \"egress\": "
				       "{\"tcp_syn_pps\": 50}}}");
	struct dpmon_config next;
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	const struct dpmon_alert *a;
	struct dpmon_snapshot *s;
	char *out = NULL;

	REQUIRE(d != NULL);
	/* 4000 pps into each: A (1000) and the IPv6 one alert; B (its own 5000) and C
	 * (detection off) do not. B's egress SYNs: its own thresholds have none. */
	s = snap(1, 1, 0);
	for (uint32_t i = 0; i < 4; i++)
		udp_flood(s, i, 4000);
	s->subnets[1].dir[DPMON_DIR_EGRESS].avg_flag_pps[DPMON_FLAG_SYN] = 400;
	s->subnets[2].dir[DPMON_DIR_EGRESS].avg_flag_pps[DPMON_FLAG_SYN] = 400;
	run(d, s, T0);
	CHECK(s->n_alerts == 2 && s->subnet_alerts_active == 2);
	CHECK(subnet_alerts(s, "10.9.0.0/24", &a) == 1 &&
	      subnet_alerts(s, "2001:db8::/48", &a) == 1);
	CHECK(a != NULL && a->threshold == 1000 && a->subnet[0] == '\0');
	CHECK(subnet_alerts(s, "10.8.0.0/24", &a) == 0 && subnet_alerts(s, "10.7.0.0/24", &a) == 0);
	dpmon_snapshot_free(s);
	/* Above B's own limit: it alerts at its own threshold. A's SYNs out: egress. */
	s = snap(2, 2, 0);
	udp_flood(s, 1, 6000);
	s->subnets[0].dir[DPMON_DIR_EGRESS].avg_flag_pps[DPMON_FLAG_SYN] = 60;
	s->subnets[0].dir[DPMON_DIR_EGRESS].total.pps = 60;
	s->subnets[0].dir[DPMON_DIR_EGRESS].flag[DPMON_FLAG_SYN].pps = 60;
	s->subnets[0].dir[DPMON_DIR_EGRESS].proto[DPMON_PROTO_TCP].pps = 60;
	run(d, s, T0 + 1);
	CHECK(s->subnet_alerts_active == 2 && s->subnet_alerts_started == 4);
	CHECK(subnet_alerts(s, "10.8.0.0/24", &a) == 1);
	CHECK(a != NULL && a->threshold == 5000 && a->value == 6000 && a->end_unix_s == 0);
	CHECK(subnet_alerts(s, "10.9.0.0/24", &a) == 2);
	CHECK(a != NULL && a->dir == DPMON_DIR_EGRESS && a->metric == DPMON_METRIC_TCP_SYN_PPS &&
	      a->type == DPMON_ATTACK_SYN_FLOOD && a->end_unix_s == 0);
	dpmon_snapshot_free(s);

	/* A reload without 10.8.0.0/24 (and A with detection off): their alerts end
	 * after the hold time (0), though the snapshot still lists them. */
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.9.0.0/24\", \"detection\": false}], \"detection\": "
		    "{\"hold_s\": 0, \"subnet_thresholds\": {\"ingress\": {\"pps\": 1000}}}}",
		    &next, &out) == 0);
	free(out);
	REQUIRE(dpmon_detect_reconfigure(d, &next.detect) == 0);
	s = snap(3, 3, 0);
	udp_flood(s, 1, 6000);
	s->subnets[0].dir[DPMON_DIR_EGRESS].avg_flag_pps[DPMON_FLAG_SYN] = 60;
	run(d, s, T0 + 2);
	CHECK(s->alerts_active == 0 && s->subnet_alerts_active == 0 && s->n_alerts == 4);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
	dpmon_config_free(&next);
}

/* GET /api/v1/alerts: target=, the subnet alert's JSON; /metrics. */
static void
test_api(void)
{
	struct dpmon_config cfg = load("\"detection\": {\"thresholds\": {\"ingress\": {\"pps\": "
				       "500}}, \"subnet_thresholds\": {\"ingress\": {\"pps\": "
				       "1000}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_api_response r;
	struct dpmon_snapshot *s = snap(1, 1, 2);
	char *text = NULL;
	size_t len;
	json_t *a;

	REQUIRE(d != NULL);
	udp_flood(s, 0, 4000);
	s->hosts[1].dir[DPMON_DIR_INGRESS].avg_pps = 600;
	run(d, s, T0);
	REQUIRE(s->n_alerts == 2);

	REQUIRE(api_call(s, "GET", "/api/v1/alerts?target=subnet", &r) == 0);
	CHECK(r.status == 200);
	CHECK(json_integer_value(json_object_get(r.body, "total")) == 1);
	a = json_array_get(json_object_get(r.body, "alerts"), 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "target")), "subnet") == 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "prefix")), "10.9.0.0/24") == 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "subnet")), "customer-a") == 0);
	CHECK(json_object_get(a, "address") == NULL);
	CHECK(strcmp(json_string_value(json_object_get(a, "type")), "udp_flood") == 0);
	CHECK(json_is_false(json_object_get(a, "ban")) &&
	      json_is_null(json_object_get(a, "hostgroup")));
	/* The 17 fields of every alert (fingerprint and flowspec among them), prefix and subnet. */
	CHECK(json_object_size(a) == 19);
	json_decref(r.body);

	REQUIRE(api_call(s, "GET", "/api/v1/alerts?target=host", &r) == 0);
	CHECK(r.status == 200 && json_integer_value(json_object_get(r.body, "total")) == 1);
	a = json_array_get(json_object_get(r.body, "alerts"), 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "target")), "host") == 0);
	CHECK(strcmp(json_string_value(json_object_get(a, "address")), "10.9.0.2") == 0);
	CHECK(json_object_get(a, "prefix") == NULL && json_object_get(a, "subnet") == NULL);
	CHECK(json_object_size(a) == 18);
	json_decref(r.body);

	REQUIRE(api_call(s, "GET", "/api/v1/alerts?target=net", &r) == 0);
	CHECK(r.status == 400);
	CHECK(strcmp(json_string_value(json_object_get(r.body, "error")),
		     "invalid target 'net': expected host or subnet") == 0);
	json_decref(r.body);

	REQUIRE(dpmon_prom_render(s, 0, &text, &len) == 0);
	CHECK(strstr(text, "\ndpmon_alerts_active 2\n") != NULL);
	CHECK(strstr(text, "\ndpmon_subnet_alerts_active 1\n") != NULL);
	CHECK(strstr(text, "# TYPE dpmon_subnet_alerts_started_total counter\n"
			   "dpmon_subnet_alerts_started_total 1\n") != NULL);
	free(text);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

/* The workers' side: a watched prefix matches every address inside it, only those. */
static void
test_watch_prefix(void)
{
	struct dpmon_sample_watch *w = rte_zmalloc(NULL, sizeof(*w), RTE_CACHE_LINE_SIZE);
	struct dpmon_sample_core core = {.watch = w};
	struct dpmon_addr hosts[3], x;
	const uint8_t depths[3] = {120, 128, 32};
	const uint64_t ids[3] = {7, 8, 9};
	struct dpmon_sample_list l;

	REQUIRE(w != NULL);
	dpmon_addr_from_v4(&hosts[0], 0x0a0900ffu); /* 10.9.0.255/24: host bits dropped */
	dpmon_addr_from_v4(&hosts[1], 0x0a080005u); /* the host 10.8.0.5 */
	REQUIRE(dpmon_addr_parse("2001:db8::", &hosts[2]) == 0);
	REQUIRE(dpmon_sample_watch_write(w, hosts, depths, ids, 3) == 0);
	REQUIRE(dpmon_sample_watch_read(&core, &l) && l.n == 3);
	dpmon_addr_from_v4(&x, 0x0a090000u);
	CHECK(dpmon_sample_match(&l, &x) == 0);
	dpmon_addr_from_v4(&x, 0x0a0900feu);
	CHECK(dpmon_sample_match(&l, &x) == 0 && dpmon_sample_match_source(&l, &x) == 0);
	dpmon_addr_from_v4(&x, 0x0a090100u);
	CHECK(dpmon_sample_match(&l, &x) == -1);
	dpmon_addr_from_v4(&x, 0x0a080005u);
	CHECK(dpmon_sample_match(&l, &x) == 1);
	dpmon_addr_from_v4(&x, 0x0a080006u);
	CHECK(dpmon_sample_match(&l, &x) == -1);
	REQUIRE(dpmon_addr_parse("2001:db8:ffff::1", &x) == 0);
	CHECK(dpmon_sample_match(&l, &x) == 2);
	REQUIRE(dpmon_addr_parse("2001:db9::1", &x) == 0);
	CHECK(dpmon_sample_match(&l, &x) == -1);
	/* NULL depths: every entry a host. */
	REQUIRE(dpmon_sample_watch_write(w, hosts, NULL, ids, 1) == 0);
	REQUIRE(dpmon_sample_watch_read(&core, &l) && l.n == 1);
	dpmon_addr_from_v4(&x, 0x0a0900ffu);
	CHECK(dpmon_sample_match(&l, &x) == 0);
	dpmon_addr_from_v4(&x, 0x0a0900feu);
	CHECK(dpmon_sample_match(&l, &x) == -1);
	rte_free(w);
}

/*
 * A subnet's ingress from ignored sources (the snapshot's ignored_subnets)
 * is taken out before its limits see it: 25400 pps of which 20000 are
 * ignored leave 5400, below 10000; the same flood on a subnet with no
 * ignored packets alerts, with the whole value.
 */
static void
test_ignored_sources(void)
{
	struct dpmon_config cfg = load("\"detection\": {\"subnet_thresholds\": {\"ingress\": "
				       "{\"pps\": 10000, \"udp_pps\": 10000}}}");
	struct dpmon_detect *d = dpmon_detect_create(&cfg.detect, NULL, NULL);
	struct dpmon_snapshot *s = snap(1, 1, 0);
	const struct dpmon_alert *a;

	REQUIRE(d != NULL);
	udp_flood(s, 0, 25400); /* 10.9.0.0/24 */
	udp_flood(s, 3, 25400); /* 2001:db8::/48 */
	s->ignored_subnets = calloc(4, sizeof(*s->ignored_subnets));
	REQUIRE(s->ignored_subnets != NULL);
	s->ignored_subnets[0].avg_pps = 20000;
	s->ignored_subnets[0].avg_proto_pps[DPMON_PROTO_UDP] = 20000;
	s->ignored_subnets[0].total.pps = 20000;
	s->ignored_subnets[0].proto[DPMON_PROTO_UDP].pps = 20000;
	run(d, s, T0);
	REQUIRE(s->n_alerts == 1);
	a = s->alerts[0];
	CHECK(a->target == DPMON_TARGET_SUBNET && a->dir == DPMON_DIR_INGRESS);
	CHECK(a->prefix.family == 6 && a->value == 25400);
	CHECK(s->subnet_alerts_active == 1);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

int
main(void)
{
	test_eal_init("test_detect_subnet");
	test_config();
	test_life_cycle();
	test_own_limits();
	test_api();
	test_watch_prefix();
	test_ignored_sources();
	return test_finish("test_detect_subnet");
}
