/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_blackholes.c — the blackhole list of the actions module: one
 * entry per host prefix, made by an operator or held by banning alerts
 * (actions_blackholes.h; actions.h has the rules, actions.c the locking).
 *
 * The list is an array in no particular order (at most
 * DPMON_MAX_BLACKHOLES entries, searched linearly; saving the state file
 * sorts it). Each entry is a route of ExaBGP's pipe, keyed by its prefix:
 * made, it is announced; removed, withdrawn; adding it again cancels a
 * withdraw not yet written. Every change bumps l->gen, which the owner
 * takes as "save the state file".
 */
#include "actions_blackholes.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Longest blackhole line: "announce route ADDR/128 next-hop ADDR community [..]". */
#define LINE_LEN 256

/* ------------------------------------------------------------------------
 * Routes.
 * --------------------------------------------------------------------- */

/* The route key of entry @p b: its prefix, "10.0.0.5/32". */
static void
route_key(const struct bh *b, char *key, size_t len)
{
	dpmon_host_format(&b->addr,
			  b->len ? b->len : dpmon_family_bits(dpmon_addr_is_v4(&b->addr) ? 4 : 6),
			  key, len);
}

/* "announce|withdraw route ADDR/LEN next-hop NH[ community [C]]" of entry
 * @p b (a host's prefix: /32, /128 or its subnet's host_prefix_len); NH is
 * the IPv4 or the IPv6 next hop by the route's family. */
static void
route_line(const struct bh_attributes *at, bool announce, const struct bh *b, char *buf, size_t len)
{
	char t[DPMON_ADDR_STRLEN];
	bool v4 = dpmon_addr_is_v4(&b->addr);
	int n;

	n = snprintf(buf, len, "%s route %s/%u next-hop %s", announce ? "announce" : "withdraw",
		     dpmon_addr_format(&b->addr, t, sizeof(t)),
		     b->len ? b->len : dpmon_family_bits(v4 ? 4 : 6),
		     v4 ? at->next_hop : at->next_hop6);
	if (announce && at->community[0] != '\0')
		snprintf(buf + n, len - (size_t)n, " community [%s]", at->community);
}

/* Announce entry @p b (its route replaced when the attributes changed). */
static void
route_announce(struct bh_list *l, const struct bh *b)
{
	char key[DPMON_PREFIX_STRLEN], ann[LINE_LEN], wd[LINE_LEN];
	int rc;

	route_key(b, key, sizeof(key));
	route_line(&l->attr, true, b, ann, sizeof(ann));
	route_line(&l->attr, false, b, wd, sizeof(wd));
	rc = actions_exabgp_announce(l->routes, key, ann, wd, ACTIONS_ROUTE_KEEP_ON_STOP);
	if (rc < 0)
		LOG("blackhole %s not announced: %s", key, strerror(-rc));
}

/* ------------------------------------------------------------------------
 * The list.
 * --------------------------------------------------------------------- */

static double
now_unix_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
attributes_of(const struct dpmon_actions_conf *conf, struct bh_attributes *at)
{
	snprintf(at->next_hop, sizeof(at->next_hop), "%s", conf->exabgp_next_hop);
	snprintf(at->next_hop6, sizeof(at->next_hop6), "%s", conf->exabgp_next_hop6);
	snprintf(at->community, sizeof(at->community), "%s", conf->exabgp_community);
}

void
actions_bh_init(struct bh_list *l, struct actions_exabgp *routes,
		const struct dpmon_actions_conf *conf)
{
	*l = (struct bh_list){.routes = routes};
	attributes_of(conf, &l->attr);
}

void
actions_bh_fini(struct bh_list *l)
{
	free(l->bh);
	l->bh = NULL;
	l->n = l->cap = 0;
}

void
actions_bh_set_attributes(struct bh_list *l, const struct dpmon_actions_conf *conf)
{
	struct bh_attributes at;

	attributes_of(conf, &at);
	if (memcmp(&at, &l->attr, sizeof(at)) == 0)
		return;
	l->attr = at;
	for (uint32_t i = 0; i < l->n; i++)
		route_announce(l, &l->bh[i]);
}

int
actions_bh_find(const struct bh_list *l, const struct dpmon_addr *addr)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (dpmon_addr_cmp(&l->bh[i].addr, addr) == 0)
			return (int)i;
	return -1;
}

struct bh *
actions_bh_new(struct bh_list *l, const struct dpmon_addr *addr, unsigned len, double since)
{
	struct bh *bigger, *b;

	if (l->n == DPMON_MAX_BLACKHOLES)
		return NULL;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;

		bigger = realloc(l->bh, cap * sizeof(*bigger));
		if (bigger == NULL)
			return NULL;
		l->bh = bigger;
		l->cap = cap;
	}
	b = &l->bh[l->n++];
	*b = (struct bh){.addr = *addr, .len = (uint8_t)len, .since = since};
	route_announce(l, b);
	return b;
}

void
actions_bh_delete(struct bh_list *l, uint32_t i)
{
	char key[DPMON_PREFIX_STRLEN];

	assert(i < l->n);
	route_key(&l->bh[i], key, sizeof(key));
	(void)actions_exabgp_withdraw(l->routes, key); /* a withdraw lost is logged there */
	l->bh[i] = l->bh[--l->n];
	l->gen++;
}

void
actions_bh_drop_outside(struct bh_list *l, const struct actions_subnets *s, const char *context)
{
	char t[DPMON_ADDR_STRLEN];

	for (uint32_t i = l->n; i-- > 0;)
		if (!actions_inside_subnets(s, &l->bh[i].addr)) {
			LOG("%s%s is outside every monitored subnet: withdrawn", context,
			    dpmon_addr_format(&l->bh[i].addr, t, sizeof(t)));
			actions_bh_delete(l, i);
		}
}

void
actions_bh_public(const struct bh_list *l, const struct bh *b, struct dpmon_blackhole *out)
{
	char key[DPMON_PREFIX_STRLEN];

	route_key(b, key, sizeof(key));
	*out = (struct dpmon_blackhole){.addr = b->addr,
					.prefix_len = b->len,
					.manual = b->manual,
					.alert_id = b->n_alerts ? b->alert_ids[0] : 0,
					.since_unix_s = b->since,
					.announced = actions_exabgp_announced(l->routes, key)};
}

/* ------------------------------------------------------------------------
 * Alert events.
 * --------------------------------------------------------------------- */

void
actions_bh_alert_start(struct bh_list *l, const struct actions_subnets *s,
		       const struct dpmon_addr *addr, uint64_t alert_id)
{
	char t[DPMON_PREFIX_STRLEN];
	struct dpmon_addr key;
	unsigned len = actions_host_key(s, addr, &key);
	int i = actions_bh_find(l, &key);
	struct bh *b;

	if (!actions_inside_subnets(s, addr)) {
		LOG("alert %" PRIu64 ": %s is outside every monitored subnet%s: not blackholed",
		    alert_id, dpmon_host_format(addr, len, t, sizeof(t)),
		    s->n == 0 ? " (none known: create the module with "
				"dpmon_actions_create_cfg)"
			      : "");
		return;
	}
	b = i >= 0 ? &l->bh[i] : actions_bh_new(l, &key, len, now_unix_s());
	if (b == NULL) {
		LOG("alert %" PRIu64 ": %s not blackholed: %d blackholes already", alert_id,
		    dpmon_host_format(&key, len, t, sizeof(t)), (int)l->n);
		return;
	}
	if (b->restored_ids) { /* a new alert takes the entry over */
		b->n_alerts = 0;
		b->restored_ids = false;
	}
	for (uint32_t k = 0; k < b->n_alerts; k++)
		if (b->alert_ids[k] == alert_id)
			return;
	if (b->n_alerts < BH_MAX_ALERTS)
		b->alert_ids[b->n_alerts++] = alert_id;
	l->gen++;
}

void
actions_bh_alert_end(struct bh_list *l, const struct actions_subnets *s,
		     const struct dpmon_addr *addr, uint64_t alert_id)
{
	struct dpmon_addr key;
	struct bh *b;
	int i;

	(void)actions_host_key(s, addr, &key);
	i = actions_bh_find(l, &key);
	/* Restored ids are an earlier run's: alert ids start at 1 again, so
	 * this run's alert of the same id (one that did not ban, or it would
	 * have taken the entry over) is another alert. */
	if (i < 0 || l->bh[i].restored_ids)
		return;
	b = &l->bh[i];
	for (uint32_t k = 0; k < b->n_alerts; k++)
		if (b->alert_ids[k] == alert_id) {
			memmove(&b->alert_ids[k], &b->alert_ids[k + 1],
				(b->n_alerts - k - 1) * sizeof(b->alert_ids[0]));
			b->n_alerts--;
			l->gen++;
			break;
		}
	if (b->n_alerts == 0 && !b->manual)
		actions_bh_delete(l, (uint32_t)i);
}

/* ------------------------------------------------------------------------
 * The public view.
 * --------------------------------------------------------------------- */

json_t *
dpmon_blackhole_json(const struct dpmon_blackhole *b)
{
	char t[DPMON_PREFIX_STRLEN];
	unsigned full = dpmon_family_bits(dpmon_addr_is_v4(&b->addr) ? 4 : 6);

	return json_pack(
		"{s:s,s:s,s:o,s:f,s:b}", "address",
		dpmon_host_format(&b->addr, b->prefix_len ? b->prefix_len : full, t, sizeof(t)),
		"source", b->manual ? "manual" : "alert", "alert_id",
		b->alert_id ? json_integer((json_int_t)b->alert_id) : json_null(), "since",
		b->since_unix_s, "announced", b->announced);
}
