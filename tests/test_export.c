/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_export.c — the exporters' deltas (lib/export/export_rows.c): each
 * row is a snapshot's counters minus the previous snapshot's, by address
 * and by prefix; a host that came back (another first_seen) starts from
 * zero, never a negative delta; a record shared by both snapshots has no
 * row; the top N hosts by bytes; the JSONEachRow and line-protocol text
 * of a row; and RowBinary rows, decoded with the column types of the
 * schema dpmon prints, so that the bytes and the DDL cannot drift apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export_ch.h"
#include "snap_fixture.h"

/* ------------------------------------------------------------------------
 * Collecting the rows.
 * --------------------------------------------------------------------- */

#define ROWS_MAX 64

struct row {
	enum export_table table;
	char direction[16], prefix[64], address[64];
	struct export_delta d;
};

struct rows {
	struct row r[ROWS_MAX];
	unsigned n;
};

static void
on_row(void *ctx, const struct export_interval *iv, const struct export_row *r)
{
	struct rows *rs = ctx;
	struct row *o;

	(void)iv;
	REQUIRE(rs->n < ROWS_MAX);
	o = &rs->r[rs->n++];
	o->table = r->table;
	snprintf(o->direction, sizeof(o->direction), "%s", r->direction);
	snprintf(o->prefix, sizeof(o->prefix), "%s", r->prefix);
	snprintf(o->address, sizeof(o->address), "%s", r->address);
	o->d = *r->d;
}

/* The row of @p table, @p direction and @p key (prefix or address), or NULL. */
static const struct row *
find(const struct rows *rs, enum export_table table, const char *direction, const char *key)
{
	for (unsigned i = 0; i < rs->n; i++) {
		const struct row *r = &rs->r[i];

		if (r->table == table && strcmp(r->direction, direction) == 0 &&
		    (key == NULL ||
		     strcmp(table == EXPORT_HOSTS ? r->address : r->prefix, key) == 0))
			return r;
	}
	return NULL;
}

static unsigned
count(const struct rows *rs, enum export_table table)
{
	unsigned n = 0;

	for (unsigned i = 0; i < rs->n; i++)
		n += rs->r[i].table == table;
	return n;
}

static void
walk(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev, uint32_t top,
     struct rows *rs)
{
	struct export_interval iv = {
		.instance = "t", .seq = cur->seq, .unix_s = 1e9, .interval_s = 1};
	struct export_encoder enc = {.row = on_row, .alert = NULL, .ctx = rs};

	memset(rs, 0, sizeof(*rs));
	REQUIRE(export_rows_walk(cur, prev, top, &iv, &enc) == 0);
}

/* ------------------------------------------------------------------------
 * Snapshots.
 * --------------------------------------------------------------------- */

static struct dpmon_dir_stats
udp(uint64_t packets, uint64_t bytes)
{
	return snap_dir(snap_rate(packets, bytes, 0, 0), DPMON_PROTO_UDP,
			snap_rate(packets, bytes, 0, 0));
}

/* First snapshot: 10.0.0.1 (10/1000 in, 5/500 out) and 10.0.0.2 (3/300 in). */
static struct dpmon_snapshot *
first(void)
{
	static const struct snap_subnet_spec subnets[] = {{"10.0.0.0/24", "a"},
							  {"10.0.1.0/24", "b"}};
	struct snap_host_spec hosts[] = {
		{"10.0.0.1", 0, udp(10, 1000), udp(5, 500)},
		{"10.0.0.2", 0, udp(3, 300), udp(0, 0)},
	};
	struct snap_spec spec = {
		.seq = 1, .subnets = subnets, .n_subnets = 2, .hosts = hosts, .n_hosts = 2};
	struct dpmon_snapshot *s = snap_build(&spec);

	s->uptime_s = 1;
	s->totals[DPMON_TOTAL_INGRESS] = udp(13, 1300);
	s->subnets[0].dir[DPMON_DIR_INGRESS] = udp(13, 1300);
	s->subnets[0].dir[DPMON_DIR_EGRESS] = udp(5, 500);
	for (uint32_t i = 0; i < s->n_hosts; i++)
		s->hosts[i].first_seen = 100;
	return s;
}

/*
 * Second: the subnets in another order; 10.0.0.1 +5/+500 in, egress
 * unchanged; 10.0.0.2 left and came back (2/200 since); 10.0.0.3 new.
 */
static struct dpmon_snapshot *
second(void)
{
	static const struct snap_subnet_spec subnets[] = {{"10.0.1.0/24", "b"},
							  {"10.0.0.0/24", "a"}};
	struct snap_host_spec hosts[] = {
		{"10.0.0.1", 1, udp(15, 1500), udp(5, 500)},
		{"10.0.0.2", 1, udp(2, 200), udp(0, 0)},
		{"10.0.0.3", 1, udp(0, 0), udp(4, 400)},
	};
	struct snap_spec spec = {
		.seq = 2, .subnets = subnets, .n_subnets = 2, .hosts = hosts, .n_hosts = 3};
	struct dpmon_snapshot *s = snap_build(&spec);

	s->uptime_s = 2;
	s->totals[DPMON_TOTAL_INGRESS] = udp(20, 2000);
	s->subnets[1].dir[DPMON_DIR_INGRESS] = udp(17, 1700);
	s->subnets[1].dir[DPMON_DIR_EGRESS] = udp(9, 900);
	s->hosts[0].first_seen = 100;
	s->hosts[1].first_seen = 200; /* came back */
	s->hosts[2].first_seen = 200;
	return s;
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

static void
check_delta(const struct row *r, uint64_t packets, uint64_t bytes)
{
	CHECK(r != NULL);
	if (r == NULL)
		return;
	CHECK_EQ_U64(r->d.packets, packets);
	CHECK_EQ_U64(r->d.bytes, bytes);
	CHECK_EQ_U64(r->d.proto_packets[DPMON_PROTO_UDP], packets);
	CHECK_EQ_U64(r->d.proto_bytes[DPMON_PROTO_UDP], bytes);
}

/* No previous snapshot: the counts since start. */
static void
test_first_interval(void)
{
	struct dpmon_snapshot *a = first();
	struct rows rs;

	walk(a, NULL, 0, &rs);
	CHECK(count(&rs, EXPORT_TOTALS) == DPMON_TOTAL_MAX);
	CHECK(count(&rs, EXPORT_SUBNETS) == 2 * DPMON_DIR_MAX);
	CHECK(count(&rs, EXPORT_HOSTS) == 3); /* 10.0.0.2 has no egress */
	check_delta(find(&rs, EXPORT_TOTALS, "ingress", NULL), 13, 1300);
	check_delta(find(&rs, EXPORT_SUBNETS, "ingress", "10.0.0.0/24"), 13, 1300);
	check_delta(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.1"), 10, 1000);
	check_delta(find(&rs, EXPORT_HOSTS, "egress", "10.0.0.1"), 5, 500);
	check_delta(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.2"), 3, 300);
	CHECK(find(&rs, EXPORT_HOSTS, "egress", "10.0.0.2") == NULL);
	dpmon_snapshot_free(a);
}

static void
test_deltas(void)
{
	struct dpmon_snapshot *a = first(), *b = second();
	struct rows rs;

	walk(b, a, 0, &rs);
	check_delta(find(&rs, EXPORT_TOTALS, "ingress", NULL), 7, 700);
	/* By prefix, though the subnets changed places. */
	check_delta(find(&rs, EXPORT_SUBNETS, "ingress", "10.0.0.0/24"), 4, 400);
	check_delta(find(&rs, EXPORT_SUBNETS, "egress", "10.0.0.0/24"), 4, 400);
	check_delta(find(&rs, EXPORT_SUBNETS, "ingress", "10.0.1.0/24"), 0, 0);
	check_delta(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.1"), 5, 500);
	CHECK(find(&rs, EXPORT_HOSTS, "egress", "10.0.0.1") == NULL); /* no traffic */
	/* Came back with fewer packets than before: its new counts, not 2 - 3. */
	check_delta(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.2"), 2, 200);
	check_delta(find(&rs, EXPORT_HOSTS, "egress", "10.0.0.3"), 4, 400);
	CHECK(count(&rs, EXPORT_HOSTS) == 3);
	/* The hosts' subnet is the current snapshot's. */
	CHECK(strcmp(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.1")->prefix, "10.0.0.0/24") == 0);

	/* A host that came back with more packets than it had: still its own counts. */
	b->hosts[1].dir[DPMON_DIR_INGRESS] = udp(30, 3000);
	walk(b, a, 0, &rs);
	check_delta(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.2"), 30, 3000);
	dpmon_snapshot_free(a);
	dpmon_snapshot_free(b);
}

/* A record both snapshots share was not touched: no host row. */
static void
test_shared_records(void)
{
	struct dpmon_snapshot *b = second(), *c = second();
	struct rows rs;

	for (uint32_t i = 0; i < c->n_hosts; i++)
		c->host_at[i] = b->host_at[i];
	walk(c, b, 0, &rs);
	CHECK(count(&rs, EXPORT_HOSTS) == 0);
	check_delta(find(&rs, EXPORT_TOTALS, "ingress", NULL), 0, 0);
	for (uint32_t i = 0; i < c->n_hosts; i++)
		c->host_at[i] = &c->hosts[i];
	dpmon_snapshot_free(b);
	dpmon_snapshot_free(c);
}

/* "hosts": N keeps the N hosts with the most bytes of the interval. */
static void
test_top_hosts(void)
{
	struct dpmon_snapshot *a = first(), *b = second();
	struct rows rs;

	walk(b, a, 1, &rs); /* 10.0.0.1: 500 B, 10.0.0.3: 400, 10.0.0.2: 200 */
	CHECK(count(&rs, EXPORT_HOSTS) == 1);
	check_delta(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.1"), 5, 500);
	walk(b, a, 2, &rs);
	CHECK(count(&rs, EXPORT_HOSTS) == 2);
	CHECK(find(&rs, EXPORT_HOSTS, "egress", "10.0.0.3") != NULL);
	CHECK(find(&rs, EXPORT_HOSTS, "ingress", "10.0.0.2") == NULL);
	dpmon_snapshot_free(a);
	dpmon_snapshot_free(b);
}

static bool
starts_with(const char *s, const char *head)
{
	return strncmp(s, head, strlen(head)) == 0;
}

/* The text of one host row in each backend's format. */
static void
test_encodings(void)
{
	struct dpmon_snapshot *a = first();
	struct dpmon_export_conf conf;
	struct export_sink sink = {.conf = {{0}}};
	struct export_interval iv = {
		.instance = "pop1", .seq = 1, .unix_s = 1700000000.25, .interval_s = 0.5};
	struct export_batch b = {0}, l = {0};
	char *p;

	memset(&conf, 0, sizeof(conf));
	conf.sink[DPMON_EXPORT_CLICKHOUSE].format = DPMON_CH_FORMAT_JSONEACHROW;
	sink.sc = &conf.sink[DPMON_EXPORT_CLICKHOUSE];
	REQUIRE(export_clickhouse.encode(&sink, a, NULL, &iv, &b) == 0);
	p = b.part[EXPORT_HOSTS].body.p;
	REQUIRE(p != NULL);
	CHECK(starts_with(
		p, "{\"instance\":\"pop1\",\"time\":1700000000,\"seq\":1,\"interval_s\":0.5,"
		   "\"direction\":\"ingress\",\"address\":\"10.0.0.1\",\"subnet\":"
		   "\"10.0.0.0/24\",\"name\":\"a\",\"packets\":10,\"bytes\":1000,"
		   "\"tcp_packets\":0,\"tcp_bytes\":0,\"udp_packets\":10,\"udp_bytes\":1000,"));
	CHECK(strstr(p, "\"pps\":20,\"bps\":16000,") != NULL);
	CHECK(b.part[EXPORT_TOTALS].rows == DPMON_TOTAL_MAX);
	REQUIRE(export_influx.encode(&sink, a, NULL, &iv, &l) == 0);
	p = strstr(l.part[0].body.p, "hosts,");
	REQUIRE(p != NULL);
	CHECK(starts_with(
		p, "hosts,instance=pop1,direction=ingress,address=10.0.0.1,subnet=10.0.0.0/24 "
		   "packets=10i,bytes=1000i,"));
	CHECK(strstr(p, " 1700000000250\n") != NULL);
	for (int i = 0; i < EXPORT_TABLES; i++) {
		xbuf_free(&b.part[i].body);
		xbuf_free(&l.part[i].body);
	}
	dpmon_snapshot_free(a);
}

/* ------------------------------------------------------------------------
 * RowBinary, decoded by the schema's column types.
 * --------------------------------------------------------------------- */

#define COLS_MAX 48

/* One decoded column: its name, and its value as text ("NULL" for a NULL). */
struct rb_col {
	char name[32], type[96], value[96];
};

/* The columns of table @p table in the DDL @p ddl: name and type of each line. */
static unsigned
schema_columns(const char *ddl, const char *table, struct rb_col *cols)
{
	char head[64];
	const char *p, *end;
	unsigned n = 0;

	snprintf(head, sizeof(head), "dpmon.%s (\n", table);
	p = strstr(ddl, head);
	REQUIRE(p != NULL);
	p += strlen(head);
	end = strstr(p, "\n)");
	REQUIRE(end != NULL);
	while (p < end && n < COLS_MAX) {
		const char *eol = strchr(p, '\n');
		const char *type;
		int len;

		if (eol == NULL || eol > end)
			eol = end;
		REQUIRE(sscanf(p, " %31s", cols[n].name) == 1);
		type = p + strspn(p, " ") + strlen(cols[n].name) + 1;
		len = (int)(eol - type);
		if (len > 0 && type[len - 1] == ',')
			len--;
		snprintf(cols[n].type, sizeof(cols[n].type), "%.*s", len, type);
		n++;
		p = eol + 1;
	}
	return n;
}

static uint64_t
get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Row one of @p n columns from @p p (@p left bytes); @return bytes read, 0 when short. */
static size_t
rb_decode_row(const unsigned char *p, size_t left, struct rb_col *cols, unsigned n)
{
	size_t at = 0;

	for (unsigned c = 0; c < n; c++) {
		const char *t = cols[c].type;
		bool nullable = strncmp(t, "Nullable(", 9) == 0;

		if (nullable) {
			if (at + 1 > left)
				return 0;
			if (p[at++] == 1) {
				snprintf(cols[c].value, sizeof(cols[c].value), "NULL");
				continue;
			}
			t += 9;
		}
		if (strncmp(t, "UInt64", 6) == 0 || strncmp(t, "Float64", 7) == 0) {
			uint64_t v;
			double d;

			if (at + 8 > left)
				return 0;
			v = get_le(p + at, 8);
			at += 8;
			memcpy(&d, &v, 8);
			if (t[0] == 'U')
				snprintf(cols[c].value, sizeof(cols[c].value), "%llu",
					 (unsigned long long)v);
			else
				snprintf(cols[c].value, sizeof(cols[c].value), "%g", d);
		} else if (strncmp(t, "DateTime", 8) == 0) {
			if (at + 4 > left)
				return 0;
			snprintf(cols[c].value, sizeof(cols[c].value), "%llu",
				 (unsigned long long)get_le(p + at, 4));
			at += 4;
		} else if (strncmp(t, "Enum8(", 6) == 0) {
			/* Its name from the type: "Enum8('ingress' = 1, ...)". */
			char key[16];
			const char *q;

			if (at + 1 > left)
				return 0;
			snprintf(key, sizeof(key), "' = %d", (int)(signed char)p[at++]);
			q = strstr(t, key);
			REQUIRE(q != NULL);
			{
				const char *b = q;

				while (b > t && b[-1] != '\'')
					b--;
				snprintf(cols[c].value, sizeof(cols[c].value), "%.*s", (int)(q - b),
					 b);
			}
		} else if (strncmp(t, "String", 6) == 0) {
			uint64_t len = 0;
			int shift = 0;

			do {
				if (at + 1 > left)
					return 0;
				len |= (uint64_t)(p[at] & 0x7f) << shift;
				shift += 7;
			} while (p[at++] & 0x80);
			if (at + len > left)
				return 0;
			snprintf(cols[c].value, sizeof(cols[c].value), "%.*s", (int)len, p + at);
			at += len;
		} else {
			fprintf(stderr, "test_export: no decoder for type %s\n", t);
			CHECK(false);
			return 0;
		}
	}
	return at;
}

static const char *
col(const struct rb_col *cols, unsigned n, const char *name)
{
	for (unsigned c = 0; c < n; c++)
		if (strcmp(cols[c].name, name) == 0)
			return cols[c].value;
	return "(no such column)";
}

#define RB_ROWS_MAX 8

/* Every row of @p part: how many decode (the first RB_ROWS_MAX kept in
 * @p out), and the body ends with the last. */
static unsigned
rb_rows(const struct export_part *part, const char *ddl, struct rb_col (*out)[COLS_MAX],
	unsigned *ncols)
{
	struct rb_col cols[COLS_MAX];
	unsigned n = schema_columns(ddl, export_table_name(part->table), cols), rows = 0;
	size_t at = 0;

	*ncols = n;
	while (at < part->body.len) {
		size_t used = rb_decode_row((const unsigned char *)part->body.p + at,
					    part->body.len - at, cols, n);

		CHECK(used > 0);
		if (used == 0)
			break;
		if (rows < RB_ROWS_MAX)
			memcpy(out[rows], cols, sizeof(cols));
		at += used;
		rows++;
	}
	CHECK(at == part->body.len);
	return rows;
}

/* A ClickHouse sink of database "dpmon" with the defaults, and its schema's text in @p ddl. */
static void
ch_sink(struct dpmon_export_conf *conf, struct export_sink *sink, struct xbuf *ddl)
{
	memset(conf, 0, sizeof(*conf));
	snprintf(conf->sink[DPMON_EXPORT_CLICKHOUSE].database, DPMON_NAME_LEN, "dpmon");
	sink->sc = &conf->sink[DPMON_EXPORT_CLICKHOUSE];
	REQUIRE(export_clickhouse_schema(sink->sc, NULL, ddl) == 0);
	xbuf_putc(ddl, '\0');
}

static void
test_rowbinary(void)
{
	struct dpmon_snapshot *a = first();
	struct dpmon_export_conf conf;
	struct export_sink sink = {.conf = {{0}}};
	struct export_interval iv = {
		.instance = "pop1", .seq = 7, .unix_s = 1700000000.25, .interval_s = 0.5};
	struct export_batch b = {0};
	struct xbuf ddl = {0};
	struct rb_col rows[RB_ROWS_MAX][COLS_MAX], *cols = rows[0];
	unsigned n;

	ch_sink(&conf, &sink, &ddl);
	CHECK(sink.sc->format == DPMON_CH_FORMAT_ROWBINARY); /* the default */
	REQUIRE(export_clickhouse.encode(&sink, a, NULL, &iv, &b) == 0);
	/* Each part says its format: it is sent as encoded, whatever a reload sets. */
	for (int i = 0; i < EXPORT_TABLES; i++)
		CHECK(b.part[i].format == DPMON_CH_FORMAT_ROWBINARY);

	CHECK(rb_rows(&b.part[EXPORT_HOSTS], ddl.p, rows, &n) == 3);
	CHECK(strcmp(col(cols, n, "instance"), "pop1") == 0);
	CHECK(strcmp(col(cols, n, "time"), "1700000000") == 0);
	CHECK(strcmp(col(cols, n, "seq"), "7") == 0);
	CHECK(strcmp(col(cols, n, "interval_s"), "0.5") == 0);
	CHECK(strcmp(col(cols, n, "direction"), "ingress") == 0);
	CHECK(strcmp(col(cols, n, "address"), "10.0.0.1") == 0);
	CHECK(strcmp(col(cols, n, "subnet"), "10.0.0.0/24") == 0);
	CHECK(strcmp(col(cols, n, "name"), "a") == 0);
	CHECK(strcmp(col(cols, n, "packets"), "10") == 0);
	CHECK(strcmp(col(cols, n, "bytes"), "1000") == 0);
	CHECK(strcmp(col(cols, n, "udp_packets"), "10") == 0);
	CHECK(strcmp(col(cols, n, "udp_bytes"), "1000") == 0);
	CHECK(strcmp(col(cols, n, "tcp_bytes"), "0") == 0);
	CHECK(strcmp(col(cols, n, "pps"), "20") == 0);
	CHECK(strcmp(col(cols, n, "bps"), "16000") == 0);
	CHECK(strcmp(col(cols, n, "peers"), "NULL") == 0 ||
	      strtod(col(cols, n, "peers"), NULL) >= 0);

	CHECK(rb_rows(&b.part[EXPORT_TOTALS], ddl.p, rows, &n) == DPMON_TOTAL_MAX);
	CHECK(strcmp(col(cols, n, "direction"), "ingress") == 0);
	CHECK(strcmp(col(cols, n, "packets"), "13") == 0);
	CHECK(strcmp(col(cols, n, "bytes"), "1300") == 0);

	CHECK(rb_rows(&b.part[EXPORT_SUBNETS], ddl.p, rows, &n) == 4);
	CHECK(strcmp(col(cols, n, "prefix"), "10.0.0.0/24") == 0);
	CHECK(strcmp(col(cols, n, "name"), "a") == 0);
	CHECK(strcmp(col(cols, n, "direction"), "ingress") == 0);
	CHECK(strcmp(col(cols, n, "packets"), "13") == 0);

	for (int i = 0; i < EXPORT_TABLES; i++)
		xbuf_free(&b.part[i].body);
	xbuf_free(&ddl);
	dpmon_snapshot_free(a);
}

/*
 * Alert events carry their target's row of the interval: a host alert
 * that started (10.0.0.1 ingress: +5 packets, +500 bytes since the first
 * snapshot), and a subnet alert that started and ended in it (10.0.0.0/24
 * ingress: 13 -> 17 packets); RowBinary and JSONEachRow alike.
 */
static void
test_alert_rows(void)
{
	struct dpmon_snapshot *a = first(), *b2 = second();
	struct dpmon_alert host = {.id = 1,
				   .target = DPMON_TARGET_HOST,
				   .dir = DPMON_DIR_INGRESS,
				   .value = 5,
				   .threshold = 1,
				   .start_unix_s = 1700000000};
	struct dpmon_alert subnet = {.id = 2,
				     .target = DPMON_TARGET_SUBNET,
				     .dir = DPMON_DIR_INGRESS,
				     .value = 4,
				     .threshold = 1,
				     .start_unix_s = 1700000000,
				     .end_unix_s = 1700000001};
	struct dpmon_alert *list[2] = {&subnet, &host}; /* newest first */
	struct dpmon_export_conf conf;
	struct export_sink sink = {.conf = {{0}}};
	struct export_interval iv = {
		.instance = "pop1", .seq = 2, .unix_s = 1700000001, .interval_s = 1};
	struct export_batch bt = {0}, js = {0};
	struct xbuf ddl = {0};
	struct rb_col rows[RB_ROWS_MAX][COLS_MAX];
	unsigned n;

	REQUIRE(dpmon_addr_parse("10.0.0.1", &host.addr) == 0);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &subnet.prefix, NULL) == 0);
	/* The host alert's fingerprint goes into its rows as the API's JSON
	 * text; the subnet alert has none: "". */
	host.fingerprint = json_pack("{s:s,s:i}", "state", "ready", "packets", 500);
	REQUIRE(host.fingerprint != NULL);
	subnet.addr = subnet.prefix.addr;
	b2->alerts = list;
	b2->n_alerts = 2;
	ch_sink(&conf, &sink, &ddl);
	REQUIRE(export_clickhouse.encode(&sink, b2, a, &iv, &bt) == 0);
	CHECK(rb_rows(&bt.part[EXPORT_ALERTS], ddl.p, rows, &n) == 3);
	CHECK(strcmp(col(rows[0], n, "event"), "start") == 0);
	CHECK(strcmp(col(rows[0], n, "target"), "host") == 0);
	CHECK(strcmp(col(rows[0], n, "address"), "10.0.0.1") == 0);
	CHECK(strcmp(col(rows[0], n, "packets"), "5") == 0);
	CHECK(strcmp(col(rows[0], n, "bytes"), "500") == 0);
	CHECK(strcmp(col(rows[0], n, "udp_packets"), "5") == 0);
	CHECK(strcmp(col(rows[0], n, "pps"), "5") == 0);
	CHECK_EQ_STR(col(rows[0], n, "fingerprint"), "{\"state\":\"ready\",\"packets\":500}");
	CHECK_EQ_STR(col(rows[1], n, "fingerprint"), "");
	CHECK(strcmp(col(rows[1], n, "event"), "start") == 0);
	CHECK(strcmp(col(rows[1], n, "target"), "subnet") == 0);
	CHECK(strcmp(col(rows[1], n, "subnet"), "10.0.0.0/24") == 0);
	CHECK(strcmp(col(rows[1], n, "packets"), "4") == 0);
	CHECK(strcmp(col(rows[1], n, "bytes"), "400") == 0);
	CHECK(strcmp(col(rows[2], n, "event"), "end") == 0);
	CHECK(strcmp(col(rows[2], n, "duration_s"), "1") == 0);
	CHECK(strcmp(col(rows[2], n, "packets"), "4") == 0);

	conf.sink[DPMON_EXPORT_CLICKHOUSE].format = DPMON_CH_FORMAT_JSONEACHROW;
	REQUIRE(export_clickhouse.encode(&sink, b2, a, &iv, &js) == 0);
	REQUIRE(js.part[EXPORT_ALERTS].body.p != NULL);
	CHECK(js.part[EXPORT_ALERTS].format == DPMON_CH_FORMAT_JSONEACHROW);
	CHECK(js.part[EXPORT_ALERTS].rows == 3);
	CHECK(strstr(js.part[EXPORT_ALERTS].body.p,
		     "\"peak_flows\":0,\"packets\":5,\"bytes\":500,") != NULL);
	CHECK(strstr(js.part[EXPORT_ALERTS].body.p,
		     ",\"fingerprint\":\"{\\\"state\\\":\\\"ready\\\",\\\"packets\\\":500}\"}\n") !=
	      NULL);
	CHECK(strstr(js.part[EXPORT_ALERTS].body.p, ",\"fingerprint\":\"\"}\n") != NULL);

	for (int i = 0; i < EXPORT_TABLES; i++) {
		xbuf_free(&bt.part[i].body);
		xbuf_free(&js.part[i].body);
	}
	xbuf_free(&ddl);
	b2->alerts = NULL;
	b2->n_alerts = 0;
	json_decref(host.fingerprint);
	dpmon_snapshot_free(a);
	dpmon_snapshot_free(b2);
}

/*
 * The answer to the columns query: ClickHouse's TSV lines pass (none for
 * a missing table), a 2xx page from something else is refused rather
 * than taken for a table without columns; a missing column is added.
 */
static void
test_columns_answer(void)
{
	static const char *const bad[] = {
		"<html><body>Welcome</body></html>\n",
		"OK",
		"instance\tString", /* no newline: cut short */
		"\tString\n",
	};
	struct dpmon_export_conf conf;
	struct export_sink sink = {.conf = {{0}}};
	struct xbuf ddl = {0}, have = {0}, alter = {0};
	char err[192];

	ch_sink(&conf, &sink, &ddl);
	/* A table that does not exist: no line; every column to add. */
	CHECK(ch_check_columns(sink.sc, EXPORT_ALERTS, &have, true, &alter, err, sizeof(err)) == 0);
	xbuf_putc(&alter, '\0');
	CHECK(strstr(alter.p, " ADD COLUMN fingerprint String") != NULL);
	xbuf_puts(&have, "instance\tString\nid\tUInt64\n");
	CHECK(ch_check_columns(sink.sc, EXPORT_ALERTS, &have, true, &alter, err, sizeof(err)) == 0);
	CHECK(alter.len > 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		have.len = 0;
		xbuf_puts(&have, bad[i]);
		CHECK(ch_check_columns(sink.sc, EXPORT_HOSTS, &have, true, &alter, err,
				       sizeof(err)) == -1);
		CHECK_EQ_STR(err,
			     "the answer to the columns query of dpmon.hosts is not ClickHouse's");
	}
	xbuf_free(&have);
	xbuf_free(&alter);
	xbuf_free(&ddl);
}

int
main(void)
{
	test_first_interval();
	test_deltas();
	test_shared_records();
	test_top_hosts();
	test_encodings();
	test_rowbinary();
	test_alert_rows();
	test_columns_answer();
	return check_finish("test_export");
}
