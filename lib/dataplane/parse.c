/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse.c — the frame parser (see parse.h; the rules are in docs/parsing.md).
 *
 * Design
 * ------
 * Written by hand rather than with rte_net_get_ptype: that helper trusts
 * the IPv4 IHL without checking it against the bytes present, has no
 * reason codes, and does not return the addresses, so we would parse twice.
 *
 * A cursor (struct cur) holds the frame, how far headers may be read
 * (win: the bytes present, at most the DPMON_PARSE_GATHER window) and how
 * many bytes are really there (present), against which lengths are
 * validated. Every read is preceded by a bounds check against win. Offsets
 * are absolute (from the frame start) and never exceed win.
 *
 * The common frame has a fast path (parse_fast, in parse_fast.h so that the
 * worker's loop inlines it): untagged or one 802.1Q tag, IPv4 without
 * options or IPv6 without extension headers, plain lengths, not a
 * fragment, TCP/UDP/ICMP, nothing to decapsulate. It reads
 * the fixed headers once, with no cursor, and fills the same fields the
 * full parser would; any other frame (or any check it cannot pass) goes
 * to the full parser from the start, which alone decides reasons and
 * anomalies.
 *
 * The full parser's common case is a straight line: Ethernet → IPv4/IPv6 →
 * TCP/UDP, all inline. Anything else leaves it for a function of its own, marked
 * noinline so the straight line stays small: the L2 walk (tags, VN-tag,
 * PBB, MPLS, PPPoE, CMD: one bounded loop keyed by EtherType), the IPv6
 * extension-header walk (bounded), the other L4 protocols, and tunnels.
 *
 * Tunnels: while parsing L4, a tunnel payload of an enabled kind is noted
 * in the cursor (type, offset, end); after the IP header is done,
 * follow_tunnels() walks the payload's L2 headers (the same L2 walk) and
 * parses the inner IP header into the same struct dpmon_pkt. Whether a
 * tunnel is followed depends on the port's decap mask only — one flag that
 * is zero on most ports and tested only where a tunnel could start (UDP,
 * GRE, IP protocols 4/41). What happens inside matches tshark's "innermost
 * IP header": a payload that is not IP (ARP in VXLAN, a GRE keepalive) or
 * whose tunnel header is cut short leaves the enclosing IP header counted;
 * an inner IP header that is present but unusable drops the frame with its
 * reason (expected/<file>.json counts no address for it either).
 *
 * Two results: a reason (enum dpmon_reason: the frame has no usable
 * addresses, it is not counted at L3) or OK with anomalies (enum
 * dpmon_anomaly bits: counted, but something was malformed past the
 * addresses). There is no recursion; every loop has a constant bound.
 */
#include "parse.h"
#include "parse_fast.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <rte_common.h>

/* EtherTypes (IEEE 802 / IANA registry). */
#define ET_QINQ    0x88a8 /* IEEE 802.1ad S-tag */
#define ET_QINQ1   0x9100 /* pre-standard QinQ */
#define ET_VNTAG   0x8926 /* Cisco VN-tag: 4 bytes, then an EtherType */
#define ET_PBB     0x88e7 /* IEEE 802.1ah I-tag: 4 bytes + C-DA + C-SA + EtherType */
#define ET_CMD     0x8909 /* Cisco MetaData (SGT) */
#define ET_TEB     0x6558 /* Transparent Ethernet Bridging: an Ethernet frame follows */
#define ET_MPLS_UC 0x8847 /* RFC 3032 */
#define ET_MPLS_MC 0x8848
#define ET_PPPOE_S 0x8864 /* RFC 2516 session stage */
#define ET_PPP     0x880b /* PPP, in GRE version 1 (RFC 2637 section 4.1) */
#define ET_ERSPAN2 0x88be /* ERSPAN type I/II (draft-foschiano-erspan) */
#define ET_ERSPAN3 0x22eb /* ERSPAN type III */

/* PPP protocol numbers (RFC 1332, RFC 5072). */
#define PPP_IPV4 0x0021
#define PPP_IPV6 0x0057

/* IP protocol numbers (IANA; RFC 8200 section 4 for the IPv6 extension headers). */
#define IPPROTO_HOPOPTS_  0
#define IPPROTO_IPIP_     4
#define IPPROTO_IPV6_     41
#define IPPROTO_ROUTING_  43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_GRE_      47
#define IPPROTO_AH_       51
#define IPPROTO_DSTOPTS_  60
#define IPPROTO_SCTP_     132
#define IPPROTO_MOBILITY_ 135

/* UDP destination ports of the tunnels (IANA). */

/* GRE flag bits (RFC 2784 section 2, RFC 2890 section 2, RFC 2637 section 4.1). */
#define GRE_C   0x8000
#define GRE_R   0x4000
#define GRE_K   0x2000
#define GRE_S   0x1000
#define GRE_A   0x0080 /* version 1: acknowledgment number present */
#define GRE_VER 0x0007

#define ANOM(a) ((uint16_t)(1u << (a)))

/* Where the parser is in one frame. */
struct cur {
	const uint8_t *b; /* frame start */
	uint32_t win;     /* headers may be read in b[0 .. win) */
	uint32_t present; /* bytes of the frame (or tunnel payload) present; win <= present */
	uint32_t decap;   /* enum dpmon_tunnel bits to follow */
	uint32_t pend;    /* end of the current IP datagram's bytes present */
	uint32_t dend;    /* end of the current IP datagram as its header declares */
	/* A tunnel payload noted by the L4 parser (decap only). */
	bool next;
	uint16_t next_type; /* EtherType of the payload */
	uint32_t next_off;  /* its offset */
	uint32_t next_end;  /* end of the enclosing datagram's bytes present */
};

/* Bytes readable from absolute offset @p off up to the datagram end. */
static inline uint32_t
readable(const struct cur *c, uint32_t off)
{
	uint32_t lim = min_u32(c->pend, c->win);

	return off < lim ? lim - off : 0;
}

/* Note a tunnel payload with EtherType @p type at @p off, ending at @p end. */
static void
set_next(struct cur *c, uint16_t type, uint32_t off, uint32_t end)
{
	c->next = true;
	c->next_type = type;
	c->next_off = off;
	c->next_end = end;
}

/* ------------------------------------------------------------------------ */
/* L2                                                                       */
/* ------------------------------------------------------------------------ */

/* Keep the first two VLAN IDs of the outer frame (IEEE 802.1Q section 9.6). */
static inline void
vlan_record(struct dpmon_pkt *pkt, uint16_t tci)
{
	if (pkt->vlan_depth == 0)
		pkt->vlan_outer = tci & 0x0fff;
	else if (pkt->vlan_depth == 1)
		pkt->vlan_inner = tci & 0x0fff;
	pkt->vlan_depth++;
}

/* EtherType for a PPP protocol number, 0 when not IP. */
static uint16_t
ppp_ethertype(uint16_t ppp)
{
	return ppp == PPP_IPV4 ? ET_IPV4 : ppp == PPP_IPV6 ? ET_IPV6 : 0;
}

/*
 * An MPLS label stack at *offp (RFC 3032 section 2.1): up to
 * DPMON_MAX_MPLS_LABELS entries until the bottom-of-stack bit; then the
 * payload by its first nibble (RFC 4385 section 2): 4 IPv4, 6 IPv6, 0 a
 * pseudowire control word followed by an Ethernet frame (RFC 4448
 * section 3); anything else is not IP.
 */
static enum dpmon_reason
mpls_walk(const struct cur *c, uint32_t *offp, uint16_t *typep)
{
	uint32_t off = *offp;
	uint8_t nibble;

	for (unsigned n = 0;; n++) {
		if (n == DPMON_MAX_MPLS_LABELS || c->win - off < 4)
			return DPMON_REASON_MPLS_NO_BOTTOM;
		off += 4;
		if (c->b[off - 2] & 0x01)
			break;
	}
	if (c->win - off < 1)
		return DPMON_REASON_RUNT;
	nibble = c->b[off] >> 4;
	if (nibble == 4) {
		*typep = ET_IPV4;
	} else if (nibble == 6) {
		*typep = ET_IPV6;
	} else if (nibble == 0) {
		if (c->win - off < 4)
			return DPMON_REASON_RUNT;
		off += 4;
		*typep = ET_TEB;
	} else {
		return DPMON_REASON_NON_IP;
	}
	*offp = off;
	return DPMON_REASON_OK;
}

/*
 * Walk L2 headers from the payload at *offp whose EtherType is *typep until
 * an IPv4 or IPv6 header; on OK, *offp and *typep say where it is. VLAN IDs
 * are recorded only for the outer frame (@p outer). At most
 * DPMON_MAX_L2_HEADERS headers and DPMON_MAX_VLAN_TAGS tags.
 */
static enum dpmon_reason __rte_noinline
l2_walk(const struct cur *c, struct dpmon_pkt *pkt, uint32_t *offp, uint16_t *typep, bool outer)
{
	const uint8_t *b = c->b;
	uint32_t off = *offp;
	uint16_t type = *typep;
	unsigned tags = 0;
	enum dpmon_reason r;

	for (unsigned n = 0; type != ET_IPV4 && type != ET_IPV6; n++) {
		uint32_t left = c->win - off;

		if (n == DPMON_MAX_L2_HEADERS)
			return DPMON_REASON_L2_TOO_DEEP;
		switch (type) {
		case ET_VLAN:
		case ET_QINQ:
		case ET_QINQ1:
			if (tags == DPMON_MAX_VLAN_TAGS)
				return DPMON_REASON_VLAN_TOO_DEEP;
			if (left < 4)
				return DPMON_REASON_RUNT;
			if (outer)
				vlan_record(pkt, rd16(b + off));
			tags++;
			type = rd16(b + off + 2);
			off += 4;
			break;
		case ET_VNTAG:
			if (left < 6)
				return DPMON_REASON_RUNT;
			type = rd16(b + off + 4);
			off += 6;
			break;
		case ET_CMD: /* version, length, option, SGT, EtherType (Wireshark's layout) */
			if (left < 8)
				return DPMON_REASON_RUNT;
			type = rd16(b + off + 6);
			off += 8;
			break;
		case ET_PBB: /* IEEE 802.1ah section 9.7: I-tag TCI, C-DA, C-SA */
			if (left < 18)
				return DPMON_REASON_RUNT;
			type = rd16(b + off + 16);
			off += 18;
			break;
		case ET_TEB:
			if (left < ETH_HLEN)
				return DPMON_REASON_RUNT;
			type = rd16(b + off + 12);
			off += ETH_HLEN;
			break;
		case ET_PPPOE_S: /* RFC 2516 section 4: ver/type, code, session, length, PPP protocol */
			if (left < 8)
				return DPMON_REASON_RUNT;
			type = ppp_ethertype(rd16(b + off + 6));
			off += 8;
			if (type == 0)
				return DPMON_REASON_NON_IP;
			break;
		case ET_MPLS_UC:
		case ET_MPLS_MC:
			r = mpls_walk(c, &off, &type);
			if (r != DPMON_REASON_OK)
				return r;
			break;
		default:
			return DPMON_REASON_NON_IP;
		}
	}
	*offp = off;
	*typep = type;
	return DPMON_REASON_OK;
}

/* ------------------------------------------------------------------------ */
/* Tunnels (decap only)                                                     */
/* ------------------------------------------------------------------------ */

/*
 * ERSPAN (draft-foschiano-erspan-03): type I (0x88be without GRE sequence
 * number) has no header; type II an 8-byte header (version 1); type III a
 * 12-byte header (version 2) plus an 8-byte platform sub-header when its O
 * bit is set, and frame type 0 (Ethernet) or 2 (IP).
 */
static void
erspan(struct cur *c, uint32_t off, uint32_t end, uint16_t gre_flags, uint16_t proto,
       struct dpmon_pkt *pkt)
{
	const uint8_t *b = c->b;
	uint32_t have = readable(c, off), hl;
	unsigned ft;

	if (proto == ET_ERSPAN2) {
		if (gre_flags & GRE_S) {
			if (have < 8) {
				pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
				return;
			}
			if ((b[off] >> 4) != 1) {
				pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_UNSUPPORTED);
				return;
			}
			off += 8;
		}
		set_next(c, ET_TEB, off, end);
		return;
	}
	if (have < 12) {
		pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
		return;
	}
	hl = 12 + ((b[off + 11] & 0x01) ? 8 : 0);
	ft = (b[off + 10] >> 2) & 0x1f;
	if ((b[off] >> 4) != 2 || (ft != 0 && ft != 2)) {
		pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_UNSUPPORTED);
		return;
	}
	if (have < hl + (ft == 2 ? 1 : 0)) {
		pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
		return;
	}
	off += hl;
	if (ft == 0)
		set_next(c, ET_TEB, off, end);
	else
		set_next(c, (b[off] >> 4) == 6 ? ET_IPV6 : ET_IPV4, off, end);
}

/*
 * PPP in GRE version 1 (RFC 2637 section 4.1): optional address/control
 * (0xff 0x03, RFC 1662 section 3.1), protocol field of 1 or 2 bytes
 * (RFC 1661 section 6.5); IPv4 and IPv6 are followed.
 */
static void
gre_ppp(struct cur *c, uint32_t off, uint32_t end, struct dpmon_pkt *pkt)
{
	const uint8_t *b = c->b;
	uint32_t have = readable(c, off);
	uint16_t ppp, type;

	if (have >= 2 && b[off] == 0xff && b[off + 1] == 0x03) {
		off += 2;
		have -= 2;
	}
	if (have >= 1 && (b[off] & 0x01)) {
		ppp = b[off];
		off += 1;
	} else if (have >= 2) {
		ppp = rd16(b + off);
		off += 2;
	} else {
		pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
		return;
	}
	type = ppp_ethertype(ppp);
	if (type != 0)
		set_next(c, type, off, end);
}

/* What a GRE header of @p flags and @p proto carries at @p off, if followed. */
static void __rte_noinline
gre_payload(struct cur *c, uint32_t off, uint32_t end, uint16_t flags, uint16_t proto, bool via_udp,
	    struct dpmon_pkt *pkt)
{
	bool follow = (c->decap & (via_udp ? DPMON_TUNNEL_GRE_UDP : DPMON_TUNNEL_GRE)) != 0;

	if (proto == ET_ERSPAN2 || proto == ET_ERSPAN3) {
		if (c->decap & DPMON_TUNNEL_ERSPAN)
			erspan(c, off, end, flags, proto, pkt);
		return;
	}
	if (!follow)
		return;
	if ((flags & GRE_VER) == 1) {
		if (proto == ET_PPP)
			gre_ppp(c, off, end, pkt);
		else
			pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_UNSUPPORTED);
		return;
	}
	if (flags & GRE_R) { /* RFC 1701 source routing: not followed */
		pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_UNSUPPORTED);
		return;
	}
	if (proto == ET_CMD) { /* in GRE: EtherType, version, length, option, SGT */
		if (readable(c, off) < 8) {
			pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
			return;
		}
		proto = rd16(c->b + off);
		off += 8;
	}
	/* IPv4, IPv6, MPLS, TEB, ...: the L2 walk decides; a keepalive is not IP. */
	set_next(c, proto, off, end);
}

/*
 * A GRE header at @p off (RFC 2784, RFC 2890; version 1 RFC 2637): its
 * length, 4 + 4·(C|R) + 4·K + 4·S (version 1: 8 + 4·S + 4·A), is checked
 * against the bytes present whether or not GRE is decapsulated.
 */
static void
l4_gre(struct cur *c, uint32_t off, struct dpmon_pkt *pkt, bool via_udp)
{
	const uint8_t *b = c->b;
	uint32_t have = readable(c, off), hlen;
	uint16_t flags, proto;

	if (have < 4) {
		pkt->anomalies |= ANOM(DPMON_ANOM_GRE_TRUNCATED);
		return;
	}
	flags = rd16(b + off);
	proto = rd16(b + off + 2);
	switch (flags & GRE_VER) {
	case 0:
		hlen = 4 + ((flags & (GRE_C | GRE_R)) ? 4 : 0) + ((flags & GRE_K) ? 4 : 0) +
		       ((flags & GRE_S) ? 4 : 0);
		break;
	case 1:
		hlen = 8 + ((flags & GRE_S) ? 4 : 0) + ((flags & GRE_A) ? 4 : 0);
		break;
	default:
		if (c->decap)
			pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_UNSUPPORTED);
		return;
	}
	if (hlen > have) {
		pkt->anomalies |= ANOM(DPMON_ANOM_GRE_TRUNCATED);
		return;
	}
	if (c->decap)
		gre_payload(c, off + hlen, c->pend, flags, proto, via_udp, pkt);
}

/* UDP tunnels, by destination port: VXLAN, MPLS over UDP, GRE over UDP. */
static void __rte_noinline
udp_tunnel(struct cur *c, uint32_t off, uint32_t end, uint16_t dport, struct dpmon_pkt *pkt)
{
	uint32_t p = off + 8;

	switch (dport) {
	case PORT_VXLAN: /* RFC 7348 section 5: 8-byte header, then Ethernet */
		if (!(c->decap & DPMON_TUNNEL_VXLAN))
			return;
		if (readable(c, p) < 8) {
			pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
			return;
		}
		set_next(c, ET_TEB, p + 8, end);
		break;
	case PORT_MPLS_UDP: /* RFC 7510 section 3: a label stack */
		if (c->decap & DPMON_TUNNEL_MPLS_UDP)
			set_next(c, ET_MPLS_UC, p, end);
		break;
	case PORT_GRE_UDP: /* RFC 8086 section 3: a GRE header */
		if (c->decap & DPMON_TUNNEL_GRE_UDP) {
			uint32_t pend = c->pend;

			c->pend = end;
			l4_gre(c, p, pkt, true);
			c->pend = pend;
		}
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------------ */
/* L4                                                                       */
/* ------------------------------------------------------------------------ */

/* TCP (RFC 9293 section 3.1): ports and flags from a valid fixed header. */
FAST void
l4_tcp(const struct cur *c, uint32_t off, struct dpmon_pkt *pkt)
{
	const uint8_t *t = c->b + off;
	uint32_t doff;

	if (unlikely(readable(c, off) < 20)) {
		pkt->anomalies |= ANOM(DPMON_ANOM_L4_TRUNCATED);
		return;
	}
	doff = (uint32_t)(t[12] >> 4) * 4;
	if (unlikely(doff < 20 || doff > c->dend - off)) {
		pkt->anomalies |= ANOM(DPMON_ANOM_TCP_BAD_OFFSET);
		return;
	}
	pkt->sport = rd16(t);
	pkt->dport = rd16(t + 2);
	pkt->tcp_flags = t[13];
	pkt->ports = 1;
}

/* UDP (RFC 768): ports when the length is 8 .. the IP payload length. */
FAST void
l4_udp(struct cur *c, uint32_t off, struct dpmon_pkt *pkt)
{
	const uint8_t *u = c->b + off;
	uint32_t ulen;

	if (unlikely(readable(c, off) < 8)) {
		pkt->anomalies |= ANOM(DPMON_ANOM_L4_TRUNCATED);
		return;
	}
	ulen = rd16(u + 4);
	/* A first fragment's UDP length covers the whole datagram, not this piece. */
	if (unlikely(ulen < 8 || (ulen > c->dend - off && !pkt->fragment))) {
		pkt->anomalies |= ANOM(DPMON_ANOM_UDP_BAD_LENGTH);
		return;
	}
	pkt->sport = rd16(u);
	pkt->dport = rd16(u + 2);
	pkt->ports = 1;
	if (unlikely(c->decap != 0))
		udp_tunnel(c, off, min_u32(off + ulen, c->pend), pkt->dport, pkt);
}

/* ICMP, ICMPv6, SCTP, GRE, IP-in-IP; anything else has nothing to check. */
static void __rte_noinline
l4_other(struct cur *c, uint32_t off, struct dpmon_pkt *pkt)
{
	uint32_t have = readable(c, off);

	switch (pkt->ip_proto) {
	case IPPROTO_ICMP_:   /* RFC 792: type, code, checksum */
	case IPPROTO_ICMPV6_: /* RFC 4443 section 2.1 */
		if (have < 4)
			pkt->anomalies |= ANOM(DPMON_ANOM_L4_TRUNCATED);
		break;
	case IPPROTO_SCTP_: /* RFC 9260 section 3.1: ports, tag, checksum */
		if (have < 12) {
			pkt->anomalies |= ANOM(DPMON_ANOM_L4_TRUNCATED);
			break;
		}
		pkt->sport = rd16(c->b + off);
		pkt->dport = rd16(c->b + off + 2);
		pkt->ports = 1;
		break;
	case IPPROTO_GRE_:
		l4_gre(c, off, pkt, false);
		break;
	case IPPROTO_IPIP_: /* RFC 2003 */
	case IPPROTO_IPV6_: /* RFC 4213 section 3.5, RFC 2473 */
		if (c->decap & DPMON_TUNNEL_IPIP)
			set_next(c, pkt->ip_proto == IPPROTO_IPIP_ ? ET_IPV4 : ET_IPV6, off,
				 c->pend);
		break;
	default:
		break;
	}
}

/* The L4 header at @p off of the datagram described by c->pend/dend. */
FAST enum dpmon_reason
parse_l4(struct cur *c, uint32_t off, struct dpmon_pkt *pkt)
{
	pkt->l4_offset = (uint16_t)off;
	if (likely(pkt->ip_proto == IPPROTO_TCP_))
		l4_tcp(c, off, pkt);
	else if (likely(pkt->ip_proto == IPPROTO_UDP_))
		l4_udp(c, off, pkt);
	else
		l4_other(c, off, pkt);
	return DPMON_REASON_OK;
}

/* ------------------------------------------------------------------------ */
/* L3                                                                       */
/* ------------------------------------------------------------------------ */

/*
 * An IPv4 header whose total length or IHL is not plain (RFC 791 section
 * 3.1): a total length below the IHL (other than 0) leaves no trustworthy
 * extent and drops the frame, like tshark's "bogus IP length"; 0 (TSO /
 * BIG TCP) or a length past the bytes present, and options past them, are
 * anomalies of a frame that still counts.
 */
static enum dpmon_reason __rte_noinline
ipv4_odd_length(uint32_t ihl, uint32_t tot, uint32_t left, uint32_t avail, struct dpmon_pkt *pkt)
{
	if (tot != 0 && tot < ihl)
		return ihl > left ? DPMON_REASON_IPV4_TRUNCATED : DPMON_REASON_IPV4_BAD_LENGTH;
	if (tot == 0 || tot > avail)
		pkt->anomalies |= ANOM(DPMON_ANOM_IPV4_LEN_MISMATCH);
	if (ihl > left)
		pkt->anomalies |= ANOM(DPMON_ANOM_IPV4_OPTIONS_TRUNCATED);
	return DPMON_REASON_OK;
}

/* IPv4 (RFC 791 section 3.1) at @p off, then its L4 header. */
FAST enum dpmon_reason
parse_ipv4(struct cur *c, uint32_t off, struct dpmon_pkt *pkt)
{
	const uint8_t *ip = c->b + off;
	uint32_t left = c->win - off, avail = c->present - off, ihl, tot;
	uint16_t frag;

	if (unlikely(left == 0))
		return DPMON_REASON_IPV4_TRUNCATED;
	if (unlikely((ip[0] >> 4) != 4))
		return DPMON_REASON_IPV4_BAD_HEADER;
	if (unlikely(left < IPV4_MIN_HLEN))
		return DPMON_REASON_IPV4_TRUNCATED;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (unlikely(ihl < IPV4_MIN_HLEN))
		return DPMON_REASON_IPV4_BAD_HEADER;
	tot = rd16(ip + 2);
	if (unlikely(tot < ihl || tot > avail || ihl > left)) {
		enum dpmon_reason r = ipv4_odd_length(ihl, tot, left, avail, pkt);

		if (r != DPMON_REASON_OK)
			return r;
	}
	pkt->family = 4;
	pkt->l3_offset = (uint16_t)off;
	pkt->ip_proto = ip[9];
	pkt->proto = proto_class(ip[9], 4);
	pkt->src4 = rd32(ip + 12);
	pkt->dst4 = rd32(ip + 16);
	frag = rd16(ip + 6);
	if (unlikely(frag & 0x3fff)) { /* MF set or offset non-zero */
		pkt->fragment = 1;
		if (frag & 0x1fff)
			return DPMON_REASON_OK; /* non-first fragment: no L4 header */
	}
	if (unlikely(ihl > left))
		return DPMON_REASON_OK; /* options cut short: no L4 header either */
	c->pend = off + (tot != 0 && tot <= avail ? tot : avail);
	c->dend = off + (tot != 0 ? tot : avail);
	return parse_l4(c, off + ihl, pkt);
}

static inline bool
ipv6_is_ext(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS_ || nh == IPPROTO_ROUTING_ || nh == IPPROTO_FRAGMENT_ ||
	       nh == IPPROTO_DSTOPTS_ || nh == IPPROTO_AH_ || nh == IPPROTO_MOBILITY_;
}

/* The upper layer is @p nh at @p off (0: none can be read). */
FAST enum dpmon_reason
ipv6_upper(struct cur *c, uint32_t off, uint8_t nh, struct dpmon_pkt *pkt)
{
	pkt->ip_proto = nh;
	pkt->proto = proto_class(nh, 6);
	if (off == 0)
		return DPMON_REASON_OK;
	return parse_l4(c, off, pkt);
}

/*
 * RFC 8200 section 4: walk Hop-by-Hop, Routing, Fragment, Destination
 * Options, AH (RFC 4302 section 2.2: length in 4-byte units minus 2) and
 * Mobility (RFC 6275 section 6.1.1) headers from @p x until an upper-layer
 * protocol, at most DPMON_MAX_IPV6_EXT of them, each within the datagram.
 * A non-first fragment (section 4.5: offset in the upper 13 bits of bytes
 * 2-3) has no upper-layer header. The addresses are already known, so
 * every problem here is an anomaly, never a reason.
 */
static enum dpmon_reason __rte_noinline
ipv6_ext_walk(struct cur *c, uint32_t x, uint8_t nh, struct dpmon_pkt *pkt)
{
	const uint8_t *b = c->b;

	for (unsigned n = 0; ipv6_is_ext(nh); n++) {
		uint32_t have = readable(c, x), hlen;

		if (n == DPMON_MAX_IPV6_EXT) {
			pkt->anomalies |= ANOM(DPMON_ANOM_IPV6_EXT_LIMIT);
			return ipv6_upper(c, 0, nh, pkt);
		}
		if (have < 8) {
			pkt->anomalies |= ANOM(DPMON_ANOM_IPV6_EXT_TRUNCATED);
			return ipv6_upper(c, 0, nh, pkt);
		}
		if (nh == IPPROTO_FRAGMENT_) {
			pkt->fragment = 1;
			if (rd16(b + x + 2) & 0xfff8)
				return ipv6_upper(c, 0, b[x], pkt);
			hlen = 8;
		} else if (nh == IPPROTO_AH_) {
			hlen = ((uint32_t)b[x + 1] + 2) * 4;
		} else {
			hlen = ((uint32_t)b[x + 1] + 1) * 8;
		}
		if (hlen > have) {
			pkt->anomalies |= ANOM(DPMON_ANOM_IPV6_EXT_TRUNCATED);
			return ipv6_upper(c, 0, nh, pkt);
		}
		nh = b[x];
		x += hlen;
	}
	return ipv6_upper(c, x, nh, pkt);
}

/* IPv6 (RFC 8200 section 3) at @p off, its extension headers, its L4 header. */
FAST enum dpmon_reason
parse_ipv6(struct cur *c, uint32_t off, struct dpmon_pkt *pkt)
{
	const uint8_t *ip = c->b + off;
	uint32_t left = c->win - off, avail, plen;
	uint8_t nh;

	if (unlikely(left == 0))
		return DPMON_REASON_IPV6_TRUNCATED;
	if (unlikely((ip[0] >> 4) != 6))
		return DPMON_REASON_IPV6_BAD_HEADER;
	if (unlikely(left < IPV6_HLEN))
		return DPMON_REASON_IPV6_TRUNCATED;
	pkt->family = 6;
	pkt->l3_offset = (uint16_t)off;
	pkt->src6 = ip + 8;
	pkt->dst6 = ip + 24;
	avail = c->present - off - IPV6_HLEN;
	plen = rd16(ip + 4);
	c->pend = c->present;
	c->dend = c->present;
	if (likely(plen != 0)) { /* 0: a jumbogram (RFC 2675) or TSO: the frame's length */
		c->dend = off + IPV6_HLEN + plen;
		if (likely(plen <= avail))
			c->pend = c->dend;
		else
			pkt->anomalies |= ANOM(DPMON_ANOM_IPV6_LEN_MISMATCH);
	}
	nh = ip[6];
	if (unlikely(ipv6_is_ext(nh)))
		return ipv6_ext_walk(c, off + IPV6_HLEN, nh, pkt);
	return ipv6_upper(c, off + IPV6_HLEN, nh, pkt);
}

FAST enum dpmon_reason
parse_l3(struct cur *c, uint32_t off, uint16_t type, struct dpmon_pkt *pkt)
{
	if (likely(type == ET_IPV4))
		return parse_ipv4(c, off, pkt);
	return parse_ipv6(c, off, pkt);
}

/*
 * Follow the tunnel payloads noted by the L4 parser, up to
 * DPMON_MAX_TUNNELS deep. A payload whose L2 walk finds no IP header
 * leaves the enclosing header counted (with tunnel_malformed unless it is
 * simply not IP); an inner IP header is parsed into @p pkt, and if it is
 * unusable the frame is dropped with its reason.
 */
static enum dpmon_reason __rte_noinline
follow_tunnels(struct cur *c, struct dpmon_pkt *pkt)
{
	for (unsigned depth = 1; c->next; depth++) {
		uint32_t off = c->next_off;
		uint16_t type = c->next_type;
		enum dpmon_reason r;

		c->next = false;
		if (depth > DPMON_MAX_TUNNELS) {
			pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_LIMIT);
			return DPMON_REASON_OK;
		}
		c->present = c->next_end;
		c->win = min_u32(c->win, c->present);
		if (off > c->win) { /* the tunnel header ends past the datagram */
			pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
			return DPMON_REASON_OK;
		}
		r = l2_walk(c, pkt, &off, &type, false);
		if (r != DPMON_REASON_OK) {
			if (r != DPMON_REASON_NON_IP)
				pkt->anomalies |= ANOM(DPMON_ANOM_TUNNEL_MALFORMED);
			return DPMON_REASON_OK;
		}
		pkt->ports = 0;
		pkt->sport = pkt->dport = 0;
		pkt->tcp_flags = 0;
		pkt->l4_offset = 0;
		r = parse_l3(c, off, type, pkt);
		if (r != DPMON_REASON_OK)
			return r;
		pkt->tunnels = (uint8_t)depth;
	}
	return DPMON_REASON_OK;
}

/* ------------------------------------------------------------------------ */
/* Fast path                                                                */
/* ------------------------------------------------------------------------ */

/*
 * The full parser: parse @p win readable bytes at @p b of a frame of which
 * @p present bytes exist (win <= present, win <= DPMON_PARSE_GATHER).
 */
FAST enum dpmon_reason
parse_buf(const uint8_t *b, uint32_t win, uint32_t present, uint32_t decap, struct dpmon_pkt *pkt)
{
	struct cur c = {.b = b, .win = win, .present = present, .decap = decap, .next = false};
	uint32_t off = ETH_HLEN;
	enum dpmon_reason r;
	uint16_t type;

	memset(pkt, 0, offsetof(struct dpmon_pkt, len));
	pkt->len = present;
	if (unlikely(win < ETH_HLEN))
		return DPMON_REASON_RUNT;
	type = rd16(b + 12);
	if (unlikely(type != ET_IPV4 && type != ET_IPV6)) {
		r = l2_walk(&c, pkt, &off, &type, true);
		if (r != DPMON_REASON_OK)
			return r;
	}
	r = parse_l3(&c, off, type, pkt);
	if (unlikely(c.next) && r == DPMON_REASON_OK)
		r = follow_tunnels(&c, pkt);
	return r;
}

enum dpmon_reason
dpmon_parse_frame_decap(const uint8_t *frame, uint32_t len, uint32_t decap, struct dpmon_pkt *pkt)
{
	uint32_t win = min_u32(len, DPMON_PARSE_GATHER);

	if (likely(try_fast(frame, win, len, decap, pkt)))
		return DPMON_REASON_OK;
	return parse_buf(frame, win, len, decap, pkt);
}

enum dpmon_reason
dpmon_parse_frame_full(const uint8_t *frame, uint32_t len, uint32_t decap, struct dpmon_pkt *pkt)
{
	return parse_buf(frame, min_u32(len, DPMON_PARSE_GATHER), len, decap, pkt);
}

enum dpmon_reason
dpmon_parse_frame(const uint8_t *frame, uint32_t len, struct dpmon_pkt *pkt)
{
	return dpmon_parse_frame_decap(frame, len, 0, pkt);
}

/* ------------------------------------------------------------------------ */
/* mbufs                                                                    */
/* ------------------------------------------------------------------------ */

/* Sum of the segments' data_len: what the mbuf really holds. */
static uint32_t
bytes_held(const struct rte_mbuf *m)
{
	uint32_t held = 0;

	for (const struct rte_mbuf *s = m; s != NULL; s = s->next)
		held += s->data_len;
	return held;
}

/* Copy the first @p want bytes of the segment chain (which holds them) into @p dst. */
static void
gather(const struct rte_mbuf *m, uint8_t *dst, uint32_t want)
{
	uint32_t got = 0;

	for (const struct rte_mbuf *s = m; s != NULL && got < want; s = s->next) {
		uint32_t n = min_u32(s->data_len, want - got);

		memcpy(dst + got, rte_pktmbuf_mtod(s, const uint8_t *), n);
		got += n;
	}
}

/*
 * Tags the NIC stripped (RTE_MBUF_F_RX_VLAN_STRIPPED: vlan_tci;
 * RTE_MBUF_F_RX_QINQ_STRIPPED: vlan_tci_outer and vlan_tci) were the
 * outermost: they count 4 bytes each and come before the frame's own tags.
 */
static void __rte_noinline
vlan_stripped(const struct rte_mbuf *m, struct dpmon_pkt *pkt)
{
	if (m->ol_flags & RTE_MBUF_F_RX_QINQ_STRIPPED) {
		pkt->vlan_outer = m->vlan_tci_outer & 0x0fff;
		pkt->vlan_inner = m->vlan_tci & 0x0fff;
		pkt->vlan_depth += 2;
		pkt->len += 8;
		return;
	}
	pkt->vlan_inner = pkt->vlan_depth != 0 ? pkt->vlan_outer : 0;
	pkt->vlan_outer = m->vlan_tci & 0x0fff;
	pkt->vlan_depth += 1;
	pkt->len += 4;
}

/*
 * The full parser on an mbuf (dpmon_parse_mbuf_decap without the fast path);
 * noinline: the worker's loop keeps only the fast path inline.
 */
enum dpmon_reason __rte_noinline
dpmon_parse_mbuf_full(const struct rte_mbuf *m, uint32_t decap, struct dpmon_pkt *pkt,
		      uint8_t *scratch)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len, win;
	enum dpmon_reason r;

	if (likely(m->next == NULL)) {
		len = min_u32(m->data_len, m->pkt_len);
		win = min_u32(len, DPMON_PARSE_GATHER);
	} else {
		len = min_u32(bytes_held(m), m->pkt_len);
		win = min_u32(len, DPMON_PARSE_GATHER);
		if (m->data_len < win) {
			gather(m, scratch, win);
			b = scratch;
		}
	}
	r = parse_buf(b, win, len, decap, pkt);
	pkt->len = m->pkt_len;
	if (unlikely(len < m->pkt_len))
		pkt->anomalies |= ANOM(DPMON_ANOM_PKT_LEN_MISMATCH);
	if (unlikely(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED))
		vlan_stripped(m, pkt);
	return r;
}

/*
 * The fast path first for a one-segment mbuf that holds its whole pkt_len
 * and had no tag stripped (nothing to add to the parse); everything else,
 * and every frame the fast path declines, goes to the full parser.
 */
enum dpmon_reason
dpmon_parse_mbuf_decap(const struct rte_mbuf *m, uint32_t decap, struct dpmon_pkt *pkt,
		       uint8_t *scratch)
{
	return dpmon_parse_mbuf_inline(m, decap, pkt, scratch);
}

enum dpmon_reason
dpmon_parse_mbuf_ptype(const struct rte_mbuf *m, uint32_t decap, struct dpmon_pkt *pkt,
		       uint8_t *scratch)
{
	if (likely(dpmon_parse_mbuf_fast_ptype(m, decap, pkt)))
		return DPMON_REASON_OK;
	return dpmon_parse_mbuf_full(m, decap, pkt, scratch);
}

enum dpmon_reason
dpmon_parse_mbuf(const struct rte_mbuf *m, struct dpmon_pkt *pkt, uint8_t *scratch)
{
	return dpmon_parse_mbuf_decap(m, 0, pkt, scratch);
}
