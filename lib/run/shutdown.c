/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shutdown.c — dpmon's orderly stop (run_private.h, app_shutdown;
 * docs/operations.md).
 *
 *   STOPPING=1 → stop the workers → their totals → one last merge and the final state
 *   (when they ran) → HTTP → exporters → actions → telemetry → snapshot store →
 *   detection, sampler, merge → distributor, ports → generations, RCU,
 *   per-core tables, workers → classifier → configuration.
 *
 * The HTTP server still answers during the last merge, so a poller sees
 * the final counts; the actions stop after it, since it posts to them.
 * Each step tolerates what a failed start-up left unset (NULL).
 */
#include "run_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_malloc.h>

#include "telemetry.h"

/* ------------------------------------------------------------------------
 * What the stop prints.
 * --------------------------------------------------------------------- */

/* Per-worker totals at exit: packets and the CPU time spent on them (TSC
 * cycles of non-empty bursts), which the benchmark reads (packets per CPU
 * second of a poll-mode worker, busy polling excluded). */
static void
print_worker_totals(const struct app *a)
{
	for (unsigned w = 0; a->cores && w < a->n_workers; w++)
		printf("dpmon: worker lcore %u: %" PRIu64 " packets, %.6f s busy\n", a->lcores[w],
		       a->cores[w]->stats.packets,
		       (double)a->cores[w]->stats.busy_cycles / (double)rte_get_tsc_hz());
	if (a->srss) {
		uint64_t dropped = 0;

		for (uint16_t p = 0; p < a->dist.n_ports; p++)
			dropped += dpmon_distributor_dropped(&a->dist, p);
		printf("dpmon: distributor lcore %u: %" PRIu64 " packets, %" PRIu64
		       " dropped on full rings\n",
		       a->dist_lcore, a->dist.packets, dropped);
	}
	fflush(stdout);
}

/* One line for alert @p al, still active at the stop. */
static void
print_active_alert(const struct dpmon_alert *al)
{
	char addr[DPMON_PREFIX_STRLEN];

	dpmon_host_format(&al->addr, dpmon_alert_host_len(al), addr, sizeof(addr));
	printf("dpmon: alert %" PRIu64 " still active at stop: %s %s %s %.6g > %.6g (%s)\n", al->id,
	       addr, dpmon_dir_name(al->dir), dpmon_metric_name(al->metric), al->value,
	       al->threshold, dpmon_attack_name(al->type));
}

/*
 * The stop's record of the state: the final snapshot's totals and every
 * alert still active, one line each (the journal keeps them; the alerts
 * are not ended: the attack may go on while dpmon is down).
 */
static void
print_final_state(struct app *a)
{
	struct dpmon_snapshot *s = dpmon_snap_acquire(&a->store);

	if (s == NULL)
		return;
	printf("dpmon: final snapshot %" PRIu64 " at %.3f s: ingress %" PRIu64 " packets %" PRIu64
	       " bytes, egress %" PRIu64 " packets %" PRIu64 " bytes, %u hosts, %u alerts active\n",
	       s->seq, s->uptime_s, s->totals[DPMON_TOTAL_INGRESS].total.packets,
	       s->totals[DPMON_TOTAL_INGRESS].total.bytes,
	       s->totals[DPMON_TOTAL_EGRESS].total.packets,
	       s->totals[DPMON_TOTAL_EGRESS].total.bytes, s->n_hosts, s->alerts_active);
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (s->alerts[i]->end_unix_s == 0)
			print_active_alert(s->alerts[i]);
	dpmon_snap_release(&a->store, s);
	fflush(stdout);
}

/* ------------------------------------------------------------------------
 * Stopping and freeing.
 * --------------------------------------------------------------------- */

/* Stop the worker (and distributor) lcores and wait for them. */
static void
stop_workers(struct app *a)
{
	__atomic_store_n(&a->stop_workers, true, __ATOMIC_SEQ_CST);
	rte_eal_mp_wait_lcore();
}

/* The modules of the main lcore and the HTTP thread, the ports. */
static void
stop_modules(struct app *a)
{
	dpmon_http_stop(a->http);
	/* After the last merge's offer: what is spooled is sent (flush_timeout_ms). */
	dpmon_export_free(a->exporters);
	dpmon_actions_free(a->actions); /* after the HTTP thread, its poster */
	dpmon_telemetry_detach();
	dpmon_snap_store_destroy(&a->store);
	dpmon_detect_free(a->detect);
	dpmon_sampler_free(a->sampler);
	dpmon_merge_free(a->merge);
	if (a->srss)
		dpmon_distributor_teardown(&a->dist);
	for (unsigned p = 0; p < a->n_ports_started; p++)
		dpmon_port_stop(a->port_ids[p]);
}

/* The workers' state: generations, RCU variable, per-core tables. */
static void
free_workers(struct app *a)
{
	app_free_gens(a->gens, a->gens ? a->n_workers : 0);
	app_free_gens(a->retired, a->retired ? a->n_workers : 0);
	free(a->gens);
	free(a->retired);
	rte_free(a->qsv);
	for (unsigned w = 0; a->cores && w < a->n_workers; w++)
		dpmon_core_free(a->cores[w]);
	free(a->cores);
	free(a->lcores);
	rte_free(a->workers);
	dpmon_health_fini(&a->health); /* after the HTTP server, its reader */
}

void
app_shutdown(struct app *a)
{
	app_service_stopping();
	stop_workers(a);
	print_worker_totals(a);
	/* The workers are stopped: one last merge publishes every packet they
	 * counted since the previous one (the HTTP server still answers). */
	if (a->launched) {
		app_merge_once(a);
		print_final_state(a);
	}
	stop_modules(a);
	free_workers(a);
	if (a->cls != NULL)
		dpmon_classifier_free(a->cls);
	free(a->cls);
	dpmon_config_free(&a->cfg);
}
