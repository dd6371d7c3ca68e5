/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signals.c — the signals that steer the main lcore (run_private.h):
 * SIGINT and SIGTERM ask for a stop, SIGHUP for a reload. The handlers
 * only set flags (volatile sig_atomic_t, C11 7.14.1.1); the merge loop
 * (loop.c), the test hooks (hooks.c) and dpmon_main (run.c) read them.
 * A leaf: it calls nothing of lib/run.
 */
#include "run_private.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t reload_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* SIGHUP: reload between two merges (app_merge_loop), never in the handler. */
static void
on_reload_signal(int sig)
{
	(void)sig;
	reload_signal = 1;
}

/* Block (@p how SIG_BLOCK) or unblock SIGHUP in the calling thread. */
static void
mask_reload_signal(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(how, &set, NULL);
}

void
app_signals_init(void)
{
	/* Before EAL: a stop request during start-up ends in a clean exit. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* systemd ExecReload sends SIGHUP: reload in the merge loop. Blocked
	 * until then (and in every thread started meanwhile: EAL, HTTP), so it
	 * waits for the workers to run and reaches the main lcore. */
	signal(SIGHUP, on_reload_signal);
	mask_reload_signal(SIG_BLOCK);
}

void
app_signals_unblock_reload(void)
{
	/* Every other thread exists now and blocks SIGHUP: it interrupts the
	 * main lcore's sleep, so a reload starts at once. */
	mask_reload_signal(SIG_UNBLOCK);
}

int
app_stop_signal(void)
{
	return (int)stop_signal;
}

bool
app_reload_pending(void)
{
	return reload_signal != 0;
}

void
app_reload_clear(void)
{
	reload_signal = 0;
}
