/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry.h — dpmon's commands on DPDK's telemetry socket, so that
 * dpdk-telemetry.py and other DPDK tooling read dpmon like any DPDK app:
 *
 *   /dpmon/summary          totals, parse errors, ports, workers
 *   /dpmon/subnets[,FIRST]  monitored subnets, FIRST (default 0) onwards
 *   /dpmon/hosts,SUBNET     the busiest hosts of one subnet (CIDR)
 *   /dpmon/alerts           active alerts (none in this version)
 *
 * Every answer is rendered from the published snapshot (snapshot.h) only:
 * the telemetry thread never touches worker memory. Output formats are in
 * docs/operations.md.
 */
#ifndef DPMON_TELEMETRY_H
#define DPMON_TELEMETRY_H

#include "snapshot.h"

/** Subnets listed per /dpmon/subnets reply (DPDK limits a reply to 16 KiB). */
#define DPMON_TEL_SUBNETS_MAX 40
/** Hosts listed per /dpmon/hosts reply. */
#define DPMON_TEL_HOSTS_MAX   32

/**
 * Register the commands (once per process; later calls only re-attach)
 * and answer them from @p store until dpmon_telemetry_detach.
 * @return 0, or a negative errno from rte_telemetry_register_cmd
 *         (-EINVAL, -ENOMEM).
 * Thread-safety: after rte_eal_init, from the main lcore.
 */
int dpmon_telemetry_attach(struct dpmon_snap_store *store);

/**
 * Stop reading the store given to dpmon_telemetry_attach: waits for a
 * command being answered, after which commands answer
 * {"error": "dpmon is not running"}. Call before destroying the store.
 * Thread-safety: main lcore.
 */
void dpmon_telemetry_detach(void);

#endif /* DPMON_TELEMETRY_H */
