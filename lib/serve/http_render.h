/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_render.h — the HTTP server's heavy answers and large answers: a
 * request handed to the pool (http_pool.h) is suspended while a pool
 * thread renders its answer, sharing the render of the same cacheable
 * answer (http_inflight.h), then taken up again by the loop thread; an
 * answer over DPMON_HTTP_HOLD_SMALL bytes is counted until libmicrohttpd
 * drops it (http_hold.h), and past the bound the client gets a 503. The
 * owner (http.c) says how a job's answer is rendered: the render function
 * it passes in; this file never calls back into it otherwise. Private to
 * lib/serve (http.c).
 */
#ifndef DPMON_HTTP_RENDER_H
#define DPMON_HTTP_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "api.h"
#include "http_cache.h"
#include "http_hold.h"
#include "http_inflight.h"
#include "http_pool.h"
#include "http_reply.h"

struct http_render_job;

/* Renders job @p j's answer into j->r (@p ctx: the owner's). Called on a
 * pool thread. */
typedef void (*http_render_fn)(void *ctx, struct http_render_job *j);

/* A request whose answer a pool thread renders; kept in libmicrohttpd's
 * con_cls from its suspension to its end (the owner frees it then). */
struct http_render_job {
	struct http_job pj; /* first: the pool's link */
	struct http_render *rd;
	struct MHD_Connection *c;
	const char *url, *method; /* libmicrohttpd's: valid while the request lasts */
	struct dpmon_api_query q; /* its strings too */
	int slot;                 /* http_cache_slot_of, or -1 */
	size_t key_len;           /* http_cache_query_key's, 0 = none */
	char key[QCACHE_KEY_MAX];
	struct reply r; /* the answer, once run */
};

/* The pool, the renders in progress and the bytes of large answers held. */
struct http_render {
	struct http_pool pool;         /* renders the heavy answers off the loop thread */
	struct http_inflight inflight; /* those being rendered, shared by their askers */
	struct http_hold hold;         /* bytes of large answers being sent; 503 past it */
	uint64_t busy;                 /* heavy requests refused: the pool's queue was full */
	http_render_fn render;
	void *ctx;
};

/**
 * Start @p rd (zeroed by the caller): the hold for up to @p n_addrs client
 * addresses at once, the renders in progress, the pool's threads; jobs
 * are rendered by @p render with @p ctx.
 * @return 0 or a negative errno; on error as on success the caller calls
 *         http_render_stop and http_render_free.
 * Thread-safety: the thread that starts the server.
 */
int http_render_init(struct http_render *rd, uint32_t n_addrs, http_render_fn render, void *ctx);

/**
 * Stop the pool: every job still waiting is cancelled (a 503), every job
 * running ends; no connection stays suspended. Safe on a zeroed @p rd.
 * Thread-safety: the thread that stops the server, before libmicrohttpd
 * stops.
 */
void http_render_stop(struct http_render *rd);

/**
 * Free what @p rd holds, once libmicrohttpd stopped (every response
 * destroyed). Safe on a zeroed @p rd. Thread-safety: the thread that
 * stops the server.
 */
void http_render_free(struct http_render *rd);

/**
 * Hand heavy request @p c (@p method on @p url with query @p q, its cache
 * slot @p slot and query key @p key of @p key_len bytes; -1 and 0 = none)
 * to the pool: suspend it until its answer is rendered; *@p con_cls then
 * holds its struct http_render_job (malloc'd). A client whose unread
 * answers hold too much already, or no memory, gets its answer at once,
 * unrendered, in @p r; a full queue answers 503 too, counted in busy.
 * @return true when @p c was suspended (a job will answer it), false when
 *         the caller sends @p r now.
 * Thread-safety: the loop thread.
 */
bool http_render_defer(struct http_render *rd, struct MHD_Connection *c, const char *url,
		       const char *method, const struct dpmon_api_query *q, int slot,
		       const char *key, size_t key_len, void **con_cls, struct reply *r);

/**
 * Take the answer job @p j rendered (or its refusal) into @p r; @p j no
 * longer holds it. Thread-safety: the loop thread, once @p c was resumed.
 */
void http_render_take(struct http_render_job *j, struct reply *r);

/**
 * A response for the large body of @p r (over DPMON_HTTP_HOLD_SMALL bytes)
 * to client @p c, counted in the hold until libmicrohttpd drops it; the
 * body is sent from where it is, never copied.
 * @return the response, or NULL with @p r turned into a 503 when the
 *         client or all clients hold too much, or NULL without memory
 *         (@p r's body then still its own).
 * Thread-safety: the loop thread.
 */
struct MHD_Response *http_render_held_response(struct http_render *rd, struct MHD_Connection *c,
					       struct reply *r);

#endif
