/*
 * parse.c — the frame parser (see parse.h).
 *
 * Written by hand rather than with rte_net_get_ptype: that helper trusts
 * the IPv4 IHL without checking it against the bytes present, has no
 * reason codes, and does not return the addresses, so we would parse twice.
 * Every read is preceded by a bounds check against the captured length;
 * the structure is a straight line (L2 → L3 → L4 class) with no recursion
 * and bounded loops (tags, IPv6 extension headers).
 */
#include "parse.h"

#include <string.h>

#define ETH_HLEN 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100  /* IEEE 802.1Q */
#define ETHERTYPE_QINQ 0x88a8  /* IEEE 802.1ad */
#define ETHERTYPE_QINQ1 0x9100 /* pre-standard QinQ */

#define IPV4_MIN_HLEN 20
#define IPV6_HLEN 40

/* IP protocol numbers (IANA; RFC 8200 section 4 for the IPv6 extension headers). */
#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_AH_ 51
#define IPPROTO_ICMPV6_ 58
#define IPPROTO_DSTOPTS_ 60
#define IPPROTO_MOBILITY_ 135

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

static inline uint8_t
proto_class(uint8_t ip_proto)
{
	switch (ip_proto) {
	case IPPROTO_TCP_:
		return DPMON_PROTO_TCP;
	case IPPROTO_UDP_:
		return DPMON_PROTO_UDP;
	case IPPROTO_ICMP_:
	case IPPROTO_ICMPV6_:
		return DPMON_PROTO_ICMP;
	default:
		return DPMON_PROTO_OTHER;
	}
}

/* RFC 791 section 3.1. */
static enum dpmon_reason
parse_ipv4(const uint8_t *ip, uint32_t left, struct dpmon_pkt *pkt)
{
	uint32_t ihl;
	uint16_t frag;

	if (left == 0)
		return DPMON_REASON_IPV4_TRUNCATED;
	if ((ip[0] >> 4) != 4)
		return DPMON_REASON_IPV4_BAD_HEADER;
	if (left < IPV4_MIN_HLEN)
		return DPMON_REASON_IPV4_TRUNCATED;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (ihl < IPV4_MIN_HLEN)
		return DPMON_REASON_IPV4_BAD_HEADER;
	if (ihl > left)
		return DPMON_REASON_IPV4_TRUNCATED;
	frag = rd16(ip + 6);
	pkt->family = 4;
	pkt->ip_proto = ip[9];
	pkt->proto = proto_class(ip[9]);
	pkt->fragment = (frag & 0x3fff) != 0; /* MF set or offset non-zero */
	pkt->l4_offset = (frag & 0x1fff) ? 0 : (uint16_t)(pkt->l3_offset + ihl);
	pkt->src4 = rd32(ip + 12);
	pkt->dst4 = rd32(ip + 16);
	return DPMON_REASON_OK;
}

/*
 * RFC 8200 section 4: walk Hop-by-Hop, Routing, Fragment, Destination
 * Options, AH (RFC 4302 section 2.2: length in 4-byte units minus 2) and
 * Mobility (RFC 6275 section 6.1.1) headers until an upper-layer protocol.
 */
static enum dpmon_reason
parse_ipv6(const uint8_t *ip, uint32_t left, struct dpmon_pkt *pkt)
{
	uint32_t off = IPV6_HLEN;
	uint8_t nh;

	if (left == 0)
		return DPMON_REASON_IPV6_TRUNCATED;
	if ((ip[0] >> 4) != 6)
		return DPMON_REASON_IPV6_BAD_HEADER;
	if (left < IPV6_HLEN)
		return DPMON_REASON_IPV6_TRUNCATED;
	pkt->family = 6;
	pkt->fragment = 0;
	pkt->src6 = ip + 8;
	pkt->dst6 = ip + 24;
	nh = ip[6];
	for (unsigned n = 0;; n++) {
		uint32_t hlen;

		switch (nh) {
		case IPPROTO_HOPOPTS_:
		case IPPROTO_ROUTING_:
		case IPPROTO_DSTOPTS_:
		case IPPROTO_MOBILITY_:
		case IPPROTO_AH_:
		case IPPROTO_FRAGMENT_:
			break;
		default:
			pkt->ip_proto = nh;
			pkt->proto = proto_class(nh);
			pkt->l4_offset = (uint16_t)(pkt->l3_offset + off);
			return DPMON_REASON_OK;
		}
		if (n == DPMON_MAX_IPV6_EXT)
			return DPMON_REASON_IPV6_EXT_LIMIT;
		if (left - off < 8)
			return DPMON_REASON_IPV6_TRUNCATED;
		if (nh == IPPROTO_FRAGMENT_) {
			/* RFC 8200 section 4.5: offset is the upper 13 bits of bytes 2-3. */
			pkt->fragment = 1;
			if ((rd16(ip + off + 2) & 0xfff8) != 0) {
				/* Non-first fragment: no upper-layer header here. */
				pkt->ip_proto = ip[off];
				pkt->proto = proto_class(ip[off]);
				pkt->l4_offset = 0;
				return DPMON_REASON_OK;
			}
			hlen = 8;
		} else if (nh == IPPROTO_AH_) {
			hlen = ((uint32_t)ip[off + 1] + 2) * 4;
		} else {
			hlen = ((uint32_t)ip[off + 1] + 1) * 8;
		}
		if (hlen > left - off)
			return DPMON_REASON_IPV6_TRUNCATED;
		nh = ip[off];
		off += hlen;
	}
}

enum dpmon_reason
dpmon_parse_frame(const uint8_t *frame, uint32_t len, struct dpmon_pkt *pkt)
{
	uint32_t off = ETH_HLEN;
	uint16_t type;
	unsigned tags = 0;

	if (len < ETH_HLEN)
		return DPMON_REASON_RUNT;
	type = rd16(frame + 12);
	while (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ || type == ETHERTYPE_QINQ1) {
		if (tags == DPMON_MAX_VLAN_TAGS)
			return DPMON_REASON_VLAN_TOO_DEEP;
		if (len - off < 4)
			return DPMON_REASON_RUNT;
		type = rd16(frame + off + 2);
		off += 4;
		tags++;
	}
	pkt->vlan_depth = (uint8_t)tags;
	pkt->l3_offset = (uint16_t)off;
	if (type == ETHERTYPE_IPV4)
		return parse_ipv4(frame + off, len - off, pkt);
	if (type == ETHERTYPE_IPV6)
		return parse_ipv6(frame + off, len - off, pkt);
	return DPMON_REASON_NON_IP;
}

/* Sum of the segments' data_len: what the mbuf really holds. */
static uint32_t
bytes_held(const struct rte_mbuf *m)
{
	uint32_t held = 0;

	for (const struct rte_mbuf *s = m; s != NULL; s = s->next)
		held += s->data_len;
	return held;
}

/* Copy up to @p want bytes from the segment chain into @p dst. */
static uint32_t
gather(const struct rte_mbuf *m, uint8_t *dst, uint32_t want)
{
	uint32_t got = 0;

	for (const struct rte_mbuf *s = m; s != NULL && got < want; s = s->next) {
		uint32_t n = s->data_len < want - got ? s->data_len : want - got;
		memcpy(dst + got, rte_pktmbuf_mtod(s, const uint8_t *), n);
		got += n;
	}
	return got;
}

enum dpmon_reason
dpmon_parse_mbuf(const struct rte_mbuf *m, struct dpmon_pkt *pkt, uint8_t *scratch)
{
	uint32_t len;

	if (likely(m->next == NULL)) {
		len = m->data_len < m->pkt_len ? m->data_len : m->pkt_len;
		return dpmon_parse_frame(rte_pktmbuf_mtod(m, const uint8_t *), len, pkt);
	}
	len = bytes_held(m);
	if (len > m->pkt_len)
		len = m->pkt_len;
	if (m->data_len >= len || m->data_len >= DPMON_PARSE_GATHER)
		return dpmon_parse_frame(rte_pktmbuf_mtod(m, const uint8_t *),
					 m->data_len < len ? m->data_len : len, pkt);
	len = gather(m, scratch, len < DPMON_PARSE_GATHER ? len : DPMON_PARSE_GATHER);
	return dpmon_parse_frame(scratch, len, pkt);
}
