/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_inflight.c — renders in progress and the jobs waiting for them
 * (http_inflight.h): a handful of entries (one per pool thread) under a
 * mutex, looked up by the cache key. Outside the data path.
 */
#include "http_inflight.h"

#include <string.h>

int
http_inflight_init(struct http_inflight *f)
{
	*f = (struct http_inflight){.r = {{.busy = false}}};
	return -pthread_mutex_init(&f->lock, NULL);
}

void
http_inflight_destroy(struct http_inflight *f)
{
	pthread_mutex_destroy(&f->lock);
}

static struct inflight *
find(struct http_inflight *f, int slot, const char *key, size_t key_len)
{
	for (unsigned i = 0; i < HTTP_POOL_THREADS; i++) {
		struct inflight *e = &f->r[i];

		if (e->busy && e->slot == slot && e->key_len == key_len &&
		    memcmp(e->key, key, key_len) == 0)
			return e;
	}
	return NULL;
}

bool
http_inflight_join(struct http_inflight *f, int slot, const char *key, size_t key_len,
		   struct http_job *j, bool *claimed)
{
	struct inflight *e;

	*claimed = false;
	pthread_mutex_lock(&f->lock);
	if ((e = find(f, slot, key, key_len)) != NULL) {
		j->next = e->waiting;
		e->waiting = j;
		pthread_mutex_unlock(&f->lock);
		return true;
	}
	for (unsigned i = 0; i < HTTP_POOL_THREADS && !*claimed; i++) {
		e = &f->r[i];
		if (!e->busy) {
			*e = (struct inflight){.busy = true, .slot = slot, .key_len = key_len};
			memcpy(e->key, key, key_len);
			*claimed = true;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return false;
}

struct http_job *
http_inflight_done(struct http_inflight *f, int slot, const char *key, size_t key_len)
{
	struct inflight *e;
	struct http_job *w = NULL;

	pthread_mutex_lock(&f->lock);
	if ((e = find(f, slot, key, key_len)) != NULL) {
		w = e->waiting;
		e->busy = false;
		e->waiting = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	return w;
}
