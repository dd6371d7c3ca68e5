/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_pool.h — a few threads that render the HTTP server's heavy answers
 * off its event loop thread: a bounded FIFO of jobs, each run once by one
 * of the threads. It knows nothing of HTTP: a job is a function and its
 * link. Private to lib/serve (http_render.c).
 */
#ifndef DPMON_HTTP_POOL_H
#define DPMON_HTTP_POOL_H

#include <pthread.h>
#include <stdbool.h>

/** Threads of the pool. */
#define HTTP_POOL_THREADS 2
/** The threads' nice value: the main lcore (merge) and the HTTP loop thread
 *  keep the process's, and share its CPU with these threads. */
#define HTTP_POOL_NICE    10
/** Jobs waiting at most; a job past it is refused (the caller answers 503). */
#define HTTP_POOL_QUEUE   1024

/* One piece of work; the submitter owns it and keeps it alive until run
 * or cancel has returned (each tells the submitter it is done). */
struct http_job {
	struct http_job *next;
	void (*run)(struct http_job *j);
	void (*cancel)(struct http_job *j); /* instead of run, when the pool stops first */
};

/* The threads and their queue. */
struct http_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct http_job *head, *tail; /* waiting jobs, oldest first */
	unsigned queued;
	bool started; /* the lock and condition variable exist */
	bool stopping;
	unsigned n_threads;
	pthread_t threads[HTTP_POOL_THREADS];
};

/**
 * Start HTTP_POOL_THREADS threads (named "dpmon-http-wN") on @p p.
 * @return 0, or a negative errno (the threads started are stopped again).
 * Thread-safety: the thread that starts the server.
 */
int http_pool_start(struct http_pool *p);

/**
 * Queue @p j; one of the threads runs j->run(j) later.
 * @return 0, or -EBUSY when HTTP_POOL_QUEUE jobs are waiting, or -ESHUTDOWN
 *         once the pool is stopping (@p j is then not run).
 * Thread-safety: any thread.
 */
int http_pool_submit(struct http_pool *p, struct http_job *j);

/**
 * Cancel every job still waiting (j->cancel, on the calling thread), let
 * the threads finish the jobs they run, stop them and wait for them, and
 * free @p p's lock. A pool that never started is ignored.
 * Thread-safety: the thread that started it, once.
 */
void http_pool_stop(struct http_pool *p);

#endif /* DPMON_HTTP_POOL_H */
