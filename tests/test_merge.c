/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_merge.c — the merge of per-core tables into a snapshot: two cores'
 * counts merged, per-interval rates and the workers' load, host counters
 * across a 32-bit wrap, hosts first seen after the merger's arrays grew,
 * a failed snapshot allocation with a new host pending, and the sums of
 * hosts, subnets and totals on pseudo-random traffic. Linked with
 * -Wl,--wrap=calloc (tests/meson.build) for the allocation failure.
 */
#include <math.h>

#include "worker_fixture.h"

/* ------------------------------------------------------------------------
 * Two cores merged.
 * --------------------------------------------------------------------- */

/* The reference burst. Frame lengths: 14 + 20 + payload. */
static unsigned
burst(struct rte_mbuf **p)
{
	unsigned n = 0;
	struct fb f;

	p[n++] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 66); /* 100 B ingress s0 udp */
	p[n++] = v4(6, IP4(10, 1, 2, 5), IP4(198, 51, 100, 1), 166); /* 200 B egress s1 tcp */
	p[n++] = v4(1, IP4(10, 1, 0, 17), IP4(10, 1, 0, 18), 266);   /* 300 B internal s0 icmp */
	p[n++] = v4(47, IP4(198, 51, 100, 1), IP4(203, 0, 113, 1), 366); /* 400 B external other */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, EXT6, IN6, 446);
	fb_udp(&f, 1, 2, 438); /* 500 B ingress s2 udp */
	p[n++] = mbuf_of(&f);
	fb_eth(&f, NULL, 0, 0x0806);
	fb_zero(&f, 28);
	p[n++] = mbuf_of(&f); /* ARP: non_ip */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 0, 48);
	f.b[14] = 0x42;
	p[n++] = mbuf_of(&f); /* IHL 2 */
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

/* The reference burst twice on core 0 and once on core 1, each count checked. */
static void
count_reference(struct dpmon_core *const *core, struct dpmon_generation *const *gen)
{
	struct rte_mbuf *p[16];
	unsigned n;

	for (uint64_t k = 1; k <= 2; k++) {
		n = burst(p);
		dpmon_worker_burst(core[0], gen[0], p, (uint16_t)n);
		check_core(core[0], gen[0], k);
	}
	n = burst(p);
	dpmon_worker_burst(core[1], gen[1], p, (uint16_t)n);
	check_core(core[1], gen[1], 1);
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
	count_reference(core, gen);
	CHECK_EQ_U64(rte_mempool_in_use_count(mp), 0); /* every mbuf freed */

	/* Load as the worker loop would count it (the burst calls above do not). */
	core[0]->stats.polls = 10;
	core[0]->stats.busy_cycles = hz / 2;
	m = dpmon_merge_create(cfg, core, gen, lcores, 2, 0, hz);
	CHECK(m != NULL);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0); /* a 2-second interval */
	REQUIRE(s != NULL);
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
	CHECK(host(s, "10.1.0.1") &&
	      host(s, "10.1.0.1")->dir[DPMON_DIR_INGRESS].total.bytes == 300);
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
	REQUIRE(s != NULL);
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

/*
 * Ignored sources (198.51.100.0/24, 2001:db8:ffff::/48): the reference
 * burst's packets from them still count in every counter (check_core's
 * values are those without the list), and the snapshot also lists them
 * per destination host and subnet, ingress, for detection to subtract.
 */
static void
test_ignored_sources(const struct dpmon_config *cfg)
{
	struct dpmon_prefix ign[2];
	struct dpmon_classifier ci;
	struct dpmon_core *core[2];
	struct dpmon_generation *gen[2];
	unsigned lcores[2] = {1, 2};
	uint64_t hz = 1000000000ull;
	const struct dpmon_snap_ignored *a, *b;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	double alpha;

	REQUIRE(dpmon_prefix_parse("198.51.100.0/24", &ign[0], NULL) == 0);
	REQUIRE(dpmon_prefix_parse("2001:db8:ffff::/48", &ign[1], NULL) == 0);
	REQUIRE(dpmon_classifier_create_ignoring(&ci, "ign", cfg->subnets, cfg->n_subnets, ign, 2,
						 SOCKET_ID_ANY) == 0);
	gen[0] = gen0(&ci);
	gen[1] = gen0(&ci);
	REQUIRE(gen[0]->ign != NULL && gen[1]->ign != NULL);
	core[0] = dpmon_core_create("i0", 1024, SOCKET_ID_ANY);
	core[1] = dpmon_core_create("i1", 1024, SOCKET_ID_ANY);
	REQUIRE(core[0] && core[1]);
	count_reference(core, gen);
	/* 10.1.0.1 and 2001:db8:1::7 received from ignored sources. */
	CHECK_EQ_U64(gen[0]->ign->n_used, 2);
	CHECK_EQ_U64(gen[1]->ign->n_used, 2);
	CHECK_EQ_U64(core[0]->stats.ignored_full, 0);

	m = dpmon_merge_create(cfg, core, gen, lcores, 2, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	/* Every counter as without the list. */
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 6);
	CHECK_EQ_U64(s->subnets[2].dir[DPMON_DIR_INGRESS].total.bytes, 1500);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_INGRESS].total.packets, 9);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_EXTERNAL].total.bytes, 1200);
	CHECK_EQ_U64(s->n_hosts, 5);
	CHECK(host(s, "10.1.0.1")->dir[DPMON_DIR_INGRESS].total.bytes == 300);
	/* The ignored ones, sorted by address. */
	REQUIRE(s->n_ignored == 2);
	a = &s->ignored[0];
	b = &s->ignored[1];
	CHECK(dpmon_addr_cmp(&a->addr, &host(s, "10.1.0.1")->addr) == 0);
	CHECK(dpmon_addr_cmp(&b->addr, &host(s, "2001:db8:1::7")->addr) == 0);
	CHECK(a->subnet == 0 && b->subnet == 2);
	CHECK_EQ_U64(a->in.total.packets, 3);
	CHECK_EQ_U64(a->in.proto[DPMON_PROTO_UDP].bytes, 300);
	CHECK_EQ_U64(b->in.proto[DPMON_PROTO_UDP].bytes, 1500);
	CHECK(fabs(a->in.total.pps - 1.5) < 1e-9 && fabs(a->in.total.bps - 1200.0) < 1e-9);
	alpha = dpmon_ewma_alpha(2.0, cfg->average_time_constant_ms / 1000.0);
	CHECK(fabs(a->in.avg_pps - alpha * 1.5) < 1e-9);
	CHECK(fabs(a->in.avg_proto_pps[DPMON_PROTO_UDP] - alpha * 1.5) < 1e-9);
	/* Its whole ingress is ignored: the averages match the host's own. */
	CHECK(fabs(host(s, "10.1.0.1")->dir[DPMON_DIR_INGRESS].avg_pps - a->in.avg_pps) < 1e-9);
	CHECK(fabs(host(s, "10.1.0.1")->dir[DPMON_DIR_INGRESS].avg_bps - a->in.avg_bps) < 1e-6);
	/* Subnets: 10.1.0.0/16 and 2001:db8:1::/48 ingress; 10.1.2.0/24 none. */
	REQUIRE(s->ignored_subnets != NULL);
	CHECK_EQ_U64(s->ignored_subnets[0].total.packets, 3);
	CHECK_EQ_U64(s->ignored_subnets[0].total.bytes, 300);
	CHECK_EQ_U64(s->ignored_subnets[1].total.packets, 0);
	CHECK_EQ_U64(s->ignored_subnets[2].total.bytes, 1500);
	CHECK(fabs(s->ignored_subnets[2].avg_pps - alpha * 1.5) < 1e-9);
	CHECK_EQ_U64(s->ignored_full, 0);
	dpmon_snapshot_free(s);
	/* No new packet: the rates are zero, the averages decay. */
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL && s->n_ignored == 2);
	CHECK(s->ignored[0].in.total.pps == 0.0);
	CHECK_EQ_U64(s->ignored[0].in.total.packets, 3);
	CHECK(fabs(s->ignored[0].in.avg_pps -
		   alpha * 1.5 *
			   (1 - dpmon_ewma_alpha(1.0, cfg->average_time_constant_ms / 1000.0))) <
	      1e-9);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(gen[k]);
		dpmon_core_free(core[k]);
	}
	dpmon_classifier_free(&ci);
}

/* A full side table (every key on one home slot) is counted by its caller. */
static void
test_ignored_table_full(void)
{
	struct dpmon_ignored_table *t = calloc(1, sizeof(*t));
	struct dpmon_addr k;

	REQUIRE(t != NULL);
	for (uint32_t i = 0; i < DPMON_IGNORED_PROBE; i++) {
		dpmon_addr_from_v4(&k, IP4(10, 1, 0, 1) + i);
		CHECK(dpmon_ignored_add(t, &k, 7, 0, DPMON_PROTO_UDP, 0, 100) == 0);
	}
	dpmon_addr_from_v4(&k, IP4(10, 1, 0, 1)); /* known: still found */
	CHECK(dpmon_ignored_add(t, &k, 7, 0, DPMON_PROTO_TCP, 1u << DPMON_FLAG_SYN, 60) == 0);
	CHECK_EQ_U64(t->slot[7].in.proto[DPMON_PROTO_TCP].bytes, 60);
	CHECK_EQ_U64(t->slot[7].flags.flag[DPMON_FLAG_SYN].packets, 1);
	dpmon_addr_from_v4(&k, IP4(10, 1, 0, 200)); /* new, no slot within the probe */
	CHECK(dpmon_ignored_add(t, &k, 7, 0, DPMON_PROTO_UDP, 0, 100) == -ENOSPC);
	CHECK_EQ_U64(dpmon_ignored_used(t), DPMON_IGNORED_PROBE);
	free(t);
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
	p[0] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 1), 86); /* 120 B */
	p[1] = v4(17, IP4(198, 51, 100, 1), IP4(10, 1, 0, 2), 86); /* 120 B */
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

/* ------------------------------------------------------------------------
 * A failed merge.
 * --------------------------------------------------------------------- */

/*
 * Fault injection: test_merge is linked with -Wl,--wrap=calloc
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

/* ------------------------------------------------------------------------
 * Invariants.
 * --------------------------------------------------------------------- */

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
		*a4 = (r & 3) == 0   ? IP4(198, 51, 100, r >> 24)
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
	static const enum dpmon_total tot[DPMON_DIR_MAX] = {DPMON_TOTAL_INGRESS,
							    DPMON_TOTAL_EGRESS};

	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		for (int k = 0; k < DPMON_PROTO_MAX + DPMON_FLAG_MAX + 1; k++) {
			uint64_t spk = 0, sby = 0;
#define RATE_OF(ds)                                                               \
	(k < DPMON_PROTO_MAX                    ? &(ds).proto[k]                  \
	 : k < DPMON_PROTO_MAX + DPMON_FLAG_MAX ? &(ds).flag[k - DPMON_PROTO_MAX] \
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
	for (int f = 0; f < DPMON_FLAG_MAX; f++) {
		const struct dpmon_dir_stats *t = s->totals;
		uint64_t sum = t[DPMON_TOTAL_INGRESS].flag[f].packets +
			       t[DPMON_TOTAL_EGRESS].flag[f].packets -
			       t[DPMON_TOTAL_INTERNAL].flag[f].packets +
			       t[DPMON_TOTAL_EXTERNAL].flag[f].packets;

		CHECK_EQ_U64(sum, s->ip_stats[f == DPMON_FLAG_FRAG ? DPMON_IPSTAT_FRAGMENTS
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
					fb_ipv6(&f,
						proto == 47  ? 59
						: proto == 1 ? 58
							     : proto,
						s6, d6, proto == 6 ? 20 : 8);
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
		CHECK(s->totals[DPMON_TOTAL_INGRESS].flag[DPMON_FLAG_SYN].packets > 0);
		CHECK(s->totals[DPMON_TOTAL_INGRESS].flag[DPMON_FLAG_FRAG].packets > 0);
		check_invariants(s);
		dpmon_snapshot_free(s);
	}
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

/*
 * A host the merge visits without a packet since the previous merge (its
 * entry stamped by a burst of the previous interval) keeps its record: the
 * next snapshot lists the same record, read as stale (rate 0, flows 0, or
 * -1 without flow sketches; counts unchanged); a new packet writes a new one.
 */
static void
test_unmoved_keeps_record(const struct dpmon_classifier *cls, const struct dpmon_config *base,
			  bool flow_sketches)
{
	struct dpmon_config cfg = *base;
	struct dpmon_core *core = dpmon_core_create("t0", 1024, SOCKET_ID_ANY);
	struct dpmon_generation *gen = gen0(cls);
	unsigned lcore = 1;
	uint64_t hz = 1000000000ull;
	struct dpmon_snapshot *s1, *s2, *s3;
	const struct dpmon_snap_host *h1, *h2, *h3;
	const struct dpmon_dir_stats *d;
	struct dpmon_dir_stats tmp;
	struct dpmon_merge_timing t;
	struct rte_mbuf *p[16];
	struct dpmon_merge *m;
	unsigned n;

	cfg.flow_sketches = flow_sketches;
	REQUIRE(core != NULL && gen != NULL);
	core->flow_sketches = flow_sketches;
	m = dpmon_merge_create(&cfg, &core, &gen, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	n = burst(p);
	dpmon_worker_burst(core, gen, p, (uint16_t)n);
	s1 = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s1 != NULL);
	h1 = find(s1, "10.1.0.1"); /* the record as stored */
	REQUIRE(h1 != NULL);
	CHECK(fabs(h1->dir[DPMON_DIR_INGRESS].total.pps - 1.0) < 1e-9);
	/* No packet: the entries stamped in the first interval are visited. */
	s2 = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s2 != NULL);
	dpmon_merge_last_timing(m, &t);
	CHECK_EQ_U64(t.touched, 5);
	CHECK_EQ_U64(t.written, 0);
	h2 = find(s2, "10.1.0.1");
	CHECK(h2 == h1);
	d = dpmon_snap_host_dir(s2, h2, DPMON_DIR_INGRESS, &tmp);
	CHECK_EQ_U64(d->total.packets, 1);
	CHECK_EQ_U64(d->total.bytes, 100);
	CHECK(d->total.pps == 0.0);
	CHECK(d->flows == (flow_sketches ? 0 : -1));
	CHECK(d->peers == (flow_sketches ? 0 : -1));
	CHECK(d->avg_pps > 0 && d->avg_pps < h1->dir[DPMON_DIR_INGRESS].avg_pps);
	/* A packet again: a new record. */
	n = burst(p);
	dpmon_worker_burst(core, gen, p, (uint16_t)n);
	s3 = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s3 != NULL);
	h3 = find(s3, "10.1.0.1");
	REQUIRE(h3 != NULL);
	CHECK(h3 != h1);
	CHECK_EQ_U64(h3->seq, s3->seq);
	CHECK_EQ_U64(h3->dir[DPMON_DIR_INGRESS].total.packets, 2);
	CHECK(fabs(h3->dir[DPMON_DIR_INGRESS].total.pps - 1.0) < 1e-9);
	CHECK(h3->dir[DPMON_DIR_INGRESS].flows == (flow_sketches ? 1 : -1));
	dpmon_snapshot_free(s1);
	dpmon_snapshot_free(s2);
	dpmon_snapshot_free(s3);
	dpmon_merge_free(m);
	dpmon_generation_free(gen);
	dpmon_core_free(core);
}

/* ------------------------------------------------------------------------
 * Main.
 * --------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	struct dpmon_classifier cls;
	struct dpmon_config cfg;

	(void)argc;
	worker_fixture_init(argv[0], &cls, &cfg);
	test_count_and_merge(&cls, &cfg);
	test_ignored_sources(&cfg);
	test_ignored_table_full();
	test_counter_wrap(&cls, &cfg);
	test_new_hosts_after_growth(&cls, &cfg);
	test_failed_merge_new_host(&cls, &cfg);
	test_invariants(&cls, &cfg);
	test_unmoved_keeps_record(&cls, &cfg, true);
	test_unmoved_keeps_record(&cls, &cfg, false);
	return worker_fixture_finish("test_merge", &cls);
}
