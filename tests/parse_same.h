/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse_same.h — "the same parse", shared by test_parse.c (the fast path
 * against the full parser on hand-built frames) and test_parse_diff.c (on
 * captures, their mutations and fake mbufs): the same reason, every field
 * of struct dpmon_pkt before the addresses, and, when the frame is OK, the
 * same addresses. IPv6 addresses are compared by their 16 bytes: one parse
 * may point into the frame and the other into a gather buffer.
 */
#ifndef DPMON_TEST_PARSE_SAME_H
#define DPMON_TEST_PARSE_SAME_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "parse.h"

/** @return true when result (@p ra, @p a) is the same parse as (@p rb, @p b). */
static inline bool
same_result(int ra, const struct dpmon_pkt *a, int rb, const struct dpmon_pkt *b)
{
	if (ra != rb || memcmp(a, b, offsetof(struct dpmon_pkt, src4)) != 0)
		return false;
	if (ra != DPMON_REASON_OK)
		return true;
	if (a->family == 4)
		return a->src4 == b->src4 && a->dst4 == b->dst4;
	return memcmp(a->src6, b->src6, 16) == 0 && memcmp(a->dst6, b->dst6, 16) == 0;
}

#endif /* DPMON_TEST_PARSE_SAME_H */
