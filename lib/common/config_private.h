/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_private.h — what the files of the configuration reader share:
 * the parsers of its sections, which config.c's walk of the root object
 * calls. Only lib/common/config*.c include it; everyone else uses config.h.
 *
 *   config.c            the entry points, the root object and the defaults
 *   config_sections.c   "ports", "subnets", "http" and "metrics"
 *   config_detection.c  "detection": thresholds, hostgroups, whitelist
 *   config_actions.c    "actions": notify script, ExaBGP, capture and
 *                       state files
 *   config_export.c     "export": ClickHouse and InfluxDB
 *
 * Each parser checks the value at @p path (its JSONPath) completely,
 * reports every problem through @p c (json_check.h) and fills @p cfg with
 * what is valid; none stops at the first error. Any thread: no global
 * state.
 */
#ifndef DPMON_CONFIG_PRIVATE_H
#define DPMON_CONFIG_PRIVATE_H

#include <jansson.h>

#include "config.h"
#include "json_check.h"

/* ------------------------------------------------------------------------
 * Plain sections (config_sections.c).
 * --------------------------------------------------------------------- */

/*
 * An absolute path of at most DPMON_PATH_LEN - 1 bytes at @p path into
 * @p out (DPMON_PATH_LEN bytes); reported and "" otherwise.
 * @return true when @p out holds it.
 */
bool config_check_abs_path(struct dpmon_check *c, const char *path, const json_t *v, char *out);

/*
 * "ports": an array of 1..DPMON_MAX_PORTS objects {"device", "rx_queues",
 * "rx_descriptors", "mbufs", "decap"} into cfg->ports (entries past the
 * limit are checked, not kept); a device named twice is reported.
 */
void config_parse_ports(struct dpmon_check *c, const char *path, json_t *arr,
			struct dpmon_config *cfg);

/*
 * "subnets": an array of 1..DPMON_MAX_SUBNETS objects {"prefix", "name",
 * "thresholds", "detection"}
 * into cfg->subnets (malloc'd; dpmon_config_free frees it); a prefix given
 * twice is reported.
 */
void config_parse_subnets(struct dpmon_check *c, const char *path, json_t *arr,
			  struct dpmon_config *cfg);

/* "http": {"listen", "port", "cors_origins"} into cfg->http_*. */
void config_parse_http(struct dpmon_check *c, const char *path, json_t *obj,
		       struct dpmon_config *cfg);

/* "metrics": {"top_hosts", "top_subnets"} into cfg->metrics_top_*. */
void config_parse_metrics(struct dpmon_check *c, const char *path, json_t *obj,
			  struct dpmon_config *cfg);

/* ------------------------------------------------------------------------
 * Detection (config_detection.c).
 * --------------------------------------------------------------------- */

/*
 * "detection" into cfg->detect (hostgroups and whitelist malloc'd;
 * dpmon_config_free frees them): hostgroups inherit the section's "ban"
 * and "thresholds" when they have none, and "enabled" defaults to true
 * when a threshold is set (in the section, or in an enabled hostgroup).
 */
void config_parse_detection(struct dpmon_check *c, const char *path, json_t *obj,
			    struct dpmon_config *cfg);

/*
 * {"ingress": {METRIC: N, ...}, "egress": {...}} into @p t (zeroed first):
 * the form of detection.thresholds, subnet_thresholds and every entry's
 * own "thresholds".
 */
void config_parse_thresholds(struct dpmon_check *c, const char *path, json_t *obj,
			     struct dpmon_thresholds *t);

/*
 * After the whole file (subnets and detection in either order): subnets
 * without "thresholds" take detection.subnet_thresholds, cfg->detect views
 * the subnets, and, when "enabled" was not given (@p enabled_set false), a
 * subnet threshold in force turns detection on.
 */
void config_finish_detection(struct dpmon_config *cfg, bool enabled_set);

/*
 * Report every detection.ignore_sources prefix that overlaps a monitored
 * subnet (an ignored source must be remote) or repeats an earlier one.
 */
void config_check_ignore_sources(struct dpmon_check *c, const struct dpmon_config *cfg);

/* ------------------------------------------------------------------------
 * Actions (config_actions.c).
 * --------------------------------------------------------------------- */

/*
 * "actions" into cfg->actions. Its paths are checked on the file system
 * too: one that fails is reported and left empty.
 */
void config_parse_actions(struct dpmon_check *c, const char *path, json_t *obj,
			  struct dpmon_config *cfg);

/* ------------------------------------------------------------------------
 * FlowSpec (config_flowspec.c).
 * --------------------------------------------------------------------- */

/* "actions.flowspec" into cfg->actions.flowspec (docs/detection.md, "FlowSpec"). */
void config_parse_flowspec(struct dpmon_check *c, const char *path, json_t *obj,
			   struct dpmon_flowspec_conf *f);

/* The defaults of "actions.flowspec" into @p f. */
void config_flowspec_defaults(struct dpmon_flowspec_conf *f);

/*
 * A FlowSpec action string ("discard", "rate-limit N", "redirect ASN:VALUE",
 * "mark DSCP") into @p out; a bad one is reported. @return true when valid.
 */
bool config_parse_flowspec_action(struct dpmon_check *c, const char *path, const json_t *v,
				  struct dpmon_fs_action *out);

/* A mitigation name into @p out; a bad one is reported. @return true when valid. */
bool config_parse_mitigation(struct dpmon_check *c, const char *path, const json_t *v,
			     enum dpmon_mitigation *out);

/* ------------------------------------------------------------------------
 * Export (config_export.c).
 * --------------------------------------------------------------------- */

/*
 * "export": {"instance", "spool_intervals", "spool_mb", "retry_max_ms",
 * "flush_timeout_ms", "clickhouse": {...}, "influxdb": {...}} into
 * cfg->export (docs/export.md).
 */
void config_parse_export(struct dpmon_check *c, const char *path, json_t *obj,
			 struct dpmon_config *cfg);

/* The defaults of "export" into @p e: the host name as instance, ... */
void config_export_defaults(struct dpmon_export_conf *e);

#endif /* DPMON_CONFIG_PRIVATE_H */
