/*
 * test_parse.c — the frame parser on hand-built frames: every TPID, tag
 * depth, IHL < 5, IHL past the frame, wrong versions, IPv6 and extension
 * headers, each protocol class, runts, and mbufs whose pkt_len exceeds
 * what their segments hold.
 */
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "frames.h"
#include "parse.h"
#include "test_eal.h"

static const uint8_t A6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
static const uint8_t B6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
#define SRC4 0xc6336401u /* 198.51.100.1 */
#define DST4 0x0a010001u /* 10.1.0.1 */

static enum dpmon_reason
parse(const struct fb *f, struct dpmon_pkt *p)
{
	memset(p, 0xee, sizeof(*p));
	return dpmon_parse_frame(f->b, f->n, p);
}

static void
udp4(struct fb *f, const uint16_t *tpids, unsigned ntags)
{
	fb_eth(f, tpids, ntags, 0x0800);
	fb_ipv4(f, 5, 17, SRC4, DST4, 0, 28 + 4);
	fb_udp(f, 1111, 2222, 4);
}

static void
test_tags(void)
{
	static const uint16_t tp[][5] = {
		{0x8100}, {0x88a8}, {0x9100}, {0x88a8, 0x8100}, {0x9100, 0x8100},
		{0x8100, 0x8100}, {0x88a8, 0x8100, 0x8100}, {0x8100, 0x88a8, 0x9100, 0x8100},
	};
	static const unsigned nt[] = {1, 1, 1, 2, 2, 2, 3, 4};
	struct dpmon_pkt p;
	struct fb f;

	udp4(&f, NULL, 0);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.vlan_depth == 0 && p.l3_offset == 14);
	for (unsigned i = 0; i < RTE_DIM(nt); i++) {
		udp4(&f, tp[i], nt[i]);
		CHECK(parse(&f, &p) == DPMON_REASON_OK);
		CHECK_EQ_U64(p.vlan_depth, nt[i]);
		CHECK_EQ_U64(p.l3_offset, 14 + 4 * nt[i]);
		CHECK(p.family == 4 && p.src4 == SRC4 && p.dst4 == DST4);
		CHECK(p.proto == DPMON_PROTO_UDP && p.ip_proto == 17);
	}
	/* Five tags: deeper than the limit. */
	{
		static const uint16_t five[] = {0x8100, 0x8100, 0x8100, 0x8100, 0x8100};
		udp4(&f, five, 5);
		CHECK(parse(&f, &p) == DPMON_REASON_VLAN_TOO_DEEP);
	}
	/* A tag cut short. */
	{
		static const uint16_t one[] = {0x8100};
		fb_eth(&f, one, 0, 0x8100);
		fb_u16(&f, 100);
		CHECK(parse(&f, &p) == DPMON_REASON_RUNT);
	}
}

static void
test_l2(void)
{
	struct dpmon_pkt p;
	struct fb f = {.n = 0};

	CHECK(dpmon_parse_frame(f.b, 0, &p) == DPMON_REASON_RUNT);
	fb_eth(&f, NULL, 0, 0x0800);
	CHECK(dpmon_parse_frame(f.b, 13, &p) == DPMON_REASON_RUNT);
	CHECK(dpmon_parse_frame(f.b, 14, &p) == DPMON_REASON_IPV4_TRUNCATED);
	fb_eth(&f, NULL, 0, 0x0806); /* ARP */
	fb_zero(&f, 28);
	CHECK(parse(&f, &p) == DPMON_REASON_NON_IP);
	fb_eth(&f, NULL, 0, 0x8847); /* MPLS: not parsed by this layer */
	fb_zero(&f, 40);
	CHECK(parse(&f, &p) == DPMON_REASON_NON_IP);
	/* Ethernet + 2 bytes of an IPv4 header (the classic runt). */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_u16(&f, 0x4500);
	CHECK(parse(&f, &p) == DPMON_REASON_IPV4_TRUNCATED);
}

static void
test_ipv4(void)
{
	struct dpmon_pkt p;
	struct fb f;

	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		fb_eth(&f, NULL, 0, 0x0800);
		fb_ipv4(&f, 5, 17, SRC4, DST4, 0, 28);
		f.b[14] = (uint8_t)(0x40 | ihl);
		fb_udp(&f, 1, 2, 0);
		CHECK(parse(&f, &p) == DPMON_REASON_IPV4_BAD_HEADER);
	}
	/* IHL 15 (60 bytes) but only 20 header bytes present. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, SRC4, DST4, 0, 20);
	f.b[14] = 0x4f;
	CHECK(parse(&f, &p) == DPMON_REASON_IPV4_TRUNCATED);
	/* IHL 15 fully present: options skipped, L4 after them. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 15, 6, SRC4, DST4, 0, 80);
	fb_tcp(&f, 1, 80, 0x02);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.proto == DPMON_PROTO_TCP && p.l4_offset == 14 + 60);
	/* Version 6 behind the IPv4 EtherType. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv6(&f, 17, A6, B6, 8);
	CHECK(parse(&f, &p) == DPMON_REASON_IPV4_BAD_HEADER);
	/* Protocol classes. */
	static const struct { uint8_t ip; uint8_t cls; } pc[] = {
		{6, DPMON_PROTO_TCP}, {17, DPMON_PROTO_UDP}, {1, DPMON_PROTO_ICMP},
		{47, DPMON_PROTO_OTHER}, {58, DPMON_PROTO_ICMP}, {132, DPMON_PROTO_OTHER},
	};
	for (unsigned i = 0; i < RTE_DIM(pc); i++) {
		fb_eth(&f, NULL, 0, 0x0800);
		fb_ipv4(&f, 5, pc[i].ip, SRC4, DST4, 0, 40);
		fb_zero(&f, 20);
		CHECK(parse(&f, &p) == DPMON_REASON_OK);
		CHECK_EQ_U64(p.proto, pc[i].cls);
		CHECK_EQ_U64(p.ip_proto, pc[i].ip);
	}
	/* Fragments: first (MF) keeps L4; non-first has none. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, SRC4, DST4, 0x2000, 128);
	fb_udp(&f, 1111, 2222, 100);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.fragment == 1 && p.l4_offset == 34 && p.proto == DPMON_PROTO_UDP);
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, SRC4, DST4, 185, 84); /* offset 1480 bytes */
	fb_zero(&f, 64);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.fragment == 1 && p.l4_offset == 0);
	/* DF alone is not a fragment. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, SRC4, DST4, 0x4000, 28);
	fb_udp(&f, 1, 2, 0);
	CHECK(parse(&f, &p) == DPMON_REASON_OK && p.fragment == 0);
}

static void
test_ipv6(void)
{
	struct dpmon_pkt p;
	struct fb f;

	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, B6, A6, 12);
	fb_udp(&f, 53, 5353, 4);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.family == 6 && p.proto == DPMON_PROTO_UDP && p.l4_offset == 54);
	CHECK(memcmp(p.src6, B6, 16) == 0 && memcmp(p.dst6, A6, 16) == 0);
	/* ICMPv6 */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 58, B6, A6, 8);
	fb_zero(&f, 8);
	CHECK(parse(&f, &p) == DPMON_REASON_OK && p.proto == DPMON_PROTO_ICMP);
	/* Hop-by-Hop then UDP: walked. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 0, B6, A6, 16);
	fb_ext(&f, 17, 0);
	fb_udp(&f, 1, 2, 0);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.proto == DPMON_PROTO_UDP && p.ip_proto == 17 && p.l4_offset == 14 + 48);
	/* HBH + Routing + DstOpts + TCP */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 0, B6, A6, 64);
	fb_ext(&f, 43, 1);
	fb_ext(&f, 60, 0);
	fb_ext(&f, 6, 0);
	fb_tcp(&f, 1, 2, 0x12);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.proto == DPMON_PROTO_TCP && p.l4_offset == 14 + 40 + 16 + 8 + 8);
	/* Extension header longer than the frame. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 0, B6, A6, 8);
	fb_u8(&f, 17);
	fb_u8(&f, 200);
	fb_zero(&f, 6);
	CHECK(parse(&f, &p) == DPMON_REASON_IPV6_TRUNCATED);
	/* Too many extension headers. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 60, B6, A6, 80);
	for (int i = 0; i < DPMON_MAX_IPV6_EXT + 1; i++)
		fb_ext(&f, 60, 0);
	CHECK(parse(&f, &p) == DPMON_REASON_IPV6_EXT_LIMIT);
	/* Fragment header, non-first: no L4. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 44, B6, A6, 16);
	fb_u8(&f, 17);
	fb_u8(&f, 0);
	fb_u16(&f, 1480);
	fb_u32(&f, 7);
	fb_zero(&f, 8);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.fragment == 1 && p.l4_offset == 0 && p.proto == DPMON_PROTO_UDP);
	/* Fragment header, first fragment: L4 follows. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 44, B6, A6, 16);
	fb_u8(&f, 17);
	fb_u8(&f, 0);
	fb_u16(&f, 1); /* M flag */
	fb_u32(&f, 7);
	fb_udp(&f, 1, 2, 0);
	CHECK(parse(&f, &p) == DPMON_REASON_OK);
	CHECK(p.fragment == 1 && p.l4_offset == 14 + 48);
	/* Truncated fixed header; wrong version. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, B6, A6, 0);
	CHECK(dpmon_parse_frame(f.b, 14 + 39, &p) == DPMON_REASON_IPV6_TRUNCATED);
	CHECK(dpmon_parse_frame(f.b, 14, &p) == DPMON_REASON_IPV6_TRUNCATED);
	f.b[14] = 0x45;
	CHECK(parse(&f, &p) == DPMON_REASON_IPV6_BAD_HEADER);
}

/* Build a chain from @p f split at @p cuts; pkt_len forced to @p pkt_len. */
static struct rte_mbuf *
chain(struct rte_mempool *mp, const struct fb *f, const uint32_t *cuts, unsigned ncuts,
      uint32_t pkt_len)
{
	struct rte_mbuf *head = NULL, *prev = NULL;
	uint32_t from = 0;

	for (unsigned i = 0; i <= ncuts; i++) {
		uint32_t to = i < ncuts ? cuts[i] : f->n;
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		char *d = rte_pktmbuf_append(m, (uint16_t)(to - from));

		memcpy(d, f->b + from, to - from);
		if (head == NULL) {
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

static void
test_mbuf(void)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create("test_parse", 256, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	uint8_t scratch[DPMON_PARSE_GATHER];
	struct dpmon_pkt p;
	struct rte_mbuf *m;
	struct fb f;

	CHECK(mp != NULL);
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 0, B6, A6, 16);
	fb_ext(&f, 17, 0);
	fb_udp(&f, 1, 2, 0);
	/* Headers split across three segments, at awkward places. */
	{
		static const uint32_t cuts[] = {13, 30};
		m = chain(mp, &f, cuts, 2, f.n);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_OK);
		CHECK(p.family == 6 && p.proto == DPMON_PROTO_UDP);
		CHECK(memcmp(p.dst6, A6, 16) == 0 && memcmp(p.src6, B6, 16) == 0);
		rte_pktmbuf_free(m);
	}
	/* pkt_len larger than the segments hold (pcap PMD, records > 65535):
	 * the headers present parse; nothing past the segments is read. */
	{
		static const uint32_t cuts[] = {20};
		m = chain(mp, &f, cuts, 1, 80066);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_OK);
		CHECK(p.proto == DPMON_PROTO_UDP);
		rte_pktmbuf_free(m);
	}
	/* Same, but the segments stop inside the IPv6 header. */
	{
		struct fb g = f;
		static const uint32_t cuts[] = {20};
		g.n = 40;
		m = chain(mp, &g, cuts, 1, 80066);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_IPV6_TRUNCATED);
		rte_pktmbuf_free(m);
	}
	/* Single segment with pkt_len > data_len. */
	{
		struct fb g = f;
		g.n = 30;
		m = chain(mp, &g, NULL, 0, 1500);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_IPV6_TRUNCATED);
		rte_pktmbuf_free(m);
	}
	/* A zero-length mbuf (pcap PMD, zero-length records). */
	{
		m = rte_pktmbuf_alloc(mp);
		CHECK(dpmon_parse_mbuf(m, &p, scratch) == DPMON_REASON_RUNT);
		rte_pktmbuf_free(m);
	}
	rte_mempool_free(mp);
}

int
main(int argc, char **argv)
{
	(void)argc;
	test_eal_init(argv[0]);
	test_tags();
	test_l2();
	test_ipv4();
	test_ipv6();
	test_mbuf();
	return test_finish("test_parse");
}
