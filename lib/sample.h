/*
 * sample.h — copies of the packets to and from watched hosts (the hosts
 * under an active alert), for the alert's "sample" (top source addresses
 * and ports) and for its capture file (actions.pcap_dir).
 *
 * The main lcore sets the watch list; each worker lcore compares the
 * addresses of its packets with it only while it is not empty (one
 * predictable branch per burst otherwise) and copies the first bytes of a
 * matching packet into its own single-producer ring; the main lcore drains
 * the rings after each merge. Nothing is allocated per packet; a full ring
 * drops the copy and counts it.
 */
#ifndef DPMON_SAMPLE_H
#define DPMON_SAMPLE_H

#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "prefix.h"

/** Most hosts watched at once. */
#define DPMON_SAMPLE_WATCH_MAX 16

struct dpmon_sampler;

/**
 * Create the sampler for @p n_workers worker lcores.
 * @param conf  pcap_dir ("" = no capture files) and pcap_packets (copied).
 * @return the sampler, or NULL with errno set (ENOMEM).
 * Thread-safety: main lcore, before the workers start.
 */
struct dpmon_sampler *dpmon_sampler_create(unsigned n_workers,
					   const struct dpmon_actions_conf *conf);

/** Free the sampler (workers stopped). NULL ignored. Main lcore. */
void dpmon_sampler_free(struct dpmon_sampler *s);

/**
 * Watch @p hosts from now on (replaces the previous list; n = 0 stops).
 * @p alert_ids[i] names host i's samples (summary, DIR/ID.pcap).
 * @return 0, or -E2BIG when @p n > DPMON_SAMPLE_WATCH_MAX (nothing changed).
 * Thread-safety: main lcore.
 */
int dpmon_sampler_watch(struct dpmon_sampler *s, const struct dpmon_addr *hosts,
			const uint64_t *alert_ids, unsigned n);

/**
 * Take the copies the workers made since the last call: add them to their
 * alert's summary and capture file (up to pcap_packets per alert).
 * Thread-safety: main lcore.
 */
void dpmon_sampler_drain(struct dpmon_sampler *s);

/**
 * The sample of alert @p alert_id as JSON: {"packets": N, "sources":
 * [{"address": A, "packets": N}], "source_ports": [{"port": P, "packets":
 * N}], "destination_ports": [...]}, each list the top 10 by packets.
 * @return a new reference, or NULL when nothing was sampled for it.
 * Thread-safety: main lcore.
 */
json_t *dpmon_sampler_summary(struct dpmon_sampler *s, uint64_t alert_id);

#endif /* DPMON_SAMPLE_H */
