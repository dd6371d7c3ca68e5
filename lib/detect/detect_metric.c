/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect_metric.c — what the detector reads of a direction's interval: the
 * value each metric compares with its limit, and the attack type
 * (detect_private.h). Used by the evaluation and by the alerts' life
 * cycle alike; calls nothing of either.
 */
#include "detect_private.h"

/* The value metric @p m compares with its limit: the averaged rates; flows per interval. */
double
detect_metric_value(const struct dpmon_dir_stats *s, int m)
{
	switch (m) {
	case DPMON_METRIC_PPS:
		return s->avg_pps;
	case DPMON_METRIC_BPS:
		return s->avg_bps;
	case DPMON_METRIC_FLOWS:
		return s->flows; /* -1: not measured, never above */
	case DPMON_METRIC_TCP_PPS:
		return s->avg_proto_pps[DPMON_PROTO_TCP];
	case DPMON_METRIC_TCP_BPS:
		return s->avg_proto_bps[DPMON_PROTO_TCP];
	case DPMON_METRIC_UDP_PPS:
		return s->avg_proto_pps[DPMON_PROTO_UDP];
	case DPMON_METRIC_UDP_BPS:
		return s->avg_proto_bps[DPMON_PROTO_UDP];
	case DPMON_METRIC_ICMP_PPS:
		return s->avg_proto_pps[DPMON_PROTO_ICMP];
	case DPMON_METRIC_ICMP_BPS:
		return s->avg_proto_bps[DPMON_PROTO_ICMP];
	case DPMON_METRIC_TCP_SYN_PPS:
		return s->avg_flag_pps[DPMON_FLAG_SYN];
	case DPMON_METRIC_FRAGMENTS_PPS:
		return s->avg_flag_pps[DPMON_FLAG_FRAG];
	default:
		return 0;
	}
}

/*
 * The attack type of one direction's interval: the first class holding
 * more than 90 % of its packets, in the order tcp_syn, fragments, UDP,
 * ICMP, TCP (SYNs are TCP and fragments are often UDP: the narrower class
 * names the attack); unknown otherwise, or without packets.
 */
enum dpmon_attack
detect_attack_type(const struct dpmon_dir_stats *s)
{
	double p = s->total.pps;

	if (!(p > 0))
		return DPMON_ATTACK_UNKNOWN;
	if (s->flag[DPMON_FLAG_SYN].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_SYN_FLOOD;
	if (s->flag[DPMON_FLAG_FRAG].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_FRAGMENT_FLOOD;
	if (s->proto[DPMON_PROTO_UDP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_UDP_FLOOD;
	if (s->proto[DPMON_PROTO_ICMP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_ICMP_FLOOD;
	if (s->proto[DPMON_PROTO_TCP].pps > ATTACK_SHARE * p)
		return DPMON_ATTACK_TCP_FLOOD;
	return DPMON_ATTACK_UNKNOWN;
}
