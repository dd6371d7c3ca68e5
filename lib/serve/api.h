/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.h — the HTTP API's semantics: (snapshot, blackhole list, method,
 * path, query, body) → (status, JSON body). No sockets here (http.c does
 * transport), so every endpoint is unit-testable on a hand-built snapshot.
 *
 * Endpoints (docs/api.md), all in one route table (api.c): GET /health,
 * /api/v1/summary, /api/v1/subnets, /api/v1/subnets/{prefix}/{len},
 * /api/v1/hosts, /api/v1/hosts/{address}, /api/v1/alerts,
 * /api/v1/alerts/{id}, /api/v1/history (api_snapshot.c, on a snapshot);
 * GET, POST /api/v1/blackholes and GET, DELETE /api/v1/blackholes/{address}
 * (api_blackholes.c, on the actions module: only when the request has one).
 * HEAD is answered like GET. (GET / and /metrics are not JSON: http.c
 * serves them.)
 * Errors: 404 unknown path, 400 bad parameter, 405 wrong method (with the
 * Allow header value), 503 before the first snapshot; every error body is
 * {"error": "..."}. /health answers 503 with its reasons when the
 * request's health verdict has any (dpmon_api_request.health).
 *
 * Query parameters reach the API through a lookup callback (so the API
 * does not depend on the transport's representation) plus, optionally, the
 * list of every key present in the request: a lookup alone cannot tell the
 * API about keys it does not ask for, and an unknown or repeated parameter
 * must be a 400, not silently ignored. http.c always passes the list; a
 * struct dpmon_api_query holds both for a transport or a test.
 */
#ifndef DPMON_API_H
#define DPMON_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "health.h"
#include "snapshot.h"

struct dpmon_actions;

/** Largest request body of POST /api/v1/blackholes, bytes (413 beyond). */
#define DPMON_API_BODY_MAX 4096

/** How a body becomes text (jansson's dump flags): compact, in key order. */
#define DPMON_API_JSON_FLAGS JSON_COMPACT

/** Most query parameters of one request (struct dpmon_api_query). */
#define DPMON_API_MAX_ARGS 16

/**
 * Query-string lookup supplied by the transport.
 * @return the decoded value of @p key, or NULL when absent. The string must
 *         stay valid for the duration of dpmon_api_handle.
 */
typedef const char *(*dpmon_api_arg_fn)(void *ctx, const char *key);

struct dpmon_api_response {
	unsigned status; /**< HTTP status code */
	/**
	 * The body as a tree, owned by the caller after return; NULL when it
	 * comes as @c text. At most one of the two is set; both are NULL only
	 * when even the 500 body could not be allocated.
	 */
	json_t *body;
	/**
	 * The body as compact JSON text (malloc'd, NUL-terminated, owned by the
	 * caller: free()), for the listings that are written one element at a
	 * time so their memory stays that of the text (the subnet and host
	 * listings, the history); NULL when it comes as @c body.
	 */
	char *text;
	size_t text_len;   /**< bytes of @c text without the NUL */
	const char *allow; /**< value of the Allow header for 405, else NULL */
	/**
	 * The body was rendered from the request's snapshot (or its absence),
	 * so a 200 may carry that snapshot's ETag; false for the blackhole
	 * list, which is not part of a snapshot.
	 */
	bool of_snapshot;
};

/** One request, everything the API may read (dpmon_api_serve). */
struct dpmon_api_request {
	/** Current snapshot, or NULL before the first merge (503 for the
	 * data endpoints; /health still answers). */
	const struct dpmon_snapshot *snap;
	/** The blackhole list; NULL: its endpoints do not exist (404). Not owned. */
	struct dpmon_actions *actions;
	const char *method;   /**< "GET", "HEAD", "POST", ...; NULL is a 405 */
	const char *path;     /**< decoded, without the query string; NULL as "" */
	dpmon_api_arg_fn arg; /**< query lookup, or NULL (no parameters) */
	void *arg_ctx;        /**< @c arg's context */
	/**
	 * NULL-terminated list of the keys in the query string, in request
	 * order, repeats included; NULL = unknown: the checks below skipped.
	 * A listed key whose lookup returns NULL (as in "?limit") counts as
	 * present with the empty value. A key not accepted by the endpoint
	 * answers 400 {"error":"unknown parameter 'foo'"}; a repeated key
	 * 400 {"error":"duplicate parameter 'limit'"}.
	 */
	const char *const *arg_keys;
	/** The request body, @c body_len bytes, not NUL-terminated; NULL
	 * when there is none. */
	const char *body;
	size_t body_len; /**< bytes; the transport answers 413 beyond DPMON_API_BODY_MAX */
	/**
	 * The health verdict at the time of the request (health.h), for
	 * /health and the summary's "health" object; NULL: healthy (not
	 * checked). With a reason, /health answers 503 and the summary's
	 * answer is not "of_snapshot" (no ETag: the verdict is not part of
	 * the snapshot).
	 */
	const struct dpmon_health_verdict *health;
};

/**
 * Answer one request.
 * @param req  the request (see struct dpmon_api_request).
 * @param out  filled in; the caller json_decref()s out->body and free()s
 *             out->text.
 * @return 0, or -ENOMEM when the body could not be built (out is then a
 *         500; out->body is NULL only if even the error body could not be
 *         allocated).
 * Thread-safety: any thread; reads only the snapshot, and the blackhole
 * list under its own lock.
 */
int dpmon_api_serve(const struct dpmon_api_request *req, struct dpmon_api_response *out);

/**
 * Answer one request on a snapshot; same as dpmon_api_handle_keys with
 * @p arg_keys NULL, i.e. without the unknown/duplicate-parameter checks.
 * Prefer the former in a transport that can list the query keys.
 * @param snap    current snapshot, or NULL before the first merge (503 for
 *                data endpoints; /health still answers).
 * @param method  HTTP method ("GET", "HEAD", ...); HEAD is answered like GET.
 * @param path    decoded path without the query string ("/api/v1/summary").
 * @param arg     query lookup; @param arg_ctx its context.
 * @param out     filled in as by dpmon_api_serve.
 * @return as dpmon_api_serve.
 * Thread-safety: any thread; reads only @p snap.
 */
int dpmon_api_handle(const struct dpmon_snapshot *snap, const char *method, const char *path,
		     dpmon_api_arg_fn arg, void *arg_ctx, struct dpmon_api_response *out);

/**
 * Answer one request on a snapshot, knowing every query key present
 * (@p arg_keys as in struct dpmon_api_request); without a blackhole list.
 * Other parameters and the return value as dpmon_api_handle.
 * Thread-safety: any thread; reads only @p snap.
 */
int dpmon_api_handle_keys(const struct dpmon_snapshot *snap, const char *method, const char *path,
			  dpmon_api_arg_fn arg, void *arg_ctx, const char *const *arg_keys,
			  struct dpmon_api_response *out);

/** What a transport must know of a path before it reads the request. */
struct dpmon_api_resource {
	/**
	 * Every method of the resource, its collection and items together
	 * ("GET, HEAD, POST, DELETE"), for a CORS preflight's
	 * Access-Control-Allow-Methods; "GET, HEAD" for an unknown path.
	 */
	const char *methods;
	/**
	 * The resource has a method that changes state (POST, DELETE): a
	 * request on it, whatever its method, is read in full before it is
	 * answered (its body, up to DPMON_API_BODY_MAX bytes, goes in
	 * dpmon_api_request.body), and its answers are never cached.
	 */
	bool changes_state;
};

/**
 * Look up the resource of @p path (decoded, trailing slashes ignored).
 * @param has_actions  whether the requests will carry a blackhole list
 *                     (without one, its paths are unknown).
 * @param out          filled in, also for an unknown path.
 * @return true when @p path names an endpoint.
 * Thread-safety: any thread (reads only the constant route table).
 */
bool dpmon_api_resource_of(const char *path, bool has_actions, struct dpmon_api_resource *out);

/**
 * The query parameters of one request: a transport (or a test) adds each
 * key and value as it finds them, then passes dpmon_api_query_lookup with
 * the query as its context, and @c keys as the key list.
 */
struct dpmon_api_query {
	const char *keys[DPMON_API_MAX_ARGS + 1]; /**< NULL-terminated, request order */
	const char *values[DPMON_API_MAX_ARGS];   /**< NULL for "?key" without '=' */
	unsigned n;                               /**< keys so far */
	bool overflow;                            /**< more than DPMON_API_MAX_ARGS were added */
};

/**
 * Append @p key with @p value (NULL: no '=') to @p q, which must start
 * zeroed. Neither string is copied: both must outlive the request.
 * @return 0, or -E2BIG when @p q already holds DPMON_API_MAX_ARGS keys
 *         (then q->overflow is set and nothing is added).
 * Thread-safety: any thread, one query per thread.
 */
int dpmon_api_query_add(struct dpmon_api_query *q, const char *key, const char *value);

/**
 * The dpmon_api_arg_fn of a struct dpmon_api_query (@p ctx): the value of
 * the first @p key, or NULL when absent or without a value.
 * Thread-safety: any thread.
 */
const char *dpmon_api_query_lookup(void *ctx, const char *key);

/**
 * JSON of one direction: {"packets","bytes","pps","bps","tcp":{...},...}.
 * @return a new object, or NULL when out of memory. Any thread.
 */
json_t *dpmon_api_dir_json(const struct dpmon_dir_stats *d);

/**
 * Build in @p next the host orders (GET /api/v1/hosts rankings) that were
 * asked for in @p prev, so that the first listing of a new snapshot does
 * not wait for its order (~5 ms at 64 k hosts, per ranking). An order
 * that cannot be built (no memory) is left to the first reader.
 * Thread-safety: any thread holding references to both snapshots; the
 * main lcore calls it right after publishing @p next.
 */
void dpmon_api_prebuild_orders(const struct dpmon_snapshot *prev,
			       const struct dpmon_snapshot *next);

#endif /* DPMON_API_H */
