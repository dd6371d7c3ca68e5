/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_flowspec.c — the configuration's "actions.flowspec" object (the
 * FlowSpec rules' settings), and the FlowSpec values other sections use:
 * an action ("hostgroups[].flowspec_action") and a mitigation
 * ("detection.mitigation", "hostgroups[].mitigation"). docs/detection.md,
 * "FlowSpec", describes them.
 */
#include "config_private.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Values.
 * --------------------------------------------------------------------- */

bool
config_parse_flowspec_action(struct dpmon_check *c, const char *path, const json_t *v,
			     struct dpmon_fs_action *out)
{
	char q[DPMON_CHECK_PATH_LEN];
	struct dpmon_fs_action a;
	const char *why;

	if (!json_is_string(v)) {
		dpmon_check_type(c, path, "string", v);
		return false;
	}
	if (dpmon_fs_action_parse(json_string_value(v), &a, &why) != 0) {
		dpmon_check_report(c, path, "%s, got %s", why,
				   dpmon_check_quote(json_string_value(v), q, sizeof(q)));
		return false;
	}
	*out = a;
	return true;
}

bool
config_parse_mitigation(struct dpmon_check *c, const char *path, const json_t *v,
			enum dpmon_mitigation *out)
{
	char q[DPMON_CHECK_PATH_LEN];

	if (!json_is_string(v)) {
		dpmon_check_type(c, path, "string", v);
		return false;
	}
	if (dpmon_mitigation_parse(json_string_value(v), out) != 0) {
		dpmon_check_report(
			c, path, "expected blackhole, flowspec, flowspec+blackhole or none, got %s",
			dpmon_check_quote(json_string_value(v), q, sizeof(q)));
		return false;
	}
	return true;
}

/* "min_coverage": a number in (0, 1]. */
static void
parse_coverage(struct dpmon_check *c, const char *path, const json_t *v, double *out)
{
	double x;

	if (!json_is_number(v)) {
		dpmon_check_type(c, path, "number", v);
		return;
	}
	x = json_number_value(v);
	if (!(x > 0 && x <= 1)) {
		char got[32];

		/* Digits enough to tell the value from the bound (1.0000001 is not 1). */
		snprintf(got, sizeof(got), "%.15g", x);
		if (strtod(got, NULL) != x)
			snprintf(got, sizeof(got), "%.17g", x);
		dpmon_check_report(c, path, "must be above 0 and at most 1, got %s", got);
		return;
	}
	*out = x;
}

/* "components": {"source_port": false, ...}, each a switch of enum dpmon_fs_component. */
static void
parse_components(struct dpmon_check *c, const char *path, json_t *obj, uint32_t *mask)
{
	struct dpmon_check_member m;

	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		unsigned bit = 0;

		for (unsigned b = 1; b < DPMON_FS_C_ALL; b <<= 1)
			if (strcmp(m.key, dpmon_fs_component_name(b)) == 0)
				bit = b;
		if (bit == 0) {
			if (!dpmon_check_is_comment(m.key))
				dpmon_check_report(
					c, m.path,
					"unknown component (expected one of source_port, "
					"destination_port, packet_length, tcp_flags, fragment, "
					"icmp, "
					"source_prefix)");
		} else if (!json_is_boolean(m.v)) {
			dpmon_check_type(c, m.path, "boolean", m.v);
		} else if (json_is_true(m.v)) {
			*mask |= bit;
		} else {
			*mask &= ~bit;
		}
	}
}

/* ------------------------------------------------------------------------
 * The object.
 * --------------------------------------------------------------------- */

void
config_flowspec_defaults(struct dpmon_flowspec_conf *f)
{
	*f = (struct dpmon_flowspec_conf){.announce = true,
					  .action = {.kind = DPMON_FS_DISCARD},
					  .min_coverage = 0.95,
					  .sample_packets = 500,
					  .sample_timeout_s = 10,
					  .max_rules = 100,
					  .max_rules_per_alert = 3,
					  .components = DPMON_FS_C_ALL};
}

/* The integer keys of the object. */
static const struct dpmon_check_int_key flowspec_ints[] = {
	DPMON_CHECK_U32_KEY("sample_packets", 1, DPMON_FLOWSPEC_MAX_SAMPLE,
			    struct dpmon_flowspec_conf, sample_packets),
	DPMON_CHECK_U32_KEY("sample_timeout_s", 1, 3600, struct dpmon_flowspec_conf,
			    sample_timeout_s),
	DPMON_CHECK_U32_KEY("max_rules", 1, 100000, struct dpmon_flowspec_conf, max_rules),
	DPMON_CHECK_U32_KEY("max_rules_per_alert", 1, DPMON_FLOWSPEC_MAX_PER_ALERT,
			    struct dpmon_flowspec_conf, max_rules_per_alert),
	DPMON_CHECK_U32_KEY("hold_s", 0, 86400, struct dpmon_flowspec_conf, hold_s),
};

void
config_parse_flowspec(struct dpmon_check *c, const char *path, json_t *obj,
		      struct dpmon_flowspec_conf *f)
{
	struct dpmon_check_member m;

	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "announce") == 0) {
			dpmon_check_bool(c, m.path, m.v, &f->announce);
		} else if (strcmp(m.key, "keep_on_stop") == 0) {
			dpmon_check_bool(c, m.path, m.v, &f->keep_on_stop);
		} else if (strcmp(m.key, "action") == 0) {
			config_parse_flowspec_action(c, m.path, m.v, &f->action);
		} else if (strcmp(m.key, "min_coverage") == 0) {
			parse_coverage(c, m.path, m.v, &f->min_coverage);
		} else if (strcmp(m.key, "components") == 0) {
			parse_components(c, m.path, m.v, &f->components);
		} else if (!dpmon_check_int_key(c, m.path, m.key, m.v,
						DPMON_CHECK_KEYS(flowspec_ints), f) &&
			   !dpmon_check_is_comment(m.key)) {
			dpmon_check_unknown(c, m.path);
		}
	}
}
