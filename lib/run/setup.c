/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * setup.c — dpmon's start-up after the EAL (run_private.h, app_setup).
 *
 *   classifier → ports → per-core tables and generation 0 → RX queues →
 *   merge, sampler → snapshot store, telemetry → actions → detection →
 *   health board → HTTP → launch the worker lcores (and the distributor) → announce.
 *
 * RX queues are dealt round-robin over the worker lcores in port order, so
 * every queue has exactly one poller and a worker may poll several queues.
 * With "software_rss" the first worker lcore is a distributor instead
 * (distributor.h): it polls every RX queue and each other worker polls its
 * rings (one ring-PMD queue per configured port); the distributor's drops
 * on full rings are added to each port's imissed (loop.c).
 *
 * Every step leaves what it started in struct app, so app_shutdown can
 * undo a start-up that failed half-way.
 */
#include "run_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "file_write.h"
#include "telemetry.h"

/* ------------------------------------------------------------------------
 * Ports.
 * --------------------------------------------------------------------- */

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

/* Ports @p p and the earlier ones: -EEXIST when two are the same device. */
static int
check_distinct(const struct app *a, unsigned p)
{
	for (unsigned q = 0; q < p; q++) {
		if (a->port_ids[q] == a->port_ids[p]) {
			fprintf(stderr,
				"dpmon: ports[%u] '%s' is the same device as "
				"ports[%u] '%s'\n",
				p, a->cfg.ports[p].device, q, a->cfg.ports[q].device);
			return -EEXIST;
		}
	}
	return 0;
}

/* Resolve and start every configured port; @return 0 or a negative errno. */
static int
start_ports(struct app *a)
{
	for (unsigned p = 0; p < a->cfg.n_ports; p++) {
		struct dpmon_port_conf *pc = &a->cfg.ports[p];
		int rc = dpmon_port_resolve(pc->device, &a->port_ids[p], stderr);

		if (rc == 0)
			rc = check_distinct(a, p);
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

/* ------------------------------------------------------------------------
 * Workers and their RX queues.
 * --------------------------------------------------------------------- */

/* Add RX queue @p queue_id of @p port_id, configuration port @p p, to @p wk. */
static void
add_rxq(struct app *a, struct dpmon_worker *wk, uint16_t port_id, uint16_t queue_id, unsigned p)
{
	wk->rxq[wk->n_rxq].port_id = port_id;
	wk->rxq[wk->n_rxq].queue_id = queue_id;
	wk->rxq[wk->n_rxq].decap = a->cfg.ports[p].decap;
	wk->rxq[wk->n_rxq].ptype = dpmon_port_ptypes(port_id);
	wk->n_rxq++;
}

/* The distributor's RX queues: every queue of every port. @return 0 or -EINVAL. */
static int
distributor_queues(struct app *a)
{
	struct dpmon_distributor *d = &a->dist;

	for (unsigned p = 0; p < a->cfg.n_ports; p++) {
		for (uint16_t q = 0; q < a->cfg.ports[p].rx_queues; q++) {
			if (d->n_rxq == DPMON_DIST_MAX_QUEUES) {
				fprintf(stderr, "dpmon: software_rss: more than %d RX queues\n",
					DPMON_DIST_MAX_QUEUES);
				return -EINVAL;
			}
			d->rxq[d->n_rxq++] = (struct dpmon_dist_rxq){.port_id = a->port_ids[p],
								     .queue_id = q,
								     .port_index = (uint16_t)p};
		}
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
	if (distributor_queues(a) != 0)
		return -EINVAL;
	if (a->cfg.n_ports > DPMON_MAX_WORKER_QUEUES) {
		fprintf(stderr, "dpmon: software_rss: more than %d ports\n",
			DPMON_MAX_WORKER_QUEUES);
		return -EINVAL;
	}
	if (dpmon_distributor_setup(d, (int)rte_socket_id(), stderr) != 0)
		return -ENOMEM;
	for (unsigned w = 0; w < a->n_workers; w++)
		for (unsigned p = 0; p < a->cfg.n_ports; p++)
			add_rxq(a, &a->workers[w], d->ring_port[w], (uint16_t)p, p);
	return 0;
}

/* Deal the ports' RX queues round-robin over the workers. @return 0 or -EINVAL. */
static int
deal_queues(struct app *a)
{
	unsigned next = 0;

	for (unsigned p = 0; p < a->cfg.n_ports; p++) {
		for (uint16_t q = 0; q < a->cfg.ports[p].rx_queues; q++) {
			struct dpmon_worker *wk = &a->workers[next++ % a->n_workers];

			if (wk->n_rxq == DPMON_MAX_WORKER_QUEUES) {
				fprintf(stderr, "dpmon: more than %d RX queues per worker lcore\n",
					DPMON_MAX_WORKER_QUEUES);
				return -EINVAL;
			}
			add_rxq(a, wk, a->port_ids[p], q, p);
		}
	}
	return 0;
}

/* The per-worker arrays and the RCU variable. @return 0 or -ENOMEM. */
static int
alloc_workers(struct app *a)
{
	a->workers = rte_zmalloc("dpmon_workers", sizeof(*a->workers) * a->n_workers,
				 RTE_CACHE_LINE_SIZE);
	a->cores = calloc(a->n_workers, sizeof(*a->cores));
	a->lcores = calloc(a->n_workers, sizeof(*a->lcores));
	a->gens = calloc(a->n_workers, sizeof(*a->gens));
	a->retired = calloc(a->n_workers, sizeof(*a->retired));
	a->qsv = rte_zmalloc("dpmon_qsv", rte_rcu_qsbr_get_memsize(a->n_workers),
			     RTE_CACHE_LINE_SIZE);
	if (a->workers == NULL || a->cores == NULL || a->lcores == NULL || a->gens == NULL ||
	    a->retired == NULL || a->qsv == NULL || rte_rcu_qsbr_init(a->qsv, a->n_workers) != 0)
		return -ENOMEM;
	return 0;
}

/* Worker @p w on @p lcore: its host table, generation 0 and its loop's
 * settings. @return 0 or -ENOMEM. */
static int
init_worker(struct app *a, unsigned w, unsigned lcore)
{
	struct dpmon_worker *wk = &a->workers[w];
	char tag[32];

	snprintf(tag, sizeof(tag), "lcore%u", lcore);
	a->cores[w] = dpmon_core_create(tag, a->cfg.host_table_capacity,
					(int)rte_lcore_to_socket_id(lcore));
	if (a->cores[w] == NULL) {
		fprintf(stderr,
			"dpmon: lcore %u: cannot allocate a host table of %u "
			"entries: %s\n",
			lcore, a->cfg.host_table_capacity, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	a->cores[w]->lcore_id = lcore;
	a->cores[w]->flow_sketches = a->cfg.flow_sketches;
	a->lcores[w] = lcore;
	/* Generation 0: made like every later one (reload.c). */
	a->gens[w] = dpmon_generation_create(a->cls, a->cfg.n_subnets,
					     (int)rte_lcore_to_socket_id(lcore));
	if (a->gens[w] == NULL ||
	    dpmon_generation_host_prefixes(a->gens[w], a->cfg.subnets, a->cfg.n_subnets,
					   (int)rte_lcore_to_socket_id(lcore)) != 0)
		return -ENOMEM;
	wk->core = a->cores[w];
	wk->gen = a->gens[w];
	wk->qsv = a->qsv;
	wk->qs_id = w;
	wk->stop = &a->stop_workers;
	wk->burst_size = (uint16_t)a->cfg.burst_size;
	wk->idle_sleep_us = a->cfg.idle_sleep_us;
	wk->lcore_id = lcore;
	return 0;
}

/* Create every worker's tables and deal the RX queues out. @return 0 or
 * a negative errno. */
static int
setup_workers(struct app *a)
{
	unsigned lcore, w = 0;

	a->srss = a->cfg.software_rss;
	a->n_workers = rte_lcore_count() - 1 - (a->srss ? 1 : 0);
	if (alloc_workers(a) != 0)
		return -ENOMEM;
	a->dist_lcore = RTE_MAX_LCORE;
	RTE_LCORE_FOREACH_WORKER (lcore) {
		if (a->srss && a->dist_lcore == RTE_MAX_LCORE) {
			a->dist_lcore = lcore; /* the first worker lcore distributes */
			continue;
		}
		if (init_worker(a, w, lcore) != 0)
			return -ENOMEM;
		w++;
	}
	if (a->srss)
		return setup_distributor(a);
	return deal_queues(a);
}

/* ------------------------------------------------------------------------
 * The modules of the main lcore and the HTTP server.
 * --------------------------------------------------------------------- */

/* Enough lcores for the workers (and the distributor)? @return 0 or EXIT_USAGE. */
static int
check_lcores(const struct app *a)
{
	if (rte_lcore_count() < 2) {
		fprintf(stderr, "dpmon: no worker lcore: give EAL at least two lcores "
				"(e.g. -l 0-1); the main lcore only merges\n");
		return EXIT_USAGE;
	}
	if (a->cfg.software_rss && rte_lcore_count() < 3) {
		fprintf(stderr,
			"dpmon: software_rss needs a distributor lcore and at least one "
			"worker lcore besides the main lcore: give EAL at least three lcores "
			"(e.g. --lcores '0@0,1@1,2@1')\n");
		return EXIT_USAGE;
	}
	return 0;
}

/* The running classifier of the configured subnets. @return 0 or EXIT_START. */
static int
build_classifier(struct app *a)
{
	int rc;

	a->cls = calloc(1, sizeof(*a->cls));
	rc = a->cls == NULL ? -ENOMEM
			    : dpmon_classifier_create_ignoring(
				      a->cls, "main", a->cfg.subnets, a->cfg.n_subnets,
				      a->cfg.detect.ignore_sources, a->cfg.detect.n_ignore_sources,
				      (int)rte_socket_id());
	if (rc != 0) {
		fprintf(stderr, "dpmon: cannot build the LPM tables: %s\n", rte_strerror(-rc));
		return EXIT_START;
	}
	return 0;
}

/* The merger and the sampler, whose rings the cores copy into. @return 0
 * or EXIT_START. */
static int
start_merge(struct app *a)
{
	a->merge = dpmon_merge_create(&a->cfg, a->cores, a->gens, a->lcores, a->n_workers,
				      rte_rdtsc(), rte_get_tsc_hz());
	if (a->merge == NULL) {
		fprintf(stderr, "dpmon: cannot allocate the merge tables\n");
		return EXIT_START;
	}
	a->sampler = dpmon_sampler_create(a->n_workers, &a->cfg.actions);
	if (a->sampler == NULL ||
	    dpmon_sampler_set_ignored(a->sampler, a->cfg.detect.ignore_sources,
				      a->cfg.detect.n_ignore_sources) != 0) {
		fprintf(stderr, "dpmon: cannot allocate the sampler's rings\n");
		return EXIT_START;
	}
	for (unsigned w = 0; w < a->n_workers; w++)
		a->cores[w]->sample = dpmon_sampler_core(a->sampler, w);
	return 0;
}

/* The snapshot store and its readers besides HTTP (telemetry), the
 * actions and detection. @return 0 or EXIT_START. */
static int
start_services(struct app *a)
{
	int rc;

	dpmon_snap_store_init(&a->store);
	rc = dpmon_telemetry_attach(&a->store);
	if (rc != 0)
		fprintf(stderr, "dpmon: telemetry commands not registered: %s\n", strerror(-rc));
	a->actions = dpmon_actions_create_cfg(&a->cfg);
	if (a->actions == NULL) {
		fprintf(stderr,
			"dpmon: cannot start the actions (notify script, ExaBGP, "
			"blackholes): %s\n",
			errno == EINVAL ? "bad state file, see above" : strerror(errno));
		return EXIT_START;
	}
	a->detect = dpmon_detect_create(&a->cfg.detect, a->sampler, a->actions);
	if (a->detect == NULL) {
		fprintf(stderr, "dpmon: cannot start detection: %s\n", strerror(errno));
		return EXIT_START;
	}
	a->exporters = dpmon_export_create(&a->cfg.export, &a->store);
	if (a->exporters == NULL) {
		fprintf(stderr, "dpmon: cannot start the exporters: %s\n", strerror(errno));
		return EXIT_START;
	}
	return 0;
}

/* The health board of the polling lcores (workers, then the distributor)
 * that the HTTP server judges, and the test hooks. @return 0 or EXIT_START. */
static int
start_health(struct app *a)
{
	if (dpmon_health_init(&a->health, a->n_workers + (a->srss ? 1 : 0),
			      a->cfg.merge_interval_ms) != 0) {
		fprintf(stderr, "dpmon: cannot start the health check: %s\n", strerror(ENOMEM));
		return EXIT_START;
	}
	for (unsigned w = 0; w < a->n_workers; w++)
		dpmon_health_name(&a->health, w, "worker lcore %u", a->lcores[w]);
	if (a->srss)
		dpmon_health_name(&a->health, a->n_workers, "distributor lcore %u", a->dist_lcore);
	app_hooks_init(a);
	return 0;
}

/* The HTTP server on the configured address, --http-port overriding the
 * port. @return 0 or EXIT_START. */
static int
start_http(struct app *a, const struct app_opts *o)
{
	struct dpmon_http_opts ho = {
		.listen_addr = a->cfg.http_listen,
		.port = o->http_port >= 0 ? (uint16_t)o->http_port : a->cfg.http_port,
		.metrics_top_hosts = a->cfg.metrics_top_hosts,
		.metrics_top_subnets = a->cfg.metrics_top_subnets,
		.n_cors_origins = a->cfg.n_cors_origins,
		.cors_origins = a->cfg.http_cors_origins,
		.n_allowed_hosts = a->cfg.n_allowed_hosts,
		.allowed_hosts = a->cfg.http_allowed_hosts,
		.write_token_file = a->cfg.http_write_token_file,
		.read_token_file = a->cfg.http_read_token_file,
		.tls_cert_file = a->cfg.http_tls_cert_file,
		.tls_key_file = a->cfg.http_tls_key_file,
		.actions = a->actions,
		.health = &a->health,
	};

	a->http = dpmon_http_start_opts(&ho, &a->store);
	if (a->http == NULL) {
		fprintf(stderr, "dpmon: HTTP server on %s port %ld: %s\n", a->cfg.http_listen,
			o->http_port >= 0 ? o->http_port : (long)a->cfg.http_port, strerror(errno));
		return EXIT_START;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Launch and announce.
 * --------------------------------------------------------------------- */

static void
print_assignment(const struct app *a)
{
	if (a->srss)
		printf("dpmon: distributor lcore %u polls %u RX queue(s) and feeds %u worker "
		       "lcore(s) through rings (software RSS)\n",
		       a->dist_lcore, a->dist.n_rxq, a->n_workers);
	for (unsigned w = 0; w < a->n_workers; w++) {
		const struct dpmon_worker *wk = &a->workers[w];

		printf("dpmon: worker lcore %u polls", wk->lcore_id);
		for (uint16_t q = 0; q < wk->n_rxq; q++)
			printf(" port %u queue %u%s", wk->rxq[q].port_id, wk->rxq[q].queue_id,
			       q + 1 < wk->n_rxq ? "," : "");
		printf("%s\n", wk->n_rxq == 0 ? " nothing (more workers than RX queues)" : "");
	}
}

/* Launch every worker lcore, then the distributor. */
static void
launch(struct app *a)
{
	for (unsigned w = 0; w < a->n_workers; w++) {
		/* Online before the launch: a reload's grace period waits for it. */
		rte_rcu_qsbr_thread_register(a->qsv, w);
		rte_rcu_qsbr_thread_online(a->qsv, w);
		rte_eal_remote_launch(dpmon_worker_loop, &a->workers[w], a->lcores[w]);
	}
	if (a->srss)
		rte_eal_remote_launch(dpmon_distributor_loop, &a->dist, a->dist_lcore);
	a->launched = true;
}

/* The line that says dpmon runs and where its API is; the port file. */
static void
announce(const struct app *a, const struct app_opts *o, uint16_t port)
{
	char url_host[DPMON_ADDR_STRLEN + 2], line[8];
	int rc, n;

	snprintf(url_host, sizeof(url_host), strchr(a->cfg.http_listen, ':') ? "[%s]" : "%s",
		 a->cfg.http_listen);
	printf("dpmon: %u worker lcore(s), %u port(s), %u subnet(s); API at "
	       "%s://%s:%u/api/v1/summary\n",
	       a->n_workers, a->n_ports_started, a->cfg.n_subnets,
	       a->cfg.http_tls_cert_file[0] != '\0' ? "https" : "http", url_host, port);
	fflush(stdout);
	if (o->port_file == NULL)
		return;
	n = snprintf(line, sizeof(line), "%u\n", port);
	rc = dpmon_file_write_new(o->port_file, DPMON_FILE_MODE_PRIVATE, line, (size_t)n, false);
	if (rc != 0)
		fprintf(stderr, "dpmon: cannot write %s: %s\n", o->port_file, strerror(-rc));
}

int
app_setup(struct app *a, const struct app_opts *o)
{
	uint16_t port;
	int rc;

	if ((rc = check_lcores(a)) != 0 || (rc = build_classifier(a)) != 0)
		return rc;
	if (start_ports(a) != 0 || setup_workers(a) != 0)
		return EXIT_START;
	if ((rc = start_merge(a)) != 0 || (rc = start_services(a)) != 0 ||
	    (rc = start_health(a)) != 0 || (rc = start_http(a, o)) != 0)
		return rc;
	port = dpmon_http_port(a->http);
	print_assignment(a);
	launch(a);
	announce(a, o, port);
	return 0;
}
