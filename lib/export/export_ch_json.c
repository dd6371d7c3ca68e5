/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_ch_json.c — ClickHouse rows as JSONEachRow (export_ch.h): one
 * JSON object per line, the columns by name; chosen with
 * export.clickhouse.format "JSONEachRow" (RowBinary is the default).
 */
#include "export_ch.h"

#include <stdlib.h>
#include <string.h>

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

void
ch_json_head(struct xbuf *b, const struct export_interval *iv)
{
	xbuf_puts(b, "{\"instance\":");
	put_str(b, iv->instance);
	put_u64(b, "time", (uint64_t)iv->unix_s);
	put_u64(b, "seq", iv->seq);
	put_double(b, "interval_s", iv->interval_s);
}

/* The counts columns of row @p r (export_counts); flows null when not measured. */
static void
put_counts(struct xbuf *b, const struct export_interval *iv, const struct export_row *r)
{
	struct export_count col[EXPORT_COUNTS];

	export_counts(iv, r, col);
	for (unsigned i = 0; i < EXPORT_COUNTS - 1; i++) {
		if (col[i].real)
			put_double(b, col[i].name, col[i].f);
		else
			put_u64(b, col[i].name, col[i].u);
	}
	put_measured(b, col[EXPORT_COUNTS - 1].name, col[EXPORT_COUNTS - 1].f);
}

void
ch_json_row(void *ctx, const struct export_interval *iv, const struct export_row *r)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[r->table];
	struct xbuf *b = &p->body;

	xbuf_put(b, cx->head.p, cx->head.len);
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

void
ch_json_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a, bool end,
	      const struct export_row *counts)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[EXPORT_ALERTS];
	struct xbuf *b = &p->body;
	char addr[DPMON_PREFIX_STRLEN], pfx[DPMON_PREFIX_STRLEN] = "";
	char *fp;

	if (a->target == DPMON_TARGET_SUBNET)
		dpmon_prefix_format(&a->prefix, pfx, sizeof(pfx));
	dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr));
	xbuf_put(b, cx->head.p, cx->head.len);
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
	fp = export_alert_fingerprint(a);
	if (fp == NULL && a->fingerprint != NULL)
		b->oom = true; /* the batch is encoded again with the next interval */
	put_key(b, "fingerprint");
	put_str(b, fp != NULL ? fp : "");
	free(fp);
	xbuf_puts(b, "}\n");
	p->rows++;
}
