/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_inflight.h — the cacheable answers being rendered now, each with
 * the jobs that asked for the same answer meanwhile: they share the one
 * render instead of each rendering it again (a render can outlast a
 * snapshot, so the response cache alone would not catch them). Keyed as
 * the response caches are (http_cache.h). A leaf of http_render.c; private to
 * lib/serve.
 */
#ifndef DPMON_HTTP_INFLIGHT_H
#define DPMON_HTTP_INFLIGHT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "http_cache.h"
#include "http_pool.h"

/* One render in progress: its cache key and who waits for it. */
struct inflight {
	bool busy;
	int slot; /* endpoint slot (enum cached), or -1 for a query */
	size_t key_len;
	char key[QCACHE_KEY_MAX];
	struct http_job *waiting; /* linked through next, newest first */
};

/* The renders in progress: at most one per pool thread. */
struct http_inflight {
	pthread_mutex_t lock;
	struct inflight r[HTTP_POOL_THREADS];
};

/**
 * Initialise @p f, empty. @return 0 or a negative errno.
 * Thread-safety: the thread that starts the server.
 */
int http_inflight_init(struct http_inflight *f);

/** Destroy @p f's lock. Thread-safety: the thread that stops the server. */
void http_inflight_destroy(struct http_inflight *f);

/**
 * The answer of endpoint slot @p slot, or (slot < 0) of the query @p key
 * (@p key_len bytes), is wanted by job @p j: when a pool thread renders it
 * now, @p j waits for that render (http_inflight_done hands it over);
 * else the caller is to render it, now marked in progress.
 * @return true when @p j waits; false when the caller renders (or, with
 *         every entry busy, renders without sharing: @p claimed false).
 * Thread-safety: the pool threads.
 */
bool http_inflight_join(struct http_inflight *f, int slot, const char *key, size_t key_len,
			struct http_job *j, bool *claimed);

/**
 * The render of @p slot / @p key that http_inflight_join left to the
 * caller (claimed) is done: end it. @return the jobs that waited for it
 * (linked through next), each now the caller's to answer.
 * Thread-safety: the pool threads.
 */
struct http_job *http_inflight_done(struct http_inflight *f, int slot, const char *key,
				    size_t key_len);

#endif /* DPMON_HTTP_INFLIGHT_H */
