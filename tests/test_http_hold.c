/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_hold.c — the bound on the memory of answers being sent
 * (http_hold.h) on exact byte counts: small answers never counted, the
 * per-address bound (64 MiB) and the total (256 MiB) reached to the byte,
 * refusals counted, a release making room again, IPv4 and IPv6 apart.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "http_hold.h"

#define MIB (1u << 20)

/* The address key of 10.0.0.@p last (or of 2001:db8::@p last when @p v6). */
static void
key_of(uint8_t last, int v6, uint8_t key[16])
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr.s6_addr[0] = 0x20;
		a->sin6_addr.s6_addr[1] = 0x01;
		a->sin6_addr.s6_addr[2] = 0x0d;
		a->sin6_addr.s6_addr[3] = 0xb8;
		a->sin6_addr.s6_addr[15] = last;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(0x0a000000u | last);
	}
	http_addr_key(&ss, key);
}

static void
test_per_address(void)
{
	struct http_hold h;
	uint8_t a[16], b[16];

	CHECK(http_hold_init(&h, 64) == 0);
	key_of(1, 0, a);
	key_of(1, 1, b);
	/* At most 64 KiB: neither counted nor refused. */
	for (int i = 0; i < 10000; i++)
		CHECK(http_hold_take(&h, a, DPMON_HTTP_HOLD_SMALL) == 0);
	CHECK_EQ_U64(http_hold_total(&h), 0);
	/* Six answers of 10 MiB fit in 64 MiB, a seventh does not. */
	for (int i = 0; i < 6; i++)
		CHECK(http_hold_take(&h, a, 10 * MIB) == 0);
	CHECK_EQ_U64(http_hold_total(&h), 60 * MIB);
	CHECK(!http_hold_full(&h, a));
	CHECK(http_hold_take(&h, a, 10 * MIB) == -ENOBUFS);
	CHECK_EQ_U64(http_hold_refused(&h), 1);
	/* Exactly up to the bound. */
	CHECK(http_hold_take(&h, a, 4 * MIB) == 0);
	CHECK(http_hold_full(&h, a));
	CHECK(http_hold_take(&h, a, DPMON_HTTP_HOLD_SMALL + 1) == -ENOBUFS);
	CHECK(http_hold_take(&h, a, DPMON_HTTP_HOLD_SMALL) == 0); /* small: still sent */
	CHECK_EQ_U64(http_hold_refused(&h), 2);
	/* Another address (the same last byte, IPv6) is not affected. */
	CHECK(!http_hold_full(&h, b));
	CHECK(http_hold_take(&h, b, 10 * MIB) == 0);
	CHECK_EQ_U64(http_hold_total(&h), 74 * MIB);
	/* A release makes room for one more. */
	http_hold_release(&h, a, 10 * MIB);
	CHECK(!http_hold_full(&h, a));
	CHECK(http_hold_take(&h, a, 10 * MIB) == 0);
	CHECK(http_hold_take(&h, a, 10 * MIB) == -ENOBUFS);
	/* An answer over the per-address bound is never sent. */
	CHECK(http_hold_take(&h, b, DPMON_HTTP_HOLD_PER_ADDR + 1) == -ENOBUFS);
	CHECK_EQ_U64(http_hold_refused(&h), 4);
	http_hold_release(&h, b, 10 * MIB);
	for (int i = 0; i < 6; i++)
		http_hold_release(&h, a, 10 * MIB);
	http_hold_release(&h, a, 4 * MIB);
	CHECK_EQ_U64(http_hold_total(&h), 0);
	http_hold_free(&h);
}

static void
test_total(void)
{
	struct http_hold h;
	uint8_t k[16];

	CHECK(http_hold_init(&h, 64) == 0);
	/* Four addresses at 64 MiB each fill the 256 MiB in all. */
	for (uint8_t i = 1; i <= 4; i++) {
		key_of(i, 0, k);
		for (int j = 0; j < 4; j++)
			CHECK(http_hold_take(&h, k, 16 * MIB) == 0);
	}
	CHECK_EQ_U64(http_hold_total(&h), DPMON_HTTP_HOLD_TOTAL);
	key_of(5, 0, k);
	CHECK(http_hold_full(&h, k));
	CHECK(http_hold_take(&h, k, DPMON_HTTP_HOLD_SMALL + 1) == -ENOBUFS);
	CHECK_EQ_U64(http_hold_refused(&h), 1);
	key_of(1, 0, k);
	http_hold_release(&h, k, 16 * MIB);
	key_of(5, 0, k);
	CHECK(http_hold_take(&h, k, 16 * MIB) == 0);
	CHECK_EQ_U64(http_hold_total(&h), DPMON_HTTP_HOLD_TOTAL);
	http_hold_free(&h);
}

int
main(void)
{
	test_per_address();
	test_total();
	return check_finish("test_http_hold");
}
