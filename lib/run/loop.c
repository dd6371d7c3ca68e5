/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loop.c — the main lcore's merge loop (run_private.h).
 *
 * Every merge_interval_ms the main lcore reads the NIC counters, merges
 * the per-core tables into a new snapshot, runs detection on it while it
 * is still private, and publishes it (app_merge_once). The ticks are on
 * an absolute schedule (CLOCK_MONOTONIC, clock_nanosleep TIMER_ABSTIME),
 * so a slow merge does not shift the next ones; after a stall, missed
 * ticks are skipped rather than merged back to back.
 *
 * After each merge the main lcore writes the health board (health.h) and
 * feeds the systemd watchdog (service.c); the test hooks (hooks.c) may
 * hold the loop before a merge.
 *
 * The signals (signals.c) only set flags: SIGINT and SIGTERM end the loop
 * (the stop is shutdown.c's), SIGHUP asks for a reload, which the loop
 * serves between two merges (reload.c), never in the handler. Between two merges the
 * loop also wakes when a log rate-limit window that suppressed messages
 * ends, to write its "suppressed N" line then (log.h).
 */
#include "run_private.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include "api.h"
#include "heartbeat.h"
#include "log.h"

/* ------------------------------------------------------------------------
 * One merge.
 * --------------------------------------------------------------------- */

/* The NIC counters of every started port into @p ports. */
static void
read_ports(struct app *a, struct dpmon_port_stats *ports)
{
	for (unsigned p = 0; p < a->n_ports_started; p++) {
		memset(&ports[p], 0, sizeof(ports[p]));
		snprintf(ports[p].device, sizeof(ports[p].device), "%s", a->cfg.ports[p].device);
		ports[p].port_id = a->port_ids[p];
		ports[p].rx_queues = a->cfg.ports[p].rx_queues;
		dpmon_port_read_stats(a->port_ids[p], &ports[p]);
		/* Received by the port, dropped on a full distributor ring. */
		ports[p].imissed +=
			dpmon_distributor_dropped(a->srss ? &a->dist : NULL, (uint16_t)p);
	}
}

/* Counters of the actions and the sampler for snapshot @p out. */
static void
fill_actions(struct app *a, struct dpmon_snap_actions *out)
{
	struct dpmon_actions_stats st = {0};

	if (a->actions != NULL)
		dpmon_actions_stats(a->actions, &st);
	out->events_dropped = st.events_dropped;
	out->notify_ok = st.notify_ok;
	out->notify_failed = st.notify_failed;
	out->notify_killed = st.notify_killed;
	out->blackholes = st.blackholes;
	out->flowspec_rules = st.flowspec_rules;
	out->flowspec_announced = st.flowspec_announced;
	out->flowspec_refused = st.flowspec_refused;
	out->exabgp_configured = a->cfg.actions.exabgp_pipe[0] != '\0';
	out->exabgp_connected = out->exabgp_configured && st.exabgp_connected;
	out->sample_copied = a->sampler != NULL ? dpmon_sampler_copied(a->sampler) : 0;
	out->sample_dropped = a->sampler != NULL ? dpmon_sampler_dropped(a->sampler) : 0;
}

/* What the merge leaves to its caller: the reload and actions counters. */
static void
fill_status(struct app *a, struct dpmon_snapshot *s)
{
	s->config.reloads = a->reload.ok;
	s->config.reload_failures = a->reload.failed;
	s->config.last_reload_unix_s = a->reload.last_unix_s;
	s->config.last_reload_ok = a->reload.last_ok;
	s->config.reload_refusals = a->reload.refused;
	s->config.last_refusal_unix_s = a->reload.last_refusal_unix_s;
	s->config.last_refusal_errors = a->reload.last_refusal_errors;
	memcpy(s->config.last_refusal_file, a->reload.last_refusal_file,
	       sizeof(s->config.last_refusal_file));
	memcpy(s->config.last_refusal_reason, a->reload.last_refusal_reason,
	       sizeof(s->config.last_refusal_reason));
	fill_actions(a, &s->actions);
	s->n_exporters = dpmon_export_stats(a->exporters, s->exporters, DPMON_SNAP_EXPORTERS_MAX);
	if (s->n_exporters > DPMON_SNAP_EXPORTERS_MAX)
		s->n_exporters = DPMON_SNAP_EXPORTERS_MAX;
}

/*
 * Pin the hosts of the blackholes now and of the active alerts of @p s
 * (the last snapshot; NULL: none yet), so the merge about to run never
 * retires their entries (dpmon_merge_pin). Out of memory: the hosts stay
 * as pinned as they were.
 */
static void
pin_hosts(struct app *a, const struct dpmon_snapshot *s)
{
	struct dpmon_blackhole *bh = NULL;
	int n_bh = a->actions != NULL ? dpmon_blackhole_list(a->actions, &bh) : 0;
	uint32_t n_al = s != NULL ? s->n_alerts : 0;
	uint32_t n = 0, cap = (s != NULL ? s->alerts_active : 0) + (n_bh > 0 ? (uint32_t)n_bh : 0);
	struct dpmon_addr *addrs;

	if (n_bh < 0)
		return;
	addrs = malloc(sizeof(*addrs) * (cap ? cap : 1));
	if (addrs == NULL) {
		free(bh);
		return;
	}
	for (uint32_t i = 0; i < n_al && n < cap; i++)
		if (s->alerts[i]->end_unix_s == 0 && s->alerts[i]->target == DPMON_TARGET_HOST)
			addrs[n++] = s->alerts[i]->addr;
	for (int i = 0; i < n_bh && n < cap; i++)
		addrs[n++] = bh[i].addr;
	dpmon_merge_pin(a->merge, addrs, n);
	free(addrs);
	free(bh);
}

bool
app_merge_once(struct app *a)
{
	struct dpmon_port_stats ports[DPMON_MAX_PORTS];
	struct dpmon_snapshot *s, *prev;
	struct timespec now;

	read_ports(a, ports);
	/* Before the merge asks for idle entries: a blackhole posted since
	 * the last merge keeps its host from this one on. */
	prev = dpmon_snap_acquire(&a->store);
	pin_hosts(a, prev);
	s = dpmon_merge_run(a->merge, rte_rdtsc(), ports, a->n_ports_started);
	if (s == NULL) {
		dpmon_log(DPMON_LOG_MERGE, DPMON_LOG_ERR,
			  "merge: out of memory; retrying next interval");
		dpmon_sampler_drain(a->sampler);
		if (prev != NULL)
			dpmon_snap_release(&a->store, prev);
		return false;
	}
	/* The previous generations served their last merge (merge.h). */
	app_free_gens(a->retired, a->n_workers);
	fill_status(a, s);
	/* Detection sees the snapshot while it is still private. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (dpmon_detect_run(a->detect, s, (double)now.tv_sec + (double)now.tv_nsec * 1e-9) != 0)
		dpmon_log(DPMON_LOG_MERGE, DPMON_LOG_ERR,
			  "detect: out of memory; this snapshot lists no alerts");
	dpmon_snap_publish(&a->store, s);
	/* By reference, never waiting: a slow server never slows the merge. */
	dpmon_export_offer(a->exporters, s);
	/* After the publication, on the main lcore's idle time: the
	 * rankings and host queries readers used in the previous snapshot,
	 * ready in this one. */
	if (prev != NULL) {
		struct dpmon_snapshot *cur = dpmon_snap_acquire(&a->store);

		if (cur != NULL) {
			dpmon_api_prebuild_orders(prev, cur);
			if (a->http != NULL)
				dpmon_http_prewarm(a->http, cur);
			dpmon_snap_release(&a->store, cur);
		}
		dpmon_snap_release(&a->store, prev);
	}
	return true;
}

/*
 * After a merge (@p published: it published a snapshot): the health
 * board gets the merge's time and the lcores' poll counters (the
 * workers' and the distributor's heartbeats, read like any counter of
 * theirs), and the service manager READY=1 or WATCHDOG=1.
 */
static void
after_merge(struct app *a, bool published)
{
	uint64_t now = dpmon_heartbeat_now_ns();
	bool polling;

	if (published)
		dpmon_health_merged(&a->health, now);
	for (unsigned w = 0; w < a->n_workers; w++)
		dpmon_health_poll(&a->health, w, dpmon_count_read(&a->cores[w]->stats.polls), now);
	if (a->srss)
		dpmon_health_poll(&a->health, a->n_workers,
				  __atomic_load_n(&a->dist.rounds, __ATOMIC_RELAXED), now);
	polling = dpmon_health_gathered(&a->health, now);
	app_service_merged(a, published, polling, now);
}

/* ------------------------------------------------------------------------
 * The loop.
 * --------------------------------------------------------------------- */

static void
timespec_add_ms(struct timespec *t, uint32_t ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static bool
timespec_before(const struct timespec *x, const struct timespec *y)
{
	return x->tv_sec < y->tv_sec || (x->tv_sec == y->tv_sec && x->tv_nsec < y->tv_nsec);
}

/* @p ns (CLOCK_MONOTONIC) as a timespec. */
static struct timespec
timespec_of_ns(uint64_t ns)
{
	struct timespec t = {.tv_sec = (time_t)(ns / 1000000000u),
			     .tv_nsec = (long)(ns % 1000000000u)};

	return t;
}

/*
 * The logger's rate-limit windows that end before @p wake: report them now
 * (dpmon_log_tick) and return, in @p until, the end of the next one before
 * @p wake, or @p wake itself. The logger's clock is CLOCK_MONOTONIC, the
 * merge loop's.
 */
static void
log_tick_until(const struct timespec *wake, struct timespec *until)
{
	uint64_t due = dpmon_log_tick();
	struct timespec d;

	*until = *wake;
	if (due == UINT64_MAX)
		return;
	d = timespec_of_ns(due);
	if (timespec_before(&d, wake))
		*until = d;
}

/*
 * Sleep until @p wake or a stop, serving at most one reload request on
 * the way (@p reloaded: whether this tick already served one) without
 * moving the tick, and waking at the end of each rate-limit window that
 * suppressed log messages, so its "suppressed N" line is written then.
 * SIGHUPs that keep coming while reloads take long must not starve the
 * merges; one left pending by the previous tick is served at once.
 */
static void
sleep_until(struct app *a, const struct timespec *wake)
{
	bool reloaded = false;

	while (!app_stop_signal()) {
		struct timespec until;
		int rc;

		log_tick_until(wake, &until);
		rc = app_reload_pending() && !reloaded
			     ? 0
			     : clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
		if (app_reload_pending() && !app_stop_signal() && !reloaded) {
			app_reload_clear();
			app_reload(a);
			reloaded = true;
			continue; /* then sleep on to the same tick */
		}
		if (rc == 0 && timespec_before(&until, wake))
			continue; /* woke for the logger, not yet for the merge */
		if (rc != EINTR)
			break;
	}
}

/*
 * Merge on a fixed schedule until a signal or the --duration deadline
 * (which ends the loop with one last merge, even between two ticks). A
 * reload request (SIGHUP) is served between two merges, when the sleep
 * ends or is interrupted, without moving the ticks; at most one per tick
 * (one that comes during a reload is served right after the next merge).
 */
void
app_merge_loop(struct app *a, double duration_s)
{
	struct timespec next, now, end;

	clock_gettime(CLOCK_MONOTONIC, &next);
	app_service_start(a);
	dpmon_health_start(&a->health, dpmon_heartbeat_now_ns());
	end = next;
	end.tv_sec += (time_t)duration_s;
	timespec_add_ms(&end, (uint32_t)((duration_s - (double)(time_t)duration_s) * 1000));
	while (!app_stop_signal()) {
		bool last;

		timespec_add_ms(&next, a->cfg.merge_interval_ms);
		last = duration_s > 0 && !timespec_before(&next, &end);
		sleep_until(a, last ? &end : &next);
		app_hooks_round(a);
		if (app_stop_signal())
			break;
		after_merge(a, app_merge_once(a));
		if (last)
			break;
		/* After a stall, skip missed ticks instead of merging back to back. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1)
			next = now;
	}
}
