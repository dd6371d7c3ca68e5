/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect_metric.c — the attack type of a direction's interval, and a
 * direction's values less the packets of ignored sources
 * (detect_private.h; a metric's value is inline there). Used by the
 * thresholds' pass and the alerts' life cycle; calls nothing of the detector.
 */
#include "detect_private.h"

/* @p x less @p y, never below 0 (a host's record may be as of an older merge). */
static inline double
minus(double x, double y)
{
	return x > y ? x - y : 0.0;
}

static void
rate_minus(struct dpmon_rate *r, const struct dpmon_rate *ign)
{
	r->pps = minus(r->pps, ign->pps);
	r->bps = minus(r->bps, ign->bps);
}

const struct dpmon_dir_stats *
detect_minus_ignored(struct dpmon_dir_stats *out, const struct dpmon_dir_stats *v,
		     const struct dpmon_dir_stats *ign)
{
	if (out != v)
		*out = *v;
	rate_minus(&out->total, &ign->total);
	out->avg_pps = minus(out->avg_pps, ign->avg_pps);
	out->avg_bps = minus(out->avg_bps, ign->avg_bps);
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		rate_minus(&out->proto[p], &ign->proto[p]);
		out->avg_proto_pps[p] = minus(out->avg_proto_pps[p], ign->avg_proto_pps[p]);
		out->avg_proto_bps[p] = minus(out->avg_proto_bps[p], ign->avg_proto_bps[p]);
	}
	for (int f = 0; f < DPMON_FLAG_MAX; f++) {
		rate_minus(&out->flag[f], &ign->flag[f]);
		out->avg_flag_pps[f] = minus(out->avg_flag_pps[f], ign->avg_flag_pps[f]);
	}
	return out;
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
