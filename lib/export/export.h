/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.h — every interval's counts to ClickHouse and InfluxDB, for
 * long-term history and one view over a fleet (docs/export.md).
 *
 * One exporter per configured backend, each its own thread on the control
 * side (never a worker lcore, never the HTTP thread). After each
 * publication the main lcore hands every exporter the new snapshot by
 * reference (dpmon_export_offer: a single-producer, single-consumer
 * rte_ring of snapshot pointers, never a copy, never a wait). The
 * exporter turns it into one batch of rows holding the interval's deltas
 * (the snapshot's cumulative counters minus those of the previous
 * snapshot it saw: export_rows.c), keeps the batches in a bounded spool
 * and sends them in order, retrying with exponential backoff while the
 * server is away. A full spool drops its oldest batch and counts it.
 */
#ifndef DPMON_EXPORT_H
#define DPMON_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "snapshot.h"

struct dpmon_export;

/**
 * Start one exporter thread per backend that @p cfg enables (none: an
 * exporter set with nothing to do, which every call accepts). Creates
 * nothing on the servers yet: the thread does (database, tables) before
 * its first batch, and retries while they are away.
 * @param cfg    the "export" section; copied.
 * @param store  where the offered snapshots' references are dropped.
 * @return the exporters, or NULL with errno set (ENOMEM, or a pthread
 *         error).
 * Thread-safety: main lcore, once at start-up.
 */
struct dpmon_export *dpmon_export_create(const struct dpmon_export_conf *cfg,
					 struct dpmon_snap_store *store);

/**
 * Hand snapshot @p s (just published) to every exporter: each takes a
 * reference (dpmon_snap_acquire's) and queues it; an exporter whose queue
 * is full skips it and counts handoff_skipped (its next batch then covers
 * both intervals: deltas lose nothing). Never blocks.
 * @param ex  NULL is ignored.
 * @param s   a published snapshot of @p store, referenced by the caller.
 * Thread-safety: main lcore only (the single producer).
 */
void dpmon_export_offer(struct dpmon_export *ex, struct dpmon_snapshot *s);

/**
 * Each exporter's counters into @p out (at most @p max entries).
 * @return the number of exporters (may exceed @p max; 0 for NULL @p ex).
 * Thread-safety: any thread.
 */
uint32_t dpmon_export_stats(struct dpmon_export *ex, struct dpmon_snap_exporter *out, uint32_t max);

/**
 * SIGHUP: the section @p cfg takes effect from the next batch (servers,
 * credentials, instance, spool limits). An exporter whose backend was
 * removed stops after sending its spool within flush_timeout_ms, and is
 * kept stopped with its last snapshot and what it could not send; added
 * again, it goes on from there (no interval sent twice or lost). A
 * backend configured for the first time starts with the counts since
 * start. Between two merges.
 * @return 0, or -ENOMEM / a pthread error (what could not start is logged;
 *         the others run with the new settings).
 * Thread-safety: main lcore only.
 */
int dpmon_export_reconfigure(struct dpmon_export *ex, const struct dpmon_export_conf *cfg);

/**
 * Stop: every exporter encodes what is queued, sends its spool for at
 * most flush_timeout_ms, counts what is left as dropped_intervals, drops
 * its references and exits; then free. Call after the last offer.
 * @param ex  NULL is ignored.
 * Thread-safety: main lcore only.
 */
void dpmon_export_free(struct dpmon_export *ex);

/**
 * Print the SQL that creates the ClickHouse database and tables to @p out.
 * @param cfg      database, ttl_days of export.clickhouse.
 * @param cluster  NULL: single server (MergeTree); else the cluster form
 *                 for that cluster name: ReplicatedMergeTree tables
 *                 (`*_local`) on every node, and Distributed tables over
 *                 them under the plain names.
 * @return 0, or -EINVAL for a bad cluster name.
 * Thread-safety: any thread.
 */
int dpmon_export_print_schema(const struct dpmon_export_conf *cfg, const char *cluster, FILE *out);

#endif /* DPMON_EXPORT_H */
