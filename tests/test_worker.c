/*
 * test_worker.c — the hot path and the merge on hand-built bursts:
 * longest-prefix classification, ingress/egress/internal/external, per
 * protocol, hosts, a full host table, two worker tables merged, rates over
 * the measured interval, and no loss across merges; the parser's notes
 * (anomalies, ip_stats) counted and merged, a port's decap mask, and the
 * bytes of a tag the NIC stripped; a configuration reload (generations).
 */
#include <math.h>

#include <rte_common.h>

#include "rates.h"
#include "worker_fixture.h"

/* The reference burst. Frame lengths: 14 + 20 + payload. */
static unsigned
burst(struct rte_mbuf **p)
{
	unsigned n = 0;
	struct fb f;

	p[n++] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 66);  /* 100 B ingress s0 udp */
	p[n++] = v4(6, IP4(10, 1, 2, 5), IP4(198, 51, 100, 1), 166);  /* 200 B egress s1 tcp */
	p[n++] = v4(1, IP4(10, 1, 0, 17), IP4(10, 1, 0, 18), 266);    /* 300 B internal s0 icmp */
	p[n++] = v4(47, IP4(198, 51, 100, 1), IP4(203, 0, 113, 1), 366); /* 400 B external other */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, EXT6, IN6, 446);
	fb_udp(&f, 1, 2, 438);                                        /* 500 B ingress s2 udp */
	p[n++] = mbuf_of(&f);
	fb_eth(&f, NULL, 0, 0x0806);
	fb_zero(&f, 28);
	p[n++] = mbuf_of(&f);                                         /* ARP: non_ip */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 0, 48);
	f.b[14] = 0x42;
	p[n++] = mbuf_of(&f);                                         /* IHL 2 */
	return n;
}

#define PK(d, P) ((d).proto[DPMON_PROTO_##P].packets)
#define BY(d, P) ((d).proto[DPMON_PROTO_##P].bytes)

static void
check_core(const struct dpmon_core *c, const struct dpmon_generation *g, uint64_t k)
{
	CHECK_EQ_U64(c->stats.packets, 7 * k);
	CHECK_EQ_U64(c->stats.reasons[DPMON_REASON_OK], 5 * k);
	CHECK_EQ_U64(c->stats.reasons[DPMON_REASON_NON_IP], 1 * k);
	CHECK_EQ_U64(c->stats.reasons[DPMON_REASON_IPV4_BAD_HEADER], 1 * k);
	CHECK_EQ_U64(BY(g->subnets[0].dir[DPMON_DIR_INGRESS], UDP), 100 * k);
	CHECK_EQ_U64(BY(g->subnets[0].dir[DPMON_DIR_INGRESS], ICMP), 300 * k);
	CHECK_EQ_U64(BY(g->subnets[0].dir[DPMON_DIR_EGRESS], ICMP), 300 * k);
	CHECK_EQ_U64(PK(g->subnets[0].dir[DPMON_DIR_EGRESS], TCP), 0);
	CHECK_EQ_U64(BY(g->subnets[1].dir[DPMON_DIR_EGRESS], TCP), 200 * k);
	CHECK_EQ_U64(BY(g->subnets[2].dir[DPMON_DIR_INGRESS], UDP), 500 * k);
	CHECK_EQ_U64(BY(c->totals[DPMON_TOTAL_INGRESS], UDP), 600 * k);
	CHECK_EQ_U64(BY(c->totals[DPMON_TOTAL_INGRESS], ICMP), 300 * k);
	CHECK_EQ_U64(BY(c->totals[DPMON_TOTAL_EGRESS], TCP), 200 * k);
	CHECK_EQ_U64(BY(c->totals[DPMON_TOTAL_EGRESS], ICMP), 300 * k);
	CHECK_EQ_U64(BY(c->totals[DPMON_TOTAL_INTERNAL], ICMP), 300 * k);
	CHECK_EQ_U64(PK(c->totals[DPMON_TOTAL_INTERNAL], UDP), 0);
	CHECK_EQ_U64(BY(c->totals[DPMON_TOTAL_EXTERNAL], OTHER), 400 * k);
	CHECK_EQ_U64(c->n_hosts, 5); /* 10.1.0.1, 10.1.2.5, .17, .18, 2001:db8:1::7 */
}

static void
test_count_and_merge(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *core[2];
	struct dpmon_generation *gen[2] = {gen0(cls), gen0(cls)};
	unsigned lcores[2] = {1, 2};
	struct rte_mbuf *p[16];
	uint64_t hz = 1000000000ull;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	unsigned n;

	core[0] = dpmon_core_create("t0", 1024, SOCKET_ID_ANY);
	core[1] = dpmon_core_create("t1", 1024, SOCKET_ID_ANY);
	CHECK(core[0] && core[1]);
	n = burst(p);
	dpmon_worker_burst(core[0], gen[0], p, (uint16_t)n);
	check_core(core[0], gen[0], 1);
	n = burst(p);
	dpmon_worker_burst(core[0], gen[0], p, (uint16_t)n);
	check_core(core[0], gen[0], 2);
	n = burst(p);
	dpmon_worker_burst(core[1], gen[1], p, (uint16_t)n);
	check_core(core[1], gen[1], 1);
	CHECK_EQ_U64(rte_mempool_in_use_count(mp), 0); /* every mbuf freed */

	/* Load as the worker loop would count it (the burst calls above do not). */
	core[0]->stats.polls = 10;
	core[0]->stats.busy_cycles = hz / 2;
	m = dpmon_merge_create(cfg, core, gen, lcores, 2, 0, hz);
	CHECK(m != NULL);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0); /* a 2-second interval */
	CHECK(s != NULL);
	CHECK_EQ_U64(s->workers[0].polls, 10);
	CHECK(fabs(s->workers[0].busy_s - 0.5) < 1e-9);
	CHECK(fabs(s->workers[0].busy_ratio - 0.25) < 1e-9);
	CHECK(s->workers[1].busy_ratio == 0.0);
	CHECK_EQ_U64(s->workers[0].host_capacity, 1024);
	CHECK_EQ_U64(s->seq, 1);
	CHECK(fabs(s->interval_s - 2.0) < 1e-9);
	CHECK_EQ_U64(s->n_hosts, 5); /* same hosts on both cores: merged */
	CHECK_EQ_U64(s->n_workers, 2);
	CHECK_EQ_U64(s->workers[0].packets, 14);
	CHECK_EQ_U64(s->workers[1].packets, 7);
	CHECK_EQ_U64(s->workers[1].lcore, 2);
	CHECK_EQ_U64(s->parse_errors[DPMON_REASON_NON_IP], 3);
	CHECK_EQ_U64(s->parse_errors[DPMON_REASON_IPV4_BAD_HEADER], 3);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 6);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.bytes, 1200);
	CHECK(fabs(s->subnets[0].dir[DPMON_DIR_INGRESS].total.pps - 3.0) < 1e-9);
	CHECK(fabs(s->subnets[0].dir[DPMON_DIR_INGRESS].total.bps - 4800.0) < 1e-9);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_ICMP].bytes, 900);
	CHECK_EQ_U64(s->subnets[1].dir[DPMON_DIR_EGRESS].total.bytes, 600);
	CHECK_EQ_U64(s->subnets[2].dir[DPMON_DIR_INGRESS].total.bytes, 1500);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_INGRESS].total.packets, 9);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_EGRESS].total.packets, 6);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_INTERNAL].total.packets, 3);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_EXTERNAL].total.bytes, 1200);
	/* Hosts: sorted by address, IPv4 (mapped) before IPv6. */
	for (uint32_t i = 1; i < s->n_hosts; i++)
		CHECK(dpmon_addr_cmp(&host_i(s, i - 1)->addr, &host_i(s, i)->addr) < 0);
	CHECK(host(s, "10.1.0.1") && host(s, "10.1.0.1")->dir[DPMON_DIR_INGRESS].total.bytes == 300);
	CHECK(host(s, "10.1.0.1")->subnet == 0);
	CHECK(host(s, "10.1.2.5") && host(s, "10.1.2.5")->subnet == 1);
	CHECK(host(s, "10.1.2.5")->dir[DPMON_DIR_EGRESS].proto[DPMON_PROTO_TCP].packets == 3);
	CHECK(host(s, "10.1.0.17")->dir[DPMON_DIR_EGRESS].total.packets == 3);
	CHECK(host(s, "10.1.0.17")->dir[DPMON_DIR_INGRESS].total.packets == 0);
	CHECK(host(s, "10.1.0.18")->dir[DPMON_DIR_INGRESS].total.packets == 3);
	CHECK(host(s, "2001:db8:1::7") && host(s, "2001:db8:1::7")->subnet == 2);
	CHECK(host(s, "198.51.100.1") == NULL); /* not monitored */
	dpmon_snapshot_free(s);

	/* More traffic on core 1 only; the next merge shows the delta as rate
	 * over the new interval (0.5 s) and the cumulative count. */
	n = burst(p);
	dpmon_worker_burst(core[1], gen[1], p, (uint16_t)n);
	core[0]->stats.busy_cycles += hz / 4;
	s = dpmon_merge_run(m, 2 * hz + hz / 2, NULL, 0);
	CHECK(s != NULL);
	CHECK(fabs(s->workers[0].busy_ratio - 0.5) < 1e-9); /* 0.25 s of 0.5 s */
	CHECK(fabs(s->workers[0].busy_s - 0.75) < 1e-9);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 8);
	CHECK(fabs(s->subnets[0].dir[DPMON_DIR_INGRESS].total.pps - 4.0) < 1e-9);
	CHECK(fabs(s->totals[DPMON_TOTAL_EXTERNAL].proto[DPMON_PROTO_OTHER].bps - 6400.0) < 1e-9);
	CHECK(fabs(host(s, "10.1.0.1")->dir[DPMON_DIR_INGRESS].total.pps - 2.0) < 1e-9);
	dpmon_snapshot_free(s);
	/* Nothing new: rates zero, totals kept. */
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 8);
	CHECK(s->subnets[0].dir[DPMON_DIR_INGRESS].total.pps == 0.0);
	CHECK_EQ_U64(s->seq, 3);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(gen[k]);
		dpmon_core_free(core[k]);
	}
}

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

/*
 * Hosts first seen after the merger's arrays grew: their rates must come
 * from a zero previous value (the arrays are double-buffered and swap every
 * merge; meson runs this test with MALLOC_PERTURB_ so stale memory shows).
 */
static void
test_new_hosts_after_growth(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c = dpmon_core_create("grow", 8192, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	uint64_t hz = 1000000000ull, now = 0;
	struct dpmon_merge *m = dpmon_merge_create(cfg, &c, &g, &lcore, 1, 0, hz);
	struct rte_mbuf *p[32];
	uint32_t next = 0;

	REQUIRE(c != NULL && m != NULL);
	/* Merge k adds 700 new hosts, one packet each: 700, 1400, ... 4200. */
	for (int k = 1; k <= 6; k++) {
		struct dpmon_snapshot *s;
		unsigned bad = 0;

		for (uint32_t done = 0; done < 700; done += 28) {
			for (unsigned i = 0; i < 28; i++, next++)
				p[i] = v4(17, IP4(198, 51, 100, 1),
					  IP4(10, 1, 100 + next / 250, 1 + next % 250), 26);
			dpmon_worker_burst(c, g, p, 28);
		}
		now += hz;
		s = dpmon_merge_run(m, now, NULL, 0);
		REQUIRE(s != NULL);
		CHECK_EQ_U64(s->n_hosts, 700u * k);
		for (uint32_t h = 0; h < s->n_hosts; h++) {
			const struct dpmon_dir_stats *in = &host_i(s, h)->dir[DPMON_DIR_INGRESS];
			uint32_t id = (dpmon_addr_v4(&host_i(s, h)->addr) >> 8 & 0xff) - 100;
			uint32_t seq = id * 250 + (dpmon_addr_v4(&host_i(s, h)->addr) & 0xff) - 1;
			double want = seq >= 700u * (k - 1) ? 1.0 : 0.0; /* new this interval */

			if (in->total.packets != 1 || in->total.pps != want ||
			    host_i(s, h)->dir[DPMON_DIR_EGRESS].total.pps != 0.0)
				bad++;
		}
		CHECK_EQ_U64(bad, 0);
		dpmon_snapshot_free(s);
	}
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/*
 * Host counters are 32-bit low words with carries (counters.h): a merge
 * across a wrap reports the exact 64-bit value, and only the hosts touched
 * since the previous merge are re-read (the others keep their values).
 */
static void
test_counter_wrap(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c = dpmon_core_create("wrap", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	uint64_t hz = 1000000000ull;
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	struct rte_mbuf *p[4];
	const struct dpmon_snap_host *h;

	CHECK(c != NULL);
	p[0] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 86);  /* 120 B */
	p[1] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 2), 86);  /* 120 B */
	dpmon_worker_burst(c, g, p, 2);
	m = dpmon_merge_create(cfg, &c, &g, &lcore, 1, 0, hz);
	CHECK(m != NULL);
	s = dpmon_merge_run(m, hz, NULL, 0);
	CHECK(s != NULL && s->n_hosts == 2);
	dpmon_snapshot_free(s);
	/* Bring host 0's low words to the edge, as 2^32 - 1 packets and
	 * 2^32 - 50 bytes of earlier traffic would (this thread is the writer). */
	c->hosts[0].packets[DPMON_DIR_INGRESS][DPMON_PROTO_UDP] = UINT32_MAX;
	c->hosts[0].bytes[DPMON_DIR_INGRESS][DPMON_PROTO_UDP] = UINT32_MAX - 49;
	p[0] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 86);
	dpmon_worker_burst(c, g, p, 1);
	CHECK_EQ_U64(c->carry_head, 2); /* one carry for packets, one for bytes */
	CHECK_EQ_U64(c->hosts[0].packets[DPMON_DIR_INGRESS][DPMON_PROTO_UDP], 0);
	CHECK_EQ_U64(c->hosts[0].bytes[DPMON_DIR_INGRESS][DPMON_PROTO_UDP], 70);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	CHECK(s != NULL);
	h = host(s, "10.1.0.1");
	CHECK(h != NULL);
	if (h != NULL) {
		CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].packets, 1ull << 32);
		CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].bytes,
			     (1ull << 32) + 70);
	}
	h = host(s, "10.1.0.2"); /* untouched: same cumulative count, zero rate */
	CHECK(h != NULL && h->dir[DPMON_DIR_INGRESS].total.packets == 1 &&
	      h->dir[DPMON_DIR_INGRESS].total.pps == 0.0);
	dpmon_snapshot_free(s);
	/* The carries stay: one more packet is still exact. */
	p[0] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 86);
	dpmon_worker_burst(c, g, p, 1);
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	h = s ? host(s, "10.1.0.1") : NULL;
	CHECK(h != NULL);
	if (h != NULL) {
		CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].packets,
			     (1ull << 32) + 1);
		CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].bytes,
			     (1ull << 32) + 190);
		CHECK(fabs(h->dir[DPMON_DIR_INGRESS].total.pps - 1.0) < 1e-9);
	}
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
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
		CHECK_EQ_U64(g[k]->subnets[0].dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_TCP].bytes, 54);
	}
	m = dpmon_merge_create(cfg, c, g, lcores, 2, 0, 1000000000ull);
	s = dpmon_merge_run(m, 1000000000ull, NULL, 0);
	CHECK(s != NULL);
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

#define XPK(d, X) ((d).x[DPMON_XCLASS_##X].packets)
#define XBY(d, X) ((d).x[DPMON_XCLASS_##X].bytes)

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

		p[n++] = tcp4(ext, h1, 0x02);        /* SYN in to 10.1.0.1 */
		p[n++] = tcp4(ext, h1, 0x02);        /* SYN in */
		p[n++] = tcp4(h1, ext, 0x12);        /* SYN+ACK out: not a SYN */
		p[n++] = tcp4(ext, h1, 0x10);        /* ACK: not a SYN */
		p[n++] = frag4(ext, h2);             /* fragment in to 10.1.2.5 */
		p[n++] = tcp4(h2, h1, 0x02);         /* internal SYN: out of h2, into h1 */
		p[n++] = frag4(ext, IP4(203, 0, 113, 1)); /* external fragment */
		dpmon_worker_burst(c[k], g[k], p, (uint16_t)n);
	}
	for (int k = 0; k < 2; k++) {
		const struct dpmon_core *x = c[k];

		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_INGRESS], SYN), 3);
		CHECK_EQ_U64(XBY(x->xtotals[DPMON_TOTAL_INGRESS], SYN), 3 * 54);
		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_EGRESS], SYN), 1);
		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_INTERNAL], SYN), 1);
		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_EXTERNAL], SYN), 0);
		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_INGRESS], FRAG), 1);
		CHECK_EQ_U64(XBY(x->xtotals[DPMON_TOTAL_INGRESS], FRAG), 42);
		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_EXTERNAL], FRAG), 1);
		CHECK_EQ_U64(XPK(x->xtotals[DPMON_TOTAL_EGRESS], FRAG), 0);
		/* 10.1.0.1 and 10.1.2.5 have extra lines; nothing else does. */
		CHECK_EQ_U64(x->n_xhosts, 2);
		CHECK_EQ_U64(x->stats.host_ext_full, 0);
	}
	m = dpmon_merge_create(cfg, c, g, lcores, 2, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0); /* a 2 s interval */
	REQUIRE(s != NULL);
	CHECK_EQ_U64(XPK(s->totals[DPMON_TOTAL_INGRESS], SYN), 6);
	CHECK(fabs(s->totals[DPMON_TOTAL_INGRESS].x[DPMON_XCLASS_SYN].pps - 3.0) < 1e-9);
	CHECK(fabs(s->totals[DPMON_TOTAL_INGRESS].x[DPMON_XCLASS_SYN].bps - 6 * 54 * 8 / 2.0) <
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
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].x[DPMON_XCLASS_SYN].pps - 3.0) < 1e-9);
	h = host(s, "10.1.2.5");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_EGRESS], SYN), 2);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_INGRESS], FRAG), 2);
	CHECK_EQ_U64(XBY(h->dir[DPMON_DIR_INGRESS], FRAG), 84);
	/* Invariants: per direction and kind, the hosts of each subnet sum to
	 * the subnet, and the subnets to the totals (no nesting overlap here:
	 * each host is in exactly one subnet, its longest prefix). */
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		for (int x = 0; x < DPMON_XCLASS_MAX; x++) {
			uint64_t sub_pk = 0, sub_by = 0;

			for (uint32_t i = 0; i < s->n_subnets; i++) {
				uint64_t hp = 0, hb = 0;

				for (uint32_t j = 0; j < s->n_hosts; j++) {
					if (host_i(s, j)->subnet != i)
						continue;
					hp += host_i(s, j)->dir[d].x[x].packets;
					hb += host_i(s, j)->dir[d].x[x].bytes;
				}
				CHECK_EQ_U64(hp, s->subnets[i].dir[d].x[x].packets);
				CHECK_EQ_U64(hb, s->subnets[i].dir[d].x[x].bytes);
				sub_pk += s->subnets[i].dir[d].x[x].packets;
				sub_by += s->subnets[i].dir[d].x[x].bytes;
			}
			CHECK_EQ_U64(sub_pk, s->totals[d == DPMON_DIR_INGRESS ? DPMON_TOTAL_INGRESS
									       : DPMON_TOTAL_EGRESS]
						     .x[x].packets);
			CHECK_EQ_U64(sub_by, s->totals[d == DPMON_DIR_INGRESS ? DPMON_TOTAL_INGRESS
									       : DPMON_TOTAL_EGRESS]
						     .x[x].bytes);
		}
	}
	dpmon_snapshot_free(s);
	/* Nothing new: the next interval has zero rates, same cumulative values. */
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL);
	h = host(s, "10.1.0.1");
	CHECK(h != NULL && XPK(h->dir[DPMON_DIR_INGRESS], SYN) == 6 &&
	      h->dir[DPMON_DIR_INGRESS].x[DPMON_XCLASS_SYN].pps == 0.0);
	CHECK_EQ_U64(XPK(s->totals[DPMON_TOTAL_INGRESS], SYN), 6);
	CHECK(s->totals[DPMON_TOTAL_INGRESS].x[DPMON_XCLASS_SYN].pps == 0.0);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

/*
 * The extra line's counters are 32-bit low words too: a wrap there is
 * carried like the main line's; and when every extra line is taken a
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
	CHECK_EQ_U64(c->xcapacity, 8); /* capacity 8: at least 8 lines */
	p[0] = tcp4(ext, IP4(10, 1, 0, 1), 0x02);
	dpmon_worker_burst(c, g, p, 1);
	m = dpmon_merge_create(cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	dpmon_snapshot_free(s);
	xi = c->meta[0].xidx;
	REQUIRE(xi == 1);
	c->xhosts[xi - 1].packets[DPMON_DIR_INGRESS][DPMON_XCLASS_SYN] = UINT32_MAX;
	c->xhosts[xi - 1].bytes[DPMON_DIR_INGRESS][DPMON_XCLASS_SYN] = UINT32_MAX - 9;
	p[0] = tcp4(ext, IP4(10, 1, 0, 1), 0x02);
	dpmon_worker_burst(c, g, p, 1);
	CHECK_EQ_U64(c->carry_head, 2);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	h = host(s, "10.1.0.1");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(XPK(h->dir[DPMON_DIR_INGRESS], SYN), 1ull << 32);
	CHECK_EQ_U64(XBY(h->dir[DPMON_DIR_INGRESS], SYN), (1ull << 32) + 44);
	/* The main line is untouched by the extra line's wrap. */
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_TCP].packets, 2);
	CHECK(fabs(h->dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_TCP].pps - 1.0) < 1e-9);
	dpmon_snapshot_free(s);
	/* Fill the table: 8 hosts, 8 lines; 10.1.0.1 holds one already. */
	for (uint32_t i = 2; i <= 9; i++)
		p[n++] = frag4(ext, IP4(10, 1, 0, i));
	dpmon_worker_burst(c, g, p, (uint16_t)n);
	CHECK_EQ_U64(c->n_hosts, 8);
	CHECK_EQ_U64(c->stats.host_table_full, 1); /* 10.1.0.9: no entry */
	CHECK_EQ_U64(c->n_xhosts, 8);
	CHECK_EQ_U64(c->stats.host_ext_full, 0);
	c->n_xhosts = 7; /* pretend one line is left short: the next host finds none */
	c->xcapacity = 7;
	c->meta[7].xidx = 0;
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

/*
 * Fault injection: test_worker is linked with -Wl,--wrap=calloc
 * (tests/meson.build), so every calloc of libdpmon and of this file comes
 * here; setting fail_snapshot_calloc makes the next allocation of a
 * snapshot header fail, once. Under ASan, __real_calloc is its
 * interceptor, so the allocator stays the sanitizer's.
 */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int fail_snapshot_calloc;

void *
__wrap_calloc(size_t n, size_t size)
{
	if (fail_snapshot_calloc && n == 1 && size == sizeof(struct dpmon_snapshot)) {
		fail_snapshot_calloc = 0;
		return NULL;
	}
	return __real_calloc(n, size);
}

/*
 * A merge that fails after collecting its touched hosts (here: the
 * snapshot cannot be allocated) while a new host is among them: the retry,
 * with the same seq, still writes the new host's record, so no snapshot
 * lists a NULL host.
 */
static void
test_failed_merge_new_host(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c = dpmon_core_create("failnew", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	const uint64_t hz = 1000000000ull;
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	const struct dpmon_snap_host *h;
	unsigned lcore = 1;
	uint32_t nulls = 0;
	uint64_t t = 0;

	REQUIRE(c != NULL);
	m = dpmon_merge_create(cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	udp_burst(c, g, IP4(10, 1, 0, 1), 3);
	dpmon_snapshot_free(dpmon_merge_run(m, t += hz, NULL, 0));
	udp_burst(c, g, IP4(10, 1, 0, 9), 4); /* a new host */
	fail_snapshot_calloc = 1;
	CHECK(dpmon_merge_run(m, t += hz, NULL, 0) == NULL);
	CHECK(fail_snapshot_calloc == 0);
	s = dpmon_merge_run(m, t += hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK_EQ_U64(s->n_hosts, 2);
	for (uint32_t i = 0; i < s->n_hosts; i++)
		nulls += dpmon_snap_host_at(s, i) == NULL;
	CHECK_EQ_U64(nulls, 0);
	h = nulls == 0 ? host(s, "10.1.0.9") : NULL;
	CHECK(h != NULL);
	if (h != NULL) {
		CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.packets, 4);
		CHECK(dpmon_snap_host_fresh(s, find(s, "10.1.0.9")));
	}
	h = nulls == 0 ? host(s, "10.1.0.1") : NULL;
	CHECK(h != NULL && h->dir[DPMON_DIR_INGRESS].total.packets == 3);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

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
	CHECK_EQ_U64(g->flow_slot[(69 - DPMON_FLOW_SUBNETS_MAX) * DPMON_DIR_MAX + DPMON_DIR_INGRESS],
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
host_burst(struct dpmon_core *c, const struct dpmon_generation *g, uint32_t src,
	   uint32_t n_src, uint32_t dst, uint32_t first, uint32_t n)
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
flows_burst(struct dpmon_core *c, const struct dpmon_generation *g, uint32_t dst,
	    uint32_t first, uint32_t n)
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
		host_burst(c, g, IP4(198, 51, 100, 1), 1, IP4(10, 1, 6 + k / 200, 1 + k % 200),
			   0, 60);
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
	printf("host flows: 100000 distinct IPv6, estimate %.0f\n", h->dir[DPMON_DIR_INGRESS].flows);
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
	printf("host flows: 60 distinct, %u hosts, worst error %.1f %%; snapshot with %u promoted: %.2f ms\n",
	       n_full, 100 * worst, DPMON_HOST_SKETCHES, 1e3 * timing.snapshot_s);
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
	enum { N = 131 };
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

/* xorshift32: reproducible pseudo-random traffic. */
static uint32_t
rnd(uint32_t *st)
{
	uint32_t x = *st;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *st = x;
}

/* A random address: inside 10.1.0.0/16 (a quarter of those in 10.1.2.0/24),
 * inside 2001:db8:1::/48 or outside, of family @p v6. */
static void
rnd_addr(uint32_t *st, int v6, uint32_t *a4, uint8_t a6[16])
{
	uint32_t r = rnd(st);

	if (!v6) {
		*a4 = (r & 3) == 0 ? IP4(198, 51, 100, r >> 24)
		      : (r & 3) == 1 ? IP4(10, 1, 2, r >> 24)
				     : IP4(10, 1, (r >> 8) & 7, r >> 24);
		return;
	}
	memcpy(a6, (r & 1) ? IN6 : EXT6, 16);
	a6[15] = (uint8_t)(r >> 24);
	a6[14] = (uint8_t)(r >> 16) & 3;
}

/* Sum over hosts of each subnet == the subnet, sum over subnets == totals,
 * per direction, for packets and bytes of every class and kind. */
static void
check_invariants(const struct dpmon_snapshot *s)
{
	static const enum dpmon_total tot[DPMON_DIR_MAX] = {DPMON_TOTAL_INGRESS, DPMON_TOTAL_EGRESS};

	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		for (int k = 0; k < DPMON_PROTO_MAX + DPMON_XCLASS_MAX + 1; k++) {
			uint64_t spk = 0, sby = 0;
#define RATE_OF(ds) (k < DPMON_PROTO_MAX ? &(ds).proto[k]                              \
		     : k < DPMON_PROTO_MAX + DPMON_XCLASS_MAX ? &(ds).x[k - DPMON_PROTO_MAX] \
							      : &(ds).total)
			for (uint32_t i = 0; i < s->n_subnets; i++) {
				uint64_t hpk = 0, hby = 0;

				for (uint32_t j = 0; j < s->n_hosts; j++) {
					if (host_i(s, j)->subnet != i)
						continue;
					hpk += RATE_OF(host_i(s, j)->dir[d])->packets;
					hby += RATE_OF(host_i(s, j)->dir[d])->bytes;
				}
				CHECK_EQ_U64(hpk, RATE_OF(s->subnets[i].dir[d])->packets);
				CHECK_EQ_U64(hby, RATE_OF(s->subnets[i].dir[d])->bytes);
				spk += RATE_OF(s->subnets[i].dir[d])->packets;
				sby += RATE_OF(s->subnets[i].dir[d])->bytes;
			}
			CHECK_EQ_U64(spk, RATE_OF(s->totals[tot[d]])->packets);
			CHECK_EQ_U64(sby, RATE_OF(s->totals[tot[d]])->bytes);
#undef RATE_OF
		}
	}
	/* Every IP packet is in exactly one of ingress-only, egress-only,
	 * internal (in both) and external: the kinds add up to ip_stats. */
	for (int x = 0; x < DPMON_XCLASS_MAX; x++) {
		const struct dpmon_dir_stats *t = s->totals;
		uint64_t sum = t[DPMON_TOTAL_INGRESS].x[x].packets + t[DPMON_TOTAL_EGRESS].x[x].packets -
			       t[DPMON_TOTAL_INTERNAL].x[x].packets + t[DPMON_TOTAL_EXTERNAL].x[x].packets;

		CHECK_EQ_U64(sum, s->ip_stats[x == DPMON_XCLASS_FRAG ? DPMON_IPSTAT_FRAGMENTS
								     : DPMON_IPSTAT_TCP_SYN]);
	}
}

/*
 * Invariants on pseudo-random traffic over two cores and several
 * merges: IPv4 and IPv6, nested subnets, every protocol class, fragments
 * and SYNs; every host fits its table.
 */
static void
test_invariants(const struct dpmon_classifier *cls, const struct dpmon_config *cfg)
{
	struct dpmon_core *c[2] = {dpmon_core_create("inv0", 16384, SOCKET_ID_ANY),
				   dpmon_core_create("inv1", 16384, SOCKET_ID_ANY)};
	struct dpmon_generation *g[2] = {gen0(cls), gen0(cls)};
	static const uint8_t protos[5] = {6, 17, 1, 47, 6};
	unsigned lcores[2] = {1, 2};
	const uint64_t hz = 1000000000ull;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	uint32_t st = 12345;

	REQUIRE(c[0] && c[1]);
	m = dpmon_merge_create(cfg, c, g, lcores, 2, 0, hz);
	REQUIRE(m != NULL);
	for (int round = 1; round <= 4; round++) {
		for (int b = 0; b < 64; b++) {
			struct rte_mbuf *p[DPMON_MAX_BURST];

			for (int i = 0; i < DPMON_MAX_BURST; i++) {
				uint32_t r = rnd(&st), s4 = 0, d4 = 0;
				uint8_t s6[16], d6[16], proto = protos[r % 5];
				int v6 = (r >> 3) & 1;
				uint16_t frag = (r >> 4) % 8 == 0 ? 100 : 0;
				struct fb f;

				rnd_addr(&st, v6, &s4, s6);
				rnd_addr(&st, v6, &d4, d6);
				fb_eth(&f, NULL, 0, v6 ? 0x86dd : 0x0800);
				if (v6) {
					fb_ipv6(&f, proto == 47 ? 59 : proto == 1 ? 58 : proto, s6, d6,
						proto == 6 ? 20 : 8);
				} else {
					fb_ipv4(&f, 5, proto, s4, d4, frag,
						(uint16_t)(20 + (proto == 6 ? 20 : 8)));
				}
				if (proto == 6)
					fb_tcp(&f, 1000, 80, (r >> 8) & 1 ? 0x02 : 0x12);
				else
					fb_zero(&f, 8);
				fb_zero(&f, (r >> 12) & 63);
				p[i] = mbuf_of(&f);
			}
			dpmon_worker_burst(c[b & 1], g[b & 1], p, DPMON_MAX_BURST);
		}
		s = dpmon_merge_run(m, (uint64_t)round * hz, NULL, 0);
		REQUIRE(s != NULL);
		CHECK(s->workers[0].host_table_full == 0 && s->workers[1].host_table_full == 0);
		CHECK(s->workers[0].host_ext_full == 0 && s->workers[1].host_ext_full == 0);
		CHECK(s->totals[DPMON_TOTAL_INGRESS].x[DPMON_XCLASS_SYN].packets > 0);
		CHECK(s->totals[DPMON_TOTAL_INGRESS].x[DPMON_XCLASS_FRAG].packets > 0);
		check_invariants(s);
		dpmon_snapshot_free(s);
	}
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

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

/* --------------------------------------------------------------- main */

int
main(int argc, char **argv)
{
	struct dpmon_classifier cls;
	struct dpmon_config cfg;

	(void)argc;
	worker_fixture_init(argv[0], &cls, &cfg);
	test_count_and_merge(&cls, &cfg);
	test_table_full(&cls);
	test_repeat_in_burst(&cls);
	test_notes_and_decap(&cls, &cfg);
	test_counter_wrap(&cls, &cfg);
	test_classify_edges();
	test_new_hosts_after_growth(&cls, &cfg);
	test_v4mapped_not_aliased();
	test_fragments_and_syn(&cls, &cfg);
	test_kinds_wrap_and_full(&cls, &cfg);
	test_failed_merge_new_host(&cls, &cfg);
	test_flows(&cls, &cfg);
	test_host_flows(&cls, &cfg);
	test_flows_pooled_subnets();
	test_invariants(&cls, &cfg);
	test_epoch_tag_zero();
	return worker_fixture_finish("test_worker", &cls);
}
