/*
 * run.c — dpmon's life cycle (see run.h).
 *
 *   main lcore:  EAL init → config → classifier → ports → per-core tables →
 *                launch workers → HTTP, telemetry commands → every interval:
 *                read NIC counters, merge, publish → on stop: workers, HTTP,
 *                telemetry, ports, EAL.
 *   worker lcores: dpmon_worker_loop on their share of the RX queues.
 *
 * RX queues are dealt round-robin over the worker lcores in port order, so
 * every queue has exactly one poller and a worker may poll several queues.
 * With "software_rss" the first worker lcore is a distributor instead
 * (distributor.h): it polls every RX queue and each other worker polls its
 * rings (one ring-PMD queue per configured port); the distributor's drops
 * on full rings are added to each port's imissed.
 */
#include "run.h"

#include <errno.h>
#include <getopt.h>
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
#include <rte_version.h>
#include <rte_lcore.h>

#include "classify.h"
#include "config.h"
#include "counters.h"
#include "distributor.h"
#include "http.h"
#include "merge.h"
#include "port.h"
#include "sample.h"
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

struct app {
	struct dpmon_config cfg;
	struct dpmon_classifier cls;
	uint16_t port_ids[DPMON_MAX_PORTS];
	unsigned n_ports_started;
	unsigned n_workers;
	struct dpmon_worker *workers; /* n_workers */
	struct dpmon_core **cores;
	unsigned *lcores;
	struct dpmon_merge *merge;
	struct dpmon_sampler *sampler; /* alert packet samples (sample.h) */
	struct dpmon_snap_store store;
	struct dpmon_http *http;
	volatile bool stop_workers;
	bool srss;                     /* software RSS: the distributor below runs */
	unsigned dist_lcore;
	struct dpmon_distributor dist;
};

static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
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
	if (a->workers == NULL || a->cores == NULL || a->lcores == NULL)
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
		a->cores[w] = dpmon_core_create(tag, a->cfg.n_subnets, a->cfg.host_table_capacity,
						(int)rte_lcore_to_socket_id(lcore));
		if (a->cores[w] == NULL) {
			fprintf(stderr, "dpmon: lcore %u: cannot allocate a host table of %u "
					"entries: %s\n", lcore, a->cfg.host_table_capacity,
				rte_strerror(rte_errno));
			return -ENOMEM;
		}
		a->cores[w]->lcore_id = lcore;
		a->lcores[w] = lcore;
		wk->core = a->cores[w];
		wk->cls = &a->cls;
		wk->stop = &a->stop_workers;
		wk->burst_size = (uint16_t)a->cfg.burst_size;
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
read_ports(struct app *a, struct dpmon_snap_port *ports)
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

static void
merge_once(struct app *a)
{
	struct dpmon_snap_port ports[DPMON_MAX_PORTS];
	struct dpmon_snapshot *s;

	read_ports(a, ports);
	s = dpmon_merge_run(a->merge, rte_rdtsc(), ports, a->n_ports_started);
	if (s == NULL)
		fprintf(stderr, "dpmon: merge: out of memory; retrying next interval\n");
	else
		dpmon_snap_publish(&a->store, s);
	dpmon_sampler_drain(a->sampler);
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
 * between two ticks).
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
		bool last;

		timespec_add_ms(&next, a->cfg.merge_interval_ms);
		last = duration_s > 0 && !timespec_before(&next, &end);
		wake = last ? end : next;
		while (!stop_signal &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) == EINTR)
			;
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

static void
shutdown_app(struct app *a)
{
	a->stop_workers = true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	rte_eal_mp_wait_lcore();
	print_worker_totals(a);
	dpmon_http_stop(a->http);
	dpmon_telemetry_detach();
	dpmon_snap_store_destroy(&a->store);
	dpmon_merge_free(a->merge);
	dpmon_sampler_free(a->sampler);
	if (a->srss)
		dpmon_distributor_teardown(&a->dist);
	for (unsigned p = 0; p < a->n_ports_started; p++)
		dpmon_port_stop(a->port_ids[p]);
	for (unsigned w = 0; a->cores && w < a->n_workers; w++)
		dpmon_core_free(a->cores[w]);
	free(a->cores);
	free(a->lcores);
	rte_free(a->workers);
	dpmon_classifier_free(&a->cls);
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
	rc = dpmon_classifier_create(&a->cls, "main", a->cfg.subnets, a->cfg.n_subnets,
				     (int)rte_socket_id());
	if (rc != 0) {
		fprintf(stderr, "dpmon: cannot build the LPM tables: %s\n", rte_strerror(-rc));
		return EXIT_START;
	}
	if (start_ports(a) != 0 || setup_workers(a) != 0)
		return EXIT_START;
	a->merge = dpmon_merge_create(&a->cfg, a->cores, a->lcores, a->n_workers, rte_rdtsc(),
				      rte_get_tsc_hz());
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
	a->http = start_http(a, o);
	if (a->http == NULL) {
		fprintf(stderr, "dpmon: HTTP server on %s port %ld: %s\n", a->cfg.http_listen,
			o->http_port >= 0 ? o->http_port : (long)a->cfg.http_port,
			strerror(errno));
		return EXIT_START;
	}
	port = dpmon_http_port(a->http);
	print_assignment(a);
	for (unsigned w = 0; w < a->n_workers; w++)
		rte_eal_remote_launch(dpmon_worker_loop, &a->workers[w], a->lcores[w]);
	if (a->srss)
		rte_eal_remote_launch(dpmon_distributor_loop, &a->dist, a->dist_lcore);
	snprintf(url_host, sizeof(url_host), strchr(a->cfg.http_listen, ':') ? "[%s]" : "%s",
		 a->cfg.http_listen);
	printf("dpmon: %u worker lcore(s), %u port(s), %u subnet(s); API at "
	       "http://%s:%u/api/v1/summary\n",
	       a->n_workers, a->n_ports_started, a->cfg.n_subnets, url_host, port);
	fflush(stdout);
	if (o->port_file && write_port_file(o->port_file, port) != 0)
		fprintf(stderr, "dpmon: cannot write %s: %s\n", o->port_file, strerror(errno));
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
	/* Before EAL: a stop request during start-up ends in a clean exit. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* systemd ExecReload sends SIGHUP; reload is not implemented yet: keep running. */
	signal(SIGHUP, SIG_IGN);
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
