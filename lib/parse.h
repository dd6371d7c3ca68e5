/*
 * parse.h — frame → the header fields dpmon counts by, or the reason it
 * cannot.
 *
 * The parser reads Ethernet II, up to DPMON_MAX_VLAN_TAGS 802.1Q/802.1ad
 * tags (TPIDs 0x8100, 0x88a8, 0x9100), IPv4 (RFC 791 section 3.1) and IPv6
 * (RFC 8200 section 3, with a bounded walk of the extension headers of
 * section 4) and classifies the payload protocol as TCP, UDP, ICMP/ICMPv6 or
 * other. It never reads a byte beyond the @p len it is given and never
 * writes outside @p pkt, so any frame, however malformed, yields a reason.
 *
 * Thread-safety: pure functions; any lcore.
 */
#ifndef DPMON_PARSE_H
#define DPMON_PARSE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "stats.h"

/** Deepest tag stack accepted (802.1Q / 802.1ad / legacy 0x9100 QinQ). */
#define DPMON_MAX_VLAN_TAGS 4
/** Most IPv6 extension headers walked before giving up (ipv6_ext_limit). */
#define DPMON_MAX_IPV6_EXT 8
/**
 * Bytes of a multi-segment mbuf gathered into a contiguous buffer for the
 * parser: Ethernet + 4 tags + IPv6 + 8 extension headers of typical size.
 */
#define DPMON_PARSE_GATHER 512

/** Fields of a parsed IP packet. */
struct dpmon_pkt {
	uint8_t family;      /**< 4 or 6 */
	uint8_t proto;       /**< enum dpmon_proto */
	uint8_t ip_proto;    /**< IP protocol / last IPv6 next header */
	uint8_t fragment;    /**< 1 when an IPv4/IPv6 fragment (any offset) */
	uint8_t vlan_depth;  /**< tags seen */
	uint8_t pad[3];
	uint16_t l3_offset;  /**< bytes from frame start to the IP header */
	uint16_t l4_offset;  /**< to the L4 header, 0 when absent (non-first fragment) */
	uint32_t src4, dst4; /**< IPv4 addresses, host byte order (family 4) */
	const uint8_t *src6; /**< IPv6 addresses, point into the frame (family 6) */
	const uint8_t *dst6;
};

/**
 * Parse a contiguous frame.
 * @param frame  first byte of the Ethernet header.
 * @param len    bytes present at @p frame (captured length), not the wire length.
 * @param pkt    filled in when DPMON_REASON_OK is returned; src6/dst6 point
 *               into @p frame.
 * @return DPMON_REASON_OK, or why the frame is not a countable IP packet.
 */
enum dpmon_reason dpmon_parse_frame(const uint8_t *frame, uint32_t len, struct dpmon_pkt *pkt);

/**
 * Parse an mbuf, reading only bytes its segments hold: the usable length is
 * min(pkt_len, sum of data_len) (DPDK 22.11's pcap PMD delivers records over
 * 65535 bytes with pkt_len larger than the segments). A multi-segment mbuf
 * has up to DPMON_PARSE_GATHER bytes copied into @p scratch first.
 * @param scratch  DPMON_PARSE_GATHER bytes owned by the caller; pkt->src6
 *                 and dst6 may point into it, so it must outlive @p pkt use.
 */
enum dpmon_reason dpmon_parse_mbuf(const struct rte_mbuf *m, struct dpmon_pkt *pkt,
				   uint8_t *scratch);

#endif /* DPMON_PARSE_H */
