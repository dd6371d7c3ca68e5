/* SPDX-License-Identifier: BSD-3-Clause */
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
	[DPMON_REASON_IPV4_BAD_LENGTH] = "ipv4_bad_length",
	[DPMON_REASON_MPLS_NO_BOTTOM] = "mpls_no_bottom",
	[DPMON_REASON_L2_TOO_DEEP] = "l2_too_deep",
};
static_assert(NAME_COUNT(reason_names) == DPMON_REASON_MAX, "a reason has no name");

static const char *const anomaly_names[] = {
	[DPMON_ANOM_PKT_LEN_MISMATCH] = "pkt_len_mismatch",
	[DPMON_ANOM_IPV4_LEN_MISMATCH] = "ipv4_len_mismatch",
	[DPMON_ANOM_IPV4_OPTIONS_TRUNCATED] = "ipv4_options_truncated",
	[DPMON_ANOM_IPV6_LEN_MISMATCH] = "ipv6_len_mismatch",
	[DPMON_ANOM_IPV6_EXT_TRUNCATED] = "ipv6_ext_truncated",
	[DPMON_ANOM_IPV6_EXT_LIMIT] = "ipv6_ext_limit",
	[DPMON_ANOM_L4_TRUNCATED] = "l4_truncated",
	[DPMON_ANOM_TCP_BAD_OFFSET] = "tcp_bad_offset",
	[DPMON_ANOM_UDP_BAD_LENGTH] = "udp_bad_length",
	[DPMON_ANOM_GRE_TRUNCATED] = "gre_truncated",
	[DPMON_ANOM_TUNNEL_MALFORMED] = "tunnel_malformed",
	[DPMON_ANOM_TUNNEL_UNSUPPORTED] = "tunnel_unsupported",
	[DPMON_ANOM_TUNNEL_LIMIT] = "tunnel_limit",
};
static_assert(NAME_COUNT(anomaly_names) == DPMON_ANOM_MAX, "an anomaly has no name");
static_assert(DPMON_ANOM_MAX <= 16, "struct dpmon_pkt keeps anomalies in 16 bits");

static const char *const ipstat_names[] = {
	[DPMON_IPSTAT_FRAGMENTS] = "fragments",
	[DPMON_IPSTAT_DECAPSULATED] = "decapsulated",
	[DPMON_IPSTAT_TCP_SYN] = "tcp_syn",
};
static_assert(NAME_COUNT(ipstat_names) == DPMON_IPSTAT_MAX, "an ipstat has no name");

/* Indexed by bit position in enum dpmon_tunnel; the configuration's words. */
static const char *const tunnel_names[] = {
	"gre", "erspan", "vxlan", "ipip", "mpls_udp", "gre_udp",
};
static_assert(NAME_COUNT(tunnel_names) == DPMON_TUNNEL_KINDS, "a tunnel kind has no name");
static_assert(DPMON_TUNNEL_ALL == (1u << DPMON_TUNNEL_KINDS) - 1, "tunnel bits");

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

/* The name function @p fn of an enum @p type from its table @p table. */
#define NAME_FUNCTION(fn, type, table)                                 \
	const char *fn(type v)                                         \
	{                                                              \
		return name_of(table, NAME_COUNT(table), (unsigned)v); \
	}

NAME_FUNCTION(dpmon_reason_name, enum dpmon_reason, reason_names)
NAME_FUNCTION(dpmon_anomaly_name, enum dpmon_anomaly, anomaly_names)
NAME_FUNCTION(dpmon_ipstat_name, enum dpmon_ipstat, ipstat_names)
NAME_FUNCTION(dpmon_proto_name, enum dpmon_proto, proto_names)
NAME_FUNCTION(dpmon_dir_name, enum dpmon_dir, dir_names)
NAME_FUNCTION(dpmon_total_name, enum dpmon_total, total_names)

const char *
dpmon_tunnel_name(unsigned bit)
{
	return bit < DPMON_TUNNEL_KINDS ? tunnel_names[bit] : NULL;
}

const char *
dpmon_flag_name(enum dpmon_flag x)
{
	static const char *const names[DPMON_FLAG_MAX] = {
		[DPMON_FLAG_FRAG] = "fragments",
		[DPMON_FLAG_SYN] = "tcp_syn",
	};
	return name_of(names, DPMON_FLAG_MAX, (unsigned)x);
}
