/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampler.h — the main lcore's side of the alert packet sampler: what the
 * worker lcores copied of the watched hosts' and subnets' packets
 * (sample.h), counted per alert for its "sample" (top source and
 * destination addresses and ports) and written
 * to its capture file (actions.pcap_dir).
 *
 * The sampler owns the workers' side (struct dpmon_sample_feed: the watch
 * list and one ring per worker): the detection sets the watch list to the
 * hosts and subnets under alert (dpmon_sampler_watch) and drains the rings
 * after each merge (dpmon_sampler_drain). Per alert it counts the packets by
 * source and destination address, source port and destination port (one
 * rte_hash per alert, at
 * most DPMON_SAMPLE_KEYS keys: later new keys count only in the alert's
 * total) and writes the first pcap_packets copies of each alert to
 * pcap_dir/ALERT_ID.pcap (libpcap, Ethernet, snaplen 128, the original
 * wire length, the time of the copy). Alert ids start at 1 again at every
 * start, so an existing ALERT_ID.pcap (an earlier run's) is renamed to
 * ALERT_ID.MTIME.pcap (UTC, YYYYmmddTHHMMSSZ) first, never overwritten.
 * When the alert ends, the detection takes its last summary and the
 * sampler lets it go (dpmon_sampler_forget: file closed, counts freed); a
 * copy of it drained later is dropped.
 *
 * Thread-safety: the main lcore only, every function (it uses EAL memory
 * and hashes); the workers see only their struct dpmon_sample_core.
 */
#ifndef DPMON_SAMPLER_H
#define DPMON_SAMPLER_H

#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "fingerprint.h"
#include "prefix.h"
#include "sample.h"

/** Distinct sources and ports counted per alert. */
#define DPMON_SAMPLE_KEYS 8192

struct dpmon_sampler;

/**
 * Create the sampler for @p n_workers worker lcores: the watch list
 * (empty) and one ring per worker (sample.h).
 * @param conf  pcap_dir ("" = no capture files), pcap_packets and the
 *              directory's bound, pcap_max_files and pcap_max_mb (copied:
 *              the oldest capture files beyond it are removed now).
 * @return the sampler, or NULL with errno set (ENOMEM).
 * Thread-safety: main lcore, before the workers start.
 */
struct dpmon_sampler *dpmon_sampler_create(unsigned n_workers,
					   const struct dpmon_actions_conf *conf);

/**
 * Take reloaded settings: pcap_dir, pcap_packets, pcap_max_files and
 * pcap_max_mb of @p conf (copied; a new bound removes the oldest capture
 * files beyond it now).
 * A capture file already open stays in its directory until complete; one
 * complete under the new settings (no pcap_dir, or pcap_packets written)
 * is closed and never reopened. Alerts without a file yet (or whose file
 * could not be created) write theirs into a new pcap_dir.
 * @param conf  the reloaded "actions" keys.
 * Thread-safety: main lcore (as dpmon_sampler_drain).
 */
void dpmon_sampler_reconfigure(struct dpmon_sampler *s, const struct dpmon_actions_conf *conf);

/**
 * Leave the packets from the @p n prefixes @p ignored
 * (detection.ignore_sources) out of every fingerprint from now on (they
 * are still counted in the sample and written to the capture file),
 * replacing the previous list.
 * @return 0, or -ENOMEM (the previous list stays).
 * Thread-safety: main lcore (as dpmon_sampler_drain).
 */
int dpmon_sampler_set_ignored(struct dpmon_sampler *s, const struct dpmon_prefix *ignored,
			      uint32_t n);

/**
 * Let go of alert @p alert_id (it ended; its summary was taken): close its
 * capture file and free its counts. Copies of it still in the rings are
 * dropped at the next drain (an alert not on the watch list gets no new
 * counts). Unknown ids are ignored.
 * Thread-safety: main lcore.
 */
void dpmon_sampler_forget(struct dpmon_sampler *s, uint64_t alert_id);

/** Free the sampler (workers stopped). NULL ignored. Main lcore. */
void dpmon_sampler_free(struct dpmon_sampler *s);

/**
 * Watch @p hosts from now on (replaces the previous list; n = 0 stops).
 * @p alert_ids[i] names host i's samples (summary, DIR/ID.pcap). A host
 * under an ingress and an egress alert is listed twice, its ingress alert
 * first: packets to it count for the first entry, packets from it for the
 * second (dpmon_sample_match, dpmon_sample_match_source). An entry with a
 * prefix length below 128 watches a subnet: every address inside it.
 * @param hosts      @p n addresses (IPv4 mapped, prefix.h): hosts, or a
 *                   subnet's network address.
 * @param depths     @p n prefix lengths in bits of the mapped address
 *                   (128: a host; an IPv4 /24 is 120; a host counted per
 *                   prefix, host_prefix_len, is that prefix), or NULL:
 *                   all whole addresses.
 * @param alert_ids  @p n alert ids, one per entry.
 * @return 0, or -E2BIG when @p n > DPMON_SAMPLE_WATCH_MAX (nothing changed).
 * Thread-safety: main lcore.
 */
int dpmon_sampler_watch(struct dpmon_sampler *s, const struct dpmon_addr *hosts,
			const uint8_t *depths, const uint64_t *alert_ids, unsigned n);

/**
 * Take the copies the workers made since the last call: add them to their
 * alert's summary and capture file (up to pcap_packets per alert). A copy
 * of an alert neither counted yet nor on the watch list (it was forgotten)
 * is dropped.
 * Thread-safety: main lcore.
 */
void dpmon_sampler_drain(struct dpmon_sampler *s);

/**
 * The sample of alert @p alert_id as JSON: {"packets": N, "sources":
 * [{"address": A, "packets": N}], "destinations": [...], "source_ports":
 * [{"port": P, "packets": N}], "destination_ports": [...]}, each list the
 * top 10 by packets.
 * @return a new reference, or NULL when nothing was sampled for it.
 * Thread-safety: main lcore.
 */
json_t *dpmon_sampler_summary(struct dpmon_sampler *s, uint64_t alert_id);

/**
 * The fingerprint of alert @p alert_id: the header fields of its first
 * actions.flowspec.sample_packets copies (as of the creation of its
 * counts), read from the sampler's copies.
 * @return the fingerprint, owned by the sampler and valid until the next
 *         dpmon_sampler_drain or dpmon_sampler_forget; NULL when nothing was
 *         sampled for it.
 * Thread-safety: main lcore.
 */
const struct dpmon_fp *dpmon_sampler_fingerprint(struct dpmon_sampler *s, uint64_t alert_id);

/**
 * The FlowSpec settings the sampler took (actions.flowspec of the last
 * create or reconfigure): its fingerprints' size, and for the detection
 * the sample's timeout and the rule choice's settings.
 * Thread-safety: main lcore.
 */
const struct dpmon_flowspec_conf *dpmon_sampler_flowspec(const struct dpmon_sampler *s);

/**
 * Worker @p worker's part (0 .. n_workers - 1), to put in its struct
 * dpmon_core before it starts.
 * @return the part, owned by the sampler. Main lcore.
 */
struct dpmon_sample_core *dpmon_sampler_core(struct dpmon_sampler *s, unsigned worker);

/** Copies dropped on full rings, all workers, since creation. Main lcore. */
uint64_t dpmon_sampler_dropped(const struct dpmon_sampler *s);

/** Copies enqueued by all workers since creation. Main lcore. */
uint64_t dpmon_sampler_copied(const struct dpmon_sampler *s);

#endif /* DPMON_SAMPLER_H */
