/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alert.c — alert objects and their JSON (see alert.h).
 *
 * The sample (a json_t) is never shared between versions or with a
 * response: it is deep-copied both when a version is made and when it is
 * rendered. Rendering runs on the HTTP thread and the last reference to a
 * version may be dropped there too, while the main lcore builds the next
 * version; copies keep two threads from ever touching one json_t's
 * reference count.
 */
#include "alert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const attack_names[DPMON_ATTACK_MAX] = {
	[DPMON_ATTACK_UNKNOWN] = "unknown",
	[DPMON_ATTACK_SYN_FLOOD] = "syn_flood",
	[DPMON_ATTACK_FRAGMENT_FLOOD] = "fragment_flood",
	[DPMON_ATTACK_UDP_FLOOD] = "udp_flood",
	[DPMON_ATTACK_ICMP_FLOOD] = "icmp_flood",
	[DPMON_ATTACK_TCP_FLOOD] = "tcp_flood",
};

const char *
dpmon_attack_name(int t)
{
	return t >= 0 && t < DPMON_ATTACK_MAX ? attack_names[t] : NULL;
}

const char *
dpmon_alert_target_name(int t)
{
	static const char *const names[DPMON_TARGET_MAX] = {
		[DPMON_TARGET_HOST] = "host",
		[DPMON_TARGET_SUBNET] = "subnet",
	};

	return t >= 0 && t < DPMON_TARGET_MAX ? names[t] : NULL;
}

struct dpmon_alert *
dpmon_alert_alloc(void)
{
	struct dpmon_alert *a = calloc(1, sizeof(*a));

	if (a != NULL)
		a->refs = 1;
	return a;
}

struct dpmon_alert *
dpmon_alert_copy(const struct dpmon_alert *a)
{
	struct dpmon_alert *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = *a;
	c->refs = 1;
	/* Never shared: the version's sample is dropped by whichever thread
	 * frees it, so no two threads ever touch one json_t. */
	c->sample = a->sample != NULL ? json_deep_copy(a->sample) : NULL;
	c->fingerprint = a->fingerprint != NULL ? json_deep_copy(a->fingerprint) : NULL;
	c->flowspec = a->flowspec != NULL ? json_deep_copy(a->flowspec) : NULL;
	return c;
}

void
dpmon_alert_ref(struct dpmon_alert *a)
{
	__atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
}

void
dpmon_alert_unref(struct dpmon_alert *a)
{
	if (a == NULL || __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	json_decref(a->sample);
	json_decref(a->fingerprint);
	json_decref(a->flowspec);
	free(a);
}

static json_t *
peak_json(const struct dpmon_alert *a)
{
	json_t *o = json_object();

	for (int m = 0; o != NULL && m < DPMON_METRIC_MAX; m++) {
		json_t *v = m == DPMON_METRIC_FLOWS && a->peak[m] < 0
				    ? json_null()
				    : json_real(dpmon_finite_or_zero(a->peak[m]));

		if (json_object_set_new(o, dpmon_metric_name(m), v) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o;
}

json_t *
dpmon_alert_json(const struct dpmon_alert *a, double now_unix_s)
{
	char addr[DPMON_PREFIX_STRLEN];
	bool active = a->end_unix_s == 0, subnet = a->target == DPMON_TARGET_SUBNET;
	double end = active ? now_unix_s : a->end_unix_s;
	double duration = end > a->start_unix_s ? end - a->start_unix_s : 0;
	json_t *o;

	if (subnet)
		dpmon_prefix_format(&a->prefix, addr, sizeof(addr));
	else
		dpmon_host_format(&a->addr, dpmon_alert_host_len(a), addr, sizeof(addr));
	o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:s,s:o,s:b,s:f,s:o,s:f,s:o,s:o}", "id",
		      (json_int_t)a->id, "state", active ? "active" : "ended", "target",
		      dpmon_alert_target_name(a->target), subnet ? "prefix" : "address", addr,
		      "direction", dpmon_dir_name(a->dir), "metric", dpmon_metric_name(a->metric),
		      "value", dpmon_finite_or_zero(a->value), "threshold",
		      dpmon_finite_or_zero(a->threshold), "type", dpmon_attack_name(a->type),
		      "hostgroup", a->hostgroup[0] ? json_string(a->hostgroup) : json_null(), "ban",
		      a->ban, "start_unix_s", dpmon_finite_or_zero(a->start_unix_s), "end_unix_s",
		      active ? json_null() : json_real(a->end_unix_s), "duration_s",
		      dpmon_finite_or_zero(duration), "peak", peak_json(a), "sample",
		      a->sample ? json_deep_copy(a->sample) : json_null());
	if (o != NULL &&
	    (json_object_set_new(o, "fingerprint",
				 a->fingerprint ? json_deep_copy(a->fingerprint) : json_null()) !=
		     0 ||
	     json_object_set_new(o, "flowspec",
				 a->flowspec ? json_deep_copy(a->flowspec) : json_null()) != 0)) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && subnet &&
	    json_object_set_new(o, "subnet", a->subnet[0] ? json_string(a->subnet) : json_null()) !=
		    0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}
