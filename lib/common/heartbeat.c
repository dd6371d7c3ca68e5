/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heartbeat.c — the process's registry of control-thread heartbeats
 * (heartbeat.h): a fixed array of slots under one mutex, each with an
 * atomic time of its last beat, so that a beat never takes the lock.
 */
#include "heartbeat.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

struct dpmon_heartbeat {
	bool used; /* guarded by registry_lock */
	char name[DPMON_HEARTBEAT_NAME_LEN];
	uint64_t last_ns;    /* __atomic builtins */
	uint32_t max_age_ms; /* __atomic builtins */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dpmon_heartbeat registry[DPMON_HEARTBEAT_MAX];

uint64_t
dpmon_heartbeat_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct dpmon_heartbeat *
dpmon_heartbeat_register(const char *name, uint32_t max_age_ms)
{
	struct dpmon_heartbeat *hb = NULL;

	if (name == NULL || max_age_ms == 0) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < DPMON_HEARTBEAT_MAX && hb == NULL; i++)
		if (!registry[i].used)
			hb = &registry[i];
	if (hb != NULL) {
		hb->used = true;
		snprintf(hb->name, sizeof(hb->name), "%s", name);
		__atomic_store_n(&hb->max_age_ms, max_age_ms, __ATOMIC_RELAXED);
		__atomic_store_n(&hb->last_ns, dpmon_heartbeat_now_ns(), __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&registry_lock);
	if (hb == NULL)
		errno = ENOSPC;
	return hb;
}

void
dpmon_heartbeat_unregister(struct dpmon_heartbeat *hb)
{
	if (hb == NULL)
		return;
	pthread_mutex_lock(&registry_lock);
	hb->used = false;
	pthread_mutex_unlock(&registry_lock);
}

void
dpmon_heartbeat_beat(struct dpmon_heartbeat *hb)
{
	if (hb != NULL)
		__atomic_store_n(&hb->last_ns, dpmon_heartbeat_now_ns(), __ATOMIC_RELAXED);
}

void
dpmon_heartbeat_set_max_age(struct dpmon_heartbeat *hb, uint32_t max_age_ms)
{
	if (hb == NULL)
		return;
	__atomic_store_n(&hb->max_age_ms, max_age_ms ? max_age_ms : 1, __ATOMIC_RELAXED);
	dpmon_heartbeat_beat(hb);
}

unsigned
dpmon_heartbeat_overdue(uint64_t now_ns, struct dpmon_heartbeat_late *out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < DPMON_HEARTBEAT_MAX; i++) {
		const struct dpmon_heartbeat *hb = &registry[i];
		uint64_t last = __atomic_load_n(&hb->last_ns, __ATOMIC_RELAXED);
		uint32_t max_ms = __atomic_load_n(&hb->max_age_ms, __ATOMIC_RELAXED);
		uint64_t age = now_ns > last ? now_ns - last : 0;

		if (!hb->used || age <= (uint64_t)max_ms * 1000000ull)
			continue;
		if (n < max) {
			snprintf(out[n].name, sizeof(out[n].name), "%s", hb->name);
			out[n].age_ns = age;
			out[n].max_age_ms = max_ms;
		}
		n++;
	}
	pthread_mutex_unlock(&registry_lock);
	return n;
}
