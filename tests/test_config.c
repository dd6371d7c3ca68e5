/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_config.c — unit tests of lib/common/config.c (no DPDK, no framework).
 *
 * Each case feeds a JSON text (or a file) to the parser with an
 * open_memstream error sink, then checks the return value, the parsed
 * values and the exact error lines. A failed CHECK prints file:line and
 * the test exits 1 at the end.
 *
 * Usage: test_config [EXAMPLE.json]  — with an argument, the file (the
 * shipped config/dpmon.json) must also load without errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "stats.h"

/* @p out contains @p line as a whole line. */
#define CHECK_LINE(out, line)                                                             \
	do {                                                                              \
		test_checks++;                                                            \
		if (!has_line((out), (line))) {                                           \
			test_failures++;                                                  \
			fprintf(stderr, "%s:%d: missing line \"%s\" in:\n%s\n", __FILE__, \
				__LINE__, (line), (out));                                 \
		}                                                                         \
	} while (0)

/* @p out contains @p text anywhere. */
#define CHECK_HAS(out, text)                                                                   \
	do {                                                                                   \
		test_checks++;                                                                 \
		if (strstr((out), (text)) == NULL) {                                           \
			test_failures++;                                                       \
			fprintf(stderr, "%s:%d: missing \"%s\" in:\n%s\n", __FILE__, __LINE__, \
				(text), (out));                                                \
		}                                                                              \
	} while (0)

/* Strings @p a and @p b are equal. */
static int
has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; (p = strstr(p, line)) != NULL; p++)
		if ((p == out || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Parse @p json as "cfg.json"; the error output is returned in *out (free it). */
static int
parse(const char *json, struct dpmon_config *cfg, char **out)
{
	size_t len;
	FILE *f = open_memstream(out, &len);
	int rc;

	if (f == NULL) {
		perror("open_memstream");
		exit(2);
	}
	rc = dpmon_config_parse(json, "cfg.json", cfg, f);
	fclose(f);
	return rc;
}

/* Parse a text that must fail: check rc, the line count and the empty cfg. */
static char *
parse_bad(const char *json, int expected_errors)
{
	struct dpmon_config cfg;
	char *out = NULL;
	int rc = parse(json, &cfg, &out);

	CHECK(rc == expected_errors);
	CHECK(count_lines(out) == expected_errors);
	CHECK(cfg.subnets == NULL && cfg.n_subnets == 0);
	if (rc != expected_errors)
		fprintf(stderr, "  rc=%d for %s\n  output:\n%s", rc, json, out);
	return out;
}

/* actions.state_file @p path is refused with "$.actions.state_file:
 * \"PATH\" WHY" (@p why starting with "exists") or "\"PATH\": WHY". */
static void
check_state_file_refused(const char *path, const char *why)
{
	char json[1024], line[1024], *out;

	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		 " \"actions\": {\"state_file\": \"%s\"}}",
		 path);
	out = parse_bad(json, 1);
	snprintf(line, sizeof(line), "cfg.json: $.actions.state_file: \"%s\"%s%s", path,
		 strncmp(why, "exists", 6) == 0 ? " " : ": ", why);
	CHECK_LINE(out, line);
	free(out);
}

static const char *
prefix_text(const struct dpmon_prefix *p, char *buf)
{
	return dpmon_prefix_format(p, buf, DPMON_PREFIX_STRLEN);
}

/* Write @p text to a fresh temporary file; its name goes to @p path. */
static void
write_temp(char *path, const char *text)
{
	int fd;
	FILE *f;

	strcpy(path, "/tmp/test_config_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		perror("mkstemp");
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void
test_full(void)
{
	const char *json = "{\"comment\": \"example\", \"_comment\": [1, 2],\n"
			   " \"ports\": [{\"device\": \"net_pcap0\", \"rx_queues\": 4, "
			   "\"rx_descriptors\": 1024,\n"
			   "             \"mbufs\": 16777216},\n"
			   "           {\"device\": \"0000:01:00.0\", \"rx_queues\": 1024, "
			   "\"rx_descriptors\": 0,\n"
			   "            \"mbufs\": 1024}],\n"
			   " \"subnets\": [{\"prefix\": \"10.0.0.0/24\", \"name\": \"office\"},\n"
			   "             {\"prefix\": \"2001:DB8::/48\"},\n"
			   "             {\"prefix\": \"0.0.0.0/0\", \"name\": \"all-v4\"},\n"
			   "             {\"prefix\": \"::/0\", \"name\": \"\"}],\n"
			   " \"http\": {\"listen\": \"::1\", \"port\": 0},\n"
			   " \"host_table_capacity\": 1024, \"merge_interval_ms\": 60000, "
			   "\"burst_size\": 512,\n"
			   " \"mbufs_per_queue\": 1048576, \"idle_sleep_us\": 100000}\n";
	struct dpmon_config cfg;
	char *out = NULL, p[DPMON_PREFIX_STRLEN];

	CHECK(parse(json, &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.n_ports == 2);
	CHECK(strcmp(cfg.ports[0].device, "net_pcap0") == 0);
	CHECK(cfg.ports[0].rx_queues == 4);
	CHECK(cfg.ports[0].rx_descriptors == 1024);
	CHECK(strcmp(cfg.ports[1].device, "0000:01:00.0") == 0);
	CHECK(cfg.ports[1].rx_queues == 1024);
	CHECK(cfg.ports[1].rx_descriptors == 0);
	CHECK(cfg.ports[0].mbufs == 16777216);
	CHECK(cfg.ports[1].mbufs == 1024);
	CHECK(cfg.n_subnets == 4);
	CHECK(cfg.subnets != NULL);
	if (cfg.subnets != NULL && cfg.n_subnets == 4) {
		CHECK(strcmp(prefix_text(&cfg.subnets[0].prefix, p), "10.0.0.0/24") == 0);
		CHECK(cfg.subnets[0].prefix.family == 4 && cfg.subnets[0].prefix.depth == 24);
		CHECK(strcmp(cfg.subnets[0].name, "office") == 0);
		/* IPv6, normalised to RFC 5952 lower case */
		CHECK(strcmp(prefix_text(&cfg.subnets[1].prefix, p), "2001:db8::/48") == 0);
		CHECK(cfg.subnets[1].prefix.family == 6 && cfg.subnets[1].prefix.depth == 48);
		CHECK(strcmp(cfg.subnets[1].name, "") == 0);
		CHECK(strcmp(prefix_text(&cfg.subnets[2].prefix, p), "0.0.0.0/0") == 0);
		CHECK(strcmp(cfg.subnets[2].name, "all-v4") == 0);
		CHECK(strcmp(prefix_text(&cfg.subnets[3].prefix, p), "::/0") == 0);
	}
	CHECK(strcmp(cfg.http_listen, "::1") == 0);
	CHECK(cfg.http_port == 0);
	CHECK(cfg.host_table_capacity == 1024);
	CHECK(cfg.merge_interval_ms == 60000);
	CHECK(cfg.burst_size == 512);
	CHECK(cfg.mbufs_per_queue == 1048576);
	CHECK(cfg.idle_sleep_us == 100000);
	dpmon_config_free(&cfg);
	CHECK(cfg.subnets == NULL && cfg.n_subnets == 0);
	dpmon_config_free(&cfg); /* twice is harmless */
	free(out);
}

static void
test_defaults(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	dpmon_config_defaults(&cfg);
	CHECK(cfg.n_ports == 0 && cfg.n_subnets == 0 && cfg.subnets == NULL);
	CHECK(strcmp(cfg.http_listen, "127.0.0.1") == 0);
	CHECK(cfg.http_port == 8080);
	CHECK(cfg.host_table_capacity == 65536);
	CHECK(cfg.merge_interval_ms == 1000);
	CHECK(cfg.average_time_constant_ms == 5000);
	CHECK(cfg.history_s == 300);
	CHECK(cfg.burst_size == 32);
	CHECK(cfg.mbufs_per_queue == 4096);
	CHECK(cfg.idle_sleep_us == 0); /* busy polling */
	dpmon_config_free(&cfg);       /* safe on a defaulted config */

	CHECK(parse("{\"ports\": [{\"device\": \"net_pcap0\"}],"
		    " \"subnets\": [{\"prefix\": \"192.0.2.0/24\"}], \"http\": {}}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.n_ports == 1);
	CHECK(cfg.ports[0].rx_queues == DPMON_RXQ_AUTO); /* absent: one per worker */
	CHECK(cfg.ports[0].rx_descriptors == 0);
	CHECK(cfg.ports[0].mbufs == DPMON_MBUFS_AUTO); /* absent: sized at start-up */
	CHECK(cfg.n_subnets == 1 && strcmp(cfg.subnets[0].name, "") == 0);
	CHECK(strcmp(cfg.http_listen, "127.0.0.1") == 0);
	CHECK(cfg.http_port == 8080);
	CHECK(cfg.host_table_capacity == 65536);
	CHECK(cfg.merge_interval_ms == 1000);
	CHECK(cfg.burst_size == 32);
	CHECK(cfg.mbufs_per_queue == 4096);
	dpmon_config_free(&cfg);
	free(out);
}

static void
test_prefix_errors(void)
{
	char *out;

	out = parse_bad("{\"ports\": [{\"device\": \"d\"}], \"subnets\": ["
			"{\"prefix\": \"10.0.0.0/24\"}, {\"prefix\": \"10.0.1.0/24\"},"
			"{\"prefix\": \"10.0.2.1/24\"}, {\"prefix\": \"10.0.0.0/24\"},"
			"{\"prefix\": \"10.0.0.0\"}, {\"prefix\": \"10.0.0.0/33\"},"
			"{\"prefix\": \"banana/8\"}, {\"prefix\": 10}, {\"name\": \"x\"},"
			"{\"prefix\": \"2001:db8::1/64\"}, \"10.0.0.0/8\"]}",
			9);
	CHECK_LINE(out, "cfg.json: $.subnets[2].prefix: host bits set (address is not the network "
			"address of the prefix), got \"10.0.2.1/24\"");
	CHECK_LINE(
		out,
		"cfg.json: $.subnets[3].prefix: duplicate subnet 10.0.0.0/24 (also $.subnets[0])");
	CHECK_HAS(out, "cfg.json: $.subnets[4].prefix: bad CIDR");
	CHECK_HAS(out,
		  "cfg.json: $.subnets[5].prefix: bad CIDR (IPv4 prefix length must be 0..32)");
	CHECK_HAS(out, "cfg.json: $.subnets[6].prefix: bad CIDR");
	CHECK_LINE(out, "cfg.json: $.subnets[7].prefix: wrong type: expected string, got integer");
	CHECK_LINE(out, "cfg.json: $.subnets[8].prefix: missing required key");
	CHECK_HAS(out, "cfg.json: $.subnets[9].prefix: host bits set");
	CHECK_LINE(out, "cfg.json: $.subnets[10]: wrong type: expected object, got string");
	free(out);

	/* Equal IPv6 prefixes spelled differently; every later copy points at the first. */
	out = parse_bad("{\"ports\": [{\"device\": \"d\"}], \"subnets\": ["
			"{\"prefix\": \"2001:db8::/48\"}, {\"prefix\": \"10.0.0.0/8\"},"
			"{\"prefix\": \"2001:DB8:0::/48\"}, {\"prefix\": \"2001:db8::/47\"},"
			"{\"prefix\": \"2001:0db8::/48\"}]}",
			2);
	CHECK_LINE(out, "cfg.json: $.subnets[2].prefix: duplicate subnet 2001:db8::/48 (also "
			"$.subnets[0])");
	CHECK_LINE(out, "cfg.json: $.subnets[4].prefix: duplicate subnet 2001:db8::/48 (also "
			"$.subnets[0])");
	free(out);

	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\","
		" \"name\": "
		"\"0123456789012345678901234567890123456789012345678901234567890123\"}]}",
		1);
	CHECK_LINE(out, "cfg.json: $.subnets[0].name: must be at most 63 bytes, got 64");
	free(out);

	out = parse_bad("{\"ports\": [{\"device\": \"d\"}], \"subnets\": []}", 1);
	CHECK_LINE(out, "cfg.json: $.subnets: must have 1..65536 entries, got 0");
	free(out);
}

static void
test_range_and_type_errors(void)
{
	char *out;

	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"http\": {\"port\": 70000}}",
		1);
	CHECK_LINE(out, "cfg.json: $.http.port: must be an integer 0..65535, got 70000");
	free(out);

	out = parse_bad("{\"ports\": [{\"device\": \"d\", \"rx_queues\": \"4\"}],"
			" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
			1);
	CHECK_LINE(out, "cfg.json: $.ports[0].rx_queues: wrong type: expected integer, got string");
	free(out);

	/* A real is not an integer, even 32.0; booleans and null neither. */
	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\", \"rx_queues\": 0, \"rx_descriptors\": 32}],"
		" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}], \"burst_size\": 32.0,"
		" \"merge_interval_ms\": true, \"mbufs_per_queue\": null,"
		" \"host_table_capacity\": 1023, \"http\": {\"listen\": \"localhost\"}}",
		7);
	CHECK_LINE(out, "cfg.json: $.ports[0].rx_queues: must be an integer 1..1024, got 0");
	CHECK_LINE(
		out,
		"cfg.json: $.ports[0].rx_descriptors: must be 0 or an integer 64..16384, got 32");
	CHECK_LINE(out, "cfg.json: $.burst_size: wrong type: expected integer, got real");
	CHECK_LINE(out, "cfg.json: $.merge_interval_ms: wrong type: expected integer, got boolean");
	CHECK_LINE(out, "cfg.json: $.mbufs_per_queue: wrong type: expected integer, got null");
	CHECK_LINE(out,
		   "cfg.json: $.host_table_capacity: must be an integer 1024..16777216, got 1023");
	CHECK_LINE(out, "cfg.json: $.http.listen: not an IPv4 or IPv6 address, got \"localhost\"");
	free(out);
	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"http\": {\"listen\": \"::ffff:127.0.0.1\"}}",
		1);
	CHECK_LINE(out, "cfg.json: $.http.listen: an IPv4-mapped IPv6 address cannot be bound; "
			"write the IPv4 form, got \"::ffff:127.0.0.1\"");
	free(out);

	/* ports[].mbufs: 1024..16777216, an integer; 0 is not "auto" (leave it out). */
	out = parse_bad(
		"{\"ports\": [{\"device\": \"a\", \"mbufs\": 1023},"
		" {\"device\": \"b\", \"mbufs\": 16777217}, {\"device\": \"c\", \"mbufs\": 0},"
		" {\"device\": \"e\", \"mbufs\": \"65536\"}],"
		" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		4);
	CHECK_LINE(out, "cfg.json: $.ports[0].mbufs: must be an integer 1024..16777216, got 1023");
	CHECK_LINE(out,
		   "cfg.json: $.ports[1].mbufs: must be an integer 1024..16777216, got 16777217");
	CHECK_LINE(out, "cfg.json: $.ports[2].mbufs: must be an integer 1024..16777216, got 0");
	CHECK_LINE(out, "cfg.json: $.ports[3].mbufs: wrong type: expected integer, got string");
	free(out);

	out = parse_bad(
		"{\"ports\": {\"device\": \"d\"}, \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"http\": [], \"burst_size\": 513, \"merge_interval_ms\": 99,"
		" \"mbufs_per_queue\": 511, \"idle_sleep_us\": 100001}",
		6);
	CHECK_LINE(out, "cfg.json: $.ports: wrong type: expected array, got object");
	CHECK_LINE(out, "cfg.json: $.http: wrong type: expected object, got array");
	CHECK_LINE(out, "cfg.json: $.burst_size: must be an integer 1..512, got 513");
	CHECK_LINE(out, "cfg.json: $.merge_interval_ms: must be an integer 100..60000, got 99");
	CHECK_LINE(out, "cfg.json: $.mbufs_per_queue: must be an integer 512..1048576, got 511");
	CHECK_LINE(out, "cfg.json: $.idle_sleep_us: must be an integer 0..100000, got 100001");
	free(out);

	out = parse_bad("[1, 2]", 1);
	CHECK_LINE(out, "cfg.json: $: wrong type: expected object, got array");
	free(out);
}

/* average_time_constant_ms: set, bounds, type. */
static void
test_average_time_constant(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	CHECK(parse("{\"ports\": [{\"device\": \"net_pcap0\"}],"
		    " \"subnets\": [{\"prefix\": \"192.0.2.0/24\"}],"
		    " \"average_time_constant_ms\": 30000}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.average_time_constant_ms == 30000);
	CHECK(cfg.history_s == 300);
	dpmon_config_free(&cfg);
	free(out);
	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"average_time_constant_ms\": 99}",
		1);
	CHECK_LINE(out,
		   "cfg.json: $.average_time_constant_ms: must be an integer 100..3600000, got 99");
	free(out);
	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"average_time_constant_ms\": 5.5}",
		1);
	CHECK_LINE(out,
		   "cfg.json: $.average_time_constant_ms: wrong type: expected integer, got real");
	free(out);
	CHECK(parse("{\"ports\": [{\"device\": \"net_pcap0\"}],"
		    " \"subnets\": [{\"prefix\": \"192.0.2.0/24\"}], \"history_s\": 0}",
		    &cfg, &out) == 0);
	CHECK(cfg.history_s == 0);
	dpmon_config_free(&cfg);
	free(out);
	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"history_s\": 86401}",
		1);
	CHECK_LINE(out, "cfg.json: $.history_s: must be an integer 0..86400, got 86401");
	free(out);
}

static void
test_key_errors(void)
{
	char *out;

	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"bogus\": 1}",
		1);
	CHECK_LINE(out, "cfg.json: $.bogus: unknown key");
	free(out);

	out = parse_bad("{\"ports\": [{\"device\": \"d\", \"speed\": 10}],"
			" \"subnets\": [{\"prefix\": \"10.0.0.0/8\", \"vlan\": 3}],"
			" \"http\": {\"foo\": true, \"port\": 80}, \"a b\\n\": 0}",
			4);
	CHECK_LINE(out, "cfg.json: $.http.foo: unknown key");
	CHECK_LINE(out, "cfg.json: $.ports[0].speed: unknown key");
	CHECK_LINE(out, "cfg.json: $.subnets[0].vlan: unknown key");
	/* a key that is not an identifier is quoted; its newline stays escaped */
	CHECK_LINE(out, "cfg.json: $[\"a b\\n\"]: unknown key");
	free(out);

	/* "comment" is accepted only at the top level */
	out = parse_bad(
		"{\"ports\": [{\"device\": \"d\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"http\": {\"comment\": \"x\"}}",
		1);
	CHECK_LINE(out, "cfg.json: $.http.comment: unknown key");
	free(out);

	out = parse_bad("{\"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}", 1);
	CHECK_LINE(out, "cfg.json: $.ports: missing required key");
	free(out);

	out = parse_bad("{}", 2);
	CHECK_LINE(out, "cfg.json: $.ports: missing required key");
	CHECK_LINE(out, "cfg.json: $.subnets: missing required key");
	free(out);

	out = parse_bad("{\"ports\": [], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}", 1);
	CHECK_LINE(out, "cfg.json: $.ports: must have 1..32 entries, got 0");
	free(out);
}

static void
test_port_errors(void)
{
	char json[8192], *out;
	size_t off;

	out = parse_bad("{\"ports\": [{\"device\": \"net_pcap0\"}, {\"device\": \"net_pcap1\"},"
			" {\"device\": \"net_pcap0\"}, {\"rx_queues\": 2}, {\"device\": \"\"},"
			" {\"device\": 7}],"
			" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
			4);
	CHECK_LINE(out,
		   "cfg.json: $.ports[2].device: duplicate device \"net_pcap0\" (also $.ports[0])");
	CHECK_LINE(out, "cfg.json: $.ports[3].device: missing required key");
	CHECK_LINE(out, "cfg.json: $.ports[4].device: must be 1..127 bytes, got 0");
	CHECK_LINE(out, "cfg.json: $.ports[5].device: wrong type: expected string, got integer");
	free(out);

	/* 33 ports: one count error; entries past 32 are still checked */
	off = (size_t)snprintf(json, sizeof(json),
			       "{\"subnets\": [{\"prefix\": \"10.0.0.0/8\"}], \"ports\": [");
	for (int i = 0; i < 33; i++)
		off += (size_t)snprintf(json + off, sizeof(json) - off, "%s{\"device\": \"p%d\"%s}",
					i ? ", " : "", i, i == 32 ? ", \"x\": 1" : "");
	snprintf(json + off, sizeof(json) - off, "]}");
	out = parse_bad(json, 2);
	CHECK_LINE(out, "cfg.json: $.ports: must have 1..32 entries, got 33");
	CHECK_LINE(out, "cfg.json: $.ports[32].x: unknown key");
	free(out);

	/* device of 127 bytes is fine, 128 is not */
	memset(json, 0, sizeof(json));
	off = (size_t)snprintf(json, sizeof(json),
			       "{\"subnets\": [{\"prefix\": \"10.0.0.0/8\"}], "
			       "\"ports\": [{\"device\": \"");
	memset(json + off, 'a', 127);
	off += 127;
	off += (size_t)snprintf(json + off, sizeof(json) - off, "\"}, {\"device\": \"");
	memset(json + off, 'b', 128);
	off += 128;
	snprintf(json + off, sizeof(json) - off, "\"}]}");
	out = parse_bad(json, 1);
	CHECK_LINE(out, "cfg.json: $.ports[1].device: must be 1..127 bytes, got 128");
	free(out);
}

static void
test_syntax_errors(void)
{
	char *out;

	out = parse_bad("{\"ports\": [{\"device\": \"d\"}],\n"
			" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],\n"
			" \"burst_size\": 32,,\n"
			"}",
			1);
	CHECK_HAS(out, "cfg.json:3:");
	CHECK_HAS(out, ": invalid JSON: ");
	CHECK(strncmp(out, "cfg.json:3:", 11) == 0);
	free(out);

	/* duplicate keys are rejected by jansson (JSON_REJECT_DUPLICATES) */
	out = parse_bad("{\"ports\": [{\"device\": \"d\"}],\n"
			"\"ports\": [{\"device\": \"e\"}],\n"
			" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
			1);
	CHECK(strncmp(out, "cfg.json:2:", 11) == 0);
	CHECK_HAS(out, "invalid JSON: duplicate object key");
	free(out);

	out = parse_bad("", 1);
	CHECK_HAS(out, "cfg.json:");
	CHECK_HAS(out, ": invalid JSON: ");
	free(out);
}

static void
test_multiple_errors(void)
{
	struct dpmon_config cfg;
	char *out = NULL;
	int rc;

	rc = parse("{\"ports\": [{\"device\": \"d\", \"rx_queues\": 0}],"
		   " \"subnets\": [{\"prefix\": \"10.0.0.1/8\"}, {\"prefix\": \"10.0.0.0/8\"},"
		   " {\"prefix\": \"10.0.0.0/8\"}],"
		   " \"http\": {\"port\": -1, \"listen\": 1}, \"bogus\": 0, \"burst_size\": 0}",
		   &cfg, &out);
	CHECK(rc == 7);
	CHECK(count_lines(out) == 7);
	CHECK(cfg.subnets == NULL && cfg.n_subnets == 0 && cfg.n_ports == 0);
	CHECK_LINE(
		out,
		"cfg.json: $.subnets[2].prefix: duplicate subnet 10.0.0.0/8 (also $.subnets[1])");
	CHECK_LINE(out, "cfg.json: $.http.port: must be an integer 0..65535, got -1");
	CHECK_LINE(out, "cfg.json: $.http.listen: wrong type: expected string, got integer");
	free(out);

	/* a NULL error sink still counts */
	CHECK(dpmon_config_parse("{\"bogus\": 1}", NULL, &cfg, NULL) == 3);
	CHECK(dpmon_config_parse(NULL, "x", &cfg, NULL) == -EINVAL);
}

/* 65536 subnets parse quickly; the one duplicate (the last) is found. */
static void
test_many_subnets(void)
{
	size_t cap = 65537 * 40 + 256, off;
	char *json = malloc(cap), *out = NULL;
	struct dpmon_config cfg;
	struct timespec t0, t1;
	double secs;
	int rc;

	if (json == NULL)
		exit(2);
	off = (size_t)snprintf(json, cap, "{\"ports\": [{\"device\": \"d\"}], \"subnets\": [");
	for (unsigned i = 0; i < 65536; i++)
		off += (size_t)snprintf(json + off, cap - off, "%s{\"prefix\": \"10.%u.%u.0/24\"}",
					i ? "," : "", i >> 8, i & 255);
	snprintf(json + off, cap - off, "]}");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = parse(json, &cfg, &out);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(rc == 0);
	CHECK(cfg.n_subnets == 65536);
	CHECK(secs < 5.0);
	dpmon_config_free(&cfg);
	free(out);

	/* the last entry repeats the first: exactly one duplicate reported */
	off = strlen(json) - 2;
	off -= strlen("{\"prefix\": \"10.255.255.0/24\"}");
	snprintf(json + off, cap - off, "{\"prefix\": \"10.0.0.0/24\"}]}");
	out = parse_bad(json, 1);
	CHECK_LINE(out, "cfg.json: $.subnets[65535].prefix: duplicate subnet 10.0.0.0/24 (also "
			"$.subnets[0])");
	free(out);

	/* 65537 entries: too many */
	off = strlen(json) - 2;
	snprintf(json + off, cap - off, ",{\"prefix\": \"11.0.0.0/24\"}]}");
	out = parse_bad(json, 2);
	CHECK_LINE(out, "cfg.json: $.subnets: must have 1..65536 entries, got 65537");
	free(out);
	free(json);
}

/* A FIFO (nobody writes it), a device and a file over 64 MiB are refused at
 * once, with the reason after the file's name. */
static void
test_load_not_regular(void)
{
	char dir[] = "/tmp/dpmon-cfg-fifo.XXXXXX", path[64], *out = NULL;
	struct dpmon_config cfg;
	size_t len;
	FILE *f;
	int fd;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fifo.json", dir);
	REQUIRE(mkfifo(path, 0600) == 0);
	f = open_memstream(&out, &len);
	CHECK(dpmon_config_load(path, &cfg, f) == -EINVAL);
	fclose(f);
	CHECK(strncmp(out, dir, strlen(dir)) == 0);
	CHECK(strcmp(out + strlen(dir), "/fifo.json: cannot read: not a regular file (FIFO)\n") ==
	      0);
	free(out);
	unlink(path);
	f = open_memstream(&out, &len);
	CHECK(dpmon_config_load("/dev/zero", &cfg, f) == -EINVAL);
	fclose(f);
	CHECK(strcmp(out, "/dev/zero: cannot read: not a regular file (character device)\n") == 0);
	free(out);
	/* 64 MiB + 1 byte, sparse: refused on its size, not read. */
	snprintf(path, sizeof(path), "%s/big.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, (64 << 20) + 1) == 0);
	close(fd);
	f = open_memstream(&out, &len);
	CHECK(dpmon_config_load(path, &cfg, f) == -EFBIG);
	fclose(f);
	CHECK(strcmp(out + strlen(dir), "/big.json: cannot read: larger than 67108864 bytes\n") ==
	      0);
	free(out);
	unlink(path);
	rmdir(dir);
}

static void
test_files(const char *example)
{
	struct dpmon_config cfg;
	char path[64], path2[64], *out = NULL, line[128];
	size_t len;
	FILE *f;
	int rc;

	write_temp(path, "{\"ports\": [{\"device\": \"net_pcap0\"}],\n"
			 " \"subnets\": [{\"prefix\": \"2001:db8:10::/64\", \"name\": \"v6\"}]}\n");
	CHECK(dpmon_config_load(path, &cfg, stderr) == 0);
	CHECK(cfg.n_subnets == 1 && strcmp(cfg.subnets[0].name, "v6") == 0);
	CHECK(cfg.subnets[0].prefix.family == 6 && cfg.subnets[0].prefix.depth == 64);
	dpmon_config_free(&cfg);
	unlink(path);

	/* errors from a file are prefixed with its path */
	write_temp(path, "{\"ports\": [{\"device\": \"net_pcap0\"}],\n"
			 " \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],\n \"x\": 1}\n");
	f = open_memstream(&out, &len);
	CHECK(dpmon_config_load(path, &cfg, f) == 1);
	fclose(f);
	snprintf(line, sizeof(line), "%s: $.x: unknown key", path);
	CHECK_LINE(out, line);
	CHECK(cfg.subnets == NULL);
	free(out);

	/* a syntax error in a file: PATH:LINE:COL */
	write_temp(path2, "{\"ports\": [{\"device\": \"net_pcap0\"}],\n  bad\n}\n");
	f = open_memstream(&out, &len);
	CHECK(dpmon_config_load(path2, &cfg, f) == 1);
	fclose(f);
	snprintf(line, sizeof(line), "%s:2:", path2);
	CHECK(strncmp(out, line, strlen(line)) == 0);
	CHECK_HAS(out, ": invalid JSON: ");
	free(out);
	unlink(path2);
	unlink(path);

	f = open_memstream(&out, &len);
	rc = dpmon_config_load("/nonexistent/dpmon.json", &cfg, f);
	fclose(f);
	CHECK(rc == -ENOENT);
	CHECK_LINE(out, "/nonexistent/dpmon.json: cannot read: No such file or directory");
	CHECK(cfg.subnets == NULL);
	free(out);

	f = open_memstream(&out, &len);
	rc = dpmon_config_load("/tmp", &cfg, f);
	fclose(f);
	CHECK(rc == -EISDIR);
	CHECK_LINE(out, "/tmp: cannot read: Is a directory");
	free(out);
	test_load_not_regular();

	if (example != NULL) {
		rc = dpmon_config_load(example, &cfg, stderr);
		CHECK(rc == 0);
		CHECK(cfg.n_ports == 1 && cfg.n_subnets == 4);
		dpmon_config_free(&cfg);
	}
}

/* http.cors_origins, metrics.top_hosts and top_subnets: values, defaults, errors. */
#define OPS_BASE \
	"{\"ports\": [{\"device\": \"net_pcap0\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}], "

static void
test_ops_keys(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	CHECK(parse(OPS_BASE "\"http\": {\"cors_origins\": [\"*\", \"http://grafana.lan:3000\","
			     " \"https://10.1.2.3\", \"http://[::1]:8000\"]}, \"metrics\": "
			     "{\"top_hosts\": 0}}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.n_cors_origins == 4);
	CHECK(strcmp(cfg.http_cors_origins[0], "*") == 0);
	CHECK(strcmp(cfg.http_cors_origins[1], "http://grafana.lan:3000") == 0);
	CHECK(strcmp(cfg.http_cors_origins[3], "http://[::1]:8000") == 0);
	CHECK(cfg.metrics_top_hosts == 0);
	dpmon_config_free(&cfg);
	free(out);

	CHECK(parse(OPS_BASE "\"metrics\": {\"top_hosts\": 1000, \"top_subnets\": 65536}}", &cfg,
		    &out) == 0);
	CHECK(cfg.metrics_top_hosts == 1000 && cfg.n_cors_origins == 0);
	CHECK(cfg.metrics_top_subnets == 65536);
	dpmon_config_free(&cfg);
	free(out);
	CHECK(parse(OPS_BASE "\"metrics\": {\"top_subnets\": 0}}", &cfg, &out) == 0);
	CHECK(cfg.metrics_top_subnets == 0 && cfg.metrics_top_hosts == DPMON_TOP_HOSTS_DEFAULT);
	dpmon_config_free(&cfg);
	free(out);
	CHECK(parse(OPS_BASE "\"http\": {}}", &cfg, &out) == 0);
	CHECK(cfg.metrics_top_hosts == DPMON_TOP_HOSTS_DEFAULT && cfg.n_cors_origins == 0);
	CHECK(cfg.metrics_top_subnets == DPMON_TOP_SUBNETS_DEFAULT);
	dpmon_config_free(&cfg);
	free(out);

	out = parse_bad(OPS_BASE "\"metrics\": {\"top_hosts\": 1001, \"x\": 1}}", 2);
	CHECK_LINE(out, "cfg.json: $.metrics.top_hosts: must be an integer 0..1000, got 1001");
	CHECK_LINE(out, "cfg.json: $.metrics.x: unknown key");
	free(out);
	out = parse_bad(OPS_BASE "\"metrics\": {\"top_subnets\": 65537}}", 1);
	CHECK_LINE(out, "cfg.json: $.metrics.top_subnets: must be an integer 0..65536, got 65537");
	free(out);
	out = parse_bad(OPS_BASE "\"metrics\": [20]}", 1);
	CHECK_LINE(out, "cfg.json: $.metrics: wrong type: expected object, got array");
	free(out);
	out = parse_bad(
		OPS_BASE
		"\"http\": {\"cors_origins\": [\"http://a.b/\", \"ftp://x\","
		" \"http://A.b\", \"http://x:80\", \"https://x:0\", \"\", 7, \"http://[zz]\"]}}",
		8);
	CHECK_LINE(out,
		   "cfg.json: $.http.cors_origins[0]: an origin has no path, query or trailing "
		   "slash: only [:PORT] may follow the host, got \"http://a.b/\"");
	CHECK_HAS(out, "cfg.json: $.http.cors_origins[1]: not \"*\" or an origin");
	CHECK_HAS(out, "cfg.json: $.http.cors_origins[2]: missing or bad host");
	CHECK_LINE(out,
		   "cfg.json: $.http.cors_origins[3]: browsers omit the scheme's default port: "
		   "leave it out, got \"http://x:80\"");
	CHECK_LINE(out,
		   "cfg.json: $.http.cors_origins[4]: port must be 1..65535, got \"https://x:0\"");
	CHECK_LINE(out, "cfg.json: $.http.cors_origins[5]: must be 1..255 bytes, got 0");
	CHECK_LINE(out,
		   "cfg.json: $.http.cors_origins[6]: wrong type: expected string, got integer");
	CHECK_HAS(out, "cfg.json: $.http.cors_origins[7]: bad bracketed IPv6 host");
	free(out);
	out = parse_bad(OPS_BASE "\"http\": {\"cors_origins\": \"*\"}}", 1);
	CHECK_LINE(out, "cfg.json: $.http.cors_origins: wrong type: expected array, got string");
	free(out);
	out = parse_bad(OPS_BASE
			"\"http\": {\"cors_origins\": [\"*\",\"*\",\"*\",\"*\",\"*\",\"*\","
			"\"*\",\"*\",\"*\",\"*\",\"*\",\"*\",\"*\",\"*\",\"*\",\"*\",\"*\"]}}",
			1);
	CHECK_LINE(out, "cfg.json: $.http.cors_origins: must have 0..16 entries, got 17");
	free(out);
}

/* http.allowed_hosts: names and addresses in lower case, none by default,
 * every kind of mistake. */
static void
test_allowed_hosts(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	CHECK(parse(OPS_BASE "\"http\": {\"allowed_hosts\": [\"DPMon.Example.net\", "
			     "\"192.0.2.10\", \"2001:db8::1\", \"probe_7\"]}}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.n_allowed_hosts == 4);
	CHECK(strcmp(cfg.http_allowed_hosts[0], "dpmon.example.net") == 0);
	CHECK(strcmp(cfg.http_allowed_hosts[1], "192.0.2.10") == 0);
	CHECK(strcmp(cfg.http_allowed_hosts[2], "2001:db8::1") == 0);
	CHECK(strcmp(cfg.http_allowed_hosts[3], "probe_7") == 0);
	dpmon_config_free(&cfg);
	free(out);
	CHECK(parse(OPS_BASE "\"http\": {}}", &cfg, &out) == 0);
	CHECK(cfg.n_allowed_hosts == 0);
	dpmon_config_free(&cfg);
	free(out);

	out = parse_bad(OPS_BASE "\"http\": {\"allowed_hosts\": [\"dpmon.lan:8080\", "
				 "\"[::1]\", \"a b\", \"\", 7, \"http://x\"]}}",
			6);
	CHECK_LINE(out, "cfg.json: $.http.allowed_hosts[0]: a host name or IP address without "
			"port or brackets, got \"dpmon.lan:8080\"");
	CHECK_LINE(out, "cfg.json: $.http.allowed_hosts[1]: a host name or IP address without "
			"port or brackets, got \"[::1]\"");
	CHECK_LINE(out, "cfg.json: $.http.allowed_hosts[2]: a host name or IP address without "
			"port or brackets, got \"a b\"");
	CHECK_LINE(out, "cfg.json: $.http.allowed_hosts[3]: must be 1..255 bytes, got 0");
	CHECK_LINE(out,
		   "cfg.json: $.http.allowed_hosts[4]: wrong type: expected string, got integer");
	CHECK_LINE(out, "cfg.json: $.http.allowed_hosts[5]: a host name or IP address without "
			"port or brackets, got \"http://x\"");
	free(out);
	out = parse_bad(OPS_BASE "\"http\": {\"allowed_hosts\": \"localhost\"}}", 1);
	CHECK_LINE(out, "cfg.json: $.http.allowed_hosts: wrong type: expected array, got string");
	free(out);
}

/* Write @p text into the new file @p path with mode @p mode. */
static void
write_mode(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) != 0) {
		perror(path);
		exit(2);
	}
}

/* http.write_token_file and read_token_file: a private token file is taken;
 * one others may read, an empty one, a directory, a FIFO, a relative path
 * are refused with the JSON path; a listener other than loopback needs a
 * write token or http.allow_unauthenticated_writes. */
static void
test_token_files(void)
{
	char dir[] = "/tmp/test_config_tokens.XXXXXX", good[64], open_[64], empty[64], fifo[64],
	     json[1024], line[512];
	struct dpmon_config cfg;
	char *out = NULL;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(good, sizeof(good), "%s/good", dir);
	snprintf(open_, sizeof(open_), "%s/open", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	write_mode(good, "tok-1\n", 0600);
	write_mode(open_, "tok-2\n", 0644);
	write_mode(empty, "\n", 0600);
	CHECK(mkfifo(fifo, 0600) == 0);

	snprintf(json, sizeof(json),
		 OPS_BASE "\"http\": {\"listen\": \"0.0.0.0\", \"write_token_file\": \"%s\", "
			  "\"read_token_file\": \"%s\"}}",
		 good, good);
	CHECK(parse(json, &cfg, &out) == 0);
	CHECK_EQ_STR(out, "");
	CHECK_EQ_STR(cfg.http_write_token_file, good);
	CHECK_EQ_STR(cfg.http_read_token_file, good);
	CHECK(!cfg.http_allow_unauthenticated_writes);
	dpmon_config_free(&cfg);
	free(out);
	CHECK(parse(OPS_BASE "\"http\": {\"listen\": \"192.0.2.1\", "
			     "\"allow_unauthenticated_writes\": true}}",
		    &cfg, &out) == 0);
	CHECK(cfg.http_allow_unauthenticated_writes);
	CHECK_EQ_STR(cfg.http_write_token_file, "");
	dpmon_config_free(&cfg);
	free(out);

	snprintf(json, sizeof(json),
		 OPS_BASE "\"http\": {\"write_token_file\": \"%s\", \"read_token_file\": \"%s\"}}",
		 open_, empty);
	out = parse_bad(json, 2);
	snprintf(line, sizeof(line),
		 "cfg.json: $.http.write_token_file: token file \"%s\": group or others may "
		 "access it (mode 0644; chmod 600)",
		 open_);
	CHECK_LINE(out, line);
	snprintf(line, sizeof(line), "cfg.json: $.http.read_token_file: token file \"%s\": empty",
		 empty);
	CHECK_LINE(out, line);
	free(out);
	snprintf(json, sizeof(json),
		 OPS_BASE "\"http\": {\"write_token_file\": \"%s\", \"read_token_file\": \"%s\"}}",
		 fifo, dir);
	out = parse_bad(json, 2);
	snprintf(line, sizeof(line),
		 "cfg.json: $.http.write_token_file: token file \"%s\": not a regular file (FIFO)",
		 fifo);
	CHECK_LINE(out, line);
	snprintf(line, sizeof(line),
		 "cfg.json: $.http.read_token_file: token file \"%s\": Is a directory", dir);
	CHECK_LINE(out, line);
	free(out);
	out = parse_bad(OPS_BASE "\"http\": {\"write_token_file\": \"tok\", "
				 "\"allow_unauthenticated_writes\": 1}}",
			2);
	CHECK_LINE(out, "cfg.json: $.http.write_token_file: must be an absolute path, got \"tok\"");
	CHECK_LINE(out, "cfg.json: $.http.allow_unauthenticated_writes: wrong type: expected "
			"boolean, got integer");
	free(out);
	out = parse_bad(OPS_BASE "\"http\": {\"listen\": \"::\"}}", 1);
	CHECK_LINE(out, "cfg.json: $.http.listen: \"::\" is not a loopback address: set "
			"http.write_token_file, or http.allow_unauthenticated_writes to true");
	free(out);
	CHECK(parse(OPS_BASE "\"http\": {\"listen\": \"127.0.0.2\"}}", &cfg, &out) == 0);
	dpmon_config_free(&cfg);
	free(out);
	unlink(good);
	unlink(open_);
	unlink(empty);
	unlink(fifo);
	rmdir(dir);
}

/* export.*.password_file and export.influxdb.token_file: read with the
 * configuration (the secret kept in it, the line break stripped); a FIFO,
 * a directory, /dev/zero, an empty or a longer file, a password without
 * a user are refused with the JSON path, the file and the reason. */
static void
test_export_secret_files(void)
{
	char dir[] = "/tmp/test_config_secrets.XXXXXX", pw[64], tok[64], empty[64], fifo[64],
	     big[64], json[1024], line[512], text[600];
	struct dpmon_config cfg;
	char *out = NULL;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	snprintf(tok, sizeof(tok), "%s/tok", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	write_mode(pw, "s3cret\n", 0640);
	write_mode(tok, "influx-token\r\n", 0600);
	write_mode(empty, "", 0600);
	memset(text, 'x', 512);
	text[512] = '\0';
	write_mode(big, text, 0600);
	REQUIRE(mkfifo(fifo, 0600) == 0);

	snprintf(json, sizeof(json),
		 OPS_BASE "\"export\": {\"clickhouse\": {\"user\": \"dpmon\", \"password_file\": "
			  "\"%s\"}, \"influxdb\": {\"org\": \"o\", \"bucket\": \"b\", "
			  "\"token_file\": \"%s\"}}}",
		 pw, tok);
	CHECK(parse(json, &cfg, &out) == 0);
	CHECK_EQ_STR(out, "");
	CHECK_EQ_STR(cfg.export.sink[DPMON_EXPORT_CLICKHOUSE].password_file, pw);
	CHECK_EQ_STR(cfg.export.sink[DPMON_EXPORT_CLICKHOUSE].password, "s3cret");
	CHECK_EQ_STR(cfg.export.sink[DPMON_EXPORT_INFLUXDB].token, "influx-token");
	dpmon_config_free(&cfg);
	free(out);

	snprintf(json, sizeof(json),
		 OPS_BASE "\"export\": {\"clickhouse\": {\"user\": \"u\", \"password_file\": "
			  "\"%s\"}, \"influxdb\": {\"user\": \"u\", \"password_file\": \"%s\"}}}",
		 fifo, dir);
	out = parse_bad(json, 2);
	snprintf(line, sizeof(line),
		 "cfg.json: $.export.clickhouse.password_file: cannot read \"%s\": not a "
		 "regular file (FIFO)",
		 fifo);
	CHECK_LINE(out, line);
	snprintf(line, sizeof(line),
		 "cfg.json: $.export.influxdb.password_file: cannot read \"%s\": Is a directory",
		 dir);
	CHECK_LINE(out, line);
	free(out);

	snprintf(json, sizeof(json),
		 OPS_BASE "\"export\": {\"clickhouse\": {\"user\": \"u\", \"password_file\": "
			  "\"/dev/zero\"}, \"influxdb\": {\"org\": \"o\", \"bucket\": \"b\", "
			  "\"token_file\": \"%s\"}}}",
		 empty);
	out = parse_bad(json, 2);
	CHECK_LINE(out, "cfg.json: $.export.clickhouse.password_file: cannot read \"/dev/zero\": "
			"not a regular file (character device)");
	snprintf(line, sizeof(line),
		 "cfg.json: $.export.influxdb.token_file: cannot read \"%s\": empty", empty);
	CHECK_LINE(out, line);
	free(out);

	snprintf(json, sizeof(json),
		 OPS_BASE "\"export\": {\"clickhouse\": {\"password_file\": \"%s\"}, "
			  "\"influxdb\": {\"user\": \"u\", \"password_file\": \"%s\"}}}",
		 pw, big);
	out = parse_bad(json, 2);
	CHECK_LINE(out, "cfg.json: $.export.clickhouse.password_file: a password needs \"user\" "
			"(HTTP basic authentication sends both)");
	snprintf(line, sizeof(line),
		 "cfg.json: $.export.influxdb.password_file: cannot read \"%s\": longer than 511 "
		 "bytes",
		 big);
	CHECK_LINE(out, line);
	free(out);
	unlink(pw);
	unlink(tok);
	unlink(empty);
	unlink(fifo);
	unlink(big);
	rmdir(dir);
}

/* ports[].decap: true, false, absent, a list; every kind of mistake. */
static void
test_decap(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	CHECK(parse("{\"ports\": [{\"device\": \"a\", \"decap\": true},"
		    " {\"device\": \"b\", \"decap\": false}, {\"device\": \"c\"},"
		    " {\"device\": \"d\", \"decap\": [\"vxlan\", \"gre\"]},"
		    " {\"device\": \"e\", \"decap\": []},"
		    " {\"device\": \"f\", \"decap\": [\"gre\", \"erspan\", \"vxlan\", \"ipip\","
		    " \"mpls_udp\", \"gre_udp\"]}],"
		    " \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.ports[0].decap == DPMON_TUNNEL_ALL);
	CHECK(cfg.ports[1].decap == 0);
	CHECK(cfg.ports[2].decap == 0);
	CHECK(cfg.ports[3].decap == (DPMON_TUNNEL_VXLAN | DPMON_TUNNEL_GRE));
	CHECK(cfg.ports[4].decap == 0);
	CHECK(cfg.ports[5].decap == DPMON_TUNNEL_ALL);
	dpmon_config_free(&cfg);
	free(out);

	out = parse_bad(
		"{\"ports\": [{\"device\": \"a\", \"decap\": 1},"
		" {\"device\": \"b\", \"decap\": \"gre\"},"
		" {\"device\": \"c\", \"decap\": [\"gre\", \"GRE\", 4, \"gre\", \"geneve\"]},"
		" {\"device\": \"d\", \"decap\": null}],"
		" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		7);
	CHECK_LINE(out, "cfg.json: $.ports[0].decap: wrong type: expected boolean or array of "
			"tunnel kinds, got integer");
	CHECK_LINE(out, "cfg.json: $.ports[1].decap: wrong type: expected boolean or array of "
			"tunnel kinds, got string");
	CHECK_LINE(out, "cfg.json: $.ports[2].decap[1]: unknown tunnel kind \"GRE\" (expected one "
			"of gre, erspan, vxlan, ipip, mpls_udp, gre_udp)");
	CHECK_LINE(out, "cfg.json: $.ports[2].decap[2]: wrong type: expected string, got integer");
	CHECK_LINE(out, "cfg.json: $.ports[2].decap[3]: duplicate tunnel kind \"gre\"");
	CHECK_LINE(out, "cfg.json: $.ports[2].decap[4]: unknown tunnel kind \"geneve\" (expected "
			"one of gre, erspan, vxlan, ipip, mpls_udp, gre_udp)");
	CHECK_LINE(out, "cfg.json: $.ports[3].decap: wrong type: expected boolean or array of "
			"tunnel kinds, got null");
	free(out);
}

/* software_rss: a boolean, false by default. */
static void
test_software_rss(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"software_rss\": true,"
		    " \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.software_rss);
	dpmon_config_free(&cfg);
	free(out);
	out = NULL;
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"software_rss\": false,"
		    " \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK(!cfg.software_rss);
	dpmon_config_free(&cfg);
	free(out);
	out = NULL;
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}],"
		    " \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK(!cfg.software_rss);
	dpmon_config_free(&cfg);
	free(out);
	out = parse_bad("{\"ports\": [{\"device\": \"a\"}], \"software_rss\": 1,"
			" \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}]}",
			1);
	CHECK_LINE(out, "cfg.json: $.software_rss: wrong type: expected boolean, got integer");
	free(out);
}

#define DET_HEAD "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/24\"}], "

static void
test_detection(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	/* Defaults: no detection section. */
	CHECK(parse(DET_HEAD "\"http\": {}}", &cfg, &out) == 0);
	CHECK(!cfg.detect.enabled && !cfg.detect.ban);
	CHECK(cfg.detect.start_intervals == 1 && cfg.detect.hold_s == 60 &&
	      cfg.detect.recent_alerts == 1000);
	CHECK(cfg.detect.n_hostgroups == 0 && cfg.detect.n_whitelist == 0);
	dpmon_config_free(&cfg);
	free(out);
	out = NULL;

	/* A full section; hostgroups before the globals they inherit from. */
	CHECK(parse(DET_HEAD
		    "\"detection\": {"
		    "\"hostgroups\": ["
		    "  {\"name\": \"web\", \"prefixes\": [\"10.0.0.5/32\", \"2001:db8::/48\"],"
		    "   \"thresholds\": {\"ingress\": {\"pps\": 50000}}, \"ban\": false},"
		    "  {\"name\": \"lab\", \"prefixes\": [\"10.0.0.0/26\"], \"enabled\": false},"
		    "  {\"name\": \"big\", \"prefixes\": [\"10.0.0.0/8\"]}],"
		    "\"thresholds\": {\"ingress\": {\"pps\": 1000, \"tcp_syn_pps\": 200.5, "
		    "\"flows\": 3000},"
		    "                 \"egress\": {\"bps\": 1e9, \"fragments_pps\": 10}},"
		    "\"whitelist\": [\"10.0.0.7/32\", \"::1/128\"],"
		    "\"start_intervals\": 3, \"hold_s\": 0, \"recent_alerts\": 5, \"ban\": true}}",
		    &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(cfg.detect.enabled && cfg.detect.ban);
	CHECK(cfg.detect.start_intervals == 3 && cfg.detect.hold_s == 0 &&
	      cfg.detect.recent_alerts == 5);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_PPS] == 1000);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_TCP_SYN_PPS] == 200.5);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_FLOWS] == 3000);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_BPS] == 0);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_BPS] == 1e9);
	CHECK(cfg.detect.thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_FRAGMENTS_PPS] == 10);
	REQUIRE(cfg.detect.n_hostgroups == 3);
	CHECK(strcmp(cfg.detect.hostgroups[0].name, "web") == 0);
	REQUIRE(cfg.detect.hostgroups[0].n_prefixes == 2);
	CHECK(cfg.detect.hostgroups[0].prefixes[0].family == 4 &&
	      cfg.detect.hostgroups[0].prefixes[0].depth == 32);
	CHECK(cfg.detect.hostgroups[0].prefixes[1].family == 6 &&
	      cfg.detect.hostgroups[0].prefixes[1].depth == 48);
	CHECK(cfg.detect.hostgroups[0].enabled && !cfg.detect.hostgroups[0].ban);
	/* Its thresholds replace the global ones entirely: no tcp_syn_pps. */
	CHECK(cfg.detect.hostgroups[0].thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_PPS] ==
	      50000);
	CHECK(cfg.detect.hostgroups[0]
		      .thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_TCP_SYN_PPS] == 0);
	CHECK(cfg.detect.hostgroups[0].thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_BPS] == 0);
	CHECK(!cfg.detect.hostgroups[1].enabled && cfg.detect.hostgroups[1].ban);
	/* Without "thresholds", a hostgroup uses the global ones. */
	CHECK(cfg.detect.hostgroups[2]
		      .thresholds.limit[DPMON_DIR_INGRESS][DPMON_METRIC_TCP_SYN_PPS] == 200.5);
	CHECK(cfg.detect.hostgroups[2].thresholds.limit[DPMON_DIR_EGRESS][DPMON_METRIC_BPS] == 1e9);
	REQUIRE(cfg.detect.n_whitelist == 2);
	CHECK(cfg.detect.whitelist[1].family == 6 && cfg.detect.whitelist[1].depth == 128);
	dpmon_config_free(&cfg);
	free(out);
	out = NULL;

	/* "enabled": false wins over thresholds. */
	CHECK(parse(DET_HEAD "\"detection\": {\"enabled\": false,"
			     " \"thresholds\": {\"ingress\": {\"pps\": 1}}}}",
		    &cfg, &out) == 0);
	CHECK(!cfg.detect.enabled);
	dpmon_config_free(&cfg);
	free(out);

	out = parse_bad(DET_HEAD
			"\"detection\": {\"thresholds\": {\"ingress\": {\"ppps\": 1,"
			" \"bps\": -1, \"pps\": \"x\"}, \"sideways\": {}}, \"hold_s\": 90000,"
			" \"start_intervals\": 0, \"recent_alerts\": true, \"whitelist\": "
			"[\"10.0.0.1/24\", 7],"
			" \"foo\": 1}}",
			10);
	CHECK_LINE(out,
		   "cfg.json: $.detection.thresholds.ingress.ppps: unknown metric (expected one of "
		   "pps, bps, flows, tcp_pps, tcp_bps, udp_pps, udp_bps, icmp_pps, icmp_bps, "
		   "tcp_syn_pps, fragments_pps)");
	CHECK_LINE(out, "cfg.json: $.detection.thresholds.ingress.bps: must be a number 0..1e18 "
			"(0 = not watched), got -1");
	CHECK_LINE(out, "cfg.json: $.detection.thresholds.ingress.pps: wrong type: expected "
			"number, got string");
	CHECK_LINE(out, "cfg.json: $.detection.thresholds.sideways: unknown key");
	CHECK_LINE(out, "cfg.json: $.detection.hold_s: must be an integer 0..86400, got 90000");
	CHECK_LINE(out, "cfg.json: $.detection.start_intervals: must be an integer 1..3600, got 0");
	CHECK_LINE(
		out,
		"cfg.json: $.detection.recent_alerts: wrong type: expected integer, got boolean");
	CHECK_LINE(out, "cfg.json: $.detection.whitelist[0]: host bits set "
			"(address is not the network address of the prefix), got \"10.0.0.1/24\"");
	CHECK_LINE(out,
		   "cfg.json: $.detection.whitelist[1]: wrong type: expected string, got integer");
	free(out);
	out = parse_bad(DET_HEAD "\"detection\": {\"foo\": 1}}", 1);
	CHECK_LINE(out, "cfg.json: $.detection.foo: unknown key");
	free(out);

	/* Hostgroups: required keys, duplicates across and within groups and the whitelist. */
	out = parse_bad(DET_HEAD
			"\"detection\": {\"hostgroups\": ["
			"{\"name\": \"a\", \"prefixes\": [\"10.0.0.0/25\", \"2001:db8::/32\"]},"
			"{\"name\": \"b\", \"prefixes\": [\"10.0.0.128/25\", \"2001:db8::/32\"], "
			"\"ban\": 1},"
			"{\"name\": \"a\", \"prefixes\": []},"
			"{\"prefixes\": [\"10.0.0.0/25\"], \"enabled\": \"no\", \"x\": 1},"
			"{\"name\": \"c\"}], \"whitelist\": [\"10.0.0.0/25\", \"10.9.0.0/16\", "
			"\"10.9.0.0/16\"]}}",
			10);
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[1].ban: wrong type: expected boolean, "
			"got integer");
	CHECK_LINE(
		out,
		"cfg.json: $.detection.hostgroups[2].prefixes: must have 1..65536 entries, got 0");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[3].enabled: wrong type: expected "
			"boolean, got string");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[3].x: unknown key");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[3].name: missing required key");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[4].prefixes: missing required key");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[2].name: duplicate hostgroup name \"a\" "
			"(also $.detection.hostgroups[0])");
	CHECK_LINE(out,
		   "cfg.json: $.detection.hostgroups[3].prefixes: duplicate prefix 10.0.0.0/25 "
		   "(also in $.detection.hostgroups[0].prefixes)");
	CHECK_LINE(out,
		   "cfg.json: $.detection.hostgroups[1].prefixes: duplicate prefix 2001:db8::/32 "
		   "(also in $.detection.hostgroups[0].prefixes)");
	CHECK_LINE(out, "cfg.json: $.detection.whitelist: duplicate prefix 10.9.0.0/16 "
			"(also in $.detection.whitelist)");
	free(out);
	/* A whitelisted hostgroup prefix is allowed; the whitelist's own
	 * duplicate of it is not. */
	out = parse_bad(DET_HEAD "\"detection\": {\"hostgroups\": ["
				 "{\"name\": \"a\", \"prefixes\": [\"10.0.0.0/25\"]}],"
				 " \"whitelist\": [\"10.0.0.0/25\", \"10.0.0.0/25\"]}}",
			1);
	CHECK_LINE(out, "cfg.json: $.detection.whitelist: duplicate prefix 10.0.0.0/25 "
			"(also in $.detection.whitelist)");
	free(out);
	out = parse_bad(DET_HEAD "\"detection\": []}", 1);
	CHECK_LINE(out, "cfg.json: $.detection: wrong type: expected object, got array");
	free(out);
}

/*
 * detection.ignore_sources: remote prefixes of either family; one inside,
 * around or equal to a monitored subnet is refused, as is a duplicate.
 */
static void
test_ignore_sources(void)
{
	struct dpmon_config cfg;
	char *out = NULL, t[DPMON_PREFIX_STRLEN];

	REQUIRE(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		      "\"10.0.0.0/24\"}, {\"prefix\": \"2001:db8:1::/48\"}], \"detection\": "
		      "{\"ignore_sources\": [\"198.51.100.0/24\", \"2001:db8:99::/48\", "
		      "\"10.0.1.0/24\", \"203.0.113.7/32\"]}}",
		      &cfg, &out) == 0);
	REQUIRE(cfg.detect.n_ignore_sources == 4);
	CHECK(strcmp(prefix_text(&cfg.detect.ignore_sources[0], t), "198.51.100.0/24") == 0);
	CHECK(strcmp(prefix_text(&cfg.detect.ignore_sources[1], t), "2001:db8:99::/48") == 0);
	CHECK(strcmp(prefix_text(&cfg.detect.ignore_sources[2], t), "10.0.1.0/24") == 0);
	CHECK(strcmp(prefix_text(&cfg.detect.ignore_sources[3], t), "203.0.113.7/32") == 0);
	CHECK(!cfg.detect.enabled); /* no threshold: the list alone enables nothing */
	dpmon_config_free(&cfg);
	free(out);

	out = parse_bad(
		"{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		"\"10.0.0.0/24\"}, {\"prefix\": \"2001:db8:1::/48\"}], \"detection\": "
		"{\"ignore_sources\": [\"10.0.0.128/25\", \"10.0.0.0/8\", \"2001:db8:1::/48\", "
		"\"198.51.100.0/24\", \"198.51.100.0/24\", \"198.51.100.1/24\", 5]}}",
		6);
	CHECK_LINE(out, "cfg.json: $.detection.ignore_sources[0]: 10.0.0.128/25 overlaps the "
			"monitored subnet 10.0.0.0/24 ($.subnets[0]): an ignored source must be a "
			"remote prefix");
	CHECK_LINE(out, "cfg.json: $.detection.ignore_sources[1]: 10.0.0.0/8 overlaps the "
			"monitored subnet 10.0.0.0/24 ($.subnets[0]): an ignored source must be a "
			"remote prefix");
	CHECK_LINE(out,
		   "cfg.json: $.detection.ignore_sources[2]: 2001:db8:1::/48 overlaps the "
		   "monitored subnet 2001:db8:1::/48 ($.subnets[1]): an ignored source must be "
		   "a remote prefix");
	CHECK_LINE(out, "cfg.json: $.detection.ignore_sources[4]: duplicate prefix "
			"198.51.100.0/24 (also $.detection.ignore_sources[3])");
	CHECK_LINE(out,
		   "cfg.json: $.detection.ignore_sources[5]: host bits set "
		   "(address is not the network address of the prefix), got \"198.51.100.1/24\"");
	CHECK_LINE(out, "cfg.json: $.detection.ignore_sources[6]: wrong type: expected string, "
			"got integer");
	free(out);
	out = parse_bad(DET_HEAD "\"detection\": {\"ignore_sources\": \"198.51.100.0/24\"}}", 1);
	CHECK_LINE(out, "cfg.json: $.detection.ignore_sources: wrong type: expected array, got "
			"string");
	free(out);
}

/* actions: every key parsed; paths checked against the file system. */
/*
 * An IPv4-mapped IPv6 prefix (inside ::ffff:0:0/96) in the whitelist or a
 * hostgroup would never match: dpmon keeps IPv4 hosts as IPv4 (and counts
 * no host at a mapped address). A whitelisted host written that way would
 * alert and be blackholed: an error naming the IPv4 form.
 */
static void
test_mapped_group_prefixes(void)
{
	char *out =
		parse_bad(DET_HEAD "\"detection\": {\"whitelist\": [\"::ffff:10.0.0.10/128\","
				   " \"::/0\"], \"hostgroups\": [{\"name\": \"m\", \"prefixes\":"
				   " [\"::ffff:10.0.0.0/120\", \"::ffff:0:0/96\", \"::/80\"]}]}}",
			  3);

	CHECK_LINE(out, "cfg.json: $.detection.whitelist[0]: an IPv4-mapped IPv6 prefix never "
			"matches (IPv4 hosts are matched by IPv4 prefixes): write 10.0.0.10/32, "
			"got \"::ffff:10.0.0.10/128\"");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[0].prefixes[0]: an IPv4-mapped IPv6 "
			"prefix never matches (IPv4 hosts are matched by IPv4 prefixes): write "
			"10.0.0.0/24, got \"::ffff:10.0.0.0/120\"");
	CHECK_LINE(out, "cfg.json: $.detection.hostgroups[0].prefixes[1]: an IPv4-mapped IPv6 "
			"prefix never matches (IPv4 hosts are matched by IPv4 prefixes): write "
			"0.0.0.0/0, got \"::ffff:0:0/96\"");
	free(out);
}

static void
test_actions(void)
{
	char dir[] = "/tmp/test_config_actions_XXXXXX", script[300], noexec[300], fifo[300],
	     json[4096], *out = NULL;
	struct dpmon_config cfg;
	FILE *f;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(script, sizeof(script), "%s/notify.sh", dir);
	snprintf(noexec, sizeof(noexec), "%s/noexec.sh", dir);
	snprintf(fifo, sizeof(fifo), "%s/exabgp.cmd", dir);
	f = fopen(script, "w");
	REQUIRE(f != NULL);
	fputs("#!/bin/sh\n", f);
	fclose(f);
	REQUIRE(chmod(script, 0755) == 0);
	f = fopen(noexec, "w");
	REQUIRE(f != NULL);
	fclose(f);
	REQUIRE(chmod(noexec, 0644) == 0);
	REQUIRE(mkfifo(fifo, 0600) == 0);

	/* Defaults. */
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK(strcmp(cfg.actions.notify_script, "") == 0);
	CHECK_EQ_U64(cfg.actions.notify_timeout_ms, 10000);
	CHECK(strcmp(cfg.actions.exabgp_next_hop, "192.0.2.1") == 0);
	CHECK(strcmp(cfg.actions.exabgp_next_hop6, "100::1") == 0);
	CHECK(strcmp(cfg.actions.exabgp_community, "") == 0);
	CHECK_EQ_U64(cfg.actions.pcap_packets, 100);
	CHECK(strcmp(cfg.actions.state_file, "") == 0);
	dpmon_config_free(&cfg);
	free(out);
	out = NULL;

	/* Every key valid. */
	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		 " \"actions\": {\"notify_script\": \"%s\", \"notify_timeout_ms\": 2500,"
		 " \"exabgp_pipe\": \"%s\", \"exabgp_next_hop\": \"2001:DB8::1\","
		 " \"exabgp_next_hop6\": \"2001:DB8:FFFF::0001\","
		 " \"exabgp_community\": \"65535:666\", \"pcap_dir\": \"%s\","
		 " \"pcap_packets\": 500, \"state_file\": \"%s/state.json\","
		 " \"comment\": \"x\"}}",
		 script, fifo, dir, dir);
	CHECK(parse(json, &cfg, &out) == 0);
	CHECK(strcmp(out, "") == 0);
	CHECK(strcmp(cfg.actions.notify_script, script) == 0);
	CHECK_EQ_U64(cfg.actions.notify_timeout_ms, 2500);
	CHECK(strcmp(cfg.actions.exabgp_pipe, fifo) == 0);
	CHECK(strcmp(cfg.actions.exabgp_next_hop, "2001:db8::1") == 0); /* canonical */
	CHECK(strcmp(cfg.actions.exabgp_next_hop6, "2001:db8:ffff::1") == 0);
	CHECK(strcmp(cfg.actions.exabgp_community, "65535:666") == 0);
	CHECK(strcmp(cfg.actions.pcap_dir, dir) == 0);
	CHECK_EQ_U64(cfg.actions.pcap_packets, 500);
	dpmon_config_free(&cfg);
	free(out);

	/* Every kind of error, each named by its path. */
	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		 " \"actions\": {\"notify_script\": \"%s\", \"notify_timeout_ms\": 50,"
		 " \"exabgp_pipe\": \"%s\", \"exabgp_next_hop\": \"10.0.0\","
		 " \"exabgp_next_hop6\": \"192.0.2.1\","
		 " \"exabgp_community\": \"65536:1\", \"pcap_dir\": \"%s\","
		 " \"pcap_packets\": 0, \"state_file\": \"relative.json\", \"nope\": 1}}",
		 noexec, script, script);
	out = parse_bad(json, 10);
	{
		char line[1024];

		snprintf(line, sizeof(line),
			 "cfg.json: $.actions.notify_script: cannot run \"%s\": "
			 "not executable (chmod +x)",
			 noexec);
		CHECK_LINE(out, line);
		snprintf(line, sizeof(line),
			 "cfg.json: $.actions.exabgp_pipe: \"%s\" exists and is "
			 "not a FIFO (mkfifo it, or name another path)",
			 script);
		CHECK_LINE(out, line);
		snprintf(line, sizeof(line),
			 "cfg.json: $.actions.pcap_dir: directory \"%s\": "
			 "not a directory",
			 script);
		CHECK_LINE(out, line);
	}
	CHECK_LINE(out,
		   "cfg.json: $.actions.notify_timeout_ms: must be an integer 100..600000, got 50");
	CHECK_LINE(out, "cfg.json: $.actions.exabgp_next_hop: not an IPv4 or IPv6 address, "
			"got \"10.0.0\"");
	CHECK_LINE(out, "cfg.json: $.actions.exabgp_next_hop6: not an IPv6 address (the next hop "
			"of IPv6 routes), got \"192.0.2.1\"");
	CHECK_LINE(out, "cfg.json: $.actions.exabgp_community: not a community \"ASN:VALUE\" with "
			"both 0..65535 (RFC 1997), e.g. \"65535:666\", got \"65536:1\"");
	CHECK_LINE(out, "cfg.json: $.actions.pcap_packets: must be an integer 1..100000, got 0");
	CHECK_LINE(out, "cfg.json: $.actions.state_file: must be an absolute path, "
			"got \"relative.json\"");
	CHECK_LINE(out, "cfg.json: $.actions.nope: unknown key");
	free(out);

	out = parse_bad(
		"{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"actions\": {\"notify_script\": \"/nonexistent/notify.sh\","
		" \"state_file\": \"/nonexistent/state.json\", \"exabgp_community\": \"1:2:3\","
		" \"exabgp_pipe\": 5}}",
		4);
	CHECK_LINE(out, "cfg.json: $.actions.notify_script: cannot run \"/nonexistent/notify.sh\": "
			"No such file or directory");
	CHECK_LINE(out, "cfg.json: $.actions.state_file: directory \"/nonexistent\": "
			"No such file or directory");
	CHECK_LINE(out, "cfg.json: $.actions.exabgp_community: not a community \"ASN:VALUE\" with "
			"both 0..65535 (RFC 1997), e.g. \"65535:666\", got \"1:2:3\"");
	CHECK_LINE(out,
		   "cfg.json: $.actions.exabgp_pipe: wrong type: expected string, got integer");
	free(out);
	/* A state file that exists must be a regular file: dpmon reads it at
	 * start (a FIFO would block the start for good) and renames over it. */
	{
		char path[1024];

		check_state_file_refused(fifo, "exists and is not a regular file");
		snprintf(path, sizeof(path), "%s/", dir);
		check_state_file_refused(path, "exists and is not a regular file");
		/* One that cannot be reached (a link to itself) is no missing one. */
		snprintf(path, sizeof(path), "%s/loop.json", dir);
		REQUIRE(symlink("loop.json", path) == 0);
		check_state_file_refused(path, "Too many levels of symbolic links");
		unlink(path);
	}
	out = parse_bad(
		"{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		" \"actions\": []}",
		1);
	CHECK_LINE(out, "cfg.json: $.actions: wrong type: expected object, got array");
	free(out);

	unlink(script);
	unlink(noexec);
	unlink(fifo);
	rmdir(dir);
}

/*
 * A pcap_dir, or a state file's directory, that dpmon cannot write into is
 * an error of the check (not a failure at the first alert). Checked in a
 * child that is not root (root may write anywhere): as nobody when the
 * test runs as root.
 */
static void
test_unwritable_dirs(void)
{
	char dir[] = "/tmp/test_config_ro_XXXXXX", json[1024], pcap_line[512], state_line[512];
	int status = -1;
	pid_t pid;

	REQUIRE(mkdtemp(dir) != NULL);
	REQUIRE(chmod(dir, 0555) == 0);
	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.0.0.0/8\"}],"
		 " \"actions\": {\"pcap_dir\": \"%s\", \"state_file\": \"%s/state.json\"}}",
		 dir, dir);
	snprintf(
		pcap_line, sizeof(pcap_line),
		"cfg.json: $.actions.pcap_dir: directory \"%s\": not writable: Permission denied\n",
		dir);
	snprintf(state_line, sizeof(state_line),
		 "cfg.json: $.actions.state_file: directory \"%s\": not writable: Permission "
		 "denied\n",
		 dir);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct dpmon_config cfg;
		char *out = NULL;
		int rc;

		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(3);
		rc = parse(json, &cfg, &out);
		if (rc != 2 || strstr(out, pcap_line) == NULL || strstr(out, state_line) == NULL) {
			fprintf(stderr, "unwritable dirs: rc=%d, output:\n%s", rc, out);
			_exit(1);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	rmdir(dir);
}

/* Address @p text masked to @p len bits of its family, formatted as a host of that length. */
static const char *
masked(const char *text, unsigned len, char *buf)
{
	struct dpmon_addr a;

	if (dpmon_addr_parse(text, &a) != 0)
		return "(bad address)";
	dpmon_addr_mask(&a, dpmon_mapped_bits(dpmon_addr_is_v4(&a) ? 4 : 6, len));
	return dpmon_host_format(&a, len, buf, DPMON_PREFIX_STRLEN);
}

static void
test_host_prefix_len(void)
{
	struct dpmon_config cfg;
	char *out = NULL, buf[DPMON_PREFIX_STRLEN];
	int rc;

	/* Masking, both families, every byte boundary and a few in between. */
	CHECK_EQ_STR(masked("10.1.2.3", 32, buf), "10.1.2.3");
	CHECK_EQ_STR(masked("10.1.2.3", 24, buf), "10.1.2.0/24");
	CHECK_EQ_STR(masked("10.1.2.255", 25, buf), "10.1.2.128/25");
	CHECK_EQ_STR(masked("10.255.255.255", 9, buf), "10.128.0.0/9");
	CHECK_EQ_STR(masked("255.255.255.255", 1, buf), "128.0.0.0/1");
	CHECK_EQ_STR(masked("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 128, buf),
		     "2001:db8:1:2:aaaa:bbbb:cccc:dddd");
	CHECK_EQ_STR(masked("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 64, buf), "2001:db8:1:2::/64");
	CHECK_EQ_STR(masked("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 56, buf), "2001:db8:1::/56");
	CHECK_EQ_STR(masked("2001:db8:1:2:ffff:bbbb:cccc:dddd", 65, buf), "2001:db8:1:2:8000::/65");
	CHECK_EQ_STR(masked("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 127, buf),
		     "2001:db8:1:2:aaaa:bbbb:cccc:dddc/127");
	CHECK_EQ_STR(masked("2001:db8:ffff::", 33, buf), "2001:db8:8000::/33");
	CHECK_EQ_STR(masked("ffff::1", 1, buf), "8000::/1");

	/* Parsed: default 0 (the whole address), explicit values kept. */
	rc = parse("{\"ports\": [{\"device\": \"d\"}], \"subnets\": ["
		   "{\"prefix\": \"2001:db8::/48\", \"host_prefix_len\": 64},"
		   "{\"prefix\": \"10.0.0.0/8\", \"host_prefix_len\": 24},"
		   "{\"prefix\": \"192.168.0.0/16\"}, {\"prefix\": \"2001:db9::/32\"},"
		   "{\"prefix\": \"172.16.0.0/12\", \"host_prefix_len\": 32},"
		   "{\"prefix\": \"2001:dba::/48\", \"host_prefix_len\": 48}]}",
		   &cfg, &out);
	CHECK(rc == 0);
	CHECK_EQ_STR(out, "");
	if (rc == 0) {
		CHECK(cfg.subnets[0].host_prefix_len == 64);
		CHECK(dpmon_subnet_host_len(&cfg.subnets[0]) == 64);
		CHECK(dpmon_subnet_host_len(&cfg.subnets[1]) == 24);
		CHECK(cfg.subnets[2].host_prefix_len == 0);
		CHECK(dpmon_subnet_host_len(&cfg.subnets[2]) == 32);
		CHECK(dpmon_subnet_host_len(&cfg.subnets[3]) == 128);
		CHECK(dpmon_subnet_host_len(&cfg.subnets[4]) == 32);
		CHECK(dpmon_subnet_host_len(&cfg.subnets[5]) == 48);
	}
	dpmon_config_free(&cfg);
	free(out);

	/* Range (the subnet's own length, at least 1, .. the whole address) and type. */
	out = parse_bad("{\"ports\": [{\"device\": \"d\"}], \"subnets\": ["
			"{\"prefix\": \"2001:db8::/48\", \"host_prefix_len\": 47},"
			"{\"prefix\": \"10.0.0.0/8\", \"host_prefix_len\": 33},"
			"{\"prefix\": \"2001:db9::/48\", \"host_prefix_len\": 129},"
			"{\"prefix\": \"0.0.0.0/0\", \"host_prefix_len\": 0},"
			"{\"prefix\": \"10.0.0.0/33\", \"host_prefix_len\": 24},"
			"{\"prefix\": \"192.168.0.0/16\", \"host_prefix_len\": \"24\"},"
			"{\"prefix\": \"192.169.0.0/16\", \"host_prefix_len\": 24.0}]}",
			7);
	CHECK_LINE(out, "cfg.json: $.subnets[0].host_prefix_len: must be 48..128 (the subnet's "
			"prefix length, at least 1, .. a whole IPv6 address), got 47");
	CHECK_LINE(out, "cfg.json: $.subnets[1].host_prefix_len: must be 8..32 (the subnet's "
			"prefix length, at least 1, .. a whole IPv4 address), got 33");
	CHECK_LINE(out, "cfg.json: $.subnets[2].host_prefix_len: must be 48..128 (the subnet's "
			"prefix length, at least 1, .. a whole IPv6 address), got 129");
	CHECK_LINE(out, "cfg.json: $.subnets[3].host_prefix_len: must be 1..32 (the subnet's "
			"prefix length, at least 1, .. a whole IPv4 address), got 0");
	CHECK_HAS(out, "cfg.json: $.subnets[4].prefix: bad CIDR");
	CHECK_LINE(out, "cfg.json: $.subnets[5].host_prefix_len: wrong type: expected integer, "
			"got string");
	CHECK_LINE(out, "cfg.json: $.subnets[6].host_prefix_len: wrong type: expected integer, "
			"got real");
	free(out);

	/* A subnet inside another must be whole host prefixes of the outer one. */
	out = parse_bad("{\"ports\": [{\"device\": \"d\"}], \"subnets\": ["
			"{\"prefix\": \"10.2.3.0/28\"},"
			"{\"prefix\": \"10.0.0.0/8\", \"host_prefix_len\": 24},"
			"{\"prefix\": \"10.9.0.0/16\"},"
			"{\"prefix\": \"2001:db8::/32\", \"host_prefix_len\": 56},"
			"{\"prefix\": \"2001:db8:0:100::/56\", \"host_prefix_len\": 64},"
			"{\"prefix\": \"2001:db8:1:100::/64\"}]}",
			2);
	CHECK_LINE(out, "cfg.json: $.subnets[1].host_prefix_len: 24 would put part of subnet "
			"10.2.3.0/28 ($.subnets[0]) in one host; use at least 28");
	CHECK_LINE(out, "cfg.json: $.subnets[3].host_prefix_len: 56 would put part of subnet "
			"2001:db8:1:100::/64 ($.subnets[5]) in one host; use at least 64");
	free(out);
}

/* IPv4 text by hand: the same as inet_ntop for every octet width, and
 * nothing written past a buffer too small (an empty string instead). */
static void
test_addr_format(void)
{
	static const unsigned octets[] = {0, 1, 9, 10, 42, 99, 100, 109, 199, 200, 255};
	const unsigned n = sizeof(octets) / sizeof(octets[0]);
	char want[INET_ADDRSTRLEN], got[DPMON_ADDR_STRLEN], small[8];
	struct dpmon_addr a;

	for (unsigned i = 0; i < n * n * n * n; i++) {
		uint32_t v = octets[i % n] << 24 | octets[i / n % n] << 16 |
			     octets[i / n / n % n] << 8 | octets[i / n / n / n];
		struct in_addr in = {.s_addr = htonl(v)};

		dpmon_addr_from_v4(&a, v);
		inet_ntop(AF_INET, &in, want, sizeof(want));
		CHECK(strcmp(dpmon_addr_format(&a, got, sizeof(got)), want) == 0);
	}
	dpmon_addr_from_v4(&a, 0xC0A80001u); /* 192.168.0.1: 12 bytes with its NUL */
	memset(small, 'x', sizeof(small));
	dpmon_addr_format(&a, small, sizeof(small));
	CHECK(small[0] == '\0' && small[1] == 'x');
	CHECK(strcmp(dpmon_addr_format(&a, got, 12), "192.168.0.1") == 0);
}

/* The capture directory's bound: defaults, values (0: no bound), ranges. */
static void
test_actions_pcap_bound(void)
{
	struct dpmon_config cfg;
	char *out = NULL;

	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\"}]}",
		    &cfg, &out) == 0);
	CHECK_EQ_U64(cfg.actions.pcap_max_files, 1000);
	CHECK_EQ_U64(cfg.actions.pcap_max_mb, 1024);
	dpmon_config_free(&cfg);
	free(out);
	out = NULL;
	CHECK(parse("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
		    "\"10.0.0.0/8\"}], \"actions\": {\"pcap_max_files\": 0, \"pcap_max_mb\": "
		    "1048576}}",
		    &cfg, &out) == 0);
	CHECK_EQ_U64(cfg.actions.pcap_max_files, 0);
	CHECK_EQ_U64(cfg.actions.pcap_max_mb, 1048576);
	dpmon_config_free(&cfg);
	free(out);
	out = parse_bad("{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": "
			"\"10.0.0.0/8\"}], \"actions\": {\"pcap_max_files\": 1000001,"
			" \"pcap_max_mb\": -1}}",
			2);
	CHECK_LINE(
		out,
		"cfg.json: $.actions.pcap_max_files: must be an integer 0..1000000, got 1000001");
	CHECK_LINE(out, "cfg.json: $.actions.pcap_max_mb: must be an integer 0..1048576, got -1");
	free(out);
}

int
main(int argc, char **argv)
{
	test_full();
	test_addr_format();
	test_defaults();
	test_prefix_errors();
	test_host_prefix_len();
	test_range_and_type_errors();
	test_key_errors();
	test_average_time_constant();
	test_port_errors();
	test_decap();
	test_software_rss();
	test_detection();
	test_ignore_sources();
	test_actions();
	test_actions_pcap_bound();
	test_unwritable_dirs();
	test_mapped_group_prefixes();
	test_syntax_errors();
	test_multiple_errors();
	test_many_subnets();
	test_ops_keys();
	test_allowed_hosts();
	test_token_files();
	test_export_secret_files();
	test_files(argc > 1 ? argv[1] : NULL);

	return check_finish("test_config");
}
