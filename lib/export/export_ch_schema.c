/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_ch_schema.c — the ClickHouse schema (export_ch.h): the tables'
 * DDL (single server and cluster form, printed by `dpmon --print-schema
 * clickhouse`), the column list of an INSERT, and the check of a table's
 * columns against what dpmon writes. Text only: export_clickhouse.c runs
 * the statements.
 *
 * The SQL is what ClickHouse 18.16 (Debian 12's) accepts: no
 * LowCardinality (experimental there), no DateTime64, no TTL clause (it
 * came in 19.6), so the TTL is emitted only when ttl_days is set.
 */
#include "export_ch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
			   ",\n    fingerprint String", true, "toYYYYMM(time)",
			   "(instance, time, id)"},
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

void
ch_put_column_names(struct xbuf *b, enum export_table table)
{
	const struct table_def *t = &tables[table];
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

void
ch_put_table(struct xbuf *b, const struct dpmon_export_sink_conf *sc, enum export_table table)
{
	put_table(b, sc, &tables[table]);
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

void
ch_put_columns_query(struct xbuf *b, const struct dpmon_export_sink_conf *sc,
		     enum export_table table)
{
	xbuf_puts(b, "SELECT name, type FROM system.columns WHERE database = '");
	xbuf_puts(b, sc->database); /* a name: [A-Za-z0-9_] (config_export.c) */
	xbuf_puts(b, "' AND table = '");
	xbuf_puts(b, tables[table].name);
	xbuf_puts(b, "' FORMAT TSV");
}

/*
 * Whether @p tsv is an answer to ch_put_columns_query's query: lines
 * "name<TAB>type", each ending with a newline (none for a table that does
 * not exist); a name has no space or '<'. A 2xx answer that is not one
 * (a proxy's page) must not pass for a table without columns.
 */
static bool
columns_answer(const char *tsv, size_t tsv_len)
{
	const char *p = tsv, *end = tsv + tsv_len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t line = eol != NULL ? (size_t)(eol - p) : (size_t)(end - p);
		size_t name = 0;

		while (name < line && p[name] != '\t' && p[name] != ' ' && p[name] != '<')
			name++;
		if (name == 0 || name + 1 >= line || p[name] != '\t' || eol == NULL)
			return false;
		p += line + 1;
	}
	return true;
}

int
ch_check_columns(const struct dpmon_export_sink_conf *sc, enum export_table table,
		 const struct xbuf *have, bool add, struct xbuf *alter, char *err, size_t errlen)
{
	const struct table_def *t = &tables[table];
	struct xbuf cols = {0};
	const char *at, *name;
	char type[160];
	size_t n, def;
	int rc = 0, missing = 0;

	alter->len = 0;
	if (!columns_answer(have->p, have->len)) {
		snprintf(err, errlen,
			 "the answer to the columns query of %s.%s is not ClickHouse's",
			 sc->database, t->name);
		return -1;
	}
	put_columns(&cols, t);
	xbuf_putc(&cols, '\0');
	xbuf_puts(alter, "ALTER TABLE ");
	xbuf_puts(alter, sc->database);
	xbuf_putc(alter, '.');
	xbuf_puts(alter, t->name);
	for (at = !cols.oom ? cols.p : NULL; (at = next_column(at, &name, &n, &def)) != NULL;) {
		const char *want = name + n + 1;
		size_t wlen = def - n - 1;

		bool found = tsv_type(have->p, have->len, name, n, type, sizeof(type));

		if (found && (strlen(type) != wlen || memcmp(type, want, wlen) != 0)) {
			snprintf(err, errlen, "%s.%s.%.*s is %s where dpmon writes %.*s",
				 sc->database, t->name, (int)n, name, type, (int)wlen, want);
			rc = -1;
			break;
		}
		if (found || !add)
			continue;
		xbuf_puts(alter, missing++ ? ", ADD COLUMN " : " ADD COLUMN ");
		xbuf_put(alter, name, def);
	}
	if (rc == 0 && (cols.oom || alter->oom)) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	if (missing == 0)
		alter->len = 0;
	xbuf_free(&cols);
	return rc;
}
