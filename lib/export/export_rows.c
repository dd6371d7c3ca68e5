/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_rows.c — one interval's rows: each counter of the snapshot minus
 * its value in the previous snapshot the exporter saw, so that sum() over
 * the rows of any time range is exact (export_private.h).
 *
 * The previous snapshot is held by reference, not copied: its totals and
 * subnets are read directly, and its hosts by a merge join over both
 * snapshots' address order. A host record the two snapshots share (the
 * same pointer: untouched since) has no delta and is skipped without
 * reading it. A host that is new, or that left and came back (another
 * first_seen: its counts started again from zero), has its counts as its
 * delta; a counter below its previous value (a subnet removed and added
 * again by reloads) counts from zero as well, so no delta is ever
 * negative or counted twice.
 */
#include "export_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const table_names[EXPORT_TABLES] = {
	[EXPORT_TOTALS] = "totals",
	[EXPORT_SUBNETS] = "subnets",
	[EXPORT_HOSTS] = "hosts",
	[EXPORT_ALERTS] = "alerts",
};

const char *
export_table_name(enum export_table t)
{
	return (unsigned)t < EXPORT_TABLES ? table_names[t] : "?";
}

/* ------------------------------------------------------------------------
 * Deltas.
 * --------------------------------------------------------------------- */

static uint64_t
minus(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

/* @p c minus @p p (NULL: nothing before) into @p d; a total below its
 * previous value means the counters started again: all of @p c. */
static void
dir_delta(const struct dpmon_dir_stats *c, const struct dpmon_dir_stats *p, struct export_delta *d)
{
	static const struct dpmon_dir_stats zero;

	if (p == NULL || c->total.packets < p->total.packets || c->total.bytes < p->total.bytes)
		p = &zero;
	d->packets = minus(c->total.packets, p->total.packets);
	d->bytes = minus(c->total.bytes, p->total.bytes);
	for (int k = 0; k < DPMON_PROTO_MAX; k++) {
		d->proto_packets[k] = minus(c->proto[k].packets, p->proto[k].packets);
		d->proto_bytes[k] = minus(c->proto[k].bytes, p->proto[k].bytes);
	}
	d->fragments = minus(c->flag[DPMON_FLAG_FRAG].packets, p->flag[DPMON_FLAG_FRAG].packets);
	d->tcp_syn = minus(c->flag[DPMON_FLAG_SYN].packets, p->flag[DPMON_FLAG_SYN].packets);
}

static bool
delta_zero(const struct export_delta *d)
{
	return d->packets == 0 && d->bytes == 0 && d->fragments == 0 && d->tcp_syn == 0;
}

/* ------------------------------------------------------------------------
 * Totals and subnets.
 * --------------------------------------------------------------------- */

/*
 * One row of an aggregate (a total or a subnet's direction): @p c's
 * interval delta against @p p (NULL: new, the whole count), its averages
 * and flows; aggregates have no peer count (-1).
 */
static void
aggregate_row(enum export_table table, int dir, const char *direction, const char *prefix,
	      const char *name, const struct dpmon_dir_stats *c, const struct dpmon_dir_stats *p,
	      const struct export_interval *iv, const struct export_encoder *enc)
{
	struct export_delta d;
	struct export_row r = {
		.table = table,
		.direction = direction,
		.dir = (uint8_t)dir,
		.prefix = prefix,
		.name = name,
		.address = "",
		.d = &d,
		.avg_pps = c->avg_pps,
		.avg_bps = c->avg_bps,
		.flows = c->flows,
		.peers = -1,
	};

	dir_delta(c, p, &d);
	enc->row(enc->ctx, iv, &r);
}

static void
walk_totals(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev,
	    const struct export_interval *iv, const struct export_encoder *enc)
{
	for (int t = 0; t < DPMON_TOTAL_MAX; t++) {
		aggregate_row(EXPORT_TOTALS, t, dpmon_total_name((enum dpmon_total)t), "", "",
			      &cur->totals[t], prev ? &prev->totals[t] : NULL, iv, enc);
	}
}

/* Subnet @p i of @p cur in @p prev: the same index unless a reload moved it. */
static const struct dpmon_snap_subnet *
prev_subnet(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev, uint32_t i)
{
	int j;

	if (prev == NULL)
		return NULL;
	if (i < prev->n_subnets &&
	    dpmon_prefix_equal(&prev->subnets[i].prefix, &cur->subnets[i].prefix))
		return &prev->subnets[i];
	j = dpmon_snapshot_find_subnet(prev, &cur->subnets[i].prefix);
	return j >= 0 ? &prev->subnets[j] : NULL;
}

static void
walk_subnets(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev,
	     char (*pfx)[DPMON_PREFIX_STRLEN], const struct export_interval *iv,
	     const struct export_encoder *enc)
{
	for (uint32_t i = 0; i < cur->n_subnets; i++) {
		const struct dpmon_snap_subnet *sn = &cur->subnets[i];
		const struct dpmon_snap_subnet *ps = prev_subnet(cur, prev, i);

		for (int dir = 0; dir < DPMON_DIR_MAX; dir++) {
			aggregate_row(EXPORT_SUBNETS, dir, dpmon_dir_name((enum dpmon_dir)dir),
				      pfx[i], sn->name, &sn->dir[dir], ps ? &ps->dir[dir] : NULL,
				      iv, enc);
		}
	}
}

/* ------------------------------------------------------------------------
 * Hosts.
 * --------------------------------------------------------------------- */

/* The record @p p of host @p h in the previous snapshot, or NULL when
 * there is none or the host left and came back since (another
 * first_seen: its counts started again from zero). */
static const struct dpmon_snap_host *
same_host(const struct dpmon_snap_host *p, const struct dpmon_snap_host *h)
{
	return p != NULL && p->first_seen == h->first_seen ? p : NULL;
}

/* The rows of host @p h (its previous record @p p, or NULL): one per
 * direction with a non-zero delta. */
static void
host_rows(const struct dpmon_snapshot *cur, const struct dpmon_snap_host *h,
	  const struct dpmon_snap_host *p, char (*pfx)[DPMON_PREFIX_STRLEN],
	  const struct export_interval *iv, const struct export_encoder *enc)
{
	char addr[DPMON_PREFIX_STRLEN];
	bool named = false;

	p = same_host(p, h);
	for (int dir = 0; dir < DPMON_DIR_MAX; dir++) {
		struct dpmon_dir_stats tmp;
		const struct dpmon_dir_stats *c = dpmon_snap_host_dir(cur, h, dir, &tmp);
		struct export_delta d;
		struct export_row r;

		dir_delta(&h->dir[dir], p ? &p->dir[dir] : NULL, &d);
		if (delta_zero(&d))
			continue;
		if (!named) {
			dpmon_host_format(&h->addr, dpmon_snap_host_len(cur, h), addr,
					  sizeof(addr));
			named = true;
		}
		r = (struct export_row){
			.table = EXPORT_HOSTS,
			.direction = dpmon_dir_name((enum dpmon_dir)dir),
			.dir = (uint8_t)dir,
			.prefix = h->subnet < cur->n_subnets ? pfx[h->subnet] : "",
			.name = h->subnet < cur->n_subnets ? cur->subnets[h->subnet].name : "",
			.address = addr,
			.d = &d,
			.avg_pps = c->avg_pps,
			.avg_bps = c->avg_bps,
			.flows = c->flows,
			.peers = c->peers,
		};
		enc->row(enc->ctx, iv, &r);
	}
}

/*
 * Every host of @p cur with its record in @p prev, by a merge join of
 * the two address orders; @p visit gets each host of @p cur whose record
 * changed (a shared record has no delta). @return hosts visited.
 */
typedef void (*host_visit)(void *arg, uint32_t i, const struct dpmon_snap_host *h,
			   const struct dpmon_snap_host *p);

static uint32_t
join_hosts(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev, host_visit visit,
	   void *arg)
{
	uint32_t np = prev ? prev->n_hosts : 0, j = 0, n = 0;

	for (uint32_t i = 0; i < cur->n_hosts; i++) {
		const struct dpmon_snap_host *h = dpmon_snap_host_at(cur, i), *p = NULL;

		dpmon_snap_host_prefetch(cur, i + DPMON_SNAP_PREFETCH_AHEAD, 0);
		if (j < np && dpmon_snap_host_at(prev, j) == h) {
			j++;
			continue; /* the same record: untouched */
		}
		while (j < np) {
			const struct dpmon_snap_host *q = dpmon_snap_host_at(prev, j);
			int c = dpmon_addr_cmp(&q->addr, &h->addr);

			if (c > 0)
				break;
			j++;
			if (c == 0) {
				p = q;
				break;
			}
		}
		if (p == h)
			continue;
		visit(arg, i, h, p);
		n++;
	}
	return n;
}

struct all_hosts {
	const struct dpmon_snapshot *cur;
	char (*pfx)[DPMON_PREFIX_STRLEN];
	const struct export_interval *iv;
	const struct export_encoder *enc;
};

static void
visit_all(void *arg, uint32_t i, const struct dpmon_snap_host *h, const struct dpmon_snap_host *p)
{
	struct all_hosts *a = arg;

	(void)i;
	host_rows(a->cur, h, p, a->pfx, a->iv, a->enc);
}

/* A candidate of the top hosts: its interval bytes, both directions. */
struct top_entry {
	uint64_t bytes;
	const struct dpmon_snap_host *h, *p;
};

struct top_hosts {
	struct top_entry *e;
	uint32_t n, cap;
};

/* Min-heap on bytes: e[0] is the smallest of the top kept so far. */
static void
heap_down(struct top_entry *e, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct top_entry t;

		if (l < n && e[l].bytes < e[m].bytes)
			m = l;
		if (r < n && e[r].bytes < e[m].bytes)
			m = r;
		if (m == i)
			return;
		t = e[i];
		e[i] = e[m];
		e[m] = t;
		i = m;
	}
}

static void
heap_up(struct top_entry *e, uint32_t i)
{
	while (i > 0 && e[(i - 1) / 2].bytes > e[i].bytes) {
		struct top_entry t = e[i];

		e[i] = e[(i - 1) / 2];
		e[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void
visit_top(void *arg, uint32_t i, const struct dpmon_snap_host *h, const struct dpmon_snap_host *p)
{
	struct top_hosts *t = arg;
	const struct dpmon_snap_host *q = same_host(p, h);
	struct top_entry e = {.h = h, .p = p};

	(void)i;
	for (int dir = 0; dir < DPMON_DIR_MAX; dir++)
		e.bytes += minus(h->dir[dir].total.bytes, q ? q->dir[dir].total.bytes : 0);
	if (e.bytes == 0 && h->dir[0].total.packets == (q ? q->dir[0].total.packets : 0) &&
	    h->dir[1].total.packets == (q ? q->dir[1].total.packets : 0))
		return;
	if (t->n < t->cap) {
		t->e[t->n] = e;
		heap_up(t->e, t->n++);
	} else if (e.bytes > t->e[0].bytes) {
		t->e[0] = e;
		heap_down(t->e, t->n, 0);
	}
}

static int
cmp_top_desc(const void *x, const void *y)
{
	const struct top_entry *a = x, *b = y;

	return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : 0;
}

static int
walk_hosts(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev, uint32_t top,
	   char (*pfx)[DPMON_PREFIX_STRLEN], const struct export_interval *iv,
	   const struct export_encoder *enc)
{
	struct all_hosts all = {.cur = cur, .pfx = pfx, .iv = iv, .enc = enc};
	struct top_hosts t = {0};

	if (top == 0 || top >= cur->n_hosts) {
		join_hosts(cur, prev, visit_all, &all);
		return 0;
	}
	t.cap = top;
	t.e = malloc(sizeof(*t.e) * t.cap);
	if (t.e == NULL)
		return -ENOMEM;
	join_hosts(cur, prev, visit_top, &t);
	qsort(t.e, t.n, sizeof(*t.e), cmp_top_desc);
	for (uint32_t k = 0; k < t.n; k++)
		host_rows(cur, t.e[k].h, t.e[k].p, pfx, iv, enc);
	free(t.e);
	return 0;
}

/* ------------------------------------------------------------------------
 * Alerts.
 * --------------------------------------------------------------------- */

/* The alert of id @p id in @p prev (newest first), or NULL. */
static const struct dpmon_alert *
prev_alert(const struct dpmon_snapshot *prev, uint64_t id)
{
	uint32_t lo = 0, hi = prev->n_alerts;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t m = prev->alerts[mid]->id;

		if (m == id)
			return prev->alerts[mid];
		if (m > id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The row of alert @p a's target in its direction into @p r (its delta in
 * @p d): a host's record in both snapshots (one that came back counts from
 * zero), or a subnet's; zero when the target is in neither.
 */
static void
alert_counts(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev,
	     const struct dpmon_alert *a, struct export_row *r, struct export_delta *d)
{
	static const struct dpmon_dir_stats none = {.flows = -1, .peers = -1};
	const struct dpmon_dir_stats *counts = NULL, *base = NULL, *rates = &none;
	struct dpmon_dir_stats tmp;

	if (a->target == DPMON_TARGET_SUBNET) {
		int i = dpmon_snapshot_find_subnet(cur, &a->prefix);

		if (i >= 0) {
			const struct dpmon_snap_subnet *ps = prev_subnet(cur, prev, (uint32_t)i);

			counts = rates = &cur->subnets[i].dir[a->dir];
			base = ps != NULL ? &ps->dir[a->dir] : NULL;
		}
	} else {
		const struct dpmon_snap_host *h = dpmon_snapshot_find_host(cur, &a->addr);

		if (h != NULL) {
			const struct dpmon_snap_host *q =
				prev != NULL
					? same_host(dpmon_snapshot_find_host(prev, &a->addr), h)
					: NULL;

			counts = &h->dir[a->dir];
			rates = dpmon_snap_host_dir(cur, h, a->dir, &tmp);
			base = q != NULL ? &q->dir[a->dir] : NULL;
		}
	}
	if (counts != NULL)
		dir_delta(counts, base, d);
	else
		memset(d, 0, sizeof(*d));
	*r = (struct export_row){
		.table = EXPORT_ALERTS,
		.direction = dpmon_dir_name(a->dir),
		.dir = (uint8_t)a->dir,
		.prefix = "",
		.name = "",
		.address = "",
		.d = d,
		.avg_pps = rates->avg_pps,
		.avg_bps = rates->avg_bps,
		.flows = rates->flows,
		.peers = rates->peers,
	};
}

/* Starts and ends since @p prev: an alert newer than every one of @p prev
 * started; one active in @p prev and ended now ended. */
static void
walk_alerts(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev,
	    const struct export_interval *iv, const struct export_encoder *enc)
{
	uint64_t prev_max = prev != NULL && prev->n_alerts > 0 ? prev->alerts[0]->id : 0;

	if (enc->alert == NULL)
		return;
	for (uint32_t i = cur->n_alerts; i-- > 0;) {
		const struct dpmon_alert *a = cur->alerts[i];
		const struct dpmon_alert *pa = prev != NULL ? prev_alert(prev, a->id) : NULL;
		bool started = a->id > prev_max && (prev == NULL || pa == NULL);
		bool ended = a->end_unix_s != 0 && (started || (pa != NULL && pa->end_unix_s == 0));
		struct export_delta d;
		struct export_row r;

		if (!started && !ended)
			continue;
		alert_counts(cur, prev, a, &r, &d);
		if (started)
			enc->alert(enc->ctx, iv, a, false, &r);
		if (ended)
			enc->alert(enc->ctx, iv, a, true, &r);
	}
}

char *
export_alert_fingerprint(const struct dpmon_alert *a)
{
	/* The API's flags (JSON_COMPACT): the same text as its "fingerprint".
	 * jansson's dump writes nothing into the value (thread-safe since
	 * 2.11; Debian 12 has 2.14), so the HTTP thread may copy this
	 * version of the alert at the same time. */
	return a->fingerprint != NULL ? json_dumps(a->fingerprint, JSON_COMPACT) : NULL;
}

/* ------------------------------------------------------------------------
 * The walk.
 * --------------------------------------------------------------------- */

int
export_rows_walk(const struct dpmon_snapshot *cur, const struct dpmon_snapshot *prev,
		 uint32_t top_hosts, const struct export_interval *iv,
		 const struct export_encoder *enc)
{
	char(*pfx)[DPMON_PREFIX_STRLEN] = malloc(sizeof(*pfx) * (cur->n_subnets + 1));
	int rc;

	if (pfx == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < cur->n_subnets; i++)
		dpmon_prefix_format(&cur->subnets[i].prefix, pfx[i], sizeof(pfx[i]));
	walk_totals(cur, prev, iv, enc);
	walk_subnets(cur, prev, pfx, iv, enc);
	rc = walk_hosts(cur, prev, top_hosts, pfx, iv, enc);
	walk_alerts(cur, prev, iv, enc);
	free(pfx);
	return rc;
}

/* ------------------------------------------------------------------------
 * The counts columns of a row.
 * --------------------------------------------------------------------- */

void
export_counts(const struct export_interval *iv, const struct export_row *r,
	      struct export_count out[EXPORT_COUNTS])
{
	static const char *const pk[DPMON_PROTO_MAX] = {"tcp_packets", "udp_packets",
							"icmp_packets", "other_packets"};
	static const char *const bk[DPMON_PROTO_MAX] = {"tcp_bytes", "udp_bytes", "icmp_bytes",
							"other_bytes"};
	const struct export_delta *d = r->d;
	double is = iv->interval_s > 0 ? iv->interval_s : 1;
	unsigned n = 0;

	out[n++] = (struct export_count){.name = "packets", .u = d->packets};
	out[n++] = (struct export_count){.name = "bytes", .u = d->bytes};
	for (int k = 0; k < DPMON_PROTO_MAX; k++) {
		out[n++] = (struct export_count){.name = pk[k], .u = d->proto_packets[k]};
		out[n++] = (struct export_count){.name = bk[k], .u = d->proto_bytes[k]};
	}
	out[n++] = (struct export_count){.name = "fragments", .u = d->fragments};
	out[n++] = (struct export_count){.name = "tcp_syn", .u = d->tcp_syn};
	out[n++] = (struct export_count){.name = "pps", .real = true, .f = (double)d->packets / is};
	out[n++] = (struct export_count){
		.name = "bps", .real = true, .f = (double)d->bytes * 8.0 / is};
	out[n++] = (struct export_count){.name = "avg_pps", .real = true, .f = r->avg_pps};
	out[n++] = (struct export_count){.name = "avg_bps", .real = true, .f = r->avg_bps};
	out[n++] = (struct export_count){.name = "flows", .real = true, .f = r->flows};
}
