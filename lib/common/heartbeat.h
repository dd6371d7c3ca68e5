/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heartbeat.h — named heartbeats of dpmon's control threads, for the
 * health check.
 *
 * A thread that must keep running (the actions thread, an exporter)
 * registers a heartbeat with a name and a maximum age, then beats it at
 * least that often: once per round of its loop, and a loop that sleeps
 * wakes up in time to beat. A beat is one relaxed atomic store of the
 * CLOCK_MONOTONIC time; registering, unregistering and listing the
 * overdue heartbeats take the registry's mutex. The HTTP thread lists
 * the overdue ones at request time (dpmon_heartbeat_overdue), so a
 * thread that hangs shows in /health even though it publishes nothing.
 *
 * The registry is one per process, of DPMON_HEARTBEAT_MAX slots. Never
 * beat from a worker lcore's hot path: the workers have a counter of
 * their own (the main lcore reads their polls; health.h).
 */
#ifndef DPMON_HEARTBEAT_H
#define DPMON_HEARTBEAT_H

#include <stdint.h>

/** Heartbeats registered at once, at most. */
#define DPMON_HEARTBEAT_MAX 32

/** Longest name, with its NUL. */
#define DPMON_HEARTBEAT_NAME_LEN 32

struct dpmon_heartbeat;

/** One overdue heartbeat (dpmon_heartbeat_overdue). */
struct dpmon_heartbeat_late {
	char name[DPMON_HEARTBEAT_NAME_LEN];
	uint64_t age_ns;     /**< since the last beat (or the registration), nanoseconds */
	uint32_t max_age_ms; /**< the limit it passed, milliseconds */
};

/**
 * The clock of every heartbeat: CLOCK_MONOTONIC in nanoseconds.
 * Any thread.
 */
uint64_t dpmon_heartbeat_now_ns(void);

/**
 * Register a heartbeat; it counts as beaten now.
 * @param name        what /health names when it is overdue ("actions");
 *                    cut to DPMON_HEARTBEAT_NAME_LEN - 1 bytes. Several
 *                    heartbeats may share a name.
 * @param max_age_ms  the longest time between two beats, milliseconds, >= 1.
 * @return the heartbeat, or NULL with errno EINVAL (NULL name, age 0) or
 *         ENOSPC (DPMON_HEARTBEAT_MAX registered).
 * Thread-safety: any thread.
 */
struct dpmon_heartbeat *dpmon_heartbeat_register(const char *name, uint32_t max_age_ms);

/**
 * Remove @p hb from the registry (its slot is reused). NULL is ignored.
 * Thread-safety: any thread, once, when no thread beats @p hb any more.
 */
void dpmon_heartbeat_unregister(struct dpmon_heartbeat *hb);

/**
 * Beat @p hb: it is not overdue for its maximum age from now. NULL is
 * ignored (a heartbeat that could not be registered). One atomic store.
 * Thread-safety: any thread; usually the one thread @p hb watches.
 */
void dpmon_heartbeat_beat(struct dpmon_heartbeat *hb);

/**
 * Change @p hb's maximum age (e.g. after a reload changed a timeout) and
 * beat it. NULL is ignored.
 * @param max_age_ms  milliseconds, >= 1 (0 is taken as 1).
 * Thread-safety: any thread.
 */
void dpmon_heartbeat_set_max_age(struct dpmon_heartbeat *hb, uint32_t max_age_ms);

/**
 * The heartbeats whose last beat is older than their maximum age at
 * @p now_ns, in registration slot order.
 * @param now_ns  dpmon_heartbeat_now_ns() (tests pass a later time).
 * @param out     receives up to @p max of them; may be NULL when @p max is 0.
 * @return how many are overdue (may exceed @p max: only @p max are filled).
 * Thread-safety: any thread (the HTTP thread, for /health).
 */
unsigned dpmon_heartbeat_overdue(uint64_t now_ns, struct dpmon_heartbeat_late *out, unsigned max);

#endif /* DPMON_HEARTBEAT_H */
