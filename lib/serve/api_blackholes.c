/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_blackholes.c — the API's endpoints on the blackhole list (api.h,
 * docs/api.md), state of the actions module rather than of a snapshot:
 *
 *   GET|HEAD /api/v1/blackholes     → 200 {"blackholes": [entry...]}
 *   POST /api/v1/blackholes         with body {"address": "A"} → 201 entry
 *                                   (200 when A was already manually
 *                                   blackholed), 400 for a body that is
 *                                   not that object, an invalid address or
 *                                   one outside every monitored subnet,
 *                                   507 at DPMON_MAX_BLACKHOLES
 *   GET|HEAD /api/v1/blackholes/A   → 200 entry, or 404
 *   DELETE /api/v1/blackholes/A     → 200 {"address": A, "removed": bool}
 *                                   (idempotent), 400 for an invalid address
 *
 * The route table (api.c) offers these only to a request that has an
 * actions module, and has checked the method (405 with Allow) and that no
 * query parameter was given (400). Each call takes the list's own lock
 * (actions.h); slow steps (state file, ExaBGP, notify script) are the
 * actions thread's.
 */
#include "api_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"

/* ------------------------------------------------------------------------
 * Arguments: the item's address, the POST body.
 * --------------------------------------------------------------------- */

/*
 * The address of the item path or body text @p text (@p n bytes): an
 * address, or a host prefix in CIDR form, which must be one of a
 * monitored subnet whose hosts are prefixes of that length (then its
 * network address goes to @p out); answers 400.
 */
static int
blackhole_addr_arg(struct request *r, const char *text, size_t n, struct dpmon_addr *out)
{
	char buf[ARG_TEXT_MAX], e[ECHO_BUF];
	struct dpmon_prefix p;
	int len;

	if (memchr(text, '/', n) == NULL) {
		if (!api_copy_arg(text, n, buf) || dpmon_addr_parse(buf, out) != 0)
			return api_reply_error(r, 400, "invalid address '%s'",
					       api_echo(text, n, e));
		return 0;
	}
	if (!api_copy_arg(text, n, buf) || dpmon_prefix_parse(buf, &p, NULL) != 0)
		return api_reply_error(r, 400, "invalid address '%s'", api_echo(text, n, e));
	len = p.family == 6 && dpmon_addr_is_v4(&p.addr)
		      ? -EDOM
		      : dpmon_blackhole_host_len(r->actions, &p.addr);
	/* A CIDR names only a host prefix shorter than a whole address. */
	if (len < 0 || (unsigned)len >= dpmon_family_bits(p.family))
		return api_reply_error(r, 400, "invalid address '%s'", api_echo(text, n, e));
	if (len != p.depth)
		return api_reply_error(r, 400,
				       "invalid address '%s': the hosts of its subnet are /%d "
				       "prefixes (host_prefix_len)",
				       api_echo(text, n, e), len);
	*out = p.addr;
	return 0;
}

/* 400 unless every key of the object @p doc is "address". */
static int
check_body_keys(struct request *r, json_t *doc)
{
	const char *key;
	char e[ECHO_BUF];
	json_t *v;

	json_object_foreach(doc, key, v) if (strcmp(key, "address") != 0) return api_reply_error(
		r, 400, "unknown key '%s' in the body (only \"address\")",
		api_echo(key, strlen(key), e));
	return 0;
}

/* The address of the body object @p doc, exactly {"address": "A"}; answers 400. */
static int
body_object_addr(struct request *r, json_t *doc, struct dpmon_addr *out)
{
	json_t *v;
	int rc;

	if (!json_is_object(doc))
		return api_reply_error(r, 400,
				       "the body must be a JSON object {\"address\": \"...\"}");
	if ((rc = check_body_keys(r, doc)) != 0)
		return rc;
	v = json_object_get(doc, "address");
	if (v == NULL)
		return api_reply_error(r, 400, "missing key 'address' in the body");
	if (!json_is_string(v))
		return api_reply_error(r, 400, "'address' must be a string");
	return blackhole_addr_arg(r, json_string_value(v), json_string_length(v), out);
}

/* The "address" of the request's POST body; answers 400. */
static int
post_body_addr(struct request *r, struct dpmon_addr *out)
{
	json_t *doc;
	int rc = api_body_json(r, "{\"address\": \"...\"}", &doc);

	if (rc != 0)
		return rc;
	rc = body_object_addr(r, doc, out);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------------------
 * Endpoints.
 * --------------------------------------------------------------------- */

int
api_ep_blackholes(struct request *r, const char *rest, size_t rest_len)
{
	struct dpmon_blackhole *l = NULL;
	json_t *arr = json_array();
	int n = dpmon_blackhole_list(r->actions, &l);

	(void)rest;
	(void)rest_len;
	for (int i = 0; arr != NULL && i < n; i++)
		if (json_array_append_new(arr, dpmon_blackhole_json(&l[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	free(l);
	if (n < 0) {
		json_decref(arr);
		arr = NULL;
	}
	return api_reply(r, 200, json_pack("{s:o}", "blackholes", arr));
}

int
api_ep_blackhole_add(struct request *r, const char *rest, size_t rest_len)
{
	struct dpmon_blackhole b;
	struct dpmon_addr addr;
	char t[DPMON_ADDR_STRLEN];
	int rc = post_body_addr(r, &addr);

	(void)rest;
	(void)rest_len;
	if (rc != 0)
		return rc;
	rc = dpmon_blackhole_add(r->actions, &addr, &b);
	if (rc == -EDOM)
		return api_reply_error(r, 400, "address %s is outside every monitored subnet",
				       dpmon_addr_format(&addr, t, sizeof(t)));
	if (rc == -ENOSPC)
		return api_reply_error(r, 507, "%d blackholes already", DPMON_MAX_BLACKHOLES);
	if (rc < 0)
		return rc;
	return api_reply(r, rc == 0 ? 201 : 200, dpmon_blackhole_json(&b));
}

/*
 * The address of the request's target into @p addr and, when the list has
 * an entry for it, that entry into @p b (*@p found). @return 0, or
 * blackhole_addr_arg's answer (a 400, or -ENOMEM).
 */
static int
target_blackhole(struct request *r, const char *rest, size_t n, struct dpmon_addr *addr,
		 struct dpmon_blackhole *b, bool *found)
{
	int rc = blackhole_addr_arg(r, rest, n, addr);

	*found = rc == 0 && dpmon_blackhole_get(r->actions, addr, b) == 0;
	return rc;
}

int
api_ep_blackhole(struct request *r, const char *rest, size_t rest_len)
{
	char t[DPMON_ADDR_STRLEN];
	struct dpmon_blackhole b;
	struct dpmon_addr addr;
	bool found;
	int rc = target_blackhole(r, rest, rest_len, &addr, &b, &found);

	if (rc != 0)
		return rc;
	if (!found)
		return api_reply_error(r, 404, "no blackhole for %s",
				       dpmon_addr_format(&addr, t, sizeof(t)));
	return api_reply(r, 200, dpmon_blackhole_json(&b));
}

int
api_ep_blackhole_del(struct request *r, const char *rest, size_t rest_len)
{
	struct dpmon_blackhole b;
	struct dpmon_addr addr;
	char t[DPMON_PREFIX_STRLEN];
	bool found;
	int rc = target_blackhole(r, rest, rest_len, &addr, &b, &found);

	if (rc != 0)
		return rc;
	/* The entry's own form (its prefix) when there is one. */
	if (found)
		dpmon_host_format(&b.addr, b.prefix_len, t, sizeof(t));
	else
		dpmon_addr_format(&addr, t, sizeof(t));
	return api_reply(r, 200,
			 json_pack("{s:s,s:b}", "address", t, "removed",
				   dpmon_blackhole_remove(r->actions, &addr) == 0));
}
