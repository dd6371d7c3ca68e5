/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * host_order.h — every host of a snapshot in the order of one ranking,
 * built at most once per snapshot and ranking, on first use, and kept
 * with the snapshot (freed with it).
 *
 * A reader that lists hosts by a ranking (GET /api/v1/hosts) asks for the
 * ranking's order by a slot number of its own; the first caller for that
 * slot on a snapshot computes each host's key once, sorts them (radix
 * sort, O(hosts)) and publishes the order; every later caller on the same
 * snapshot reads it, so a page of k hosts costs O(k) whatever the number
 * of hosts. The order also lists the hosts grouped by subnet (each group
 * in the ranking's order), so a page of one subnet's hosts is O(k) too.
 *
 * Concurrent callers are safe: a snapshot's orders are guarded by one
 * mutex, held while an order is built (a caller asking for an order being
 * built waits for it instead of building it again); an order, once
 * published (release store), is immutable and read without any lock. The
 * snapshot itself is never written: its struct dpmon_host_orders
 * (snapshot.h: DPMON_HOST_ORDER_SLOTS slots, a lock) was allocated with
 * it, and is freed with it. This file builds the orders and reads the
 * snapshot; snapshot.c never calls it.
 */
#ifndef DPMON_HOST_ORDER_H
#define DPMON_HOST_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

/**
 * Key of host @p h of snapshot @p s for one ranking (@p ctx is the
 * caller's): a larger key ranks first, equal keys rank by address
 * (dpmon_addr_cmp, lower first). Called once per host when the order is
 * built, on the building thread.
 */
typedef uint64_t (*dpmon_host_key_fn)(const struct dpmon_snapshot *s,
				      const struct dpmon_snap_host *h, const void *ctx);

/** One ranking's order of a snapshot's hosts. Immutable once returned. */
struct dpmon_host_order {
	uint32_t n_hosts; /**< the snapshot's n_hosts */
	/** Every host index (dpmon_snap_host_at), best first: n_hosts entries. */
	const uint32_t *idx;
	/**
	 * The same indices grouped by subnet (dpmon_snap_host.subnet), each
	 * group best first: subnet j's hosts are
	 * by_subnet[sub_start[j] .. sub_start[j + 1] - 1] for j < n_subnets
	 * (hosts whose subnet index is n_subnets or more come last).
	 */
	const uint32_t *by_subnet;
	const uint32_t *sub_start; /**< n_subnets + 1 entries */
	uint32_t n_subnets;        /**< the snapshot's n_subnets */
};

/**
 * The order of ranking @p slot of snapshot @p s: the cached one, or built
 * now with @p key (and @p ctx) and cached. Every call for one slot of one
 * snapshot must pass the same ranking: the first one's is kept.
 * @param slot  0..DPMON_HOST_ORDER_SLOTS-1, the caller's number for the ranking.
 * @return the order (valid as long as @p s), or NULL when @p slot is out
 *         of range, @p s has no cache, or memory ran out (a later call
 *         tries again).
 * Thread-safety: any thread, concurrently with any other caller on @p s.
 */
const struct dpmon_host_order *dpmon_host_order_get(const struct dpmon_snapshot *s, unsigned slot,
						    dpmon_host_key_fn key, const void *ctx);

/**
 * Whether ranking @p slot of snapshot @p s has been built (a reader asked
 * for it). @return false out of range or without a cache.
 * Thread-safety: any thread.
 */
bool dpmon_host_order_built(const struct dpmon_snapshot *s, unsigned slot);

#endif /* DPMON_HOST_ORDER_H */
