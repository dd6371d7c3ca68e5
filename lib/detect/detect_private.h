/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect_private.h — what the files of the detector share: its state
 * (struct dpmon_detect, the host and subnet states) and the functions
 * detect.c calls in the others. Only lib/detect/detect*.c include it;
 * everyone else uses detect.h.
 *
 * detect.c owns the detector (its settings, tables and states) and, for
 * each snapshot, calls the pieces, which never call back into it:
 *
 *   detect_eval.c     pass 1: hosts and subnets against their thresholds
 *   detect_alerts.c   pass 2 and 3: the alerts' life cycle, the sampler's
 *                     watch list and the snapshot's alert list
 *   detect_metric.c   the attack type of an interval (for the life cycle),
 *                     and the values less the ignored sources' packets
 *
 * Everything here runs on the main lcore.
 */
#ifndef DPMON_DETECT_PRIVATE_H
#define DPMON_DETECT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "detect.h"
#include "prefix_table.h"

/* ------------------------------------------------------------------------
 * Types.
 * --------------------------------------------------------------------- */

/* Share of the interval's packets above which a class names the attack. */
#define ATTACK_SHARE    0.9
/* Hostgroup index of hosts under the global thresholds. */
#define GROUP_GLOBAL    (-1)
/* Hostgroup index of whitelisted hosts (never alert). */
#define GROUP_WHITELIST (-2)
/* sub_entry of a host's state. */
#define SUBNET_NONE     (-1)
/* sub_entry of a subnet no longer configured (it never alerts). */
#define SUBNET_GONE     (-2)

/* A monitored subnet's detection settings: a copy of its configuration's. */
struct subnet_entry {
	struct dpmon_prefix prefix;
	char name[DPMON_NAME_LEN];
	struct dpmon_thresholds thresholds;
	bool watched; /* detection on and some limit set */
};

/*
 * A host or subnet being watched: above a limit now, or under alert.
 * Host states have @c sub_entry SUBNET_NONE; a subnet's state has the
 * subnet's prefix in @c prefix (and its network address in @c addr).
 */
struct host_state {
	struct dpmon_addr addr;
	int32_t group;     /* hostgroup index, GROUP_GLOBAL, GROUP_WHITELIST; subnets: unused */
	int32_t sub_entry; /* a subnet's index in dpmon_detect.subnets, or SUBNET_* */
	struct dpmon_prefix prefix;          /* the subnet */
	const struct dpmon_snap_subnet *sub; /* a subnet in this run's snapshot, or NULL */
	uint32_t above[DPMON_DIR_MAX];       /* consecutive intervals above */
	int8_t fired[DPMON_DIR_MAX];         /* metric above now by the largest factor, -1 none */
	double last_above_s[DPMON_DIR_MAX];  /* uptime of the last interval above */
	struct dpmon_alert *alert[DPMON_DIR_MAX]; /* current version, or NULL */
	const struct dpmon_snap_host *host;       /* in this run's snapshot, or NULL */
	/* Its ingress from ignored sources in this run's snapshot, or NULL (none). */
	const struct dpmon_dir_stats *ignored;
	bool seen; /* a subnet's old state: its subnet is in this run's snapshot */
};

struct dpmon_detect {
	/*
	 * The settings in use: a copy of the configuration's (hostgroups
	 * without their prefix lists, which the tables below hold), so a
	 * reload swaps them with the tables in one step (dpmon_detect_reconfigure).
	 */
	struct dpmon_detect_conf own;
	const struct dpmon_detect_conf *conf; /* = &own */
	struct dpmon_sampler *sampler;
	struct dpmon_actions *actions;
	struct dpmon_prefix_table groups, whitelist;
	/* Smallest watched limit per direction and metric; INFINITY = none. */
	/* The (direction, metric) pairs some threshold watches, with the
	 * smallest limit over the global thresholds and enabled hostgroups. */
	struct {
		uint8_t dir, metric;
		double limit;
	} watch[DPMON_DIR_MAX * DPMON_METRIC_MAX];
	unsigned n_watch;
	struct host_state *states, *next; /* sorted by address */
	uint32_t n_states, cap_states, n_next, cap_next;
	struct dpmon_alert **recent; /* ring of ended alerts, oldest at head */
	uint32_t n_recent, recent_head;
	uint64_t last_id, started;
	uint32_t active;
	uint64_t watched[DPMON_SAMPLE_WATCH_MAX];
	unsigned n_watched;
	uint64_t untracked; /* hosts above a limit left out for lack of memory */
	/* Subnets: their settings in configuration order, their indices sorted
	 * by prefix (lookup of a snapshot's subnet), and their states sorted by
	 * prefix, swapped with the next ones like the hosts'. */
	struct subnet_entry *subnets;
	uint32_t *subnet_order;
	uint32_t n_subnets, n_subnets_watched;
	struct host_state *sstates, *snext;
	uint32_t n_sstates, cap_sstates, n_snext, cap_snext;
	uint64_t subnet_started;
	uint32_t subnet_active;
	const struct dpmon_snapshot *snap; /* during a run: its snapshot (host values as of it) */
};

/* ------------------------------------------------------------------------
 * Settings and states.
 * --------------------------------------------------------------------- */

/* Thresholds of hosts in @p group; NULL when they never alert. */
static inline const struct dpmon_thresholds *
thresholds_of(const struct dpmon_detect *d, int32_t group)
{
	if (group == GROUP_WHITELIST)
		return NULL;
	if (group == GROUP_GLOBAL)
		return &d->conf->thresholds;
	if (!d->conf->hostgroups[group].enabled)
		return NULL;
	return &d->conf->hostgroups[group].thresholds;
}

static inline bool
has_alert(const struct host_state *st)
{
	return st->alert[DPMON_DIR_INGRESS] != NULL || st->alert[DPMON_DIR_EGRESS] != NULL;
}

/* ------------------------------------------------------------------------
 * Metrics (detect_metric.c).
 * --------------------------------------------------------------------- */

/*
 * The value metric @p m (enum dpmon_metric) of @p s compares with its
 * limit: the averaged rates (packets or bits per second); flows per
 * interval (-1: not measured, never above). Inline: pass 1 calls it for
 * every host and watched metric.
 */
static inline double
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
 * The attack type of one direction's interval @p s: the first class
 * holding more than ATTACK_SHARE of its packets, in the order tcp_syn,
 * fragments, UDP, ICMP, TCP; unknown otherwise, or without packets.
 */
enum dpmon_attack detect_attack_type(const struct dpmon_dir_stats *s);

/*
 * @p v less the packets from ignored sources @p ign (snapshot.h) into
 * @p out (which may be @p v): every interval rate and average, never below
 * 0; the cumulative counts, flows and peers stay @p v's (flows are a
 * sketch: the ignored packets' flows cannot be taken out). @return @p out.
 */
const struct dpmon_dir_stats *detect_minus_ignored(struct dpmon_dir_stats *out,
						   const struct dpmon_dir_stats *v,
						   const struct dpmon_dir_stats *ign);

/* ------------------------------------------------------------------------
 * Pass 1: evaluation (detect_eval.c).
 * --------------------------------------------------------------------- */

/* Hostgroup index of @p a, GROUP_GLOBAL, or GROUP_WHITELIST. */
int32_t detect_group_of(const struct dpmon_detect *d, const struct dpmon_addr *a);

/* The subnet entry of prefix @p p, or SUBNET_GONE; @p hint: its likely index. */
int32_t detect_subnet_entry_of(const struct dpmon_detect *d, uint32_t hint,
			       const struct dpmon_prefix *p);

/* d->watch: the smallest limit of every watched (direction, metric) over
 * the global thresholds and every enabled hostgroup (after a change of
 * the settings; d->n_watch is 0 before). */
void detect_watch_limits(struct dpmon_detect *d);

/*
 * One pass over the hosts of @p s, merge-joined with d->states (both
 * sorted by address), into d->next: the states of hosts above a limit or
 * under alert, with what fired. Room for every old state is reserved
 * first, so an old state (and its alerts) is never lost; a new host above
 * a limit that finds no memory is left untracked for this interval
 * (counted in d->untracked).
 * @return 0, or -ENOMEM before anything changed.
 */
int detect_pass_hosts(struct dpmon_detect *d, const struct dpmon_snapshot *s);

/*
 * The subnets of @p s against their thresholds, from d->sstates into
 * d->snext (sorted by prefix), as detect_pass_hosts. Costs nothing while
 * no subnet has limits or a state.
 * @return 0, or -ENOMEM before anything changed.
 */
int detect_pass_subnets(struct dpmon_detect *d, const struct dpmon_snapshot *s);

/* ------------------------------------------------------------------------
 * Pass 2 and 3: the life cycle (detect_alerts.c).
 * --------------------------------------------------------------------- */

/*
 * Pass 2 over @p n states @p states (hosts' or subnets', just evaluated
 * on @p s): intervals above counted, alerts started, followed and ended,
 * their events posted to the actions.
 */
void detect_cycle(struct dpmon_detect *d, struct host_state *states, uint32_t n,
		  const struct dpmon_snapshot *s, double now_unix_s);

/*
 * Detection is off (a reload turned it off): end every active alert now,
 * with its last sample, and forget the states. A state whose end found no
 * memory stays, and is ended at the next run.
 */
void detect_end_all(struct dpmon_detect *d, double now_unix_s);

/*
 * Pass 3: the sampler's watch list, and the active and recent alerts
 * attached to @p s, newest first (with its alert counts).
 * @return 0, or -ENOMEM (the counts are still set).
 */
int detect_attach_alerts(struct dpmon_detect *d, struct dpmon_snapshot *s, double now_unix_s);

#endif /* DPMON_DETECT_PRIVATE_H */
