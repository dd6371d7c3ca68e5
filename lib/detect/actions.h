/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions.h — what dpmon does about an alert, off the data plane: run the
 * notify script, write announce/withdraw lines to ExaBGP's command pipe,
 * and keep the blackhole list (automatic and manual) with its state file.
 *
 * Producers (the main lcore's detection after each merge, the HTTP thread
 * for manual blackholes) post events; a thread of this module carries them
 * out with timeouts, so a slow script or a stalled pipe never delays a
 * merge. docs/detection.md ("Actions") documents
 * every argument and line.
 *
 * Blackholes: one entry per host, announced to ExaBGP as the host's route:
 * /32 or /128, or the host prefix of a subnet with a shorter
 * host_prefix_len (2001:db8:1:2::/64; never shorter than the subnet), made
 * by an operator (POST /api/v1/blackholes: "manual") or
 * by an alert of a banning hostgroup ("alert"). An entry ends when its last
 * reason ends: the last banning alert's ALERT_END withdraws an "alert"
 * entry, never a "manual" one; an operator's DELETE removes the entry
 * whatever its reasons. Only addresses inside a monitored subnet are ever
 * blackholed.
 */
#ifndef DPMON_ACTIONS_H
#define DPMON_ACTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "flowspec.h"
#include "prefix.h"
#include "stats.h"

/** Most blackholes at once (POST answers 507 beyond). */
#define DPMON_MAX_BLACKHOLES 65536

enum dpmon_action_kind {
	DPMON_ACTION_ALERT_START, /**< an alert started (detect.h) */
	DPMON_ACTION_ALERT_END,   /**< an alert ended */
};

/** One event for the actions thread. */
struct dpmon_action_event {
	enum dpmon_action_kind kind;
	struct dpmon_addr addr; /**< the host; a subnet's network address */
	/**
	 * A subnet alert's (target "subnet"): the notify script gets @c prefix
	 * where a host alert passes the address, and no blackhole is ever made.
	 */
	bool subnet;
	struct dpmon_prefix prefix; /**< the subnet, when @c subnet */
	enum dpmon_dir dir;         /**< direction of the threshold that fired */
	uint64_t alert_id;          /**< the alert's id in GET /api/v1/alerts/{id} */
	double start_unix_s;        /**< alert start, seconds since the epoch */
	double end_unix_s;          /**< alert end; 0 while active */
	bool ban; /**< the host's hostgroup (or the global default) bans; never a subnet */
	/**
	 * What a banning alert gets: only DPMON_MITIGATION_BLACKHOLE (the
	 * zero value) blackholes at the start; FlowSpec rules (and the
	 * blackhole fallback of flowspec+blackhole) come later, through
	 * dpmon_actions_flowspec, once the alert's sample is ready.
	 */
	enum dpmon_mitigation mitigation;
	/**
	 * The alert as the API shows it, for the notify script's stdin; the
	 * post takes this reference, and the object must not change after it
	 * (the actions thread reads it). NULL: a minimal object
	 * {"id","address" (a subnet alert: "prefix"),"direction","start_unix_s","end_unix_s"}
	 * is sent.
	 */
	json_t *alert;
};

struct dpmon_actions;

/**
 * Start the actions thread for @p conf (copied). Reads the state file, if
 * configured, and re-announces its blackholes.
 * @param conf  the "actions" keys of the configuration (config.h).
 * @return the module, or NULL with errno set: ENOMEM, EINVAL when the
 *         state file cannot be read or parsed (the reason is logged), or
 *         pthread_create's error.
 * Thread-safety: main lcore, once.
 */
struct dpmon_actions *dpmon_actions_create(const struct dpmon_actions_conf *conf);

/**
 * As dpmon_actions_create, knowing the monitored subnets of @p cfg (copied)
 * before the state file is read: blackholes loaded from it outside every
 * subnet are dropped (and withdrawn) instead of announced. setup.c (lib/run) uses this
 * one; dpmon_actions_create starts with no subnet (every manual blackhole
 * refused until dpmon_actions_reconfigure).
 * @param cfg  a validated configuration: its "subnets" and "actions".
 * @return the module, or NULL with errno set (as dpmon_actions_create).
 * Thread-safety: main lcore, once.
 */
struct dpmon_actions *dpmon_actions_create_cfg(const struct dpmon_config *cfg);

/**
 * Take a reloaded configuration: its monitored subnets and "actions" keys
 * (both copied). Blackholes outside every new subnet are removed and
 * withdrawn; when the ExaBGP pipe, next hop or community changed, every
 * blackhole is announced again (an announce replaces the route's
 * attributes). Takes effect for the next event; a running script finishes.
 * @param cfg  the reloaded configuration, validated.
 * @return 0, or -ENOMEM (nothing changed).
 * Thread-safety: any thread (the SIGHUP reload on the main lcore).
 */
int dpmon_actions_reconfigure(struct dpmon_actions *a, const struct dpmon_config *cfg);

/** One blackhole as the API shows it. */
struct dpmon_blackhole {
	struct dpmon_addr addr; /**< the host prefix's network address */
	/**
	 * The route's length, bits of the family: the host_prefix_len of the
	 * subnet when the entry was made (32 or 128 unless shorter; 0 = the
	 * whole address, in entries built by hand).
	 */
	uint8_t prefix_len;
	bool manual;         /**< an operator's POST; else only alerts hold it */
	uint64_t alert_id;   /**< the oldest banning alert still active; 0 = none */
	double since_unix_s; /**< when the entry was made */
	bool announced;      /**< its announce line was written to ExaBGP's pipe */
};

/**
 * Blackhole the host of @p addr on an operator's request (source
 * "manual"): @p addr's host prefix in its subnet (host_prefix_len; the
 * address itself by default). An "alert" entry of the same host becomes
 * manual (then its alert's end keeps it).
 * Never blocks on I/O: the actions thread writes the state file, the
 * announce line and runs the notify script ("ban").
 * @param addr  the host (IPv4 mapped, prefix.h).
 * @param out   the entry after the change; may be NULL.
 * @return 0 when the address was not manually blackholed before, 1 when it
 *         already was (nothing changed), -EDOM when @p addr is outside every
 *         monitored subnet, -ENOSPC at DPMON_MAX_BLACKHOLES, -ENOMEM.
 * Thread-safety: any thread (the HTTP thread).
 */
int dpmon_blackhole_add(struct dpmon_actions *a, const struct dpmon_addr *addr,
			struct dpmon_blackhole *out);

/**
 * Remove the blackhole of @p addr (that address's entry, else that of its
 * host prefix) whatever its source (idempotent); the
 * actions thread withdraws it, saves the state and notifies ("unban").
 * Never blocks on I/O.
 * @param addr  the host.
 * @return 0 when removed, 1 when there was none.
 * Thread-safety: any thread.
 */
int dpmon_blackhole_remove(struct dpmon_actions *a, const struct dpmon_addr *addr);

/**
 * The entry of @p addr (that address's, else that of its host prefix) into @p out.
 * @return 0, or -ENOENT when @p addr is not blackholed.
 * Thread-safety: any thread.
 */
int dpmon_blackhole_get(struct dpmon_actions *a, const struct dpmon_addr *addr,
			struct dpmon_blackhole *out);

/**
 * The length, in bits of its family, of the host prefix that a blackhole
 * of @p addr announces: its subnet's host_prefix_len (32 or 128 unless
 * shorter). @return it, or -EDOM when @p addr is outside every monitored
 * subnet. Thread-safety: any thread.
 */
int dpmon_blackhole_host_len(struct dpmon_actions *a, const struct dpmon_addr *addr);

/**
 * Every blackhole, sorted by address (IPv4 first), into a malloc'd array.
 * @param out  the array, the caller's to free().
 * @return the number of entries (*out NULL when 0), or -ENOMEM.
 * Thread-safety: any thread.
 */
int dpmon_blackhole_list(struct dpmon_actions *a, struct dpmon_blackhole **out);

/**
 * @p b as the API and the notify script's stdin show it:
 * {"address","source":"manual"|"alert","alert_id":N|null,"since","announced"}.
 * @return a new reference, or NULL (ENOMEM). Any thread.
 */
json_t *dpmon_blackhole_json(const struct dpmon_blackhole *b);

/**
 * Wait until every event queued before the call was carried out (state
 * saved, ExaBGP lines written or left for a retry, scripts finished).
 * For tests and an orderly stop. Thread-safety: any thread but the
 * actions thread.
 */
void dpmon_actions_flush(struct dpmon_actions *a);

/** What the actions did since start (dpmon_actions_stats), for the API and /metrics. */
struct dpmon_actions_stats {
	uint64_t events_dropped; /**< posts refused on a full queue (their scripts not run) */
	uint64_t notify_ok;      /**< notify script runs that exited 0 */
	uint64_t
		notify_failed; /**< runs that could not start, exited non-zero or died of a signal */
	uint64_t notify_killed;      /**< runs killed at notify_timeout_ms */
	uint32_t blackholes;         /**< entries in the blackhole list now */
	uint32_t flowspec_rules;     /**< FlowSpec rules in the list now */
	uint64_t flowspec_announced; /**< FlowSpec rules handed to ExaBGP's pipe since start */
	uint64_t flowspec_refused; /**< FlowSpec rules refused by flowspec.max_rules since start */
	bool exabgp_connected;     /**< ExaBGP's pipe is open (a reader is there) */
};

/**
 * Copy the counters of @p a into @p st (counts since the start).
 * Thread-safety: any thread (takes the module's lock for a few ns).
 */
void dpmon_actions_stats(struct dpmon_actions *a, struct dpmon_actions_stats *st);

/**
 * Queue @p ev; never blocks. Takes ev->alert's reference in every case
 * (ev->alert is NULL on return).
 * @param ev  the event; times in seconds since the epoch.
 * @return 0, or -ENOBUFS when the queue is full: the event's notify script
 *         is dropped (counted and logged), its blackhole list change is
 *         made at once (after those of the queued events).
 * Thread-safety: any thread.
 */
int dpmon_actions_post(struct dpmon_actions *a, struct dpmon_action_event *ev);

/**
 * The FlowSpec rules chosen for alert @p alert_id (@p c, from its sample):
 * each is added to the rules list and announced (unless
 * actions.flowspec.announce is false: listed and logged only), within the
 * budget actions.flowspec.max_rules; a rule past it is refused, counted and
 * logged. With no rule in @p c and @p blackhole_fallback (the hostgroup's
 * mitigation is flowspec+blackhole and the alert bans), the host of
 * @p addr is blackholed as a banning alert's start would. The rules go
 * flowspec.hold_s seconds after the alert's end (its ALERT_END event).
 * Never blocks on I/O: the actions thread writes the lines.
 * @param addr  the host (a host alert's; unused for a subnet alert).
 * @return the rules added (announced or dry run); the ones refused by the
 *         budget in *@p refused.
 * Thread-safety: any thread (the main lcore's detection).
 */
uint32_t dpmon_actions_flowspec(struct dpmon_actions *a, uint64_t alert_id,
				const struct dpmon_addr *addr, bool blackhole_fallback,
				const struct dpmon_fs_choice *c, uint32_t *refused);

/**
 * The FlowSpec rules as GET /api/v1/flowspec shows them: {"rules": [{"id",
 * "alert_id" (null for a manual rule), "match", "action", "announced",
 * "coverage", "packets", "created"}]}, by id.
 * @return a new reference, or NULL (ENOMEM). Thread-safety: any thread.
 */
json_t *dpmon_flowspec_list(struct dpmon_actions *a);

/**
 * Add a manual FlowSpec rule @p r (POST /api/v1/flowspec): no alert, so it
 * stays until dpmon_flowspec_remove or dpmon's stop (withdrawn then unless
 * actions.flowspec.keep_on_stop), announced like the alerts' rules (listed
 * only when actions.flowspec.announce is false) and counted in the same
 * budget actions.flowspec.max_rules. Its destination prefix must lie
 * inside a monitored subnet and share no address with detection.whitelist.
 * Never blocks on I/O: the actions thread writes the line. Refused
 * without actions.exabgp_pipe unless actions.flowspec.announce is false
 * (a dry run): nothing would announce it.
 * @param why  on -ENOTCONN, -EINVAL, -EDOM or -EEXIST, an English reason
 *             naming the component at fault (the whitelist entry, the
 *             listed rule's id), valid until the calling thread's next call.
 * @return the rule's id (> 0); -ENOTCONN (no actions.exabgp_pipe, not a
 *         dry run), -EINVAL (not a rule routers accept,
 *         dpmon_fs_rule_check), -EDOM (destination outside the subnets or
 *         meeting the whitelist), -EEXIST (a rule with the same match is
 *         listed), -ENOSPC (budget; counted and logged), -ENOMEM.
 * Thread-safety: any thread (the HTTP thread).
 */
int64_t dpmon_flowspec_add(struct dpmon_actions *a, const struct dpmon_fs_rule *r,
			   const char **why);

/**
 * Withdraw and forget FlowSpec rule @p id (DELETE /api/v1/flowspec/{id}).
 * @return 0, or -ENOENT. Thread-safety: any thread.
 */
int dpmon_flowspec_remove(struct dpmon_actions *a, uint64_t id);

/**
 * Stop the thread and free the module, within a bound whatever the queue
 * holds: first the list changes of every queued event are made, the state
 * file saved and the ExaBGP lines written (without blocking on the pipe);
 * then the queued notify scripts are dropped (counted in one log line),
 * and a script still running gets one second more at most before its
 * process group is killed. So the stop takes the state file's write plus
 * one second at most (docs/operations.md).
 * NULL ignored. Main lcore.
 */
void dpmon_actions_free(struct dpmon_actions *a);

#endif /* DPMON_ACTIONS_H */
