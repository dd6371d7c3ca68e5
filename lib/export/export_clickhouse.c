/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_clickhouse.c — the ClickHouse backend (export_private.h,
 * docs/export.md): before the first batch the tables made when missing
 * and their columns checked, then per table and interval one
 * `INSERT INTO db.table (columns) FORMAT RowBinary` (or JSONEachRow)
 * through ClickHouse's HTTP interface. It owns the requests; the schema's
 * text (export_ch_schema.c) and the two row encoders (export_ch_json.c,
 * export_ch_rowbinary.c) are its leaves. The INSERT's column list comes
 * from the schema's own text, so the two cannot disagree on the order.
 */
#include "export_ch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Requests.
 * --------------------------------------------------------------------- */

/* The server's URL without its trailing '/', then "/?" and @p query escaped. */
static int
query_url(struct export_sink *s, const char *query, struct xbuf *url)
{
	size_t n = strlen(s->sc->url);
	char *q;

	while (n > 0 && s->sc->url[n - 1] == '/')
		n--;
	xbuf_put(url, s->sc->url, n);
	xbuf_puts(url, "/?query=");
	q = query != NULL ? curl_easy_escape(s->curl, query, 0) : NULL;
	if (query != NULL && q == NULL)
		return -ENOMEM;
	if (q != NULL)
		xbuf_puts(url, q);
	curl_free(q);
	xbuf_putc(url, '\0');
	return url->oom ? -ENOMEM : 0;
}

/* Run statement @p sql (the body; the URL has no query); its answer into
 * @p answer when not NULL. */
static int
run_sql(struct export_sink *s, const char *sql, size_t len, struct xbuf *answer, char *err,
	size_t errlen)
{
	struct xbuf url = {0};
	int rc = query_url(s, NULL, &url);

	if (rc == 0)
		rc = export_http_query(s, url.p, sql, len, answer, err, errlen);
	else
		snprintf(err, errlen, "out of memory");
	xbuf_free(&url);
	return rc;
}

/*
 * Check table @p table against the schema (ch_check_columns) from its
 * columns in system.columns; with @p add, add the columns it lacks.
 * ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the columns come from
 * system.columns first.
 */
static int
check_columns(struct export_sink *s, enum export_table table, bool add, char *err, size_t errlen)
{
	struct xbuf q = {0}, have = {0}, alter = {0};
	int rc;

	ch_put_columns_query(&q, s->sc, table);
	rc = q.oom ? -1 : run_sql(s, q.p, q.len, &have, err, errlen);
	if (rc == 0)
		rc = ch_check_columns(s->sc, table, &have, add, &alter, err, errlen);
	if (rc == 0 && alter.len > 0)
		rc = run_sql(s, alter.p, alter.len, NULL, err, errlen);
	if (q.oom && rc != 0)
		snprintf(err, errlen, "out of memory");
	xbuf_free(&q);
	xbuf_free(&have);
	xbuf_free(&alter);
	return rc;
}

/* Before the first batch: the database and the tables made when missing
 * (create_tables), and the tables' columns checked. */
static int
ch_prepare(struct export_sink *s, char *err, size_t errlen)
{
	struct xbuf b = {0};
	bool create = s->sc->create_tables;
	int rc = 0;

	if (create) {
		xbuf_puts(&b, "CREATE DATABASE IF NOT EXISTS ");
		xbuf_puts(&b, s->sc->database);
		rc = b.oom ? -1 : run_sql(s, b.p, b.len, NULL, err, errlen);
	}
	for (int t = 0; rc == 0 && t < EXPORT_TABLES; t++) {
		if (create) {
			b.len = 0;
			ch_put_table(&b, s->sc, (enum export_table)t);
			rc = b.oom ? -1 : run_sql(s, b.p, b.len, NULL, err, errlen);
		}
		if (rc == 0)
			rc = check_columns(s, (enum export_table)t, create, err, errlen);
	}
	if (b.oom)
		snprintf(err, errlen, "out of memory");
	xbuf_free(&b);
	return rc;
}

/* The INSERT statement of a part of @p table in @p format (its text ends with a NUL). */
static void
put_insert(struct xbuf *b, const struct dpmon_export_sink_conf *sc, enum export_table table,
	   uint8_t format)
{
	xbuf_puts(b, "INSERT INTO ");
	xbuf_puts(b, sc->database);
	xbuf_putc(b, '.');
	xbuf_puts(b, export_table_name(table));
	if (format == DPMON_CH_FORMAT_JSONEACHROW) {
		xbuf_puts(b, " FORMAT JSONEachRow");
	} else {
		xbuf_puts(b, " (");
		ch_put_column_names(b, table);
		xbuf_puts(b, ") FORMAT RowBinary");
	}
	xbuf_putc(b, '\0');
}

/* ClickHouse's error codes for what an INSERT names and the server lacks
 * (its src/Common/ErrorCodes.cpp), answered with HTTP 404. */
#define CH_UNKNOWN_TABLE    60
#define CH_UNKNOWN_DATABASE 81

/*
 * An INSERT's 404 of error @p err: when it says that the database or the
 * table is missing (dropped, or a server that came back empty), the
 * reason is rewritten to say so and what happens next, and -ENOENT is
 * returned (the backend prepares again before the next attempt: with
 * create_tables it makes them, otherwise it says what to run). @return
 * -ENOENT, or -1 for any other failure.
 */
static int
missing_table(struct export_sink *s, enum export_table table, char *err, size_t errlen)
{
	static const char what[] = "HTTP 404: Code: ";
	const char *next = s->sc->create_tables
				   ? "made again before the next attempt"
				   : "create_tables is false: run dpmon --print-schema clickhouse "
				     "| clickhouse-client --multiquery";
	int code;

	if (s->http_status != 404 || strncmp(err, what, sizeof(what) - 1) != 0)
		return -1;
	code = atoi(err + sizeof(what) - 1);
	if (code == CH_UNKNOWN_DATABASE)
		snprintf(err, errlen, "HTTP 404: Code: %d: database %s is missing; %s", code,
			 s->sc->database, next);
	else if (code == CH_UNKNOWN_TABLE)
		snprintf(err, errlen, "HTTP 404: Code: %d: table %s.%s is missing; %s", code,
			 s->sc->database, export_table_name(table), next);
	else
		return -1;
	return -ENOENT;
}

static int
ch_send(struct export_sink *s, const struct export_part *p, char *err, size_t errlen)
{
	struct xbuf sql = {0}, url = {0};
	int rc;

	put_insert(&sql, s->sc, p->table, p->format);
	rc = sql.oom ? -ENOMEM : query_url(s, sql.p, &url);
	xbuf_free(&sql);
	if (rc == 0) {
		rc = export_http_post(s, url.p, p->body.p, p->body.len, NULL, true, true, err,
				      errlen);
		if (rc != 0)
			rc = missing_table(s, p->table, err, errlen);
	} else {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	xbuf_free(&url);
	return rc;
}

/* ------------------------------------------------------------------------
 * The backend.
 * --------------------------------------------------------------------- */

static int
ch_encode(struct export_sink *s, const struct dpmon_snapshot *cur,
	  const struct dpmon_snapshot *prev, const struct export_interval *iv,
	  struct export_batch *b)
{
	bool json = s->sc->format == DPMON_CH_FORMAT_JSONEACHROW;
	struct ch_ctx cx = {.bt = b};
	struct export_encoder enc = {.row = json ? ch_json_row : ch_rb_row,
				     .alert = json ? ch_json_alert : ch_rb_alert,
				     .ctx = &cx};
	int rc;

	if (json)
		ch_json_head(&cx.head, iv);
	else
		ch_rb_head(&cx.head, iv);
	if (cx.head.oom) {
		xbuf_free(&cx.head);
		return -ENOMEM;
	}
	b->n_parts = EXPORT_TABLES;
	for (int t = 0; t < EXPORT_TABLES; t++) {
		b->part[t].table = (enum export_table)t;
		b->part[t].format = s->sc->format;
	}
	rc = export_rows_walk(cur, prev, s->sc->top_hosts, iv, &enc);
	xbuf_free(&cx.head);
	for (int t = 0; t < EXPORT_TABLES; t++) {
		if (b->part[t].body.oom)
			rc = -ENOMEM;
		/* Nothing to insert: nothing to send. */
		b->part[t].sent = b->part[t].rows == 0;
	}
	return rc;
}

const struct export_backend export_clickhouse = {
	.name = "clickhouse",
	.prepare = ch_prepare,
	.encode = ch_encode,
	.send = ch_send,
};
