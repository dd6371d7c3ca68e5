/*
 * run.c — dpmon's life cycle (see run.h).
 *
 *   main lcore:  EAL init → config → classifier → ports → per-core tables →
 *                telemetry commands, actions, sampler, detection → HTTP →
 *                launch workers → every interval: read NIC counters,
 *                merge, detect (on the private snapshot), publish → on
 *                stop: workers, HTTP, actions, telemetry, ports, EAL.
 *   worker lcores: dpmon_worker_loop on their share of the RX queues.
 *
 * RX queues are dealt round-robin over the worker lcores in port order, so
 * every queue has exactly one poller and a worker may poll several queues.
 * With "software_rss" the first worker lcore is a distributor instead
 * (distributor.h): it polls every RX queue and each other worker polls its
 * rings (one ring-PMD queue per configured port); the distributor's drops
 * on full rings are added to each port's imissed.
 *
 * Reload (SIGHUP, docs/operations.md): the signal handler only sets a
 * flag; the merge loop, between two merges, re-reads the configuration
 * file and, if it is valid, apply_reload builds the new classifier and one
 * new generation of subnet counters per worker aside (worker.h), publishes
 * them, waits for an RCU grace period (rte_rcu_qsbr: every worker has
 * reported a quiescent state since), then tells the merger, which folds the
 * old generation's final counts into the subnets that remain
 * (merge.h), and makes the new configuration the running one. Keys that
 * need a restart keep their running value, with one warning each. An
 * invalid file changes nothing; its errors are logged (log.h).
 */
#include "run.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_version.h>
#include <rte_lcore.h>

#include "actions.h"
#include "classify.h"
#include "config.h"
#include "counters.h"
#include "detect.h"
#include "distributor.h"
#include "http.h"
#include "log.h"
#include "merge.h"
#include "port.h"
#include "sampler.h"
#include "snapshot.h"
#include "telemetry.h"
#include "worker.h"

#define EXIT_CONFIG 1
#define EXIT_USAGE 2
#define EXIT_START 3

struct app_opts {
	const char *config;
	const char *port_file;
	long http_port; /* -1 = from the configuration */
	double duration_s; /* 0 = until a signal */
};

/* Configuration reloads so far (reported in every snapshot). */
struct reload_stats {
	uint64_t ok, failed;
	double last_unix_s; /* time of the last attempt; 0 = none */
	bool last_ok;
};

struct app {
	struct dpmon_config cfg;       /* the running configuration */
	const char *config_path;
	/* Restart-only keys as the file had them at start (before any
	 * start-up resolution, e.g. rx_queues), to tell what a reload changes. */
	struct dpmon_config boot;      /* scalars and ports only: no allocation */
	struct dpmon_classifier *cls;  /* the running classifier */
	struct dpmon_generation **gens;       /* n_workers: each worker's running generation */
	struct dpmon_generation **retired;    /* n_workers: the previous ones, until the next merge */
	struct rte_rcu_qsbr *qsv;      /* the workers' quiescent states */
	unsigned n_reloads;            /* names the DPDK objects of each classifier */
	struct reload_stats reload;
	uint16_t port_ids[DPMON_MAX_PORTS];
	unsigned n_ports_started;
	unsigned n_workers;
	struct dpmon_worker *workers; /* n_workers */
	struct dpmon_core **cores;
	unsigned *lcores;
	struct dpmon_merge *merge;
	struct dpmon_sampler *sampler; /* packets of hosts under alert (sample.h) */
	struct dpmon_detect *detect;   /* thresholds and alerts, after each merge */
	struct dpmon_snap_store store;
	struct dpmon_http *http;
	struct dpmon_actions *actions; /* notify, ExaBGP, blackholes (actions.h) */
	bool launched;                 /* workers launched: the stop merges once more */
	volatile bool stop_workers;
	bool srss;                     /* software RSS: the distributor below runs */
	unsigned dist_lcore;
	struct dpmon_distributor dist;
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t reload_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* SIGHUP: reload between two merges (merge_loop), never in the handler. */
static void
on_reload_signal(int sig)
{
	(void)sig;
	reload_signal = 1;
}

static void
block_reload_signal(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void
unblock_reload_signal(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: dpmon [EAL options] -- --config FILE [--http-port N]\n"
		"             [--http-port-file FILE] [--duration SECONDS]\n"
		"       dpmon --check-config FILE\n"
		"       dpmon --version | --help\n"
		"Counts packets and bytes per monitored subnet and host on DPDK ports\n"
		"and serves them as JSON over HTTP. See docs/configuration.md.\n");
}

/* Options that run without EAL. @return exit status, or -1 to go on. */
static int
early_options(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--check-config") == 0) {
			struct dpmon_config cfg;
			int rc;

			if (i != 1 || argc != 3) {
				fprintf(stderr, "dpmon: usage: dpmon --check-config FILE "
						"(one file, no other argument)\n");
				return EXIT_USAGE;
			}
			rc = dpmon_config_load(argv[i + 1], &cfg, stderr);
			if (rc != 0)
				return EXIT_CONFIG;
			printf("%s: valid (%u ports, %u subnets)\n", argv[i + 1], cfg.n_ports,
			       cfg.n_subnets);
			dpmon_config_free(&cfg);
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("dpmon %s (%s)\n", DPMON_VERSION, rte_version());
			return 0;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
	}
	return -1;
}

/* A non-empty string of decimal digits (no sign, no spaces). */
static bool
all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int
parse_app_args(int argc, char **argv, struct app_opts *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"http-port", required_argument, NULL, 'p'},
		{"http-port-file", required_argument, NULL, 'f'},
		{"duration", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	char *end;

	memset(o, 0, sizeof(*o));
	o->http_port = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->config = optarg;
			break;
		case 'p':
			o->http_port = strtol(optarg, &end, 10);
			if (!all_digits(optarg) || *end != '\0' || o->http_port > 65535) {
				fprintf(stderr, "dpmon: --http-port: '%s' is not 0..65535\n", optarg);
				return -EINVAL;
			}
			break;
		case 'f':
			o->port_file = optarg;
			break;
		case 'd':
			o->duration_s = strtod(optarg, &end);
			if (*end != '\0' || !(o->duration_s > 0)) {
				fprintf(stderr, "dpmon: --duration: '%s' is not a positive number "
						"of seconds\n", optarg);
				return -EINVAL;
			}
			break;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dpmon: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->config == NULL) {
		fprintf(stderr, "dpmon: --config FILE is required (after the EAL options "
				"and '--')\n");
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* rx_queues absent: one per worker lcore, capped by the device. */
static void
resolve_auto_queues(struct dpmon_port_conf *pc, uint16_t port_id, unsigned n_workers)
{
	struct rte_eth_dev_info info;
	unsigned n = n_workers;

	if (pc->rx_queues != DPMON_RXQ_AUTO)
		return;
	if (rte_eth_dev_info_get(port_id, &info) == 0 && info.max_rx_queues < n)
		n = info.max_rx_queues;
	pc->rx_queues = (uint16_t)(n > 0 ? n : 1);
}

static int
start_ports(struct app *a)
{
	for (unsigned p = 0; p < a->cfg.n_ports; p++) {
		struct dpmon_port_conf *pc = &a->cfg.ports[p];
		int rc = dpmon_port_resolve(pc->device, &a->port_ids[p], stderr);

		for (unsigned q = 0; rc == 0 && q < p; q++) {
			if (a->port_ids[q] == a->port_ids[p]) {
				fprintf(stderr, "dpmon: ports[%u] '%s' is the same device as "
						"ports[%u] '%s'\n", p, pc->device, q,
					a->cfg.ports[q].device);
				rc = -EEXIST;
			}
		}
		if (rc == 0) {
			resolve_auto_queues(pc, a->port_ids[p],
					    a->cfg.software_rss ? 1 : rte_lcore_count() - 1);
			rc = dpmon_port_start(a->port_ids[p], pc, a->cfg.mbufs_per_queue,
					      (uint16_t)a->cfg.burst_size, stderr);
		}
		if (rc != 0)
			return rc;
		a->n_ports_started = p + 1;
	}
	return 0;
}

/* Software RSS: the distributor polls every RX queue; worker w polls its
 * ring-PMD port, queue p carrying configuration port p's packets. */
static int
setup_distributor(struct app *a)
{
	struct dpmon_distributor *d = &a->dist;

	d->lcore_id = a->dist_lcore;
	d->burst_size = (uint16_t)a->cfg.burst_size;
	d->idle_sleep_us = a->cfg.idle_sleep_us;
	d->n_workers = (uint16_t)a->n_workers;
	d->n_ports = (uint16_t)a->n_ports_started;
	d->stop = &a->stop_workers;
	for (unsigned p = 0; p < a->cfg.n_ports; p++) {
		for (uint16_t q = 0; q < a->cfg.ports[p].rx_queues; q++) {
			if (d->n_rxq == DPMON_DIST_MAX_QUEUES) {
				fprintf(stderr, "dpmon: software_rss: more than %d RX queues\n",
					DPMON_DIST_MAX_QUEUES);
				return -EINVAL;
			}
			d->rxq[d->n_rxq++] = (struct dpmon_dist_rxq){
				.port_id = a->port_ids[p], .queue_id = q, .port_index = (uint16_t)p};
		}
	}
	if (a->cfg.n_ports > DPMON_MAX_WORKER_QUEUES) {
		fprintf(stderr, "dpmon: software_rss: more than %d ports\n",
			DPMON_MAX_WORKER_QUEUES);
		return -EINVAL;
	}
	if (dpmon_distributor_setup(d, (int)rte_socket_id(), stderr) != 0)
		return -ENOMEM;
	for (unsigned w = 0; w < a->n_workers; w++) {
		struct dpmon_worker *wk = &a->workers[w];

		for (unsigned p = 0; p < a->cfg.n_ports; p++) {
			wk->rxq[wk->n_rxq].port_id = d->ring_port[w];
			wk->rxq[wk->n_rxq].queue_id = (uint16_t)p;
			wk->rxq[wk->n_rxq].decap = a->cfg.ports[p].decap;
			wk->n_rxq++;
		}
	}
	return 0;
}

/* Create every worker's tables and deal the RX queues out round-robin. */
static int
setup_workers(struct app *a)
{
	unsigned lcore, w = 0, next = 0;

	a->srss = a->cfg.software_rss;
	a->n_workers = rte_lcore_count() - 1 - (a->srss ? 1 : 0);
	a->workers = rte_zmalloc("dpmon_workers", sizeof(*a->workers) * a->n_workers,
				 RTE_CACHE_LINE_SIZE);
	a->cores = calloc(a->n_workers, sizeof(*a->cores));
	a->lcores = calloc(a->n_workers, sizeof(*a->lcores));
	a->gens = calloc(a->n_workers, sizeof(*a->gens));
	a->retired = calloc(a->n_workers, sizeof(*a->retired));
	a->qsv = rte_zmalloc("dpmon_qsv", rte_rcu_qsbr_get_memsize(a->n_workers),
			     RTE_CACHE_LINE_SIZE);
	if (a->workers == NULL || a->cores == NULL || a->lcores == NULL || a->gens == NULL ||
	    a->retired == NULL || a->qsv == NULL ||
	    rte_rcu_qsbr_init(a->qsv, a->n_workers) != 0)
		return -ENOMEM;
	a->dist_lcore = RTE_MAX_LCORE;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		char tag[32];
		struct dpmon_worker *wk = &a->workers[w];

		if (a->srss && a->dist_lcore == RTE_MAX_LCORE) {
			a->dist_lcore = lcore; /* the first worker lcore distributes */
			continue;
		}
		snprintf(tag, sizeof(tag), "lcore%u", lcore);
		a->cores[w] = dpmon_core_create(tag, a->cfg.host_table_capacity,
						(int)rte_lcore_to_socket_id(lcore));
		if (a->cores[w] == NULL) {
			fprintf(stderr, "dpmon: lcore %u: cannot allocate a host table of %u "
					"entries: %s\n", lcore, a->cfg.host_table_capacity,
				rte_strerror(rte_errno));
			return -ENOMEM;
		}
		a->cores[w]->lcore_id = lcore;
		a->lcores[w] = lcore;
		/* Generation 0: made like every later one (apply_reload). */
		a->gens[w] = dpmon_generation_create(a->cls, a->cfg.n_subnets,
					      (int)rte_lcore_to_socket_id(lcore));
		if (a->gens[w] == NULL)
			return -ENOMEM;
		wk->core = a->cores[w];
		wk->gen = a->gens[w];
		wk->qsv = a->qsv;
		wk->qs_id = w;
		wk->stop = &a->stop_workers;
		wk->burst_size = (uint16_t)a->cfg.burst_size;
		wk->idle_sleep_us = a->cfg.idle_sleep_us;
		wk->lcore_id = lcore;
		w++;
	}
	if (a->srss)
		return setup_distributor(a);
	for (unsigned p = 0; p < a->cfg.n_ports; p++) {
		for (uint16_t q = 0; q < a->cfg.ports[p].rx_queues; q++) {
			struct dpmon_worker *wk = &a->workers[next++ % a->n_workers];

			if (wk->n_rxq == DPMON_MAX_WORKER_QUEUES) {
				fprintf(stderr, "dpmon: more than %d RX queues per worker lcore\n",
					DPMON_MAX_WORKER_QUEUES);
				return -EINVAL;
			}
			wk->rxq[wk->n_rxq].port_id = a->port_ids[p];
			wk->rxq[wk->n_rxq].queue_id = q;
			wk->rxq[wk->n_rxq].decap = a->cfg.ports[p].decap;
			wk->n_rxq++;
		}
	}
	return 0;
}

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
		ports[p].imissed += dpmon_distributor_dropped(a->srss ? &a->dist : NULL,
							      (uint16_t)p);
	}
}

/* Free the generations in @p g (n entries) and clear them. */
static void
free_gens(struct dpmon_generation **g, unsigned n)
{
	for (unsigned w = 0; g != NULL && w < n; w++) {
		dpmon_generation_free(g[w]);
		g[w] = NULL;
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
	out->exabgp_configured = a->cfg.actions.exabgp_pipe[0] != '\0';
	out->exabgp_connected = out->exabgp_configured && st.exabgp_connected;
	out->sample_copied = a->sampler != NULL ? dpmon_sampler_copied(a->sampler) : 0;
	out->sample_dropped = a->sampler != NULL ? dpmon_sampler_dropped(a->sampler) : 0;
}

static void
merge_once(struct app *a)
{
	struct dpmon_port_stats ports[DPMON_MAX_PORTS];
	struct dpmon_snapshot *s;
	struct timespec now;

	read_ports(a, ports);
	s = dpmon_merge_run(a->merge, rte_rdtsc(), ports, a->n_ports_started);
	if (s == NULL) {
		dpmon_log(DPMON_LOG_MERGE, DPMON_LOG_ERR,
			  "merge: out of memory; retrying next interval");
		dpmon_sampler_drain(a->sampler);
		return;
	}
	/* The previous generations served their last merge (merge.h). */
	free_gens(a->retired, a->n_workers);
	s->config.reloads = a->reload.ok;
	s->config.reload_failures = a->reload.failed;
	s->config.last_reload_unix_s = a->reload.last_unix_s;
	s->config.last_reload_ok = a->reload.last_ok;
	fill_actions(a, &s->actions);
	/* Detection sees the snapshot while it is still private. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (dpmon_detect_run(a->detect, s, (double)now.tv_sec + (double)now.tv_nsec * 1e-9) != 0)
		dpmon_log(DPMON_LOG_MERGE, DPMON_LOG_ERR,
			  "detect: out of memory; this snapshot lists no alerts");
	dpmon_snap_publish(&a->store, s);
}

static int
cmp_subnet_index(const void *x, const void *y, void *arg)
{
	const struct dpmon_subnet_conf *sub = arg;

	return dpmon_prefix_cmp(&sub[*(const uint32_t *)x].prefix, &sub[*(const uint32_t *)y].prefix);
}

/*
 * For each of the @p n_new subnets its index among the @p n_old ones with
 * the same prefix, or UINT32_MAX, into @p old_of_new. Sort and binary
 * search: 65536 subnets on each side cost a few milliseconds.
 * @return 0 or -ENOMEM.
 */
static int
match_subnets(const struct dpmon_subnet_conf *old, uint32_t n_old,
	      const struct dpmon_subnet_conf *new, uint32_t n_new, uint32_t *old_of_new)
{
	uint32_t *by_prefix = malloc(sizeof(*by_prefix) * (n_old ? n_old : 1));

	if (by_prefix == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n_old; i++)
		by_prefix[i] = i;
	qsort_r(by_prefix, n_old, sizeof(*by_prefix), cmp_subnet_index, (void *)old);
	for (uint32_t i = 0; i < n_new; i++) {
		uint32_t lo = 0, hi = n_old;

		old_of_new[i] = UINT32_MAX;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			int c = dpmon_prefix_cmp(&old[by_prefix[mid]].prefix, &new[i].prefix);

			if (c == 0) {
				old_of_new[i] = by_prefix[mid];
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	free(by_prefix);
	return 0;
}

/* Log, once per key, each restart-only key the file changed (the running value stays). */
static void
warn_restart_only(const struct app *a, const struct dpmon_config *next)
{
	const struct dpmon_config *b = &a->boot;
	const char *changed[16];
	unsigned n = 0;

	if (b->n_ports != next->n_ports ||
	    memcmp(b->ports, next->ports, sizeof(b->ports[0]) * b->n_ports) != 0)
		changed[n++] = "ports";
	if (strcmp(b->http_listen, next->http_listen) != 0)
		changed[n++] = "http.listen";
	if (b->http_port != next->http_port)
		changed[n++] = "http.port";
	if (b->n_cors_origins != next->n_cors_origins ||
	    memcmp(b->http_cors_origins, next->http_cors_origins,
		   sizeof(b->http_cors_origins[0]) * b->n_cors_origins) != 0)
		changed[n++] = "http.cors_origins";
	if (b->metrics_top_hosts != next->metrics_top_hosts)
		changed[n++] = "metrics.top_hosts";
	if (b->host_table_capacity != next->host_table_capacity)
		changed[n++] = "host_table_capacity";
	if (b->merge_interval_ms != next->merge_interval_ms)
		changed[n++] = "merge_interval_ms";
	if (b->history_s != next->history_s)
		changed[n++] = "history_s";
	if (b->burst_size != next->burst_size)
		changed[n++] = "burst_size";
	if (b->mbufs_per_queue != next->mbufs_per_queue)
		changed[n++] = "mbufs_per_queue";
	if (b->idle_sleep_us != next->idle_sleep_us)
		changed[n++] = "idle_sleep_us";
	if (b->software_rss != next->software_rss)
		changed[n++] = "software_rss";
	for (unsigned i = 0; i < n; i++)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING,
			  "reload of %s: %s changed but takes effect only at restart; "
			  "keeping the running value", a->config_path, changed[i]);
}

/*
 * Wait until every worker has reported a quiescent state since now (an RCU
 * grace period): then none uses what was published before. Sleeps between
 * checks, since a worker may share the main lcore's CPU.
 */
static void
wait_grace_period(struct app *a)
{
	uint64_t token = rte_rcu_qsbr_start(a->qsv);
	const struct timespec pause = {0, 50 * 1000};

	while (rte_rcu_qsbr_check(a->qsv, token, false) != 1)
		nanosleep(&pause, NULL);
}

/* Publish @p gens to the workers (release: their contents first). */
static void
publish_gens(struct app *a, struct dpmon_generation **gens)
{
	for (unsigned w = 0; w < a->n_workers; w++)
		__atomic_store_n(&a->workers[w].gen, gens[w], __ATOMIC_RELEASE);
}

/* Subnets of @p old_of_new (n entries) that were kept. */
static uint32_t
count_kept(const uint32_t *old_of_new, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		k += old_of_new[i] != UINT32_MAX;
	return k;
}

/*
 * Exchange the keys a reload applies between the running configuration
 * @p run and @p next (twice = unchanged). Restart-only keys are not touched.
 */
static void
swap_reloadable(struct dpmon_config *run, struct dpmon_config *next)
{
	RTE_SWAP(run->subnets, next->subnets);
	RTE_SWAP(run->n_subnets, next->n_subnets);
	RTE_SWAP(run->average_time_constant_ms, next->average_time_constant_ms);
	RTE_SWAP(run->detect, next->detect);
	RTE_SWAP(run->actions, next->actions);
}

/*
 * Make @p next (valid, already loaded) the running configuration: subnets
 * and the other reloadable keys; restart-only keys keep their running
 * values. @p next's allocations move into a->cfg; the old ones stay in
 * @p next for the caller to free. @p kept: subnets of @p next that were
 * already monitored. @return 0, or -ENOMEM / a DPDK error with nothing
 * changed.
 */
static int
apply_reload(struct app *a, struct dpmon_config *next, uint32_t *kept)
{
	struct dpmon_classifier *cls = calloc(1, sizeof(*cls));
	struct dpmon_generation **gens = calloc(a->n_workers, sizeof(*gens));
	uint32_t *old_of_new = malloc(sizeof(*old_of_new) * next->n_subnets);
	char tag[32];
	int rc = -ENOMEM;

	if (cls == NULL || gens == NULL || old_of_new == NULL)
		goto fail;
	snprintf(tag, sizeof(tag), "r%u", ++a->n_reloads);
	rc = dpmon_classifier_create(cls, tag, next->subnets, next->n_subnets,
				     (int)rte_socket_id());
	if (rc != 0) {
		free(cls);
		cls = NULL;
		goto fail;
	}
	rc = -ENOMEM;
	for (unsigned w = 0; w < a->n_workers; w++) {
		gens[w] = dpmon_generation_create(cls, next->n_subnets,
					   (int)rte_lcore_to_socket_id(a->lcores[w]));
		if (gens[w] == NULL)
			goto fail;
	}
	if (match_subnets(a->cfg.subnets, a->cfg.n_subnets, next->subnets, next->n_subnets,
			  old_of_new) != 0)
		goto fail;
	*kept = count_kept(old_of_new, next->n_subnets);
	/* Swap: from here on the workers count into the new generations. */
	publish_gens(a, gens);
	wait_grace_period(a);
	/* The running configuration takes the reloadable keys (the merger
	 * reads its subnets' prefixes and names from it). */
	swap_reloadable(&a->cfg, next);
	rc = dpmon_merge_reconfigure(a->merge, cls, gens, a->cfg.n_subnets, old_of_new);
	if (rc != 0) {
		/* Back to the old generations: what the new ones counted since
		 * the swap is lost (out of memory only; logged by the caller). */
		publish_gens(a, a->gens);
		wait_grace_period(a);
		swap_reloadable(&a->cfg, next);
		goto fail;
	}
	/* Detection, actions and the sampler take the new sections
	 * (a->cfg.detect, a->cfg.actions); the old ones stay in @p next until the caller
	 * frees it, after this returns. */
	if (a->actions != NULL && dpmon_actions_reconfigure(a->actions, &a->cfg) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: out of memory for the actions' new settings; they keep the old ones");
	if (a->sampler != NULL)
		dpmon_sampler_reconfigure(a->sampler, &a->cfg.actions); /* pcap_dir, pcap_packets */
	if (a->detect != NULL && dpmon_detect_reconfigure(a->detect, &a->cfg.detect) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: out of memory for the detection's new settings; it keeps the old ones");
	free_gens(a->retired, a->n_workers); /* older ones the merger no longer reads */
	for (unsigned w = 0; w < a->n_workers; w++) {
		a->retired[w] = a->gens[w];
		a->gens[w] = gens[w];
	}
	/* No worker uses the old classifier any more (grace period above). */
	dpmon_classifier_free(a->cls);
	free(a->cls);
	a->cls = cls;
	free(gens);
	free(old_of_new);
	return 0;
fail:
	free_gens(gens, gens ? a->n_workers : 0);
	free(gens);
	if (cls != NULL) {
		dpmon_classifier_free(cls);
		free(cls);
	}
	free(old_of_new);
	return rc;
}

/*
 * SIGHUP: re-read the configuration file; apply it when valid, else log
 * every error (file, JSON path, why) and keep running as before.
 */
static void
reload_config(struct app *a)
{
	struct dpmon_config next;
	struct timespec now;
	char *errors = NULL;
	size_t errors_len = 0;
	FILE *err = open_memstream(&errors, &errors_len);
	uint32_t n_old = a->cfg.n_subnets, kept = 0;
	int rc;

	clock_gettime(CLOCK_REALTIME, &now);
	a->reload.last_unix_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	rc = dpmon_config_load(a->config_path, &next, err ? err : stderr);
	if (err != NULL)
		fclose(err);
	if (rc != 0) {
		a->reload.failed++;
		a->reload.last_ok = false;
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload of %s refused, the running configuration stays:\n%s",
			  a->config_path, errors ? errors : "");
		free(errors);
		return;
	}
	free(errors);
	warn_restart_only(a, &next);
	rc = apply_reload(a, &next, &kept);
	if (rc != 0) {
		a->reload.failed++;
		a->reload.last_ok = false;
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload of %s failed: %s%s; the running configuration stays",
			  a->config_path, rte_strerror(-rc),
			  rc == -ENOMEM ? " (a reload builds the new LPM tables, 64 MiB for IPv4"
					  " and 64 MiB for IPv6, beside the running ones: give"
					  " DPDK more memory, -m or hugepages)" : "");
	} else {
		a->reload.ok++;
		a->reload.last_ok = true;
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_NOTICE,
			  "reloaded %s: %u subnet(s), %u kept, %u added, %u removed",
			  a->config_path, a->cfg.n_subnets, kept, a->cfg.n_subnets - kept,
			  n_old - kept);
	}
	dpmon_config_free(&next);
}

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

/*
 * The main lcore's loop: merge on a fixed schedule until a signal or the
 * --duration deadline (which ends the loop with one last merge, even
 * between two ticks). A reload request (SIGHUP) is served between two
 * merges, when the sleep ends or is interrupted, without moving the ticks;
 * at most one per tick (one that comes during a reload is served right
 * after the next merge).
 */
static void
merge_loop(struct app *a, double duration_s)
{
	struct timespec next, now, end;

	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	end.tv_sec += (time_t)duration_s;
	timespec_add_ms(&end, (uint32_t)((duration_s - (double)(time_t)duration_s) * 1000));
	while (!stop_signal) {
		struct timespec wake;
		bool last, reloaded = false;

		timespec_add_ms(&next, a->cfg.merge_interval_ms);
		last = duration_s > 0 && !timespec_before(&next, &end);
		wake = last ? end : next;
		while (!stop_signal) {
			/* One reload per tick: SIGHUPs that keep coming while
			 * reloads take long must not starve the merges. One left
			 * pending by the previous tick is served at once. */
			int rc = reload_signal && !reloaded
					 ? 0
					 : clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);

			if (reload_signal && !stop_signal && !reloaded) {
				reload_signal = 0;
				reload_config(a);
				reloaded = true;
				continue; /* then sleep on to the same tick */
			}
			if (rc != EINTR)
				break;
		}
		if (stop_signal)
			break;
		merge_once(a);
		if (last)
			break;
		/* After a stall, skip missed ticks instead of merging back to back. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1)
			next = now;
	}
}

static void
print_assignment(const struct app *a)
{
	if (a->srss)
		printf("dpmon: distributor lcore %u polls %u RX queue(s) and feeds %u worker "
		       "lcore(s) through rings (software RSS)\n", a->dist_lcore, a->dist.n_rxq,
		       a->n_workers);
	for (unsigned w = 0; w < a->n_workers; w++) {
		const struct dpmon_worker *wk = &a->workers[w];

		printf("dpmon: worker lcore %u polls", wk->lcore_id);
		for (uint16_t q = 0; q < wk->n_rxq; q++)
			printf(" port %u queue %u%s", wk->rxq[q].port_id, wk->rxq[q].queue_id,
			       q + 1 < wk->n_rxq ? "," : "");
		printf("%s\n", wk->n_rxq == 0 ? " nothing (more workers than RX queues)" : "");
	}
}

static int
write_port_file(const char *path, uint16_t port)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		return -errno;
	return 0;
}

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
		       " dropped on full rings\n", a->dist_lcore, a->dist.packets, dropped);
	}
	fflush(stdout);
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
	char addr[DPMON_ADDR_STRLEN];

	if (s == NULL)
		return;
	printf("dpmon: final snapshot %" PRIu64 " at %.3f s: ingress %" PRIu64 " packets %" PRIu64
	       " bytes, egress %" PRIu64 " packets %" PRIu64 " bytes, %u hosts, %u alerts active\n",
	       s->seq, s->uptime_s, s->totals[DPMON_TOTAL_INGRESS].total.packets,
	       s->totals[DPMON_TOTAL_INGRESS].total.bytes,
	       s->totals[DPMON_TOTAL_EGRESS].total.packets,
	       s->totals[DPMON_TOTAL_EGRESS].total.bytes, s->n_hosts, s->alerts_active);
	for (uint32_t i = 0; i < s->n_alerts; i++) {
		const struct dpmon_alert *al = s->alerts[i];

		if (al->end_unix_s != 0)
			continue;
		dpmon_addr_format(&al->addr, addr, sizeof(addr));
		printf("dpmon: alert %" PRIu64 " still active at stop: %s %s %s %.6g > %.6g (%s)\n",
		       al->id, addr, dpmon_dir_name(al->dir), dpmon_metric_name(al->metric),
		       al->value, al->threshold, dpmon_attack_name(al->type));
	}
	dpmon_snap_release(&a->store, s);
	fflush(stdout);
}

static void
shutdown_app(struct app *a)
{
	a->stop_workers = true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	rte_eal_mp_wait_lcore();
	print_worker_totals(a);
	/* The workers are stopped: one last merge publishes every packet they
	 * counted since the previous one (the HTTP server still answers). */
	if (a->launched) {
		merge_once(a);
		print_final_state(a);
	}
	dpmon_http_stop(a->http);
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
	free_gens(a->gens, a->gens ? a->n_workers : 0);
	free_gens(a->retired, a->retired ? a->n_workers : 0);
	free(a->gens);
	free(a->retired);
	rte_free(a->qsv);
	for (unsigned w = 0; a->cores && w < a->n_workers; w++)
		dpmon_core_free(a->cores[w]);
	free(a->cores);
	free(a->lcores);
	rte_free(a->workers);
	if (a->cls != NULL)
		dpmon_classifier_free(a->cls);
	free(a->cls);
	dpmon_config_free(&a->cfg);
}

static struct dpmon_http *
start_http(struct app *a, const struct app_opts *o)
{
	struct dpmon_http_opts ho = {
		.listen_addr = a->cfg.http_listen,
		.port = o->http_port >= 0 ? (uint16_t)o->http_port : a->cfg.http_port,
		.metrics_top_hosts = a->cfg.metrics_top_hosts,
		.n_cors_origins = a->cfg.n_cors_origins,
		.cors_origins = a->cfg.http_cors_origins,
		.actions = a->actions,
	};

	return dpmon_http_start_opts(&ho, &a->store);
}

static int
run(struct app *a, const struct app_opts *o)
{
	char url_host[DPMON_ADDR_STRLEN + 2];
	uint16_t port;
	int rc;

	if (rte_lcore_count() < 2) {
		fprintf(stderr, "dpmon: no worker lcore: give EAL at least two lcores "
				"(e.g. -l 0-1); the main lcore only merges\n");
		return EXIT_USAGE;
	}
	if (a->cfg.software_rss && rte_lcore_count() < 3) {
		fprintf(stderr, "dpmon: software_rss needs a distributor lcore and at least one "
				"worker lcore besides the main lcore: give EAL at least three lcores "
				"(e.g. --lcores '0@0,1@1,2@1')\n");
		return EXIT_USAGE;
	}
	a->cls = calloc(1, sizeof(*a->cls));
	rc = a->cls == NULL ? -ENOMEM
			    : dpmon_classifier_create(a->cls, "main", a->cfg.subnets,
						      a->cfg.n_subnets, (int)rte_socket_id());
	if (rc != 0) {
		fprintf(stderr, "dpmon: cannot build the LPM tables: %s\n", rte_strerror(-rc));
		return EXIT_START;
	}
	if (start_ports(a) != 0 || setup_workers(a) != 0)
		return EXIT_START;
	a->merge = dpmon_merge_create(&a->cfg, a->cores, a->gens, a->lcores, a->n_workers,
				      rte_rdtsc(), rte_get_tsc_hz());
	if (a->merge == NULL) {
		fprintf(stderr, "dpmon: cannot allocate the merge tables\n");
		return EXIT_START;
	}
	a->sampler = dpmon_sampler_create(a->n_workers, &a->cfg.actions);
	if (a->sampler == NULL) {
		fprintf(stderr, "dpmon: cannot allocate the sampler's rings\n");
		return EXIT_START;
	}
	for (unsigned w = 0; w < a->n_workers; w++)
		a->cores[w]->sample = dpmon_sampler_core(a->sampler, w);
	dpmon_snap_store_init(&a->store);
	rc = dpmon_telemetry_attach(&a->store);
	if (rc != 0)
		fprintf(stderr, "dpmon: telemetry commands not registered: %s\n", strerror(-rc));
	a->actions = dpmon_actions_create_cfg(&a->cfg);
	if (a->actions == NULL) {
		fprintf(stderr, "dpmon: cannot start the actions (notify script, ExaBGP, "
				"blackholes): %s\n", errno == EINVAL ? "bad state file, see above"
								      : strerror(errno));
		return EXIT_START;
	}
	a->detect = dpmon_detect_create(&a->cfg.detect, a->sampler, a->actions);
	if (a->detect == NULL) {
		fprintf(stderr, "dpmon: cannot start detection: %s\n", strerror(errno));
		return EXIT_START;
	}
	a->http = start_http(a, o);
	if (a->http == NULL) {
		fprintf(stderr, "dpmon: HTTP server on %s port %ld: %s\n", a->cfg.http_listen,
			o->http_port >= 0 ? o->http_port : (long)a->cfg.http_port,
			strerror(errno));
		return EXIT_START;
	}
	port = dpmon_http_port(a->http);
	print_assignment(a);
	for (unsigned w = 0; w < a->n_workers; w++) {
		/* Online before the launch: a reload's grace period waits for it. */
		rte_rcu_qsbr_thread_register(a->qsv, w);
		rte_rcu_qsbr_thread_online(a->qsv, w);
		rte_eal_remote_launch(dpmon_worker_loop, &a->workers[w], a->lcores[w]);
	}
	if (a->srss)
		rte_eal_remote_launch(dpmon_distributor_loop, &a->dist, a->dist_lcore);
	a->launched = true;
	snprintf(url_host, sizeof(url_host), strchr(a->cfg.http_listen, ':') ? "[%s]" : "%s",
		 a->cfg.http_listen);
	printf("dpmon: %u worker lcore(s), %u port(s), %u subnet(s); API at "
	       "http://%s:%u/api/v1/summary\n",
	       a->n_workers, a->n_ports_started, a->cfg.n_subnets, url_host, port);
	fflush(stdout);
	if (o->port_file && write_port_file(o->port_file, port) != 0)
		fprintf(stderr, "dpmon: cannot write %s: %s\n", o->port_file, strerror(errno));
	/* Every other thread exists now and blocks SIGHUP: it interrupts the
	 * main lcore's sleep, so a reload starts at once. */
	unblock_reload_signal();
	merge_loop(a, o->duration_s);
	return 0;
}

int
dpmon_main(int argc, char **argv)
{
	static struct app a; /* large; zero-initialised */
	struct app_opts o;
	int rc, n;

	int sep = 1;
	char *saved;

	rc = early_options(argc, argv);
	if (rc >= 0)
		return rc;
	/* dpmon's own options follow "--"; check them and the configuration
	 * before DPDK starts, so a typo costs no EAL start-up. */
	while (sep < argc && strcmp(argv[sep], "--") != 0)
		sep++;
	if (sep == argc) {
		fprintf(stderr, "dpmon: missing '-- --config FILE' after the EAL options\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	saved = argv[sep];
	argv[sep] = argv[0]; /* program name for getopt's messages */
	rc = parse_app_args(argc - sep, argv + sep, &o);
	argv[sep] = saved;
	if (rc != 0)
		return EXIT_USAGE;
	if (dpmon_config_load(o.config, &a.cfg, stderr) != 0)
		return EXIT_CONFIG;
	a.config_path = o.config;
	a.boot = a.cfg;
	a.boot.subnets = NULL; /* scalars and ports only */
	a.boot.n_subnets = 0;
	memset(&a.boot.detect, 0, sizeof(a.boot.detect));
	/* Before EAL: a stop request during start-up ends in a clean exit. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* systemd ExecReload sends SIGHUP: reload in the merge loop. Blocked
	 * until then (and in every thread started meanwhile: EAL, HTTP), so it
	 * waits for the workers to run and reaches the main lcore. */
	signal(SIGHUP, on_reload_signal);
	block_reload_signal();
	n = rte_eal_init(sep, argv);
	if (n < 0) {
		fprintf(stderr, "dpmon: EAL initialisation failed: %s\n",
			rte_errno ? rte_strerror(rte_errno) : "see the EAL messages above");
		dpmon_config_free(&a.cfg);
		return EXIT_START;
	}
	rc = stop_signal ? 0 : run(&a, &o);
	shutdown_app(&a);
	rte_eal_cleanup();
	if (stop_signal)
		printf("dpmon: stopped by signal %d\n", (int)stop_signal);
	return rc;
}
