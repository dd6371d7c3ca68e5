/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect_metric.c — the attack type of a direction's interval
 * (detect_private.h; a metric's value is inline there). Used by the
 * alerts' life cycle; calls nothing of the detector.
 */
#include "detect_private.h"

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
