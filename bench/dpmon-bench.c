/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpmon-bench.c — the C half of the benchmark (bench/run drives it).
 *
 * Design: one executable, three modes, each printing one JSON object on
 * stdout so bench/bench.py can tabulate without parsing prose.
 *
 *   gen MIX DIR      write DIR/MIX.pcap (dpmon-gen, seed 1) and
 *                    DIR/MIX.subnets.json (the "subnets" array for dpmon's
 *                    configuration); prints the capture's summary figures.
 *   hotpath MIX      the worker's counting function alone: the capture is
 *                    loaded into mbufs in memory (no PMD, no rx, no free)
 *                    and dpmon_worker_count runs over it in bursts, pass
 *                    after pass; prints ns/packet and Mpps of the steady
 *                    state (hosts already inserted by a warm-up pass).
 *                    --passes N gives a fixed amount of work (callgrind).
 *                    --ptype stamps each mbuf's packet_type before the
 *                    timed passes, as a NIC that reports packet types
 *                    would, and counts as for such a queue.
 *   merge            dpmon_merge_run on worker tables filled by the real
 *                    hot path: --hosts N spread over --tables T (each host
 *                    lives in one table, as with a per-host RSS), a share
 *                    --touched P of them receiving traffic between two
 *                    merges; prints the merge time (fold and snapshot
 *                    separately) and the memory per host entry.
 *                    --warmup W untimed rounds first: a merge visits the
 *                    entries stamped since the previous merge's epoch
 *                    (counters.h), so the first rounds after the filling
 *                    one still see most hosts touched (W = 6 is past
 *                    that with 16 tables), and the merger's recycled
 *                    slabs (snapshot.c) need some 30 rounds to settle
 *                    when a share of the hosts is touched. Detection
 *                    (pps and udp_pps limits no host reaches) runs on
 *                    each timed snapshot, as after a merge in dpmon, and
 *                    is timed apart (detect_ms_best). Under callgrind
 *                    with --collect-atstart=no only the timed merges are
 *                    counted (CALLGRIND_TOGGLE_COLLECT around each one):
 *                    their instructions, exact where the times are noisy.
 *
 * Times come from the TSC (rte_rdtsc, rte_get_tsc_hz). Every mode runs
 * EAL without hugepages on one lcore; nothing here needs a NIC.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_net.h>

#include "classify.h"
#include "config.h"
#include "counters.h"
#include "detect.h"
#include "merge.h"
#include "mixes.h"
#include "worker.h"

#define DEFAULT_BURST 32

static int
usage(void)
{
	fprintf(stderr,
		"usage: dpmon-bench [EAL options] -- gen MIX DIR\n"
		"       dpmon-bench [EAL options] -- hotpath MIX [--dir DIR] [--burst N]\n"
		"                          [--seconds S | --passes N] [--no-flow-sketches]\n"
		"                          [--ignore-sources N] [--ignore-peer-pool] [--ptype]\n"
		"       dpmon-bench [EAL options] -- merge --hosts N --tables T [--touched PCT]\n"
		"                          [--repeat N] [--warmup W]\n"
		"       dpmon-bench --list\n");
	return 2;
}

/* ------------------------------------------------------------------------
 * Gen ---.
 * --------------------------------------------------------------------- */

static int
capture_path(char *buf, size_t len, const char *dir, const char *mix, const char *ext)
{
	int n = snprintf(buf, len, "%s/%s.%s", dir, mix, ext);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Write the capture and the subnets file of @p mx into @p dir. */
static int
gen_mix(const struct bench_mix *mx, const char *dir, struct dpmon_gen_summary *s)
{
	char pcap[4096], subnets[4096];
	struct dpmon_gen_opts o;
	FILE *f;
	int rc;

	if (capture_path(pcap, sizeof(pcap), dir, mx->name, "pcap") != 0 ||
	    capture_path(subnets, sizeof(subnets), dir, mx->name, "subnets.json") != 0)
		return -ENAMETOOLONG;
	rc = bench_mix_opts(mx, pcap, &o);
	if (rc == 0)
		rc = dpmon_gen_write(&o, s, stderr);
	dpmon_gen_opts_free(&o);
	if (rc != 0)
		return rc;
	f = fopen(subnets, "w");
	if (f == NULL)
		return -errno;
	bench_mix_print_subnets(mx, f);
	fputc('\n', f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static int
mode_gen(int argc, char **argv)
{
	const struct bench_mix *mx;
	struct dpmon_gen_summary s;
	int rc;

	if (argc != 3 || (mx = bench_mix_find(argv[1])) == NULL)
		return usage();
	mkdir(argv[2], 0755);
	rc = gen_mix(mx, argv[2], &s);
	if (rc != 0) {
		fprintf(stderr, "dpmon-bench: gen %s: %s\n", mx->name, strerror(-rc));
		return 1;
	}
	printf("{\"mix\": \"%s\", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64
	       ", \"hosts_configured\": %" PRIu64 ", \"hosts_used\": %" PRIu64
	       ", \"subnets\": %u}\n",
	       mx->name, s.total.packets, s.total.bytes, s.hosts_configured, s.hosts_used,
	       s.n_subnets);
	dpmon_gen_summary_free(&s);
	return 0;
}

/* ------------------------------------------------------------------------
 * Hotpath ---.
 * --------------------------------------------------------------------- */

struct capture {
	struct rte_mempool *pool;
	struct rte_mbuf **m;
	uint32_t n;
	uint64_t bytes;
};

/* Load every record of @p path into its own mbuf. */
static int
capture_load(const char *path, uint64_t expect, struct capture *c)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const u_char *data;
	pcap_t *p = pcap_open_offline(path, errbuf);

	memset(c, 0, sizeof(*c));
	if (p == NULL) {
		fprintf(stderr, "dpmon-bench: %s: %s\n", path, errbuf);
		return -ENOENT;
	}
	c->pool = rte_pktmbuf_pool_create("bench_cap", (unsigned)expect + 1024, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	c->m = calloc(expect, sizeof(*c->m));
	if (c->pool == NULL || c->m == NULL) {
		pcap_close(p);
		return -ENOMEM;
	}
	while (c->n < expect && pcap_next_ex(p, &hdr, &data) == 1) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(c->pool);
		uint16_t len = hdr->caplen > RTE_MBUF_DEFAULT_DATAROOM ? RTE_MBUF_DEFAULT_DATAROOM
								       : (uint16_t)hdr->caplen;

		if (m == NULL)
			break;
		memcpy(rte_pktmbuf_append(m, len), data, len);
		c->m[c->n++] = m;
		c->bytes += len;
	}
	pcap_close(p);
	return c->n > 0 ? 0 : -EINVAL;
}

/* Monitored subnets of @p mx as a configuration (for the classifier). */
static int
mix_config(const struct bench_mix *mx, struct dpmon_config *cfg)
{
	struct dpmon_gen_opts o;
	int rc = bench_mix_opts(mx, "/dev/null", &o);

	dpmon_config_defaults(cfg);
	if (rc != 0)
		return rc;
	cfg->subnets = calloc(o.n_subnets, sizeof(*cfg->subnets));
	if (cfg->subnets == NULL) {
		dpmon_gen_opts_free(&o);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < o.n_subnets; i++)
		cfg->subnets[i].prefix = o.subnets[i].prefix;
	cfg->n_subnets = o.n_subnets;
	dpmon_gen_opts_free(&o);
	return 0;
}

static uint32_t
pow2_at_least(uint64_t n)
{
	uint32_t p = 1024;

	while (p < n && p < (1u << 24))
		p <<= 1;
	return p;
}

/* One pass over the capture in bursts of @p burst; @p flags: 0 or
 * DPMON_WORKER_PTYPE (the mbufs carry packet types, capture_ptypes). */
static void
hot_pass(struct dpmon_core *core, const struct dpmon_generation *g, const struct capture *c,
	 uint16_t burst, uint32_t flags)
{
	for (uint32_t i = 0; i < c->n; i += burst) {
		uint16_t n = c->n - i < burst ? (uint16_t)(c->n - i) : burst;
		dpmon_worker_count_generation(core, g, c->m + i, n, flags);
	}
}

/* Stamp every mbuf's packet_type as a NIC that reports the L2, L3 and L4
 * types would (DPDK's software classifier, rte_net_get_ptype), before the
 * timed passes. */
static void
capture_ptypes(const struct capture *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		c->m[i]->packet_type = rte_net_get_ptype(
			c->m[i], NULL, RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK | RTE_PTYPE_L4_MASK);
}

static int
mode_hotpath(int argc, char **argv)
{
	static const struct option lo[] = {
		{"dir", required_argument, NULL, 'd'},
		{"burst", required_argument, NULL, 'b'},
		{"seconds", required_argument, NULL, 's'},
		{"passes", required_argument, NULL, 'p'},
		{"no-flow-sketches", no_argument, NULL, 'f'},
		{"ignore-sources", required_argument, NULL, 'i'},
		{"ignore-peer-pool", no_argument, NULL, 'P'},
		{"ptype", no_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	/* Ignored source prefixes: N of 198.18.0.0/15 (no packet of a mix comes
	 * from there: the lookup's cost alone), and with --ignore-peer-pool
	 * 203.0.113.0/24, half of dpmon-gen's IPv4 peers (the rare path too). */
	struct dpmon_prefix ignored[257];
	long n_ignored = 0;
	bool peer_pool = false;
	const char *dir = "bench-out";
	bool flow_sketches = true, ptype = false;
	double seconds = 2.0;
	long passes = 0, burst = DEFAULT_BURST;
	const struct bench_mix *mx;
	struct dpmon_classifier cls;
	struct dpmon_config cfg;
	struct dpmon_core *core;
	struct dpmon_generation *g;
	struct capture cap;
	char path[4096];
	uint64_t t0, t1, hz = rte_get_tsc_hz(), done = 0, npass = 0;
	int opt;

	if (argc < 2 || (mx = bench_mix_find(argv[1])) == NULL)
		return usage();
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 'b':
			burst = strtol(optarg, NULL, 10);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'p':
			passes = strtol(optarg, NULL, 10);
			break;
		case 'f':
			flow_sketches = false;
			break;
		case 'i':
			n_ignored = strtol(optarg, NULL, 10);
			break;
		case 'P':
			peer_pool = true;
			break;
		case 't':
			ptype = true;
			break;
		default:
			return usage();
		}
	}
	if (burst < 1 || burst > DPMON_MAX_BURST || n_ignored < 0 || n_ignored > 256)
		return usage();
	for (long k = 0; k < n_ignored; k++)
		ignored[k] = (struct dpmon_prefix){.family = 4, .depth = 24};
	for (long k = 0; k < n_ignored; k++)
		dpmon_addr_from_v4(&ignored[k].addr, 0xc6120000u + ((uint32_t)k << 8));
	if (peer_pool)
		dpmon_prefix_parse("203.0.113.0/24", &ignored[n_ignored++], NULL);
	if (capture_path(path, sizeof(path), dir, mx->name, "pcap") != 0 ||
	    capture_load(path, mx->packets, &cap) != 0 || mix_config(mx, &cfg) != 0)
		return 1;
	if (dpmon_classifier_create_ignoring(&cls, "bench", cfg.subnets, cfg.n_subnets, ignored,
					     (uint32_t)n_ignored, (int)rte_socket_id()) != 0) {
		fprintf(stderr, "dpmon-bench: classifier: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	core = dpmon_core_create("bench", pow2_at_least(bench_mix_hosts(mx)), (int)rte_socket_id());
	g = dpmon_generation_create(&cls, cfg.n_subnets, (int)rte_socket_id());
	if (core == NULL || g == NULL) {
		fprintf(stderr, "dpmon-bench: tables: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	core->flow_sketches = flow_sketches;
	if (ptype)
		capture_ptypes(&cap);
	hot_pass(core, g, &cap, (uint16_t)burst,
		 ptype ? DPMON_WORKER_PTYPE : 0); /* warm-up: inserts every host */
	t0 = rte_rdtsc();
	do {
		hot_pass(core, g, &cap, (uint16_t)burst, ptype ? DPMON_WORKER_PTYPE : 0);
		done += cap.n;
		npass++;
		t1 = rte_rdtsc();
	} while (passes > 0 ? (long)npass < passes : (double)(t1 - t0) < seconds * (double)hz);
	{
		double s = (double)(t1 - t0) / (double)hz;
		double ns = s * 1e9 / (double)done;

		printf("{\"mix\": \"%s\", \"burst\": %ld, \"packets\": %" PRIu64
		       ", \"passes\": %" PRIu64 ", \"seconds\": %.6f, \"ns_per_packet\": %.3f"
		       ", \"cycles_per_packet\": %.2f, \"mpps\": %.4f, \"hosts\": %u"
		       ", \"host_table_full\": %" PRIu64
		       ", \"flow_sketches\": %s, \"ptype\": %s}\n",
		       mx->name, burst, done, npass, s, ns, ns * (double)hz / 1e9, 1e3 / ns,
		       core->n_hosts, core->stats.host_table_full, flow_sketches ? "true" : "false",
		       ptype ? "true" : "false");
	}
	dpmon_generation_free(g);
	dpmon_core_free(core);
	dpmon_classifier_free(&cls);
	dpmon_config_free(&cfg);
	return 0;
}

/* ------------------------------------------------------------------------
 * Merge ---.
 * --------------------------------------------------------------------- */

/* A 64-byte UDP frame from 198.51.100.1 to @p dst (host byte order). */
static struct rte_mbuf *
udp_to(struct rte_mempool *mp, uint32_t dst)
{
	static const uint8_t tmpl[60] = {
		0,    1, 2, 3,  4, 5,  0, 1, 2,  3,  4, 6, 0x08, 0x00,         /* Ethernet */
		0x45, 0, 0, 46, 0, 0,  0, 0, 64, 17, 0, 0, 198,  51,   100, 1, /* IPv4 */
		0,    0, 0, 0,                                                 /* dst */
		0,    1, 0, 2,  0, 26, 0, 0,                                   /* UDP */
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *b;

	if (m == NULL)
		return NULL;
	b = (uint8_t *)rte_pktmbuf_append(m, sizeof(tmpl));
	memcpy(b, tmpl, sizeof(tmpl));
	b[30] = (uint8_t)(dst >> 24);
	b[31] = (uint8_t)(dst >> 16);
	b[32] = (uint8_t)(dst >> 8);
	b[33] = (uint8_t)dst;
	return m;
}

/* Host h of the merge simulation: 10.0.0.0/8, dense. */
static uint32_t
sim_host(uint32_t h)
{
	return (10u << 24) + h + 1;
}

/* Send one packet to every host h of table t with (h * 2654435761) % 100 < pct. */
static int
feed_tables(struct dpmon_core **cores, struct dpmon_generation **gens, struct rte_mempool *mp,
	    uint32_t hosts, uint32_t tables, uint32_t pct, uint32_t round)
{
	struct rte_mbuf *b[DEFAULT_BURST];

	for (uint32_t t = 0; t < tables; t++) {
		uint16_t n = 0;

		for (uint32_t h = t; h < hosts; h += tables) {
			if (pct < 100 && (uint32_t)((h + round * 7919u) * 2654435761u) % 100 >= pct)
				continue;
			b[n] = udp_to(mp, sim_host(h));
			if (b[n] == NULL)
				return -ENOMEM;
			if (++n == DEFAULT_BURST) {
				dpmon_worker_burst(cores[t], gens[t], b, n);
				n = 0;
			}
		}
		dpmon_worker_burst(cores[t], gens[t], b, n);
	}
	return 0;
}

static size_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats((int)rte_socket_id(), &st) != 0)
		return 0;
	return st.heap_allocsz_bytes;
}

static int
mode_merge(int argc, char **argv)
{
	static const struct option lo[] = {
		{"hosts", required_argument, NULL, 'h'},   {"tables", required_argument, NULL, 't'},
		{"touched", required_argument, NULL, 'p'}, {"repeat", required_argument, NULL, 'r'},
		{"warmup", required_argument, NULL, 'w'},  {NULL, 0, NULL, 0},
	};
	uint32_t hosts = 1000, tables = 1, pct = 100, repeat = 5, warmup = 0, cap;
	struct dpmon_core *cores[64];
	struct dpmon_generation *gens[64];
	unsigned lcores[64];
	struct dpmon_subnet_conf sub;
	struct dpmon_classifier cls;
	struct dpmon_config cfg;
	struct dpmon_merge *m;
	struct rte_mempool *mp;
	uint64_t hz = rte_get_tsc_hz(), now;
	double best = 1e9, sum = 0, best_fold = 1e9, best_snap = 1e9;
	uint64_t touched = 0, written = 0, moved = 0;
	double best_detect = 1e9;
	struct dpmon_detect *det;
	size_t before, after;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'h':
			hosts = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 't':
			tables = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			pct = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			repeat = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			warmup = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		default:
			return usage();
		}
	}
	if (hosts < 1 || hosts > (1u << 24) || tables < 1 || tables > 64 || pct > 100 || repeat < 1)
		return usage();
	dpmon_config_defaults(&cfg);
	dpmon_prefix_parse("10.0.0.0/8", &sub.prefix, NULL);
	sub.name[0] = '\0';
	cfg.subnets = &sub;
	cfg.n_subnets = 1;
	if (dpmon_classifier_create(&cls, "merge", &sub, 1, (int)rte_socket_id()) != 0)
		return 1;
	mp = rte_pktmbuf_pool_create("bench_merge", 4096, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     (int)rte_socket_id());
	if (mp == NULL)
		return 1;
	cap = pow2_at_least((hosts + tables - 1) / tables);
	before = heap_used();
	for (uint32_t t = 0; t < tables; t++) {
		char tag[32];

		snprintf(tag, sizeof(tag), "m%u", t);
		cores[t] = dpmon_core_create(tag, cap, (int)rte_socket_id());
		gens[t] = dpmon_generation_create(&cls, 1, (int)rte_socket_id());
		if (cores[t] == NULL || gens[t] == NULL) {
			fprintf(stderr, "dpmon-bench: tables: %s\n", rte_strerror(rte_errno));
			return 1;
		}
		lcores[t] = t + 1;
	}
	after = heap_used();
	cfg.detect.enabled = true;
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		cfg.detect.thresholds.limit[d][DPMON_METRIC_PPS] = 1e6;
		cfg.detect.thresholds.limit[d][DPMON_METRIC_UDP_PPS] = 5e5;
	}
	det = dpmon_detect_create(&cfg.detect, NULL, NULL);
	if (det == NULL)
		return 1;
	m = dpmon_merge_create(&cfg, cores, gens, lcores, tables, rte_rdtsc(), hz);
	if (m == NULL || feed_tables(cores, gens, mp, hosts, tables, 100, 0) != 0)
		return 1;
	dpmon_snapshot_free(dpmon_merge_run(m, rte_rdtsc(), NULL, 0)); /* maps every host */
	for (uint32_t r = 0; r < warmup; r++) {
		if (feed_tables(cores, gens, mp, hosts, tables, pct, repeat + 1 + r) != 0)
			return 1;
		dpmon_snapshot_free(dpmon_merge_run(m, rte_rdtsc(), NULL, 0));
	}
	for (uint32_t r = 0; r < repeat; r++) {
		struct dpmon_snapshot *s;
		struct dpmon_merge_timing tm;
		double dt;

		if (feed_tables(cores, gens, mp, hosts, tables, pct, r + 1) != 0)
			return 1;
		now = rte_rdtsc();
		CALLGRIND_TOGGLE_COLLECT;
		s = dpmon_merge_run(m, now, NULL, 0);
		CALLGRIND_TOGGLE_COLLECT;
		dt = (double)(rte_rdtsc() - now) / (double)hz;
		if (s == NULL)
			return 1;
		dpmon_merge_last_timing(m, &tm);
		now = rte_rdtsc();
		if (dpmon_detect_run(det, s, 0) != 0)
			return 1;
		best_detect = fmin(best_detect, (double)(rte_rdtsc() - now) / (double)hz);
		dpmon_snapshot_free(s);
		touched += tm.touched;
		written += tm.written;
		moved += tm.moved;
		sum += dt;
		if (dt < best)
			best = dt;
		if (tm.fold_s < best_fold)
			best_fold = tm.fold_s;
		if (tm.snapshot_s < best_snap)
			best_snap = tm.snapshot_s;
	}
	printf("{\"hosts\": %u, \"tables\": %u, \"touched_percent\": %u, \"repeat\": %u"
	       ", \"merge_ms_best\": %.3f, \"merge_ms_mean\": %.3f, \"fold_ms_best\": %.3f"
	       ", \"snapshot_ms_best\": %.3f, \"merged_hosts\": %u, \"table_capacity\": %u"
	       ", \"table_bytes\": %zu, \"bytes_per_entry\": %.1f, \"touched_hosts_mean\": %.0f"
	       ", \"records_written_mean\": %.0f, \"records_moved_mean\": %.0f"
	       ", \"detect_ms_best\": %.3f}\n",
	       hosts, tables, pct, repeat, best * 1e3, sum * 1e3 / repeat, best_fold * 1e3,
	       best_snap * 1e3, dpmon_merge_hosts(m), cap, (after - before) / tables,
	       (double)(after - before) / ((double)cap * tables), (double)touched / repeat,
	       (double)written / repeat, (double)moved / repeat, best_detect * 1e3);
	dpmon_merge_free(m);
	dpmon_detect_free(det);
	for (uint32_t t = 0; t < tables; t++) {
		dpmon_generation_free(gens[t]);
		dpmon_core_free(cores[t]);
	}
	dpmon_classifier_free(&cls);
	return 0;
}

/* argv[0] for the modes (getopt takes writable strings). */
static char bench_name[] = "dpmon-bench";

int
main(int argc, char **argv)
{
	int n;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (unsigned i = 0; i < bench_n_mixes; i++)
			printf("%s\t%" PRIu64 "\t%" PRIu64 "\t%s\n", bench_mixes[i].name,
			       bench_mixes[i].packets, bench_mix_hosts(&bench_mixes[i]),
			       bench_mixes[i].title);
		return 0;
	}
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "dpmon-bench: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	if (argc < 2)
		return usage();
	argv[0] = bench_name;
	if (strcmp(argv[1], "gen") == 0)
		n = mode_gen(argc - 1, argv + 1);
	else if (strcmp(argv[1], "hotpath") == 0)
		n = mode_hotpath(argc - 1, argv + 1);
	else if (strcmp(argv[1], "merge") == 0)
		n = mode_merge(argc - 1, argv + 1);
	else
		n = usage();
	rte_eal_cleanup();
	return n;
}
