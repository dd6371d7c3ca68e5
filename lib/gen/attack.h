/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attack.h — attack captures: the pcap writer behind `dpmon-gen --attack`.
 * Each victim gets one kind of attack (an amplification, a SYN, ACK or
 * fragment flood, a mixed UDP + SYN flood, a flood from one source or
 * from spoofed random sources), mixed with the victim's own legitimate
 * traffic (TCP 443 and 80 clients, answers to its DNS queries, queries to
 * its resolver, ICMP echo) at a share the caller sets. A run is a pure
 * function of its options (rng.h), and a labels file says, one byte per
 * packet, which packet is attack and which legitimate, so that a test can
 * match a FlowSpec rule against the capture and count both.
 *
 * Plain C + libpcap, no DPDK. Reference: docs/dpmon-gen.md, "Attacks".
 */
#ifndef DPMON_GEN_ATTACK_H
#define DPMON_GEN_ATTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "prefix.h"

/** Most victims in one capture. */
#define DPMON_GEN_MAX_VICTIMS      64
/** The labels file's byte for a packet of the victim's own traffic. */
#define DPMON_GEN_LABEL_LEGITIMATE 0
/** The labels file's byte for an attack packet. */
#define DPMON_GEN_LABEL_ATTACK     1

/** The kinds of attack (docs/dpmon-gen.md, "Attacks", says what each writes). */
enum dpmon_gen_attack_kind {
	DPMON_GEN_ATTACK_DNS_AMP,   /**< "dns-amp": answers from UDP port 53, 1200..1499 bytes */
	DPMON_GEN_ATTACK_NTP_AMP,   /**< "ntp-amp": monlist answers from UDP port 123, 468 bytes */
	DPMON_GEN_ATTACK_MEMCACHED, /**< "memcached": answers from UDP port 11211, 1400..1499 bytes */
	DPMON_GEN_ATTACK_SYN,       /**< "syn": TCP SYN to port 443 from spoofed sources */
	DPMON_GEN_ATTACK_FRAG,      /**< "frag": UDP datagrams of 2980 bytes in three fragments */
	DPMON_GEN_ATTACK_ACK,       /**< "ack": TCP ACK to random ports from spoofed sources */
	DPMON_GEN_ATTACK_UDP_SYN, /**< "udp-syn": UDP of 540 bytes and TCP SYN to port 80, half each */
	DPMON_GEN_ATTACK_ONE_SOURCE, /**< "one-source": UDP of random ports and lengths from one host */
	DPMON_GEN_ATTACK_SPOOFED, /**< "spoofed": UDP to port 27015 from spoofed random sources */
	DPMON_GEN_ATTACK_KINDS
};

/** One victim: its address and the attack it gets. */
struct dpmon_gen_victim {
	struct dpmon_addr addr;
	unsigned family; /**< 4 or 6 */
	enum dpmon_gen_attack_kind kind;
};

/** Everything an attack capture depends on. Zero it, then set the fields. */
struct dpmon_gen_attack_opts {
	const char *output; /**< pcap file to create (truncated if it exists) */
	const char *labels; /**< labels file to create, one byte per packet; NULL: none */
	struct dpmon_gen_victim victims[DPMON_GEN_MAX_VICTIMS];
	uint32_t n_victims;     /**< at least 1 */
	uint64_t packets;       /**< packets to write, dealt to the victims in turn */
	uint32_t legit_percent; /**< share of each victim's packets that are its own, 0..100 */
	uint64_t seed;          /**< PRNG seed */
};

/** What was written for one victim. */
struct dpmon_gen_victim_summary {
	uint64_t attack_packets;
	uint64_t legitimate_packets;
	uint64_t bytes; /**< captured frame bytes, both kinds */
};

/** Exact totals of an attack capture. */
struct dpmon_gen_attack_summary {
	uint64_t packets;
	uint64_t bytes;
	struct dpmon_gen_victim_summary victims[DPMON_GEN_MAX_VICTIMS]; /**< option order */
};

/**
 * The kind named @p name ("dns-amp", "ntp-amp", "memcached", "syn", "frag",
 * "ack", "udp-syn", "one-source", "spoofed").
 * @param kind  set on success.
 * @return 0, or -EINVAL for an unknown name. Thread-safety: any thread.
 */
int dpmon_gen_attack_kind_parse(const char *name, enum dpmon_gen_attack_kind *kind);

/** The name of @p kind (as dpmon_gen_attack_kind_parse reads it). Thread-safety: any thread. */
const char *dpmon_gen_attack_kind_name(enum dpmon_gen_attack_kind kind);

/**
 * Append the victim @p addr (an IPv4 or IPv6 host address) attacked by
 * @p kind to @p o.
 * @param why  on error, a static English reason; may be NULL.
 * @return 0; -EINVAL on a bad address, one already listed, or more than
 *         DPMON_GEN_MAX_VICTIMS victims. Thread-safety: any thread, distinct @p o.
 */
int dpmon_gen_attack_add_victim(struct dpmon_gen_attack_opts *o, enum dpmon_gen_attack_kind kind,
				const char *addr, const char **why);

/**
 * Write @p o->packets packets to @p o->output (pcap, DLT_EN10MB, snaplen
 * 65535, packet i stamped DPMON_GEN_EPOCH_SEC + i microseconds) and, when
 * @p o->labels is set, one byte per packet to that file
 * (DPMON_GEN_LABEL_ATTACK or DPMON_GEN_LABEL_LEGITIMATE). Packet i goes to
 * victim i mod n_victims; of each victim's packets, exactly
 * floor(k x legit_percent / 100) of its first k are legitimate.
 * @param s    filled with the exact counts on success; zeroed on failure.
 * @param err  problems are printed there ("dpmon-gen: FILE: why"); may be NULL.
 * @return 0; -EINVAL (no victim, no output, legit_percent above 100),
 *         -ENOMEM, or the negative errno of a failed open or write (-EIO
 *         when unknown); on failure the files written are removed.
 * Thread-safety: any thread; concurrent calls need distinct outputs.
 */
int dpmon_gen_attack_write(const struct dpmon_gen_attack_opts *o,
			   struct dpmon_gen_attack_summary *s, FILE *err);

/**
 * Print @p s for @p o as text (a line per victim) or, with @p json, as
 * one JSON object (shape in docs/dpmon-gen.md) to @p out.
 * @return 0, or -EIO when writing to @p out failed. Thread-safety: any thread.
 */
int dpmon_gen_attack_summary_print(const struct dpmon_gen_attack_opts *o,
				   const struct dpmon_gen_attack_summary *s, bool json, FILE *out);

#endif /* DPMON_GEN_ATTACK_H */
