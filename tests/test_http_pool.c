/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_http_pool.c — the HTTP render pool (http_pool.h) and the renders in
 * progress (http_inflight.h): every job run once, the queue's bound
 * (-EBUSY), the stop cancelling what still waits while the running jobs
 * end; a second request for an answer being rendered waits for it, and
 * each render hands over exactly its own waiters.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "http_inflight.h"
#include "http_pool.h"

#define JOBS 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool released;
static unsigned ran, cancelled, runs_of[JOBS + HTTP_POOL_QUEUE + HTTP_POOL_THREADS];

struct test_job {
	struct http_job j; /* first */
	unsigned id;
	bool block; /* wait until released */
};

static void
run(struct http_job *pj)
{
	struct test_job *t = (struct test_job *)pj;

	pthread_mutex_lock(&lock);
	while (t->block && !released)
		pthread_cond_wait(&cond, &lock);
	ran++;
	runs_of[t->id]++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* The first cancellation releases the blocked jobs: the queue is empty by then. */
static void
cancel(struct http_job *pj)
{
	struct test_job *t = (struct test_job *)pj;

	pthread_mutex_lock(&lock);
	cancelled++;
	runs_of[t->id]++;
	released = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static struct test_job jobs[JOBS + HTTP_POOL_QUEUE + HTTP_POOL_THREADS];

static void
test_every_job_once(void)
{
	struct http_pool p;

	CHECK(http_pool_start(&p) == 0);
	for (unsigned i = 0; i < JOBS; i++) {
		jobs[i] = (struct test_job){.j = {.run = run, .cancel = cancel}, .id = i};
		while (http_pool_submit(&p, &jobs[i].j) == -EBUSY)
			; /* cannot happen below HTTP_POOL_QUEUE jobs in flight */
	}
	pthread_mutex_lock(&lock);
	while (ran < JOBS)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	http_pool_stop(&p);
	CHECK_EQ_U64(ran, JOBS);
	CHECK_EQ_U64(cancelled, 0);
	for (unsigned i = 0; i < JOBS; i++)
		CHECK_EQ_U64(runs_of[i], 1);
	CHECK(!p.started);
}

static void
test_bound_and_stop(void)
{
	struct http_pool p;
	unsigned n = HTTP_POOL_THREADS + HTTP_POOL_QUEUE;

	ran = cancelled = 0;
	released = false;
	memset(runs_of, 0, sizeof(runs_of));
	CHECK(http_pool_start(&p) == 0);
	/* Every thread blocked in a job, then the queue filled. */
	for (unsigned i = 0; i < HTTP_POOL_THREADS; i++) {
		jobs[i] = (struct test_job){
			.j = {.run = run, .cancel = cancel}, .id = i, .block = true};
		CHECK(http_pool_submit(&p, &jobs[i].j) == 0);
	}
	pthread_mutex_lock(&p.lock);
	while (p.queued > 0) { /* both taken up */
		pthread_mutex_unlock(&p.lock);
		sched_yield();
		pthread_mutex_lock(&p.lock);
	}
	pthread_mutex_unlock(&p.lock);
	for (unsigned i = HTTP_POOL_THREADS; i < n; i++) {
		jobs[i] = (struct test_job){.j = {.run = run, .cancel = cancel}, .id = i};
		CHECK(http_pool_submit(&p, &jobs[i].j) == 0);
	}
	jobs[n] = (struct test_job){.j = {.run = run, .cancel = cancel}, .id = n};
	CHECK(http_pool_submit(&p, &jobs[n].j) == -EBUSY);
	/* The stop cancels the waiting ones; the blocked ones end. */
	http_pool_stop(&p);
	CHECK_EQ_U64(ran, HTTP_POOL_THREADS);
	CHECK_EQ_U64(cancelled, HTTP_POOL_QUEUE);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ_U64(runs_of[i], 1);
	CHECK_EQ_U64(runs_of[n], 0);
}

static void
test_inflight(void)
{
	struct http_inflight f;
	struct http_job a1, a2, a3, b1, c1;
	bool claimed;

	CHECK(http_inflight_init(&f) == 0);
	CHECK(!http_inflight_join(&f, -1, "a", 1, &a1, &claimed) && claimed);
	CHECK(http_inflight_join(&f, -1, "a", 1, &a2, &claimed) && !claimed);
	CHECK(http_inflight_join(&f, -1, "a", 1, &a3, &claimed) && !claimed);
	/* An endpoint slot is another key than a query's. */
	CHECK(!http_inflight_join(&f, CACHE_HISTORY, "", 0, &b1, &claimed) && claimed);
	/* Every entry busy: rendered without sharing. */
	CHECK(!http_inflight_join(&f, -1, "c", 1, &c1, &claimed) && !claimed);
	/* Each render hands over its own waiters, newest first. */
	CHECK(http_inflight_done(&f, CACHE_HISTORY, "", 0) == NULL);
	CHECK(http_inflight_done(&f, -1, "a", 1) == &a3);
	CHECK(a3.next == &a2 && a2.next == NULL);
	CHECK(http_inflight_done(&f, -1, "a", 1) == NULL);
	CHECK(!http_inflight_join(&f, -1, "a", 1, &a1, &claimed) && claimed);
	http_inflight_destroy(&f);
}

int
main(void)
{
	test_every_job_once();
	test_bound_and_stop();
	test_inflight();
	return check_finish("test_http_pool");
}
