/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowspec_terms.c — the BGP FlowSpec vocabulary (flowspec_terms.h): the
 * actions' text, parse and check, the components' and mitigations' names.
 */
#include "flowspec_terms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Actions.
 * --------------------------------------------------------------------- */

int
dpmon_fs_action_check(const struct dpmon_fs_action *a, const char **why)
{
	const char *dummy = NULL;

	why = why != NULL ? why : &dummy;
	switch (a->kind) {
	case DPMON_FS_DISCARD:
		return 0;
	case DPMON_FS_RATE_LIMIT:
		if (a->rate > DPMON_FS_RATE_MAX) {
			*why = "rate-limit above 10^12 bytes/s";
			return -EINVAL;
		}
		return 0;
	case DPMON_FS_REDIRECT:
		if (a->asn > UINT16_MAX && a->value > UINT16_MAX) {
			*why = "redirect with a 32-bit ASN takes a 16-bit value (RFC 7674)";
			return -EINVAL;
		}
		return 0;
	case DPMON_FS_MARK:
		if (a->dscp > 63) {
			*why = "DSCP above 63";
			return -EINVAL;
		}
		return 0;
	}
	*why = "unknown action";
	return -EINVAL;
}

int
dpmon_fs_action_text(const struct dpmon_fs_action *a, char *buf, size_t len)
{
	int w = -1;

	switch (a->kind) {
	case DPMON_FS_DISCARD:
		w = snprintf(buf, len, "discard");
		break;
	case DPMON_FS_RATE_LIMIT:
		w = snprintf(buf, len, "rate-limit %" PRIu64, a->rate);
		break;
	case DPMON_FS_REDIRECT:
		w = snprintf(buf, len, "redirect %" PRIu32 ":%" PRIu32, a->asn, a->value);
		break;
	case DPMON_FS_MARK:
		w = snprintf(buf, len, "mark %u", a->dscp);
		break;
	}
	return w < 0 || (size_t)w >= len ? -ENOSPC : w;
}

/*
 * A decimal number of at most 13 digits at @p s, up to @p end (a
 * character that must follow it: '\0' or ':'). @return the position
 * after it, or NULL.
 */
static const char *
decimal(const char *s, char end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned n = 0;

	for (; *s >= '0' && *s <= '9'; s++, n++) {
		if (n == 13)
			return NULL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (n == 0 || *s != end)
		return NULL;
	*out = v;
	return s;
}

int
dpmon_fs_action_parse(const char *text, struct dpmon_fs_action *out, const char **why)
{
	const char *dummy = NULL, *p;
	uint64_t x, y;

	why = why != NULL ? why : &dummy;
	memset(out, 0, sizeof(*out));
	*why = "expected discard, rate-limit BYTES_PER_S, redirect ASN:VALUE or mark DSCP";
	if (strcmp(text, "discard") == 0) {
		out->kind = DPMON_FS_DISCARD;
		return 0;
	}
	if (strncmp(text, "rate-limit ", 11) == 0) {
		if (decimal(text + 11, '\0', &x) == NULL)
			return -EINVAL;
		out->kind = DPMON_FS_RATE_LIMIT;
		out->rate = x;
		return dpmon_fs_action_check(out, why);
	}
	if (strncmp(text, "redirect ", 9) == 0) {
		p = decimal(text + 9, ':', &x);
		if (p == NULL || decimal(p + 1, '\0', &y) == NULL)
			return -EINVAL;
		if (x > UINT32_MAX || y > UINT32_MAX) {
			*why = "redirect ASN and value must fit 32 bits";
			return -EINVAL;
		}
		out->kind = DPMON_FS_REDIRECT;
		out->asn = (uint32_t)x;
		out->value = (uint32_t)y;
		return dpmon_fs_action_check(out, why);
	}
	if (strncmp(text, "mark ", 5) == 0) {
		if (decimal(text + 5, '\0', &x) == NULL)
			return -EINVAL;
		if (x > 63) {
			*why = "DSCP above 63";
			return -EINVAL;
		}
		out->kind = DPMON_FS_MARK;
		out->dscp = (uint8_t)x;
		return 0;
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------------
 * Components and mitigations.
 * --------------------------------------------------------------------- */

const char *
dpmon_fs_component_name(unsigned c)
{
	static const char *const names[] = {"source_port",  "destination_port", "packet_length",
					    "tcp_flags",    "fragment",         "icmp",
					    "source_prefix"};

	for (unsigned b = 0; b < sizeof(names) / sizeof(names[0]); b++)
		if (c == 1u << b)
			return names[b];
	return NULL;
}

static const char *const mitigation_names[] = {"blackhole", "flowspec", "flowspec+blackhole",
					       "none"};

const char *
dpmon_mitigation_name(enum dpmon_mitigation m)
{
	return (unsigned)m < 4 ? mitigation_names[m] : "blackhole";
}

int
dpmon_mitigation_parse(const char *text, enum dpmon_mitigation *out)
{
	for (unsigned m = 0; m < 4; m++)
		if (strcmp(text, mitigation_names[m]) == 0) {
			*out = (enum dpmon_mitigation)m;
			return 0;
		}
	return -EINVAL;
}
