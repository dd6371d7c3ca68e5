/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker_fixture.h — what the unit tests of the worker and the merge share
 * (test_worker.c, test_merge.c, test_rates.c, test_history.c,
 * test_reload.c): the EAL and an mbuf pool, the reference subnets and
 * their classifier, hand-built frames as mbufs, a worker table's
 * generation 0, the look-up of a host in a snapshot, and the tolerance
 * checks. Header only, all of it static: each program has its own copy.
 */
#ifndef DPMON_TEST_WORKER_FIXTURE_H
#define DPMON_TEST_WORKER_FIXTURE_H

#include <math.h>

#include <rte_mbuf.h>

#include "classify.h"
#include "counters.h"
#include "frames.h"
#include "merge.h"
#include "test_eal.h"
#include "worker.h"

/* ------------------------------------------------------------------------
 * Frames.
 * --------------------------------------------------------------------- */

/* The pool every frame of the program comes from (worker_fixture_init). */
static struct rte_mempool *mp;

/* The IPv4 address a.b.c.d in host order. */
#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
/* An outside IPv6 peer (2001:db8:ffff::1) and a host of 2001:db8:1::/48 (2001:db8:1::7). */
static const uint8_t EXT6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t IN6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

/**
 * A copy of frame @p f (f->n bytes) in a new mbuf of the pool; the burst
 * calls free it. @return the mbuf. Thread-safety: the test thread.
 */
static inline struct rte_mbuf *
mbuf_of(const struct fb *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	memcpy(rte_pktmbuf_append(m, (uint16_t)f->n), f->b, f->n);
	return m;
}

/**
 * An IPv4 packet of protocol @p proto from @p src to @p dst (host order)
 * with @p payload zero bytes after the 20-byte header.
 * @return an mbuf of 34 + @p payload bytes. Thread-safety: the test thread.
 */
static inline struct rte_mbuf *
v4(uint8_t proto, uint32_t src, uint32_t dst, uint32_t payload)
{
	struct fb f;
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, proto, src, dst, 0, (uint16_t)(20 + payload));
	fb_zero(&f, payload);
	return mbuf_of(&f);
}

/**
 * Count @p n UDP packets of 100 bytes from outside (198.51.100.1) to
 * @p dst (host order) on core @p c into generation @p g, through
 * dpmon_worker_burst in bursts of at most DPMON_MAX_BURST.
 * Thread-safety: the thread writing @p c (the test thread).
 */
static inline void
udp_burst(struct dpmon_core *c, const struct dpmon_generation *g, uint32_t dst, unsigned n)
{
	struct rte_mbuf *p[DPMON_MAX_BURST];

	while (n > 0) {
		unsigned k = n < DPMON_MAX_BURST ? n : DPMON_MAX_BURST;

		for (unsigned i = 0; i < k; i++)
			p[i] = v4(17, IP4(198, 51, 100, 1), dst, 66);
		dpmon_worker_burst(c, g, p, (uint16_t)k);
		n -= k;
	}
}

/* ------------------------------------------------------------------------
 * Subnets and generations.
 * --------------------------------------------------------------------- */

/**
 * The reference subnets: 10.1.0.0/16 [0], 10.1.2.0/24 [1] inside it,
 * 2001:db8:1::/48 [2]. @param n  set to 3. @return a static array.
 * Thread-safety: the test thread.
 */
static inline struct dpmon_subnet_conf *
subnets(uint32_t *n)
{
	static struct dpmon_subnet_conf s[3];
	dpmon_prefix_parse("10.1.0.0/16", &s[0].prefix, NULL);
	dpmon_prefix_parse("10.1.2.0/24", &s[1].prefix, NULL);
	dpmon_prefix_parse("2001:db8:1::/48", &s[2].prefix, NULL);
	*n = 3;
	return s;
}

/**
 * A worker table's generation 0 (worker.h): classifier @p cls, counters
 * for each of its subnets. @return it (REQUIRE: never NULL); free it with
 * dpmon_generation_free. Thread-safety: the test thread.
 */
static inline struct dpmon_generation *
gen0(const struct dpmon_classifier *cls)
{
	struct dpmon_generation *g = dpmon_generation_create(cls, cls->n_subnets, SOCKET_ID_ANY);

	REQUIRE(g != NULL);
	return g;
}

/* ------------------------------------------------------------------------
 * Snapshots.
 * --------------------------------------------------------------------- */

/**
 * Host @p h as of snapshot @p s (snapshot.h: a record older than @p s has
 * zero rates and decayed averages there), in one of a few static copies.
 * @return the copy, valid for the next 7 calls; NULL when @p h is NULL.
 * Thread-safety: the test thread (static copies).
 */
static inline const struct dpmon_snap_host *
as_of(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h)
{
	static struct dpmon_snap_host view[8];
	static unsigned next;
	struct dpmon_snap_host *v = &view[next++ % 8];

	if (h == NULL)
		return NULL;
	*v = *h;
	for (int d = 0; d < DPMON_DIR_MAX; d++)
		v->dir[d] = *dpmon_snap_host_dir(s, h, d, &v->dir[d]);
	return v;
}

/** Host @p i of @p s in address order, as of @p s (as_of). */
static inline const struct dpmon_snap_host *
host_i(const struct dpmon_snapshot *s, uint32_t i)
{
	return as_of(s, dpmon_snap_host_at(s, i));
}

/** Host @p text's record in @p s as stored. @return it, or NULL: none. */
static inline const struct dpmon_snap_host *
find(const struct dpmon_snapshot *s, const char *text)
{
	struct dpmon_addr a;
	dpmon_addr_parse(text, &a);
	return dpmon_snapshot_find_host(s, &a);
}

/** Host @p text as of @p s (as_of). @return it, or NULL: none. */
static inline const struct dpmon_snap_host *
host(const struct dpmon_snapshot *s, const char *text)
{
	return as_of(s, find(s, text));
}

/* ------------------------------------------------------------------------
 * Tolerances.
 * --------------------------------------------------------------------- */

/* |x - want| within @p tol. */
#define NEAR(x, want, tol) CHECK(fabs((x) - (want)) <= (tol))

/* |x - want| within @p rel of |want| (or absolutely, near 0). */
#define NEAR_REL(x, want, rel) CHECK(fabs((x) - (want)) <= (rel)*fmax(fabs(want), 1e-300))

/* ------------------------------------------------------------------------
 * Set-up.
 * --------------------------------------------------------------------- */

/**
 * Start the EAL for @p prog (argv[0]), create the mbuf pool (1024
 * mbufs), fill @p cfg with the defaults and the reference subnets, and
 * build @p cls on them (one CHECK). Exits when the EAL does not start.
 * Thread-safety: the main thread, once, first.
 */
static inline void
worker_fixture_init(const char *prog, struct dpmon_classifier *cls, struct dpmon_config *cfg)
{
	uint32_t n;

	test_eal_init(prog);
	mp = rte_pktmbuf_pool_create("worker_fixture", 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	dpmon_config_defaults(cfg);
	cfg->subnets = subnets(&n);
	cfg->n_subnets = n;
	CHECK(dpmon_classifier_create(cls, "test", cfg->subnets, n, SOCKET_ID_ANY) == 0);
}

/**
 * Free @p cls, stop the EAL and print "NAME: N checks, N failed".
 * @return the exit status: 0 when every check passed, 1 otherwise.
 * Thread-safety: the main thread, once, last.
 */
static inline int
worker_fixture_finish(const char *name, struct dpmon_classifier *cls)
{
	dpmon_classifier_free(cls);
	return test_finish(name);
}

#endif /* DPMON_TEST_WORKER_FIXTURE_H */
