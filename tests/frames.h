/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frames.h — a tiny frame builder for the unit tests: Ethernet, tags, MPLS,
 * PPPoE, IPv4, IPv6 (+ extension headers), L4 stubs, tunnel headers. Each
 * fb_* appends to a caller buffer (fb_eth starts a new frame); lengths that
 * depend on what follows are patched afterwards with fb_fix_*. Only for
 * tests; values are chosen by the caller.
 */
#ifndef DPMON_TEST_FRAMES_H
#define DPMON_TEST_FRAMES_H

#include <stdint.h>
#include <string.h>

struct fb {
	uint8_t b[4096];
	uint32_t n;
};

static inline void
fb_u8(struct fb *f, uint8_t v)
{
	f->b[f->n++] = v;
}

static inline void
fb_u16(struct fb *f, uint16_t v)
{
	fb_u8(f, (uint8_t)(v >> 8));
	fb_u8(f, (uint8_t)v);
}

static inline void
fb_u32(struct fb *f, uint32_t v)
{
	fb_u16(f, (uint16_t)(v >> 16));
	fb_u16(f, (uint16_t)v);
}

static inline void
fb_zero(struct fb *f, uint32_t n)
{
	memset(f->b + f->n, 0, n);
	f->n += n;
}

/* Ethernet header with the tags in @p tpids (VLAN ids 100, 101, ...) and @p type. */
static inline void
fb_eth(struct fb *f, const uint16_t *tpids, unsigned ntags, uint16_t type)
{
	static const uint8_t mac[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2};
	f->n = 0;
	memcpy(f->b, mac, 12);
	f->n = 12;
	for (unsigned i = 0; i < ntags; i++) {
		fb_u16(f, tpids[i]);
		fb_u16(f, (uint16_t)(100 + i));
	}
	fb_u16(f, type);
}

/* IPv4 header: @p ihl words, protocol, addresses (host order), frag field. */
static inline void
fb_ipv4(struct fb *f, uint8_t ihl, uint8_t proto, uint32_t src, uint32_t dst, uint16_t frag,
	uint16_t total_len)
{
	fb_u8(f, (uint8_t)(0x40 | ihl));
	fb_u8(f, 0);
	fb_u16(f, total_len);
	fb_u16(f, 0x1234);
	fb_u16(f, frag);
	fb_u8(f, 64);
	fb_u8(f, proto);
	fb_u16(f, 0);
	fb_u32(f, src);
	fb_u32(f, dst);
	for (unsigned i = 5; i < ihl; i++)
		fb_u32(f, 0x01010101); /* NOP options */
}

static inline void
fb_ipv6(struct fb *f, uint8_t next, const uint8_t *src, const uint8_t *dst, uint16_t plen)
{
	fb_u32(f, 0x60000000);
	fb_u16(f, plen);
	fb_u8(f, next);
	fb_u8(f, 64);
	memcpy(f->b + f->n, src, 16);
	f->n += 16;
	memcpy(f->b + f->n, dst, 16);
	f->n += 16;
}

/* A generic 8-byte-unit extension header (HBH, DstOpts, Routing). */
static inline void
fb_ext(struct fb *f, uint8_t next, uint8_t len8)
{
	fb_u8(f, next);
	fb_u8(f, len8);
	fb_zero(f, 6 + 8u * len8);
}

static inline void
fb_udp(struct fb *f, uint16_t sport, uint16_t dport, uint16_t payload)
{
	fb_u16(f, sport);
	fb_u16(f, dport);
	fb_u16(f, (uint16_t)(8 + payload));
	fb_u16(f, 0);
	fb_zero(f, payload);
}

static inline void
fb_tcp(struct fb *f, uint16_t sport, uint16_t dport, uint8_t flags)
{
	fb_u16(f, sport);
	fb_u16(f, dport);
	fb_u32(f, 1);
	fb_u32(f, 0);
	fb_u8(f, 0x50);
	fb_u8(f, flags);
	fb_u16(f, 8192);
	fb_u32(f, 0);
}

/* A MAC pair and an EtherType, appended (an inner Ethernet header). */
static inline void
fb_mac(struct fb *f, uint16_t type)
{
	static const uint8_t mac[12] = {2, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 4};
	memcpy(f->b + f->n, mac, 12);
	f->n += 12;
	fb_u16(f, type);
}

/* One MPLS label stack entry (RFC 3032): label, bottom-of-stack bit, TTL 64. */
static inline void
fb_mpls(struct fb *f, uint32_t label, int bottom)
{
	fb_u32(f, label << 12 | (bottom ? 0x100u : 0) | 64u);
}

/* PPPoE session header (RFC 2516) + 2-byte PPP protocol; length patched by the caller. */
static inline void
fb_pppoe(struct fb *f, uint16_t ppp)
{
	fb_u8(f, 0x11);
	fb_u8(f, 0);
	fb_u16(f, 0x1234);
	fb_u16(f, 0);
	fb_u16(f, ppp);
}

/* UDP header only; the length is patched with fb_fix_udp. */
static inline void
fb_udp_hdr(struct fb *f, uint16_t sport, uint16_t dport)
{
	fb_u16(f, sport);
	fb_u16(f, dport);
	fb_u16(f, 8);
	fb_u16(f, 0);
}

/* TCP header with data offset @p doff words (options zero-filled when > 5). */
static inline void
fb_tcp_doff(struct fb *f, uint16_t sport, uint16_t dport, uint8_t flags, uint8_t doff)
{
	fb_u16(f, sport);
	fb_u16(f, dport);
	fb_u32(f, 1);
	fb_u32(f, 0);
	fb_u8(f, (uint8_t)(doff << 4));
	fb_u8(f, flags);
	fb_u16(f, 8192);
	fb_u32(f, 0);
	if (doff > 5)
		fb_zero(f, 4u * (doff - 5u));
}

/*
 * GRE header (RFC 2784/2890): @p flags (C 0x8000, K 0x2000, S 0x1000,
 * version in the low 3 bits), @p proto, then the optional words the flags
 * announce (zero), version 1 acknowledgment (A 0x0080) included.
 */
static inline void
fb_gre(struct fb *f, uint16_t flags, uint16_t proto)
{
	fb_u16(f, flags);
	fb_u16(f, proto);
	if (flags & 0xc000)
		fb_u32(f, 0);
	if (flags & 0x2000)
		fb_u32(f, 0x00000028);
	if (flags & 0x1000)
		fb_u32(f, 7);
	if ((flags & 7) == 1 && (flags & 0x0080))
		fb_u32(f, 6);
}

/* VXLAN header (RFC 7348): I flag, VNI. */
static inline void
fb_vxlan(struct fb *f, uint32_t vni)
{
	fb_u32(f, 0x08000000);
	fb_u32(f, vni << 8);
}

static inline void
fb_put16(struct fb *f, uint32_t at, uint32_t v)
{
	f->b[at] = (uint8_t)(v >> 8);
	f->b[at + 1] = (uint8_t)v;
}

/* Total length of the IPv4 header at @p at := everything after it so far. */
static inline void
fb_fix_ipv4(struct fb *f, uint32_t at)
{
	fb_put16(f, at + 2, f->n - at);
}

/* Payload length of the IPv6 header at @p at. */
static inline void
fb_fix_ipv6(struct fb *f, uint32_t at)
{
	fb_put16(f, at + 4, f->n - at - 40);
}

/* Length of the UDP header at @p at. */
static inline void
fb_fix_udp(struct fb *f, uint32_t at)
{
	fb_put16(f, at + 4, f->n - at);
}

#endif
