/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile.h — render a traffic-generator profile to a pcap file, so that
 * every profile in pktgen-profiles/ can be replayed through dpmon in CI.
 *
 * Design. A profile is either a Pktgen-DPDK command file (".pkt", pktgen
 * 23.x syntax) or a Linux kernel pktgen script (".sh" built on
 * pktgen-profiles/linux-pktgen/kpktgen.sh, whose device parameters are
 * `pg_set "PARAM VALUE"` lines). dpmon_profile_load() parses the subset of
 * commands the profiles use into a small model: one or more packet
 * templates ("streams": pktgen's single packet, its range packet, or its
 * sequence packets; the kernel's one device) whose addresses, ports, size
 * and VLAN id are either fixed or stepped/drawn per packet. Every line is
 * either understood or an error naming the file and line: nothing is
 * silently skipped, because a skipped line would make the rendering lie.
 *
 * dpmon_profile_render() then writes N packets exactly as the generator
 * would put them on the wire, minus the FCS (dpmon and pcap count frames
 * without it):
 *  - Pktgen-DPDK sizes include the 4-byte FCS: "set 0 size 64" is a
 *    60-byte frame. Sizes are clamped like pktgen does (64 minimum, 78 for
 *    IPv6); above 1518 is an error. A VLAN tag is inside the size.
 *  - Range mode steps every ranged field by its increment on every packet
 *    (start first, wrapping from max to min). Sequence mode cycles through
 *    its entries in order.
 *  - Kernel pkt_size excludes the FCS; the frame is at least
 *    14 (+4 VLAN) + IP + 8 (UDP) + 16 (pktgen header) bytes: 58 for IPv4,
 *    78 for IPv6. Kernel pktgen sends UDP only. A new skb (new addresses,
 *    ports, IMIX size) is built every max(1, clone_skb) x max(1, burst)
 *    packets. Random choices (IPSRC_RND, IPDST_RND, UDP*_RND, dst6_min/max,
 *    imix_weights) come from dpmon-gen's own seeded PRNG with the kernel's
 *    formulas, so a rendering is deterministic; a real kernel run draws
 *    different values from the same distribution.
 *
 * Reference: docs/dpmon-gen.md ("Profiles"), pktgen-profiles/README.md.
 */
#ifndef DPMON_PROFILE_H
#define DPMON_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "stats.h"

/** Which generator a profile is written for. */
enum dpmon_profile_kind {
	DPMON_PROFILE_PKTGEN_DPDK,  /**< Pktgen-DPDK 23.x command file (.pkt) */
	DPMON_PROFILE_LINUX_PKTGEN, /**< Linux kernel pktgen script (.sh) */
};

struct dpmon_profile; /* opaque */

/** A packet and byte count (bytes: captured frame bytes, no FCS). */
struct dpmon_profile_count {
	uint64_t packets;
	uint64_t bytes;
};

/** What one rendering wrote. */
struct dpmon_profile_summary {
	struct dpmon_profile_count total;
	struct dpmon_profile_count proto[DPMON_PROTO_MAX]; /**< by protocol class */
	uint64_t tcp_syn;              /**< TCP packets with SYN set and ACK clear */
	uint64_t tagged;               /**< packets with an 802.1Q tag */
	uint32_t min_frame, max_frame; /**< smallest / largest frame written, bytes */
};

/**
 * Read and parse the profile @p path. The kind is chosen by the file name:
 * ".pkt" is Pktgen-DPDK, ".sh" is kernel pktgen; anything else is -EINVAL.
 * @param out  set to a new profile on success (release: dpmon_profile_free).
 * @param err  every problem is printed there, one line each, as
 *             "PATH:LINE: why" (or "PATH: why" for whole-profile problems);
 *             may be NULL.
 * @return 0; -EINVAL when a line is not understood or the profile is
 *         inconsistent; -ENOMEM; the negative errno of a failed read.
 * Thread-safety: one load at a time per process (lines are split with
 *         strtok); the loaded profile is then read-only.
 */
int dpmon_profile_load(const char *path, struct dpmon_profile **out, FILE *err);

/**
 * The generator @p p is written for.
 * @return its kind; never fails. Thread-safety: any thread.
 */
enum dpmon_profile_kind dpmon_profile_kind(const struct dpmon_profile *p);

/**
 * The packet count the profile sets itself ("set 0 count", "count").
 * @return packets; 0 = until stopped (Pktgen-DPDK's default; the kernel's
 *         is 1000). Thread-safety: any thread.
 */
uint64_t dpmon_profile_count(const struct dpmon_profile *p);

/**
 * Write @p packets packets of @p p to the pcap file @p output (DLT_EN10MB,
 * microsecond timestamps: packet i at DPMON_GEN_EPOCH_SEC + i us) and fill
 * @p s. Deterministic: the same profile, @p packets and @p seed give a
 * byte-identical file. On failure the partial file is removed.
 * @param packets  frames to write (any number; 0 writes an empty capture).
 * @param seed  seeds the PRNG used for the kernel's random choices.
 * @param err   problems are printed there; may be NULL.
 * @return 0; -ENOMEM; the negative errno of a failed open or write (-EIO
 *         when unknown). Thread-safety: any thread, distinct outputs.
 */
int dpmon_profile_render(const struct dpmon_profile *p, const char *output, uint64_t packets,
			 uint64_t seed, struct dpmon_profile_summary *s, FILE *err);

/** Release @p p. NULL-safe. Thread-safety: any thread, once nothing uses @p p. */
void dpmon_profile_free(struct dpmon_profile *p);

/**
 * Print @p s as one JSON object, newline-terminated:
 * {"profile", "generator", "output", "seed", "packets", "bytes",
 *  "tcp"|"udp"|"icmp"|"other": {"packets", "bytes"}, "tcp_syn", "tagged",
 *  "min_frame", "max_frame"}; frame sizes in bytes, no FCS.
 * @param output  the capture's name as given to dpmon_profile_render.
 * @return 0, or -EIO when writing to @p out failed. Thread-safety: any thread.
 */
int dpmon_profile_summary_print_json(const struct dpmon_profile *p, const char *output,
				     uint64_t seed, const struct dpmon_profile_summary *s,
				     FILE *out);

/**
 * As dpmon_profile_summary_print_json, as two human-readable lines.
 * @return 0, or -EIO when writing to @p out failed. Thread-safety: any thread.
 */
int dpmon_profile_summary_print_text(const struct dpmon_profile *p, const char *output,
				     uint64_t seed, const struct dpmon_profile_summary *s,
				     FILE *out);

#endif /* DPMON_PROFILE_H */
