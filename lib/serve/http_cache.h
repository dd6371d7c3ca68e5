/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_cache.h — the HTTP server's two response caches, per snapshot: the
 * parameter-less endpoints (/api/v1/summary, /api/v1/subnets, /health,
 * /metrics, /api/v1/history), and the last QCACHE_SLOTS distinct
 * /api/v1/hosts queries.
 * They hold rendered text only (refcounted struct body, handed to
 * libmicrohttpd without a copy), never a snapshot; docs/architecture.md
 * ("HTTP") says what is cached and when. A leaf of http.c: it renders
 * nothing and knows no connection. Private to lib/serve.
 */
#ifndef DPMON_HTTP_CACHE_H
#define DPMON_HTTP_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api.h"

/* A rendered response body shared by the cache and the responses sending it:
 * the text the renderer allocated (json_dumps, dpmon_prom_render_limits),
 * taken over as it is, never copied. */
struct body {
	unsigned refs; /* __atomic builtins */
	size_t len;
	char *text; /* malloc'd, NUL-terminated; freed with the last reference */
};

enum cached {
	CACHE_SUMMARY,
	CACHE_SUBNETS,
	CACHE_HEALTH,
	CACHE_METRICS,
	CACHE_HISTORY,
	CACHE_MAX
};

/* The body of one endpoint for the snapshot numbered @c seq (NULL = none). */
struct cache_slot {
	uint64_t seq;
	struct body *body;
};

/* Slots of the query cache (/api/v1/hosts with its parameters). */
#define QCACHE_SLOTS       16
#define QCACHE_KEY_MAX     256 /* longer queries are not cached */
/* Bytes; larger bodies are not cached. The largest page of hosts
 * (limit=10000, about 1 KiB a host) fits, so clients pulling it share one
 * body per snapshot. */
#define QCACHE_BODY_MAX    (16u << 20)
/* Bytes; only queries whose body was at most this are rendered ahead for
 * the next snapshot (dpmon_http_prewarm runs on the main lcore). */
#define QCACHE_PREWARM_MAX (1u << 20)

/* The body of /api/v1/hosts with the query @c key for snapshot @c seq. */
struct query_slot {
	struct cache_slot c;
	size_t key_len;
	char key[QCACHE_KEY_MAX];
};

/* Both caches. */
struct http_cache {
	pthread_mutex_t lock; /* guards slot[] and query[], held for a pointer swap */
	struct cache_slot slot[CACHE_MAX];
	struct query_slot query[QCACHE_SLOTS];
	unsigned query_next; /* the slot to reuse when none is free or stale */
};

/** Whether @p method is GET or HEAD (the methods answered from a cache). */
static inline bool
http_is_read_method(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

/**
 * Initialise @p c, empty. Thread-safety: the thread that starts the server.
 */
void http_cache_init(struct http_cache *c);

/**
 * Drop every body @p c holds (a response still sending one keeps it alive)
 * and destroy its lock. Thread-safety: the thread that stops the server,
 * after the last request.
 */
void http_cache_destroy(struct http_cache *c);

/**
 * @return a body holding @p text (@p len bytes, malloc'd, NUL-terminated,
 *         taken over) with one reference, or NULL without memory (@p text
 *         is then still the caller's).
 * Thread-safety: any thread.
 */
struct body *http_body_new(char *text, size_t len);

/**
 * Take one more reference to @p b (the caller holds one).
 * Thread-safety: any thread.
 */
void http_body_ref(struct body *b);

/**
 * Drop a reference to @p b; the last one frees it. NULL is ignored.
 * Thread-safety: any thread.
 */
void http_body_put(struct body *b);

/**
 * libmicrohttpd's free callback for a response sending body @p cls: drops
 * the response's reference. Thread-safety: the HTTP thread.
 */
void http_body_free_cb(void *cls);

/**
 * @return the endpoint slot (enum cached) of a GET or HEAD of @p url with
 *         no parameters (@p q), or -1. Only the exact paths: variants
 *         (trailing slash) are not cached.
 * Thread-safety: any thread (no state).
 */
int http_cache_slot_of(const char *method, const char *url, const struct dpmon_api_query *q);

/**
 * The query cache's key of the GET or HEAD @p q of /api/v1/hosts into
 * @p key: each parameter in request order as "<len>:<key>=<len>:<value>;"
 * ("-" for a key without '='), so two different queries never share a key.
 * @return its length in bytes, or 0 when the request is not cached
 *         (another path or method, or a key longer than QCACHE_KEY_MAX).
 * Thread-safety: any thread (no state).
 */
size_t http_cache_query_key(const char *method, const char *url, const struct dpmon_api_query *q,
			    char key[QCACHE_KEY_MAX]);

/**
 * @return a reference to the body cached for snapshot @p seq in endpoint
 *         slot @p i, or (i < 0) for the query @p key of @p key_len bytes;
 *         NULL when there is none.
 * Thread-safety: any thread (takes the cache's lock).
 */
struct body *http_cache_get(struct http_cache *c, int i, const char *key, size_t key_len,
			    uint64_t seq);

/**
 * Keep @p b (the caller keeps its own reference) as the body for snapshot
 * @p seq of endpoint slot @p i, or (i < 0) of the query @p key: its own
 * slot, else an empty one or one of an older snapshot, else the next in
 * turn. A slot holding a newer snapshot's body is left alone.
 * Thread-safety: any thread (takes the cache's lock).
 */
void http_cache_put(struct http_cache *c, int i, const char *key, size_t key_len, uint64_t seq,
		    struct body *b);

/**
 * Copy the keys of the queries cached for snapshot @p seq with a body of
 * at most QCACHE_PREWARM_MAX bytes into @p keys and
 * their lengths in bytes into @p lens. @return how many (at most
 * QCACHE_SLOTS). Thread-safety: any thread (takes the cache's lock).
 */
unsigned http_cache_queries_of(struct http_cache *c, uint64_t seq,
			       char keys[QCACHE_SLOTS][QCACHE_KEY_MAX], size_t lens[QCACHE_SLOTS]);

/**
 * The query of cache key @p key (@p len bytes, http_cache_query_key's
 * form) into @p q, its strings copied into @p buf (QCACHE_KEY_MAX bytes).
 * @return false on a malformed key (never made by http_cache_query_key).
 * Thread-safety: any thread (no state).
 */
bool http_cache_query_of_key(const char *key, size_t len, char *buf, struct dpmon_api_query *q);

#endif /* DPMON_HTTP_CACHE_H */
