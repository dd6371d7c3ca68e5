/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h — run-time messages to the journal, rate limited per message kind.
 *
 * dpmon runs under systemd, which files each line of stderr in the journal;
 * a line that starts with "<N>" (sd-daemon(3), N = syslog priority) gets
 * that priority. dpmon_log writes such lines. Messages that can repeat
 * while dpmon runs (configuration reloads, merge failures, drops) go
 * through it, and each kind has its own budget: at most @c burst messages
 * per window of @c window_ns; the rest are counted, not written, and when
 * the window ends one line "dpmon: suppressed N messages of kind K" says
 * how many (dpmon_log_tick writes it, called by the main lcore's loop; a
 * message of the kind that comes first writes it before its own line). A
 * storm of one kind thus costs @c burst lines per window and never hides
 * the messages of another kind.
 * Start-up errors (before the workers run) are written directly, unlimited.
 *
 * Thread-safety: every function may be called from any thread (the main
 * lcore and the HTTP thread log); one mutex guards the budgets and the
 * output. Never call from a worker lcore's hot path.
 */
#ifndef DPMON_LOG_H
#define DPMON_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/** Message kinds, each with its own budget. */
enum dpmon_log_kind {
	DPMON_LOG_RELOAD,  /**< configuration reload results */
	DPMON_LOG_MERGE,   /**< merge failures (out of memory) */
	DPMON_LOG_DROP,    /**< packets dropped or not counted (rings, tables) */
	DPMON_LOG_HTTP,    /**< HTTP server problems */
	DPMON_LOG_ACTIONS, /**< notify script runs, ExaBGP pipe, blackhole list, state file */
	DPMON_LOG_SAMPLE,  /**< alert capture files */
	DPMON_LOG_EXPORT,  /**< exporters: servers unreachable or refusing */
	DPMON_LOG_NOTIFY,  /**< what notify scripts write to their stdout and stderr */
	DPMON_LOG_KIND_MAX
};

/** Syslog priorities used by dpmon_log (sd-daemon prefixes). */
#define DPMON_LOG_ERR     3
#define DPMON_LOG_WARNING 4
#define DPMON_LOG_NOTICE  5
#define DPMON_LOG_INFO    6

/** Default budget: messages per kind and window, and the window (ns). */
#define DPMON_LOG_BURST     10
#define DPMON_LOG_WINDOW_NS (60ull * 1000000000ull)

/**
 * Configure the logger (the defaults: stderr, DPMON_LOG_BURST per
 * DPMON_LOG_WINDOW_NS, CLOCK_MONOTONIC) and reset every budget.
 * @param out        where lines go; NULL = stderr.
 * @param burst      messages per kind per window, >= 1.
 * @param window_ns  window length in nanoseconds, >= 1.
 * @param clock_ns   monotonic clock in ns (tests inject one); NULL = CLOCK_MONOTONIC.
 * Thread-safety: any thread; usually once at start-up.
 */
void dpmon_log_setup(FILE *out, uint32_t burst, uint64_t window_ns, uint64_t (*clock_ns)(void));

/**
 * Write "<level>dpmon: MESSAGE" (one line per line of MESSAGE, each with
 * the prefix) unless kind @p kind has used its budget for this window.
 * @param kind   enum dpmon_log_kind; out of range: nothing is written.
 * @param level  DPMON_LOG_ERR .. DPMON_LOG_INFO.
 * @return 1 when written, 0 when suppressed (or @p kind out of range).
 * Thread-safety: any thread.
 */
int dpmon_log(enum dpmon_log_kind kind, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** As dpmon_log, with the arguments in @p ap. Any thread. */
int dpmon_vlog(enum dpmon_log_kind kind, int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/**
 * Write the "suppressed N messages of kind K" line (priority
 * DPMON_LOG_WARNING) of every kind whose window has ended with messages
 * suppressed; the kind's next message opens a new window.
 * @return the time, in the logger's clock (ns, CLOCK_MONOTONIC unless
 *         injected by dpmon_log_setup), at which the next window with
 *         messages suppressed ends, i.e. when to call again; UINT64_MAX
 *         when no kind has suppressed anything.
 * Thread-safety: any thread; the main lcore calls it from its loop.
 */
uint64_t dpmon_log_tick(void);

/**
 * Write the "suppressed N messages of kind K" line of every kind that has
 * suppressed messages, whether or not its window has ended (at stop: so
 * that no count is lost); those windows are closed.
 * Thread-safety: any thread; the main lcore calls it once the other
 * threads are stopped.
 */
void dpmon_log_flush(void);

/** Name of kind @p kind ("reload"), or "?" out of range. Any thread. */
const char *dpmon_log_kind_name(int kind);

#endif /* DPMON_LOG_H */
