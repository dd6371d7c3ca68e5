/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * service.c — what dpmon tells its service manager (run_private.h),
 * through libsystemd's sd_notify(3): READY=1 once the first snapshot is
 * published (the HTTP server answers and the data endpoints have data),
 * WATCHDOG=1 from the merge loop, STOPPING=1 when the stop begins.
 *
 * The watchdog (WatchdogSec= in the unit; sd_watchdog_enabled gives the
 * interval) is fed only after a merge that published a snapshot while
 * every worker lcore polls (health.h), at most every quarter of the
 * interval: a stuck merge or a worker that stopped polling lets it
 * expire, and systemd restarts dpmon. Without NOTIFY_SOCKET (not under
 * systemd) every call is a no-op.
 */
#include "run_private.h"

#include <inttypes.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

void
app_service_start(struct app *a)
{
	uint64_t usec = 0;
	int rc = sd_watchdog_enabled(0, &usec);

	a->service.watchdog_ns = rc > 0 ? usec * 1000u : 0;
	if (rc < 0)
		fprintf(stderr, "dpmon: systemd watchdog: bad WATCHDOG_USEC or WATCHDOG_PID\n");
	if (a->service.watchdog_ns != 0 &&
	    a->service.watchdog_ns < (uint64_t)a->cfg.merge_interval_ms * 3000000u)
		fprintf(stderr,
			"dpmon: systemd watchdog interval %" PRIu64 " ms is shorter than three "
			"merge intervals (%u ms): expect restarts\n",
			a->service.watchdog_ns / 1000000u, a->cfg.merge_interval_ms);
}

void
app_service_merged(struct app *a, bool published, bool polling, uint64_t now_ns)
{
	struct app_service *s = &a->service;

	if (!published)
		return;
	if (!s->ready) {
		sd_notifyf(0, "READY=1\nSTATUS=merging every %u ms", a->cfg.merge_interval_ms);
		s->ready = true;
	}
	if (s->watchdog_ns != 0 && polling &&
	    (s->last_ping_ns == 0 || now_ns - s->last_ping_ns >= s->watchdog_ns / 4)) {
		sd_notify(0, "WATCHDOG=1");
		s->last_ping_ns = now_ns;
	}
}

void
app_service_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}
