/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_token.c — bearer tokens (http_token.h) on exact inputs: the
 * comparison (equal, a prefix, one byte longer, the last byte wrong), the
 * Authorization parser (RFC 6750 2.1: scheme case, spaces, b64token, '='
 * only at the end, other schemes) and the verdicts for writes, reads and
 * /health with a write token, a read token and none. Over a real socket:
 * test_http.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "http_token.h"

static void
test_equal(void)
{
	CHECK(http_token_equal("abc", 3, "abc", 3));
	CHECK(!http_token_equal("ab", 2, "abc", 3));
	CHECK(!http_token_equal("abcd", 4, "abc", 3));
	CHECK(!http_token_equal("abd", 3, "abc", 3));
	CHECK(!http_token_equal("", 0, "abc", 3));
	/* a given byte equal to expected ^ 0xff past the end is no match */
	CHECK(!http_token_equal("ab\x9c", 2, "abc", 3));
}

/* http_token_from_header(@p v): the token @p want, or NULL when @p want is. */
static void
expect_parse(const char *v, const char *want, int line)
{
	size_t len = 0;
	const char *t = http_token_from_header(v, &len);

	test_checks++;
	if ((want == NULL) != (t == NULL) ||
	    (want != NULL && (len != strlen(want) || memcmp(t, want, len) != 0))) {
		test_failures++;
		fprintf(stderr, "%s:%d: \"%s\": got \"%.*s\", want \"%s\"\n", __FILE__, line,
			v ? v : "(null)", t ? (int)len : 6, t ? t : "(null)",
			want ? want : "(null)");
	}
}

static void
test_parse(void)
{
	expect_parse("Bearer abc", "abc", __LINE__);
	expect_parse("bearer abc", "abc", __LINE__);
	expect_parse("BEARER   a-b.c_d~e+f/g==  ", "a-b.c_d~e+f/g==", __LINE__);
	expect_parse(NULL, NULL, __LINE__);
	expect_parse("", NULL, __LINE__);
	expect_parse("Bearer", NULL, __LINE__);
	expect_parse("Bearer ", NULL, __LINE__);
	expect_parse("Bearerabc", NULL, __LINE__);
	expect_parse("Basic YWJj", NULL, __LINE__);
	expect_parse("Bearer a=b", NULL, __LINE__);
	expect_parse("Bearer a b", NULL, __LINE__);
	expect_parse("Bearer a,b", NULL, __LINE__);
	expect_parse("Bearer\tabc", NULL, __LINE__);
}

/* The verdict's status on @p t for @p method (@p state, @p health). */
static unsigned
status(struct http_tokens *t, const char *method, bool state, bool health, const char *auth)
{
	return http_tokens_check(t, method, state, health, auth).status;
}

static void
test_verdicts(void)
{
	struct http_tokens t;

	REQUIRE(http_tokens_init(&t) == 0);
	/* no token: everything passes */
	CHECK(status(&t, "POST", true, false, NULL) == 0);
	CHECK(status(&t, "GET", false, false, NULL) == 0);

	memcpy(t.write, "W", 2);
	t.write_len = 1;
	CHECK(status(&t, "POST", true, false, NULL) == 401);
	CHECK(status(&t, "DELETE", true, false, "Bearer X") == 401);
	CHECK(status(&t, "POST", true, false, "Bearer W") == 0);
	CHECK(status(&t, "OPTIONS", true, false, NULL) == 0); /* preflight */
	CHECK(status(&t, "GET", true, false, NULL) == 0);
	CHECK(status(&t, "POST", false, false, NULL) == 0); /* 405 later, no state */

	memcpy(t.read, "R", 2);
	t.read_len = 1;
	CHECK(status(&t, "GET", false, false, NULL) == 401);
	CHECK(status(&t, "HEAD", false, false, "Bearer X") == 401);
	CHECK(status(&t, "GET", false, false, "Bearer R") == 0);
	CHECK(status(&t, "GET", false, false, "Bearer W") == 0);
	CHECK(status(&t, "GET", false, true, NULL) == 0); /* /health */
	CHECK(status(&t, "POST", true, false, "Bearer R") == 401);

	/* a read token alone: writes need it too */
	t.write[0] = '\0';
	t.write_len = 0;
	CHECK(status(&t, "POST", true, false, NULL) == 401);
	CHECK(status(&t, "POST", true, false, "Bearer R") == 0);
	CHECK(http_tokens_unauthorized(&t) == 6);
	http_tokens_destroy(&t);
}

int
main(void)
{
	test_equal();
	test_parse();
	test_verdicts();
	return check_finish("test_http_token");
}
