/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.c — the HTTP API's semantics, independent of the transport (api.h):
 * one request's steps and the route table of every endpoint.
 *
 * A request goes through a fixed sequence of steps; any step may answer:
 *
 *   1. route       the path (trailing slashes ignored) selects an endpoint,
 *                  else 404 {"error":"no such endpoint: /path"}; the
 *                  blackhole list's endpoints exist only when the request
 *                  has one;
 *   2. method      the endpoint's methods (GET and HEAD always, POST or
 *                  DELETE where it has them), else 405 with their Allow;
 *   3. parameters  every query key must be one the endpoint accepts, and
 *                  appear once (400) — when the transport lists the keys;
 *   4. snapshot    data endpoints need one: 503 before the first merge;
 *   5. endpoint    validates its own arguments (400, 404) and renders
 *                  (api_snapshot.c, api_blackholes.c, api_flowspec.c).
 *
 * Every function that may answer returns ANSWERED once it has filled the
 * response, 0 to let the sequence continue, or -ENOMEM; the top level turns
 * -ENOMEM into a 500.
 *
 * Client text echoed in error messages is cut to ECHO_MAX bytes and limited
 * to printable ASCII, so any byte sequence in a URL still yields a valid
 * (UTF-8) JSON string and a bounded body.
 */
#include "api_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Small helpers: text, replies.
 * --------------------------------------------------------------------- */

const char *
api_echo(const char *s, size_t n, char buf[ECHO_BUF])
{
	size_t i, shown = n < ECHO_MAX ? n : ECHO_MAX;

	for (i = 0; i < shown; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (shown < n) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

int
api_reply(struct request *r, unsigned status, json_t *body)
{
	r->out->status = status;
	r->out->body = body;
	return body != NULL ? ANSWERED : -ENOMEM;
}

/* json_dump_callback's writer: into the struct xbuf @p data. */
static int
text_write(const char *s, size_t n, void *data)
{
	struct xbuf *t = data;

	xbuf_put(t, s, n);
	return t->oom ? -1 : 0;
}

void
api_text_json(struct xbuf *t, json_t *j)
{
	if (j == NULL || json_dump_callback(j, text_write, t, DPMON_API_JSON_FLAGS) != 0)
		t->oom = true;
	json_decref(j);
}

int
api_reply_text(struct request *r, unsigned status, struct xbuf *t)
{
	/* The response takes the text NUL-terminated, as it always was. */
	if (t->p == NULL || xbuf_cstr(t) == NULL) {
		xbuf_free(t);
		return -ENOMEM;
	}
	r->out->status = status;
	r->out->body = NULL;
	r->out->text = t->p;
	r->out->text_len = t->len;
	*t = (struct xbuf){0};
	return ANSWERED;
}

int
api_reply_error(struct request *r, unsigned status, const char *fmt, ...)
{
	char msg[MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return api_reply(r, status, json_pack("{s:s}", "error", msg));
}

/* True when the @p len bytes of @p body are JSON whitespace only. */
static bool
is_blank(const char *body, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (strchr(" \t\r\n", body[i]) == NULL || body[i] == '\0')
			return false;
	return true;
}

int
api_body_json(struct request *r, const char *expected, json_t **doc)
{
	json_error_t je;
	char e[ECHO_BUF];

	*doc = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (*doc == NULL && is_blank(r->body, r->body_len)) /* curl -X POST without -d */
		return api_reply_error(r, 400, "empty body: expected a JSON object %s", expected);
	if (*doc == NULL)
		return api_reply_error(r, 400, "invalid JSON body: line %d column %d: %s", je.line,
				       je.column, api_echo(je.text, strlen(je.text), e));
	return 0;
}

bool
api_copy_arg(const char *s, size_t n, char buf[ARG_TEXT_MAX])
{
	if (n >= ARG_TEXT_MAX)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

/* ------------------------------------------------------------------------
 * Query parameters.
 * --------------------------------------------------------------------- */

static bool
listed(const char *const *list, const char *key)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, key) == 0)
			return true;
	return false;
}

const char *
api_arg_value(const struct request *r, const char *key)
{
	const char *v = r->arg != NULL ? r->arg(r->arg_ctx, key) : NULL;

	if (v == NULL && r->keys != NULL && listed(r->keys, key))
		v = "";
	return v;
}

/* 400 for a key the endpoint does not accept, or one given twice. */
static int
check_params(struct request *r, const char *const *accepted)
{
	char e[ECHO_BUF];

	if (r->keys == NULL)
		return 0;
	for (size_t i = 0; r->keys[i] != NULL; i++) {
		const char *k = r->keys[i];

		if (!listed(accepted, k))
			return api_reply_error(r, 400, "unknown parameter '%s'",
					       api_echo(k, strlen(k), e));
		/* Only accepted keys precede i, so this loop is short. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(r->keys[j], k) == 0)
				return api_reply_error(r, 400, "duplicate parameter '%s'",
						       api_echo(k, strlen(k), e));
	}
	return 0;
}

int
dpmon_api_query_add(struct dpmon_api_query *q, const char *key, const char *value)
{
	if (q->n == DPMON_API_MAX_ARGS) {
		q->overflow = true;
		return -E2BIG;
	}
	q->keys[q->n] = key;
	q->values[q->n] = value;
	q->n++;
	q->keys[q->n] = NULL;
	return 0;
}

const char *
dpmon_api_query_lookup(void *ctx, const char *key)
{
	const struct dpmon_api_query *q = ctx;

	for (unsigned i = 0; i < q->n; i++)
		if (strcmp(q->keys[i], key) == 0)
			return q->values[i];
	return NULL;
}

/* ------------------------------------------------------------------------
 * The route table.
 * --------------------------------------------------------------------- */

/* What an endpoint reads besides the request. */
enum source {
	SRC_SNAPSHOT_OPT, /* the snapshot when there is one (/health) */
	SRC_SNAPSHOT,     /* a snapshot: 503 while there is none */
	SRC_ACTIONS,      /* the blackhole list: absent (404) without one */
};

struct endpoint {
	const char *path; /* the exact path, or the collection's */
	bool item;        /* matches path + "/" + anything non-empty */
	enum source source;
	const char *const *params; /* accepted query keys, NULL-terminated */
	endpoint_fn get;           /* GET and HEAD */
	endpoint_fn post;          /* POST, or NULL: 405 */
	endpoint_fn del;           /* DELETE, or NULL: 405 */
};

static const char *const no_params[] = {NULL};
static const char *const hosts_params[] = {"subnet", "sort", "direction", "limit", NULL};
static const char *const alerts_params[] = {"state",  "address", "direction", "type",
					    "target", "limit",   NULL};

static const struct endpoint endpoints[] = {
	{"/health", false, SRC_SNAPSHOT_OPT, no_params, api_ep_health, NULL, NULL},
	{"/api/v1/summary", false, SRC_SNAPSHOT, no_params, api_ep_summary, NULL, NULL},
	{"/api/v1/subnets", false, SRC_SNAPSHOT, no_params, api_ep_subnets, NULL, NULL},
	{"/api/v1/subnets", true, SRC_SNAPSHOT, no_params, api_ep_subnet, NULL, NULL},
	{"/api/v1/hosts", false, SRC_SNAPSHOT, hosts_params, api_ep_hosts, NULL, NULL},
	{"/api/v1/hosts", true, SRC_SNAPSHOT, no_params, api_ep_host, NULL, NULL},
	{"/api/v1/alerts", false, SRC_SNAPSHOT, alerts_params, api_ep_alerts, NULL, NULL},
	{"/api/v1/alerts", true, SRC_SNAPSHOT, no_params, api_ep_alert, NULL, NULL},
	{"/api/v1/history", false, SRC_SNAPSHOT, no_params, api_ep_history, NULL, NULL},
	{"/api/v1/blackholes", false, SRC_ACTIONS, no_params, api_ep_blackholes,
	 api_ep_blackhole_add, NULL},
	{"/api/v1/blackholes", true, SRC_ACTIONS, no_params, api_ep_blackhole, NULL,
	 api_ep_blackhole_del},
	{"/api/v1/flowspec", false, SRC_ACTIONS, no_params, api_ep_flowspec, api_ep_flowspec_add,
	 NULL},
	{"/api/v1/flowspec", true, SRC_ACTIONS, no_params, api_ep_flowspec_rule, NULL,
	 api_ep_flowspec_del},
};

#define N_ENDPOINTS (sizeof(endpoints) / sizeof(endpoints[0]))

/* Methods beside GET and HEAD, as bits. */
enum {
	M_POST = 1,
	M_DELETE = 2
};

static unsigned
method_bits(const struct endpoint *ep)
{
	return (ep->post != NULL ? M_POST : 0) | (ep->del != NULL ? M_DELETE : 0);
}

/* The Allow header value of the methods @p bits. */
static const char *
allow_text(unsigned bits)
{
	static const char *const allow[4] = {
		[0] = "GET, HEAD",
		[M_POST] = "GET, HEAD, POST",
		[M_DELETE] = "GET, HEAD, DELETE",
		[M_POST | M_DELETE] = "GET, HEAD, POST, DELETE",
	};

	return allow[bits & 3];
}

/* Does @p ep exist for a request that has (or not) a blackhole list? */
static bool
available(const struct endpoint *ep, bool has_actions)
{
	return ep->source != SRC_ACTIONS || has_actions;
}

/* The endpoint for the first @p len bytes of @p path, or NULL. */
static const struct endpoint *
route(const char *path, size_t len, bool has_actions, const char **rest, size_t *rest_len)
{
	for (size_t i = 0; i < N_ENDPOINTS; i++) {
		const struct endpoint *ep = &endpoints[i];
		size_t n = strlen(ep->path);

		if (!available(ep, has_actions) || len < n || memcmp(path, ep->path, n) != 0)
			continue;
		if (!ep->item && len == n) {
			*rest = "";
			*rest_len = 0;
			return ep;
		}
		if (ep->item && len > n + 1 && path[n] == '/') {
			*rest = path + n + 1;
			*rest_len = len - n - 1;
			return ep;
		}
	}
	return NULL;
}

/* Length of @p path without its trailing slashes. */
static size_t
trimmed_len(const char *path)
{
	size_t len = strlen(path);

	while (len > 0 && path[len - 1] == '/')
		len--;
	return len;
}

/* The methods of every endpoint on @p ep's path: its collection and items. */
static unsigned
resource_bits(const struct endpoint *ep)
{
	unsigned bits = 0;

	for (size_t i = 0; i < N_ENDPOINTS; i++)
		if (strcmp(endpoints[i].path, ep->path) == 0)
			bits |= method_bits(&endpoints[i]);
	return bits;
}

bool
dpmon_api_resource_of(const char *path, bool has_actions, struct dpmon_api_resource *out)
{
	const char *rest;
	size_t rest_len;
	const struct endpoint *ep =
		path != NULL ? route(path, trimmed_len(path), has_actions, &rest, &rest_len) : NULL;
	unsigned bits = ep != NULL ? resource_bits(ep) : 0;

	*out = (struct dpmon_api_resource){.methods = allow_text(bits), .changes_state = bits != 0};
	return ep != NULL;
}

/* ------------------------------------------------------------------------
 * Dispatch.
 * --------------------------------------------------------------------- */

/* @p ep's function for @p method, or NULL when the method is not allowed. */
static endpoint_fn
handler(const struct endpoint *ep, const char *method)
{
	if (method == NULL)
		return NULL;
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return ep->get;
	if (strcmp(method, "POST") == 0)
		return ep->post;
	if (strcmp(method, "DELETE") == 0)
		return ep->del;
	return NULL;
}

static int
dispatch(struct request *r, const char *method, const char *path)
{
	const struct endpoint *ep;
	const char *rest, *allow;
	size_t rest_len;
	endpoint_fn fn;
	char e[ECHO_BUF];
	int rc;

	ep = route(path, trimmed_len(path), r->actions != NULL, &rest, &rest_len);
	if (ep == NULL)
		return api_reply_error(r, 404, "no such endpoint: %s",
				       api_echo(path, strlen(path), e));
	r->out->of_snapshot = ep->source != SRC_ACTIONS;
	fn = handler(ep, method);
	if (fn == NULL) {
		allow = allow_text(method_bits(ep));
		r->out->allow = allow;
		return api_reply_error(r, 405, "method '%s' not allowed (allowed: %s)",
				       method != NULL ? api_echo(method, strlen(method), e) : "",
				       allow);
	}
	if ((rc = check_params(r, ep->params)) != 0)
		return rc;
	if (ep->source == SRC_SNAPSHOT && r->snap == NULL)
		return api_reply_error(r, 503, "no snapshot yet");
	return fn(r, rest, rest_len);
}

/* ------------------------------------------------------------------------
 * Entry points.
 * --------------------------------------------------------------------- */

int
dpmon_api_serve(const struct dpmon_api_request *req, struct dpmon_api_response *out)
{
	struct request r = {.snap = req->snap,
			    .arg = req->arg,
			    .arg_ctx = req->arg_ctx,
			    .keys = req->arg_keys,
			    .out = out,
			    .actions = req->actions,
			    .body = req->body != NULL ? req->body : "",
			    .body_len = req->body_len,
			    .health = req->health};

	*out = (struct dpmon_api_response){0};
	if (dispatch(&r, req->method, req->path != NULL ? req->path : "") >= 0)
		return 0;
	json_decref(out->body);
	free(out->text);
	*out = (struct dpmon_api_response){.status = 500,
					   .body = json_pack("{s:s}", "error", "out of memory")};
	return -ENOMEM;
}

int
dpmon_api_handle_keys(const struct dpmon_snapshot *snap, const char *method, const char *path,
		      dpmon_api_arg_fn arg, void *arg_ctx, const char *const *arg_keys,
		      struct dpmon_api_response *out)
{
	struct dpmon_api_request req = {.snap = snap,
					.method = method,
					.path = path,
					.arg = arg,
					.arg_ctx = arg_ctx,
					.arg_keys = arg_keys};

	return dpmon_api_serve(&req, out);
}

int
dpmon_api_handle(const struct dpmon_snapshot *snap, const char *method, const char *path,
		 dpmon_api_arg_fn arg, void *arg_ctx, struct dpmon_api_response *out)
{
	return dpmon_api_handle_keys(snap, method, path, arg, arg_ctx, NULL, out);
}
