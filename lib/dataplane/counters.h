/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counters.h — the per-core tables a worker lcore updates for every packet.
 *
 * Each worker lcore owns one struct dpmon_core: totals and a host table
 * private to the worker (its subnet counters and subnet flow sketches
 * belong to its generation, worker.h, not to the core): a
 * bucketised hash index (address → dense entry index) over three arrays,
 *   meta[i]    address, subnet, the merge epoch of the last update, the
 *              entry's flag line, if any, and the bitmaps of its distinct
 *              flows and peers in that epoch (one cache line, 64 B),
 *   hosts[i]   sixteen 32-bit counters, one cache line (64 B),
 *   stamp[i]   a copy of meta[i]'s epoch (4 B), written with it, so that
 *              the merge finds the touched entries by reading 4 B per
 *              entry rather than a 64-byte meta line,
 * so one host update touches the index bucket, the entry's meta (the key
 * compare needs it anyway) and one counter line. Fragments and TCP SYNs
 * (SYN set, ACK clear) are rare in normal traffic: their eight 32-bit
 * counters per host live in a separate array of 32-byte lines (flag_lines),
 * assigned to a host at its first such packet, with room for a quarter of
 * the entries (host_ext_full counts the updates that found it full). A
 * normal packet never touches it. A host direction with many flows in an
 * epoch also takes full flow and peer sketches from a small pool (hsk).
 * Memory: 178 B per host entry per core (docs/performance.md). Only that
 * worker writes; the main lcore reads concurrently to merge.
 *
 * Merge protocol (docs/architecture.md): every counter is monotonic — never
 * reset, only incremented by its single writer with a plain load + add +
 * store (relaxed atomics: no lock prefix, no read-modify-write
 * instruction). The main lcore reads each counter with a relaxed atomic
 * load, which returns a value the counter really held (aligned accesses are
 * single-copy atomic); rates come from the difference of two reads.
 *
 * Host counters are the low 32 bits of 64-bit counters. When an add wraps
 * one (2^32 packets or bytes: 4 GiB), the worker pushes a carry record
 * (entry, counter) onto its carry ring, inside a write-side sequence count
 * (wrap_seq odd while the low word and the ring disagree); the merge keeps
 * the high words and reads under that sequence count, retrying when it
 * changed. Wraps are rare (at most bytes/s / 2^32 per core: 3/s at
 * 100 Gbit/s), so this costs the hot path one predictable branch per add.
 *
 * Touched entries: the merge bumps merge_epoch after each merge; the
 * worker copies it into worker_epoch (release) at the start of a burst when
 * it changed, and stamps every entry it updates with it. A merge reads
 * worker_epoch (acquire) before the packet count and, next time, visits
 * only entries whose stamp is at least that value: every entry updated by a
 * burst the previous merge did not fully see (docs/architecture.md).
 *
 * A burst ends with a release store of stats.packets, which the merge reads
 * first (acquire), so a snapshot holds every packet its worker counts claim.
 *
 * Host entries retire (idle hosts, and the least recently active ones
 * when the table is full) in a round trip over three single-producer,
 * single-consumer rte_rings, so that an entry is reused only once the
 * merge has folded its last counts (docs/architecture.md, "Host life
 * cycle"):
 *   retire ring (merge → worker): "retire entry i if its stamp is still
 *       S"; the worker drops i from its index (no packet reaches it after
 *       that) and answers DEAD, or KEPT when a packet stamped it since;
 *   event ring (worker → merge): DEAD and KEPT answers, and NEW i when
 *       the worker gave a freed entry to a new host;
 *   free ring (merge → worker): entries the merge has folded for the
 *       last time (after DEAD), for the worker to reuse.
 * No lock and no atomic read-modify-write: rte_ring's single-producer and
 * single-consumer paths are loads and stores with acquire/release.
 */
#ifndef DPMON_COUNTERS_H
#define DPMON_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_hash_crc.h>

#include "hll.h"
#include "prefix.h"
#include "stats.h"

struct dpmon_sample_core;
struct dpmon_core;
struct rte_ring;

/** Packets and bytes (frame length as received). */
struct dpmon_ctr {
	uint64_t packets;
	uint64_t bytes;
};

/** One direction, per protocol class (the total is the sum). 64 bytes. */
struct dpmon_dir_ctr {
	struct dpmon_ctr proto[DPMON_PROTO_MAX];
};

/** One direction, per packet kind (fragments, tcp_syn). 32 bytes. */
struct dpmon_flag_ctr {
	struct dpmon_ctr flag[DPMON_FLAG_MAX];
};

/**
 * Ingress and egress of one subnet: the protocol classes in the first two
 * cache lines (every packet), the flags in the third (rare packets).
 */
struct dpmon_pair_ctr {
	struct dpmon_dir_ctr dir[DPMON_DIR_MAX];
	struct dpmon_flag_ctr flags[DPMON_DIR_MAX];
} __rte_cache_aligned;

/** Counters of one host in one worker table: low 32 bits, one cache line. */
struct dpmon_host_ctr {
	uint32_t packets[DPMON_DIR_MAX][DPMON_PROTO_MAX];
	uint32_t bytes[DPMON_DIR_MAX][DPMON_PROTO_MAX];
} __rte_cache_aligned;

/**
 * Extra counters of one host in one worker table (fragments, tcp_syn): low
 * 32 bits, half a cache line, assigned at the host's first such packet.
 */
struct dpmon_host_flag_ctr {
	uint32_t packets[DPMON_DIR_MAX][DPMON_FLAG_MAX];
	uint32_t bytes[DPMON_DIR_MAX][DPMON_FLAG_MAX];
} __rte_aligned(32);

/** Slots of the main line (packets then bytes), as named in carry records. */
#define DPMON_HOST_BASE_SLOTS (2 * DPMON_DIR_MAX * DPMON_PROTO_MAX)
/** All counter slots of a host entry: main line, then the flag line. */
#define DPMON_HOST_SLOTS      (DPMON_HOST_BASE_SLOTS + 2 * DPMON_DIR_MAX * DPMON_FLAG_MAX)

/** Slot of packets[d][p] (bytes: + DPMON_HOST_BASE_SLOTS / 2). */
static inline uint32_t
dpmon_host_slot(unsigned d, unsigned p)
{
	return d * DPMON_PROTO_MAX + p;
}

/** Slot of the flag line's packets[d][f] (bytes: + DPMON_DIR_MAX * DPMON_FLAG_MAX). */
static inline uint32_t
dpmon_host_flag_slot(unsigned d, unsigned f)
{
	return DPMON_HOST_BASE_SLOTS + d * DPMON_FLAG_MAX + f;
}

/**
 * Identity of a host entry, the epoch of its last update, its flag line,
 * and its distinct flows and peers of that epoch. One cache line (64 B).
 *
 * Flows and peers per direction: a 64-bit linear-counting bitmap each (bit
 * = the top 6 bits of the flow's or peer's 64-bit hash), valid for the
 * epoch in @c epoch: the worker zeroes them (and @c hsk) when it first
 * updates the entry in a new epoch, before the release store of the new
 * stamp. A direction whose flow bitmap reaches DPMON_HOST_PROMOTE set bits
 * is promoted: it takes a full sketch pair (struct dpmon_host_sketch) from
 * the worker's pool for the rest of the epoch (@c hsk = slot + 1), which
 * counts its flows and peers from then on besides the bitmaps; the merge
 * adds to the sketch's estimate those of the bitmap's flows at promotion
 * that it did not see again (docs/architecture.md, "Flows").
 */
struct dpmon_host_meta {
	struct dpmon_addr addr;
	uint32_t subnet; /**< subnet index (LPM result) */
	uint32_t epoch;  /**< merge epoch of the last update; 0 = never updated (release/acquire) */
	uint32_t flag_idx; /**< index + 1 into flag_lines; 0 = none yet (relaxed store/load) */
	/** Per direction: promoted sketch slot + 1 in this epoch; 0 = none;
	 *  DPMON_HSK_NONE = the pool was empty (release/acquire). */
	uint16_t hsk[DPMON_DIR_MAX];
	uint64_t flows[DPMON_DIR_MAX]; /**< flow bitmaps of this epoch (relaxed) */
	uint64_t peers[DPMON_DIR_MAX]; /**< peer bitmaps of this epoch (relaxed) */
} __rte_cache_aligned;

/** Set bits of a host's flow bitmap that promote it (estimate 44.4). */
#define DPMON_HOST_PROMOTE  32
/** Precision of a promoted host's flow sketch: 16 384 registers, 0.81 %. */
#define DPMON_HOST_FLOW_P   14
/** Precision of a promoted host's peer sketch: 4 096 registers, 1.6 %. */
#define DPMON_HOST_PEER_P   12
/** Promoted sketch slots per worker and epoch (20 KiB each). */
#define DPMON_HOST_SKETCHES 256
/** meta.hsk of a direction that could not be promoted (pool empty). */
#define DPMON_HSK_NONE      UINT16_MAX

/**
 * The full sketches of one promoted host direction for one epoch: one-byte
 * HyperLogLog registers (hll.h), zeroed by the worker when it assigns the
 * slot. Single writer, relaxed stores.
 */
struct dpmon_host_sketch {
	uint8_t flows[1u << DPMON_HOST_FLOW_P];
	uint8_t peers[1u << DPMON_HOST_PEER_P];
	/** The bitmaps at promotion: the flows and peers the sketches missed
	 *  unless seen again (dpmon_hll_unseen). Written before the slot is
	 *  released into the meta entry. */
	uint64_t pre_flows, pre_peers;
} __rte_cache_aligned;

/**
 * Distinct flows (5-tuples) per interval: a HyperLogLog sketch (hll.h) of
 * precision DPMON_FLOW_P whose registers are tagged with the merge epoch
 * of the burst that wrote them, (epoch << 8) | rank, so the worker never
 * clears a sketch and the merge reads only the registers of the current
 * epoch (the others count as zero). Single writer, relaxed stores.
 */
#define DPMON_FLOW_P           14
/** Subnets (the first ones in configuration order) that get flow sketches. */
#define DPMON_FLOW_SUBNETS_MAX 64
/**
 * Sketches per worker for the directions of the other subnets, taken per
 * epoch at a direction's first packet (flow_slot) and free again at the
 * next epoch: no clearing, the registers' epoch tags tell.
 */
#define DPMON_FLOW_POOL        64
/** flow_slot value of a direction that found the pool empty (low byte). */
#define DPMON_FLOW_SLOT_NONE   0xff

/** Registers per block of a flow sketch that share a block tag. */
#define DPMON_FLOW_BLOCK 64

/**
 * A flow sketch: its tagged registers, and per block of DPMON_FLOW_BLOCK
 * registers the tag of the last register write in it, stored before that
 * register's, so that a block whose tag is not the epoch a merge reads
 * holds no register of that epoch and costs the merge one compare.
 */
struct dpmon_flow_sketch {
	uint32_t reg[1u << DPMON_FLOW_P];
	uint32_t blk[(1u << DPMON_FLOW_P) / DPMON_FLOW_BLOCK];
};

/** Add the flow of 64-bit hash @p h to @p s in epoch @p epoch. Single writer. */
static inline void
dpmon_flow_add(struct dpmon_flow_sketch *s, uint32_t epoch, uint64_t h)
{
	uint32_t i = (uint32_t)(h >> (64 - DPMON_FLOW_P));
	uint32_t rank = dpmon_hll_rank(h, DPMON_FLOW_P);
	uint32_t tag = epoch & 0xffffff;
	uint32_t r = s->reg[i];

	if ((r >> 8) != tag || (r & 0xff) < rank) {
		__atomic_store_n(&s->blk[i / DPMON_FLOW_BLOCK], tag, __ATOMIC_RELAXED);
		__atomic_store_n(&s->reg[i], tag << 8 | rank, __ATOMIC_RELAXED);
	}
}

/**
 * Pool sketch of a subnet direction past the fixed ones, in this epoch:
 * the pool slot that @p slot (its entry in the flow_slot array of the
 * generation counting now, worker.h) holds, or one taken now; NULL when
 * the pool is empty. Owning worker lcore only.
 */
struct dpmon_flow_sketch *dpmon_flow_pool_take(struct dpmon_core *c, uint32_t *slot);

/** Entries per index bucket. */
#define DPMON_BUCKET_SLOTS 8

/** One index bucket: signatures and entry indexes + 1 (0 = empty). 64 B. */
struct dpmon_host_bucket {
	uint32_t sig[DPMON_BUCKET_SLOTS];
	uint32_t idx[DPMON_BUCKET_SLOTS];
} __rte_cache_aligned;

/** Most entries in flight on each retire and free ring (a power of two). */
#define DPMON_RETIRE_RING      16384
/** Retire requests a worker serves per round of polls (dpmon_core_maintain). */
#define DPMON_RETIRE_PER_ROUND 64

/** What a retire request asks (bit 56 of the request). */
enum dpmon_retire_why {
	DPMON_RETIRE_IDLE = 0,  /**< no packet for host_idle_timeout_s */
	DPMON_RETIRE_EVICT = 1, /**< the table is full: least recently active */
};

/** Kinds of event-ring records (top two bits; the entry index below). */
enum dpmon_host_event {
	DPMON_HOST_DEAD = 1, /**< retired: out of the index, never written again */
	DPMON_HOST_KEPT = 2, /**< not retired: a packet stamped it after the request */
	DPMON_HOST_NEW = 3,  /**< a freed entry now holds a new host */
};

/** A retire request for entry @p idx last stamped @p stamp. */
static inline uint64_t
dpmon_retire_req(uint32_t idx, uint32_t stamp, enum dpmon_retire_why why)
{
	return (uint64_t)why << 56 | (uint64_t)stamp << 24 | idx;
}

/** An event-ring record of kind @p kind for entry @p idx. */
static inline uint64_t
dpmon_host_event(enum dpmon_host_event kind, uint32_t idx)
{
	return (uint64_t)kind << 62 | idx;
}

/** Carry records per worker (a power of two); see the file comment. */
#define DPMON_CARRY_RING 4096

/**
 * Per-worker event counters.
 *
 * Load: @c polls counts every rte_eth_rx_burst call, empty or not;
 * @c busy_cycles adds, for each call that returned packets, the TSC cycles
 * from just before that call to the end of the burst's processing. Empty
 * polls are idle time; busy_cycles over elapsed TSC cycles is the share of
 * the lcore spent on packets (the busy ratio). Cost: one rte_rdtsc per poll
 * and one more per non-empty burst, plain stores like every other counter.
 */
struct dpmon_core_stats {
	uint64_t packets;         /**< mbufs received */
	uint64_t bursts;          /**< non-empty rx bursts */
	uint64_t host_table_full; /**< host updates lost because the table was full */
	/**
	 * IPv6 host updates not made because the address is IPv4-mapped
	 * (::ffff:0:0/96, RFC 4291 section 2.5.5.2): it would alias the IPv4
	 * host of the same number. Such packets still count for their subnet.
	 */
	uint64_t host_v4mapped;
	uint64_t reasons[DPMON_REASON_MAX]; /**< frames by parse reason ([OK] = IP packets) */
	uint64_t polls;                     /**< rx_burst calls, empty ones included */
	uint64_t busy_cycles; /**< TSC cycles in non-empty bursts (rx + count + free) */
	uint64_t carry_lost;  /**< carries dropped on a full ring (never expected) */
	uint64_t anomalies[DPMON_ANOM_MAX];  /**< IP packets counted, by anomaly noted */
	uint64_t ip_stats[DPMON_IPSTAT_MAX]; /**< IP packets counted, by kind */
	/** fragment/SYN host updates lost because the flag lines were all taken */
	uint64_t host_ext_full;
	/**
	 * host directions not promoted to a full flow sketch because the
	 * worker's DPMON_HOST_SKETCHES slots of the epoch were taken (their
	 * flows and peers stay a linear-counting estimate, a lower bound)
	 */
	uint64_t host_flow_full;
	/** entries retired because the table was full (least recently active) */
	uint64_t host_evictions;
	/** entries retired because their host sent nothing for host_idle_timeout_s */
	uint64_t host_expired;
	/**
	 * packets from ignored sources that found no slot in the generation's
	 * side table (ignored.h): they stay in what detection compares
	 */
	uint64_t ignored_full;
};

/** A worker lcore's tables. Allocate with dpmon_core_create. */
struct dpmon_core {
	struct dpmon_core_stats stats __rte_cache_aligned;
	struct dpmon_dir_ctr totals[DPMON_TOTAL_MAX] __rte_cache_aligned;
	struct dpmon_flag_ctr flag_totals[DPMON_TOTAL_MAX] __rte_cache_aligned;
	struct dpmon_host_ctr *hosts;           /**< capacity entries, dense from 0 */
	struct dpmon_host_meta *meta;           /**< capacity entries */
	struct dpmon_host_flag_ctr *flag_lines; /**< flag_capacity flag lines, dense from 0 */
	struct dpmon_host_bucket *buckets;      /**< bucket_mask + 1 buckets */
	/**
	 * capacity entries: meta[i].epoch, stored (relaxed) after it by the
	 * worker, read by the merge's scan for touched entries.
	 */
	uint32_t *stamp;
	/**
	 * Per bucket: entries stored past it whose probe passed it (full
	 * then); 255 stays (sticky). A lookup that misses in a bucket with 0
	 * ends there (counters.c). Worker only.
	 */
	uint8_t *overflow;
	/** Retire requests from the merge, uint64_t (dpmon_retire_req). */
	struct rte_ring *retire_ring;
	/** DEAD, KEPT and NEW records for the merge, uint64_t (dpmon_host_event). */
	struct rte_ring *event_ring;
	/** Entries the merge freed for reuse, uint64_t (entry index). */
	struct rte_ring *free_ring;
	uint32_t *free_flag_lines; /**< flag lines given back (index + 1), a stack; worker only */
	uint32_t n_free_flag_lines;
	uint32_t *carry; /**< DPMON_CARRY_RING records: entry * SLOTS + slot */
	/** Flow sketches of the totals, [DPMON_DIR_MAX] (ingress, egress). */
	struct dpmon_flow_sketch *flow_tot;
	/**
	 * DPMON_FLOW_POOL sketches for the subnets past the generation's
	 * n_flow_subnets (their flow_slot entries, worker.h, name the slot).
	 */
	struct dpmon_flow_sketch *flow_pool;
	uint32_t n_flow_pool; /**< pool slots taken in this epoch (worker only) */
	/** DPMON_HOST_SKETCHES slots for promoted host directions (counters.h). */
	struct dpmon_host_sketch *hsk;
	uint32_t n_hsk; /**< slots taken in this epoch (worker only) */
	/** This worker's part of the alert sampler (sample.h); NULL = none. Set before start. */
	struct dpmon_sample_core *sample;
	/**
	 * Distinct flows and peers counted (the host bitmaps and sketches, the
	 * subnet and total sketches): true from dpmon_core_create; false skips
	 * them ("flow_sketches": false). Set before start.
	 */
	bool flow_sketches;
	uint32_t bucket_mask;
	uint32_t n_hosts; /**< entries in use (release/acquire) */
	uint32_t capacity;
	uint32_t n_flag_lines;  /**< flag lines assigned (worker only) */
	uint32_t flag_capacity; /**< capacity / 4 (at least 8) */
	uint32_t epoch;         /**< worker's copy of worker_epoch */
	unsigned lcore_id;
	/* Written by the worker, read by the merge. */
	uint32_t worker_epoch __rte_cache_aligned; /**< epoch of the current burst (release) */
	uint32_t wrap_seq;                         /**< odd while a carry is being recorded */
	uint32_t carry_head;                       /**< records pushed (release) */
	/* Written by the merge, read by the worker. */
	uint32_t merge_epoch __rte_cache_aligned; /**< epoch for the next bursts */
	uint32_t carry_tail;                      /**< records consumed by the merge */
} __rte_cache_aligned;

/**
 * Allocate the tables of one worker lcore.
 * @param tag       unique name part (kept for diagnostics; "lcore3").
 * @param capacity  host entries (>= 8, <= 2^24).
 * @param socket_id NUMA socket of the worker lcore.
 * @return the tables, or NULL with rte_errno set (ENOMEM, EINVAL).
 * The subnet counters are not the core's: the worker counts them into a
 * generation (dpmon_generation_create, worker.h).
 * Thread-safety: main lcore, before the worker starts.
 */
struct dpmon_core *dpmon_core_create(const char *tag, uint32_t capacity, int socket_id);

/** Free the tables. Main lcore, after the worker stopped. NULL ignored. */
void dpmon_core_free(struct dpmon_core *c);

/** Bytes allocated for @p c's tables (host entries, index, sketches). Any lcore. */
size_t dpmon_core_bytes(const struct dpmon_core *c);

/** Add one packet of @p bytes to @p c. Single writer only (the owning lcore). */
static inline void
dpmon_ctr_add(struct dpmon_ctr *c, uint64_t bytes)
{
	__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->bytes, c->bytes + bytes, __ATOMIC_RELAXED);
}

/** Add @p n to an event counter. Single writer only. */
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

/** Read a 32-bit host counter another lcore writes. Any lcore. */
static inline uint32_t
dpmon_count_read32(const uint32_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

/**
 * Record the wrap of host counters (slow path of dpmon_host_add and
 * dpmon_host_flag_add): stores the new low words @p packets into @p pk_word
 * and @p bytes into @p by_word and pushes one carry record per wrapped
 * word (entry @p idx, slot @p pk_slot or @p by_slot) inside wrap_seq.
 * Owning worker lcore only.
 */
void dpmon_core_host_wrap(struct dpmon_core *c, uint32_t idx, uint32_t *pk_word, uint32_t *by_word,
			  uint32_t pk_slot, uint32_t by_slot, uint32_t packets, uint32_t bytes,
			  int pk_wrapped, int by_wrapped);

/**
 * Count one packet of @p len bytes for entry @p idx, direction @p d,
 * protocol @p p: two plain stores to one cache line, or the carry path
 * when a low word wraps. Owning worker lcore only.
 */
static inline void
dpmon_host_add(struct dpmon_core *c, uint32_t idx, unsigned d, unsigned p, uint32_t len)
{
	struct dpmon_host_ctr *h = &c->hosts[idx];
	uint32_t old = h->bytes[d][p];
	uint32_t pk = h->packets[d][p] + 1;
	uint32_t by = old + len;

	if (unlikely(pk == 0 || by < old)) {
		uint32_t s = dpmon_host_slot(d, p);

		dpmon_core_host_wrap(c, idx, &h->packets[d][p], &h->bytes[d][p], s,
				     s + DPMON_HOST_BASE_SLOTS / 2, pk, by, pk == 0, by < old);
		return;
	}
	__atomic_store_n(&h->packets[d][p], pk, __ATOMIC_RELAXED);
	__atomic_store_n(&h->bytes[d][p], by, __ATOMIC_RELAXED);
}

/**
 * Count one packet of @p len bytes of the flags in @p flag_mask (bit f =
 * enum dpmon_flag f) for entry @p idx, direction @p d, in its flag line
 * (assigned now if it has none; host_ext_full when none is left). Not
 * inline: only fragments and SYNs come here. Owning worker lcore only.
 */
void dpmon_host_flag_add(struct dpmon_core *c, uint32_t idx, unsigned d, unsigned flag_mask,
			 uint32_t len);

/**
 * Stamp entry @p idx with the current epoch (meta and stamp array); at
 * its first update in an epoch, zero its flow and peer bitmaps and
 * promoted slots first (the merge reads them only under a stamp of the
 * epoch it merges, with acquire). Owning worker lcore only.
 */
static inline void
dpmon_host_touch(struct dpmon_core *c, uint32_t idx)
{
	struct dpmon_host_meta *m = &c->meta[idx];

	if (m->epoch != c->epoch) {
		for (unsigned d = 0; d < DPMON_DIR_MAX; d++) {
			__atomic_store_n(&m->flows[d], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&m->peers[d], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&m->hsk[d], 0, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&m->epoch, c->epoch, __ATOMIC_RELEASE);
		__atomic_store_n(&c->stamp[idx], c->epoch, __ATOMIC_RELAXED);
	}
}

/**
 * Promote direction @p d of entry @p idx to a full sketch pair (slow path
 * of dpmon_host_flow_add): take a slot of this epoch, zero it, start it
 * with @p fh and @p ph, or mark the direction DPMON_HSK_NONE and count
 * host_flow_full when none is left. Owning worker lcore only.
 */
void dpmon_host_promote(struct dpmon_core *c, uint32_t idx, unsigned d, uint64_t fh, uint64_t ph);

/**
 * Add the flow of 64-bit hash @p fh and the peer of hash @p ph to
 * direction @p d of entry @p idx (touched in this epoch): a bit in each
 * bitmap, in the meta line the update already holds, and once promoted
 * a register in each full sketch too. Owning worker lcore only.
 */
static inline void
dpmon_host_flow_add(struct dpmon_core *c, uint32_t idx, unsigned d, uint64_t fh, uint64_t ph)
{
	struct dpmon_host_meta *m = &c->meta[idx];
	uint32_t slot = m->hsk[d];
	uint64_t fb = m->flows[d] | 1ull << (fh >> 58);
	uint64_t pb = m->peers[d] | 1ull << (ph >> 58);

	if (pb != m->peers[d])
		__atomic_store_n(&m->peers[d], pb, __ATOMIC_RELAXED);
	if (fb != m->flows[d]) {
		__atomic_store_n(&m->flows[d], fb, __ATOMIC_RELAXED);
		if (unlikely(slot == 0 && __builtin_popcountll(fb) >= DPMON_HOST_PROMOTE)) {
			dpmon_host_promote(c, idx, d, fh, ph);
			return;
		}
	}
	if (unlikely(slot != 0 && slot != DPMON_HSK_NONE)) {
		struct dpmon_host_sketch *k = &c->hsk[slot - 1];

		dpmon_hll_add(k->flows, DPMON_HOST_FLOW_P, fh);
		dpmon_hll_add(k->peers, DPMON_HOST_PEER_P, ph);
	}
}

/**
 * Start of a burst: adopt the merge's epoch when it changed (release
 * store of worker_epoch). Owning worker lcore only.
 */
static inline void
dpmon_core_burst_begin(struct dpmon_core *c)
{
	uint32_t e = __atomic_load_n(&c->merge_epoch, __ATOMIC_RELAXED);

	if (unlikely(e != c->epoch)) {
		c->epoch = e;
		c->n_hsk = 0; /* the merge of the previous epoch is done with them */
		c->n_flow_pool = 0;
		__atomic_store_n(&c->worker_epoch, e, __ATOMIC_RELEASE);
	}
}

/** Hash of a host address for the index (CRC32-C: two instructions on x86). */
static inline uint32_t
dpmon_host_hash(const struct dpmon_addr *a)
{
	return rte_hash_crc(a->b, sizeof(a->b), 0);
}

/**
 * Find host @p a (hash @p sig, from dpmon_host_hash) in the index.
 * @return the entry index, or -ENOENT. Owning worker lcore (or any lcore
 *         while the worker is stopped).
 */
int32_t dpmon_core_host_find(const struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig);

/**
 * Find or insert host @p a (subnet @p subnet; @p sig from dpmon_host_hash).
 * A new host takes a never-used entry (published by n_hosts) while there
 * are any, then one the merge freed (free ring, announced with a NEW
 * record on the event ring), its counters zeroed first.
 * @return the entry index, or -ENOSPC when no entry is free (the caller
 *         counts host_table_full). Owning worker lcore only.
 */
int32_t dpmon_core_host_insert(struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig,
			       uint32_t subnet);

/**
 * Serve up to @p max retire requests of the merge (file comment): for
 * each, drop the entry from the index and answer DEAD when its stamp is
 * still the one the merge saw, else answer KEPT. Cheap when there are
 * none (a ring count). Call between bursts, never inside one.
 * @return requests served. Owning worker lcore only.
 */
unsigned dpmon_core_maintain(struct dpmon_core *c, unsigned max);

/** Never-used entries taken so far (the others come from the free ring), for the merge (acquire). */
static inline uint32_t
dpmon_core_hosts_published(const struct dpmon_core *c)
{
	return __atomic_load_n(&c->n_hosts, __ATOMIC_ACQUIRE);
}

#endif /* DPMON_COUNTERS_H */
