/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.h — the vocabulary shared by the data path and the snapshot:
 * protocol classes, directions, the totals' categories, parse reasons
 * (frames not counted), anomalies (frames counted despite a malformed
 * header), the per-flags reported separately (ip_stats) and the
 * tunnel kinds a port may decapsulate. No DPDK dependency.
 */
#ifndef DPMON_STATS_H
#define DPMON_STATS_H

#include <math.h>
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

/**
 * Flags: what a packet is counted by besides its protocol class (a packet
 * may have both flags, or neither): IPv4/IPv6 fragments (first or not) and
 * TCP connection requests (SYN set, ACK clear). Rare in normal traffic, so
 * the per-host counters of the flags live in a separate, lazily assigned
 * flag line (counters.h). A set of flags is a mask of 1 << enum dpmon_flag.
 */
enum dpmon_flag {
	DPMON_FLAG_FRAG, /**< "fragments" */
	DPMON_FLAG_SYN,  /**< "tcp_syn" */
	DPMON_FLAG_MAX
};

/** Categories of the totals. A packet counts in every one that applies. */
enum dpmon_total {
	DPMON_TOTAL_INGRESS,  /**< destination monitored */
	DPMON_TOTAL_EGRESS,   /**< source monitored */
	DPMON_TOTAL_INTERNAL, /**< both monitored */
	DPMON_TOTAL_EXTERNAL, /**< neither monitored */
	DPMON_TOTAL_MAX
};

/**
 * Why a frame was not counted as IP traffic: the parser stopped before it
 * had a usable pair of addresses (docs/parsing.md). Exactly one per frame;
 * the counters of all reasons plus the IP packets counted add up to the
 * frames received. Values only ever get appended (the API prints names).
 */
enum dpmon_reason {
	DPMON_REASON_OK = 0,        /**< parsed: an IPv4 or IPv6 packet */
	DPMON_REASON_NON_IP,        /**< valid frame, not IP (ARP, LLDP, STP, loopback, ...) */
	DPMON_REASON_RUNT,          /**< ends inside its L2 headers (Ethernet, tags, PPPoE, ...) */
	DPMON_REASON_VLAN_TOO_DEEP, /**< more than DPMON_MAX_VLAN_TAGS tags */
	DPMON_REASON_IPV4_BAD_HEADER, /**< version != 4 or IHL < 5 (RFC 791 section 3.1) */
	DPMON_REASON_IPV4_TRUNCATED,  /**< addresses not present, or IHL past the bytes present
				       *   with a total length below the IHL */
	DPMON_REASON_IPV6_BAD_HEADER, /**< version != 6 (RFC 8200 section 3) */
	DPMON_REASON_IPV6_TRUNCATED,  /**< fixed header not all present */
	DPMON_REASON_IPV4_BAD_LENGTH, /**< total length non-zero but below the IHL */
	DPMON_REASON_MPLS_NO_BOTTOM,  /**< label stack deeper than DPMON_MAX_MPLS_LABELS or cut
				       *   short before its bottom (RFC 3032 section 2.1) */
	DPMON_REASON_L2_TOO_DEEP,     /**< more than DPMON_MAX_L2_HEADERS L2 headers */
	DPMON_REASON_MAX
};

/**
 * Something odd about a frame that was still counted at L3 (its addresses
 * were usable): reported in the API's `anomalies`, separately from the
 * parse reasons, so the accounting of enum dpmon_reason stays exact. A
 * frame may carry several; struct dpmon_pkt keeps them as a bit mask
 * (1 << value). Values only ever get appended.
 */
enum dpmon_anomaly {
	DPMON_ANOM_PKT_LEN_MISMATCH,       /**< mbuf pkt_len larger than its segments hold */
	DPMON_ANOM_IPV4_LEN_MISMATCH,      /**< total length 0, or larger than the bytes present */
	DPMON_ANOM_IPV4_OPTIONS_TRUNCATED, /**< IHL past the bytes present (addresses present) */
	DPMON_ANOM_IPV6_LEN_MISMATCH,      /**< payload length larger than the bytes present */
	DPMON_ANOM_IPV6_EXT_TRUNCATED,     /**< an extension header not all present */
	DPMON_ANOM_IPV6_EXT_LIMIT,         /**< more than DPMON_MAX_IPV6_EXT extension headers */
	DPMON_ANOM_L4_TRUNCATED,           /**< TCP/UDP/SCTP/ICMP fixed header not all present */
	DPMON_ANOM_TCP_BAD_OFFSET,         /**< data offset < 5 or past the segment */
	DPMON_ANOM_UDP_BAD_LENGTH,         /**< UDP length < 8 or past the IP payload */
	DPMON_ANOM_GRE_TRUNCATED,          /**< GRE header (4 + 4C + 4K + 4S) not all present */
	DPMON_ANOM_TUNNEL_MALFORMED,       /**< a tunnel header or its inner L2 cut short/bad */
	DPMON_ANOM_TUNNEL_UNSUPPORTED,     /**< a tunnel variant dpmon does not follow */
	DPMON_ANOM_TUNNEL_LIMIT,           /**< more nested tunnels than DPMON_MAX_TUNNELS */
	DPMON_ANOM_MAX
};

/**
 * Kinds of IP packets counted (in the totals) that the summary reports
 * separately, each a cumulative packet count. Values only ever get appended.
 */
enum dpmon_ipstat {
	DPMON_IPSTAT_FRAGMENTS,    /**< IPv4 or IPv6 fragments (first or not) */
	DPMON_IPSTAT_DECAPSULATED, /**< counted by an inner header of a followed tunnel */
	DPMON_IPSTAT_TCP_SYN,      /**< TCP with SYN set and ACK clear (connection requests) */
	DPMON_IPSTAT_MAX
};

/**
 * Tunnel kinds a port may decapsulate (`ports[].decap`, bit mask). With a
 * kind enabled, packets of that tunnel count by the innermost addresses.
 */
enum dpmon_tunnel {
	DPMON_TUNNEL_GRE = 1u << 0,      /**< "gre": GRE in IP (RFC 2784/2890, PPTP RFC 2637) */
	DPMON_TUNNEL_ERSPAN = 1u << 1,   /**< "erspan": ERSPAN type I/II/III inside GRE */
	DPMON_TUNNEL_VXLAN = 1u << 2,    /**< "vxlan": UDP port 4789 (RFC 7348) */
	DPMON_TUNNEL_IPIP = 1u << 3,     /**< "ipip": IP protocols 4 and 41 (RFC 2003, 4213) */
	DPMON_TUNNEL_MPLS_UDP = 1u << 4, /**< "mpls_udp": UDP port 6635 (RFC 7510) */
	DPMON_TUNNEL_GRE_UDP = 1u << 5,  /**< "gre_udp": UDP port 4754 (RFC 8086) */
	DPMON_TUNNEL_ALL = (1u << 6) - 1
};

/** Number of tunnel kinds (bits of enum dpmon_tunnel). */
#define DPMON_TUNNEL_KINDS 6

/** Stable snake_case name of a reason, as used by the API ("ipv4_truncated"). */
const char *dpmon_reason_name(enum dpmon_reason r);

/** Stable snake_case name of an anomaly ("udp_bad_length"); "unknown" out of range. Any thread. */
const char *dpmon_anomaly_name(enum dpmon_anomaly a);

/** Stable name of an ipstat ("fragments", "decapsulated", "tcp_syn"); "unknown" out of range. Any thread. */
const char *dpmon_ipstat_name(enum dpmon_ipstat i);

/**
 * Name of tunnel kind number @p bit (0 .. DPMON_TUNNEL_KINDS - 1, i.e. the
 * bit position in enum dpmon_tunnel): "gre", "erspan", ...; NULL past the end.
 * These are the words of the configuration's ports[].decap. Any thread.
 */
const char *dpmon_tunnel_name(unsigned bit);

/** Name of a protocol class ("tcp", "udp", "icmp", "other"). */
const char *dpmon_proto_name(enum dpmon_proto p);

/** API name of a packet kind: "fragments", "tcp_syn". */
const char *dpmon_flag_name(enum dpmon_flag x);

/** Name of a direction ("ingress", "egress"). */
const char *dpmon_dir_name(enum dpmon_dir d);

/** Name of a totals category ("ingress", "egress", "internal", "external"). */
const char *dpmon_total_name(enum dpmon_total t);

/**
 * @p x, or 0 when it is NaN or infinite: rates and averages go out as JSON
 * reals and Prometheus samples, which must be finite. Any thread.
 */
static inline double
dpmon_finite_or_zero(double x)
{
	return isfinite(x) ? x : 0.0;
}

#endif /* DPMON_STATS_H */
