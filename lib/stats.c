/*
 * stats.c — the stable names of the enums in stats.h.
 *
 * The API and the telemetry output print these names, so they are part of
 * the external interface: never rename one, only add. Each table is indexed
 * by its enum and checked against the enum's size at compile time, so a new
 * enum value without a name fails the build instead of printing garbage.
 * An out-of-range value (a bug elsewhere) names itself "unknown" rather
 * than reading past the table.
 */
#include "stats.h"

#include <assert.h>
#include <stddef.h>

#define NAME_COUNT(t) (sizeof(t) / sizeof((t)[0]))

static const char *const reason_names[] = {
	[DPMON_REASON_OK] = "ok",
	[DPMON_REASON_NON_IP] = "non_ip",
	[DPMON_REASON_RUNT] = "runt",
	[DPMON_REASON_VLAN_TOO_DEEP] = "vlan_too_deep",
	[DPMON_REASON_IPV4_BAD_HEADER] = "ipv4_bad_header",
	[DPMON_REASON_IPV4_TRUNCATED] = "ipv4_truncated",
	[DPMON_REASON_IPV6_BAD_HEADER] = "ipv6_bad_header",
	[DPMON_REASON_IPV6_TRUNCATED] = "ipv6_truncated",
	[DPMON_REASON_IPV6_EXT_LIMIT] = "ipv6_ext_limit",
};
static_assert(NAME_COUNT(reason_names) == DPMON_REASON_MAX, "a reason has no name");

static const char *const proto_names[] = {
	[DPMON_PROTO_TCP] = "tcp",
	[DPMON_PROTO_UDP] = "udp",
	[DPMON_PROTO_ICMP] = "icmp",
	[DPMON_PROTO_OTHER] = "other",
};
static_assert(NAME_COUNT(proto_names) == DPMON_PROTO_MAX, "a protocol class has no name");

static const char *const dir_names[] = {
	[DPMON_DIR_INGRESS] = "ingress",
	[DPMON_DIR_EGRESS] = "egress",
};
static_assert(NAME_COUNT(dir_names) == DPMON_DIR_MAX, "a direction has no name");

static const char *const total_names[] = {
	[DPMON_TOTAL_INGRESS] = "ingress",
	[DPMON_TOTAL_EGRESS] = "egress",
	[DPMON_TOTAL_INTERNAL] = "internal",
	[DPMON_TOTAL_EXTERNAL] = "external",
};
static_assert(NAME_COUNT(total_names) == DPMON_TOTAL_MAX, "a totals category has no name");

/* Look @p i up in a table of @p n names; "unknown" when out of range. */
static const char *
name_of(const char *const *table, unsigned n, unsigned i)
{
	return i < n && table[i] != NULL ? table[i] : "unknown";
}

const char *
dpmon_reason_name(enum dpmon_reason r)
{
	return name_of(reason_names, DPMON_REASON_MAX, (unsigned)r);
}

const char *
dpmon_proto_name(enum dpmon_proto p)
{
	return name_of(proto_names, DPMON_PROTO_MAX, (unsigned)p);
}

const char *
dpmon_dir_name(enum dpmon_dir d)
{
	return name_of(dir_names, DPMON_DIR_MAX, (unsigned)d);
}

const char *
dpmon_total_name(enum dpmon_total t)
{
	return name_of(total_names, DPMON_TOTAL_MAX, (unsigned)t);
}
