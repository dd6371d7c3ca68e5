/*
 * actions.h — what dpmon does about an alert, off the data plane: run the
 * notify script, write announce/withdraw lines to ExaBGP's command pipe,
 * and keep the blackhole list (automatic and manual) with its state file.
 *
 * Producers (the main lcore's detection after each merge, the HTTP thread
 * for manual blackholes) post events; a thread of this module carries them
 * out with timeouts, so a slow script or a stalled pipe never delays a
 * merge. docs/detection.md documents every argument and line.
 */
#ifndef DPMON_ACTIONS_H
#define DPMON_ACTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "prefix.h"
#include "stats.h"

enum dpmon_action_kind {
	DPMON_ACTION_ALERT_START, /**< an alert started (detect.h) */
	DPMON_ACTION_ALERT_END,   /**< an alert ended */
};

/** One event for the actions thread. */
struct dpmon_action_event {
	enum dpmon_action_kind kind;
	struct dpmon_addr addr;  /**< the host */
	enum dpmon_dir dir;      /**< direction of the threshold that fired */
	uint64_t alert_id;       /**< the alert's id in GET /api/v1/alerts/{id} */
	double start_unix_s;     /**< alert start, seconds since the epoch */
	double end_unix_s;       /**< alert end; 0 while active */
	bool ban;                /**< the host's hostgroup (or the global default) bans */
	json_t *alert;           /**< the alert as the API shows it; the post takes this reference */
};

struct dpmon_actions;

/**
 * Start the actions thread for @p conf (copied). Reads the state file, if
 * configured, and re-announces its blackholes.
 * @return the module, or NULL with errno set (ENOMEM, or the state file's
 *         error; a message goes to stderr).
 * Thread-safety: main lcore, once.
 */
struct dpmon_actions *dpmon_actions_create(const struct dpmon_actions_conf *conf);

/**
 * Queue @p ev; never blocks. Takes ev->alert's reference in every case.
 * @return 0, or -ENOBUFS when the queue is full (the event is counted as
 *         dropped and logged).
 * Thread-safety: any thread.
 */
int dpmon_actions_post(struct dpmon_actions *a, struct dpmon_action_event *ev);

/**
 * Stop the thread after the queued events ran (each within its timeout)
 * and free the module. NULL ignored. Main lcore.
 */
void dpmon_actions_free(struct dpmon_actions *a);

#endif /* DPMON_ACTIONS_H */
