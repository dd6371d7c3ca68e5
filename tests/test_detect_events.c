/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_detect_events.c — what detection hands to the other modules: the
 * events posted to the actions (lib/detect/actions.h) at alert start and end, the
 * sampler's watch list and drains (lib/detect/sampler.h), the sampler's summary
 * as the alert's "sample", and the attack's share of a FlowSpec sample (from the
 * fired metric's peak).
 *
 * This executable defines the actions' and the sampler's functions itself,
 * as recorders, so the linker takes these instead of lib/detect/actions.c and
 * lib/detect/sampler.c from the static library (nothing else here refers to them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "config.h"
#include "detect.h"
#include "fingerprint.h"
#include "flowspec.h"
#include "sample.h"
#include "snapshot.h"
#include "test_eal.h"

#define T0         1700000000.0
#define MAX_EVENTS 16

/* ---- recorders ---------------------------------------------------------- */

struct dpmon_actions {
	struct dpmon_action_event ev[MAX_EVENTS];
	unsigned n;
};

struct dpmon_sampler {
	struct dpmon_addr hosts[DPMON_SAMPLE_WATCH_MAX];
	uint64_t ids[DPMON_SAMPLE_WATCH_MAX];
	uint8_t depths[DPMON_SAMPLE_WATCH_MAX];
	unsigned n, watch_calls, drains;
	uint64_t forgotten[8];
	unsigned n_forgotten;
	uint64_t sampled_id; /* summary answered for this alert only */
	int packets;
	uint64_t fp_id;            /* fingerprint answered for this alert only */
	const struct dpmon_fp *fp; /* that fingerprint */
};

static struct dpmon_actions actions_rec;
static struct dpmon_sampler sampler_rec;

struct dpmon_actions *
dpmon_actions_create(const struct dpmon_actions_conf *conf)
{
	(void)conf;
	return &actions_rec;
}

int
dpmon_actions_post(struct dpmon_actions *a, struct dpmon_action_event *ev)
{
	if (a->n == MAX_EVENTS) {
		json_decref(ev->alert);
		return -ENOBUFS;
	}
	a->ev[a->n++] = *ev; /* keeps the reference */
	return 0;
}

void
dpmon_actions_free(struct dpmon_actions *a)
{
	for (unsigned i = 0; i < a->n; i++)
		json_decref(a->ev[i].alert);
	a->n = 0;
}

uint32_t
dpmon_actions_flowspec(struct dpmon_actions *a, uint64_t alert_id, const struct dpmon_addr *addr,
		       bool blackhole_fallback, const struct dpmon_fs_choice *c, uint32_t *refused)
{
	(void)a;
	(void)alert_id;
	(void)addr;
	(void)blackhole_fallback;
	(void)c;
	*refused = 0;
	return 0;
}

const struct dpmon_flowspec_conf *
dpmon_sampler_flowspec(const struct dpmon_sampler *s)
{
	static struct dpmon_flowspec_conf fc = {.sample_packets = 500,
						.sample_timeout_s = 10,
						.min_coverage = 0.95,
						.max_rules_per_alert = 3,
						.components = DPMON_FS_C_ALL};

	(void)s;
	return &fc;
}

const struct dpmon_fp *
dpmon_sampler_fingerprint(struct dpmon_sampler *s, uint64_t alert_id)
{
	return alert_id == s->fp_id ? s->fp : NULL;
}

struct dpmon_sampler *
dpmon_sampler_create(unsigned n_workers, const struct dpmon_actions_conf *conf)
{
	(void)n_workers;
	(void)conf;
	return &sampler_rec;
}

void
dpmon_sampler_free(struct dpmon_sampler *s)
{
	(void)s;
}

int
dpmon_sampler_watch(struct dpmon_sampler *s, const struct dpmon_addr *hosts, const uint8_t *depths,
		    const uint64_t *alert_ids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		s->depths[i] = depths != NULL ? depths[i] : 128;
	if (n > DPMON_SAMPLE_WATCH_MAX)
		return -E2BIG;
	memcpy(s->hosts, hosts, sizeof(*hosts) * n);
	memcpy(s->ids, alert_ids, sizeof(*alert_ids) * n);
	s->n = n;
	s->watch_calls++;
	return 0;
}

void
dpmon_sampler_forget(struct dpmon_sampler *s, uint64_t alert_id)
{
	s->forgotten[s->n_forgotten++ % 8] = alert_id;
}

void
dpmon_sampler_drain(struct dpmon_sampler *s)
{
	s->drains++;
	s->packets += 10; /* as if ten copies arrived each interval */
}

json_t *
dpmon_sampler_summary(struct dpmon_sampler *s, uint64_t alert_id)
{
	if (alert_id != s->sampled_id)
		return NULL;
	return json_pack("{s:i,s:[{s:s,s:i}],s:[],s:[{s:i,s:i}]}", "packets", s->packets, "sources",
			 "address", "198.51.100.7", "packets", s->packets, "source_ports",
			 "destination_ports", "port", 53, "packets", s->packets);
}

/* ---- the case ------------------------------------------------------------ */

static struct dpmon_snapshot *
snap(uint64_t seq, double uptime_s, double pps1, double pps2)
{
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(0, 0, 0, 2);

	REQUIRE(s != NULL);
	s->seq = seq;
	s->uptime_s = uptime_s;
	REQUIRE(dpmon_addr_parse("10.0.0.1", &s->hosts[0].addr) == 0);
	REQUIRE(dpmon_addr_parse("10.0.0.2", &s->hosts[1].addr) == 0);
	s->hosts[0].dir[DPMON_DIR_EGRESS].avg_pps = pps1;
	s->hosts[1].dir[DPMON_DIR_INGRESS].avg_pps = pps2;
	for (int i = 0; i < 2; i++)
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			s->hosts[i].dir[d].flows = -1;
	return s;
}

/*
 * The attack's share of a FlowSpec sample comes from the fired metric's
 * peak, not from its value at the alert's start (the moving average just
 * past the limit): 10.0.0.2 starts at 20 pps against a limit of 10, then
 * reaches 100 pps while its 500 packets are sampled; the rules must match
 * 1 - 10/100 = 90 % of them, 450 (at the start's 20 pps: 250).
 */
static void
test_flowspec_share(struct dpmon_actions *act, struct dpmon_sampler *smp)
{
	static struct dpmon_fp_pkt pkts[500];
	struct dpmon_fp fp = {.want = 500, .n = 500, .pkts = pkts};
	struct dpmon_config cfg;
	struct dpmon_detect *d;
	struct dpmon_snapshot *s;
	json_t *fs;

	for (int i = 0; i < 500; i++) {
		pkts[i] = (struct dpmon_fp_pkt){.family = 4,
						.ip_proto = 17,
						.ports = 1,
						.sport = 53,
						.dport = 1024,
						.ip_len = 1400};
		dpmon_addr_from_v4(&pkts[i].src, 0xc6120001); /* 198.18.0.1 */
	}
	REQUIRE(dpmon_config_parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": "
				   "[{\"prefix\": \"10.0.0.0/8\"}], \"detection\": {\"ban\": true,"
				   " \"mitigation\": \"flowspec\", \"thresholds\": {\"ingress\":"
				   " {\"pps\": 10}}}}",
				   "test", &cfg, stderr) == 0);
	d = dpmon_detect_create(&cfg.detect, smp, act);
	REQUIRE(d != NULL);
	s = snap(20, 20, 0, 20); /* alert 1 starts at 20 pps */
	REQUIRE(dpmon_detect_run(d, s, T0 + 20) == 0);
	dpmon_snapshot_free(s);
	s = snap(21, 21, 0, 100); /* its peak: 100 pps; still sampling */
	REQUIRE(dpmon_detect_run(d, s, T0 + 21) == 0);
	REQUIRE(s->n_alerts == 1);
	CHECK(s->alerts[0]->flowspec == NULL);
	dpmon_snapshot_free(s);
	smp->fp_id = 1;
	smp->fp = &fp;
	s = snap(22, 22, 0, 100); /* the sample is in: the rules */
	REQUIRE(dpmon_detect_run(d, s, T0 + 22) == 0);
	REQUIRE(s->n_alerts == 1);
	fs = s->alerts[0]->flowspec;
	CHECK(json_integer_value(json_object_get(fs, "attack_packets")) == 450);
	CHECK(json_array_size(json_object_get(fs, "rules")) == 1);
	dpmon_snapshot_free(s);
	smp->fp = NULL;
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);
}

int
main(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *act;
	struct dpmon_sampler *smp;
	struct dpmon_detect *d;
	struct dpmon_snapshot *s;
	char addr[DPMON_ADDR_STRLEN];

	test_eal_init("test_detect_events");
	REQUIRE(dpmon_config_parse(
			"{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
			"\"10.0.0.0/8\"}],"
			" \"detection\": {\"hold_s\": 1, \"ban\": true, \"thresholds\": "
			"{\"ingress\": {\"pps\": 10},"
			" \"egress\": {\"pps\": 10}}, \"hostgroups\": [{\"name\": \"two\","
			" \"prefixes\": [\"10.0.0.2/32\"], \"ban\": false}]}}",
			"test", &cfg, stderr) == 0);
	act = dpmon_actions_create(&cfg.actions);
	smp = dpmon_sampler_create(1, &cfg.actions);
	d = dpmon_detect_create(&cfg.detect, smp, act);
	REQUIRE(d != NULL);

	/* 1: 10.0.0.1 egress starts (alert 1). */
	s = snap(1, 1, 50, 0);
	REQUIRE(dpmon_detect_run(d, s, T0) == 0);
	REQUIRE(act->n == 1);
	CHECK(act->ev[0].kind == DPMON_ACTION_ALERT_START && act->ev[0].alert_id == 1 &&
	      act->ev[0].dir == DPMON_DIR_EGRESS && act->ev[0].ban &&
	      act->ev[0].start_unix_s == T0 && act->ev[0].end_unix_s == 0);
	CHECK(strcmp(dpmon_addr_format(&act->ev[0].addr, addr, sizeof(addr)), "10.0.0.1") == 0);
	CHECK(json_integer_value(json_object_get(act->ev[0].alert, "id")) == 1);
	CHECK(strcmp(json_string_value(json_object_get(act->ev[0].alert, "direction")), "egress") ==
	      0);
	CHECK(smp->drains == 1 && smp->watch_calls == 1 && smp->n == 1 && smp->ids[0] == 1);
	dpmon_snapshot_free(s);

	/* 2: 10.0.0.2 ingress starts (alert 2, hostgroup "two": no ban); both watched,
	 * oldest first; alert 1 gets its sample. */
	smp->sampled_id = 1;
	s = snap(2, 2, 50, 70);
	REQUIRE(dpmon_detect_run(d, s, T0 + 1) == 0);
	REQUIRE(act->n == 2);
	CHECK(act->ev[1].kind == DPMON_ACTION_ALERT_START && act->ev[1].alert_id == 2 &&
	      !act->ev[1].ban && act->ev[1].dir == DPMON_DIR_INGRESS);
	CHECK(strcmp(json_string_value(json_object_get(act->ev[1].alert, "hostgroup")), "two") ==
	      0);
	CHECK(smp->watch_calls == 2 && smp->n == 2 && smp->ids[0] == 1 && smp->ids[1] == 2);
	CHECK(strcmp(dpmon_addr_format(&smp->hosts[1], addr, sizeof(addr)), "10.0.0.2") == 0);
	REQUIRE(s->n_alerts == 2);
	CHECK(s->alerts[1]->id == 1 && s->alerts[1]->sample != NULL &&
	      json_integer_value(json_object_get(s->alerts[1]->sample, "packets")) == 20);
	CHECK(s->alerts[0]->sample == NULL);
	dpmon_snapshot_free(s);

	/* 3: same hosts and alerts: the watch list is not set again. */
	s = snap(3, 3, 50, 70);
	REQUIRE(dpmon_detect_run(d, s, T0 + 2) == 0);
	CHECK(act->n == 2 && smp->watch_calls == 2 && smp->drains == 3);
	CHECK(s->alerts[1]->sample != NULL &&
	      json_integer_value(json_object_get(s->alerts[1]->sample, "packets")) == 30);
	dpmon_snapshot_free(s);

	/* 4: 10.0.0.1 below; 1 s (hold_s) since its last interval above (3 s): it
	 * ends now, with its last sample. */
	s = snap(4, 4, 0, 70);
	REQUIRE(dpmon_detect_run(d, s, T0 + 3) == 0);
	REQUIRE(act->n == 3);
	CHECK(act->ev[2].kind == DPMON_ACTION_ALERT_END && act->ev[2].alert_id == 1 &&
	      act->ev[2].start_unix_s == T0 && act->ev[2].end_unix_s == T0 + 3 && act->ev[2].ban);
	CHECK(strcmp(json_string_value(json_object_get(act->ev[2].alert, "state")), "ended") == 0);
	CHECK(json_integer_value(json_object_get(json_object_get(act->ev[2].alert, "sample"),
						 "packets")) == 40);
	CHECK(smp->n == 1 && smp->ids[0] == 2);                 /* only the active one is watched */
	CHECK(smp->n_forgotten == 1 && smp->forgotten[0] == 1); /* the sampler lets go of it */
	CHECK(s->alerts_active == 1 && s->n_alerts == 2);
	dpmon_snapshot_free(s);
	/* 5: nothing new. */
	s = snap(5, 5, 0, 70);
	REQUIRE(dpmon_detect_run(d, s, T0 + 4) == 0);
	CHECK(act->n == 3 && s->alerts_active == 1 && s->alerts_started == 2);
	dpmon_snapshot_free(s);

	/* 6: 10.0.0.1 egress again (alert 3); 7: also ingress (alert 4). The
	 * sampler lists a host with both alerts ingress first (sample.h), so
	 * its packets from it go to the egress alert: 2, 4, 3. */
	s = snap(6, 6, 50, 70);
	REQUIRE(dpmon_detect_run(d, s, T0 + 5) == 0);
	CHECK(smp->n == 2 && smp->ids[0] == 2 && smp->ids[1] == 3);
	dpmon_snapshot_free(s);
	s = snap(7, 7, 50, 70);
	s->hosts[0].dir[DPMON_DIR_INGRESS].avg_pps = 50;
	REQUIRE(dpmon_detect_run(d, s, T0 + 6) == 0);
	REQUIRE(act->n == 5);
	CHECK(act->ev[4].alert_id == 4 && act->ev[4].dir == DPMON_DIR_INGRESS);
	CHECK(smp->n == 3 && smp->ids[0] == 2 && smp->ids[1] == 4 && smp->ids[2] == 3);
	CHECK(strcmp(dpmon_addr_format(&smp->hosts[1], addr, sizeof(addr)), "10.0.0.1") == 0);
	CHECK(strcmp(dpmon_addr_format(&smp->hosts[2], addr, sizeof(addr)), "10.0.0.1") == 0);
	dpmon_snapshot_free(s);

	dpmon_detect_free(d);
	dpmon_config_free(&cfg);

	/* A subnet alert: its event carries the prefix and never bans (even with
	 * "ban": true); the sampler watches the prefix (a /8 mapped: 104 bits). */
	REQUIRE(dpmon_config_parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": "
				   "[{\"prefix\": \"10.0.0.0/8\"}], \"detection\": {\"ban\": true,"
				   " \"subnet_thresholds\": {\"ingress\": {\"pps\": 100}}}}",
				   "test", &cfg, stderr) == 0);
	dpmon_actions_free(&actions_rec); /* the events so far, and their references */
	d = dpmon_detect_create(&cfg.detect, smp, act);
	REQUIRE(d != NULL);
	s = dpmon_snapshot_alloc(0, 0, 1, 0);
	REQUIRE(s != NULL);
	s->seq = 8;
	s->uptime_s = 8;
	s->subnets[0].prefix = cfg.subnets[0].prefix;
	s->subnets[0].dir[DPMON_DIR_INGRESS].avg_pps = 500;
	REQUIRE(dpmon_detect_run(d, s, T0 + 7) == 0);
	REQUIRE(act->n == 1);
	CHECK(act->ev[0].kind == DPMON_ACTION_ALERT_START && act->ev[0].subnet && !act->ev[0].ban &&
	      act->ev[0].alert_id == 1 && act->ev[0].dir == DPMON_DIR_INGRESS);
	CHECK(dpmon_prefix_equal(&act->ev[0].prefix, &cfg.subnets[0].prefix));
	CHECK(strcmp(json_string_value(json_object_get(act->ev[0].alert, "prefix")),
		     "10.0.0.0/8") == 0);
	CHECK(smp->n == 1 && smp->ids[0] == 1 && smp->depths[0] == 104);
	CHECK(strcmp(dpmon_addr_format(&smp->hosts[0], addr, sizeof(addr)), "10.0.0.0") == 0);
	dpmon_snapshot_free(s);
	dpmon_detect_free(d);
	dpmon_config_free(&cfg);

	test_flowspec_share(act, smp);
	dpmon_actions_free(act);
	dpmon_sampler_free(smp);
	return test_finish("test_detect_events");
}
