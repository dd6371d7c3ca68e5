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
#include <rte_mbuf.h>

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
