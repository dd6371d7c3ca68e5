/*
 * counters.h — the per-core tables a worker lcore updates for every packet.
 *
 * Each worker lcore owns one struct dpmon_core: totals, subnet counters
 * indexed by the LPM result, and a host table (an rte_hash private to the
 * worker mapping address → dense index into arrays of counters). Only that
 * worker writes; the main lcore reads concurrently to merge.
 *
 * Merge protocol (docs/architecture.md): every counter is monotonic — never
 * reset, only incremented by its single writer with a plain load + add +
 * store (relaxed atomics: no lock prefix, no read-modify-write
 * instruction). The main lcore reads each counter with a relaxed atomic
 * load, which on every DPDK platform returns a value the counter really
 * held (aligned 64-bit accesses are single-copy atomic); rates come from
 * the difference of two reads. A packet is therefore counted exactly once:
 * in the first merge that reads the counter after the worker stored it.
 * New host entries are published by a release store of n_hosts after the
 * entry's address is written; the main lcore reads n_hosts with acquire.
 * A burst ends with a release store of stats.packets, which the merge reads
 * first (acquire), so a snapshot holds every packet its worker counts claim.
 */
#ifndef DPMON_COUNTERS_H
#define DPMON_COUNTERS_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_hash.h>

#include "prefix.h"
#include "stats.h"

/** Packets and bytes (frame length as received). */
struct dpmon_ctr {
	uint64_t packets;
	uint64_t bytes;
};

/** One direction, per protocol class (the total is the sum). 64 bytes. */
struct dpmon_dir_ctr {
	struct dpmon_ctr proto[DPMON_PROTO_MAX];
};

/** Ingress and egress of one subnet or host: two cache lines. */
struct dpmon_pair_ctr {
	struct dpmon_dir_ctr dir[DPMON_DIR_MAX];
} __rte_cache_aligned;

/** Per-worker event counters. */
struct dpmon_core_stats {
	uint64_t packets;         /**< mbufs received */
	uint64_t bursts;          /**< non-empty rx bursts */
	uint64_t host_table_full; /**< host updates lost because the table was full */
	uint64_t reasons[DPMON_REASON_MAX]; /**< frames by parse reason ([OK] = IP packets) */
	uint64_t anomalies[DPMON_ANOM_MAX]; /**< IP packets counted, by anomaly noted */
	uint64_t ip_stats[DPMON_IPSTAT_MAX]; /**< IP packets counted, by kind */
};

/** A worker lcore's tables. Allocate with dpmon_core_create. */
struct dpmon_core {
	struct dpmon_core_stats stats __rte_cache_aligned;
	struct dpmon_dir_ctr totals[DPMON_TOTAL_MAX] __rte_cache_aligned;
	struct dpmon_pair_ctr *subnets; /**< n_subnets entries */
	struct dpmon_pair_ctr *hosts;   /**< capacity entries, dense from 0 */
	struct dpmon_addr *host_addr;   /**< address of hosts[i] */
	uint32_t *host_subnet;          /**< subnet index of hosts[i] */
	struct rte_hash *host_hash;     /**< address → index; worker-private */
	uint32_t n_hosts;               /**< published entries (release/acquire) */
	uint32_t capacity;
	uint32_t n_subnets;
	unsigned lcore_id;
} __rte_cache_aligned;

/**
 * Allocate the tables of one worker lcore.
 * @param tag       unique name part for the rte_hash ("lcore3").
 * @param n_subnets monitored subnets.
 * @param capacity  host entries (>= 8).
 * @param socket_id NUMA socket of the worker lcore.
 * @return the tables, or NULL with rte_errno set (ENOMEM, EEXIST).
 * Thread-safety: main lcore, before the worker starts.
 */
struct dpmon_core *dpmon_core_create(const char *tag, uint32_t n_subnets,
				     uint32_t capacity, int socket_id);

/** Free the tables. Main lcore, after the worker stopped. NULL ignored. */
void dpmon_core_free(struct dpmon_core *c);

/** Add one packet of @p bytes to @p c. Single writer only (the owning lcore). */
static inline void
dpmon_ctr_add(struct dpmon_ctr *c, uint64_t bytes)
{
	__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->bytes, c->bytes + bytes, __ATOMIC_RELAXED);
}

/** Add one to an event counter. Single writer only. */
static inline void
dpmon_count_inc(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, *v + n, __ATOMIC_RELAXED);
}

/** Read a counter another lcore writes. Any lcore. */
static inline uint64_t
dpmon_count_read(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

/**
 * Find or insert host @p a (subnet @p subnet) in the worker's table.
 * @return the entry index, or -ENOSPC when the table is full (the caller
 *         counts host_table_full). Owning worker lcore only.
 */
int32_t dpmon_core_host_insert(struct dpmon_core *c, const struct dpmon_addr *a,
			       uint32_t subnet);

/** Number of published host entries, for the main lcore (acquire). */
static inline uint32_t
dpmon_core_hosts_published(const struct dpmon_core *c)
{
	return __atomic_load_n(&c->n_hosts, __ATOMIC_ACQUIRE);
}

#endif /* DPMON_COUNTERS_H */
