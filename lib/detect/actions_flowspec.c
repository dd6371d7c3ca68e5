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
#include "flowspec_json.h"

/* The route key of rule @p id in the pipe writer. */
static void
route_key(uint64_t id, char *key, size_t len)
{
	snprintf(key, len, "flow:%" PRIu64, id);
}

/* Whose rule a log line names: "alert N", or "manual" for alert id 0. */
static const char *
owner(uint64_t alert_id, char o[32])
{
	if (alert_id == 0)
		return "manual";
	snprintf(o, 32, "alert %" PRIu64, alert_id);
	return o;
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

/*
 * Add rule @p r as entry @p id (past every id of the list) of alert
 * @p alert_id, created at @p created, announced through @p e unless @p c
 * says a dry run. @return @p id, or -EINVAL / -ENOMEM / the pipe writer's
 * error (nothing added).
 */
static int64_t
add_entry(struct fs_list *l, struct actions_exabgp *e, const struct dpmon_flowspec_conf *c,
	  uint64_t id, uint64_t alert_id, const struct dpmon_fs_rule *r, uint32_t matched,
	  double coverage, double created)
{
	char ann[DPMON_FS_TEXT_LEN], wd[DPMON_FS_TEXT_LEN], key[ACTIONS_EXABGP_KEY_LEN], o[32];
	struct fs_entry *x;
	int rc;

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
	x->id = id;
	x->alert_id = alert_id;
	x->rule = *r;
	x->matched = matched;
	x->coverage = coverage;
	x->created = created;
	if (c->announce) {
		route_key(x->id, key, sizeof(key));
		rc = actions_exabgp_announce(e, key, ann, wd,
					     c->keep_on_stop ? ACTIONS_ROUTE_KEEP_ON_STOP : 0);
		if (rc < 0)
			return rc;
		x->sent = true;
		l->announced++;
		l->gen++;
		LOG_INFO("flowspec rule %" PRIu64 " (%s): %s", x->id, owner(alert_id, o), ann);
	} else {
		LOG_INFO("flowspec rule %" PRIu64 " (%s), dry run, not sent: %s", x->id,
			 owner(alert_id, o), ann);
	}
	if (x->id > l->last_id)
		l->last_id = x->id;
	l->n++;
	return (int64_t)x->id;
}

int64_t
actions_fs_add(struct fs_list *l, struct actions_exabgp *e, const struct dpmon_flowspec_conf *c,
	       uint64_t alert_id, const struct dpmon_fs_rule *r, uint32_t matched, double coverage,
	       double now_unix_s)
{
	if (l->n >= c->max_rules) {
		l->refused++;
		return -ENOSPC;
	}
	return add_entry(l, e, c, l->last_id + 1, alert_id, r, matched, coverage, now_unix_s);
}

void
actions_fs_alert_end(struct fs_list *l, uint64_t alert_id, double now_unix_s)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].alert_id == alert_id && alert_id != 0 && l->v[i].ended == 0)
			l->v[i].ended = now_unix_s;
}

/* Withdraw entry @p i and move the last one into its place. A listed rule
 * with the same match is the same BGP route, which the withdraw takes
 * away too: its announce is made due again (written after the withdraw). */
static void
drop(struct fs_list *l, struct actions_exabgp *e, uint32_t i)
{
	char key[ACTIONS_EXABGP_KEY_LEN], o[32];

	if (l->v[i].sent) {
		route_key(l->v[i].id, key, sizeof(key));
		actions_exabgp_withdraw(e, key);
		l->gen++;
		for (uint32_t k = 0; k < l->n; k++)
			if (k != i && l->v[k].sent &&
			    dpmon_fs_rule_same_match(&l->v[k].rule, &l->v[i].rule)) {
				route_key(l->v[k].id, key, sizeof(key));
				(void)actions_exabgp_reannounce(e, key);
			}
	}
	LOG_INFO("flowspec rule %" PRIu64 " (%s) withdrawn", l->v[i].id,
		 owner(l->v[i].alert_id, o));
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

/* The text of a refusal that names a whitelist entry or a rule (the
 * calling thread's, until its next refusal). */
static _Thread_local char refusal[128];

/*
 * Why manual rule @p r may not join list @p l, or NULL when it may: not a
 * rule routers accept (*@p rc -EINVAL), a destination outside @p s's
 * subnets or meeting its whitelist (-EDOM), the same match as a listed
 * rule (-EEXIST). With @p any_subnet, a scope without subnets (unknown)
 * holds every destination.
 */
static const char *
manual_refusal(const struct fs_list *l, const struct fs_scope *s, const struct dpmon_fs_rule *r,
	       bool any_subnet, int *rc)
{
	const char *why = NULL;
	bool inside = any_subnet && s->n_subnets == 0;

	*rc = -EINVAL;
	if (dpmon_fs_rule_check(r, &why) != 0)
		return why;
	*rc = -EDOM;
	for (uint32_t i = 0; i < s->n_subnets && !inside; i++)
		inside = holds_dst(&s->subnets[i], r);
	if (!inside)
		return "destination: not inside a monitored subnet";
	for (uint32_t i = 0; i < s->n_whitelist; i++)
		if (meets_dst(&s->whitelist[i], r)) {
			char t[DPMON_PREFIX_STRLEN];

			snprintf(refusal, sizeof(refusal),
				 "destination: overlaps %s of detection.whitelist",
				 dpmon_prefix_format(&s->whitelist[i], t, sizeof(t)));
			return refusal;
		}
	*rc = -EEXIST;
	for (uint32_t i = 0; i < l->n; i++)
		if (dpmon_fs_rule_same_match(&l->v[i].rule, r)) {
			snprintf(refusal, sizeof(refusal), "rule %" PRIu64 " has the same match",
				 l->v[i].id);
			return refusal;
		}
	*rc = 0;
	return NULL;
}

int64_t
actions_fs_add_manual(struct fs_list *l, struct actions_exabgp *e,
		      const struct dpmon_flowspec_conf *c, const struct fs_scope *s,
		      const struct dpmon_fs_rule *r, double now_unix_s, const char **why)
{
	int rc;
	const char *no = manual_refusal(l, s, r, false, &rc);

	if (no != NULL) {
		*why = no;
		return rc;
	}
	return actions_fs_add(l, e, c, 0, r, 0, 0.0, now_unix_s);
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

		json_t *o = lines(&x->rule, ann, wd) != 0
				    ? NULL
				    : json_pack("{s:I,s:I,s:s,s:s,s:f}", "id", (json_int_t)x->id,
						"alert_id", (json_int_t)x->alert_id, "announce",
						ann, "withdraw", wd, "created", x->created);

		/* A manual rule keeps its components: the next start announces it again. */
		if (o != NULL && x->alert_id == 0 &&
		    json_object_set_new(o, "rule", dpmon_fs_rule_to_json(&x->rule)) != 0) {
			json_decref(o);
			o = NULL;
		}
		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	free(order);
	return arr;
}

/* The largest rule id of the state file: exact in a JSON number (a double),
 * so far from 2^63 that the ids after it never wrap. */
#define SAVED_ID_MAX ((UINT64_C(1) << 53) - 1)

/* One rule of the state file, as read by saved_entry. */
struct saved_rule {
	uint64_t id;
	uint64_t alert_id;
	const char *wd; /* its withdraw line */
	double created; /* 0 when the file has none */
	bool manual;    /* a manual rule with its components: @c rule */
	struct dpmon_fs_rule rule;
	char refused[160]; /* why its components are now refused, or "" */
};

/* Entry @p i (@p x) of the state file's rules into @p out; false (logged)
 * when malformed. */
static bool
saved_entry(json_t *x, size_t i, const char *path, struct saved_rule *out)
{
	json_t *jid = json_object_get(x, "id"), *jwd = json_object_get(x, "withdraw");
	json_t *jrule = json_object_get(x, "rule");
	struct dpmon_fs_json_error err;

	memset(out, 0, sizeof(*out));
	if (!json_is_integer(jid) || json_integer_value(jid) <= 0 ||
	    (uint64_t)json_integer_value(jid) > SAVED_ID_MAX || !json_is_string(jwd) ||
	    strncmp(json_string_value(jwd), "withdraw flow route ", 20) != 0) {
		LOG("state file %s: $.flowspec[%zu]: expected \"id\" (integer 1 .. 2^53 - 1) "
		    "and \"withdraw\" (\"withdraw flow route ...\")",
		    path, i);
		return false;
	}
	out->id = (uint64_t)json_integer_value(jid);
	out->alert_id = (uint64_t)json_integer_value(json_object_get(x, "alert_id"));
	out->wd = json_string_value(jwd);
	out->created = json_number_value(json_object_get(x, "created"));
	if (out->alert_id != 0 || jrule == NULL)
		return true;
	if (dpmon_fs_rule_from_json(jrule, &out->rule, &err) != 0) {
		if (err.fault == DPMON_FS_JSON_REFUSED) {
			/* Taken by an earlier version: withdrawn, not fatal. */
			snprintf(out->refused, sizeof(out->refused), "its rule's %s %s", err.field,
				 err.what);
			return true;
		}
		if (err.fault == DPMON_FS_JSON_NOT_OBJECT)
			LOG("state file %s: $.flowspec[%zu].rule: expected an object (a manual "
			    "rule's components)",
			    path, i);
		else
			LOG("state file %s: $.flowspec[%zu].rule.%s: %s", path, i, err.field,
			    err.what);
		return false;
	}
	out->manual = true;
	return true;
}

/* Why manual rule @p r of the state file cannot be announced again, or
 * NULL when it can: the checks of a new manual rule (@p s's subnets only
 * when known), the budget and the dry run. */
static const char *
restore_refusal(const struct fs_list *l, const struct dpmon_flowspec_conf *c,
		const struct fs_scope *s, const struct dpmon_fs_rule *r)
{
	int rc;
	const char *why = manual_refusal(l, s, r, true, &rc);

	if (why == NULL && !c->announce)
		why = "flowspec.announce is false (a dry run)";
	if (why == NULL && l->n >= c->max_rules)
		why = "the budget flowspec.max_rules is spent";
	return why;
}

/* Withdraw rule @p x of the state file (entry @p i) by its saved line,
 * because @p why. @return 1 when the withdraw is due, else 0 (logged). */
static int
restore_withdraw(struct actions_exabgp *e, const struct saved_rule *x, size_t i, const char *path,
		 const char *why)
{
	char key[ACTIONS_EXABGP_KEY_LEN];
	int rc;

	/* A route known to the writer, removed at once: only its withdraw
	 * line is due (its announce reached an earlier dpmon's pipe). */
	route_key(x->id, key, sizeof(key));
	rc = actions_exabgp_announce(e, key, x->wd, x->wd, 0);
	if (rc >= 0)
		rc = actions_exabgp_withdraw(e, key);
	if (rc != 0) {
		LOG("state file %s: $.flowspec[%zu]: cannot withdraw rule %" PRIu64 ": %s", path, i,
		    x->id, strerror(rc < 0 ? -rc : EEXIST));
		return 0;
	}
	LOG_INFO("flowspec rule %" PRIu64 " of the state file withdrawn (%s)", x->id, why);
	return 1;
}

/* An id and the index of its entry in the state file's array. */
struct saved_id {
	uint64_t id;
	size_t i;
};

static int
cmp_saved_id(const void *x, const void *y)
{
	const struct saved_id *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Whether each rule of @p saved (entries already checked) has an id of its
 * own: the id is the rule's route key in the pipe's writer, so two rules
 * under one id would be one route, the other listed but never sent.
 * @return 0, -EINVAL (logged) or -ENOMEM. */
static int
saved_ids_unique(const json_t *saved, const char *path)
{
	size_t n = json_array_size(saved), i;
	struct saved_id *v;
	json_t *j;
	int rc = 0;

	if (n < 2)
		return 0;
	v = malloc(sizeof(*v) * n);
	if (v == NULL)
		return -ENOMEM;
	json_array_foreach(saved, i, j) v[i] = (struct saved_id){
		.id = (uint64_t)json_integer_value(json_object_get(j, "id")), .i = i};
	qsort(v, n, sizeof(*v), cmp_saved_id);
	for (i = 1; i < n && rc == 0; i++)
		if (v[i].id == v[i - 1].id) {
			LOG("state file %s: $.flowspec[%zu].id: %" PRIu64
			    " is the id of $.flowspec[%zu] too",
			    path, v[i].i, v[i].id, v[i - 1].i);
			rc = -EINVAL;
		}
	free(v);
	return rc;
}

int
actions_fs_restore(struct fs_list *l, struct actions_exabgp *e, const struct dpmon_flowspec_conf *c,
		   const struct fs_scope *s, const json_t *saved, const char *path)
{
	struct saved_rule x;
	const char *why;
	uint64_t last = l->last_id;
	int withdrawn = 0, rc;
	json_t *j;
	size_t i;

	json_array_foreach(saved, i, j)
	{
		if (!saved_entry(j, i, path, &x))
			return -EINVAL;
		if (x.id > last)
			last = x.id;
	}
	if ((rc = saved_ids_unique(saved, path)) != 0)
		return rc;
	/* New rules take ids past the file's, so that a new rule's announce
	 * never cancels a withdraw still waiting for the pipe. */
	l->last_id = last;
	json_array_foreach(saved, i, j)
	{
		saved_entry(j, i, path, &x);
		why = x.manual               ? restore_refusal(l, c, s, &x.rule)
		      : x.refused[0] != '\0' ? x.refused
					     : "its alert did not survive the restart";
		if (why == NULL &&
		    add_entry(l, e, c, x.id, 0, &x.rule, 0, 0.0, x.created) == (int64_t)x.id) {
			LOG_INFO("flowspec rule %" PRIu64 " of the state file announced again "
				 "(a manual rule)",
				 x.id);
			continue;
		}
		withdrawn += restore_withdraw(e, &x, i, path,
					      why != NULL ? why : "cannot announce it again");
		l->gen++;
	}
	l->last_id = last;
	return withdrawn;
}

void
actions_fs_free(struct fs_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
