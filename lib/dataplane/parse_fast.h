/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse_fast.h — the parser's fast path for the common frame, inline.
 *
 * The worker's parse pass calls dpmon_parse_mbuf_inline for every packet:
 * here the straight line (Ethernet, at most one 802.1Q tag, IPv4 without
 * options or IPv6 without extension headers, TCP/UDP/ICMP) compiles into
 * the worker's loop instead of a call into parse.c for each packet (the
 * tree builds without link-time optimisation; docs/performance.md, "Where
 * the instructions go"). Anything else, and any check the fast path
 * cannot pass, goes to the full parser (dpmon_parse_mbuf_full, parse.c),
 * which alone decides reasons and anomalies. parse.c uses the same
 * functions, so both entry points parse alike (tests/test_parse.c,
 * tests/test_parse_diff.c).
 *
 * Private to lib/dataplane: parse.c and worker.c include it.
 * Thread-safety: pure functions; any lcore.
 */
#ifndef DPMON_PARSE_FAST_H
#define DPMON_PARSE_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_mbuf_ptype.h>

#include "parse.h"

#define ETH_HLEN 14

/* EtherTypes (IEEE 802 / IANA registry) the fast path reads. */
#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100 /* IEEE 802.1Q C-tag */

#define IPV4_MIN_HLEN 20
#define IPV6_HLEN     40

/* IP protocol numbers (IANA) the fast path reads. */
#define IPPROTO_ICMP_   1
#define IPPROTO_TCP_    6
#define IPPROTO_UDP_    17
#define IPPROTO_ICMPV6_ 58

/* UDP destination ports of the tunnels (IANA). */
#define PORT_VXLAN    4789
#define PORT_MPLS_UDP 6635
#define PORT_GRE_UDP  4754

/* The straight line (Ethernet → IP → TCP/UDP) is inlined into the entry points. */
#define FAST static inline __attribute__((always_inline))

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline uint8_t
proto_class(uint8_t ip_proto, uint8_t family)
{
	switch (ip_proto) {
	case IPPROTO_TCP_:
		return DPMON_PROTO_TCP;
	case IPPROTO_UDP_:
		return DPMON_PROTO_UDP;
	case IPPROTO_ICMP_: /* ICMP is IPv4's (RFC 792), ICMPv6 IPv6's (RFC 4443) */
		return family == 4 ? DPMON_PROTO_ICMP : DPMON_PROTO_OTHER;
	case IPPROTO_ICMPV6_:
		return family == 6 ? DPMON_PROTO_ICMP : DPMON_PROTO_OTHER;
	default:
		return DPMON_PROTO_OTHER;
	}
}

/*
 * The L4 header of a fast-path datagram: @p have bytes readable at @p l,
 * @p plen bytes of IP payload declared (all present). TCP with a valid data
 * offset, UDP with a valid length and not to a tunnel port while any
 * tunnel is decapsulated, ICMP (IPv4) or ICMPv6 (IPv6) with its 4 bytes;
 * false for anything else (the full parser decides).
 */
FAST bool
fast_l4(const uint8_t *l, uint32_t have, uint32_t plen, uint8_t nh, uint8_t icmp, uint32_t decap,
	struct dpmon_pkt *pkt)
{
	uint32_t n;

	if (likely(nh == IPPROTO_TCP_)) {
		if (unlikely(have < 20))
			return false;
		n = (uint32_t)(l[12] >> 4) * 4;
		if (unlikely(n < 20 || n > plen))
			return false;
		pkt->tcp_flags = l[13];
	} else if (likely(nh == IPPROTO_UDP_)) {
		if (unlikely(have < 8))
			return false;
		n = rd16(l + 4);
		if (unlikely(n < 8 || n > plen))
			return false;
		if (unlikely(decap != 0)) {
			uint16_t dport = rd16(l + 2);

			if (dport == PORT_VXLAN || dport == PORT_MPLS_UDP || dport == PORT_GRE_UDP)
				return false;
		}
	} else {
		return nh == icmp && have >= 4;
	}
	pkt->sport = rd16(l);
	pkt->dport = rd16(l + 2);
	pkt->ports = 1;
	return true;
}

/*
 * The overwhelmingly common frame, in one straight line: Ethernet, untagged
 * or with one 802.1Q tag, then IPv4 without options or IPv6 without
 * extension headers, whose length fields agree with the bytes present, not
 * a fragment, carrying TCP, UDP or ICMP/ICMPv6 (fast_l4). Such a frame has
 * no anomaly and no tunnel to follow, so @p pkt is filled exactly as the
 * full parser fills it (tests/test_parse.c compares the two on every
 * truncation and byte mutation of such frames). @return true when the
 * frame was one; false leaves @p pkt to the full parser.
 */
FAST bool
parse_fast(const uint8_t *b, uint32_t win, uint32_t present, uint32_t decap, struct dpmon_pkt *pkt)
{
	uint32_t off = ETH_HLEN, l4, plen, lim;
	const uint8_t *ip;
	uint16_t type;
	uint8_t nh, icmp;

	if (unlikely(win < ETH_HLEN + 4))
		return false;
	type = rd16(b + 12);
	if (type == ET_VLAN) {
		pkt->vlan_outer = rd16(b + ETH_HLEN) & 0x0fff;
		pkt->vlan_depth = 1;
		type = rd16(b + ETH_HLEN + 2);
		off += 4;
	}
	ip = b + off;
	if (likely(type == ET_IPV4)) {
		if (unlikely(win - off < IPV4_MIN_HLEN || ip[0] != 0x45))
			return false;
		plen = rd16(ip + 2);
		if (unlikely(plen < IPV4_MIN_HLEN || plen > present - off ||
			     (rd16(ip + 6) & 0x3fff) != 0))
			return false;
		plen -= IPV4_MIN_HLEN;
		l4 = off + IPV4_MIN_HLEN;
		nh = ip[9];
		icmp = IPPROTO_ICMP_;
		pkt->family = 4;
		pkt->src4 = rd32(ip + 12);
		pkt->dst4 = rd32(ip + 16);
	} else if (type == ET_IPV6) {
		if (unlikely(win - off < IPV6_HLEN || (ip[0] >> 4) != 6))
			return false;
		plen = rd16(ip + 4);
		if (unlikely(plen == 0 || plen > present - off - IPV6_HLEN))
			return false;
		l4 = off + IPV6_HLEN;
		nh = ip[6];
		icmp = IPPROTO_ICMPV6_;
		pkt->family = 6;
		pkt->src6 = ip + 8;
		pkt->dst6 = ip + 24;
	} else {
		return false;
	}
	lim = min_u32(l4 + plen, win);
	if (!fast_l4(b + l4, lim > l4 ? lim - l4 : 0, plen, nh, icmp, decap, pkt))
		return false;
	pkt->ip_proto = nh;
	pkt->proto = proto_class(nh, pkt->family);
	pkt->l3_offset = (uint16_t)off;
	pkt->l4_offset = (uint16_t)l4;
	return true;
}

/*
 * The L4 header of a frame parse_ptype took: TCP (@p nh) with a valid data
 * offset or UDP with a valid length (and not to a tunnel port while any
 * tunnel is decapsulated), @p plen bytes of IP payload declared. The caller
 * checked that the frame holds the L4 header's first 20 (TCP) or 8 (UDP)
 * bytes. Writes @p pkt only when it returns true, as fast_l4 would fill it.
 */
FAST bool
ptype_l4(const uint8_t *l, uint32_t plen, const uint8_t nh, uint32_t decap, struct dpmon_pkt *pkt)
{
	uint32_t n;

	if (nh == IPPROTO_TCP_) {
		n = (uint32_t)(l[12] >> 4) * 4;
		if (unlikely(n < 20 || n > plen))
			return false;
		pkt->tcp_flags = l[13];
		pkt->proto = DPMON_PROTO_TCP;
	} else {
		n = rd16(l + 4);
		if (unlikely(n < 8 || n > plen))
			return false;
		if (unlikely(decap != 0)) {
			uint16_t dport = rd16(l + 2);

			if (dport == PORT_VXLAN || dport == PORT_MPLS_UDP || dport == PORT_GRE_UDP)
				return false;
		}
		pkt->proto = DPMON_PROTO_UDP;
	}
	pkt->sport = rd16(l);
	pkt->dport = rd16(l + 2);
	pkt->ports = 1;
	pkt->ip_proto = nh;
	return true;
}

/* Bytes of the L4 header ptype_l4 reads: TCP's 20, UDP's 8. */
#define PTYPE_L4_MIN(nh) ((nh) == IPPROTO_TCP_ ? 20u : 8u)

/*
 * parse_fast for an untagged Ethernet frame whose NIC reported IPv4 and
 * TCP or UDP (@p nh): the EtherType, version and header length are checked
 * in one word, the fragment bits and the protocol in another, every length
 * as parse_fast checks it. @return true with @p pkt filled exactly as
 * parse_fast fills it; false (any check fails, the report was wrong)
 * leaves @p pkt as it was.
 */
FAST bool
ptype_v4(const uint8_t *b, uint32_t win, uint32_t present, uint32_t decap, const uint8_t nh,
	 struct dpmon_pkt *pkt)
{
	const uint8_t *ip = b + ETH_HLEN;
	uint32_t w, plen;

	/* The frame holds the L4 header's checked bytes: parse_fast's
	 * "have" test for any payload length the L4 checks accept. */
	if (unlikely(win < ETH_HLEN + IPV4_MIN_HLEN + PTYPE_L4_MIN(nh)))
		return false;
	memcpy(&w, b + 12, 4); /* EtherType, version and IHL, TOS */
	if (unlikely((w & RTE_BE32(0xffffff00)) != RTE_BE32(0x08004500)))
		return false;
	plen = rd16(ip + 2);
	if (unlikely(plen < IPV4_MIN_HLEN || plen > present - ETH_HLEN))
		return false;
	memcpy(&w, ip + 6, 4); /* flags and fragment offset, TTL, protocol */
	if (unlikely((w & RTE_BE32(0x3fff00ff)) != RTE_BE32((uint32_t)nh)))
		return false;
	if (!ptype_l4(ip + IPV4_MIN_HLEN, plen - IPV4_MIN_HLEN, nh, decap, pkt))
		return false;
	pkt->family = 4;
	pkt->src4 = rd32(ip + 12);
	pkt->dst4 = rd32(ip + 16);
	pkt->l3_offset = ETH_HLEN;
	pkt->l4_offset = ETH_HLEN + IPV4_MIN_HLEN;
	return true;
}

/* As ptype_v4 for IPv6 without extension headers. */
FAST bool
ptype_v6(const uint8_t *b, uint32_t win, uint32_t present, uint32_t decap, const uint8_t nh,
	 struct dpmon_pkt *pkt)
{
	const uint8_t *ip = b + ETH_HLEN;
	uint32_t w, plen;

	if (unlikely(win < ETH_HLEN + IPV6_HLEN + PTYPE_L4_MIN(nh)))
		return false;
	memcpy(&w, b + 12, 4); /* EtherType, version */
	if (unlikely((w & RTE_BE32(0xfffff000)) != RTE_BE32(0x86dd6000) || ip[6] != nh))
		return false;
	plen = rd16(ip + 4);
	if (unlikely(plen == 0 || plen > present - ETH_HLEN - IPV6_HLEN))
		return false;
	if (!ptype_l4(ip + IPV6_HLEN, plen, nh, decap, pkt))
		return false;
	pkt->family = 6;
	pkt->src6 = ip + 8;
	pkt->dst6 = ip + 24;
	pkt->l3_offset = ETH_HLEN;
	pkt->l4_offset = ETH_HLEN + IPV6_HLEN;
	return true;
}

/* Packet types (rte_mbuf_ptype.h) of the frames ptype_v4 and ptype_v6 take:
 * untagged Ethernet, IPv4 or IPv6 (without or with unknown extensions), TCP
 * or UDP; no tunnel, no inner header. */
#define PT_ETH_L4(l3, l4) (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_##l3 | RTE_PTYPE_L4_##l4)

/*
 * parse_fast, started from the packet type @p ptype a NIC reported: for the
 * plain frames above the walk over the EtherType and IP version is a jump
 * to the checks of that header (every check stays: a wrong report only
 * sends the frame to parse_fast); any other type is parse_fast itself.
 * Same result as parse_fast (tests/test_parse_diff.c).
 */
FAST bool
parse_ptype(const uint8_t *b, uint32_t win, uint32_t present, uint32_t decap, uint32_t ptype,
	    struct dpmon_pkt *pkt)
{
	switch (ptype) {
	case PT_ETH_L4(IPV4, UDP):
	case PT_ETH_L4(IPV4_EXT_UNKNOWN, UDP):
		if (likely(ptype_v4(b, win, present, decap, IPPROTO_UDP_, pkt)))
			return true;
		break;
	case PT_ETH_L4(IPV4, TCP):
	case PT_ETH_L4(IPV4_EXT_UNKNOWN, TCP):
		if (likely(ptype_v4(b, win, present, decap, IPPROTO_TCP_, pkt)))
			return true;
		break;
	case PT_ETH_L4(IPV6, UDP):
	case PT_ETH_L4(IPV6_EXT_UNKNOWN, UDP):
		if (likely(ptype_v6(b, win, present, decap, IPPROTO_UDP_, pkt)))
			return true;
		break;
	case PT_ETH_L4(IPV6, TCP):
	case PT_ETH_L4(IPV6_EXT_UNKNOWN, TCP):
		if (likely(ptype_v6(b, win, present, decap, IPPROTO_TCP_, pkt)))
			return true;
		break;
	default:
		break;
	}
	return parse_fast(b, win, present, decap, pkt);
}

/*
 * The fast path as an entry point starts it: clear @p pkt, count @p present
 * bytes, then parse_fast. @return true when the frame was the common one
 * and @p pkt is filled; false leaves @p pkt to the full parser (parse_buf,
 * which clears it again).
 */
FAST bool
try_fast(const uint8_t *b, uint32_t win, uint32_t present, uint32_t decap, struct dpmon_pkt *pkt)
{
	memset(pkt, 0, offsetof(struct dpmon_pkt, len));
	pkt->len = present;
	return parse_fast(b, win, present, decap, pkt);
}

/**
 * The fast path of dpmon_parse_mbuf_inline alone: a one-segment mbuf that
 * holds its whole pkt_len, had no tag stripped and carries the common frame
 * (parse_fast). Such a frame is DPMON_REASON_OK with no anomaly, fragment
 * or tunnel.
 * @param m      the frame.
 * @param decap  tunnels to follow (enum dpmon_tunnel bits; 0 = none).
 * @param pkt    out: see struct dpmon_pkt, filled when true is returned.
 * @return true when @p pkt is filled; false: call dpmon_parse_mbuf_full.
 * Thread-safety: any lcore.
 */
static inline bool
dpmon_parse_mbuf_fast(const struct rte_mbuf *m, uint32_t decap, struct dpmon_pkt *pkt)
{
	uint32_t len = m->pkt_len;

	return likely(m->next == NULL && m->data_len >= len &&
		      !(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)) &&
	       likely(try_fast(rte_pktmbuf_mtod(m, const uint8_t *),
			       min_u32(len, DPMON_PARSE_GATHER), len, decap, pkt));
}

/**
 * dpmon_parse_mbuf_fast for an RX queue whose PMD reports packet types
 * (port.h): the walk starts from @p m->packet_type when it names a plain
 * Ethernet/IPv4|IPv6/TCP|UDP frame (parse_ptype), with every check of
 * dpmon_parse_mbuf_fast, so the result is the same whatever the type says.
 * @param m      the frame; packet_type as the PMD set it (0 = unknown).
 * @param decap  tunnels to follow (enum dpmon_tunnel bits; 0 = none).
 * @param pkt    out: see struct dpmon_pkt, filled when true is returned.
 * @return true when @p pkt is filled; false: call dpmon_parse_mbuf_full.
 * Thread-safety: any lcore.
 */
static inline bool
dpmon_parse_mbuf_fast_ptype(const struct rte_mbuf *m, uint32_t decap, struct dpmon_pkt *pkt)
{
	uint32_t len = m->pkt_len;

	if (unlikely(m->next != NULL || m->data_len < len ||
		     (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)))
		return false;
	memset(pkt, 0, offsetof(struct dpmon_pkt, len));
	pkt->len = len;
	return likely(parse_ptype(rte_pktmbuf_mtod(m, const uint8_t *),
				  min_u32(len, DPMON_PARSE_GATHER), len, decap, m->packet_type,
				  pkt));
}

/**
 * Parse an mbuf as dpmon_parse_mbuf_decap does (parse.h), inline: the fast
 * path (dpmon_parse_mbuf_fast), and for every frame it declines
 * dpmon_parse_mbuf_full.
 * @param m        the frame.
 * @param decap    tunnels to follow (enum dpmon_tunnel bits; 0 = none).
 * @param pkt      out: see struct dpmon_pkt.
 * @param scratch  DPMON_PARSE_GATHER bytes owned by the caller (parse.h).
 * @return DPMON_REASON_OK, or why the frame is not a countable IP packet.
 * Thread-safety: any lcore.
 */
static inline enum dpmon_reason
dpmon_parse_mbuf_inline(const struct rte_mbuf *m, uint32_t decap, struct dpmon_pkt *pkt,
			uint8_t *scratch)
{
	if (likely(dpmon_parse_mbuf_fast(m, decap, pkt)))
		return DPMON_REASON_OK;
	return dpmon_parse_mbuf_full(m, decap, pkt, scratch);
}

#endif /* DPMON_PARSE_FAST_H */
