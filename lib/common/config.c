/*
 * config.c — read and validate dpmon's JSON configuration.
 *
 * Design
 * ------
 *
 * Parsing is jansson's job (JSON_REJECT_DUPLICATES, so a key given twice is
 * a syntax error with a line and column). Validation is ours and walks the
 * document once, top-down, in file order:
 *
 *   root  -> ports[]  -> device, rx_queues, rx_descriptors, mbufs, decap
 *         -> subnets[] -> prefix, name
 *         -> http      -> listen, port, cors_origins[]
 *         -> metrics   -> top_hosts
 *         -> detection -> enabled, ban, thresholds{ingress,egress},
 *                         hostgroups[] -> name, prefixes[], enabled, ban,
 *                         thresholds; whitelist[], start_intervals, hold_s,
 *                         recent_alerts
 *         -> actions   -> notify_script, notify_timeout_ms, exabgp_pipe,
 *                         exabgp_next_hop, exabgp_next_hop6, exabgp_community, pcap_dir,
 *                         pcap_packets, state_file
 *         -> host_table_capacity, merge_interval_ms, burst_size,
 *            mbufs_per_queue, idle_sleep_us (all plain bounded integers,
 *            table-driven)
 *
 * Every object is checked by iterating over *its* keys (so unknown keys and
 * misspellings are found) and dispatching on the name; required keys are
 * checked for afterwards. A bad value never stops the walk: each check
 * reports and returns, the caller carries on with the next key, and the
 * result is the number of errors. That lets an operator fix a whole file in
 * one pass. Once the per-key checks are done, two cross-entry checks run:
 * duplicate port devices (at most 32 ports, pairwise) and duplicate subnets
 * (up to 65536 of them: a copy of the valid prefixes tagged with their
 * index is sorted, so equal prefixes are adjacent, O(n log n)). Detection
 * adds two more: duplicate hostgroup names, and a prefix listed by two
 * hostgroups (or twice in one, or twice in the whitelist), by the same sort.
 * Hostgroups are parsed after the other detection keys whatever the file
 * order, since they inherit the global "ban" and "thresholds".
 *
 * Messages are "ORIGIN: PATH: why", one line each, PATH being a JSONPath
 * ("$.subnets[2].prefix"). Anything taken from the file (key names, strings)
 * is printed JSON-escaped, so a hostile or broken file cannot split a line.
 *
 * Reading a file is done here, not by json_load_file, so that an unreadable
 * file (missing, permission, a directory, an I/O error) yields its exact
 * errno rather than a parse error.
 *
 * No global state: the error sink travels in a struct dpmon_check.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "config_private.h"
#include "json_check.h"
#include "stats.h"

/* Files larger than this are refused (65536 subnets take about 5 MiB). */
#define CONFIG_MAX_FILE_BYTES (64u << 20)

/* A bounded integer member of struct dpmon_config. */
struct int_key {
	const char *name;
	json_int_t min, max;
	size_t offset; /* of a uint32_t in struct dpmon_config */
};

static const struct int_key top_int_keys[] = {
	{"host_table_capacity", 1024, 16777216, offsetof(struct dpmon_config, host_table_capacity)},
	{"merge_interval_ms", 100, 60000, offsetof(struct dpmon_config, merge_interval_ms)},
	{"average_time_constant_ms", 100, 3600000,
	 offsetof(struct dpmon_config, average_time_constant_ms)},
	{"history_s", 0, 86400, offsetof(struct dpmon_config, history_s)},
	{"burst_size", 1, 512, offsetof(struct dpmon_config, burst_size)},
	{"mbufs_per_queue", 512, 1048576, offsetof(struct dpmon_config, mbufs_per_queue)},
	{"idle_sleep_us", 0, 100000, offsetof(struct dpmon_config, idle_sleep_us)},
};

/* ------------------------------------------------------------------------ */
/* Detection (docs/detection.md)                                            */
/* ------------------------------------------------------------------------ */

/* The metric named @p name, or -1. */
static int
metric_index(const char *name)
{
	for (int m = 0; m < DPMON_METRIC_MAX; m++)
		if (strcmp(name, dpmon_metric_name(m)) == 0)
			return m;
	return -1;
}

/* A non-negative finite number (integer or real) into @p out. */
static bool
check_limit(struct dpmon_check *c, const char *path, const json_t *v, double *out)
{
	double x;

	if (!json_is_number(v)) {
		dpmon_check_type(c, path, "number", v);
		return false;
	}
	x = json_number_value(v);
	if (!(x >= 0) || x > 1e18) {
		dpmon_check_report(c, path, "must be a number 0..1e18 (0 = not watched), got %g",
				   x);
		return false;
	}
	*out = x;
	return true;
}

/* {"pps": N, "tcp_syn_pps": N, ...}: the limits of one direction. */
static void
parse_dir_limits(struct dpmon_check *c, const char *path, json_t *obj, double *limit)
{
	char kpath[DPMON_CHECK_PATH_LEN], names[256];
	const char *key;
	json_t *v;
	int m;

	if (!dpmon_check_object(c, path, obj))
		return;
	json_object_foreach(obj, key, v) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, key);
		if ((m = metric_index(key)) >= 0) {
			check_limit(c, kpath, v, &limit[m]);
			continue;
		}
		names[0] = '\0';
		for (int i = 0, n = 0; i < DPMON_METRIC_MAX; i++)
			n += snprintf(names + n, sizeof(names) - (size_t)n, "%s%s", i ? ", " : "",
				      dpmon_metric_name(i));
		dpmon_check_report(c, kpath, "unknown metric (expected one of %s)", names);
	}
}

/* {"ingress": {...}, "egress": {...}} */
static void
parse_thresholds(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_thresholds *t)
{
	char kpath[DPMON_CHECK_PATH_LEN];
	const char *key;
	json_t *v;

	memset(t, 0, sizeof(*t));
	if (!dpmon_check_object(c, path, obj))
		return;
	json_object_foreach(obj, key, v) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, key);
		if (strcmp(key, "ingress") == 0)
			parse_dir_limits(c, kpath, v, t->limit[DPMON_DIR_INGRESS]);
		else if (strcmp(key, "egress") == 0)
			parse_dir_limits(c, kpath, v, t->limit[DPMON_DIR_EGRESS]);
		else
			dpmon_check_unknown(c, kpath);
	}
}

static bool
thresholds_any(const struct dpmon_thresholds *t)
{
	for (int d = 0; d < DPMON_DIR_MAX; d++)
		for (int m = 0; m < DPMON_METRIC_MAX; m++)
			if (t->limit[d][m] > 0)
				return true;
	return false;
}

/*
 * An IPv6 prefix inside ::ffff:0:0/96 (IPv4-mapped): it can match no host,
 * since IPv4 hosts are matched by IPv4 prefixes and no host is counted at
 * a mapped IPv6 address.
 */
static bool
is_mapped_prefix(const struct dpmon_prefix *p)
{
	return p->family == 6 && p->depth >= 96 && dpmon_addr_is_v4(&p->addr);
}

static void
report_mapped_prefix(struct dpmon_check *c, const char *path, const struct dpmon_prefix *p,
		     const char *text)
{
	struct dpmon_prefix v4 = {.addr = p->addr, .family = 4, .depth = (uint8_t)(p->depth - 96)};
	char q[DPMON_CHECK_PATH_LEN], t[DPMON_PREFIX_STRLEN];

	dpmon_check_report(c, path, "an IPv4-mapped IPv6 prefix never matches (IPv4 hosts are "
			   "matched by IPv4 prefixes): write %s, got %s",
			   dpmon_prefix_format(&v4, t, sizeof(t)),
			   dpmon_check_quote(text, q, sizeof(q)));
}

/*
 * An array of CIDR prefixes (at least @p min) into a malloc'd @p *out;
 * the invalid ones are reported and left out.
 */
static void
parse_prefix_list(struct dpmon_check *c, const char *path, const json_t *arr, size_t min,
		  struct dpmon_prefix **out, uint32_t *n_out)
{
	char ipath[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN];
	const char *why;
	size_t i, n;
	json_t *v;

	if (!dpmon_check_array(c, path, arr, min, DPMON_MAX_GROUP_PREFIXES))
		return;
	n = json_array_size(arr);
	free(*out);
	*n_out = 0;
	*out = calloc(n ? n : 1, sizeof(**out));
	if (*out == NULL) {
		dpmon_check_report(c, path, "out of memory for %zu prefixes", n);
		return;
	}
	json_array_foreach(arr, i, v) {
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		if (!json_is_string(v))
			dpmon_check_type(c, ipath, "string", v);
		else if (dpmon_prefix_parse(json_string_value(v), &(*out)[*n_out], &why) != 0)
			dpmon_check_report(c, ipath, "%s, got %s", why,
					   dpmon_check_quote(json_string_value(v), q, sizeof(q)));
		else if (is_mapped_prefix(&(*out)[*n_out]))
			report_mapped_prefix(c, ipath, &(*out)[*n_out], json_string_value(v));
		else
			(*n_out)++;
	}
}

/* Where a prefix of a list came from, for duplicate messages. */
struct prefix_origin {
	struct dpmon_prefix prefix;
	uint32_t group; /* hostgroup index, or UINT32_MAX for the whitelist */
	uint32_t entry; /* index among the parsed prefixes of that list */
};

static int
prefix_origin_cmp(const void *a, const void *b)
{
	const struct prefix_origin *x = a, *y = b;
	int r = dpmon_prefix_cmp(&x->prefix, &y->prefix);

	if (r != 0)
		return r;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static void
origin_path(char *buf, size_t len, const struct prefix_origin *o)
{
	if (o->group == UINT32_MAX)
		snprintf(buf, len, "$.detection.whitelist");
	else
		snprintf(buf, len, "$.detection.hostgroups[%u].prefixes", o->group);
}

/*
 * A prefix may belong to one hostgroup only (else the longest-prefix
 * match could not choose), and appear once in the whitelist. Sorting puts
 * equal prefixes side by side; each one after the first is reported.
 */
static void
check_duplicate_group_prefixes(struct dpmon_check *c, const struct dpmon_detect_conf *d)
{
	struct prefix_origin *all;
	size_t n = d->n_whitelist, k = 0;
	char path[DPMON_CHECK_PATH_LEN], first[DPMON_CHECK_PATH_LEN], text[DPMON_PREFIX_STRLEN];

	for (uint32_t g = 0; g < d->n_hostgroups; g++)
		n += d->hostgroups[g].n_prefixes;
	all = malloc((n ? n : 1) * sizeof(*all));
	if (all == NULL) {
		dpmon_check_report(c, "$.detection",
				   "out of memory checking for duplicate prefixes");
		return;
	}
	for (uint32_t g = 0; g < d->n_hostgroups; g++)
		for (uint32_t i = 0; i < d->hostgroups[g].n_prefixes; i++)
			all[k++] = (struct prefix_origin){d->hostgroups[g].prefixes[i], g, i};
	for (uint32_t i = 0; i < d->n_whitelist; i++)
		all[k++] = (struct prefix_origin){d->whitelist[i], UINT32_MAX, i};
	qsort(all, n, sizeof(*all), prefix_origin_cmp);
	for (size_t i = 1, run = 0; i < n; i++) {
		if (!dpmon_prefix_equal(&all[i].prefix, &all[run].prefix)) {
			run = i;
			continue;
		}
		if ((all[i].group == UINT32_MAX) != (all[run].group == UINT32_MAX)) {
			/* A hostgroup prefix may also be whitelisted; the whitelist's
			 * own copies (sorted after) compare with its first. */
			run = i;
			continue;
		}
		origin_path(path, sizeof(path), &all[i]);
		origin_path(first, sizeof(first), &all[run]);
		dpmon_check_report(c, path, "duplicate prefix %s (also in %s)",
				   dpmon_prefix_format(&all[i].prefix, text, sizeof(text)), first);
	}
	free(all);
}

/* One hostgroup; @p ban_set[0] says whether it had a "ban" key. */
static void
parse_hostgroup(struct dpmon_check *c, const char *path, json_t *obj,
		struct dpmon_hostgroup_conf *g, bool *ban_set, bool *thresholds_set)
{
	char kpath[DPMON_CHECK_PATH_LEN];
	const char *key;
	json_t *v;

	if (!dpmon_check_object(c, path, obj))
		return;
	json_object_foreach(obj, key, v) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, key);
		if (strcmp(key, "name") == 0) {
			dpmon_check_string(c, kpath, v, 1, DPMON_NAME_LEN - 1, g->name);
		} else if (strcmp(key, "prefixes") == 0) {
			parse_prefix_list(c, kpath, v, 1, &g->prefixes, &g->n_prefixes);
		} else if (strcmp(key, "enabled") == 0 || strcmp(key, "ban") == 0) {
			if (!json_is_boolean(v))
				dpmon_check_type(c, kpath, "boolean", v);
			else if (key[0] == 'e')
				g->enabled = json_is_true(v);
			else {
				g->ban = json_is_true(v);
				*ban_set = true;
			}
		} else if (strcmp(key, "thresholds") == 0) {
			parse_thresholds(c, kpath, v, &g->thresholds);
			*thresholds_set = true;
		} else if (!dpmon_check_is_comment(key)) {
			dpmon_check_unknown(c, kpath);
		}
	}
	dpmon_check_require(c, path, obj, "name");
	dpmon_check_require(c, path, obj, "prefixes");
}

/* Each hostgroup whose name an earlier one has. */
static void
check_duplicate_group_names(struct dpmon_check *c, const struct dpmon_detect_conf *d)
{
	char path[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN];

	for (uint32_t i = 1; i < d->n_hostgroups; i++)
		for (uint32_t j = 0; d->hostgroups[i].name[0] && j < i; j++)
			if (strcmp(d->hostgroups[i].name, d->hostgroups[j].name) == 0) {
				snprintf(path, sizeof(path), "$.detection.hostgroups[%u].name", i);
				dpmon_check_report(c, path, "duplicate hostgroup name %s "
						   "(also $.detection.hostgroups[%u])",
						   dpmon_check_quote(d->hostgroups[i].name, q,
								     sizeof(q)), j);
				break;
			}
}

static void
parse_hostgroups(struct dpmon_check *c, const char *path, const json_t *arr,
		 struct dpmon_detect_conf *d, bool *ban_set, bool *thr_set)
{
	char ipath[DPMON_CHECK_PATH_LEN];
	size_t i, n;
	json_t *v;

	if (!dpmon_check_array(c, path, arr, 0, DPMON_MAX_HOSTGROUPS))
		return;
	n = json_array_size(arr);
	if (n > DPMON_MAX_HOSTGROUPS)
		n = DPMON_MAX_HOSTGROUPS; /* reported; the rest is not kept */
	d->hostgroups = calloc(n ? n : 1, sizeof(*d->hostgroups));
	if (d->hostgroups == NULL) {
		dpmon_check_report(c, path, "out of memory for %zu hostgroups", n);
		return;
	}
	d->n_hostgroups = (uint32_t)n;
	json_array_foreach(arr, i, v) {
		if (i >= n)
			break;
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		d->hostgroups[i].enabled = true;
		parse_hostgroup(c, ipath, v, &d->hostgroups[i], &ban_set[i], &thr_set[i]);
	}
	check_duplicate_group_names(c, d);
}

/* The "detection" object; see docs/detection.md for the semantics. */
static void
parse_detection(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	struct dpmon_detect_conf *d = &cfg->detect;
	bool ban_set[DPMON_MAX_HOSTGROUPS] = {false}, thr_set[DPMON_MAX_HOSTGROUPS] = {false};
	bool enabled_set = false, any;
	char kpath[DPMON_CHECK_PATH_LEN];
	const char *key;
	json_t *v, *groups = NULL;
	json_int_t n;

	if (!dpmon_check_object(c, path, obj))
		return;
	json_object_foreach(obj, key, v) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, key);
		if (strcmp(key, "enabled") == 0 || strcmp(key, "ban") == 0) {
			if (!json_is_boolean(v))
				dpmon_check_type(c, kpath, "boolean", v);
			else if (key[0] == 'e') {
				d->enabled = json_is_true(v);
				enabled_set = true;
			} else {
				d->ban = json_is_true(v);
			}
		} else if (strcmp(key, "thresholds") == 0) {
			parse_thresholds(c, kpath, v, &d->thresholds);
		} else if (strcmp(key, "hostgroups") == 0) {
			groups = v; /* after the globals: hostgroups inherit ban and thresholds */
		} else if (strcmp(key, "whitelist") == 0) {
			parse_prefix_list(c, kpath, v, 0, &d->whitelist, &d->n_whitelist);
		} else if (strcmp(key, "start_intervals") == 0) {
			if (dpmon_check_int(c, kpath, v, 1, 3600, &n))
				d->start_intervals = (uint32_t)n;
		} else if (strcmp(key, "hold_s") == 0) {
			if (dpmon_check_int(c, kpath, v, 0, 86400, &n))
				d->hold_s = (uint32_t)n;
		} else if (strcmp(key, "recent_alerts") == 0) {
			if (dpmon_check_int(c, kpath, v, 0, 100000, &n))
				d->recent_alerts = (uint32_t)n;
		} else if (!dpmon_check_is_comment(key)) {
			dpmon_check_unknown(c, kpath);
		}
	}
	if (groups != NULL) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, "hostgroups");
		parse_hostgroups(c, kpath, groups, d, ban_set, thr_set);
	}
	any = thresholds_any(&d->thresholds);
	for (uint32_t g = 0; g < d->n_hostgroups; g++) {
		struct dpmon_hostgroup_conf *hg = &d->hostgroups[g];

		if (!ban_set[g])
			hg->ban = d->ban;
		if (!thr_set[g])
			hg->thresholds = d->thresholds;
		any = any || (hg->enabled && thresholds_any(&hg->thresholds));
	}
	if (!enabled_set)
		d->enabled = any;
	check_duplicate_group_prefixes(c, d);
}

/* A top-level bounded integer; false when @p key is not one of them. */
static bool
parse_top_int(struct dpmon_check *c, const char *path, const char *key, const json_t *v,
	      struct dpmon_config *cfg)
{
	json_int_t n;

	for (size_t i = 0; i < sizeof(top_int_keys) / sizeof(top_int_keys[0]); i++) {
		const struct int_key *k = &top_int_keys[i];

		if (strcmp(key, k->name) != 0)
			continue;
		if (dpmon_check_int(c, path, v, k->min, k->max, &n))
			*(uint32_t *)((char *)cfg + k->offset) = (uint32_t)n;
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------------ */
/* actions                                                                  */
/* ------------------------------------------------------------------------ */

/* An absolute path of at most DPMON_PATH_LEN - 1 bytes into @p out. */
static bool
check_abs_path(struct dpmon_check *c, const char *path, const json_t *v, char *out)
{
	char q[DPMON_CHECK_PATH_LEN];

	if (!dpmon_check_string(c, path, v, 1, DPMON_PATH_LEN - 1, out))
		return false;
	if (out[0] != '/') {
		dpmon_check_report(c, path, "must be an absolute path, got %s",
				   dpmon_check_quote(out, q, sizeof(q)));
		out[0] = '\0';
		return false;
	}
	return true;
}

/* Why @p file cannot be run as the notify script, or NULL. */
static const char *
script_problem(const char *file, char *buf, size_t len)
{
	struct stat st;

	if (stat(file, &st) != 0)
		return dpmon_check_strerror(errno, buf, len);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (access(file, X_OK) != 0)
		return "not executable (chmod +x)";
	return NULL;
}

/* Why @p dir cannot hold files dpmon writes, or NULL (@p buf holds the text). */
static const char *
dir_problem(const char *dir, char *buf, size_t len)
{
	char e[96];
	struct stat st;

	if (stat(dir, &st) != 0)
		return dpmon_check_strerror(errno, buf, len);
	if (!S_ISDIR(st.st_mode))
		return "not a directory";
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(buf, len, "not writable: %s", dpmon_check_strerror(errno, e, sizeof(e)));
		return buf;
	}
	return NULL;
}

/* The directory part of absolute path @p file into @p out ("/" for "/x"). */
static void
dir_of(const char *file, char *out, size_t len)
{
	const char *slash = strrchr(file, '/');
	size_t n = slash != NULL && slash != file ? (size_t)(slash - file) : 1;

	snprintf(out, len, "%.*s", (int)n, file);
}

/* "ASN:VALUE", each 0..65535 in decimal (RFC 1997). */
static bool
is_community(const char *s)
{
	unsigned long asn, value;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return false;
	asn = strtoul(s, &end, 10);
	if (*end != ':' || !isdigit((unsigned char)end[1]) || asn > 65535)
		return false;
	value = strtoul(end + 1, &end, 10);
	return *end == '\0' && value <= 65535;
}

static void
parse_notify_script(struct dpmon_check *c, const char *path, const json_t *v,
		    struct dpmon_actions_conf *a)
{
	char q[DPMON_CHECK_PATH_LEN], e[128];
	const char *why;

	if (!check_abs_path(c, path, v, a->notify_script))
		return;
	if ((why = script_problem(a->notify_script, e, sizeof(e))) != NULL) {
		dpmon_check_report(c, path, "cannot run %s: %s",
				   dpmon_check_quote(a->notify_script, q, sizeof(q)), why);
		a->notify_script[0] = '\0';
	}
}

static void
parse_exabgp_pipe(struct dpmon_check *c, const char *path, const json_t *v,
		  struct dpmon_actions_conf *a)
{
	char q[DPMON_CHECK_PATH_LEN];
	struct stat st;

	if (!check_abs_path(c, path, v, a->exabgp_pipe))
		return;
	/* Absent is fine (ExaBGP may create it later); anything else must be a FIFO. */
	if (stat(a->exabgp_pipe, &st) == 0 && !S_ISFIFO(st.st_mode)) {
		dpmon_check_report(c, path,
				   "%s exists and is not a FIFO (mkfifo it, or name another path)",
				   dpmon_check_quote(a->exabgp_pipe, q, sizeof(q)));
		a->exabgp_pipe[0] = '\0';
	}
}

/*
 * "exabgp_next_hop" (IPv4 or IPv6: the next hop of IPv4 routes) or, with
 * @p v6_only, "exabgp_next_hop6" (the next hop of IPv6 routes), into @p out
 * (DPMON_ADDR_STRLEN bytes), written canonically.
 */
static void
parse_next_hop(struct dpmon_check *c, const char *path, const json_t *v, bool v6_only, char *out)
{
	char q[DPMON_CHECK_PATH_LEN];
	struct dpmon_addr addr;

	if (!json_is_string(v))
		dpmon_check_type(c, path, "string", v);
	else if (json_string_length(v) >= DPMON_ADDR_STRLEN ||
		 dpmon_addr_parse(json_string_value(v), &addr) != 0 ||
		 (v6_only && dpmon_addr_is_v4(&addr)))
		dpmon_check_report(c, path,
				   v6_only ? "not an IPv6 address (the next hop of IPv6 routes), "
					     "got %s"
					   : "not an IPv4 or IPv6 address, got %s",
				   dpmon_check_quote(json_string_value(v), q, sizeof(q)));
	else
		dpmon_addr_format(&addr, out, DPMON_ADDR_STRLEN);
}

static void
parse_exabgp_community(struct dpmon_check *c, const char *path, const json_t *v,
		       struct dpmon_actions_conf *a)
{
	char q[DPMON_CHECK_PATH_LEN];

	if (!json_is_string(v))
		dpmon_check_type(c, path, "string", v);
	else if (json_string_length(v) > 0 && (json_string_length(v) >= sizeof(a->exabgp_community) ||
					       !is_community(json_string_value(v))))
		dpmon_check_report(c, path, "not a community \"ASN:VALUE\" with both 0..65535 "
				   "(RFC 1997), e.g. \"65535:666\", got %s",
				   dpmon_check_quote(json_string_value(v), q, sizeof(q)));
	else
		memcpy(a->exabgp_community, json_string_value(v), json_string_length(v) + 1);
}

/*
 * A path to a file dpmon reads back and replaces (rename): absolute, in an
 * existing directory, and a regular file if it exists (reading a FIFO
 * would block the start; a directory cannot be replaced).
 */
static void
parse_out_file(struct dpmon_check *c, const char *path, const json_t *v, char *out)
{
	char q[DPMON_CHECK_PATH_LEN], dir[DPMON_PATH_LEN], e[128];
	const char *why;
	struct stat st;

	if (!check_abs_path(c, path, v, out))
		return;
	dir_of(out, dir, sizeof(dir));
	if ((why = dir_problem(dir, e, sizeof(e))) != NULL) {
		dpmon_check_report(c, path, "directory %s: %s",
				   dpmon_check_quote(dir, q, sizeof(q)), why);
		out[0] = '\0';
	} else if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		dpmon_check_report(c, path, "%s exists and is not a regular file",
				   dpmon_check_quote(out, q, sizeof(q)));
		out[0] = '\0';
	}
}

static void
parse_out_dir(struct dpmon_check *c, const char *path, const json_t *v, char *out)
{
	char q[DPMON_CHECK_PATH_LEN], e[128];
	const char *why;

	if (!check_abs_path(c, path, v, out))
		return;
	if ((why = dir_problem(out, e, sizeof(e))) != NULL) {
		dpmon_check_report(c, path, "directory %s: %s",
				   dpmon_check_quote(out, q, sizeof(q)), why);
		out[0] = '\0';
	}
}

static void
parse_actions(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	struct dpmon_actions_conf *a = &cfg->actions;
	char kpath[DPMON_CHECK_PATH_LEN];
	const char *key;
	json_t *v;
	json_int_t n;

	if (!dpmon_check_object(c, path, obj))
		return;
	json_object_foreach(obj, key, v) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, key);
		if (strcmp(key, "notify_script") == 0)
			parse_notify_script(c, kpath, v, a);
		else if (strcmp(key, "notify_timeout_ms") == 0) {
			if (dpmon_check_int(c, kpath, v, 100, 600000, &n))
				a->notify_timeout_ms = (uint32_t)n;
		} else if (strcmp(key, "exabgp_pipe") == 0)
			parse_exabgp_pipe(c, kpath, v, a);
		else if (strcmp(key, "exabgp_next_hop") == 0)
			parse_next_hop(c, kpath, v, false, a->exabgp_next_hop);
		else if (strcmp(key, "exabgp_next_hop6") == 0)
			parse_next_hop(c, kpath, v, true, a->exabgp_next_hop6);
		else if (strcmp(key, "exabgp_community") == 0)
			parse_exabgp_community(c, kpath, v, a);
		else if (strcmp(key, "pcap_dir") == 0)
			parse_out_dir(c, kpath, v, a->pcap_dir);
		else if (strcmp(key, "pcap_packets") == 0) {
			if (dpmon_check_int(c, kpath, v, 1, 100000, &n))
				a->pcap_packets = (uint32_t)n;
		} else if (strcmp(key, "state_file") == 0)
			parse_out_file(c, kpath, v, a->state_file);
		else if (!dpmon_check_is_comment(key))
			dpmon_check_unknown(c, kpath);
	}
}

static void
parse_root(struct dpmon_check *c, json_t *root, struct dpmon_config *cfg)
{
	char path[DPMON_CHECK_PATH_LEN];
	const char *key;
	json_t *v;

	if (!dpmon_check_object(c, "$", root))
		return;
	json_object_foreach(root, key, v) {
		dpmon_check_path_key(path, sizeof(path), "$", key);
		if (strcmp(key, "ports") == 0)
			config_parse_ports(c, path, v, cfg);
		else if (strcmp(key, "subnets") == 0)
			config_parse_subnets(c, path, v, cfg);
		else if (strcmp(key, "http") == 0)
			config_parse_http(c, path, v, cfg);
		else if (strcmp(key, "metrics") == 0)
			config_parse_metrics(c, path, v, cfg);
		else if (strcmp(key, "detection") == 0)
			parse_detection(c, path, v, cfg);
		else if (strcmp(key, "actions") == 0)
			parse_actions(c, path, v, cfg);
		else if (strcmp(key, "software_rss") == 0) {
			if (json_is_boolean(v))
				cfg->software_rss = json_is_true(v);
			else
				dpmon_check_type(c, path, "boolean", v);
		} else if (!dpmon_check_is_comment(key) && !parse_top_int(c, path, key, v, cfg))
			dpmon_check_unknown(c, path);
	}
	dpmon_check_require(c, "$", root, "ports");
	dpmon_check_require(c, "$", root, "subnets");
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

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

/*
 * Read all of @p path into a malloc'd buffer. @return 0, or -errno
 * (-EFBIG beyond CONFIG_MAX_FILE_BYTES).
 */
static int
read_file(const char *path, char **out, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 64 * 1024;
	char *buf = NULL, *bigger;
	int rc = 0;

	if (f == NULL)
		return -errno;
	for (;;) {
		if (len == cap || buf == NULL) {
			cap = buf == NULL ? cap : cap * 2;
			if (cap > CONFIG_MAX_FILE_BYTES + 1u)
				cap = CONFIG_MAX_FILE_BYTES + 1u;
			bigger = realloc(buf, cap);
			if (bigger == NULL) {
				rc = -ENOMEM;
				break;
			}
			buf = bigger;
		}
		errno = 0;
		len += fread(buf + len, 1, cap - len, f);
		if (len > CONFIG_MAX_FILE_BYTES) {
			rc = -EFBIG;
			break;
		}
		if (ferror(f)) {
			rc = errno ? -errno : -EIO;
			break;
		}
		if (feof(f))
			break;
	}
	fclose(f);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

void
dpmon_config_defaults(struct dpmon_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->http_listen, sizeof(cfg->http_listen), "127.0.0.1");
	cfg->http_port = 8080;
	cfg->host_table_capacity = 65536;
	cfg->merge_interval_ms = 1000;
	cfg->average_time_constant_ms = 5000;
	cfg->history_s = 300;
	cfg->burst_size = 32;
	cfg->mbufs_per_queue = 4096;
	cfg->metrics_top_hosts = DPMON_TOP_HOSTS_DEFAULT;
	cfg->detect.start_intervals = 1;
	cfg->detect.hold_s = 60;
	cfg->detect.recent_alerts = 1000;
	cfg->actions.notify_timeout_ms = 10000;
	snprintf(cfg->actions.exabgp_next_hop, sizeof(cfg->actions.exabgp_next_hop), "192.0.2.1");
	snprintf(cfg->actions.exabgp_next_hop6, sizeof(cfg->actions.exabgp_next_hop6), "100::1");
	cfg->actions.pcap_packets = 100;
}

static const char *const metric_names[DPMON_METRIC_MAX] = {
	[DPMON_METRIC_PPS] = "pps",
	[DPMON_METRIC_BPS] = "bps",
	[DPMON_METRIC_FLOWS] = "flows",
	[DPMON_METRIC_TCP_PPS] = "tcp_pps",
	[DPMON_METRIC_TCP_BPS] = "tcp_bps",
	[DPMON_METRIC_UDP_PPS] = "udp_pps",
	[DPMON_METRIC_UDP_BPS] = "udp_bps",
	[DPMON_METRIC_ICMP_PPS] = "icmp_pps",
	[DPMON_METRIC_ICMP_BPS] = "icmp_bps",
	[DPMON_METRIC_TCP_SYN_PPS] = "tcp_syn_pps",
	[DPMON_METRIC_FRAGMENTS_PPS] = "fragments_pps",
};

const char *
dpmon_metric_name(int m)
{
	return m >= 0 && m < DPMON_METRIC_MAX ? metric_names[m] : NULL;
}

int
dpmon_config_load(const char *path, struct dpmon_config *cfg, FILE *err)
{
	struct dpmon_check c = {.origin = path, .err = err, .errors = 0};
	json_error_t je;
	char *text = NULL, msg[128];
	size_t len = 0;
	json_t *root;
	int rc;

	dpmon_config_defaults(cfg);
	if (path == NULL)
		return -EINVAL;
	rc = read_file(path, &text, &len);
	if (rc != 0) {
		if (err != NULL)
			fprintf(err, "%s: cannot read: %s\n", path,
				dpmon_check_strerror(-rc, msg, sizeof(msg)));
		return rc;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	return config_from_json(root, &je, &c, cfg);
}

int
dpmon_config_parse(const char *json_text, const char *origin, struct dpmon_config *cfg,
		   FILE *err)
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
	for (uint32_t i = 0; i < cfg->detect.n_hostgroups; i++)
		free(cfg->detect.hostgroups[i].prefixes);
	free(cfg->detect.hostgroups);
	cfg->detect.hostgroups = NULL;
	cfg->detect.n_hostgroups = 0;
	free(cfg->detect.whitelist);
	cfg->detect.whitelist = NULL;
	cfg->detect.n_whitelist = 0;
}
