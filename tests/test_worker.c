/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_worker.c — the worker's hot path on hand-built bursts:
 * longest-prefix classification, a full host table, a host repeated in a
 * burst, IPv4-mapped IPv6 addresses, the parser's notes (anomalies,
 * ip_stats) and a port's decap mask, the bytes of a tag the NIC stripped,
 * fragments and SYNs per direction and their 32-bit wrap, and the flow
 * sketches (totals, subnets, hosts, the pool past 64 subnets), and the
 * same counts from a queue whose PMD reports packet types. The merge
 * reads the counts here; the merge itself is test_merge.c.
 */
#include <assert.h>
#include <math.h>

#include <rte_common.h>
#include <rte_net.h>

#include "worker_fixture.h"

/* ------------------------------------------------------------------------
 * Host tables.
 * --------------------------------------------------------------------- */

/* A full host table: the packet still counts for subnet and totals. */
static void
test_table_full(const struct dpmon_classifier *cls)
{
	struct dpmon_core *c = dpmon_core_create("full", 16, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	struct rte_mbuf *p[32];
	uint64_t sum = 0;

	for (unsigned i = 0; i < 32; i++)
		p[i] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 100 + i), 26);
	dpmon_worker_burst(c, g, p, 32);
	CHECK_EQ_U64(c->n_hosts, 16);
	CHECK_EQ_U64(c->stats.host_table_full, 16);
	CHECK_EQ_U64(g->subnets[0].dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].packets, 32);
	CHECK_EQ_U64(c->totals[DPMON_TOTAL_INGRESS].proto[DPMON_PROTO_UDP].packets, 32);
	for (uint32_t i = 0; i < c->n_hosts; i++)
		sum += c->hosts[i].packets[DPMON_DIR_INGRESS][DPMON_PROTO_UDP];
	CHECK_EQ_U64(sum, 16);
	/* Known hosts keep counting when the table is full. */
	p[0] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 100), 26);
	dpmon_worker_burst(c, g, p, 1);
	CHECK_EQ_U64(c->hosts[0].packets[DPMON_DIR_INGRESS][DPMON_PROTO_UDP], 2);
	CHECK_EQ_U64(c->stats.host_table_full, 16);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/* The same host repeated inside one burst is inserted once. */
static void
test_repeat_in_burst(const struct dpmon_classifier *cls)
{
	struct dpmon_core *c = dpmon_core_create("rep", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	struct rte_mbuf *p[64];

	for (unsigned i = 0; i < 64; i++)
		p[i] = v4(6, IP4(10, 1, 0, 1 + i % 3), IP4(10, 1, 9, 9), 26);
	dpmon_worker_burst(c, g, p, 64);
	CHECK_EQ_U64(c->n_hosts, 4);
	/* Keys are taken ingress first: entry 0 is 10.1.9.9, entry 1 is 10.1.0.1. */
	CHECK_EQ_U64(c->hosts[0].packets[DPMON_DIR_INGRESS][DPMON_PROTO_TCP], 64);
	CHECK_EQ_U64(c->hosts[1].packets[DPMON_DIR_EGRESS][DPMON_PROTO_TCP], 22);
	CHECK_EQ_U64(c->totals[DPMON_TOTAL_INTERNAL].proto[DPMON_PROTO_TCP].packets, 64);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/* An IPv6 packet with an IPv4-mapped address never counts for the IPv4 host. */
static void
test_v4mapped_not_aliased(void)
{
	static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 0, 1};
	struct dpmon_subnet_conf all[2];
	struct dpmon_classifier cls;
	struct dpmon_core *c = dpmon_core_create("mapped", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g;
	struct rte_mbuf *p[2];
	struct fb f;

	dpmon_prefix_parse("0.0.0.0/0", &all[0].prefix, NULL);
	dpmon_prefix_parse("::/0", &all[1].prefix, NULL);
	REQUIRE(c != NULL && dpmon_classifier_create(&cls, "all", all, 2, SOCKET_ID_ANY) == 0);
	g = gen0(&cls);
	p[0] = v4(17, IP4(10, 1, 0, 1), IP4(198, 51, 100, 1), 26);
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, mapped, IN6, 8);
	fb_udp(&f, 1, 2, 0);
	p[1] = mbuf_of(&f); /* ::ffff:10.1.0.1 -> 2001:db8:1::7 */
	dpmon_worker_burst(c, g, p, 2);
	CHECK_EQ_U64(c->n_hosts, 3); /* 10.1.0.1, 198.51.100.1, 2001:db8:1::7 */
	CHECK_EQ_U64(c->hosts[1].packets[DPMON_DIR_EGRESS][DPMON_PROTO_UDP], 1);
	CHECK_EQ_U64(c->stats.host_v4mapped, 1);
	CHECK_EQ_U64(g->subnets[1].dir[DPMON_DIR_EGRESS].proto[DPMON_PROTO_UDP].packets, 1);
	CHECK_EQ_U64(g->subnets[0].dir[DPMON_DIR_EGRESS].proto[DPMON_PROTO_UDP].packets, 1);
	dpmon_generation_free(g);
	dpmon_classifier_free(&cls);
	dpmon_core_free(c);
}

/* ------------------------------------------------------------------------
 * The parser's notes, fragments and SYNs.
 * --------------------------------------------------------------------- */

/* GRE 198.51.100.1 -> 203.0.113.1 carrying UDP 192.0.2.1 -> 10.1.0.9: 66 bytes. */
static struct rte_mbuf *
gre_frame(void)
{
	struct fb f;
	uint32_t in;

	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 47, IP4(198, 51, 100, 1), IP4(203, 0, 113, 1), 0, 20 + 4 + 28);
	fb_gre(&f, 0, 0x0800);
	in = f.n;
	fb_ipv4(&f, 5, 17, IP4(192, 0, 2, 1), IP4(10, 1, 0, 9), 0, 28);
	fb_udp(&f, 1, 2, 0);
	fb_fix_ipv4(&f, in);
	return mbuf_of(&f);
}

/*
 * The notes of counted packets (anomalies, fragments, decapsulated, SYNs)
 * reach the core's counters and the snapshot; the port's decap mask
 * decides which header counts; a stripped tag adds 4 bytes.
 */
static void
test_notes_and_decap(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c[2] = {dpmon_core_create("notes0", 64, SOCKET_ID_ANY),
				   dpmon_core_create("notes1", 64, SOCKET_ID_ANY)};
	struct dpmon_generation *g[2] = {gen0(cls), gen0(cls)};
	unsigned lcores[2] = {1, 2};
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	struct rte_mbuf *p[8];
	struct fb f;

	CHECK(c[0] && c[1]);
	for (int k = 0; k < 2; k++) {
		unsigned n = 0;

		p[n++] = gre_frame();
		fb_eth(&f, NULL, 0, 0x0800); /* TCP SYN to 10.1.0.1 */
		fb_ipv4(&f, 5, 6, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 0, 40);
		fb_tcp(&f, 1000, 80, 0x02);
		p[n++] = mbuf_of(&f);
		fb_eth(&f, NULL, 0, 0x0800); /* non-first fragment, UDP length bogus: not read */
		fb_ipv4(&f, 5, 17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 100, 28);
		fb_udp(&f, 1, 2, 0);
		p[n++] = mbuf_of(&f);
		fb_eth(&f, NULL, 0, 0x0800); /* UDP length 5: an anomaly; stripped tag: +4 bytes */
		fb_ipv4(&f, 5, 17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 0, 28);
		fb_udp(&f, 1, 2, 0);
		fb_put16(&f, 34 + 4, 5);
		p[n] = mbuf_of(&f);
		p[n]->ol_flags |= RTE_MBUF_F_RX_VLAN_STRIPPED;
		p[n++]->vlan_tci = 5;
		dpmon_worker_count_generation(c[k], g[k], p, (uint16_t)n, k ? DPMON_TUNNEL_ALL : 0);
		rte_pktmbuf_free_bulk(p, n);
	}
	/* Core 0 (decap off): the GRE packet is external, class other. */
	CHECK_EQ_U64(c[0]->totals[DPMON_TOTAL_EXTERNAL].proto[DPMON_PROTO_OTHER].packets, 1);
	CHECK_EQ_U64(c[0]->totals[DPMON_TOTAL_EXTERNAL].proto[DPMON_PROTO_OTHER].bytes, 66);
	CHECK_EQ_U64(c[0]->stats.ip_stats[DPMON_IPSTAT_DECAPSULATED], 0);
	/* Core 1 (decap on): it counts for 10.1.0.9, UDP, with the frame's 66 bytes. */
	CHECK_EQ_U64(c[1]->totals[DPMON_TOTAL_EXTERNAL].proto[DPMON_PROTO_OTHER].packets, 0);
	CHECK_EQ_U64(g[1]->subnets[0].dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].bytes,
		     66 + 42 + 46); /* GRE frame, fragment, stripped-tag frame (42 + 4) */
	CHECK_EQ_U64(c[1]->stats.ip_stats[DPMON_IPSTAT_DECAPSULATED], 1);
	for (int k = 0; k < 2; k++) {
		CHECK_EQ_U64(c[k]->stats.reasons[DPMON_REASON_OK], 4);
		CHECK_EQ_U64(c[k]->stats.ip_stats[DPMON_IPSTAT_TCP_SYN], 1);
		CHECK_EQ_U64(c[k]->stats.ip_stats[DPMON_IPSTAT_FRAGMENTS], 1);
		CHECK_EQ_U64(c[k]->stats.anomalies[DPMON_ANOM_UDP_BAD_LENGTH], 1);
		CHECK_EQ_U64(g[k]->subnets[0].dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_TCP].bytes,
			     54);
	}
	m = dpmon_merge_create(cfg, c, g, lcores, 2, 0, 1000000000ull);
	s = dpmon_merge_run(m, 1000000000ull, NULL, 0);
	REQUIRE(s != NULL);
	CHECK_EQ_U64(s->anomalies[DPMON_ANOM_UDP_BAD_LENGTH], 2);
	CHECK_EQ_U64(s->anomalies[DPMON_ANOM_TCP_BAD_OFFSET], 0);
	CHECK_EQ_U64(s->ip_stats[DPMON_IPSTAT_FRAGMENTS], 2);
	CHECK_EQ_U64(s->ip_stats[DPMON_IPSTAT_TCP_SYN], 2);
	CHECK_EQ_U64(s->ip_stats[DPMON_IPSTAT_DECAPSULATED], 1);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

/* A TCP segment 198.51.100.1 -> 10.1.0.1 (or the reverse) with @p flags: 54 bytes. */
static struct rte_mbuf *
tcp4(uint32_t src, uint32_t dst, uint8_t flags)
{
	struct fb f;

	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 6, src, dst, 0, 40);
	fb_tcp(&f, 1000, 80, flags);
	return mbuf_of(&f);
}

/* A non-first UDP fragment (offset 100): 42 bytes. */
static struct rte_mbuf *
frag4(uint32_t src, uint32_t dst)
{
	struct fb f;

	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, src, dst, 100, 28);
	fb_udp(&f, 1, 2, 0);
	return mbuf_of(&f);
}

#define XPK(d, X) ((d).flag[DPMON_FLAG_##X].packets)
#define XBY(d, X) ((d).flag[DPMON_FLAG_##X].bytes)

/*
 * Fragments and TCP SYNs (SYN set, ACK clear) per direction for totals,
 * subnets and hosts: SYN+ACK and plain ACK are not SYNs; a host
 * gets an extra counter line at its first such packet only; counts of two
 * cores merge; the host sums equal the subnet's and the subnets' the
 * totals'; rates use the measured interval.
 */
static void
test_fragments_and_syn(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c[2] = {dpmon_core_create("kinds0", 64, SOCKET_ID_ANY),
				   dpmon_core_create("kinds1", 64, SOCKET_ID_ANY)};
	struct dpmon_generation *g[2] = {gen0(cls), gen0(cls)};
	unsigned lcores[2] = {1, 2};
	const uint32_t ext = IP4(198, 51, 100, 1), h1 = IP4(10, 1, 0, 1), h2 = IP4(10, 1, 2, 5);
	const uint64_t hz = 1000000000ull;
	const struct dpmon_snap_host *h;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	struct rte_mbuf *p[8];

	REQUIRE(c[0] && c[1]);
	for (int k = 0; k < 2; k++) {
		unsigned n = 0;

		p[n++] = tcp4(ext, h1, 0x02);             /* SYN in to 10.1.0.1 */
		p[n++] = tcp4(ext, h1, 0x02);             /* SYN in */
		p[n++] = tcp4(h1, ext, 0x12);             /* SYN+ACK out: not a SYN */
		p[n++] = tcp4(ext, h1, 0x10);             /* ACK: not a SYN */
		p[n++] = frag4(ext, h2);                  /* fragment in to 10.1.2.5 */
		p[n++] = tcp4(h2, h1, 0x02);              /* internal SYN: out of h2, into h1 */
		p[n++] = frag4(ext, IP4(203, 0, 113, 1)); /* external fragment */
		dpmon_worker_burst(c[k], g[k], p, (uint16_t)n);
	}
	for (int k = 0; k < 2; k++) {
		const struct dpmon_core *x = c[k];

		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_INGRESS], SYN), 3);
		CHECK_EQ_U64(XBY(x->flag_totals[DPMON_TOTAL_INGRESS], SYN), 3 * 54);
		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_EGRESS], SYN), 1);
		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_INTERNAL], SYN), 1);
		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_EXTERNAL], SYN), 0);
		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_INGRESS], FRAG), 1);
		CHECK_EQ_U64(XBY(x->flag_totals[DPMON_TOTAL_INGRESS], FRAG), 42);
		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_EXTERNAL], FRAG), 1);
		CHECK_EQ_U64(XPK(x->flag_totals[DPMON_TOTAL_EGRESS], FRAG), 0);
		/* 10.1.0.1 and 10.1.2.5 have flag lines; nothing else does. */
		CHECK_EQ_U64(x->n_flag_lines, 2);
		CHECK_EQ_U64(x->stats.host_ext_full, 0);
	}
	m = dpmon_merge_create(cfg, c, g, lcores, 2, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0); /* a 2 s interval */
	REQUIRE(s != NULL);
	CHECK_EQ_U64(XPK(s->totals[DPMON_TOTAL_INGRESS], SYN), 6);
	CHECK(fabs(s->totals[DPMON_TOTAL_INGRESS].flag[DPMON_FLAG_SYN].pps - 3.0) < 1e-9);
	CHECK(fabs(s->totals[DPMON_TOTAL_INGRESS].flag[DPMON_FLAG_SYN].bps - 6 * 54 * 8 / 2.0) <
	      1e-9);
	CHECK_EQ_U64(XPK(s->totals[DPMON_TOTAL_EXTERNAL], FRAG), 2);
	/* Not part of the total: the total is still the sum of the protocols. */
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_INGRESS].total.packets, 2 * 5);
	/* Subnets: 10.1.0.0/16 [0] holds 10.1.0.1; 10.1.2.0/24 [1] holds 10.1.2.5. */
	CHECK_EQ_U64(XPK(s->subnets[0].dir[DPMON_DIR_INGRESS], SYN), 6);
	CHECK_EQ_U64(XPK(s->subnets[0].dir[DPMON_DIR_EGRESS], SYN), 0);
	CHECK_EQ_U64(XPK(s->subnets[1].dir[DPMON_DIR_EGRESS], SYN), 2);
	CHECK_EQ_U64(XPK(s->subnets[1].dir[DPMON_DIR_INGRESS], FRAG), 2);
	CHECK_EQ_U64(XBY(s->subnets[1].dir[DPMON_DIR_INGRESS], FRAG), 84);
	h = host(s, "10.1.0.1");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_INGRESS], SYN), 6);
	CHECK_EQ_U64(XBY(h->dir[DPMON_DIR_INGRESS], SYN), 6 * 54);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_EGRESS], SYN), 0); /* its SYN+ACKs */
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_INGRESS], FRAG), 0);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].flag[DPMON_FLAG_SYN].pps - 3.0) < 1e-9);
	h = host(s, "10.1.2.5");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_EGRESS], SYN), 2);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_INGRESS], FRAG), 2);
	CHECK_EQ_U64(XBY(h->dir[DPMON_DIR_INGRESS], FRAG), 84);
	/* Invariants: per direction and kind, the hosts of each subnet sum to
	 * the subnet, and the subnets to the totals (no nesting overlap here:
	 * each host is in exactly one subnet, its longest prefix). */
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		for (int f = 0; f < DPMON_FLAG_MAX; f++) {
			uint64_t sub_pk = 0, sub_by = 0;

			for (uint32_t i = 0; i < s->n_subnets; i++) {
				uint64_t hp = 0, hb = 0;

				for (uint32_t j = 0; j < s->n_hosts; j++) {
					if (host_i(s, j)->subnet != i)
						continue;
					hp += host_i(s, j)->dir[d].flag[f].packets;
					hb += host_i(s, j)->dir[d].flag[f].bytes;
				}
				CHECK_EQ_U64(hp, s->subnets[i].dir[d].flag[f].packets);
				CHECK_EQ_U64(hb, s->subnets[i].dir[d].flag[f].bytes);
				sub_pk += s->subnets[i].dir[d].flag[f].packets;
				sub_by += s->subnets[i].dir[d].flag[f].bytes;
			}
			CHECK_EQ_U64(sub_pk, s->totals[d == DPMON_DIR_INGRESS ? DPMON_TOTAL_INGRESS
									      : DPMON_TOTAL_EGRESS]
						     .flag[f]
						     .packets);
			CHECK_EQ_U64(sub_by, s->totals[d == DPMON_DIR_INGRESS ? DPMON_TOTAL_INGRESS
									      : DPMON_TOTAL_EGRESS]
						     .flag[f]
						     .bytes);
		}
	}
	dpmon_snapshot_free(s);
	/* Nothing new: the next interval has zero rates, same cumulative values. */
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL);
	h = host(s, "10.1.0.1");
	CHECK(h != NULL && XPK(h->dir[DPMON_DIR_INGRESS], SYN) == 6 &&
	      h->dir[DPMON_DIR_INGRESS].flag[DPMON_FLAG_SYN].pps == 0.0);
	CHECK_EQ_U64(XPK(s->totals[DPMON_TOTAL_INGRESS], SYN), 6);
	CHECK(s->totals[DPMON_TOTAL_INGRESS].flag[DPMON_FLAG_SYN].pps == 0.0);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

/*
 * The flag line's counters are 32-bit low words too: a wrap there is
 * carried like the main line's; and when every flag line is taken a
 * host's fragment/SYN update is counted in host_ext_full, nothing else.
 */
static void
test_kinds_wrap_and_full(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c = dpmon_core_create("kwrap", 8, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	const uint64_t hz = 1000000000ull;
	const uint32_t ext = IP4(198, 51, 100, 1);
	const struct dpmon_snap_host *h;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	struct rte_mbuf *p[DPMON_MAX_BURST];
	unsigned n = 0;
	uint32_t xi;

	REQUIRE(c != NULL);
	CHECK_EQ_U64(c->flag_capacity, 8); /* capacity 8: at least 8 lines */
	p[0] = tcp4(ext, IP4(10, 1, 0, 1), 0x02);
	dpmon_worker_burst(c, g, p, 1);
	m = dpmon_merge_create(cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	dpmon_snapshot_free(s);
	xi = c->meta[0].flag_idx;
	REQUIRE(xi == 1);
	c->flag_lines[xi - 1].packets[DPMON_DIR_INGRESS][DPMON_FLAG_SYN] = UINT32_MAX;
	c->flag_lines[xi - 1].bytes[DPMON_DIR_INGRESS][DPMON_FLAG_SYN] = UINT32_MAX - 9;
	p[0] = tcp4(ext, IP4(10, 1, 0, 1), 0x02);
	dpmon_worker_burst(c, g, p, 1);
	CHECK_EQ_U64(c->carry_head, 2);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	h = host(s, "10.1.0.1");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_INGRESS], SYN), 1ull << 32);
	CHECK_EQ_U64(XBY(h->dir[DPMON_DIR_INGRESS], SYN), (1ull << 32) + 44);
	/* The main line is untouched by the flag line's wrap. */
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_TCP].packets, 2);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_TCP].pps - 1.0) < 1e-9);
	dpmon_snapshot_free(s);
	/* Fill the table: 8 hosts, 8 lines; 10.1.0.1 holds one already. */
	for (uint32_t i = 2; i <= 9; i++)
		p[n++] = frag4(ext, IP4(10, 1, 0, i));
	dpmon_worker_burst(c, g, p, (uint16_t)n);
	CHECK_EQ_U64(c->n_hosts, 8);
	CHECK_EQ_U64(c->stats.host_table_full, 1); /* 10.1.0.9: no entry */
	CHECK_EQ_U64(c->n_flag_lines, 8);
	CHECK_EQ_U64(c->stats.host_ext_full, 0);
	c->n_flag_lines = 7; /* pretend one line is left short: the next host finds none */
	c->flag_capacity = 7;
	c->meta[7].flag_idx = 0;
	p[0] = frag4(ext, IP4(10, 1, 0, 8));
	dpmon_worker_burst(c, g, p, 1);
	CHECK_EQ_U64(c->stats.host_ext_full, 1);
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK_EQ_U64(s->workers[0].host_ext_full, 1);
	CHECK_EQ_U64(XPK(s->subnets[0].dir[DPMON_DIR_INGRESS], FRAG), 9); /* subnet still counts */
	h = host(s, "10.1.0.8");
	CHECK(h != NULL && h->dir[DPMON_DIR_INGRESS].total.packets == 2);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/* ------------------------------------------------------------------------
 * Flows.
 * --------------------------------------------------------------------- */

/*
 * Epoch 2^24 has a register tag of 0, the value of a zeroed pool slot: the
 * first packet of a pooled subnet must still take a pool sketch (slot 1),
 * not write before the pool (slot index -1). The merge never hands out
 * such an epoch (advance_epochs), the worker does not rely on it.
 */
static void
test_epoch_tag_zero(void)
{
	static struct dpmon_subnet_conf sub[70];
	struct dpmon_classifier cls;
	struct dpmon_core *c = dpmon_core_create("tag0", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g;
	struct rte_mbuf *p[1];
	uint32_t tagged = 0;
	char text[32];

	REQUIRE(c != NULL);
	for (uint32_t i = 0; i < 70; i++) {
		snprintf(text, sizeof(text), "10.3.%u.0/24", i);
		REQUIRE(dpmon_prefix_parse(text, &sub[i].prefix, NULL) == 0);
	}
	REQUIRE(dpmon_classifier_create(&cls, "tag0", sub, 70, SOCKET_ID_ANY) == 0);
	g = gen0(&cls);
	c->merge_epoch = 1u << 24;
	p[0] = v4(17, IP4(198, 51, 100, 1), IP4(10, 3, 69, 1), 66);
	dpmon_worker_count(c, g, p, 1);
	rte_pktmbuf_free_bulk(p, 1);
	CHECK_EQ_U64(
		g->flow_slot[(69 - DPMON_FLOW_SUBNETS_MAX) * DPMON_DIR_MAX + DPMON_DIR_INGRESS],
		1); /* tag 0, pool slot 1 */
	CHECK_EQ_U64(c->n_flow_pool, 1);
	for (uint32_t i = 0; i < (1u << DPMON_FLOW_P); i++)
		tagged += c->flow_pool[0].reg[i] != 0;
	CHECK_EQ_U64(tagged, 1); /* the flow went into pool sketch 0 */
	dpmon_generation_free(g);
	dpmon_core_free(c);
	dpmon_classifier_free(&cls);
}

/*
 * @p n UDP packets, flow i = first .. first + n - 1 from source @p src +
 * i % @p n_src port i / n_src to @p dst port 53 (IPv4, host order).
 */
static void
host_burst(struct dpmon_core *c, const struct dpmon_generation *g, uint32_t src, uint32_t n_src,
	   uint32_t dst, uint32_t first, uint32_t n)
{
	struct rte_mbuf *p[DPMON_MAX_BURST];
	unsigned k = 0;

	for (uint32_t i = first; i < first + n; i++) {
		struct fb f;

		fb_eth(&f, NULL, 0, 0x0800);
		fb_ipv4(&f, 5, 17, src + i % n_src, dst, 0, 28);
		fb_udp(&f, (uint16_t)(i / n_src), 53, 0);
		p[k++] = mbuf_of(&f);
		if (k == DPMON_MAX_BURST || i + 1 == first + n) {
			dpmon_worker_burst(c, g, p, (uint16_t)k);
			k = 0;
		}
	}
}

/*
 * @p n UDP packets, flow i = first .. first + n - 1 from 198.51.(100 +
 * i / 65536).1 port i % 65536 to @p dst port 53: distinct 5-tuples past
 * 65 536 flows (host_burst, one source per 65 536 flows).
 */
static void
flows_burst(struct dpmon_core *c, const struct dpmon_generation *g, uint32_t dst, uint32_t first,
	    uint32_t n)
{
	for (uint32_t i = first, end; i < first + n; i = end) {
		end = RTE_MIN(first + n, (i | 0xffffu) + 1);
		host_burst(c, g, IP4(198, 51, (100 + (i >> 16)) & 0xff, 1), 1, dst, i, end - i);
	}
}

/*
 * Distinct flows per interval: 100 000 distinct 5-tuples spread
 * over two cores (a fifth of them seen by both) estimate within 2 % for
 * the totals, the subnet and their host; the next interval counts only
 * its own flows; IPv6 flows count, for the subnet and for the host.
 */
static void
test_flows(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c[2] = {dpmon_core_create("flow0", 64, SOCKET_ID_ANY),
				   dpmon_core_create("flow1", 64, SOCKET_ID_ANY)};
	struct dpmon_generation *g[2] = {gen0(cls), gen0(cls)};
	unsigned lcores[2] = {1, 2};
	const uint64_t hz = 1000000000ull;
	struct dpmon_snapshot *s;
	const struct dpmon_snap_host *h;
	struct dpmon_merge *m;
	double f;

	REQUIRE(c[0] && c[1]);
	m = dpmon_merge_create(cfg, c, g, lcores, 2, 0, hz);
	REQUIRE(m != NULL);
	flows_burst(c[0], g[0], IP4(10, 1, 0, 1), 0, 60000);
	flows_burst(c[1], g[1], IP4(10, 1, 0, 1), 40000, 60000);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	f = s->totals[DPMON_TOTAL_INGRESS].flows;
	printf("flows: 100000 distinct, totals estimate %.0f (%.2f %%)\n", f,
	       100 * (f - 100000) / 100000);
	CHECK(fabs(f - 100000) <= 2000);
	CHECK(fabs(s->subnets[0].dir[DPMON_DIR_INGRESS].flows - f) < 1e-9);
	CHECK(s->subnets[1].dir[DPMON_DIR_INGRESS].flows == 0);
	CHECK(s->totals[DPMON_TOTAL_EGRESS].flows == 0);
	CHECK(s->totals[DPMON_TOTAL_EXTERNAL].flows == -1);
	/* The host: promoted to a full sketch on both cores, their union. */
	h = host(s, "10.1.0.1");
	REQUIRE(h != NULL);
	f = h->dir[DPMON_DIR_INGRESS].flows;
	printf("flows: 100000 distinct, host estimate %.0f (%.2f %%)\n", f,
	       100 * (f - 100000) / 100000);
	CHECK(fabs(f - 100000) <= 2000);
	CHECK(llround(h->dir[DPMON_DIR_INGRESS].peers) == 2); /* 198.51.100.1, 198.51.101.1 */
	CHECK(h->dir[DPMON_DIR_EGRESS].flows == 0 && h->dir[DPMON_DIR_EGRESS].peers == 0);
	CHECK(s->subnets[0].dir[DPMON_DIR_INGRESS].peers == -1);
	CHECK(s->totals[DPMON_TOTAL_INGRESS].peers == -1);
	dpmon_snapshot_free(s);
	/* Next interval: 100 flows, 50 of them seen before; plus 3 IPv6 flows
	 * (the reference burst's IPv6 packet, three source ports). */
	flows_burst(c[0], g[0], IP4(10, 1, 0, 1), 99950, 100);
	for (uint16_t port = 1; port <= 3; port++) {
		struct rte_mbuf *p;
		struct fb fr;

		fb_eth(&fr, NULL, 0, 0x86dd);
		fb_ipv6(&fr, 17, EXT6, IN6, 8);
		fb_udp(&fr, port, 2, 0);
		p = mbuf_of(&fr);
		dpmon_worker_burst(c[1], g[1], &p, 1);
	}
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(fabs(s->totals[DPMON_TOTAL_INGRESS].flows - 103) <= 2);
	CHECK(fabs(s->subnets[0].dir[DPMON_DIR_INGRESS].flows - 100) <= 2);
	CHECK(fabs(s->subnets[2].dir[DPMON_DIR_INGRESS].flows - 3) < 0.5); /* IPv6 /48 */
	/* This interval's 100 flows only, one packet each (the first ~44
	 * before the promotion, counted from the bitmap: dpmon_hll_unseen). */
	h = host(s, "10.1.0.1");
	REQUIRE(h != NULL);
	printf("flows: 100 distinct, host estimate %.1f\n", h->dir[DPMON_DIR_INGRESS].flows);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].flows - 100) <= 10);
	h = host(s, "2001:db8:1::7");
	REQUIRE(h != NULL);
	CHECK(llround(h->dir[DPMON_DIR_INGRESS].flows) == 3); /* IPv6 host */
	CHECK(llround(h->dir[DPMON_DIR_INGRESS].peers) == 1);
	dpmon_snapshot_free(s);
	/* An idle interval: no flows. */
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(s->totals[DPMON_TOTAL_INGRESS].flows == 0);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

/*
 * Per-host flows and peers (counters.h): small counts on the
 * bitmaps, peers of both directions, a promoted host's flows and peers at
 * 100 000 within 2 % (IPv4 and IPv6), the pool of full sketches exhausted (counted, the
 * rest stay on their bitmaps), and all of it per interval.
 */
static void
test_host_flows(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c = dpmon_core_create("hflow", 1024, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	const uint64_t hz = 1000000000ull;
	const uint32_t n_full = DPMON_HOST_SKETCHES + 44;
	struct dpmon_merge_timing timing;
	const struct dpmon_snap_host *h;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	double worst = 0;
	char a[32];

	REQUIRE(c != NULL);
	m = dpmon_merge_create(cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	/* Small counts: host 10.1.1.n has n flows (each sent twice) from one peer. */
	for (uint32_t n = 1; n <= 8; n++) {
		host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 1, 1, n), 0, n);
		host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 1, 1, n), 0, n);
	}
	/* Peers: 10.1.3.1 hears from 5 sources, one flow each, and answers 3
	 * (as the source: egress). */
	host_burst(c, g, IP4(198, 51, 100, 10), 5, IP4(10, 1, 3, 1), 0, 5);
	for (uint32_t i = 0; i < 3; i++)
		host_burst(c, g, IP4(10, 1, 3, 1), 1, IP4(203, 0, 113, 1 + i), 0, 1);
	/* A promoted host: 100 000 flows from 1 000 sources. */
	host_burst(c, g, IP4(198, 18, 0, 0), 1000, IP4(10, 1, 5, 1), 0, 100000);
	/* An IPv6 host promoted: 100 000 flows (ports) from one peer. */
	for (uint32_t i = 0; i < 100000; i += DPMON_MAX_BURST) {
		struct rte_mbuf *p[DPMON_MAX_BURST];
		uint32_t k;

		for (k = 0; k < DPMON_MAX_BURST && i + k < 100000; k++) {
			struct fb fr;

			fb_eth(&fr, NULL, 0, 0x86dd);
			fb_ipv6(&fr, 17, EXT6, IN6, 8);
			fb_udp(&fr, (uint16_t)(i + k), (uint16_t)(1 + ((i + k) >> 16)), 0);
			p[k] = mbuf_of(&fr);
		}
		dpmon_worker_burst(c, g, p, (uint16_t)k);
	}
	/* The pool: n_full more hosts with 60 flows each; the first to reach
	 * DPMON_HOST_PROMOTE bits get the 254 slots left, 46 find none. */
	for (uint32_t k = 0; k < n_full; k++)
		host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 1, 6 + k / 200, 1 + k % 200), 0,
			   60);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	for (uint32_t n = 1; n <= 8; n++) {
		snprintf(a, sizeof(a), "10.1.1.%u", n);
		h = host(s, a);
		REQUIRE(h != NULL);
		/* Exact, or one low where two flows share a bit (counters.h). */
		CHECK(llabs(llround(h->dir[DPMON_DIR_INGRESS].flows) - (long long)n) <= 1);
		CHECK(llround(h->dir[DPMON_DIR_INGRESS].peers) == 1);
		CHECK(h->dir[DPMON_DIR_EGRESS].flows == 0);
	}
	h = host(s, "10.1.3.1");
	REQUIRE(h != NULL);
	CHECK(llabs(llround(h->dir[DPMON_DIR_INGRESS].flows) - 5) <= 1);
	CHECK(llabs(llround(h->dir[DPMON_DIR_INGRESS].peers) - 5) <= 1);
	CHECK(llround(h->dir[DPMON_DIR_EGRESS].flows) == 3);
	CHECK(llround(h->dir[DPMON_DIR_EGRESS].peers) == 3);
	h = host(s, "10.1.5.1");
	REQUIRE(h != NULL);
	printf("host flows: 100000 distinct, estimate %.0f; 1000 peers, estimate %.1f\n",
	       h->dir[DPMON_DIR_INGRESS].flows, h->dir[DPMON_DIR_INGRESS].peers);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].flows - 100000) <= 2000);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].peers - 1000) <= 20);
	h = host(s, "2001:db8:1::7");
	REQUIRE(h != NULL);
	printf("host flows: 100000 distinct IPv6, estimate %.0f\n",
	       h->dir[DPMON_DIR_INGRESS].flows);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].flows - 100000) <= 2000);
	CHECK(llround(h->dir[DPMON_DIR_INGRESS].peers) == 1);
	/* Slots went to 10.1.5.1 and 2001:db8:1::7: n_full - (DPMON_HOST_SKETCHES - 2)
	 * left out. */
	CHECK_EQ_U64(c->stats.host_flow_full, n_full - DPMON_HOST_SKETCHES + 2);
	CHECK_EQ_U64(s->workers[0].host_flow_full, n_full - DPMON_HOST_SKETCHES + 2);
	for (uint32_t k = 0; k < n_full; k++) {
		double e;

		snprintf(a, sizeof(a), "10.1.%u.%u", 6 + k / 200, 1 + k % 200);
		h = host(s, a);
		REQUIRE(h != NULL);
		e = fabs(h->dir[DPMON_DIR_INGRESS].flows - 60) / 60;
		worst = e > worst ? e : worst;
	}
	dpmon_merge_last_timing(m, &timing);
	printf("host flows: 60 distinct, %u hosts, worst error %.1f %%; snapshot with %u promoted: "
	       "%.2f ms\n",
	       n_full, 100 * worst, (unsigned)DPMON_HOST_SKETCHES, 1e3 * timing.snapshot_s);
	CHECK(worst <= 0.30); /* about 3 sigma of the 64-bit bitmap at 60 */
	dpmon_snapshot_free(s);
	/* Next interval: only its own flows; the slots are free again. */
	host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 1, 1, 3), 100, 2);
	host_burst(c, g, IP4(198, 18, 0, 0), 1000, IP4(10, 1, 5, 1), 0, 100000);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	h = host(s, "10.1.1.3");
	REQUIRE(h != NULL);
	CHECK(llround(h->dir[DPMON_DIR_INGRESS].flows) == 2);
	h = host(s, "10.1.1.4");
	REQUIRE(h != NULL);
	CHECK(h->dir[DPMON_DIR_INGRESS].flows == 0 && h->dir[DPMON_DIR_INGRESS].peers == 0);
	h = host(s, "10.1.5.1");
	REQUIRE(h != NULL);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].flows - 100000) <= 2000);
	CHECK_EQ_U64(c->stats.host_flow_full, n_full - DPMON_HOST_SKETCHES + 2);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/*
 * Flows of the subnets past the first DPMON_FLOW_SUBNETS_MAX (counters.h):
 * 131 subnets, the last 67 on a worker's pool of DPMON_FLOW_POOL sketches
 * per interval. 100 000 flows within 2 % on a pooled subnet; a subnet that
 * found the pool empty reports -1 (not measured); the next interval the
 * pool is free again, and IPv6 flows count on a pooled /48.
 */
static void
test_flows_pooled_subnets(void)
{
	enum {
		N = 131
	};
	static struct dpmon_subnet_conf sub[N];
	struct dpmon_classifier cls;
	struct dpmon_config cfg;
	struct dpmon_core *c = dpmon_core_create("pool", 1024, SOCKET_ID_ANY);
	struct dpmon_generation *g;
	unsigned lcore = 1;
	const uint64_t hz = 1000000000ull;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	char text[32];
	double f;

	REQUIRE(c != NULL);
	for (uint32_t k = 0; k + 1 < N; k++) {
		snprintf(text, sizeof(text), "10.2.%u.0/24", k);
		REQUIRE(dpmon_prefix_parse(text, &sub[k].prefix, NULL) == 0);
	}
	REQUIRE(dpmon_prefix_parse("2001:db8:1::/48", &sub[N - 1].prefix, NULL) == 0);
	dpmon_config_defaults(&cfg);
	cfg.subnets = sub;
	cfg.n_subnets = N;
	REQUIRE(dpmon_classifier_create(&cls, "pool", sub, N, SOCKET_ID_ANY) == 0);
	g = gen0(&cls);
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	/* Subnet 100 first (its slot), then one flow each into 64 .. 129:
	 * 63 more slots; 128 and 129 find none. */
	host_burst(c, g, IP4(198, 18, 0, 0), 1000, IP4(10, 2, 100, 1), 0, 100000);
	for (uint32_t k = 64; k < 130; k++)
		host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 2, k, 1), 0, 1);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	f = s->subnets[100].dir[DPMON_DIR_INGRESS].flows;
	printf("flows: 100000 distinct, pooled subnet estimate %.0f (%.2f %%)\n", f,
	       100 * (f - 100000) / 100000);
	CHECK(fabs(f - 100000) <= 2000);
	for (uint32_t k = 64; k < 128; k++)
		CHECK(k == 100 || llround(s->subnets[k].dir[DPMON_DIR_INGRESS].flows) == 1);
	CHECK(s->subnets[128].dir[DPMON_DIR_INGRESS].flows == -1);
	CHECK(s->subnets[129].dir[DPMON_DIR_INGRESS].flows == -1);
	CHECK(s->subnets[129].dir[DPMON_DIR_EGRESS].flows == 0);
	CHECK(s->subnets[63].dir[DPMON_DIR_INGRESS].flows == 0);
	dpmon_snapshot_free(s);
	/* Next interval: 5 flows into 129, 3 IPv6 flows into the /48. */
	host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 2, 129, 1), 0, 5);
	for (uint16_t port = 1; port <= 3; port++) {
		struct rte_mbuf *p;
		struct fb fr;

		fb_eth(&fr, NULL, 0, 0x86dd);
		fb_ipv6(&fr, 17, EXT6, IN6, 8);
		fb_udp(&fr, port, 2, 0);
		p = mbuf_of(&fr);
		dpmon_worker_burst(c, g, &p, 1);
	}
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(llround(s->subnets[129].dir[DPMON_DIR_INGRESS].flows) == 5);
	CHECK(llround(s->subnets[N - 1].dir[DPMON_DIR_INGRESS].flows) == 3);
	CHECK(s->subnets[100].dir[DPMON_DIR_INGRESS].flows == 0);
	CHECK(s->subnets[128].dir[DPMON_DIR_INGRESS].flows == 0);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_classifier_free(&cls);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/* ------------------------------------------------------------------------
 * Classification.
 * --------------------------------------------------------------------- */

static void
test_classify_edges(void)
{
	struct dpmon_subnet_conf s[2];
	struct dpmon_classifier c;
	uint32_t a[5] = {0, IP4(10, 0, 0, 1), IP4(255, 255, 255, 255), IP4(192, 0, 2, 1),
			 IP4(192, 0, 2, 128)};
	uint32_t r[8] __rte_aligned(16);

	dpmon_prefix_parse("0.0.0.0/0", &s[0].prefix, NULL);
	dpmon_prefix_parse("192.0.2.128/25", &s[1].prefix, NULL);
	CHECK(dpmon_classifier_create(&c, "edges", s, 2, SOCKET_ID_ANY) == 0);
	dpmon_classify_v4(&c, a, r, 5);
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0 && r[4] == 1);
	dpmon_classifier_free(&c);
}

/* ------------------------------------------------------------------------
 * Main.
 * --------------------------------------------------------------------- */

/* ------------------------------------------------------------------------
 * Host prefixes.
 * --------------------------------------------------------------------- */

/* Strings @p a and @p b are equal. */
/* A UDP packet from @p src to @p dst (IPv6), 70 bytes. */
static struct rte_mbuf *
udp6(const uint8_t *src, const uint8_t *dst)
{
	struct fb f;

	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, src, dst, 16);
	fb_udp(&f, 1, 2, 8);
	return mbuf_of(&f);
}

/* @p text as 16 bytes (an IPv6 address). */
static const uint8_t *
a6(const char *text)
{
	static struct dpmon_addr a[8];
	static unsigned next;
	struct dpmon_addr *x = &a[next++ % 8];

	REQUIRE(dpmon_addr_parse(text, x) == 0);
	return x->b;
}

/*
 * host_prefix_len: the hosts of 10.1.0.0/16 are /24 prefixes and those of
 * 2001:db8:1::/48 /64 prefixes (masked in the worker's host keys), those
 * of 10.2.0.0/16 whole addresses; the snapshot names them so.
 */
static void
test_host_prefix_len(void)
{
	struct dpmon_subnet_conf sub[3];
	struct dpmon_classifier cls;
	struct dpmon_config cfg;
	struct dpmon_core *c = dpmon_core_create("hostpfx", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g;
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	const struct dpmon_snap_host *h;
	struct rte_mbuf *p[16];
	const uint32_t ext = IP4(198, 51, 100, 1);
	const uint64_t hz = 1000000000ull;
	char text[DPMON_PREFIX_STRLEN];
	unsigned lcore = 1, n = 0;

	memset(sub, 0, sizeof(sub));
	dpmon_prefix_parse("10.1.0.0/16", &sub[0].prefix, NULL);
	sub[0].host_prefix_len = 24;
	dpmon_prefix_parse("2001:db8:1::/48", &sub[1].prefix, NULL);
	sub[1].host_prefix_len = 64;
	dpmon_prefix_parse("10.2.0.0/16", &sub[2].prefix, NULL);
	dpmon_config_defaults(&cfg);
	cfg.subnets = sub;
	cfg.n_subnets = 3;
	REQUIRE(c != NULL && dpmon_classifier_create(&cls, "hostpfx", sub, 3, SOCKET_ID_ANY) == 0);
	g = gen0(&cls);
	CHECK(g->host_bits == NULL); /* made like every generation: whole addresses */
	CHECK(dpmon_generation_host_prefixes(g, sub, 2, SOCKET_ID_ANY) == -EINVAL);
	REQUIRE(dpmon_generation_host_prefixes(g, sub, 3, SOCKET_ID_ANY) == 0);
	REQUIRE(g->host_bits != NULL);
	CHECK(g->host_bits[0] == 96 + 24 && g->host_bits[1] == 64 && g->host_bits[2] == 128);
	CHECK(dpmon_generation_host_len(g, 0, true) == 24);
	CHECK(dpmon_generation_host_len(g, 1, false) == 64);
	CHECK(dpmon_generation_host_len(g, 2, true) == 32);

	p[n++] = v4(17, ext, IP4(10, 1, 2, 3), 26);   /* 10.1.2.0/24 in */
	p[n++] = v4(17, ext, IP4(10, 1, 2, 200), 26); /* 10.1.2.0/24 in */
	p[n++] = v4(17, IP4(10, 1, 2, 7), ext, 26);   /* 10.1.2.0/24 out */
	p[n++] = v4(17, ext, IP4(10, 1, 3, 1), 26);   /* 10.1.3.0/24 in */
	p[n++] = v4(17, ext, IP4(10, 2, 0, 5), 26);   /* 10.2.0.5 in */
	p[n++] = v4(17, ext, IP4(10, 2, 0, 6), 26);   /* 10.2.0.6 in */
	p[n++] = udp6(EXT6, a6("2001:db8:1:2::1"));
	p[n++] = udp6(EXT6, a6("2001:db8:1:2:ffff:ffff:ffff:ffff"));
	p[n++] = udp6(a6("2001:db8:1:2:abcd::9"), EXT6);
	p[n++] = udp6(EXT6, a6("2001:db8:1:3::1"));
	/* internal: both sides counted, each under its own host prefix */
	p[n++] = udp6(a6("2001:db8:1:3::2"), a6("2001:db8:1:4::2"));
	dpmon_worker_burst(c, g, p, (uint16_t)n);
	CHECK_EQ_U64(c->n_hosts, 7);
	CHECK_EQ_U64(c->stats.host_table_full, 0);

	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(s->subnets[0].host_prefix_len == 24 && s->subnets[1].host_prefix_len == 64 &&
	      s->subnets[2].host_prefix_len == 32);
	REQUIRE(s->n_hosts == 7);
	/* In address order: IPv4 first. */
	CHECK_EQ_STR(dpmon_host_format(&host_i(s, 0)->addr, dpmon_snap_host_len(s, host_i(s, 0)),
				       text, sizeof(text)),
		     "10.1.2.0/24");
	CHECK_EQ_STR(dpmon_host_format(&host_i(s, 1)->addr, dpmon_snap_host_len(s, host_i(s, 1)),
				       text, sizeof(text)),
		     "10.1.3.0/24");
	CHECK_EQ_STR(dpmon_host_format(&host_i(s, 2)->addr, dpmon_snap_host_len(s, host_i(s, 2)),
				       text, sizeof(text)),
		     "10.2.0.5");
	CHECK_EQ_STR(dpmon_host_format(&host_i(s, 4)->addr, dpmon_snap_host_len(s, host_i(s, 4)),
				       text, sizeof(text)),
		     "2001:db8:1:2::/64");
	CHECK_EQ_STR(dpmon_host_format(&host_i(s, 6)->addr, dpmon_snap_host_len(s, host_i(s, 6)),
				       text, sizeof(text)),
		     "2001:db8:1:4::/64");
	h = host(s, "10.1.2.0");
	REQUIRE(h != NULL);
	CHECK(h->subnet == 0);
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.packets, 2);
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.bytes, 2 * 60);
	CHECK_EQ_U64(h->dir[DPMON_DIR_EGRESS].total.packets, 1);
	NEAR(h->dir[DPMON_DIR_INGRESS].peers, 1, 1e-9); /* one remote peer */
	CHECK(host(s, "10.1.2.3") == NULL);
	h = host(s, "2001:db8:1:2::");
	REQUIRE(h != NULL);
	CHECK(h->subnet == 1);
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.packets, 2);
	CHECK_EQ_U64(h->dir[DPMON_DIR_EGRESS].total.packets, 1);
	h = host(s, "2001:db8:1:3::");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.packets, 1);
	CHECK_EQ_U64(h->dir[DPMON_DIR_EGRESS].total.packets, 1);
	h = host(s, "10.2.0.5");
	REQUIRE(h != NULL);
	CHECK(dpmon_snap_host_len(s, h) == 32);
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.packets, 1);
	/* The hosts add up to their subnet. */
	CHECK_EQ_U64(s->subnets[1].dir[DPMON_DIR_INGRESS].total.packets, 4);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_classifier_free(&cls);
	dpmon_core_free(c);
}

/* Packet types a NIC reports for plain frames (parse_fast.h's parse_ptype),
 * and one it reports for others: the "wrong" ones are taken from here. */
static const uint32_t PTYPES[] = {
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | RTE_PTYPE_L4_TCP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_UDP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN | RTE_PTYPE_L4_TCP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | RTE_PTYPE_L4_UDP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN | RTE_PTYPE_L4_UDP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_TCP,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_FRAG,
};

/* The packet type a NIC that reports L2, L3 and L4 types gives @p m. */
static uint32_t
ptype_of(const struct rte_mbuf *m)
{
	return rte_net_get_ptype(m, NULL,
				 RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK | RTE_PTYPE_L4_MASK);
}

/* The frames of test_ptype: plain ones, and ones whose type or lengths a
 * NIC's report could get wrong. @return how many, in @p f. */
static unsigned
ptype_frames(struct fb *f, uint32_t *trim)
{
	static const uint16_t tag[1] = {0x8100};
	const uint32_t ext = IP4(198, 51, 100, 1), h1 = IP4(10, 1, 0, 1), h2 = IP4(10, 1, 2, 5);
	unsigned n = 0;

	memset(trim, 0, 32 * sizeof(*trim));
	fb_eth(&f[n], NULL, 0, 0x0800); /* UDP in */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 28);
	fb_udp(&f[n++], 1000, 53, 0);
	fb_eth(&f[n], NULL, 0, 0x0800); /* UDP out, padded to 60 bytes */
	fb_ipv4(&f[n], 5, 17, h2, ext, 0, 28);
	fb_udp(&f[n], 53, 1000, 0);
	fb_zero(&f[n++], 18);
	fb_eth(&f[n], NULL, 0, 0x0800); /* TCP SYN in */
	fb_ipv4(&f[n], 5, 6, ext, h2, 0, 40);
	fb_tcp(&f[n++], 1000, 80, 0x02);
	fb_eth(&f[n], NULL, 0, 0x0800); /* TCP ACK, internal */
	fb_ipv4(&f[n], 5, 6, h1, h2, 0, 40);
	fb_tcp(&f[n++], 1000, 80, 0x10);
	fb_eth(&f[n], NULL, 0, 0x86dd); /* IPv6 UDP in */
	fb_ipv6(&f[n], 17, EXT6, IN6, 8);
	fb_udp(&f[n++], 7, 9, 0);
	fb_eth(&f[n], NULL, 0, 0x86dd); /* IPv6 TCP out */
	fb_ipv6(&f[n], 6, IN6, EXT6, 20);
	fb_tcp(&f[n++], 443, 5000, 0x18);
	fb_eth(&f[n], NULL, 0, 0x0800); /* first fragment */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0x2000, 28);
	fb_udp(&f[n++], 1, 2, 0);
	fb_eth(&f[n], NULL, 0, 0x0800); /* non-first fragment */
	fb_ipv4(&f[n], 5, 17, ext, h1, 100, 28);
	fb_udp(&f[n++], 1, 2, 0);
	fb_eth(&f[n], tag, 1, 0x0800); /* VLAN-tagged UDP */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 28);
	fb_udp(&f[n++], 1000, 53, 0);
	fb_eth(&f[n], NULL, 0, 0x0800); /* IPv4 options */
	fb_ipv4(&f[n], 6, 17, ext, h1, 0, 32);
	fb_udp(&f[n++], 1000, 53, 0);
	fb_eth(&f[n], NULL, 0, 0x0800); /* total length past the frame: truncated */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 60);
	fb_udp(&f[n++], 1000, 53, 0);
	fb_eth(&f[n], NULL, 0, 0x0800); /* UDP length past the datagram */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 28);
	fb_udp(&f[n], 1000, 53, 0);
	fb_put16(&f[n++], 38, 30);
	fb_eth(&f[n], NULL, 0, 0x0800); /* UDP length below its header */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 28);
	fb_udp(&f[n], 1000, 53, 0);
	fb_put16(&f[n++], 38, 7);
	fb_eth(&f[n], NULL, 0, 0x0800); /* TCP data offset past the datagram */
	fb_ipv4(&f[n], 5, 6, ext, h1, 0, 40);
	fb_tcp_doff(&f[n++], 1000, 80, 0x10, 6);
	fb_eth(&f[n], NULL, 0, 0x0800); /* cut inside the UDP header */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 28);
	fb_udp(&f[n], 1000, 53, 0);
	trim[n++] = 4;
	fb_eth(&f[n], NULL, 0, 0x0800); /* cut inside the TCP header */
	fb_ipv4(&f[n], 5, 6, ext, h1, 0, 40);
	fb_tcp(&f[n], 1000, 80, 0x02);
	trim[n++] = 6;
	fb_eth(&f[n], NULL, 0, 0x86dd); /* IPv6 cut inside its header */
	fb_ipv6(&f[n], 17, EXT6, IN6, 8);
	fb_udp(&f[n], 7, 9, 0);
	trim[n++] = 20;
	fb_eth(&f[n], NULL, 0, 0x86dd); /* IPv6 payload length 0 */
	fb_ipv6(&f[n], 17, EXT6, IN6, 0);
	fb_udp(&f[n++], 7, 9, 0);
	fb_eth(&f[n], NULL, 0, 0x86dd); /* IPv6 with a hop-by-hop header */
	fb_ipv6(&f[n], 0, EXT6, IN6, 16);
	fb_ext(&f[n], 17, 0);
	fb_udp(&f[n++], 7, 9, 0);
	fb_eth(&f[n], NULL, 0, 0x0806); /* ARP */
	fb_zero(&f[n++], 28);
	fb_eth(&f[n], NULL, 0, 0x0800); /* IPv4 version field 6 */
	fb_ipv4(&f[n], 5, 17, ext, h1, 0, 28);
	fb_udp(&f[n], 1000, 53, 0);
	f[n].b[14] = 0x65;
	n++;
	fb_eth(&f[n], NULL, 0, 0x0800); /* runt: 20 bytes */
	f[n++].n = 20;
	fb_eth(&f[n], NULL, 0, 0x0800); /* ICMP */
	fb_ipv4(&f[n], 5, 1, ext, h1, 0, 28);
	fb_zero(&f[n++], 8);
	assert(n <= 32);
	return n;
}

/*
 * An RX queue whose PMD reports packet types (DPMON_WORKER_PTYPE): with the
 * types right (as DPDK's software classifier gives them), wrong (a plain
 * type for every frame, none the right one) or absent (0), every counter,
 * host entry and subnet counts what it counts without the flag, truncated
 * and lying frames by the same parse reasons.
 */
static void
test_ptype(const struct dpmon_classifier *cls)
{
	enum {
		RUNS = 4,
		REPEAT = 40
	};
	static struct fb fr[32];
	static uint32_t trim[32];
	struct dpmon_core *c[RUNS];
	struct dpmon_generation *g[RUNS];
	unsigned nf = ptype_frames(fr, trim);

	for (int r = 0; r < RUNS; r++) {
		c[r] = dpmon_core_create("ptype", 256, SOCKET_ID_ANY);
		g[r] = gen0(cls);
		REQUIRE(c[r] != NULL && g[r] != NULL);
	}
	/* Bursts of every frame, each shifted by one frame from the last so
	 * that each type sits at every position of a burst. */
	for (unsigned rep = 0; rep < REPEAT; rep++) {
		for (int r = 0; r < RUNS; r++) {
			struct rte_mbuf *p[32];

			for (unsigned k = 0; k < nf; k++) {
				unsigned i = (k + rep) % nf;

				p[k] = mbuf_of(&fr[i]);
				if (trim[i] != 0)
					REQUIRE(rte_pktmbuf_trim(p[k], (uint16_t)trim[i]) == 0);
				if (r == 1)
					p[k]->packet_type = ptype_of(p[k]);
				else if (r == 2)
					p[k]->packet_type = PTYPES[(i + rep) % RTE_DIM(PTYPES)];
				else
					p[k]->packet_type = 0;
			}
			if (r == 2) /* wrong: never the type the classifier gives */
				for (unsigned k = 0; k < nf; k++)
					if (p[k]->packet_type == ptype_of(p[k]))
						p[k]->packet_type = p[k]->packet_type == PTYPES[0]
									    ? PTYPES[3]
									    : PTYPES[0];
			dpmon_worker_count_generation(c[r], g[r], p, (uint16_t)nf,
						      r == 0 ? 0 : DPMON_WORKER_PTYPE);
			rte_pktmbuf_free_bulk(p, nf);
		}
	}
	/* The frames really are what they claim: some of each reason. */
	CHECK(c[0]->stats.reasons[DPMON_REASON_OK] > 0);
	CHECK(c[0]->stats.reasons[DPMON_REASON_OK] < (uint64_t)nf * REPEAT);
	CHECK_EQ_U64(c[0]->n_hosts, 3); /* 10.1.0.1, 10.1.2.5, 2001:db8:1::7 */
	for (int r = 1; r < RUNS; r++) {
		CHECK(memcmp(&c[r]->stats, &c[0]->stats, sizeof(c[0]->stats)) == 0);
		CHECK(memcmp(c[r]->totals, c[0]->totals, sizeof(c[0]->totals)) == 0);
		CHECK(memcmp(c[r]->flag_totals, c[0]->flag_totals, sizeof(c[0]->flag_totals)) == 0);
		CHECK(memcmp(g[r]->subnets, g[0]->subnets,
			     sizeof(*g[0]->subnets) * (cls->n_subnets + 1)) == 0);
		CHECK_EQ_U64(c[r]->n_hosts, c[0]->n_hosts);
		CHECK(memcmp(c[r]->hosts, c[0]->hosts, sizeof(*c[0]->hosts) * c[0]->n_hosts) == 0);
		CHECK(memcmp(c[r]->meta, c[0]->meta, sizeof(*c[0]->meta) * c[0]->n_hosts) == 0);
		CHECK(memcmp(c[r]->flow_tot, c[0]->flow_tot,
			     sizeof(*c[0]->flow_tot) * DPMON_DIR_MAX) == 0);
	}
	for (int r = 0; r < RUNS; r++) {
		dpmon_generation_free(g[r]);
		dpmon_core_free(c[r]);
	}
}

int
main(int argc, char **argv)
{
	struct dpmon_classifier cls;
	struct dpmon_config cfg;

	(void)argc;
	worker_fixture_init(argv[0], &cls, &cfg);
	test_table_full(&cls);
	test_repeat_in_burst(&cls);
	test_notes_and_decap(&cls, &cfg);
	test_classify_edges();
	test_v4mapped_not_aliased();
	test_host_prefix_len();
	test_fragments_and_syn(&cls, &cfg);
	test_kinds_wrap_and_full(&cls, &cfg);
	test_flows(&cls, &cfg);
	test_host_flows(&cls, &cfg);
	test_flows_pooled_subnets();
	test_epoch_tag_zero();
	test_ptype(&cls);
	return worker_fixture_finish("test_worker", &cls);
}
