/*
 * worker.h — the worker lcore: poll RX queues, parse, classify, count.
 *
 * dpmon_worker_burst is the hot path: it takes a burst of mbufs (from
 * rte_eth_rx_burst, or pre-built ones in a benchmark), updates the
 * worker's own struct dpmon_core and frees the mbufs. No locks, no atomic
 * read-modify-write, no allocation.
 */
#ifndef DPMON_WORKER_H
#define DPMON_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "classify.h"
#include "counters.h"

/** Largest burst a worker asks rte_eth_rx_burst for. */
#define DPMON_MAX_BURST 512
/** Most RX queues one worker polls. */
#define DPMON_MAX_WORKER_QUEUES 64

struct dpmon_rxq {
	uint16_t port_id;
	uint16_t queue_id;
	uint32_t decap; /**< tunnel kinds its port decapsulates (enum dpmon_tunnel bits) */
};

/** Everything one worker lcore needs. Built by the main lcore. */
struct dpmon_worker {
	struct dpmon_core *core;              /**< this worker's tables */
	const struct dpmon_classifier *cls;   /**< shared, read-only */
	const volatile bool *stop;            /**< set by the main lcore to end the loop */
	uint16_t burst_size;                  /**< 1..DPMON_MAX_BURST */
	uint16_t n_rxq;
	struct dpmon_rxq rxq[DPMON_MAX_WORKER_QUEUES];
	unsigned lcore_id;
} __rte_cache_aligned;

/**
 * Count @p n mbufs into @p core and free them.
 * @param core  the calling lcore's tables (single writer).
 * @param cls   the classifier (shared, read-only).
 * @param pkts  mbufs; each is freed. @p n may be 0..DPMON_MAX_BURST.
 * Thread-safety: the lcore that owns @p core.
 */
void dpmon_worker_burst(struct dpmon_core *core, const struct dpmon_classifier *cls,
			struct rte_mbuf **pkts, uint16_t n);

/**
 * As dpmon_worker_burst but leaves the mbufs allocated (benchmarks reuse them).
 */
void dpmon_worker_count(struct dpmon_core *core, const struct dpmon_classifier *cls,
			struct rte_mbuf **pkts, uint16_t n);

/**
 * As dpmon_worker_count, decapsulating the tunnel kinds in @p decap
 * (enum dpmon_tunnel bits, the port's `decap` configuration; 0 = none).
 * Thread-safety: the lcore that owns @p core.
 */
void dpmon_worker_count_decap(struct dpmon_core *core, const struct dpmon_classifier *cls,
			      struct rte_mbuf **pkts, uint16_t n, uint32_t decap);

/**
 * The worker lcore's main loop, for rte_eal_remote_launch: polls every
 * assigned RX queue round-robin until *stop becomes true.
 * @param arg  struct dpmon_worker *.
 * @return 0.
 */
int dpmon_worker_loop(void *arg);

#endif /* DPMON_WORKER_H */
