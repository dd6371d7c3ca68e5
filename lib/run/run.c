/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run.c — dpmon's life cycle (run.h): the order of the steps, each in its
 * own file (run_private.h).
 *
 *   main lcore:  command line (cli.c) → config → signals → EAL init →
 *                classifier → ports → per-core tables → merge, sampler,
 *                telemetry, actions, detection → HTTP → launch workers
 *                (setup.c) → every interval: read NIC counters, merge,
 *                detect (on the private snapshot), publish; on SIGHUP,
 *                reload between two merges (loop.c, reload.c) → on stop:
 *                workers, HTTP, actions, telemetry, ports (shutdown.c),
 *                EAL.
 *   worker lcores: dpmon_worker_loop on their share of the RX queues, or
 *                the distributor with software_rss (setup.c).
 *
 * The configuration is read and checked before the EAL starts, so a typo
 * costs no DPDK start-up; a stop signal during the start-up ends in a
 * clean exit.
 */
#include "run.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "log.h"
#include "run_private.h"

/* ------------------------------------------------------------------------
 * Life cycle.
 * --------------------------------------------------------------------- */

/*
 * The control side allocates and frees large buffers all the time: each
 * snapshot's arrays, rendered bodies of hundreds of KiB, a reload's
 * parse. glibc raises its mmap threshold each time such a buffer is freed
 * (up to 32 MiB), after which those buffers come from the heap and
 * what they leave behind fragments it: over hours of host churn the RSS
 * climbs while the live memory does not. A fixed threshold of 128 KiB
 * keeps every large buffer in mappings of its own, given back to the
 * system when freed. Workers allocate nothing per packet.
 */
#define LARGE_BUFFER_BYTES (128 * 1024)

/* Load the configuration @p path into @p a, and its restart-only keys
 * into a->boot. @return 0 or EXIT_CONFIG (errors on stderr). */
static int
load_config(struct app *a, const char *path)
{
	if (dpmon_config_load(path, &a->cfg, stderr) != 0)
		return EXIT_CONFIG;
	a->config_path = path;
	a->boot = a->cfg;
	a->boot.subnets = NULL; /* scalars and ports only */
	a->boot.n_subnets = 0;
	memset(&a->boot.detect, 0, sizeof(a->boot.detect));
	return 0;
}

/* Start, then merge until the stop. @return 0 or the start-up's exit status. */
static int
run(struct app *a, const struct app_opts *o)
{
	int rc = app_setup(a, o);

	if (rc != 0)
		return rc;
	app_signals_unblock_reload();
	app_merge_loop(a, o->duration_s);
	return 0;
}

int
dpmon_main(int argc, char **argv)
{
	static struct app a; /* large; zero-initialised */
	struct app_opts o;
	int rc, sep;

	mallopt(M_MMAP_THRESHOLD, LARGE_BUFFER_BYTES);
	rc = app_early_options(argc, argv);
	if (rc >= 0)
		return rc;
	rc = app_own_options(argc, argv, &o, &sep);
	if (rc != 0)
		return rc;
	/* Before the configuration, whose load takes seconds with many
	 * subnets or ignored sources: a SIGHUP meanwhile (a reload asked
	 * during the start) is kept for the merge loop instead of ending
	 * the process, and a stop request ends it cleanly. */
	app_signals_init();
	if (load_config(&a, o.config) != 0)
		return EXIT_CONFIG;
	if (app_check_eal_files(sep, argv) != 0) {
		dpmon_config_free(&a.cfg);
		return EXIT_START;
	}
	if (rte_eal_init(sep, argv) < 0) {
		fprintf(stderr, "dpmon: EAL initialisation failed: %s\n",
			rte_errno ? rte_strerror(rte_errno) : "see the EAL messages above");
		dpmon_config_free(&a.cfg);
		return EXIT_START;
	}
	rc = app_stop_signal() ? 0 : run(&a, &o);
	app_shutdown(&a);
	dpmon_log_flush(); /* the counts of windows still open */
	rte_eal_cleanup();
	if (app_stop_signal())
		printf("dpmon: stopped by signal %d\n", app_stop_signal());
	return rc;
}
