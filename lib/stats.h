/*
 * stats.h — the vocabulary shared by the data path and the snapshot:
 * protocol classes, directions, the totals' categories and parse reasons.
 * No DPDK dependency.
 */
#ifndef DPMON_STATS_H
#define DPMON_STATS_H

#include <stdint.h>

/** Protocol class of a packet, from the IP protocol / IPv6 next header. */
enum dpmon_proto {
	DPMON_PROTO_TCP,   /**< IP protocol 6 */
	DPMON_PROTO_UDP,   /**< IP protocol 17 */
	DPMON_PROTO_ICMP,  /**< IP protocol 1 (IPv4) or 58 (ICMPv6) */
	DPMON_PROTO_OTHER, /**< anything else, including a non-first fragment's unknown payload */
	DPMON_PROTO_MAX
};

/** Direction relative to a monitored subnet or host. */
enum dpmon_dir {
	DPMON_DIR_INGRESS, /**< destination inside */
	DPMON_DIR_EGRESS,  /**< source inside */
	DPMON_DIR_MAX
};

/** Categories of the totals. A packet counts in every one that applies. */
enum dpmon_total {
	DPMON_TOTAL_INGRESS,  /**< destination monitored */
	DPMON_TOTAL_EGRESS,   /**< source monitored */
	DPMON_TOTAL_INTERNAL, /**< both monitored */
	DPMON_TOTAL_EXTERNAL, /**< neither monitored */
	DPMON_TOTAL_MAX
};

/** Why a frame was not counted as IP traffic. */
enum dpmon_reason {
	DPMON_REASON_OK = 0,          /**< parsed: an IPv4 or IPv6 packet */
	DPMON_REASON_NON_IP,          /**< valid frame, not IP (ARP, LLDP, MPLS, ...) */
	DPMON_REASON_RUNT,            /**< shorter than its Ethernet header / tags */
	DPMON_REASON_VLAN_TOO_DEEP,   /**< more than DPMON_MAX_VLAN_TAGS tags */
	DPMON_REASON_IPV4_BAD_HEADER, /**< version != 4 or IHL < 5 (RFC 791 section 3.1) */
	DPMON_REASON_IPV4_TRUNCATED,  /**< fewer bytes present than the IHL says */
	DPMON_REASON_IPV6_BAD_HEADER, /**< version != 6 (RFC 8200 section 3) */
	DPMON_REASON_IPV6_TRUNCATED,  /**< fixed or extension header not all present */
	DPMON_REASON_IPV6_EXT_LIMIT,  /**< more extension headers than DPMON_MAX_IPV6_EXT */
	DPMON_REASON_MAX
};

/** Stable snake_case name of a reason, as used by the API ("ipv4_truncated"). */
const char *dpmon_reason_name(enum dpmon_reason r);

/** Name of a protocol class ("tcp", "udp", "icmp", "other"). */
const char *dpmon_proto_name(enum dpmon_proto p);

/** Name of a direction ("ingress", "egress"). */
const char *dpmon_dir_name(enum dpmon_dir d);

/** Name of a totals category ("ingress", "egress", "internal", "external"). */
const char *dpmon_total_name(enum dpmon_total t);

#endif /* DPMON_STATS_H */
