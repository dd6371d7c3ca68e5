/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_xbuf.c — lib/common/xbuf.c: pieces appended in order (bytes, text,
 * decimal integers and the thousandths of a double, printf text), growth
 * past the first allocation, the NUL that len does not count, shrinking,
 * and out of memory (realloc made to fail through --wrap=realloc): the
 * buffer keeps what it had, drops every later piece and says so.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xbuf.h"

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

static int fail_realloc; /* the next realloc returns NULL when set */

void *
__wrap_realloc(void *p, size_t n)
{
	if (fail_realloc)
		return NULL;
	return __real_realloc(p, n);
}

static void
test_pieces(void)
{
	struct xbuf b = {0};

	xbuf_put(&b, "a\0b", 3);
	xbuf_puts(&b, "cd");
	xbuf_putc(&b, 'e');
	xbuf_u64(&b, 0);
	xbuf_putc(&b, ' ');
	xbuf_u64(&b, UINT64_MAX);
	CHECK_EQ_U64(b.len, 28);
	CHECK(memcmp(b.p, "a\0bcde0 18446744073709551615", 28) == 0);
	CHECK(!b.oom);
	xbuf_free(&b);
	CHECK(b.p == NULL && b.len == 0 && b.cap == 0 && !b.oom);
}

/* xbuf_double(@p v) must write exactly @p want. */
static void
check_double(double v, const char *want)
{
	struct xbuf b = {0};

	xbuf_double(&b, v);
	CHECK_EQ_STR(xbuf_cstr(&b), want);
	xbuf_free(&b);
}

static void
test_double(void)
{
	check_double(3, "3");
	check_double(12.5, "12.5");
	check_double(0.1234, "0.123");
	check_double(0.0005, "0.001");
	check_double(1.0 / 0.0, "0");
	check_double(-2.25, "-2.25");
	check_double(1e15, "1000000000000000");
}

static void
test_printf_grow_cstr_shrink(void)
{
	struct xbuf b = {0};
	char *s;

	for (int i = 0; i < 1000; i++)
		xbuf_printf(&b, "%04d,", i);
	CHECK_EQ_U64(b.len, 5000);
	CHECK(b.cap >= 5001);
	CHECK(memcmp(b.p, "0000,0001,", 10) == 0);
	CHECK(memcmp(b.p + 4995, "0999,", 5) == 0);
	s = xbuf_cstr(&b);
	CHECK(s == b.p && s[5000] == '\0' && b.len == 5000);
	xbuf_shrink(&b);
	CHECK_EQ_U64(b.cap, 5001);
	CHECK_EQ_U64(strlen(b.p), 5000);
	xbuf_putc(&b, 'x');
	CHECK_EQ_U64(b.len, 5001);
	CHECK(b.p[5000] == 'x');
	xbuf_free(&b);
}

static void
test_reserve(void)
{
	struct xbuf b = {0};
	char *w = xbuf_reserve(&b, 3);

	REQUIRE(w != NULL);
	memcpy(w, "xyz", 3);
	b.len += 3;
	CHECK(b.cap >= 3);
	CHECK_EQ_STR(xbuf_cstr(&b), "xyz");
	xbuf_free(&b);
}

static void
test_out_of_memory(void)
{
	struct xbuf b = {0};
	char big[5000];

	memset(big, 'q', sizeof(big));
	xbuf_puts(&b, "kept");
	fail_realloc = 1;
	xbuf_put(&b, big, sizeof(big)); /* past the first 4096 bytes */
	CHECK(b.oom);
	CHECK_EQ_U64(b.len, 4);
	fail_realloc = 0;
	/* oom sticks: nothing is written any more, even what would fit. */
	xbuf_putc(&b, 'x');
	xbuf_u64(&b, 7);
	xbuf_printf(&b, "%d", 8);
	CHECK(xbuf_reserve(&b, 1) == NULL);
	CHECK(xbuf_cstr(&b) == NULL);
	CHECK_EQ_U64(b.len, 4);
	CHECK(memcmp(b.p, "kept", 4) == 0);
	xbuf_free(&b);
	CHECK(!b.oom);

	/* The first allocation failing leaves no memory to free. */
	fail_realloc = 1;
	xbuf_putc(&b, 'x');
	fail_realloc = 0;
	CHECK(b.oom && b.p == NULL && b.len == 0);
	xbuf_free(&b);
}

int
main(void)
{
	test_pieces();
	test_double();
	test_printf_grow_cstr_shrink();
	test_reserve();
	test_out_of_memory();
	return check_finish("xbuf");
}
