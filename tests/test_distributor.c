/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_distributor.c — software RSS (lib/dataplane/distributor.h): the worker choice
 * is symmetric and spreads; a full ring's packets are counted as drops and
 * freed; a worker reads its ring through the ring PMD like an RX queue.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "distributor.h"
#include "test_eal.h"

/* An Ethernet frame with an IPv4 (or IPv6) header; @p vlan adds a tag. */
static uint32_t
frame(uint8_t *f, bool v6, const uint8_t *src, const uint8_t *dst, bool vlan)
{
	uint32_t off = 12;

	memset(f, 0, 128);
	if (vlan) {
		f[off] = 0x81;
		f[off + 1] = 0x00;
		f[off + 3] = 7;
		off += 4;
	}
	f[off] = v6 ? 0x86 : 0x08;
	f[off + 1] = v6 ? 0xdd : 0x00;
	off += 2;
	if (v6) {
		f[off] = 0x60;
		memcpy(f + off + 8, src, 16);
		memcpy(f + off + 24, dst, 16);
		return off + 40;
	}
	f[off] = 0x45;
	memcpy(f + off + 12, src, 4);
	memcpy(f + off + 16, dst, 4);
	return off + 20;
}

static void
test_pick(void)
{
	uint8_t f[128], g[128], a[16], b[16];
	unsigned hits[4] = {0};

	for (unsigned i = 0; i < 4000; i++) {
		bool v6 = i % 2;
		uint32_t x = i * 2654435761u, y = i * 40503u + 17;
		uint32_t n, m;
		uint16_t w;

		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		memcpy(a + (v6 ? 12 : 0), &x, 4);
		memcpy(b + (v6 ? 12 : 0), &y, 4);
		n = frame(f, v6, a, b, false);
		w = dpmon_dist_pick(f, n, 4);
		REQUIRE(w < 4);
		hits[w]++;
		m = frame(g, v6, b, a, false); /* the other direction */
		CHECK(dpmon_dist_pick(g, m, 4) == w);
		m = frame(g, v6, b, a, true); /* tagged */
		CHECK(dpmon_dist_pick(g, m, 4) == w);
		CHECK(dpmon_dist_pick(f, n, 1) == 0);
		CHECK(dpmon_dist_pick(f, 20, 4) == 0); /* truncated: worker 0 */
	}
	for (unsigned w = 0; w < 4; w++) /* 1000 expected each */
		CHECK(hits[w] > 800 && hits[w] < 1200);
	memset(f, 0, sizeof(f));
	f[12] = 0x08;
	f[13] = 0x06; /* ARP */
	CHECK(dpmon_dist_pick(f, 60, 4) == 0);
}

/* 3000 packets of one address pair and no consumer: one ring fills
 * (DPMON_DIST_RING_SIZE - 1 entries), the rest are dropped and counted. */
static void
test_drops(void)
{
	static bool stop;
	struct dpmon_distributor d = {
		.n_workers = 2, .n_ports = 1, .burst_size = 32, .stop = &stop};
	struct rte_mempool *mp =
		rte_pktmbuf_pool_create("test_dist", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2}, f[128];
	uint32_t len = frame(f, false, a, b, false);
	uint16_t w = dpmon_dist_pick(f, len, 2);
	struct rte_mbuf *pkts[32];
	unsigned total = 0, got = 0;
	uint16_t n;

	REQUIRE(mp != NULL);
	REQUIRE(dpmon_distributor_setup(&d, 0, stderr) == 0);
	d.wait_cycles = 0; /* no consumer: do not wait for room */
	while (total < 3000) {
		REQUIRE(rte_pktmbuf_alloc_bulk(mp, pkts, 30) == 0);
		for (unsigned i = 0; i < 30; i++) {
			memcpy(rte_pktmbuf_append(pkts[i], len), f, len);
		}
		dpmon_distributor_burst(&d, 0, pkts, 30);
		total += 30;
	}
	CHECK_EQ_U64(d.packets, 3000);
	CHECK_EQ_U64(d.sent[w], DPMON_DIST_RING_SIZE - 1);
	CHECK_EQ_U64(d.sent[1 - w], 0);
	CHECK_EQ_U64(dpmon_distributor_dropped(&d, 0), 3000 - (DPMON_DIST_RING_SIZE - 1));
	CHECK_EQ_U64(dpmon_distributor_dropped(&d, 1), 0); /* no such port */
	/* Dropped mbufs went back to the pool. */
	CHECK_EQ_U64(rte_mempool_in_use_count(mp), DPMON_DIST_RING_SIZE - 1);
	/* The worker's side: its ring-PMD port, queue 0 = configuration port 0. */
	while ((n = rte_eth_rx_burst(d.ring_port[w], 0, pkts, 32)) > 0) {
		for (uint16_t i = 0; i < n; i++)
			CHECK(memcmp(rte_pktmbuf_mtod(pkts[i], uint8_t *), f, len) == 0);
		rte_pktmbuf_free_bulk(pkts, n);
		got += n;
	}
	CHECK_EQ_U64(got, DPMON_DIST_RING_SIZE - 1);
	CHECK(rte_eth_rx_burst(d.ring_port[1 - w], 0, pkts, 32) == 0);
	/* Room again: the next burst is sent in full. */
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, pkts, 8) == 0);
	for (unsigned i = 0; i < 8; i++)
		memcpy(rte_pktmbuf_append(pkts[i], len), f, len);
	dpmon_distributor_burst(&d, 0, pkts, 8);
	CHECK_EQ_U64(d.sent[w], DPMON_DIST_RING_SIZE - 1 + 8);
	CHECK_EQ_U64(dpmon_distributor_dropped(&d, 0), 3000 - (DPMON_DIST_RING_SIZE - 1));
	dpmon_distributor_teardown(&d); /* frees the 8 still queued */
	CHECK_EQ_U64(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
}

int
main(void)
{
	test_eal_init("test_distributor");
	test_pick();
	test_drops();
	return test_finish("test_distributor");
}
