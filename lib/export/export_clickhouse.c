/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_clickhouse.c — the ClickHouse backend: the schema (created when
 * missing, printed by `dpmon --print-schema clickhouse`) and one
 * `INSERT INTO db.table (columns) FORMAT RowBinary` (or JSONEachRow) per
 * table and interval, through ClickHouse's HTTP interface
 * (export_private.h, docs/export.md).
 *
 * RowBinary is the default because it is the cheapest for both ends: a
 * row is its columns' values back to back, little-endian, with no text
 * to format or parse (a JSONEachRow row costs the exporter about four
 * times as much CPU). The column list comes from the schema's own text,
 * so the two cannot disagree on the order.
 *
 * The SQL is what ClickHouse 18.16 (Debian 12's) accepts: no
 * LowCardinality (experimental there), no DateTime64, no TTL clause (it
 * came in 19.6), so the TTL is emitted only when ttl_days is set.
 */
#include "export_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>

/* ------------------------------------------------------------------------
 * Schema.
 * --------------------------------------------------------------------- */

/* The columns every table of counts has after its own. */
static const char counts_columns[] =
	"    packets UInt64,\n    bytes UInt64,\n"
	"    tcp_packets UInt64,\n    tcp_bytes UInt64,\n"
	"    udp_packets UInt64,\n    udp_bytes UInt64,\n"
	"    icmp_packets UInt64,\n    icmp_bytes UInt64,\n"
	"    other_packets UInt64,\n    other_bytes UInt64,\n"
	"    fragments UInt64,\n    tcp_syn UInt64,\n"
	"    pps Float64,\n    bps Float64,\n    avg_pps Float64,\n    avg_bps Float64,\n"
	"    flows Nullable(Float64)";

static const char dir2[] = "Enum8('ingress' = 1, 'egress' = 2)";

struct table_def {
	const char *name;
	const char *own;       /* columns before the counts */
	const char *more;      /* after them ("" = none) */
	bool counts;           /* the counts columns */
	const char *partition; /* PARTITION BY */
	const char *order;     /* ORDER BY */
};

static const struct table_def tables[EXPORT_TABLES] = {
	[EXPORT_TOTALS] = {"totals",
			   "    direction Enum8('ingress' = 1, 'egress' = 2, 'internal' = 3, "
			   "'external' = 4),\n",
			   "", true, "toYYYYMM(time)", "(instance, direction, time)"},
	[EXPORT_SUBNETS] = {"subnets",
			    "    direction DIR2,\n    prefix String,\n    name String,\n", "", true,
			    "toYYYYMM(time)", "(instance, prefix, direction, time)"},
	[EXPORT_HOSTS] = {"hosts",
			  "    direction DIR2,\n    address String,\n    subnet String,\n"
			  "    name String,\n",
			  ",\n    peers Nullable(Float64)", true, "toYYYYMMDD(time)",
			  "(instance, subnet, address, direction, time)"},
	[EXPORT_ALERTS] = {"alerts",
			   "    event Enum8('start' = 1, 'end' = 2),\n    id UInt64,\n"
			   "    target Enum8('host' = 1, 'subnet' = 2),\n    direction DIR2,\n"
			   "    address String,\n    subnet String,\n    metric String,\n"
			   "    value Float64,\n    threshold Float64,\n    type String,\n"
			   "    hostgroup String,\n    start_time DateTime,\n"
			   "    duration_s Float64,\n    peak_pps Float64,\n    peak_bps Float64,\n"
			   "    peak_flows Float64,\n",
			   "", true, "toYYYYMM(time)", "(instance, time, id)"},
};

/* @p text with every "DIR2" replaced by the two-direction enum. */
static void
put_cols(struct xbuf *b, const char *text)
{
	const char *p;

	while ((p = strstr(text, "DIR2")) != NULL) {
		xbuf_put(b, text, (size_t)(p - text));
		xbuf_puts(b, dir2);
		text = p + 4;
	}
	xbuf_puts(b, text);
}

/* The common head of every table's columns. */
static void
put_columns(struct xbuf *b, const struct table_def *t)
{
	xbuf_puts(b, " (\n    instance String,\n    time DateTime,\n    seq UInt64,\n"
		     "    interval_s Float64,\n");
	put_cols(b, t->own);
	if (t->counts)
		xbuf_puts(b, counts_columns);
	xbuf_puts(b, t->more);
	xbuf_puts(b, "\n)");
}

/* PARTITION BY, ORDER BY and the TTL when one is set. */
static void
put_keys(struct xbuf *b, const struct dpmon_export_sink_conf *sc, const struct table_def *t)
{
	xbuf_puts(b, "\nPARTITION BY ");
	xbuf_puts(b, t->partition);
	xbuf_puts(b, "\nORDER BY ");
	xbuf_puts(b, t->order);
	if (sc->ttl_days > 0) {
		xbuf_puts(b, "\nTTL time + INTERVAL ");
		xbuf_u64(b, sc->ttl_days);
		xbuf_puts(b, " DAY");
	}
}

/* The statement creating table @p t on one server, without a ';'. */
static void
put_table(struct xbuf *b, const struct dpmon_export_sink_conf *sc, const struct table_def *t)
{
	xbuf_puts(b, "CREATE TABLE IF NOT EXISTS ");
	xbuf_puts(b, sc->database);
	xbuf_putc(b, '.');
	xbuf_puts(b, t->name);
	put_columns(b, t);
	xbuf_puts(b, "\nENGINE = MergeTree()");
	put_keys(b, sc, t);
}

/* Table @p t on every node of @p cluster, and the Distributed table over them. */
static void
put_cluster_table(struct xbuf *b, const struct dpmon_export_sink_conf *sc,
		  const struct table_def *t, const char *cluster)
{
	const char *db = sc->database;

	xbuf_puts(b, "CREATE TABLE IF NOT EXISTS ");
	xbuf_puts(b, db);
	xbuf_putc(b, '.');
	xbuf_puts(b, t->name);
	xbuf_puts(b, "_local ON CLUSTER ");
	xbuf_puts(b, cluster);
	put_columns(b, t);
	xbuf_puts(b, "\nENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/");
	xbuf_puts(b, db);
	xbuf_putc(b, '/');
	xbuf_puts(b, t->name);
	xbuf_puts(b, "', '{replica}')");
	put_keys(b, sc, t);
	xbuf_puts(b, ";\n\n");
	xbuf_puts(b, "CREATE TABLE IF NOT EXISTS ");
	xbuf_puts(b, db);
	xbuf_putc(b, '.');
	xbuf_puts(b, t->name);
	xbuf_puts(b, " ON CLUSTER ");
	xbuf_puts(b, cluster);
	xbuf_puts(b, " AS ");
	xbuf_puts(b, db);
	xbuf_putc(b, '.');
	xbuf_puts(b, t->name);
	xbuf_puts(b, "_local\nENGINE = Distributed(");
	xbuf_puts(b, cluster);
	xbuf_puts(b, ", ");
	xbuf_puts(b, db);
	xbuf_puts(b, ", ");
	xbuf_puts(b, t->name);
	xbuf_puts(b, "_local, cityHash64(instance))");
}

/*
 * The column after @p at in put_columns' text (one column per line,
 * "    name Type,"): its name (@p n bytes) and its definition ("name
 * Type", @p def bytes). @return where the next search starts, or NULL
 * when there is none.
 */
static const char *
next_column(const char *at, const char **name, size_t *n, size_t *def)
{
	while (at != NULL && *at != '\0') {
		const char *line = at + strspn(at, "\n");
		const char *eol = strchr(line, '\n');

		at = eol;
		if (strncmp(line, "    ", 4) != 0)
			continue;
		*name = line + 4;
		*n = strcspn(*name, " ");
		*def = strcspn(*name, "\n");
		if (*def > 0 && (*name)[*def - 1] == ',')
			(*def)--;
		return at != NULL ? at : line + 4 + strlen(line + 4);
	}
	return NULL;
}

/* "instance, time, ...": the names of table @p t's columns in the schema's order. */
static void
put_column_names(struct xbuf *b, const struct table_def *t)
{
	struct xbuf cols = {0};
	const char *at, *name;
	size_t n, def;
	bool first = true;

	put_columns(&cols, t);
	xbuf_putc(&cols, '\0');
	for (at = cols.oom ? NULL : cols.p; (at = next_column(at, &name, &n, &def)) != NULL;) {
		if (!first)
			xbuf_puts(b, ", ");
		xbuf_put(b, name, n);
		first = false;
	}
	if (cols.oom)
		b->oom = true;
	xbuf_free(&cols);
}

static bool
is_identifier(const char *s)
{
	if (s == NULL || s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

int
export_clickhouse_schema(const struct dpmon_export_sink_conf *sc, const char *cluster,
			 struct xbuf *out)
{
	if (cluster != NULL && !is_identifier(cluster))
		return -EINVAL;
	xbuf_puts(out, "CREATE DATABASE IF NOT EXISTS ");
	xbuf_puts(out, sc->database);
	if (cluster != NULL) {
		xbuf_puts(out, " ON CLUSTER ");
		xbuf_puts(out, cluster);
	}
	xbuf_puts(out, ";\n\n");
	for (int t = 0; t < EXPORT_TABLES; t++) {
		if (cluster != NULL)
			put_cluster_table(out, sc, &tables[t], cluster);
		else
			put_table(out, sc, &tables[t]);
		xbuf_puts(out, ";\n\n");
	}
	return out->oom ? -ENOMEM : 0;
}

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
 * The type system.columns gives column @p name (@p n bytes) in @p tsv
 * (lines "name<TAB>type", TSV: a backslash escapes the next byte, as in
 * "Enum8(\\'ingress\\' = 1)"), unescaped into @p out (@p size bytes);
 * false when the table has no such column. A column name needs no
 * escaping ([a-z_]).
 */
static bool
tsv_type(const char *tsv, size_t tsv_len, const char *name, size_t n, char *out, size_t size)
{
	const char *p = tsv, *end = tsv + tsv_len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t line = eol != NULL ? (size_t)(eol - p) : (size_t)(end - p);

		if (line > n && memcmp(p, name, n) == 0 && p[n] == '\t') {
			size_t k = 0;

			for (const char *c = p + n + 1; c < p + line && k + 1 < size; c++) {
				if (*c == '\\' && c + 1 < p + line) {
					c++;
					out[k++] = *c == 't' ? '\t' : *c == 'n' ? '\n' : *c;
				} else
					out[k++] = *c;
			}
			out[k] = '\0';
			return true;
		}
		p += line + 1;
	}
	return false;
}

/*
 * Check table @p t against the schema: a column dpmon writes whose type
 * differs is an error (RowBinary would store its bytes as the wrong type:
 * a UInt64 read as a Float64, an Enum8 by number). With @p add, the
 * columns it lacks (a table an older dpmon created) are added; without,
 * they are left to the INSERT to refuse. ClickHouse 18.16 has no ADD
 * COLUMN IF NOT EXISTS: the columns come from system.columns first.
 */
static int
check_columns(struct export_sink *s, const struct table_def *t, bool add, char *err, size_t errlen)
{
	struct xbuf q = {0}, have = {0}, cols = {0}, alter = {0};
	const char *at, *name;
	char type[160];
	size_t n, def;
	int rc, missing = 0;

	xbuf_puts(&q, "SELECT name, type FROM system.columns WHERE database = '");
	xbuf_puts(&q, s->sc->database); /* a name: [A-Za-z0-9_] (config_export.c) */
	xbuf_puts(&q, "' AND table = '");
	xbuf_puts(&q, t->name);
	xbuf_puts(&q, "' FORMAT TSV");
	rc = q.oom ? -1 : run_sql(s, q.p, q.len, &have, err, errlen);
	put_columns(&cols, t);
	xbuf_putc(&cols, '\0');
	xbuf_puts(&alter, "ALTER TABLE ");
	xbuf_puts(&alter, s->sc->database);
	xbuf_putc(&alter, '.');
	xbuf_puts(&alter, t->name);
	for (at = rc == 0 && !cols.oom ? cols.p : NULL;
	     (at = next_column(at, &name, &n, &def)) != NULL;) {
		const char *want = name + n + 1;
		size_t wlen = def - n - 1;

		bool found = tsv_type(have.p, have.len, name, n, type, sizeof(type));

		if (found && (strlen(type) != wlen || memcmp(type, want, wlen) != 0)) {
			snprintf(err, errlen, "%s.%s.%.*s is %s where dpmon writes %.*s",
				 s->sc->database, t->name, (int)n, name, type, (int)wlen, want);
			rc = -1;
			break;
		}
		if (found || !add)
			continue;
		xbuf_puts(&alter, missing++ ? ", ADD COLUMN " : " ADD COLUMN ");
		xbuf_put(&alter, name, def);
	}
	if (rc == 0 && (cols.oom || alter.oom)) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	if (rc == 0 && missing > 0)
		rc = run_sql(s, alter.p, alter.len, NULL, err, errlen);
	xbuf_free(&q);
	xbuf_free(&have);
	xbuf_free(&cols);
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
			put_table(&b, s->sc, &tables[t]);
			rc = b.oom ? -1 : run_sql(s, b.p, b.len, NULL, err, errlen);
		}
		if (rc == 0)
			rc = check_columns(s, &tables[t], create, err, errlen);
	}
	if (b.oom)
		snprintf(err, errlen, "out of memory");
	xbuf_free(&b);
	return rc;
}

/* The INSERT statement of part @p table (its text ends with a NUL). */
static void
put_insert(struct xbuf *b, const struct dpmon_export_sink_conf *sc, enum export_table table)
{
	xbuf_puts(b, "INSERT INTO ");
	xbuf_puts(b, sc->database);
	xbuf_putc(b, '.');
	xbuf_puts(b, export_table_name(table));
	if (sc->format == DPMON_CH_FORMAT_JSONEACHROW) {
		xbuf_puts(b, " FORMAT JSONEachRow");
	} else {
		xbuf_puts(b, " (");
		put_column_names(b, &tables[table]);
		xbuf_puts(b, ") FORMAT RowBinary");
	}
	xbuf_putc(b, '\0');
}

static int
ch_send(struct export_sink *s, const struct export_part *p, char *err, size_t errlen)
{
	struct xbuf sql = {0}, url = {0};
	int rc;

	put_insert(&sql, s->sc, p->table);
	rc = sql.oom ? -ENOMEM : query_url(s, sql.p, &url);
	xbuf_free(&sql);
	if (rc == 0)
		rc = export_http_post(s, url.p, p->body.p, p->body.len, NULL, true, err, errlen);
	else
		snprintf(err, errlen, "out of memory");
	xbuf_free(&url);
	return rc;
}

/* ------------------------------------------------------------------------
 * Rows: JSONEachRow.
 * --------------------------------------------------------------------- */

/* A JSON string (RFC 8259 section 7). */
static void
put_str(struct xbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	xbuf_putc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t n = strcspn(s, "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"
				      "\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"
				      "\x1b\x1c\x1d\x1e\x1f");

		if (n > 0) { /* a run of plain bytes at once */
			xbuf_put(b, s, n);
			s += n - 1;
			continue;
		}
		if (c == '"' || c == '\\') {
			xbuf_putc(b, '\\');
			xbuf_putc(b, (char)c);
		} else if (c < 0x20) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

			xbuf_put(b, e, sizeof(e));
		} else
			xbuf_putc(b, (char)c);
	}
	xbuf_putc(b, '"');
}

static void
put_key(struct xbuf *b, const char *key)
{
	xbuf_puts(b, ",\"");
	xbuf_puts(b, key);
	xbuf_puts(b, "\":");
}

static void
put_u64(struct xbuf *b, const char *key, uint64_t v)
{
	put_key(b, key);
	xbuf_u64(b, v);
}

static void
put_double(struct xbuf *b, const char *key, double v)
{
	put_key(b, key);
	xbuf_double(b, v);
}

/* @p v, or null when negative (not measured). */
static void
put_measured(struct xbuf *b, const char *key, double v)
{
	put_key(b, key);
	if (v < 0)
		xbuf_puts(b, "null");
	else
		xbuf_double(b, v);
}

/* {"instance":...,"time":...,"seq":...,"interval_s":... (the same in every row of a batch) */
static void
make_head(struct xbuf *b, const struct export_interval *iv)
{
	xbuf_puts(b, "{\"instance\":");
	put_str(b, iv->instance);
	put_u64(b, "time", (uint64_t)iv->unix_s);
	put_u64(b, "seq", iv->seq);
	put_double(b, "interval_s", iv->interval_s);
}

static void
put_counts(struct xbuf *b, const struct export_interval *iv, const struct export_row *r)
{
	static const char *const pk[DPMON_PROTO_MAX] = {"tcp_packets", "udp_packets",
							"icmp_packets", "other_packets"};
	static const char *const bk[DPMON_PROTO_MAX] = {"tcp_bytes", "udp_bytes", "icmp_bytes",
							"other_bytes"};
	const struct export_delta *d = r->d;
	double is = iv->interval_s > 0 ? iv->interval_s : 1;

	put_u64(b, "packets", d->packets);
	put_u64(b, "bytes", d->bytes);
	for (int k = 0; k < DPMON_PROTO_MAX; k++) {
		put_u64(b, pk[k], d->proto_packets[k]);
		put_u64(b, bk[k], d->proto_bytes[k]);
	}
	put_u64(b, "fragments", d->fragments);
	put_u64(b, "tcp_syn", d->tcp_syn);
	put_double(b, "pps", (double)d->packets / is);
	put_double(b, "bps", (double)d->bytes * 8.0 / is);
	put_double(b, "avg_pps", r->avg_pps);
	put_double(b, "avg_bps", r->avg_bps);
	put_measured(b, "flows", r->flows);
}

/* What the rows of one batch are written with. */
struct ch_ctx {
	struct export_batch *bt;
	struct xbuf head; /* make_head's text, or rb_head's bytes */
};

static void
put_head(struct xbuf *b, const struct ch_ctx *c)
{
	xbuf_put(b, c->head.p, c->head.len);
}

static void
json_row(void *ctx, const struct export_interval *iv, const struct export_row *r)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[r->table];
	struct xbuf *b = &p->body;

	put_head(b, cx);
	put_key(b, "direction");
	put_str(b, r->direction);
	if (r->table == EXPORT_SUBNETS) {
		put_key(b, "prefix");
		put_str(b, r->prefix);
		put_key(b, "name");
		put_str(b, r->name);
	} else if (r->table == EXPORT_HOSTS) {
		put_key(b, "address");
		put_str(b, r->address);
		put_key(b, "subnet");
		put_str(b, r->prefix);
		put_key(b, "name");
		put_str(b, r->name);
	}
	put_counts(b, iv, r);
	if (r->table == EXPORT_HOSTS)
		put_measured(b, "peers", r->peers);
	xbuf_puts(b, "}\n");
	p->rows++;
}

static void
json_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a, bool end,
	   const struct export_row *counts)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[EXPORT_ALERTS];
	struct xbuf *b = &p->body;
	char addr[DPMON_PREFIX_STRLEN], pfx[DPMON_PREFIX_STRLEN] = "";

	if (a->target == DPMON_TARGET_SUBNET)
		dpmon_prefix_format(&a->prefix, pfx, sizeof(pfx));
	dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr));
	put_head(b, cx);
	put_key(b, "event");
	put_str(b, end ? "end" : "start");
	put_u64(b, "id", a->id);
	put_key(b, "target");
	put_str(b, a->target == DPMON_TARGET_SUBNET ? "subnet" : "host");
	put_key(b, "direction");
	put_str(b, dpmon_dir_name(a->dir));
	put_key(b, "address");
	put_str(b, a->target == DPMON_TARGET_SUBNET ? "" : addr);
	put_key(b, "subnet");
	put_str(b, pfx);
	put_key(b, "metric");
	put_str(b, dpmon_metric_name(a->metric));
	put_double(b, "value", a->value);
	put_double(b, "threshold", a->threshold);
	put_key(b, "type");
	put_str(b, dpmon_attack_name(a->type));
	put_key(b, "hostgroup");
	put_str(b, a->hostgroup);
	put_u64(b, "start_time", (uint64_t)a->start_unix_s);
	put_double(b, "duration_s", end ? a->end_unix_s - a->start_unix_s : 0);
	put_double(b, "peak_pps", a->peak[DPMON_METRIC_PPS]);
	put_double(b, "peak_bps", a->peak[DPMON_METRIC_BPS]);
	put_double(b, "peak_flows", a->peak[DPMON_METRIC_FLOWS]);
	put_counts(b, iv, counts);
	xbuf_puts(b, "}\n");
	p->rows++;
}

/* ------------------------------------------------------------------------
 * Rows: RowBinary.
 *
 * Each column as ClickHouse's RowBinary format has it: UInt64 and
 * Float64 as 8 little-endian bytes, DateTime as a UInt32 (Unix seconds),
 * Enum8 as its Int8 value, String as its length in unsigned LEB128 then
 * its bytes, Nullable(T) as one byte (1 = NULL) then T unless NULL.
 * Written by hand into room reserved once per row: this loop runs for
 * every active host of every interval.
 * --------------------------------------------------------------------- */

/* Bytes of a string column: at most 5 of length, then the text. */
#define RB_STR_MAX(n) ((n) + 5)

static char *
rb_u64(char *o, uint64_t v)
{
	v = rte_cpu_to_le_64(v);
	memcpy(o, &v, 8);
	return o + 8;
}

static char *
rb_u32(char *o, uint32_t v)
{
	v = rte_cpu_to_le_32(v);
	memcpy(o, &v, 4);
	return o + 4;
}

/* A Float64; NaN and infinities as 0, as in the JSON rows. */
static char *
rb_f64(char *o, double v)
{
	uint64_t u;

	if (!isfinite(v))
		v = 0;
	memcpy(&u, &v, 8);
	return rb_u64(o, u);
}

/* A Nullable(Float64): NULL when @p v is negative (not measured). */
static char *
rb_measured(char *o, double v)
{
	*o++ = v < 0;
	return v < 0 ? o : rb_f64(o, v);
}

static char *
rb_str(char *o, const char *s, size_t n)
{
	size_t len = n;

	do {
		*o++ = (char)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
		len >>= 7;
	} while (len != 0);
	memcpy(o, s, n);
	return o + n;
}

/* instance, time, seq, interval_s: the same bytes in every row of a batch. */
static void
rb_head(struct xbuf *b, const struct export_interval *iv)
{
	size_t n = strlen(iv->instance);
	char *o = xbuf_reserve(b, RB_STR_MAX(n) + 4 + 8 + 8), *start = o;

	if (o == NULL)
		return;
	o = rb_str(o, iv->instance, n);
	o = rb_u32(o, (uint32_t)iv->unix_s);
	o = rb_u64(o, iv->seq);
	o = rb_f64(o, iv->interval_s);
	b->len += (size_t)(o - start);
}

/* The columns of counts_columns, in its order. */
static char *
rb_counts(char *o, const struct export_interval *iv, const struct export_row *r)
{
	const struct export_delta *d = r->d;
	double is = iv->interval_s > 0 ? iv->interval_s : 1;

	o = rb_u64(o, d->packets);
	o = rb_u64(o, d->bytes);
	for (int k = 0; k < DPMON_PROTO_MAX; k++) {
		o = rb_u64(o, d->proto_packets[k]);
		o = rb_u64(o, d->proto_bytes[k]);
	}
	o = rb_u64(o, d->fragments);
	o = rb_u64(o, d->tcp_syn);
	o = rb_f64(o, (double)d->packets / is);
	o = rb_f64(o, (double)d->bytes * 8.0 / is);
	o = rb_f64(o, r->avg_pps);
	o = rb_f64(o, r->avg_bps);
	return rb_measured(o, r->flows);
}

/* Bytes of rb_counts at most: 12 UInt64, 4 Float64, a Nullable(Float64). */
#define RB_COUNTS_MAX ((12 + 4) * 8 + 9)

static void
rb_row(void *ctx, const struct export_interval *iv, const struct export_row *r)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[r->table];
	size_t la = strlen(r->address), lp = strlen(r->prefix), ln = strlen(r->name);
	char *o = xbuf_reserve(&p->body, cx->head.len + 1 + RB_STR_MAX(la) + RB_STR_MAX(lp) +
						 RB_STR_MAX(ln) + RB_COUNTS_MAX + 9);
	char *start = o;

	if (o == NULL)
		return;
	memcpy(o, cx->head.p, cx->head.len);
	o += cx->head.len;
	*o++ = (char)(r->dir + 1); /* the Enum8 values count from 1 */
	if (r->table == EXPORT_SUBNETS) {
		o = rb_str(o, r->prefix, lp);
		o = rb_str(o, r->name, ln);
	} else if (r->table == EXPORT_HOSTS) {
		o = rb_str(o, r->address, la);
		o = rb_str(o, r->prefix, lp);
		o = rb_str(o, r->name, ln);
	}
	o = rb_counts(o, iv, r);
	if (r->table == EXPORT_HOSTS)
		o = rb_measured(o, r->peers);
	p->body.len += (size_t)(o - start);
	p->rows++;
}

/* A string column of an alert: @p s's length, room for it reserved by rb_alert. */
static char *
rb_cstr(char *o, const char *s)
{
	return rb_str(o, s, strlen(s));
}

static void
rb_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a, bool end,
	 const struct export_row *counts)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[EXPORT_ALERTS];
	char addr[DPMON_PREFIX_STRLEN], pfx[DPMON_PREFIX_STRLEN] = "";
	const char *metric = dpmon_metric_name(a->metric), *type = dpmon_attack_name(a->type);
	bool subnet = a->target == DPMON_TARGET_SUBNET;
	char *o, *start;

	if (subnet)
		dpmon_prefix_format(&a->prefix, pfx, sizeof(pfx));
	dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr));
	o = xbuf_reserve(&p->body,
			 cx->head.len + 3 + 8 + RB_STR_MAX(sizeof(addr)) + RB_STR_MAX(sizeof(pfx)) +
				 RB_STR_MAX(strlen(metric)) + RB_STR_MAX(strlen(type)) +
				 RB_STR_MAX(strlen(a->hostgroup)) + 4 + 6 * 8 + RB_COUNTS_MAX);
	if (o == NULL)
		return;
	start = o;
	memcpy(o, cx->head.p, cx->head.len);
	o += cx->head.len;
	*o++ = (char)(end ? 2 : 1);
	o = rb_u64(o, a->id);
	*o++ = (char)(subnet ? 2 : 1);
	*o++ = (char)(a->dir + 1);
	o = rb_cstr(o, subnet ? "" : addr);
	o = rb_cstr(o, pfx);
	o = rb_cstr(o, metric);
	o = rb_f64(o, a->value);
	o = rb_f64(o, a->threshold);
	o = rb_cstr(o, type);
	o = rb_cstr(o, a->hostgroup);
	o = rb_u32(o, (uint32_t)a->start_unix_s);
	o = rb_f64(o, end ? a->end_unix_s - a->start_unix_s : 0);
	o = rb_f64(o, a->peak[DPMON_METRIC_PPS]);
	o = rb_f64(o, a->peak[DPMON_METRIC_BPS]);
	o = rb_f64(o, a->peak[DPMON_METRIC_FLOWS]);
	o = rb_counts(o, iv, counts);
	p->body.len += (size_t)(o - start);
	p->rows++;
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
	struct export_encoder enc = {
		.row = json ? json_row : rb_row, .alert = json ? json_alert : rb_alert, .ctx = &cx};
	int rc;

	if (json)
		make_head(&cx.head, iv);
	else
		rb_head(&cx.head, iv);
	if (cx.head.oom) {
		xbuf_free(&cx.head);
		return -ENOMEM;
	}
	b->n_parts = EXPORT_TABLES;
	for (int t = 0; t < EXPORT_TABLES; t++)
		b->part[t].table = (enum export_table)t;
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
