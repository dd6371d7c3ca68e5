/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * top.h — the top hosts of a snapshot: by any ranking for the API's
 * sorted host lists, and by bytes for the operators' views that can only
 * show a few hosts (/metrics, DPDK telemetry).
 *
 * The rank is cumulative bytes, ingress + egress (a stable order: unlike a
 * rate it does not reshuffle every interval), ties broken by address so
 * the result is deterministic. One pass with a bounded min-heap:
 * O(hosts × log n) time and O(n) memory, whatever the number of hosts.
 */
#ifndef DPMON_TOP_H
#define DPMON_TOP_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

/**
 * Ranking for dpmon_top_hosts_by: true when host @p x ranks before @p y.
 * Must be a strict total order (break ties, e.g. by address) so the result
 * is deterministic. @p ctx is the caller's.
 */
typedef bool (*dpmon_top_before_fn)(const struct dpmon_snap_host *x,
				    const struct dpmon_snap_host *y, const void *ctx);

/**
 * Pick the top @p n hosts of @p s by the ranking @p before (with @p ctx);
 * the other arguments and the return value as dpmon_top_hosts.
 * Thread-safety: any thread; reads only @p s.
 */
uint32_t dpmon_top_hosts_by(const struct dpmon_snapshot *s, int subnet, uint32_t n,
			    dpmon_top_before_fn before, const void *ctx, uint32_t *idx,
			    uint32_t *matched);

/**
 * Pick the top @p n hosts of @p s by bytes.
 * @param subnet  only hosts of this subnet index (their longest-prefix
 *                match); -1 = every host.
 * @param n       at most this many (0 is allowed: nothing is picked).
 * @param idx     receives up to @p n host indices (dpmon_snap_host_at), best first;
 *                room for @p n entries.
 * @param matched if not NULL, receives the number of hosts that passed the
 *                subnet filter.
 * @return the number of indices written (min(n, matching hosts)).
 * Thread-safety: any thread; reads only @p s.
 */
uint32_t dpmon_top_hosts(const struct dpmon_snapshot *s, int subnet, uint32_t n, uint32_t *idx,
			 uint32_t *matched);

/** Bytes by which a host is ranked: ingress + egress, cumulative (bytes). Any thread. */
uint64_t dpmon_top_host_bytes(const struct dpmon_snap_host *h);

#endif /* DPMON_TOP_H */
