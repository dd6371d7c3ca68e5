/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_flowspec.h — the FlowSpec rules list: the rules chosen for the
 * alerts (lib/detect/flowspec.h) and the manual ones of the API, each a route of ExaBGP's pipe keyed
 * "flow:ID" (actions_exabgp.h), with a budget of actions.flowspec.max_rules
 * rules at once. A rule is withdrawn hold_s seconds after its alert ended;
 * with flowspec.announce false (a dry run) rules are listed and logged,
 * never sent. At dpmon's stop the pipe writer withdraws them unless
 * flowspec.keep_on_stop. A leaf of actions.c (actions_private.h): the
 * caller holds the module's lock around every call.
 */
#ifndef DPMON_ACTIONS_FLOWSPEC_H
#define DPMON_ACTIONS_FLOWSPEC_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "actions_exabgp.h"
#include "config.h"
#include "flowspec.h"

/** One rule of the list. */
struct fs_entry {
	uint64_t id;       /**< 1, 2, ... since start: "flow:ID" in the pipe, the API's id */
	uint64_t alert_id; /**< the alert it mitigates; 0 for a manual rule */
	struct dpmon_fs_rule rule;
	uint32_t matched; /**< sample packets it matched */
	double coverage;  /**< estimated share of the attack's packets matched, 0..1 */
	double created;   /**< seconds since the epoch */
	double ended;     /**< its alert's end (seconds since the epoch); 0 while active */
	bool sent;        /**< handed to the pipe writer (false in a dry run) */
};

/** The list. Zeroed is empty. */
struct fs_list {
	struct fs_entry *v;
	uint32_t n, cap;
	uint64_t last_id;
	uint64_t announced; /**< rules handed to the pipe since start */
	uint64_t refused;   /**< rules refused by the budget since start */
	uint64_t gen;       /**< bumped at each change of the rules sent (the state file) */
};

/**
 * Add rule @p r of alert @p alert_id: announced through @p e unless @p c
 * says a dry run. Past @p c->max_rules rules the rule is refused.
 * @return its id (> 0), -ENOSPC when refused by the budget (counted), or
 *         -ENOMEM / the pipe writer's error (nothing added).
 */
int64_t actions_fs_add(struct fs_list *l, struct actions_exabgp *e,
		       const struct dpmon_flowspec_conf *c, uint64_t alert_id,
		       const struct dpmon_fs_rule *r, uint32_t matched, double coverage,
		       double now_unix_s);

/** Alert @p alert_id ended at @p now_unix_s: its rules go at the next actions_fs_expire. */
void actions_fs_alert_end(struct fs_list *l, uint64_t alert_id, double now_unix_s);

/**
 * Withdraw (through @p e) and forget the rules whose alert ended at least
 * @p hold_s seconds before @p now_unix_s.
 * @return how many went.
 */
uint32_t actions_fs_expire(struct fs_list *l, struct actions_exabgp *e, uint32_t hold_s,
			   double now_unix_s);

/** Withdraw and forget rule @p id. @return 0, or -ENOENT. */
int actions_fs_remove(struct fs_list *l, struct actions_exabgp *e, uint64_t id);

/**
 * The list as the API shows it: {"rules": [{"id", "alert_id" (null for a
 * manual rule), "match", "action", "announced", "coverage", "packets",
 * "created"}]}.
 * @return a new reference, or NULL (out of memory).
 */
json_t *actions_fs_json(const struct fs_list *l, struct actions_exabgp *e);

/** Where a manual rule's destination may point: inside a monitored subnet, clear of the whitelist. */
struct fs_scope {
	struct dpmon_prefix *subnets; /**< malloc'd: the monitored subnets */
	uint32_t n_subnets;
	struct dpmon_prefix *whitelist; /**< malloc'd: detection.whitelist */
	uint32_t n_whitelist;
};

/**
 * Take @p cfg's monitored subnets and whitelist into @p s, replacing what
 * it held. @return 0, or -ENOMEM with @p s unchanged.
 */
int actions_fs_scope_take(struct fs_scope *s, const struct dpmon_config *cfg);

/** Free @p s's memory; zeroed, it is an empty scope. */
void actions_fs_scope_free(struct fs_scope *s);

/**
 * The rules sent to the pipe as the state file keeps them (actions_state.h),
 * by id: [{"id", "alert_id" (0 for a manual rule), "announce", "withdraw",
 * "created"}], each line an ExaBGP command without its newline; a manual
 * rule also has "rule", its components (flowspec_json.h). A dry run's
 * rules are not there (never sent).
 * @return a new reference, or NULL (out of memory).
 */
json_t *actions_fs_state_json(const struct fs_list *l);

/**
 * The start, on the state file's array @p saved (actions_fs_state_json;
 * NULL or empty: none). A manual rule with its "rule" is listed again
 * under its id and announced through @p e, as actions_fs_add_manual would
 * (its destination checked against @p s only when @p s has subnets), so
 * that manual rules survive a restart as manual blackholes do. Every
 * other rule is withdrawn by its "withdraw" line and forgotten (the next
 * save leaves it out: l->gen bumped): an alert's rule, since the alerts
 * did not survive the restart, and a manual rule refused now (out of
 * scope, the same match as another, the budget spent, or a dry run:
 * logged with the reason). New rules take ids past the largest one of
 * @p saved, so that a new rule's announce never cancels a withdraw still
 * waiting for the pipe.
 * @param c     the settings (announce, max_rules, keep_on_stop).
 * @param path  the state file, for the log lines.
 * @return the number of rules withdrawn, or -EINVAL (logged with the JSON
 *         path and why) for a malformed entry (an id above 2^53 - 1
 *         included) or two entries with one id, or -ENOMEM; nothing
 *         changed.
 * Before the actions thread starts.
 */
int actions_fs_restore(struct fs_list *l, struct actions_exabgp *e,
		       const struct dpmon_flowspec_conf *c, const struct fs_scope *s,
		       const json_t *saved, const char *path);

/**
 * Add a manual rule @p r (no alert: it stays until actions_fs_remove or
 * dpmon's stop), announced through @p e unless @p c says a dry run. It
 * must pass dpmon_fs_rule_check, its destination prefix must lie inside
 * one of @p s's subnets and share no address with its whitelist, and no
 * rule of the list may have the same match (RFC 8955 section 4: the same
 * route). Past @p c->max_rules rules it is refused and counted.
 * @param why  on -EINVAL, -EDOM or -EEXIST, an English reason naming the
 *             whitelist entry or the listed rule at fault, valid until the
 *             calling thread's next call.
 * @return its id (> 0); -EINVAL (not a rule routers accept), -EDOM
 *         (destination out of scope), -EEXIST (same match as a rule of the
 *         list), -ENOSPC (budget), -ENOMEM or the pipe writer's error.
 */
int64_t actions_fs_add_manual(struct fs_list *l, struct actions_exabgp *e,
			      const struct dpmon_flowspec_conf *c, const struct fs_scope *s,
			      const struct dpmon_fs_rule *r, double now_unix_s, const char **why);

/** Free the list's memory (no line is written). */
void actions_fs_free(struct fs_list *l);

#endif /* DPMON_ACTIONS_FLOWSPEC_H */
