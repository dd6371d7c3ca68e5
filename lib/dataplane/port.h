/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port.h — ethdev set-up for receive-only monitoring ports.
 *
 * Works the same on a physical NIC and on a virtual device: nothing here
 * assumes a PMD. RSS is enabled with a symmetric Toeplitz key (0x6d5a
 * repeated, so both directions of a flow hash to the same queue) when the
 * port has more than one RX queue and the PMD reports RSS hash types; the
 * requested types are masked by dev_info.flow_type_rss_offloads. The PMD is
 * asked for the L2/L3/L4 packet types only (rte_eth_dev_set_ptypes, where
 * it supports that) and whether it reports the plain Ethernet/IP/TCP-UDP
 * ones is recorded (dpmon_port_ptypes).
 */
#ifndef DPMON_PORT_H
#define DPMON_PORT_H

#include <stdbool.h>
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

/**
 * Does @p port_id's PMD report the packet types the worker's parse starts
 * from (RTE_PTYPE_L2_ETHER, L3_IPV4 or L3_IPV6 with or without
 * _EXT_UNKNOWN, L4_TCP, L4_UDP and L4_FRAG in
 * rte_eth_dev_get_supported_ptypes, asked by dpmon_port_start)? The RX
 * queues of such a port are polled with DPMON_WORKER_PTYPE (worker.h); the
 * counts are the same either way. net_pcap reports none.
 * @return true when it does; false for a port not started by dpmon_port_start.
 * Thread-safety: main lcore, after dpmon_port_start.
 */
bool dpmon_port_ptypes(uint16_t port_id);

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
