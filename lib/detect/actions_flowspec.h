/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_flowspec.h — the FlowSpec rules list: the rules chosen for the
 * alerts (lib/detect/flowspec.h), each a route of ExaBGP's pipe keyed
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

/**
 * The rules sent to the pipe as the state file keeps them (actions_state.h),
 * by id: [{"id", "alert_id" (0 for a manual rule), "announce", "withdraw",
 * "created"}], each line an ExaBGP command without its newline. A dry
 * run's rules are not there (never sent).
 * @return a new reference, or NULL (out of memory).
 */
json_t *actions_fs_state_json(const struct fs_list *l);

/**
 * The start: withdraw through @p e every rule of the state file's array
 * @p saved (actions_fs_state_json; NULL or empty: none), each by its
 * "withdraw" line, since the alerts they mitigate did not survive the
 * restart; then they are forgotten (the next save leaves them out: l->gen
 * bumped). New rules take ids past the largest one of @p saved, so that a
 * new rule's announce never cancels a withdraw still waiting for the pipe.
 * @param path  the state file, for the log lines.
 * @return the number of rules withdrawn, or -EINVAL (logged with the JSON
 *         path and why) for a malformed entry, nothing withdrawn.
 * Before the actions thread starts.
 */
int actions_fs_restore(struct fs_list *l, struct actions_exabgp *e, const json_t *saved,
		       const char *path);

/** Free the list's memory (no line is written). */
void actions_fs_free(struct fs_list *l);

#endif /* DPMON_ACTIONS_FLOWSPEC_H */
