/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alert.h — one alert of the attack detection (detect.h) as the snapshot
 * and the API see it: immutable once built, refcounted, shared by every
 * snapshot that lists it (like struct dpmon_hist_point), so publishing a
 * snapshot with a thousand recent alerts copies a thousand pointers, not
 * a thousand alerts. An active alert whose peaks or sample change is
 * replaced by a new version with the same id; the old version lives on in
 * the older snapshots until they are freed.
 *
 * No DPDK dependency (the API's unit tests build alerts by hand).
 * docs/detection.md describes every field and the JSON.
 */
#ifndef DPMON_ALERT_H
#define DPMON_ALERT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "prefix.h"
#include "stats.h"

/**
 * Attack type, from the shares of the interval's packets in the direction
 * whose threshold fired (rules: docs/detection.md, detect.c).
 */
enum dpmon_attack {
	DPMON_ATTACK_UNKNOWN,        /**< "unknown": no class above 90 % */
	DPMON_ATTACK_SYN_FLOOD,      /**< "syn_flood": tcp_syn > 90 % of packets */
	DPMON_ATTACK_FRAGMENT_FLOOD, /**< "fragment_flood": fragments > 90 % */
	DPMON_ATTACK_UDP_FLOOD,      /**< "udp_flood": UDP > 90 % */
	DPMON_ATTACK_ICMP_FLOOD,     /**< "icmp_flood": ICMP > 90 % */
	DPMON_ATTACK_TCP_FLOOD,      /**< "tcp_flood": TCP > 90 % (not mostly SYN) */
	DPMON_ATTACK_MAX
};

/** What an alert watches: "target" in the API. */
enum dpmon_alert_target {
	DPMON_TARGET_HOST,   /**< "host": one address's rates */
	DPMON_TARGET_SUBNET, /**< "subnet": a monitored subnet's rates (carpet bombing) */
	DPMON_TARGET_MAX
};

/** One alert (one version of it). Immutable once listed by a snapshot. */
struct dpmon_alert {
	int refs;    /**< atomics; dpmon_alert_ref/unref */
	uint64_t id; /**< 1, 2, ... in order of start; GET /api/v1/alerts/{id} */
	enum dpmon_alert_target target;
	/** the host (its prefix's network address); a subnet's network address */
	struct dpmon_addr addr;
	/**
	 * Length in bits of its family of the host prefix @c addr stands for
	 * (its subnet's host_prefix_len); 0 = the whole address. Read it with
	 * dpmon_alert_host_len. Host alerts only.
	 */
	uint8_t prefix_len;
	struct dpmon_prefix prefix; /**< the subnet (DPMON_TARGET_SUBNET only) */
	enum dpmon_dir dir;         /**< direction of the threshold that fired */
	enum dpmon_metric metric;   /**< the metric that fired */
	double value;               /**< its value when the alert started (units of the metric) */
	double threshold;           /**< the limit it exceeded */
	enum dpmon_attack type;
	char hostgroup[DPMON_NAME_LEN]; /**< hostgroup whose thresholds applied; "" = global */
	char subnet[DPMON_NAME_LEN];    /**< a subnet alert's subnet name; "" = none */
	bool ban; /**< the hostgroup's (or the global) ban flag; always false for a subnet */
	double start_unix_s; /**< start, seconds since the epoch */
	double end_unix_s;   /**< end; 0 while active */
	/** Highest value of every metric in @c dir while active (flows: -1 = not measured). */
	double peak[DPMON_METRIC_MAX];
	json_t *sample; /**< dpmon_sampler_summary(), or NULL; owned, never modified */
	/** The attack's fingerprint (lib/detect/fingerprint.h), or NULL; owned, never modified. */
	json_t *fingerprint;
	/** The FlowSpec rules chosen for it, or why none, or NULL; owned, never modified. */
	json_t *flowspec;
};

/** The host prefix length of @p a, bits of its family: 32 or 128 unless shorter. Any thread. */
static inline unsigned
dpmon_alert_host_len(const struct dpmon_alert *a)
{
	return a->prefix_len != 0 ? a->prefix_len
				  : dpmon_family_bits(dpmon_addr_is_v4(&a->addr) ? 4 : 6);
}

/** Stable name of an attack type ("syn_flood"); NULL out of range. Any thread. */
const char *dpmon_attack_name(int t);

/** Name of alert target @p t ("host", "subnet"); NULL out of range. Any thread. */
const char *dpmon_alert_target_name(int t);

/**
 * A new alert, zeroed, one reference. @return NULL on allocation failure.
 * Thread-safety: any thread.
 */
struct dpmon_alert *dpmon_alert_alloc(void);

/**
 * A new version of @p a: a copy with one reference (the sample,
 * fingerprint and FlowSpec rules deep-copied). @return NULL on allocation failure. Any thread.
 */
struct dpmon_alert *dpmon_alert_copy(const struct dpmon_alert *a);

/** Take a reference. Any thread. */
void dpmon_alert_ref(struct dpmon_alert *a);

/** Drop a reference; the last one frees. NULL ignored. Any thread. */
void dpmon_alert_unref(struct dpmon_alert *a);

/**
 * The alert as the API shows it: {"id", "state": "active"|"ended",
 * "target": "host"|"subnet", "address" (a host alert; CIDR form for a
 * host prefix shorter than a whole address) or "prefix" and "subnet" (its
 * name, null when it has none; a subnet alert), "direction", "metric",
 * "value", "threshold", "type",
 * "hostgroup" (null = global), "ban", "start_unix_s", "end_unix_s" (null
 * while active), "duration_s" (to @p now_unix_s while active), "peak":
 * {metric: value, flows null when not measured}, "sample" (null when none),
 * "fingerprint" and "flowspec" (null when none)}.
 * @return a new reference, or NULL on allocation failure.
 * Thread-safety: any thread (reads @p a only; the sample is deep-copied).
 */
json_t *dpmon_alert_json(const struct dpmon_alert *a, double now_unix_s);

#endif /* DPMON_ALERT_H */
