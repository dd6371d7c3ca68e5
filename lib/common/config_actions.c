/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_actions.c — the configuration's "actions" section: the notify
 * script, ExaBGP's pipe and routes, the alerts' capture files and the
 * blackholes' state file (docs/detection.md, "Actions"); its "flowspec"
 * object is config_flowspec.c's.
 *
 * Paths are checked against the file system when the configuration is
 * read, so that --check-config and a reload catch what the actions would
 * only find at their first event: the script must be an executable
 * regular file, the pipe a FIFO if it exists, and the directories of the
 * capture and state files writable.
 */
#include "config_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prefix.h"

/* ------------------------------------------------------------------------
 * Paths and values.
 * --------------------------------------------------------------------- */

bool
config_check_abs_path(struct dpmon_check *c, const char *path, const json_t *v, char *out)
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

/* ------------------------------------------------------------------------
 * Keys.
 * --------------------------------------------------------------------- */

static void
parse_notify_script(struct dpmon_check *c, const char *path, const json_t *v,
		    struct dpmon_actions_conf *a)
{
	char q[DPMON_CHECK_PATH_LEN], e[128];
	const char *why;

	if (!config_check_abs_path(c, path, v, a->notify_script))
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

	if (!config_check_abs_path(c, path, v, a->exabgp_pipe))
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
	else if (json_string_length(v) > 0 &&
		 (json_string_length(v) >= sizeof(a->exabgp_community) ||
		  !is_community(json_string_value(v))))
		dpmon_check_report(c, path,
				   "not a community \"ASN:VALUE\" with both 0..65535 "
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

	if (!config_check_abs_path(c, path, v, out))
		return;
	dir_of(out, dir, sizeof(dir));
	if ((why = dir_problem(dir, e, sizeof(e))) != NULL) {
		dpmon_check_report(c, path, "directory %s: %s",
				   dpmon_check_quote(dir, q, sizeof(q)), why);
		out[0] = '\0';
	} else if (stat(out, &st) != 0) {
		/* Missing is fine (written later); unreachable (a link loop) is not. */
		if (errno != ENOENT) {
			dpmon_check_report(c, path, "%s: %s", dpmon_check_quote(out, q, sizeof(q)),
					   strerror(errno));
			out[0] = '\0';
		}
	} else if (!S_ISREG(st.st_mode)) {
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

	if (!config_check_abs_path(c, path, v, out))
		return;
	if ((why = dir_problem(out, e, sizeof(e))) != NULL) {
		dpmon_check_report(c, path, "directory %s: %s",
				   dpmon_check_quote(out, q, sizeof(q)), why);
		out[0] = '\0';
	}
}

/* ------------------------------------------------------------------------
 * The section.
 * --------------------------------------------------------------------- */

/* The section's bounded integers. */
static const struct dpmon_check_int_key action_ints[] = {
	DPMON_CHECK_U32_KEY("notify_timeout_ms", 100, 600000, struct dpmon_actions_conf,
			    notify_timeout_ms),
	DPMON_CHECK_U32_KEY("pcap_packets", 1, 100000, struct dpmon_actions_conf, pcap_packets),
	DPMON_CHECK_U32_KEY("pcap_max_files", 0, 1000000, struct dpmon_actions_conf,
			    pcap_max_files),
	DPMON_CHECK_U32_KEY("pcap_max_mb", 0, 1048576, struct dpmon_actions_conf, pcap_max_mb),
};

void
config_parse_actions(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	struct dpmon_check_member m;
	struct dpmon_actions_conf *a = &cfg->actions;

	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "notify_script") == 0)
			parse_notify_script(c, m.path, m.v, a);
		else if (strcmp(m.key, "exabgp_pipe") == 0)
			parse_exabgp_pipe(c, m.path, m.v, a);
		else if (strcmp(m.key, "exabgp_next_hop") == 0)
			parse_next_hop(c, m.path, m.v, false, a->exabgp_next_hop);
		else if (strcmp(m.key, "exabgp_next_hop6") == 0)
			parse_next_hop(c, m.path, m.v, true, a->exabgp_next_hop6);
		else if (strcmp(m.key, "exabgp_community") == 0)
			parse_exabgp_community(c, m.path, m.v, a);
		else if (strcmp(m.key, "pcap_dir") == 0)
			parse_out_dir(c, m.path, m.v, a->pcap_dir);
		else if (strcmp(m.key, "state_file") == 0)
			parse_out_file(c, m.path, m.v, a->state_file);
		else if (strcmp(m.key, "flowspec") == 0)
			config_parse_flowspec(c, m.path, m.v, &a->flowspec);
		else if (!dpmon_check_is_comment(m.key) &&
			 !dpmon_check_int_key(c, m.path, m.key, m.v, DPMON_CHECK_KEYS(action_ints),
					      a))
			dpmon_check_unknown(c, m.path);
	}
}
