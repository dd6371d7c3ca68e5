/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen.h — deterministic synthetic traffic: the pcap writer behind dpmon-gen,
 * usable from tests and benchmarks. Plain C + libpcap, no DPDK.
 *
 * Design. A run is a pure function of its options: the seed feeds a
 * splitmix64-seeded xoshiro256** generator, and every packet draws its
 * random choices from it in a fixed order (internal?, monitored host,
 * other end, direction, protocol, size, header fields). Timestamps are not
 * taken from the clock: packet i is stamped DPMON_GEN_EPOCH_SEC + i
 * microseconds. Same options + same seed => byte-identical file.
 *
 * Hosts are never stored: host h (0-based) of a subnet is the network
 * address + h + 1, built on the fly, so a packet costs O(1) whatever the
 * number of hosts and subnets. The only per-run allocations are one frame
 * buffer, one bit per configured host (to count hosts used) and the
 * summary's per-subnet counters; nothing is allocated per packet.
 *
 * While writing, the generator counts exactly what it wrote (the summary),
 * with dpmon's own definitions (stats.h): a packet is ingress for the
 * subnet holding its destination and egress for the subnet holding its
 * source; an internal packet counts in both. Subnets may not overlap each
 * other nor the external peer pools, so that every address belongs to at
 * most one subnet and the summary is an exact oracle for dpmon's counters.
 *
 * Reference: docs/dpmon-gen.md.
 */
#ifndef DPMON_GEN_H
#define DPMON_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "prefix.h"
#include "stats.h"

/** Longest subnet name, NUL included (as DPMON_NAME_LEN in config.h). */
#define DPMON_GEN_NAME_LEN        64
/** Most subnets in one run. */
#define DPMON_GEN_MAX_SUBNETS     65536
/** Most hosts per subnet (--hosts). */
#define DPMON_GEN_MAX_HOSTS       (1u << 24)
/** Most hosts in all subnets together (subnets x hosts). */
#define DPMON_GEN_MAX_TOTAL_HOSTS (1u << 26)
/** Most external peers per family (--peers); IPv4 is also bounded by its pool. */
#define DPMON_GEN_MAX_PEERS       (1u << 24)
/** IPv4 peer pool size: 198.51.100.1-254 then 203.0.113.1-254. */
#define DPMON_GEN_V4_PEER_POOL    508
/** Most distinct entries in a size list. */
#define DPMON_GEN_MAX_SIZES       64
/** Largest frame size (before the optional VLAN tag): 65535 snaplen - 4. */
#define DPMON_GEN_MAX_FRAME       65531
/** Timestamp of the first packet, seconds since the Unix epoch (2023-11-14T22:13:20Z). */
#define DPMON_GEN_EPOCH_SEC       1700000000
/** No VLAN tag (value of dpmon_gen_opts.vlan). */
#define DPMON_GEN_NO_VLAN         (-1)

/** One monitored subnet. */
struct dpmon_gen_subnet {
	struct dpmon_prefix prefix;
	char name[DPMON_GEN_NAME_LEN]; /**< "" when unnamed */
};

/** Everything a run depends on. Fill with dpmon_gen_defaults() first. */
struct dpmon_gen_opts {
	const char *output; /**< pcap file to create (truncated if it exists) */
	/** Monitored subnets, malloc'd and owned by the options: add them with
	 *  dpmon_gen_add_subnet(), release with dpmon_gen_opts_free(). None =
	 *  the defaults (dpmon_gen_default_subnets). */
	struct dpmon_gen_subnet *subnets;
	uint32_t n_subnets;
	uint32_t hosts;   /**< hosts used per subnet, 1..DPMON_GEN_MAX_HOSTS; default 64 */
	uint64_t packets; /**< packets to write; default 100000 */
	/** Protocol weights indexed by enum dpmon_proto; default 40/50/10/0. */
	uint32_t mix[DPMON_PROTO_MAX];
	/** Frame sizes in bytes (Ethernet header included, no FCS, VLAN tag
	 *  excluded) and their weights; default one size, 64. */
	uint32_t sizes[DPMON_GEN_MAX_SIZES];
	uint32_t size_weights[DPMON_GEN_MAX_SIZES];
	uint32_t n_sizes;
	uint32_t egress_percent;   /**< external packets sent by the host, 0..100; default 30 */
	uint32_t internal_percent; /**< packets between two monitored hosts, 0..100; default 0 */
	uint32_t peers;            /**< distinct external peers per family; default 256 */
	int32_t vlan;              /**< 802.1Q VID 0..4094, or DPMON_GEN_NO_VLAN (default) */
	uint64_t seed;             /**< PRNG seed; default 1 */
};

/** A packet and byte count. Bytes are captured frame bytes (VLAN tag included). */
struct dpmon_gen_count {
	uint64_t packets;
	uint64_t bytes;
};

/** Counts for one direction of one subnet: all protocols, then per protocol. */
struct dpmon_gen_dir_count {
	struct dpmon_gen_count all;
	struct dpmon_gen_count proto[DPMON_PROTO_MAX];
};

/** What was written for one subnet. */
struct dpmon_gen_subnet_summary {
	struct dpmon_gen_subnet subnet;
	uint64_t hosts_used; /**< distinct hosts of the subnet in at least one packet */
	struct dpmon_gen_dir_count
		dir[DPMON_DIR_MAX]; /**< ingress: dst inside; egress: src inside */
};

/** Exact totals of a run: the test oracle. */
struct dpmon_gen_summary {
	char *output; /**< malloc'd copy of the file name */
	uint64_t seed;
	struct dpmon_gen_subnet_summary *subnets; /**< malloc'd, n_subnets entries, option order */
	uint32_t n_subnets;
	struct dpmon_gen_count total;                  /**< every packet written */
	struct dpmon_gen_count proto[DPMON_PROTO_MAX]; /**< every packet, per protocol */
	struct dpmon_gen_count cat[DPMON_TOTAL_MAX];   /**< ingress, egress, internal, external */
	uint64_t hosts_configured;                     /**< subnets x hosts */
	uint64_t hosts_used;                           /**< distinct monitored hosts written */
};

/**
 * Fill @p o with every default (no subnets: the defaults apply at write
 * time, no output). Never fails. Thread-safety: any thread.
 */
void dpmon_gen_defaults(struct dpmon_gen_opts *o);

/**
 * Release what @p o owns (the subnets) and leave it with no subnets.
 * Thread-safety: any thread, distinct @p o.
 */
void dpmon_gen_opts_free(struct dpmon_gen_opts *o);

/**
 * Parse "CIDR[=NAME]" ("10.0.0.0/24=office", "2001:db8::/64") and append
 * it to @p o->subnets. Overlaps are checked later, by dpmon_gen_check().
 * @param why  on error, a static English reason; may be NULL.
 * @return 0; -EINVAL on a bad CIDR, an empty or too long name (more than
 *         DPMON_GEN_NAME_LEN - 1 bytes) or too many subnets; -ENOMEM.
 * Thread-safety: any thread, distinct @p o.
 */
int dpmon_gen_add_subnet(struct dpmon_gen_opts *o, const char *text, const char **why);

/**
 * Append the default subnets (10.0.0.0/24 office, 10.0.1.0/24 servers,
 * 192.0.2.0/24 dmz, 2001:db8:10::/64 office-v6) to @p o.
 * @return 0 or -ENOMEM. Thread-safety: any thread, distinct @p o.
 */
int dpmon_gen_default_subnets(struct dpmon_gen_opts *o);

/**
 * Parse a protocol mix "tcp=40,udp=50,icmp=10,other=0" into @p o->mix.
 * Weights are non-negative integers (not necessarily summing to 100);
 * protocols not named get weight 0; their sum must be positive.
 * @return 0, or -EINVAL (@p why set; may be NULL) leaving @p o unchanged.
 * Thread-safety: any thread, distinct @p o.
 */
int dpmon_gen_parse_mix(struct dpmon_gen_opts *o, const char *text, const char **why);

/**
 * Parse a frame size spec into @p o->sizes: "N" (one size), "imix" (64,
 * 594, 1518 with weights 7:4:1) or "N,N,..." (uniform choice, at most
 * DPMON_GEN_MAX_SIZES). Each size is in bytes, 1..DPMON_GEN_MAX_FRAME;
 * sizes under a packet's minimum grow to it at write time.
 * @return 0, or -EINVAL (@p why set; may be NULL) leaving @p o unchanged.
 * Thread-safety: any thread, distinct @p o.
 */
int dpmon_gen_parse_sizes(struct dpmon_gen_opts *o, const char *text, const char **why);

/**
 * Smallest frame (bytes, Ethernet header included, VLAN tag excluded) of
 * a packet of @p family (4 or 6) and protocol @p proto: 54/42/42/38 for
 * IPv4 TCP/UDP/ICMP/other, 74/62/62/54 for IPv6.
 * Thread-safety: any thread (a table lookup).
 */
uint32_t dpmon_gen_min_frame(unsigned family, enum dpmon_proto proto);

/**
 * Validate @p o completely: output set, subnets neither overlapping each
 * other nor the peer pools (198.51.100.0/24, 203.0.113.0/24,
 * 2001:db8:ffff::/48), --hosts fitting every subnet (IPv4: 2^(32-len) - 2
 * hosts, the broadcast address excluded, for len <= 30, 2^(32-len) - 1
 * otherwise; IPv6: 2^(128-len) - 1), percentages <= 100, a positive mix,
 * sizes, VLAN id, peers (IPv4: at most DPMON_GEN_V4_PEER_POOL), at least
 * two hosts per family used when internal-percent > 0. With no subnets
 * the defaults are checked.
 * @param err  every problem is printed there, one line each, as
 *             "dpmon-gen: why"; may be NULL.
 * @return 0 when valid, -EINVAL otherwise, -ENOMEM.
 * Thread-safety: any thread.
 */
int dpmon_gen_check(const struct dpmon_gen_opts *o, FILE *err);

/**
 * Write @p o->packets packets to @p o->output (pcap, DLT_EN10MB, snaplen
 * 65535, microsecond timestamps) and fill @p s with the exact totals.
 * Runs dpmon_gen_check() first. On failure the partial file is removed.
 * Cost: O(packets + subnets); memory O(subnets + subnets x hosts / 8).
 * @param s    filled on success (release with dpmon_gen_summary_free);
 *             zeroed and owning nothing on failure.
 * @param err  problems are printed there ("dpmon-gen: FILE: why"); may be NULL.
 * @return 0; -EINVAL (invalid options), -ENOMEM, or the negative errno of
 *         a failed open or write (-EIO when unknown).
 * Thread-safety: any thread; concurrent calls need distinct outputs and
 *         summaries. Touches no global state.
 */
int dpmon_gen_write(const struct dpmon_gen_opts *o, struct dpmon_gen_summary *s, FILE *err);

/** Release what @p s owns; @p s is left zeroed. NULL-safe. Thread-safety: distinct @p s. */
void dpmon_gen_summary_free(struct dpmon_gen_summary *s);

/**
 * Print @p s as a human-readable table (per subnet and direction: packets,
 * bytes, and packets per protocol; then the totals) to @p out.
 * @return 0, or -EIO when writing to @p out failed. Thread-safety: any thread.
 */
int dpmon_gen_summary_print_text(const struct dpmon_gen_summary *s, FILE *out);

/**
 * Print @p s as one JSON object (shape in docs/dpmon-gen.md) to @p out,
 * newline-terminated.
 * @return 0, or -EIO when writing to @p out failed. Thread-safety: any thread.
 */
int dpmon_gen_summary_print_json(const struct dpmon_gen_summary *s, FILE *out);

/**
 * Write @p str to @p out as a JSON string literal (quotes, backslash and
 * control characters escaped, RFC 8259 section 7). For the summaries, which
 * are printed without jansson. Thread-safety: any thread.
 */
void dpmon_gen_json_string(FILE *out, const char *str);

#endif /* DPMON_GEN_H */
