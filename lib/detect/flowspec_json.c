/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowspec_json.c — a FlowSpec rule as a JSON object of its components
 * (flowspec_json.h): the parser of a manual rule's form, each field
 * refused with its name and why, and the writer of the same form.
 */
#include "flowspec_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The form's keys, NULL-terminated. */
static const char *const rule_keys[] = {
	"destination",       "source",        "protocol",  "source_ports",
	"destination_ports", "packet_length", "tcp_flags", "fragment",
	"icmp_type",         "icmp_code",     "action",    NULL,
};

/* TCP flag names, bit 0 (FIN) to bit 5 (URG), as ExaBGP writes them. */
static const char *const flag_names[6] = {"fin", "syn", "rst", "push", "ack", "urgent"};

/* Protocol names the form accepts. */
static const struct {
	const char *name;
	uint8_t proto;
} proto_names[] = {{"tcp", DPMON_IPPROTO_TCP},
		   {"udp", DPMON_IPPROTO_UDP},
		   {"icmp", DPMON_IPPROTO_ICMP},
		   {"icmpv6", DPMON_IPPROTO_ICMPV6}};

/* The longest address or prefix text read. */
#define PREFIX_TEXT_MAX 128

/* ------------------------------------------------------------------------
 * Parsing.
 * --------------------------------------------------------------------- */

/* Refuse @p field: -EINVAL, with what is wrong in @p err. */
static int __attribute__((format(printf, 3, 4)))
bad_field(struct dpmon_fs_json_error *err, const char *field, const char *fmt, ...)
{
	va_list ap;

	err->fault = DPMON_FS_JSON_BAD_FIELD;
	err->field = field;
	va_start(ap, fmt);
	vsnprintf(err->what, sizeof(err->what), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Refuse @p field, a value that parses but that the form refuses
 * (DPMON_FS_JSON_REFUSED): -EINVAL, with why in @p err. */
static int __attribute__((format(printf, 3, 4)))
refused_field(struct dpmon_fs_json_error *err, const char *field, const char *fmt, ...)
{
	va_list ap;

	err->fault = DPMON_FS_JSON_REFUSED;
	err->field = field;
	va_start(ap, fmt);
	vsnprintf(err->what, sizeof(err->what), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The integer @p v within 0 .. @p max into @p out. */
static int
int_field(struct dpmon_fs_json_error *err, const char *field, const json_t *v, unsigned max,
	  unsigned *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)max)
		return bad_field(err, field, "must be an integer 0 .. %u", max);
	*out = (unsigned)json_integer_value(v);
	return 0;
}

/* The JSON path of item @p i (0 .. DPMON_FS_VALUES - 1) of the list @p key
 * (a static name). */
static const char *
item_path(const char *key, size_t i)
{
	static const char *const paths[][DPMON_FS_VALUES] = {
		{"source_ports[0]", "source_ports[1]", "source_ports[2]", "source_ports[3]"},
		{"destination_ports[0]", "destination_ports[1]", "destination_ports[2]",
		 "destination_ports[3]"},
		{"tcp_flags[0]", "tcp_flags[1]", "tcp_flags[2]", "tcp_flags[3]"},
		{"icmp_type[0]", "icmp_type[1]", "icmp_type[2]", "icmp_type[3]"},
	};
	static const char *const keys[] = {"source_ports", "destination_ports", "tcp_flags",
					   "icmp_type"};

	_Static_assert(DPMON_FS_VALUES == 4, "item_path lists 4 items a list");
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(keys[k], key) == 0 && i < DPMON_FS_VALUES)
			return paths[k][i];
	return key;
}

/* The array @p v of 1 .. DPMON_FS_VALUES distinct integers 0 .. @p max into
 * @p out, their count into *@p n. */
static int
values_field(struct dpmon_fs_json_error *err, const char *field, const json_t *v, unsigned max,
	     uint16_t *out, uint8_t *n)
{
	const json_t *x;
	size_t i;
	unsigned u;
	int rc;

	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > DPMON_FS_VALUES)
		return bad_field(err, field, "must be an array of 1 .. %d values", DPMON_FS_VALUES);
	json_array_foreach(v, i, x)
	{
		if ((rc = int_field(err, field, x, max, &u)) != 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (out[j] == u)
				return refused_field(err, item_path(field, i),
						     "repeats %s (%u): give each value once",
						     item_path(field, j), u);
		out[i] = (uint16_t)u;
	}
	*n = (uint8_t)json_array_size(v);
	return 0;
}

/* The address or CIDR string @p v into @p addr, *@p len and *@p family. */
static int
prefix_field(struct dpmon_fs_json_error *err, const char *field, const json_t *v,
	     struct dpmon_addr *addr, uint8_t *len, uint8_t *family)
{
	char buf[PREFIX_TEXT_MAX];
	struct dpmon_prefix p;

	if (!json_is_string(v) || json_string_length(v) >= sizeof(buf) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return bad_field(err, field, "must be an address or a prefix in CIDR form");
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	if (strchr(buf, '/') == NULL) {
		if (dpmon_addr_parse(buf, &p.addr) != 0)
			return bad_field(err, field, "is not an address or a prefix");
		p.family = dpmon_addr_is_v4(&p.addr) ? 4 : 6;
		p.depth = (uint8_t)dpmon_family_bits(p.family);
	} else if (dpmon_prefix_parse(buf, &p, NULL) != 0) {
		return bad_field(err, field, "is not an address or a prefix");
	}
	if (strchr(buf, ':') != NULL && dpmon_addr_is_v4(&p.addr) &&
	    (p.family == 4 || p.depth >= 96))
		return refused_field(err, field,
				     "is an IPv4-mapped IPv6 address: give the IPv4 address");
	if (p.depth == 0 && strcmp(field, "source") == 0)
		return refused_field(err, field,
				     "of length 0 matches everything: leave source out instead");
	*addr = p.addr;
	*len = p.depth;
	*family = p.family;
	return 0;
}

/* The protocol name or number @p v into @p r. */
static int
protocol_field(struct dpmon_fs_json_error *err, const json_t *v, struct dpmon_fs_rule *r)
{
	unsigned u;
	int rc;

	r->has_proto = 1;
	for (size_t i = 0; json_is_string(v) && i < sizeof(proto_names) / sizeof(proto_names[0]);
	     i++)
		if (strcmp(json_string_value(v), proto_names[i].name) == 0) {
			r->proto = proto_names[i].proto;
			return 0;
		}
	if (json_is_string(v))
		return bad_field(err, "protocol", "must be tcp, udp, icmp, icmpv6 or 0 .. 255");
	if ((rc = int_field(err, "protocol", v, 255, &u)) == 0)
		r->proto = (uint8_t)u;
	return rc;
}

/* One TCP flags value, names joined by '+' ("syn+ack"), as the exact match of
 * FIN .. URG; -1 for an unknown name or an empty one before a '+', -2 for
 * an empty text, a '+' at the end or a repeated name. */
static int
flags_value(const char *text)
{
	int v = 0;

	for (;;) {
		size_t n = strcspn(text, "+");
		unsigned b = 0;

		if (n == 0 && text[n] == '\0')
			return -2;
		while (b < 6 &&
		       (strlen(flag_names[b]) != n || strncmp(flag_names[b], text, n) != 0))
			b++;
		if (b == 6)
			return -1;
		if ((v & 1 << b) != 0)
			return -2;
		v |= 1 << b;
		if (text[n] == '\0')
			return v;
		text += n + 1;
	}
}

/* The "tcp_flags" array @p v into @p r. */
static int
flags_field(struct dpmon_fs_json_error *err, const json_t *v, struct dpmon_fs_rule *r)
{
	const json_t *x;
	size_t i;
	int f;

	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > DPMON_FS_VALUES)
		return bad_field(err, "tcp_flags", "must be an array of 1 .. %d values",
				 DPMON_FS_VALUES);
	json_array_foreach(v, i, x)
	{
		f = json_is_string(x) && strlen(json_string_value(x)) == json_string_length(x)
			    ? flags_value(json_string_value(x))
			    : -1;
		if (f < 0)
			return (f == -2 ? refused_field : bad_field)(
				err, item_path("tcp_flags", i),
				"must be flag names fin, syn, rst, push, ack, urgent joined by "
				"'+' (\"syn+ack\")");
		for (size_t j = 0; j < i; j++)
			if (r->flags[j] == f)
				return refused_field(
					err, item_path("tcp_flags", i),
					"repeats the flags of %s: give each value once",
					item_path("tcp_flags", j));
		r->flags[i] = (uint8_t)f;
	}
	r->n_flags = (uint8_t)json_array_size(v);
	return 0;
}

/* The "packet_length" object {"min", "max"} @p v into @p r. */
static int
length_field(struct dpmon_fs_json_error *err, const json_t *v, struct dpmon_fs_rule *r)
{
	const json_t *lo = json_object_get(v, "min"), *hi = json_object_get(v, "max");
	unsigned u = 0, w = UINT16_MAX;
	int rc;

	if (!json_is_object(v) || json_object_size(v) != (size_t)(lo != NULL) + (hi != NULL) ||
	    json_object_size(v) == 0)
		return bad_field(err, "packet_length", "must be an object {\"min\", \"max\"}");
	if ((lo != NULL && (rc = int_field(err, "packet_length.min", lo, UINT16_MAX, &u)) != 0) ||
	    (hi != NULL && (rc = int_field(err, "packet_length.max", hi, UINT16_MAX, &w)) != 0))
		return rc;
	r->has_len = 1;
	r->len_lo = (uint16_t)u;
	r->len_hi = (uint16_t)w;
	return 0;
}

/* The "action" text @p v into @p r. */
static int
action_field(struct dpmon_fs_json_error *err, const json_t *v, struct dpmon_fs_rule *r)
{
	const char *why = "must be a string";

	if (!json_is_string(v) ||
	    dpmon_fs_action_parse(json_string_value(v), &r->action, &why) != 0)
		return bad_field(err, "action", "%s", why);
	return 0;
}

/* The ICMP fields "icmp_type" and "icmp_code" (@p key) of value @p v into @p r. */
static int
icmp_field(struct dpmon_fs_json_error *err, const char *key, const json_t *v,
	   struct dpmon_fs_rule *r)
{
	uint16_t w[DPMON_FS_VALUES];
	unsigned u;
	int rc;

	if (strcmp(key, "icmp_type") == 0) {
		if ((rc = values_field(err, "icmp_type", v, 255, w, &r->n_icmp_type)) == 0)
			for (unsigned i = 0; i < r->n_icmp_type; i++)
				r->icmp_type[i] = (uint8_t)w[i];
		return rc;
	}
	if ((rc = int_field(err, "icmp_code", v, 255, &u)) == 0) {
		r->has_icmp_code = 1;
		r->icmp_code = (uint8_t)u;
	}
	return rc;
}

/* Field @p k (an index of rule_keys) of value @p v into @p r. */
static int
rule_field(struct dpmon_fs_json_error *err, size_t k, const json_t *v, struct dpmon_fs_rule *r)
{
	const char *key = rule_keys[k];
	uint8_t fam;

	switch (k) {
	case 0:
		return prefix_field(err, key, v, &r->dst, &r->dst_len, &r->family);
	case 1:
		return prefix_field(err, key, v, &r->src, &r->src_len, &fam);
	case 2:
		return protocol_field(err, v, r);
	case 3:
		return values_field(err, key, v, UINT16_MAX, r->sport, &r->n_sport);
	case 4:
		return values_field(err, key, v, UINT16_MAX, r->dport, &r->n_dport);
	case 5:
		return length_field(err, v, r);
	case 6:
		return flags_field(err, v, r);
	case 7:
		if (!json_is_boolean(v))
			return bad_field(err, key, "must be true or false");
		r->frag = json_is_true(v) ? DPMON_FS_FRAG_IS : DPMON_FS_FRAG_ANY;
		return 0;
	case 8:
	case 9:
		return icmp_field(err, key, v, r);
	default:
		return action_field(err, v, r);
	}
}

int
dpmon_fs_rule_from_json(json_t *doc, struct dpmon_fs_rule *out, struct dpmon_fs_json_error *err)
{
	const char *key;
	json_t *v;
	size_t k;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(err, 0, sizeof(*err));
	if (!json_is_object(doc)) {
		err->fault = DPMON_FS_JSON_NOT_OBJECT;
		return -EINVAL;
	}
	if (json_object_get(doc, "destination") == NULL)
		return bad_field(err, "destination", "is missing (an address or a prefix)");
	json_object_foreach(doc, key, v)
	{
		for (k = 0; rule_keys[k] != NULL && strcmp(rule_keys[k], key) != 0; k++)
			;
		if (rule_keys[k] == NULL) {
			err->fault = DPMON_FS_JSON_UNKNOWN_KEY;
			err->field = key;
			snprintf(err->what, sizeof(err->what), "unknown key");
			return -EINVAL;
		}
		if ((rc = rule_field(err, k, v, out)) != 0)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Writing.
 * --------------------------------------------------------------------- */

/* The @p n values of @p v as a JSON array. */
static json_t *
values_json(const uint16_t *v, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, json_integer(v[i])) != 0) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

/* TCP flags value @p f as its names joined by '+'. */
static json_t *
flags_json(uint8_t f)
{
	char t[48] = "";

	for (unsigned b = 0; b < 6; b++)
		if (f & (1u << b)) {
			if (t[0] != '\0')
				strcat(t, "+");
			strcat(t, flag_names[b]);
		}
	return json_string(t);
}

/* Set @p key of @p o to @p v (the reference taken); false when either is NULL. */
static bool
put(json_t *o, const char *key, json_t *v)
{
	return o != NULL && json_object_set_new(o, key, v) == 0;
}

json_t *
dpmon_fs_rule_to_json(const struct dpmon_fs_rule *r)
{
	char t[DPMON_PREFIX_STRLEN], act[32];
	uint16_t types[DPMON_FS_VALUES];
	json_t *o = json_object(), *flags = NULL;
	bool ok;

	ok = put(o, "destination",
		 json_string(dpmon_host_format(&r->dst, r->dst_len, t, sizeof(t))));
	if (ok && r->src_len > 0)
		ok = put(o, "source",
			 json_string(dpmon_host_format(&r->src, r->src_len, t, sizeof(t))));
	if (ok && r->has_proto)
		ok = put(o, "protocol", json_integer(r->proto));
	if (ok && r->n_sport > 0)
		ok = put(o, "source_ports", values_json(r->sport, r->n_sport));
	if (ok && r->n_dport > 0)
		ok = put(o, "destination_ports", values_json(r->dport, r->n_dport));
	if (ok && r->has_len)
		ok = put(o, "packet_length",
			 json_pack("{s:i,s:i}", "min", r->len_lo, "max", r->len_hi));
	if (ok && r->n_flags > 0) {
		ok = put(o, "tcp_flags", flags = json_array());
		for (unsigned i = 0; ok && i < r->n_flags; i++)
			ok = json_array_append_new(flags, flags_json(r->flags[i])) == 0;
	}
	if (ok && r->frag == DPMON_FS_FRAG_IS)
		ok = put(o, "fragment", json_true());
	for (unsigned i = 0; i < r->n_icmp_type; i++)
		types[i] = r->icmp_type[i];
	if (ok && r->n_icmp_type > 0)
		ok = put(o, "icmp_type", values_json(types, r->n_icmp_type));
	if (ok && r->has_icmp_code)
		ok = put(o, "icmp_code", json_integer(r->icmp_code));
	if (ok)
		ok = dpmon_fs_action_text(&r->action, act, sizeof(act)) > 0 &&
		     put(o, "action", json_string(act));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
