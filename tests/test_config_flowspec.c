/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_config_flowspec.c — the FlowSpec settings of the configuration
 * (lib/common/config_flowspec.c): "actions.flowspec" with its defaults and
 * every key, "detection.mitigation" and "hostgroups[].mitigation" (with
 * inheritance) and "hostgroups[].flowspec_action", and the exact error
 * line of each bad value (file, JSON path, why). Also the actions' and
 * mitigations' names (lib/common/flowspec_terms.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"

#define HEAD "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/24\"}], "

/* Parse @p json as "cfg.json"; @return its result, the errors in *out (free it). */
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

/* @p json must fail with exactly the one error line @p line. */
static void
bad(const char *json, const char *line)
{
	struct dpmon_config cfg;
	char *out = NULL;
	int rc = parse(json, &cfg, &out);
	char want[1024];

	snprintf(want, sizeof(want), "%s\n", line);
	CHECK(rc == 1);
	if (strcmp(out, want) != 0) {
		test_failures++;
		fprintf(stderr, "%s\n  errors: %s  expected: %s", json, out, want);
	}
	if (rc == 0)
		dpmon_config_free(&cfg);
	free(out);
}

static void
test_defaults(void)
{
	struct dpmon_config cfg;
	char *out = NULL;
	const struct dpmon_flowspec_conf *f = &cfg.actions.flowspec;

	REQUIRE(parse(HEAD "\"http\": {}}", &cfg, &out) == 0);
	CHECK(f->announce && !f->keep_on_stop);
	CHECK(f->action.kind == DPMON_FS_DISCARD);
	CHECK(f->min_coverage == 0.95);
	CHECK_EQ_U64(f->sample_packets, 500);
	CHECK_EQ_U64(f->sample_timeout_s, 10);
	CHECK_EQ_U64(f->max_rules, 100);
	CHECK_EQ_U64(f->max_rules_per_alert, 3);
	CHECK_EQ_U64(f->hold_s, 0);
	CHECK_EQ_U64(f->components, DPMON_FS_C_ALL);
	CHECK(cfg.detect.mitigation == DPMON_MITIGATION_BLACKHOLE);
	dpmon_config_free(&cfg);
	free(out);
}

static void
test_every_key(void)
{
	struct dpmon_config cfg;
	char *out = NULL;
	const struct dpmon_flowspec_conf *f = &cfg.actions.flowspec;
	const struct dpmon_hostgroup_conf *g;

	REQUIRE(parse(HEAD
		      "\"actions\": {\"flowspec\": {\"announce\": false, \"keep_on_stop\": true,"
		      " \"action\": \"rate-limit 125000\", \"min_coverage\": 0.9,"
		      " \"sample_packets\": 1000, \"sample_timeout_s\": 5, \"max_rules\": 10,"
		      " \"max_rules_per_alert\": 2, \"hold_s\": 30,"
		      " \"components\": {\"packet_length\": false, \"fragment\": false,"
		      " \"tcp_flags\": true}, \"comment\": \"upstream takes 10 rules\"}},"
		      " \"detection\": {\"mitigation\": \"flowspec\", \"thresholds\":"
		      " {\"ingress\": {\"pps\": 1000}}, \"hostgroups\": ["
		      " {\"name\": \"a\", \"prefixes\": [\"10.0.0.0/28\"]},"
		      " {\"name\": \"b\", \"prefixes\": [\"10.0.0.16/28\"], \"mitigation\":"
		      " \"flowspec+blackhole\", \"flowspec_action\": \"redirect 65000:666\"},"
		      " {\"name\": \"c\", \"prefixes\": [\"10.0.0.32/28\"], \"mitigation\":"
		      " \"none\"}]}}",
		      &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(!f->announce && f->keep_on_stop);
	CHECK(f->action.kind == DPMON_FS_RATE_LIMIT && f->action.rate == 125000);
	CHECK(f->min_coverage == 0.9);
	CHECK_EQ_U64(f->sample_packets, 1000);
	CHECK_EQ_U64(f->sample_timeout_s, 5);
	CHECK_EQ_U64(f->max_rules, 10);
	CHECK_EQ_U64(f->max_rules_per_alert, 2);
	CHECK_EQ_U64(f->hold_s, 30);
	CHECK_EQ_U64(f->components,
		     DPMON_FS_C_ALL & ~(uint32_t)(DPMON_FS_C_PACKET_LENGTH | DPMON_FS_C_FRAGMENT));
	CHECK(cfg.detect.mitigation == DPMON_MITIGATION_FLOWSPEC);
	REQUIRE(cfg.detect.n_hostgroups == 3);
	g = cfg.detect.hostgroups;
	CHECK(g[0].mitigation == DPMON_MITIGATION_FLOWSPEC && !g[0].flowspec_action_set);
	CHECK(g[1].mitigation == DPMON_MITIGATION_FLOWSPEC_BLACKHOLE && g[1].flowspec_action_set);
	CHECK(g[1].flowspec_action.kind == DPMON_FS_REDIRECT && g[1].flowspec_action.asn == 65000 &&
	      g[1].flowspec_action.value == 666);
	CHECK(g[2].mitigation == DPMON_MITIGATION_NONE);
	dpmon_config_free(&cfg);
	free(out);
}

static void
test_errors(void)
{
	bad(HEAD "\"actions\": {\"flowspec\": {\"max_rules\": 0}}}",
	    "cfg.json: $.actions.flowspec.max_rules: must be an integer 1..100000, got 0");
	bad(HEAD "\"actions\": {\"flowspec\": {\"action\": \"drop\"}}}",
	    "cfg.json: $.actions.flowspec.action: expected discard, rate-limit BYTES_PER_S,"
	    " redirect ASN:VALUE or mark DSCP, got \"drop\"");
	bad(HEAD "\"actions\": {\"flowspec\": {\"action\": \"mark 64\"}}}",
	    "cfg.json: $.actions.flowspec.action: DSCP above 63, got \"mark 64\"");
	bad(HEAD "\"actions\": {\"flowspec\": {\"min_coverage\": 1.5}}}",
	    "cfg.json: $.actions.flowspec.min_coverage: must be above 0 and at most 1, got 1.5");
	bad(HEAD "\"actions\": {\"flowspec\": {\"min_coverage\": 1.0000001}}}",
	    "cfg.json: $.actions.flowspec.min_coverage: must be above 0 and at most 1, got "
	    "1.0000001");
	bad(HEAD "\"actions\": {\"flowspec\": {\"min_coverage\": 1.0000000000000002}}}",
	    "cfg.json: $.actions.flowspec.min_coverage: must be above 0 and at most 1, got "
	    "1.0000000000000002");
	bad(HEAD "\"actions\": {\"flowspec\": {\"max_rules_per_alert\": 9}}}",
	    "cfg.json: $.actions.flowspec.max_rules_per_alert: must be an integer 1..8, got 9");
	bad(HEAD "\"actions\": {\"flowspec\": {\"components\": {\"dscp\": false}}}}",
	    "cfg.json: $.actions.flowspec.components.dscp: unknown component (expected one of"
	    " source_port, destination_port, packet_length, tcp_flags, fragment, icmp,"
	    " source_prefix)");
	bad(HEAD "\"actions\": {\"flowspec\": {\"announce\": 1}}}",
	    "cfg.json: $.actions.flowspec.announce: wrong type: expected boolean, got integer");
	bad(HEAD "\"actions\": {\"flowspec\": {\"sample\": 5}}}",
	    "cfg.json: $.actions.flowspec.sample: unknown key");
	bad(HEAD "\"detection\": {\"mitigation\": \"flowspec-only\"}}",
	    "cfg.json: $.detection.mitigation: expected blackhole, flowspec, flowspec+blackhole or"
	    " none, got \"flowspec-only\"");
	bad(HEAD "\"detection\": {\"hostgroups\": [{\"name\": \"a\", \"prefixes\":"
		 " [\"10.0.0.0/28\"], \"flowspec_action\": \"redirect 4200000000:70000\"}]}}",
	    "cfg.json: $.detection.hostgroups[0].flowspec_action: redirect with a 32-bit ASN takes"
	    " a 16-bit value (RFC 7674), got \"redirect 4200000000:70000\"");
}

static void
test_names(void)
{
	enum dpmon_mitigation m;
	struct dpmon_fs_action a = {.kind = DPMON_FS_RATE_LIMIT, .rate = 9600};
	char b[32];

	CHECK(dpmon_mitigation_parse("flowspec+blackhole", &m) == 0 &&
	      m == DPMON_MITIGATION_FLOWSPEC_BLACKHOLE);
	CHECK(strcmp(dpmon_mitigation_name(DPMON_MITIGATION_NONE), "none") == 0);
	CHECK(dpmon_mitigation_parse("Flowspec", &m) == -EINVAL);
	CHECK(strcmp(dpmon_fs_component_name(DPMON_FS_C_SOURCE_PREFIX), "source_prefix") == 0);
	CHECK(dpmon_fs_component_name(3) == NULL);
	CHECK(dpmon_fs_action_text(&a, b, sizeof(b)) == 15 && strcmp(b, "rate-limit 9600") == 0);
	CHECK(dpmon_fs_action_text(&a, b, 8) == -ENOSPC);
	CHECK(dpmon_fs_action_parse("rate-limit 1000000000001", &a, NULL) == -EINVAL);
	CHECK(dpmon_fs_action_parse("rate-limit 1000000000000", &a, NULL) == 0);
	CHECK(dpmon_fs_action_parse("rate-limit ", &a, NULL) == -EINVAL);
	CHECK(dpmon_fs_action_parse("redirect 1:", &a, NULL) == -EINVAL);
	CHECK(dpmon_fs_action_parse("mark 8 ", &a, NULL) == -EINVAL);
}

int
main(void)
{
	test_defaults();
	test_every_key();
	test_errors();
	test_names();
	return check_finish("test_config_flowspec");
}
