/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_blackholes.h — the blackhole list of the actions module: one
 * entry per host prefix, made by an operator or held by banning alerts,
 * each announced as a route of ExaBGP's pipe (actions_exabgp.h) keyed by
 * its prefix ("10.0.0.5/32"). actions.h has the rules.
 *
 * The list has no lock of its own: its owner (actions.c) holds its lock
 * around every call. Every change of the list bumps its @c gen, which the
 * owner takes as "save the state file".
 */
#ifndef DPMON_ACTIONS_BLACKHOLES_H
#define DPMON_ACTIONS_BLACKHOLES_H

#include <stdbool.h>
#include <stdint.h>

#include "actions.h"
#include "actions_exabgp.h"
#include "actions_private.h"
#include "config.h"

/* One blackhole (struct dpmon_blackhole is its public view). */
struct bh {
	struct dpmon_addr addr; /* the host prefix's network address */
	uint8_t len;            /* its length, bits of the family: the route announced */
	bool manual;
	bool restored_ids; /* alert_ids come from the state file: no end will come */
	uint32_t n_alerts;
	uint64_t alert_ids[BH_MAX_ALERTS];
	double since;
};

/* The ExaBGP attributes of the blackholes' announces. */
struct bh_attributes {
	char next_hop[DPMON_ADDR_STRLEN];  /* of IPv4 routes */
	char next_hop6[DPMON_ADDR_STRLEN]; /* of IPv6 routes */
	char community[32];                /* "" for none */
};

struct bh_list {
	struct bh *bh; /* in no particular order (the state file sorts it) */
	uint32_t n, cap;
	uint64_t gen;                  /* list changes */
	struct actions_exabgp *routes; /* where entries are announced; not owned */
	struct bh_attributes attr;
};

/*
 * An empty list announcing its entries to @p routes with the attributes of
 * @p conf.
 */
void actions_bh_init(struct bh_list *l, struct actions_exabgp *routes,
		     const struct dpmon_actions_conf *conf);

/* Free the entries (their routes stay in @p l->routes). */
void actions_bh_fini(struct bh_list *l);

/*
 * Take the next hops and community of @p conf; when they changed, every
 * entry is announced again with them (an announce replaces the route's
 * attributes).
 */
void actions_bh_set_attributes(struct bh_list *l, const struct dpmon_actions_conf *conf);

/* @return the index of @p addr in l->bh, or -1. */
int actions_bh_find(const struct bh_list *l, const struct dpmon_addr *addr);

/*
 * Append and announce a new entry for the prefix @p addr / @p len (bits of
 * its family; not in the list), made at @p since (seconds since the epoch).
 * l->gen is the caller's to bump.
 * @return the entry, or NULL at DPMON_MAX_BLACKHOLES or out of memory.
 */
struct bh *actions_bh_new(struct bh_list *l, const struct dpmon_addr *addr, unsigned len,
			  double since);

/* Remove entry @p i (< l->n), withdraw its route and bump l->gen. */
void actions_bh_delete(struct bh_list *l, uint32_t i);

/*
 * Remove the entries outside every subnet of @p s, each logged as
 * "CONTEXTADDRESS is outside every monitored subnet: withdrawn".
 */
void actions_bh_drop_outside(struct bh_list *l, const struct actions_subnets *s,
			     const char *context);

/*
 * The start of banning alert @p alert_id of host @p addr: its host prefix
 * is blackholed (inside the monitored subnets @p s only) and held by it.
 */
void actions_bh_alert_start(struct bh_list *l, const struct actions_subnets *s,
			    const struct dpmon_addr *addr, uint64_t alert_id);

/*
 * The end of alert @p alert_id of host @p addr: the entry of its host
 * prefix is no longer held by it, and removed when no alert or operator
 * holds it.
 */
void actions_bh_alert_end(struct bh_list *l, const struct actions_subnets *s,
			  const struct dpmon_addr *addr, uint64_t alert_id);

/* @p b as the API shows it, into @p out. */
void actions_bh_public(const struct bh_list *l, const struct bh *b, struct dpmon_blackhole *out);

#endif /* DPMON_ACTIONS_BLACKHOLES_H */
