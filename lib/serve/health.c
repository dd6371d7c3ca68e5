/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * health.c — the health board and the verdict of /health (health.h).
 *
 * The main lcore stores the board's times with release order after the
 * values they cover; the HTTP thread loads them with acquire order, so a
 * reader that sees a look at the lcores also sees the times it recorded.
 */
#include "health.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "heartbeat.h"

#define NS_PER_MS 1000000ull

int
dpmon_health_init(struct dpmon_health *h, unsigned n_lcores, uint32_t merge_interval_ms)
{
	uint64_t age = (uint64_t)merge_interval_ms * DPMON_HEALTH_MERGE_INTERVALS;

	if (age < DPMON_HEALTH_MIN_AGE_MS)
		age = DPMON_HEALTH_MIN_AGE_MS;
	if (age > UINT32_MAX)
		age = UINT32_MAX;
	*h = (struct dpmon_health){.merge_max_age_ms = (uint32_t)age,
				   .lcore_max_age_ms = (uint32_t)age,
				   .n_lcores = n_lcores};
	h->lcores = calloc(n_lcores ? n_lcores : 1, sizeof(*h->lcores));
	if (h->lcores == NULL) {
		h->n_lcores = 0;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n_lcores; i++)
		snprintf(h->lcores[i].name, sizeof(h->lcores[i].name), "lcore %u", i);
	return 0;
}

void
dpmon_health_fini(struct dpmon_health *h)
{
	free(h->lcores);
	h->lcores = NULL;
	h->n_lcores = 0;
}

void
dpmon_health_name(struct dpmon_health *h, unsigned i, const char *fmt, ...)
{
	va_list ap;

	if (i >= h->n_lcores)
		return;
	va_start(ap, fmt);
	vsnprintf(h->lcores[i].name, sizeof(h->lcores[i].name), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * The main lcore's side.
 * --------------------------------------------------------------------- */

void
dpmon_health_start(struct dpmon_health *h, uint64_t now_ns)
{
	for (unsigned i = 0; i < h->n_lcores; i++)
		__atomic_store_n(&h->lcores[i].last_poll_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&h->gathered_ns, now_ns, __ATOMIC_RELEASE);
	__atomic_store_n(&h->merge_ns, now_ns, __ATOMIC_RELEASE);
}

void
dpmon_health_merged(struct dpmon_health *h, uint64_t now_ns)
{
	__atomic_store_n(&h->merge_ns, now_ns, __ATOMIC_RELEASE);
}

void
dpmon_health_poll(struct dpmon_health *h, unsigned i, uint64_t polls, uint64_t now_ns)
{
	struct dpmon_health_lcore *l;

	if (i >= h->n_lcores || polls == h->lcores[i].polls_seen)
		return;
	l = &h->lcores[i];
	l->polls_seen = polls;
	__atomic_store_n(&l->last_poll_ns, now_ns, __ATOMIC_RELAXED);
}

/* Has lcore @p l polled within the limit, as of the look at @p seen_ns? */
static bool
lcore_polls(const struct dpmon_health *h, const struct dpmon_health_lcore *l, uint64_t seen_ns,
	    uint64_t *age_ns)
{
	uint64_t last = __atomic_load_n(&l->last_poll_ns, __ATOMIC_RELAXED);

	*age_ns = seen_ns > last ? seen_ns - last : 0;
	return *age_ns <= (uint64_t)h->lcore_max_age_ms * NS_PER_MS;
}

bool
dpmon_health_gathered(struct dpmon_health *h, uint64_t now_ns)
{
	bool all = true;
	uint64_t age;

	__atomic_store_n(&h->gathered_ns, now_ns, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < h->n_lcores; i++)
		all = lcore_polls(h, &h->lcores[i], now_ns, &age) && all;
	return all;
}

/* ------------------------------------------------------------------------
 * The verdict.
 * --------------------------------------------------------------------- */

/* Add "<what>: no <kind> for A s (limit L s)" to @p v, or count it in the
 * last slot once the list is full. */
static void
add_reason(struct dpmon_health_verdict *v, unsigned *more, const char *what, const char *kind,
	   uint64_t age_ns, uint32_t limit_ms)
{
	if (v->n_reasons + 1 < DPMON_HEALTH_REASONS_MAX) {
		snprintf(v->reasons[v->n_reasons++], DPMON_HEALTH_REASON_LEN,
			 "%.31s: no %.9s for %.1f s (limit %.1f s)", what, kind,
			 (double)age_ns * 1e-9, (double)limit_ms * 1e-3);
		return;
	}
	++*more;
}

void
dpmon_health_check(const struct dpmon_health *h, uint64_t now_ns, struct dpmon_health_verdict *v)
{
	struct dpmon_heartbeat_late late[DPMON_HEALTH_REASONS_MAX];
	unsigned n_late, more = 0;

	v->n_reasons = 0;
	if (h != NULL) {
		uint64_t merge = __atomic_load_n(&h->merge_ns, __ATOMIC_ACQUIRE);
		uint64_t seen = __atomic_load_n(&h->gathered_ns, __ATOMIC_ACQUIRE);
		uint64_t age;

		if (merge != 0 && now_ns > merge &&
		    now_ns - merge > (uint64_t)h->merge_max_age_ms * NS_PER_MS)
			add_reason(v, &more, "merge", "merge", now_ns - merge, h->merge_max_age_ms);
		for (unsigned i = 0; seen != 0 && i < h->n_lcores; i++)
			if (!lcore_polls(h, &h->lcores[i], seen, &age))
				add_reason(v, &more, h->lcores[i].name, "RX poll", age,
					   h->lcore_max_age_ms);
	}
	n_late = dpmon_heartbeat_overdue(now_ns, late, DPMON_HEALTH_REASONS_MAX);
	for (unsigned i = 0; i < n_late; i++) {
		if (i < DPMON_HEALTH_REASONS_MAX)
			add_reason(v, &more, late[i].name, "heartbeat", late[i].age_ns,
				   late[i].max_age_ms);
		else
			more++;
	}
	if (more > 0)
		snprintf(v->reasons[v->n_reasons++], DPMON_HEALTH_REASON_LEN, "and %u more", more);
}

json_t *
dpmon_health_reasons_json(const struct dpmon_health_verdict *v)
{
	json_t *a = json_array();

	for (unsigned i = 0; a != NULL && v != NULL && i < v->n_reasons; i++)
		if (json_array_append_new(a, json_string(v->reasons[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}
