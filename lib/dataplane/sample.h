/*
 * sample.h — copies of the packets to and from watched hosts (the hosts
 * under an active alert), for the alert's "sample" (top source addresses
 * and ports) and for its capture file (actions.pcap_dir).
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
 * the wire length, the TSC, the source address and ports the worker parsed
 * and the alert id) goes by value into a fixed-slot rte_ring of
 * DPMON_SAMPLE_RING elements, single producer (the worker) and single
 * consumer (the main lcore). The main lcore counts per alert the packets
 * by source address, source port and destination port (one rte_hash per
 * alert, at most DPMON_SAMPLE_KEYS keys: later new keys count only in the
 * alert's total) and writes the first pcap_packets copies of each alert
 * to pcap_dir/ALERT_ID.pcap (libpcap, Ethernet, snaplen 128, the original
 * wire length, the time of the copy). Alert ids start at 1 again at every
 * start, so an existing ALERT_ID.pcap (an earlier run's) is renamed to
 * ALERT_ID.MTIME.pcap (UTC, YYYYmmddTHHMMSSZ) first, never overwritten.
 * When the alert ends, the detection takes its last summary and the
 * sampler lets it go (dpmon_sampler_forget: file closed, counts freed); a
 * copy of it drained later is dropped.
 */
#ifndef DPMON_SAMPLE_H
#define DPMON_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "config.h"
#include "prefix.h"

/** Most hosts watched at once. */
#define DPMON_SAMPLE_WATCH_MAX 16
/** Bytes of a packet copied (and the capture files' snaplen). */
#define DPMON_SAMPLE_SNAPLEN 128
/** Slots of each worker's ring (a power of two; one stays empty). */
#define DPMON_SAMPLE_RING 1024
/** Distinct sources and ports counted per alert. */
#define DPMON_SAMPLE_KEYS 8192

struct dpmon_sampler;

/** One copied packet, as it travels in a worker's ring. 176 bytes. */
struct dpmon_sample_rec {
	uint64_t alert_id;
	uint64_t tsc;                /**< rte_rdtsc() when copied */
	struct dpmon_addr src;       /**< parsed source address (IPv4 mapped) */
	uint32_t wire_len;           /**< the packet's length (pkt_len) */
	uint16_t cap_len;            /**< bytes in @c data */
	uint16_t sport, dport;       /**< valid when @c ports */
	uint8_t ports;
	uint8_t pad[1];
	uint8_t data[DPMON_SAMPLE_SNAPLEN];
};

/** The watch list as published to the workers (see the file comment). */
struct dpmon_sample_watch {
	uint32_t n;   /**< hosts watched (relaxed) */
	uint32_t seq; /**< odd while the main lcore writes */
	uint64_t addr[DPMON_SAMPLE_WATCH_MAX][2]; /**< struct dpmon_addr as two words */
	uint64_t alert_id[DPMON_SAMPLE_WATCH_MAX];
} __rte_cache_aligned;

/** A worker's copy of the watch list, on its stack. */
struct dpmon_sample_list {
	uint32_t n;
	struct dpmon_addr addr[DPMON_SAMPLE_WATCH_MAX];
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
 * Publish @p n hosts @p hosts with their alert ids as the watch list @p w
 * (the seqlock's write side; see the file comment).
 * @return 0, or -E2BIG when @p n > DPMON_SAMPLE_WATCH_MAX (nothing changed).
 * Thread-safety: main lcore, the list's only writer.
 */
int dpmon_sample_watch_write(struct dpmon_sample_watch *w, const struct dpmon_addr *hosts,
			     const uint64_t *alert_ids, unsigned n);

/** Is alert @p alert_id on watch list @p w? Main lcore (the writer) only. */
bool dpmon_sample_watch_has(const struct dpmon_sample_watch *w, uint64_t alert_id);

/**
 * Take up to @p n copies from @p c's ring into @p recs.
 * @return how many (0 when the ring is empty).
 * Thread-safety: main lcore (the ring's single consumer).
 */
unsigned dpmon_sample_core_dequeue(struct dpmon_sample_core *c, struct dpmon_sample_rec *recs,
				   unsigned n);

/**
 * Create the sampler for @p n_workers worker lcores.
 * @param conf  pcap_dir ("" = no capture files) and pcap_packets (copied).
 * @return the sampler, or NULL with errno set (ENOMEM).
 * Thread-safety: main lcore, before the workers start.
 */
struct dpmon_sampler *dpmon_sampler_create(unsigned n_workers,
					   const struct dpmon_actions_conf *conf);

/**
 * Take reloaded settings: pcap_dir and pcap_packets of @p conf (copied).
 * A capture file already open stays in its directory until complete; one
 * complete under the new settings (no pcap_dir, or pcap_packets written)
 * is closed and never reopened. Alerts without a file yet (or whose file
 * could not be created) write theirs into a new pcap_dir.
 * Thread-safety: main lcore (as dpmon_sampler_drain).
 */
void dpmon_sampler_reconfigure(struct dpmon_sampler *s, const struct dpmon_actions_conf *conf);

/**
 * Let go of alert @p alert_id (it ended; its summary was taken): close its
 * capture file and free its counts. Copies of it still in the rings are
 * dropped at the next drain (an alert not on the watch list gets no new
 * counts). Unknown ids are ignored.
 * Thread-safety: main lcore.
 */
void dpmon_sampler_forget(struct dpmon_sampler *s, uint64_t alert_id);

/** Free the sampler (workers stopped). NULL ignored. Main lcore. */
void dpmon_sampler_free(struct dpmon_sampler *s);

/**
 * Watch @p hosts from now on (replaces the previous list; n = 0 stops).
 * @p alert_ids[i] names host i's samples (summary, DIR/ID.pcap). A host
 * under an ingress and an egress alert is listed twice, its ingress alert
 * first: packets to it count for the first entry, packets from it for the
 * second (dpmon_sample_match, dpmon_sample_match_source).
 * @return 0, or -E2BIG when @p n > DPMON_SAMPLE_WATCH_MAX (nothing changed).
 * Thread-safety: main lcore.
 */
int dpmon_sampler_watch(struct dpmon_sampler *s, const struct dpmon_addr *hosts,
			const uint64_t *alert_ids, unsigned n);

/**
 * Take the copies the workers made since the last call: add them to their
 * alert's summary and capture file (up to pcap_packets per alert). A copy
 * of an alert neither counted yet nor on the watch list (it was forgotten)
 * is dropped.
 * Thread-safety: main lcore.
 */
void dpmon_sampler_drain(struct dpmon_sampler *s);

/**
 * The sample of alert @p alert_id as JSON: {"packets": N, "sources":
 * [{"address": A, "packets": N}], "source_ports": [{"port": P, "packets":
 * N}], "destination_ports": [...]}, each list the top 10 by packets.
 * @return a new reference, or NULL when nothing was sampled for it.
 * Thread-safety: main lcore.
 */
json_t *dpmon_sampler_summary(struct dpmon_sampler *s, uint64_t alert_id);

/**
 * Worker @p worker's part (0 .. n_workers - 1), to put in its struct
 * dpmon_core before it starts. Main lcore.
 */
struct dpmon_sample_core *dpmon_sampler_core(struct dpmon_sampler *s, unsigned worker);

/** Copies dropped on full rings, all workers, since creation. Main lcore. */
uint64_t dpmon_sampler_dropped(const struct dpmon_sampler *s);

/** Copies enqueued by all workers since creation. Main lcore. */
uint64_t dpmon_sampler_copied(const struct dpmon_sampler *s);

/** True while hosts are watched (one relaxed load). Worker lcore. */
static inline bool
dpmon_sample_watching(const struct dpmon_sample_core *c)
{
	return __atomic_load_n(&c->watch->n, __ATOMIC_RELAXED) != 0;
}

/**
 * Copy the watch list into @p out.
 * @return true when @p out is a consistent list, false when the main lcore
 *         was writing it (sample nothing this burst). Worker lcore.
 */
bool dpmon_sample_watch_read(const struct dpmon_sample_core *c, struct dpmon_sample_list *out);

/** Index in @p l of address @p a, or -1. */
static inline int
dpmon_sample_match(const struct dpmon_sample_list *l, const struct dpmon_addr *a)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (memcmp(l->addr[i].b, a->b, 16) == 0)
			return (int)i;
	return -1;
}

/**
 * The entry of @p l for packets sent by @p a: the last one with its
 * address (its egress alert when it has both), or -1. Worker lcore.
 */
static inline int
dpmon_sample_match_source(const struct dpmon_sample_list *l, const struct dpmon_addr *a)
{
	for (uint32_t i = l->n; i-- > 0;)
		if (memcmp(l->addr[i].b, a->b, 16) == 0)
			return (int)i;
	return -1;
}

/**
 * Copy packet @p m (source @p src, ports when @p ports) for alert
 * @p alert_id into @p c's ring, or count it dropped when the ring is full.
 * No allocation. Worker lcore (the ring's single producer).
 */
void dpmon_sample_copy(struct dpmon_sample_core *c, const struct rte_mbuf *m, uint64_t alert_id,
		       const struct dpmon_addr *src, uint16_t sport, uint16_t dport, bool ports);

#endif /* DPMON_SAMPLE_H */
