/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_notify.h — the notify script (actions.notify_script): one run,
 * its arguments and stdin as docs/detection.md ("The notify script") says,
 * bounded by a timeout.
 */
#ifndef DPMON_ACTIONS_NOTIFY_H
#define DPMON_ACTIONS_NOTIFY_H

#include <stdint.h>

#include <jansson.h>

/* How a notify script run ended (dpmon_actions_stats). */
enum notify_outcome {
	NOTIFY_OK,
	NOTIFY_FAILED,
	NOTIFY_KILLED
};

/* What one run is about: the script's arguments and its stdin. */
struct notify_event {
	const char *event;  /* "attack_start", "attack_end", "ban", "unban" */
	const char *target; /* ADDRESS, or a subnet alert's PREFIX */
	const char *dir;    /* "ingress", "egress", "none" */
	uint64_t alert_id;  /* 0: none */
	const json_t *doc;  /* one line of JSON on its stdin; NULL: nothing */
};

/*
 * Run @p script for @p ev and wait for it, killing its process group after
 * @p timeout_ms milliseconds.
 * @return how it ended (NOTIFY_FAILED when it could not be started).
 * The actions thread only, no lock held.
 */
enum notify_outcome actions_notify_run(const char *script, uint32_t timeout_ms,
				       const struct notify_event *ev);

#endif /* DPMON_ACTIONS_NOTIFY_H */
