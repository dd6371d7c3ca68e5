/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_flowspec.c — the FlowSpec rules list (actions_flowspec.h): each
 * rule a keyed route of ExaBGP's pipe, the budget, the dry run, and the
 * withdraw after the alert's end, and the scope check of a manual rule.
 */
#include "actions_flowspec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions_private.h"

/* The route key of rule @p id in the pipe writer. */
static void
route_key(uint64_t id, char *key, size_t len)
{
	snprintf(key, len, "flow:%" PRIu64, id);
}

/* @p r's announce and withdraw lines, without their newline. @return 0, or -EINVAL. */
static int
lines(const struct dpmon_fs_rule *r, char *ann, char *wd)
{
	int n = dpmon_fs_rule_exabgp(r, true, ann, DPMON_FS_TEXT_LEN);
	int m = dpmon_fs_rule_exabgp(r, false, wd, DPMON_FS_TEXT_LEN);

	if (n <= 0 || m <= 0)
		return -EINVAL;
	ann[n - 1] = '\0';
	wd[m - 1] = '\0';
	return 0;
}

int64_t
actions_fs_add(struct fs_list *l, struct actions_exabgp *e, const struct dpmon_flowspec_conf *c,
	       uint64_t alert_id, const struct dpmon_fs_rule *r, uint32_t matched, double coverage,
	       double now_unix_s)
{
	char ann[DPMON_FS_TEXT_LEN], wd[DPMON_FS_TEXT_LEN], key[ACTIONS_EXABGP_KEY_LEN];
	struct fs_entry *x;
	int rc;

	if (l->n >= c->max_rules) {
		l->refused++;
		return -ENOSPC;
	}
	if (lines(r, ann, wd) != 0)
		return -EINVAL;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		void *p = realloc(l->v, sizeof(*l->v) * cap);

		if (p == NULL)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	x = &l->v[l->n];
	memset(x, 0, sizeof(*x));
	x->id = l->last_id + 1;
	x->alert_id = alert_id;
	x->rule = *r;
	x->matched = matched;
	x->coverage = coverage;
	x->created = now_unix_s;
	if (c->announce) {
		route_key(x->id, key, sizeof(key));
		rc = actions_exabgp_announce(e, key, ann, wd,
					     c->keep_on_stop ? ACTIONS_ROUTE_KEEP_ON_STOP : 0);
		if (rc < 0)
			return rc;
		x->sent = true;
		l->announced++;
		l->gen++;
		LOG_INFO("flowspec rule %" PRIu64 " (alert %" PRIu64 "): %s", x->id, alert_id, ann);
	} else {
		LOG_INFO("flowspec rule %" PRIu64 " (alert %" PRIu64 "), dry run, not sent: %s",
			 x->id, alert_id, ann);
	}
	l->last_id = x->id;
	l->n++;
	return (int64_t)x->id;
}

void
actions_fs_alert_end(struct fs_list *l, uint64_t alert_id, double now_unix_s)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].alert_id == alert_id && alert_id != 0 && l->v[i].ended == 0)
			l->v[i].ended = now_unix_s;
}

/* Withdraw entry @p i and move the last one into its place. */
static void
drop(struct fs_list *l, struct actions_exabgp *e, uint32_t i)
{
	char key[ACTIONS_EXABGP_KEY_LEN];

	if (l->v[i].sent) {
		route_key(l->v[i].id, key, sizeof(key));
		actions_exabgp_withdraw(e, key);
		l->gen++;
	}
	LOG_INFO("flowspec rule %" PRIu64 " (alert %" PRIu64 ") withdrawn", l->v[i].id,
		 l->v[i].alert_id);
	l->v[i] = l->v[--l->n];
}

uint32_t
actions_fs_expire(struct fs_list *l, struct actions_exabgp *e, uint32_t hold_s, double now_unix_s)
{
	uint32_t gone = 0;

	for (uint32_t i = 0; i < l->n;) {
		if (l->v[i].ended != 0 && now_unix_s - l->v[i].ended >= hold_s) {
			drop(l, e, i);
			gone++;
		} else {
			i++;
		}
	}
	return gone;
}

int
actions_fs_remove(struct fs_list *l, struct actions_exabgp *e, uint64_t id)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].id == id) {
			drop(l, e, i);
			return 0;
		}
	return -ENOENT;
}

static int
entry_cmp(const void *x, const void *y)
{
	const struct fs_entry *a = *(const struct fs_entry *const *)x;
	const struct fs_entry *b = *(const struct fs_entry *const *)y;

	return (a->id > b->id) - (a->id < b->id);
}

json_t *
actions_fs_json(const struct fs_list *l, struct actions_exabgp *e)
{
	const struct fs_entry **order = calloc(l->n ? l->n : 1, sizeof(*order));
	json_t *arr = json_array();

	if (order == NULL || arr == NULL) {
		free(order);
		json_decref(arr);
		return NULL;
	}
	for (uint32_t i = 0; i < l->n; i++)
		order[i] = &l->v[i];
	qsort(order, l->n, sizeof(*order), entry_cmp);
	for (uint32_t i = 0; arr != NULL && i < l->n; i++) {
		const struct fs_entry *x = order[i];
		char m[DPMON_FS_TEXT_LEN], act[32], key[ACTIONS_EXABGP_KEY_LEN];

		route_key(x->id, key, sizeof(key));
		dpmon_fs_rule_match_text(&x->rule, m, sizeof(m));
		dpmon_fs_action_text(&x->rule.action, act, sizeof(act));
		if (json_array_append_new(
			    arr, json_pack("{s:I,s:o,s:s,s:s,s:b,s:f,s:I,s:f}", "id",
					   (json_int_t)x->id, "alert_id",
					   x->alert_id ? json_integer((json_int_t)x->alert_id)
						       : json_null(),
					   "match", m, "action", act, "announced",
					   x->sent && actions_exabgp_announced(e, key), "coverage",
					   x->coverage, "packets", (json_int_t)x->matched,
					   "created", x->created)) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	free(order);
	return arr != NULL ? json_pack("{s:o}", "rules", arr) : NULL;
}

/* ------------------------------------------------------------------------
 * The state file.
 * --------------------------------------------------------------------- */

json_t *
actions_fs_state_json(const struct fs_list *l)
{
	const struct fs_entry **order = calloc(l->n ? l->n : 1, sizeof(*order));
	json_t *arr = json_array();
	uint32_t n = 0;

	if (order == NULL || arr == NULL) {
		free(order);
		json_decref(arr);
		return NULL;
	}
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].sent)
			order[n++] = &l->v[i];
	qsort(order, n, sizeof(*order), entry_cmp); /* a stable file for diffs */
	for (uint32_t i = 0; arr != NULL && i < n; i++) {
		char ann[DPMON_FS_TEXT_LEN], wd[DPMON_FS_TEXT_LEN];
		const struct fs_entry *x = order[i];

		if (lines(&x->rule, ann, wd) != 0 ||
		    json_array_append_new(
			    arr, json_pack("{s:I,s:I,s:s,s:s,s:f}", "id", (json_int_t)x->id,
					   "alert_id", (json_int_t)x->alert_id, "announce", ann,
					   "withdraw", wd, "created", x->created)) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	free(order);
	return arr;
}

/* Entry @p i of the state file's rules: its id into @p id and its withdraw
 * line into @p wd; false (logged) when malformed. */
static bool
saved_entry(const json_t *x, size_t i, const char *path, uint64_t *id, const char **wd)
{
	json_t *jid = json_object_get(x, "id"), *jwd = json_object_get(x, "withdraw");

	if (!json_is_integer(jid) || json_integer_value(jid) <= 0 || !json_is_string(jwd) ||
	    strncmp(json_string_value(jwd), "withdraw flow route ", 20) != 0) {
		LOG("state file %s: $.flowspec[%zu]: expected \"id\" (integer > 0) and "
		    "\"withdraw\" (\"withdraw flow route ...\")",
		    path, i);
		return false;
	}
	*id = (uint64_t)json_integer_value(jid);
	*wd = json_string_value(jwd);
	return true;
}

int
actions_fs_restore(struct fs_list *l, struct actions_exabgp *e, const json_t *saved,
		   const char *path)
{
	char key[ACTIONS_EXABGP_KEY_LEN];
	const char *wd;
	uint64_t id, last = l->last_id;
	json_t *x;
	size_t i;
	int rc;

	json_array_foreach(saved, i, x) if (!saved_entry(x, i, path, &id, &wd)) return -EINVAL;
	json_array_foreach(saved, i, x)
	{
		saved_entry(x, i, path, &id, &wd);
		/* A route known to the writer, removed at once: only its withdraw
		 * line is due (its announce reached an earlier dpmon's pipe). */
		route_key(id, key, sizeof(key));
		rc = actions_exabgp_announce(e, key, wd, wd, 0);
		if (rc >= 0)
			rc = actions_exabgp_withdraw(e, key);
		if (rc != 0)
			LOG("state file %s: $.flowspec[%zu]: cannot withdraw rule %" PRIu64 ": %s",
			    path, i, id, strerror(rc < 0 ? -rc : EEXIST));
		else
			LOG_INFO("flowspec rule %" PRIu64 " of the state file withdrawn (its "
				 "alert did not survive the restart)",
				 id);
		if (id > last)
			last = id;
	}
	l->last_id = last;
	if (i > 0)
		l->gen++;
	return (int)i;
}

/* ------------------------------------------------------------------------
 * Manual rules: the scope of their destination.
 * --------------------------------------------------------------------- */

int
actions_fs_scope_take(struct fs_scope *s, const struct dpmon_config *cfg)
{
	const struct dpmon_detect_conf *d = &cfg->detect;
	struct dpmon_prefix *sub = malloc(sizeof(*sub) * (cfg->n_subnets ? cfg->n_subnets : 1));
	struct dpmon_prefix *wl = malloc(sizeof(*wl) * (d->n_whitelist ? d->n_whitelist : 1));

	if (sub == NULL || wl == NULL) {
		free(sub);
		free(wl);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cfg->n_subnets; i++)
		sub[i] = cfg->subnets[i].prefix;
	if (d->n_whitelist > 0)
		memcpy(wl, d->whitelist, sizeof(*wl) * d->n_whitelist);
	actions_fs_scope_free(s);
	s->subnets = sub;
	s->n_subnets = cfg->n_subnets;
	s->whitelist = wl;
	s->n_whitelist = d->n_whitelist;
	return 0;
}

void
actions_fs_scope_free(struct fs_scope *s)
{
	free(s->subnets);
	free(s->whitelist);
	memset(s, 0, sizeof(*s));
}

/* Does prefix @p p hold every address of rule @p r's destination? */
static bool
holds_dst(const struct dpmon_prefix *p, const struct dpmon_fs_rule *r)
{
	return p->family == r->family && p->depth <= r->dst_len &&
	       dpmon_prefix_contains(p, &r->dst);
}

/* Do prefix @p p and rule @p r's destination share an address? */
static bool
meets_dst(const struct dpmon_prefix *p, const struct dpmon_fs_rule *r)
{
	struct dpmon_prefix d = {.addr = r->dst, .family = r->family, .depth = r->dst_len};

	return holds_dst(p, r) || (p->family == r->family && dpmon_prefix_contains(&d, &p->addr));
}

int64_t
actions_fs_add_manual(struct fs_list *l, struct actions_exabgp *e,
		      const struct dpmon_flowspec_conf *c, const struct fs_scope *s,
		      const struct dpmon_fs_rule *r, double now_unix_s, const char **why)
{
	bool inside = false;

	if (dpmon_fs_rule_check(r, why) != 0)
		return -EINVAL;
	for (uint32_t i = 0; i < s->n_subnets && !inside; i++)
		inside = holds_dst(&s->subnets[i], r);
	if (!inside) {
		*why = "destination: not inside a monitored subnet";
		return -EDOM;
	}
	for (uint32_t i = 0; i < s->n_whitelist; i++)
		if (meets_dst(&s->whitelist[i], r)) {
			*why = "destination: overlaps detection.whitelist";
			return -EDOM;
		}
	for (uint32_t i = 0; i < l->n; i++)
		if (dpmon_fs_rule_same_match(&l->v[i].rule, r)) {
			*why = "a rule with the same match exists";
			return -EEXIST;
		}
	return actions_fs_add(l, e, c, 0, r, 0, 0.0, now_unix_s);
}

void
actions_fs_free(struct fs_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
