/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http.c — the HTTP server over real sockets.
 *
 * Starts dpmon_http_start on 127.0.0.1, port 0, in front of a store that
 * holds a hand-built snapshot, and talks to it with plain POSIX sockets
 * (HTTP/1.1 with "Connection: close", read until EOF, 5 s receive timeout
 * so a hang fails instead of blocking the suite). Checks status lines,
 * headers (Content-Type, Cache-Control, Allow), JSON bodies, percent-decoding
 * of path and query, 404/405/400/503, that a POST with a body — even one
 * never sent — is refused at once, that odd requests (NUL, "..", a huge
 * URL, garbage, a smuggling request) get their exact 4xx (the scanner's
 * own verdicts are test_http_head.c's), and that snapshots
 * published while requests are served are picked up (ASan checks the
 * reference counting).
 * Also /metrics, the page at /, ETag and If-None-Match (304) per snapshot,
 * CORS for configured origins (preflight included), and the health board:
 * a stale merge turns the cached healthy /health into a 503 for the same
 * snapshot, never a 304. Bearer tokens: 401 with WWW-Authenticate, the
 * count on /metrics, a reload of the token files.
 *
 * Each CHECK prints file:line and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "actions.h"
#include "config.h"
#include "health.h"
#include "heartbeat.h"
#include "http.h"
#include "snapshot.h"
#include "check.h"
#include "snap_fixture.h"

/* ------------------------------------------------------------------------
 * A tiny HTTP client.
 * --------------------------------------------------------------------- */

struct reply {
	int status; /* 0 when the server closed without a status line */
	char *raw;  /* everything received, NUL-terminated */
	const char *body;
	size_t body_len;
};

static int
connect_to(int family, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	struct timeval tv = {.tv_sec = 5};
	socklen_t len;
	int fd = socket(family, SOCK_STREAM, 0);

	REQUIRE(fd >= 0);
	if (family == AF_INET) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*v4);
	} else {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		v6->sin6_addr = in6addr_loopback;
		len = sizeof(*v6);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, len) != 0)
		FAIL("connect to port %u: %s", port, strerror(errno));
	return fd;
}

static void
send_all(int fd, const char *data, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, data, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the server may close early: that is fine */
		data += w;
		n -= (size_t)w;
	}
}

/* Read until EOF; a timeout means the server hung. */
static char *
recv_all(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	REQUIRE(buf != NULL);
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *more;

			cap *= 2;
			more = realloc(buf, cap);
			REQUIRE(more != NULL);
			buf = more;
		}
		r = recv(fd, buf + n, cap - n - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			FAIL("no answer within 5 s (server hung)");
		if (r <= 0) /* EOF, or ECONNRESET after an early close */
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static struct reply
exchange(int family, uint16_t port, const char *req, size_t req_len)
{
	struct reply r = {0};
	size_t n;
	int fd = connect_to(family, port);
	char *end;

	send_all(fd, req, req_len);
	r.raw = recv_all(fd, &n);
	close(fd);
	if (sscanf(r.raw, "HTTP/1.%*d %d", &r.status) != 1)
		r.status = 0;
	end = strstr(r.raw, "\r\n\r\n");
	r.body = end != NULL ? end + 4 : r.raw + n;
	r.body_len = (size_t)(r.raw + n - r.body);
	return r;
}

/* METHOD TARGET with Connection: close and no body. */
static struct reply
request(uint16_t port, const char *method, const char *target)
{
	char req[4096];
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", method,
			 target);

	REQUIRE(n > 0 && (size_t)n < sizeof(req));
	return exchange(AF_INET, port, req, (size_t)n);
}

/* The value of response header @p name (case-insensitive), in @p out. */
static const char *
header(const struct reply *r, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	const char *p = strstr(r->raw, "\r\n");

	while (p != NULL && p + 2 < r->body) {
		p += 2;
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1, *e = strstr(v, "\r\n");
			size_t len;

			while (*v == ' ')
				v++;
			len = e != NULL ? (size_t)(e - v) : strlen(v);
			if (len >= cap)
				len = cap - 1;
			memcpy(out, v, len);
			out[len] = '\0';
			return out;
		}
		p = strstr(p, "\r\n");
	}
	return NULL;
}

static json_t *
body_json(const struct reply *r)
{
	json_error_t err;
	json_t *j = json_loadb(r->body, r->body_len, 0, &err);

	if (j == NULL)
		FAIL("body is not JSON (%s): %s", err.text, r->raw);
	return j;
}

/* Status @p status, JSON content type, no-store; returns the parsed body. */
static json_t *
expect_json(const char *file, int line, struct reply r, int status)
{
	char v[128];
	json_t *j;

	if (r.status != status) {
		fprintf(stderr, "%s:%d: want status %d, got %d:\n%s\n", file, line, status,
			r.status, r.raw);
		exit(1);
	}
	if (header(&r, "Content-Type", v, sizeof(v)) == NULL ||
	    strcmp(v, "application/json") != 0) {
		fprintf(stderr, "%s:%d: bad Content-Type:\n%s\n", file, line, r.raw);
		exit(1);
	}
	if (header(&r, "Cache-Control", v, sizeof(v)) == NULL || strcmp(v, "no-store") != 0) {
		fprintf(stderr, "%s:%d: bad Cache-Control:\n%s\n", file, line, r.raw);
		exit(1);
	}
	j = body_json(&r);
	free(r.raw);
	return j;
}

#define EXPECT_JSON(r, s) expect_json(__FILE__, __LINE__, (r), (s))

static void
expect_error(const char *file, int line, struct reply r, int status, const char *msg)
{
	json_t *j = expect_json(file, line, r, status);
	const char *got = json_string_value(json_object_get(j, "error"));

	if (got == NULL || (msg != NULL && strcmp(got, msg) != 0)) {
		fprintf(stderr, "%s:%d: want error \"%s\", got \"%s\"\n", file, line,
			msg ? msg : "(any)", got ? got : "(none)");
		exit(1);
	}
	json_decref(j);
}

#define EXPECT_ERROR(r, s, m) expect_error(__FILE__, __LINE__, (r), (s), (m))

static const char *
jstr(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s != NULL ? s : "(missing)";
}

/* ------------------------------------------------------------------------
 * Snapshots.
 * --------------------------------------------------------------------- */

/* Host @p a of subnet @p subnet: @p packets in, of 100 bytes, at 1 pps
 * and @p bps; nothing out. */
static struct snap_host_spec
seen_host(const char *a, uint32_t subnet, uint64_t packets, double bps)
{
	return (struct snap_host_spec){.addr = a,
				       .subnet = subnet,
				       .in = {.total = snap_rate(packets, packets * 100, 1, bps)}};
}

/* Two subnets, three hosts (sorted by address). */
static struct dpmon_snapshot *
http_snapshot(uint64_t seq)
{
	static const struct snap_subnet_spec subnets[] = {
		{"10.0.0.0/24", "office"},
		{"2001:db8::/48", NULL},
	};
	const struct snap_host_spec hosts[] = {
		seen_host("10.0.0.5", 0, 10, 9000),
		seen_host("10.0.0.6", 0, 30, 100),
		seen_host("2001:db8::1", 1, 20, 5000),
	};
	struct dpmon_snapshot *s = snap_build(&(struct snap_spec){.seq = seq,
								  .n_ports = 1,
								  .n_workers = 1,
								  .subnets = subnets,
								  .n_subnets = 2,
								  .hosts = hosts,
								  .n_hosts = 3});

	s->interval_ms = 1000;
	s->interval_s = 1.0;
	snprintf(s->ports[0].device, sizeof(s->ports[0].device), "net_pcap0");
	s->workers[0].lcore = 1;
	return s;
}

/* ------------------------------------------------------------------------
 * The tests.
 * --------------------------------------------------------------------- */

static void
test_endpoints(uint16_t port)
{
	json_t *j;
	char v[64];

	j = EXPECT_JSON(request(port, "GET", "/health"), 200);
	REQUIRE(strcmp(jstr(j, "status"), "ok") == 0);
	REQUIRE(json_integer_value(json_object_get(j, "snapshot_seq")) == 7);
	json_decref(j);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/summary"), 200);
	REQUIRE(json_integer_value(json_object_get(j, "hosts")) == 3);
	REQUIRE(json_integer_value(json_object_get(j, "subnets")) == 2);
	REQUIRE(strcmp(jstr(json_array_get(json_object_get(j, "ports"), 0), "device"),
		       "net_pcap0") == 0);
	json_decref(j);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?limit=2&sort=packets"), 200);
	REQUIRE(json_integer_value(json_object_get(j, "total")) == 3);
	REQUIRE(json_array_size(json_object_get(j, "hosts")) == 2);
	REQUIRE(strcmp(jstr(json_array_get(json_object_get(j, "hosts"), 0), "address"),
		       "10.0.0.6") == 0);
	REQUIRE(strcmp(jstr(json_array_get(json_object_get(j, "hosts"), 1), "address"),
		       "2001:db8::1") == 0);
	json_decref(j);

	/* Percent-encoded query value. */
	j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?subnet=2001%3Adb8%3A%3A%2F48"), 200);
	REQUIRE(json_integer_value(json_object_get(j, "total")) == 1);
	json_decref(j);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts/2001:0db8:0:0::1"), 200);
	REQUIRE(strcmp(jstr(j, "address"), "2001:db8::1") == 0);
	REQUIRE(strcmp(jstr(j, "subnet"), "2001:db8::/48") == 0);
	json_decref(j);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/subnets/"), 200);
	REQUIRE(json_array_size(json_object_get(j, "subnets")) == 2);
	json_decref(j);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/subnets/2001:db8::%2F48"), 200);
	REQUIRE(strcmp(jstr(j, "prefix"), "2001:db8::/48") == 0);
	json_decref(j);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/subnets/10.0.0.0/24"), 200);
	REQUIRE(strcmp(jstr(j, "name"), "office") == 0);
	json_decref(j);

	EXPECT_ERROR(request(port, "GET", "/nope"), 404, "no such endpoint: /nope");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts/10.0.0.99"), 404,
		     "host 10.0.0.99 has not been seen");
	EXPECT_ERROR(request(port, "GET", "/api/v1/subnets/10.9.0.0/24"), 404,
		     "subnet 10.9.0.0/24 is not monitored");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?foo=1"), 400, "unknown parameter 'foo'");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?limit"), 400,
		     "invalid limit '': expected an integer 1..10000");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?limit=0"), 400, NULL);
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?a&b&c&d&e&f&g&h&i&j&k&l&m&n&o&p&q&r"), 400,
		     "too many query parameters");

	/* Allow on 405, even without a body. */
	{
		struct reply r = request(port, "DELETE", "/api/v1/hosts");
		REQUIRE(header(&r, "Allow", v, sizeof(v)) != NULL && strcmp(v, "GET, HEAD") == 0);
		EXPECT_ERROR(r, 405, "method 'DELETE' not allowed (allowed: GET, HEAD)");
	}
}

/*
 * Two requests on one HTTP/1.1 connection, sent back to back (pipelined):
 * both are answered and the connection is not closed after the first
 * (pollers and load generators reuse connections).
 */
static void
test_keepalive(uint16_t port)
{
	static const char req[] =
		"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
		"GET /api/v1/summary HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
	struct reply r = exchange(AF_INET, port, req, sizeof(req) - 1);
	const char *second = strstr(r.raw + 1, "HTTP/1.1 200");

	REQUIRE(r.status == 200);
	REQUIRE(second != NULL);
	REQUIRE(strstr(second, "\"totals\"") != NULL);
	free(r.raw);
}

static void
test_head(uint16_t port)
{
	struct reply r = request(port, "HEAD", "/health");
	char v[64];

	REQUIRE(r.status == 200);
	REQUIRE(header(&r, "Content-Type", v, sizeof(v)) != NULL &&
		strcmp(v, "application/json") == 0);
	REQUIRE(r.body_len == 0);
	free(r.raw);
}

static void
test_post(uint16_t port)
{
	static const char with_body[] =
		"POST /api/v1/summary HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		"Content-Type: application/json\r\nContent-Length: 11\r\n\r\nhello world";
	/* Announces a megabyte that never comes: must be refused, not awaited. */
	static const char never_sent[] =
		"POST /api/v1/hosts HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		"Content-Length: 1000000\r\n\r\n{\"a\":";
	static const char chunked[] =
		"PUT /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
	struct reply r;
	char v[64];
	double t0;

	r = exchange(AF_INET, port, with_body, sizeof(with_body) - 1);
	REQUIRE(header(&r, "Allow", v, sizeof(v)) != NULL && strcmp(v, "GET, HEAD") == 0);
	EXPECT_ERROR(r, 405, "method 'POST' not allowed (allowed: GET, HEAD)");

	t0 = check_now_s();
	r = exchange(AF_INET, port, never_sent, sizeof(never_sent) - 1);
	REQUIRE(check_now_s() - t0 < 3.0);
	EXPECT_ERROR(r, 405, NULL);

	t0 = check_now_s();
	r = exchange(AF_INET, port, chunked, sizeof(chunked) - 1);
	REQUIRE(check_now_s() - t0 < 3.0);
	EXPECT_ERROR(r, 405, NULL);

	EXPECT_ERROR(request(port, "POST", "/nope"), 404, "no such endpoint: /nope");
}

/* Odd requests get some answer (or a close) and the server lives on. */
static void
test_weird(uint16_t port)
{
	static const char garbage[] = "\x01\x02garbage\r\n\r\n";
	static const char nul_in_line[] = "GET /he\0alth HTTP/1.1\r\nConnection: close\r\n\r\n";
	static const char http10[] = "GET /health HTTP/1.0\r\n\r\n";
	static const char no_host[] = "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n";
	static const char smuggler[] = "GET /health HTTP/1.1\r\nContent-Length: 40\r\n"
				       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
				       "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
	size_t big = 100000;
	char *huge = malloc(big + 64);
	struct reply r;
	json_t *j;

	/* A NUL would cut the decoded target short: refused, wherever it is. */
	EXPECT_ERROR(request(port, "GET", "/%00"), 400, "a NUL byte (%00) in the request target");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts/%00"), 400, NULL);
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts/10.0.0.5%00junk"), 400, NULL);
	EXPECT_ERROR(request(port, "GET", "/api/v1/summary%00junk"), 400, NULL);
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?limit=1%002"), 400, NULL);
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?li%00mit=1"), 400, NULL);
	r = request(port, "HEAD", "/health%00x");
	REQUIRE(r.status == 400 && r.body_len == 0);
	free(r.raw);
	EXPECT_ERROR(request(port, "GET", "/../../etc/passwd"), 404, NULL);
	EXPECT_ERROR(request(port, "GET", "/api/v1/%ff%fe"), 404, "no such endpoint: /api/v1/??");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?sort=%ff"), 400,
		     "invalid sort '?': expected pps, bps, packets, bytes, avg_pps, avg_bps, "
		     "syn_pps, fragments_pps, tcp_pps, tcp_bps, udp_pps, udp_bps, icmp_pps, "
		     "icmp_bps, flows or peers");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?%ff=1"), 400, "unknown parameter '?'");

	REQUIRE(huge != NULL);
	strcpy(huge, "GET /");
	memset(huge + 5, 'a', big);
	strcpy(huge + 5 + big, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	EXPECT_ERROR(exchange(AF_INET, port, huge, strlen(huge)), 414,
		     "request line over 8192 bytes");
	free(huge);

	EXPECT_ERROR(exchange(AF_INET, port, garbage, sizeof(garbage) - 1), 400,
		     "not an HTTP request");
	EXPECT_ERROR(exchange(AF_INET, port, nul_in_line, sizeof(nul_in_line) - 1), 400,
		     "invalid request target: expected visible ASCII, then a space");
	/* Framing two readers could disagree on (RFC 9112 6.3): one 400, then the close. */
	r = exchange(AF_INET, port, smuggler, sizeof(smuggler) - 1);
	REQUIRE(r.status == 400 && strstr(r.raw, "Connection: close\r\n") != NULL &&
		strstr(r.body, "HTTP/1.") == NULL);
	CHECK(strcmp(r.body,
		     "{\"error\":\"both Content-Length and Transfer-Encoding in one request\"}") ==
	      0);
	free(r.raw);

	/* RFC 9112 3.2: an HTTP/1.1 request without Host is a 400; HTTP/1.0
	 * has no Host field to require. */
	EXPECT_ERROR(exchange(AF_INET, port, no_host, sizeof(no_host) - 1), 400,
		     "an HTTP/1.1 request needs a Host field");
	j = EXPECT_JSON(exchange(AF_INET, port, http10, sizeof(http10) - 1), 200);
	REQUIRE(strcmp(jstr(j, "status"), "ok") == 0);
	json_decref(j);
}

struct publisher {
	struct dpmon_snap_store *store;
	int rounds;
};

static void *
publish_loop(void *arg)
{
	struct publisher *p = arg;

	for (int i = 0; i < p->rounds; i++) {
		dpmon_snap_publish(p->store, http_snapshot(100 + (uint64_t)i));
		usleep(200);
	}
	return NULL;
}

/* Requests racing a publisher: each answer comes from one whole snapshot. */
static void
test_concurrent_publish(uint16_t port, struct dpmon_snap_store *store)
{
	struct publisher p = {.store = store, .rounds = 400};
	pthread_t t;
	long long last = 0;

	REQUIRE(pthread_create(&t, NULL, publish_loop, &p) == 0);
	for (int i = 0; i < 150; i++) {
		json_t *j = EXPECT_JSON(request(port, "GET", "/api/v1/summary"), 200);
		long long seq = json_integer_value(json_object_get(j, "snapshot_seq"));

		REQUIRE(seq >= last);
		REQUIRE(json_integer_value(json_object_get(j, "hosts")) == 3);
		last = seq;
		json_decref(j);
	}
	pthread_join(t, NULL);
	{
		json_t *j = EXPECT_JSON(request(port, "GET", "/health"), 200);
		REQUIRE(json_integer_value(json_object_get(j, "snapshot_seq")) ==
			100 + p.rounds - 1);
		json_decref(j);
	}
}

/* METHOD TARGET with extra header lines (each ending in \r\n). */
/* The Content-Type header of a request that changes state (http_access.h). */
#define JSON_TYPE "Content-Type: application/json\r\n"

static struct reply
request_h(uint16_t port, const char *method, const char *target, const char *headers)
{
	char req[4096];
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: localhost\r\n%sConnection: close\r\n\r\n", method,
			 target, headers);

	CHECK(n > 0 && (size_t)n < sizeof(req));
	return exchange(AF_INET, port, req, (size_t)n);
}

/* /metrics: Prometheus text of the current snapshot, same checks as the API. */
static void
test_metrics(uint16_t port)
{
	struct reply r = request(port, "GET", "/metrics");
	char v[128];

	CHECK(r.status == 200);
	CHECK(header(&r, "Content-Type", v, sizeof(v)) != NULL &&
	      strcmp(v, "text/plain; version=0.0.4; charset=utf-8") == 0);
	CHECK(header(&r, "Cache-Control", v, sizeof(v)) != NULL && strcmp(v, "no-store") == 0);
	CHECK(header(&r, "ETag", v, sizeof(v)) != NULL && v[0] == '"');
	CHECK(strstr(r.body, "\ndpmon_snapshot_seq 7\n") != NULL);
	CHECK(strstr(r.body, "# TYPE dpmon_subnet_packets_total counter\n") != NULL);
	CHECK(strstr(r.body, "dpmon_host_bytes_total{subnet=\"10.0.0.0/24\",host=\"10.0.0.6\","
			     "direction=\"ingress\",protocol=\"tcp\"} 0\n") != NULL);
	free(r.raw);
	r = request(port, "HEAD", "/metrics");
	CHECK(r.status == 200 && r.body_len == 0);
	free(r.raw);
	r = request(port, "GET", "/metrics/"); /* trailing slash ignored */
	CHECK(r.status == 200);
	free(r.raw);
	EXPECT_ERROR(request(port, "GET", "/metrics?x=1"), 400, "unknown parameter 'x'");
	EXPECT_ERROR(request(port, "GET", "/metrics?%ff=1"), 400, "unknown parameter '?'");
	r = request(port, "POST", "/metrics");
	CHECK(header(&r, "Allow", v, sizeof(v)) != NULL && strcmp(v, "GET, HEAD") == 0);
	EXPECT_ERROR(r, 405, "method 'POST' not allowed (allowed: GET, HEAD)");
	EXPECT_ERROR(request(port, "GET", "/metricsx"), 404, "no such endpoint: /metricsx");
}

/* The page at /: HTML, revalidated by ETag, with its security headers. */
static void
test_page(uint16_t port)
{
	struct reply r = request(port, "GET", "/");
	char v[256], etag[64], hdr[128];

	CHECK(r.status == 200);
	CHECK(header(&r, "Content-Type", v, sizeof(v)) != NULL &&
	      strcmp(v, "text/html; charset=utf-8") == 0);
	CHECK(header(&r, "Cache-Control", v, sizeof(v)) != NULL && strcmp(v, "no-cache") == 0);
	CHECK(header(&r, "Content-Security-Policy", v, sizeof(v)) != NULL);
	CHECK(strstr(r.body, "<!doctype html>") == r.body ||
	      strstr(r.body, "<!DOCTYPE html>") == r.body);
	CHECK(header(&r, "ETag", etag, sizeof(etag)) != NULL);
	free(r.raw);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
	r = request_h(port, "GET", "/", hdr);
	CHECK(r.status == 304 && r.body_len == 0);
	free(r.raw);
	EXPECT_ERROR(request(port, "GET", "/?x"), 400, "unknown parameter 'x'");
	EXPECT_ERROR(request(port, "DELETE", "/"), 405, NULL);
}

/* ETag per snapshot; If-None-Match gives 304 until the next publication. */
static void
test_etag(uint16_t port, struct dpmon_snap_store *st)
{
	char etag[64], etag2[64], hdr[256], v[64];
	struct reply r = request(port, "GET", "/api/v1/subnets");

	CHECK(r.status == 200 && header(&r, "ETag", etag, sizeof(etag)) != NULL);
	free(r.raw);
	r = request(port, "GET", "/api/v1/summary"); /* same snapshot: same tag */
	CHECK(header(&r, "ETag", etag2, sizeof(etag2)) != NULL && strcmp(etag, etag2) == 0);
	free(r.raw);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
	r = request_h(port, "GET", "/api/v1/subnets", hdr);
	CHECK(r.status == 304 && r.body_len == 0);
	CHECK(header(&r, "ETag", v, sizeof(v)) != NULL && strcmp(v, etag) == 0);
	CHECK(header(&r, "Cache-Control", v, sizeof(v)) != NULL && strcmp(v, "no-store") == 0);
	free(r.raw);
	snprintf(hdr, sizeof(hdr), "If-None-Match: \"x\", W/%s\r\n", etag); /* list, weak */
	r = request_h(port, "GET", "/metrics", hdr);
	CHECK(r.status == 304);
	free(r.raw);
	r = request_h(port, "GET", "/api/v1/hosts?limit=0", hdr); /* errors: never 304 */
	CHECK(r.status == 400 && header(&r, "ETag", v, sizeof(v)) == NULL);
	free(r.raw);
	r = request_h(port, "GET", "/health", "If-None-Match: \"other\"\r\n");
	CHECK(r.status == 200);
	free(r.raw);
	dpmon_snap_publish(st, http_snapshot(8));
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
	r = request_h(port, "GET", "/api/v1/subnets", hdr);
	CHECK(r.status == 200 && header(&r, "ETag", etag2, sizeof(etag2)) != NULL);
	CHECK(strcmp(etag, etag2) != 0);
	free(r.raw);
}

/* The response cache: repeated requests in one snapshot get the same bytes;
 * a new snapshot (even with the same seq's neighbours' data) is rendered
 * anew for every cached endpoint; HEAD, 304 and parameter variants still
 * behave; a response keeps its body alive after the cache dropped it. */
static void
test_cache(uint16_t port, struct dpmon_snap_store *st)
{
	static const char *const paths[] = {
		"/api/v1/summary", "/api/v1/subnets", "/health",
		"/metrics",        "/api/v1/hosts",   "/api/v1/hosts?limit=2&sort=packets"};
	char etag[64], etag2[64], hdr[128];
	struct dpmon_snapshot *s;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct reply a = request(port, "GET", paths[i]);
		struct reply b = request(port, "GET", paths[i]);
		struct reply hd = request(port, "HEAD", paths[i]);
		struct reply c;

		CHECK(a.status == 200 && b.status == 200 && hd.status == 200);
		CHECK(a.body_len > 0 && a.body_len == b.body_len &&
		      memcmp(a.body, b.body, a.body_len) == 0);
		CHECK(hd.body_len == 0);
		CHECK(header(&a, "ETag", etag, sizeof(etag)) != NULL);
		CHECK(header(&b, "ETag", etag2, sizeof(etag2)) != NULL && strcmp(etag, etag2) == 0);
		snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
		c = request_h(port, "GET", paths[i], hdr);
		CHECK(c.status == 304 && c.body_len == 0);
		free(c.raw);
		/* A new snapshot with other counters: the cached body is not reused. */
		s = http_snapshot(1000 + i);
		s->hosts[0].dir[DPMON_DIR_INGRESS].total.packets = 123456789;
		s->totals[0].total.packets = 987654321;
		dpmon_snap_publish(st, s);
		c = request(port, "GET", paths[i]);
		CHECK(c.status == 200 && header(&c, "ETag", etag2, sizeof(etag2)) != NULL &&
		      strcmp(etag, etag2) != 0);
		CHECK(c.body_len != a.body_len || memcmp(c.body, a.body, a.body_len) != 0);
		free(c.raw);
		c = request(port, "GET", paths[i]); /* and the new body is cached in turn */
		CHECK(c.status == 200 && header(&c, "ETag", hdr, sizeof(hdr)) != NULL &&
		      strcmp(hdr, etag2) == 0);
		free(a.raw);
		free(b.raw);
		free(hd.raw);
		free(c.raw);
	}
	/* Parameters are never served from the cache: the API still refuses them. */
	EXPECT_ERROR(request(port, "GET", "/api/v1/summary?x=1"), 400, "unknown parameter 'x'");
	EXPECT_ERROR(request(port, "GET", "/metrics?x=1"), 400, "unknown parameter 'x'");
	EXPECT_ERROR(request(port, "POST", "/api/v1/summary"), 405,
		     "method 'POST' not allowed (allowed: GET, HEAD)");
}

/* The address of host @p i in the hosts listing @p j, "" when there is none. */
static const char *
listed_addr(json_t *j, size_t i)
{
	json_t *h = json_array_get(json_object_get(j, "hosts"), i);

	return h != NULL ? jstr(h, "address") : "";
}

/* The query cache of /api/v1/hosts: each query keeps its own answer in a
 * snapshot, however close its text to another's; more queries than slots
 * still get their own answers; errors are never cached. */
static void
test_query_cache(struct dpmon_http *h, uint16_t port, struct dpmon_snap_store *st)
{
	json_t *j;

	dpmon_snap_publish(st, http_snapshot(20));
	for (int round = 0; round < 2; round++) { /* rendered, then from the cache */
		j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?limit=1&sort=packets"), 200);
		REQUIRE(json_array_size(json_object_get(j, "hosts")) == 1);
		REQUIRE(strcmp(listed_addr(j, 0), "10.0.0.6") == 0);
		json_decref(j);
		j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?sort=packets&limit=1"), 200);
		REQUIRE(json_array_size(json_object_get(j, "hosts")) == 1);
		json_decref(j);
		j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?limit=2&sort=packets"), 200);
		REQUIRE(json_array_size(json_object_get(j, "hosts")) == 2);
		REQUIRE(strcmp(listed_addr(j, 1), "2001:db8::1") == 0);
		json_decref(j);
		j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?limit=1&sort=bps"), 200);
		REQUIRE(strcmp(listed_addr(j, 0), "10.0.0.5") == 0);
		json_decref(j);
		/* A value holding the key text of another query. */
		EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?limit=1%26sort%3Dbps"), 400, NULL);
		EXPECT_ERROR(request(port, "GET", "/api/v1/hosts?limit=1&sort"), 400, NULL);
	}
	/* 40 queries through 16 slots, twice: every answer is its own. */
	for (int round = 0; round < 2; round++)
		for (int limit = 1; limit <= 40; limit++) {
			char path[64];

			snprintf(path, sizeof(path), "/api/v1/hosts?limit=%d&direction=egress",
				 limit);
			j = EXPECT_JSON(request(port, "GET", path), 200);
			REQUIRE(json_array_size(json_object_get(j, "hosts")) ==
				(size_t)(limit < 3 ? limit : 3));
			REQUIRE(json_integer_value(json_object_get(j, "total")) == 3);
			json_decref(j);
		}
	/* The next snapshot's answer, not the cached one. */
	{
		struct dpmon_snapshot *s = http_snapshot(21);

		s->hosts[2].dir[DPMON_DIR_INGRESS].total.packets = 1000;
		dpmon_snap_publish(st, s);
	}
	j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?limit=1&sort=packets"), 200);
	REQUIRE(strcmp(listed_addr(j, 0), "2001:db8::1") == 0);
	REQUIRE(json_integer_value(json_object_get(j, "snapshot_seq")) == 21);
	json_decref(j);
	/* Rendered ahead (dpmon_http_prewarm): the queries answered from
	 * snapshot 21 are the next one's own answers, nothing else. */
	{
		struct dpmon_snapshot *s = http_snapshot(22), *cur;

		s->hosts[1].dir[DPMON_DIR_INGRESS].total.packets = 2000;
		dpmon_snap_publish(st, s);
		cur = dpmon_snap_acquire(st);
		dpmon_http_prewarm(h, cur);
		dpmon_snap_release(st, cur);
	}
	j = EXPECT_JSON(request(port, "GET", "/api/v1/hosts?limit=1&sort=packets"), 200);
	REQUIRE(strcmp(listed_addr(j, 0), "10.0.0.6") == 0);
	REQUIRE(json_integer_value(json_object_get(j, "snapshot_seq")) == 22);
	REQUIRE(json_integer_value(json_object_get(
			json_object_get(json_array_get(json_object_get(j, "hosts"), 0), "ingress"),
			"packets")) == 2000);
	json_decref(j);
}

/* CORS: headers only for configured origins; preflight for If-None-Match. */
static void
test_cors(struct dpmon_snap_store *st)
{
	static const char origins[2][DPMON_ORIGIN_LEN] = {"http://grafana.lan:3000", "https://x.y"};
	static const char any[1][DPMON_ORIGIN_LEN] = {"*"};
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1",
				    .metrics_top_hosts = 1,
				    .n_cors_origins = 2,
				    .cors_origins = origins};
	struct dpmon_http *h = dpmon_http_start_opts(&o, st);
	char v[128];
	struct reply r;
	uint16_t port;

	CHECK(h != NULL);
	port = dpmon_http_port(h);
	r = request_h(port, "GET", "/api/v1/summary", "Origin: http://grafana.lan:3000\r\n");
	CHECK(r.status == 200);
	CHECK(header(&r, "Access-Control-Allow-Origin", v, sizeof(v)) != NULL &&
	      strcmp(v, "http://grafana.lan:3000") == 0);
	CHECK(header(&r, "Access-Control-Expose-Headers", v, sizeof(v)) != NULL &&
	      strcmp(v, "ETag") == 0);
	CHECK(header(&r, "Vary", v, sizeof(v)) != NULL && strcmp(v, "Origin") == 0);
	free(r.raw);
	r = request_h(port, "GET", "/api/v1/nope", "Origin: https://x.y\r\n"); /* errors too */
	CHECK(r.status == 404 && header(&r, "Access-Control-Allow-Origin", v, sizeof(v)) != NULL);
	free(r.raw);
	r = request_h(port, "GET", "/api/v1/summary", "Origin: http://evil.example\r\n");
	CHECK(r.status == 200 && header(&r, "Access-Control-Allow-Origin", v, sizeof(v)) == NULL);
	free(r.raw);
	r = request_h(port, "OPTIONS", "/api/v1/summary",
		      "Origin: https://x.y\r\nAccess-Control-Request-Method: GET\r\n"
		      "Access-Control-Request-Headers: if-none-match\r\n");
	CHECK(r.status == 204);
	CHECK(header(&r, "Access-Control-Allow-Origin", v, sizeof(v)) != NULL &&
	      strcmp(v, "https://x.y") == 0);
	CHECK(header(&r, "Access-Control-Allow-Methods", v, sizeof(v)) != NULL &&
	      strcmp(v, "GET, HEAD") == 0);
	CHECK(header(&r, "Access-Control-Allow-Headers", v, sizeof(v)) != NULL &&
	      strcmp(v, "If-None-Match") == 0);
	free(r.raw);
	/* A preflight from elsewhere, or a plain OPTIONS, is a 405 like any method. */
	EXPECT_ERROR(
		request_h(port, "OPTIONS", "/api/v1/summary",
			  "Origin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\n"),
		405, NULL);
	EXPECT_ERROR(request(port, "OPTIONS", "/api/v1/summary"), 405, NULL);
	/* metrics.top_hosts = 1: one host's series. */
	r = request(port, "GET", "/metrics");
	CHECK(r.status == 200 && strstr(r.body, "host=\"10.0.0.6\"") != NULL);
	CHECK(strstr(r.body, "host=\"10.0.0.5\"") == NULL);
	free(r.raw);
	dpmon_http_stop(h);

	o.cors_origins = any;
	o.n_cors_origins = 1;
	h = dpmon_http_start_opts(&o, st);
	CHECK(h != NULL);
	r = request_h(dpmon_http_port(h), "GET", "/health", "Origin: http://anything:1\r\n");
	CHECK(header(&r, "Access-Control-Allow-Origin", v, sizeof(v)) != NULL &&
	      strcmp(v, "*") == 0);
	CHECK(header(&r, "Vary", v, sizeof(v)) == NULL);
	free(r.raw);
	dpmon_http_stop(h);
	o.cors_origins = NULL;
	errno = 0;
	CHECK(dpmon_http_start_opts(&o, st) == NULL && errno == EINVAL);
}

/* A server with a health board: /health and the summary cached while the
 * merge is fresh; the merge late on the same snapshot: /health a 503 with
 * the reason even for the healthy answer's ETag, the summary without ETag;
 * fresh again: the cached answers and their ETag. */
static void
test_health_board(struct dpmon_snap_store *st)
{
	struct dpmon_health board;
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1", .health = &board};
	struct dpmon_http *h;
	char etag[64], v[64], hdr[128];
	const char *reason;
	struct reply r;
	uint16_t port;
	json_t *j;

	REQUIRE(dpmon_health_init(&board, 1, 200) == 0);
	dpmon_health_name(&board, 0, "worker lcore %u", 1u);
	dpmon_health_start(&board, dpmon_heartbeat_now_ns());
	REQUIRE((h = dpmon_http_start_opts(&o, st)) != NULL);
	port = dpmon_http_port(h);
	r = request(port, "GET", "/health");
	CHECK(r.status == 200 && header(&r, "ETag", etag, sizeof(etag)) != NULL);
	j = EXPECT_JSON(r, 200);
	CHECK(strcmp(json_string_value(json_object_get(j, "status")), "ok") == 0);
	json_decref(j);
	json_decref(EXPECT_JSON(request(port, "GET", "/api/v1/summary"), 200)); /* cached */
	/* The merge 2 s late (limit 1 s): same snapshot, same cache slot. */
	dpmon_health_merged(&board, dpmon_heartbeat_now_ns() - 2000000000ull);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
	r = request_h(port, "GET", "/health", hdr);
	CHECK(r.status == 503 && header(&r, "ETag", v, sizeof(v)) == NULL);
	j = EXPECT_JSON(r, 503);
	CHECK(strcmp(json_string_value(json_object_get(j, "status")), "unhealthy") == 0);
	reason = json_string_value(json_array_get(json_object_get(j, "reasons"), 0));
	CHECK(reason != NULL && strncmp(reason, "merge: no merge for 2.", 22) == 0);
	json_decref(j);
	r = request_h(port, "HEAD", "/health", hdr);
	CHECK(r.status == 503);
	free(r.raw);
	r = request_h(port, "GET", "/api/v1/summary", hdr);
	CHECK(r.status == 200 && header(&r, "ETag", v, sizeof(v)) == NULL);
	j = EXPECT_JSON(r, 200);
	CHECK(strcmp(json_string_value(
			     json_object_get(j, "health")
				     ? json_object_get(json_object_get(j, "health"), "status")
				     : NULL),
		     "unhealthy") == 0);
	json_decref(j);
	/* Fresh again: the same snapshot's cached answers, 304 included. */
	dpmon_health_merged(&board, dpmon_heartbeat_now_ns());
	r = request_h(port, "GET", "/health", hdr);
	CHECK(r.status == 304);
	free(r.raw);
	r = request(port, "GET", "/api/v1/summary");
	CHECK(r.status == 200 && header(&r, "ETag", v, sizeof(v)) != NULL && strcmp(v, etag) == 0);
	free(r.raw);
	dpmon_http_stop(h);
	dpmon_health_fini(&board);
}

static void
test_start_errors(uint16_t busy_port, struct dpmon_snap_store *store)
{
	struct dpmon_http *h;

	errno = 0;
	REQUIRE(dpmon_http_start("not-an-address", 0, store) == NULL && errno == EINVAL);
	errno = 0;
	REQUIRE(dpmon_http_start("10.0.0.0/8", 0, store) == NULL && errno == EINVAL);
	errno = 0;
	REQUIRE(dpmon_http_start(NULL, 0, store) == NULL && errno == EINVAL);
	errno = 0;
	h = dpmon_http_start("127.0.0.1", busy_port, store);
	if (h != NULL)
		FAIL("second server on busy port %u started", busy_port);
	if (errno != EADDRINUSE)
		FAIL("busy port: errno %d (%s), want EADDRINUSE", errno, strerror(errno));
	dpmon_http_stop(NULL);
}

/* Before the first snapshot: /health says "starting", data endpoints 503. */
static void
test_starting(void)
{
	struct dpmon_snap_store st;
	struct dpmon_http *h;
	json_t *j;
	uint16_t port;

	dpmon_snap_store_init(&st);
	h = dpmon_http_start("127.0.0.1", 0, &st);
	REQUIRE(h != NULL);
	port = dpmon_http_port(h);
	j = EXPECT_JSON(request(port, "GET", "/health"), 200);
	REQUIRE(strcmp(jstr(j, "status"), "starting") == 0);
	REQUIRE(json_integer_value(json_object_get(j, "snapshot_seq")) == 0);
	json_decref(j);
	EXPECT_ERROR(request(port, "GET", "/api/v1/summary"), 503, "no snapshot yet");
	EXPECT_ERROR(request(port, "GET", "/api/v1/hosts"), 503, "no snapshot yet");
	EXPECT_ERROR(request(port, "GET", "/metrics"), 503, "no snapshot yet");
	{
		struct reply r = request(port, "GET", "/"); /* the page needs no snapshot */

		CHECK(r.status == 200);
		free(r.raw);
	}
	dpmon_snap_publish(&st, http_snapshot(1));
	j = EXPECT_JSON(request(port, "GET", "/api/v1/summary"), 200);
	REQUIRE(json_integer_value(json_object_get(j, "snapshot_seq")) == 1);
	json_decref(j);
	dpmon_http_stop(h);
	dpmon_snap_store_destroy(&st);
}

/* An IPv6 listener, when the host has ::1. */
static void
test_ipv6(struct dpmon_snap_store *store)
{
	static const char req[] =
		"GET /health HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n";
	struct dpmon_http *h = dpmon_http_start("::1", 0, store);
	json_t *j;

	if (h == NULL) {
		printf("  IPv6 skipped: %s\n", strerror(errno));
		return;
	}
	REQUIRE(dpmon_http_port(h) != 0);
	j = EXPECT_JSON(exchange(AF_INET6, dpmon_http_port(h), req, sizeof(req) - 1), 200);
	REQUIRE(strcmp(jstr(j, "status"), "ok") == 0);
	json_decref(j);
	dpmon_http_stop(h);
}

/* ------------------------------------------------------------------------
 * The blackhole list: request bodies, errors, CORS, no caching.
 * --------------------------------------------------------------------- */

/* @p method @p target with Host @p host, the header fields @p headers
 * (each ending in CRLF) and @p body (Content-Length), one connection. */
static struct reply
request_full(uint16_t port, const char *method, const char *target, const char *host,
	     const char *headers, const char *body)
{
	char req[8192];
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
			 "%sContent-Length: %zu\r\n\r\n%s",
			 method, target, host, headers, strlen(body), body);

	REQUIRE(n > 0 && (size_t)n < sizeof(req));
	return exchange(AF_INET, port, req, (size_t)n);
}

/* @p method @p target with a JSON @p body, one connection. */
static struct reply
request_b(uint16_t port, const char *method, const char *target, const char *body)
{
	return request_full(port, method, target, "localhost", JSON_TYPE, body);
}

/* POST @p body to /api/v1/blackholes with Host @p host and the header
 * fields @p headers. */
static struct reply
post_blackhole(uint16_t port, const char *host, const char *headers, const char *body)
{
	return request_full(port, "POST", "/api/v1/blackholes", host, headers, body);
}

/*
 * What a cross-site page or a DNS-rebinding page sends is refused and
 * changes nothing (http_access.h): a no-cors POST (text/plain, a form
 * encoding, no Content-Type), Origin "null" or another site, and Host
 * evil.example on GET, POST and DELETE. The blackhole list is empty before.
 */
static void
refused_changes(uint16_t port)
{
	static const char body[] = "{\"address\": \"10.0.0.6\"}";
	static const char type_msg[] = "a request that changes state needs "
				       "Content-Type: application/json";
	static const char origin_msg[] =
		"Origin is not one of http.cors_origins nor this server's own";
	static const char host_msg[] = "Host is not one of http.allowed_hosts";
	static const char twice_msg[] =
		"Host, Origin, Content-Type and Authorization may each appear once";
	char req[512];
	json_t *j;
	int n;

	EXPECT_ERROR(post_blackhole(port, "127.0.0.1:8080",
				    "Origin: http://evil.example\r\nContent-Type: text/plain\r\n",
				    body),
		     403, origin_msg);
	EXPECT_ERROR(post_blackhole(port, "localhost", "Content-Type: text/plain\r\n", body), 415,
		     type_msg);
	EXPECT_ERROR(post_blackhole(port, "localhost",
				    "Content-Type: application/x-www-form-urlencoded\r\n", body),
		     415, type_msg);
	EXPECT_ERROR(post_blackhole(port, "localhost", "", body), 415, type_msg);
	EXPECT_ERROR(post_blackhole(port, "localhost", "Origin: null\r\n" JSON_TYPE, body), 403,
		     origin_msg);
	EXPECT_ERROR(post_blackhole(port, "localhost",
				    "Origin: https://other.example\r\n" JSON_TYPE, body),
		     403, origin_msg);
	EXPECT_ERROR(post_blackhole(port, "evil.example", JSON_TYPE, body), 403, host_msg);
	n = snprintf(req, sizeof(req),
		     "DELETE /api/v1/blackholes/10.0.0.6 HTTP/1.1\r\nHost: "
		     "evil.example:8080\r\n" JSON_TYPE "Connection: close\r\n\r\n");
	EXPECT_ERROR(exchange(AF_INET, port, req, (size_t)n), 403, host_msg);
	n = snprintf(req, sizeof(req),
		     "GET /api/v1/blackholes HTTP/1.1\r\nHost: evil.example\r\n"
		     "Connection: close\r\n\r\n");
	EXPECT_ERROR(exchange(AF_INET, port, req, (size_t)n), 403, host_msg);
	/* A field the checks read, repeated: the checks would see the first
	 * value only, so the request is refused whatever the values. */
	EXPECT_ERROR(
		post_blackhole(
			port, "localhost",
			"Origin: http://localhost\r\nOrigin: http://evil.example\r\n" JSON_TYPE,
			body),
		400, twice_msg);
	EXPECT_ERROR(
		post_blackhole(port, "localhost", JSON_TYPE "Content-Type: text/plain\r\n", body),
		400, twice_msg);
	EXPECT_ERROR(request_h(port, "GET", "/api/v1/summary", "Host: evil.example\r\n"), 400,
		     twice_msg);
	/* The page's own origin may (the dashboard's fetch sends Origin). */
	n = snprintf(req, sizeof(req), "Origin: http://127.0.0.1:%u\r\n" JSON_TYPE, port);
	REQUIRE(n > 0 && (size_t)n < sizeof(req));
	{
		char host[32];

		snprintf(host, sizeof(host), "127.0.0.1:%u", port);
		j = EXPECT_JSON(post_blackhole(port, host, req, body), 201);
		json_decref(j);
	}
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes"), 200);
	CHECK(json_array_size(json_object_get(j, "blackholes")) == 1);
	json_decref(j);
	j = EXPECT_JSON(request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.6", JSON_TYPE), 200);
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes"), 200);
	CHECK(json_array_size(json_object_get(j, "blackholes")) == 0);
	json_decref(j);
}

/* An actions module whose one monitored subnet is 10.0.0.0/24 (copied). */
static struct dpmon_actions *
actions_on_10_0_0_0_24(void)
{
	struct dpmon_subnet_conf sub = {0};
	struct dpmon_config cfg;
	struct dpmon_actions *a;

	dpmon_config_defaults(&cfg);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &sub.prefix, NULL) == 0);
	cfg.subnets = &sub;
	cfg.n_subnets = 1;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	return a;
}

/* ------------------------------------------------------------------------
 * Bearer tokens (http_token.h).
 * --------------------------------------------------------------------- */

/* Write @p text to @p path with mode @p mode. */
static void
write_token(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
	REQUIRE(chmod(path, mode) == 0);
}

/* A 401 for @p r: WWW-Authenticate: Bearer and the error @p msg. */
static void
expect_401(struct reply r, const char *msg, int line)
{
	char v[64];

	if (header(&r, "WWW-Authenticate", v, sizeof(v)) == NULL || strcmp(v, "Bearer") != 0) {
		fprintf(stderr, "%s:%d: no WWW-Authenticate: Bearer:\n%s\n", __FILE__, line, r.raw);
		exit(1);
	}
	expect_error(__FILE__, line, r, 401, msg);
}

/*
 * With http.write_token_file, a POST or DELETE without Authorization, with
 * another scheme or a wrong token gets 401 and changes nothing; the right
 * token passes; reads need none. /metrics counts the 401s. With a read
 * token loaded too (as on SIGHUP), reads other than /health need the read
 * or the write token; a token file others may read is refused and the old
 * tokens stay.
 */
static void
test_tokens(struct dpmon_snap_store *st)
{
	static const char write_msg[] = "this request changes state: it needs Authorization: "
					"Bearer with the write token (http.write_token_file)";
	static const char read_msg[] = "reads need Authorization: Bearer with the read token "
				       "(http.read_token_file)";
	static const char body[] = "{\"address\": \"10.0.0.7\"}";
	static const char good[] = JSON_TYPE "Authorization: Bearer s3cret-W_1\r\n";
	char dir[] = "/tmp/test_http_tokens.XXXXXX", wpath[64], rpath[64], e[256];
	struct dpmon_actions *a;
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1", .metrics_top_hosts = 1};
	struct dpmon_http *h;
	struct reply r;
	uint16_t port;
	json_t *j;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(wpath, sizeof(wpath), "%s/write", dir);
	snprintf(rpath, sizeof(rpath), "%s/read", dir);
	write_token(wpath, "s3cret-W_1\n", 0600);
	write_token(rpath, "r3ad\n", 0400);
	a = actions_on_10_0_0_0_24();
	o.actions = a;
	o.write_token_file = wpath;
	h = dpmon_http_start_opts(&o, st);
	REQUIRE(h != NULL);
	port = dpmon_http_port(h);

	expect_401(post_blackhole(port, "localhost", JSON_TYPE, body), write_msg, __LINE__);
	expect_401(post_blackhole(port, "localhost",
				  JSON_TYPE "Authorization: Bearer s3cret-W_2\r\n", body),
		   write_msg, __LINE__);
	expect_401(post_blackhole(port, "localhost",
				  JSON_TYPE "Authorization: Bearer s3cret-W_\r\n", body),
		   write_msg, __LINE__);
	expect_401(post_blackhole(port, "localhost",
				  JSON_TYPE "Authorization: Basic czNjcmV0LVdfMQ==\r\n", body),
		   write_msg, __LINE__);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes"), 200);
	CHECK(json_array_size(json_object_get(j, "blackholes")) == 0);
	json_decref(j);
	/* the scheme in any case, more than one space */
	json_decref(
		EXPECT_JSON(post_blackhole(port, "localhost",
					   JSON_TYPE "Authorization: bearer  s3cret-W_1\r\n", body),
			    201));
	expect_401(request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.7", JSON_TYPE), write_msg,
		   __LINE__);
	r = request(port, "GET", "/metrics");
	CHECK(r.status == 200 && strstr(r.body, "\ndpmon_http_unauthorized_total 5\n") != NULL);
	free(r.raw);

	/* A read token as well, as a reload loads it. */
	CHECK(dpmon_http_reload_tokens(h, wpath, rpath, e, sizeof(e)) == 0);
	expect_401(request(port, "GET", "/api/v1/blackholes"), read_msg, __LINE__);
	expect_401(request_h(port, "GET", "/api/v1/blackholes", "Authorization: Bearer r3ad_\r\n"),
		   read_msg, __LINE__);
	json_decref(EXPECT_JSON(
		request_h(port, "GET", "/api/v1/blackholes", "Authorization: Bearer r3ad\r\n"),
		200));
	json_decref(EXPECT_JSON(request_h(port, "GET", "/api/v1/blackholes",
					  "Authorization: Bearer s3cret-W_1\r\n"),
				200));
	json_decref(EXPECT_JSON(request(port, "GET", "/health"), 200));
	expect_401(request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.7",
			     JSON_TYPE "Authorization: Bearer r3ad\r\n"),
		   write_msg, __LINE__);

	/* A token file others may read: refused, the old tokens stay. */
	write_token(wpath, "other\n", 0644);
	CHECK(dpmon_http_reload_tokens(h, wpath, rpath, e, sizeof(e)) == -EPERM);
	CHECK(strstr(e, "group or others may access it (mode 0644; chmod 600)") != NULL);
	json_decref(
		EXPECT_JSON(request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.7", good), 200));

	/* No token file: a start with one others may read fails. */
	dpmon_http_stop(h);
	errno = 0;
	CHECK(dpmon_http_start_opts(&o, st) == NULL && errno == EPERM);
	dpmon_actions_free(a);
	unlink(wpath);
	unlink(rpath);
	rmdir(dir);
}

static void
test_blackholes(struct dpmon_snap_store *st, uint16_t plain_port)
{
	static const char origins[1][DPMON_ORIGIN_LEN] = {"https://x.y"};
	static const char chunked_big[] =
		"POST /api/v1/blackholes HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
	struct dpmon_actions *a;
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1",
				    .metrics_top_hosts = 1,
				    .n_cors_origins = 1,
				    .cors_origins = origins};
	struct dpmon_http *h;
	char v[128], big[5001], *req;
	struct reply r;
	uint16_t port;
	json_t *j, *e;
	size_t n;

	/* A server without the actions module knows no such endpoint. */
	EXPECT_ERROR(request(plain_port, "GET", "/api/v1/blackholes"), 404,
		     "no such endpoint: /api/v1/blackholes");

	a = actions_on_10_0_0_0_24();
	o.actions = a;
	h = dpmon_http_start_opts(&o, st);
	REQUIRE(h != NULL);
	port = dpmon_http_port(h);

	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes"), 200);
	CHECK(json_array_size(json_object_get(j, "blackholes")) == 0);
	json_decref(j);
	j = EXPECT_JSON(
		request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"10.0.0.5\"}"), 201);
	CHECK(strcmp(jstr(j, "address"), "10.0.0.5") == 0);
	CHECK(strcmp(jstr(j, "source"), "manual") == 0);
	CHECK(json_is_null(json_object_get(j, "alert_id")));
	CHECK(json_is_number(json_object_get(j, "since")));
	CHECK(json_is_false(json_object_get(j, "announced"))); /* no ExaBGP configured */
	json_decref(j);
	j = EXPECT_JSON(
		request_b(port, "POST", "/api/v1/blackholes/", "{\"address\": \"10.0.0.5\"}"),
		200); /* already there */
	json_decref(j);

	EXPECT_ERROR(
		request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"192.168.1.1\"}"),
		400, "address 192.168.1.1 is outside every monitored subnet");
	EXPECT_ERROR(
		request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"10.0.0.0/24\"}"),
		400, "invalid address '10.0.0.0/24'");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", "{\"address\": 5}"), 400,
		     "'address' must be a string");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", "{}"), 400,
		     "missing key 'address' in the body");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes",
			       "{\"address\": \"10.0.0.5\", \"ttl\": 60}"),
		     400, "unknown key 'ttl' in the body (only \"address\")");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", "[\"10.0.0.5\"]"), 400,
		     "the body must be a JSON object {\"address\": \"...\"}");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", "{\"address\": "), 400,
		     "invalid JSON body: line 1 column 12: unexpected token near end of file");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", ""), 400,
		     "empty body: expected a JSON object {\"address\": \"...\"}");
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", " \r\n"), 400,
		     "empty body: expected a JSON object {\"address\": \"...\"}");
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	EXPECT_ERROR(request_b(port, "POST", "/api/v1/blackholes", big), 413,
		     "request body over 4096 bytes");
	/* Chunked: no Content-Length, refused once the body passes the limit. */
	n = strlen(chunked_big) + 2 * 5000 + 64;
	req = malloc(n);
	REQUIRE(req != NULL);
	n = (size_t)snprintf(req, n, "%s1388\r\n%s\r\n0\r\n\r\n", chunked_big, big);
	EXPECT_ERROR(exchange(AF_INET, port, req, n), 413, "request body over 4096 bytes");
	free(req);

	r = request(port, "GET", "/api/v1/blackholes");
	CHECK(header(&r, "ETag", v, sizeof(v)) == NULL); /* not a snapshot: never cached */
	CHECK(header(&r, "Cache-Control", v, sizeof(v)) != NULL && strcmp(v, "no-store") == 0);
	j = EXPECT_JSON(r, 200);
	REQUIRE(json_array_size(json_object_get(j, "blackholes")) == 1);
	e = json_array_get(json_object_get(j, "blackholes"), 0);
	CHECK(strcmp(jstr(e, "address"), "10.0.0.5") == 0);
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes/10.0.0.5"), 200);
	CHECK(strcmp(jstr(j, "source"), "manual") == 0);
	json_decref(j);
	EXPECT_ERROR(request(port, "GET", "/api/v1/blackholes/10.0.0.6"), 404,
		     "no blackhole for 10.0.0.6");
	EXPECT_ERROR(request_h(port, "DELETE", "/api/v1/blackholes/nonsense", JSON_TYPE), 400,
		     "invalid address 'nonsense'");
	EXPECT_ERROR(request(port, "GET", "/api/v1/blackholes?x=1"), 400, "unknown parameter 'x'");
	r = request_h(port, "PUT", "/api/v1/blackholes", JSON_TYPE);
	CHECK(header(&r, "Allow", v, sizeof(v)) != NULL && strcmp(v, "GET, HEAD, POST") == 0);
	EXPECT_ERROR(r, 405, "method 'PUT' not allowed (allowed: GET, HEAD, POST)");
	r = request_b(port, "POST", "/api/v1/blackholes/10.0.0.5", "{}");
	CHECK(header(&r, "Allow", v, sizeof(v)) != NULL && strcmp(v, "GET, HEAD, DELETE") == 0);
	EXPECT_ERROR(r, 405, "method 'POST' not allowed (allowed: GET, HEAD, DELETE)");

	/* DELETE is idempotent. */
	j = EXPECT_JSON(request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.5", JSON_TYPE), 200);
	CHECK(strcmp(jstr(j, "address"), "10.0.0.5") == 0);
	CHECK(json_is_true(json_object_get(j, "removed")));
	json_decref(j);
	j = EXPECT_JSON(request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.5", JSON_TYPE), 200);
	CHECK(json_is_false(json_object_get(j, "removed")));
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes"), 200);
	CHECK(json_array_size(json_object_get(j, "blackholes")) == 0);
	json_decref(j);

	/* A browser's preflight may POST and DELETE here, with a Content-Type. */
	r = request_h(port, "OPTIONS", "/api/v1/blackholes",
		      "Origin: https://x.y\r\nAccess-Control-Request-Method: POST\r\n"
		      "Access-Control-Request-Headers: content-type\r\n");
	CHECK(r.status == 204);
	CHECK(header(&r, "Access-Control-Allow-Methods", v, sizeof(v)) != NULL &&
	      strcmp(v, "GET, HEAD, POST, DELETE") == 0);
	CHECK(header(&r, "Access-Control-Allow-Headers", v, sizeof(v)) != NULL &&
	      strcmp(v, "If-None-Match, Content-Type") == 0);
	free(r.raw);
	r = request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"10.0.0.7\"}");
	CHECK(r.status == 201);
	free(r.raw);
	r = request_h(port, "DELETE", "/api/v1/blackholes/10.0.0.7",
		      "Origin: https://x.y\r\n" JSON_TYPE);
	CHECK(r.status == 200 && header(&r, "Access-Control-Allow-Origin", v, sizeof(v)) != NULL &&
	      strcmp(v, "https://x.y") == 0);
	free(r.raw);
	refused_changes(port);

	dpmon_http_stop(h);
	dpmon_actions_free(a);
}

/* POST of a manual FlowSpec rule: each field, the checks of a rule, the scope. */
static void
test_flowspec_post(struct dpmon_snap_store *st)
{
	static const char fs[] = "/api/v1/flowspec";
	struct dpmon_subnet_conf sub = {0};
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1", .metrics_top_hosts = 1};
	struct dpmon_http *h;
	uint16_t port;
	json_t *j;

	dpmon_config_defaults(&cfg);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &sub.prefix, NULL) == 0);
	cfg.subnets = &sub;
	cfg.n_subnets = 1;
	cfg.actions.flowspec.announce = false; /* no ExaBGP here: listed only */
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	o.actions = a;
	h = dpmon_http_start_opts(&o, st);
	REQUIRE(h != NULL);
	port = dpmon_http_port(h);

	j = EXPECT_JSON(request_b(port, "POST", fs,
				  "{\"destination\": \"10.0.0.5\", \"protocol\": \"udp\", "
				  "\"source_ports\": [53], \"action\": \"rate-limit 9600\"}"),
			201);
	CHECK(json_integer_value(json_object_get(j, "id")) == 1);
	CHECK(json_is_null(json_object_get(j, "alert_id")));
	CHECK(strcmp(jstr(j, "match"), "destination 10.0.0.5/32; protocol udp; source-port =53;") ==
	      0);
	CHECK(strcmp(jstr(j, "action"), "rate-limit 9600") == 0);
	CHECK(json_is_false(json_object_get(j, "announced")));
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/flowspec/1"), 200);
	CHECK(strcmp(jstr(j, "action"), "rate-limit 9600") == 0);
	json_decref(j);
	j = EXPECT_JSON(
		request_b(port, "POST", fs,
			  "{\"destination\": \"10.0.0.0/25\", \"source\": \"198.51.100.0/24\", "
			  "\"protocol\": \"tcp\", \"destination_ports\": [80, 443], "
			  "\"tcp_flags\": [\"syn\", \"syn+ack\"], "
			  "\"packet_length\": {\"min\": 40, \"max\": 60}}"),
		201);
	CHECK(json_integer_value(json_object_get(j, "id")) == 2);
	CHECK(strcmp(jstr(j, "match"),
		     "destination 10.0.0.0/25; source 198.51.100.0/24; protocol tcp; "
		     "destination-port [ =80 =443 ]; tcp-flags [ =syn&!fin+rst+push+ack+urgent "
		     "=syn+ack&!fin+rst+push+urgent ]; packet-length >=40&<=60;") == 0);
	CHECK(strcmp(jstr(j, "action"), "discard") == 0);
	json_decref(j);
	j = EXPECT_JSON(request_b(port, "POST", fs,
				  "{\"destination\": \"10.0.0.7\", \"protocol\": \"icmp\", "
				  "\"icmp_type\": [8], \"icmp_code\": 0, \"fragment\": true, "
				  "\"packet_length\": {\"min\": 1000}}"),
			201);
	CHECK(strcmp(jstr(j, "match"),
		     "destination 10.0.0.7/32; protocol =1; icmp-type =8; icmp-code =0; "
		     "packet-length >=1000; fragment [ is-fragment ];") == 0);
	json_decref(j);

	/* Refused: the same match, a rule routers refuse, a destination out of
	 * scope (422, 409); bodies and fields that do not parse (400, naming the
	 * field). */
	static const struct {
		const char *body;
		int status;
		const char *msg; /* NULL: not compared */
	} refused[] = {
		{"{\"destination\": \"10.0.0.5/32\", \"protocol\": 17, "
		 "\"source_ports\": [53]}",
		 409, "rule 1 has the same match"},
		{"{\"destination\": \"10.0.0.6\", \"protocol\": \"icmp\", "
		 "\"destination_ports\": [80]}",
		 422, "not a rule routers accept: ports need protocol tcp or udp"},
		{"{\"destination\": \"10.0.0.6\", \"protocol\": \"udp\", "
		 "\"destination_ports\": [80], \"fragment\": true}",
		 422,
		 "not a rule routers accept: ports with a fragment match (a later fragment "
		 "has no ports)"},
		{"{\"destination\": \"192.168.1.1\"}", 422,
		 "destination: not inside a monitored subnet"},
		{"{\"destination\": \"10.0.0.0/8\"}", 422,
		 "destination: not inside a monitored subnet"},
		{"{\"protocol\": \"tcp\"}", 400,
		 "'destination' is missing (an address or a prefix)"},
		{"{\"destination\": \"10.0.0.6\", \"x\": 1}", 400, "unknown key 'x' in the body"},
		{"{\"destination\": \"10.0.0.x\"}", 400,
		 "'destination' is not an address or a prefix"},
		{"{\"destination\": \"10.0.0.6\", \"source_ports\": [70000]}", 400,
		 "'source_ports' must be an integer 0 .. 65535"},
		{"{\"destination\": \"10.0.0.6\", \"destination_ports\": "
		 "[1, 2, 3, 4, 5]}",
		 400, "'destination_ports' must be an array of 1 .. 4 values"},
		{"{\"destination\": \"10.0.0.6\", \"protocol\": \"sctp\"}", 400,
		 "'protocol' must be tcp, udp, icmp, icmpv6 or 0 .. 255"},
		{"{\"destination\": \"10.0.0.6\", \"tcp_flags\": [\"syn+fun\"]}", 400,
		 "'tcp_flags[0]' must be flag names fin, syn, rst, push, ack, urgent joined by "
		 "'+' (\"syn+ack\")"},
		{"{\"destination\": \"10.0.0.6\", \"tcp_flags\": [\"ack\", \"\"]}", 400,
		 "'tcp_flags[1]' must be flag names fin, syn, rst, push, ack, urgent joined by "
		 "'+' (\"syn+ack\")"},
		{"{\"destination\": \"10.0.0.6\", \"destination_ports\": [80, 80]}", 400,
		 "'destination_ports[1]' repeats destination_ports[0] (80): give each value once"},
		{"{\"destination\": \"::ffff:10.0.0.6\"}", 400,
		 "'destination' is an IPv4-mapped IPv6 address: give the IPv4 address"},
		{"{\"destination\": \"10.0.0.6\", \"source\": \"0.0.0.0/0\"}", 400,
		 "'source' of length 0 matches everything: leave source out instead"},
		{"{\"destination\": \"10.0.0.6\", \"packet_length\": "
		 "{\"min\": 1, \"high\": 2}}",
		 400, "'packet_length' must be an object {\"min\", \"max\"}"},
		{"{\"destination\": \"10.0.0.6\", \"fragment\": \"yes\"}", 400,
		 "'fragment' must be true or false"},
		{"{\"destination\": \"10.0.0.6\", \"action\": \"explode\"}", 400, NULL},
		{"[]", 400, "the body must be a JSON object (a FlowSpec rule)"},
		{"", 400, "empty body: expected a JSON object (a FlowSpec rule)"},
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		EXPECT_ERROR(request_b(port, "POST", fs, refused[i].body), refused[i].status,
			     refused[i].msg);
	EXPECT_ERROR(request_full(port, "POST", fs, "localhost", "Content-Type: text/plain\r\n",
				  "{\"destination\": \"10.0.0.6\"}"),
		     415, "a request that changes state needs Content-Type: application/json");

	j = EXPECT_JSON(request_h(port, "DELETE", "/api/v1/flowspec/1", JSON_TYPE), 200);
	CHECK(json_is_true(json_object_get(j, "removed")));
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", fs), 200);
	CHECK(json_array_size(json_object_get(j, "rules")) == 2);
	json_decref(j);
	dpmon_http_stop(h);
	dpmon_actions_free(a);
}

/* POST of a manual FlowSpec rule without actions.exabgp_pipe (not a dry
 * run): 409 naming the key, nothing listed. */
static void
test_flowspec_no_pipe(struct dpmon_snap_store *st)
{
	static const char fs[] = "/api/v1/flowspec";
	struct dpmon_actions *a = actions_on_10_0_0_0_24();
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1", .metrics_top_hosts = 1};
	struct dpmon_http *h;
	uint16_t port;
	json_t *j;

	o.actions = a;
	h = dpmon_http_start_opts(&o, st);
	REQUIRE(h != NULL);
	port = dpmon_http_port(h);
	EXPECT_ERROR(request_b(port, "POST", fs, "{\"destination\": \"10.0.0.7\"}"), 409,
		     "actions.exabgp_pipe is not set: nothing would announce the rule");
	j = EXPECT_JSON(request(port, "GET", fs), 200);
	CHECK(json_array_size(json_object_get(j, "rules")) == 0);
	json_decref(j);
	dpmon_http_stop(h);
	dpmon_actions_free(a);
}

/* Blackholes of a subnet counted per /64: any address inside, or the prefix. */
static void
test_blackholes_host_prefix(struct dpmon_snap_store *st)
{
	struct dpmon_subnet_conf sub[2];
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_http_opts o = {.listen_addr = "127.0.0.1", .metrics_top_hosts = 1};
	struct dpmon_http *h;
	uint16_t port;
	json_t *j;

	memset(sub, 0, sizeof(sub));
	dpmon_config_defaults(&cfg);
	REQUIRE(dpmon_prefix_parse("2001:db8:5::/48", &sub[0].prefix, NULL) == 0);
	sub[0].host_prefix_len = 64;
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &sub[1].prefix, NULL) == 0);
	cfg.subnets = sub;
	cfg.n_subnets = 2;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	o.actions = a;
	h = dpmon_http_start_opts(&o, st);
	REQUIRE(h != NULL);
	port = dpmon_http_port(h);

	j = EXPECT_JSON(
		request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"2001:db8:5:1::9\"}"),
		201);
	CHECK(strcmp(jstr(j, "address"), "2001:db8:5:1::/64") == 0);
	json_decref(j);
	j = EXPECT_JSON(request_b(port, "POST", "/api/v1/blackholes",
				  "{\"address\": \"2001:db8:5:1::/64\"}"),
			200); /* the same host */
	CHECK(strcmp(jstr(j, "address"), "2001:db8:5:1::/64") == 0);
	json_decref(j);
	EXPECT_ERROR(
		request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"2001:db8:5::/48\"}"),
		400,
		"invalid address '2001:db8:5::/48': the hosts of its subnet are /64 "
		"prefixes (host_prefix_len)");
	EXPECT_ERROR(
		request_b(port, "POST", "/api/v1/blackholes", "{\"address\": \"2001:db8:6::/64\"}"),
		400, "invalid address '2001:db8:6::/64'");
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes/2001:db8:5:1:ffff::1"), 200);
	CHECK(strcmp(jstr(j, "address"), "2001:db8:5:1::/64") == 0);
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes/2001:db8:5:1::/64"), 200);
	CHECK(strcmp(jstr(j, "source"), "manual") == 0);
	json_decref(j);
	EXPECT_ERROR(request(port, "GET", "/api/v1/blackholes/2001:db8:5:2::1"), 404,
		     "no blackhole for 2001:db8:5:2::1");
	j = EXPECT_JSON(request_h(port, "DELETE", "/api/v1/blackholes/2001:db8:5:1::77", JSON_TYPE),
			200);
	CHECK(strcmp(jstr(j, "address"), "2001:db8:5:1::/64") == 0);
	CHECK(json_is_true(json_object_get(j, "removed")));
	json_decref(j);
	j = EXPECT_JSON(request(port, "GET", "/api/v1/blackholes"), 200);
	CHECK(json_array_size(json_object_get(j, "blackholes")) == 0);
	json_decref(j);
	dpmon_http_stop(h);
	dpmon_actions_free(a);
}

int
main(void)
{
	struct dpmon_snap_store st;
	struct dpmon_http *h;
	uint16_t port;

	dpmon_snap_store_init(&st);
	dpmon_snap_publish(&st, http_snapshot(7));
	h = dpmon_http_start("127.0.0.1", 0, &st);
	if (h == NULL)
		FAIL("dpmon_http_start: %s", strerror(errno));
	port = dpmon_http_port(h);
	REQUIRE(port != 0);

	test_endpoints(port);
	test_keepalive(port);
	test_head(port);
	test_post(port);
	test_weird(port);
	test_start_errors(port, &st);
	test_ipv6(&st);
	test_metrics(port);
	test_page(port);
	test_concurrent_publish(port, &st);
	test_etag(port, &st);
	test_cache(port, &st);
	test_query_cache(h, port, &st);
	test_cors(&st);
	test_blackholes(&st, port);
	test_blackholes_host_prefix(&st);
	test_flowspec_post(&st);
	test_flowspec_no_pipe(&st);
	test_health_board(&st);
	test_tokens(&st);
	/* Still serving after all of the above. */
	json_decref(EXPECT_JSON(request(port, "GET", "/health"), 200));
	dpmon_http_stop(h);
	dpmon_snap_store_destroy(&st);
	test_starting();
	return check_finish("test_http");
}
