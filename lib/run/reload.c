/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reload.c — the configuration reload on SIGHUP (run_private.h,
 * docs/operations.md, docs/architecture.md).
 *
 * The signal handler only sets a flag; the merge loop, between two
 * merges, calls app_reload, which re-reads the configuration file and, if
 * it is valid, apply_reload builds the new classifier and one new
 * generation of subnet counters per worker aside (worker.h), publishes
 * them, waits for an RCU grace period (rte_rcu_qsbr: every worker has
 * reported a quiescent state since), then tells the merger, which folds
 * the old generation's final counts into the subnets that remain
 * (merge.h), and makes the new configuration the running one. Keys that
 * need a restart keep their running value, with one warning each. An
 * invalid file changes nothing; its errors are logged (log.h), counted
 * and kept for the summary (the last refusal: time, file, first error).
 * Either way the memory the parse took goes back to the system
 * (malloc_trim).
 *
 * The old generations are retired, not freed: the next merge still reads
 * them (their flow sketches) and frees them (loop.c).
 */
#include "run_private.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "log.h"

/* ------------------------------------------------------------------------
 * Generations.
 * --------------------------------------------------------------------- */

void
app_free_gens(struct dpmon_generation **g, unsigned n)
{
	for (unsigned w = 0; g != NULL && w < n; w++) {
		dpmon_generation_free(g[w]);
		g[w] = NULL;
	}
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

/* ------------------------------------------------------------------------
 * Which subnets stay, which keys change.
 * --------------------------------------------------------------------- */

/* The subnets cmp_subnet_index sorts indices of (qsort_r takes a void *). */
struct subnet_sort {
	const struct dpmon_subnet_conf *sub;
};

static int
cmp_subnet_index(const void *x, const void *y, void *arg)
{
	const struct subnet_sort *s = arg;
	const struct dpmon_subnet_conf *sub = s->sub;

	return dpmon_prefix_cmp(&sub[*(const uint32_t *)x].prefix,
				&sub[*(const uint32_t *)y].prefix);
}

/* The index in @p by_prefix (@p n_old indices of @p old, sorted by prefix)
 * of the subnet with prefix @p p, as an index of @p old; or UINT32_MAX. */
static uint32_t
find_prefix(const struct dpmon_subnet_conf *old, const uint32_t *by_prefix, uint32_t n_old,
	    const struct dpmon_prefix *p)
{
	uint32_t lo = 0, hi = n_old;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = dpmon_prefix_cmp(&old[by_prefix[mid]].prefix, p);

		if (c == 0)
			return by_prefix[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
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
	struct subnet_sort sort = {.sub = old};

	if (by_prefix == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n_old; i++)
		by_prefix[i] = i;
	qsort_r(by_prefix, n_old, sizeof(*by_prefix), cmp_subnet_index, &sort);
	for (uint32_t i = 0; i < n_new; i++)
		old_of_new[i] = find_prefix(old, by_prefix, n_old, &new[i].prefix);
	free(by_prefix);
	return 0;
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

/* Log, once per key, each restart-only key the file changed (the running value stays). */
static void
warn_restart_only(const struct app *a, const struct dpmon_config *next)
{
	const struct dpmon_config *b = &a->boot;
	const char *changed[24];
	unsigned n = 0;

	if (b->n_ports != next->n_ports ||
	    memcmp(b->ports, next->ports, sizeof(b->ports[0]) * b->n_ports) != 0)
		changed[n++] = "ports";
	if (strcmp(b->http_listen, next->http_listen) != 0)
		changed[n++] = "http.listen";
	if (b->http_port != next->http_port)
		changed[n++] = "http.port";
	if (strcmp(b->http_tls_cert_file, next->http_tls_cert_file) != 0)
		changed[n++] = "http.tls_cert_file";
	if (strcmp(b->http_tls_key_file, next->http_tls_key_file) != 0)
		changed[n++] = "http.tls_key_file";
	if (b->n_cors_origins != next->n_cors_origins ||
	    memcmp(b->http_cors_origins, next->http_cors_origins,
		   sizeof(b->http_cors_origins[0]) * b->n_cors_origins) != 0)
		changed[n++] = "http.cors_origins";
	if (b->n_allowed_hosts != next->n_allowed_hosts ||
	    memcmp(b->http_allowed_hosts, next->http_allowed_hosts,
		   sizeof(b->http_allowed_hosts[0]) * b->n_allowed_hosts) != 0)
		changed[n++] = "http.allowed_hosts";
	if (b->metrics_top_hosts != next->metrics_top_hosts)
		changed[n++] = "metrics.top_hosts";
	if (b->metrics_top_subnets != next->metrics_top_subnets)
		changed[n++] = "metrics.top_subnets";
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
	if (b->flow_sketches != next->flow_sketches)
		changed[n++] = "flow_sketches";
	for (unsigned i = 0; i < n; i++)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING,
			  "reload of %s: %s changed but takes effect only at restart; "
			  "keeping the running value",
			  a->config_path, changed[i]);
}

/* Exchange two paths of the configuration. */
static void
swap_path(char a[DPMON_PATH_LEN], char b[DPMON_PATH_LEN])
{
	char t[DPMON_PATH_LEN];

	memcpy(t, a, DPMON_PATH_LEN);
	memcpy(a, b, DPMON_PATH_LEN);
	memcpy(b, t, DPMON_PATH_LEN);
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
	RTE_SWAP(run->host_idle_timeout_s, next->host_idle_timeout_s);
	RTE_SWAP(run->detect, next->detect);
	RTE_SWAP(run->actions, next->actions);
	RTE_SWAP(run->export, next->export);
	swap_path(run->http_write_token_file, next->http_write_token_file);
	swap_path(run->http_read_token_file, next->http_read_token_file);
}

/* ------------------------------------------------------------------------
 * Applying a valid file.
 * --------------------------------------------------------------------- */

/* What a reload builds aside before it swaps anything. */
struct next_gen {
	struct dpmon_classifier *cls;
	struct dpmon_generation **gens; /* n_workers */
	uint32_t *old_of_new;           /* the new subnets' old indices */
};

/* Free what next_build made (a reload that failed). */
static void
next_free(struct app *a, struct next_gen *x)
{
	app_free_gens(x->gens, x->gens ? a->n_workers : 0);
	free(x->gens);
	if (x->cls != NULL) {
		dpmon_classifier_free(x->cls);
		free(x->cls);
	}
	free(x->old_of_new);
}

/*
 * Build @p x for @p next: its classifier, one zeroed generation per
 * worker on the worker's NUMA node, and the map of its subnets to the
 * running ones. Nothing is published. @return 0, or -ENOMEM / a DPDK
 * error; what was built stays in @p x for next_free.
 */
static int
next_build(struct app *a, const struct dpmon_config *next, struct next_gen *x)
{
	char tag[32];
	int rc;

	x->cls = calloc(1, sizeof(*x->cls));
	x->gens = calloc(a->n_workers, sizeof(*x->gens));
	x->old_of_new = malloc(sizeof(*x->old_of_new) * next->n_subnets);
	if (x->cls == NULL || x->gens == NULL || x->old_of_new == NULL)
		return -ENOMEM;
	snprintf(tag, sizeof(tag), "r%u", ++a->n_reloads);
	rc = dpmon_classifier_create_ignoring(x->cls, tag, next->subnets, next->n_subnets,
					      next->detect.ignore_sources,
					      next->detect.n_ignore_sources, (int)rte_socket_id());
	if (rc != 0) {
		free(x->cls);
		x->cls = NULL;
		return rc;
	}
	for (unsigned w = 0; w < a->n_workers; w++) {
		x->gens[w] = dpmon_generation_create(x->cls, next->n_subnets,
						     (int)rte_lcore_to_socket_id(a->lcores[w]));
		if (x->gens[w] == NULL)
			return -ENOMEM;
	}
	return match_subnets(a->cfg.subnets, a->cfg.n_subnets, next->subnets, next->n_subnets,
			     x->old_of_new);
}

/* Detection, actions and the sampler take the new sections (a->cfg.detect,
 * a->cfg.actions), the HTTP server the bearer tokens; the old ones stay in the caller's configuration until
 * it frees it. Out of memory, each keeps its old settings. */
static void
reconfigure_modules(struct app *a)
{
	char e[DPMON_PATH_LEN + 160];

	/* The files were checked by the load; one changed since keeps the
	 * old tokens. */
	if (a->http != NULL &&
	    dpmon_http_reload_tokens(a->http, a->cfg.http_write_token_file,
				     a->cfg.http_read_token_file, e, sizeof(e)) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: token file %s; the API keeps its old tokens", e);
	if (a->actions != NULL && dpmon_actions_reconfigure(a->actions, &a->cfg) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: out of memory for the actions' new settings; they keep the old "
			  "ones");
	if (a->sampler != NULL)
		dpmon_sampler_reconfigure(a->sampler, &a->cfg.actions); /* pcap_dir, pcap_packets */
	if (a->sampler != NULL &&
	    dpmon_sampler_set_ignored(a->sampler, a->cfg.detect.ignore_sources,
				      a->cfg.detect.n_ignore_sources) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: out of memory for detection.ignore_sources; the fingerprints "
			  "keep the old list");
	if (dpmon_export_reconfigure(a->exporters, &a->cfg.export) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: an exporter of the new \"export\" section could not start (see "
			  "above)");
	if (a->detect != NULL && dpmon_detect_reconfigure(a->detect, &a->cfg.detect) != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload: out of memory for the detection's new settings; it keeps the "
			  "old ones");
}

/* @p x becomes the running classifier and generations; the old generations
 * are retired until the next merge, the old classifier freed. */
static void
adopt(struct app *a, struct next_gen *x)
{
	app_free_gens(a->retired, a->n_workers); /* older ones the merger no longer reads */
	for (unsigned w = 0; w < a->n_workers; w++) {
		a->retired[w] = a->gens[w];
		a->gens[w] = x->gens[w];
	}
	/* No worker uses the old classifier any more (grace period). */
	dpmon_classifier_free(a->cls);
	free(a->cls);
	a->cls = x->cls;
	free(x->gens);
	free(x->old_of_new);
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
	struct next_gen x = {0};
	int rc = next_build(a, next, &x);

	if (rc != 0)
		goto fail;
	*kept = count_kept(x.old_of_new, next->n_subnets);
	for (unsigned w = 0; w < a->n_workers; w++) {
		rc = dpmon_generation_host_prefixes(x.gens[w], next->subnets, next->n_subnets,
						    (int)rte_lcore_to_socket_id(a->lcores[w]));
		if (rc != 0)
			goto fail;
	}
	/* The hosts so far were keyed with the running host_prefix_len. */
	(void)dpmon_merge_map_hosts(a->merge);
	/* Swap: from here on the workers count into the new generations. */
	publish_gens(a, x.gens);
	wait_grace_period(a);
	/* The running configuration takes the reloadable keys (the merger
	 * reads its subnets' prefixes and names from it). */
	swap_reloadable(&a->cfg, next);
	rc = dpmon_merge_reconfigure(a->merge, x.cls, x.gens, a->cfg.n_subnets, x.old_of_new);
	if (rc != 0) {
		/* Back to the old generations: what the new ones counted since
		 * the swap is lost (out of memory only; logged by the caller). */
		publish_gens(a, a->gens);
		wait_grace_period(a);
		swap_reloadable(&a->cfg, next);
		goto fail;
	}
	reconfigure_modules(a);
	adopt(a, &x);
	return 0;
fail:
	next_free(a, &x);
	return rc;
}

/* ------------------------------------------------------------------------
 * SIGHUP.
 * --------------------------------------------------------------------- */

/*
 * The first line of @p errors (dpmon_config_load's report: "FILE: $.path:
 * reason" lines) without the "FILE: " prefix, into @p out (@p len bytes,
 * cut at a UTF-8 character boundary); @p fallback when there is none.
 */
static void
first_error(const char *errors, const char *file, const char *fallback, char *out, size_t len)
{
	const char *line = errors != NULL && errors[0] != '\0' ? errors : fallback;
	size_t flen = strlen(file), n;

	if (line != fallback && strncmp(line, file, flen) == 0 && line[flen] == ':')
		line += flen + 1 + (line[flen + 1] == ' ');
	n = strcspn(line, "\n");
	if (n >= len) {
		n = len - 1;
		while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--; /* not inside a character */
	}
	memcpy(out, line, n);
	out[n] = '\0';
}

/* Count the refusal of the file (dpmon_config_load's @p rc: errors found,
 * or -errno) and keep its time, file and first error for the summary. */
static void
note_refusal(struct app *a, int rc, const char *errors)
{
	struct reload_stats *r = &a->reload;

	r->refused++;
	r->last_refusal_unix_s = r->last_unix_s;
	r->last_refusal_errors = rc > 0 ? (uint32_t)rc : 1;
	snprintf(r->last_refusal_file, sizeof(r->last_refusal_file), "%s", a->config_path);
	first_error(errors, a->config_path, rc < 0 ? strerror(-rc) : "invalid file",
		    r->last_refusal_reason, sizeof(r->last_refusal_reason));
}

static void
count_attempt(struct app *a, bool ok)
{
	if (ok)
		a->reload.ok++;
	else
		a->reload.failed++;
	a->reload.last_ok = ok;
}

/*
 * Load the file into @p next; its errors (file, JSON path, why) are
 * collected and logged as one message, the attempt counted as failed.
 * @return 0 (the caller frees @p next), or non-zero.
 */
static int
load_next(struct app *a, struct dpmon_config *next)
{
	char *errors = NULL;
	size_t errors_len = 0;
	FILE *err = open_memstream(&errors, &errors_len);
	int rc = dpmon_config_load(a->config_path, next, err ? err : stderr);

	if (err != NULL)
		fclose(err);
	if (rc != 0) {
		count_attempt(a, false);
		note_refusal(a, rc, errors);
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload of %s refused, the running configuration stays:\n%s",
			  a->config_path, errors ? errors : "");
	}
	free(errors);
	return rc;
}

/* Count and log the result @p rc of apply_reload. */
static void
report(struct app *a, int rc, uint32_t n_old, uint32_t kept)
{
	count_attempt(a, rc == 0);
	if (rc != 0)
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			  "reload of %s failed: %s%s; the running configuration stays",
			  a->config_path, rte_strerror(-rc),
			  rc == -ENOMEM ? " (a reload builds the new LPM tables, 64 MiB for IPv4"
					  " and 64 MiB for IPv6, beside the running ones: give"
					  " DPDK more memory, -m or hugepages)"
					: "");
	else
		dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_NOTICE,
			  "reloaded %s: %u subnet(s), %u kept, %u added, %u removed",
			  a->config_path, a->cfg.n_subnets, kept, a->cfg.n_subnets - kept,
			  n_old - kept);
}

void
app_reload(struct app *a)
{
	struct dpmon_config next;
	struct timespec now;
	uint32_t n_old = a->cfg.n_subnets, kept = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	a->reload.last_unix_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	if (load_next(a, &next) == 0) {
		int rc;

		warn_restart_only(a, &next);
		/* Apart: the order in which a call's arguments are evaluated
		 * is unspecified, and kept is only known after the reload. */
		rc = apply_reload(a, &next, &kept);
		report(a, rc, n_old, kept);
		dpmon_config_free(&next);
	}
	/* The parsed file (a jansson tree of small objects, over 100 MiB for
	 * 65536 subnets with thresholds) is freed by now, applied or refused,
	 * but glibc keeps such freed memory in its heap: give it back. */
	malloc_trim(0);
}
