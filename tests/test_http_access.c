/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_access.c — the HTTP access policy (http_access.h) on exact
 * requests: the Host check with the default and a configured list (ports,
 * brackets, case, a trailing dot, a wildcard listen address), and for a
 * request that changes state the Origin check (configured, own, "null",
 * another site, "*" not enough) and the Content-Type check (text/plain and
 * form encodings of a cross-site form or no-cors fetch refused).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "http_access.h"

static const char host_names[2][DPMON_HOST_NAME_LEN] = {"dpmon.lan", "2001:db8::1"};
static const char cors[2][DPMON_ORIGIN_LEN] = {"*", "http://grafana.lan:3000"};

static const char no_origin[] = "";
static const char refused_host[] = "Host is not one of http.allowed_hosts";
static const char refused_origin[] = "Origin is not one of http.cors_origins nor this server's own";
static const char refused_type[] = "a request that changes state needs "
				   "Content-Type: application/json";

/* http_access_check on @p method (@p state: on a resource that changes
 * state) with Host @p host, Origin @p origin ("" = none, as NULL = none for
 * the others), Content-Type @p ct: the status @p want and text @p msg. */
static void
expect(const struct http_access *a, const char *method, bool state, const char *host,
       const char *origin, const char *ct, unsigned want, const char *msg, int line)
{
	struct http_access_request r = {.method = method,
					.changes_state = state,
					.host = host,
					.origin = origin[0] != '\0' ? origin : NULL,
					.content_type = ct};
	struct dpmon_http_verdict v = http_access_check(a, &r);

	test_checks++;
	if (v.status != want || (msg == NULL) != (v.message == NULL) ||
	    (msg != NULL && strcmp(msg, v.message) != 0)) {
		test_failures++;
		fprintf(stderr, "%s:%d: %s Host %s Origin %s: %u '%s', expected %u '%s'\n",
			__FILE__, line, method, host ? host : "-", origin, v.status,
			v.message ? v.message : "", want, msg ? msg : "");
	}
}
#define EXPECT(a, m, st, h, o, ct, want, msg) expect(a, m, st, h, o, ct, want, msg, __LINE__)

static void
test_default_hosts(void)
{
	struct http_access a;

	http_access_init(&a, "127.0.0.1", "Probe-7", NULL, 0, NULL, 0);
	CHECK(a.n_hosts == 3 && !a.any_ip && a.n_origins == 0);
	EXPECT(&a, "GET", false, "127.0.0.1:8080", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "127.0.0.1", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "LOCALHOST:1", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "probe-7:8080", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "probe-7.:8080", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, NULL, no_origin, NULL, 0, NULL); /* HTTP/1.0 */
	EXPECT(&a, "GET", false, "evil.example", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "evil.example:8080", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "127.0.0.2:8080", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "localhost.evil.example", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "OPTIONS", true, "evil.example", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "POST", true, "evil.example", no_origin, "application/json", 403, refused_host);
	EXPECT(&a, "DELETE", true, "evil.example", no_origin, "application/json", 403,
	       refused_host);

	/* IPv6 listen address: bracketed in Host. */
	http_access_init(&a, "::1", NULL, NULL, 0, NULL, 0);
	CHECK(a.n_hosts == 2);
	EXPECT(&a, "GET", false, "[::1]:8080", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "[::1", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "[::2]:8080", no_origin, NULL, 403, refused_host);

	/* A wildcard listen address: any IP literal, names still checked. */
	http_access_init(&a, "0.0.0.0", "probe", NULL, 0, NULL, 0);
	CHECK(a.any_ip);
	EXPECT(&a, "GET", false, "192.0.2.7:8080", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "[2001:db8::5]", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "probe", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "evil.example", no_origin, NULL, 403, refused_host);
}

static void
test_configured_hosts(void)
{
	struct http_access a;

	http_access_init(&a, "127.0.0.1", "probe", host_names, 2, cors, 2);
	CHECK(a.n_hosts == 2 && !a.any_ip);
	CHECK(a.n_origins == 1 && strcmp(a.origins[0], "http://grafana.lan:3000") == 0);
	EXPECT(&a, "GET", false, "DPMON.lan:443", no_origin, NULL, 0, NULL);
	EXPECT(&a, "GET", false, "[2001:db8::1]:80", no_origin, NULL, 0, NULL);
	/* The list replaces the defaults. */
	EXPECT(&a, "GET", false, "127.0.0.1:8080", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "localhost", no_origin, NULL, 403, refused_host);
	EXPECT(&a, "GET", false, "probe", no_origin, NULL, 403, refused_host);
}

static void
test_state_changes(void)
{
	static const char *const plain[] = {"text/plain",
					    "application/x-www-form-urlencoded",
					    "multipart/form-data; boundary=x",
					    "application/jsonx",
					    "application/json-seq",
					    ""};
	struct http_access a;
	const char *h = "127.0.0.1:8080";

	http_access_init(&a, "127.0.0.1", "probe", NULL, 0, cors, 2);
	EXPECT(&a, "POST", true, h, no_origin, "application/json", 0, NULL);
	EXPECT(&a, "POST", true, h, no_origin, "Application/JSON; charset=utf-8", 0, NULL);
	EXPECT(&a, "POST", true, h, no_origin, " application/json ;charset=utf-8", 0, NULL);
	EXPECT(&a, "DELETE", true, h, no_origin, "application/json", 0, NULL);
	EXPECT(&a, "PUT", true, h, no_origin, "application/json", 0, NULL);
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		EXPECT(&a, "POST", true, h, no_origin, plain[i], 415, refused_type);
		EXPECT(&a, "DELETE", true, h, no_origin, plain[i], 415, refused_type);
	}
	EXPECT(&a, "POST", true, h, no_origin, NULL, 415, refused_type);
	EXPECT(&a, "DELETE", true, h, no_origin, NULL, 415, refused_type);
	/* Reads and preflights need neither. */
	EXPECT(&a, "GET", true, h, "http://evil.example", NULL, 0, NULL);
	EXPECT(&a, "HEAD", true, h, "null", "text/plain", 0, NULL);
	EXPECT(&a, "OPTIONS", true, h, "http://evil.example", NULL, 0, NULL);
	/* A method on a resource that changes nothing is the API's 405. */
	EXPECT(&a, "POST", false, h, "http://evil.example", "text/plain", 0, NULL);

	/* Origin: configured, the server's own, or refused before the type. */
	EXPECT(&a, "POST", true, h, "http://grafana.lan:3000", "application/json", 0, NULL);
	EXPECT(&a, "POST", true, h, "HTTP://Grafana.lan:3000", "application/json", 0, NULL);
	EXPECT(&a, "POST", true, h, "http://127.0.0.1:8080", "application/json", 0, NULL);
	EXPECT(&a, "DELETE", true, h, "https://127.0.0.1:8080", "application/json", 0, NULL);
	EXPECT(&a, "POST", true, h, "http://evil.example", "application/json", 403, refused_origin);
	EXPECT(&a, "POST", true, h, "http://evil.example", "text/plain", 403, refused_origin);
	EXPECT(&a, "POST", true, h, "null", "application/json", 403, refused_origin);
	EXPECT(&a, "POST", true, h, "http://grafana.lan:3001", "application/json", 403,
	       refused_origin);
	EXPECT(&a, "POST", true, h, "http://127.0.0.1:8081", "application/json", 403,
	       refused_origin);
	EXPECT(&a, "POST", true, h, "ftp://127.0.0.1:8080", "application/json", 403,
	       refused_origin);
	EXPECT(&a, "DELETE", true, h, "http://evil.example", "application/json", 403,
	       refused_origin);
	/* "*" lets any site read, never write. */
	http_access_init(&a, "127.0.0.1", NULL, NULL, 0, cors, 1);
	CHECK(a.n_origins == 0);
	EXPECT(&a, "POST", true, h, "http://grafana.lan:3000", "application/json", 403,
	       refused_origin);
	/* Without Host (HTTP/1.0) only a configured origin passes. */
	EXPECT(&a, "POST", true, NULL, "http://127.0.0.1:8080", "application/json", 403,
	       refused_origin);
}

int
main(void)
{
	test_default_hosts();
	test_configured_hosts();
	test_state_changes();
	return check_finish("test_http_access");
}
