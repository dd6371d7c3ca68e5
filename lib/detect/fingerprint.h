/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fingerprint.h — an attack's fingerprint: the header fields of the first
 * packets the sampler copies for an alert (flowspec.sample_packets of
 * them), and their distributions: protocol, source and destination ports,
 * IP packet length, TCP flags, fragment state (none, first, later), ICMP
 * type and code, and the top sources. The rule choice (flowspec.h) reads
 * the packets themselves; the alert shows the distributions as its
 * "fingerprint" (dpmon_fp_json).
 *
 * A pure module: no EAL, no global state, no I/O. Thread-safety: a
 * fingerprint belongs to one thread (the main lcore's sampler); the
 * functions that take const pointers may run anywhere.
 */
#ifndef DPMON_FINGERPRINT_H
#define DPMON_FINGERPRINT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "prefix.h"

struct dpmon_prefix_table;

/** Entries of each top list in the JSON. */
#define DPMON_FP_TOP         10
/** Most packets a fingerprint keeps (flowspec.sample_packets' upper bound). */
#define DPMON_FP_MAX_PACKETS 100000

/** IP protocol numbers the fingerprint and the rules name (IANA). */
#define DPMON_IPPROTO_ICMP   1
#define DPMON_IPPROTO_TCP    6
#define DPMON_IPPROTO_UDP    17
#define DPMON_IPPROTO_ICMPV6 58

/** Fragment state of a packet (RFC 791 section 3.1; RFC 8200 section 4.5). */
enum dpmon_fp_frag {
	DPMON_FP_FRAG_NONE,  /**< not a fragment */
	DPMON_FP_FRAG_FIRST, /**< a fragment at offset 0 (its L4 header is there) */
	DPMON_FP_FRAG_LATER, /**< a fragment at a later offset (no L4 header) */
};

/** The header fields of one sampled packet. 32 bytes. */
struct dpmon_fp_pkt {
	struct dpmon_addr src; /**< source address (IPv4 mapped) */
	uint16_t ip_len; /**< IP packet length in bytes, L2 header excluded (RFC 8955 type 10) */
	uint16_t sport, dport; /**< L4 ports, host order; valid when @c ports */
	uint8_t family;        /**< 4 or 6 */
	uint8_t ip_proto;      /**< IPv4 protocol / IPv6 last next header */
	uint8_t ports;         /**< 1: @c sport and @c dport were read (TCP, UDP, SCTP) */
	uint8_t tcp_flags;     /**< TCP flags byte; valid when @c ip_proto is TCP and @c ports */
	uint8_t frag;          /**< enum dpmon_fp_frag */
	uint8_t icmp;          /**< 1: @c icmp_type and @c icmp_code were read */
	uint8_t icmp_type, icmp_code;
};

/** The fields a distribution, or a rule component, is made of. */
enum dpmon_fp_field {
	DPMON_FP_PROTO,  /**< ip_proto */
	DPMON_FP_SPORT,  /**< source port (packets with ports only) */
	DPMON_FP_DPORT,  /**< destination port (packets with ports only) */
	DPMON_FP_LENGTH, /**< ip_len */
	DPMON_FP_FLAGS,  /**< TCP flags (TCP packets with ports only) */
	DPMON_FP_FRAG,   /**< enum dpmon_fp_frag */
	DPMON_FP_ICMP,   /**< ICMP type << 8 | code (packets with icmp only) */
	DPMON_FP_SOURCE, /**< source address */
	DPMON_FP_FIELDS
};

/** One value of a field and the packets that have it. */
struct dpmon_fp_value {
	struct dpmon_addr addr; /**< DPMON_FP_SOURCE; zero for the others */
	uint32_t v;             /**< the value of the other fields; 0 for DPMON_FP_SOURCE */
	uint32_t packets;
};

/** Where a fingerprint stands. */
enum dpmon_fp_state {
	DPMON_FP_SAMPLING,  /**< fewer packets than wanted so far */
	DPMON_FP_READY,     /**< the wanted number of packets is in */
	DPMON_FP_TIMED_OUT, /**< flowspec.sample_timeout_s passed before it filled */
};

/** The packets kept for one alert. */
struct dpmon_fp {
	uint32_t want; /**< flowspec.sample_packets */
	uint32_t n;    /**< packets in @c pkts, at most @c want */
	/** Packets offered while it filled and left out: their source is ignored */
	uint32_t ignored;
	struct dpmon_fp_pkt *pkts; /**< @c want slots */
};

/**
 * Make an empty fingerprint that keeps the first @p want packets.
 * @param want  1 .. DPMON_FP_MAX_PACKETS.
 * @return 0, -EINVAL for a @p want out of range, -ENOMEM.
 * Thread-safety: any thread (the fingerprint is then that thread's).
 */
int dpmon_fp_init(struct dpmon_fp *fp, uint32_t want);

/** Free @p fp's packets; again, or on a zeroed @p fp, nothing. Its thread. */
void dpmon_fp_fini(struct dpmon_fp *fp);

/**
 * Keep packet @p p when @p fp is not full yet.
 * @return true when @p fp is full (now or before). Its thread.
 */
bool dpmon_fp_add(struct dpmon_fp *fp, const struct dpmon_fp_pkt *p);

/**
 * Keep packet @p p when @p fp is not full yet, unless its source is in
 * @p ignored (detection.ignore_sources; NULL: none): then count it in
 * fp->ignored instead.
 * @return true when @p fp is full (now or before). Its thread.
 */
bool dpmon_fp_add_unless_ignored(struct dpmon_fp *fp, const struct dpmon_fp_pkt *p,
				 const struct dpmon_prefix_table *ignored);

/**
 * Read the header fields of a copied frame.
 * @param frame     the copy's first byte (Ethernet header).
 * @param cap_len   bytes of the copy (the sampler keeps 128).
 * @param wire_len  the frame's length on the wire, bytes (its IP length is
 *                  this less the L2 headers).
 * @param sport, dport, ports  the ports the worker read from the whole
 *                  frame (a copy cut short may hide a UDP length check).
 * @param out       the fields.
 * @return 0, or -EINVAL when the copy is not a countable IP packet.
 * Thread-safety: any thread.
 */
int dpmon_fp_decode(const uint8_t *frame, uint32_t cap_len, uint32_t wire_len, uint16_t sport,
		    uint16_t dport, bool ports, struct dpmon_fp_pkt *out);

/**
 * Whether packet @p p has field @p f at all (ports only on packets with
 * ports, TCP flags only on TCP, ICMP type only on ICMP). Any thread.
 */
bool dpmon_fp_has(const struct dpmon_fp_pkt *p, enum dpmon_fp_field f);

/** The value of field @p f of @p p (see struct dpmon_fp_value). Any thread. */
void dpmon_fp_get(const struct dpmon_fp_pkt *p, enum dpmon_fp_field f, struct dpmon_fp_value *v);

/**
 * The values of field @p f among the @p n packets @p pkts that have it,
 * most packets first (ties: the smaller value first).
 * @param out  room for @p max values.
 * @return the number of distinct values (may exceed @p max; only the
 *         first @p max are written), or -ENOMEM.
 * Thread-safety: any thread.
 */
int dpmon_fp_values(const struct dpmon_fp_pkt *const *pkts, uint32_t n, enum dpmon_fp_field f,
		    struct dpmon_fp_value *out, uint32_t max);

/**
 * The fingerprint as JSON: {"state": "sampling" | "ready" | "timed_out",
 * "packets": N, "wanted": W, "ignored_packets": I (left out: from an
 * ignored source), "protocols": [{"protocol": "udp", "number":
 * 17, "packets": N}], "source_ports": [{"port": P, "packets": N}],
 * "destination_ports": [...], "lengths": {"min": B, "max": B, "buckets":
 * [{"from": B, "to": B, "packets": N}]}, "tcp_flags": [{"flags": "syn",
 * "value": 2, "packets": N}], "fragments": {"none": N, "first": N,
 * "later": N}, "icmp": [{"type": T, "code": C, "packets": N}], "sources":
 * [{"address": A, "packets": N}]}; each list the top DPMON_FP_TOP.
 * @param state  where the sampling stands (its clock is the caller's).
 * @return a new reference, or NULL when out of memory. Any thread.
 */
json_t *dpmon_fp_json(const struct dpmon_fp *fp, enum dpmon_fp_state state);

/** The name of @p state as in the JSON ("sampling", "ready", "timed_out"). Any thread. */
const char *dpmon_fp_state_name(enum dpmon_fp_state state);

/**
 * TCP flags byte @p flags as ExaBGP and the JSON name them, separated by
 * @p sep ("syn", "ack", "fin", "rst", "push", "urgent", "ece", "cwr";
 * RFC 9293 section 3.1, RFC 3168 section 6.1), into @p buf of @p len bytes.
 * @return @p buf ("" for 0). Any thread.
 */
char *dpmon_fp_flags_text(uint8_t flags, char sep, char *buf, size_t len);

#endif /* DPMON_FINGERPRINT_H */
