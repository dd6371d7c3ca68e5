/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ignored.h — a worker's side table of the packets from ignored sources
 * (detection.ignore_sources), per destination host.
 *
 * A packet whose source is in an ignored prefix is counted everywhere as
 * any other (totals, subnets, hosts, sketches). Detection must leave it
 * out of what it compares with the thresholds, so the worker also counts
 * it here, under its destination's host key: packets and bytes per
 * protocol class and per flag (fragments, tcp_syn), the dimensions of the
 * ingress metrics. The merge folds these tables into each snapshot's
 * ignored rates (snapshot.h) and detection subtracts them.
 *
 * Only the rare path of the burst loop touches the table (an ignored
 * packet), so it is kept apart from the host entries, which do not grow.
 * It belongs to a generation (worker.h): a reload starts a new one. A
 * slot, once taken, holds its host until then; a packet that finds no
 * slot within DPMON_IGNORED_PROBE of its home is counted in the core's
 * ignored_full and stays in what detection compares.
 *
 * Single writer (the worker), plain stores; the merge reads concurrently:
 * a slot's key and subnet are written before its index is published in
 * @c used by a release store of @c n_used, its counters are monotonic
 * (relaxed stores and loads, as counters.h).
 */
#ifndef DPMON_IGNORED_H
#define DPMON_IGNORED_H

#include <stdint.h>

#include <rte_common.h>

#include "counters.h"
#include "prefix.h"

/** Slots per worker and generation (a power of two): 512 KiB. */
#define DPMON_IGNORED_SLOTS 4096
/** Slots a lookup probes from its home slot. */
#define DPMON_IGNORED_PROBE 16

/** One destination host's ignored packets, ingress. Two cache lines. */
struct dpmon_ignored_slot {
	struct dpmon_addr key;       /**< the host key (masked to its host prefix) */
	uint32_t subnet;             /**< its subnet, in the generation's numbering */
	struct dpmon_dir_ctr in;     /**< per protocol class */
	struct dpmon_flag_ctr flags; /**< per flag (fragments, tcp_syn) */
} __rte_cache_aligned;

/** The side table of one worker for one generation. */
struct dpmon_ignored_table {
	uint32_t n_used; /**< slots taken, the first n_used entries of @c used (release/acquire) */
	uint32_t used[DPMON_IGNORED_SLOTS]; /**< slot indexes in the order taken */
	uint8_t taken[DPMON_IGNORED_SLOTS]; /**< worker only */
	struct dpmon_ignored_slot slot[DPMON_IGNORED_SLOTS];
};

/**
 * Count one ignored packet of @p len bytes, protocol class @p proto and
 * flags @p flag_mask (1 << enum dpmon_flag) for host key @p key (hash
 * @p sig, dpmon_host_hash) of subnet @p subnet.
 * @return 0, or -ENOSPC when no slot is left within the probe (the caller
 *         counts ignored_full). Owning worker lcore only.
 */
int dpmon_ignored_add(struct dpmon_ignored_table *t, const struct dpmon_addr *key, uint32_t sig,
		      uint32_t subnet, unsigned proto, unsigned flag_mask, uint32_t len);

/** Slots taken so far, for the merge (acquire). Any lcore. */
static inline uint32_t
dpmon_ignored_used(const struct dpmon_ignored_table *t)
{
	return __atomic_load_n(&t->n_used, __ATOMIC_ACQUIRE);
}

#endif /* DPMON_IGNORED_H */
