/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reload.c — a configuration reload through the merger
 * (dpmon_merge_reconfigure, worker generations): averages across a
 * changed time constant, subnets kept, removed, added and re-added with
 * their counts, rates, history and flows, and a reload to more subnets
 * than the fixed flow sketches.
 */
#include <math.h>

#include "rates.h"
#include "worker_fixture.h"

/* ------------------------------------------------------------------------
 * Reloads.
 * --------------------------------------------------------------------- */

/* @p n UDP packets of 100 B from outside to @p dst, counted into generation @p g. */
static void
gen_burst(struct dpmon_core *c, const struct dpmon_generation *g, uint32_t dst, unsigned n)
{
	struct rte_mbuf *p[DPMON_MAX_BURST];

	REQUIRE(n <= DPMON_MAX_BURST);
	for (unsigned i = 0; i < n; i++)
		p[i] = v4(17, IP4(198, 51, 100, 1), dst, 66);
	dpmon_worker_count_generation(c, g, p, (uint16_t)n, 0);
	rte_pktmbuf_free_bulk(p, n);
}

/*
 * A reload that changes average_time_constant_ms: a host idle since
 * before it reads, in every later snapshot, the averages of the chain of
 * EWMA steps in which each merge used its own time constant (1 s up to the
 * reload, then 3600 s), to 1e-9 relative; and when it is touched again its
 * averages continue from that chain.
 */
static void
test_reload_time_constant(const struct dpmon_classifier *cls, const struct dpmon_config *cfg0)
{
	const uint32_t map[3] = {0, 1, 2};
	const uint32_t quiet = IP4(10, 1, 0, 1), busy = IP4(10, 1, 0, 2);
	const uint64_t hz = 1000000000ull;
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("retau", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls), *g2 = NULL;
	const struct dpmon_dir_stats *d;
	struct dpmon_dir_stats tmp;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	unsigned lcore = 1;
	double pps = 0, bps = 0;

	REQUIRE(c != NULL);
	REQUIRE(cls->n_subnets == 3);
	cfg.average_time_constant_ms = 1000;
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	for (int i = 1; i <= 40; i++) {
		struct dpmon_generation *cur = g2 != NULL ? g2 : g;
		unsigned n = i == 1 ? 7 : i == 36 ? 3 : 0;
		double a;

		if (i == 32) { /* the reload, as lib/run/reload.c makes it */
			cfg.average_time_constant_ms = 3600000;
			g2 = gen0(cls);
			REQUIRE(dpmon_merge_reconfigure(m, cls, &g2, 3, map) == 0);
			cur = g2;
		}
		a = dpmon_ewma_alpha(1.0, cfg.average_time_constant_ms / 1000.0);
		if (n > 0)
			udp_burst(c, cur, quiet, n);
		udp_burst(c, cur, busy, 1); /* no merge is empty */
		s = dpmon_merge_run(m, (uint64_t)i * hz, NULL, 0);
		REQUIRE(s != NULL);
		pps = dpmon_ewma_step(pps, (double)n, a);
		bps = dpmon_ewma_step(bps, 800.0 * n, a);
		REQUIRE(find(s, "10.1.0.1") != NULL);
		d = dpmon_snap_host_dir(s, find(s, "10.1.0.1"), DPMON_DIR_INGRESS, &tmp);
		NEAR_REL(d->avg_pps, pps, 1e-9);
		NEAR_REL(d->avg_bps, bps, 1e-9);
		NEAR_REL(d->avg_proto_pps[DPMON_PROTO_UDP], pps, 1e-9);
		NEAR_REL(d->avg_proto_bps[DPMON_PROTO_UDP], bps, 1e-9);
		CHECK_EQ_U64(d->total.packets, 7 + (i >= 36 ? 3 : 0));
		dpmon_snapshot_free(s);
	}
	CHECK(pps > 2.99 / 3600 && pps < 3.0 / 3600);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_generation_free(g2);
	dpmon_core_free(c);
}

/*
 * A configuration reload through the merger (merge.h): subnets matched by
 * prefix keep their cumulative counts, rates, averages and history across
 * the swap (packets counted in the old generation after the last merge
 * included), a removed subnet and its hosts leave the snapshot, a new one
 * starts at zero, the interval's flows include the old generation's
 * sketch, and a host re-monitored later comes back with its counts.
 */
static void
test_reconfigure(const struct dpmon_config *cfg0)
{
	static struct dpmon_subnet_conf sub1[3], sub2[2], sub3[3];
	const uint32_t a = IP4(10, 1, 0, 1), b = IP4(10, 1, 2, 5), b2 = IP4(10, 1, 2, 6);
	const uint32_t n9 = IP4(10, 9, 0, 1);
	const uint32_t map2[2] = {1, UINT32_MAX}, map3[3] = {0, 1, UINT32_MAX};
	const uint64_t hz = 1000000000ull;
	struct dpmon_classifier cls1, cls2, cls3;
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("reload", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g1, *g2, *g3;
	const struct dpmon_snap_host *h;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	unsigned lcore = 1;
	double alpha = 1 - exp(-0.2), avg;

	REQUIRE(c != NULL);
	dpmon_prefix_parse("10.1.0.0/16", &sub1[0].prefix, NULL);
	dpmon_prefix_parse("10.1.2.0/24", &sub1[1].prefix, NULL);
	dpmon_prefix_parse("2001:db8:1::/48", &sub1[2].prefix, NULL);
	sub2[0] = sub1[1]; /* kept, moves from index 1 to 0 */
	dpmon_prefix_parse("10.9.0.0/16", &sub2[1].prefix, NULL);
	sub3[0] = sub2[0];
	sub3[1] = sub2[1];
	sub3[2] = sub1[0]; /* back again, as a new subnet */
	cfg.subnets = sub1;
	cfg.n_subnets = 3;
	cfg.average_time_constant_ms = 5000;
	REQUIRE(dpmon_classifier_create(&cls1, "rl1", sub1, 3, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_classifier_create(&cls2, "rl2", sub2, 2, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_classifier_create(&cls3, "rl3", sub3, 3, SOCKET_ID_ANY) == 0);
	g1 = dpmon_generation_create(&cls1, 3, SOCKET_ID_ANY); /* generation 0 */
	g2 = dpmon_generation_create(&cls2, 2, SOCKET_ID_ANY);
	g3 = dpmon_generation_create(&cls3, 3, SOCKET_ID_ANY);
	REQUIRE(g1 != NULL && g2 != NULL && g3 != NULL);
	CHECK(g1->n_flow_subnets == 3 && g2->n_flow_subnets == 2);
	m = dpmon_merge_create(&cfg, &c, &g1, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);

	/* Interval 1, first configuration. */
	gen_burst(c, g1, a, 5);
	gen_burst(c, g1, b, 7);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK_EQ_U64(s->subnets[1].dir[DPMON_DIR_INGRESS].total.packets, 7);
	avg = alpha * 7;
	dpmon_snapshot_free(s);

	/* Interval 2: 3 packets into the old generation, then the swap
	 * (the workers are past it), then traffic into the new one. */
	gen_burst(c, g1, b, 3);
	cfg.subnets = sub2;
	cfg.n_subnets = 2;
	REQUIRE(dpmon_merge_reconfigure(m, &cls2, &g2, 2, map2) == 0);
	gen_burst(c, g2, b2, 4);
	gen_burst(c, g2, n9, 6);
	gen_burst(c, g2, a, 2); /* no longer monitored: external */
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	REQUIRE(s->n_subnets == 2);
	CHECK(dpmon_prefix_equal(&s->subnets[0].prefix, &sub1[1].prefix));
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 7 + 3 + 4);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].proto[DPMON_PROTO_UDP].bytes, 1400);
	CHECK(s->subnets[0].dir[DPMON_DIR_INGRESS].total.pps == 7.0); /* no spike, no dip */
	avg = dpmon_ewma_step(avg, 7.0, alpha);
	NEAR(s->subnets[0].dir[DPMON_DIR_INGRESS].avg_pps, avg, 1e-12);
	/* Two flows in the interval: one per generation. */
	NEAR(s->subnets[0].dir[DPMON_DIR_INGRESS].flows, 2.0, 0.01);
	CHECK_EQ_U64(s->subnets[1].dir[DPMON_DIR_INGRESS].total.packets, 6);
	CHECK(s->subnets[1].dir[DPMON_DIR_INGRESS].total.pps == 6.0);
	NEAR(s->subnets[1].dir[DPMON_DIR_INGRESS].flows, 1.0, 0.01);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_INGRESS].total.packets, 5 + 7 + 3 + 4 + 6);
	CHECK_EQ_U64(s->totals[DPMON_TOTAL_EXTERNAL].total.packets, 2);
	CHECK(s->n_hosts == 3); /* 10.1.0.1 left with its subnet */
	CHECK(host(s, "10.1.0.1") == NULL);
	h = host(s, "10.1.2.5");
	CHECK(h != NULL && h->subnet == 0 && h->dir[DPMON_DIR_INGRESS].total.packets == 10);
	h = host(s, "10.9.0.1");
	CHECK(h != NULL && h->subnet == 1 && h->dir[DPMON_DIR_INGRESS].total.packets == 6);
	/* The history follows the prefixes: interval 1 of 10.1.2.0/24 at index 0. */
	REQUIRE(s->n_history == 2 && s->history[0]->n_subnets == 2);
	CHECK(s->history[0]->sub[0 * DPMON_DIR_MAX + DPMON_DIR_INGRESS].pps == 7.0);
	CHECK(s->history[0]->sub[1 * DPMON_DIR_MAX + DPMON_DIR_INGRESS].pps == 0.0);
	dpmon_snapshot_free(s);
	dpmon_generation_free(g1); /* served its last merge */

	/* 10.1.0.0/16 monitored again: a new subnet (zero), its host returns
	 * with what it had counted while monitored. */
	cfg.subnets = sub3;
	cfg.n_subnets = 3;
	REQUIRE(dpmon_merge_reconfigure(m, &cls3, &g3, 3, map3) == 0);
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL);
	REQUIRE(s->n_subnets == 3);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 14);
	CHECK(s->subnets[0].dir[DPMON_DIR_INGRESS].total.pps == 0.0);
	CHECK_EQ_U64(s->subnets[1].dir[DPMON_DIR_INGRESS].total.packets, 6);
	CHECK_EQ_U64(s->subnets[2].dir[DPMON_DIR_INGRESS].total.packets, 0);
	CHECK(s->n_hosts == 4);
	h = host(s, "10.1.0.1");
	CHECK(h != NULL && h->subnet == 2 && h->dir[DPMON_DIR_INGRESS].total.packets == 5);
	dpmon_snapshot_free(s);
	gen_burst(c, g3, a, 8);
	s = dpmon_merge_run(m, 4 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK_EQ_U64(s->subnets[2].dir[DPMON_DIR_INGRESS].total.packets, 8);
	CHECK(s->subnets[2].dir[DPMON_DIR_INGRESS].total.pps == 8.0);
	h = host(s, "10.1.0.1");
	CHECK(h != NULL && h->dir[DPMON_DIR_INGRESS].total.packets == 13);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g2);
	dpmon_generation_free(g3);
	dpmon_core_free(c);
	dpmon_classifier_free(&cls1);
	dpmon_classifier_free(&cls2);
	dpmon_classifier_free(&cls3);
}

/*
 * A reload from 2 subnets to 70: the subnets past the 64th take their flow
 * sketches from the core's pool through the new generation's slots, and
 * count their packets and flows exactly like the fixed ones.
 */
static void
test_reconfigure_pooled(const struct dpmon_config *cfg0)
{
	static struct dpmon_subnet_conf sub1[2], sub2[70];
	uint32_t map[70];
	const uint64_t hz = 1000000000ull;
	struct dpmon_classifier cls1, cls2;
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("reloadp", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g1, *g2;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	unsigned lcore = 1;
	char text[32];

	REQUIRE(c != NULL);
	for (uint32_t i = 0; i < 70; i++) {
		snprintf(text, sizeof(text), "10.2.%u.0/24", i);
		REQUIRE(dpmon_prefix_parse(text, &sub2[i].prefix, NULL) == 0);
		map[i] = i < 2 ? i : UINT32_MAX;
	}
	sub1[0] = sub2[0];
	sub1[1] = sub2[1];
	cfg.subnets = sub1;
	cfg.n_subnets = 2;
	REQUIRE(dpmon_classifier_create(&cls1, "rp1", sub1, 2, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_classifier_create(&cls2, "rp2", sub2, 70, SOCKET_ID_ANY) == 0);
	g1 = dpmon_generation_create(&cls1, 2, SOCKET_ID_ANY); /* generation 0 */
	g2 = dpmon_generation_create(&cls2, 70, SOCKET_ID_ANY);
	REQUIRE(g1 != NULL && g2 != NULL);
	m = dpmon_merge_create(&cfg, &c, &g1, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	dpmon_snapshot_free(s);
	cfg.subnets = sub2;
	cfg.n_subnets = 70;
	REQUIRE(dpmon_merge_reconfigure(m, &cls2, &g2, 70, map) == 0);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0); /* the old generation's last merge */
	REQUIRE(s != NULL);
	dpmon_snapshot_free(s);
	/* 300 distinct flows to a host of the 70th subnet, 5 to the 1st. */
	for (uint32_t i = 0; i < 300; i += 30) {
		struct rte_mbuf *p[30];

		for (uint32_t k = 0; k < 30; k++) {
			struct fb f;

			fb_eth(&f, NULL, 0, 0x0800);
			fb_ipv4(&f, 5, 17, IP4(198, 51, 100, 1), IP4(10, 2, 69, 7), 0, 28);
			fb_udp(&f, (uint16_t)(1000 + i + k), 53, 0);
			p[k] = mbuf_of(&f);
		}
		dpmon_worker_count_generation(c, g2, p, 30, 0);
		rte_pktmbuf_free_bulk(p, 30);
	}
	gen_burst(c, g2, IP4(10, 2, 0, 9), 5);
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL && s->n_subnets == 70);
	CHECK_EQ_U64(s->subnets[69].dir[DPMON_DIR_INGRESS].total.packets, 300);
	NEAR(s->subnets[69].dir[DPMON_DIR_INGRESS].flows, 300.0, 300 * 0.02);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 5);
	NEAR(s->subnets[0].dir[DPMON_DIR_INGRESS].flows, 1.0, 0.01);
	CHECK(s->subnets[68].dir[DPMON_DIR_INGRESS].flows == 0.0); /* no packet: no slot */
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g1);
	dpmon_generation_free(g2);
	dpmon_core_free(c);
	dpmon_classifier_free(&cls1);
	dpmon_classifier_free(&cls2);
}

/* ------------------------------------------------------------------------
 * Main.
 * --------------------------------------------------------------------- */

/* Host @p text of @p s listed with host prefix length @p len and @p pkts ingress packets. */
static void
check_host(const struct dpmon_snapshot *s, const char *text, unsigned len, uint64_t pkts, int line)
{
	const struct dpmon_snap_host *h = host(s, text);

	test_checks++;
	if (h == NULL || dpmon_snap_host_len(s, h) != len ||
	    h->dir[DPMON_DIR_INGRESS].total.packets != pkts) {
		test_failures++;
		fprintf(stderr, "%s:%d: host %s: %s, /%u, %llu packets; expected /%u, %llu\n",
			__FILE__, line, text, h ? "listed" : "not listed",
			h ? dpmon_snap_host_len(s, h) : 0,
			h ? (unsigned long long)h->dir[DPMON_DIR_INGRESS].total.packets : 0ull, len,
			(unsigned long long)pkts);
	}
}
#define CHECK_HOST(s, text, len, pkts) check_host((s), (text), (len), (pkts), __LINE__)

/*
 * A reload that changes a subnet's host_prefix_len: the hosts counted at
 * the old length leave the snapshots (their packets stay in the subnet's
 * counts) and those of the new length start; a host whose address is a
 * prefix of the new, shorter length becomes that prefix with its counts;
 * hosts mapped during the reload (between dpmon_merge_map_hosts and
 * dpmon_merge_reconfigure) are placed by their address; a reload back to
 * the old length lists the old hosts again, with their counts.
 */
static void
test_reconfigure_host_prefix_len(const struct dpmon_config *cfg0)
{
	static struct dpmon_subnet_conf whole[1], by24[1];
	const uint32_t map[1] = {0};
	const uint64_t hz = 1000000000ull;
	struct dpmon_classifier cls1, cls2, cls3;
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("rlhost", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g1, *g2, *g3;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	unsigned lcore = 1;

	REQUIRE(c != NULL);
	dpmon_prefix_parse("10.1.0.0/16", &whole[0].prefix, NULL);
	by24[0] = whole[0];
	by24[0].host_prefix_len = 24;
	cfg.subnets = whole;
	cfg.n_subnets = 1;
	REQUIRE(dpmon_classifier_create(&cls1, "rh1", whole, 1, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_classifier_create(&cls2, "rh2", by24, 1, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_classifier_create(&cls3, "rh3", whole, 1, SOCKET_ID_ANY) == 0);
	g1 = dpmon_generation_create(&cls1, 1, SOCKET_ID_ANY);
	g2 = dpmon_generation_create(&cls2, 1, SOCKET_ID_ANY);
	g3 = dpmon_generation_create(&cls3, 1, SOCKET_ID_ANY);
	REQUIRE(g1 != NULL && g2 != NULL && g3 != NULL);
	REQUIRE(dpmon_generation_host_prefixes(g1, whole, 1, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_generation_host_prefixes(g2, by24, 1, SOCKET_ID_ANY) == 0);
	REQUIRE(dpmon_generation_host_prefixes(g3, whole, 1, SOCKET_ID_ANY) == 0);
	m = dpmon_merge_create(&cfg, &c, &g1, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);

	/* Whole addresses. */
	gen_burst(c, g1, IP4(10, 1, 2, 5), 5);
	gen_burst(c, g1, IP4(10, 1, 2, 0), 2);
	gen_burst(c, g1, IP4(10, 1, 3, 9), 1);
	s = dpmon_merge_run(m, hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(s->n_hosts == 3);
	CHECK_HOST(s, "10.1.2.5", 32, 5);
	dpmon_snapshot_free(s);

	/* To /24: the hosts so far are mapped, then, during the reload, an
	 * old-generation packet (a whole address) and a new one (a /24). */
	CHECK(dpmon_merge_map_hosts(m) == 0);
	gen_burst(c, g1, IP4(10, 1, 5, 7), 1);
	gen_burst(c, g2, IP4(10, 1, 4, 1), 1);
	cfg.subnets = by24;
	REQUIRE(dpmon_merge_reconfigure(m, &cls2, &g2, 1, map) == 0);
	gen_burst(c, g2, IP4(10, 1, 2, 77), 4); /* 10.1.2.0/24: the old 10.1.2.0's entry */
	gen_burst(c, g2, IP4(10, 1, 3, 1), 3);
	s = dpmon_merge_run(m, 2 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(s->n_hosts == 3);
	CHECK_HOST(s, "10.1.2.0", 24, 2 + 4);
	CHECK_HOST(s, "10.1.3.0", 24, 3);
	CHECK_HOST(s, "10.1.4.0", 24, 1);
	CHECK(host(s, "10.1.2.5") == NULL && host(s, "10.1.3.9") == NULL);
	CHECK(host(s, "10.1.5.7") == NULL);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 5 + 2 + 1 + 1 + 1 + 4 + 3);
	dpmon_snapshot_free(s);
	dpmon_generation_free(g1);

	/* Back to whole addresses: the old hosts return; the /24 prefixes
	 * leave (10.1.2.0 holds a whole /24's counts), and a host of the new
	 * generation mapped during the reload is a whole address. */
	CHECK(dpmon_merge_map_hosts(m) == 0);
	gen_burst(c, g3, IP4(10, 1, 6, 6), 2);
	cfg.subnets = whole;
	REQUIRE(dpmon_merge_reconfigure(m, &cls3, &g3, 1, map) == 0);
	gen_burst(c, g3, IP4(10, 1, 2, 5), 1);
	s = dpmon_merge_run(m, 3 * hz, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(s->n_hosts == 4);
	CHECK_HOST(s, "10.1.2.5", 32, 5 + 1);
	CHECK_HOST(s, "10.1.3.9", 32, 1);
	CHECK_HOST(s, "10.1.5.7", 32, 1);
	CHECK_HOST(s, "10.1.6.6", 32, 2);
	CHECK(host(s, "10.1.2.0") == NULL && host(s, "10.1.3.0") == NULL);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g2);
	dpmon_generation_free(g3);
	dpmon_core_free(c);
	dpmon_classifier_free(&cls1);
	dpmon_classifier_free(&cls2);
	dpmon_classifier_free(&cls3);
}

int
main(int argc, char **argv)
{
	struct dpmon_classifier cls;
	struct dpmon_config cfg;

	(void)argc;
	worker_fixture_init(argv[0], &cls, &cfg);
	test_reload_time_constant(&cls, &cfg);
	test_reconfigure(&cfg);
	test_reconfigure_pooled(&cfg);
	test_reconfigure_host_prefix_len(&cfg);
	return worker_fixture_finish("test_reload", &cls);
}
