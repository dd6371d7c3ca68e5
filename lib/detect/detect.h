/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * detect.h — attack detection: thresholds on each host's averaged rates,
 * hostgroups, whitelist, thresholds on each monitored subnet's averaged
 * rates (carpet bombing), and the alert life cycle (docs/detection.md).
 *
 * Runs on the main lcore after each merge, on the new snapshot before its
 * publication (lib/run/loop.c): it evaluates every host of the snapshot, starts and
 * ends alerts, posts their events to the actions thread (actions.h), keeps
 * the sampler's watch list on the hosts under alert (sample.h), and
 * attaches the list of active and recent alerts to the snapshot (shared,
 * refcounted objects: alert.h). Nothing here touches worker memory.
 *
 * Cost: one pass over the snapshot's hosts, in address order. A host is
 * first compared with the smallest limit of each watched (direction,
 * metric) over the global thresholds and every enabled hostgroup: a host
 * below all of them (nearly every host, nearly always) costs a few
 * comparisons and no lookup. A host above one, or with state (counting
 * consecutive intervals, or under alert), is resolved to its hostgroup by
 * longest-prefix match (a binary search in the hostgroups' prefixes
 * flattened into sorted disjoint ranges, per family; the whitelist
 * likewise), once: the result is cached in its state. States are
 * kept sorted by address, so the pass meets them in a merge-join, without
 * a hash table. Subnets follow in a second pass (skipped while no subnet
 * has limits or a state), their states sorted by prefix.
 */
#ifndef DPMON_DETECT_H
#define DPMON_DETECT_H

#include <stdint.h>

#include "actions.h"
#include "alert.h"
#include "config.h"
#include "sampler.h"
#include "snapshot.h"

struct dpmon_detect;

/**
 * Create the detector for @p conf (copied: its hostgroups and the subnets
 * it views, conf->subnets, with their thresholds).
 * @param sampler  may be NULL (alerts then have no sample).
 * @param actions  may be NULL (events are not posted).
 * @return the detector, or NULL with errno set (ENOMEM).
 * Thread-safety: main lcore (no EAL resource is used).
 */
struct dpmon_detect *dpmon_detect_create(const struct dpmon_detect_conf *conf,
					 struct dpmon_sampler *sampler,
					 struct dpmon_actions *actions);

/**
 * Evaluate snapshot @p s (not yet published) and attach the alert list
 * and counts to it (s->alerts, n_alerts, alerts_active, alerts_started).
 * Drains the sampler first (its copies since the last merge) and updates
 * its watch list last. Times: hold time and consecutive intervals follow
 * s->uptime_s (the merge's measured clock); alert start and end are
 * stamped with @p now_unix_s (seconds since the epoch).
 * @return 0, or -ENOMEM: the snapshot then carries no alert list (counts
 *         are still set); the detector's state stays consistent.
 * Thread-safety: main lcore only.
 */
int dpmon_detect_run(struct dpmon_detect *d, struct dpmon_snapshot *s, double now_unix_s);

/**
 * Take reloaded settings (SIGHUP): thresholds, hostgroups, whitelist, life
 * cycle and the recent-alert bound. @p conf is copied (its prefix lists
 * into the detector's own tables), so the caller may free it afterwards.
 * Active alerts go on and end under the new settings (a host that is now
 * whitelisted or in a disabled hostgroup ends after the hold time); ended
 * alerts beyond a smaller recent_alerts are dropped, oldest first.
 * @return 0, or -ENOMEM with the old settings still in use.
 * Thread-safety: main lcore, between two dpmon_detect_run.
 */
int dpmon_detect_reconfigure(struct dpmon_detect *d, const struct dpmon_detect_conf *conf);

/**
 * Hosts tracked (above a threshold now, or under alert). Main lcore.
 */
uint32_t dpmon_detect_tracked(const struct dpmon_detect *d);

/** Free the detector and its alerts' references. NULL ignored. Main lcore. */
void dpmon_detect_free(struct dpmon_detect *d);

#endif /* DPMON_DETECT_H */
