/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * classify.h — address → monitored subnet, by longest-prefix match.
 *
 * One rte_lpm (IPv4) and one rte_lpm6 (IPv6) hold every monitored subnet;
 * the next hop stored is the subnet's index in the configuration, so a
 * lookup result indexes the per-core subnet counters directly. The tables
 * are built once on the main lcore before the workers start and are only
 * read afterwards, so every worker lcore may look up concurrently.
 *
 * The ignored sources (detection.ignore_sources: remote prefixes, never
 * overlapping a subnet) sit in the same tables under the reserved next
 * hop DPMON_IGNORED_SOURCE, so the lookup the worker already makes for a
 * packet's source says "ignored remote" at no extra cost; the worker maps
 * that result to DPMON_NO_SUBNET and marks the packet (worker.c).
 */
#ifndef DPMON_CLASSIFY_H
#define DPMON_CLASSIFY_H

#include <stdint.h>

#include <rte_lpm.h>
#include <rte_lpm6.h>

#include "config.h"

/** Lookup result for an address outside every monitored subnet. */
#define DPMON_NO_SUBNET UINT32_MAX

/**
 * Lookup result for an address inside an ignored source prefix: above
 * every subnet index (DPMON_MAX_SUBNETS) and within the 21 bits of next
 * hop rte_lpm6 keeps.
 */
#define DPMON_IGNORED_SOURCE (1u << 20)

struct dpmon_classifier {
	struct rte_lpm *lpm4;  /**< NULL when no IPv4 subnet or ignored prefix is configured */
	struct rte_lpm6 *lpm6; /**< NULL when no IPv6 subnet or ignored prefix is configured */
	uint32_t n_subnets;
	uint32_t
		n_ignored; /**< ignored source prefixes; 0: no lookup returns DPMON_IGNORED_SOURCE */
};

/**
 * Build the LPM tables for @p n subnets. A /0 prefix is stored as two /1
 * halves (rte_lpm accepts depths 1..32 only); the result is the same.
 * @param tag        distinguishes the DPDK object names ("main", "test1").
 * @param socket_id  NUMA socket for the tables (SOCKET_ID_ANY allowed).
 * @return 0, -ENOMEM, -EEXIST (tag in use), -EINVAL.
 * Thread-safety: main lcore, before the workers start.
 */
int dpmon_classifier_create(struct dpmon_classifier *c, const char *tag,
			    const struct dpmon_subnet_conf *subnets, uint32_t n, int socket_id);

/**
 * As dpmon_classifier_create, with the @p n_ignored prefixes of @p ignored
 * (remote: none may overlap a subnet, config.c checks) looked up as
 * DPMON_IGNORED_SOURCE. @p ignored may be NULL when @p n_ignored is 0.
 * @return 0, -ENOMEM, -EEXIST (tag in use), -EINVAL.
 * Thread-safety: main lcore, before the workers start.
 */
int dpmon_classifier_create_ignoring(struct dpmon_classifier *c, const char *tag,
				     const struct dpmon_subnet_conf *subnets, uint32_t n,
				     const struct dpmon_prefix *ignored, uint32_t n_ignored,
				     int socket_id);

/** Free the tables. Safe on a zeroed classifier. Main lcore, after workers stop. */
void dpmon_classifier_free(struct dpmon_classifier *c);

/**
 * Look up @p n IPv4 addresses (host byte order) into @p subnet (the
 * subnet index or DPMON_NO_SUBNET). Any lcore.
 */
void dpmon_classify_v4(const struct dpmon_classifier *c, const uint32_t *addrs, uint32_t *subnet,
		       unsigned n);

/**
 * Look up @p n IPv6 addresses into @p subnet (index or DPMON_NO_SUBNET).
 * Any lcore.
 */
void dpmon_classify_v6(const struct dpmon_classifier *c, uint8_t (*addrs)[16], uint32_t *subnet,
		       unsigned n);

#endif /* DPMON_CLASSIFY_H */
