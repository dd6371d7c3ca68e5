/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample.h — the workers' side of the alert packet sampler: copies of the
 * packets to and from watched hosts and subnets (those under an active
 * alert; a subnet is watched as its prefix: every address inside it),
 * for the alert's "sample" (top source addresses and ports) and for its
 * capture file (actions.pcap_dir). The sampler of the main lcore
 * (lib/detect/sampler.h) owns the watch list and the rings below, and
 * counts and writes what the workers copy.
 *
 * The main lcore sets the watch list; each worker lcore compares the
 * addresses of its packets with it only while it is not empty (one
 * predictable branch per burst otherwise) and copies the first bytes of a
 * matching packet into its own single-producer ring; the main lcore drains
 * the rings after each merge. Nothing is allocated per packet; a full ring
 * drops the copy and counts it.
 *
 * The watch list is published with a sequence count (a seqlock): the main
 * lcore, its only writer, makes the count odd, stores the addresses and
 * alert ids with relaxed atomic stores and makes it even again (release);
 * a worker reads the count (acquire), copies the list, and uses the copy
 * only when the count was even and did not change meanwhile (otherwise it
 * skips that burst's sampling). The list's length is read first on its
 * own: while it is 0 that is the burst's only cost.
 *
 * A copy (struct dpmon_sample_rec: the first DPMON_SAMPLE_SNAPLEN bytes,
 * the wire length, the TSC, the addresses and ports the worker parsed
 * and the alert id) goes by value into a fixed-slot rte_ring of
 * DPMON_SAMPLE_RING elements, single producer (the worker) and single
 * consumer (the main lcore).
 */
#ifndef DPMON_SAMPLE_H
#define DPMON_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "prefix.h"

/** Most hosts and subnets watched at once. */
#define DPMON_SAMPLE_WATCH_MAX 16
/** Bytes of a packet copied (and the capture files' snaplen). */
#define DPMON_SAMPLE_SNAPLEN   128
/** Slots of each worker's ring (a power of two; one stays empty). */
#define DPMON_SAMPLE_RING      1024

/** One copied packet, as it travels in a worker's ring. 192 bytes. */
struct dpmon_sample_rec {
	uint64_t alert_id;
	uint64_t tsc;          /**< rte_rdtsc() when copied */
	struct dpmon_addr src; /**< parsed source address (IPv4 mapped) */
	struct dpmon_addr dst; /**< parsed destination address (IPv4 mapped) */
	uint32_t wire_len;     /**< the packet's length (pkt_len) */
	uint16_t cap_len;      /**< bytes in @c data */
	uint16_t sport, dport; /**< valid when @c ports */
	uint8_t ports;
	uint8_t pad[1];
	uint8_t data[DPMON_SAMPLE_SNAPLEN];
};

/** The watch list as published to the workers (see the file comment). */
struct dpmon_sample_watch {
	uint32_t n;                               /**< entries watched (relaxed) */
	uint32_t seq;                             /**< odd while the main lcore writes */
	uint64_t addr[DPMON_SAMPLE_WATCH_MAX][2]; /**< struct dpmon_addr as two words */
	uint64_t mask[DPMON_SAMPLE_WATCH_MAX][2]; /**< its prefix's mask; all ones: a host */
	uint64_t alert_id[DPMON_SAMPLE_WATCH_MAX];
} __rte_cache_aligned;

/** A worker's copy of the watch list, on its stack. */
struct dpmon_sample_list {
	uint32_t n;
	struct dpmon_addr addr[DPMON_SAMPLE_WATCH_MAX]; /**< host, or network address */
	uint64_t mask[DPMON_SAMPLE_WATCH_MAX][2];       /**< of @c addr, as two words */
	uint64_t alert_id[DPMON_SAMPLE_WATCH_MAX];
};

/** One worker's part of the sampler. */
struct dpmon_sample_core {
	const struct dpmon_sample_watch *watch; /**< shared, written by the main lcore */
	struct rte_ring *ring;                  /**< SP/SC, struct dpmon_sample_rec elements */
	uint64_t copied;                        /**< copies enqueued (worker, relaxed) */
	uint64_t dropped;                       /**< copies lost to a full ring (worker, relaxed) */
} __rte_cache_aligned;

/** The workers' side of a sampler: the watch list and one ring per worker. */
struct dpmon_sample_feed {
	unsigned n_workers;
	struct dpmon_sample_watch *watch; /**< rte_zmalloc'd; the main lcore writes it */
	struct dpmon_sample_core *cores;  /**< n_workers, rte_zmalloc'd */
};

/**
 * Make the watch list (empty) and the ring of each of @p n_workers worker
 * lcores in @p f.
 * @return 0, or -ENOMEM with nothing left allocated.
 * Thread-safety: main lcore, before the workers start (EAL memory).
 */
int dpmon_sample_feed_init(struct dpmon_sample_feed *f, unsigned n_workers);

/**
 * Free the rings and the watch list of @p f (workers stopped); again, or
 * on a zeroed @p f, nothing. Main lcore.
 */
void dpmon_sample_feed_fini(struct dpmon_sample_feed *f);

/** Copies dropped on full rings, all workers of @p f, since init. Main lcore. */
uint64_t dpmon_sample_feed_dropped(const struct dpmon_sample_feed *f);

/** Copies enqueued by all workers of @p f since init. Main lcore. */
uint64_t dpmon_sample_feed_copied(const struct dpmon_sample_feed *f);

/**
 * Publish @p n hosts or prefixes @p hosts with their alert ids as the
 * watch list @p w (the seqlock's write side; see the file comment).
 * @param depths  prefix length of each entry in bits of the 16-byte
 *                (IPv4-mapped) address, 0..128 (an IPv4 /24 is 120; a
 *                host counted per prefix, host_prefix_len, is its
 *                prefix); NULL: every entry is a whole address (128).
 * @return 0, or -E2BIG when @p n > DPMON_SAMPLE_WATCH_MAX (nothing changed).
 * Thread-safety: main lcore, the list's only writer.
 */
int dpmon_sample_watch_write(struct dpmon_sample_watch *w, const struct dpmon_addr *hosts,
			     const uint8_t *depths, const uint64_t *alert_ids, unsigned n);

/** Is alert @p alert_id on watch list @p w? Main lcore (the writer) only. */
bool dpmon_sample_watch_has(const struct dpmon_sample_watch *w, uint64_t alert_id);

/**
 * Take up to @p n copies from @p c's ring into @p recs.
 * @return how many (0 when the ring is empty).
 * Thread-safety: main lcore (the ring's single consumer).
 */
unsigned dpmon_sample_core_dequeue(struct dpmon_sample_core *c, struct dpmon_sample_rec *recs,
				   unsigned n);

/** True while hosts are watched (one relaxed load). Worker lcore. */
static inline bool
dpmon_sample_watching(const struct dpmon_sample_core *c)
{
	return __atomic_load_n(&c->watch->n, __ATOMIC_RELAXED) != 0;
}

/**
 * Copy the watch list of @p c into @p out (the seqlock's read side).
 * @return true when @p out is a consistent list, false when the main lcore
 *         was writing it (sample nothing this burst). Worker lcore.
 */
bool dpmon_sample_watch_read(const struct dpmon_sample_core *c, struct dpmon_sample_list *out);

/** Is @p a entry @p i of @p l (that host, or inside that prefix)? Worker lcore. */
static inline bool
dpmon_sample_entry_has(const struct dpmon_sample_list *l, uint32_t i, const struct dpmon_addr *a)
{
	uint64_t x[2], n[2];

	memcpy(x, a->b, sizeof(x));
	memcpy(n, l->addr[i].b, sizeof(n));
	return ((x[0] & l->mask[i][0]) == n[0]) & ((x[1] & l->mask[i][1]) == n[1]);
}

/**
 * The entry of @p l for packets sent to @p a: the first one holding it
 * (its ingress alert when it has both), or -1. Worker lcore.
 */
static inline int
dpmon_sample_match(const struct dpmon_sample_list *l, const struct dpmon_addr *a)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (dpmon_sample_entry_has(l, i, a))
			return (int)i;
	return -1;
}

/**
 * The entry of @p l for packets sent by @p a: the last one holding it
 * (its egress alert when it has both), or -1. Worker lcore.
 */
static inline int
dpmon_sample_match_source(const struct dpmon_sample_list *l, const struct dpmon_addr *a)
{
	for (uint32_t i = l->n; i-- > 0;)
		if (dpmon_sample_entry_has(l, i, a))
			return (int)i;
	return -1;
}

/**
 * Copy packet @p m (its first DPMON_SAMPLE_SNAPLEN bytes) for alert
 * @p alert_id into @p c's ring, or count it dropped when the ring is full.
 * @param src    the packet's parsed source address (IPv4 mapped).
 * @param dst    its parsed destination address (IPv4 mapped).
 * @param sport  source port, host order; kept only when @p ports.
 * @param dport  destination port, host order; kept only when @p ports.
 * No allocation. Worker lcore (the ring's single producer).
 */
void dpmon_sample_copy(struct dpmon_sample_core *c, const struct rte_mbuf *m, uint64_t alert_id,
		       const struct dpmon_addr *src, const struct dpmon_addr *dst, uint16_t sport,
		       uint16_t dport, bool ports);

#endif /* DPMON_SAMPLE_H */
