/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_private.h — the merger's state, and what the files of the merge
 * share (merge.h is the merge's interface; nothing outside lib/merge/merge*.c
 * includes this header).
 *
 * The merge is one struct dpmon_merge, with a sub-struct per concern, and
 * one file per concern:
 *   merge.c          create and free; one merge (dpmon_merge_run); the
 *                    workers', totals' and subnets' counters
 *   merge_hosts.c    global host ids, and their order by address
 *   merge_life.c     the hosts' life cycle: entries retired (idle, or
 *                    least recently active on a full table) and reused,
 *                    hosts removed
 *   merge_fold.c     the fold: the touched hosts' counters, flows and peers
 *   merge_entry.c    one worker entry: its counters with their carries, a
 *                    retire request (a leaf: merge_fold.c and merge_life.c
 *                    call it, it calls neither)
 *   merge_records.c  the snapshot's host records, and their slabs
 *   merge_history.c  flows of the totals and subnets; the history ring
 *   merge_reload.c   a reload's carry-over (dpmon_merge_reconfigure)
 *   merge_ignored.c  the packets from ignored sources (the side tables)
 *
 * Everything here runs on the main lcore, the only thread that touches
 * the merger, while the worker lcores write the tables it reads
 * (counters.h). A loop over the hosts stays within one file: what it calls
 * for each host is static there, or static inline here. Two exceptions,
 * merge_dir_stats and merge_avg_update, were calls already when the
 * merge was one file, and stay calls (see there).
 */
#ifndef DPMON_MERGE_PRIVATE_H
#define DPMON_MERGE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ignored.h"
#include "merge.h"
#include "rates.h"

struct rte_hash;

/* ------------------------------------------------------------------------
 * Constants.
 * --------------------------------------------------------------------- */

/* Entry @p idx of worker table @p core, packed; OCC_END ends a chain. */
#define OCC(core, idx) ((uint32_t)(core) << 24 | (idx))
#define OCC_END        UINT32_MAX
/* Worker tables at most (the core in the top byte of an OCC). */
#define MAX_CORES      255
/* Live slabs above which the smallest are merged into one (merge_records.c). */
#define SLABS_MAX      64
/* records.g_pos of a host not listed in the snapshots. */
#define NO_POS         UINT32_MAX
/* hosts.g_subnet of a removed host, whose id waits for reuse. */
#define HOST_REMOVED   (UINT32_MAX - 1)
/* Uptime units of core_map.last_ds: tenths of a second (13 years in 32 bits). */
#define DS_PER_S       10

/* hosts.g_flags: never retired (an alert, a blackhole: dpmon_merge_pin). */
#define HOST_PINNED 1
/* hosts.g_flags: listed in hosts.dying. */
#define HOST_DYING  2
/* hosts.g_flags: mapped during a reload (dpmon_merge_reconfigure only). */
#define HOST_WINDOW 4
/* hosts.g_flags: listed in hosts.refold. */
#define HOST_REFOLD 8

/* How the merger sees a worker entry (core_map.state). */
enum entry_state {
	ENTRY_LIVE = 0, /**< mapped, chained to its host */
	ENTRY_PENDING,  /**< mapped and chained, a retire request in flight */
	ENTRY_FREE,     /**< folded for the last time: free, or reused and not yet announced */
};

/* ------------------------------------------------------------------------
 * The merger's state.
 * --------------------------------------------------------------------- */

/* Flows and peers of one touched host, per direction (host_flows). */
struct host_fp {
	double flows[DPMON_DIR_MAX], peers[DPMON_DIR_MAX];
};

/* High words of one worker entry's counters (from carry records). */
struct carry_hi {
	uint32_t hi[DPMON_HOST_SLOTS];
};

/* State of the averages of one direction (rates.h): total, protocols, flags. */
struct avg_dir {
	double pps, bps;
	double proto_pps[DPMON_PROTO_MAX], proto_bps[DPMON_PROTO_MAX];
	double flag_pps[DPMON_FLAG_MAX];
};

/* State of the averages of one direction pair. */
struct avg_pair {
	struct avg_dir d[DPMON_DIR_MAX];
};

/* A host's averages as of the merge that last touched it (its record's). */
struct host_avg {
	double t_s;        /**< that merge's uptime, seconds */
	struct avg_pair a; /**< the averages */
};

/* How the merger sees one worker table's entries. */
struct core_map {
	uint32_t *gid;     /**< worker entry → global id */
	uint32_t *next;    /**< worker entry → next occurrence of the same host */
	uint32_t *carry;   /**< worker entry → index + 1 into fold.carries, 0 = none */
	uint8_t *state;    /**< worker entry → enum entry_state */
	uint32_t *last_ds; /**< worker entry → uptime of its last touch, DS_PER_S units */
	uint32_t *free;    /**< entries freed and not yet handed to the worker (a stack) */
	uint32_t n_free;
	uint32_t pending;          /**< retire requests without an answer yet */
	uint32_t n_dead;           /**< entries in state ENTRY_FREE */
	uint64_t prev_full;        /**< the worker's host_table_full at the previous merge */
	uint64_t taken;            /**< entries mapped to a host since start (new and reused) */
	uint64_t prev_taken;       /**< @c taken at the previous merge */
	uint64_t held[64];         /**< answers read from the event ring, not all applied */
	uint32_t n_held, held_pos; /**< in @c held, and the first not applied */
	uint32_t mapped;           /**< never-used worker entries mapped so far */
	uint32_t w_prev;           /**< worker_epoch read by the previous merge */
	uint32_t w_now;            /**< worker_epoch read by this merge */
};

/* The worker tables the merger reads, one per worker lcore. */
struct merge_workers {
	unsigned n;               /**< worker tables, at most MAX_CORES */
	struct dpmon_core **core; /**< n: the tables (the caller's) */
	unsigned *lcore;          /**< n: lcore id of each worker (reported per worker) */
	struct core_map *map;     /**< n: each table's entries as global ids */
	uint64_t *prev_busy;      /**< n: each worker's busy_cycles at the previous merge */
};

/* The TSC, and the uptimes the rates and averages are computed at. */
struct merge_clock {
	uint64_t start_tsc;   /**< TSC at start (uptime zero) */
	uint64_t prev_tsc;    /**< TSC of the previous merge (start's before the first) */
	uint64_t tsc_hz;      /**< frequency of the TSC, Hz */
	double t_prev, t_now; /**< uptime of the previous merge and of this one, seconds */
	double unix_start_s;  /**< wall-clock time of uptime zero, seconds since the epoch */
	uint32_t now_ds;      /**< this merge's uptime in DS_PER_S units (set first) */
};

/* The averages' time constant and weight (rates.h). */
struct merge_avg {
	double alpha;      /**< weight of this merge's rates in the averages */
	double tau_s;      /**< time constant of the averages, seconds */
	double tau_prev_s; /**< that of the previous merge (a reload may change it) */
};

/* Global hosts: ids, addresses, subnets and the order by address. */
struct merge_hosts {
	struct rte_hash *hash;     /**< address → global id */
	uint32_t n;                /**< ids [0, n) were given; free_ids lists the removed ones */
	uint32_t cap;              /**< room in every array indexed by global id (merge_hosts.c) */
	struct dpmon_addr *g_addr; /**< global id → address */
	/** global id → subnet, DPMON_NO_SUBNET: none, HOST_REMOVED: no host */
	uint32_t *g_subnet;
	/**
	 * global id → the length, in bits of its family, of the prefix its
	 * address stands for (its subnet's host_prefix_len when its entries
	 * were made: merge_reload.c); listed only while that of its subnet
	 */
	uint8_t *g_plen;
	uint32_t n_unmonitored; /**< global hosts outside every subnet (g_subnet) */
	uint32_t *sorted;       /**< global ids by address */
	uint32_t n_sorted;      /**< hosts in @c sorted */
	uint32_t *new_ids;      /**< ids given since the last write of records */
	uint32_t n_new;         /**< in new_ids */
	uint32_t n_new_sorted;  /**< new_ids [0, n_new_sorted) are in @c sorted */
	uint32_t *free_ids;     /**< removed hosts' ids, for reuse (a stack) */
	uint32_t n_free_ids;
	uint32_t *dying; /**< hosts whose last worker entry retired (merge_life.c) */
	uint32_t n_dying;
	uint32_t *refold; /**< hosts that lost an entry but keep others: fold them next merge */
	uint32_t n_refold;
	double *g_first;  /**< global id → uptime of its first record, seconds */
	double *g_last;   /**< global id → uptime of its last touch, seconds */
	uint8_t *g_flags; /**< global id → HOST_PINNED, HOST_DYING, HOST_WINDOW, HOST_REFOLD */
	uint32_t *pinned; /**< the ids pinned now */
	uint32_t n_pinned;
	/** global id → index + 1 into fold.bases (counts of its retired entries), 0 = none */
	uint32_t *g_base;
};

/* The fold: each touched host's counters, summed over its worker entries. */
struct merge_fold {
	/** global id → cumulative counters of this merge and of the previous
	 * one; g_cur valid for marked ids only */
	struct dpmon_pair_ctr *g_cur, *g_prev;
	uint32_t *first; /**< global id → first worker occurrence */
	/** global id → n_collects of the merge_collect_touched that last marked it */
	uint32_t *mark;
	/** merge_collect_touched calls, failed merges' too (never 0 once called) */
	uint32_t n_collects;
	uint32_t *touched;               /**< global ids marked by this merge */
	struct host_fp *t_fp;            /**< flows and peers of touched[t] (merge_fold_touched) */
	uint32_t n_touched;              /**< entries in touched and t_fp */
	struct carry_hi *carries;        /**< high words of the worker entries that carried */
	uint32_t n_carries, cap_carries; /**< carries in use, and allocated */
	/** final counts of retired worker entries, per host still listed (hosts.g_base) */
	struct dpmon_pair_ctr *bases;
	uint32_t n_bases, cap_bases; /**< bases given out (free ones included), and allocated */
	uint32_t *free_bases;        /**< free bases (index + 1), a stack of cap_bases */
	uint32_t n_free_bases;
};

/* Snapshot records (merge_records.c), and the slabs that hold them. */
struct merge_records {
	/** global id → its current record; NULL: none yet */
	const struct dpmon_snap_host **g_rec;
	struct host_avg *g_avg;          /**< global id → its record's averages, kept dense */
	struct dpmon_host_slab **g_slab; /**< global id → the slab of that record */
	uint32_t *g_pos;                 /**< global id → index in @c order, NO_POS: not listed */
	/** current records of the listed hosts, by address */
	const struct dpmon_snap_host **order;
	uint32_t n_order;               /**< listed hosts */
	bool order_stale;               /**< new hosts or a reload: rebuild order and g_pos */
	struct dpmon_host_slab **slabs; /**< slabs with a current record, one reference each */
	uint32_t n_slabs, cap_slabs;    /**< slabs listed, and room */
};

/* Subnets of the current generation (dpmon_merge_reconfigure). */
struct merge_subnets {
	uint32_t n;                    /**< subnets of the current generation */
	struct dpmon_generation **gen; /**< per core: its current generation */
	/** n: cumulative counters of this merge and of the previous one */
	struct dpmon_pair_ctr *cur, *prev;
	struct dpmon_pair_ctr *base; /**< n: final counts of earlier generations */
	struct avg_pair *avg;        /**< n: averages */
};

/* The totals (DPMON_TOTAL_*), summed over the workers. */
struct merge_totals {
	struct dpmon_dir_ctr prev[DPMON_TOTAL_MAX]; /**< cumulative counters, previous merge */
	struct dpmon_flag_ctr flag_prev[DPMON_TOTAL_MAX]; /**< the same of the flags */
	struct avg_dir avg[DPMON_TOTAL_MAX];              /**< averages */
};

/* What a reload leaves for the merges after it (dpmon_merge_reconfigure). */
struct merge_reload {
	/** The previous generation, whose sketches the next merge reads once:
	 * per core; NULL when none. */
	struct dpmon_generation **retired;
	uint32_t *old_of_new; /**< new subnet → its old index, UINT32_MAX: none */
	bool resubnet;        /**< a reload: rewrite every record (new subnets) */
};

/* The history ring: the rates of the last merges. */
struct merge_history {
	struct dpmon_hist_point **ring; /**< the last cap points, one reference each */
	uint32_t cap;                   /**< points kept (history_s over the merge interval) */
	uint32_t n;                     /**< points in the ring */
	uint32_t head;                  /**< index of the oldest */
};

/* Registers of the sketches being merged over the workers (scratch). */
struct merge_sketch {
	uint8_t flow_tmp[1u << DPMON_FLOW_P]; /**< registers of one sketch, merged over cores */
	/** registers of one promoted host direction, merged over cores */
	uint8_t host_tmp[1u << DPMON_HOST_FLOW_P], peer_tmp[1u << DPMON_HOST_PEER_P];
};

/* Counters of one side-table slot, or of one host or subnet, ignored sources (ignored.h). */
struct ign_ctr {
	struct dpmon_dir_ctr in;
	struct dpmon_flag_ctr flags;
};

/* A host that received from ignored sources: its counts and averages. */
struct ign_host {
	struct dpmon_addr addr;
	uint32_t subnet;          /**< current numbering */
	struct ign_ctr cum, prev; /**< cumulative, now and at the previous merge */
	struct avg_dir avg;       /**< ingress averages of the ignored packets */
};

/* The side tables of ignored sources, folded (merge_ignored.c). */
struct merge_ignored {
	/** per core: the table @c seen describes, NULL = none yet */
	const struct dpmon_ignored_table **tab;
	struct ign_ctr **seen;  /**< per core: each slot's counts at the last read */
	struct ign_host *hosts; /**< sorted by address up to n_sorted, then new ones */
	uint32_t n_hosts, cap_hosts;
	struct ign_ctr *sub_cum, *sub_prev; /**< per subnet (n_sub) */
	struct avg_dir *sub_avg;            /**< per subnet (n_sub) */
	uint32_t n_sub;
	const uint32_t *renumbered; /**< the reload.old_of_new last applied */
};

/* The merger: read and written by the main lcore only (merge.h). */
struct dpmon_merge {
	const struct dpmon_config *cfg;   /**< subnets, interval, averages; the caller's */
	uint64_t seq;                     /**< seq of this merge's snapshot */
	uint32_t epoch;                   /**< merge epoch handed to the workers */
	struct dpmon_merge_timing timing; /**< where the last merge spent its time */
	struct merge_workers workers;     /**< the worker tables */
	struct merge_clock clock;         /**< TSC and uptimes */
	struct merge_avg avg;             /**< the averages' time constant */
	struct merge_hosts hosts;         /**< global hosts */
	struct merge_fold fold;           /**< the touched hosts' counters */
	struct merge_records records;     /**< snapshot records and slabs */
	struct merge_subnets subnets;     /**< subnet counters */
	struct merge_totals totals;       /**< total counters */
	struct merge_reload reload;       /**< a reload's carry-over */
	struct merge_history history;     /**< the history ring */
	struct merge_sketch sketch;       /**< scratch registers */
	struct merge_ignored ignored;     /**< packets from ignored sources */
};

/* ------------------------------------------------------------------------
 * Counters, rates and averages (per host, per subnet, per total). Main lcore.
 * --------------------------------------------------------------------- */

/* Add the counters of one direction @p src, as the workers store them, to @p dst. */
static inline void
dir_read_add(struct dpmon_dir_ctr *dst, const struct dpmon_dir_ctr *src)
{
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		dst->proto[p].packets += dpmon_count_read(&src->proto[p].packets);
		dst->proto[p].bytes += dpmon_count_read(&src->proto[p].bytes);
	}
}

/* The same of the flags of one direction. */
static inline void
flag_read_add(struct dpmon_flag_ctr *dst, const struct dpmon_flag_ctr *src)
{
	for (int f = 0; f < DPMON_FLAG_MAX; f++) {
		dst->flag[f].packets += dpmon_count_read(&src->flag[f].packets);
		dst->flag[f].bytes += dpmon_count_read(&src->flag[f].bytes);
	}
}

/* The same of both directions, protocols and flags. */
static inline void
pair_read_add(struct dpmon_pair_ctr *dst, const struct dpmon_pair_ctr *src)
{
	dir_read_add(&dst->dir[0], &src->dir[0]);
	dir_read_add(&dst->dir[1], &src->dir[1]);
	flag_read_add(&dst->flags[0], &src->flags[0]);
	flag_read_add(&dst->flags[1], &src->flags[1]);
}

/**
 * Cumulative values and rates of one direction into @p out (its averages
 * untouched): each protocol class's, from @p cur and @p prev, their sum,
 * and each packet kind's, from @p flag_cur and @p flag_prev; rates per second over
 * @p dt seconds, bps in bits.
 *
 * In merge.c, a call from record_write (once per direction of each
 * written record) as it was before the split: as a static inline here,
 * GCC inlined it and merge_avg_update into record_write, and the records
 * then took 19 % more instructions (callgrind, 20 000 hosts x 4 tables).
 */
void merge_dir_stats(struct dpmon_dir_stats *out, const struct dpmon_dir_ctr *cur,
		     const struct dpmon_flag_ctr *flag_cur, const struct dpmon_dir_ctr *prev,
		     const struct dpmon_flag_ctr *flag_prev, double dt);

/**
 * Step the averages @p a, first scaled by @p k (a host's, decayed to the
 * previous merge: record_write; 1 for totals and subnets), with @p d's
 * rates (total, each protocol class, each packet kind's pps) and this
 * merge's weight avg.alpha, and store them in @p d. In merge.c, a call as
 * merge_dir_stats is.
 */
void merge_avg_update(const struct dpmon_merge *m, struct dpmon_dir_stats *d, struct avg_dir *a,
		      double k);

/* ------------------------------------------------------------------------
 * Global hosts (merge_hosts.c). Main lcore.
 * --------------------------------------------------------------------- */

/**
 * Create the address → global id hash and room for the first 1024 hosts.
 * @param entries  worker table entries in all; the hash holds twice as
 *                 many (clamped to 8 .. UINT32_MAX / 2): the hosts listed,
 *                 at most one per entry, and those whose last entry
 *                 retired, until the next merge removes them.
 * @return 0, or -ENOMEM (merge_hosts_free frees what was made).
 */
int merge_hosts_init(struct dpmon_merge *m, uint64_t entries);

/** Free the hash and every array indexed by global id (merge_hosts_init). */
void merge_hosts_free(struct dpmon_merge *m);

/**
 * Map the hosts each worker published since the last merge: a global id
 * for each new worker entry, a new id for an address not seen yet, and
 * the entry chained to the host's other entries (fold.first).
 * @return 0, or -ENOMEM, -ENOSPC (the hash is full): the entries mapped
 *         so far stay mapped, the next call continues.
 */
int merge_map_new_hosts(struct dpmon_merge *m);

/**
 * Global id of @p a (subnet @p subnet, as worker table @p c classified it
 * under its generation, which also gives its host prefix length),
 * creating the host (a removed host's id, else a new one) on first sight,
 * listed in hosts.new_ids.
 * @return the id, or -ENOMEM, -ENOSPC (the hash is full).
 */
int64_t merge_global_id(struct dpmon_merge *m, const struct dpmon_addr *a, uint32_t subnet,
			unsigned c);

/** Map entry @p i of core @p c to global id @p id: live, chained, touched now. */
void merge_map_entry(struct dpmon_merge *m, unsigned c, uint32_t i, uint32_t id);

/**
 * Merge the new ids not sorted yet (hosts.new_ids) into hosts.sorted,
 * by address (and mark records.order stale when there were).
 * @return 0, or -ENOMEM (nothing changed).
 */
int merge_sort_new_hosts(struct dpmon_merge *m);

/* ------------------------------------------------------------------------
 * Worker entries (merge_entry.c, and merge_entry_read_add inline here):
 * a leaf that merge_fold.c and merge_life.c call, which calls neither.
 * Main lcore, concurrent with the workers.
 * --------------------------------------------------------------------- */

/**
 * Apply the carry records core @p c pushed since the last call.
 * @return 0, or -ENOMEM (the records not consumed stay queued).
 */
int merge_consume_carries(struct dpmon_merge *m, unsigned c);

/**
 * Add worker entry @p idx of core @p c (low words plus the high words
 * kept from its carries) to @p dst. Inline: the fold calls it for every
 * entry of every touched host.
 */
static inline void
merge_entry_read_add(const struct dpmon_merge *m, unsigned c, uint32_t idx,
		     struct dpmon_pair_ctr *dst)
{
	const struct dpmon_core *core = m->workers.core[c];
	const struct dpmon_host_ctr *h = &core->hosts[idx];
	uint32_t xi = __atomic_load_n(&core->meta[idx].flag_idx, __ATOMIC_RELAXED);
	uint32_t ci = m->workers.map[c].carry[idx];
	const struct carry_hi *hi = ci ? &m->fold.carries[ci - 1] : NULL;

	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		for (int p = 0; p < DPMON_PROTO_MAX; p++) {
			uint32_t s = dpmon_host_slot((unsigned)d, (unsigned)p);
			uint64_t pk = dpmon_count_read32(&h->packets[d][p]);
			uint64_t by = dpmon_count_read32(&h->bytes[d][p]);

			if (hi != NULL) {
				pk += (uint64_t)hi->hi[s] << 32;
				by += (uint64_t)hi->hi[s + DPMON_HOST_BASE_SLOTS / 2] << 32;
			}
			dst->dir[d].proto[p].packets += pk;
			dst->dir[d].proto[p].bytes += by;
		}
	}
	if (xi == 0)
		return;
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		const struct dpmon_host_flag_ctr *x = &core->flag_lines[xi - 1];

		for (int k = 0; k < DPMON_FLAG_MAX; k++) {
			uint32_t s = dpmon_host_flag_slot((unsigned)d, (unsigned)k);
			uint64_t pk = dpmon_count_read32(&x->packets[d][k]);
			uint64_t by = dpmon_count_read32(&x->bytes[d][k]);

			if (hi != NULL) {
				pk += (uint64_t)hi->hi[s] << 32;
				by += (uint64_t)hi->hi[s + DPMON_DIR_MAX * DPMON_FLAG_MAX] << 32;
			}
			dst->flags[d].flag[k].packets += pk;
			dst->flags[d].flag[k].bytes += by;
		}
	}
}

/**
 * Ask core @p c to retire entry @p i, last stamped @p stamp, for @p why.
 * @return false when its retire ring is full (nothing asked).
 */
bool merge_retire_request(struct dpmon_merge *m, unsigned c, uint32_t i, uint32_t stamp,
			  enum dpmon_retire_why why);

/** Retire requests core @p c's ring takes now (at most a merge's share). */
uint32_t merge_retire_budget(const struct dpmon_merge *m, unsigned c);

/* ------------------------------------------------------------------------
 * The fold (merge_fold.c). Main lcore, concurrent with the workers.
 * --------------------------------------------------------------------- */

/**
 * Mark the global ids of entries stamped since each worker's previous
 * epoch (workers.map[].w_prev) into fold.touched, and ask for the
 * retirement of the others idle for host_idle_timeout_s (in the same pass
 * over the stamps), with a count of its own
 * (fold.n_collects): a merge that fails after this leaves nothing to undo
 * (w_prev does not advance, so the next call marks the same hosts again,
 * and more).
 */
void merge_collect_touched(struct dpmon_merge *m);

/**
 * Cumulative counters of every touched host into fold.g_cur, consistent
 * with the carries, and its flows and peers (current epoch) into
 * fold.t_fp, in the same visit of its worker entries, while their lines
 * are in the cache. Waits while a worker is between the two stores of a
 * carry, and reads again when a worker carried meanwhile (wrap_seq).
 * @return 0, or -ENOMEM (a carry record could not be kept; the carries
 *         not consumed stay queued for the next merge).
 */
int merge_fold_touched(struct dpmon_merge *m);

/* ------------------------------------------------------------------------
 * The hosts' life cycle (merge_life.c). Main lcore, concurrent with the
 * workers.
 * --------------------------------------------------------------------- */

/**
 * Read every worker's event ring: DEAD entries (their final counts into
 * their host's base, unchained, freed; a host left without entries is
 * queued for removal), KEPT ones (live again), NEW ones (mapped to their
 * host, which may be new). Then hand the freed entries to the workers.
 * @return 0, or -ENOMEM, -ENOSPC (as merge_map_new_hosts: the next call
 *         goes on where this one stopped).
 */
int merge_drain_events(struct dpmon_merge *m);

/**
 * Drain the event rings until every retire request has its answer, or
 * for at most ANSWER_WAIT_MS (2 ms; merge_life.c): a worker polling
 * answers within one round, so the entries it frees serve the next
 * interval's new hosts. Returns early on an error (the next merge's
 * drain retries it).
 */
void merge_await_answers(struct dpmon_merge *m);

/**
 * Remove the hosts queued by merge_drain_events that still have no
 * worker entry: out of the hash, the order and the records; their ids
 * free for reuse.
 */
void merge_remove_dying(struct dpmon_merge *m);

/**
 * Ask the workers to retire, on a table about to run out of never-used
 * entries, the least recently active entries (not touched in this
 * merge's interval nor since, not pinned) until the free entries in
 * flight reach what the table keeps free (merge_life.c). After
 * merge_collect_touched, which asks for the idle ones.
 */
void merge_request_retire(struct dpmon_merge *m);

/* ------------------------------------------------------------------------
 * Snapshot records (merge_records.c). Main lcore.
 * --------------------------------------------------------------------- */

/**
 * The hosts of @p s: write this merge's records (the touched hosts', with
 * their rates over @p dt seconds, and the new hosts'), compact the slabs,
 * and list in s->host_at, by address, every monitored host's current
 * record, with a reference to each slab in s->slabs. After a reload every
 * record is first copied, with its new subnet (reload.resubnet).
 * Call after merge_fold_touched, with clock and avg set for this merge.
 * @return 0, or -ENOMEM: no record of this merge is listed (a reload's
 *         moves may be done: they change no value); s->slabs may be
 *         allocated, and is freed with @p s.
 */
int merge_fill_hosts(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt);

/** Global id @p id leaves: its record is no longer current, nor listed. */
void merge_record_drop(struct dpmon_merge *m, uint32_t id);

/* ------------------------------------------------------------------------
 * Flows and history (merge_history.c). Main lcore, concurrent with the
 * workers.
 * --------------------------------------------------------------------- */

/**
 * Distinct flows of the totals and subnets of @p s, in the current epoch
 * (the ingress and egress totals, both directions of each subnet; -1
 * where none is measured, or a subnet's pool ran out), and peers -1
 * (not measured). Drops the retired generation (reload.retired): its
 * sketches served their last interval.
 */
void merge_fill_flows(struct dpmon_merge *m, struct dpmon_snapshot *s);

/*
 * The packets from ignored sources (merge_ignored.c): fold every worker's
 * side table (the retired generation's last counts too, so before
 * merge_fill_flows drops it) into @p s's ignored hosts and subnets, rates
 * over @p dt s and averages. @return 0 or -ENOMEM (@p s then lists none).
 */
int merge_fill_ignored(struct dpmon_merge *m, struct dpmon_snapshot *s, double dt);

/* Free what merge_fill_ignored keeps. */
void merge_ignored_free(struct dpmon_merge *m);

/**
 * Append the rates of @p s (totals and subnets, filled) to the history
 * ring and give @p s a reference to every point kept. On allocation
 * failure the snapshot simply has no history (n_history 0); the ring is
 * unchanged.
 */
void merge_fill_history(struct dpmon_merge *m, struct dpmon_snapshot *s);

#endif /* DPMON_MERGE_PRIVATE_H */
