/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * health.h — what /health and the summary's "health" object say, and the
 * board the main lcore publishes it from.
 *
 * A stuck merge publishes no new snapshot, so the verdict cannot come
 * from the snapshot: it is computed at request time from the board and
 * the clock (CLOCK_MONOTONIC, dpmon_heartbeat_now_ns). dpmon is healthy
 * when all of these hold:
 *
 *   - merge:  the last merge published a snapshot at most merge_max_age_ms
 *             ago (DPMON_HEALTH_MERGE_INTERVALS merge intervals, at least
 *             DPMON_HEALTH_MIN_AGE_MS); from the start of the merge loop
 *             on, so a first merge that never ends counts too;
 *   - lcores: every worker (and the distributor) lcore polled its RX
 *             queues within lcore_max_age_ms of the main lcore's last look
 *             at their poll counters — judged as of that look, so a stuck
 *             main lcore is reported as the merge alone;
 *   - heartbeats: no registered control-thread heartbeat is overdue
 *             (heartbeat.h: the actions thread, exporters).
 *
 * Data flow: the workers' poll counters are theirs (plain stores, read by
 * the main lcore like every other counter); the main lcore writes the
 * board (atomics, once per loop round), never the HTTP thread; the HTTP
 * thread reads the board and the heartbeat registry, never worker memory.
 */
#ifndef DPMON_HEALTH_H
#define DPMON_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/** The merge (and the lcores) may be this many merge intervals late. */
#define DPMON_HEALTH_MERGE_INTERVALS 3
/** ... but never less than this, milliseconds. */
#define DPMON_HEALTH_MIN_AGE_MS      1000
/** Reasons listed in one verdict; more are summed up in one last reason. */
#define DPMON_HEALTH_REASONS_MAX     16
/** Longest reason, with its NUL. */
#define DPMON_HEALTH_REASON_LEN      96
/** Longest name of a polling lcore ("worker lcore 12"), with its NUL. */
#define DPMON_HEALTH_NAME_LEN        32

/** One polling lcore on the board. */
struct dpmon_health_lcore {
	char name[DPMON_HEALTH_NAME_LEN]; /**< "worker lcore N", "distributor lcore N" */
	uint64_t polls_seen;              /**< main lcore only: its counter at the last look */
	/** the look at which the counter had grown (__atomic builtins) */
	uint64_t last_poll_ns;
};

/** The board: written by the main lcore, read by the HTTP thread. */
struct dpmon_health {
	/** last publication (or the loop's start); 0 = none (__atomic builtins) */
	uint64_t merge_ns;
	/** the main lcore's last look at the lcores; 0 = none (__atomic builtins) */
	uint64_t gathered_ns;
	uint32_t merge_max_age_ms; /**< milliseconds */
	uint32_t lcore_max_age_ms; /**< milliseconds */
	unsigned n_lcores;
	struct dpmon_health_lcore *lcores; /**< n_lcores */
};

/** A verdict: healthy when n_reasons is 0. */
struct dpmon_health_verdict {
	unsigned n_reasons;
	/** "merge: no merge for 4.2 s (limit 3.0 s)", ... (docs/api.md) */
	char reasons[DPMON_HEALTH_REASONS_MAX][DPMON_HEALTH_REASON_LEN];
};

/**
 * Set up @p h for @p n_lcores polling lcores (names set with
 * dpmon_health_name) and a merge every @p merge_interval_ms.
 * @return 0, or -ENOMEM.
 * Thread-safety: main lcore, before the HTTP server starts.
 */
int dpmon_health_init(struct dpmon_health *h, unsigned n_lcores, uint32_t merge_interval_ms);

/** Free what dpmon_health_init allocated. Main lcore, after the HTTP server stopped. */
void dpmon_health_fini(struct dpmon_health *h);

/**
 * Name polling lcore @p i (< n_lcores) as /health will say it.
 * Main lcore, before the merge loop.
 */
void dpmon_health_name(struct dpmon_health *h, unsigned i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * The merge loop starts at @p now_ns (dpmon_heartbeat_now_ns): the first
 * merge is due from now on, and the lcores count as polling.
 * Main lcore, once.
 */
void dpmon_health_start(struct dpmon_health *h, uint64_t now_ns);

/** A merge published a snapshot at @p now_ns. Main lcore. */
void dpmon_health_merged(struct dpmon_health *h, uint64_t now_ns);

/**
 * Look at lcore @p i's poll counter: @p polls (RX bursts asked for, or
 * distributor rounds) as read at @p now_ns. Call for every lcore, then
 * dpmon_health_gathered. Main lcore, once per loop round.
 */
void dpmon_health_poll(struct dpmon_health *h, unsigned i, uint64_t polls, uint64_t now_ns);

/**
 * Publish the look at the lcores made at @p now_ns.
 * @return true when every lcore polled within lcore_max_age_ms (the
 *         systemd watchdog is fed only then).
 * Main lcore.
 */
bool dpmon_health_gathered(struct dpmon_health *h, uint64_t now_ns);

/**
 * The verdict at @p now_ns (dpmon_heartbeat_now_ns) into @p v: the
 * board's merge and lcores (@p h NULL: not checked) and the overdue
 * heartbeats.
 * Thread-safety: any thread (the HTTP thread, per request).
 */
void dpmon_health_check(const struct dpmon_health *h, uint64_t now_ns,
			struct dpmon_health_verdict *v);

/**
 * @return the reasons of @p v (NULL: healthy) as a JSON array of strings,
 *         or NULL without memory.
 * Any thread.
 */
json_t *dpmon_health_reasons_json(const struct dpmon_health_verdict *v);

#endif /* DPMON_HEALTH_H */
