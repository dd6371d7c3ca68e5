/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port.h — ethdev set-up for receive-only monitoring ports.
 *
 * Works the same on a physical NIC and on a virtual device: nothing here
 * assumes a PMD. RSS is enabled with a symmetric Toeplitz key (0x6d5a
 * repeated, so both directions of a flow hash to the same queue) when the
 * port has more than one RX queue and the PMD reports RSS hash types; the
 * requested types are masked by dev_info.flow_type_rss_offloads.
 */
#ifndef DPMON_PORT_H
#define DPMON_PORT_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"

/**
 * Resolve a device name ("net_pcap0", "0000:01:00.0") or a decimal port id
 * to an ethdev port id.
 * @return 0, or -ENODEV (no such device; the message names it on @p err).
 */
int dpmon_port_resolve(const char *device, uint16_t *port_id, FILE *err);

/**
 * Configure and start @p port_id with @p pc->rx_queues RX queues (no TX),
 * a private mbuf pool on the port's NUMA socket, promiscuous mode when the
 * PMD supports it.
 * @param mbufs_per_queue  pool share per queue (raised to cover the ring)
 *                         when @p pc->mbufs is DPMON_MBUFS_AUTO.
 * @return 0 or a negative errno from ethdev/mempool (message on @p err);
 *         -ENOMEM with a message naming ports[].mbufs when the pool is too
 *         small for the RX queues.
 * Thread-safety: main lcore, before the workers start.
 */
int dpmon_port_start(uint16_t port_id, const struct dpmon_port_conf *pc, uint32_t mbufs_per_queue,
		     uint16_t burst, FILE *err);

/**
 * Packets a net_pcap port with infinite_rx=1 keeps resident in mbufs (the
 * records of its rx_pcap files), or 0 for any other port.
 * Thread-safety: main lcore, after EAL init (reads the capture files).
 */
uint64_t dpmon_port_pcap_resident(uint16_t port_id);

/** NIC counters of one port (rte_eth_stats_get), as the snapshot lists them. */
struct dpmon_port_stats {
	char device[DPMON_DEVICE_LEN];
	uint16_t port_id;
	uint16_t rx_queues;
	uint64_t ipackets, ibytes, imissed, ierrors, rx_nombuf;
};

/** Read the NIC counters (rte_eth_stats_get) into @p out. Main lcore. */
void dpmon_port_read_stats(uint16_t port_id, struct dpmon_port_stats *out);

/** Stop and close the port (its mbuf pool lives until rte_eal_cleanup). Main lcore. */
void dpmon_port_stop(uint16_t port_id);

#endif /* DPMON_PORT_H */
