/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http.c — the HTTP transport: libmicrohttpd in front of api.c, prom.c
 * and the page. The guard (http_guard.c) owns the listening socket, runs
 * libmicrohttpd from its own thread and admits connections; every request
 * is handled in that thread, in these steps (the access handler):
 *
 *   framing check (later requests of a connection; the guard checked the
 *   first) → head limits (the guard's again: under TLS it cannot read the
 *   first head) → access policy (http_access.c: Host; Origin and
 *   Content-Type of a request that changes state; 403/415) → bearer token
 *   (http_token.c; 401) → a resource that changes state? read its body first
 *   (http_upload.c) → CORS preflight? (http_cors.c) → collect the query →
 *   from a response cache (http_cache.c), else /metrics, /, or the JSON
 *   API on the current snapshot → If-None-Match → queue the response.
 *
 * A heavy answer missing from the caches (is_heavy: the collections that
 * grow with hosts or subnets, on a snapshot past a couple of thousand hosts
 * or 256 subnets) is rendered by the pool while libmicrohttpd keeps its
 * connection suspended, so /health and the summary never wait behind it;
 * requests for an answer being rendered share that render. Answers over
 * 64 KiB are counted until sent, per client address and in all: past the
 * bound, a 503 (both in http_render.c).
 *
 * GET and HEAD are answered on the access handler's second call, once the
 * whole request was read (keep-alive); any other method on a snapshot
 * resource is refused with 405 before its body is read. A snapshot
 * reference is held only while an answer is rendered, never while the
 * client reads it. A "%00" in the raw target is refused (400), since it
 * would end the decoded path or a parameter early.
 * docs/architecture.md ("HTTP") and docs/operations.md ("HTTP limits")
 * describe the caches, the ETags, CORS and the limits.
 *
 * The only state is the struct dpmon_http the caller owns; libmicrohttpd's
 * messages go to the journal (log.h).
 */
#include "http.h"
#include "http_access.h"
#include "http_cache.h"
#include "http_checks.h"
#include "http_cors.h"
#include "http_guard.h"
#include "http_head.h"
#include "http_render.h"
#include "http_reply.h"
#include "http_tls.h"
#include "http_token.h"
#include "http_upload.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api.h"
#include "health.h"
#include "heartbeat.h"
#include "page.h"
#include "prom.h"

/* Idleness while a request body is read or a response is written; the
 * wait for a request head is bounded by the guard (http_guard.h). */
#define HTTP_TIMEOUT_S 10
#define ECHO_MAX       64 /* client bytes quoted in an error, as in api.c */

struct dpmon_http {
	struct MHD_Daemon *daemon;
	struct dpmon_http_guard *guard; /* listening socket, admission, the loop thread */
	struct dpmon_actions *actions;  /* the blackhole list; NULL = none */
	struct http_cache cache;        /* the rendered answers, per snapshot */
	struct dpmon_snap_store *store;
	struct http_cors cors;     /* the allowed origins */
	struct http_access access; /* Host, Origin and Content-Type policy */
	struct http_tokens tokens; /* bearer tokens; 401 */
	struct dpmon_tls_pem tls;  /* certificate and key; cert NULL = plain HTTP */
	struct http_render render; /* the pool of heavy answers; the hold of large ones */
	uint32_t top_hosts;        /* metrics.top_hosts */
	uint32_t top_subnets;      /* metrics.top_subnets */
	char instance[24];         /* hex; part of every snapshot ETag, new at each start */
	char page_etag[32];
	uint16_t port;
	/* the main lcore's health board (health.h); NULL = none */
	const struct dpmon_health *health;
};

/* libmicrohttpd's iterator over the decoded query string: each key and
 * value into the struct dpmon_api_query @p cls, up to its limit. */
static enum MHD_Result
collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	return dpmon_api_query_add(cls, key, value) == 0 ? MHD_YES : MHD_NO;
}

/* The query of request @p c into @p q (zeroed here). */
static void
collect_query(struct MHD_Connection *c, struct dpmon_api_query *q)
{
	*q = (struct dpmon_api_query){.n = 0};
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, q);
}

/* ------------------------------------------------------------------------
 * Snapshot ETags (the replies themselves: http_reply.h).
 * --------------------------------------------------------------------- */

/* "<instance>-<seq>", quoted: names one snapshot of this process. */
static void
snapshot_etag(const struct dpmon_http *h, const struct dpmon_snapshot *s, char *out, size_t n)
{
	snprintf(out, n, "\"%s-%" PRIu64 "\"", h->instance, s->seq);
}

/* ------------------------------------------------------------------------
 * Endpoints served here rather than by api.c: they are not JSON.
 * --------------------------------------------------------------------- */

/* Client text for an error message, as api.c quotes it: at most ECHO_MAX
 * bytes, then "...", every byte outside printable ASCII shown as '?'. */
static const char *
echo(const char *s, char buf[ECHO_MAX + 4])
{
	size_t i, n = strlen(s);

	for (i = 0; i < n && i < ECHO_MAX; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (n > ECHO_MAX) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

/* Method and parameter checks shared by the text endpoints (api.c's order:
 * method 405, parameters 400). @return true when @p r was filled. */
static bool
text_endpoint_refused(struct reply *r, const char *method, const struct dpmon_api_query *q)
{
	char msg[160], e[ECHO_MAX + 4];

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		snprintf(msg, sizeof(msg), "method '%s' not allowed (allowed: GET, HEAD)",
			 echo(method, e));
		http_reply_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, msg);
		r->allow = "GET, HEAD";
		return true;
	}
	if (q->n > 0) {
		snprintf(msg, sizeof(msg), "unknown parameter '%s'", echo(q->keys[0], e));
		http_reply_error(r, MHD_HTTP_BAD_REQUEST, msg);
		return true;
	}
	return false;
}

/* The HTTP server's own series after the snapshot's in @p text (@p len
 * bytes, malloc'd): its 401 answers so far, its 503 answers at the bounds
 * on unread answers and on queued heavy requests, and the bytes of large
 * answers being sent. @return 0 or -ENOMEM.
 * Thread-safety: any thread (the counters are read with atomic loads). */
static int
append_http_metrics(struct dpmon_http *h, char **text, size_t *len)
{
	char add[1024];
	int n = snprintf(
		add, sizeof(add),
		"# HELP dpmon_http_unauthorized_total Requests answered 401: missing or "
		"wrong bearer token.\n"
		"# TYPE dpmon_http_unauthorized_total counter\n"
		"dpmon_http_unauthorized_total %" PRIu64 "\n"
		"# HELP dpmon_http_overloaded_total Requests answered 503: unread answers "
		"past their bound, or the queue of heavy requests full.\n"
		"# TYPE dpmon_http_overloaded_total counter\n"
		"dpmon_http_overloaded_total{reason=\"unread\"} %" PRIu64 "\n"
		"dpmon_http_overloaded_total{reason=\"queue\"} %" PRIu64 "\n"
		"# HELP dpmon_http_held_bytes Bytes of large answers queued and not yet sent.\n"
		"# TYPE dpmon_http_held_bytes gauge\n"
		"dpmon_http_held_bytes %" PRIu64 "\n",
		http_tokens_unauthorized(&h->tokens), http_hold_refused(&h->render.hold),
		__atomic_load_n(&h->render.busy, __ATOMIC_RELAXED),
		http_hold_total(&h->render.hold));
	char *t = realloc(*text, *len + (size_t)n + 1);

	if (t == NULL)
		return -ENOMEM;
	memcpy(t + *len, add, (size_t)n + 1);
	*text = t;
	*len += (size_t)n;
	return 0;
}

/* /metrics rendered from @p snap (held by the caller). */
static void
render_metrics(struct dpmon_http *h, const struct dpmon_snapshot *snap, struct reply *r)
{
	char *text = NULL;
	size_t len = 0;

	const struct dpmon_prom_limits lim = {.top_hosts = h->top_hosts,
					      .top_subnets = h->top_subnets};

	if (dpmon_prom_render_limits(snap, &lim, &text, &len) != 0 ||
	    append_http_metrics(h, &text, &len) != 0) {
		free(text);
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return;
	}
	*r = (struct reply){.status = MHD_HTTP_OK,
			    .body = text,
			    .len = len,
			    .body_owned = true,
			    .ctype = DPMON_PROM_CONTENT_TYPE,
			    .cache = "no-store"};
	snapshot_etag(h, snap, r->etag, sizeof(r->etag));
}

static void
serve_metrics(struct dpmon_http *h, const char *method, const struct dpmon_api_query *q,
	      struct reply *r)
{
	struct dpmon_snapshot *snap;

	if (text_endpoint_refused(r, method, q))
		return;
	snap = dpmon_snap_acquire(h->store);
	if (snap == NULL) {
		http_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "no snapshot yet");
		return;
	}
	render_metrics(h, snap, r);
	dpmon_snap_release(h->store, snap);
}

static void
serve_page(struct dpmon_http *h, const char *method, const struct dpmon_api_query *q,
	   struct reply *r)
{
	if (text_endpoint_refused(r, method, q))
		return;
	*r = (struct reply){.status = MHD_HTTP_OK,
			    .body = http_persistent_buffer((const char *)dpmon_page_index_html),
			    .len = dpmon_page_index_html_len,
			    .ctype = "text/html; charset=utf-8",
			    .cache = "no-cache",
			    .page_headers = true};
	snprintf(r->etag, sizeof(r->etag), "%s", h->page_etag);
}

/* The JSON API's request: @p method on @p url with the query @p q, no
 * body, the server's blackhole list; the snapshot comes with render_api. */
static struct dpmon_api_request
api_request(const struct dpmon_http *h, const char *method, const char *url,
	    struct dpmon_api_query *q)
{
	return (struct dpmon_api_request){.actions = h->actions,
					  .method = method,
					  .path = url,
					  .arg = dpmon_api_query_lookup,
					  .arg_ctx = q,
					  .arg_keys = q->keys};
}

/* The JSON API's answer to @p req on @p snap (NULL before the first merge;
 * held by the caller); 200 answers rendered from it carry its ETag. */
static void
render_api(struct dpmon_http *h, const struct dpmon_snapshot *snap, struct dpmon_api_request *req,
	   struct reply *r)
{
	struct dpmon_api_response res;

	req->snap = snap;
	dpmon_api_serve(req, &res);
	http_reply_json(r, res.status, res.body, res.text);
	if (res.status == MHD_HTTP_OK && res.of_snapshot && snap != NULL)
		snapshot_etag(h, snap, r->etag, sizeof(r->etag));
	r->allow = res.allow;
}

/* @p req answered by the JSON API on the current snapshot. */
static void
serve_api(struct dpmon_http *h, struct dpmon_api_request *req, struct reply *r)
{
	struct dpmon_snapshot *snap = dpmon_snap_acquire(h->store);

	render_api(h, snap, req, r);
	dpmon_snap_release(h->store, snap);
}

/* ------------------------------------------------------------------------
 * Answers from the response caches (http_cache.h).
 * --------------------------------------------------------------------- */

/*
 * Reply @p r's body as a cacheable one (one reference): a 200 with a body
 * of its own, at most QCACHE_BODY_MAX bytes when @p query, which @p r then
 * sends from the shared body (r->shared) instead of owning it; NULL, and
 * @p r unchanged, otherwise or without memory.
 */
static struct body *
body_of_reply(struct reply *r, bool query)
{
	struct body *b;

	if (r->status != MHD_HTTP_OK || !r->body_owned || (query && r->len > QCACHE_BODY_MAX) ||
	    (b = http_body_new(r->body, r->len)) == NULL)
		return NULL;
	r->body_owned = false;
	r->shared = b;
	return b;
}

/* Fill @p r from slot @p i, or (i < 0) the query @p key of @p key_len
 * bytes, for the current snapshot: from the cache, or (@p render) rendered
 * and cached. @return false before the first snapshot (the caller then
 * takes the uncached path, which answers 503 or the starting /health), or
 * on a miss without @p render. Thread-safety: the loop thread or a pool
 * thread (the cache has its lock). */
static bool
serve_cached(struct dpmon_http *h, int i, const char *key, size_t key_len,
	     struct dpmon_api_request *req, struct reply *r, bool render)
{
	struct dpmon_snapshot *snap = dpmon_snap_acquire(h->store);
	struct body *b;

	if (snap == NULL)
		return false;
	b = http_cache_get(&h->cache, i, key, key_len, snap->seq);
	if (b == NULL && !render) {
		dpmon_snap_release(h->store, snap);
		return false;
	}
	if (b == NULL) {
		if (i == CACHE_METRICS)
			render_metrics(h, snap, r);
		else
			render_api(h, snap, req, r);
		if ((b = body_of_reply(r, i < 0)) != NULL)
			http_cache_put(&h->cache, i, key, key_len, snap->seq, b);
	} else {
		*r = (struct reply){.status = MHD_HTTP_OK,
				    .body = b->text,
				    .len = b->len,
				    .shared = b,
				    .cache = "no-store",
				    .ctype = i == CACHE_METRICS ? DPMON_PROM_CONTENT_TYPE
								: "application/json"};
		snapshot_etag(h, snap, r->etag, sizeof(r->etag));
	}
	dpmon_snap_release(h->store, snap);
	return true;
}

void
dpmon_http_prewarm(struct dpmon_http *h, const struct dpmon_snapshot *s)
{
	char keys[QCACHE_SLOTS][QCACHE_KEY_MAX];
	size_t lens[QCACHE_SLOTS];
	unsigned n;

	/* The queries answered from the previous snapshot. */
	n = http_cache_queries_of(&h->cache, s->seq - 1, keys, lens);
	for (unsigned i = 0; i < n; i++) {
		char buf[QCACHE_KEY_MAX];
		struct dpmon_api_query q;
		struct dpmon_api_request req;
		struct reply r;
		struct body *b;

		if (!http_cache_query_of_key(keys[i], lens[i], buf, &q))
			continue;
		req = api_request(h, MHD_HTTP_METHOD_GET, "/api/v1/hosts", &q);
		render_api(h, s, &req, &r);
		if ((b = body_of_reply(&r, true)) != NULL) {
			http_cache_put(&h->cache, -1, keys[i], lens[i], s->seq, b);
			http_body_put(b);
		} else if (r.body_owned) {
			free(r.body);
		}
	}
}

/* @p url without trailing slashes equals @p path ("/" stays "/"). */
static bool
path_is(const char *url, const char *path)
{
	size_t n = strlen(url), m = strlen(path);

	while (n > 1 && url[n - 1] == '/')
		n--;
	return n == m && memcmp(url, path, n) == 0;
}

/* ------------------------------------------------------------------------
 * Sending.
 * --------------------------------------------------------------------- */

static void
add_page_headers(struct MHD_Response *rsp)
{
	MHD_add_response_header(rsp, "Content-Security-Policy",
				"default-src 'none'; script-src 'unsafe-inline'; "
				"style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
				"base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
	MHD_add_response_header(rsp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(rsp, "Referrer-Policy", "no-referrer");
}

/* Queue @p r, or a 304 without body when the client already has its ETag. */
static enum MHD_Result
send_reply(struct dpmon_http *h, struct MHD_Connection *c, struct reply *r)
{
	const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
	bool not_modified =
		r->status == MHD_HTTP_OK && r->etag[0] != '\0' && http_etag_matches(inm, r->etag);
	struct MHD_Response *rsp;
	enum MHD_Result ok;

	if (not_modified) /* no body: drop it now */
		http_reply_drop_body(r);
	if (!not_modified && r->len > DPMON_HTTP_HOLD_SMALL &&
	    (rsp = http_render_held_response(&h->render, c, r)) != NULL)
		; /* the response holds the body and its bytes until it is dropped */
	else if (r->shared != NULL) /* the response holds the reference until it is sent */
		rsp = MHD_create_response_from_buffer_with_free_callback_cls(
			r->len, r->shared->text, http_body_free_cb, r->shared);
	else
		rsp = MHD_create_response_from_buffer(not_modified ? 0 : r->len, r->body,
						      r->body_owned ? MHD_RESPMEM_MUST_FREE
								    : MHD_RESPMEM_PERSISTENT);
	if (rsp == NULL) {
		if (r->body_owned)
			free(r->body);
		http_body_put(r->shared);
		return MHD_NO; /* closes the connection */
	}
	dpmon_http_guard_answering(c); /* off the header deadline */
	if (!not_modified)
		MHD_add_response_header(rsp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
	MHD_add_response_header(rsp, MHD_HTTP_HEADER_CACHE_CONTROL, r->cache);
	if (r->etag[0] != '\0' && r->status == MHD_HTTP_OK)
		MHD_add_response_header(rsp, MHD_HTTP_HEADER_ETAG, r->etag);
	if (r->allow != NULL)
		MHD_add_response_header(rsp, MHD_HTTP_HEADER_ALLOW, r->allow);
	if (r->page_headers)
		add_page_headers(rsp);
	if (r->status == MHD_HTTP_UNAUTHORIZED) /* RFC 6750 3 */
		MHD_add_response_header(rsp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (r->close) /* libmicrohttpd then closes after sending */
		MHD_add_response_header(rsp, MHD_HTTP_HEADER_CONNECTION, "close");
	http_cors_add_headers(&h->cors, c, rsp);
	ok = MHD_queue_response(c, not_modified ? MHD_HTTP_NOT_MODIFIED : r->status, rsp);
	MHD_destroy_response(rsp);
	return ok;
}

/*
 * Per-request state, kept in libmicrohttpd's con_cls: set from the raw
 * request target before it is percent-decoded (uri_seen), then marked
 * once the headers were handled. The decoded target is a C string, so a
 * "%00" would silently cut the path or a parameter short: such requests are
 * refused with 400 instead.
 */
enum req_state {
	REQ_NEW = 1,
	REQ_NEW_NUL,
	REQ_NEW_LONG, /* a target over DPMON_HTTP_TARGET_MAX bytes */
	REQ_HEADERS_DONE,
	REQ_STATES
};
static char req_marks[REQ_STATES]; /* never written: only their addresses are used */
#define REQ_MARK(st)  ((void *)&req_marks[st])
#define REQ_IS(p, st) ((p) == REQ_MARK(st))

static void *
uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	if (strlen(uri) > DPMON_HTTP_TARGET_MAX)
		return REQ_MARK(REQ_NEW_LONG);
	return REQ_MARK(strcasestr(uri, "%00") != NULL ? REQ_NEW_NUL : REQ_NEW);
}

/* Is @p p one of the marks (else a struct upload or NULL)? */
static bool
is_mark(const void *p)
{
	for (int i = 0; i < REQ_STATES; i++)
		if (p == &req_marks[i])
			return true;
	return false;
}

/* libmicrohttpd's end of a request: free its upload, if any. */
static void
request_done(void *cls, struct MHD_Connection *c, void **con_cls,
	     enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	dpmon_http_guard_request_done(c);
	if (*con_cls != NULL && !is_mark(*con_cls))
		free(*con_cls);
	*con_cls = NULL;
}

/* 413: the body is over DPMON_API_BODY_MAX bytes. */
static void
reply_too_big(struct reply *r)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "request body over %d bytes", DPMON_API_BODY_MAX);
	http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, msg);
}

/* The request of upload @p u was read in full: answer it, body included. */
static enum MHD_Result
answer_upload(struct dpmon_http *h, struct MHD_Connection *c, const char *url, const char *method,
	      const struct upload *u)
{
	struct dpmon_api_request req;
	struct dpmon_api_query q;
	struct reply r;

	collect_query(c, &q);
	if (u->too_big) {
		reply_too_big(&r);
	} else if (q.overflow) {
		http_reply_error(&r, MHD_HTTP_BAD_REQUEST, "too many query parameters");
	} else {
		req = api_request(h, method, url, &q);
		req.body = u->data;
		req.body_len = u->len;
		serve_api(h, &req, &r);
	}
	return send_reply(h, c, &r);
}

/*
 * A request on a resource that changes state: first call, allocate the
 * upload (or refuse a declared oversized body); then collect the body;
 * last call, answer it.
 */
static enum MHD_Result
serve_upload(struct dpmon_http *h, struct MHD_Connection *c, const char *url, const char *method,
	     const char *data, size_t *size, void **con_cls)
{
	struct upload *u = is_mark(*con_cls) ? NULL : *con_cls;
	struct reply r;

	if (u == NULL) {
		if (http_upload_announced_too_big(c)) {
			reply_too_big(&r);
			return send_reply(h, c, &r);
		}
		u = calloc(1, sizeof(*u));
		if (u == NULL)
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	if (*size != 0) {
		http_upload_append(u, data, *size);
		*size = 0;
		return MHD_YES;
	}
	return answer_upload(h, c, url, method, u);
}

/* Does @p url name a resource that changes state (the API's route table)? */
static bool
changes_state(const struct dpmon_http *h, const char *url)
{
	struct dpmon_api_resource res;

	dpmon_api_resource_of(url, h->actions != NULL, &res);
	return res.changes_state;
}

/* The health verdict now into @p v, for the endpoints that carry it
 * (/health, /api/v1/summary, any spelling); NULL for every other one. */
static const struct dpmon_health_verdict *
health_verdict(const struct dpmon_http *h, const char *url, struct dpmon_health_verdict *v)
{
	if (!path_is(url, "/health") && !path_is(url, "/api/v1/summary"))
		return NULL;
	dpmon_health_check(h->health, dpmon_heartbeat_now_ns(), v);
	return v;
}

/* ------------------------------------------------------------------------
 * Heavy answers, rendered by the pool (http_render.h).
 * --------------------------------------------------------------------- */

/*
 * The collections whose answers can take long to render (O(hosts) or
 * O(subnets × history), megabytes): on a cache miss a GET or HEAD of one
 * is rendered by a pool thread while its connection is suspended, so the
 * loop thread goes on answering /health, the summary and everyone else.
 */
static const char *const heavy_paths[] = {"/api/v1/hosts", "/api/v1/history", "/api/v1/subnets",
					  "/api/v1/alerts", "/metrics"};

/* Snapshots up to these sizes are rendered on the loop thread: a few
 * milliseconds at most, less than the round trip through the pool. */
#define INLINE_MAX_HOSTS   2048
#define INLINE_MAX_SUBNETS 256

/* Whether @p method on @p url names a heavy collection. */
static bool
is_heavy_path(const char *url, const char *method)
{
	if (!http_is_read_method(method))
		return false;
	for (size_t i = 0; i < sizeof(heavy_paths) / sizeof(heavy_paths[0]); i++)
		if (path_is(url, heavy_paths[i]))
			return true;
	return false;
}

/* Whether the request goes to the pool: a heavy collection on a snapshot
 * past the inline sizes. */
static bool
is_heavy(struct dpmon_http *h, const char *url, const char *method)
{
	struct dpmon_snapshot *s;
	bool big;

	if (!is_heavy_path(url, method) || (s = dpmon_snap_acquire(h->store)) == NULL)
		return false;
	big = s->n_hosts > INLINE_MAX_HOSTS || s->n_subnets > INLINE_MAX_SUBNETS;
	dpmon_snap_release(h->store, s);
	return big;
}

/* The answer to @p req (GET @p url with @p q, or any other method): from
 * a cache, rendered into it on a miss, or rendered uncached. @p slot and
 * @p key are the request's cache slot and query key (-1 and 0 = none).
 * Thread-safety: the loop thread, or a pool thread for a heavy request. */
static void
render_answer(struct dpmon_http *h, const char *url, const char *method,
	      const struct dpmon_api_query *q, struct dpmon_api_request *req, int slot,
	      const char *key, size_t key_len, struct reply *r)
{
	if (slot >= 0 && (req->health == NULL || req->health->n_reasons == 0) &&
	    serve_cached(h, slot, NULL, 0, req, r, true))
		; /* from the response cache */
	else if (key_len > 0 && serve_cached(h, -1, key, key_len, req, r, true))
		; /* from the query cache */
	else if (path_is(url, "/metrics"))
		serve_metrics(h, method, q, r);
	else if (path_is(url, "/"))
		serve_page(h, method, q, r);
	else
		serve_api(h, req, r);
}

/* Render job @p j's answer into j->r (http_render.h; @p ctx: the
 * server). Thread-safety: a pool thread. */
static void
render_job(void *ctx, struct http_render_job *j)
{
	struct dpmon_http *h = ctx;
	struct dpmon_api_request req = api_request(h, j->method, j->url, &j->q);

	render_answer(h, j->url, j->method, &j->q, &req, j->slot, j->key, j->key_len, &j->r);
}

/* Every other request, its headers read (and a GET's body discarded):
 * answer it from what the target says; a heavy one missing from the
 * caches goes to the pool (@p con_cls then holds its job). @p nul: the
 * raw target had "%00". */
static enum MHD_Result
answer(struct dpmon_http *h, struct MHD_Connection *c, const char *url, const char *method,
       bool nul, void **con_cls)
{
	struct dpmon_api_request req;
	struct dpmon_api_query q;
	struct dpmon_health_verdict v;
	struct reply r;
	char key[QCACHE_KEY_MAX];
	size_t key_len;
	int slot;

	collect_query(c, &q);
	req = api_request(h, method, url, &q);
	req.health = health_verdict(h, url, &v);
	slot = http_cache_slot_of(method, url, &q);
	key_len = http_cache_query_key(method, url, &q, key);
	if (nul)
		http_reply_error(&r, MHD_HTTP_BAD_REQUEST,
				 "a NUL byte (%00) in the request target");
	else if (q.overflow)
		http_reply_error(&r, MHD_HTTP_BAD_REQUEST, "too many query parameters");
	else if (slot >= 0 && (req.health == NULL || req.health->n_reasons == 0) &&
		 serve_cached(h, slot, NULL, 0, &req, &r, false))
		; /* from the response cache */
	else if (key_len > 0 && serve_cached(h, -1, key, key_len, &req, &r, false))
		; /* from the query cache */
	else if (!is_heavy(h, url, method))
		render_answer(h, url, method, &q, &req, slot, key, key_len, &r);
	else if (http_render_defer(&h->render, c, url, method, &q, slot, key, key_len, con_cls, &r))
		return MHD_YES; /* suspended: its job has the answer sent */
	return send_reply(h, c, &r);
}

/* The pool rendered the answer of job @p j (or refused it): send it. */
static enum MHD_Result
answer_job(struct dpmon_http *h, struct MHD_Connection *c, struct http_render_job *j)
{
	struct reply r;

	http_render_take(j, &r);
	return send_reply(h, c, &r);
}

/*
 * Answer @p c with refusal @p v of its head (http_checks.h), JSON with
 * Connection: close, so that nothing after it on the connection is read
 * as a request. Two checks go through here, on every request once
 * libmicrohttpd parsed its head:
 *  - the framing: a request whose end two readers could disagree on (RFC
 *    9112 6.3: Content-Length with Transfer-Encoding, a repeated
 *    Content-Length, an unknown coding), 400 or 501. The guard checked the
 *    first request of a connection already; this covers the later ones of
 *    a keep-alive connection, which libmicrohttpd reads alone (an invalid
 *    Content-Length never gets here: libmicrohttpd 0.9.75 answers it
 *    itself);
 *  - the guard's limits on a first request head (http_head.h): under TLS
 *    the guard cannot read the first head before libmicrohttpd does
 *    (http_guard.c), and later requests of a keep-alive connection are
 *    libmicrohttpd's alone. A head too large for libmicrohttpd's memory
 *    pool (32 KiB) never gets here: it answers that itself.
 * @return true when @p v refuses and @p c got its answer (*ret).
 */
static bool
refused_closing(struct dpmon_http *h, struct MHD_Connection *c, struct dpmon_http_verdict v,
		enum MHD_Result *ret)
{
	struct reply r;

	if (v.status == 0)
		return false;
	http_reply_error(&r, v.status, v.message);
	r.close = true;
	*ret = send_reply(h, c, &r);
	return true;
}

/* Refuse request @p c when it repeats a field the checks read or is an
 * HTTP/1.1 request without Host (400), or
 * the access policy (http_access.h) or the bearer tokens (http_token.h)
 * say so: a JSON 403, 415 or 401, before any body is read. @return true
 * when @p c got its answer (*ret). */
static bool
access_refused(struct dpmon_http *h, struct MHD_Connection *c, const char *url, const char *method,
	       const char *version, enum MHD_Result *ret)
{
	struct http_access_request ar = {
		.method = method,
		.changes_state = changes_state(h, url),
		.host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
		.origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"),
		.content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							    MHD_HTTP_HEADER_CONTENT_TYPE),
	};
	struct dpmon_http_verdict v = http_access_check(&h->access, &ar);
	struct reply r;

	struct dpmon_http_verdict fields = http_checks_single_fields(c, version);

	if (fields.status != 0)
		v = fields;
	if (v.status == 0)
		v = http_tokens_check(&h->tokens, method, ar.changes_state, path_is(url, "/health"),
				      MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								  MHD_HTTP_HEADER_AUTHORIZATION));
	if (v.status == 0)
		return false;
	http_reply_error(&r, v.status, v.message);
	*ret = send_reply(h, c, &r);
	return true;
}

/* libmicrohttpd's access handler: called once with the headers, then
 * (GET, HEAD and uploads) with each piece of the body, then once more. */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct dpmon_http *h = cls;
	bool nul = REQ_IS(*con_cls, REQ_NEW_NUL), long_target = REQ_IS(*con_cls, REQ_NEW_LONG);
	enum MHD_Result ret;

	if (*con_cls != NULL && !is_mark(*con_cls) && is_heavy_path(url, method))
		return answer_job(h, c, *con_cls); /* taken up again: its answer is ready */
	if ((nul || long_target || REQ_IS(*con_cls, REQ_NEW)) &&
	    (refused_closing(h, c, http_checks_framing(c), &ret) ||
	     refused_closing(h, c, http_checks_head(c, version, long_target), &ret) ||
	     access_refused(h, c, url, method, version, &ret)))
		return ret;
	if (!nul && changes_state(h, url) && !http_cors_is_preflight(&h->cors, c, method))
		return serve_upload(h, c, url, method, upload_data, upload_data_size, con_cls);
	if (http_is_read_method(method) && !nul) {
		if (!REQ_IS(*con_cls, REQ_HEADERS_DONE)) { /* first call: headers only */
			*con_cls = REQ_MARK(REQ_HEADERS_DONE);
			return MHD_YES;
		}
		if (*upload_data_size != 0) { /* a body on GET: discard it */
			*upload_data_size = 0;
			return MHD_YES;
		}
	}
	if (http_cors_is_preflight(&h->cors, c, method))
		return http_cors_send_preflight(&h->cors, c, url, h->actions != NULL);
	return answer(h, c, url, method, nul, con_cls);
}

/* libmicrohttpd's messages (they can repeat: accept errors under load) go
 * to the journal, rate limited as kind "http" (log.h). */
static void
log_to_stderr(void *cls, const char *fmt, va_list ap)
{
	int saved = errno; /* callers report errno after libmicrohttpd fails */
	char text[512];

	(void)cls;
	vsnprintf(text, sizeof(text), fmt, ap);
	dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_WARNING, "http: %s", text);
	errno = saved;
}

/* Fill @p ss from an IPv4 or IPv6 literal; @return its length or 0. */
static socklen_t
listen_sockaddr(const char *text, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (text == NULL)
		return 0;
	if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		return sizeof(*v4);
	}
	if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		return sizeof(*v6);
	}
	return 0;
}

/* A random tag for this process's ETags, so that a client never takes a
 * snapshot of an earlier dpmon run for the current one. */
static void
make_instance(struct dpmon_http *h)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 32;
	snprintf(h->instance, sizeof(h->instance), "%016" PRIx64, r);
}

/* The page's ETag: FNV-1a of its bytes, stable across restarts. */
static void
make_page_etag(struct dpmon_http *h)
{
	uint64_t x = 14695981039346656037ull;

	for (size_t i = 0; i < dpmon_page_index_html_len; i++)
		x = (x ^ dpmon_page_index_html[i]) * 1099511628211ull;
	snprintf(h->page_etag, sizeof(h->page_etag), "\"page-%016" PRIx64 "\"", x);
}

static void
copy_opts(struct dpmon_http *h, const struct dpmon_http_opts *o)
{
	char name[DPMON_HOST_NAME_LEN] = ""; /* the machine's name, for Host */

	if (gethostname(name, sizeof(name) - 1) != 0)
		name[0] = '\0';
	h->top_hosts = o->metrics_top_hosts;
	h->top_subnets = o->metrics_top_subnets;
	h->actions = o->actions;
	h->health = o->health;
	for (uint32_t i = 0; i < o->n_cors_origins && i < DPMON_MAX_CORS_ORIGINS; i++) {
		snprintf(h->cors.origins[i], sizeof(h->cors.origins[i]), "%s", o->cors_origins[i]);
		h->cors.n = i + 1;
	}
	http_access_init(&h->access, o->listen_addr, name, o->allowed_hosts, o->n_allowed_hosts,
			 o->cors_origins, o->n_cors_origins);
	make_instance(h);
	make_page_etag(h);
}

/* Free server @p h and what it owns, once the pool and libmicrohttpd
 * stopped (or never started). */
static void
free_server(struct dpmon_http *h)
{
	dpmon_http_guard_destroy(h->guard);
	http_render_free(&h->render);
	http_cache_destroy(&h->cache);
	http_tokens_destroy(&h->tokens);
	dpmon_tls_pem_free(&h->tls);
	free(h);
}

struct dpmon_http *
dpmon_http_start_opts(const struct dpmon_http_opts *o, struct dpmon_snap_store *store)
{
	struct sockaddr_storage ss;
	socklen_t ss_len;
	struct dpmon_http *h;
	char terr[DPMON_PATH_LEN + 160];
	struct MHD_OptionItem tls_opts[4];
	int err;

	if (store == NULL || o == NULL ||
	    (ss_len = listen_sockaddr(o->listen_addr, o->port, &ss)) == 0 ||
	    (o->n_cors_origins > 0 && o->cors_origins == NULL) ||
	    (o->n_allowed_hosts > 0 && o->allowed_hosts == NULL) ||
	    o->n_allowed_hosts > DPMON_MAX_ALLOWED_HOSTS) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->store = store;
	if ((err = http_tokens_init(&h->tokens)) != 0) {
		free(h);
		errno = -err;
		return NULL;
	}
	http_cache_init(&h->cache);
	copy_opts(h, o);
	if ((err = http_tokens_load(&h->tokens, o->write_token_file, o->read_token_file, terr,
				    sizeof(terr))) != 0) {
		dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_ERR, "http: token file %s", terr);
		errno = -err;
		goto fail;
	}
	if ((err = http_tls_load(&h->tls, o->tls_cert_file, o->tls_key_file, tls_opts)) != 0) {
		errno = -err;
		goto fail;
	}
	h->guard = dpmon_http_guard_create((struct sockaddr *)&ss, ss_len, h->tls.cert != NULL);
	if (h->guard == NULL)
		goto fail;
	if ((err = http_render_init(&h->render, dpmon_http_guard_mhd_limit(h->guard), render_job,
				    h)) != 0) {
		errno = -err;
		goto fail;
	}
	errno = 0;
	/* No listening socket and no thread of its own: the guard accepts,
	 * hands connections over and runs the daemon (http_guard.c). */
	h->daemon = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME |
			MHD_USE_ERROR_LOG | (h->tls.cert != NULL ? MHD_USE_TLS : 0),
		0, NULL, NULL, on_request, h,
		/* first, so that every message goes through it */
		MHD_OPTION_EXTERNAL_LOGGER, log_to_stderr, NULL, MHD_OPTION_URI_LOG_CALLBACK,
		uri_seen, NULL, MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
		MHD_OPTION_NOTIFY_CONNECTION, dpmon_http_guard_notify, h->guard,
		MHD_OPTION_CONNECTION_LIMIT, dpmon_http_guard_mhd_limit(h->guard),
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S, MHD_OPTION_ARRAY, tls_opts,
		MHD_OPTION_END);
	if (h->daemon == NULL) {
		if (errno == 0)
			errno = EIO;
		goto fail;
	}
	if ((err = dpmon_http_guard_start(h->guard, h->daemon)) != 0) {
		errno = -err;
		goto fail;
	}
	h->port = dpmon_http_guard_port(h->guard);
	return h;
fail:
	err = errno;
	http_render_stop(&h->render);
	if (h->daemon != NULL)
		MHD_stop_daemon(h->daemon);
	free_server(h);
	errno = err;
	return NULL;
}

struct dpmon_http *
dpmon_http_start(const char *listen_addr, uint16_t port, struct dpmon_snap_store *store)
{
	struct dpmon_http_opts o = {.listen_addr = listen_addr,
				    .port = port,
				    .metrics_top_hosts = DPMON_TOP_HOSTS_DEFAULT,
				    .metrics_top_subnets = DPMON_TOP_SUBNETS_DEFAULT};

	return dpmon_http_start_opts(&o, store);
}

uint16_t
dpmon_http_port(const struct dpmon_http *h)
{
	return h->port;
}

void
dpmon_http_stop(struct dpmon_http *h)
{
	if (h == NULL)
		return;
	http_render_stop(&h->render);    /* every job ran: no connection stays suspended */
	dpmon_http_guard_stop(h->guard); /* no libmicrohttpd call runs after this */
	MHD_stop_daemon(h->daemon);      /* every response is destroyed by now */
	free_server(h);
}

int
dpmon_http_reload_tokens(struct dpmon_http *h, const char *write_token_file,
			 const char *read_token_file, char *err, size_t errlen)
{
	return http_tokens_load(&h->tokens, write_token_file, read_token_file, err, errlen);
}
