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
 *                                   match or a spent budget (max_rules)
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

/* ------------------------------------------------------------------------
 * The POST body: a manual rule's fields, each answering 400 naming itself.
 * --------------------------------------------------------------------- */

/* The body's keys, NULL-terminated. */
static const char *const rule_keys[] = {
	"destination",       "source",        "protocol",  "source_ports",
	"destination_ports", "packet_length", "tcp_flags", "fragment",
	"icmp_type",         "icmp_code",     "action",    NULL,
};

/* 400 naming @p field and what is wrong with it. */
static int
bad_field(struct request *r, const char *field, const char *what)
{
	return api_reply_error(r, 400, "'%s' %s", field, what);
}

/* The integer @p v within 0 .. @p max into @p out; answers 400 naming @p field. */
static int
int_field(struct request *r, const char *field, json_t *v, unsigned max, unsigned *out)
{
	char what[64];

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)max) {
		snprintf(what, sizeof(what), "must be an integer 0 .. %u", max);
		return bad_field(r, field, what);
	}
	*out = (unsigned)json_integer_value(v);
	return 0;
}

/* The array @p v of 1 .. DPMON_FS_VALUES integers 0 .. @p max into @p out, their
 * count into *@p n; answers 400 naming @p field. */
static int
values_field(struct request *r, const char *field, json_t *v, unsigned max, uint16_t *out,
	     uint8_t *n)
{
	json_t *x;
	size_t i;
	unsigned u;
	int rc;

	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > DPMON_FS_VALUES)
		return bad_field(r, field, "must be an array of 1 .. 4 values");
	json_array_foreach(v, i, x)
	{
		if ((rc = int_field(r, field, x, max, &u)) != 0)
			return rc;
		out[i] = (uint16_t)u;
	}
	*n = (uint8_t)json_array_size(v);
	return 0;
}

/* The address or CIDR string @p v into @p addr, *@p len and *@p family; answers 400. */
static int
prefix_field(struct request *r, const char *field, json_t *v, struct dpmon_addr *addr, uint8_t *len,
	     uint8_t *family)
{
	char buf[ARG_TEXT_MAX];
	struct dpmon_prefix p;

	if (!json_is_string(v) || !api_copy_arg(json_string_value(v), json_string_length(v), buf))
		return bad_field(r, field, "must be an address or a prefix in CIDR form");
	if (strchr(buf, '/') == NULL) {
		if (dpmon_addr_parse(buf, &p.addr) != 0)
			return bad_field(r, field, "is not an address or a prefix");
		p.family = dpmon_addr_is_v4(&p.addr) ? 4 : 6;
		p.depth = (uint8_t)dpmon_family_bits(p.family);
	} else if (dpmon_prefix_parse(buf, &p, NULL) != 0) {
		return bad_field(r, field, "is not an address or a prefix");
	}
	*addr = p.addr;
	*len = p.depth;
	*family = p.family;
	return 0;
}

/* The protocol name ("tcp", "udp", "icmp", "icmpv6") or number @p v into @p fr. */
static int
protocol_field(struct request *r, json_t *v, struct dpmon_fs_rule *fr)
{
	static const struct {
		const char *name;
		uint8_t proto;
	} names[] = {{"tcp", DPMON_IPPROTO_TCP},
		     {"udp", DPMON_IPPROTO_UDP},
		     {"icmp", DPMON_IPPROTO_ICMP},
		     {"icmpv6", DPMON_IPPROTO_ICMPV6}};
	unsigned u;
	int rc;

	fr->has_proto = 1;
	for (size_t i = 0; json_is_string(v) && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(json_string_value(v), names[i].name) == 0) {
			fr->proto = names[i].proto;
			return 0;
		}
	if (json_is_string(v))
		return bad_field(r, "protocol", "must be tcp, udp, icmp, icmpv6 or 0 .. 255");
	if ((rc = int_field(r, "protocol", v, 255, &u)) == 0)
		fr->proto = (uint8_t)u;
	return rc;
}

/* One TCP flags value, names joined by '+' ("syn+ack"), as the exact match of
 * FIN .. URG; -1 for an unknown name. */
static int
flags_value(const char *text)
{
	static const char *const names[6] = {"fin", "syn", "rst", "push", "ack", "urgent"};
	int v = 0;

	while (*text != '\0') {
		size_t n = strcspn(text, "+");
		unsigned b = 0;

		while (b < 6 && (strlen(names[b]) != n || strncmp(names[b], text, n) != 0))
			b++;
		if (b == 6)
			return -1;
		v |= 1 << b;
		text += n + (text[n] == '+');
	}
	return v;
}

/* The "tcp_flags" array @p v into @p fr. */
static int
flags_field(struct request *r, json_t *v, struct dpmon_fs_rule *fr)
{
	json_t *x;
	size_t i;
	int f;

	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > DPMON_FS_VALUES)
		return bad_field(r, "tcp_flags", "must be an array of 1 .. 4 values");
	json_array_foreach(v, i, x)
	{
		if (!json_is_string(x) || (f = flags_value(json_string_value(x))) < 0)
			return bad_field(r, "tcp_flags",
					 "values are flags fin, syn, rst, push, ack, urgent "
					 "joined by '+' (\"syn+ack\")");
		fr->flags[i] = (uint8_t)f;
	}
	fr->n_flags = (uint8_t)json_array_size(v);
	return 0;
}

/* The "packet_length" object {"min", "max"} @p v into @p fr. */
static int
length_field(struct request *r, json_t *v, struct dpmon_fs_rule *fr)
{
	json_t *lo = json_object_get(v, "min"), *hi = json_object_get(v, "max");
	unsigned u = 0, w = UINT16_MAX;
	int rc;

	if (!json_is_object(v) || json_object_size(v) != (size_t)(lo != NULL) + (hi != NULL) ||
	    json_object_size(v) == 0)
		return bad_field(r, "packet_length", "must be an object {\"min\", \"max\"}");
	if ((lo != NULL && (rc = int_field(r, "packet_length.min", lo, UINT16_MAX, &u)) != 0) ||
	    (hi != NULL && (rc = int_field(r, "packet_length.max", hi, UINT16_MAX, &w)) != 0))
		return rc;
	fr->has_len = 1;
	fr->len_lo = (uint16_t)u;
	fr->len_hi = (uint16_t)w;
	return 0;
}

/* The "action" text @p v into @p fr. */
static int
action_field(struct request *r, json_t *v, struct dpmon_fs_rule *fr)
{
	const char *why = "must be a string";

	if (!json_is_string(v) ||
	    dpmon_fs_action_parse(json_string_value(v), &fr->action, &why) != 0)
		return bad_field(r, "action", why);
	return 0;
}

/* Field @p key of value @p v into @p fr. */
static int
rule_field(struct request *r, const char *key, json_t *v, struct dpmon_fs_rule *fr)
{
	unsigned u;
	uint16_t w[DPMON_FS_VALUES];
	uint8_t fam;
	int rc = 0;

	if (strcmp(key, "destination") == 0)
		return prefix_field(r, key, v, &fr->dst, &fr->dst_len, &fr->family);
	if (strcmp(key, "source") == 0)
		return prefix_field(r, key, v, &fr->src, &fr->src_len, &fam);
	if (strcmp(key, "protocol") == 0)
		return protocol_field(r, v, fr);
	if (strcmp(key, "source_ports") == 0)
		return values_field(r, key, v, UINT16_MAX, fr->sport, &fr->n_sport);
	if (strcmp(key, "destination_ports") == 0)
		return values_field(r, key, v, UINT16_MAX, fr->dport, &fr->n_dport);
	if (strcmp(key, "packet_length") == 0)
		return length_field(r, v, fr);
	if (strcmp(key, "tcp_flags") == 0)
		return flags_field(r, v, fr);
	if (strcmp(key, "fragment") == 0) {
		if (!json_is_boolean(v))
			return bad_field(r, key, "must be true or false");
		fr->frag = json_is_true(v) ? DPMON_FS_FRAG_IS : DPMON_FS_FRAG_ANY;
		return 0;
	}
	if (strcmp(key, "icmp_type") == 0) {
		if ((rc = values_field(r, key, v, 255, w, &fr->n_icmp_type)) == 0)
			for (unsigned i = 0; i < fr->n_icmp_type; i++)
				fr->icmp_type[i] = (uint8_t)w[i];
		return rc;
	}
	if (strcmp(key, "icmp_code") == 0) {
		if ((rc = int_field(r, key, v, 255, &u)) == 0) {
			fr->has_icmp_code = 1;
			fr->icmp_code = (uint8_t)u;
		}
		return rc;
	}
	return action_field(r, v, fr);
}

/* The manual rule of the body object @p doc into @p fr; answers 400. */
static int
body_rule(struct request *r, json_t *doc, struct dpmon_fs_rule *fr)
{
	const char *key;
	char e[ECHO_BUF];
	json_t *v;
	size_t k;
	int rc;

	memset(fr, 0, sizeof(*fr));
	if (!json_is_object(doc))
		return api_reply_error(r, 400, "the body must be a JSON object (a FlowSpec rule)");
	if (json_object_get(doc, "destination") == NULL)
		return bad_field(r, "destination", "is missing (an address or a prefix)");
	json_object_foreach(doc, key, v)
	{
		for (k = 0; rule_keys[k] != NULL && strcmp(rule_keys[k], key) != 0; k++)
			;
		if (rule_keys[k] == NULL)
			return api_reply_error(r, 400, "unknown key '%s' in the body",
					       api_echo(key, strlen(key), e));
		if ((rc = rule_field(r, key, v, fr)) != 0)
			return rc;
	}
	return 0;
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

	if (rc != 0)
		return rc;
	return reply_rule(r, 200, id);
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
	if (id == -EEXIST)
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
