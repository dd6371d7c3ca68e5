/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_ch_rowbinary.c — ClickHouse rows as RowBinary (export_ch.h), the
 * default: a row is its columns' values back to back in the schema's
 * order, with no text to format or parse (a JSONEachRow row costs the
 * exporter about four times as much CPU).
 *
 * Each column as ClickHouse's RowBinary format has it: UInt64 and
 * Float64 as 8 little-endian bytes, DateTime as a UInt32 (Unix seconds),
 * Enum8 as its Int8 value, String as its length in unsigned LEB128 then
 * its bytes, Nullable(T) as one byte (1 = NULL) then T unless NULL.
 * Written by hand into room reserved once per row: this loop runs for
 * every active host of every interval.
 */
#include "export_ch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

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

void
ch_rb_head(struct xbuf *b, const struct export_interval *iv)
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

void
ch_rb_row(void *ctx, const struct export_interval *iv, const struct export_row *r)
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

void
ch_rb_alert(void *ctx, const struct export_interval *iv, const struct dpmon_alert *a, bool end,
	    const struct export_row *counts)
{
	struct ch_ctx *cx = ctx;
	struct export_part *p = &cx->bt->part[EXPORT_ALERTS];
	char addr[DPMON_PREFIX_STRLEN], pfx[DPMON_PREFIX_STRLEN] = "";
	const char *metric = dpmon_metric_name(a->metric), *type = dpmon_attack_name(a->type);
	bool subnet = a->target == DPMON_TARGET_SUBNET;
	char *fp = export_alert_fingerprint(a);
	const char *fp_text = fp != NULL ? fp : "";
	char *o, *start;

	if (fp == NULL && a->fingerprint != NULL) {
		p->body.oom = true; /* the batch is encoded again with the next interval */
		return;
	}
	if (subnet)
		dpmon_prefix_format(&a->prefix, pfx, sizeof(pfx));
	dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr));
	o = xbuf_reserve(&p->body, cx->head.len + 3 + 8 + RB_STR_MAX(sizeof(addr)) +
					   RB_STR_MAX(sizeof(pfx)) + RB_STR_MAX(strlen(metric)) +
					   RB_STR_MAX(strlen(type)) +
					   RB_STR_MAX(strlen(a->hostgroup)) + 4 + 6 * 8 +
					   RB_COUNTS_MAX + RB_STR_MAX(strlen(fp_text)));
	if (o == NULL) {
		free(fp);
		return;
	}
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
	o = rb_cstr(o, fp_text);
	free(fp);
	p->body.len += (size_t)(o - start);
	p->rows++;
}
