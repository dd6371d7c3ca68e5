/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_blackholes.c — the blackhole list of the actions module: one
 * entry per address, made by an operator or held by banning alerts, and
 * the withdraws pending for the entries removed (actions.h has the rules,
 * actions.c the locking).
 *
 * The list is an array in no particular order (at most
 * DPMON_MAX_BLACKHOLES entries, searched linearly; saving the state file
 * sorts it). Each entry remembers whether its announce line reached
 * ExaBGP's pipe; a removed entry leaves a pending withdraw when ExaBGP is
 * configured, which adding the address again cancels. Every change bumps
 * a->gen, which the thread takes as "save the state file".
 */
#include "actions_private.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------
 * Entries and pending withdraws (lock held).
 * --------------------------------------------------------------------- */

static double
now_unix_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
actions_bh_find(const struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	for (uint32_t i = 0; i < a->n_bh; i++)
		if (dpmon_addr_cmp(&a->bh[i].addr, addr) == 0)
			return (int)i;
	return -1;
}

void
actions_wd_cancel(struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	for (uint32_t i = 0; i < a->n_wd; i++)
		if (dpmon_addr_cmp(&a->withdraws[i].addr, addr) == 0) {
			a->withdraws[i] = a->withdraws[--a->n_wd];
			return;
		}
}

/* Queue a withdraw of the route of entry @p b (when ExaBGP is configured). Lock held. */
static void
wd_add(struct dpmon_actions *a, const struct bh *b)
{
	const struct dpmon_addr *addr = &b->addr;
	struct route *bigger;
	char t[DPMON_PREFIX_STRLEN];

	if (a->conf.exabgp_pipe[0] == '\0')
		return;
	actions_wd_cancel(a, addr);
	if (a->n_wd == a->cap_wd) {
		uint32_t cap = a->cap_wd ? a->cap_wd * 2 : 16;

		bigger = cap <= DPMON_MAX_BLACKHOLES ? realloc(a->withdraws, cap * sizeof(*bigger))
						     : NULL;
		if (bigger == NULL) {
			LOG("withdraw of %s lost: %s",
			    dpmon_host_format(addr, b->len, t, sizeof(t)), strerror(ENOMEM));
			return;
		}
		a->withdraws = bigger;
		a->cap_wd = cap;
	}
	a->withdraws[a->n_wd++] = (struct route){.addr = *addr, .len = b->len};
}

struct bh *
actions_bh_new(struct dpmon_actions *a, const struct dpmon_addr *addr, unsigned len, double since)
{
	struct bh *bigger, *b;

	if (a->n_bh == DPMON_MAX_BLACKHOLES)
		return NULL;
	if (a->n_bh == a->cap_bh) {
		uint32_t cap = a->cap_bh ? a->cap_bh * 2 : 16;

		bigger = realloc(a->bh, cap * sizeof(*bigger));
		if (bigger == NULL)
			return NULL;
		a->bh = bigger;
		a->cap_bh = cap;
	}
	b = &a->bh[a->n_bh++];
	*b = (struct bh){.addr = *addr, .len = (uint8_t)len, .since = since};
	actions_wd_cancel(a, addr);
	return b;
}

void
actions_bh_delete(struct dpmon_actions *a, uint32_t i)
{
	assert(i < a->n_bh);
	wd_add(a, &a->bh[i]);
	a->bh[i] = a->bh[--a->n_bh];
	a->gen++;
}

static void
bh_public(const struct bh *b, struct dpmon_blackhole *out)
{
	*out = (struct dpmon_blackhole){.addr = b->addr,
					.prefix_len = b->len,
					.manual = b->manual,
					.alert_id = b->n_alerts ? b->alert_ids[0] : 0,
					.since_unix_s = b->since,
					.announced = b->announced};
}

/* ------------------------------------------------------------------------
 * Alert events (lock held).
 * --------------------------------------------------------------------- */

/* The ALERT_START of banning alert @p j: the host's entry (@p i, or a new
 * one when -1) is held by it too. Lock held. */
static void
ban_start(struct dpmon_actions *a, const struct job *j, int i)
{
	char t[DPMON_PREFIX_STRLEN];
	struct dpmon_addr key;
	unsigned len = actions_host_key(a, &j->addr, &key);
	struct bh *b;

	if (!actions_inside_subnets(a, &j->addr)) {
		LOG("alert %" PRIu64 ": %s is outside every monitored subnet%s: not blackholed",
		    j->alert_id, dpmon_host_format(&j->addr, j->len, t, sizeof(t)),
		    a->n_subnets == 0 ? " (none known: create the module with "
					"dpmon_actions_create_cfg)"
				      : "");
		return;
	}
	b = i >= 0 ? &a->bh[i] : actions_bh_new(a, &key, len, now_unix_s());
	if (b == NULL) {
		LOG("alert %" PRIu64 ": %s not blackholed: %d blackholes already", j->alert_id,
		    dpmon_host_format(&key, len, t, sizeof(t)), (int)a->n_bh);
		return;
	}
	if (b->restored_ids) { /* a new alert takes the entry over */
		b->n_alerts = 0;
		b->restored_ids = false;
	}
	for (uint32_t k = 0; k < b->n_alerts; k++)
		if (b->alert_ids[k] == j->alert_id)
			return;
	if (b->n_alerts < BH_MAX_ALERTS)
		b->alert_ids[b->n_alerts++] = j->alert_id;
	a->gen++;
}

/* The ALERT_END of @p j: entry @p i no longer held by it, and removed when
 * no alert or operator holds it. Lock held. */
static void
ban_end(struct dpmon_actions *a, const struct job *j, uint32_t i)
{
	struct bh *b = &a->bh[i];

	for (uint32_t k = 0; k < b->n_alerts; k++)
		if (b->alert_ids[k] == j->alert_id) {
			memmove(&b->alert_ids[k], &b->alert_ids[k + 1],
				(b->n_alerts - k - 1) * sizeof(b->alert_ids[0]));
			b->n_alerts--;
			a->gen++;
			break;
		}
	if (b->n_alerts == 0 && !b->manual)
		actions_bh_delete(a, i);
}

void
actions_apply_alert(struct dpmon_actions *a, const struct job *j)
{
	struct dpmon_addr key;
	int i;

	if (j->subnet)
		return; /* a subnet alert never blackholes (docs/detection.md) */
	(void)actions_host_key(a, &j->addr, &key);
	i = actions_bh_find(a, &key);
	if (j->kind == JOB_ALERT_START && j->ban) {
		ban_start(a, j, i);
	} else if (j->kind == JOB_ALERT_END && i >= 0 && !a->bh[i].restored_ids) {
		/* Restored ids are an earlier run's: alert ids start at 1 again,
		 * so this run's alert of the same id (one that did not ban, or it
		 * would have taken the entry over) is another alert. */
		ban_end(a, j, (uint32_t)i);
	}
}

/* ------------------------------------------------------------------------
 * Operators' changes and the public view.
 * --------------------------------------------------------------------- */

/* A notify job for an operator's ban/unban, when a script is configured. */
static void
enqueue_manual(struct dpmon_actions *a, enum job_kind kind, const struct bh *b)
{
	struct dpmon_blackhole pub;
	struct job j = {.kind = kind, .addr = b->addr, .len = b->len, .dir = DPMON_DIR_MAX};

	if (a->conf.notify_script[0] == '\0')
		return;
	bh_public(b, &pub);
	j.doc = dpmon_blackhole_json(&pub);
	if (!actions_enqueue(a, &j)) {
		json_decref(j.doc);
		LOG("queue full: notify script not run for a manual %s",
		    kind == JOB_BAN ? "ban" : "unban");
	}
}

int
dpmon_blackhole_add(struct dpmon_actions *a, const struct dpmon_addr *addr,
		    struct dpmon_blackhole *out)
{
	struct dpmon_addr key;
	unsigned len;
	struct bh *b;
	int i, rc = 0;

	pthread_mutex_lock(&a->lock);
	if (!actions_inside_subnets(a, addr)) {
		rc = -EDOM;
		goto out;
	}
	len = actions_host_key(a, addr, &key);
	i = actions_bh_find(a, &key);
	if (i >= 0 && a->bh[i].manual) {
		rc = 1;
		b = &a->bh[i];
	} else {
		b = i >= 0 ? &a->bh[i] : actions_bh_new(a, &key, len, now_unix_s());
		if (b == NULL) {
			rc = a->n_bh == DPMON_MAX_BLACKHOLES ? -ENOSPC : -ENOMEM;
			goto out;
		}
		b->manual = true;
		a->gen++;
		enqueue_manual(a, JOB_BAN, b);
		pthread_cond_signal(&a->wake);
	}
	if (out != NULL)
		bh_public(b, out);
out:
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int
dpmon_blackhole_remove(struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	struct dpmon_addr key;
	struct bh copy;
	int i;

	pthread_mutex_lock(&a->lock);
	(void)actions_host_key(a, addr, &key);
	if ((i = actions_bh_find(a, addr)) < 0)
		i = actions_bh_find(a, &key);
	if (i >= 0) {
		copy = a->bh[i];
		actions_bh_delete(a, (uint32_t)i);
		enqueue_manual(a, JOB_UNBAN, &copy);
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->lock);
	return i >= 0 ? 0 : 1;
}

int
dpmon_blackhole_get(struct dpmon_actions *a, const struct dpmon_addr *addr,
		    struct dpmon_blackhole *out)
{
	struct dpmon_addr key;
	int i;

	pthread_mutex_lock(&a->lock);
	(void)actions_host_key(a, addr, &key);
	if ((i = actions_bh_find(a, addr)) < 0)
		i = actions_bh_find(a, &key);
	if (i >= 0)
		bh_public(&a->bh[i], out);
	pthread_mutex_unlock(&a->lock);
	return i >= 0 ? 0 : -ENOENT;
}

int
dpmon_blackhole_host_len(struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	int len;

	pthread_mutex_lock(&a->lock);
	len = actions_inside_subnets(a, addr) ? (int)actions_host_len(a, addr) : -EDOM;
	pthread_mutex_unlock(&a->lock);
	return len;
}

static int
cmp_blackhole(const void *x, const void *y)
{
	return dpmon_addr_cmp(&((const struct dpmon_blackhole *)x)->addr,
			      &((const struct dpmon_blackhole *)y)->addr);
}

int
dpmon_blackhole_list(struct dpmon_actions *a, struct dpmon_blackhole **out)
{
	struct dpmon_blackhole *l = NULL;
	uint32_t n;

	pthread_mutex_lock(&a->lock);
	n = a->n_bh;
	if (n > 0 && (l = malloc(n * sizeof(*l))) != NULL)
		for (uint32_t i = 0; i < n; i++)
			bh_public(&a->bh[i], &l[i]);
	pthread_mutex_unlock(&a->lock);
	if (n > 0 && l == NULL)
		return -ENOMEM;
	if (n > 0)
		qsort(l, n, sizeof(*l), cmp_blackhole);
	*out = l;
	return (int)n;
}

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
