/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_head.c — the request-head scanner (http_head.h) on exact
 * bytes: heads accepted whole, every prefix of one waiting for more, and
 * every refusal with its status and text: bytes that are not HTTP (refused
 * at the first wrong byte), a bad target, too many query parameters, 505
 * for another version, bad header fields, 414 and 431 at and past the
 * limits, and the framing (RFC 9112 6.3) of Content-Length and
 * Transfer-Encoding; and the same limits on a head libmicrohttpd read
 * (dpmon_http_head_limits), at and past each one.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "http_head.h"

/* dpmon_http_head_check on @p n bytes of @p s: the result @p want_r with
 * the verdict @p want_status / @p want_msg (NULL: any text). */
static void
expect_head(const char *s, size_t n, int want_r, unsigned want_status, const char *want_msg,
	    int line)
{
	struct dpmon_http_verdict v;
	size_t hl = 0;
	bool hm;
	int r = dpmon_http_head_check(s, n, &hl, &hm, &v);

	test_checks++;
	if (r != want_r || v.status != want_status ||
	    (want_msg != NULL && (v.message == NULL || strcmp(v.message, want_msg) != 0)) ||
	    (r == 1 && hl != n)) {
		test_failures++;
		fprintf(stderr,
			"%s:%d: head check: %d %u '%s' (head %zu of %zu), expected %d %u '%s'\n",
			__FILE__, line, r, v.status, v.message ? v.message : "", hl, n, want_r,
			want_status, want_msg ? want_msg : "");
	}
}
#define EXPECT_HEAD(s, r, st, msg) expect_head(s, strlen(s), r, st, msg, __LINE__)

static const char bad_cl[] = "invalid Content-Length: expected 1 to 18 decimal digits";
static const char both[] = "both Content-Length and Transfer-Encoding in one request";
static const char bad_te[] = "unsupported Transfer-Encoding: only chunked";

static void
test_head_check(void)
{
	static const char *const partial[] = {"G",
					      "GET",
					      "GET ",
					      "GET /hea",
					      "GET /health ",
					      "GET /health HTTP/1",
					      "GET /health HTTP/1.1\r",
					      "GET / HTTP/1.1\r\nHost: x\r\n",
					      "GET / HTTP/1.1\r\nHo",
					      "GET / HTTP/1.1\r\nHost: x\r\n\r"};
	char *big = malloc(DPMON_HTTP_HEAD_MAX + 64);
	struct dpmon_http_verdict v;
	size_t hl;
	bool hm;
	int n;

	REQUIRE(big != NULL);
	EXPECT_HEAD("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 1, 0, NULL);
	EXPECT_HEAD("\r\n\r\nGET / HTTP/1.0\n\n", 1, 0, NULL); /* empty lines first, bare LF */
	EXPECT_HEAD("POST /api/v1/blackholes HTTP/1.1\r\nContent-Length:  28 \r\n\r\n", 1, 0, NULL);
	EXPECT_HEAD("POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", 1, 0, NULL);
	for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++)
		EXPECT_HEAD(partial[i], 0, 0, NULL);
	CHECK(dpmon_http_head_check("HEAD / HTTP/1.1\r\n\r\n", 19, &hl, &hm, &v) == 1 && hm);
	CHECK(dpmon_http_head_check("GET / HTTP/1.1\r\n\r\n", 18, &hl, &hm, &v) == 1 && !hm);
	/* The first wrong byte is enough. */
	EXPECT_HEAD("\x16\x03\x01", -1, 400, "not an HTTP request");
	expect_head("\x00", 1, -1, 400, "not an HTTP request", __LINE__);
	EXPECT_HEAD("GE\x01", -1, 400, "not an HTTP request");
	EXPECT_HEAD(" GET / HTTP/1.1", -1, 400, "not an HTTP request");
	EXPECT_HEAD("GET / HTTQ", -1, 400, "not an HTTP request");
	EXPECT_HEAD("GET / HTTP/1.1x", -1, 400, "not an HTTP request");
	EXPECT_HEAD("GET /\r\n", -1, 400,
		    "invalid request target: expected visible ASCII, then a space");
	EXPECT_HEAD("GET /a\xc3\xa9 ", -1, 400,
		    "invalid request target: expected visible ASCII, then a space");
	EXPECT_HEAD("GET / HTTP/2.0\r\n", -1, 505,
		    "HTTP version not supported (only HTTP/1.0 and HTTP/1.1)");
	EXPECT_HEAD("GET / HTTP/1.2\r\n", -1, 505, NULL);
	EXPECT_HEAD("GET / HTTP/1.1\r\nHost : x\r\n", -1, 400,
		    "invalid header field: expected a name, then ':'");
	EXPECT_HEAD("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n", -1, 400,
		    "obsolete line folding in a header field");
	EXPECT_HEAD("GET / HTTP/1.1\r\nHost: x\ry", -1, 400, "a CR without LF in the request head");
	EXPECT_HEAD("GET / HTTP/1.1\r\nX: a\x01", -1, 400, "a control byte in a header field");
	/* Parameters: at most DPMON_API_MAX_ARGS, counted as libmicrohttpd does. */
	EXPECT_HEAD("GET /?a=1&b&c=&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&o=15&p=16"
		    " HTTP/1.1\r\n\r\n",
		    1, 0, NULL);
	EXPECT_HEAD("GET /?&&a=1&&b=2& HTTP/1.1\r\n\r\n", 1, 0, NULL);
	EXPECT_HEAD("GET /?a=1&b&c=&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&o=15&p=16&q "
		    "HTTP/1.1\r\n\r\n",
		    -1, 400, "too many query parameters");
	/* Sizes: 414 for the line, 431 for the head, whole or not. */
	memcpy(big, "GET /", 5);
	memset(big + 5, 'a', DPMON_HTTP_LINE_MAX);
	expect_head(big, DPMON_HTTP_LINE_MAX + 5, -1, 414, "request line over 8192 bytes",
		    __LINE__);
	n = snprintf(big, 64, "GET / HTTP/1.1\r\nX: ");
	memset(big + n, 'v', DPMON_HTTP_HEAD_MAX);
	expect_head(big, DPMON_HTTP_HEAD_MAX + 1, -1, 431, "request head over 16384 bytes",
		    __LINE__);
	memcpy(big + DPMON_HTTP_HEAD_MAX - 4, "\r\n\r\n", 4);
	expect_head(big, DPMON_HTTP_HEAD_MAX, 1, 0, NULL, __LINE__); /* exactly the limit */
	n = snprintf(big, 64, "GET / HTTP/1.1\r\n");
	for (int i = 0; i < DPMON_HTTP_MAX_FIELDS; i++)
		n += snprintf(big + n, 16, "F%d: 1\r\n", i);
	memcpy(big + n, "\r\n", 3);
	EXPECT_HEAD(big, 1, 0, NULL);
	memcpy(big + n, "X: 1\r\n\r\n", 9);
	EXPECT_HEAD(big, -1, 431, "more than 64 header fields");
	free(big);
	/* Framing (RFC 9112 6.3). */
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", -1,
		    400, both);
	EXPECT_HEAD("GET / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n", -1,
		    400, both);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", -1, 400,
		    "repeated Content-Length");
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", -1, 400, bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", -1, 400, bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", -1, 400, bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length:\r\n\r\n", -1, 400, bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", -1, 400, bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: 123456789012345678901234567890\r\n\r\n", -1,
		    400, bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\n", 1, 0, NULL);
	EXPECT_HEAD("GET / HTTP/1.1\r\nContent-Length: 1000000000000000000\r\n\r\n", -1, 400,
		    bad_cl);
	EXPECT_HEAD("GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -1, 501, bad_te);
	EXPECT_HEAD("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"
		    "\r\n",
		    -1, 501, bad_te);
}

/* dpmon_http_head_limits: @p want_status and @p want_msg (NULL when 0). */
static void
expect_limits(bool target_over, size_t head_len, unsigned fields, const char *version,
	      unsigned want_status, const char *want_msg, int line)
{
	struct dpmon_http_verdict v =
		dpmon_http_head_limits(target_over, head_len, fields, version);

	test_checks++;
	if (v.status != want_status || (want_msg == NULL) != (v.message == NULL) ||
	    (want_msg != NULL && strcmp(v.message, want_msg) != 0)) {
		test_failures++;
		fprintf(stderr, "%s:%d: head limits: %u '%s', expected %u '%s'\n", __FILE__, line,
			v.status, v.message ? v.message : "", want_status,
			want_msg ? want_msg : "");
	}
}
#define EXPECT_LIMITS(t, hl, f, ver, st, msg) expect_limits(t, hl, f, ver, st, msg, __LINE__)

static void
test_head_limits(void)
{
	static const char line[] = "request line over 8192 bytes";
	static const char head[] = "request head over 16384 bytes";
	static const char fields[] = "more than 64 header fields";
	static const char version[] = "HTTP version not supported (only HTTP/1.0 and HTTP/1.1)";

	CHECK_EQ_U64(DPMON_HTTP_TARGET_MAX, 8182);
	EXPECT_LIMITS(false, 16384, 64, "HTTP/1.1", 0, NULL);
	EXPECT_LIMITS(false, 40, 0, "HTTP/1.0", 0, NULL);
	EXPECT_LIMITS(true, 40, 1, "HTTP/1.1", 414, line);
	EXPECT_LIMITS(false, 16385, 1, "HTTP/1.1", 431, head);
	EXPECT_LIMITS(false, 2000, 65, "HTTP/1.1", 431, fields);
	EXPECT_LIMITS(false, 40, 1, "HTTP/2.0", 505, version);
	EXPECT_LIMITS(false, 40, 1, "HTTP/1.2", 505, version);
	EXPECT_LIMITS(false, 40, 1, NULL, 505, version);
	/* the order of the guard's scan: the line, then the head */
	EXPECT_LIMITS(true, 20000, 99, "HTTP/3", 414, line);
	EXPECT_LIMITS(false, 20000, 99, "HTTP/3", 431, head);
}

int
main(void)
{
	test_head_check();
	test_head_limits();
	return check_finish("test_http_head");
}
