/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prom.h — the snapshot in the Prometheus text exposition format 0.0.4,
 * for GET /metrics.
 *
 * Rendered from one immutable snapshot only (never worker memory), so every
 * value of one scrape belongs to the same merge; dpmon_snapshot_seq names
 * it. Metric families, their labels and units are listed in docs/api.md
 * ("GET /metrics"); cumulative values are counters, rates and levels are
 * gauges, in base units (bytes, seconds).
 */
#ifndef DPMON_PROM_H
#define DPMON_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/** The Content-Type of the exposition format rendered here. */
#define DPMON_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/** How many hosts and subnets get series of their own. */
struct dpmon_prom_limits {
	/**
	 * Per-host series only for this many hosts, the top by cumulative
	 * bytes (ingress + egress), ties by address; 0 = none
	 * (metrics.top_hosts).
	 */
	uint32_t top_hosts;
	/**
	 * Per-subnet series (dpmon_subnet_*) for every subnet when there are
	 * at most this many, else only for this many, the top by cumulative
	 * bytes (ingress + egress), ties in configuration order; listed in
	 * configuration order either way; 0 = none (metrics.top_subnets).
	 */
	uint32_t top_subnets;
};

/**
 * Render @p s as Prometheus text.
 * @param s    the snapshot (not NULL).
 * @param lim  the hosts and subnets with series of their own (not NULL).
 * @param out  receives a malloc'd, NUL-terminated text (free it);
 *             untouched on error.
 * @param len  receives its length in bytes (NUL excluded).
 * @return 0, or -ENOMEM.
 * Thread-safety: any thread; reads only @p s.
 */
int dpmon_prom_render_limits(const struct dpmon_snapshot *s, const struct dpmon_prom_limits *lim,
			     char **out, size_t *len);

/**
 * Render @p s as Prometheus text with series for every subnet: as
 * dpmon_prom_render_limits with top_subnets UINT32_MAX.
 * @param s          the snapshot (not NULL).
 * @param top_hosts  per-host series only for this many hosts, the top by
 *                   cumulative bytes (ingress + egress), ties by address;
 *                   0 = none.
 * @param out        receives a malloc'd, NUL-terminated text (free it);
 *                   untouched on error.
 * @param len        receives its length in bytes (NUL excluded).
 * @return 0, or -ENOMEM.
 * Thread-safety: any thread; reads only @p s.
 */
int dpmon_prom_render(const struct dpmon_snapshot *s, uint32_t top_hosts, char **out, size_t *len);

#endif /* DPMON_PROM_H */
