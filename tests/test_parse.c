/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse.c — the frame parser on hand-built frames, one case per rule
 * of docs/parsing.md.
 *
 * A table of cases (frame builder, decap mask, expected result) checks
 * every field of struct dpmon_pkt for each: reason, family, addresses,
 * protocol class and number, ports or their absence, TCP flags, fragment
 * flag, VLAN IDs and depth, tunnels followed, anomalies, L4 offset and the
 * byte length. Then every table frame is parsed again as multi-segment
 * mbufs cut at several places (the result must not change), and the
 * mbuf-only rules are checked: pkt_len beyond the segments, stripped VLAN
 * tags, the header window, zero-length mbufs.
 */
#include <arpa/inet.h>
#include <stddef.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "frames.h"
#include "parse.h"
#include "parse_same.h"
#include "test_eal.h"

static const uint8_t A6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
static const uint8_t B6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t C6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
#define SRC4  0xc6336401u /* 198.51.100.1 */
#define DST4  0x0a010001u /* 10.1.0.1 */
#define ISRC4 0xc0000201u /* 192.0.2.1: inner source */
#define IDST4 0x0a090009u /* 10.9.0.9: inner destination */

#define OK    DPMON_REASON_OK
#define ALL   DPMON_TUNNEL_ALL
#define AN(x) ((uint16_t)(1u << DPMON_ANOM_##x))
#define TCP   DPMON_PROTO_TCP
#define UDP   DPMON_PROTO_UDP
#define ICMP  DPMON_PROTO_ICMP
#define OTHER DPMON_PROTO_OTHER

/* ------------------------------------------------------------------------ */
/* Builders                                                                 */
/* ------------------------------------------------------------------------ */

/* An IPv4 header (IHL 5) from @p src to @p dst; returns its offset. */
static uint32_t
ip4a(struct fb *f, uint8_t proto, uint32_t src, uint32_t dst)
{
	uint32_t at = f->n;

	fb_ipv4(f, 5, proto, src, dst, 0, 20);
	return at;
}

static uint32_t
ip4(struct fb *f, uint8_t proto)
{
	return ip4a(f, proto, SRC4, DST4);
}

static uint32_t
ip6a(struct fb *f, uint8_t nh, const uint8_t *src, const uint8_t *dst)
{
	uint32_t at = f->n;

	fb_ipv6(f, nh, src, dst, 0);
	return at;
}

static uint32_t
ip6(struct fb *f, uint8_t nh)
{
	return ip6a(f, nh, B6, A6);
}

/* UDP 1111 -> 2222 with 4 bytes of payload. */
static void
udp_body(struct fb *f)
{
	uint32_t u = f->n;

	fb_udp_hdr(f, 1111, 2222);
	fb_zero(f, 4);
	fb_fix_udp(f, u);
}

/* IPv4/UDP 198.51.100.1:1111 -> 10.1.0.1:2222, after whatever L2 is there. */
static void
udp4_tail(struct fb *f)
{
	uint32_t ip = ip4(f, 17);

	udp_body(f);
	fb_fix_ipv4(f, ip);
}

/* Inner IPv4/TCP SYN 192.0.2.1:3333 -> 10.9.0.9:80. */
static void
inner_tcp4(struct fb *f)
{
	uint32_t ip = ip4a(f, 6, ISRC4, IDST4);

	fb_tcp(f, 3333, 80, DPMON_TCP_SYN);
	fb_fix_ipv4(f, ip);
}

/* Inner IPv6/UDP B6:5353 -> C6:53. */
static void
inner_udp6(struct fb *f)
{
	uint32_t ip = ip6a(f, 17, B6, C6);
	uint32_t u = f->n;

	fb_udp_hdr(f, 5353, 53);
	fb_fix_udp(f, u);
	fb_fix_ipv6(f, ip);
}

static void
b_udp4(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x0800);
	udp4_tail(f);
}

static void
b_tcp4_syn(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 6);
	fb_tcp(f, 40000, 80, DPMON_TCP_SYN);
	fb_fix_ipv4(f, ip);
}

static void
b_tcp4_synack(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 6);
	fb_tcp(f, 80, 40000, DPMON_TCP_SYN | DPMON_TCP_ACK);
	fb_fix_ipv4(f, ip);
}

/* Ethernet minimum size: a 28-byte IPv4/UDP datagram padded to 60 bytes. */
static void
b_udp4_padded(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 17);
	fb_udp_hdr(f, 7, 9);
	fb_fix_ipv4(f, ip);
	fb_zero(f, 60 - f->n);
}

static void
b_vlan1(struct fb *f)
{
	static const uint16_t t[] = {0x8100};
	fb_eth(f, t, 1, 0x0800);
	udp4_tail(f);
}

static void
b_qinq(struct fb *f)
{
	static const uint16_t t[] = {0x88a8, 0x8100};
	fb_eth(f, t, 2, 0x0800);
	udp4_tail(f);
}

static void
b_tags4(struct fb *f)
{
	static const uint16_t t[] = {0x9100, 0x88a8, 0x8100, 0x8100};
	fb_eth(f, t, 4, 0x86dd);
	inner_udp6(f);
}

static void
b_tags5(struct fb *f)
{
	static const uint16_t t[] = {0x8100, 0x8100, 0x8100, 0x8100, 0x8100};
	fb_eth(f, t, 5, 0x0800);
	udp4_tail(f);
}

static void
b_tag_cut(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8100);
	fb_u16(f, 100);
}

static void
b_runt13(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x0800);
	f->n = 13;
}

static void
b_empty(struct fb *f)
{
	f->n = 0;
}

static void
b_arp(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x0806);
	fb_zero(f, 28);
}

static void
b_loopback(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x9000);
	fb_zero(f, 46);
}

/* 802.3 length field + LLC (STP): not an EtherType. */
static void
b_llc(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x0026);
	fb_zero(f, 38);
}

static void
b_mpls1(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8847);
	fb_mpls(f, 16, 1);
	udp4_tail(f);
}

static void
b_mpls3_mc_v6(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8848);
	fb_mpls(f, 100, 0);
	fb_mpls(f, 200, 0);
	fb_mpls(f, 2, 1);
	inner_udp6(f);
}

static void
b_mpls_labels(struct fb *f, unsigned n)
{
	fb_eth(f, NULL, 0, 0x8847);
	for (unsigned i = 0; i < n; i++)
		fb_mpls(f, 16 + i, i + 1 == n);
	udp4_tail(f);
}

static void
b_mpls8(struct fb *f)
{
	b_mpls_labels(f, DPMON_MAX_MPLS_LABELS);
}

static void
b_mpls9(struct fb *f)
{
	b_mpls_labels(f, DPMON_MAX_MPLS_LABELS + 1);
}

/* Two labels, neither the bottom, then the frame ends. */
static void
b_mpls_runs_out(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8847);
	fb_mpls(f, 16, 0);
	fb_mpls(f, 17, 0);
}

/* RFC 4448: label, control word, an Ethernet frame with a tag, IPv4. */
static void
b_mpls_pw_eth(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8847);
	fb_mpls(f, 18, 0);
	fb_mpls(f, 16, 1);
	fb_u32(f, 0); /* control word */
	fb_mac(f, 0x8100);
	fb_u16(f, 300);
	fb_u16(f, 0x0800);
	udp4_tail(f);
}

static void
b_mpls_nibble5(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8847);
	fb_mpls(f, 16, 1);
	fb_u8(f, 0x50);
	fb_zero(f, 30);
}

static void
b_vlan_mpls(struct fb *f)
{
	static const uint16_t t[] = {0x8100};
	fb_eth(f, t, 1, 0x8847);
	fb_mpls(f, 16106, 1);
	udp4_tail(f);
}

static void
b_pppoe(struct fb *f, uint16_t ppp)
{
	uint32_t at;

	fb_eth(f, NULL, 0, 0x8864);
	at = f->n;
	fb_pppoe(f, ppp);
	if (ppp == 0x0057)
		inner_udp6(f);
	else
		udp4_tail(f);
	fb_put16(f, at + 4, f->n - at - 6);
}

static void
b_pppoe4(struct fb *f)
{
	b_pppoe(f, 0x0021);
}

static void
b_pppoe6(struct fb *f)
{
	b_pppoe(f, 0x0057);
}

static void
b_pppoe_lcp(struct fb *f)
{
	b_pppoe(f, 0xc021);
}

static void
b_pppoe_cut(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8864);
	fb_u32(f, 0x11000001);
}

static void
b_pppoe_disc(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8863);
	fb_zero(f, 40);
}

/* VLAN, VN-tag, VLAN (zeek's vntag_vlan_sandwich). */
static void
b_vntag(struct fb *f)
{
	static const uint16_t t[] = {0x8100};
	fb_eth(f, t, 1, 0x8926);
	fb_u32(f, 0x00000033);
	fb_u16(f, 0x8100);
	fb_u16(f, 250);
	fb_u16(f, 0x0800);
	udp4_tail(f);
}

static void
b_cmd(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x8909);
	fb_u8(f, 1);
	fb_u8(f, 1);
	fb_u16(f, 1);
	fb_u16(f, 42);
	fb_u16(f, 0x0800);
	udp4_tail(f);
}

static void
b_pbb(struct fb *f, unsigned n)
{
	fb_eth(f, NULL, 0, 0x88e7);
	for (unsigned i = 0; i < n; i++) {
		fb_u32(f, 1);
		fb_mac(f, i + 1 < n ? 0x88e7 : 0x0800);
	}
	udp4_tail(f);
}

static void
b_pbb1(struct fb *f)
{
	b_pbb(f, 1);
}

static void
b_pbb49(struct fb *f)
{
	b_pbb(f, 49); /* zeek/pbb-recursive-frames.pcapng */
}

static void
b_pbb65(struct fb *f)
{
	b_pbb(f, DPMON_MAX_L2_HEADERS + 1);
}

/* IPv4 with options; @p ihl words, @p present header bytes, @p tot total length. */
static void
b_ipv4_shape(struct fb *f, uint8_t ihl, uint32_t present, uint16_t tot, uint8_t proto)
{
	fb_eth(f, NULL, 0, 0x0800);
	fb_ipv4(f, ihl, proto, SRC4, DST4, 0, tot);
	if (f->n < 14 + present)
		fb_zero(f, 14 + present - f->n);
	f->n = 14 + present;
}

static void
b_ipv4_ihl15_opts(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = f->n;
	fb_ipv4(f, 15, 6, SRC4, DST4, 0, 0);
	fb_tcp(f, 1, 80, DPMON_TCP_ACK);
	fb_fix_ipv4(f, ip);
}

static void
b_ipv4_ihl15_cut20(struct fb *f)
{
	b_ipv4_shape(f, 15, 20, 20, 17); /* edge d19 */
}

static void
b_ipv4_ihl15_cut42(struct fb *f)
{
	b_ipv4_shape(f, 15, 42, 3841, 29); /* pcapplusplus ip4_bad_fragment */
}

static void
b_ipv4_len19(struct fb *f)
{
	b_ipv4_shape(f, 5, 84, 19, 17); /* tcpdump ipv4_invalid_total_length_2 */
}

static void
b_ipv4_19bytes(struct fb *f)
{
	b_ipv4_shape(f, 5, 19, 84, 17); /* tcpdump ipv4_invalid_length */
}

static void
b_ipv4_ihl2(struct fb *f)
{
	b_udp4(f);
	f->b[14] = 0x42;
}

static void
b_ipv4_v6hdr(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x0800);
	inner_udp6(f);
}

static void
b_ipv4_len0(struct fb *f)
{
	b_tcp4_syn(f);
	fb_put16(f, 16, 0); /* TSO / BIG TCP: total length 0 */
}

static void
b_ipv4_len_long(struct fb *f)
{
	b_udp4(f);
	fb_put16(f, 16, f->n - 14 + 1); /* one byte more than present */
}

static void
b_frag_first(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = f->n;
	fb_ipv4(f, 5, 17, SRC4, DST4, 0x2000, 0);
	fb_udp(f, 1111, 2222, 100);
	fb_put16(f, f->n - 108 + 4, 1480); /* UDP length of the whole datagram */
	fb_fix_ipv4(f, ip);
}

static void
b_frag_next(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = f->n;
	fb_ipv4(f, 5, 17, SRC4, DST4, 185, 0); /* offset 1480 bytes, no MF */
	fb_u16(f, 9999);                       /* would be "ports" if read */
	fb_u16(f, 8888);
	fb_zero(f, 60);
	fb_fix_ipv4(f, ip);
}

static void
b_frag_next_tcp(struct fb *f)
{
	b_frag_next(f);
	f->b[14 + 9] = 6;
}

static void
b_df(struct fb *f)
{
	b_udp4(f);
	fb_put16(f, 14 + 6, 0x4000);
}

static void
b_udp6(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x86dd);
	inner_udp6(f);
}

static void
b_icmp6(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 58);
	fb_u32(f, 0x80000000);
	fb_u32(f, 0x00010001);
	fb_fix_ipv6(f, ip);
}

static void
b_hbh_udp6(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 0);
	fb_ext(f, 17, 0);
	udp_body(f);
	fb_fix_ipv6(f, ip);
}

static void
b_ext_chain_tcp6(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 0);
	fb_ext(f, 43, 1);  /* HBH, 16 bytes */
	fb_ext(f, 60, 0);  /* Routing, 8 */
	fb_ext(f, 135, 0); /* DstOpts, 8 */
	fb_ext(f, 51, 0);  /* Mobility, 8 */
	fb_u8(f, 6);       /* AH: next TCP, length 4 → 24 bytes */
	fb_u8(f, 4);
	fb_zero(f, 22);
	fb_tcp(f, 1, 443, DPMON_TCP_ACK | DPMON_TCP_FIN);
	fb_fix_ipv6(f, ip);
}

/* Hop-by-Hop header whose length runs past the frame (RFC 8200 4.3). */
static void
b_ext_long(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 0);
	fb_u8(f, 17);
	fb_u8(f, 200);
	fb_zero(f, 6);
	fb_fix_ipv6(f, ip);
}

/* zeek/ip6-ext-trunc: next header HBH, payload length 20, no byte of it present. */
static void
b_ext_absent(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x86dd);
	ip6(f, 0);
	fb_put16(f, 14 + 4, 20);
}

static void
b_ext_limit(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 60);
	for (int i = 0; i < DPMON_MAX_IPV6_EXT + 1; i++)
		fb_ext(f, i < DPMON_MAX_IPV6_EXT ? 60 : 17, 0);
	udp_body(f);
	fb_fix_ipv6(f, ip);
}

static void
b_frag6(struct fb *f, uint16_t off_flags)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 44);
	fb_u8(f, 17);
	fb_u8(f, 0);
	fb_u16(f, off_flags);
	fb_u32(f, 7);
	udp_body(f);
	fb_fix_ipv6(f, ip);
}

static void
b_frag6_next(struct fb *f)
{
	b_frag6(f, 1480);
}

static void
b_frag6_first(struct fb *f)
{
	b_frag6(f, 1); /* M flag */
}

static void
b_ipv6_cut39(struct fb *f)
{
	b_udp6(f);
	f->n = 14 + 39;
}

static void
b_ipv6_v4hdr(struct fb *f)
{
	fb_eth(f, NULL, 0, 0x86dd);
	udp4_tail(f);
}

static void
b_ipv6_plen_long(struct fb *f)
{
	b_udp6(f);
	fb_put16(f, 14 + 4, f->n - 54 + 10);
}

static void
b_ipv6_esp(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 50);
	fb_zero(f, 24);
	fb_fix_ipv6(f, ip);
}

static void
b_tcp_doff(struct fb *f, uint8_t doff, uint32_t present)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 6);
	fb_tcp_doff(f, 1, 80, DPMON_TCP_SYN, doff);
	f->n = 34 + present;
	fb_fix_ipv4(f, ip);
}

static void
b_tcp_doff4(struct fb *f)
{
	b_tcp_doff(f, 4, 20);
}

static void
b_tcp_doff7_cut(struct fb *f)
{
	b_tcp_doff(f, 7, 20); /* pcapplusplus tcp-malformed */
}

static void
b_tcp_doff8(struct fb *f)
{
	b_tcp_doff(f, 8, 32);
}

static void
b_tcp_short(struct fb *f)
{
	b_tcp_doff(f, 5, 10);
}

static void
b_tcp_none(struct fb *f)
{
	b_tcp_doff(f, 5, 0); /* suricata decode-too-small */
}

static void
b_udp_len5(struct fb *f)
{
	b_udp4(f);
	fb_put16(f, 34 + 4, 5);
}

static void
b_udp_len_long(struct fb *f)
{
	b_udp4(f);
	fb_put16(f, 34 + 4, 13);
}

static void
b_udp_short(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 17);
	fb_u32(f, 0x81580035);
	fb_fix_ipv4(f, ip);
}

static void
b_sctp(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 132);
	fb_u16(f, 2905);
	fb_u16(f, 2944);
	fb_u32(f, 0xdeadbeef);
	fb_u32(f, 0);
	fb_fix_ipv4(f, ip);
}

static void
b_sctp_short(struct fb *f)
{
	b_sctp(f);
	f->n -= 4;
	fb_fix_ipv4(f, 14);
}

static void
b_icmp_short(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 1);
	fb_u16(f, 0x0800);
	fb_fix_ipv4(f, ip);
}

/* IPv4 carrying protocol 58 (ICMPv6's number): not ICMP in IPv4. */
static void
b_icmpv6_in_ipv4(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 58);
	fb_zero(f, 8);
	fb_fix_ipv4(f, ip);
}

/* IPv6 with next header 1 (ICMP's number): not ICMPv6. */
static void
b_icmp_in_ipv6(struct fb *f)
{
	static const uint8_t src[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0,
					0,    0,    0,    0,    0,    0,    0, 1};
	static const uint8_t dst[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

	fb_eth(f, NULL, 0, 0x86dd);
	fb_ipv6(f, 1, src, dst, 8);
	fb_zero(f, 8);
}

/* GRE in IPv4 (198.51.100.1 -> 10.1.0.1) with @p flags / @p proto. */
static uint32_t
gre4_head(struct fb *f, uint16_t flags, uint16_t proto)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 47);
	fb_gre(f, flags, proto);
	return ip;
}

static void
b_gre_ip4(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0, 0x0800);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_cks(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0xb000, 0x86dd); /* C, K, S */
	inner_udp6(f);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_teb(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x2000, 0x6558);
	fb_mac(f, 0x86dd);
	inner_udp6(f);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_mpls(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0, 0x8847);
	fb_mpls(f, 30, 1);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

/* A keepalive: GRE carrying IPv4 carrying an empty GRE (proto 0). */
static void
b_gre_keepalive(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0, 0x0800), in = ip4a(f, 47, ISRC4, IDST4);
	fb_gre(f, 0, 0);
	fb_fix_ipv4(f, in);
	fb_fix_ipv4(f, ip);
}

/* Cisco MetaData inside GRE (tcpdump various_gre): EtherType first. */
static void
b_gre_cmd(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x2000, 0x8909);
	fb_u16(f, 0x0800);
	fb_u8(f, 1);
	fb_u8(f, 1);
	fb_u16(f, 1);
	fb_u16(f, 0);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_cdp(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0, 0x2000);
	fb_zero(f, 30);
	fb_fix_ipv4(f, ip);
}

/* PPTP: GRE version 1, K S A, PPP with address/control, IPv4. */
static void
b_gre_pptp(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x3081, 0x880b);
	fb_u16(f, 0xff03);
	fb_u16(f, 0x0021);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

/* PPTP without address/control, protocol field compressed to 1 byte. */
static void
b_gre_pptp_pfc(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x3001, 0x880b);
	fb_u8(f, 0x21);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_pptp_ccp(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x3081, 0x880b);
	fb_u16(f, 0xff03);
	fb_u16(f, 0x80fd);
	fb_u32(f, 0x06040004);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_routing(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x4000, 0x0800);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_2bytes(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 47);
	fb_u16(f, 0);
	fb_fix_ipv4(f, ip);
}

/* K and S announced, but only the first word of them present. */
static void
b_gre_ks_cut(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 47);
	fb_u16(f, 0x3000);
	fb_u16(f, 0x0800);
	fb_u32(f, 1);
	fb_fix_ipv4(f, ip);
}

static void
b_erspan2(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0x1000, 0x88be);
	fb_u32(f, 0x10640001); /* version 1, VLAN 100, session 1 */
	fb_u32(f, 0);
	fb_mac(f, 0x0800);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_erspan1(struct fb *f)
{
	uint32_t ip = gre4_head(f, 0, 0x88be);
	fb_mac(f, 0x0800);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_erspan3(struct fb *f, int o_bit)
{
	uint32_t ip = gre4_head(f, 0x1000, 0x22eb);
	fb_u32(f, 0x20640001); /* version 2 */
	fb_u32(f, 0x12345678); /* timestamp */
	fb_u16(f, 0);          /* SGT */
	fb_u8(f, 0);           /* P, FT 0 (Ethernet), HW ID */
	fb_u8(f, o_bit ? 1 : 0);
	if (o_bit)
		fb_zero(f, 8);
	fb_mac(f, 0x86dd);
	inner_udp6(f);
	fb_fix_ipv4(f, ip);
}

static void
b_erspan3_plain(struct fb *f)
{
	b_erspan3(f, 0);
}

static void
b_erspan3_o(struct fb *f)
{
	b_erspan3(f, 1);
}

/* VXLAN in IPv4/UDP to port 4789; @p inner builds the inner frame. */
static void
b_vxlan_with(struct fb *f, void (*inner)(struct fb *))
{
	uint32_t ip, u;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 17);
	u = f->n;
	fb_udp_hdr(f, 49152, 4789);
	fb_vxlan(f, 42);
	inner(f);
	fb_fix_udp(f, u);
	fb_fix_ipv4(f, ip);
}

static void
inner_eth_tcp4(struct fb *f)
{
	fb_mac(f, 0x0800);
	inner_tcp4(f);
}

static void
inner_eth_arp(struct fb *f)
{
	fb_mac(f, 0x0806);
	fb_zero(f, 28);
}

static void
inner_eth_cut(struct fb *f)
{
	fb_u32(f, 0x02000000);
}

static void
b_vxlan(struct fb *f)
{
	b_vxlan_with(f, inner_eth_tcp4);
}

static void
b_vxlan_arp(struct fb *f)
{
	b_vxlan_with(f, inner_eth_arp);
}

static void
b_vxlan_inner_cut(struct fb *f)
{
	b_vxlan_with(f, inner_eth_cut);
}

static void
b_vxlan_hdr_cut(struct fb *f)
{
	uint32_t ip, u;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 17);
	u = f->n;
	fb_udp_hdr(f, 49152, 4789);
	fb_u32(f, 0x08000000);
	fb_fix_udp(f, u);
	fb_fix_ipv4(f, ip);
}

static void
b_mpls_udp(struct fb *f)
{
	uint32_t ip, u;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 17);
	u = f->n;
	fb_udp_hdr(f, 49152, 6635);
	fb_mpls(f, 1000, 1);
	inner_tcp4(f);
	fb_fix_udp(f, u);
	fb_fix_ipv4(f, ip);
}

static void
b_gre_udp(struct fb *f)
{
	uint32_t ip, u;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 17);
	u = f->n;
	fb_udp_hdr(f, 49152, 4754);
	fb_gre(f, 0x2000, 0x0800);
	inner_tcp4(f);
	fb_fix_udp(f, u);
	fb_fix_ipv4(f, ip);
}

static void
b_4in4(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 4);
	inner_tcp4(f);
	fb_fix_ipv4(f, ip);
}

static void
b_6in4(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x0800);
	ip = ip4(f, 41);
	inner_udp6(f);
	fb_fix_ipv4(f, ip);
}

static void
b_4in6(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 4);
	inner_tcp4(f);
	fb_fix_ipv6(f, ip);
}

/* IPv6 + Routing header + IPv6 (tcpdump ipv6-srh-ext-header). */
static void
b_6in6_srh(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 43);
	fb_ext(f, 41, 2);
	inner_udp6(f);
	fb_fix_ipv6(f, ip);
}

/* IPv6 carrying "IPv4" whose version nibble is 6 (suricata bug-7964). */
static void
b_4in6_badver(struct fb *f)
{
	uint32_t ip;

	fb_eth(f, NULL, 0, 0x86dd);
	ip = ip6(f, 4);
	inner_udp6(f);
	fb_fix_ipv6(f, ip);
}

/* IPv4 in IPv4 five times: one more than DPMON_MAX_TUNNELS. */
static void
b_ipip5(struct fb *f)
{
	uint32_t at[5];

	fb_eth(f, NULL, 0, 0x0800);
	for (int i = 0; i < 5; i++)
		at[i] = ip4a(f, 4, ISRC4, IDST4 + (uint32_t)i);
	inner_tcp4(f);
	for (int i = 4; i >= 0; i--)
		fb_fix_ipv4(f, at[i]);
}

/* A non-first fragment of a GRE packet: nothing to decapsulate. */
static void
b_gre_frag(struct fb *f)
{
	b_gre_ip4(f);
	fb_put16(f, 14 + 6, 100);
}

/* Three tunnels: IPv6 → IPv4 → GRE/PPP → IPv4 (pcapplusplus GrePackets #6). */
static void
b_nested3(struct fb *f)
{
	uint32_t o6, m4;

	fb_eth(f, NULL, 0, 0x86dd);
	o6 = ip6(f, 4);
	m4 = ip4a(f, 47, 0x10000001, 0x100000c8);
	fb_gre(f, 0x3001, 0x880b);
	fb_u16(f, 0xff03);
	fb_u16(f, 0x0021);
	inner_tcp4(f);
	fb_fix_ipv4(f, m4);
	fb_fix_ipv6(f, o6);
}

/* ------------------------------------------------------------------------ */
/* The table                                                                */
/* ------------------------------------------------------------------------ */

struct want {
	enum dpmon_reason r;
	uint8_t family; /* checked when r == OK */
	const char *src, *dst;
	uint8_t proto, ip_proto, fragment;
	uint8_t ports; /* 0: absent (sport, dport, tcp_flags all 0) */
	uint16_t sport, dport;
	uint8_t tcp_flags;
	uint8_t vlan_depth;
	uint16_t vlan_outer, vlan_inner;
	uint8_t tunnels;
	uint16_t anomalies;
	uint8_t l4; /* 1: an L4 header offset is reported */
};

struct pcase {
	const char *name;
	void (*build)(struct fb *f);
	uint32_t decap;
	struct want w;
};

#define V4UDP       .family = 4, .src = "198.51.100.1", .dst = "10.1.0.1", .proto = UDP, .ip_proto = 17
#define PORTS(s, d) .ports = 1, .sport = (s), .dport = (d), .l4 = 1
#define IN_TCP4                                                                          \
	.family = 4, .src = "192.0.2.1", .dst = "10.9.0.9", .proto = TCP, .ip_proto = 6, \
	PORTS(3333, 80), .tcp_flags = DPMON_TCP_SYN
#define IN_UDP6                                                                       \
	.family = 6, .src = "2001:db8:ffff::1", .dst = "2001:db8:9::9", .proto = UDP, \
	.ip_proto = 17, PORTS(5353, 53)
#define GRE4                                                                                   \
	.family = 4, .src = "198.51.100.1", .dst = "10.1.0.1", .proto = OTHER, .ip_proto = 47, \
	.l4 = 1

static const struct pcase cases[] = {
	/* L2 */
	{"eth/ipv4/udp", b_udp4, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"802.1Q",
	 b_vlan1,
	 0,
	 {.r = OK, V4UDP, PORTS(1111, 2222), .vlan_depth = 1, .vlan_outer = 100}},
	{"802.1ad+802.1Q",
	 b_qinq,
	 0,
	 {.r = OK,
	  V4UDP,
	  PORTS(1111, 2222),
	  .vlan_depth = 2,
	  .vlan_outer = 100,
	  .vlan_inner = 101}},
	{"4 tags (9100 88a8 8100 8100)",
	 b_tags4,
	 0,
	 {.r = OK, IN_UDP6, .vlan_depth = 4, .vlan_outer = 100, .vlan_inner = 101}},
	{"5 tags", b_tags5, 0, {.r = DPMON_REASON_VLAN_TOO_DEEP}},
	{"tag cut short", b_tag_cut, 0, {.r = DPMON_REASON_RUNT}},
	{"13 bytes", b_runt13, 0, {.r = DPMON_REASON_RUNT}},
	{"0 bytes", b_empty, 0, {.r = DPMON_REASON_RUNT}},
	{"ARP", b_arp, 0, {.r = DPMON_REASON_NON_IP}},
	{"Ethernet loopback 0x9000", b_loopback, 0, {.r = DPMON_REASON_NON_IP}},
	{"802.3 length + LLC", b_llc, 0, {.r = DPMON_REASON_NON_IP}},
	{"MPLS, 1 label", b_mpls1, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"MPLS multicast, 3 labels, IPv6", b_mpls3_mc_v6, 0, {.r = OK, IN_UDP6}},
	{"MPLS, 8 labels", b_mpls8, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"MPLS, 9 labels", b_mpls9, 0, {.r = DPMON_REASON_MPLS_NO_BOTTOM}},
	{"MPLS, no bottom before the end", b_mpls_runs_out, 0, {.r = DPMON_REASON_MPLS_NO_BOTTOM}},
	{"MPLS, control word, Ethernet, tag",
	 b_mpls_pw_eth,
	 0,
	 {.r = OK, V4UDP, PORTS(1111, 2222), .vlan_depth = 1, .vlan_outer = 300}},
	{"MPLS, payload nibble 5", b_mpls_nibble5, 0, {.r = DPMON_REASON_NON_IP}},
	{"802.1Q + MPLS",
	 b_vlan_mpls,
	 0,
	 {.r = OK, V4UDP, PORTS(1111, 2222), .vlan_depth = 1, .vlan_outer = 100}},
	{"PPPoE IPv4", b_pppoe4, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"PPPoE IPv6", b_pppoe6, 0, {.r = OK, IN_UDP6}},
	{"PPPoE LCP", b_pppoe_lcp, 0, {.r = DPMON_REASON_NON_IP}},
	{"PPPoE cut short", b_pppoe_cut, 0, {.r = DPMON_REASON_RUNT}},
	{"PPPoE discovery", b_pppoe_disc, 0, {.r = DPMON_REASON_NON_IP}},
	{"VLAN + VN-tag + VLAN",
	 b_vntag,
	 0,
	 {.r = OK,
	  V4UDP,
	  PORTS(1111, 2222),
	  .vlan_depth = 2,
	  .vlan_outer = 100,
	  .vlan_inner = 250}},
	{"Cisco MetaData", b_cmd, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"PBB I-tag", b_pbb1, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"49 PBB I-tags", b_pbb49, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},
	{"65 PBB I-tags", b_pbb65, 0, {.r = DPMON_REASON_L2_TOO_DEEP}},

	/* IPv4 */
	{"IHL 2", b_ipv4_ihl2, 0, {.r = DPMON_REASON_IPV4_BAD_HEADER}},
	{"version 6 behind 0x0800", b_ipv4_v6hdr, 0, {.r = DPMON_REASON_IPV4_BAD_HEADER}},
	{"IHL 15, options present",
	 b_ipv4_ihl15_opts,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  PORTS(1, 80),
	  .tcp_flags = DPMON_TCP_ACK}},
	{"IHL 15, 20 bytes, total length 20 (edge d19)",
	 b_ipv4_ihl15_cut20,
	 0,
	 {.r = DPMON_REASON_IPV4_TRUNCATED}},
	{"IHL 15, 42 bytes, total length 3841",
	 b_ipv4_ihl15_cut42,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = OTHER,
	  .ip_proto = 29,
	  .anomalies = AN(IPV4_OPTIONS_TRUNCATED) | AN(IPV4_LEN_MISMATCH)}},
	{"total length 19 < IHL", b_ipv4_len19, 0, {.r = DPMON_REASON_IPV4_BAD_LENGTH}},
	{"19 bytes of IPv4", b_ipv4_19bytes, 0, {.r = DPMON_REASON_IPV4_TRUNCATED}},
	{"total length 0 (TSO)",
	 b_ipv4_len0,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  PORTS(40000, 80),
	  .tcp_flags = DPMON_TCP_SYN,
	  .anomalies = AN(IPV4_LEN_MISMATCH)}},
	{"total length past the frame",
	 b_ipv4_len_long,
	 0,
	 {.r = OK, V4UDP, PORTS(1111, 2222), .anomalies = AN(IPV4_LEN_MISMATCH)}},
	{"Ethernet padding", b_udp4_padded, 0, {.r = OK, V4UDP, PORTS(7, 9)}},
	{"first fragment", b_frag_first, 0, {.r = OK, V4UDP, PORTS(1111, 2222), .fragment = 1}},
	{"non-first fragment", b_frag_next, 0, {.r = OK, V4UDP, .fragment = 1}},
	{"non-first fragment, TCP",
	 b_frag_next_tcp,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  .fragment = 1}},
	{"DF alone", b_df, 0, {.r = OK, V4UDP, PORTS(1111, 2222)}},

	/* IPv6 */
	{"IPv6/UDP", b_udp6, 0, {.r = OK, IN_UDP6}},
	{"ICMPv6",
	 b_icmp6,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = ICMP,
	  .ip_proto = 58,
	  .l4 = 1}},
	{"Hop-by-Hop + UDP",
	 b_hbh_udp6,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = UDP,
	  .ip_proto = 17,
	  PORTS(1111, 2222)}},
	{"HBH Routing DstOpts Mobility AH TCP",
	 b_ext_chain_tcp6,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = TCP,
	  .ip_proto = 6,
	  PORTS(1, 443),
	  .tcp_flags = DPMON_TCP_ACK | DPMON_TCP_FIN}},
	{"extension header past the frame",
	 b_ext_long,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = OTHER,
	  .ip_proto = 0,
	  .anomalies = AN(IPV6_EXT_TRUNCATED)}},
	{"extension header absent (zeek ip6-ext-trunc)",
	 b_ext_absent,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = OTHER,
	  .ip_proto = 0,
	  .anomalies = AN(IPV6_EXT_TRUNCATED) | AN(IPV6_LEN_MISMATCH)}},
	{"9 extension headers",
	 b_ext_limit,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = OTHER,
	  .ip_proto = 60,
	  .anomalies = AN(IPV6_EXT_LIMIT)}},
	{"IPv6 non-first fragment",
	 b_frag6_next,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = UDP,
	  .ip_proto = 17,
	  .fragment = 1}},
	{"IPv6 first fragment",
	 b_frag6_first,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = UDP,
	  .ip_proto = 17,
	  .fragment = 1,
	  PORTS(1111, 2222)}},
	{"39 bytes of IPv6", b_ipv6_cut39, 0, {.r = DPMON_REASON_IPV6_TRUNCATED}},
	{"version 4 behind 0x86dd", b_ipv6_v4hdr, 0, {.r = DPMON_REASON_IPV6_BAD_HEADER}},
	{"payload length past the frame",
	 b_ipv6_plen_long,
	 0,
	 {.r = OK, IN_UDP6, .anomalies = AN(IPV6_LEN_MISMATCH)}},
	{"ESP: an unknown next header ends the walk",
	 b_ipv6_esp,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = OTHER,
	  .ip_proto = 50,
	  .l4 = 1}},

	/* L4 */
	{"TCP SYN",
	 b_tcp4_syn,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  PORTS(40000, 80),
	  .tcp_flags = DPMON_TCP_SYN}},
	{"TCP SYN+ACK",
	 b_tcp4_synack,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  PORTS(80, 40000),
	  .tcp_flags = DPMON_TCP_SYN | DPMON_TCP_ACK}},
	{"TCP data offset 4",
	 b_tcp_doff4,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  .l4 = 1,
	  .anomalies = AN(TCP_BAD_OFFSET)}},
	{"TCP data offset 7, 20 bytes",
	 b_tcp_doff7_cut,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  .l4 = 1,
	  .anomalies = AN(TCP_BAD_OFFSET)}},
	{"TCP data offset 8 with options",
	 b_tcp_doff8,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  PORTS(1, 80),
	  .tcp_flags = DPMON_TCP_SYN}},
	{"TCP 10 bytes",
	 b_tcp_short,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  .l4 = 1,
	  .anomalies = AN(L4_TRUNCATED)}},
	{"TCP absent",
	 b_tcp_none,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = TCP,
	  .ip_proto = 6,
	  .l4 = 1,
	  .anomalies = AN(L4_TRUNCATED)}},
	{"UDP length 5", b_udp_len5, 0, {.r = OK, V4UDP, .l4 = 1, .anomalies = AN(UDP_BAD_LENGTH)}},
	{"UDP length past the datagram",
	 b_udp_len_long,
	 0,
	 {.r = OK, V4UDP, .l4 = 1, .anomalies = AN(UDP_BAD_LENGTH)}},
	{"UDP 4 bytes", b_udp_short, 0, {.r = OK, V4UDP, .l4 = 1, .anomalies = AN(L4_TRUNCATED)}},
	{"SCTP",
	 b_sctp,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = OTHER,
	  .ip_proto = 132,
	  PORTS(2905, 2944)}},
	{"SCTP 8 bytes",
	 b_sctp_short,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = OTHER,
	  .ip_proto = 132,
	  .l4 = 1,
	  .anomalies = AN(L4_TRUNCATED)}},
	{"ICMP 2 bytes",
	 b_icmp_short,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = ICMP,
	  .ip_proto = 1,
	  .l4 = 1,
	  .anomalies = AN(L4_TRUNCATED)}},
	/* ICMP by number and family: 1 is ICMP in IPv4 only, 58 in IPv6 only. */
	{"IPv4 protocol 58",
	 b_icmpv6_in_ipv4,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = OTHER,
	  .ip_proto = 58,
	  .l4 = 1}},
	{"IPv6 next header 1",
	 b_icmp_in_ipv6,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = OTHER,
	  .ip_proto = 1,
	  .l4 = 1}},
	{"GRE 2 bytes", b_gre_2bytes, 0, {.r = OK, GRE4, .anomalies = AN(GRE_TRUNCATED)}},
	{"GRE K+S, 8 bytes", b_gre_ks_cut, 0, {.r = OK, GRE4, .anomalies = AN(GRE_TRUNCATED)}},
	{"GRE 2 bytes, decap", b_gre_2bytes, ALL, {.r = OK, GRE4, .anomalies = AN(GRE_TRUNCATED)}},

	/* Tunnels: decap off counts the outer header, decap on the innermost. */
	{"GRE IPv4, decap off", b_gre_ip4, 0, {.r = OK, GRE4}},
	{"GRE IPv4, decap vxlan only", b_gre_ip4, DPMON_TUNNEL_VXLAN, {.r = OK, GRE4}},
	{"GRE IPv4, decap gre", b_gre_ip4, DPMON_TUNNEL_GRE, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"GRE C+K+S IPv6", b_gre_cks, ALL, {.r = OK, IN_UDP6, .tunnels = 1}},
	{"GRE TEB", b_gre_teb, ALL, {.r = OK, IN_UDP6, .tunnels = 1}},
	{"GRE MPLS", b_gre_mpls, ALL, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"GRE keepalive",
	 b_gre_keepalive,
	 ALL,
	 {.r = OK,
	  .family = 4,
	  .src = "192.0.2.1",
	  .dst = "10.9.0.9",
	  .proto = OTHER,
	  .ip_proto = 47,
	  .l4 = 1,
	  .tunnels = 1}},
	{"GRE Cisco MetaData", b_gre_cmd, ALL, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"GRE CDP (not IP)", b_gre_cdp, ALL, {.r = OK, GRE4}},
	{"PPTP GRE v1 PPP IPv4", b_gre_pptp, ALL, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"PPTP GRE v1, compressed PPP", b_gre_pptp_pfc, ALL, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"PPTP GRE v1 PPP CCP", b_gre_pptp_ccp, ALL, {.r = OK, GRE4}},
	{"GRE with routing",
	 b_gre_routing,
	 ALL,
	 {.r = OK, GRE4, .anomalies = AN(TUNNEL_UNSUPPORTED)}},
	{"GRE non-first fragment",
	 b_gre_frag,
	 ALL,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = OTHER,
	  .ip_proto = 47,
	  .fragment = 1}},
	{"ERSPAN II", b_erspan2, DPMON_TUNNEL_ERSPAN, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"ERSPAN II, decap gre only", b_erspan2, DPMON_TUNNEL_GRE, {.r = OK, GRE4}},
	{"ERSPAN I", b_erspan1, ALL, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"ERSPAN III", b_erspan3_plain, ALL, {.r = OK, IN_UDP6, .tunnels = 1}},
	{"ERSPAN III + platform sub-header", b_erspan3_o, ALL, {.r = OK, IN_UDP6, .tunnels = 1}},
	{"VXLAN, decap off", b_vxlan, 0, {.r = OK, V4UDP, PORTS(49152, 4789)}},
	{"VXLAN", b_vxlan, DPMON_TUNNEL_VXLAN, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"VXLAN carrying ARP", b_vxlan_arp, ALL, {.r = OK, V4UDP, PORTS(49152, 4789)}},
	{"VXLAN, inner Ethernet cut",
	 b_vxlan_inner_cut,
	 ALL,
	 {.r = OK, V4UDP, PORTS(49152, 4789), .anomalies = AN(TUNNEL_MALFORMED)}},
	{"VXLAN header cut",
	 b_vxlan_hdr_cut,
	 ALL,
	 {.r = OK, V4UDP, PORTS(49152, 4789), .anomalies = AN(TUNNEL_MALFORMED)}},
	{"MPLS over UDP", b_mpls_udp, DPMON_TUNNEL_MPLS_UDP, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"GRE over UDP", b_gre_udp, DPMON_TUNNEL_GRE_UDP, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"GRE over UDP, decap gre only",
	 b_gre_udp,
	 DPMON_TUNNEL_GRE,
	 {.r = OK, V4UDP, PORTS(49152, 4754)}},
	{"IPv4 in IPv4, decap off",
	 b_4in4,
	 0,
	 {.r = OK,
	  .family = 4,
	  .src = "198.51.100.1",
	  .dst = "10.1.0.1",
	  .proto = OTHER,
	  .ip_proto = 4,
	  .l4 = 1}},
	{"IPv4 in IPv4", b_4in4, DPMON_TUNNEL_IPIP, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"IPv6 in IPv4", b_6in4, DPMON_TUNNEL_IPIP, {.r = OK, IN_UDP6, .tunnels = 1}},
	{"IPv4 in IPv6", b_4in6, DPMON_TUNNEL_IPIP, {.r = OK, IN_TCP4, .tunnels = 1}},
	{"IPv6 in IPv6 after a routing header",
	 b_6in6_srh,
	 DPMON_TUNNEL_IPIP,
	 {.r = OK, IN_UDP6, .tunnels = 1}},
	{"IPv4 in IPv6 with version 6, decap off",
	 b_4in6_badver,
	 0,
	 {.r = OK,
	  .family = 6,
	  .src = "2001:db8:ffff::1",
	  .dst = "2001:db8:1::7",
	  .proto = OTHER,
	  .ip_proto = 4,
	  .l4 = 1}},
	{"IPv4 in IPv6 with version 6, decap",
	 b_4in6_badver,
	 ALL,
	 {.r = DPMON_REASON_IPV4_BAD_HEADER}},
	{"5 nested IP-in-IP",
	 b_ipip5,
	 ALL,
	 {.r = OK,
	  .family = 4,
	  .src = "192.0.2.1",
	  .dst = "10.9.0.13",
	  .proto = OTHER,
	  .ip_proto = 4,
	  .l4 = 1,
	  .tunnels = DPMON_MAX_TUNNELS,
	  .anomalies = AN(TUNNEL_LIMIT)}},
	{"IPv6 → IPv4 → GRE/PPP → IPv4", b_nested3, ALL, {.r = OK, IN_TCP4, .tunnels = 2}},
};

/* ------------------------------------------------------------------------ */
/* Checking                                                                 */
/* ------------------------------------------------------------------------ */

static int
addr_eq(const struct dpmon_pkt *p, int is_dst, const char *text)
{
	uint8_t a[16];

	if (p->family == 4) {
		uint32_t v;

		if (inet_pton(AF_INET, text, &v) != 1)
			return 0;
		return (is_dst ? p->dst4 : p->src4) == ntohl(v);
	}
	if (inet_pton(AF_INET6, text, a) != 1)
		return 0;
	return memcmp(is_dst ? p->dst6 : p->src6, a, 16) == 0;
}

#define CHECK_CASE(name, cond)                                                                  \
	do {                                                                                    \
		test_checks++;                                                                  \
		if (!(cond)) {                                                                  \
			test_failures++;                                                        \
			fprintf(stderr, "%s:%d: case \"%s\": %s\n", __FILE__, __LINE__, (name), \
				#cond);                                                         \
		}                                                                               \
	} while (0)

/* Check @p p (parsed with result @p r from a @p len-byte frame) against @p w. */
static void
check_pkt(const char *name, enum dpmon_reason r, const struct dpmon_pkt *p, const struct want *w,
	  uint32_t len)
{
	CHECK_CASE(name, r == w->r);
	if (r != w->r)
		fprintf(stderr, "  reason %s, expected %s\n", dpmon_reason_name(r),
			dpmon_reason_name(w->r));
	CHECK_CASE(name, p->len == len);
	if (r != OK || w->r != OK)
		return;
	CHECK_CASE(name, p->family == w->family);
	CHECK_CASE(name, addr_eq(p, 0, w->src));
	CHECK_CASE(name, addr_eq(p, 1, w->dst));
	CHECK_CASE(name, p->proto == w->proto);
	CHECK_CASE(name, p->ip_proto == w->ip_proto);
	CHECK_CASE(name, p->fragment == w->fragment);
	CHECK_CASE(name, p->ports == w->ports);
	CHECK_CASE(name, p->sport == w->sport && p->dport == w->dport);
	CHECK_CASE(name, p->tcp_flags == w->tcp_flags);
	CHECK_CASE(name, p->vlan_depth == w->vlan_depth);
	CHECK_CASE(name, p->vlan_outer == w->vlan_outer && p->vlan_inner == w->vlan_inner);
	CHECK_CASE(name, p->tunnels == w->tunnels);
	CHECK_CASE(name, p->anomalies == w->anomalies);
	if (p->anomalies != w->anomalies)
		fprintf(stderr, "  anomalies 0x%x, expected 0x%x\n", p->anomalies, w->anomalies);
	CHECK_CASE(name, (p->l4_offset != 0) == (w->l4 != 0));
	if (w->l4)
		CHECK_CASE(name, p->l4_offset > p->l3_offset && p->l4_offset <= len);
}

static void
test_table(void)
{
	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		struct dpmon_pkt p;
		struct fb f = {.n = 0};
		enum dpmon_reason r;

		cases[i].build(&f);
		memset(&p, 0xee, sizeof(p));
		r = dpmon_parse_frame_decap(f.b, f.n, cases[i].decap, &p);
		check_pkt(cases[i].name, r, &p, &cases[i].w, f.n);
		if (cases[i].decap == 0) { /* the no-decap entry point agrees */
			struct dpmon_pkt q;

			CHECK_CASE(cases[i].name, dpmon_parse_frame(f.b, f.n, &q) == r);
		}
	}
}

/* Every TPID at every depth up to the limit; the VLAN IDs are the first two. */
static void
test_tag_stacks(void)
{
	static const uint16_t tpids[] = {0x8100, 0x88a8, 0x9100};
	struct dpmon_pkt p;
	struct fb f;

	for (unsigned depth = 1; depth <= DPMON_MAX_VLAN_TAGS; depth++) {
		for (unsigned t = 0; t < RTE_DIM(tpids); t++) {
			uint16_t tp[DPMON_MAX_VLAN_TAGS];

			for (unsigned k = 0; k < depth; k++)
				tp[k] = tpids[(t + k) % RTE_DIM(tpids)];
			fb_eth(&f, tp, depth, 0x0800);
			udp4_tail(&f);
			CHECK(dpmon_parse_frame(f.b, f.n, &p) == OK);
			CHECK_EQ_U64(p.vlan_depth, depth);
			CHECK_EQ_U64(p.vlan_outer, 100);
			CHECK_EQ_U64(p.vlan_inner, depth > 1 ? 101 : 0);
			CHECK_EQ_U64(p.l3_offset, 14 + 4 * depth);
			CHECK(p.family == 4 && p.dst4 == DST4 && p.sport == 1111);
		}
	}
}

/* IHL 0..4 are all bad headers. */
static void
test_ihl_below_5(void)
{
	struct dpmon_pkt p;
	struct fb f;

	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		b_udp4(&f);
		f.b[14] = (uint8_t)(0x40 | ihl);
		CHECK(dpmon_parse_frame(f.b, f.n, &p) == DPMON_REASON_IPV4_BAD_HEADER);
	}
}

/* Every prefix of every table frame: never a crash, and shorter is never "more OK". */
static void
test_every_prefix(void)
{
	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		struct fb f = {.n = 0};
		uint8_t *copy;

		cases[i].build(&f);
		for (uint32_t n = 0; n <= f.n; n++) {
			struct dpmon_pkt p;
			enum dpmon_reason r;

			/* A heap copy of exactly n bytes: ASan catches any over-read. */
			copy = malloc(n ? n : 1);
			memcpy(copy, f.b, n);
			r = dpmon_parse_frame_decap(copy, n, cases[i].decap, &p);
			CHECK(r < DPMON_REASON_MAX && p.len == n);
			if (r == OK)
				CHECK(p.family == 4 || p.family == 6);
			free(copy);
		}
	}
}

/* Parse @p n bytes of @p b with and without the fast path: same reason, same fields. */
static void
check_fast_same(const uint8_t *b, uint32_t n, uint32_t decap)
{
	struct dpmon_pkt fast, full;
	enum dpmon_reason rf, rs;
	uint8_t *copy = malloc(n ? n : 1);

	/* A heap copy of exactly n bytes: ASan catches any over-read. */
	memcpy(copy, b, n);
	memset(&fast, 0xa5, sizeof(fast));
	memset(&full, 0xa5, sizeof(full));
	rf = dpmon_parse_frame_decap(copy, n, decap, &fast);
	rs = dpmon_parse_frame_full(copy, n, decap, &full);
	CHECK_EQ_U64(rf, rs);
	CHECK(same_result(rf, &fast, rs, &full));
	/* On this contiguous entry point both point into the frame itself. */
	if (rf == OK && rs == OK && full.family == 6)
		CHECK(fast.src6 == full.src6 && fast.dst6 == full.dst6);
	free(copy);
}

/*
 * The fast path for the common frame (parse.c) against the full parser:
 * every table frame, every prefix of it, and every single-byte change of
 * its first 96 bytes to 0x00, 0xff or one flipped bit (0x01, 0x10, 0x80),
 * with no tunnel and with every tunnel decapsulated.
 */
static void
test_fast_path(void)
{
	static const uint8_t flips[] = {0x01, 0x10, 0x80};
	static const uint32_t decaps[] = {0, ALL};

	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		struct fb f = {.n = 0};

		cases[i].build(&f);
		for (unsigned d = 0; d < RTE_DIM(decaps); d++) {
			for (uint32_t n = 0; n <= f.n; n++)
				check_fast_same(f.b, n, decaps[d]);
			for (uint32_t at = 0; at < f.n && at < 96; at++) {
				struct fb m = f;

				m.b[at] = 0x00;
				check_fast_same(m.b, m.n, decaps[d]);
				m.b[at] = 0xff;
				check_fast_same(m.b, m.n, decaps[d]);
				for (unsigned k = 0; k < RTE_DIM(flips); k++) {
					m.b[at] = f.b[at] ^ flips[k];
					check_fast_same(m.b, m.n, decaps[d]);
				}
			}
		}
	}
}

/* ------------------------------------------------------------------------ */
/* mbufs                                                                    */
/* ------------------------------------------------------------------------ */

static struct rte_mempool *mp;

/* Build a chain from @p f split at @p cuts; pkt_len forced to @p pkt_len. */
static struct rte_mbuf *
chain(const struct fb *f, const uint32_t *cuts, unsigned ncuts, uint32_t pkt_len)
{
	struct rte_mbuf *head = NULL, *prev = NULL;
	uint32_t from = 0;

	for (unsigned i = 0; i <= ncuts; i++) {
		/* cuts is read only below ncuts (callers pass NULL with 0). */
		/* cppcheck-suppress nullPointer */
		uint32_t to = i < ncuts ? cuts[i] : f->n;
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		char *d;

		REQUIRE(m != NULL);
		d = rte_pktmbuf_append(m, (uint16_t)(to - from));

		memcpy(d, f->b + from, to - from);
		if (prev == NULL) {
			head = m;
		} else {
			prev->next = m;
			head->nb_segs++;
			head->pkt_len += m->data_len;
		}
		prev = m;
		from = to;
	}
	head->pkt_len = pkt_len;
	return head;
}

/* Same result as the contiguous frame, whatever the segmentation. */
static void
test_segmented_table(void)
{
	static const uint32_t steps[] = {1, 7, 13, 40, 100};
	uint8_t scratch[DPMON_PARSE_GATHER];

	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		struct fb f = {.n = 0};

		cases[i].build(&f);
		for (size_t s = 0; s < RTE_DIM(steps); s++) {
			uint32_t cuts[64];
			unsigned n = 0;
			struct dpmon_pkt p;
			struct rte_mbuf *m;

			for (uint32_t at = steps[s]; at < f.n && n < RTE_DIM(cuts);
			     at += steps[s] * (n + 1))
				cuts[n++] = at;
			if (f.n == 0)
				continue;
			m = chain(&f, cuts, n, f.n);
			check_pkt(cases[i].name,
				  dpmon_parse_mbuf_decap(m, cases[i].decap, &p, scratch), &p,
				  &cases[i].w, f.n);
			rte_pktmbuf_free(m);
		}
	}
}

static void
test_mbuf_lengths(void)
{
	uint8_t scratch[DPMON_PARSE_GATHER];
	struct dpmon_pkt p;
	struct rte_mbuf *m;
	struct fb f;

	b_hbh_udp6(&f);
	/* pkt_len larger than the segments hold (pcap PMD, records > 65535):
	 * the headers present parse; the frame counts pkt_len bytes. */
	{
		static const uint32_t cuts[] = {20};
		m = chain(&f, cuts, 1, 80066);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == OK);
		CHECK(p.proto == UDP && p.ports == 1 && p.len == 80066);
		CHECK_EQ_U64(p.anomalies, AN(PKT_LEN_MISMATCH));
		rte_pktmbuf_free(m);
	}
	/* Same, but the segments stop inside the IPv6 header. */
	{
		struct fb g = f;
		static const uint32_t cuts[] = {20};
		g.n = 40;
		m = chain(&g, cuts, 1, 80066);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_IPV6_TRUNCATED);
		CHECK(p.len == 80066);
		rte_pktmbuf_free(m);
	}
	/* Single segment with pkt_len > data_len. */
	{
		struct fb g = f;
		g.n = 30;
		m = chain(&g, NULL, 0, 1500);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_IPV6_TRUNCATED);
		rte_pktmbuf_free(m);
	}
	/* A zero-length mbuf (pcap PMD, zero-length records). */
	m = rte_pktmbuf_alloc(mp);
	CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_RUNT);
	CHECK(p.len == 0);
	rte_pktmbuf_free(m);
}

/* A NIC that stripped the outer tag: 4 bytes count back, vlan_tci is the outer VLAN. */
static void
test_vlan_stripped(void)
{
	uint8_t scratch[DPMON_PARSE_GATHER];
	struct dpmon_pkt p;
	struct rte_mbuf *m;
	struct fb f;

	b_udp4(&f);
	m = chain(&f, NULL, 0, f.n);
	m->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_VLAN;
	m->vlan_tci = 0x2000 | 42; /* PCP 1, VID 42 */
	CHECK(dpmon_parse_mbuf(m, &p, scratch) == OK);
	CHECK_EQ_U64(p.len, f.n + 4);
	CHECK(p.vlan_depth == 1 && p.vlan_outer == 42 && p.vlan_inner == 0);
	rte_pktmbuf_free(m);

	b_vlan1(&f); /* one more tag in the frame: it becomes the inner one */
	m = chain(&f, NULL, 0, f.n);
	m->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED;
	m->vlan_tci = 7;
	CHECK(dpmon_parse_mbuf(m, &p, scratch) == OK);
	CHECK_EQ_U64(p.len, f.n + 4);
	CHECK(p.vlan_depth == 2 && p.vlan_outer == 7 && p.vlan_inner == 100);
	rte_pktmbuf_free(m);

	b_udp4(&f); /* QinQ stripped: both tags, 8 bytes */
	m = chain(&f, NULL, 0, f.n);
	m->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_QINQ_STRIPPED;
	m->vlan_tci_outer = 200;
	m->vlan_tci = 100;
	CHECK(dpmon_parse_mbuf(m, &p, scratch) == OK);
	CHECK_EQ_U64(p.len, f.n + 8);
	CHECK(p.vlan_depth == 2 && p.vlan_outer == 200 && p.vlan_inner == 100);
	rte_pktmbuf_free(m);

	b_arp(&f); /* a dropped frame still counts its stripped tag in len */
	m = chain(&f, NULL, 0, f.n);
	m->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED;
	CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_NON_IP);
	CHECK_EQ_U64(p.len, f.n + 4);
	rte_pktmbuf_free(m);
}

/*
 * The header window: headers are read from the first DPMON_PARSE_GATHER
 * bytes only, in a contiguous frame as in a segmented one.
 */
static void
test_window(void)
{
	uint8_t scratch[DPMON_PARSE_GATHER];
	struct dpmon_pkt p, q;
	struct rte_mbuf *m;
	struct fb f;
	uint32_t ip;
	static const uint32_t cuts[] = {100, 1000, 2000, 2100};

	/* IPv6 with a 2048-byte Hop-by-Hop header, then UDP: past the window. */
	fb_eth(&f, NULL, 0, 0x86dd);
	ip = ip6(&f, 0);
	fb_ext(&f, 17, 255);
	udp_body(&f);
	fb_fix_ipv6(&f, ip);
	CHECK(f.n > DPMON_PARSE_GATHER);
	CHECK(dpmon_parse_frame(f.b, f.n, &p) == OK);
	CHECK(p.family == 6 && p.anomalies == AN(IPV6_EXT_TRUNCATED) && p.ports == 0);
	m = chain(&f, cuts, RTE_DIM(cuts), f.n);
	CHECK(dpmon_parse_mbuf(m, &q, scratch) == OK);
	CHECK(q.anomalies == p.anomalies && q.len == f.n && memcmp(q.dst6, A6, 16) == 0);
	rte_pktmbuf_free(m);

	/* 49 PBB I-tags in 100-byte segments: gathered, parsed like one piece. */
	b_pbb49(&f);
	{
		uint32_t c[16];
		unsigned n = 0;

		for (uint32_t at = 100; at < f.n; at += 100)
			c[n++] = at;
		m = chain(&f, c, n, f.n);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == OK);
		CHECK(p.family == 4 && p.dst4 == DST4 && p.sport == 1111 && p.len == f.n);
		rte_pktmbuf_free(m);
	}
}

int
main(int argc, char **argv)
{
	(void)argc;
	test_eal_init(argv[0]);
	mp = rte_pktmbuf_pool_create("test_parse", 512, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	CHECK(mp != NULL);
	test_table();
	test_tag_stacks();
	test_ihl_below_5();
	test_every_prefix();
	test_fast_path();
	test_segmented_table();
	test_mbuf_lengths();
	test_vlan_stripped();
	test_window();
	rte_mempool_free(mp);
	return test_finish("test_parse");
}
