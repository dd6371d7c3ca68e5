/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * snapshot.h — the immutable result of one merge, and its publication.
 *
 * The main lcore builds a struct dpmon_snapshot every interval from the
 * worker lcores' tables (merge*.c) and publishes it here. Readers (the HTTP
 * server's thread, telemetry) take a reference, render from it at leisure
 * and drop the reference; the last reference frees it. A snapshot is never
 * written after publication, so readers need no lock and never touch
 * worker memory; a slow reader only delays the freeing of its own snapshot.
 *
 * Units: packets and bytes are cumulative since start (bytes = frame length
 * as received, L2 header included, FCS excluded); pps and bps are the last
 * interval's rates, divided by the measured interval (bps in bits/s).
 *
 * Hosts are shared between snapshots. A merge writes a new record only for
 * the hosts it touched (traffic in the interval); every other host keeps
 * the record of the merge that last touched it, in a slab (a refcounted
 * block of records) that the snapshot holds a reference to. Such a record
 * is as of its own merge (seq, t_s): its interval rates are those of that
 * merge, and its averages those after that merge's step. A reader gets the
 * host's values as of the snapshot through dpmon_snap_host_dir (or
 * dpmon_snap_host_fresh and dpmon_snap_host_decay): rates are zero when
 * the record is older than the snapshot, and averages are decayed by
 * exp(-(uptime_s - t_s) / tau), which is exactly the chain of EWMA steps
 * with rate 0 the merges in between would have made (rates.h); a reload
 * that changes tau brings every record to the previous merge with the old
 * tau first (merge_records.c), so tau applies only from there on. A record
 * with seq 0 (a snapshot filled by hand, dpmon_snapshot_alloc) is current
 * in any snapshot.
 */
#ifndef DPMON_SNAPSHOT_H
#define DPMON_SNAPSHOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "alert.h"
#include "config.h"
#include "port.h"
#include "prefix.h"
#include "rates.h"
#include "stats.h"

/** Host orders a snapshot keeps: a reader numbers its rankings 0..63 (host_order.h). */
#define DPMON_HOST_ORDER_SLOTS 64

/**
 * The hosts' orders by ranking that readers build on first use
 * (host_order.c), kept with the snapshot: plain data that the snapshot
 * creates and frees without calling the code that builds the orders.
 * Each slot is NULL until built, then one malloc'd block (freed with
 * free()), published once with a release store under @c lock.
 */
struct dpmon_host_orders {
	pthread_mutex_t lock; /**< held while an order is built */
	void *slot[DPMON_HOST_ORDER_SLOTS];
};

/** Counters and rates of one protocol class (or of the total). */
struct dpmon_rate {
	uint64_t packets; /**< cumulative since start */
	uint64_t bytes;   /**< cumulative since start, frame bytes */
	double pps;       /**< packets per second over the last interval */
	double bps;       /**< bits per second over the last interval */
};

/**
 * One direction: the total, each protocol class, and the flags
 * counted besides (fragments, tcp_syn: not part of the total's sum).
 */
struct dpmon_dir_stats {
	struct dpmon_rate total;
	struct dpmon_rate proto[DPMON_PROTO_MAX];
	struct dpmon_rate flag[DPMON_FLAG_MAX];
	/**
	 * Exponentially weighted moving averages of total.pps and total.bps
	 * (time constant average_time_constant_ms, measured intervals: rates.h).
	 */
	double avg_pps, avg_bps;
	/**
	 * The same averages of proto[p].pps and proto[p].bps, and of
	 * flag[k].pps (fragments, tcp_syn): what detection thresholds compare
	 * with (docs/detection.md).
	 */
	double avg_proto_pps[DPMON_PROTO_MAX], avg_proto_bps[DPMON_PROTO_MAX];
	double avg_flag_pps[DPMON_FLAG_MAX];
	/**
	 * Distinct 5-tuples seen in the last interval (HyperLogLog estimate,
	 * or linear counting for a host's first ones: counters.h); -1 when not
	 * measured (internal/external totals; a subnet past
	 * DPMON_FLOW_SUBNETS_MAX for which a worker's pool was empty).
	 */
	double flows;
	/**
	 * Distinct remote addresses seen in the last interval (hosts: the
	 * sources of ingress packets, the destinations of egress ones); -1
	 * when not measured (totals, subnets).
	 */
	double peers;
};

struct dpmon_snap_subnet {
	struct dpmon_prefix prefix;
	char name[DPMON_NAME_LEN];
	/**
	 * Its hosts are prefixes of this length, in bits of its family (its
	 * host_prefix_len; 0 in a snapshot filled by hand: whole addresses).
	 * Every host the snapshot lists in it is one: dpmon_snap_host_len.
	 */
	uint8_t host_prefix_len;
	struct dpmon_dir_stats dir[DPMON_DIR_MAX];
};

struct dpmon_snap_host {
	struct dpmon_addr addr;
	uint32_t subnet; /**< index into dpmon_snapshot.subnets */
	/**
	 * The merge this record is as of (dpmon_snapshot.seq): dir[] holds its
	 * interval rates and its averages; 0 = as of any snapshot (filled by
	 * hand). Read through dpmon_snap_host_dir (see the file comment).
	 */
	uint64_t seq;
	double t_s; /**< that merge's uptime_s, seconds */
	/**
	 * Wall-clock times (Unix seconds, from the merge clock) of the merge
	 * that first listed this host, and of the last merge that saw it send
	 * or receive (a host that left and came back starts anew).
	 */
	double first_seen, last_seen;
	struct dpmon_dir_stats dir[DPMON_DIR_MAX];
};

/**
 * The packets one host received from ignored sources
 * (detection.ignore_sources), as of the snapshot that lists it: what
 * detection subtracts from the host's ingress before it compares with the
 * thresholds. Its rates and averages are the ingress metrics' own
 * (flows and peers -1: not measured).
 */
struct dpmon_snap_ignored {
	struct dpmon_addr addr; /**< the host, as dpmon_snap_host.addr */
	uint32_t subnet;        /**< index into dpmon_snapshot.subnets */
	struct dpmon_dir_stats in;
};

/**
 * Host records written by one merge, shared by every snapshot that lists
 * one of them (refcounted with atomics: dropped by whichever thread frees
 * a snapshot). Written by the merge before the first snapshot that lists
 * them is published; immutable after.
 */
struct dpmon_host_slab {
	int refs;
	uint32_t n;    /**< records written */
	uint32_t cap;  /**< records allocated */
	uint32_t live; /**< records still current in the merger; main lcore only */
	uint32_t *gid; /**< merger's global id of each record; main lcore only */
	struct dpmon_snap_host h[];
};

/** A slab with room for @p cap records, one reference. NULL on failure. Any thread. */
struct dpmon_host_slab *dpmon_host_slab_alloc(uint32_t cap);

/** Take a reference to @p b. Any thread. */
void dpmon_host_slab_ref(struct dpmon_host_slab *b);

/** Drop a reference; the last one frees. NULL ignored. Any thread. */
void dpmon_host_slab_unref(struct dpmon_host_slab *b);

/** Counters of one worker lcore (cumulative). */
struct dpmon_snap_worker {
	unsigned lcore;
	uint64_t packets; /**< mbufs received */
	uint64_t bursts;  /**< rx bursts that returned at least one mbuf */
	uint64_t
		host_table_full; /**< host updates lost to a full table (a packet between two monitored hosts is two updates) */
	uint64_t host_v4mapped;  /**< IPv6 host updates skipped: IPv4-mapped address */
	uint64_t host_ext_full;  /**< fragment/SYN host updates lost: no flag line left */
	uint64_t host_flow_full; /**< host directions not promoted: no full flow sketch left */
	uint64_t
		host_evictions; /**< entries retired because the table was full (least recently active) */
	uint64_t host_expired; /**< entries retired after host_idle_timeout_s without a packet */
	/** packets from ignored sources its side table had no slot for (ignored.h) */
	uint64_t ignored_full;
	uint64_t hosts;         /**< entries in use in its host table */
	uint64_t host_capacity; /**< size of its host table (host_table_capacity) */
	uint64_t polls;         /**< rx_burst calls, empty ones included */
	double busy_s;          /**< seconds spent in non-empty bursts, cumulative */
	double busy_ratio;      /**< share of the last interval spent in non-empty bursts, 0..1 */
};

/** Rates of one direction in a history point. */
struct dpmon_hist_rate {
	double pps, bps;
};

/**
 * One merge's rates of the totals and subnets, for GET /api/v1/history.
 * Immutable once built; shared by the snapshots that list it (refcounted
 * with atomics: dropped by whichever thread frees a snapshot).
 */
struct dpmon_hist_point {
	int refs;
	uint64_t seq;
	double uptime_s;
	double interval_s;
	struct dpmon_hist_rate totals[DPMON_TOTAL_MAX];
	uint32_t n_subnets;
	struct dpmon_hist_rate sub[]; /**< [subnet * DPMON_DIR_MAX + dir] */
};

/** A history point with room for @p n_subnets, one reference. NULL on failure. */
struct dpmon_hist_point *dpmon_hist_point_alloc(uint32_t n_subnets);

/** Take a reference to @p p. Any thread. */
void dpmon_hist_point_ref(struct dpmon_hist_point *p);

/** Drop a reference; the last one frees. NULL ignored. Any thread. */
void dpmon_hist_point_unref(struct dpmon_hist_point *p);

/** Room for the reason of a refused reload, NUL included (longer ones are cut). */
#define DPMON_REFUSAL_REASON_LEN 256

/** Configuration reloads (SIGHUP) since start, as of the snapshot. */
struct dpmon_snap_config {
	uint64_t reloads;          /**< reloads applied */
	uint64_t reload_failures;  /**< reloads refused (invalid file) or failed */
	double last_reload_unix_s; /**< time of the last attempt (Unix s); 0 = none yet */
	bool last_reload_ok;       /**< its result; false when none yet */
	/** Reloads refused, among reload_failures: the file could not be
	 * read (not a regular file, too large, missing) or was invalid. */
	uint64_t reload_refusals;
	/** The last refusal: its time (Unix s; 0 = none yet), the file, the
	 * number of errors found and the first one's text, without the file
	 * name ("$.subnets[0].prefix: bad CIDR", "cannot read: not a regular
	 * file (FIFO)"). */
	double last_refusal_unix_s;
	uint32_t last_refusal_errors;
	char last_refusal_file[DPMON_PATH_LEN];
	char last_refusal_reason[DPMON_REFUSAL_REASON_LEN];
};

/** What the actions and the sampler did since start, as of the snapshot. */
struct dpmon_snap_actions {
	uint64_t events_dropped;     /**< action events refused on a full queue */
	uint64_t notify_ok;          /**< notify script runs that exited 0 */
	uint64_t notify_failed;      /**< runs that could not start, exited non-zero or died */
	uint64_t notify_killed;      /**< runs killed at notify_timeout_ms */
	uint64_t sample_copied;      /**< packets the workers copied for alert samples */
	uint64_t sample_dropped;     /**< copies dropped on a full sampler ring */
	uint32_t blackholes;         /**< entries in the blackhole list */
	uint32_t flowspec_rules;     /**< FlowSpec rules in the list (announced or dry run) */
	uint64_t flowspec_announced; /**< FlowSpec rules handed to ExaBGP's pipe since start */
	uint64_t flowspec_refused;   /**< FlowSpec rules refused by flowspec.max_rules */
	bool exabgp_configured;      /**< actions.exabgp_pipe is set */
	bool exabgp_connected;       /**< ExaBGP's pipe is open (a reader is there) */
};

/**
 * One exporter's counters since start (lib/export, docs/export.md), as of
 * the snapshot: filled by the caller of the merge from
 * dpmon_export_stats.
 */
struct dpmon_snap_exporter {
	char name[16];              /**< "clickhouse", "influxdb" */
	uint64_t intervals;         /**< snapshots encoded into a batch */
	uint64_t rows;              /**< rows (ClickHouse) or points (InfluxDB) the server took */
	uint64_t batches;           /**< batches (one interval's rows) sent completely */
	uint64_t failures;          /**< requests that failed (no answer, or not 2xx) */
	uint64_t dropped_intervals; /**< batches dropped unsent: full spool, or left at stop */
	uint64_t
		handoff_skipped; /**< snapshots not handed over (queue full): folded into the next */
	uint32_t spool_depth;    /**< batches waiting to be sent */
	uint64_t spool_bytes;    /**< their encoded size, bytes */
	double last_success_unix_s; /**< last batch sent, Unix seconds; 0 = none yet */
	double last_error_unix_s;   /**< last failure, Unix seconds; 0 = none yet */
	char last_error[192];       /**< its reason; "" = none yet */
	/** CLOCK_MONOTONIC ns of the exporter thread's last loop round (beaten while it waits too). */
	uint64_t last_progress_ns;
	double progress_age_s; /**< seconds from it to when these counters were read */
	double cpu_s;          /**< the exporter thread's CPU time since start, seconds */
	double encode_s;       /**< CPU seconds the last interval's encoding took */
	uint32_t last_rows;    /**< rows (points) of the last interval's batch */
};

/** Most exporters a snapshot reports (one per backend). */
#define DPMON_SNAP_EXPORTERS_MAX 4

struct dpmon_snapshot {
	uint64_t seq;         /**< 1 for the first merge, +1 each merge */
	double uptime_s;      /**< seconds since start */
	double interval_s;    /**< measured length of the last interval, seconds */
	double merge_s;       /**< time the merge took, seconds */
	uint32_t interval_ms; /**< configured merge interval */

	struct dpmon_dir_stats totals[DPMON_TOTAL_MAX];
	uint64_t parse_errors[DPMON_REASON_MAX]; /**< [DPMON_REASON_OK] unused */
	uint64_t anomalies[DPMON_ANOM_MAX];      /**< IP packets counted with an anomaly */
	uint64_t ip_stats[DPMON_IPSTAT_MAX];     /**< IP packets counted, by kind */

	uint32_t n_ports;
	struct dpmon_port_stats *ports;
	uint32_t n_workers;
	struct dpmon_snap_worker *workers;
	uint32_t n_subnets;
	struct dpmon_snap_subnet *subnets; /**< in configuration order */
	uint32_t n_hosts;
	/**
	 * The host records, sorted by address (dpmon_addr_cmp): read them with
	 * dpmon_snap_host_at. Those of a merge's snapshot live in @c slabs;
	 * those of dpmon_snapshot_alloc in @c hosts.
	 */
	const struct dpmon_snap_host **host_at;
	/** dpmon_snapshot_alloc only: the records, host_at[i] == &hosts[i]; NULL otherwise. */
	struct dpmon_snap_host *hosts;
	uint32_t n_slabs;
	struct dpmon_host_slab **slabs; /**< one reference each */
	double avg_tau_s; /**< time constant of the averages, seconds (average_time_constant_ms) */
	/** "flow_sketches": false: no flows or peers measured; every one is -1 (null). */
	bool no_flows;
	/**
	 * Hosts that received packets from ignored sources lately (their
	 * averages not yet decayed to nothing), sorted by address; malloc'd,
	 * NULL when none. The packets are in every counter above too.
	 */
	uint32_t n_ignored;
	struct dpmon_snap_ignored *ignored;
	/**
	 * n_subnets entries: each subnet's ingress from ignored sources
	 * (malloc'd), NULL when no source is ignored.
	 */
	struct dpmon_dir_stats *ignored_subnets;
	/** Packets from ignored sources the workers' side tables had no slot for (cumulative). */
	uint64_t ignored_full;
	/** The last merges' rates, oldest first, this one last; one reference each. */
	uint32_t n_history;
	struct dpmon_hist_point **history;
	struct dpmon_snap_config config; /**< reload status (filled by the caller of the merge) */
	struct dpmon_snap_actions
		actions;      /**< actions and sampler (filled by the caller of the merge) */
	uint32_t n_exporters; /**< exporters configured (filled by the caller of the merge) */
	struct dpmon_snap_exporter exporters[DPMON_SNAP_EXPORTERS_MAX];

	/**
	 * Alerts (detect.h): the active ones and the most recent ended ones,
	 * newest first (id descending); one reference each. Counts: active
	 * alerts, and alerts started since start-up (hosts and subnets); of
	 * them, the subnet alerts (target "subnet").
	 */
	uint32_t n_alerts;
	struct dpmon_alert **alerts;
	uint32_t alerts_active;
	uint64_t alerts_started;
	uint32_t subnet_alerts_active;
	uint64_t subnet_alerts_started;
	double alerts_unix_s; /**< wall-clock time of the detection run, seconds since the epoch */

	/**
	 * The hosts' orders by ranking, built by readers on first use
	 * (host_order.h); allocated with the snapshot, freed with it (each
	 * built slot with free()). The only part of a snapshot that changes
	 * after publication, under its own lock.
	 */
	struct dpmon_host_orders *orders;

	int refs;             /**< managed by the store; do not touch */
	uint32_t host_at_cap; /**< entries allocated at @c host_at; private to snapshot.c */
};

/**
 * Allocate a zeroed snapshot with room for the given counts (all arrays
 * allocated, counts set). @return NULL on allocation failure.
 * Thread-safety: any thread.
 */
struct dpmon_snapshot *dpmon_snapshot_alloc(uint32_t n_ports, uint32_t n_workers,
					    uint32_t n_subnets, uint32_t n_hosts);

/**
 * As dpmon_snapshot_alloc, but with no host records: host_at (n_hosts
 * entries) is not initialised and @c hosts is NULL; the caller points
 * every host_at entry into slabs it lists in @c slabs (the merge does).
 * The host_at array may be a recycled one, which spares a large snapshot
 * its page faults. @return NULL on allocation failure. Thread-safety: any
 * thread.
 */
struct dpmon_snapshot *dpmon_snapshot_alloc_shared_hosts(uint32_t n_ports, uint32_t n_workers,
							 uint32_t n_subnets, uint32_t n_hosts);

/** Host @p i (< s->n_hosts) of @p s in address order. Any thread. */
static inline const struct dpmon_snap_host *
dpmon_snap_host_at(const struct dpmon_snapshot *s, uint32_t i)
{
	return s->host_at[i];
}

/** Hosts a loop over every host reads ahead with dpmon_snap_host_prefetch. */
#define DPMON_SNAP_PREFETCH_AHEAD 8

/**
 * Hint that host @p i will be read soon (its address, and direction
 * @p d's total and averages), if it exists: a loop over every host reads
 * records scattered over the slabs, a cache miss each that the hardware
 * cannot predict. Any thread.
 */
static inline void
dpmon_snap_host_prefetch(const struct dpmon_snapshot *s, uint32_t i, int d)
{
	if (i < s->n_hosts) {
		const struct dpmon_snap_host *h = s->host_at[i];

		__builtin_prefetch(h);
		__builtin_prefetch(&h->dir[d].total);
		__builtin_prefetch(&h->dir[d].avg_pps);
	}
}

/** Multiply every average of @p d (avg_pps, avg_bps, avg_proto_*, avg_flag_pps) by @p k. Any thread. */
static inline void
dpmon_dir_avgs_scale(struct dpmon_dir_stats *d, double k)
{
	d->avg_pps *= k;
	d->avg_bps *= k;
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		d->avg_proto_pps[p] *= k;
		d->avg_proto_bps[p] *= k;
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++)
		d->avg_flag_pps[f] *= k;
}

/** True when @p h's rates are those of snapshot @p s (else they are 0 in @p s). Any thread. */
static inline bool
dpmon_snap_host_fresh(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h)
{
	return h->seq == 0 || h->seq == s->seq;
}

/** Factor from @p h's stored averages to their values in snapshot @p s (0..1). Any thread. */
static inline double
dpmon_snap_host_decay(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h)
{
	return h->seq == 0 ? 1.0 : dpmon_avg_decay(s->uptime_s - h->t_s, s->avg_tau_s);
}

/**
 * Direction @p d of host @p h as of snapshot @p s: @p h's own stats when
 * its record is as of @p s, else a copy in @p tmp with the interval rates,
 * flows and peers zero (flows and peers -1 with s->no_flows) and the
 * averages decayed (file comment).
 * Cumulative counts are always the record's. @return &h->dir[d] or @p tmp.
 * Thread-safety: any thread.
 */
const struct dpmon_dir_stats *dpmon_snap_host_dir(const struct dpmon_snapshot *s,
						  const struct dpmon_snap_host *h, int d,
						  struct dpmon_dir_stats *tmp);

/**
 * The length, in bits of its family, of the prefix host @p h of @p s
 * stands for (its address is that prefix's network address): its
 * subnet's host_prefix_len; 32 or 128 (a whole address) when that is 0 or
 * the host has no subnet. Any thread.
 */
static inline unsigned
dpmon_snap_host_len(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h)
{
	unsigned full = dpmon_family_bits(dpmon_addr_is_v4(&h->addr) ? 4 : 6);

	if (h->subnet >= s->n_subnets || s->subnets[h->subnet].host_prefix_len == 0)
		return full;
	return s->subnets[h->subnet].host_prefix_len;
}

/** Free a snapshot that was never published. */
void dpmon_snapshot_free(struct dpmon_snapshot *s);

/**
 * Find a host by address with binary search. @return the host or NULL.
 */
const struct dpmon_snap_host *dpmon_snapshot_find_host(const struct dpmon_snapshot *s,
						       const struct dpmon_addr *a);

/**
 * Find a subnet by exact prefix. @return its index or -1.
 */
int dpmon_snapshot_find_subnet(const struct dpmon_snapshot *s, const struct dpmon_prefix *p);

/** Where the current snapshot lives. Initialise with dpmon_snap_store_init. */
struct dpmon_snap_store {
	pthread_mutex_t lock; /**< guards @c current and refcounts, held for a few ns */
	struct dpmon_snapshot *current;
};

/** Initialise @p st empty (no current snapshot) with its lock. Thread-safety: before any reader. */
void dpmon_snap_store_init(struct dpmon_snap_store *st);

/**
 * Publish @p s (ownership passes to the store) and drop the store's
 * reference to the previous one. Thread-safety: one publisher (main lcore);
 * concurrent with any number of dpmon_snap_acquire callers.
 */
void dpmon_snap_publish(struct dpmon_snap_store *st, struct dpmon_snapshot *s);

/**
 * Take a reference to the current snapshot. @return NULL before the first
 * publication. Pair with dpmon_snap_release. Thread-safety: any thread.
 */
struct dpmon_snapshot *dpmon_snap_acquire(struct dpmon_snap_store *st);

/** Drop a reference taken by dpmon_snap_acquire. Thread-safety: any thread. */
void dpmon_snap_release(struct dpmon_snap_store *st, struct dpmon_snapshot *s);

/** Drop the current snapshot (shutdown). */
void dpmon_snap_store_destroy(struct dpmon_snap_store *st);

#endif /* DPMON_SNAPSHOT_H */
