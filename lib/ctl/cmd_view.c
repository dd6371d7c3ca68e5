/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_view.c — dpmonctl's read-only views: summary, top, host, subnets,
 * alerts. Each GETs one endpoint and prints its JSON unchanged (-o json) or
 * as aligned tables with units (docs/api.md names every field shown).
 */
#include "ctl_private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

/* ------------------------------------------------------------------------
 * Shared: the request and field access
 * --------------------------------------------------------------------- */

int
ctl_call(struct ctl_ctx *ctx, const char *method, const char *path, const char *item,
	 const char *body, struct ctl_reply *r, json_t **doc)
{
	char msg[1024], *esc = NULL, *full = NULL;
	json_error_t jerr;
	int rc = CTL_EXIT_ERROR;

	*doc = NULL;
	if (item != NULL) {
		esc = ctl_http_escape(&ctx->http, item);
		if (esc == NULL || asprintf(&full, "%s/%s", path, esc) < 0) {
			free(esc);
			fprintf(ctx->err, "dpmonctl: out of memory\n");
			return CTL_EXIT_ERROR;
		}
		free(esc);
		path = full;
	}
	if (ctl_http_request(&ctx->http, method, path, body, r, msg, sizeof(msg)) != 0) {
		fprintf(ctx->err, "dpmonctl: %s\n", msg);
		goto out;
	}
	if (r->status < 200 || r->status > 299) {
		ctl_reply_error(r, msg, sizeof(msg));
		fprintf(ctx->err, "dpmonctl: %s\n", msg);
		ctl_reply_free(r);
		goto out;
	}
	*doc = json_loadb(r->body, r->len, 0, &jerr);
	if (*doc == NULL) {
		fprintf(ctx->err, "dpmonctl: %s %s: the answer is not JSON: %s\n", method, path,
			jerr.text);
		ctl_reply_free(r);
		goto out;
	}
	rc = 0;
out:
	free(full);
	return rc;
}

void
ctl_print_body(struct ctl_ctx *ctx, const struct ctl_reply *r)
{
	fwrite(r->body, 1, r->len, ctx->out);
	if (r->len == 0 || r->body[r->len - 1] != '\n')
		fputc('\n', ctx->out);
}

static json_t *
get(const json_t *o, const char *key)
{
	return json_object_get(o, key);
}

static double
num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "-";
}

/* An integer counter as decimal digits, or "-" for null. */
static char *
count(char *buf, const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		snprintf(buf, CTL_FMT_LEN, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, CTL_FMT_LEN, "%.0f", json_real_value(v));
	else
		snprintf(buf, CTL_FMT_LEN, "-");
	return buf;
}

static char *
unit(char *buf, const json_t *o, const char *key, const char *u)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return strcpy(buf, "-");
	return ctl_fmt_unit(buf, json_number_value(v), u);
}

/* Print and free a table; CTL_EXIT_ERROR when it could not be built. */
static int
table_done(struct ctl_ctx *ctx, struct ctl_table *t, int failed)
{
	if (t == NULL || failed) {
		fprintf(ctx->err, "dpmonctl: out of memory\n");
		ctl_table_free(t);
		return CTL_EXIT_ERROR;
	}
	ctl_table_print(t, ctx->out, ctx->colour);
	ctl_table_free(t);
	return CTL_EXIT_OK;
}

int
ctl_print_rows(struct ctl_ctx *ctx, json_t *items, unsigned int n_cols, const char *const *heads,
	       const bool *right, ctl_row_fn fn, const void *arg)
{
	struct ctl_table *t = ctl_table_new(n_cols, heads, right);
	int failed = 0;
	size_t i;
	json_t *item;

	json_array_foreach(items, i, item)
	{
		char cell[CTL_MAX_COLS][CTL_CELL_LEN];
		const char *row[CTL_MAX_COLS];
		int colour = fn(item, arg, cell, row);

		if (t != NULL)
			failed |= ctl_table_add(t, row, (enum ctl_colour)colour);
	}
	return table_done(ctx, t, failed);
}

static int
no_args(struct ctl_ctx *ctx, const char *cmd, int argc)
{
	if (argc == 0)
		return 0;
	fprintf(ctx->err, "dpmonctl: %s takes no argument (dpmonctl --help)\n", cmd);
	return CTL_EXIT_USAGE;
}

/* ------------------------------------------------------------------------
 * summary
 * --------------------------------------------------------------------- */

/* "name N, name N" of the non-zero members of an object of counters. */
static void
print_nonzero(struct ctl_ctx *ctx, const char *title, json_t *o)
{
	const char *key;
	json_t *v;
	int n = 0;

	fprintf(ctx->out, "%s:", title);
	json_object_foreach(o, key, v)
	{
		if (json_integer_value(v) == 0)
			continue;
		fprintf(ctx->out, "%s %s %" JSON_INTEGER_FORMAT, n++ ? "," : "", key,
			json_integer_value(v));
	}
	fprintf(ctx->out, "%s\n", n ? "" : " none");
}

static int
summary_traffic(struct ctl_ctx *ctx, const json_t *s)
{
	static const char *const heads[] = {"TRAFFIC", "PACKETS", "BYTES", "PPS", "BPS", "FLOWS"};
	static const bool right[] = {false, true, true, true, true, true};
	static const char *const dirs[] = {"ingress", "egress", "internal", "external"};
	struct ctl_table *t = ctl_table_new(N_OF(heads), heads, right);
	int failed = 0;

	for (size_t i = 0; t && i < N_OF(dirs); i++) {
		const json_t *d = get(get(s, "totals"), dirs[i]);
		char c[5][CTL_FMT_LEN];
		const char *row[] = {dirs[i],
				     count(c[0], d, "packets"),
				     unit(c[1], d, "bytes", "B"),
				     unit(c[2], d, "pps", "pps"),
				     unit(c[3], d, "bps", "bps"),
				     count(c[4], d, "flows")};

		failed |= ctl_table_add(t, row, CTL_PLAIN);
	}
	return table_done(ctx, t, failed);
}

static int
port_row(const json_t *p, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	(void)arg;
	row[0] = str(p, "device");
	row[1] = count(c[1], p, "rx_queues");
	row[2] = count(c[2], p, "ipackets");
	row[3] = unit(c[3], p, "ibytes", "B");
	row[4] = count(c[4], p, "imissed");
	row[5] = count(c[5], p, "ierrors");
	row[6] = count(c[6], p, "rx_nombuf");
	return CTL_PLAIN;
}

static int
worker_row(const json_t *w, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	(void)arg;
	snprintf(c[2], CTL_CELL_LEN, "%.1f %%", 100.0 * num(w, "busy_ratio"));
	row[0] = count(c[0], w, "lcore");
	row[1] = count(c[1], w, "packets");
	row[2] = c[2];
	row[3] = count(c[3], w, "hosts");
	row[4] = count(c[4], w, "host_capacity");
	row[5] = count(c[5], w, "host_table_full");
	row[6] = count(c[6], w, "host_evictions");
	return CTL_PLAIN;
}

static int
summary_ports(struct ctl_ctx *ctx, const json_t *s)
{
	static const char *const heads[] = {"PORT",   "RX QUEUES", "RX PACKETS", "RX BYTES",
					    "MISSED", "ERRORS",    "NO MBUF"};
	static const bool right[] = {false, true, true, true, true, true, true};

	return ctl_print_rows(ctx, get(s, "ports"), N_OF(heads), heads, right, port_row, NULL);
}

static int
summary_workers(struct ctl_ctx *ctx, const json_t *s)
{
	static const char *const heads[] = {"LCORE",    "PACKETS",    "BUSY",   "HOSTS",
					    "CAPACITY", "TABLE FULL", "EVICTED"};
	static const bool right[] = {true, true, true, true, true, true, true};

	return ctl_print_rows(ctx, get(s, "workers"), N_OF(heads), heads, right, worker_row, NULL);
}

static void
summary_head(struct ctl_ctx *ctx, const json_t *s)
{
	const json_t *health = get(s, "health"), *cfg = get(s, "config");
	const json_t *act = get(s, "actions"), *refusal = get(cfg, "last_refusal");
	bool ok = strcmp(str(health, "status"), "ok") == 0;
	char up[CTL_FMT_LEN], when[CTL_FMT_LEN];
	size_t i;
	json_t *v;

	fprintf(ctx->out,
		"dpmon %s, up %s, snapshot %" JSON_INTEGER_FORMAT " (interval %.3f s), health ",
		str(s, "version"), ctl_fmt_duration(up, num(s, "uptime_s")),
		json_integer_value(get(s, "snapshot_seq")), num(s, "interval_s"));
	ctl_put(ctx->out, ctx->colour, ok ? CTL_GREEN : CTL_RED, str(health, "status"));
	fputc('\n', ctx->out);
	json_array_foreach(get(health, "reasons"), i, v)
	{
		fputs("  ", ctx->out);
		ctl_put(ctx->out, ctx->colour, CTL_RED, json_string_value(v));
		fputc('\n', ctx->out);
	}
	fprintf(ctx->out,
		"subnets %" JSON_INTEGER_FORMAT ", hosts %" JSON_INTEGER_FORMAT
		", blackholes %" JSON_INTEGER_FORMAT ", reloads %" JSON_INTEGER_FORMAT
		" applied / %" JSON_INTEGER_FORMAT " failed\n",
		json_integer_value(get(s, "subnets")), json_integer_value(get(s, "hosts")),
		json_integer_value(get(act, "blackholes")), json_integer_value(get(cfg, "reloads")),
		json_integer_value(get(cfg, "reload_failures")));
	if (json_is_object(refusal))
		fprintf(ctx->out, "last refused reload: %s UTC, %s: %s\n",
			ctl_fmt_time(when, num(refusal, "unix_s")), str(refusal, "file"),
			str(refusal, "reason"));
}

int
ctl_cmd_summary(struct ctl_ctx *ctx, int argc, char **argv)
{
	struct ctl_reply r;
	json_t *s, *e;
	size_t i;
	int rc = no_args(ctx, "summary", argc);

	(void)argv;
	if (rc != 0 || (rc = ctl_call(ctx, "GET", "/api/v1/summary", NULL, NULL, &r, &s)) != 0)
		return rc;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
	} else {
		summary_head(ctx, s);
		fputc('\n', ctx->out);
		rc = summary_traffic(ctx, s);
		fputc('\n', ctx->out);
		rc = rc ? rc : summary_ports(ctx, s);
		fputc('\n', ctx->out);
		rc = rc ? rc : summary_workers(ctx, s);
		fputc('\n', ctx->out);
		print_nonzero(ctx, "parse errors", get(s, "parse_errors"));
		print_nonzero(ctx, "anomalies", get(s, "anomalies"));
		json_array_foreach(get(s, "exporters"), i, e)
		{
			fprintf(ctx->out,
				"exporter %s: rows %" JSON_INTEGER_FORMAT
				", failures %" JSON_INTEGER_FORMAT ", spool %" JSON_INTEGER_FORMAT
				" batches%s%s\n",
				str(e, "name"), json_integer_value(get(e, "rows")),
				json_integer_value(get(e, "failures")),
				json_integer_value(get(e, "spool_depth")),
				json_is_string(get(e, "last_error")) ? ", last error: " : "",
				json_is_string(get(e, "last_error")) ? str(e, "last_error") : "");
		}
	}
	json_decref(s);
	ctl_reply_free(&r);
	return rc;
}

/* ------------------------------------------------------------------------
 * top and subnets: one row per host or subnet
 * --------------------------------------------------------------------- */

/* A host of top; arg: whether the direction shown is egress. */
static int
host_row(const json_t *host, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	const json_t *in = get(host, "ingress"), *eg = get(host, "egress");
	const json_t *d = *(const bool *)arg ? eg : in;

	row[0] = str(host, "address");
	row[1] = str(host, "subnet");
	row[2] = unit(c[2], in, "pps", "pps");
	row[3] = unit(c[3], in, "bps", "bps");
	row[4] = unit(c[4], eg, "pps", "pps");
	row[5] = unit(c[5], eg, "bps", "bps");
	row[6] = count(c[6], d, "packets");
	row[7] = unit(c[7], d, "bytes", "B");
	row[8] = count(c[8], d, "flows");
	row[9] = count(c[9], d, "peers");
	return CTL_PLAIN;
}

static int
subnet_row(const json_t *sn, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	const json_t *in = get(sn, "ingress"), *eg = get(sn, "egress");
	const char *name = str(sn, "name");

	(void)arg;
	row[0] = str(sn, "prefix");
	row[1] = name[0] ? name : "-";
	row[2] = unit(c[2], in, "pps", "pps");
	row[3] = unit(c[3], in, "bps", "bps");
	row[4] = unit(c[4], eg, "pps", "pps");
	row[5] = unit(c[5], eg, "bps", "bps");
	row[6] = count(c[6], in, "packets");
	row[7] = unit(c[7], in, "bytes", "B");
	row[8] = count(c[8], eg, "packets");
	row[9] = unit(c[9], eg, "bytes", "B");
	return CTL_PLAIN;
}

int
ctl_cmd_top(struct ctl_ctx *ctx, int argc, char **argv)
{
	static const char *const heads_in[] = {"ADDRESS",  "SUBNET",  "IN PPS",     "IN BPS",
					       "OUT PPS",  "OUT BPS", "IN PACKETS", "IN BYTES",
					       "IN FLOWS", "IN PEERS"};
	static const char *const heads_out[] = {"ADDRESS",   "SUBNET",   "IN PPS",      "IN BPS",
						"OUT PPS",   "OUT BPS",  "OUT PACKETS", "OUT BYTES",
						"OUT FLOWS", "OUT PEERS"};
	static const bool right[] = {false, false, true, true, true, true, true, true, true, true};
	const char *dir = ctx->direction ? ctx->direction : "ingress";
	const char *sort = ctx->sort ? ctx->sort : "bps";
	bool egress = strcmp(dir, "egress") == 0;
	char *path = NULL, *subnet = NULL;
	struct ctl_reply r;
	json_t *doc;
	int rc = no_args(ctx, "top", argc);

	(void)argv;
	if (rc != 0)
		return rc;
	if (ctx->subnet != NULL && (subnet = ctl_http_escape(&ctx->http, ctx->subnet)) == NULL)
		goto nomem;
	if (asprintf(&path, "/api/v1/hosts?sort=%s&direction=%s&limit=%u%s%s", sort, dir,
		     ctx->limit, subnet ? "&subnet=" : "", subnet ? subnet : "") < 0) {
		path = NULL;
		goto nomem;
	}
	rc = ctl_call(ctx, "GET", path, NULL, NULL, &r, &doc);
	free(path);
	free(subnet);
	if (rc != 0)
		return rc;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
		goto out;
	}
	fprintf(ctx->out,
		"top %zu of %" JSON_INTEGER_FORMAT
		" hosts%s%s by %s %s, snapshot %" JSON_INTEGER_FORMAT "\n",
		json_array_size(get(doc, "hosts")), json_integer_value(get(doc, "total")),
		ctx->subnet ? " of " : "", ctx->subnet ? ctx->subnet : "", sort, dir,
		json_integer_value(get(doc, "snapshot_seq")));
	rc = ctl_print_rows(ctx, get(doc, "hosts"), N_OF(right), egress ? heads_out : heads_in,
			    right, host_row, &egress);
out:
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
nomem:
	free(subnet);
	fprintf(ctx->err, "dpmonctl: out of memory\n");
	return CTL_EXIT_ERROR;
}

int
ctl_cmd_subnets(struct ctl_ctx *ctx, int argc, char **argv)
{
	static const char *const heads[] = {"PREFIX",      "NAME",     "IN PPS",     "IN BPS",
					    "OUT PPS",     "OUT BPS",  "IN PACKETS", "IN BYTES",
					    "OUT PACKETS", "OUT BYTES"};
	static const bool right[] = {false, false, true, true, true, true, true, true, true, true};
	struct ctl_reply r;
	json_t *doc;
	int rc = no_args(ctx, "subnets", argc);

	(void)argv;
	if (rc != 0 || (rc = ctl_call(ctx, "GET", "/api/v1/subnets", NULL, NULL, &r, &doc)) != 0)
		return rc;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
		goto out;
	}
	rc = ctl_print_rows(ctx, get(doc, "subnets"), N_OF(heads), heads, right, subnet_row, NULL);
out:
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
}

/* ------------------------------------------------------------------------
 * host
 * --------------------------------------------------------------------- */

static int
host_tables(struct ctl_ctx *ctx, const json_t *host)
{
	static const char *const heads[] = {"DIRECTION", "PACKETS", "BYTES", "PPS",  "BPS",
					    "AVG PPS",   "AVG BPS", "FLOWS", "PEERS"};
	static const bool right[] = {false, true, true, true, true, true, true, true, true};
	static const char *const pheads[] = {"DIRECTION", "CLASS", "PACKETS",
					     "BYTES",     "PPS",   "BPS"};
	static const bool pright[] = {false, false, true, true, true, true};
	static const char *const dirs[] = {"ingress", "egress"};
	static const char *const classes[] = {"tcp",   "udp",       "icmp",
					      "other", "fragments", "tcp_syn"};
	struct ctl_table *t = ctl_table_new(N_OF(heads), heads, right);
	struct ctl_table *p = ctl_table_new(N_OF(pheads), pheads, pright);
	int failed = 0, rc;

	for (size_t i = 0; t && p && i < N_OF(dirs); i++) {
		const json_t *d = get(host, dirs[i]);
		char c[8][CTL_FMT_LEN];
		const char *row[] = {dirs[i],
				     count(c[0], d, "packets"),
				     unit(c[1], d, "bytes", "B"),
				     unit(c[2], d, "pps", "pps"),
				     unit(c[3], d, "bps", "bps"),
				     unit(c[4], d, "avg_pps", "pps"),
				     unit(c[5], d, "avg_bps", "bps"),
				     count(c[6], d, "flows"),
				     count(c[7], d, "peers")};

		failed |= ctl_table_add(t, row, CTL_PLAIN);
		for (size_t k = 0; k < N_OF(classes); k++) {
			const json_t *pc = get(d, classes[k]);
			const char *prow[] = {dirs[i],
					      classes[k],
					      count(c[0], pc, "packets"),
					      unit(c[1], pc, "bytes", "B"),
					      unit(c[2], pc, "pps", "pps"),
					      unit(c[3], pc, "bps", "bps")};

			failed |= ctl_table_add(p, prow, CTL_PLAIN);
		}
	}
	rc = table_done(ctx, t, failed || p == NULL);
	if (rc == 0) {
		fputc('\n', ctx->out);
		return table_done(ctx, p, failed);
	}
	ctl_table_free(p);
	return rc;
}

int
ctl_cmd_host(struct ctl_ctx *ctx, int argc, char **argv)
{
	char first[CTL_FMT_LEN], last[CTL_FMT_LEN];
	struct ctl_reply r;
	json_t *host;
	int rc;

	if (argc != 1) {
		fprintf(ctx->err, "dpmonctl: host takes one ADDRESS (dpmonctl --help)\n");
		return CTL_EXIT_USAGE;
	}
	rc = ctl_call(ctx, "GET", "/api/v1/hosts", argv[0], NULL, &r, &host);
	if (rc != 0)
		return rc;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
	} else {
		fprintf(ctx->out, "host %s in %s, first seen %s UTC, last seen %s UTC\n\n",
			str(host, "address"), str(host, "subnet"),
			ctl_fmt_time(first, num(host, "first_seen")),
			ctl_fmt_time(last, num(host, "last_seen")));
		rc = host_tables(ctx, host);
	}
	json_decref(host);
	ctl_reply_free(&r);
	return rc;
}

/* ------------------------------------------------------------------------
 * alerts
 * --------------------------------------------------------------------- */

/* An alert's value in the unit of its metric (pps, bps, or a plain count). */
static char *
metric_value(char *buf, const char *metric, double v)
{
	size_t n = strlen(metric);

	if (n >= 3 && strcmp(metric + n - 3, "pps") == 0)
		return ctl_fmt_unit(buf, v, "pps");
	if (n >= 3 && strcmp(metric + n - 3, "bps") == 0)
		return ctl_fmt_unit(buf, v, "bps");
	return ctl_fmt_unit(buf, v, "");
}

/* An alert, red while active. */
static int
alert_row(const json_t *a, const void *arg, char c[][CTL_CELL_LEN], const char **row)
{
	bool host = strcmp(str(a, "target"), "host") == 0;
	const char *metric = str(a, "metric");

	(void)arg;
	row[0] = count(c[0], a, "id");
	row[1] = str(a, "state");
	row[2] = str(a, "target");
	row[3] = str(a, host ? "address" : "prefix");
	row[4] = str(a, "direction");
	row[5] = str(a, "type");
	row[6] = metric;
	row[7] = metric_value(c[7], metric, num(a, "value"));
	row[8] = metric_value(c[8], metric, num(a, "threshold"));
	row[9] = ctl_fmt_time(c[9], num(a, "start_unix_s"));
	row[10] = ctl_fmt_duration(c[10], num(a, "duration_s"));
	return strcmp(str(a, "state"), "active") == 0 ? CTL_RED : CTL_PLAIN;
}

int
ctl_cmd_alerts(struct ctl_ctx *ctx, int argc, char **argv)
{
	static const char *const heads[] = {"ID",        "STATE", "TARGET",  "ADDRESS",
					    "DIRECTION", "TYPE",  "METRIC",  "VALUE",
					    "THRESHOLD", "START", "DURATION"};
	static const bool right[] = {true,  false, false, false, false, false,
				     false, true,  true,  false, true};
	struct ctl_reply r;
	json_t *doc;
	int rc = no_args(ctx, "alerts", argc);

	(void)argv;
	if (rc != 0 ||
	    (rc = ctl_call(ctx, "GET",
			   ctx->active ? "/api/v1/alerts?state=active" : "/api/v1/alerts", NULL,
			   NULL, &r, &doc)) != 0)
		return rc;
	if (ctx->json) {
		ctl_print_body(ctx, &r);
		goto out;
	}
	fprintf(ctx->out,
		"%zu of %" JSON_INTEGER_FORMAT " %salerts shown; %" JSON_INTEGER_FORMAT
		" active, %" JSON_INTEGER_FORMAT " started since dpmon started\n",
		json_array_size(get(doc, "alerts")), json_integer_value(get(doc, "total")),
		ctx->active ? "active " : "", json_integer_value(get(doc, "active")),
		json_integer_value(get(doc, "started")));
	if (json_array_size(get(doc, "alerts")) == 0)
		goto out;
	rc = ctl_print_rows(ctx, get(doc, "alerts"), N_OF(heads), heads, right, alert_row, NULL);
out:
	json_decref(doc);
	ctl_reply_free(&r);
	return rc;
}
