/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker.h — the worker lcore: poll RX queues, parse, classify, count.
 *
 * dpmon_worker_burst is the hot path: it takes a burst of mbufs (from
 * rte_eth_rx_burst, or pre-built ones in a benchmark), updates the
 * worker's own struct dpmon_core and generation and frees the mbufs. No
 * locks, no atomic read-modify-write, no allocation.
 *
 * Generations (configuration reload, docs/architecture.md): what depends on
 * the monitored subnets — the classifier, the subnet counters and the
 * subnet flow sketches — is one struct dpmon_generation per worker, the only owner
 * of those counters (the core has none). Generation 0 is made at start with
 * dpmon_generation_create like every later one; a worker always counts with a
 * generation (dpmon_worker.gen is never NULL). On a reload the main lcore
 * builds a new one aside and publishes it in dpmon_worker.gen (release);
 * the worker loop loads that pointer once per round of polls (acquire),
 * counts the round's bursts with it, and then reports a quiescent state to
 * the RCU variable (rte_rcu_qsbr_quiescent: two plain stores, no lock, no
 * read-modify-write). Once every worker has reported after the publication,
 * no worker touches the old generation any more: the main lcore reads its
 * final counts and frees it. The host table, the totals and the worker
 * statistics belong to the core, not to a generation: they carry over.
 */
#ifndef DPMON_WORKER_H
#define DPMON_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "classify.h"
#include "counters.h"
#include "ignored.h"

/** Largest burst a worker asks rte_eth_rx_burst for. */
#define DPMON_MAX_BURST         512
/** Most RX queues one worker polls. */
#define DPMON_MAX_WORKER_QUEUES 64

struct dpmon_rxq {
	uint16_t port_id;
	uint16_t queue_id;
	uint32_t decap; /**< tunnel kinds its port decapsulates (enum dpmon_tunnel bits) */
	bool ptype;     /**< its PMD reports packet types (dpmon_port_ptypes) */
};

/**
 * What one worker counts with under one configuration: the classifier
 * (shared by all workers, read-only) and the worker's own subnet counters
 * and subnet flow sketches (n_subnets + 1 and DPMON_DIR_MAX *
 * (n_flow_subnets + 1) entries, counters.h), indexed by the classifier's
 * results. Immutable once published, except the counters it points to.
 */
struct dpmon_generation {
	const struct dpmon_classifier *cls;
	struct dpmon_pair_ctr *subnets;
	/** Flow sketches of the first n_flow_subnets subnets, [subnet][DPMON_DIR_MAX]. */
	struct dpmon_flow_sketch *flow_sub;
	/**
	 * Per direction of each subnet past n_flow_subnets,
	 * [(subnet - n_flow_subnets) * DPMON_DIR_MAX + dir]: (epoch tag << 8) |
	 * (slot + 1 in the core's flow_pool, or DPMON_FLOW_SLOT_NONE) of the
	 * epoch it was taken in (relaxed store/load; counters.h).
	 */
	uint32_t *flow_slot;
	/**
	 * Per subnet, the bits of the 16-byte host key its hosts keep
	 * (dpmon_mapped_bits of its host_prefix_len, prefix.h); NULL when every
	 * subnet counts whole addresses (the default), and then the hot path
	 * masks nothing (dpmon_generation_host_prefixes).
	 */
	uint8_t *host_bits;
	/**
	 * Packets from ignored sources per destination host (ignored.h);
	 * NULL when the classifier has no ignored prefix.
	 */
	struct dpmon_ignored_table *ign;
	uint32_t n_subnets;
	uint32_t n_flow_subnets; /**< min(n_subnets, DPMON_FLOW_SUBNETS_MAX) */
};

/**
 * A generation for a worker on NUMA socket @p socket_id: classifier
 * @p cls (not owned) and zeroed counters for @p n_subnets subnets.
 * @return the generation, or NULL (rte_errno ENOMEM).
 * Thread-safety: main lcore.
 */
struct dpmon_generation *dpmon_generation_create(const struct dpmon_classifier *cls,
						 uint32_t n_subnets, int socket_id);

/**
 * Count the hosts of @p g per prefix of each subnet's host_prefix_len
 * (dpmon_subnet_host_len): fill g->host_bits when one of the @p n
 * subnets (g->n_subnets, in classifier order) is shorter than a whole
 * address, else leave it NULL (whole addresses). Call before @p g is
 * published. @return 0, -EINVAL (@p n is not g->n_subnets) or -ENOMEM.
 * Thread-safety: main lcore.
 */
int dpmon_generation_host_prefixes(struct dpmon_generation *g,
				   const struct dpmon_subnet_conf *subnets, uint32_t n,
				   int socket_id);

/**
 * The length, in bits of its family, of the host keys of subnet @p sub of
 * @p g (< g->n_subnets): 32 or 128 unless its host_prefix_len is shorter.
 * @p v4: the subnet is IPv4. Any thread (main lcore: the merge).
 */
static inline unsigned
dpmon_generation_host_len(const struct dpmon_generation *g, uint32_t sub, bool v4)
{
	unsigned bits = g->host_bits != NULL ? g->host_bits[sub] : 128u;

	return v4 ? bits - 96u : bits;
}

/** Free @p g and its counters (not its classifier). NULL ignored. Main lcore, once no worker uses it. */
void dpmon_generation_free(struct dpmon_generation *g);

/** Everything one worker lcore needs. Built by the main lcore. */
struct dpmon_worker {
	struct dpmon_core *core; /**< this worker's tables */
	/**
	 * The current generation, never NULL (release store by the main
	 * lcore, acquire load by the worker once per round of polls).
	 */
	struct dpmon_generation *gen;
	struct rte_rcu_qsbr *qsv; /**< quiescent states; NULL: none reported */
	unsigned qs_id;           /**< this worker's thread id in qsv */
	const bool
		*stop; /**< set by the main lcore to end the loop (__atomic store, relaxed load) */
	uint16_t burst_size; /**< 1..DPMON_MAX_BURST */
	uint16_t n_rxq;
	uint32_t idle_sleep_us; /**< sleep per empty round once idle (idle.h); 0 = busy poll */
	struct dpmon_rxq rxq[DPMON_MAX_WORKER_QUEUES];
	unsigned lcore_id;
	/**
	 * Set by the main lcore's test hooks only (lib/run): while true the
	 * loop polls nothing (it still reports quiescent states), so a test
	 * sees a worker that stopped polling. Read once per round.
	 */
	bool hold;
} __rte_cache_aligned;

/**
 * Count @p n mbufs into @p core and @p gen and free them.
 * @param core  the calling lcore's tables (single writer).
 * @param gen   the generation: classifier (shared, read-only), subnet
 *              counters and sketches (this lcore's).
 * @param pkts  mbufs; each is freed. @p n may be 0..DPMON_MAX_BURST.
 * Thread-safety: the lcore that owns @p core.
 */
void dpmon_worker_burst(struct dpmon_core *core, const struct dpmon_generation *gen,
			struct rte_mbuf **pkts, uint16_t n);

/**
 * As dpmon_worker_burst but leaves the mbufs allocated (benchmarks reuse them).
 */
void dpmon_worker_count(struct dpmon_core *core, const struct dpmon_generation *gen,
			struct rte_mbuf **pkts, uint16_t n);

/**
 * Flag in dpmon_worker_count_generation's @p decap, above the tunnel bits:
 * the mbufs' packet_type is their PMD's (the port reports the plain
 * Ethernet/IP/TCP-UDP types, dpmon_port_ptypes), so the parse may start
 * from it (parse_fast.h). The counts are the same with or without it.
 */
#define DPMON_WORKER_PTYPE (1u << 31)

/**
 * As dpmon_worker_count, decapsulating the tunnel kinds in @p decap
 * (enum dpmon_tunnel bits, the port's `decap` configuration; 0 = none),
 * with DPMON_WORKER_PTYPE when the RX queue's PMD reports packet types.
 * Thread-safety: the lcore that owns @p core.
 */
void dpmon_worker_count_generation(struct dpmon_core *core, const struct dpmon_generation *gen,
				   struct rte_mbuf **pkts, uint16_t n, uint32_t decap);

/**
 * The worker lcore's main loop, for rte_eal_remote_launch: polls every
 * assigned RX queue round-robin until *stop becomes true. Each round loads
 * the current generation once and ends with a quiescent state report
 * (when qsv is set; the thread must have been registered and set online
 * by the main lcore; the loop sets it offline when it ends). The poll
 * counter (core->stats.polls) is the worker's heartbeat: the main lcore
 * reads it each loop round for the health check.
 * @param arg  struct dpmon_worker *.
 * @return 0.
 */
int dpmon_worker_loop(void *arg);

#endif /* DPMON_WORKER_H */
