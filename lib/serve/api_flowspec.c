/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_flowspec.c — the API's endpoints on the FlowSpec rules (api.h,
 * docs/api.md), state of the actions module rather than of a snapshot:
 *
 *   GET|HEAD /api/v1/flowspec       → 200 {"rules": [rule...]}
 *   POST /api/v1/flowspec           with a manual rule's body (docs/api.md)
 *                                   → 201 rule; 400 for a body or field
 *                                   that does not parse, 422 for a rule
 *                                   routers refuse or a destination outside
 *                                   the monitored subnets or meeting the
 *                                   whitelist, 409 for a rule with the same
 *                                   match, a spent budget (max_rules) or no
 *                                   actions.exabgp_pipe (not a dry run)
 *   GET|HEAD /api/v1/flowspec/ID    → 200 rule, or 404
 *   DELETE /api/v1/flowspec/ID      → 200 {"id": ID, "removed": bool}
 *                                   (idempotent; the rule is withdrawn),
 *                                   400 for an ID that is not a decimal
 *                                   number from 1
 *
 * The route table (api.c) offers these only to a request that has an
 * actions module, and has checked the method (405 with Allow) and that no
 * query parameter was given (400). The pipe's lines are the actions
 * thread's.
 */
#include "api_private.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "actions.h"
#include "flowspec_json.h"

/* ------------------------------------------------------------------------
 * The POST body: a manual rule (flowspec_json.h), each field at fault
 * answered with 400 naming it.
 * --------------------------------------------------------------------- */

/* The manual rule of the body object @p doc into @p fr; answers 400. */
static int
body_rule(struct request *r, json_t *doc, struct dpmon_fs_rule *fr)
{
	struct dpmon_fs_json_error err;
	char e[ECHO_BUF];

	if (dpmon_fs_rule_from_json(doc, fr, &err) == 0)
		return 0;
	if (err.fault == DPMON_FS_JSON_NOT_OBJECT)
		return api_reply_error(r, 400, "the body must be a JSON object (a FlowSpec rule)");
	if (err.fault == DPMON_FS_JSON_UNKNOWN_KEY)
		return api_reply_error(r, 400, "unknown key '%s' in the body",
				       api_echo(err.field, strlen(err.field), e));
	return api_reply_error(r, 400, "'%s' %s", err.field, err.what);
}

/* ------------------------------------------------------------------------
 * Endpoints.
 * --------------------------------------------------------------------- */

/* The rule id of the item path @p rest (@p n bytes) into @p id; answers 400. */
static int
rule_id_arg(struct request *r, const char *rest, size_t n, uint64_t *id)
{
	char e[ECHO_BUF];

	*id = 0;
	for (size_t i = 0; i < n; i++) {
		if (rest[i] < '0' || rest[i] > '9' || i >= 19)
			return api_reply_error(r, 400, "invalid rule id '%s'",
					       api_echo(rest, n, e));
		*id = *id * 10 + (uint64_t)(rest[i] - '0');
	}
	if (*id == 0)
		return api_reply_error(r, 400, "invalid rule id '%s'", api_echo(rest, n, e));
	return 0;
}

int
api_ep_flowspec(struct request *r, const char *rest, size_t rest_len)
{
	(void)rest;
	(void)rest_len;
	return api_reply(r, 200, dpmon_flowspec_list(r->actions));
}

/* Answer @p status with rule @p id of the list, or 404. */
static int
reply_rule(struct request *r, unsigned status, uint64_t id)
{
	json_t *list = dpmon_flowspec_list(r->actions), *rule = NULL, *x;
	size_t i;

	json_array_foreach(json_object_get(list, "rules"), i, x)
	{
		if ((uint64_t)json_integer_value(json_object_get(x, "id")) == id)
			rule = json_incref(x);
	}
	json_decref(list);
	if (list != NULL && rule == NULL)
		return api_reply_error(r, 404, "no FlowSpec rule %llu", (unsigned long long)id);
	return api_reply(r, status, rule);
}

int
api_ep_flowspec_rule(struct request *r, const char *rest, size_t rest_len)
{
	uint64_t id;
	int rc = rule_id_arg(r, rest, rest_len, &id);

	return rc != 0 ? rc : reply_rule(r, 200, id);
}

int
api_ep_flowspec_add(struct request *r, const char *rest, size_t rest_len)
{
	struct dpmon_fs_rule fr;
	const char *why = "";
	json_t *doc;
	int64_t id;
	int rc = api_body_json(r, "(a FlowSpec rule)", &doc);

	(void)rest;
	(void)rest_len;
	if (rc != 0)
		return rc;
	rc = body_rule(r, doc, &fr);
	json_decref(doc);
	if (rc != 0)
		return rc;
	id = dpmon_flowspec_add(r->actions, &fr, &why);
	if (id == -EINVAL)
		return api_reply_error(r, 422, "not a rule routers accept: %s", why);
	if (id == -EDOM)
		return api_reply_error(r, 422, "%s", why);
	if (id == -EEXIST || id == -ENOTCONN)
		return api_reply_error(r, 409, "%s", why);
	if (id == -ENOSPC)
		return api_reply_error(r, 409,
				       "the rules budget actions.flowspec.max_rules is spent");
	if (id == -ENOMEM)
		return -ENOMEM;
	if (id < 0)
		return api_reply_error(r, 503, "rule not added: %s", strerror((int)-id));
	return reply_rule(r, 201, (uint64_t)id);
}

int
api_ep_flowspec_del(struct request *r, const char *rest, size_t rest_len)
{
	uint64_t id;
	int rc = rule_id_arg(r, rest, rest_len, &id);

	if (rc != 0)
		return rc;
	return api_reply(r, 200,
			 json_pack("{s:I,s:b}", "id", (json_int_t)id, "removed",
				   dpmon_flowspec_remove(r->actions, id) == 0));
}
