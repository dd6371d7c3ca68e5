/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_flowspec.c — the API's endpoints on the FlowSpec rules (api.h,
 * docs/api.md), state of the actions module rather than of a snapshot:
 *
 *   GET|HEAD /api/v1/flowspec       → 200 {"rules": [rule...]}
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

#include "actions.h"

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

int
api_ep_flowspec_rule(struct request *r, const char *rest, size_t rest_len)
{
	json_t *list, *rule = NULL, *x;
	uint64_t id;
	size_t i;
	int rc = rule_id_arg(r, rest, rest_len, &id);

	if (rc != 0)
		return rc;
	list = dpmon_flowspec_list(r->actions);
	json_array_foreach(json_object_get(list, "rules"), i, x)
	{
		if ((uint64_t)json_integer_value(json_object_get(x, "id")) == id)
			rule = json_incref(x);
	}
	json_decref(list);
	if (list != NULL && rule == NULL)
		return api_reply_error(r, 404, "no FlowSpec rule %llu", (unsigned long long)id);
	return api_reply(r, 200, rule);
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
