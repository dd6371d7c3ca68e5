/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prom.c — the snapshot as Prometheus text exposition format 0.0.4.
 *
 * Design
 * ------
 *
 * The text is built in one growable buffer, family by family: a family is
 * one "# HELP" line, one "# TYPE" line and all of its samples, contiguous,
 * as the format requires (a name never appears in two places). Names are
 * in the dpmon_ namespace with base units: cumulative values are counters
 * ending in _total (_packets_total, _bytes_total, _seconds_total), rates
 * and levels are gauges (_per_second, _ratio, _seconds). bps in the
 * snapshot are bits per second; here they are bytes per second (bps / 8,
 * exact in binary floating point), the base unit.
 *
 * Cardinality is bounded by the configuration, never by traffic: totals,
 * ports, workers and parse reasons are fixed sets; hosts are limited to the
 * top N by cumulative bytes (ingress + egress, top.c: one pass,
 * O(hosts log N)), listed best first, ties by address so a scrape is
 * deterministic; subnets to the top M the same way (a heap, only when
 * there are more than M), listed in configuration order. Each subnet is
 * ~3 KB of text: all 65 536 a configuration may have would be ~200 MB.
 *
 * The writer appends bytes directly (memcpy of names and label text,
 * integers by hand; only a real that is not an integer below 2^53 goes
 * through snprintf), because a scrape is millions of short pieces: with
 * vsnprintf twice per piece, 65 536 subnets took 2.3 s to render.
 *
 * Reals are printed with %.17g, which round-trips a double, so a value
 * here equals the JSON API's value for the same snapshot exactly; NaN and
 * infinities (never expected) print as 0 like in the API. Label values are
 * escaped (backslash, double quote, newline). An allocation failure is
 * remembered in the buffer and reported once at the end.
 */
#include "prom.h"
#include "top.h"
#include "xbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DPMON_VERSION
#define DPMON_VERSION "0.0.0"
#endif

#define LABELS_MAX 512 /* one sample's label text (addresses, prefixes, names) */

/* The four values of a struct dpmon_rate, as metric name suffixes. */
enum field {
	F_PACKETS,
	F_BYTES,
	F_PPS,
	F_BYTES_PER_S,
	F_MAX
};

struct field_def {
	const char *suffix; /* appended to the family's prefix */
	const char *type;
	/* The help text is help_head, the family's own words, help_tail. */
	const char *help_head;
	const char *help_tail;
};

static const struct field_def fields[F_MAX] = {
	[F_PACKETS] = {"packets_total", "counter", "Packets ", ", cumulative since start."},
	[F_BYTES] = {"bytes_total", "counter", "Bytes ",
		     " (frame length as received: L2 header included, FCS excluded), "
		     "cumulative since start."},
	[F_PPS] = {"packets_per_second", "gauge", "Packets per second ",
		   " over the last merge interval."},
	[F_BYTES_PER_S] = {"bytes_per_second", "gauge", "Bytes per second ",
			   " over the last merge interval."},
};

/* ------------------------------------------------------------------------
 * Numbers and label values (the text buffer is xbuf.h).
 * --------------------------------------------------------------------- */

/*
 * Append @p v as "%.17g" prints it (17 significant digits, enough to read
 * back the same double, trailing zeros dropped). An integer below 2^53
 * (most of them: 0 for an idle series) prints as its decimal digits there,
 * so it takes xbuf_u64's path; -0 and everything else go through snprintf.
 */
static void
put_real(struct xbuf *b, double v)
{
	char t[32];
	int n;

	if (v >= 0 && v < 9007199254740992.0 && !signbit(v) && v == (double)(uint64_t)v) {
		xbuf_u64(b, (uint64_t)v);
		return;
	}
	n = snprintf(t, sizeof(t), "%.17g", v);
	if (n > 0)
		xbuf_put(b, t, (size_t)n < sizeof(t) ? (size_t)n : sizeof(t) - 1);
}

/* Append @p s (at most @p max bytes) escaped as a label value. */
static void
put_label_value(struct xbuf *b, const char *s, size_t max)
{
	size_t i = 0, run = 0;

	for (; i < max && s[i] != '\0'; i++) {
		if (s[i] != '\\' && s[i] != '"' && s[i] != '\n')
			continue;
		xbuf_put(b, s + run, i - run);
		xbuf_putc(b, '\\');
		xbuf_putc(b, s[i] == '\n' ? 'n' : s[i]);
		run = i + 1;
	}
	xbuf_put(b, s + run, i - run);
}

/* ------------------------------------------------------------------------
 * Families and samples.
 * --------------------------------------------------------------------- */

static void
family(struct xbuf *b, const char *name, const char *type, const char *help)
{
	xbuf_puts(b, "# HELP ");
	xbuf_puts(b, name);
	xbuf_putc(b, ' ');
	xbuf_puts(b, help);
	xbuf_puts(b, "\n# TYPE ");
	xbuf_puts(b, name);
	xbuf_putc(b, ' ');
	xbuf_puts(b, type);
	xbuf_putc(b, '\n');
}

/* A sample line up to its value: "name{labels} ", or "name " without labels. */
static void
sample_head(struct xbuf *b, const char *name, const char *labels)
{
	xbuf_puts(b, name);
	if (*labels) {
		xbuf_putc(b, '{');
		xbuf_puts(b, labels);
		xbuf_putc(b, '}');
	}
	xbuf_putc(b, ' ');
}

static void
sample_u64(struct xbuf *b, const char *name, const char *labels, uint64_t v)
{
	sample_head(b, name, labels);
	xbuf_u64(b, v);
	xbuf_putc(b, '\n');
}

static void
sample_real(struct xbuf *b, const char *name, const char *labels, double v)
{
	sample_head(b, name, labels);
	put_real(b, dpmon_finite_or_zero(v));
	xbuf_putc(b, '\n');
}

/* A one-sample family. */
static void
gauge_real(struct xbuf *b, const char *name, const char *help, double v)
{
	family(b, name, "gauge", help);
	sample_real(b, name, "", v);
}

static void
gauge_u64(struct xbuf *b, const char *name, const char *help, uint64_t v)
{
	family(b, name, "gauge", help);
	sample_u64(b, name, "", v);
}

/* The family header "<prefix>_<suffix>" of field @p f; its name in @p name. */
static void
field_family(struct xbuf *b, const char *prefix, enum field f, const char *words, char *name,
	     size_t name_len)
{
	char help[256];

	snprintf(name, name_len, "%s_%s", prefix, fields[f].suffix);
	snprintf(help, sizeof(help), "%s%s%s", fields[f].help_head, words, fields[f].help_tail);
	family(b, name, fields[f].type, help);
}

static void
rate_sample(struct xbuf *b, const char *name, const char *labels, const struct dpmon_rate *r,
	    enum field f)
{
	switch (f) {
	case F_PACKETS:
		sample_u64(b, name, labels, r->packets);
		break;
	case F_BYTES:
		sample_u64(b, name, labels, r->bytes);
		break;
	case F_PPS:
		sample_real(b, name, labels, r->pps);
		break;
	default:
		sample_real(b, name, labels, dpmon_finite_or_zero(r->bps) / 8.0);
		break;
	}
}

/* One sample per protocol class of @p d, labels @p base plus protocol. */
static void
dir_samples(struct xbuf *b, const char *name, const char *base, const struct dpmon_dir_stats *d,
	    enum field f)
{
	static const char key[] = ",protocol=\"";
	char labels[LABELS_MAX + 32];
	size_t n = strnlen(base, LABELS_MAX - 1);

	memcpy(labels, base, n);
	memcpy(labels + n, key, sizeof(key) - 1);
	n += sizeof(key) - 1;
	for (int p = 0; p < DPMON_PROTO_MAX; p++) {
		const char *proto = dpmon_proto_name((enum dpmon_proto)p);
		size_t k = strnlen(proto, sizeof(labels) - n - 2);

		memcpy(labels + n, proto, k);
		labels[n + k] = '"';
		labels[n + k + 1] = '\0';
		rate_sample(b, name, labels, &d->proto[p], f);
	}
}

/* ------------------------------------------------------------------------
 * Sections.
 * --------------------------------------------------------------------- */

/* One exporter family: @p get's value of each exporter (docs/export.md). */
static void
exporter_family(struct xbuf *b, const struct dpmon_snapshot *s, const char *name, const char *type,
		const char *help, double (*get)(const struct dpmon_snap_exporter *e))
{
	char labels[64];

	family(b, name, type, help);
	for (uint32_t i = 0; i < s->n_exporters; i++) {
		snprintf(labels, sizeof(labels), "exporter=\"%s\"", s->exporters[i].name);
		sample_real(b, name, labels, get(&s->exporters[i]));
	}
}

static double
ex_rows(const struct dpmon_snap_exporter *e)
{
	return (double)e->rows;
}

static double
ex_batches(const struct dpmon_snap_exporter *e)
{
	return (double)e->batches;
}

static double
ex_failures(const struct dpmon_snap_exporter *e)
{
	return (double)e->failures;
}

static double
ex_dropped(const struct dpmon_snap_exporter *e)
{
	return (double)e->dropped_intervals;
}

static double
ex_spool(const struct dpmon_snap_exporter *e)
{
	return (double)e->spool_depth;
}

static double
ex_spool_bytes(const struct dpmon_snap_exporter *e)
{
	return (double)e->spool_bytes;
}

static double
ex_last_success(const struct dpmon_snap_exporter *e)
{
	return e->last_success_unix_s;
}

static double
ex_progress_age(const struct dpmon_snap_exporter *e)
{
	return e->progress_age_s;
}

/* The exporters' counters; nothing when none is configured. */
static void
exporters(struct xbuf *b, const struct dpmon_snapshot *s)
{
	if (s->n_exporters == 0)
		return;
	exporter_family(b, s, "dpmon_export_rows_total", "counter",
			"Rows (ClickHouse) or points (InfluxDB) the export server took.", ex_rows);
	exporter_family(b, s, "dpmon_export_batches_total", "counter",
			"Batches (one interval's rows) sent completely.", ex_batches);
	exporter_family(b, s, "dpmon_export_failures_total", "counter",
			"Export requests that failed (no answer, or not 2xx).", ex_failures);
	exporter_family(b, s, "dpmon_export_dropped_intervals_total", "counter",
			"Intervals dropped unsent: from a full spool, or left at the stop.",
			ex_dropped);
	exporter_family(b, s, "dpmon_export_spool_batches", "gauge", "Batches waiting to be sent.",
			ex_spool);
	exporter_family(b, s, "dpmon_export_spool_bytes", "gauge",
			"Encoded size of the batches waiting, bytes.", ex_spool_bytes);
	exporter_family(b, s, "dpmon_export_last_success_timestamp_seconds", "gauge",
			"Unix time of the last batch sent; 0 before the first.", ex_last_success);
	exporter_family(b, s, "dpmon_export_progress_age_seconds", "gauge",
			"Seconds since the exporter thread last made progress (it beats while "
			"it waits too), as of the merge.",
			ex_progress_age);
}

static void
general(struct xbuf *b, const struct dpmon_snapshot *s)
{
	family(b, "dpmon_build_info", "gauge", "dpmon's version; always 1.");
	sample_u64(b, "dpmon_build_info", "version=\"" DPMON_VERSION "\"", 1);
	gauge_u64(b, "dpmon_snapshot_seq",
		  "Number of the snapshot these values come from (1 for the first merge, +1 per "
		  "merge); the same as snapshot_seq in the JSON API.",
		  s->seq);
	gauge_real(b, "dpmon_uptime_seconds", "Seconds since dpmon started, at this snapshot.",
		   s->uptime_s);
	gauge_real(b, "dpmon_merge_interval_seconds",
		   "Measured length of the last merge interval: the divisor of every rate.",
		   s->interval_s);
	gauge_real(b, "dpmon_merge_duration_seconds",
		   "Time the merge that built this snapshot took.", s->merge_s);
	gauge_u64(b, "dpmon_subnets", "Number of monitored subnets.", s->n_subnets);
	gauge_u64(b, "dpmon_hosts", "Number of distinct hosts seen in monitored subnets.",
		  s->n_hosts);
	gauge_u64(b, "dpmon_alerts_active",
		  "Alerts currently active (one per host or subnet and direction; "
		  "docs/detection.md).",
		  s->alerts_active);
	family(b, "dpmon_alerts_started_total", "counter",
	       "Alerts started since dpmon started (hosts and subnets).");
	sample_u64(b, "dpmon_alerts_started_total", "", s->alerts_started);
	gauge_u64(b, "dpmon_subnet_alerts_active",
		  "Subnet alerts (carpet bombing) currently active, among dpmon_alerts_active.",
		  s->subnet_alerts_active);
	family(b, "dpmon_subnet_alerts_started_total", "counter",
	       "Subnet alerts started since dpmon started, among dpmon_alerts_started_total.");
	sample_u64(b, "dpmon_subnet_alerts_started_total", "", s->subnet_alerts_started);
	family(b, "dpmon_config_reloads_total", "counter",
	       "Configuration reloads (SIGHUP) since start, by result: ok (applied) or failed "
	       "(refused: invalid file, or not applied).");
	sample_u64(b, "dpmon_config_reloads_total", "result=\"ok\"", s->config.reloads);
	sample_u64(b, "dpmon_config_reloads_total", "result=\"failed\"", s->config.reload_failures);
	gauge_real(b, "dpmon_config_last_reload_timestamp_seconds",
		   "Unix time of the last configuration reload attempt; 0 before any.",
		   s->config.last_reload_unix_s);
	family(b, "dpmon_config_reload_refusals_total", "counter",
	       "Configuration reloads refused since start, among "
	       "dpmon_config_reloads_total{result=\"failed\"}: the file could not be read or was "
	       "invalid.");
	sample_u64(b, "dpmon_config_reload_refusals_total", "", s->config.reload_refusals);
	gauge_real(b, "dpmon_config_last_refusal_timestamp_seconds",
		   "Unix time of the last refused configuration reload; 0 before any.",
		   s->config.last_refusal_unix_s);
	family(b, "dpmon_notify_runs_total", "counter",
	       "Notify script runs since start, by result: ok (exit 0), failed (could not "
	       "start, non-zero exit or a signal), killed (at notify_timeout_ms).");
	sample_u64(b, "dpmon_notify_runs_total", "result=\"ok\"", s->actions.notify_ok);
	sample_u64(b, "dpmon_notify_runs_total", "result=\"failed\"", s->actions.notify_failed);
	sample_u64(b, "dpmon_notify_runs_total", "result=\"killed\"", s->actions.notify_killed);
	family(b, "dpmon_action_events_dropped_total", "counter",
	       "Alert events the actions refused on a full queue (their notify scripts not run).");
	sample_u64(b, "dpmon_action_events_dropped_total", "", s->actions.events_dropped);
	family(b, "dpmon_sample_packets_total", "counter",
	       "Packets of hosts under alert copied for the alerts' samples, or dropped on a "
	       "full sampler ring.");
	sample_u64(b, "dpmon_sample_packets_total", "result=\"copied\"", s->actions.sample_copied);
	sample_u64(b, "dpmon_sample_packets_total", "result=\"dropped\"",
		   s->actions.sample_dropped);
	gauge_u64(b, "dpmon_blackholes", "Entries in the blackhole list.", s->actions.blackholes);
	gauge_u64(b, "dpmon_flowspec_rules",
		  "FlowSpec rules in the list (announced, or listed only in a dry run).",
		  s->actions.flowspec_rules);
	family(b, "dpmon_flowspec_rules_total", "counter",
	       "FlowSpec rules handed to ExaBGP's pipe (announced), or refused because "
	       "flowspec.max_rules were in the list (refused).");
	sample_u64(b, "dpmon_flowspec_rules_total", "result=\"announced\"",
		   s->actions.flowspec_announced);
	sample_u64(b, "dpmon_flowspec_rules_total", "result=\"refused\"",
		   s->actions.flowspec_refused);
	gauge_u64(b, "dpmon_exabgp_pipe_connected",
		  "1 when ExaBGP's command pipe is open (a reader is there), else 0 (also "
		  "when no exabgp_pipe is configured).",
		  s->actions.exabgp_connected ? 1 : 0);
	exporters(b, s);
}

static void
totals(struct xbuf *b, const struct dpmon_snapshot *s)
{
	char name[128], base[LABELS_MAX];

	for (int f = 0; f < F_MAX; f++) {
		field_family(b, "dpmon_traffic", (enum field)f,
			     "of all traffic by direction (ingress: destination monitored, egress: "
			     "source monitored, internal: both, external: neither) and protocol",
			     name, sizeof(name));
		for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
			snprintf(base, sizeof(base), "direction=\"%s\"",
				 dpmon_total_name((enum dpmon_total)t));
			dir_samples(b, name, base, &s->totals[t], (enum field)f);
		}
	}
	family(b, "dpmon_traffic_flows", "gauge",
	       "Distinct 5-tuples of the last interval (HyperLogLog estimate) to (ingress) and "
	       "from (egress) monitored addresses.");
	for (int t = DPMON_TOTAL_INGRESS; t <= DPMON_TOTAL_EGRESS; t++) {
		snprintf(base, sizeof(base), "direction=\"%s\"",
			 dpmon_total_name((enum dpmon_total)t));
		if (s->totals[t].flows >= 0)
			sample_u64(b, "dpmon_traffic_flows", base,
				   (uint64_t)llround(s->totals[t].flows));
	}
}

/*
 * The subnets listed: their indices in configuration order and their
 * prefixes as text (formatted once, used by every family).
 */
struct subnet_list {
	uint32_t n;
	uint32_t *idx;
	char (*prefix)[DPMON_PREFIX_STRLEN];
};

struct subnet_rank {
	uint64_t bytes; /* cumulative, ingress + egress */
	uint32_t i;
};

/* Does @p a rank after @p b: fewer bytes, or as many and later in the configuration? */
static bool
ranks_after(const struct subnet_rank *a, const struct subnet_rank *b)
{
	return a->bytes != b->bytes ? a->bytes < b->bytes : a->i > b->i;
}

/* Sift heap entry @p k down: @p h[0] is the entry that ranks last of @p n. */
static void
sift_down(struct subnet_rank *h, uint32_t n, uint32_t k)
{
	for (;;) {
		uint32_t c = 2 * k + 1, m = k;
		struct subnet_rank t;

		if (c < n && ranks_after(&h[c], &h[m]))
			m = c;
		if (c + 1 < n && ranks_after(&h[c + 1], &h[m]))
			m = c + 1;
		if (m == k)
			return;
		t = h[k];
		h[k] = h[m];
		h[m] = t;
		k = m;
	}
}

static int
u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/*
 * The top @p top (< n_subnets) of @p s's subnets into @p l->idx, in
 * configuration order: a heap of the best @p top so far whose root ranks
 * last, so most subnets (idle ones, which never beat an earlier idle one)
 * cost one comparison.
 */
static int
select_top_subnets(const struct dpmon_snapshot *s, uint32_t top, struct subnet_list *l)
{
	struct subnet_rank *h = malloc((top ? top : 1) * sizeof(*h));

	if (h == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_subnets && top > 0; i++) {
		const struct dpmon_dir_stats *d = s->subnets[i].dir;
		struct subnet_rank r = {
			d[DPMON_DIR_INGRESS].total.bytes + d[DPMON_DIR_EGRESS].total.bytes, i};

		if (i < top) {
			h[i] = r;
			if (i + 1 == top)
				for (uint32_t k = top / 2 + 1; k-- > 0;)
					sift_down(h, top, k);
		} else if (ranks_after(&h[0], &r)) {
			h[0] = r;
			sift_down(h, top, 0);
		}
	}
	for (uint32_t k = 0; k < top; k++)
		l->idx[k] = h[k].i;
	free(h);
	qsort(l->idx, top, sizeof(*l->idx), u32_cmp);
	l->n = top;
	return 0;
}

/*
 * The subnets /metrics lists: every one when there are at most @p top,
 * else the @p top with the most cumulative bytes (ingress + egress), ties
 * in configuration order; listed in configuration order either way.
 * @return 0 or -ENOMEM (free it with subnet_list_free either way).
 */
static int
subnet_list_make(const struct dpmon_snapshot *s, uint32_t top, struct subnet_list *l)
{
	uint32_t cap = s->n_subnets ? s->n_subnets : 1;

	*l = (struct subnet_list){.idx = malloc(cap * sizeof(*l->idx)),
				  .prefix = malloc(cap * sizeof(*l->prefix))};
	if (l->idx == NULL || l->prefix == NULL)
		return -ENOMEM;
	if (s->n_subnets > top) {
		if (select_top_subnets(s, top, l) != 0)
			return -ENOMEM;
	} else {
		for (uint32_t i = 0; i < s->n_subnets; i++)
			l->idx[i] = i;
		l->n = s->n_subnets;
	}
	for (uint32_t k = 0; k < l->n; k++)
		dpmon_prefix_format(&s->subnets[l->idx[k]].prefix, l->prefix[k],
				    sizeof(l->prefix[k]));
	return 0;
}

static void
subnet_list_free(struct subnet_list *l)
{
	free(l->idx);
	free(l->prefix);
}

/* "subnet=\"<prefix>\",direction=\"<d>\"" into @p out (LABELS_MAX bytes). */
static void
subnet_base(char *out, const char *prefix, int d)
{
	static const char head[] = "subnet=\"", mid[] = "\",direction=\"";
	const char *dir = dpmon_dir_name((enum dpmon_dir)d);
	size_t n = 0, k;

	memcpy(out, head, sizeof(head) - 1);
	n += sizeof(head) - 1;
	k = strnlen(prefix, DPMON_PREFIX_STRLEN - 1);
	memcpy(out + n, prefix, k);
	n += k;
	memcpy(out + n, mid, sizeof(mid) - 1);
	n += sizeof(mid) - 1;
	k = strnlen(dir, LABELS_MAX - n - 2);
	memcpy(out + n, dir, k);
	n += k;
	out[n++] = '"';
	out[n] = '\0';
}

static void
subnet_info(struct xbuf *b, const struct dpmon_snapshot *s, const struct subnet_list *l)
{
	family(b, "dpmon_subnet_info", "gauge",
	       "A monitored subnet with its configured name and address family; always 1.");
	for (uint32_t k = 0; k < l->n; k++) {
		const struct dpmon_snap_subnet *sn = &s->subnets[l->idx[k]];

		xbuf_puts(b, "dpmon_subnet_info{subnet=\"");
		xbuf_puts(b, l->prefix[k]);
		xbuf_puts(b, "\",name=\"");
		put_label_value(b, sn->name, sizeof(sn->name));
		xbuf_puts(b, "\",family=\"");
		xbuf_u64(b, sn->prefix.family);
		xbuf_puts(b, "\"} 1\n");
	}
}

static void
subnets(struct xbuf *b, const struct dpmon_snapshot *s, const struct subnet_list *l)
{
	char name[128], base[LABELS_MAX];

	subnet_info(b, s, l);
	for (int f = 0; f < F_MAX; f++) {
		field_family(b, "dpmon_subnet", (enum field)f,
			     "to (ingress) and from (egress) a monitored subnet, by protocol", name,
			     sizeof(name));
		for (uint32_t k = 0; k < l->n; k++) {
			for (int d = 0; d < DPMON_DIR_MAX; d++) {
				subnet_base(base, l->prefix[k], d);
				dir_samples(b, name, base, &s->subnets[l->idx[k]].dir[d],
					    (enum field)f);
			}
		}
	}
	family(b, "dpmon_subnet_flows", "gauge",
	       "Distinct 5-tuples of the last interval (HyperLogLog estimate) to (ingress) and "
	       "from (egress) a monitored subnet; only the first 64 subnets are measured.");
	for (uint32_t k = 0; k < l->n; k++) {
		for (int d = 0; d < DPMON_DIR_MAX; d++) {
			double flows = s->subnets[l->idx[k]].dir[d].flows;

			if (flows < 0)
				continue;
			subnet_base(base, l->prefix[k], d);
			sample_u64(b, "dpmon_subnet_flows", base, (uint64_t)llround(flows));
		}
	}
}

static void
host_families(struct xbuf *b, const struct dpmon_snapshot *s, const uint32_t *idx, uint32_t n)
{
	char name[128], base[LABELS_MAX], a[DPMON_PREFIX_STRLEN], p[DPMON_PREFIX_STRLEN];

	for (int f = 0; f < F_MAX; f++) {
		field_family(b, "dpmon_host", (enum field)f,
			     "to (ingress) and from (egress) one of the top hosts by bytes "
			     "(metrics.top_hosts), by protocol",
			     name, sizeof(name));
		for (uint32_t k = 0; k < n; k++) {
			const struct dpmon_snap_host *h = dpmon_snap_host_at(s, idx[k]);
			struct dpmon_dir_stats tmp;

			p[0] = '\0';
			if (h->subnet < s->n_subnets)
				dpmon_prefix_format(&s->subnets[h->subnet].prefix, p, sizeof(p));
			dpmon_host_format(&h->addr, dpmon_snap_host_len(s, h), a, sizeof(a));
			for (int d = 0; d < DPMON_DIR_MAX; d++) {
				snprintf(base, sizeof(base),
					 "subnet=\"%s\",host=\"%s\",direction=\"%s\"", p, a,
					 dpmon_dir_name((enum dpmon_dir)d));
				dir_samples(b, name, base, dpmon_snap_host_dir(s, h, d, &tmp),
					    (enum field)f);
			}
		}
	}
}

static int
hosts(struct xbuf *b, const struct dpmon_snapshot *s, uint32_t top_hosts)
{
	uint32_t cap = top_hosts < s->n_hosts ? top_hosts : s->n_hosts, n;
	uint32_t *idx = malloc((cap ? cap : 1) * sizeof(*idx));

	if (idx == NULL)
		return -ENOMEM;
	n = dpmon_top_hosts(s, -1, cap, idx, NULL);
	host_families(b, s, idx, n);
	free(idx);
	return 0;
}

/* ------------------------------------------------------------------------
 * Ports, workers, parse reasons.
 * --------------------------------------------------------------------- */

struct port_field {
	const char *name, *type, *help;
	size_t offset; /* of a uint64_t in struct dpmon_port_stats */
};

static const struct port_field port_fields[] = {
	{"dpmon_port_rx_packets_total", "counter", "Packets received by the NIC (ipackets).",
	 offsetof(struct dpmon_port_stats, ipackets)},
	{"dpmon_port_rx_bytes_total", "counter", "Bytes received by the NIC (ibytes).",
	 offsetof(struct dpmon_port_stats, ibytes)},
	{"dpmon_port_rx_missed_packets_total", "counter",
	 "Packets the NIC dropped for lack of RX descriptors: dpmon too slow (imissed).",
	 offsetof(struct dpmon_port_stats, imissed)},
	{"dpmon_port_rx_errors_total", "counter", "Erroneous frames received (ierrors).",
	 offsetof(struct dpmon_port_stats, ierrors)},
	{"dpmon_port_rx_nombuf_total", "counter", "RX mbuf allocation failures (rx_nombuf).",
	 offsetof(struct dpmon_port_stats, rx_nombuf)},
};

/* The port label: the configured device name, escaped. */
static void
port_sample(struct xbuf *b, const char *name, const struct dpmon_port_stats *p, uint64_t v)
{
	xbuf_puts(b, name);
	xbuf_puts(b, "{port=\"");
	put_label_value(b, p->device, sizeof(p->device));
	xbuf_puts(b, "\"} ");
	xbuf_u64(b, v);
	xbuf_putc(b, '\n');
}

static void
ports(struct xbuf *b, const struct dpmon_snapshot *s)
{
	for (size_t f = 0; f < sizeof(port_fields) / sizeof(port_fields[0]); f++) {
		family(b, port_fields[f].name, port_fields[f].type, port_fields[f].help);
		for (uint32_t i = 0; i < s->n_ports; i++)
			port_sample(b, port_fields[f].name, &s->ports[i],
				    *(const uint64_t *)((const char *)&s->ports[i] +
							port_fields[f].offset));
	}
	family(b, "dpmon_port_rx_queues", "gauge", "RX queues configured on the port.");
	for (uint32_t i = 0; i < s->n_ports; i++)
		port_sample(b, "dpmon_port_rx_queues", &s->ports[i], s->ports[i].rx_queues);
}

enum wfield {
	W_PACKETS,
	W_BURSTS,
	W_POLLS,
	W_BUSY_S,
	W_BUSY_RATIO,
	W_ENTRIES,
	W_CAPACITY,
	W_FILL,
	W_FULL,
	W_EVICTIONS,
	W_EXPIRED,
	W_MAX
};

static const struct {
	const char *name, *type, *help;
} worker_fields[W_MAX] = {
	[W_PACKETS] = {"dpmon_worker_packets_total", "counter",
		       "Packets received by the worker lcore."},
	[W_BURSTS] = {"dpmon_worker_bursts_total", "counter", "RX bursts that returned packets."},
	[W_POLLS] = {"dpmon_worker_polls_total", "counter",
		     "RX bursts asked for, empty ones included."},
	[W_BUSY_S] = {"dpmon_worker_busy_seconds_total", "counter",
		      "Seconds spent on non-empty bursts (the rx_burst call and the processing)."},
	[W_BUSY_RATIO] = {"dpmon_worker_busy_ratio", "gauge",
			  "Share of the last merge interval spent on non-empty bursts, 0..1."},
	[W_ENTRIES] = {"dpmon_worker_host_table_entries", "gauge",
		       "Hosts in the worker's host table."},
	[W_CAPACITY] = {"dpmon_worker_host_table_capacity", "gauge",
			"Size of the worker's host table (host_table_capacity)."},
	[W_FILL] = {"dpmon_worker_host_table_fill_ratio", "gauge",
		    "Host table entries divided by its capacity, 0..1."},
	[W_FULL] = {"dpmon_worker_host_table_full_total", "counter",
		    "Host updates lost because the host table was full."},
	[W_EVICTIONS] =
		{"dpmon_worker_host_evictions_total", "counter",
		 "Host entries retired because the table was full (least recently active)."},
	[W_EXPIRED] = {"dpmon_worker_host_expired_total", "counter",
		       "Host entries retired after host_idle_timeout_s without a packet."},
};

static void
worker_sample(struct xbuf *b, const char *name, const struct dpmon_snap_worker *w, enum wfield f)
{
	char labels[32];

	snprintf(labels, sizeof(labels), "lcore=\"%u\"", w->lcore);
	switch (f) {
	case W_PACKETS:
		sample_u64(b, name, labels, w->packets);
		break;
	case W_BURSTS:
		sample_u64(b, name, labels, w->bursts);
		break;
	case W_POLLS:
		sample_u64(b, name, labels, w->polls);
		break;
	case W_BUSY_S:
		sample_real(b, name, labels, w->busy_s);
		break;
	case W_BUSY_RATIO:
		sample_real(b, name, labels, w->busy_ratio);
		break;
	case W_ENTRIES:
		sample_u64(b, name, labels, w->hosts);
		break;
	case W_CAPACITY:
		sample_u64(b, name, labels, w->host_capacity);
		break;
	case W_FILL:
		sample_real(b, name, labels,
			    w->host_capacity ? (double)w->hosts / (double)w->host_capacity : 0.0);
		break;
	case W_EVICTIONS:
		sample_u64(b, name, labels, w->host_evictions);
		break;
	case W_EXPIRED:
		sample_u64(b, name, labels, w->host_expired);
		break;
	default:
		sample_u64(b, name, labels, w->host_table_full);
		break;
	}
}

static void
workers(struct xbuf *b, const struct dpmon_snapshot *s)
{
	for (int f = 0; f < W_MAX; f++) {
		family(b, worker_fields[f].name, worker_fields[f].type, worker_fields[f].help);
		for (uint32_t i = 0; i < s->n_workers; i++)
			worker_sample(b, worker_fields[f].name, &s->workers[i], (enum wfield)f);
	}
}

static void
parse_reasons(struct xbuf *b, const struct dpmon_snapshot *s)
{
	char labels[64];

	family(b, "dpmon_parse_errors_total", "counter",
	       "Frames not counted as IP traffic, by reason (see docs/api.md).");
	for (int r = DPMON_REASON_OK + 1; r < DPMON_REASON_MAX; r++) {
		snprintf(labels, sizeof(labels), "reason=\"%s\"",
			 dpmon_reason_name((enum dpmon_reason)r));
		sample_u64(b, "dpmon_parse_errors_total", labels, s->parse_errors[r]);
	}
}

/* IP packets counted despite a malformed header, and counted kinds (parse.h). */
static void
parse_notes(struct xbuf *b, const struct dpmon_snapshot *s)
{
	char labels[64];

	family(b, "dpmon_anomalies_total", "counter",
	       "IP packets counted at L3 despite a malformed header, by anomaly (see "
	       "docs/parsing.md).");
	for (int a = 0; a < DPMON_ANOM_MAX; a++) {
		snprintf(labels, sizeof(labels), "reason=\"%s\"",
			 dpmon_anomaly_name((enum dpmon_anomaly)a));
		sample_u64(b, "dpmon_anomalies_total", labels, s->anomalies[a]);
	}
	family(b, "dpmon_ip_kind_packets_total", "counter",
	       "IP packets counted, by kind: fragments, decapsulated, tcp_syn (SYN without ACK).");
	for (int i = 0; i < DPMON_IPSTAT_MAX; i++) {
		snprintf(labels, sizeof(labels), "kind=\"%s\"",
			 dpmon_ipstat_name((enum dpmon_ipstat)i));
		sample_u64(b, "dpmon_ip_kind_packets_total", labels, s->ip_stats[i]);
	}
}

int
dpmon_prom_render_limits(const struct dpmon_snapshot *s, const struct dpmon_prom_limits *lim,
			 char **out, size_t *len)
{
	struct xbuf b = {0};
	struct subnet_list l;

	if (subnet_list_make(s, lim->top_subnets, &l) != 0)
		b.oom = true;
	general(&b, s);
	totals(&b, s);
	if (!b.oom)
		subnets(&b, s, &l);
	subnet_list_free(&l);
	if (hosts(&b, s, lim->top_hosts) != 0)
		b.oom = true;
	ports(&b, s);
	workers(&b, s);
	parse_reasons(&b, s);
	parse_notes(&b, s);
	if (xbuf_cstr(&b) == NULL) {
		xbuf_free(&b);
		return -ENOMEM;
	}
	xbuf_shrink(&b);
	*out = b.p;
	*len = b.len;
	return 0;
}

int
dpmon_prom_render(const struct dpmon_snapshot *s, uint32_t top_hosts, char **out, size_t *len)
{
	const struct dpmon_prom_limits lim = {.top_hosts = top_hosts, .top_subnets = UINT32_MAX};

	return dpmon_prom_render_limits(s, &lim, out, len);
}
