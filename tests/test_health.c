/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_health.c — the heartbeat registry (heartbeat.h) and the health
 * board's verdict (health.h), on times the test chooses: a merge or an
 * lcore is overdue exactly past its limit, an lcore is judged as of the
 * main lcore's last look, and an overdue heartbeat is listed by name.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "health.h"
#include "heartbeat.h"

#define MS 1000000ull

static void
test_registry(void)
{
	struct dpmon_heartbeat_late late[4];
	struct dpmon_heartbeat *a, *b, *all[DPMON_HEARTBEAT_MAX];
	uint64_t t0 = dpmon_heartbeat_now_ns();
	unsigned n;

	CHECK(dpmon_heartbeat_register(NULL, 10) == NULL && errno == EINVAL);
	CHECK(dpmon_heartbeat_register("x", 0) == NULL && errno == EINVAL);
	a = dpmon_heartbeat_register("exporter clickhouse", 100);
	b = dpmon_heartbeat_register("actions", 5000);
	REQUIRE(a != NULL && b != NULL);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(t0, late, 4), 0);
	/* 1 s later: a (100 ms) is overdue, b (5 s) is not. */
	n = dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 1000 * MS, late, 4);
	CHECK_EQ_U64(n, 1);
	CHECK(strcmp(late[0].name, "exporter clickhouse") == 0);
	CHECK_EQ_U64(late[0].max_age_ms, 100);
	CHECK(late[0].age_ns >= 1000 * MS && late[0].age_ns < 1100 * MS);
	/* 10 s later both, in slot order; a count beyond max is still given. */
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 10000 * MS, late, 1), 2);
	CHECK(strcmp(late[0].name, "exporter clickhouse") == 0);
	/* A longer limit; a beat restarts the age. */
	dpmon_heartbeat_set_max_age(a, 2000);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 1000 * MS, late, 4), 0);
	dpmon_heartbeat_beat(a);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 1999 * MS, late, 4), 0);
	dpmon_heartbeat_unregister(a);
	dpmon_heartbeat_unregister(b);
	dpmon_heartbeat_beat(NULL); /* ignored */
	dpmon_heartbeat_unregister(NULL);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 100000 * MS, NULL, 0), 0);
	/* The registry is full at DPMON_HEARTBEAT_MAX, and reuses slots. */
	for (unsigned i = 0; i < DPMON_HEARTBEAT_MAX; i++)
		REQUIRE((all[i] = dpmon_heartbeat_register("filler", 1)) != NULL);
	CHECK(dpmon_heartbeat_register("one more", 1) == NULL && errno == ENOSPC);
	dpmon_heartbeat_unregister(all[3]);
	REQUIRE((all[3] = dpmon_heartbeat_register("again", 1)) != NULL);
	for (unsigned i = 0; i < DPMON_HEARTBEAT_MAX; i++)
		dpmon_heartbeat_unregister(all[i]);
}

static void
test_board(void)
{
	struct dpmon_health h;
	struct dpmon_health_verdict v;
	const uint64_t t0 = 1000000 * MS; /* any time: the board compares what it is given */

	/* 200 ms merges: limits of 1 s (DPMON_HEALTH_MIN_AGE_MS); 2 s merges: 6 s. */
	REQUIRE(dpmon_health_init(&h, 2, 2000) == 0);
	CHECK_EQ_U64(h.merge_max_age_ms, 6000);
	dpmon_health_fini(&h);
	REQUIRE(dpmon_health_init(&h, 2, 200) == 0);
	CHECK_EQ_U64(h.merge_max_age_ms, 1000);
	CHECK_EQ_U64(h.lcore_max_age_ms, 1000);
	dpmon_health_name(&h, 0, "worker lcore %u", 1u);
	dpmon_health_name(&h, 1, "worker lcore %u", 2u);
	/* Before the loop: nothing to judge. */
	dpmon_health_check(&h, t0, &v);
	CHECK_EQ_U64(v.n_reasons, 0);
	dpmon_health_start(&h, t0);
	dpmon_health_check(&h, t0 + 1000 * MS, &v);
	CHECK_EQ_U64(v.n_reasons, 0);
	/* No first merge within the limit. */
	dpmon_health_check(&h, t0 + 1500 * MS, &v);
	REQUIRE(v.n_reasons == 1);
	CHECK(strcmp(v.reasons[0], "merge: no merge for 1.5 s (limit 1.0 s)") == 0);
	/* Merges and polls every 200 ms until t0 + 2 s; lcore 2 stops at t0 + 400 ms. */
	for (uint64_t t = 200, polls = 1; t <= 2000; t += 200, polls++) {
		dpmon_health_merged(&h, t0 + t * MS);
		dpmon_health_poll(&h, 0, polls, t0 + t * MS);
		dpmon_health_poll(&h, 1, polls < 2 ? polls : 2, t0 + t * MS);
		CHECK(dpmon_health_gathered(&h, t0 + t * MS) == (t <= 1400));
	}
	dpmon_health_check(&h, t0 + 2100 * MS, &v);
	REQUIRE(v.n_reasons == 1);
	CHECK(strcmp(v.reasons[0], "worker lcore 2: no RX poll for 1.6 s (limit 1.0 s)") == 0);
	/* The main lcore stops too: its lcores stay judged as of its last look. */
	dpmon_health_check(&h, t0 + 5000 * MS, &v);
	REQUIRE(v.n_reasons == 2);
	CHECK(strcmp(v.reasons[0], "merge: no merge for 3.0 s (limit 1.0 s)") == 0);
	CHECK(strcmp(v.reasons[1], "worker lcore 2: no RX poll for 1.6 s (limit 1.0 s)") == 0);
	/* Both resume. */
	dpmon_health_merged(&h, t0 + 5200 * MS);
	dpmon_health_poll(&h, 0, 100, t0 + 5200 * MS);
	dpmon_health_poll(&h, 1, 100, t0 + 5200 * MS);
	CHECK(dpmon_health_gathered(&h, t0 + 5200 * MS));
	dpmon_health_check(&h, t0 + 5300 * MS, &v);
	CHECK_EQ_U64(v.n_reasons, 0);
	dpmon_health_fini(&h);
}

/* The overdue heartbeats join the verdict, by name; a long list ends
 * with "and N more". */
static void
test_verdict_heartbeats(void)
{
	struct dpmon_heartbeat *hb[20];
	struct dpmon_health_verdict v;
	json_t *j;

	hb[0] = dpmon_heartbeat_register("actions", 1000);
	REQUIRE(hb[0] != NULL);
	dpmon_health_check(NULL, dpmon_heartbeat_now_ns(), &v);
	CHECK_EQ_U64(v.n_reasons, 0);
	dpmon_health_check(NULL, dpmon_heartbeat_now_ns() + 60000 * MS, &v);
	REQUIRE(v.n_reasons == 1);
	CHECK(strncmp(v.reasons[0], "actions: no heartbeat for 60.0 s (limit 1.0 s)", 46) == 0);
	j = dpmon_health_reasons_json(&v);
	REQUIRE(j != NULL && json_array_size(j) == 1);
	CHECK(strcmp(json_string_value(json_array_get(j, 0)), v.reasons[0]) == 0);
	json_decref(j);
	for (unsigned i = 1; i < 20; i++)
		REQUIRE((hb[i] = dpmon_heartbeat_register("exporter", 1000)) != NULL);
	dpmon_health_check(NULL, dpmon_heartbeat_now_ns() + 60000 * MS, &v);
	REQUIRE(v.n_reasons == DPMON_HEALTH_REASONS_MAX);
	CHECK(strcmp(v.reasons[DPMON_HEALTH_REASONS_MAX - 1], "and 5 more") == 0);
	for (unsigned i = 0; i < 20; i++)
		dpmon_heartbeat_unregister(hb[i]);
	j = dpmon_health_reasons_json(NULL);
	CHECK(j != NULL && json_array_size(j) == 0);
	json_decref(j);
}

int
main(void)
{
	test_registry();
	test_board();
	test_verdict_heartbeats();
	return check_finish("test_health");
}
