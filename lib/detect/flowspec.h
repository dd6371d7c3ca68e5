/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowspec.h — BGP FlowSpec rules (RFC 8955 for IPv4, RFC 8956 for IPv6):
 * the choice of the rules that drop an attack and leave its victim's own
 * traffic alone, from the attack's sampled packets (fingerprint.h); a
 * rule's check against what routers accept; its match against a packet;
 * and its text for ExaBGP 4's API ("announce flow route { match { ... }
 * then { ... } }" and the matching withdraw).
 *
 * How attack and legitimate packets are told apart (docs/detection.md,
 * "FlowSpec"): the caller estimates the attack's share of the sample from
 * the rates (1 - the host's rate before the alert / its rate now); the
 * rule choice assumes the rest of the sample is legitimate, and that the
 * attack is the concentrated part of it. It groups the packets by
 * protocol and fragment state, takes the largest groups until they hold
 * min_coverage of the estimated attack packets (one rule per group, at
 * most max_rules of them), then narrows each group's rule component by
 * component (TCP flags, source port, destination port, ICMP type, packet
 * length, source address) to the values most of its packets share, as
 * long as what a narrowing leaves out fits in the packets presumed
 * legitimate plus the attack packets the coverage may miss.
 *
 * A pure module: no EAL, no I/O, no global state. Thread-safety: every
 * function may run on any thread.
 */
#ifndef DPMON_FLOWSPEC_H
#define DPMON_FLOWSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fingerprint.h"
#include "flowspec_terms.h"
#include "prefix.h"

/** Values of one port, TCP flags or ICMP component (ORed). */
#define DPMON_FS_VALUES     4
/** Most rules for one alert (flowspec.max_rules_per_alert's upper bound). */
#define DPMON_FS_MAX_RULES  8
/** Longest ExaBGP line dpmon writes (under PIPE_BUF, so one write() is atomic). */
#define DPMON_FS_TEXT_LEN   1024
/** Room for dpmon_fs_choice.reason. */
#define DPMON_FS_REASON_LEN 160

/** The fragment component of a rule. */
enum dpmon_fs_frag {
	DPMON_FS_FRAG_ANY, /**< no fragment component */
	DPMON_FS_FRAG_IS,  /**< "is-fragment": every fragment, first or later */
};

/** One FlowSpec rule: a match and an action. */
struct dpmon_fs_rule {
	uint8_t family;    /**< 4 or 6 */
	uint8_t dst_len;   /**< destination prefix length, bits of the family */
	uint8_t src_len;   /**< source prefix length; 0: no source component */
	uint8_t has_proto; /**< 1: protocol (IPv6: next-header) component */
	uint8_t proto;     /**< its IP protocol number */
	uint8_t frag;      /**< enum dpmon_fs_frag */
	uint8_t n_sport, n_dport;
	uint8_t n_flags;       /**< TCP flags values, each an exact match on FIN..URG */
	uint8_t n_icmp_type;   /**< ICMP type values */
	uint8_t has_icmp_code; /**< 1: one ICMP code */
	uint8_t icmp_code;
	uint8_t has_len; /**< 1: packet-length range component */
	uint8_t pad[3];
	uint16_t len_lo, len_hi; /**< IP packet length range, bytes, inclusive */
	uint16_t sport[DPMON_FS_VALUES];
	uint16_t dport[DPMON_FS_VALUES];
	uint8_t flags[DPMON_FS_VALUES];
	uint8_t icmp_type[DPMON_FS_VALUES];
	struct dpmon_addr dst; /**< destination network address (IPv4 mapped) */
	struct dpmon_addr src; /**< source network address, when @c src_len */
	struct dpmon_fs_action action;
};

/** What the rule choice is given besides the packets. */
struct dpmon_fs_params {
	uint8_t family;        /**< the target's family, 4 or 6 */
	uint8_t dst_len;       /**< its prefix length (a host: 32 or 128) */
	struct dpmon_addr dst; /**< the target's (network) address, IPv4 mapped */
	double attack_share;   /**< estimated share of attack packets in the sample, (0, 1] */
	double min_coverage;   /**< share of the attack packets the rules must match, (0, 1] */
	uint32_t max_rules;    /**< rules at most, 1 .. DPMON_FS_MAX_RULES */
	uint32_t components;   /**< allowed components: 1 << enum dpmon_fp_field bits */
	struct dpmon_fs_action action;
};

/** The rules chosen for one alert. */
struct dpmon_fs_choice {
	uint32_t n_rules; /**< 0: none, see @c reason */
	struct dpmon_fs_rule rules[DPMON_FS_MAX_RULES];
	uint32_t matched[DPMON_FS_MAX_RULES]; /**< sample packets each rule matches */
	uint32_t matched_total;               /**< sample packets any rule matches */
	uint32_t attack_packets;              /**< estimated attack packets in the sample */
	double coverage;                      /**< estimated share of them matched, 0..1 */
	char reason[DPMON_FS_REASON_LEN];     /**< why no rule, when @c n_rules is 0 */
};

/**
 * Choose the rules for an attack from its sampled packets (see the file
 * comment for how).
 * @param pkts  the @p n sampled packets, all to (ingress) or from the
 *              target; @p n >= 1.
 * @param p     the target, the estimates and the settings.
 * @param out   the rules, their sample counts and coverage; with no rule,
 *              a reason in English.
 * @return 0 (rules or a reason in @p out), -EINVAL for bad @p p, -ENOMEM.
 */
int dpmon_fs_choose(const struct dpmon_fp_pkt *pkts, uint32_t n, const struct dpmon_fs_params *p,
		    struct dpmon_fs_choice *out);

/**
 * Does rule @p r match packet @p pkt? The destination is not compared (a
 * sample holds the target's packets only). Ports, TCP flags and ICMP type
 * match only packets that carry them (RFC 8955 section 4.2.2).
 */
bool dpmon_fs_rule_match(const struct dpmon_fs_rule *r, const struct dpmon_fp_pkt *pkt);

/**
 * Is @p r a rule routers accept? A destination of its family with no host
 * bits set; ports only with protocol TCP or UDP and never with a fragment
 * match (a later fragment has no ports); TCP flags only with TCP; ICMP
 * only with ICMP (IPv4) or ICMPv6 (IPv6); a length range lo <= hi; a
 * rate-limit within 0 .. 10^12 bytes/s; a DSCP 0 .. 63; a redirect ASN
 * of 16 bits with a 32-bit value, or of 32 bits with a 16-bit value
 * (RFC 8955 section 7.4, RFC 7674).
 * @param why  on failure, a static English reason; may be NULL.
 * @return 0, or -EINVAL.
 */
int dpmon_fs_rule_check(const struct dpmon_fs_rule *r, const char **why);

/**
 * Is @p r the same match as @p o (the action aside)? Two rules with the
 * same match are the same route for BGP (RFC 8955 section 4).
 */
bool dpmon_fs_rule_same_match(const struct dpmon_fs_rule *r, const struct dpmon_fs_rule *o);

/**
 * ExaBGP 4's text for rule @p r: "announce flow route { match { ... }
 * then { ACTION; } }" when @p announce, else "withdraw flow route { match
 * { ... } }", with a final '\n'.
 * @param buf  DPMON_FS_TEXT_LEN bytes are always enough.
 * @return the length written, or -ENOSPC.
 */
int dpmon_fs_rule_exabgp(const struct dpmon_fs_rule *r, bool announce, char *buf, size_t len);

/**
 * The match of @p r in a short form for logs and the API's "match" text
 * (ExaBGP's components without the braces, e.g. "destination
 * 10.0.0.5/32; protocol udp; source-port =53;").
 * @return the length written, or -ENOSPC.
 */
int dpmon_fs_rule_match_text(const struct dpmon_fs_rule *r, char *buf, size_t len);

#endif /* DPMON_FLOWSPEC_H */
