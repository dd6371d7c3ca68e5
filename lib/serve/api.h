/*
 * api.h — the HTTP API's semantics: (snapshot, method, path, query) →
 * (status, JSON body). No sockets here (http.c does transport), so every
 * endpoint is unit-testable on a hand-built snapshot.
 *
 * Endpoints (docs/api.md): GET /health, /api/v1/summary, /api/v1/subnets,
 * /api/v1/subnets/{prefix}/{len}, /api/v1/hosts, /api/v1/hosts/{address},
 * /api/v1/alerts, /api/v1/alerts/{id}, /api/v1/history; GET, POST
 * /api/v1/blackholes and GET, DELETE /api/v1/blackholes/{address}
 * (dpmon_api_blackholes, on the actions module rather than a snapshot).
 * (GET / and /metrics are not JSON: http.c serves them.)
 * Errors: 404 unknown path, 400 bad parameter, 405 wrong method (with the
 * Allow header value), 503 before the first snapshot; every error body is
 * {"error": "..."}.
 *
 * Query parameters reach the API through a lookup callback (so the API
 * does not depend on the transport's representation) plus, optionally, the
 * list of every key present in the request: a lookup alone cannot tell the
 * API about keys it does not ask for, and an unknown or repeated parameter
 * must be a 400, not silently ignored. http.c always passes the list.
 */
#ifndef DPMON_API_H
#define DPMON_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "snapshot.h"

struct dpmon_actions;

/** Largest request body of POST /api/v1/blackholes, bytes (413 beyond). */
#define DPMON_API_BODY_MAX 4096

/**
 * Query-string lookup supplied by the transport.
 * @return the decoded value of @p key, or NULL when absent. The string must
 *         stay valid for the duration of dpmon_api_handle.
 */
typedef const char *(*dpmon_api_arg_fn)(void *ctx, const char *key);

struct dpmon_api_response {
	unsigned status;   /**< HTTP status code */
	json_t *body;      /**< owned by the caller after return; never NULL */
	const char *allow; /**< value of the Allow header for 405, else NULL */
};

/**
 * Answer one request; same as dpmon_api_handle_keys with @p arg_keys NULL,
 * i.e. without the unknown/duplicate-parameter checks. Prefer the former in
 * a transport that can list the query keys.
 * @param snap    current snapshot, or NULL before the first merge (503 for
 *                data endpoints; /health still answers).
 * @param method  HTTP method ("GET", "HEAD", ...); HEAD is answered like GET.
 * @param path    decoded path without the query string ("/api/v1/summary").
 * @param arg     query lookup; @param arg_ctx its context.
 * @param out     filled in; the caller json_decref()s out->body.
 * @return 0, or -ENOMEM when the body could not be built (out is then a 500;
 *         out->body is NULL only if even the error body could not be
 *         allocated).
 * Thread-safety: any thread; reads only @p snap.
 */
int dpmon_api_handle(const struct dpmon_snapshot *snap, const char *method,
		     const char *path, dpmon_api_arg_fn arg, void *arg_ctx,
		     struct dpmon_api_response *out);

/**
 * Answer one request, knowing every query key present.
 * @param arg_keys  NULL-terminated list of the keys in the query string, in
 *                  request order, repeats included (NULL = unknown: checks
 *                  skipped). A listed key whose lookup returns NULL (as in
 *                  "?limit") counts as present with the empty value.
 *                  A key not accepted by the endpoint answers 400
 *                  {"error":"unknown parameter 'foo'"}; a repeated key 400
 *                  {"error":"duplicate parameter 'limit'"}.
 * Other parameters and the return value as dpmon_api_handle.
 */
int dpmon_api_handle_keys(const struct dpmon_snapshot *snap, const char *method,
			  const char *path, dpmon_api_arg_fn arg, void *arg_ctx,
			  const char *const *arg_keys, struct dpmon_api_response *out);

/** True when @p path is /api/v1/blackholes or below it (trailing slashes ignored). */
bool dpmon_api_is_blackholes(const char *path);

/**
 * Answer a request on the blackhole list of @p a (docs/api.md):
 * GET|HEAD /api/v1/blackholes → 200 {"blackholes": [entry...]};
 * POST /api/v1/blackholes with body {"address": "A"} → 201 entry (200 when
 * A was already manually blackholed), 400 for a body that is not that
 * object, an invalid address or one outside every monitored subnet, 507 at
 * DPMON_MAX_BLACKHOLES; GET|HEAD /api/v1/blackholes/A → 200 entry or 404;
 * DELETE /api/v1/blackholes/A → 200 {"address": A, "removed": bool}
 * (idempotent), 400 for an invalid address. Other methods 405 with Allow;
 * any query parameter 400.
 * @param path      decoded path, dpmon_api_is_blackholes(path) true.
 * @param arg_keys  the query keys present (NULL-terminated), or NULL.
 * @param body      the request body (@p body_len bytes, not NUL-terminated).
 * @param out       filled in; the caller json_decref()s out->body.
 * @return 0, or -ENOMEM (out is then a 500).
 * Thread-safety: any thread (the list has its own lock).
 */
int dpmon_api_blackholes(struct dpmon_actions *a, const char *method, const char *path,
			 const char *const *arg_keys, const char *body, size_t body_len,
			 struct dpmon_api_response *out);

/** JSON of one direction: {"packets","bytes","pps","bps","tcp":{...},...}. */
json_t *dpmon_api_dir_json(const struct dpmon_dir_stats *d);

#endif /* DPMON_API_H */
