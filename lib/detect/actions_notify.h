/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_notify.h — the notify script (actions.notify_script): one run,
 * its arguments and stdin as docs/detection.md ("The notify script") says,
 * bounded by a timeout, its output logged within a budget, and a run the
 * stop can leave for later.
 */
#ifndef DPMON_ACTIONS_NOTIFY_H
#define DPMON_ACTIONS_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "config.h"

/* Lines of a run's output logged, at most (the "notify" log kind's budget
 * applies too); the rest is counted in one line. */
#define NOTIFY_OUTPUT_LINES 10
/* Bytes of one output line logged, at most (longer lines are cut). */
#define NOTIFY_LINE_MAX     200

/* How a notify script run ended (dpmon_actions_stats). */
enum notify_outcome {
	NOTIFY_OK,
	NOTIFY_FAILED,
	NOTIFY_KILLED,
	NOTIFY_LEFT /* still running: the stop came (actions_notify_finish ends it) */
};

/* What one run is about: the script's arguments and its stdin. */
struct notify_event {
	const char *event;  /* "attack_start", "attack_end", "ban", "unban" */
	const char *target; /* ADDRESS, or a subnet alert's PREFIX */
	const char *dir;    /* "ingress", "egress", "none" */
	uint64_t alert_id;  /* 0: none */
	const json_t *doc;  /* one line of JSON on its stdin; NULL: nothing */
};

/* A run in progress (the caller's storage; its fields are this file's). */
struct notify_run {
	pid_t pid;
	int in, out;          /* its stdin, its stdout and stderr; -1 closed */
	char *text;           /* the stdin line; malloc'd */
	size_t len, off;      /* its length, and the bytes written */
	uint64_t deadline_ms; /* CLOCK_MONOTONIC */
	uint32_t timeout_ms;
	char what[DPMON_PATH_LEN + 96]; /* "SCRIPT ARGS..." for the log */
	char line[NOTIFY_LINE_MAX + 1]; /* the output line being read */
	size_t line_len;
	bool line_cut;          /* the line is longer than NOTIFY_LINE_MAX */
	uint32_t lines_logged;  /* output lines logged */
	uint64_t bytes_dropped; /* output bytes not logged */
};

/*
 * Run @p script for @p ev and wait for it, killing its process group after
 * @p timeout_ms milliseconds. Its stdout and stderr are read and logged
 * (kind "notify": NOTIFY_OUTPUT_LINES lines of a run at most, each cut at
 * NOTIFY_LINE_MAX bytes; the rest counted).
 * @param stop  read (atomically) while the script runs: when it turns true
 *              the wait ends at once and the run is left in @p left.
 * @return how it ended (NOTIFY_FAILED when it could not be started), or
 *         NOTIFY_LEFT: call actions_notify_finish(@p left, ...).
 * The actions thread only, no lock held.
 */
enum notify_outcome actions_notify_run(const char *script, uint32_t timeout_ms,
				       const struct notify_event *ev, const bool *stop,
				       struct notify_run *left);

/*
 * End run @p r that actions_notify_run left: wait for it at most
 * @p grace_ms milliseconds more (never beyond its own timeout), then kill
 * its process group.
 * @return how it ended. The actions thread only, no lock held.
 */
enum notify_outcome actions_notify_finish(struct notify_run *r, uint32_t grace_ms);

#endif /* DPMON_ACTIONS_NOTIFY_H */
