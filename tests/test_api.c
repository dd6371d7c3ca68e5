/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_api.c — the API's answers on a hand-built snapshot.
 *
 * Builds a snapshot with two subnets (10.0.0.0/24 "office", 2001:db8::/48)
 * and five hosts with known counters, then checks the exact JSON of every
 * endpoint, the error codes (400, 404, 405, 503) with their bodies, sort
 * orders and tie-breaking, limit, the subnet filter and RFC 5952 output.
 * A million-host snapshot checks that the top-N selection agrees with a
 * full sort. Also covers snapshot.c (lookups, reference counting) and the
 * names of stats.c. No DPDK, no sockets.
 *
 * Each CHECK prints file:line and what differed, then exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "api.h"
#include "api_call.h"
#include "snapshot.h"
#include "check.h"
#include "snap_fixture.h"
#include "stats.h"

#ifndef DPMON_VERSION
#define DPMON_VERSION "0.0.0"
#endif

/* ------------------------------------------------------------------------
 * Calling the API with a query string.
 * --------------------------------------------------------------------- */

/* METHOD on "PATH?QUERY", with the key list as http.c passes it. */
static struct dpmon_api_response
call(const struct dpmon_snapshot *s, const char *method, const char *target)
{
	struct dpmon_api_response r;

	if (api_call(s, method, target, &r) != 0)
		FAIL("dpmon_api_handle_keys failed for %s %s", method, target);
	if (r.body == NULL)
		FAIL("NULL body for %s %s", method, target);
	if (r.status != 405 && r.allow != NULL)
		FAIL("Allow header on a %u", r.status);
	return r;
}

static struct dpmon_api_response
get(const struct dpmon_snapshot *s, const char *target)
{
	return call(s, "GET", target);
}

/* ------------------------------------------------------------------------
 * Looking into the JSON: "hosts.0.ingress.tcp.bps".
 * --------------------------------------------------------------------- */

static json_t *
jat(json_t *j, const char *path)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
		if (json_is_array(j))
			j = json_array_get(j, strtoul(tok, NULL, 10));
		else
			j = json_object_get(j, tok);
	}
	return j;
}

static void
check_str(const char *file, int line, json_t *j, const char *path, const char *want)
{
	json_t *v = jat(j, path);

	if (!json_is_string(v) || strcmp(json_string_value(v), want) != 0) {
		char *text = json_dumps(j, JSON_COMPACT);
		fprintf(stderr, "%s:%d: %s: want \"%s\", got %s\n  in %s\n", file, line, path, want,
			v ? (json_is_string(v) ? json_string_value(v) : "(not a string)")
			  : "(missing)",
			text ? text : "?");
		exit(1);
	}
}

static void
check_int(const char *file, int line, json_t *j, const char *path, long long want)
{
	json_t *v = jat(j, path);

	if (!json_is_integer(v) || json_integer_value(v) != want) {
		fprintf(stderr, "%s:%d: %s: want %lld, got %s%lld\n", file, line, path, want,
			json_is_integer(v) ? "" : "(not an integer) ",
			json_is_integer(v) ? (long long)json_integer_value(v) : 0LL);
		exit(1);
	}
}

static void
check_real(const char *file, int line, json_t *j, const char *path, double want)
{
	json_t *v = jat(j, path);

	if (!json_is_real(v) || json_real_value(v) != want) {
		fprintf(stderr, "%s:%d: %s: want %g, got %s%g\n", file, line, path, want,
			json_is_real(v) ? "" : "(not a real) ",
			json_is_real(v) ? json_real_value(v) : 0.0);
		exit(1);
	}
}

static void
check_size(const char *file, int line, json_t *j, const char *path, size_t want)
{
	json_t *v = jat(j, path);
	size_t got = json_is_array(v)    ? json_array_size(v)
		     : json_is_object(v) ? json_object_size(v)
					 : (size_t)-1;

	if (got != want) {
		fprintf(stderr, "%s:%d: %s: want size %zu, got %zd\n", file, line, path, want,
			(ssize_t)got);
		exit(1);
	}
}

/* The response is @p status with exactly {"error": @p msg}. */
static void
check_error(const char *file, int line, struct dpmon_api_response r, unsigned status,
	    const char *msg)
{
	if (r.status != status) {
		char *text = json_dumps(r.body, JSON_COMPACT);
		fprintf(stderr, "%s:%d: want status %u, got %u: %s\n", file, line, status, r.status,
			text ? text : "?");
		exit(1);
	}
	check_size(file, line, r.body, "", 1);
	if (msg != NULL)
		check_str(file, line, r.body, "error", msg);
	else if (!json_is_string(json_object_get(r.body, "error")))
		FAIL("no error string");
	json_decref(r.body);
}

#define CHECK_STR(j, p, w)   check_str(__FILE__, __LINE__, (j), (p), (w))
#define CHECK_INT(j, p, w)   check_int(__FILE__, __LINE__, (j), (p), (w))
#define CHECK_REAL(j, p, w)  check_real(__FILE__, __LINE__, (j), (p), (w))
#define CHECK_SIZE(j, p, w)  check_size(__FILE__, __LINE__, (j), (p), (w))
#define CHECK_ERROR(r, s, m) check_error(__FILE__, __LINE__, (r), (s), (m))

/* Check "hosts.N.address" for N = 0.. against the NULL-terminated @p want. */
static void
check_order(const char *file, int line, const struct dpmon_snapshot *s, const char *target,
	    long long total, const char *const *want)
{
	struct dpmon_api_response r = get(s, target);
	char path[64];
	size_t n = 0;

	if (r.status != 200)
		FAIL("%s: status %u", target, r.status);
	for (; want[n] != NULL; n++) {
		snprintf(path, sizeof(path), "hosts.%zu.address", n);
		check_str(file, line, r.body, path, want[n]);
	}
	check_size(file, line, r.body, "hosts", n);
	check_int(file, line, r.body, "total", total);
	json_decref(r.body);
}

#define CHECK_ORDER(s, t, total, ...) \
	check_order(__FILE__, __LINE__, (s), (t), (total), (const char *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------------
 * The hand-built snapshot.
 * --------------------------------------------------------------------- */

/* Status counters: reloads, actions, timing, parse reasons. */
static void
set_status(struct dpmon_snapshot *s)
{
	s->config =
		(struct dpmon_snap_config){.reloads = 3,
					   .reload_failures = 1,
					   .last_reload_unix_s = 1700000000.5,
					   .last_reload_ok = true,
					   .reload_refusals = 1,
					   .last_refusal_unix_s = 1699999990.25,
					   .last_refusal_errors = 2,
					   .last_refusal_file = "/etc/dpmon/dpmon.json",
					   .last_refusal_reason = "$.subnets[0].prefix: bad CIDR"};
	s->actions = (struct dpmon_snap_actions){.events_dropped = 1,
						 .notify_ok = 4,
						 .notify_failed = 2,
						 .notify_killed = 1,
						 .sample_copied = 900,
						 .sample_dropped = 7,
						 .blackholes = 3,
						 .exabgp_configured = true,
						 .exabgp_connected = false};
	s->uptime_s = 12.5;
	s->interval_s = 1.0078125;
	s->merge_s = 0.125;
	s->interval_ms = 1000;
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		s->totals[t] = snap_tcp_dir(snap_rate(1000u * (t + 1), 64000u * (t + 1),
						      10.0 * (t + 1), 5120.0 * (t + 1)));
	s->parse_errors[DPMON_REASON_NON_IP] = 3;
	s->parse_errors[DPMON_REASON_RUNT] = 1;
	s->parse_errors[DPMON_REASON_L2_TOO_DEEP] = 9;
	s->anomalies[DPMON_ANOM_UDP_BAD_LENGTH] = 4;
	s->anomalies[DPMON_ANOM_TUNNEL_LIMIT] = 2;
	s->ip_stats[DPMON_IPSTAT_FRAGMENTS] = 6;
	s->ip_stats[DPMON_IPSTAT_TCP_SYN] = 8;
}

/* The port and the two workers. */
static void
set_ports_workers(struct dpmon_snapshot *s)
{
	s->ports[0] = (struct dpmon_port_stats){.device = "net_pcap0",
						.port_id = 0,
						.rx_queues = 2,
						.ipackets = 5000,
						.ibytes = 320000,
						.imissed = 4,
						.ierrors = 1,
						.rx_nombuf = 2};
	s->workers[0] = (struct dpmon_snap_worker){
		.lcore = 1, .packets = 2600, .bursts = 100, .host_table_full = 0, .hosts = 3};
	s->workers[1] = (struct dpmon_snap_worker){.lcore = 2,
						   .packets = 2400,
						   .bursts = 90,
						   .host_table_full = 5,
						   .host_v4mapped = 7,
						   .host_ext_full = 3,
						   .hosts = 2,
						   .host_capacity = 1024,
						   .polls = 5000,
						   .busy_s = 1.5,
						   .busy_ratio = 0.25};
}

/* The subnets' counters: every protocol and packet class in the office's ingress. */
static void
set_subnet_dirs(struct dpmon_snapshot *s)
{
	struct dpmon_dir_stats *d = &s->subnets[0].dir[DPMON_DIR_INGRESS];

	d->total = snap_rate(350, 65000, 35.5, 104000.25);
	d->proto[DPMON_PROTO_TCP] = snap_rate(300, 60000, 30, 96000);
	d->proto[DPMON_PROTO_UDP] = snap_rate(40, 4000, 4.5, 6400.25);
	d->proto[DPMON_PROTO_ICMP] = snap_rate(10, 1000, 1, 1600);
	d->avg_pps = 33.25;
	d->flows = 1234.6; /* an estimate: printed rounded */
	d->peers = 17.4;
	d->avg_bps = 99000.5;
	d->flag[DPMON_FLAG_FRAG] = snap_rate(12, 7000, 1.5, 2800.5);
	d->flag[DPMON_FLAG_SYN] = snap_rate(200, 12000, 20.25, 9600);
	s->subnets[0].dir[DPMON_DIR_EGRESS] = snap_tcp_dir(snap_rate(6, 360, 2.25, 1640));
	s->subnets[1].dir[DPMON_DIR_INGRESS] = snap_tcp_dir(snap_rate(300, 1000, 30, 800));
	s->subnets[1].dir[DPMON_DIR_EGRESS] = snap_tcp_dir(snap_rate(9, 540, 2.5, 2000));
}

/* Host @p a of subnet @p subnet, all its traffic TCP: @p in, @p out. */
static struct snap_host_spec
tcp_host(const char *a, uint32_t subnet, struct dpmon_rate in, struct dpmon_rate out)
{
	return (struct snap_host_spec){a, subnet, snap_tcp_dir(in), snap_tcp_dir(out)};
}

/* Two subnets (10.0.0.0/24 "office", 2001:db8::/48) and five hosts with
 * known counters, every other part of the snapshot set too. */
static struct dpmon_snapshot *
api_snapshot(void)
{
	static const struct snap_subnet_spec subnets[] = {
		{"10.0.0.0/24", "office"},
		{"2001:db8::/48", NULL},
	};
	/* Given out of order on purpose, sorted by snap_build like merge.c does. */
	const struct snap_host_spec hosts[] = {
		tcp_host("2001:db8::2", 1, snap_rate(0, 0, 0, 0), snap_rate(5, 300, 0, 0)),
		tcp_host("10.0.0.6", 0, snap_rate(200, 5000, 20, 4000),
			 snap_rate(2, 120, 1.5, 960)),
		tcp_host("10.0.0.5", 0, snap_rate(100, 10000, 10, 8000),
			 snap_rate(1, 60, 0.5, 480)),
		tcp_host("2001:0db8:0:0::1", 1, snap_rate(300, 1000, 30, 800),
			 snap_rate(4, 240, 2.5, 2000)),
		tcp_host("10.0.0.7", 0, snap_rate(50, 50000, 5, 8000),
			 snap_rate(3, 180, 0.25, 200)),
	};
	struct dpmon_snapshot *s = snap_build(&(struct snap_spec){.seq = 7,
								  .n_ports = 1,
								  .n_workers = 2,
								  .subnets = subnets,
								  .n_subnets = 2,
								  .hosts = hosts,
								  .n_hosts = 5});

	set_status(s);
	set_ports_workers(s);
	set_subnet_dirs(s);
	return s;
}

/* ------------------------------------------------------------------------
 * The tests.
 * --------------------------------------------------------------------- */

static void
test_names(void)
{
	REQUIRE(strcmp(dpmon_reason_name(DPMON_REASON_OK), "ok") == 0);
	REQUIRE(strcmp(dpmon_reason_name(DPMON_REASON_IPV4_TRUNCATED), "ipv4_truncated") == 0);
	REQUIRE(strcmp(dpmon_reason_name(DPMON_REASON_L2_TOO_DEEP), "l2_too_deep") == 0);
	REQUIRE(strcmp(dpmon_anomaly_name(DPMON_ANOM_IPV6_EXT_LIMIT), "ipv6_ext_limit") == 0);
	REQUIRE(strcmp(dpmon_anomaly_name(DPMON_ANOM_MAX), "unknown") == 0);
	REQUIRE(strcmp(dpmon_ipstat_name(DPMON_IPSTAT_DECAPSULATED), "decapsulated") == 0);
	REQUIRE(strcmp(dpmon_tunnel_name(0), "gre") == 0);
	REQUIRE(dpmon_tunnel_name(DPMON_TUNNEL_KINDS) == NULL);
	REQUIRE(strcmp(dpmon_reason_name(DPMON_REASON_MAX), "unknown") == 0);
	REQUIRE(strcmp(dpmon_proto_name(DPMON_PROTO_ICMP), "icmp") == 0);
	REQUIRE(strcmp(dpmon_proto_name((enum dpmon_proto) - 1), "unknown") == 0);
	REQUIRE(strcmp(dpmon_dir_name(DPMON_DIR_EGRESS), "egress") == 0);
	REQUIRE(strcmp(dpmon_total_name(DPMON_TOTAL_EXTERNAL), "external") == 0);
}

static void
test_snapshot_lookups(const struct dpmon_snapshot *s)
{
	struct dpmon_prefix p;

	for (uint32_t i = 0; i < s->n_hosts; i++)
		REQUIRE(dpmon_snapshot_find_host(s, &s->hosts[i].addr) == &s->hosts[i]);
	{
		struct dpmon_addr a = snap_addr("10.0.0.99"), b = snap_addr("::"),
				  c = snap_addr("ffff::1");
		REQUIRE(dpmon_snapshot_find_host(s, &a) == NULL);
		REQUIRE(dpmon_snapshot_find_host(s, &b) == NULL);
		REQUIRE(dpmon_snapshot_find_host(s, &c) == NULL);
	}
	p = snap_prefix("2001:db8::/48");
	REQUIRE(dpmon_snapshot_find_subnet(s, &p) == 1);
	p = snap_prefix("10.0.0.0/24");
	REQUIRE(dpmon_snapshot_find_subnet(s, &p) == 0);
	p = snap_prefix("10.0.0.0/25");
	REQUIRE(dpmon_snapshot_find_subnet(s, &p) == -1);
	{
		struct dpmon_snapshot *empty = dpmon_snapshot_alloc(0, 0, 0, 0);
		struct dpmon_addr a = snap_addr("10.0.0.1");
		REQUIRE(empty != NULL && empty->hosts != NULL && empty->n_hosts == 0);
		REQUIRE(dpmon_snapshot_find_host(empty, &a) == NULL);
		REQUIRE(dpmon_snapshot_find_subnet(empty, &p) == -1);
		dpmon_snapshot_free(empty);
	}
}

/* Before any reload: the counts are 0, the last attempt's time and result null. */
static void
test_summary_no_reload(void)
{
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(0, 0, 0, 0);
	struct dpmon_api_response r;

	REQUIRE(s != NULL);
	s->seq = 1;
	r = get(s, "/api/v1/summary");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "config", 6);
	CHECK_INT(r.body, "config.reloads", 0);
	CHECK_INT(r.body, "config.reload_failures", 0);
	CHECK(json_is_null(jat(r.body, "config.last_reload_unix_s")));
	CHECK(json_is_null(jat(r.body, "config.last_reload_ok")));
	CHECK_INT(r.body, "config.reload_refusals", 0);
	CHECK(json_is_null(jat(r.body, "config.last_refusal")));
	CHECK(json_is_null(jat(r.body, "actions.exabgp_connected"))); /* no pipe configured */
	CHECK_INT(r.body, "actions.notify.ok", 0);
	json_decref(r.body);
	/* A refused one only: counted, its time, false. */
	s->config = (struct dpmon_snap_config){.reload_failures = 2, .last_reload_unix_s = 12.5};
	r = get(s, "/api/v1/summary");
	REQUIRE(r.status == 200);
	CHECK_INT(r.body, "config.reloads", 0);
	CHECK_INT(r.body, "config.reload_failures", 2);
	CHECK_REAL(r.body, "config.last_reload_unix_s", 12.5);
	CHECK(json_is_false(jat(r.body, "config.last_reload_ok")));
	CHECK_INT(r.body, "config.reload_refusals", 0); /* failed, not refused */
	CHECK(json_is_null(jat(r.body, "config.last_refusal")));
	json_decref(r.body);
	/* A refusal: the file's name and a reason cut inside a character are
	 * shown as valid JSON strings. */
	s->config = (struct dpmon_snap_config){.reload_failures = 1,
					       .last_reload_unix_s = 12.5,
					       .reload_refusals = 1,
					       .last_refusal_unix_s = 12.5,
					       .last_refusal_errors = 1,
					       .last_refusal_file = "/tmp/d\xe9pmon.json",
					       .last_refusal_reason =
						       "cannot read: not a regular file (FIFO)"};
	r = get(s, "/api/v1/summary");
	REQUIRE(r.status == 200);
	CHECK_INT(r.body, "config.reload_refusals", 1);
	CHECK_SIZE(r.body, "config.last_refusal", 4);
	CHECK_REAL(r.body, "config.last_refusal.unix_s", 12.5);
	CHECK_STR(r.body, "config.last_refusal.file", "/tmp/d?pmon.json");
	CHECK_INT(r.body, "config.last_refusal.errors", 1);
	CHECK_STR(r.body, "config.last_refusal.reason", "cannot read: not a regular file (FIFO)");
	json_decref(r.body);
	dpmon_snapshot_free(s);
}

/* ASan catches a premature free or a leak if the refcount is wrong. */
static void
test_store(void)
{
	struct dpmon_snap_store st;
	struct dpmon_snapshot *a = dpmon_snapshot_alloc(0, 0, 0, 1), *b, *held;

	REQUIRE(a != NULL);
	dpmon_snap_store_init(&st);
	REQUIRE(dpmon_snap_acquire(&st) == NULL);
	dpmon_snap_release(&st, NULL);
	a->seq = 1;
	dpmon_snap_publish(&st, a);
	held = dpmon_snap_acquire(&st);
	REQUIRE(held == a && a->refs == 2);
	b = dpmon_snapshot_alloc(0, 0, 0, 1);
	REQUIRE(b != NULL);
	b->seq = 2;
	dpmon_snap_publish(&st, b); /* a lives on: the reader holds it */
	REQUIRE(held->seq == 1 && held->refs == 1);
	held->hosts[0].subnet = 3;     /* still writable memory under ASan */
	dpmon_snap_release(&st, held); /* frees a */
	held = dpmon_snap_acquire(&st);
	REQUIRE(held == b && b->refs == 2);
	dpmon_snap_release(&st, held);
	dpmon_snap_store_destroy(&st); /* frees b */
	REQUIRE(dpmon_snap_acquire(&st) == NULL);
}

static void
test_no_snapshot(void)
{
	struct dpmon_api_response r = get(NULL, "/health");

	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "status", "starting");
	CHECK_INT(r.body, "snapshot_seq", 0);
	json_decref(r.body);
	CHECK_ERROR(get(NULL, "/api/v1/summary"), 503, "no snapshot yet");
	CHECK_ERROR(get(NULL, "/api/v1/subnets"), 503, "no snapshot yet");
	CHECK_ERROR(get(NULL, "/api/v1/subnets/10.0.0.0/24"), 503, "no snapshot yet");
	CHECK_ERROR(get(NULL, "/api/v1/hosts?limit=5"), 503, "no snapshot yet");
	CHECK_ERROR(get(NULL, "/api/v1/hosts/10.0.0.5"), 503, "no snapshot yet");
	CHECK_ERROR(get(NULL, "/api/v1/alerts"), 503, "no snapshot yet");
	CHECK_ERROR(get(NULL, "/nope"), 404, "no such endpoint: /nope");
	CHECK_ERROR(call(NULL, "POST", "/api/v1/summary"), 405, NULL);
}

static void
test_health(const struct dpmon_snapshot *s)
{
	struct dpmon_api_response r = get(s, "/health");

	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "status", "ok");
	CHECK_INT(r.body, "snapshot_seq", 7);
	CHECK_SIZE(r.body, "reasons", 0);
	CHECK_SIZE(r.body, "", 3);
	CHECK(r.of_snapshot);
	json_decref(r.body);
	r = get(s, "/health/");
	REQUIRE(r.status == 200);
	json_decref(r.body);
}

/* GET @p path on @p s (NULL: none yet) with the health verdict @p v. */
static struct dpmon_api_response
get_health(const struct dpmon_snapshot *s, const char *path, const struct dpmon_health_verdict *v)
{
	struct dpmon_api_request req = {.snap = s, .method = "GET", .path = path, .health = v};
	struct dpmon_api_response r;

	REQUIRE(dpmon_api_serve(&req, &r) == 0);
	return r;
}

/* A verdict with reasons: /health 503 listing them, the summary a 200
 * whose "health" says the same and that is not the snapshot's alone. */
static void
test_health_verdict(const struct dpmon_snapshot *s)
{
	struct dpmon_health_verdict ok = {.n_reasons = 0};
	struct dpmon_health_verdict bad = {
		.n_reasons = 2,
		.reasons = {"merge: no merge for 4.2 s (limit 3.0 s)",
			    "worker lcore 1: no RX poll for 3.5 s (limit "
			    "3.0 s)"}};
	struct dpmon_api_response r = get_health(s, "/health", &bad);

	REQUIRE(r.status == 503);
	CHECK_SIZE(r.body, "", 3);
	CHECK_STR(r.body, "status", "unhealthy");
	CHECK_INT(r.body, "snapshot_seq", 7);
	CHECK_SIZE(r.body, "reasons", 2);
	CHECK_STR(r.body, "reasons.0", "merge: no merge for 4.2 s (limit 3.0 s)");
	CHECK_STR(r.body, "reasons.1", "worker lcore 1: no RX poll for 3.5 s (limit 3.0 s)");
	json_decref(r.body);
	r = get_health(NULL, "/health", &bad); /* before the first snapshot too */
	REQUIRE(r.status == 503);
	CHECK_STR(r.body, "status", "unhealthy");
	CHECK_INT(r.body, "snapshot_seq", 0);
	json_decref(r.body);
	r = get_health(NULL, "/health", &ok);
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "status", "starting");
	CHECK_SIZE(r.body, "reasons", 0);
	json_decref(r.body);

	r = get_health(s, "/api/v1/summary", &bad);
	REQUIRE(r.status == 200);
	CHECK(!r.of_snapshot);
	CHECK_SIZE(r.body, "health", 2);
	CHECK_STR(r.body, "health.status", "unhealthy");
	CHECK_SIZE(r.body, "health.reasons", 2);
	CHECK_STR(r.body, "health.reasons.1", "worker lcore 1: no RX poll for 3.5 s (limit 3.0 s)");
	json_decref(r.body);
	r = get_health(s, "/api/v1/summary", &ok);
	REQUIRE(r.status == 200);
	CHECK(r.of_snapshot);
	CHECK_STR(r.body, "health.status", "ok");
	CHECK_SIZE(r.body, "health.reasons", 0);
	json_decref(r.body);
}

static void
test_summary(const struct dpmon_snapshot *s)
{
	struct dpmon_api_response r = get(s, "/api/v1/summary");
	static const char *const reasons[] = {"non_ip",         "runt",
					      "vlan_too_deep",  "ipv4_bad_header",
					      "ipv4_truncated", "ipv6_bad_header",
					      "ipv6_truncated", "ipv4_bad_length",
					      "mpls_no_bottom", "l2_too_deep"};
	static const char *const anomalies[] = {
		"pkt_len_mismatch",  "ipv4_len_mismatch",  "ipv4_options_truncated",
		"ipv6_len_mismatch", "ipv6_ext_truncated", "ipv6_ext_limit",
		"l4_truncated",      "tcp_bad_offset",     "udp_bad_length",
		"gre_truncated",     "tunnel_malformed",   "tunnel_unsupported",
		"tunnel_limit"};
	char path[64];
	json_t *b = r.body;

	REQUIRE(r.status == 200);
	CHECK_STR(b, "version", DPMON_VERSION);
	CHECK_REAL(b, "uptime_s", 12.5);
	CHECK_REAL(b, "interval_s", 1.0078125);
	CHECK_INT(b, "interval_ms", 1000);
	CHECK_INT(b, "snapshot_seq", 7);
	CHECK_REAL(b, "merge_s", 0.125);
	CHECK_INT(b, "subnets", 2);
	CHECK_INT(b, "hosts", 5);
	CHECK_SIZE(b, "", 18);
	CHECK_STR(b, "health.status", "ok");
	CHECK_SIZE(b, "health.reasons", 0);
	CHECK_SIZE(b, "exporters", 0); /* none configured */
	CHECK_SIZE(b, "actions", 5);
	CHECK_INT(b, "actions.events_dropped", 1);
	CHECK_INT(b, "actions.notify.ok", 4);
	CHECK_INT(b, "actions.notify.failed", 2);
	CHECK_INT(b, "actions.notify.killed", 1);
	CHECK_INT(b, "actions.sample.copied", 900);
	CHECK_INT(b, "actions.sample.dropped", 7);
	CHECK_INT(b, "actions.blackholes", 3);
	CHECK(json_is_false(jat(b, "actions.exabgp_connected")));
	CHECK_SIZE(b, "config", 6);
	CHECK_INT(b, "config.reloads", 3);
	CHECK_INT(b, "config.reload_failures", 1);
	CHECK_REAL(b, "config.last_reload_unix_s", 1700000000.5);
	CHECK(json_is_true(jat(b, "config.last_reload_ok")));
	CHECK_INT(b, "config.reload_refusals", 1);
	CHECK_SIZE(b, "config.last_refusal", 4);
	CHECK_REAL(b, "config.last_refusal.unix_s", 1699999990.25);
	CHECK_STR(b, "config.last_refusal.file", "/etc/dpmon/dpmon.json");
	CHECK_INT(b, "config.last_refusal.errors", 2);
	CHECK_STR(b, "config.last_refusal.reason", "$.subnets[0].prefix: bad CIDR");

	CHECK_SIZE(b, "totals", 4);
	CHECK_INT(b, "totals.ingress.packets", 1000);
	CHECK_INT(b, "totals.egress.bytes", 128000);
	CHECK_REAL(b, "totals.internal.pps", 30.0);
	CHECK_REAL(b, "totals.external.bps", 20480.0);
	CHECK_INT(b, "totals.external.tcp.packets", 4000);
	CHECK_INT(b, "totals.external.udp.packets", 0);

	CHECK_SIZE(b, "parse_errors", DPMON_REASON_MAX - 1);
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		snprintf(path, sizeof(path), "parse_errors.%s", reasons[i]);
		CHECK_INT(b, path, (long long)s->parse_errors[i + 1]);
	}
	CHECK_INT(b, "parse_errors.non_ip", 3);
	CHECK_INT(b, "parse_errors.l2_too_deep", 9);
	REQUIRE(jat(b, "parse_errors.ok") == NULL);
	REQUIRE(jat(b, "parse_errors.ipv6_ext_limit") == NULL);

	CHECK_SIZE(b, "anomalies", DPMON_ANOM_MAX);
	for (size_t i = 0; i < sizeof(anomalies) / sizeof(anomalies[0]); i++) {
		snprintf(path, sizeof(path), "anomalies.%s", anomalies[i]);
		CHECK_INT(b, path, (long long)s->anomalies[i]);
	}
	CHECK_INT(b, "anomalies.udp_bad_length", 4);
	CHECK_INT(b, "anomalies.tunnel_limit", 2);
	CHECK_SIZE(b, "ip_stats", DPMON_IPSTAT_MAX);
	CHECK_INT(b, "ip_stats.fragments", 6);
	CHECK_INT(b, "ip_stats.decapsulated", 0);
	CHECK_INT(b, "ip_stats.tcp_syn", 8);

	CHECK_SIZE(b, "ports", 1);
	CHECK_SIZE(b, "ports.0", 8);
	CHECK_STR(b, "ports.0.device", "net_pcap0");
	CHECK_INT(b, "ports.0.port_id", 0);
	CHECK_INT(b, "ports.0.rx_queues", 2);
	CHECK_INT(b, "ports.0.ipackets", 5000);
	CHECK_INT(b, "ports.0.ibytes", 320000);
	CHECK_INT(b, "ports.0.imissed", 4);
	CHECK_INT(b, "ports.0.ierrors", 1);
	CHECK_INT(b, "ports.0.rx_nombuf", 2);

	CHECK_SIZE(b, "workers", 2);
	CHECK_SIZE(
		b, "workers.1",
		15); /* 10 + host_ext_full, host_flow_full, host_evictions, host_expired, ignored_full */
	CHECK_INT(b, "workers.1.ignored_full", 0);
	CHECK_INT(b, "workers.1.host_v4mapped", 7);
	CHECK_INT(b, "workers.1.host_ext_full", 3);
	CHECK_INT(b, "workers.1.host_capacity", 1024);
	CHECK_INT(b, "workers.1.polls", 5000);
	CHECK_REAL(b, "workers.1.busy_s", 1.5);
	CHECK_REAL(b, "workers.1.busy_ratio", 0.25);
	CHECK_INT(b, "workers.0.lcore", 1);
	CHECK_INT(b, "workers.0.packets", 2600);
	CHECK_INT(b, "workers.1.lcore", 2);
	CHECK_INT(b, "workers.1.bursts", 90);
	CHECK_INT(b, "workers.1.host_table_full", 5);
	CHECK_INT(b, "workers.1.host_v4mapped", 7);
	CHECK_INT(b, "workers.1.hosts", 2);
	json_decref(b);

	r = call(s, "HEAD", "/api/v1/summary");
	REQUIRE(r.status == 200);
	CHECK_INT(r.body, "snapshot_seq", 7);
	json_decref(r.body);
}

static void
check_subnet0(json_t *j)
{
	CHECK_SIZE(j, "", 6);
	CHECK_STR(j, "prefix", "10.0.0.0/24");
	CHECK_STR(j, "name", "office");
	CHECK_INT(j, "family", 4);
	CHECK_INT(j, "host_prefix_len", 32); /* 0 in the snapshot: whole addresses */
	CHECK_SIZE(j, "ingress", 14); /* 8 + fragments, tcp_syn, avg_pps, avg_bps, flows, peers */
	CHECK_INT(j, "ingress.flows", 1235);
	CHECK_INT(j, "ingress.peers", 17);
	CHECK_REAL(j, "ingress.avg_pps", 33.25);
	CHECK_REAL(j, "ingress.avg_bps", 99000.5);
	CHECK_SIZE(j, "ingress.fragments", 4);
	CHECK_INT(j, "ingress.fragments.packets", 12);
	CHECK_INT(j, "ingress.fragments.bytes", 7000);
	CHECK_REAL(j, "ingress.fragments.pps", 1.5);
	CHECK_REAL(j, "ingress.fragments.bps", 2800.5);
	CHECK_INT(j, "ingress.tcp_syn.packets", 200);
	CHECK_REAL(j, "ingress.tcp_syn.pps", 20.25);
	CHECK_INT(j, "egress.tcp_syn.packets", 0);
	CHECK_INT(j, "ingress.packets", 350);
	CHECK_INT(j, "ingress.bytes", 65000);
	CHECK_REAL(j, "ingress.pps", 35.5);
	CHECK_REAL(j, "ingress.bps", 104000.25);
	CHECK_SIZE(j, "ingress.tcp", 4);
	CHECK_INT(j, "ingress.tcp.packets", 300);
	CHECK_INT(j, "ingress.tcp.bytes", 60000);
	CHECK_REAL(j, "ingress.tcp.pps", 30.0);
	CHECK_REAL(j, "ingress.tcp.bps", 96000.0);
	CHECK_INT(j, "ingress.udp.packets", 40);
	CHECK_REAL(j, "ingress.udp.pps", 4.5);
	CHECK_REAL(j, "ingress.udp.bps", 6400.25);
	CHECK_INT(j, "ingress.icmp.bytes", 1000);
	CHECK_INT(j, "ingress.other.packets", 0);
	CHECK_REAL(j, "ingress.other.bps", 0.0);
	CHECK_INT(j, "egress.packets", 6);
	CHECK_REAL(j, "egress.pps", 2.25);
	CHECK_INT(j, "egress.tcp.bytes", 360);
}

static void
test_subnets(const struct dpmon_snapshot *s)
{
	struct dpmon_api_response r = get(s, "/api/v1/subnets");

	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "", 2);
	CHECK_INT(r.body, "snapshot_seq", 7);
	CHECK_SIZE(r.body, "subnets", 2);
	check_subnet0(jat(r.body, "subnets.0"));
	CHECK_STR(r.body, "subnets.1.prefix", "2001:db8::/48");
	CHECK_STR(r.body, "subnets.1.name", "");
	CHECK_INT(r.body, "subnets.1.family", 6);
	CHECK_INT(r.body, "subnets.1.egress.packets", 9);
	json_decref(r.body);

	r = get(s, "/api/v1/subnets/");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "subnets", 2);
	json_decref(r.body);

	r = get(s, "/api/v1/subnets/10.0.0.0/24");
	REQUIRE(r.status == 200);
	check_subnet0(r.body);
	json_decref(r.body);

	r = get(s, "/api/v1/subnets/10.0.0.0/24/");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "prefix", "10.0.0.0/24");
	json_decref(r.body);

	r = get(s, "/api/v1/subnets/2001:0db8:0000::/48");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "prefix", "2001:db8::/48");
	CHECK_INT(r.body, "family", 6);
	CHECK_INT(r.body, "host_prefix_len", 128);
	CHECK_INT(r.body, "ingress.packets", 300);
	json_decref(r.body);

	CHECK_ERROR(get(s, "/api/v1/subnets/10.9.0.0/24"), 404,
		    "subnet 10.9.0.0/24 is not monitored");
	CHECK_ERROR(get(s, "/api/v1/subnets/10.0.0.0/25"), 404,
		    "subnet 10.0.0.0/25 is not monitored");
	CHECK_ERROR(get(s, "/api/v1/subnets/2001:DB8:1::/48"), 404,
		    "subnet 2001:db8:1::/48 is not monitored");
	CHECK_ERROR(get(s, "/api/v1/subnets/10.0.0.1/24"), 400,
		    "invalid subnet '10.0.0.1/24': host bits set (address is not the network "
		    "address of the prefix)");
	CHECK_ERROR(get(s, "/api/v1/subnets/banana/24"), 400,
		    "invalid subnet 'banana/24': bad CIDR (not an IPv4 or IPv6 address)");
	CHECK_ERROR(get(s, "/api/v1/subnets/10.0.0.0"), 400,
		    "invalid subnet '10.0.0.0': bad CIDR (expected ADDRESS/LENGTH)");
	CHECK_ERROR(get(s, "/api/v1/subnets/10.0.0.0/33"), 400,
		    "invalid subnet '10.0.0.0/33': bad CIDR (IPv4 prefix length must be 0..32)");
	CHECK_ERROR(get(s, "/api/v1/subnets/10.0.0.0/x"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/subnets/10.0.0.0/24/extra"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/subnets?sort=bps"), 400, "unknown parameter 'sort'");
}

static void
test_host(const struct dpmon_snapshot *s)
{
	struct dpmon_api_response r = get(s, "/api/v1/hosts/2001:0db8:0:0::1");
	char longpath[400];

	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "", 6); /* address, subnet, first_seen, last_seen, ingress, egress */
	CHECK_INT(r.body, "first_seen", 0); /* a record filled by hand */
	CHECK_INT(r.body, "last_seen", 0);
	CHECK_STR(r.body, "address", "2001:db8::1");
	CHECK_STR(r.body, "subnet", "2001:db8::/48");
	CHECK_INT(r.body, "ingress.packets", 300);
	CHECK_INT(r.body, "ingress.bytes", 1000);
	CHECK_REAL(r.body, "ingress.pps", 30.0);
	CHECK_REAL(r.body, "ingress.bps", 800.0);
	CHECK_INT(r.body, "ingress.tcp.packets", 300);
	CHECK_INT(r.body, "ingress.udp.packets", 0);
	CHECK_INT(r.body, "egress.packets", 4);
	CHECK_REAL(r.body, "egress.pps", 2.5);
	json_decref(r.body);

	r = get(s, "/api/v1/hosts/10.0.0.7/");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "10.0.0.7");
	CHECK_STR(r.body, "subnet", "10.0.0.0/24");
	CHECK_INT(r.body, "ingress.bytes", 50000);
	CHECK_REAL(r.body, "egress.pps", 0.25);
	json_decref(r.body);

	r = get(s, "/api/v1/hosts/::ffff:10.0.0.6"); /* mapped form: same host */
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "10.0.0.6");
	json_decref(r.body);

	CHECK_ERROR(get(s, "/api/v1/hosts/10.0.0.99"), 404, "host 10.0.0.99 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/2001:DB8:0::0099"), 404,
		    "host 2001:db8::99 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/172.16.0.1"), 404,
		    "host 172.16.0.1 is not inside any monitored subnet");
	CHECK_ERROR(get(s, "/api/v1/hosts/2001:db9::1"), 404,
		    "host 2001:db9::1 is not inside any monitored subnet");
	CHECK_ERROR(get(s, "/api/v1/hosts/zzz"), 400,
		    "invalid address 'zzz': not an IPv4 or IPv6 address");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.0.0.5/32"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts/10.0.0.256"), 400, NULL);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	memcpy(longpath, "/api/v1/hosts/", 14);
	r = get(s, longpath);
	REQUIRE(r.status == 400);
	REQUIRE(strlen(json_string_value(json_object_get(r.body, "error"))) < 128);
	REQUIRE(strstr(json_string_value(json_object_get(r.body, "error")), "aaa...'") != NULL);
	json_decref(r.body);
}

static void
test_hosts(const struct dpmon_snapshot *s)
{
	struct dpmon_api_response r = get(s, "/api/v1/hosts");

	/* The full shape once. */
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "", 3);
	CHECK_INT(r.body, "snapshot_seq", 7);
	CHECK_INT(r.body, "total", 5);
	CHECK_SIZE(r.body, "hosts", 5);
	CHECK_SIZE(r.body, "hosts.0", 6);
	CHECK_STR(r.body, "hosts.0.address", "10.0.0.5");
	CHECK_STR(r.body, "hosts.0.subnet", "10.0.0.0/24");
	CHECK_INT(r.body, "hosts.0.ingress.packets", 100);
	CHECK_REAL(r.body, "hosts.0.ingress.bps", 8000.0);
	CHECK_REAL(r.body, "hosts.0.egress.bps", 480.0);
	CHECK_STR(r.body, "hosts.3.subnet", "2001:db8::/48");
	json_decref(r.body);

	/* Default: bps of ingress, 10.0.0.5 and .7 tie at 8000 → by address. */
	CHECK_ORDER(s, "/api/v1/hosts", 5, "10.0.0.5", "10.0.0.7", "10.0.0.6", "2001:db8::1",
		    "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts/", 5, "10.0.0.5", "10.0.0.7", "10.0.0.6", "2001:db8::1",
		    "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?sort=bps&direction=ingress", 5, "10.0.0.5", "10.0.0.7",
		    "10.0.0.6", "2001:db8::1", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?sort=pps", 5, "2001:db8::1", "10.0.0.6", "10.0.0.5",
		    "10.0.0.7", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?sort=packets", 5, "2001:db8::1", "10.0.0.6", "10.0.0.5",
		    "10.0.0.7", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?sort=bytes", 5, "10.0.0.7", "10.0.0.5", "10.0.0.6",
		    "2001:db8::1", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?direction=egress", 5, "2001:db8::1", "10.0.0.6", "10.0.0.5",
		    "10.0.0.7", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?direction=egress&sort=packets", 5, "2001:db8::2",
		    "2001:db8::1", "10.0.0.7", "10.0.0.6", "10.0.0.5");
	/* egress pps: ::2 has 0, .7 has 0.25 */
	CHECK_ORDER(s, "/api/v1/hosts?sort=pps&direction=egress", 5, "2001:db8::1", "10.0.0.6",
		    "10.0.0.5", "10.0.0.7", "2001:db8::2");

	/* limit */
	CHECK_ORDER(s, "/api/v1/hosts?limit=2", 5, "10.0.0.5", "10.0.0.7");
	CHECK_ORDER(s, "/api/v1/hosts?limit=1&sort=bytes", 5, "10.0.0.7");
	CHECK_ORDER(s, "/api/v1/hosts?limit=10000", 5, "10.0.0.5", "10.0.0.7", "10.0.0.6",
		    "2001:db8::1", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?limit=0005", 5, "10.0.0.5", "10.0.0.7", "10.0.0.6",
		    "2001:db8::1", "2001:db8::2");

	/* subnet filter: total counts the filter's matches, not the page */
	CHECK_ORDER(s, "/api/v1/hosts?subnet=2001:db8::/48", 2, "2001:db8::1", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?subnet=2001:0DB8:0::/48&direction=egress&sort=packets", 2,
		    "2001:db8::2", "2001:db8::1");
	CHECK_ORDER(s, "/api/v1/hosts?subnet=10.0.0.0/24&sort=pps&limit=2", 3, "10.0.0.6",
		    "10.0.0.5");

	/* errors */
	CHECK_ERROR(get(s, "/api/v1/hosts?foo=1"), 400, "unknown parameter 'foo'");
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=5&foo"), 400, "unknown parameter 'foo'");
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=5&limit=6"), 400, "duplicate parameter 'limit'");
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=0"), 400,
		    "invalid limit '0': expected an integer 1..10000");
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=10001"), 400,
		    "invalid limit '10001': expected an integer 1..10000");
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=99999999999999999999999"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=abc"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=-1"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=+5"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts?limit=5x"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts?limit="), 400,
		    "invalid limit '': expected an integer 1..10000");
	CHECK_ERROR(get(s, "/api/v1/hosts?limit"), 400,
		    "invalid limit '': expected an integer 1..10000");
	CHECK_ERROR(get(s, "/api/v1/hosts?sort=speed"), 400,
		    "invalid sort 'speed': expected pps, bps, packets, bytes, avg_pps, avg_bps, "
		    "syn_pps, fragments_pps, tcp_pps, tcp_bps, udp_pps, udp_bps, icmp_pps, "
		    "icmp_bps, flows or peers");
	CHECK_ERROR(get(s, "/api/v1/hosts?sort=BPS"), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts?direction=up"), 400,
		    "invalid direction 'up': expected ingress or egress");
	CHECK_ERROR(get(s, "/api/v1/hosts?subnet=10.9.0.0/24"), 404,
		    "subnet 10.9.0.0/24 is not monitored");
	CHECK_ERROR(get(s, "/api/v1/hosts?subnet=10.0.0.0"), 400,
		    "invalid subnet '10.0.0.0': bad CIDR (expected ADDRESS/LENGTH)");
	CHECK_ERROR(get(s, "/api/v1/hosts?subnet="), 400, NULL);
	CHECK_ERROR(get(s, "/api/v1/hosts/10.0.0.5?limit=1"), 400, "unknown parameter 'limit'");
}

static void
test_routing(const struct dpmon_snapshot *s)
{
	static const char *const unknown[] = {"/",
					      "",
					      "/api",
					      "/api/v1",
					      "/api/v1/",
					      "/api/v2/summary",
					      "/api/v1/summaryx",
					      "/api/v1/summary/x",
					      "/healthz",
					      "/api/v1/subnetsx",
					      "/api/v1/hostsx/1",
					      "api/v1/summary",
					      "/api/v1/../health",
					      "//health"};
	struct dpmon_api_response r;
	char msg[128];

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		snprintf(msg, sizeof(msg), "no such endpoint: %s", unknown[i]);
		CHECK_ERROR(get(s, unknown[i]), 404, msg);
	}
	/* Bytes that are not printable ASCII come back as '?', valid JSON. */
	CHECK_ERROR(get(s, "/\xff\x01\xc3\xa9x"), 404, "no such endpoint: /????x");

	r = get(s, "/api/v1/summary/");
	REQUIRE(r.status == 200);
	json_decref(r.body);
	r = get(s, "/api/v1/summary///");
	REQUIRE(r.status == 200);
	json_decref(r.body);
	CHECK_ERROR(get(s, "/api/v1/summary?x=1"), 400, "unknown parameter 'x'");
	CHECK_ERROR(get(s, "/health?verbose"), 400, "unknown parameter 'verbose'");
	CHECK_ERROR(get(s, "/api/v1/alerts?x"), 400, "unknown parameter 'x'");
	CHECK_ERROR(get(s, "/api/v1/alerts/1"), 404,
		    "alert 1 is neither active nor among the recent ones");
	r = get(s, "/api/v1/alerts"); /* no detection ran on this snapshot (test_detect.c) */
	CHECK(r.status == 200);
	CHECK_SIZE(r.body, "alerts", 0);
	CHECK(json_object_size(r.body) == 5);
	CHECK(json_integer_value(json_object_get(r.body, "active")) == 0);
	CHECK(json_integer_value(json_object_get(r.body, "total")) == 0);
	json_decref(r.body);

	static const char *const methods[] = {"POST",    "PUT", "DELETE", "PATCH",
					      "OPTIONS", "get", ""};
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		r = call(s, methods[i], "/api/v1/hosts");
		REQUIRE(r.status == 405);
		REQUIRE(r.allow != NULL && strcmp(r.allow, "GET, HEAD") == 0);
		CHECK_ERROR(r, 405, NULL);
	}
	r = call(s, "POST", "/health");
	REQUIRE(r.status == 405 && strcmp(r.allow, "GET, HEAD") == 0);
	CHECK_ERROR(r, 405, "method 'POST' not allowed (allowed: GET, HEAD)");
	CHECK_ERROR(call(s, "POST", "/nope"), 404, "no such endpoint: /nope");

	/* The plain entry point: a lookup only, no unknown-key check. */
	{
		struct api_call_query t;
		api_call_parse("limit=1&foo=2", &t);
		REQUIRE(dpmon_api_handle(s, "GET", "/api/v1/hosts", dpmon_api_query_lookup, &t.q,
					 &r) == 0);
		api_call_tree(&r);
		REQUIRE(r.status == 200);
		CHECK_SIZE(r.body, "hosts", 1);
		json_decref(r.body);
		REQUIRE(dpmon_api_handle(s, "GET", "/api/v1/hosts", NULL, NULL, &r) == 0);
		api_call_tree(&r);
		CHECK_SIZE(r.body, "hosts", 5);
		json_decref(r.body);
		REQUIRE(dpmon_api_handle(s, NULL, NULL, NULL, NULL, &r) == 0);
		REQUIRE(r.status == 404);
		json_decref(r.body);
	}
}

static void
test_dir_json_nonfinite(void)
{
	struct dpmon_dir_stats d =
		snap_tcp_dir(snap_rate(UINT64_C(1) << 40, 1, 0.0 / 0.0, 1.0 / 0.0));
	json_t *j = dpmon_api_dir_json(&d);

	REQUIRE(j != NULL);
	CHECK_INT(j, "packets", 1LL << 40);
	CHECK_REAL(j, "pps", 0.0);
	CHECK_REAL(j, "bps", 0.0);
	CHECK_REAL(j, "tcp.bps", 0.0);
	/* total, pps, bps, packets, bytes, four protocols, plus the packet classes
	 * fragments and tcp_syn. */
	CHECK_SIZE(j, "", 14); /* + avg_pps, avg_bps, flows, peers */
	CHECK_INT(j, "flows", 0);
	CHECK_INT(j, "peers", 0);
	CHECK_REAL(j, "avg_pps", 0.0);
	CHECK_INT(j, "fragments.packets", 0);
	CHECK_INT(j, "tcp_syn.packets", 0);
	CHECK_REAL(j, "tcp_syn.pps", 0.0);
	json_decref(j);
	d.flows = -1; /* not measured: null */
	d.peers = -1;
	j = dpmon_api_dir_json(&d);
	REQUIRE(j != NULL);
	CHECK(json_is_null(json_object_get(j, "flows")));
	CHECK(json_is_null(json_object_get(j, "peers")));
	json_decref(j);
}

/* ------------------------------------------------------------------------
 * A million hosts: top-N against a full sort.
 * --------------------------------------------------------------------- */

/* 2^19 hosts in 10.0.0.0/13, the rest in 10.8.0.0/13; under the sanitizers
 * 600 000 (the full sorts that check the listings take most of the time). */
#define BIG_HOSTS (CHECK_SANITIZED ? 600000u : 1000000u)

struct rank_ctx {
	const struct dpmon_snap_host *hosts;
	enum dpmon_dir dir;
	int key; /* 0 pps, 1 bps, 2 packets, 3 bytes */
};

static int
cmp3(double x, double y)
{
	return (x > y) - (x < y);
}

/* Best first: metric descending, then address ascending. */
static int
brute_cmp(const void *x, const void *y, void *arg)
{
	const struct rank_ctx *c = arg;
	const struct dpmon_snap_host *a = &c->hosts[*(const uint32_t *)x];
	const struct dpmon_snap_host *b = &c->hosts[*(const uint32_t *)y];
	const struct dpmon_rate *ra = &a->dir[c->dir].total, *rb = &b->dir[c->dir].total;
	int k;

	switch (c->key) {
	case 0:
		k = cmp3(ra->pps, rb->pps);
		break;
	case 1:
		k = cmp3(ra->bps, rb->bps);
		break;
	case 2:
		k = (ra->packets > rb->packets) - (ra->packets < rb->packets);
		break;
	default:
		k = (ra->bytes > rb->bytes) - (ra->bytes < rb->bytes);
		break;
	}
	return k != 0 ? -k : dpmon_addr_cmp(&a->addr, &b->addr);
}

static uint64_t
next_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

static struct dpmon_snapshot *
build_big(void)
{
	static const struct snap_subnet_spec subs[] = {{"10.0.0.0/13", NULL},
						       {"10.8.0.0/13", NULL}};
	struct dpmon_snapshot *s = snap_build(&(struct snap_spec){
		.seq = 1, .subnets = subs, .n_subnets = 2, .n_hosts = BIG_HOSTS});
	uint64_t rnd = 42;

	for (uint32_t i = 0; i < BIG_HOSTS; i++) {
		struct dpmon_snap_host *h = &s->hosts[i];
		uint64_t p = next_rand(&rnd) % 5000; /* many ties */

		dpmon_addr_from_v4(&h->addr, (10u << 24) + i);
		h->subnet = i < (1u << 19) ? 0 : 1;
		h->dir[DPMON_DIR_INGRESS].total =
			snap_rate(p, p * 100, (double)(p % 97), (double)(p * 800));
		p = next_rand(&rnd) % 1000;
		h->dir[DPMON_DIR_EGRESS].total =
			snap_rate(p, next_rand(&rnd), (double)p / 4, (double)(p % 13));
	}
	return s;
}

/* Compare GET @p target with a full sort of @p pool (indices of the
 * filtered hosts). */
static void
check_big(const struct dpmon_snapshot *s, const char *target, struct rank_ctx ctx, uint32_t *pool,
	  size_t n, size_t limit)
{
	char want[DPMON_ADDR_STRLEN], path[64];
	double t0 = check_now_s(), t1;
	struct dpmon_api_response r = get(s, target);
	size_t expect = n < limit ? n : limit;

	t1 = check_now_s();
	REQUIRE(r.status == 200);
	CHECK_INT(r.body, "total", (long long)n);
	CHECK_SIZE(r.body, "hosts", expect);
	ctx.hosts = s->hosts;
	qsort_r(pool, n, sizeof(*pool), brute_cmp, &ctx);
	for (size_t i = 0; i < expect; i++) {
		snprintf(path, sizeof(path), "hosts.%zu.address", i);
		CHECK_STR(r.body, path,
			  dpmon_addr_format(&s->hosts[pool[i]].addr, want, sizeof(want)));
	}
	printf("  %s: %zu of %zu hosts in %.1f ms\n", target, expect, n, (t1 - t0) * 1e3);
	json_decref(r.body);
}

static void
test_million(void)
{
	struct dpmon_snapshot *s = build_big();
	uint32_t *pool = malloc(sizeof(*pool) * BIG_HOSTS);
	size_t n = 0;

	REQUIRE(pool != NULL);
	for (uint32_t i = 0; i < BIG_HOSTS; i++)
		pool[i] = i;
	check_big(s, "/api/v1/hosts?limit=10", (struct rank_ctx){NULL, DPMON_DIR_INGRESS, 1}, pool,
		  BIG_HOSTS, 10);
	check_big(s, "/api/v1/hosts?limit=10&sort=pps",
		  (struct rank_ctx){NULL, DPMON_DIR_INGRESS, 0}, pool, BIG_HOSTS, 10);
	check_big(s, "/api/v1/hosts?limit=1000&sort=bps&direction=egress",
		  (struct rank_ctx){NULL, DPMON_DIR_EGRESS, 1}, pool, BIG_HOSTS, 1000);
	for (uint32_t i = 0; i < BIG_HOSTS; i++)
		if (s->hosts[i].subnet == 1)
			pool[n++] = i;
	check_big(s, "/api/v1/hosts?subnet=10.8.0.0/13&sort=bytes&direction=egress&limit=10",
		  (struct rank_ctx){NULL, DPMON_DIR_EGRESS, 3}, pool, n, 10);
	check_big(s, "/api/v1/hosts?subnet=10.8.0.0/13&sort=packets&limit=10000",
		  (struct rank_ctx){NULL, DPMON_DIR_INGRESS, 2}, pool, n, 10000);
	{
		struct dpmon_addr a, b; /* the last host, and the next address */

		dpmon_addr_from_v4(&a, (10u << 24) + BIG_HOSTS - 1);
		dpmon_addr_from_v4(&b, (10u << 24) + BIG_HOSTS);
		REQUIRE(dpmon_snapshot_find_host(s, &a) == &s->hosts[BIG_HOSTS - 1]);
		REQUIRE(dpmon_snapshot_find_host(s, &b) == NULL);
	}
	free(pool);
	dpmon_snapshot_free(s);
}

/* A host of @p s by address, writable (the snapshot is still ours). */
static struct dpmon_snap_host *
host_rw(struct dpmon_snapshot *s, const char *a)
{
	struct dpmon_addr x = snap_addr(a);
	const struct dpmon_snap_host *h = dpmon_snapshot_find_host(s, &x);

	REQUIRE(h != NULL);
	return &s->hosts[h - s->hosts];
}

/* Sorting by averages, flags and protocol classes. */
static void
test_hosts_sort_kinds(void)
{
	struct dpmon_snapshot *s = api_snapshot();
	const char *order[5] = {"10.0.0.5", "10.0.0.6", "10.0.0.7", "2001:db8::1", "2001:db8::2"};

	for (int i = 0; i < 5; i++) {
		struct dpmon_snap_host *h = host_rw(s, order[i]);
		struct dpmon_dir_stats *in, *out;

		REQUIRE(h != NULL);
		in = &h->dir[DPMON_DIR_INGRESS];
		out = &h->dir[DPMON_DIR_EGRESS];
		in->avg_pps = 10.0 * i;                           /* ::2 first */
		in->avg_bps = 100.0 * (4 - i);                    /* .5 first */
		in->flag[DPMON_FLAG_SYN].pps = i == 2 ? 900 : i;  /* .7, then ::2 */
		in->flag[DPMON_FLAG_FRAG].pps = i == 3 ? 5 : 0;   /* ::1, then by address */
		in->proto[DPMON_PROTO_UDP].pps = i == 1 ? 3 : 0;  /* .6 */
		in->proto[DPMON_PROTO_ICMP].bps = i == 4 ? 1 : 0; /* ::2 */
		out->flag[DPMON_FLAG_SYN].pps = 5 - i;            /* egress: .5 first */
		in->flows = i == 1 ? 40000 : i == 3 ? 7 : 0;      /* .6, ::1 */
		in->peers = 3 - i;                                /* .5 first; ::2 = -1 last */
		out->flows = i;                                   /* egress: ::2 first */
	}
	CHECK_ORDER(s, "/api/v1/hosts?sort=avg_pps", 5, "2001:db8::2", "2001:db8::1", "10.0.0.7",
		    "10.0.0.6", "10.0.0.5");
	CHECK_ORDER(s, "/api/v1/hosts?sort=avg_bps&limit=2", 5, "10.0.0.5", "10.0.0.6");
	CHECK_ORDER(s, "/api/v1/hosts?sort=syn_pps", 5, "10.0.0.7", "2001:db8::2", "2001:db8::1",
		    "10.0.0.6", "10.0.0.5");
	CHECK_ORDER(s, "/api/v1/hosts?sort=syn_pps&direction=egress&limit=3", 5, "10.0.0.5",
		    "10.0.0.6", "10.0.0.7");
	CHECK_ORDER(s, "/api/v1/hosts?sort=fragments_pps&limit=3", 5, "2001:db8::1", "10.0.0.5",
		    "10.0.0.6");
	CHECK_ORDER(s, "/api/v1/hosts?sort=udp_pps&limit=1", 5, "10.0.0.6");
	CHECK_ORDER(s, "/api/v1/hosts?sort=icmp_bps&limit=1", 5, "2001:db8::2");
	/* tcp_bps: all traffic is TCP in this snapshot, so it orders like bps. */
	CHECK_ORDER(s, "/api/v1/hosts?sort=tcp_bps", 5, "10.0.0.5", "10.0.0.7", "10.0.0.6",
		    "2001:db8::1", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?sort=tcp_pps", 5, "2001:db8::1", "10.0.0.6", "10.0.0.5",
		    "10.0.0.7", "2001:db8::2");
	CHECK_ORDER(s, "/api/v1/hosts?subnet=2001:db8::/48&sort=syn_pps", 2, "2001:db8::2",
		    "2001:db8::1");
	CHECK_ORDER(s, "/api/v1/hosts?sort=flows&limit=3", 5, "10.0.0.6", "2001:db8::1",
		    "10.0.0.5");
	CHECK_ORDER(s, "/api/v1/hosts?sort=flows&direction=egress&limit=2", 5, "2001:db8::2",
		    "2001:db8::1");
	CHECK_ORDER(s, "/api/v1/hosts?sort=peers", 5, "10.0.0.5", "10.0.0.6", "10.0.0.7",
		    "2001:db8::1", "2001:db8::2");
	dpmon_snapshot_free(s);
}

/* ------------------------------------------------------------------------
 * Memory of a listing: the subnet and host listings and the history are
 * written one element at a time, so the JSON trees alive at once are those
 * of one element, whatever the listing's length (a struct xbuf).
 * --------------------------------------------------------------------- */

/* jansson's memory, counted: bytes alive now and at most since the reset. */
static size_t tree_bytes, tree_peak;

static void *
counting_malloc(size_t n)
{
	size_t *p = malloc(sizeof(size_t) + n);

	if (p == NULL)
		return NULL;
	*p = n;
	tree_bytes += n;
	if (tree_bytes > tree_peak)
		tree_peak = tree_bytes;
	return p + 1;
}

static void
counting_free(void *q)
{
	size_t *p = q;

	if (p == NULL)
		return;
	tree_bytes -= p[-1];
	free(p - 1);
}

/* The most bytes of JSON trees alive at once while GET @p target runs on @p s,
 * and the length of its text (which must be text, and leave no tree alive). */
static size_t
tree_peak_of(const struct dpmon_snapshot *s, const char *target, size_t *text_len)
{
	struct dpmon_api_response r;

	json_set_alloc_funcs(counting_malloc, counting_free);
	tree_bytes = tree_peak = 0;
	REQUIRE(api_call_raw(s, "GET", target, &r) == 0);
	json_set_alloc_funcs(malloc, free);
	REQUIRE(r.status == 200 && r.body == NULL && r.text != NULL);
	if (tree_bytes != 0)
		FAIL("GET %s left %zu bytes of trees alive", target, tree_bytes);
	*text_len = r.text_len;
	free(r.text);
	return tree_peak;
}

static void
test_listing_memory(void)
{
	enum {
		N = 1000,
		POINTS = 300,
		SUBNETS = 150
	};
	static const struct snap_subnet_spec sub = {"10.0.0.0/16", NULL};
	struct dpmon_snapshot *s = snap_build(
		&(struct snap_spec){.seq = 3, .subnets = &sub, .n_subnets = 1, .n_hosts = N});
	size_t one, all, one_len, all_len;
	char a[64];

	s->interval_ms = 1000;
	/* Alike hosts whose addresses have the same length: equal trees. */
	for (uint32_t i = 0; i < N; i++) {
		struct dpmon_snap_host *h = &s->hosts[i];

		snprintf(a, sizeof(a), "10.0.%u.%u", 100 + i / 100, 100 + i % 100);
		h->addr = snap_addr(a);
		h->subnet = 0;
		h->dir[DPMON_DIR_INGRESS] = snap_tcp_dir(snap_rate(10, 1000, 1.0, 800.0));
		h->dir[DPMON_DIR_EGRESS] = snap_tcp_dir(snap_rate(5, 500, 0.5, 400.0));
	}
	one = tree_peak_of(s, "/api/v1/hosts?limit=1", &one_len);
	all = tree_peak_of(s, "/api/v1/hosts?limit=1000", &all_len);
	CHECK(one > 0);
	CHECK(all_len > 500 * one_len);
	if (all != one)
		FAIL("hosts: %zu bytes of trees at once for %d hosts, %zu for one", all, N, one);

	s->history = calloc(POINTS, sizeof(*s->history));
	REQUIRE(s->history != NULL);
	for (uint32_t i = 0; i < POINTS; i++) {
		struct dpmon_hist_point *p = dpmon_hist_point_alloc(1);

		REQUIRE(p != NULL);
		p->seq = 1000 + i; /* four digits each: equal trees */
		p->interval_s = 1.0;
		s->history[s->n_history++] = p;
	}
	all = tree_peak_of(s, "/api/v1/history", &all_len);
	s->n_history = 1;
	one = tree_peak_of(s, "/api/v1/history", &one_len);
	s->n_history = POINTS;
	CHECK(all_len > 200 * (one_len / 2));
	if (all != one)
		FAIL("history: %zu bytes of trees at once for %d points, %zu for one", all, POINTS,
		     one);
	dpmon_snapshot_free(s); /* drops the points */

	s = snap_build(&(struct snap_spec){.n_subnets = SUBNETS});
	for (uint32_t i = 0; i < SUBNETS; i++) {
		snprintf(a, sizeof(a), "10.%u.0.0/16", 100 + i); /* equal trees */
		snap_set_subnet(&s->subnets[i], &(struct snap_subnet_spec){a, NULL});
	}
	all = tree_peak_of(s, "/api/v1/subnets", &all_len);
	s->n_subnets = 1;
	one = tree_peak_of(s, "/api/v1/subnets", &one_len);
	s->n_subnets = SUBNETS;
	CHECK(all_len > 100 * (one_len / 2));
	if (all != one)
		FAIL("subnets: %zu bytes of trees at once for %d subnets, %zu for one", all,
		     SUBNETS, one);
	dpmon_snapshot_free(s);
}

/* GET /api/v1/history: the snapshot's points, oldest first. */
static void
test_history_endpoint(void)
{
	struct dpmon_snapshot *s = api_snapshot();
	struct dpmon_api_response r;

	r = get(s, "/api/v1/history");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "", 4);
	CHECK_INT(r.body, "snapshot_seq", 7);
	CHECK_INT(r.body, "interval_ms", 1000);
	CHECK_SIZE(r.body, "subnets", 2);
	CHECK_STR(r.body, "subnets.0", "10.0.0.0/24");
	CHECK_STR(r.body, "subnets.1", "2001:db8::/48");
	CHECK_SIZE(r.body, "points", 0);
	json_decref(r.body);
	s->history = calloc(2, sizeof(*s->history));
	REQUIRE(s->history != NULL);
	for (uint32_t i = 0; i < 2; i++) {
		struct dpmon_hist_point *p = dpmon_hist_point_alloc(2);

		REQUIRE(p != NULL);
		p->seq = 6 + i;
		p->uptime_s = 11.5 + i;
		p->interval_s = 1.0;
		p->totals[DPMON_TOTAL_INGRESS] = (struct dpmon_hist_rate){10.0 + i, 800.5};
		p->totals[DPMON_TOTAL_EXTERNAL] = (struct dpmon_hist_rate){1.0, 8.0};
		p->sub[1 * DPMON_DIR_MAX + DPMON_DIR_EGRESS] = (struct dpmon_hist_rate){2.5, 20.0};
		s->history[s->n_history++] = p;
	}
	r = get(s, "/api/v1/history");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "points", 2);
	CHECK_SIZE(r.body, "points.0", 5);
	CHECK_INT(r.body, "points.0.seq", 6);
	CHECK_INT(r.body, "points.1.seq", 7);
	CHECK_REAL(r.body, "points.1.uptime_s", 12.5);
	CHECK_REAL(r.body, "points.0.interval_s", 1.0);
	CHECK_SIZE(r.body, "points.0.totals", 4);
	CHECK_REAL(r.body, "points.1.totals.ingress.pps", 11.0);
	CHECK_REAL(r.body, "points.1.totals.ingress.bps", 800.5);
	CHECK_REAL(r.body, "points.0.totals.external.bps", 8.0);
	CHECK_REAL(r.body, "points.0.totals.egress.pps", 0.0);
	CHECK_SIZE(r.body, "points.0.subnets", 2);
	CHECK_SIZE(r.body, "points.0.subnets.1", 2);
	CHECK_REAL(r.body, "points.0.subnets.1.egress.pps", 2.5);
	CHECK_REAL(r.body, "points.0.subnets.1.egress.bps", 20.0);
	CHECK_REAL(r.body, "points.0.subnets.0.ingress.pps", 0.0);
	json_decref(r.body);
	CHECK_ERROR(get(s, "/api/v1/history?n=3"), 400, "unknown parameter 'n'");
	dpmon_snapshot_free(s); /* drops the points */
}

/*
 * Hosts of subnets with a host_prefix_len: shown in CIDR form, found by
 * their prefix or any address inside it; alerts filtered the same way.
 */
static void
test_host_prefixes(void)
{
	static const struct snap_subnet_spec subs[] = {{"10.1.0.0/16", "v4 by 24"},
						       {"2001:db8:1::/48", "v6 by 64"},
						       {"10.2.0.0/16", NULL}};
	const struct dpmon_rate r1 = snap_rate(10, 1000, 1, 800);
	const struct snap_host_spec hosts[] = {
		{"10.1.2.0", 0, snap_tcp_dir(r1), snap_tcp_dir(r1)},
		{"2001:db8:1:2::", 1, snap_tcp_dir(r1), snap_tcp_dir(r1)},
		{"10.2.0.5", 2, snap_tcp_dir(r1), snap_tcp_dir(r1)},
	};
	const struct snap_spec spec = {
		.seq = 3, .subnets = subs, .n_subnets = 3, .hosts = hosts, .n_hosts = 3};
	struct dpmon_snapshot *s = snap_build(&spec);
	struct dpmon_api_response r;
	struct dpmon_alert *a = dpmon_alert_alloc();

	REQUIRE(a != NULL);
	s->subnets[0].host_prefix_len = 24;
	s->subnets[1].host_prefix_len = 64;
	a->id = 1;
	a->addr = snap_addr("2001:db8:1:2::");
	a->prefix_len = 64;
	a->start_unix_s = 100;
	s->alerts = malloc(sizeof(*s->alerts));
	REQUIRE(s->alerts != NULL);
	s->alerts[0] = a;
	s->n_alerts = 1;

	r = get(s, "/api/v1/hosts/10.1.2.0/24");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "10.1.2.0/24");
	CHECK_STR(r.body, "subnet", "10.1.0.0/16");
	CHECK_INT(r.body, "ingress.packets", 10);
	json_decref(r.body);
	r = get(s, "/api/v1/hosts/10.1.2.77"); /* any address inside */
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "10.1.2.0/24");
	json_decref(r.body);
	r = get(s, "/api/v1/hosts/10.1.2.0");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "10.1.2.0/24");
	json_decref(r.body);
	r = get(s, "/api/v1/hosts/2001:db8:1:2:ffff:ffff:ffff:ffff");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "2001:db8:1:2::/64");
	json_decref(r.body);
	r = get(s, "/api/v1/hosts/2001:DB8:1:2:0::/64");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "2001:db8:1:2::/64");
	json_decref(r.body);
	r = get(s, "/api/v1/hosts/10.2.0.5");
	REQUIRE(r.status == 200);
	CHECK_STR(r.body, "address", "10.2.0.5");
	json_decref(r.body);
	CHECK_ERROR(get(s, "/api/v1/hosts/10.1.2.0/25"), 404, "host 10.1.2.0/25 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.1.3.0/24"), 404, "host 10.1.3.0/24 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.1.3.4"), 404, "host 10.1.3.4 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/2001:db8:1:3::1"), 404,
		    "host 2001:db8:1:3::1 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.2.0.0/24"), 404, "host 10.2.0.0/24 has not been seen");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.3.0.0/24"), 404,
		    "host 10.3.0.0/24 is not inside any monitored subnet");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.1.2.1/24"), 400,
		    "invalid host '10.1.2.1/24': host bits set (address is not the network "
		    "address of the prefix)");
	CHECK_ERROR(get(s, "/api/v1/hosts/10.2.0.5/32"), 400,
		    "invalid host '10.2.0.5/32': a whole address is written without /LENGTH");
	CHECK_ERROR(get(s, "/api/v1/hosts/::ffff:10.1.2.0/120"), 400,
		    "invalid host '::ffff:10.1.2.0/120': an IPv6 prefix inside ::ffff:0:0/96 is "
		    "no host; write the IPv4 form");

	r = get(s, "/api/v1/hosts?subnet=2001:db8:1::/48");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "hosts", 1);
	CHECK_STR(r.body, "hosts.0.address", "2001:db8:1:2::/64");
	json_decref(r.body);
	r = get(s, "/api/v1/subnets");
	REQUIRE(r.status == 200);
	CHECK_INT(r.body, "subnets.0.host_prefix_len", 24);
	CHECK_INT(r.body, "subnets.1.host_prefix_len", 64);
	CHECK_INT(r.body, "subnets.2.host_prefix_len", 32);
	json_decref(r.body);

	r = get(s, "/api/v1/alerts?address=2001:db8:1:2::9");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "alerts", 1);
	CHECK_STR(r.body, "alerts.0.address", "2001:db8:1:2::/64");
	json_decref(r.body);
	r = get(s, "/api/v1/alerts?address=2001:db8:1:2::/64");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "alerts", 1);
	json_decref(r.body);
	r = get(s, "/api/v1/alerts?address=2001:db8:1:2::/63");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "alerts", 0);
	json_decref(r.body);
	r = get(s, "/api/v1/alerts?address=2001:db8:1:3::");
	REQUIRE(r.status == 200);
	CHECK_SIZE(r.body, "alerts", 0);
	json_decref(r.body);
	dpmon_snapshot_free(s);
}

int
main(void)
{
	struct dpmon_snapshot *s;

	test_names();
	test_store();
	test_no_snapshot();
	test_dir_json_nonfinite();
	s = api_snapshot();
	test_snapshot_lookups(s);
	test_health(s);
	test_health_verdict(s);
	test_summary(s);
	test_summary_no_reload();
	test_subnets(s);
	test_host(s);
	test_hosts(s);
	test_routing(s);
	dpmon_snapshot_free(s);
	test_hosts_sort_kinds();
	test_host_prefixes();
	test_history_endpoint();
	test_listing_memory();
	test_million();
	return check_finish("test_api");
}
