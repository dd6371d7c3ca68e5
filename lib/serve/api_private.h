/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_private.h — what the files of the API share (api.h):
 *
 *   api.c             one request's steps: route, method, parameters,
 *                     snapshot; the route table; the replies and helpers
 *   api_snapshot.c    the endpoints on a snapshot and their JSON
 *   api_blackholes.c  the endpoints on the blackhole list
 *   api_flowspec.c    the endpoints on the FlowSpec rules
 *
 * Private to lib/serve: nothing outside it includes this header. Every
 * function here may run on any thread (the HTTP thread, a test); none
 * keeps state between requests, except the host orders that
 * api_snapshot.c has the snapshot cache (host_order.h), which live and
 * die with the snapshot.
 */
#ifndef DPMON_API_PRIVATE_H
#define DPMON_API_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "xbuf.h"

/** Returned by a step that filled the response (else 0 or -ENOMEM). */
#define ANSWERED     1
#define ECHO_MAX     64             /**< client bytes quoted in an error */
#define ECHO_BUF     (ECHO_MAX + 4) /**< ... plus "..." and the NUL */
#define MSG_MAX      256            /**< longest error message, bytes with the NUL */
#define ARG_TEXT_MAX 128            /**< longer address/prefix text is invalid */

/** One request being answered. */
struct request {
	const struct dpmon_snapshot *snap; /**< NULL before the first merge */
	dpmon_api_arg_fn arg;
	void *arg_ctx;
	const char *const *keys; /**< every query key present, or NULL */
	struct dpmon_api_response *out;
	struct dpmon_actions *actions; /**< the blackhole list, or NULL */
	const char *body;              /**< the request body, never NULL */
	size_t body_len;               /**< bytes */
	/** The health verdict (health.h); NULL: healthy. */
	const struct dpmon_health_verdict *health;
};

/**
 * An endpoint's answer to one method. @p rest is the text after "path/"
 * for item endpoints (@p rest_len bytes, not NUL-terminated), else "".
 * @return ANSWERED once r->out is filled, or -ENOMEM.
 */
typedef int (*endpoint_fn)(struct request *r, const char *rest, size_t rest_len);

/* ------------------------------------------------------------------------
 * Replies and client text (api.c).
 * --------------------------------------------------------------------- */

/**
 * Quote at most ECHO_MAX bytes of @p s (@p n bytes) as printable ASCII in
 * @p buf, every other byte shown as '?', "..." after a cut.
 * @return @p buf.
 */
const char *api_echo(const char *s, size_t n, char buf[ECHO_BUF]);

/**
 * Answer @p status with @p body (consumed; NULL: out of memory).
 * @return ANSWERED, or -ENOMEM when @p body is NULL.
 */
int api_reply(struct request *r, unsigned status, json_t *body);

/*
 * A body written as text, one piece after another (a struct xbuf, xbuf.h),
 * for the listings whose tree would take many times the memory of their
 * text: a host's tree is about ten times its text, and a tree freed on the
 * main lcore leaves its heap fragmented at that size. Each element is built
 * as a tree, written and freed before the next, so a listing needs about
 * the memory of its text (up to twice it while the buffer doubles) and of
 * one element's tree.
 */

/** Append the array or object @p j (consumed; NULL: out of memory) to @p t
 * as compact JSON; a failure sets @p t's @c oom. */
void api_text_json(struct xbuf *t, json_t *j);

/**
 * Answer @p status with the text of @p t, which the response takes over
 * (@p t is left empty). @return ANSWERED, or -ENOMEM when a piece of @p t
 * failed (its memory is freed).
 */
int api_reply_text(struct request *r, unsigned status, struct xbuf *t);

/**
 * Answer @p status with {"error": message}, the message printf-formatted
 * (at most MSG_MAX - 1 bytes). @return as api_reply.
 */
__attribute__((format(printf, 3, 4))) int api_reply_error(struct request *r, unsigned status,
							  const char *fmt, ...);

/**
 * The request's body as JSON into *@p doc (a new reference); answers 400
 * for an empty body or invalid JSON, saying that @p expected (e.g.
 * "{\"address\": \"...\"}") was expected.
 * @return 0, or ANSWERED / -ENOMEM (then *@p doc is NULL).
 */
int api_body_json(struct request *r, const char *expected, json_t **doc);

/**
 * Copy @p n bytes of @p s into @p buf as a C string.
 * @return false when they do not fit (n >= ARG_TEXT_MAX).
 */
bool api_copy_arg(const char *s, size_t n, char buf[ARG_TEXT_MAX]);

/**
 * The value of query parameter @p key: "" when present without a value,
 * NULL when absent.
 */
const char *api_arg_value(const struct request *r, const char *key);

/* ------------------------------------------------------------------------
 * Endpoints on a snapshot (api_snapshot.c). Except api_ep_health, each
 * needs r->snap (the dispatch answers 503 without one).
 * --------------------------------------------------------------------- */

/** GET /health: 200 "ok" or "starting", or 503 "unhealthy" with the reasons of
 * r->health, with the snapshot's seq (r->snap may be NULL). */
int api_ep_health(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/summary. */
int api_ep_summary(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/subnets. */
int api_ep_subnets(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/subnets/{prefix}/{len} (@p rest the CIDR). */
int api_ep_subnet(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/hosts?subnet,sort,direction,limit. */
int api_ep_hosts(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/hosts/{address}. */
int api_ep_host(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/alerts?state,address,direction,type,limit. */
int api_ep_alerts(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/alerts/{id}. */
int api_ep_alert(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/history. */
int api_ep_history(struct request *r, const char *rest, size_t rest_len);

/* ------------------------------------------------------------------------
 * Endpoints on the blackhole list (api_blackholes.c). Each needs
 * r->actions (the route table offers them only with one).
 * --------------------------------------------------------------------- */

/** GET /api/v1/blackholes: the list. */
int api_ep_blackholes(struct request *r, const char *rest, size_t rest_len);
/** POST /api/v1/blackholes, body {"address": "A"} (r->body): add A. */
int api_ep_blackhole_add(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/blackholes/{address}: one entry, or 404. */
int api_ep_blackhole(struct request *r, const char *rest, size_t rest_len);
/** DELETE /api/v1/blackholes/{address}: remove it (idempotent). */
int api_ep_blackhole_del(struct request *r, const char *rest, size_t rest_len);

/* ------------------------------------------------------------------------
 * Endpoints on the FlowSpec rules (api_flowspec.c). Each needs r->actions.
 * --------------------------------------------------------------------- */

/** GET /api/v1/flowspec: the rules. */
int api_ep_flowspec(struct request *r, const char *rest, size_t rest_len);
/** POST /api/v1/flowspec: add a manual rule (body: docs/api.md); 201 with it. */
int api_ep_flowspec_add(struct request *r, const char *rest, size_t rest_len);
/** GET /api/v1/flowspec/{id}: one rule, or 404. */
int api_ep_flowspec_rule(struct request *r, const char *rest, size_t rest_len);
/** DELETE /api/v1/flowspec/{id}: withdraw and forget the rule (idempotent). */
int api_ep_flowspec_del(struct request *r, const char *rest, size_t rest_len);

#endif /* DPMON_API_PRIVATE_H */
