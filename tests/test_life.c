/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_life.c — the hosts' life cycle (counters.h, merge_life.c): idle
 * hosts leave, a full table frees its least recently active entries and
 * never a steady host's, and every interleaving of a retire request with
 * the worker's packets loses no packet and counts none twice: a request
 * that meets a packet (KEPT), a packet after the retirement and before
 * the merge read it (the host stays, counts summed), an entry reused by
 * another host, a host in two tables of which one retires, and a worker
 * thread churning hosts while the main thread merges.
 */
#include <pthread.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "check.h"
#include "worker_fixture.h"

static const uint64_t hz = 1000000000ull; /* the merges' TSC: 1 tick = 1 ns */

/* A merge at @p t_s seconds of uptime (REQUIRE: a snapshot). */
static struct dpmon_snapshot *
run_at(struct dpmon_merge *m, double t_s)
{
	struct dpmon_snapshot *s = dpmon_merge_run(m, (uint64_t)(t_s * (double)hz), NULL, 0);

	REQUIRE(s != NULL);
	return s;
}

/* Ingress packets of host @p a in @p s; -1 when it is not listed. */
static int64_t
pk_of(const struct dpmon_snapshot *s, const char *a)
{
	const struct dpmon_snap_host *h = find(s, a);

	return h ? (int64_t)h->dir[DPMON_DIR_INGRESS].total.packets : -1;
}

/* Host 10.1.128.0 + @p i as a dotted quad in @p buf (outside 10.1.2.0/24). */
static const char *
spray_addr(char *buf, size_t n, unsigned i)
{
	snprintf(buf, n, "10.1.%u.%u", 128 + (i >> 8), i & 255);
	return buf;
}

/* One 100-byte UDP packet to spray host @p i. */
static void
spray_one(struct dpmon_core *c, const struct dpmon_generation *g, unsigned i)
{
	udp_burst(c, g, IP4(10, 1, 128 + (i >> 8), i & 255), 1);
}

/* ------------------------------------------------------------------ */

static void
test_idle(const struct dpmon_classifier *cls, const struct dpmon_config *base)
{
	struct dpmon_config cfg = *base;
	struct dpmon_core *c = dpmon_core_create("idle", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	double first;

	cfg.host_idle_timeout_s = 2;
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	udp_burst(c, g, IP4(10, 1, 0, 1), 3);
	s = run_at(m, 1);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 3);
	first = find(s, "10.1.0.1")->first_seen;
	CHECK(first > 1e9); /* Unix seconds */
	CHECK(find(s, "10.1.0.1")->last_seen == first);
	dpmon_snapshot_free(s);
	s = run_at(m, 2); /* idle 1 s: stays, nothing asked */
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 3);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 0);
	dpmon_snapshot_free(s);
	/* Its last touch counts from the merge after it too (a packet during
	 * a merge carries the previous epoch): at most one interval late,
	 * never early. */
	s = run_at(m, 3);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 3);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 0);
	dpmon_snapshot_free(s);
	s = run_at(m, 4); /* idle 2 s since: asked for, still listed */
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 3);
	CHECK(find(s, "10.1.0.1")->last_seen == first);
	dpmon_snapshot_free(s);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 1);
	CHECK_EQ_U64(c->stats.host_expired, 1);
	CHECK_EQ_U64(c->stats.host_evictions, 0);
	s = run_at(m, 5); /* retired: gone; its packets stay in the subnet */
	CHECK_EQ_U64(s->n_hosts, 0);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), -1);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 3);
	CHECK_EQ_U64(s->workers[0].host_expired, 1);
	CHECK_EQ_U64(s->workers[0].hosts, 0);
	CHECK_EQ_U64(dpmon_merge_hosts(m), 0);
	dpmon_snapshot_free(s);
	/* Back: from zero, seen anew. */
	udp_burst(c, g, IP4(10, 1, 0, 1), 2);
	s = run_at(m, 6);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 2);
	CHECK(find(s, "10.1.0.1")->first_seen - first > 4.99);
	CHECK(find(s, "10.1.0.1")->first_seen - first < 5.01);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 5);
	CHECK_EQ_U64(s->workers[0].hosts, 1);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/*
 * A spray fills a 64-entry table; a host with a packet in every interval
 * is never asked for; one interval after the spray the merge frees the
 * reserve (8 entries) from the spray's, and a host arriving then is
 * counted exactly, in a reused entry.
 */
static void
test_evict(const struct dpmon_classifier *cls, const struct dpmon_config *base)
{
	struct dpmon_config cfg = *base;
	struct dpmon_core *c = dpmon_core_create("evict", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	char a[32];

	cfg.host_idle_timeout_s = 0; /* eviction only */
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	udp_burst(c, g, IP4(10, 1, 0, 1), 1); /* the steady host */
	for (unsigned i = 0; i < 200; i++)
		spray_one(c, g, i);
	CHECK_EQ_U64(c->stats.host_table_full, 137); /* 63 entries left for 200 */
	s = run_at(m, 1);
	CHECK_EQ_U64(s->n_hosts, 64);
	CHECK_EQ_U64(pk_of(s, spray_addr(a, sizeof(a), 62)), 1);
	dpmon_snapshot_free(s);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 0); /* all touched in the interval */
	udp_burst(c, g, IP4(10, 1, 0, 1), 1);
	s = run_at(m, 2);
	dpmon_snapshot_free(s);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 8); /* the reserve, from the spray */
	CHECK_EQ_U64(c->stats.host_evictions, 8);
	udp_burst(c, g, IP4(10, 1, 0, 1), 1);
	s = run_at(m, 3);
	CHECK_EQ_U64(s->n_hosts, 56);
	CHECK_EQ_U64(s->workers[0].hosts, 56);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 3);
	dpmon_snapshot_free(s);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 0); /* 8 free: enough */
	udp_burst(c, g, IP4(10, 1, 0, 1), 1);
	udp_burst(c, g, IP4(10, 1, 0, 2), 5); /* a new host, after the spray */
	s = run_at(m, 4);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 4);
	CHECK_EQ_U64(pk_of(s, "10.1.0.2"), 5);
	CHECK_EQ_U64(s->n_hosts, 57);
	CHECK_EQ_U64(s->workers[0].host_table_full, 137);
	CHECK_EQ_U64(s->workers[0].host_evictions, 8);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 4 + 200 + 5);
	dpmon_snapshot_free(s);
	/* Churn: 20 waves of 64 new hosts, the steady one throughout. */
	for (unsigned w = 0; w < 20; w++) {
		for (unsigned i = 0; i < 64; i++)
			spray_one(c, g, 256 + w * 64 + i);
		udp_burst(c, g, IP4(10, 1, 0, 1), 1);
		s = run_at(m, 5 + 2 * w);
		CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 5 + 2 * w);
		dpmon_snapshot_free(s);
		dpmon_core_maintain(c, 1000);
		udp_burst(c, g, IP4(10, 1, 0, 1), 1);
		s = run_at(m, 6 + 2 * w);
		CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 6 + 2 * w);
		CHECK(s->n_hosts <= 64);
		dpmon_snapshot_free(s);
		dpmon_core_maintain(c, 1000);
	}
	s = run_at(m, 100);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 44);
	CHECK(s->workers[0].host_evictions > 20 * 8);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 209 + 20 * 64 + 40);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/*
 * The interleavings: a packet between the request and the worker's
 * answer (KEPT); a packet after the answer DEAD, before the merge reads
 * it (a new entry: the host stays, with both entries' counts); a host in
 * two tables whose entry in one retires.
 */
static void
test_interleavings(const struct dpmon_classifier *cls, const struct dpmon_config *base)
{
	struct dpmon_config cfg = *base;
	struct dpmon_core *c[2] = {dpmon_core_create("il0", 64, SOCKET_ID_ANY),
				   dpmon_core_create("il1", 64, SOCKET_ID_ANY)};
	struct dpmon_generation *g[2] = {gen0(cls), gen0(cls)};
	unsigned lcores[2] = {1, 2};
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;

	cfg.host_idle_timeout_s = 2;
	m = dpmon_merge_create(&cfg, c, g, lcores, 2, 0, hz);
	REQUIRE(m != NULL);
	udp_burst(c[0], g[0], IP4(10, 1, 0, 1), 1); /* KEPT */
	udp_burst(c[0], g[0], IP4(10, 1, 0, 2), 1); /* DEAD, then a packet */
	udp_burst(c[0], g[0], IP4(10, 1, 0, 3), 1); /* in both tables */
	dpmon_snapshot_free(run_at(m, 1));
	for (double t = 2; t <= 4; t++) {
		/* As the worker loop does between bursts (it adopts the epoch). */
		CHECK_EQ_U64(dpmon_core_maintain(c[0], 1000), 0);
		udp_burst(c[1], g[1], IP4(10, 1, 0, 3), 1);
		dpmon_snapshot_free(run_at(m, t));
	}
	/* Merge 4 asked for core 0's three entries (idle 2 s, counted from
	 * merge 2: at most one interval late). */
	udp_burst(c[0], g[0], IP4(10, 1, 0, 1), 1); /* before the answer */
	CHECK_EQ_U64(dpmon_core_maintain(c[0], 1000), 3);
	CHECK_EQ_U64(c[0]->stats.host_expired, 2);  /* .2 and .3 */
	udp_burst(c[0], g[0], IP4(10, 1, 0, 2), 1); /* after it */
	udp_burst(c[1], g[1], IP4(10, 1, 0, 3), 1);
	s = run_at(m, 5);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 2);
	CHECK_EQ_U64(pk_of(s, "10.1.0.2"), 2);
	CHECK_EQ_U64(pk_of(s, "10.1.0.3"), 5);
	CHECK(fabs(find(s, "10.1.0.3")->dir[DPMON_DIR_INGRESS].total.pps - 1.0) < 1e-9);
	CHECK(fabs(find(s, "10.1.0.2")->dir[DPMON_DIR_INGRESS].total.pps - 1.0) < 1e-9);
	CHECK_EQ_U64(s->n_hosts, 3);
	CHECK_EQ_U64(s->workers[0].hosts, 2); /* .1, and .2's new entry */
	dpmon_snapshot_free(s);
	/* Rates over the next interval stay exact (base + live entries). */
	udp_burst(c[0], g[0], IP4(10, 1, 0, 2), 3);
	udp_burst(c[1], g[1], IP4(10, 1, 0, 3), 2);
	s = run_at(m, 6);
	CHECK_EQ_U64(pk_of(s, "10.1.0.2"), 5);
	CHECK_EQ_U64(pk_of(s, "10.1.0.3"), 7);
	CHECK(fabs(find(s, "10.1.0.2")->dir[DPMON_DIR_INGRESS].total.pps - 3.0) < 1e-9);
	CHECK(fabs(find(s, "10.1.0.3")->dir[DPMON_DIR_INGRESS].total.pps - 2.0) < 1e-9);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	for (int k = 0; k < 2; k++) {
		dpmon_generation_free(g[k]);
		dpmon_core_free(c[k]);
	}
}

/* Pinned hosts (alerts, blackholes) never leave, idle or not. */
static void
test_pinned(const struct dpmon_classifier *cls, const struct dpmon_config *base)
{
	struct dpmon_config cfg = *base;
	struct dpmon_core *c = dpmon_core_create("pin", 64, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	unsigned lcore = 1;
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	struct dpmon_addr a;

	cfg.host_idle_timeout_s = 1;
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, 0, hz);
	REQUIRE(m != NULL);
	udp_burst(c, g, IP4(10, 1, 0, 1), 1);
	udp_burst(c, g, IP4(10, 1, 0, 2), 1);
	dpmon_snapshot_free(run_at(m, 1));
	dpmon_addr_parse("10.1.0.1", &a);
	CHECK(dpmon_merge_pin(m, &a, 1) == 1);
	for (double t = 2; t <= 5; t++) {
		dpmon_snapshot_free(run_at(m, t));
		dpmon_core_maintain(c, 1000);
	}
	s = run_at(m, 6);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), 1);
	CHECK_EQ_U64(pk_of(s, "10.1.0.2"), -1);
	dpmon_snapshot_free(s);
	CHECK(dpmon_merge_pin(m, NULL, 0) == 0); /* unpinned: leaves */
	for (double t = 7; t <= 8; t++) {
		dpmon_snapshot_free(run_at(m, t));
		dpmon_core_maintain(c, 1000);
	}
	s = run_at(m, 9);
	CHECK_EQ_U64(s->n_hosts, 0);
	dpmon_snapshot_free(s);
	/* Pinned after its entry was asked for (a blackhole posted during
	 * the merge): the entry retires, the host stays listed until it is
	 * unpinned. */
	udp_burst(c, g, IP4(10, 1, 0, 3), 4);
	for (double t = 10; t <= 12; t++) {
		dpmon_snapshot_free(run_at(m, t));
		if (t < 12)
			dpmon_core_maintain(c, 1000);
	}
	dpmon_addr_parse("10.1.0.3", &a);
	CHECK(dpmon_merge_pin(m, &a, 1) == 1);
	CHECK_EQ_U64(dpmon_core_maintain(c, 1000), 1); /* merge 12 had asked */
	for (double t = 13; t <= 15; t++) {
		s = run_at(m, t);
		CHECK_EQ_U64(pk_of(s, "10.1.0.3"), 4);
		dpmon_snapshot_free(s);
		dpmon_core_maintain(c, 1000);
	}
	CHECK_EQ_U64(c->stats.host_expired, 3);
	CHECK(dpmon_merge_pin(m, NULL, 0) == 0);
	s = run_at(m, 16);
	CHECK_EQ_U64(s->n_hosts, 0);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 6);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

/* ------------------------------------------------------------------------
 * Concurrent churn.
 * --------------------------------------------------------------------- */

struct churn {
	struct dpmon_core *c;
	const struct dpmon_generation *g;
	unsigned rounds;
	bool done; /* __atomic builtins */
};

/* The worker: each round the steady host, 16 new hosts, then the requests. */
static void *
churn_worker(void *arg)
{
	struct churn *w = arg;

	for (unsigned r = 0; r < w->rounds; r++) {
		udp_burst(w->c, w->g, IP4(10, 1, 0, 1), 1);
		for (unsigned i = 0; i < 16; i++)
			spray_one(w->c, w->g, (r * 16 + i) % 30000);
		dpmon_core_maintain(w->c, DPMON_RETIRE_PER_ROUND);
	}
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_concurrent(const struct dpmon_classifier *cls, const struct dpmon_config *base)
{
	struct dpmon_config cfg = *base;
	struct dpmon_core *c = dpmon_core_create("churn", 1024, SOCKET_ID_ANY);
	struct dpmon_generation *g = gen0(cls);
	struct churn w = {.c = c, .g = g, .rounds = 20000};
	unsigned lcore = 1, merges = 0;
	uint64_t tsc_hz = rte_get_tsc_hz();
	struct dpmon_merge *m;
	struct dpmon_snapshot *s;
	struct dpmon_addr steady;
	pthread_t t;

	cfg.host_idle_timeout_s = 0;
	m = dpmon_merge_create(&cfg, &c, &g, &lcore, 1, rte_rdtsc(), tsc_hz);
	REQUIRE(m != NULL);
	/* The steady host pinned: on a loaded machine the worker thread may
	 * miss whole 200 us intervals, and an untouched host may leave. */
	udp_burst(c, g, IP4(10, 1, 0, 1), 1);
	s = dpmon_merge_run(m, rte_rdtsc(), NULL, 0);
	REQUIRE(s != NULL);
	dpmon_snapshot_free(s);
	dpmon_addr_parse("10.1.0.1", &steady);
	CHECK(dpmon_merge_pin(m, &steady, 1) == 1);
	REQUIRE(pthread_create(&t, NULL, churn_worker, &w) == 0);
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
		s = dpmon_merge_run(m, rte_rdtsc(), NULL, 0);
		if (s != NULL) {
			CHECK(s->n_hosts <= 1024);
			dpmon_snapshot_free(s);
		}
		merges++;
		rte_delay_us_sleep(200);
	}
	pthread_join(t, NULL);
	s = dpmon_merge_run(m, rte_rdtsc(), NULL, 0);
	REQUIRE(s != NULL);
	CHECK_EQ_U64(pk_of(s, "10.1.0.1"), w.rounds + 1);
	CHECK_EQ_U64(s->subnets[0].dir[DPMON_DIR_INGRESS].total.packets, 17ull * w.rounds + 1);
	CHECK(s->workers[0].host_evictions > 0);
	printf("  concurrent churn: %u merges, %" PRIu64 " evictions, %" PRIu64
	       " updates without an entry, %u hosts at the end\n",
	       merges, s->workers[0].host_evictions, s->workers[0].host_table_full, s->n_hosts);
	dpmon_snapshot_free(s);
	dpmon_merge_free(m);
	dpmon_generation_free(g);
	dpmon_core_free(c);
}

int
main(int argc, char **argv)
{
	struct dpmon_classifier cls;
	struct dpmon_config cfg;

	(void)argc;
	worker_fixture_init(argv[0], &cls, &cfg);
	test_idle(&cls, &cfg);
	test_evict(&cls, &cfg);
	test_interleavings(&cls, &cfg);
	test_pinned(&cls, &cfg);
	test_concurrent(&cls, &cfg);
	return worker_fixture_finish("test_life", &cls);
}
