/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_history.c — the merger's history of totals and subnet rates (the
 * data of GET /api/v1/history): its length, order and sharing between
 * snapshots, and none kept when history_s is 0.
 */
#include <math.h>

#include "worker_fixture.h"

/* ------------------------------------------------------------------------
 * The history.
 * --------------------------------------------------------------------- */

/* GET /api/v1/history's data: the merger keeps the last
 * history_s / interval points of totals and subnet rates, oldest first,
 * shared by the snapshots that list them. */
static void
test_history(const struct dpmon_classifier *cls, const struct dpmon_config *cfg0)
{
	struct dpmon_config cfg = *cfg0;
	struct dpmon_core *c = dpmon_core_create("hist", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	const uint64_t hz = 1000000000ull;
	struct dpmon_snapshot *s, *keep = NULL;
	struct dpmon_merge *m;
	unsigned lcore = 1;

	cfg.history_s = 3; /* 1000 ms interval: 3 points */
	REQUIRE(c != NULL);
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	for (unsigned i = 1; i <= 5; i++) {
		udp_burst(c, g, IP4(10, 1, 0, 1), i); /* i pps in interval i */
		s = dpmon_merge_run(m, i * hz, NULL, 0);
		REQUIRE(s != NULL);
		CHECK_EQ_U64(s->n_history, i < 3 ? i : 3);
		REQUIRE(s->n_history > 0);
		CHECK_EQ_U64(s->history[s->n_history - 1]->seq, s->seq);
		CHECK(s->history[s->n_history - 1]->totals[DPMON_TOTAL_INGRESS].pps == (double)i);
		CHECK(s->history[s->n_history - 1]
			      ->sub[0 * DPMON_DIR_MAX + DPMON_DIR_INGRESS]
			      .bps == 800.0 * i);
		CHECK(s->history[s->n_history - 1]
			      ->sub[1 * DPMON_DIR_MAX + DPMON_DIR_INGRESS]
			      .pps == 0);
		if (i == 5) {
			CHECK_EQ_U64(s->history[0]->seq, 3);
			CHECK(s->history[0]->totals[DPMON_TOTAL_INGRESS].pps == 3.0);
			CHECK(fabs(s->history[1]->uptime_s - 4.0) < 1e-9);
		}
		if (i == 2)
			keep = s; /* outlives the points the merger drops */
		else
			dpmon_snapshot_free(s);
	}
	REQUIRE(keep != NULL);
	CHECK(keep->n_history == 2 && keep->history[0]->seq == 1 &&
	      keep->history[0]->totals[DPMON_TOTAL_INGRESS].pps == 1.0);
	dpmon_merge_free(m);
	dpmon_snapshot_free(keep);
	/* history_s 0: none kept. */
	cfg.history_s = 0;
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	s = dpmon_merge_run(m, hz, NULL, 0);
	CHECK(s != NULL && s->n_history == 0);
	dpmon_snapshot_free(s);
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
	test_history(&cls, &cfg);
	return worker_fixture_finish("test_history", &cls);
}
