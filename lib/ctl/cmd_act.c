/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_act.c — dpmonctl's commands for scripts and changes: health (its
 * exit status), blackhole list|add|del, flowspec list|add|del, and reload (SIGHUP, then the
 * verdict read from the summary's config counters).
 */
#include "ctl_private.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"

extern char **environ;

/* ------------------------------------------------------------------------
 * health
 * --------------------------------------------------------------------- */

int
ctl_cmd_health(struct ctl_ctx *ctx, int argc, char **argv)
{
	struct ctl_reply r;
	char msg[1024];
	json_t *doc, *v;
	const char *status;
	size_t i;
	int rc;

	(void)argv;
	if (argc != 0) {
		fprintf(ctx->err, "dpmonctl: health takes no argument (dpmonctl --help)\n");
		return CTL_EXIT_USAGE;
	}
	if (ctl_http_request(&ctx->http, "GET", "/health", NULL, &r, msg, sizeof(msg)) != 0) {
		fprintf(ctx->err, "dpmonctl: %s\n", msg);
		return CTL_EXIT_ERROR;
	}
	doc = json_loadb(r.body, r.len, 0, NULL);
	status = json_string_value(json_object_get(doc, "status"));
	if ((r.status != 200 && r.status != 503) || status == NULL) {
		ctl_reply_error(&r, msg, sizeof(msg));
		fprintf(ctx->err, "dpmonctl: %s\n", msg);
		json_decref(doc);
		ctl_reply_free(&r);
		return CTL_EXIT_ERROR;
	}
	/* 200 is healthy ("ok", or "starting" before the first snapshot). */
	rc = r.status == 200 ? CTL_EXIT_OK : CTL_EXIT_UNHEALTHY;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
	} else {
		ctl_put(ctx->out, ctx->colour, rc ? CTL_RED : CTL_GREEN, status);
		fprintf(ctx->out, ", snapshot %" JSON_INTEGER_FORMAT "\n",
			json_integer_value(json_object_get(doc, "snapshot_seq")));
		json_array_foreach(json_object_get(doc, "reasons"), i, v)
		{
			fprintf(ctx->out, "  %s\n", json_string_value(v));
		}
	}
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
}

/* ------------------------------------------------------------------------
 * blackhole list | add ADDRESS | del ADDRESS
 * --------------------------------------------------------------------- */

static int
blackhole_row(const json_t *b, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	json_t *id = json_object_get(b, "alert_id");

	(void)arg;
	if (json_is_integer(id))
		snprintf(c[2], CTL_CELL_LEN, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
	else
		snprintf(c[2], CTL_CELL_LEN, "-");
	row[0] = json_string_value(json_object_get(b, "address"));
	row[1] = json_string_value(json_object_get(b, "source"));
	row[2] = c[2];
	row[3] = ctl_fmt_time(c[3], json_number_value(json_object_get(b, "since")));
	row[4] = json_is_true(json_object_get(b, "announced")) ? "yes" : "no";
	return CTL_PLAIN;
}

static int
blackhole_list(struct ctl_ctx *ctx)
{
	static const char *const heads[] = {"ADDRESS", "SOURCE", "ALERT", "SINCE", "ANNOUNCED"};
	static const bool right[] = {false, false, true, false, false};
	struct ctl_reply r;
	json_t *doc;
	int rc;

	if ((rc = ctl_call(ctx, "GET", "/api/v1/blackholes", NULL, NULL, &r, &doc)) != 0)
		return rc;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
	} else if (json_array_size(json_object_get(doc, "blackholes")) == 0) {
		fprintf(ctx->out, "no blackholes\n");
	} else {
		rc = ctl_print_rows(ctx, json_object_get(doc, "blackholes"), N_OF(heads), heads,
				    right, blackhole_row, NULL);
	}
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
}

/* POST or DELETE on the blackhole list; prints the outcome. */
static int
blackhole_change(struct ctl_ctx *ctx, bool add, const char *address)
{
	char *body = NULL;
	const char *addr;
	struct ctl_reply r;
	json_t *req, *doc;
	int rc;

	if (add) {
		req = json_pack("{s:s}", "address", address);
		body = req ? json_dumps(req, JSON_COMPACT) : NULL;
		json_decref(req);
		if (body == NULL) {
			fprintf(ctx->err, "dpmonctl: out of memory\n");
			return CTL_EXIT_ERROR;
		}
	}
	rc = ctl_call(ctx, add ? "POST" : "DELETE", "/api/v1/blackholes", add ? NULL : address,
		      body, &r, &doc);
	free(body);
	if (rc != 0)
		return rc;
	addr = json_string_value(json_object_get(doc, "address"));
	if (ctx->json)
		ctl_print_body(ctx, &r);
	else if (add && r.status == 201)
		fprintf(ctx->out, "blackholed %s\n", addr);
	else if (add)
		fprintf(ctx->out, "%s was blackholed already\n", addr);
	else if (json_is_true(json_object_get(doc, "removed")))
		fprintf(ctx->out, "removed the blackhole of %s\n", addr);
	else
		fprintf(ctx->out, "no blackhole for %s\n", addr);
	json_decref(doc);
	ctl_reply_free(&r);
	return CTL_EXIT_OK;
}

int
ctl_cmd_blackhole(struct ctl_ctx *ctx, int argc, char **argv)
{
	if (argc == 1 && strcmp(argv[0], "list") == 0)
		return blackhole_list(ctx);
	if (argc == 2 && strcmp(argv[0], "add") == 0)
		return blackhole_change(ctx, true, argv[1]);
	if (argc == 2 && strcmp(argv[0], "del") == 0)
		return blackhole_change(ctx, false, argv[1]);
	fprintf(ctx->err, "dpmonctl: usage: dpmonctl blackhole list | add ADDRESS | del ADDRESS\n");
	return CTL_EXIT_USAGE;
}

/* ------------------------------------------------------------------------
 * flowspec list | add DESTINATION [options] | del ID
 * --------------------------------------------------------------------- */

static int
flowspec_row(const json_t *f, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	(void)arg;
	snprintf(c[0], CTL_CELL_LEN, "%" JSON_INTEGER_FORMAT,
		 json_integer_value(json_object_get(f, "id")));
	if (json_is_integer(json_object_get(f, "alert_id")))
		snprintf(c[1], CTL_CELL_LEN, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(f, "alert_id")));
	else
		snprintf(c[1], CTL_CELL_LEN, "manual");
	snprintf(c[4], CTL_CELL_LEN, "%.0f %%",
		 100.0 * json_number_value(json_object_get(f, "coverage")));
	snprintf(c[5], CTL_CELL_LEN, "%" JSON_INTEGER_FORMAT,
		 json_integer_value(json_object_get(f, "packets")));
	row[0] = c[0];
	row[1] = c[1];
	row[2] = json_string_value(json_object_get(f, "action"));
	row[3] = json_is_true(json_object_get(f, "announced")) ? "yes" : "no";
	row[4] = c[4];
	row[5] = c[5];
	row[6] = ctl_fmt_time(c[6], json_number_value(json_object_get(f, "created")));
	row[7] = json_string_value(json_object_get(f, "match"));
	return CTL_PLAIN;
}

static int
flowspec_list(struct ctl_ctx *ctx)
{
	static const char *const heads[] = {"ID",       "ALERT",   "ACTION",  "ANNOUNCED",
					    "COVERAGE", "PACKETS", "CREATED", "MATCH"};
	static const bool right[] = {true, true, false, false, true, true, false, false};
	struct ctl_reply r;
	json_t *doc;
	int rc;

	if ((rc = ctl_call(ctx, "GET", "/api/v1/flowspec", NULL, NULL, &r, &doc)) != 0)
		return rc;
	if (ctx->json)
		ctl_print_body(ctx, &r);
	else if (json_array_size(json_object_get(doc, "rules")) == 0)
		fprintf(ctx->out, "no flowspec rules\n");
	else
		rc = ctl_print_rows(ctx, json_object_get(doc, "rules"), N_OF(heads), heads, right,
				    flowspec_row, NULL);
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
}

static int
flowspec_del(struct ctl_ctx *ctx, const char *id)
{
	struct ctl_reply r;
	json_t *doc;
	int rc = ctl_call(ctx, "DELETE", "/api/v1/flowspec", id, NULL, &r, &doc);

	if (rc != 0)
		return rc;
	if (ctx->json)
		ctl_print_body(ctx, &r);
	else
		fprintf(ctx->out, "%s flowspec rule %" JSON_INTEGER_FORMAT "\n",
			json_is_true(json_object_get(doc, "removed")) ? "withdrew" : "no",
			json_integer_value(json_object_get(doc, "id")));
	json_decref(doc);
	ctl_reply_free(&r);
	return CTL_EXIT_OK;
}

/* A word as JSON: an integer when it is decimal digits only, else the
 * string (the API then names the field it does not accept). */
static json_t *
number_or_text(const char *w)
{
	size_t n = strlen(w);

	if (n > 0 && n < 10 && strspn(w, "0123456789") == n)
		return json_integer(strtol(w, NULL, 10));
	return json_string(w);
}

/* The comma-separated words of @p text as a JSON array, numbers when @p numbers. */
static json_t *
word_list(const char *text, bool numbers)
{
	json_t *arr = json_array();
	char w[CTL_CELL_LEN];

	while (arr != NULL) {
		size_t n = strcspn(text, ",");

		snprintf(w, sizeof(w), "%.*s", (int)(n < sizeof(w) ? n : sizeof(w) - 1), text);
		if (json_array_append_new(arr, numbers ? number_or_text(w) : json_string(w)) != 0) {
			json_decref(arr);
			return NULL;
		}
		if (text[n] == '\0')
			break;
		text += n + 1;
	}
	return arr;
}

/* "MIN-MAX", "MIN-" or "-MAX" as {"min", "max"}; a word without '-' is both. */
static json_t *
length_range(const char *text)
{
	const char *dash = strchr(text, '-');
	json_t *o = json_object();
	char lo[CTL_CELL_LEN];

	if (dash == NULL) {
		json_object_set_new(o, "min", number_or_text(text));
		json_object_set_new(o, "max", number_or_text(text));
		return o;
	}
	snprintf(lo, sizeof(lo), "%.*s", (int)(dash - text), text);
	if (lo[0] != '\0')
		json_object_set_new(o, "min", number_or_text(lo));
	if (dash[1] != '\0')
		json_object_set_new(o, "max", number_or_text(dash + 1));
	return o;
}

/* The POST body of flowspec add: @p destination and ctx->fs. */
static json_t *
flowspec_body(const struct ctl_ctx *ctx, const char *destination)
{
	static const char *const keys[CTL_FS_N] = {
		[CTL_FS_SOURCE] = "source",
		[CTL_FS_PROTOCOL] = "protocol",
		[CTL_FS_SOURCE_PORTS] = "source_ports",
		[CTL_FS_DESTINATION_PORTS] = "destination_ports",
		[CTL_FS_PACKET_LENGTH] = "packet_length",
		[CTL_FS_TCP_FLAGS] = "tcp_flags",
		[CTL_FS_FRAGMENT] = "fragment",
		[CTL_FS_ICMP_TYPE] = "icmp_type",
		[CTL_FS_ICMP_CODE] = "icmp_code",
		[CTL_FS_ACTION] = "action",
	};
	json_t *body = json_pack("{s:s}", "destination", destination);

	for (unsigned i = 0; body != NULL && i < CTL_FS_N; i++) {
		const char *v = ctx->fs[i];
		json_t *x;

		if (v == NULL)
			continue;
		switch (i) {
		case CTL_FS_PROTOCOL:
		case CTL_FS_ICMP_CODE:
			x = number_or_text(v);
			break;
		case CTL_FS_SOURCE_PORTS:
		case CTL_FS_DESTINATION_PORTS:
		case CTL_FS_ICMP_TYPE:
			x = word_list(v, true);
			break;
		case CTL_FS_TCP_FLAGS:
			x = word_list(v, false);
			break;
		case CTL_FS_PACKET_LENGTH:
			x = length_range(v);
			break;
		case CTL_FS_FRAGMENT:
			x = json_true();
			break;
		default:
			x = json_string(v);
		}
		if (x == NULL || json_object_set_new(body, keys[i], x) != 0) {
			json_decref(body);
			body = NULL;
		}
	}
	return body;
}

static int
flowspec_add(struct ctl_ctx *ctx, const char *destination)
{
	json_t *req = flowspec_body(ctx, destination), *doc;
	char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	struct ctl_reply r;
	int rc;

	json_decref(req);
	if (body == NULL) {
		fprintf(ctx->err, "dpmonctl: out of memory\n");
		return CTL_EXIT_ERROR;
	}
	rc = ctl_call(ctx, "POST", "/api/v1/flowspec", NULL, body, &r, &doc);
	free(body);
	if (rc != 0)
		return rc;
	if (ctx->json)
		ctl_print_body(ctx, &r);
	else
		fprintf(ctx->out, "added flowspec rule %" JSON_INTEGER_FORMAT ": %s then %s\n",
			json_integer_value(json_object_get(doc, "id")),
			json_string_value(json_object_get(doc, "match")),
			json_string_value(json_object_get(doc, "action")));
	json_decref(doc);
	ctl_reply_free(&r);
	return CTL_EXIT_OK;
}

int
ctl_cmd_flowspec(struct ctl_ctx *ctx, int argc, char **argv)
{
	bool options = false;

	for (unsigned i = 0; i < CTL_FS_N; i++)
		options |= ctx->fs[i] != NULL;
	if (argc == 2 && strcmp(argv[0], "add") == 0)
		return flowspec_add(ctx, argv[1]);
	if (argc == 1 && strcmp(argv[0], "list") == 0 && !options)
		return flowspec_list(ctx);
	if (argc == 2 && strcmp(argv[0], "del") == 0 && !options)
		return flowspec_del(ctx, argv[1]);
	fprintf(ctx->err, "dpmonctl: usage: dpmonctl flowspec list | add DESTINATION [--source "
			  "PREFIX] [--protocol P] [...] | del ID\n");
	return CTL_EXIT_USAGE;
}

/* ------------------------------------------------------------------------
 * reload
 * --------------------------------------------------------------------- */

/* The reload counters of the summary's config object. */
struct reload_count {
	json_int_t reloads;
	json_int_t failures;
	json_int_t refusals;
};

static int
read_count(struct ctl_ctx *ctx, struct reload_count *n, struct ctl_reply *r, json_t **doc)
{
	json_t *cfg;
	int rc = ctl_call(ctx, "GET", "/api/v1/summary", NULL, NULL, r, doc);

	if (rc != 0)
		return rc;
	cfg = json_object_get(*doc, "config");
	n->reloads = json_integer_value(json_object_get(cfg, "reloads"));
	n->failures = json_integer_value(json_object_get(cfg, "reload_failures"));
	n->refusals = json_integer_value(json_object_get(cfg, "reload_refusals"));
	return 0;
}

/* Whether process @p pid runs dpmon (its /proc comm), so that a stale pid
 * file never gets another program a SIGHUP. */
static bool
is_dpmon(long pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, "dpmon") == 0;
}

/* SIGHUP to the pid in ctx->pid_file. */
static int
signal_pid_file(struct ctl_ctx *ctx)
{
	FILE *f = fopen(ctx->pid_file, "r");
	long pid = 0;
	char extra;

	if (f == NULL) {
		fprintf(ctx->err, "dpmonctl: cannot read the pid file %s: %s\n", ctx->pid_file,
			strerror(errno));
		return CTL_EXIT_ERROR;
	}
	if (fscanf(f, "%ld %c", &pid, &extra) != 1 || pid <= 1) {
		fclose(f);
		fprintf(ctx->err, "dpmonctl: %s: expected one process id\n", ctx->pid_file);
		return CTL_EXIT_ERROR;
	}
	fclose(f);
	if (!is_dpmon(pid)) {
		fprintf(ctx->err,
			"dpmonctl: process %ld of %s is not dpmon (a stale pid file?): no signal "
			"sent\n",
			pid, ctx->pid_file);
		return CTL_EXIT_ERROR;
	}
	if (kill((pid_t)pid, SIGHUP) != 0) {
		fprintf(ctx->err, "dpmonctl: SIGHUP to process %ld (%s): %s\n", pid, ctx->pid_file,
			strerror(errno));
		return CTL_EXIT_ERROR;
	}
	return 0;
}

/* systemctl reload UNIT: the unit checks the file, then sends SIGHUP. */
static int
systemctl_reload(struct ctl_ctx *ctx)
{
	char prog[] = "systemctl", verb[] = "reload";
	char *unit = strdup(ctx->unit);
	char *argv[] = {prog, verb, unit, NULL};
	int status, err;
	pid_t pid;

	if (unit == NULL)
		return CTL_EXIT_ERROR;
	fflush(NULL);
	err = posix_spawnp(&pid, "systemctl", NULL, NULL, argv, environ);
	free(unit);
	if (err != 0) {
		fprintf(ctx->err, "dpmonctl: cannot run systemctl: %s (use --pid-file)\n",
			strerror(err));
		return CTL_EXIT_ERROR;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return CTL_EXIT_ERROR;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(ctx->err,
			"dpmonctl: reload refused: systemctl reload %s failed; the running "
			"configuration stays (journalctl -u %s shows why)\n",
			ctx->unit, ctx->unit);
		return CTL_EXIT_ERROR;
	}
	return 0;
}

int
ctl_cmd_reload(struct ctl_ctx *ctx, int argc, char **argv)
{
	struct reload_count before, now;
	struct ctl_reply r;
	json_t *doc, *refusal;
	double waited = 0;
	int rc;

	(void)argv;
	if (argc != 0) {
		fprintf(ctx->err, "dpmonctl: reload takes no argument (dpmonctl --help)\n");
		return CTL_EXIT_USAGE;
	}
	if ((rc = read_count(ctx, &before, &r, &doc)) != 0)
		return rc;
	json_decref(doc);
	ctl_reply_free(&r);
	rc = ctx->pid_file ? signal_pid_file(ctx) : systemctl_reload(ctx);
	if (rc != 0)
		return rc;
	/* The counters move with the first snapshot after dpmon read the file. */
	for (;;) {
		const struct timespec step = {0, 100 * 1000 * 1000};

		if ((rc = read_count(ctx, &now, &r, &doc)) != 0)
			return rc;
		if (now.reloads + now.failures > before.reloads + before.failures)
			break;
		json_decref(doc);
		ctl_reply_free(&r);
		if (waited >= ctx->reload_wait_s) {
			fprintf(ctx->err,
				"dpmonctl: no reload seen within %.0f s (is the pid file "
				"dpmon's?)\n",
				ctx->reload_wait_s);
			return CTL_EXIT_ERROR;
		}
		nanosleep(&step, NULL);
		waited += 0.1;
	}
	refusal = json_object_get(json_object_get(doc, "config"), "last_refusal");
	if (ctx->json)
		ctl_print_body(ctx, &r);
	else if (now.reloads > before.reloads)
		fprintf(ctx->out, "reload applied (%" JSON_INTEGER_FORMAT " since start)\n",
			now.reloads);
	if (now.reloads > before.reloads) {
		rc = CTL_EXIT_OK;
	} else if (now.refusals > before.refusals) {
		fprintf(ctx->err,
			"dpmonctl: reload refused, the running configuration stays: %s: %s\n",
			json_string_value(json_object_get(refusal, "file")),
			json_string_value(json_object_get(refusal, "reason")));
		rc = CTL_EXIT_ERROR;
	} else {
		fprintf(ctx->err,
			"dpmonctl: reload not applied (out of memory in dpmon), the running "
			"configuration stays\n");
		rc = CTL_EXIT_ERROR;
	}
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
}
