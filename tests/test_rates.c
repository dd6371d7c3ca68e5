/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rates.c — rates and moving averages (rates.h, snapshot.h): the
 * arithmetic across 2^32 and 2^64, the merge's rates and averages over
 * late and skipped intervals, and the averages of an idle host decayed at
 * read time.
 */
#include <math.h>

#include "rates.h"
#include "worker_fixture.h"

/* ------------------------------------------------------------------------
 * The arithmetic.
 * --------------------------------------------------------------------- */

/* The arithmetic alone (rates.h): differences across 2^32 and 2^64, the
 * measured interval, and an average that depends only on elapsed time. */
static void
test_rate_arithmetic(void)
{
	double a1 = dpmon_ewma_alpha(1.0, 5.0), a2 = dpmon_ewma_alpha(2.0, 5.0);
	double two = 0, one = 0, avg = 0;

	CHECK(dpmon_rate_per_s(4, UINT64_MAX - 5, 1.0) == 10.0);                 /* across 2^64 */
	CHECK(dpmon_rate_per_s((1ull << 32) + 3, (1ull << 32) - 7, 2.0) == 5.0); /* 2^32 */
	NEAR(dpmon_rate_per_s(19, 0, 1.9), 10.0, 1e-12);                         /* a 1.9 s merge */
	CHECK(dpmon_rate_per_s(19, 0, 0.0) == 0.0);
	NEAR(a1, 1 - exp(-0.2), 1e-15);
	CHECK(dpmon_ewma_alpha(0.0, 5.0) == 0.0);
	/* A skipped interval: one 2 s step = two 1 s steps at the same rate. */
	two = dpmon_ewma_step(3.0, 7.0, a2);
	one = dpmon_ewma_step(dpmon_ewma_step(3.0, 7.0, a1), 7.0, a1);
	NEAR(two, one, 1e-12);
	/* No truncation: 5 pps averages 0.906.. after 1 s, 5.0 in the end. */
	avg = dpmon_ewma_step(0.0, 5.0, a1);
	NEAR(avg, 5.0 * (1 - exp(-0.2)), 1e-12);
	for (int i = 1; i < 300; i++)
		avg = dpmon_ewma_step(avg, 5.0, a1);
	NEAR(avg, 5.0, 1e-12);
}

/* ------------------------------------------------------------------------
 * Through the merge.
 * --------------------------------------------------------------------- */

/*
 * Rates and averages through the merge with injected TSC values: a steady
 * 5 pps host averages 5.0; a merge 1.9 s late gives the true rate; a
 * skipped merge (2 s) weighs the average by elapsed time; a host counter
 * crossing 2^32 inside a late interval gives the true rate.
 */
static void
test_rates_and_averages(const struct dpmon_classifier *cls, const struct dpmon_config *cfg0)
{
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("avg", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	const uint64_t hz = 1000000000ull;
	const uint32_t dst = IP4(10, 1, 0, 1), wrap = IP4(10, 1, 0, 2);
	const struct dpmon_snap_host *h;
	unsigned lcore = 1;
	struct dpmon_snapshot *s;
	struct dpmon_merge *m;
	uint64_t t = 0;
	double alpha = 1 - exp(-0.2), want = 0;

	cfg.average_time_constant_ms = 5000;
	REQUIRE(c != NULL);
	/* Host 10.1.0.2's low words start near 2^32 (earlier traffic). */
	udp_burst(c, g, wrap, 1);
	c->hosts[0].packets[DPMON_DIR_INGRESS][DPMON_PROTO_UDP] = UINT32_MAX - 2;
	c->hosts[0].bytes[DPMON_DIR_INGRESS][DPMON_PROTO_UDP] = UINT32_MAX - 99;
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	for (int i = 1; i <= 300; i++) {
		udp_burst(c, g, dst, 5);
		t += hz;
		s = dpmon_merge_run(m, t, NULL, 0);
		REQUIRE(s != NULL);
		h = host(s, "10.1.0.1");
		REQUIRE(h != NULL);
		want = want + alpha * (5.0 - want);
		CHECK(h->dir[DPMON_DIR_INGRESS].total.pps == 5.0);
		NEAR(h->dir[DPMON_DIR_INGRESS].avg_pps, want, 1e-9);
		NEAR(h->dir[DPMON_DIR_INGRESS].avg_bps, want * 800, 1e-6);
		/* Per-protocol averages follow the same steps (all of it is UDP). */
		NEAR(h->dir[DPMON_DIR_INGRESS].avg_proto_pps[DPMON_PROTO_UDP], want, 1e-9);
		NEAR(h->dir[DPMON_DIR_INGRESS].avg_proto_bps[DPMON_PROTO_UDP], want * 800, 1e-6);
		CHECK(h->dir[DPMON_DIR_INGRESS].avg_proto_pps[DPMON_PROTO_TCP] == 0.0);
		CHECK(h->dir[DPMON_DIR_INGRESS].avg_flag_pps[DPMON_FLAG_SYN] == 0.0);
		if (i == 1) /* not truncated to an integer */
			NEAR(h->dir[DPMON_DIR_INGRESS].avg_pps, 0.906346234, 1e-8);
		if (i == 300) {
			NEAR(h->dir[DPMON_DIR_INGRESS].avg_pps, 5.0, 1e-9);
			NEAR(h->dir[DPMON_DIR_INGRESS].avg_bps, 4000.0, 1e-6);
			CHECK(h->dir[DPMON_DIR_EGRESS].avg_pps == 0.0);
			NEAR(s->subnets[0].dir[DPMON_DIR_INGRESS].avg_pps, 5.0, 1e-9);
			NEAR(s->totals[DPMON_TOTAL_INGRESS].avg_pps, 5.0, 1e-9);
			CHECK(s->totals[DPMON_TOTAL_EXTERNAL].avg_pps == 0.0);
			/* 10.1.0.2 had its only packet before the first merge: its
			 * average decayed to ~0 without any new traffic. */
			h = host(s, "10.1.0.2");
			CHECK(h != NULL && h->dir[DPMON_DIR_INGRESS].avg_pps < 1e-12);
		}
		dpmon_snapshot_free(s);
	}
	/* A merge 1.9 s late: 10 pps really, 19 packets; 10.1.0.2 wraps 2^32. */
	udp_burst(c, g, dst, 19);
	udp_burst(c, g, wrap, 19);
	t += 1900000000ull;
	s = dpmon_merge_run(m, t, NULL, 0);
	REQUIRE(s != NULL);
	CHECK(c->carry_head == 2);
	h = host(s, "10.1.0.1");
	REQUIRE(h != NULL);
	NEAR(h->dir[DPMON_DIR_INGRESS].total.pps, 10.0, 1e-9);
	NEAR(h->dir[DPMON_DIR_INGRESS].total.bps, 8000.0, 1e-6);
	NEAR(h->dir[DPMON_DIR_INGRESS].avg_pps, 5.0 + (1 - exp(-0.38)) * 5.0, 1e-9);
	NEAR(h->dir[DPMON_DIR_INGRESS].avg_proto_pps[DPMON_PROTO_UDP], 5.0 + (1 - exp(-0.38)) * 5.0,
	     1e-9);
	NEAR(h->dir[DPMON_DIR_INGRESS].avg_proto_bps[DPMON_PROTO_UDP],
	     (5.0 + (1 - exp(-0.38)) * 5.0) * 800, 1e-6);
	h = host(s, "10.1.0.2");
	REQUIRE(h != NULL);
	CHECK_EQ_U64(h->dir[DPMON_DIR_INGRESS].total.packets, (1ull << 32) + 16);
	NEAR(h->dir[DPMON_DIR_INGRESS].total.pps, 10.0, 1e-9);
	NEAR(h->dir[DPMON_DIR_INGRESS].total.bps, 8000.0, 1e-6);
	want = h->dir[DPMON_DIR_INGRESS].avg_pps;
	dpmon_snapshot_free(s);
	/* A skipped merge: 2 s at 10 pps in one step. */
	udp_burst(c, g, wrap, 20);
	t += 2 * hz;
	s = dpmon_merge_run(m, t, NULL, 0);
	REQUIRE(s != NULL);
	h = host(s, "10.1.0.2");
	REQUIRE(h != NULL);
	NEAR(h->dir[DPMON_DIR_INGRESS].total.pps, 10.0, 1e-9);
	want = dpmon_ewma_step(dpmon_ewma_step(want, 10.0, alpha), 10.0, alpha);
	NEAR(h->dir[DPMON_DIR_INGRESS].avg_pps, want, 1e-9);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/*
 * Averages at read time (snapshot.h): a host with traffic in the first
 * merges and none after keeps the record of the merge that last touched it
 * (the same record, shared by the following snapshots), and its averages
 * read through dpmon_snap_host_dir equal the chain of EWMA steps with rate
 * 0 over intervals of varying length, to 1e-9 relative; its rates are 0.
 */
static void
test_read_time_decay(const struct dpmon_classifier *cls, const struct dpmon_config *cfg0)
{
	static const double dts[] = {1.0, 0.3, 2.9, 1.7, 0.05, 4.2, 1.0, 0.61, 3.3, 1.25};
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("decay", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	const uint64_t hz = 1000000000ull;
	const uint32_t quiet = IP4(10, 1, 0, 1), busy = IP4(10, 1, 0, 2);
	const double tau = 5.0;
	struct dpmon_snapshot *s, *prev = NULL;
	const struct dpmon_snap_host *raw, *raw_prev = NULL;
	struct dpmon_dir_stats tmp;
	const struct dpmon_dir_stats *d;
	struct dpmon_merge *m;
	unsigned lcore = 1, shared = 0, stale = 0;
	uint64_t t = 0;
	double pps = 0, bps = 0;

	cfg.average_time_constant_ms = 5000;
	REQUIRE(c != NULL);
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	for (int i = 0; i < 43; i++) {
		double dt = i < 3 ? 1.0 : dts[i % 10];
		double a = dpmon_ewma_alpha(dt, tau);

		if (i < 3)
			udp_burst(c, g, quiet, 7); /* 7 pps, 100-byte frames */
		udp_burst(c, g, busy, 1);
		t += (uint64_t)llround(dt * (double)hz);
		s = dpmon_merge_run(m, t, NULL, 0);
		REQUIRE(s != NULL);
		pps = dpmon_ewma_step(pps, i < 3 ? 7.0 : 0.0, a);
		bps = dpmon_ewma_step(bps, i < 3 ? 5600.0 : 0.0, a);
		raw = find(s, "10.1.0.1");
		REQUIRE(raw != NULL);
		d = dpmon_snap_host_dir(s, raw, DPMON_DIR_INGRESS, &tmp);
		NEAR_REL(d->avg_pps, pps, 1e-9);
		NEAR_REL(d->avg_bps, bps, 1e-9);
		NEAR_REL(d->avg_proto_pps[DPMON_PROTO_UDP], pps, 1e-9);
		NEAR_REL(d->avg_proto_bps[DPMON_PROTO_UDP], bps, 1e-9);
		CHECK(d->avg_proto_pps[DPMON_PROTO_TCP] == 0.0);
		CHECK_EQ_U64(d->total.packets, 7 * (uint64_t)(i < 3 ? i + 1 : 3));
		if (i >= 3)
			CHECK(d->total.pps == 0.0 && d->total.bps == 0.0 &&
			      d->proto[DPMON_PROTO_UDP].pps == 0.0 && d->flows == 0.0);
		stale += !dpmon_snap_host_fresh(s, raw);
		shared += raw == raw_prev;
		dpmon_snapshot_free(prev); /* after the new one took its own references */
		prev = s;
		raw_prev = raw;
	}
	/* The last merges read the old record (not rewritten, not copied). */
	CHECK(stale >= 35);
	CHECK(shared >= 35);
	CHECK(pps > 0 && pps < 7.0 * 1e-3);
	dpmon_snapshot_free(prev);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
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
	test_rate_arithmetic();
	test_rates_and_averages(&cls, &cfg);
	test_read_time_decay(&cls, &cfg);
	return worker_fixture_finish("test_rates", &cls);
}
