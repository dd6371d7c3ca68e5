/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_host_order.c — GET /api/v1/hosts from the orders a snapshot caches
 * (host_order.h) gives exactly the listing of a straightforward sort: for
 * every sort key, both directions, no subnet filter and each subnet, and
 * limits from 1 to all, on hosts with many ties, NaN, -0, -1 (flows,
 * peers), infinities, and records current, older (zero rates, decayed
 * averages) and filled by hand (seq 0). Also: an order is built once per
 * snapshot and ranking, also by concurrent readers; a snapshot that does
 * not list its hosts in address order still breaks ties by address.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_call.h"
#include "check.h"
#include "host_order.h"
#include "snap_fixture.h"
#include "snapshot.h"
#include "stats.h"

/* Fewer hosts under the sanitizers: the same rankings, a fifth of the work. */
#define N_HOSTS   (CHECK_SANITIZED ? 300 : 1500)
#define N_SUBNETS 3

/* The sort keys of docs/api.md, in the API's order. */
static const char *const sort_names[] = {"pps",      "bps",      "packets", "bytes",
					 "avg_pps",  "avg_bps",  "syn_pps", "fragments_pps",
					 "tcp_pps",  "tcp_bps",  "udp_pps", "udp_bps",
					 "icmp_pps", "icmp_bps", "flows",   "peers"};
#define N_SORTS (sizeof(sort_names) / sizeof(sort_names[0]))
static const char *const dir_names[DPMON_DIR_MAX] = {"ingress", "egress"};
static const char *const subnet_texts[N_SUBNETS] = {"10.0.0.0/16", "10.1.0.0/16", "2001:db8::/48"};

static uint64_t
next_rand(uint64_t *st)
{
	*st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
	return *st >> 33;
}

/* A value from a small set (ties), with the odd NaN, -0, -1 and infinity. */
static double
some_real(uint64_t *st)
{
	static const double odd[] = {0.0, -0.0, -1.0, 1.5, 1.5, 2.0, 1e9, 3.25};
	uint64_t r = next_rand(st) % 40;

	if (r == 0)
		return NAN;
	if (r == 1)
		return INFINITY;
	if (r < 10)
		return odd[r - 2];
	return (double)(next_rand(st) % 6) * 0.5;
}

static void
fill_dir(struct dpmon_dir_stats *d, uint64_t *st)
{
	d->total =
		snap_rate(next_rand(st) % 8, next_rand(st) % 5 * 100, some_real(st), some_real(st));
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		d->proto[p].pps = some_real(st);
		d->proto[p].bps = some_real(st);
		d->avg_proto_pps[p] = some_real(st);
		d->avg_proto_bps[p] = some_real(st);
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++) {
		d->flag[f].pps = some_real(st);
		d->avg_flag_pps[f] = some_real(st);
	}
	d->avg_pps = some_real(st);
	d->avg_bps = some_real(st);
	d->flows = next_rand(st) % 7 == 0 ? -1 : some_real(st);
	d->peers = next_rand(st) % 7 == 0 ? -1 : some_real(st);
}

/* Hosts in 3 subnets and outside every subnet, IPv4 and IPv6, in address
 * order; current (seq 10), older (seq 4, decayed at read time) and filled
 * by hand (seq 0). */
static struct dpmon_snapshot *
build(void)
{
	struct dpmon_snapshot *s = dpmon_snapshot_alloc(0, 0, N_SUBNETS, N_HOSTS);
	uint64_t st = 7;
	char a[64];

	REQUIRE(s != NULL);
	s->seq = 10;
	s->uptime_s = 100.0;
	s->avg_tau_s = 5.0;
	for (int j = 0; j < N_SUBNETS; j++)
		s->subnets[j].prefix = snap_prefix(subnet_texts[j]);
	for (uint32_t i = 0; i < N_HOSTS; i++) {
		struct dpmon_snap_host *h = &s->hosts[i];
		uint32_t sub = (uint32_t)(next_rand(&st) % (N_SUBNETS + 1));

		if (sub == 2)
			snprintf(a, sizeof(a), "2001:db8::%x", i + 1);
		else
			snprintf(a, sizeof(a), "10.%u.%u.%u", sub, i / 250, i % 250 + 1);
		h->addr = snap_addr(a);
		h->subnet = sub; /* N_SUBNETS: outside every subnet */
		h->seq = next_rand(&st) % 3 == 0 ? 4 : next_rand(&st) % 5 == 0 ? 0 : 10;
		h->t_s = 90.0 + (double)(next_rand(&st) % 10);
		fill_dir(&h->dir[DPMON_DIR_INGRESS], &st);
		fill_dir(&h->dir[DPMON_DIR_EGRESS], &st);
	}
	qsort(s->hosts, N_HOSTS, sizeof(s->hosts[0]), snap_host_addr_cmp);
	return s;
}

/* ------------------------------------------------------------------------
 * The straightforward ranking: each host's value as of the snapshot
 * (dpmon_snap_host_dir), NaN as 0, larger first, then lower address.
 * --------------------------------------------------------------------- */

struct rank {
	const struct dpmon_snapshot *s;
	int key; /* index into sort_names */
	int dir;
};

static double
value_of(const struct dpmon_dir_stats *d, int key)
{
	static const int proto[] = {DPMON_PROTO_TCP, DPMON_PROTO_UDP, DPMON_PROTO_ICMP};

	switch (key) {
	case 0:
		return d->total.pps;
	case 1:
		return d->total.bps;
	case 4:
		return d->avg_pps;
	case 5:
		return d->avg_bps;
	case 6:
		return d->flag[DPMON_FLAG_SYN].pps;
	case 7:
		return d->flag[DPMON_FLAG_FRAG].pps;
	case 14:
		return d->flows;
	case 15:
		return d->peers;
	default: /* 8..13: tcp, udp, icmp; pps then bps */
		return (key - 8) % 2 == 0 ? d->proto[proto[(key - 8) / 2]].pps
					  : d->proto[proto[(key - 8) / 2]].bps;
	}
}

static int
brute_cmp(const void *x, const void *y, void *ctx)
{
	const struct rank *r = ctx;
	const struct dpmon_snap_host *a = *(const struct dpmon_snap_host *const *)x;
	const struct dpmon_snap_host *b = *(const struct dpmon_snap_host *const *)y;
	struct dpmon_dir_stats ta, tb;
	const struct dpmon_dir_stats *da = dpmon_snap_host_dir(r->s, a, r->dir, &ta);
	const struct dpmon_dir_stats *db = dpmon_snap_host_dir(r->s, b, r->dir, &tb);
	int c;

	if (r->key == 2 || r->key == 3) {
		uint64_t va = r->key == 2 ? da->total.packets : da->total.bytes;
		uint64_t vb = r->key == 2 ? db->total.packets : db->total.bytes;

		c = (va > vb) - (va < vb);
	} else {
		double va = value_of(da, r->key), vb = value_of(db, r->key);

		va = isnan(va) ? 0 : va;
		vb = isnan(vb) ? 0 : vb;
		c = (va > vb) - (va < vb);
	}
	return c != 0 ? -c : dpmon_addr_cmp(&a->addr, &b->addr);
}

/* The hosts of @p subnet (-1: all) of @p s ranked by @p r, into @p out. @return how many. */
static uint32_t
brute_order(const struct dpmon_snapshot *s, struct rank r, int subnet,
	    const struct dpmon_snap_host **out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n_hosts; i++)
		if (subnet < 0 || dpmon_snap_host_at(s, i)->subnet == (uint32_t)subnet)
			out[n++] = dpmon_snap_host_at(s, i);
	qsort_r(out, n, sizeof(*out), brute_cmp, &r);
	return n;
}

/* GET @p target on @p s, 200 expected. */
static json_t *
get_ok(const struct dpmon_snapshot *s, const char *target)
{
	struct dpmon_api_response res;

	if (api_call(s, "GET", target, &res) != 0 || res.status != 200)
		FAIL("GET %s: status %u", target, res.status);
	return res.body;
}

/* The listing @p j is exactly want[0 .. min(limit, n) - 1], with total @p n. */
static void
check_listing(json_t *j, const char *target, const struct dpmon_snap_host **want, uint32_t n,
	      uint32_t limit)
{
	json_t *hosts = json_object_get(j, "hosts");
	size_t expect = n < limit ? n : limit;
	char addr[DPMON_ADDR_STRLEN];

	CHECK_EQ_U64(json_integer_value(json_object_get(j, "total")), n);
	CHECK_EQ_U64(json_array_size(hosts), expect);
	for (size_t i = 0; i < expect && i < json_array_size(hosts); i++) {
		const char *got =
			json_string_value(json_object_get(json_array_get(hosts, i), "address"));

		dpmon_addr_format(&want[i]->addr, addr, sizeof(addr));
		if (got == NULL || strcmp(got, addr) != 0) {
			fprintf(stderr, "%s: hosts[%zu] is %s, expected %s\n", target, i,
				got != NULL ? got : "(none)", addr);
			CHECK(0);
			return;
		}
	}
}

/* Every sort key, direction, subnet filter and several limits. */
static void
test_every_ranking(void)
{
	static const uint32_t limits[] = {1, 7, 100, 10000};
	struct dpmon_snapshot *s = build();
	const struct dpmon_snap_host **want = malloc(sizeof(*want) * N_HOSTS);
	char target[160];

	REQUIRE(want != NULL);
	for (int k = 0; k < (int)N_SORTS; k++)
		for (int d = 0; d < DPMON_DIR_MAX; d++)
			for (int sub = -1; sub < N_SUBNETS; sub++) {
				uint32_t n = brute_order(s, (struct rank){s, k, d}, sub, want);

				for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
					json_t *j;

					snprintf(target, sizeof(target),
						 "/api/v1/hosts?sort=%s&direction=%s&limit=%u%s%s",
						 sort_names[k], dir_names[d], limits[l],
						 sub >= 0 ? "&subnet=" : "",
						 sub >= 0 ? subnet_texts[sub] : "");
					j = get_ok(s, target);
					check_listing(j, target, want, n, limits[l]);
					json_decref(j);
				}
			}
	/* The defaults (bps, ingress, 100) are a ranking like the others. */
	{
		uint32_t n = brute_order(s, (struct rank){s, 1, DPMON_DIR_INGRESS}, -1, want);
		json_t *j = get_ok(s, "/api/v1/hosts");

		check_listing(j, "/api/v1/hosts", want, n, 100);
		json_decref(j);
	}
	free(want);
	dpmon_snapshot_free(s);
}

static uint64_t
key_by_bytes(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h, const void *ctx)
{
	(void)s;
	(void)ctx;
	return h->dir[DPMON_DIR_INGRESS].total.bytes;
}

static int key_calls;

static uint64_t
key_counted(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h, const void *ctx)
{
	__atomic_fetch_add(&key_calls, 1, __ATOMIC_RELAXED);
	return key_by_bytes(s, h, ctx);
}

/* An order is built once per slot, and its groups are the subnets' hosts. */
static void
test_built_once(void)
{
	struct dpmon_snapshot *s = build();
	const struct dpmon_host_order *o = dpmon_host_order_get(s, 3, key_counted, NULL);
	uint32_t in_groups = 0;

	REQUIRE(o != NULL);
	CHECK_EQ_U64(key_calls, N_HOSTS);
	CHECK(dpmon_host_order_get(s, 3, key_counted, NULL) == o);
	CHECK_EQ_U64(key_calls, N_HOSTS);
	CHECK(dpmon_host_order_get(s, 4, key_counted, NULL) != o);
	CHECK_EQ_U64(key_calls, 2 * N_HOSTS);
	CHECK(dpmon_host_order_get(s, DPMON_HOST_ORDER_SLOTS, key_counted, NULL) == NULL);
	CHECK_EQ_U64(o->n_hosts, N_HOSTS);
	CHECK_EQ_U64(o->n_subnets, N_SUBNETS);
	CHECK_EQ_U64(o->sub_start[0], 0);
	for (uint32_t j = 0; j < N_SUBNETS; j++) {
		CHECK(o->sub_start[j] <= o->sub_start[j + 1]);
		for (uint32_t i = o->sub_start[j]; i < o->sub_start[j + 1]; i++) {
			CHECK_EQ_U64(dpmon_snap_host_at(s, o->by_subnet[i])->subnet, j);
			in_groups++;
		}
	}
	for (uint32_t i = 1; i < N_HOSTS; i++) {
		const struct dpmon_snap_host *a = dpmon_snap_host_at(s, o->idx[i - 1]);
		const struct dpmon_snap_host *b = dpmon_snap_host_at(s, o->idx[i]);
		uint64_t ka = key_by_bytes(s, a, NULL), kb = key_by_bytes(s, b, NULL);

		CHECK(ka > kb || (ka == kb && dpmon_addr_cmp(&a->addr, &b->addr) < 0));
	}
	/* Hosts outside every subnet come after the groups. */
	for (uint32_t i = o->sub_start[N_SUBNETS]; i < N_HOSTS; i++)
		CHECK_EQ_U64(dpmon_snap_host_at(s, o->by_subnet[i])->subnet, N_SUBNETS);
	CHECK(in_groups + (N_HOSTS - o->sub_start[N_SUBNETS]) == N_HOSTS);
	dpmon_snapshot_free(s);
}

/* A snapshot whose host_at is not in address order: ties still by address. */
static void
test_unsorted(void)
{
	struct dpmon_snapshot *s = build();
	const struct dpmon_snap_host **want = malloc(sizeof(*want) * N_HOSTS);
	uint64_t st = 99;
	uint32_t n;
	json_t *j;

	REQUIRE(want != NULL);
	for (uint32_t i = N_HOSTS - 1; i > 0; i--) { /* shuffle the pointers */
		uint32_t k = (uint32_t)(next_rand(&st) % (i + 1));
		const struct dpmon_snap_host *x = s->host_at[i];

		s->host_at[i] = s->host_at[k];
		s->host_at[k] = x;
	}
	n = brute_order(s, (struct rank){s, 3, DPMON_DIR_EGRESS}, -1, want);
	j = get_ok(s, "/api/v1/hosts?sort=bytes&direction=egress&limit=10000");
	check_listing(j, "unsorted: sort=bytes", want, n, 10000);
	json_decref(j);
	n = brute_order(s, (struct rank){s, 14, DPMON_DIR_INGRESS}, 1, want);
	j = get_ok(s, "/api/v1/hosts?sort=flows&subnet=10.1.0.0/16&limit=10000");
	check_listing(j, "unsorted: sort=flows, subnet", want, n, 10000);
	json_decref(j);
	free(want);
	dpmon_snapshot_free(s);
}

/* Readers on several threads ask a fresh snapshot for the same page at once. */
struct reader {
	const struct dpmon_snapshot *s;
	json_t *body;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;

	r->body = get_ok(r->s, "/api/v1/hosts?sort=avg_pps&direction=egress&limit=50");
	return NULL;
}

static void
test_concurrent_readers(void)
{
	enum {
		N_THREADS = 4,
		ROUNDS = 20
	};

	for (int round = 0; round < ROUNDS; round++) {
		struct dpmon_snapshot *s = build();
		const struct dpmon_snap_host **want = malloc(sizeof(*want) * N_HOSTS);
		struct reader r[N_THREADS];
		pthread_t t[N_THREADS];
		uint32_t n;

		REQUIRE(want != NULL);
		for (int i = 0; i < N_THREADS; i++) {
			r[i] = (struct reader){.s = s};
			REQUIRE(pthread_create(&t[i], NULL, reader_main, &r[i]) == 0);
		}
		n = brute_order(s, (struct rank){s, 4, DPMON_DIR_EGRESS}, -1, want);
		for (int i = 0; i < N_THREADS; i++) {
			REQUIRE(pthread_join(t[i], NULL) == 0);
			check_listing(r[i].body, "concurrent: sort=avg_pps", want, n, 50);
			json_decref(r[i].body);
		}
		free(want);
		dpmon_snapshot_free(s);
	}
}

/*
 * The rankings asked for in one snapshot are built in the next one by
 * dpmon_api_prebuild_orders, and only those; its answers are the same.
 */
static void
test_prebuild(void)
{
	struct dpmon_snapshot *prev = build(), *next = build();
	unsigned built = 0;
	json_t *a, *b;

	json_decref(get_ok(prev, "/api/v1/hosts?sort=bps&limit=5"));
	json_decref(get_ok(prev, "/api/v1/hosts?sort=packets&direction=egress&limit=5"));
	dpmon_api_prebuild_orders(prev, next);
	for (unsigned slot = 0; slot < DPMON_HOST_ORDER_SLOTS; slot++) {
		CHECK(dpmon_host_order_built(next, slot) == dpmon_host_order_built(prev, slot));
		built += dpmon_host_order_built(next, slot);
	}
	CHECK_EQ_U64(built, 2);
	a = get_ok(prev, "/api/v1/hosts?sort=bps&limit=100");
	b = get_ok(next, "/api/v1/hosts?sort=bps&limit=100");
	CHECK(json_equal(json_object_get(a, "hosts"), json_object_get(b, "hosts")));
	json_decref(a);
	json_decref(b);
	dpmon_snapshot_free(prev);
	dpmon_snapshot_free(next);
}

int
main(void)
{
	test_every_ranking();
	test_built_once();
	test_unsorted();
	test_concurrent_readers();
	test_prebuild();
	return check_finish("test_host_order");
}
