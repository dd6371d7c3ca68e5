/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge.h — main lcore: every interval, fold the worker lcores' tables into
 * one immutable snapshot (see counters.h for why no count is lost).
 *
 * The merger keeps, for each worker table, a map from the worker's dense
 * host index to a global host index, so a host seen by several workers
 * (RSS spreads a host's flows over queues) is one entry, and each merge is
 * a linear pass over the worker tables: no hash lookup for known hosts.
 * Rates are (cumulative now − cumulative at the previous merge) divided by
 * the interval measured with the TSC.
 */
#ifndef DPMON_MERGE_H
#define DPMON_MERGE_H

#include <stdint.h>

#include "config.h"
#include "counters.h"
#include "snapshot.h"
#include "worker.h"

struct dpmon_merge;

/**
 * Create a merger for @p n_cores worker tables.
 * @param cfg      configuration (subnets, interval); must outlive the merger.
 * @param cores    worker tables; the array is copied, the tables must
 *                 outlive the merger.
 * @param gens     each worker table's generation 0 (worker.h: subnet
 *                 counters and sketches); the array is copied, each
 *                 generation must stay allocated while the merger reads it
 *                 (dpmon_merge_reconfigure).
 * @param lcores   lcore id of each worker (reported per worker).
 * @param start_tsc TSC at start (uptime zero), @param tsc_hz its frequency.
 * @return the merger, or NULL on allocation failure.
 * Thread-safety: main lcore.
 */
struct dpmon_merge *dpmon_merge_create(const struct dpmon_config *cfg,
				       struct dpmon_core *const *cores,
				       struct dpmon_generation *const *gens, const unsigned *lcores,
				       unsigned n_cores, uint64_t start_tsc, uint64_t tsc_hz);

/**
 * Merge now. @p now_tsc is the TSC at which the tables are read; the
 * interval is now_tsc minus the previous merge's (or start's).
 * @param ports    NIC counters read by the caller just before (copied).
 * @return a new snapshot to publish, or NULL on allocation failure (the
 *         next merge then covers both intervals; nothing is lost).
 * Thread-safety: main lcore only, concurrent with the workers.
 */
struct dpmon_snapshot *dpmon_merge_run(struct dpmon_merge *m, uint64_t now_tsc,
				       const struct dpmon_port_stats *ports, uint32_t n_ports);

/**
 * Map the hosts the workers have published so far as hosts of their
 * current generation: call just before a reload publishes new ones, so
 * that dpmon_merge_reconfigure has to place only those published after
 * (each of either generation) by their address (docs/architecture.md).
 * @return 0, or -ENOMEM, -ENOSPC (the next merge maps the rest).
 * Thread-safety: main lcore only, concurrent with the workers.
 */
int dpmon_merge_map_hosts(struct dpmon_merge *m);

/**
 * Switch to new subnets (configuration reload; see merge_reload.c): fold the
 * current generation's final subnet counts, by exact prefix, into the
 * subnets that remain, and read the workers' new generations from now on.
 * Call when no worker uses the current generation any more (after an RCU
 * grace period) and after the configuration given to dpmon_merge_create
 * holds the new subnets.
 * @param cls         the new classifier (hosts are classified again).
 * @param gens        each worker table's new generation, n_cores entries.
 * @param n_subnets   subnets of the new configuration.
 * @param old_of_new  for each new subnet its index in the previous
 *                    configuration, or UINT32_MAX when it is new.
 * @return 0, or -ENOMEM (nothing changed: the caller must not free the
 *         current generations). On success the previous generations must
 *         stay allocated until the next dpmon_merge_run returns a snapshot
 *         (their flow sketches count in that interval).
 * Thread-safety: main lcore, between two dpmon_merge_run.
 */
int dpmon_merge_reconfigure(struct dpmon_merge *m, const struct dpmon_classifier *cls,
			    struct dpmon_generation *const *gens, uint32_t n_subnets,
			    const uint32_t *old_of_new);

/** Where the last dpmon_merge_run spent its time (benchmarks). */
struct dpmon_merge_timing {
	double fold_s;     /**< reading the worker tables into the merger, seconds */
	double snapshot_s; /**< building the snapshot from the merger's state, seconds */
	uint32_t touched;  /**< global hosts whose worker entries were visited */
	uint32_t written;  /**< host records written (touched and new hosts) */
	uint32_t moved;    /**< host records moved out of mostly dead slabs */
	uint32_t removed;  /**< hosts that left (no worker entry left: merge_life.c) */
};

/** Timing of the last dpmon_merge_run into @p t. Main lcore. */
void dpmon_merge_last_timing(const struct dpmon_merge *m, struct dpmon_merge_timing *t);

/** Global hosts known to the merger (those that left not counted). Main lcore. */
uint32_t dpmon_merge_hosts(const struct dpmon_merge *m);

/**
 * Pin the hosts @p addrs[0, @p n) (16-byte host keys, prefix.h) and unpin
 * every other: a pinned host's worker entries never retire, neither idle
 * nor evicted from a full table (hosts with an active alert or a
 * blackhole). Addresses that are not hosts now are ignored.
 * @return the hosts pinned. Main lcore, between two merges.
 */
int dpmon_merge_pin(struct dpmon_merge *m, const struct dpmon_addr *addrs, uint32_t n);

/** Free the merger. NULL ignored. */
void dpmon_merge_free(struct dpmon_merge *m);

#endif /* DPMON_MERGE_H */
