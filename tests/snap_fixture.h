/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * snap_fixture.h — hand-built snapshots for the tests of what reads them
 * (test_api.c, test_prom.c, test_http.c).
 *
 * A test describes its snapshot in a struct snap_spec: its subnets as
 * CIDR text and name, its hosts as address text, subnet index and the
 * counters of each direction (snap_rate, snap_dir); snap_build allocates
 * it (dpmon_snapshot_alloc), fills it and puts the hosts in address
 * order as the merge does, whatever order the test gave them in. The
 * test then sets whatever else it checks (totals, ports, workers, ...)
 * on the returned snapshot, which is still its own to write.
 *
 * Header-only; needs check.h (REQUIRE, FAIL): bad test data stops the test.
 */
#ifndef DPMON_TEST_SNAP_FIXTURE_H
#define DPMON_TEST_SNAP_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "snapshot.h"

/* ------------------------------------------------------------------------
 * Values from text and numbers.
 * --------------------------------------------------------------------- */

/** A rate: cumulative @p packets and @p bytes, @p pps and @p bps of the interval. */
static inline struct dpmon_rate
snap_rate(uint64_t packets, uint64_t bytes, double pps, double bps)
{
	return (struct dpmon_rate){.packets = packets, .bytes = bytes, .pps = pps, .bps = bps};
}

/** The address @p text (IPv4 or IPv6); a bad one stops the test. */
static inline struct dpmon_addr
snap_addr(const char *text)
{
	struct dpmon_addr a;

	if (dpmon_addr_parse(text, &a) != 0)
		FAIL("bad test address %s", text);
	return a;
}

/** The prefix @p text ("10.0.0.0/24"); a bad one stops the test. */
static inline struct dpmon_prefix
snap_prefix(const char *text)
{
	struct dpmon_prefix p;

	if (dpmon_prefix_parse(text, &p, NULL) != 0)
		FAIL("bad test prefix %s", text);
	return p;
}

/** A direction of @p total traffic, @p of_proto of it in protocol @p proto. */
static inline struct dpmon_dir_stats
snap_dir(struct dpmon_rate total, enum dpmon_proto proto, struct dpmon_rate of_proto)
{
	struct dpmon_dir_stats d = {.total = total};

	d.proto[proto] = of_proto;
	return d;
}

/** A direction whose traffic is all TCP. */
static inline struct dpmon_dir_stats
snap_tcp_dir(struct dpmon_rate total)
{
	return snap_dir(total, DPMON_PROTO_TCP, total);
}

/* ------------------------------------------------------------------------
 * Hosts and snapshots.
 * --------------------------------------------------------------------- */

/** One host of a snapshot. */
struct snap_host_spec {
	const char *addr;               /**< any text dpmon_addr_parse takes */
	uint32_t subnet;                /**< index into the snapshot's subnets */
	struct dpmon_dir_stats in, out; /**< ingress, egress */
};

/** One subnet of a snapshot. */
struct snap_subnet_spec {
	const char *prefix; /**< CIDR text */
	const char *name;   /**< NULL: none ("") */
};

/** What snap_build makes. */
struct snap_spec {
	uint64_t seq;
	uint32_t n_ports, n_workers; /**< entries, zeroed */
	/** NULL: @c n_subnets zeroed records that the caller fills
	 * (snap_set_subnet; the cases of tens of thousands of subnets). */
	const struct snap_subnet_spec *subnets;
	uint32_t n_subnets;
	/** In any order; NULL: @c n_hosts zeroed records that the caller
	 * fills in address order (the cases of a million hosts). */
	const struct snap_host_spec *hosts;
	uint32_t n_hosts;
};

/** Host record @p h as @p spec says (the record's other fields stay). */
static inline void
snap_set_host(struct dpmon_snap_host *h, const struct snap_host_spec *spec)
{
	h->addr = snap_addr(spec->addr);
	h->subnet = spec->subnet;
	h->dir[DPMON_DIR_INGRESS] = spec->in;
	h->dir[DPMON_DIR_EGRESS] = spec->out;
}

/** Subnet record @p sn as @p spec says (the record's other fields stay). */
static inline void
snap_set_subnet(struct dpmon_snap_subnet *sn, const struct snap_subnet_spec *spec)
{
	sn->prefix = snap_prefix(spec->prefix);
	snprintf(sn->name, sizeof(sn->name), "%s", spec->name != NULL ? spec->name : "");
}

static inline int
snap_host_addr_cmp(const void *x, const void *y)
{
	return dpmon_addr_cmp(&((const struct dpmon_snap_host *)x)->addr,
			      &((const struct dpmon_snap_host *)y)->addr);
}

/**
 * A new snapshot as @p spec says, its hosts sorted by address; the caller
 * dpmon_snapshot_free()s it (or publishes it). Out of memory stops the test.
 */
static inline struct dpmon_snapshot *
snap_build(const struct snap_spec *spec)
{
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(spec->n_ports, spec->n_workers,
							spec->n_subnets, spec->n_hosts);

	REQUIRE(s != NULL);
	s->seq = spec->seq;
	for (uint32_t i = 0; spec->subnets != NULL && i < spec->n_subnets; i++)
		snap_set_subnet(&s->subnets[i], &spec->subnets[i]);
	if (spec->hosts == NULL)
		return s;
	for (uint32_t i = 0; i < spec->n_hosts; i++)
		snap_set_host(&s->hosts[i], &spec->hosts[i]);
	qsort(s->hosts, s->n_hosts, sizeof(s->hosts[0]), snap_host_addr_cmp);
	return s;
}

#endif /* DPMON_TEST_SNAP_FIXTURE_H */
