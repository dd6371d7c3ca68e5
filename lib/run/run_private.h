/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run_private.h — what the files of lib/run share: the state of the one
 * dpmon process (struct app), its command-line options, and the steps of
 * its life cycle, one file each:
 *
 *   cli.c       the command line: the options that need no EAL, then
 *               dpmon's own options after "--"
 *   setup.c     classifier, ports, worker lcores and their RX queues, the
 *               distributor, merge, detection, actions, HTTP; the launch
 *   signals.c   the signals: the stop and reload flags their handlers set
 *   loop.c      the merge loop of the main lcore
 *   reload.c    SIGHUP: the configuration reload between two merges
 *   shutdown.c  the orderly stop
 *   service.c   sd_notify: READY, the systemd watchdog, STOPPING
 *   hooks.c     the test hooks (DPMON_TEST_HOOKS): hold the merge, a worker
 *   run.c       dpmon_main (run.h): the order of it all
 *
 * Private to lib/run: nothing outside it includes this header. Every
 * function here runs on the main lcore (the thread that called
 * dpmon_main), never on a worker lcore, unless its comment says otherwise.
 */
#ifndef DPMON_RUN_PRIVATE_H
#define DPMON_RUN_PRIVATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_rcu_qsbr.h>

#include "actions.h"
#include "classify.h"
#include "config.h"
#include "counters.h"
#include "detect.h"
#include "distributor.h"
#include "export.h"
#include "health.h"
#include "http.h"
#include "merge.h"
#include "port.h"
#include "sampler.h"
#include "snapshot.h"
#include "worker.h"

/* Exit statuses of dpmon_main besides 0 (run.h). */
#define EXIT_CONFIG 1 /* the configuration file is invalid */
#define EXIT_USAGE  2 /* bad command line, too few lcores */
#define EXIT_START  3 /* DPDK, a port or a module could not start */

/** dpmon's own options, those after "--" (cli.c). */
struct app_opts {
	const char *config;    /**< --config FILE (required) */
	const char *port_file; /**< --http-port-file FILE, or NULL */
	long http_port;        /**< --http-port N, 0..65535; -1 = from the configuration */
	double duration_s;     /**< --duration, seconds; 0 = until a signal */
};

/** What the service manager was told (service.c). */
struct app_service {
	bool ready;            /**< READY=1 sent */
	uint64_t watchdog_ns;  /**< the systemd watchdog interval; 0 = none */
	uint64_t last_ping_ns; /**< the last WATCHDOG=1, CLOCK_MONOTONIC; 0 = none */
};

/** Configuration reloads so far (reported in every snapshot). */
struct reload_stats {
	uint64_t ok, failed;
	double last_unix_s; /**< time of the last attempt, Unix seconds; 0 = none */
	bool last_ok;
	uint64_t refused;           /**< among failed: the file could not be read or was invalid */
	double last_refusal_unix_s; /**< 0 = none */
	uint32_t last_refusal_errors;
	char last_refusal_file[DPMON_PATH_LEN];
	char last_refusal_reason[DPMON_REFUSAL_REASON_LEN];
};

/**
 * The whole state of the process. One instance, zero-initialised, owned
 * by dpmon_main; the main lcore writes it, the workers see only their own
 * struct dpmon_worker and what it points to.
 */
struct app {
	struct dpmon_config cfg; /**< the running configuration */
	const char *config_path;
	/** Restart-only keys as the file had them at start (before any
	 * start-up resolution, e.g. rx_queues), to tell what a reload changes. */
	struct dpmon_config boot;       /**< scalars and ports only: no allocation */
	struct dpmon_classifier *cls;   /**< the running classifier */
	struct dpmon_generation **gens; /**< n_workers: each worker's running generation */
	struct dpmon_generation *
		*retired;         /**< n_workers: the previous ones, until the next merge */
	struct rte_rcu_qsbr *qsv; /**< the workers' quiescent states */
	unsigned n_reloads;       /**< names the DPDK objects of each classifier */
	struct reload_stats reload;
	uint16_t port_ids[DPMON_MAX_PORTS];
	unsigned n_ports_started;
	unsigned n_workers;
	struct dpmon_worker *workers; /**< n_workers */
	struct dpmon_core **cores;    /**< n_workers */
	unsigned *lcores;             /**< n_workers: worker w's lcore id */
	struct dpmon_merge *merge;
	struct dpmon_sampler *sampler; /**< packets of hosts under alert (sample.h) */
	struct dpmon_detect *detect;   /**< thresholds and alerts, after each merge */
	struct dpmon_snap_store store;
	struct dpmon_http *http;
	struct dpmon_actions *actions;  /**< notify, ExaBGP, blackholes (actions.h) */
	struct dpmon_export *exporters; /**< ClickHouse, InfluxDB (export.h) */
	bool launched;                  /**< workers launched: the stop merges once more */
	bool stop_workers; /**< ends the worker and distributor loops (__atomic store) */
	bool srss;         /**< software RSS: the distributor below runs */
	unsigned dist_lcore;
	struct dpmon_distributor dist;
	/** The board /health judges (health.h): lcores 0..n_workers-1 are the
	 * workers, then the distributor with software_rss. */
	struct dpmon_health health;
	struct app_service service;
	const char *hooks_dir; /**< DPMON_TEST_HOOKS (hooks.c), or NULL */
};

/* ------------------------------------------------------------------------
 * cli.c — the command line.
 * --------------------------------------------------------------------- */

/**
 * Print the usage text to @p f (stdout for --help, stderr on errors).
 * Any thread.
 */
void app_usage(FILE *f);

/**
 * The options that run without EAL: --check-config FILE, --version, --help
 * (-h), looked for before the first "--".
 * @return the process exit status when one of them was given and done
 *         (0, EXIT_CONFIG, EXIT_USAGE), or -1 to go on.
 */
int app_early_options(int argc, char **argv);

/**
 * Find the "--" that ends the EAL options and parse dpmon's own options
 * after it into @p o; errors and the usage go to stderr. @p argv is left
 * as it was.
 * @param sep  receives the index of "--": the EAL's argc.
 * @return 0, or EXIT_USAGE.
 */
int app_own_options(int argc, char **argv, struct app_opts *o, int *sep);

/**
 * Check the capture files the EAL options name (--vdev ...,rx_pcap=PATH)
 * as dpmon checks every file it reads (file.h): a regular file, opened
 * without blocking. A FIFO there would otherwise hold rte_eal_init.
 * @param argc  the EAL's argc (the index of "--").
 * @param argv  the command line.
 * @return 0, or EXIT_START after naming the file and the reason on stderr.
 * Main thread, before rte_eal_init.
 */
int app_check_eal_files(int argc, char **argv);

/* ------------------------------------------------------------------------
 * setup.c — start-up.
 * --------------------------------------------------------------------- */

/**
 * Start everything after the EAL, in order: classifier, ports, workers (or
 * the distributor and its workers), merge, sampler, snapshot store,
 * telemetry, actions, detection, HTTP; then launch the worker lcores,
 * print the queue assignment and the API's address, write the port file.
 * Whatever was started stays in @p a for app_shutdown, also on failure.
 * @return 0, EXIT_USAGE (too few lcores) or EXIT_START; the reason was
 *         printed on stderr.
 */
int app_setup(struct app *a, const struct app_opts *o);

/* ------------------------------------------------------------------------
 * signals.c — signals.
 * --------------------------------------------------------------------- */

/**
 * Install the handlers: SIGINT and SIGTERM ask for a stop, SIGHUP for a
 * reload. SIGHUP stays blocked in this thread, and so in every thread it
 * starts (EAL, HTTP), until app_signals_unblock_reload, so it waits for the
 * workers to run and then reaches the main lcore. Call once, before the EAL.
 */
void app_signals_init(void);

/** Let SIGHUP in: call when every other thread exists, before app_merge_loop. */
void app_signals_unblock_reload(void);

/** @return the signal that asked for a stop (SIGINT, SIGTERM), or 0. Any thread. */
int app_stop_signal(void);

/** @return whether a SIGHUP asked for a reload not yet served. Main lcore. */
bool app_reload_pending(void);

/** Mark the pending reload request served (before serving it). Main lcore. */
void app_reload_clear(void);

/* ------------------------------------------------------------------------
 * loop.c — the merge loop.
 * --------------------------------------------------------------------- */

/**
 * One merge: read the NIC counters, merge the per-core tables, free the
 * retired generations, add the reload and actions counters, run
 * detection on the still private snapshot and publish it. An allocation
 * failure is logged and skips this interval.
 * @return true when a snapshot was published.
 */
bool app_merge_once(struct app *a);

/**
 * Merge every merge_interval_ms until SIGINT or SIGTERM, or until
 * @p duration_s (seconds, 0 = no limit) have passed, which ends with one
 * last merge. A reload (SIGHUP) is served between two merges. After each
 * merge: the health board (the merge's time, the lcores' poll counters)
 * and the service manager (READY=1 after the first, WATCHDOG=1).
 */
void app_merge_loop(struct app *a, double duration_s);

/* ------------------------------------------------------------------------
 * service.c — sd_notify.
 * --------------------------------------------------------------------- */

/** Read the systemd watchdog's interval (sd_watchdog_enabled). Before the merge loop. */
void app_service_start(struct app *a);

/**
 * After a merge at @p now_ns (CLOCK_MONOTONIC): READY=1 after the first
 * that @p published a snapshot; WATCHDOG=1 when it did and every lcore is
 * @p polling (dpmon_health_gathered), at most every quarter interval.
 */
void app_service_merged(struct app *a, bool published, bool polling, uint64_t now_ns);

/** STOPPING=1: the stop begins. Any thread. */
void app_service_stopping(void);

/* ------------------------------------------------------------------------
 * hooks.c — test hooks.
 * --------------------------------------------------------------------- */

/** Read DPMON_TEST_HOOKS (a directory), once at start-up. */
void app_hooks_init(struct app *a);

/**
 * With test hooks: hold or release each worker as DIR/hold-worker-<lcore>
 * says, and wait while DIR/hold-merge exists (or until a stop signal).
 * Without: nothing. Once per loop round, before the merge.
 */
void app_hooks_round(struct app *a);

/* ------------------------------------------------------------------------
 * reload.c — the configuration reload.
 * --------------------------------------------------------------------- */

/**
 * SIGHUP: re-read a->config_path and make it the running configuration
 * when it is valid; else log every error and change nothing. Counted in
 * a->reload either way. Call between two merges only.
 */
void app_reload(struct app *a);

/**
 * Free the @p n generations of @p g (a NULL array is ignored) and clear
 * the entries. The workers must no longer see them (grace period) and the
 * merger no longer read them.
 */
void app_free_gens(struct dpmon_generation **g, unsigned n);

/* ------------------------------------------------------------------------
 * shutdown.c — the stop.
 * --------------------------------------------------------------------- */

/**
 * Stop the workers and wait for them, print their totals, merge once more
 * and print the final state (when they ran), then stop and free every
 * module in the reverse order of the start. Safe on a partial start-up.
 * The EAL itself stays (rte_eal_cleanup is the caller's).
 */
void app_shutdown(struct app *a);

#endif /* DPMON_RUN_PRIVATE_H */
