/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefix_table.h — longest-prefix match of addresses to a value for lists
 * of prefixes of both families, off the hot path: detection's hostgroups
 * and whitelist, the actions' monitored subnets (for blackholes). The
 * workers use rte_lpm/rte_lpm6 (classify.h) instead.
 *
 * An IPv4 prefix matches IPv4 addresses only, an IPv6 prefix IPv6
 * addresses only (an IPv4-mapped address is an IPv4 address, prefix.h).
 * Immutable once built: any number of threads may look up concurrently.
 */
#ifndef DPMON_PREFIX_TABLE_H
#define DPMON_PREFIX_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "prefix.h"

/** One disjoint address range and the value of the longest prefix over it. */
struct dpmon_prefix_range {
	unsigned __int128 first, last; /**< addresses as 128-bit integers, both included */
	uint32_t value;
};

/** The ranges of one family, sorted by address. */
struct dpmon_prefix_ranges {
	struct dpmon_prefix_range *r;
	uint32_t n;
};

/** A table; zero-initialised it is empty (every lookup misses). */
struct dpmon_prefix_table {
	struct dpmon_prefix_ranges v4, v6;
};

/**
 * Build @p p from @p n_lists lists of prefixes (list l: @p counts[l]
 * prefixes at @p lists[l]). Any two prefixes must be nested or disjoint
 * (true of CIDR prefixes); the same prefix twice keeps one value.
 * @param by_list  a prefix of list l has the value l; false: every value is 1.
 * @return 0, or -ENOMEM (@p p then holds nothing to free).
 * Thread-safety: any thread; @p p is the caller's until built.
 */
int dpmon_prefix_table_build(struct dpmon_prefix_table *p, const struct dpmon_prefix *const *lists,
			     const uint32_t *counts, uint32_t n_lists, bool by_list);

/**
 * The value of the longest prefix containing @p a, or -1 when none does.
 * One binary search. Thread-safety: any thread.
 */
int64_t dpmon_prefix_table_lookup(const struct dpmon_prefix_table *p, const struct dpmon_addr *a);

/** Free what dpmon_prefix_table_build allocated; the table is empty after. */
void dpmon_prefix_table_free(struct dpmon_prefix_table *p);

#endif /* DPMON_PREFIX_TABLE_H */
