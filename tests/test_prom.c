/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prom.c — /metrics text (prom.c) on hand-built snapshots.
 *
 * Checks the exposition format's structure (every family exactly one HELP
 * then one TYPE line, its samples contiguous right after, counters named
 * *_total and nothing else), exact sample lines for totals, subnets, ports,
 * workers and parse reasons, rates in bytes per second (bps / 8), label
 * escaping, and the per-host top-N: which hosts, in which order, ties by
 * address, N = 0, and against a full sort on 100 000 hosts; the per-subnet
 * top-N (metrics.top_subnets: which subnets, ties, configuration order) and
 * the exact line counts at 65 536 subnets, limited and not. No DPDK.
 *
 * Each REQUIRE prints file:line and exits 1 (check.h); the snapshots are
 * built with snap_fixture.h.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "prom.h"
#include "snap_fixture.h"
#include "snapshot.h"

/* @p text contains @p line as a whole line. */
static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define CHECK_LINE(text, line)                                                                    \
	do {                                                                                      \
		if (!has_line((text), (line))) {                                                  \
			fprintf(stderr, "%s:%d: missing line: %s\n", __FILE__, __LINE__, (line)); \
			exit(1);                                                                  \
		}                                                                                 \
	} while (0)

static char *
render(const struct dpmon_snapshot *s, uint32_t top)
{
	char *text = NULL;
	size_t len = 0;

	REQUIRE(dpmon_prom_render(s, top, &text, &len) == 0);
	REQUIRE(text != NULL && strlen(text) == len && len > 0 && text[len - 1] == '\n');
	return text;
}

/* The metric name of a sample line, into @p out. */
static void
sample_name(const char *line, char *out, size_t cap)
{
	size_t n = strcspn(line, "{ ");

	REQUIRE(n < cap);
	memcpy(out, line, n);
	out[n] = '\0';
}

/*
 * Walk the text line by line: "# HELP name", "# TYPE name type", then
 * samples of exactly that name; a name seen twice is an error.
 * @return the number of families.
 */
static int
check_structure(char *text)
{
	char names[256][96], cur[96] = "", name[96], type[16];
	int n = 0;
	bool expect_type = false;

	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			REQUIRE(!expect_type);
			sample_name(line + 7, cur, sizeof(cur));
			for (int i = 0; i < n; i++)
				REQUIRE(strcmp(names[i], cur) != 0);
			REQUIRE(n < 256);
			snprintf(names[n++], sizeof(names[0]), "%s", cur);
			REQUIRE(strncmp(cur, "dpmon_", 6) == 0);
			expect_type = true;
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			REQUIRE(expect_type);
			REQUIRE(sscanf(line + 7, "%95s %15s", name, type) == 2);
			REQUIRE(strcmp(name, cur) == 0);
			REQUIRE(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0);
			/* counters and only counters end in _total */
			REQUIRE((strcmp(type, "counter") == 0) ==
				(strlen(name) > 6 &&
				 strcmp(name + strlen(name) - 6, "_total") == 0));
			expect_type = false;
		} else {
			REQUIRE(!expect_type && cur[0] != '\0');
			sample_name(line, name, sizeof(name));
			REQUIRE(strcmp(name, cur) == 0);
			REQUIRE(strchr(line, ' ') != NULL && strchr(line, ' ')[1] != '\0');
		}
	}
	return n;
}

/* Host @p a of subnet @p subnet: one packet each way, @p in_bytes of TCP
 * in (at 0.5 pps, 8 * in_bytes bps), @p out_bytes of UDP out; the totals
 * have the counts and no rate. */
static struct snap_host_spec
bytes_host(const char *a, uint32_t subnet, uint64_t in_bytes, uint64_t out_bytes)
{
	return (struct snap_host_spec){a, subnet,
				       snap_dir(snap_rate(1, in_bytes, 0, 0), DPMON_PROTO_TCP,
						snap_rate(1, in_bytes, 0.5, 8.0 * in_bytes)),
				       snap_dir(snap_rate(1, out_bytes, 0, 0), DPMON_PROTO_UDP,
						snap_rate(1, out_bytes, 0, 0))};
}

/* Status, totals, reasons, the port, the workers, one subnet protocol. */
static void
set_counters(struct dpmon_snapshot *s)
{
	s->config = (struct dpmon_snap_config){.reloads = 2,
					       .reload_failures = 5,
					       .last_reload_unix_s = 1700000000.25,
					       .reload_refusals = 4,
					       .last_refusal_unix_s = 1699999999.5};
	s->actions = (struct dpmon_snap_actions){.events_dropped = 1,
						 .notify_ok = 4,
						 .notify_failed = 2,
						 .notify_killed = 1,
						 .sample_copied = 900,
						 .sample_dropped = 7,
						 .blackholes = 3,
						 .flowspec_rules = 2,
						 .flowspec_announced = 5,
						 .flowspec_refused = 1,
						 .exabgp_configured = true,
						 .exabgp_connected = true};
	s->uptime_s = 42.5;
	s->interval_s = 1.0001;
	s->merge_s = 0.25;
	s->totals[DPMON_TOTAL_INGRESS].proto[DPMON_PROTO_TCP] = snap_rate(10, 6400, 2.5, 1000.0);
	s->totals[DPMON_TOTAL_EXTERNAL].proto[DPMON_PROTO_OTHER] =
		snap_rate(3, 300, 0.1, 0.30000000000000004);
	s->parse_errors[DPMON_REASON_RUNT] = 5;
	s->anomalies[DPMON_ANOM_UDP_BAD_LENGTH] = 3;
	s->ip_stats[DPMON_IPSTAT_TCP_SYN] = 11;
	s->ports[0] = (struct dpmon_port_stats){.device = "net_pcap0",
						.rx_queues = 2,
						.ipackets = 99,
						.ibytes = 9900,
						.imissed = 7,
						.ierrors = 1,
						.rx_nombuf = 2};
	s->workers[0] = (struct dpmon_snap_worker){.lcore = 1,
						   .packets = 60,
						   .bursts = 6,
						   .polls = 600,
						   .hosts = 256,
						   .host_capacity = 1024,
						   .busy_s = 0.125,
						   .busy_ratio = 0.5};
	s->workers[1] = (struct dpmon_snap_worker){.lcore = 3, .host_table_full = 4};
	s->subnets[0].dir[DPMON_DIR_EGRESS].proto[DPMON_PROTO_ICMP] =
		snap_rate(4, 400, 1.5, 1200.0);
}

/* Flows: measured (>= 0) or not (-1), for the totals and subnets. */
static void
set_flows(struct dpmon_snapshot *s)
{
	s->totals[DPMON_TOTAL_INGRESS].flows = 1234.4;
	s->totals[DPMON_TOTAL_EGRESS].flows = 0;
	s->totals[DPMON_TOTAL_INTERNAL].flows = -1;
	s->totals[DPMON_TOTAL_EXTERNAL].flows = -1;
	s->subnets[0].dir[DPMON_DIR_INGRESS].flows = 7;
	s->subnets[0].dir[DPMON_DIR_EGRESS].flows = -1;
	s->subnets[1].dir[DPMON_DIR_INGRESS].flows = -1;
	s->subnets[1].dir[DPMON_DIR_EGRESS].flows = -1;
}

/* Two subnets (the first with a name that needs escaping), four hosts. */
static struct dpmon_snapshot *
prom_snapshot(void)
{
	static const struct snap_subnet_spec subnets[] = {
		{"10.0.0.0/24", "off\"ice\\1\n"},
		{"2001:db8::/48", NULL},
	};
	const struct snap_host_spec hosts[] = {
		bytes_host("10.0.0.5", 0, 100, 0),  /* 100 bytes */
		bytes_host("10.0.0.6", 0, 300, 50), /* 350: first */
		bytes_host("10.0.0.7", 0, 0, 100),  /* 100: tie with .5, after it */
		bytes_host("2001:db8::1", 1, 200, 0),
	};
	struct dpmon_snapshot *s = snap_build(&(struct snap_spec){.seq = 42,
								  .n_ports = 1,
								  .n_workers = 2,
								  .subnets = subnets,
								  .n_subnets = 2,
								  .hosts = hosts,
								  .n_hosts = 4});

	set_counters(s);
	set_flows(s);
	return s;
}

/* The exporters' families, one sample per exporter, only when one is configured. */
static void
test_exporters(void)
{
	struct dpmon_snapshot *s = prom_snapshot();
	struct dpmon_snap_exporter *e = &s->exporters[0];
	char *t;

	s->n_exporters = 1;
	snprintf(e->name, sizeof(e->name), "clickhouse");
	e->rows = 1234;
	e->batches = 17;
	e->failures = 3;
	e->dropped_intervals = 2;
	e->spool_depth = 5;
	e->spool_bytes = 40960;
	e->last_success_unix_s = 1700000000.5;
	e->progress_age_s = 0.25;
	t = render(s, 20);
	CHECK_LINE(t, "# TYPE dpmon_export_rows_total counter");
	CHECK_LINE(t, "dpmon_export_rows_total{exporter=\"clickhouse\"} 1234");
	CHECK_LINE(t, "dpmon_export_batches_total{exporter=\"clickhouse\"} 17");
	CHECK_LINE(t, "dpmon_export_failures_total{exporter=\"clickhouse\"} 3");
	CHECK_LINE(t, "dpmon_export_dropped_intervals_total{exporter=\"clickhouse\"} 2");
	CHECK_LINE(t, "# TYPE dpmon_export_spool_batches gauge");
	CHECK_LINE(t, "dpmon_export_spool_batches{exporter=\"clickhouse\"} 5");
	CHECK_LINE(t, "dpmon_export_spool_bytes{exporter=\"clickhouse\"} 40960");
	CHECK_LINE(t, "dpmon_export_last_success_timestamp_seconds{exporter=\"clickhouse\"} "
		      "1700000000.5");
	CHECK_LINE(t, "dpmon_export_progress_age_seconds{exporter=\"clickhouse\"} 0.25");
	/* 57 families without exporters (test_lines), 8 more with one. */
	REQUIRE(check_structure(t) == 65);
	free(t);
	dpmon_snapshot_free(s);
}

static void
test_lines(void)
{
	struct dpmon_snapshot *s = prom_snapshot();
	char *t = render(s, 20);

	CHECK_LINE(t, "dpmon_snapshot_seq 42");
	CHECK_LINE(t, "dpmon_build_info{version=\"" DPMON_VERSION "\"} 1");
	CHECK_LINE(t, "dpmon_uptime_seconds 42.5");
	CHECK_LINE(t, "dpmon_merge_interval_seconds 1.0001");
	CHECK_LINE(t, "dpmon_merge_duration_seconds 0.25");
	CHECK_LINE(t, "dpmon_subnets 2");
	CHECK_LINE(t, "dpmon_hosts 4");
	CHECK_LINE(t, "dpmon_alerts_active 0");
	CHECK_LINE(t, "dpmon_alerts_started_total 0");
	CHECK_LINE(t, "dpmon_subnet_alerts_active 0");
	CHECK_LINE(t, "dpmon_subnet_alerts_started_total 0");
	CHECK_LINE(t, "# TYPE dpmon_config_reloads_total counter");
	CHECK_LINE(t, "dpmon_config_reloads_total{result=\"ok\"} 2");
	CHECK_LINE(t, "dpmon_config_reloads_total{result=\"failed\"} 5");
	CHECK_LINE(t, "dpmon_config_last_reload_timestamp_seconds 1700000000.25");
	CHECK_LINE(t, "# TYPE dpmon_config_reload_refusals_total counter");
	CHECK_LINE(t, "dpmon_config_reload_refusals_total 4");
	CHECK_LINE(t, "# TYPE dpmon_config_last_refusal_timestamp_seconds gauge");
	CHECK_LINE(t, "dpmon_config_last_refusal_timestamp_seconds 1699999999.5");
	CHECK_LINE(t, "dpmon_notify_runs_total{result=\"ok\"} 4");
	CHECK_LINE(t, "dpmon_notify_runs_total{result=\"failed\"} 2");
	CHECK_LINE(t, "dpmon_notify_runs_total{result=\"killed\"} 1");
	CHECK_LINE(t, "dpmon_action_events_dropped_total 1");
	CHECK_LINE(t, "dpmon_sample_packets_total{result=\"copied\"} 900");
	CHECK_LINE(t, "dpmon_sample_packets_total{result=\"dropped\"} 7");
	CHECK_LINE(t, "dpmon_blackholes 3");
	CHECK_LINE(t, "dpmon_flowspec_rules 2");
	CHECK_LINE(t, "dpmon_flowspec_rules_total{result=\"announced\"} 5");
	CHECK_LINE(t, "dpmon_flowspec_rules_total{result=\"refused\"} 1");
	CHECK_LINE(t, "dpmon_exabgp_pipe_connected 1");
	CHECK_LINE(t, "# TYPE dpmon_traffic_packets_total counter");
	CHECK_LINE(t, "dpmon_traffic_packets_total{direction=\"ingress\",protocol=\"tcp\"} 10");
	CHECK_LINE(t, "dpmon_traffic_bytes_total{direction=\"ingress\",protocol=\"tcp\"} 6400");
	CHECK_LINE(t,
		   "dpmon_traffic_packets_per_second{direction=\"ingress\",protocol=\"tcp\"} 2.5");
	CHECK_LINE(t, "dpmon_traffic_bytes_per_second{direction=\"ingress\",protocol=\"tcp\"} 125");
	CHECK_LINE(t, "dpmon_traffic_bytes_per_second{direction=\"external\",protocol=\"other\"} "
		      "0.037500000000000006"); /* 0.30000000000000004 / 8, exactly */
	CHECK_LINE(t, "dpmon_traffic_packets_total{direction=\"internal\",protocol=\"udp\"} 0");
	CHECK_LINE(t, "dpmon_subnet_info{subnet=\"10.0.0.0/"
		      "24\",name=\"off\\\"ice\\\\1\\n\",family=\"4\"} 1");
	CHECK_LINE(t, "dpmon_subnet_info{subnet=\"2001:db8::/48\",name=\"\",family=\"6\"} 1");
	/* Flows: measured ones only, estimates rounded. */
	CHECK_LINE(t, "# TYPE dpmon_traffic_flows gauge");
	CHECK_LINE(t, "dpmon_traffic_flows{direction=\"ingress\"} 1234");
	CHECK_LINE(t, "dpmon_traffic_flows{direction=\"egress\"} 0");
	REQUIRE(strstr(t, "dpmon_traffic_flows{direction=\"internal\"}") == NULL);
	CHECK_LINE(t, "# TYPE dpmon_subnet_flows gauge");
	CHECK_LINE(t, "dpmon_subnet_flows{subnet=\"10.0.0.0/24\",direction=\"ingress\"} 7");
	REQUIRE(strstr(t, "dpmon_subnet_flows{subnet=\"10.0.0.0/24\",direction=\"egress\"}") ==
		NULL);
	REQUIRE(strstr(t, "dpmon_subnet_flows{subnet=\"2001:db8::/48\"") == NULL);
	CHECK_LINE(t, "dpmon_subnet_packets_total{subnet=\"10.0.0.0/24\",direction=\"egress\","
		      "protocol=\"icmp\"} 4");
	CHECK_LINE(t, "dpmon_subnet_bytes_per_second{subnet=\"10.0.0.0/24\",direction=\"egress\","
		      "protocol=\"icmp\"} 150");
	CHECK_LINE(t, "dpmon_host_bytes_total{subnet=\"10.0.0.0/24\",host=\"10.0.0.6\","
		      "direction=\"ingress\",protocol=\"tcp\"} 300");
	CHECK_LINE(t, "dpmon_host_bytes_per_second{subnet=\"2001:db8::/48\",host=\"2001:db8::1\","
		      "direction=\"ingress\",protocol=\"tcp\"} 200");
	CHECK_LINE(t, "dpmon_port_rx_packets_total{port=\"net_pcap0\"} 99");
	CHECK_LINE(t, "dpmon_port_rx_bytes_total{port=\"net_pcap0\"} 9900");
	CHECK_LINE(t, "dpmon_port_rx_missed_packets_total{port=\"net_pcap0\"} 7");
	CHECK_LINE(t, "dpmon_port_rx_errors_total{port=\"net_pcap0\"} 1");
	CHECK_LINE(t, "dpmon_port_rx_nombuf_total{port=\"net_pcap0\"} 2");
	CHECK_LINE(t, "dpmon_port_rx_queues{port=\"net_pcap0\"} 2");
	CHECK_LINE(t, "dpmon_worker_packets_total{lcore=\"1\"} 60");
	CHECK_LINE(t, "dpmon_worker_bursts_total{lcore=\"1\"} 6");
	CHECK_LINE(t, "dpmon_worker_polls_total{lcore=\"1\"} 600");
	CHECK_LINE(t, "dpmon_worker_busy_seconds_total{lcore=\"1\"} 0.125");
	CHECK_LINE(t, "dpmon_worker_busy_ratio{lcore=\"1\"} 0.5");
	CHECK_LINE(t, "dpmon_worker_host_table_entries{lcore=\"1\"} 256");
	CHECK_LINE(t, "dpmon_worker_host_table_capacity{lcore=\"1\"} 1024");
	CHECK_LINE(t, "dpmon_worker_host_table_fill_ratio{lcore=\"1\"} 0.25");
	CHECK_LINE(t, "dpmon_worker_host_table_fill_ratio{lcore=\"3\"} 0");
	CHECK_LINE(t, "dpmon_worker_host_table_full_total{lcore=\"3\"} 4");
	CHECK_LINE(t, "dpmon_parse_errors_total{reason=\"runt\"} 5");
	CHECK_LINE(t, "dpmon_parse_errors_total{reason=\"l2_too_deep\"} 0");
	CHECK_LINE(t, "dpmon_anomalies_total{reason=\"ipv6_ext_limit\"} 0");
	CHECK_LINE(t, "dpmon_anomalies_total{reason=\"udp_bad_length\"} 3");
	CHECK_LINE(t, "dpmon_ip_kind_packets_total{kind=\"tcp_syn\"} 11");
	REQUIRE(strstr(t, "reason=\"ok\"") == NULL);
	/* 39 + dpmon_traffic_flows, dpmon_subnet_flows (flows)
	 * + dpmon_config_reloads_total, dpmon_config_last_reload_timestamp_seconds,
	 * dpmon_config_reload_refusals_total, dpmon_config_last_refusal_timestamp_seconds
	 * (reload)
	 * + dpmon_alerts_started_total, dpmon_subnet_alerts_active,
	 * dpmon_subnet_alerts_started_total (detection) + dpmon_notify_runs_total,
	 * dpmon_action_events_dropped_total, dpmon_sample_packets_total,
	 * dpmon_blackholes, dpmon_exabgp_pipe_connected (actions)
	 * + dpmon_worker_host_evictions_total, dpmon_worker_host_expired_total
	 * (host life cycle) + dpmon_flowspec_rules, dpmon_flowspec_rules_total
	 * (FlowSpec) */
	REQUIRE(check_structure(t) == 57);
	free(t);
	dpmon_snapshot_free(s);
}

/* The hosts named in the text, in order of first appearance. */
static int
hosts_listed(const char *t, char out[][48], int max)
{
	int n = 0;

	for (const char *p = t; (p = strstr(p, "\ndpmon_host_packets_total{")) != NULL; p++) {
		const char *h = strstr(p, "host=\"") + 6;
		char a[48];

		snprintf(a, sizeof(a), "%.*s", (int)strcspn(h, "\""), h);
		if (n == 0 || strcmp(out[n - 1], a) != 0) {
			REQUIRE(n < max);
			snprintf(out[n++], 48, "%s", a);
		}
	}
	return n;
}

static void
test_top_hosts(void)
{
	struct dpmon_snapshot *s = prom_snapshot();
	char got[8][48], *t;

	t = render(s, 3);
	REQUIRE(hosts_listed(t, got, 8) == 3);
	REQUIRE(strcmp(got[0], "10.0.0.6") == 0);    /* 350 bytes */
	REQUIRE(strcmp(got[1], "2001:db8::1") == 0); /* 200 */
	REQUIRE(strcmp(got[2], "10.0.0.5") == 0);    /* 100, lower address than .7 */
	free(t);
	t = render(s, 0);
	REQUIRE(hosts_listed(t, got, 8) == 0);
	REQUIRE(has_line(t, "# TYPE dpmon_host_bytes_total counter")); /* family still described */
	free(t);
	dpmon_snapshot_free(s);
}

static int
cmp_bytes_desc(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a < b) - (a > b);
}

/* 100 000 hosts with pseudo-random bytes: the 20 exported are the 20 largest. */
static void
test_top_many(void)
{
	const uint32_t n = 100000;
	static const struct snap_subnet_spec sub = {"10.0.0.0/8", NULL};
	struct dpmon_snapshot *s =
		snap_build(&(struct snap_spec){.subnets = &sub, .n_subnets = 1, .n_hosts = n});
	uint64_t *all = malloc(n * sizeof(*all)), x = 88172645463325252ull;
	char *t, addr[32];

	REQUIRE(all != NULL);
	for (uint32_t i = 0; i < n; i++) {
		struct snap_host_spec h;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		all[i] = x % 1000000007u;
		snprintf(addr, sizeof(addr), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
		h = bytes_host(addr, 0, all[i], 0);
		snap_set_host(&s->hosts[i], &h);
	}
	t = render(s, 20);
	qsort(all, n, sizeof(*all), cmp_bytes_desc);
	for (int k = 0; k < 20; k++) {
		char line[160];

		snprintf(line, sizeof(line), "direction=\"ingress\",protocol=\"tcp\"} %llu",
			 (unsigned long long)all[k]);
		REQUIRE(strstr(t, line) != NULL);
	}
	REQUIRE(strstr(t, "host=\"10.0.0.0\"") == NULL ||
		all[19] <= s->hosts[0].dir[0].total.bytes);
	free(t);
	free(all);
	dpmon_snapshot_free(s);
}

/* Lines of @p t that start with @p head. */
static uint32_t
count_lines(const char *t, const char *head)
{
	size_t n = strlen(head);
	uint32_t k = 0;

	for (const char *p = t; *p != '\0'; p = strchr(p, '\n') + 1)
		k += strncmp(p, head, n) == 0;
	return k;
}

static char *
render_limits(const struct dpmon_snapshot *s, uint32_t top_hosts, uint32_t top_subnets)
{
	const struct dpmon_prom_limits lim = {.top_hosts = top_hosts, .top_subnets = top_subnets};
	char *text = NULL;
	size_t len = 0;

	REQUIRE(dpmon_prom_render_limits(s, &lim, &text, &len) == 0);
	REQUIRE(text != NULL && strlen(text) == len && len > 0 && text[len - 1] == '\n');
	return text;
}

/* Five subnets, bytes 0, 5, 0, 5, 0: the top 3 are the two with 5 and the
 * first with 0 (ties in configuration order), listed in configuration order. */
static void
test_top_subnets_ties(void)
{
	static const struct snap_subnet_spec subnets[] = {
		{"10.0.0.0/24", "a"}, {"10.0.1.0/24", "b"}, {"10.0.2.0/24", "c"},
		{"10.0.3.0/24", "d"}, {"10.0.4.0/24", "e"},
	};
	struct dpmon_snapshot *s =
		snap_build(&(struct snap_spec){.seq = 1, .subnets = subnets, .n_subnets = 5});
	char *t, *all;

	s->subnets[1].dir[DPMON_DIR_INGRESS].total.bytes = 5;
	s->subnets[3].dir[DPMON_DIR_EGRESS].total.bytes = 5;
	t = render_limits(s, 0, 3);
	REQUIRE(count_lines(t, "dpmon_subnet_info{") == 3);
	REQUIRE(count_lines(t, "dpmon_subnet_bytes_total{") == 3 * 2 * 4);
	REQUIRE(strstr(t, "dpmon_subnet_info{subnet=\"10.0.0.0/24\",name=\"a\",family=\"4\"} 1\n"
			  "dpmon_subnet_info{subnet=\"10.0.1.0/24\",name=\"b\",family=\"4\"} 1\n"
			  "dpmon_subnet_info{subnet=\"10.0.3.0/24\",name=\"d\",family=\"4\"} 1\n"
			  "# HELP") != NULL);
	REQUIRE(strstr(t, "subnet=\"10.0.2.0/24\"") == NULL);
	REQUIRE(strstr(t, "subnet=\"10.0.4.0/24\"") == NULL);
	all = render(s, 0);
	REQUIRE(check_structure(t) == check_structure(all)); /* every family still described */
	free(all);
	free(t);
	/* At least as many as there are: every subnet, the same text as without a limit. */
	t = render_limits(s, 0, 5);
	all = render(s, 0);
	REQUIRE(strcmp(t, all) == 0);
	free(t);
	free(all);
	t = render_limits(s, 0, 0); /* none, the families still described */
	REQUIRE(strstr(t, "{subnet=") == NULL);
	REQUIRE(has_line(t, "# TYPE dpmon_subnet_info gauge"));
	free(t);
	dpmon_snapshot_free(s);
}

/* Subnet i's cumulative bytes: a permutation of 0..65535, so no ties. */
static uint64_t
many_bytes(uint32_t i)
{
	return (i * 40503u) & 0xffffu;
}

/*
 * 65 536 subnets (the most a configuration has), the first 64 with a flow
 * estimate each way: with metrics.top_subnets (1000) exactly the 1000 with
 * the most bytes have series, in configuration order; without a limit every
 * one. Exact line counts either way, the structure checked line by line.
 */
static void
test_many_subnets(void)
{
	const uint32_t n = DPMON_MAX_SUBNETS, top = DPMON_TOP_SUBNETS_DEFAULT;
	struct dpmon_snapshot *s =
		snap_build(&(struct snap_spec){.n_ports = 1, .n_workers = 1, .n_subnets = n});
	uint32_t flows_top = 0, base_lines, listed = 0;
	int families;
	int64_t last = -1;
	char *none, *t, *p;

	for (uint32_t i = 0; i < n; i++) {
		struct dpmon_snap_subnet *sn = &s->subnets[i];
		char text[32], name[16];

		snprintf(text, sizeof(text), "10.%u.%u.0/24", i >> 8, i & 255);
		snprintf(name, sizeof(name), "s%u", i);
		snap_set_subnet(sn, &(struct snap_subnet_spec){text, name});
		sn->dir[DPMON_DIR_INGRESS].total.bytes = many_bytes(i);
		sn->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP] =
			snap_rate(1, many_bytes(i), 0.5, 8);
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			sn->dir[d].flows = i < 64 ? (double)i : -1;
		flows_top += i < 64 && many_bytes(i) >= n - top ? 2 : 0;
	}
	none = render_limits(s, 0, 0);
	base_lines = count_lines(none, "");
	REQUIRE(strstr(none, "{subnet=") == NULL);
	families = check_structure(none); /* every family, described without samples */

	t = render_limits(s, 0, top);
	REQUIRE(count_lines(t, "dpmon_subnet_info{") == top);
	REQUIRE(count_lines(t, "dpmon_subnet_packets_total{") == top * 2 * 4);
	REQUIRE(count_lines(t, "dpmon_subnet_bytes_total{") == top * 2 * 4);
	REQUIRE(count_lines(t, "dpmon_subnet_packets_per_second{") == top * 2 * 4);
	REQUIRE(count_lines(t, "dpmon_subnet_bytes_per_second{") == top * 2 * 4);
	REQUIRE(count_lines(t, "dpmon_subnet_flows{") == flows_top);
	REQUIRE(count_lines(t, "") == base_lines + top * (1 + 4 * 2 * 4) + flows_top);
	/* The top by bytes, in configuration order (ascending index). */
	for (p = t; (p = strstr(p, "\ndpmon_subnet_info{subnet=\"10.")) != NULL; p++) {
		unsigned hi, lo, i;

		REQUIRE(sscanf(p, "\ndpmon_subnet_info{subnet=\"10.%u.%u.", &hi, &lo) == 2);
		i = hi << 8 | lo;
		REQUIRE(many_bytes(i) >= n - top && (int64_t)i > last);
		last = i;
		listed++;
	}
	REQUIRE(listed == top);
	REQUIRE(check_structure(t) == families);
	free(t);

	t = render(s, 0); /* every subnet */
	REQUIRE(count_lines(t, "dpmon_subnet_info{") == n);
	REQUIRE(count_lines(t, "dpmon_subnet_bytes_per_second{") == n * 2 * 4);
	REQUIRE(count_lines(t, "dpmon_subnet_flows{") == 64 * 2);
	REQUIRE(count_lines(t, "") == base_lines + n * (1 + 4 * 2 * 4) + 64 * 2);
	CHECK_LINE(t, "dpmon_subnet_bytes_per_second{subnet=\"10.255.255.0/24\",direction="
		      "\"ingress\",protocol=\"udp\"} 1");
	REQUIRE(check_structure(t) == families);
	free(t);
	free(none);
	dpmon_snapshot_free(s);
}

int
main(void)
{
	test_lines();
	test_exporters();
	test_top_hosts();
	test_top_many();
	test_top_subnets_ties();
	test_many_subnets();
	return check_finish("test_prom");
}
