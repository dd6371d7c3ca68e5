/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * distributor.h — software RSS for ports that have one RX queue.
 *
 * With "software_rss": true in the configuration, the first worker lcore
 * becomes a distributor: it polls every RX queue of every port and hands
 * each packet to one of the other worker lcores through a single-producer,
 * single-consumer rte_ring per (worker, port). The worker is chosen by a
 * symmetric hash of the IP addresses (CRC32 of the smaller then the larger
 * address), so both directions of a conversation, and every packet of a
 * host pair, reach the same worker. Packets without an IPv4 or IPv6 header
 * after Ethernet and up to two VLAN tags go to the first worker. (The
 * merged counts do not depend on the choice: every packet is counted by
 * exactly one worker.)
 *
 * A full ring: the distributor keeps the packets and retries, yielding the
 * CPU (sched_yield) so that a worker sharing its CPU can drain it, for at
 * most DPMON_DIST_WAIT_US; what still does not fit is freed and counted.
 * While it waits it does not poll the port, so the port's own queue
 * absorbs the burst (and counts its own drops in imissed, as without
 * software RSS).
 *
 * Each worker's rings are wrapped in one ethdev of the ring PMD
 * (rte_eth_from_rings, queue p = the ring of port p), so a worker polls them
 * with rte_eth_rx_burst exactly like a NIC queue and the hot path is
 * unchanged. A packet that finds its ring full is freed and counted as a
 * drop of the distributor; the drops of port p are reported as part of that
 * port's imissed (packets the port received that no worker counted) and
 * printed at exit. They are never silent.
 *
 * Thread-safety: dpmon_distributor_loop runs on one lcore; the statistics
 * are written by that lcore only and read by the main lcore with relaxed
 * 64-bit loads (a value at most one burst old).
 */
#ifndef DPMON_DISTRIBUTOR_H
#define DPMON_DISTRIBUTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "config.h"

#define DPMON_DIST_MAX_WORKERS 32
#define DPMON_DIST_MAX_QUEUES  32     /* RX queues polled by the distributor */
#define DPMON_DIST_RING_SIZE   1024   /* per (worker, port); a power of two */
#define DPMON_DIST_WAIT_US     100000 /* longest wait for room in a full ring */

struct rte_ring;

struct dpmon_dist_rxq {
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t port_index; /* index in the configuration's ports[] */
};

struct dpmon_distributor {
	unsigned lcore_id;
	uint16_t burst_size;
	uint32_t idle_sleep_us; /* sleep per empty round once idle (idle.h); 0 = busy poll */
	uint16_t n_workers;
	uint16_t n_ports; /* configuration ports */
	uint16_t n_rxq;
	struct dpmon_dist_rxq rxq[DPMON_DIST_MAX_QUEUES];
	/* ring[w * n_ports + p]: port p's packets for worker w */
	struct rte_ring **ring;
	uint16_t *ring_port; /* n_workers ring ethdevs, one per worker */
	const bool *stop; /* set by the main lcore to end the loop (__atomic store, relaxed load) */
	uint64_t wait_cycles; /* DPMON_DIST_WAIT_US in TSC cycles (setup) */
	/* statistics, written by the distributor lcore only */
	uint64_t packets;  /* received */
	uint64_t rounds;   /* rounds of polls: the heartbeat the main lcore reads (health) */
	uint64_t *dropped; /* [n_ports]: ring full */
	uint64_t *sent;    /* [n_workers]: handed to worker w */
};

/**
 * The worker index (0..n-1) for a frame: a symmetric hash of its IPv4 or
 * IPv6 source and destination addresses (swap them: same worker).
 * Frames without such an address pair go to 0.
 */
uint16_t dpmon_dist_pick(const uint8_t *frame, uint32_t len, uint16_t n);

/**
 * Create the rings and one ring-PMD ethdev per worker, configured and
 * started. @p d's rxq, n_ports, n_workers, burst_size and stop are set by
 * the caller. @return 0, or a negative errno with a message on @p err.
 */
int dpmon_distributor_setup(struct dpmon_distributor *d, int socket, FILE *err);

/** Stop and close the ring ethdevs, free queued mbufs and the rings. */
void dpmon_distributor_teardown(struct dpmon_distributor *d);

/**
 * Hand @p n packets received on configuration port @p p to the workers'
 * rings (the distributor loop's body, exposed for tests); frees and counts
 * what does not fit after the wait.
 */
void dpmon_distributor_burst(struct dpmon_distributor *d, uint16_t p, struct rte_mbuf **pkts,
			     uint16_t n);

/** The distributor lcore's main loop (rte_eal_remote_launch); until *stop. */
int dpmon_distributor_loop(void *arg);

/** Packets of configuration port @p p dropped on a full ring so far. */
uint64_t dpmon_distributor_dropped(const struct dpmon_distributor *d, uint16_t p);

#endif /* DPMON_DISTRIBUTOR_H */
