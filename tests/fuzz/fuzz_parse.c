/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_parse.c — libFuzzer target for the frame parser (lib/dataplane/parse.c).
 *
 * Built with clang -fsanitize=fuzzer,address,undefined (tests/meson.build);
 * docs/parsing.md has the commands for short and long runs.
 *
 * Input layout: 4 control bytes, then the frame.
 *   byte 0  decap mask (enum dpmon_tunnel bits; the top bits are ignored)
 *   byte 1  segmentation seed: how the frame is cut into mbuf segments
 *   byte 2  bit 0: VLAN stripped, bit 1: QinQ stripped, bits 2-7: extra
 *           pkt_len beyond the bytes held, in units of 1021 bytes (the
 *           pcap PMD's records over 65535 bytes)
 *   byte 3  stripped VLAN TCI low byte
 *
 * Each input is parsed as a contiguous frame and as a chain of fake mbufs
 * (no EAL: the parser reads only buf_addr, data_off, data_len, pkt_len,
 * next, ol_flags and the VLAN TCIs). Every segment is its own heap block
 * of exactly data_len bytes, so ASan reports any read past a segment.
 * Invariants checked (abort() on violation, which libFuzzer reports):
 *   - the reason is in range; OK means family 4 or 6, offsets inside the
 *     frame, IPv6 addresses inside the frame or the scratch buffer,
 *     anomaly bits in range, tunnels <= DPMON_MAX_TUNNELS;
 *   - with decapsulation, the result is the one without it unless a tunnel
 *     was followed or noted (the outer header decides every reason before
 *     any tunnel is looked at);
 *   - the segmented parse gives the same result as the contiguous one
 *     (reason, every field; pkt_len beyond the segments adds only the
 *     pkt_len_mismatch anomaly and the length; a stripped tag only the
 *     VLAN fields and 4 or 8 bytes);
 *   - the mbuf parse with a packet type (dpmon_parse_mbuf_ptype; the type
 *     from bytes 1 and 3) gives the same result as without one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "parse.h"

#define MAX_SEGS 16

static void
must(int cond)
{
	if (!cond)
		abort();
}

/* The frame cut at points derived from @p seed into at most MAX_SEGS pieces. */
static unsigned
cut_points(uint8_t seed, uint32_t len, uint32_t *cuts)
{
	unsigned n = 0;
	uint32_t at = 0, step = 1u + (seed & 0x3f);

	if (seed == 0)
		return 0;
	while (n < MAX_SEGS - 1) {
		at += step;
		if (at >= len)
			break;
		cuts[n++] = at;
		step = step * 3 + (seed >> 6) + 1;
	}
	return n;
}

static int
inside(const uint8_t *p, const uint8_t *base, uint32_t len)
{
	return p >= base && p + 16 <= base + len;
}

static void
check_ok(const struct dpmon_pkt *p, const uint8_t *base, uint32_t len)
{
	must(p->family == 4 || p->family == 6);
	must(p->proto < DPMON_PROTO_MAX);
	must(p->l3_offset + (p->family == 4 ? 20u : 40u) <= len);
	must(p->l4_offset == 0 || (p->l4_offset > p->l3_offset && p->l4_offset <= len));
	must(p->tunnels <= DPMON_MAX_TUNNELS);
	must((p->anomalies >> DPMON_ANOM_MAX) == 0);
	must(p->ports <= 1 && p->fragment <= 1);
	if (p->family == 6) {
		must(inside(p->src6, base, len) && inside(p->dst6, base, len));
		must(p->dst6 == p->src6 + 16);
	}
	if (!p->ports)
		must(p->sport == 0 && p->dport == 0 && p->tcp_flags == 0);
}

/* The fields of @p a and @p b agree (addresses by value). */
static void
same(const struct dpmon_pkt *a, const struct dpmon_pkt *b)
{
	must(a->family == b->family && a->proto == b->proto && a->ip_proto == b->ip_proto);
	must(a->fragment == b->fragment && a->ports == b->ports && a->tunnels == b->tunnels);
	must(a->sport == b->sport && a->dport == b->dport && a->tcp_flags == b->tcp_flags);
	must(a->l3_offset == b->l3_offset && a->l4_offset == b->l4_offset);
	if (a->family == 4)
		must(a->src4 == b->src4 && a->dst4 == b->dst4);
	else
		must(memcmp(a->src6, b->src6, 16) == 0 && memcmp(a->dst6, b->dst6, 16) == 0);
}

#define TUNNEL_ANOMALIES                                                               \
	((1u << DPMON_ANOM_TUNNEL_MALFORMED) | (1u << DPMON_ANOM_TUNNEL_UNSUPPORTED) | \
	 (1u << DPMON_ANOM_TUNNEL_LIMIT))

/* Decapsulation (@p ra, @p a) agrees with none (@p ro, @p o) unless a tunnel was involved. */
static void
check_decap(enum dpmon_reason ra, const struct dpmon_pkt *a, enum dpmon_reason ro,
	    const struct dpmon_pkt *o)
{
	if (ro != DPMON_REASON_OK) {
		must(ra == ro);
		return;
	}
	if (ra != DPMON_REASON_OK || a->tunnels != 0 || (a->anomalies & TUNNEL_ANOMALIES))
		return;
	same(a, o);
	/* A GRE-over-UDP header is only looked at when it is to be followed. */
	if (o->ip_proto == 17 && o->ports && o->dport == 4754)
		must((a->anomalies & ~(1u << DPMON_ANOM_GRE_TRUNCATED)) == o->anomalies);
	else
		must(a->anomalies == o->anomalies);
	must(a->vlan_depth == o->vlan_depth && a->vlan_outer == o->vlan_outer &&
	     a->vlan_inner == o->vlan_inner);
}

/* The packet type the mbuf parse is given, from control bytes 1 and 3:
 * one of the plain types (parse_fast.h's parse_ptype) or any other. */
static uint32_t
ptype_of(uint8_t seg_seed, uint8_t tci)
{
	static const uint32_t l3[] = {RTE_PTYPE_L3_IPV4, RTE_PTYPE_L3_IPV4_EXT_UNKNOWN,
				      RTE_PTYPE_L3_IPV6, RTE_PTYPE_L3_IPV6_EXT_UNKNOWN};
	static const uint32_t l4[] = {RTE_PTYPE_L4_TCP, RTE_PTYPE_L4_UDP, RTE_PTYPE_L4_FRAG, 0};
	unsigned k = (unsigned)(seg_seed ^ tci);

	if (k >= 0xf0)
		return (uint32_t)k << 4 | tci;
	return RTE_PTYPE_L2_ETHER | l3[k & 3] | l4[(k >> 2) & 3];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t scratch[DPMON_PARSE_GATHER];
	struct rte_mbuf segs[MAX_SEGS];
	uint8_t *bufs[MAX_SEGS];
	uint32_t cuts[MAX_SEGS], decap, len, extra, from = 0;
	struct dpmon_pkt a, b;
	enum dpmon_reason ra, rb;
	unsigned ncuts, vlan;
	uint8_t *frame;

	if (size < 4 || size > 70000)
		return 0;
	decap = data[0] & DPMON_TUNNEL_ALL;
	vlan = data[2] & 3;
	extra = (uint32_t)(data[2] >> 2) * 1021;
	len = (uint32_t)size - 4;

	/* Contiguous, in a block of exactly len bytes. */
	frame = malloc(len ? len : 1);
	memcpy(frame, data + 4, len);
	ra = dpmon_parse_frame_decap(frame, len, decap, &a);
	must(ra < DPMON_REASON_MAX && a.len == len);
	if (ra == DPMON_REASON_OK)
		check_ok(&a, frame, len);
	rb = dpmon_parse_frame(frame, len, &b);
	if (decap == 0)
		must(rb == ra);
	else
		check_decap(ra, &a, rb, &b);

	/* The same bytes as a chain of segments. */
	ncuts = len > 65535 ? 0 : cut_points(data[1], len, cuts);
	if (len > 65535) { /* one segment cannot hold it: no mbuf parse */
		free(frame);
		return 0;
	}
	memset(segs, 0, sizeof(segs));
	for (unsigned i = 0; i <= ncuts; i++) {
		uint32_t to = i < ncuts ? cuts[i] : len;

		bufs[i] = malloc(to - from ? to - from : 1);
		memcpy(bufs[i], frame + from, to - from);
		segs[i].buf_addr = bufs[i];
		segs[i].data_off = 0;
		segs[i].data_len = (uint16_t)(to - from);
		segs[i].next = i < ncuts ? &segs[i + 1] : NULL;
		from = to;
	}
	segs[0].nb_segs = (uint16_t)(ncuts + 1);
	segs[0].pkt_len = len + extra;
	if (vlan) {
		segs[0].ol_flags =
			RTE_MBUF_F_RX_VLAN_STRIPPED | (vlan == 2 ? RTE_MBUF_F_RX_QINQ_STRIPPED : 0);
		segs[0].vlan_tci = data[3];
		segs[0].vlan_tci_outer = (uint16_t)(data[3] + 1);
	}
	rb = dpmon_parse_mbuf_decap(&segs[0], decap, &b, scratch);
	must(rb == ra);
	must(b.len == len + extra + (vlan == 0 ? 0 : vlan == 2 ? 8 : 4));
	if (ra == DPMON_REASON_OK) {
		uint16_t want = a.anomalies | (extra ? (1u << DPMON_ANOM_PKT_LEN_MISMATCH) : 0);

		same(&a, &b);
		must(b.anomalies == want);
		if (b.family == 6 && !inside(b.dst6, scratch, sizeof(scratch)))
			must(inside(b.src6, bufs[0], segs[0].data_len));
		if (vlan == 0)
			must(b.vlan_depth == a.vlan_depth && b.vlan_outer == a.vlan_outer &&
			     b.vlan_inner == a.vlan_inner);
		else
			must(b.vlan_depth == a.vlan_depth + (vlan == 2 ? 2 : 1));
	}
	/* With a packet type from the NIC (parse.h: a hint that must not
	 * change the result), one of the plain ones or any 32 bits. */
	{
		struct dpmon_pkt c;
		enum dpmon_reason rc;

		segs[0].packet_type = ptype_of(data[1], data[3]);
		rc = dpmon_parse_mbuf_ptype(&segs[0], decap, &c, scratch);
		must(rc == rb && c.len == b.len);
		if (rc == DPMON_REASON_OK) {
			same(&b, &c);
			must(c.anomalies == b.anomalies && c.vlan_depth == b.vlan_depth &&
			     c.vlan_outer == b.vlan_outer && c.vlan_inner == b.vlan_inner);
		}
	}
	for (unsigned i = 0; i <= ncuts; i++)
		free(bufs[i]);
	free(frame);
	return 0;
}
