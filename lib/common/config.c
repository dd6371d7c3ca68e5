/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c — read and validate dpmon's JSON configuration: the entry
 * points, the walk of the root object and the defaults (config.h).
 *
 * Design
 * ------
 *
 * Parsing is jansson's job (JSON_REJECT_DUPLICATES, so a key given twice is
 * a syntax error with a line and column). Validation is ours and walks the
 * document once, top-down, in file order: the root object here, each of
 * its sections in a file of its own (config_private.h lists them), all
 * with the checker of json_check.h. docs/configuration.md documents every
 * key, its type, range and default.
 *
 * Every object is checked by iterating over *its* keys (so unknown keys and
 * misspellings are found) and dispatching on the name; required keys are
 * checked for afterwards. A bad value never stops the walk: each check
 * reports and returns, the caller carries on with the next key, and the
 * result is the number of errors. That lets an operator fix a whole file in
 * one pass. The root's plain bounded integers are table-driven
 * (top_int_keys, dpmon_check_int_key).
 *
 * Reading a file is file.h's, not json_load_file's: it never blocks (a
 * FIFO or a device in the file's place is refused at once, not waited
 * on), it is bounded (CONFIG_MAX_FILE_BYTES), and an unreadable file
 * (missing, permission, a directory, an I/O error) yields its exact reason
 * rather than a parse error. The text is then parsed with json_loadb.
 *
 * No global state: the error sink travels in a struct dpmon_check.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config_private.h"
#include "file.h"
#include "json_check.h"

/* Files larger than this are refused: 65536 subnets, each with a name and
 * every threshold, take about 23 MiB indented (docs/configuration.md). */
#define CONFIG_MAX_FILE_BYTES (64u << 20)

/* ------------------------------------------------------------------------
 * The root object.
 * --------------------------------------------------------------------- */

/* The top-level bounded integers of struct dpmon_config. */
static const struct dpmon_check_int_key top_int_keys[] = {
	DPMON_CHECK_U32_KEY("host_table_capacity", 1024, 16777216, struct dpmon_config,
			    host_table_capacity),
	DPMON_CHECK_U32_KEY("host_idle_timeout_s", 0, 31536000, struct dpmon_config,
			    host_idle_timeout_s),
	DPMON_CHECK_U32_KEY("merge_interval_ms", 100, 60000, struct dpmon_config,
			    merge_interval_ms),
	DPMON_CHECK_U32_KEY("average_time_constant_ms", 100, 3600000, struct dpmon_config,
			    average_time_constant_ms),
	DPMON_CHECK_U32_KEY("history_s", 0, 86400, struct dpmon_config, history_s),
	DPMON_CHECK_U32_KEY("burst_size", 1, 512, struct dpmon_config, burst_size),
	DPMON_CHECK_U32_KEY("mbufs_per_queue", 512, 1048576, struct dpmon_config, mbufs_per_queue),
	DPMON_CHECK_U32_KEY("idle_sleep_us", 0, 100000, struct dpmon_config, idle_sleep_us),
};

/* One error for each direction of @p t at @p path whose "flows" limit is set
 * (and not just inherited from @p inherited, NULL = none). */
static void
check_no_flows_limit(struct dpmon_check *c, const char *path, const struct dpmon_thresholds *t,
		     const struct dpmon_thresholds *inherited)
{
	for (int d = 0; d < DPMON_DIR_MAX; d++) {
		double v = t->limit[d][DPMON_METRIC_FLOWS];

		if (v > 0 && (inherited == NULL || inherited->limit[d][DPMON_METRIC_FLOWS] != v))
			dpmon_check_report(
				c, path,
				"%s.flows is set, but \"flow_sketches\": false measures no "
				"flows",
				dpmon_dir_name((enum dpmon_dir)d));
	}
}

/* With "flow_sketches": false, no threshold may watch "flows". */
static void
check_no_flow_thresholds(struct dpmon_check *c, const struct dpmon_config *cfg)
{
	const struct dpmon_detect_conf *d = &cfg->detect;
	char path[DPMON_CHECK_PATH_LEN];

	check_no_flows_limit(c, "$.detection.thresholds", &d->thresholds, NULL);
	check_no_flows_limit(c, "$.detection.subnet_thresholds", &d->subnet_thresholds, NULL);
	for (uint32_t i = 0; i < cfg->n_subnets; i++) {
		if (!cfg->subnets[i].thresholds_set)
			continue;
		snprintf(path, sizeof(path), "$.subnets[%u].thresholds", i);
		check_no_flows_limit(c, path, &cfg->subnets[i].thresholds, NULL);
	}
	for (uint32_t i = 0; i < d->n_hostgroups; i++) {
		snprintf(path, sizeof(path), "$.detection.hostgroups[%u].thresholds", i);
		check_no_flows_limit(c, path, &d->hostgroups[i].thresholds, &d->thresholds);
	}
}

/* The sections of the root object, each parsed by its own file. */
static const struct section {
	const char *name;
	void (*parse)(struct dpmon_check *c, const char *path, json_t *v, struct dpmon_config *cfg);
} sections[] = {
	{"ports", config_parse_ports},         {"subnets", config_parse_subnets},
	{"http", config_parse_http},           {"metrics", config_parse_metrics},
	{"detection", config_parse_detection}, {"actions", config_parse_actions},
	{"export", config_parse_export},
};

/* The section named @p key, or NULL. */
static const struct section *
section_of(const char *key)
{
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (strcmp(key, sections[i].name) == 0)
			return &sections[i];
	return NULL;
}

static void
parse_root(struct dpmon_check *c, json_t *root, struct dpmon_config *cfg)
{
	const struct section *sec;
	struct dpmon_check_member m;
	json_t *v;

	if (!dpmon_check_object(c, "$", root))
		return;
	DPMON_CHECK_FOREACH_MEMBER(c, "$", root, &m)
	{
		if ((sec = section_of(m.key)) != NULL)
			sec->parse(c, m.path, m.v, cfg);
		else if (strcmp(m.key, "software_rss") == 0)
			dpmon_check_bool(c, m.path, m.v, &cfg->software_rss);
		else if (strcmp(m.key, "flow_sketches") == 0)
			dpmon_check_bool(c, m.path, m.v, &cfg->flow_sketches);
		else if (!dpmon_check_is_comment(m.key) &&
			 !dpmon_check_int_key(c, m.path, m.key, m.v, DPMON_CHECK_KEYS(top_int_keys),
					      cfg))
			dpmon_check_unknown(c, m.path);
	}
	dpmon_check_require(c, "$", root, "ports");
	dpmon_check_require(c, "$", root, "subnets");
	v = json_object_get(root, "detection");
	config_finish_detection(cfg, json_is_object(v) && json_object_get(v, "enabled") != NULL);
	config_check_ignore_sources(c, cfg);
	if (!cfg->flow_sketches)
		check_no_flow_thresholds(c, cfg);
}

/* ------------------------------------------------------------------------
 * Entry points.
 * --------------------------------------------------------------------- */

/* Validate the parsed document (or report @p je when it is NULL). */
static int
config_from_json(json_t *root, const json_error_t *je, struct dpmon_check *c,
		 struct dpmon_config *cfg)
{
	if (root == NULL)
		dpmon_check_syntax(c, je);
	else
		parse_root(c, root, cfg);
	json_decref(root);
	if (c->errors != 0) {
		dpmon_config_free(cfg);
		dpmon_config_defaults(cfg);
	}
	return c->errors;
}

void
dpmon_config_defaults(struct dpmon_config *cfg)
{
	*cfg = (struct dpmon_config){
		.http_listen = "127.0.0.1",
		.http_port = 8080,
		.host_table_capacity = 65536,
		.host_idle_timeout_s = 300,
		.merge_interval_ms = 1000,
		.average_time_constant_ms = 5000,
		.history_s = 300,
		.flow_sketches = true,
		.burst_size = 32,
		.mbufs_per_queue = 4096,
		.metrics_top_hosts = DPMON_TOP_HOSTS_DEFAULT,
		.metrics_top_subnets = DPMON_TOP_SUBNETS_DEFAULT,
		.detect = {.start_intervals = 1, .hold_s = 60, .recent_alerts = 1000},
		.actions = {.notify_timeout_ms = 10000,
			    .exabgp_next_hop = "192.0.2.1",
			    .exabgp_next_hop6 = "100::1",
			    .pcap_packets = 100,
			    .pcap_max_files = 1000,
			    .pcap_max_mb = 1024},
	};
	config_flowspec_defaults(&cfg->actions.flowspec);
	config_export_defaults(&cfg->export);
}

int
dpmon_config_load(const char *path, struct dpmon_config *cfg, FILE *err)
{
	struct dpmon_check c = {.origin = path, .err = err, .errors = 0};
	json_error_t je;
	char *text = NULL, why[128];
	size_t len = 0;
	json_t *root;
	int rc;

	dpmon_config_defaults(cfg);
	if (path == NULL)
		return -EINVAL;
	rc = dpmon_file_read(path, CONFIG_MAX_FILE_BYTES, &text, &len, why, sizeof(why));
	if (rc != 0) {
		if (err != NULL)
			fprintf(err, "%s: cannot read: %s\n", path, why);
		return rc;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	return config_from_json(root, &je, &c, cfg);
}

int
dpmon_config_parse(const char *json_text, const char *origin, struct dpmon_config *cfg, FILE *err)
{
	struct dpmon_check c = {.origin = origin ? origin : "(config)", .err = err, .errors = 0};
	json_error_t je;
	json_t *root;

	dpmon_config_defaults(cfg);
	if (json_text == NULL)
		return -EINVAL;
	root = json_loads(json_text, JSON_REJECT_DUPLICATES, &je);
	return config_from_json(root, &je, &c, cfg);
}

void
dpmon_config_free(struct dpmon_config *cfg)
{
	free(cfg->subnets);
	cfg->subnets = NULL;
	cfg->n_subnets = 0;
	cfg->detect.subnets = NULL;
	cfg->detect.n_subnets = 0;
	for (uint32_t i = 0; i < cfg->detect.n_hostgroups; i++)
		free(cfg->detect.hostgroups[i].prefixes);
	free(cfg->detect.hostgroups);
	cfg->detect.hostgroups = NULL;
	cfg->detect.n_hostgroups = 0;
	free(cfg->detect.whitelist);
	cfg->detect.whitelist = NULL;
	cfg->detect.n_whitelist = 0;
	free(cfg->detect.ignore_sources);
	cfg->detect.ignore_sources = NULL;
	cfg->detect.n_ignore_sources = 0;
}
