/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse.h — frame → the header fields dpmon counts by, or the reason it
 * cannot.
 *
 * What is parsed (docs/parsing.md has the full list, limits and reasons):
 *   L2  Ethernet II; 802.1Q/802.1ad/0x9100 tags (up to DPMON_MAX_VLAN_TAGS,
 *       the first two VLAN IDs kept), VN-tag, 802.1ah PBB I-tags, Cisco
 *       MetaData, MPLS label stacks (up to DPMON_MAX_MPLS_LABELS; IPv4/IPv6
 *       by the first nibble after the bottom label, or a pseudowire control
 *       word and an Ethernet frame), PPPoE session carrying IPv4/IPv6.
 *   L3  IPv4 (RFC 791 section 3.1: IHL, total length, fragments) and IPv6
 *       (RFC 8200: extension headers walked, at most DPMON_MAX_IPV6_EXT).
 *   L4  TCP (ports, flags, data offset), UDP (ports, length), SCTP (ports),
 *       ICMP, ICMPv6, GRE (header length); the rest is "other".
 *   Tunnels, only the kinds enabled in @p decap (enum dpmon_tunnel): GRE
 *       (IPv4, IPv6, MPLS, Ethernet, PPP, ERSPAN I/II/III), VXLAN, IP-in-IP,
 *       MPLS over UDP, GRE over UDP, nested up to DPMON_MAX_TUNNELS; the
 *       innermost IP header is then the one counted.
 *
 * Two outcomes: a frame either yields usable addresses (DPMON_REASON_OK,
 * possibly with anomalies noted in pkt->anomalies) or a reason why not. The
 * parser never reads a byte beyond what it is given, looks at no more than
 * the first DPMON_PARSE_GATHER bytes for headers, loops only a bounded
 * number of times, and never writes outside @p pkt.
 *
 * Thread-safety: pure functions; any lcore.
 */
#ifndef DPMON_PARSE_H
#define DPMON_PARSE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "stats.h"

/** Deepest tag stack accepted (802.1Q / 802.1ad / legacy 0x9100 QinQ). */
#define DPMON_MAX_VLAN_TAGS   4
/** Most MPLS labels in one stack before mpls_no_bottom. */
#define DPMON_MAX_MPLS_LABELS 8
/**
 * Most L2 headers of one frame (tags, VN-tags, PBB I-tags, MPLS stacks,
 * pseudowire Ethernet headers, PPPoE) before l2_too_deep.
 */
#define DPMON_MAX_L2_HEADERS  64
/** Most IPv6 extension headers walked before the ipv6_ext_limit anomaly. */
#define DPMON_MAX_IPV6_EXT    8
/** Most tunnels decapsulated, nested, before the tunnel_limit anomaly. */
#define DPMON_MAX_TUNNELS     4
/**
 * The header window: headers are read from the first DPMON_PARSE_GATHER
 * bytes of a frame only (beyond them the frame looks truncated to the
 * parser, lengths are still checked against the real size). Also the size
 * of the gather buffer for multi-segment mbufs. 64 PBB I-tags (1166 bytes)
 * plus an IPv4/TCP header fit; so does any realistic tunnel stack.
 */
#define DPMON_PARSE_GATHER    2048

/** TCP flag bits of dpmon_pkt.tcp_flags (RFC 9293 section 3.1). */
#define DPMON_TCP_FIN 0x01
#define DPMON_TCP_SYN 0x02
#define DPMON_TCP_RST 0x04
#define DPMON_TCP_ACK 0x10

/**
 * Fields of a parsed frame. Filled in whenever DPMON_REASON_OK is returned;
 * on any other reason only @c len (and the VLAN fields seen so far) are
 * meaningful. 48 bytes.
 */
struct dpmon_pkt {
	uint8_t family;      /**< 4 or 6: the addresses counted (innermost with decap) */
	uint8_t proto;       /**< enum dpmon_proto of ip_proto */
	uint8_t ip_proto;    /**< IP protocol / last IPv6 next header */
	uint8_t fragment;    /**< 1 when any IP header seen was a fragment (any offset) */
	uint8_t vlan_depth;  /**< VLAN tags of the outer frame, stripped ones included */
	uint8_t tcp_flags;   /**< TCP flags byte (DPMON_TCP_*), valid when ports == 1 */
	uint8_t ports;       /**< 1 when sport/dport (and TCP flags) were read */
	uint8_t tunnels;     /**< tunnel headers decapsulated (0: the outer header counts) */
	uint16_t vlan_outer; /**< VLAN ID (12 bits) of the outermost tag; 0 if none */
	uint16_t vlan_inner; /**< VLAN ID of the second tag; 0 if none */
	uint16_t sport;      /**< L4 source port (TCP, UDP, SCTP), host order; 0 when ports is 0 */
	uint16_t dport;      /**< L4 destination port; 0 when ports is 0 */
	uint16_t l3_offset;  /**< bytes from frame start to the IP header counted */
	uint16_t l4_offset;  /**< to its L4 header; 0 when absent (non-first fragment, ...) */
	uint16_t anomalies;  /**< bit mask of 1 << enum dpmon_anomaly */
	uint16_t pad;
	uint32_t len; /**< bytes the frame counts for: pkt_len (+ stripped tags) */
	union {
		struct {
			uint32_t src4, dst4; /**< IPv4 addresses, host byte order (family 4) */
		};
		struct {
			/** IPv6 addresses (family 6): point into the frame or the scratch buffer */
			const uint8_t *src6, *dst6;
		};
	};
};

/**
 * Parse a contiguous frame, counting by its outer IP header (no tunnel is
 * followed).
 * @param frame  first byte of the Ethernet header.
 * @param len    bytes present at @p frame (captured length), not the wire length.
 * @param pkt    out: see struct dpmon_pkt; src6/dst6 point into @p frame.
 * @return DPMON_REASON_OK, or why the frame is not a countable IP packet.
 * Thread-safety: any lcore.
 */
enum dpmon_reason dpmon_parse_frame(const uint8_t *frame, uint32_t len, struct dpmon_pkt *pkt);

/**
 * As dpmon_parse_frame, following the tunnels of the kinds in @p decap
 * (bit mask of enum dpmon_tunnel; 0 = none).
 */
enum dpmon_reason dpmon_parse_frame_decap(const uint8_t *frame, uint32_t len, uint32_t decap,
					  struct dpmon_pkt *pkt);

/**
 * As dpmon_parse_frame_decap without the fast path for the common frame
 * (parse.c): the full parser alone. For tests, which check that both give
 * the same result.
 */
enum dpmon_reason dpmon_parse_frame_full(const uint8_t *frame, uint32_t len, uint32_t decap,
					 struct dpmon_pkt *pkt);

/**
 * Parse an mbuf (no tunnel followed), reading only bytes its segments hold:
 * the usable length is min(pkt_len, sum of data_len) (DPDK 22.11's pcap PMD
 * delivers records over 65535 bytes with pkt_len larger than the segments;
 * the frame then counts for pkt_len bytes with the pkt_len_mismatch
 * anomaly). A multi-segment mbuf whose first segment holds less than the
 * header window has up to DPMON_PARSE_GATHER bytes copied into @p scratch.
 * A tag stripped by the NIC (RTE_MBUF_F_RX_VLAN_STRIPPED, QINQ_STRIPPED)
 * counts 4 bytes back into pkt->len and is the outer VLAN (mbuf vlan_tci /
 * vlan_tci_outer).
 * @param scratch  DPMON_PARSE_GATHER bytes owned by the caller; pkt->src6
 *                 and dst6 may point into it, so it must outlive @p pkt use.
 * @return as dpmon_parse_frame. Thread-safety: any lcore.
 */
enum dpmon_reason dpmon_parse_mbuf(const struct rte_mbuf *m, struct dpmon_pkt *pkt,
				   uint8_t *scratch);

/** As dpmon_parse_mbuf, following the tunnels in @p decap (enum dpmon_tunnel bits). */
enum dpmon_reason dpmon_parse_mbuf_decap(const struct rte_mbuf *m, uint32_t decap,
					 struct dpmon_pkt *pkt, uint8_t *scratch);

/**
 * As dpmon_parse_mbuf_decap, for an RX queue whose PMD reports packet types
 * (port.h): when @p m->packet_type names a plain Ethernet/IPv4|IPv6/TCP|UDP
 * frame (no VLAN, fragment or tunnel) the parse starts at the checks of
 * that header instead of walking the EtherType and IP version. The type is
 * a hint: every length and header check stays, and the result is the one
 * dpmon_parse_mbuf_decap gives whatever packet_type says (right, wrong or
 * 0), as the worker's parse does for such a queue.
 * @param m        the frame; packet_type as the PMD set it.
 * @param decap    tunnels to follow (enum dpmon_tunnel bits; 0 = none).
 * @param pkt      out: see struct dpmon_pkt.
 * @param scratch  DPMON_PARSE_GATHER bytes owned by the caller.
 * @return DPMON_REASON_OK, or why the frame is not a countable IP packet.
 * Thread-safety: any lcore.
 */
enum dpmon_reason dpmon_parse_mbuf_ptype(const struct rte_mbuf *m, uint32_t decap,
					 struct dpmon_pkt *pkt, uint8_t *scratch);

/**
 * As dpmon_parse_mbuf_decap without the fast path for the common frame
 * (parse.c): the full parser alone, with the same mbuf rules (usable
 * length, pkt_len_mismatch, stripped tags). For tests, which check that
 * both give the same result.
 */
enum dpmon_reason dpmon_parse_mbuf_full(const struct rte_mbuf *m, uint32_t decap,
					struct dpmon_pkt *pkt, uint8_t *scratch);

#endif /* DPMON_PARSE_H */
