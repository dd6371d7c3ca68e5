/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_influx.c — the InfluxDB backend: each interval's rows as points
 * of the line protocol, in one request per interval to the 1.x API
 * (`POST /write?db=DB&precision=ms`, basic authentication) or the 2.x API
 * (`POST /api/v2/write?org=ORG&bucket=BUCKET&precision=ms`,
 * `Authorization: Token ...`) (export_private.h, docs/export.md).
 *
 * Measurements totals, subnets, hosts and alerts; tags instance,
 * direction, prefix/subnet, address (an empty tag value is left out, as
 * the line protocol requires); counts are integer fields.
 */
#include "export_private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Line protocol.
 * --------------------------------------------------------------------- */

/* A tag key=value pair, ',' first; commas, spaces and '=' escaped. */
static void
put_tag(struct xbuf *b, const char *key, const char *v)
{
	if (v == NULL || v[0] == '\0')
		return;
	xbuf_putc(b, ',');
	xbuf_puts(b, key);
	xbuf_putc(b, '=');
	for (; *v; v++) {
		if (*v == ',' || *v == ' ' || *v == '=')
			xbuf_putc(b, '\\');
		xbuf_putc(b, *v == '\n' ? ' ' : *v);
	}
}

/* A field, ',' first unless @p first. */
static void
put_fkey(struct xbuf *b, const char *key, bool first)
{
	if (!first)
		xbuf_putc(b, ',');
	xbuf_puts(b, key);
	xbuf_putc(b, '=');
}

static void
put_int(struct xbuf *b, const char *key, uint64_t v, bool first)
{
	put_fkey(b, key, first);
	xbuf_u64(b, v);
	xbuf_putc(b, 'i');
}

static void
put_float(struct xbuf *b, const char *key, double v)
{
	put_fkey(b, key, false);
	xbuf_double(b, v);
}

static void
put_string(struct xbuf *b, const char *key, const char *v)
{
	put_fkey(b, key, false);
	xbuf_putc(b, '"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			xbuf_putc(b, '\\');
		xbuf_putc(b, *v);
	}
	xbuf_putc(b, '"');
}

/* The point's timestamp, milliseconds, and its newline. */
static void
put_time(struct xbuf *b, const struct export_interval *iv)
{
	xbuf_putc(b, ' ');
	xbuf_u64(b, (uint64_t)(iv->unix_s * 1000.0));
	xbuf_putc(b, '\n');
}

/* The counts of row @p r as fields, the first of the point's field set. */
static void
put_counts(struct xbuf *b, const struct export_interval *iv, const struct export_row *r)
{
	struct export_count col[EXPORT_COUNTS];

	export_counts(iv, r, col);
	for (unsigned i = 0; i < EXPORT_COUNTS; i++) {
		if (!col[i].real)
			put_int(b, col[i].name, col[i].u, i == 0);
		else if (i < EXPORT_COUNTS - 1 || col[i].f >= 0) /* flows: when measured */
			put_float(b, col[i].name, col[i].f);
	}
	if (r->peers >= 0)
		put_float(b, "peers", r->peers);
}

static void
ix_row(void *ctx, const struct export_interval *iv, const struct export_row *r)
{
	struct export_part *p = ctx;
	struct xbuf *b = &p->body;

	xbuf_puts(b, export_table_name(r->table));
	put_tag(b, "instance", iv->instance);
	put_tag(b, "direction", r->direction);
	if (r->table == EXPORT_SUBNETS) {
		put_tag(b, "prefix", r->prefix);
		put_tag(b, "name", r->name);
	} else if (r->table == EXPORT_HOSTS) {
		put_tag(b, "address", r->address);
		put_tag(b, "subnet", r->prefix);
	}
	xbuf_putc(b, ' ');
	put_counts(b, iv, r);
	put_float(b, "interval_s", iv->interval_s);
	put_int(b, "seq", iv->seq, false);
	put_time(b, iv);
	p->rows++;
}

static void
ix_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a, bool end,
	 const struct export_row *counts)
{
	struct export_part *p = ctx;
	struct xbuf *b = &p->body;
	char addr[DPMON_PREFIX_STRLEN], pfx[DPMON_PREFIX_STRLEN] = "";

	if (a->target == DPMON_TARGET_SUBNET)
		dpmon_prefix_format(&a->prefix, pfx, sizeof(pfx));
	dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr));
	xbuf_puts(b, "alerts");
	put_tag(b, "instance", iv->instance);
	put_tag(b, "event", end ? "end" : "start");
	put_tag(b, "target", a->target == DPMON_TARGET_SUBNET ? "subnet" : "host");
	put_tag(b, "direction", dpmon_dir_name(a->dir));
	put_tag(b, "address", a->target == DPMON_TARGET_SUBNET ? "" : addr);
	put_tag(b, "subnet", pfx);
	xbuf_putc(b, ' ');
	put_counts(b, iv, counts);
	put_int(b, "id", a->id, false);
	put_string(b, "metric", dpmon_metric_name(a->metric));
	put_float(b, "value", a->value);
	put_float(b, "threshold", a->threshold);
	put_string(b, "type", dpmon_attack_name(a->type));
	put_float(b, "duration_s", end ? a->end_unix_s - a->start_unix_s : 0);
	put_float(b, "peak_pps", a->peak[DPMON_METRIC_PPS]);
	put_float(b, "peak_bps", a->peak[DPMON_METRIC_BPS]);
	put_time(b, iv);
	p->rows++;
}

static int
ix_encode(struct export_sink *s, const struct dpmon_snapshot *cur,
	  const struct dpmon_snapshot *prev, const struct export_interval *iv,
	  struct export_batch *b)
{
	struct export_encoder enc = {.row = ix_row, .alert = ix_alert, .ctx = &b->part[0]};
	int rc;

	b->n_parts = 1;
	b->part[0].table = EXPORT_TOTALS;
	rc = export_rows_walk(cur, prev, s->sc->top_hosts, iv, &enc);
	if (b->part[0].body.oom)
		rc = -ENOMEM;
	return rc;
}

/* ------------------------------------------------------------------------
 * Requests.
 * --------------------------------------------------------------------- */

/* The server's URL without its trailing '/', then @p path. */
static void
base_url(const struct export_sink *s, const char *path, struct xbuf *url)
{
	size_t n = strlen(s->sc->url);

	while (n > 0 && s->sc->url[n - 1] == '/')
		n--;
	xbuf_put(url, s->sc->url, n);
	xbuf_puts(url, path);
}

/* 1.x: CREATE DATABASE (idempotent). An answer that refuses it (no admin
 * rights) is logged by the caller and the writes go on: the database may
 * exist already. */
static int
ix_prepare(struct export_sink *s, char *err, size_t errlen)
{
	struct xbuf url = {0}, body = {0};
	char *q;
	int rc;

	if (s->sc->api == 2)
		return 0;
	base_url(s, "/query", &url);
	xbuf_putc(&url, '\0');
	xbuf_puts(&body, "q=");
	q = curl_easy_escape(s->curl, "CREATE DATABASE ", 0);
	if (q != NULL)
		xbuf_puts(&body, q);
	curl_free(q);
	xbuf_puts(&body, s->sc->database);
	rc = url.oom || body.oom
		     ? -1
		     : export_http_post(s, url.p, body.p, body.len, NULL, true, false, err, errlen);
	if (rc != 0 && strncmp(err, "HTTP ", 5) == 0)
		rc = 0; /* the server answers: the writes will tell */
	xbuf_free(&url);
	xbuf_free(&body);
	return rc;
}

static int
ix_send(struct export_sink *s, const struct export_part *p, char *err, size_t errlen)
{
	struct xbuf url = {0}, auth = {0};
	struct curl_slist *h = NULL;
	char *e1 = NULL, *e2 = NULL;
	int rc = -1;

	if (p->rows == 0)
		return 0;
	if (s->sc->api == 2) {
		e1 = curl_easy_escape(s->curl, s->sc->org, 0);
		e2 = curl_easy_escape(s->curl, s->sc->bucket, 0);
		base_url(s, "/api/v2/write?org=", &url);
		xbuf_puts(&url, e1 ? e1 : "");
		xbuf_puts(&url, "&bucket=");
		xbuf_puts(&url, e2 ? e2 : "");
		xbuf_puts(&auth, "Authorization: Token ");
		xbuf_puts(&auth, s->secret);
		xbuf_putc(&auth, '\0');
		h = auth.oom ? NULL : curl_slist_append(NULL, auth.p);
	} else {
		base_url(s, "/write?db=", &url);
		xbuf_puts(&url, s->sc->database);
	}
	xbuf_puts(&url, "&precision=ms");
	xbuf_putc(&url, '\0');
	if (url.oom || (s->sc->api == 2 && h == NULL))
		snprintf(err, errlen, "out of memory");
	else
		rc = export_http_post(s, url.p, p->body.p, p->body.len, h, s->sc->api != 2, true,
				      err, errlen);
	curl_slist_free_all(h);
	curl_free(e1);
	curl_free(e2);
	xbuf_free(&url);
	xbuf_free(&auth);
	return rc;
}

const struct export_backend export_influx = {
	.name = "influxdb",
	.prepare = ix_prepare,
	.encode = ix_encode,
	.send = ix_send,
};
