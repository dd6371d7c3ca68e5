/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * distributor.c — software RSS (see distributor.h).
 *
 * Per burst: rx_burst on one queue → pick a worker per packet (symmetric
 * address hash) → one rte_ring_enqueue_burst per worker → free and count
 * whatever did not fit. The rings are single-producer (this lcore) and
 * single-consumer (the worker, through the ring PMD's rx_burst).
 */
#include "distributor.h"
#include "idle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#define ETH_HLEN       14
#define ETYPE_IPV4     0x0800
#define ETYPE_IPV6     0x86DD
#define ETYPE_VLAN     0x8100
#define ETYPE_QINQ     0x88A8
#define ETYPE_QINQ_OLD 0x9100
#define MAX_BURST      512

static uint16_t
be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Fold a 32-bit hash into 0..n-1 without a division. */
static uint16_t
scale(uint32_t h, uint16_t n)
{
	return (uint16_t)(((uint64_t)h * n) >> 32);
}

uint16_t
dpmon_dist_pick(const uint8_t *f, uint32_t len, uint16_t n)
{
	uint32_t off = ETH_HLEN, h;
	uint16_t et;
	int tags = 0;

	if (n <= 1 || len < ETH_HLEN)
		return 0;
	et = be16_at(f + 12);
	while ((et == ETYPE_VLAN || et == ETYPE_QINQ || et == ETYPE_QINQ_OLD) && tags < 2 &&
	       len >= off + 4) {
		et = be16_at(f + off + 2);
		off += 4;
		tags++;
	}
	if (et == ETYPE_IPV4 && len >= off + 20) {
		uint32_t a, b;

		memcpy(&a, f + off + 12, 4);
		memcpy(&b, f + off + 16, 4);
		if (a > b) {
			uint32_t t = a;

			a = b;
			b = t;
		}
		h = rte_hash_crc_4byte(b, rte_hash_crc_4byte(a, 0x6d5a6d5a));
		return scale(h, n);
	}
	if (et == ETYPE_IPV6 && len >= off + 40) {
		/* Copied out: rte_hash_crc reads 8 bytes at a time, and the
		 * addresses in the frame need not be 8-byte aligned. */
		uint64_t a[2], b[2];
		int lo = memcmp(f + off + 8, f + off + 24, 16) <= 0;

		memcpy(a, f + off + (lo ? 8 : 24), 16);
		memcpy(b, f + off + (lo ? 24 : 8), 16);
		h = rte_hash_crc(b, 16, rte_hash_crc(a, 16, 0x6d5a6d5a));
		return scale(h, n);
	}
	return 0;
}

int
dpmon_distributor_setup(struct dpmon_distributor *d, int socket, FILE *err)
{
	unsigned nw = d->n_workers, np = d->n_ports;

	if (nw == 0 || nw > DPMON_DIST_MAX_WORKERS || np == 0) {
		if (err)
			fprintf(err, "dpmon: software_rss needs at least one worker lcore besides "
				     "the distributor (give EAL at least three lcores, e.g. "
				     "--lcores '0@0,1@1,2@1')\n");
		return -EINVAL;
	}
	d->wait_cycles = rte_get_tsc_hz() / 1000000 * DPMON_DIST_WAIT_US;
	d->ring = calloc((size_t)nw * np, sizeof(*d->ring));
	d->ring_port = calloc(nw, sizeof(*d->ring_port));
	d->dropped = calloc(np, sizeof(*d->dropped));
	d->sent = calloc(nw, sizeof(*d->sent));
	if (!d->ring || !d->ring_port || !d->dropped || !d->sent)
		return -ENOMEM;
	for (unsigned w = 0; w < nw; w++)
		d->ring_port[w] = RTE_MAX_ETHPORTS;
	for (unsigned w = 0; w < nw; w++) {
		struct rte_eth_conf conf = {0};
		struct rte_mempool *mp;
		char name[RTE_RING_NAMESIZE];
		int port, rc;

		for (unsigned p = 0; p < np; p++) {
			snprintf(name, sizeof(name), "dpmon_srss_%u_%u", w, p);
			d->ring[w * np + p] = rte_ring_create(name, DPMON_DIST_RING_SIZE, socket,
							      RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (d->ring[w * np + p] == NULL)
				goto fail;
		}
		snprintf(name, sizeof(name), "dpmon_srss%u", w);
		port = rte_eth_from_rings(name, &d->ring[w * np], np, &d->ring[w * np], np, socket);
		if (port < 0)
			goto fail;
		d->ring_port[w] = (uint16_t)port;
		/* The ring PMD ignores the pool, but ethdev wants one for RX set-up. */
		snprintf(name, sizeof(name), "dpmon_srss_mp%u", w);
		mp = rte_pktmbuf_pool_create(name, 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
		if (mp == NULL)
			goto fail;
		rc = rte_eth_dev_configure((uint16_t)port, (uint16_t)np, (uint16_t)np, &conf);
		for (unsigned p = 0; rc == 0 && p < np; p++)
			rc = rte_eth_rx_queue_setup((uint16_t)port, (uint16_t)p,
						    DPMON_DIST_RING_SIZE, (unsigned)socket, NULL,
						    mp);
		for (unsigned p = 0; rc == 0 && p < np; p++)
			rc = rte_eth_tx_queue_setup((uint16_t)port, (uint16_t)p,
						    DPMON_DIST_RING_SIZE, (unsigned)socket, NULL);
		if (rc == 0)
			rc = rte_eth_dev_start((uint16_t)port);
		if (rc != 0) {
			rte_errno = -rc;
			goto fail;
		}
	}
	return 0;
fail:
	if (err)
		fprintf(err, "dpmon: software_rss: cannot create the worker rings: %s\n",
			rte_strerror(rte_errno));
	return -ENOMEM;
}

void
dpmon_distributor_teardown(struct dpmon_distributor *d)
{
	void *m;

	for (unsigned w = 0; d->ring_port && w < d->n_workers; w++) {
		if (d->ring_port[w] < RTE_MAX_ETHPORTS) {
			rte_eth_dev_stop(d->ring_port[w]);
			rte_eth_dev_close(d->ring_port[w]);
		}
	}
	for (unsigned i = 0; d->ring && i < (unsigned)d->n_workers * d->n_ports; i++) {
		if (d->ring[i] == NULL)
			continue;
		while (rte_ring_dequeue(d->ring[i], &m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(d->ring[i]);
	}
	free(d->ring);
	free(d->ring_port);
	free(d->dropped);
	free(d->sent);
	d->ring = NULL;
	d->ring_port = NULL;
	d->dropped = NULL;
	d->sent = NULL;
}

uint64_t
dpmon_distributor_dropped(const struct dpmon_distributor *d, uint16_t p)
{
	if (d == NULL || d->dropped == NULL || p >= d->n_ports)
		return 0;
	return __atomic_load_n(&d->dropped[p], __ATOMIC_RELAXED);
}

/* Enqueue @p n packets on @p r, waiting (yielding) while it is full for at
 * most the distributor's wait; @return how many were enqueued. */
static unsigned
enqueue_wait(const struct dpmon_distributor *d, struct rte_ring *r, struct rte_mbuf **m, unsigned n)
{
	unsigned sent = rte_ring_enqueue_burst(r, (void **)m, n, NULL);
	uint64_t deadline;

	if (sent == n || d->wait_cycles == 0)
		return sent;
	deadline = rte_get_tsc_cycles() + d->wait_cycles;
	while (sent < n && !__atomic_load_n(d->stop, __ATOMIC_RELAXED) &&
	       rte_get_tsc_cycles() < deadline) {
		sched_yield(); /* a worker sharing this CPU gets to drain its ring */
		sent += rte_ring_enqueue_burst(r, (void **)(m + sent), n - sent, NULL);
	}
	return sent;
}

void
dpmon_distributor_burst(struct dpmon_distributor *d, uint16_t p, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *out[DPMON_DIST_MAX_WORKERS][MAX_BURST];
	uint16_t cnt[DPMON_DIST_MAX_WORKERS] = {0};
	uint16_t nw = d->n_workers;
	uint64_t dropped = 0;

	if (n > MAX_BURST) {
		dpmon_distributor_burst(d, p, pkts, MAX_BURST);
		dpmon_distributor_burst(d, p, pkts + MAX_BURST, n - MAX_BURST);
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint16_t w = dpmon_dist_pick(rte_pktmbuf_mtod(m, const uint8_t *),
					     rte_pktmbuf_data_len(m), nw);

		out[w][cnt[w]++] = m;
	}
	for (uint16_t w = 0; w < nw; w++) {
		unsigned sent;

		if (cnt[w] == 0)
			continue;
		sent = enqueue_wait(d, d->ring[w * d->n_ports + p], out[w], cnt[w]);
		if (sent < cnt[w]) {
			rte_pktmbuf_free_bulk(&out[w][sent], cnt[w] - sent);
			dropped += cnt[w] - sent;
		}
		__atomic_store_n(&d->sent[w], d->sent[w] + sent, __ATOMIC_RELAXED);
	}
	if (dropped)
		__atomic_store_n(&d->dropped[p], d->dropped[p] + dropped, __ATOMIC_RELAXED);
	__atomic_store_n(&d->packets, d->packets + n, __ATOMIC_RELAXED);
}

int
dpmon_distributor_loop(void *arg)
{
	struct dpmon_distributor *d = arg;
	struct rte_mbuf *pkts[MAX_BURST];
	uint16_t burst = d->burst_size > 0 && d->burst_size <= MAX_BURST ? d->burst_size : 32;
	struct dpmon_idle idle = {.sleep_us = d->idle_sleep_us};

	while (!__atomic_load_n(d->stop, __ATOMIC_RELAXED)) {
		uint32_t got = 0;

		for (uint16_t q = 0; q < d->n_rxq; q++) {
			uint16_t n = rte_eth_rx_burst(d->rxq[q].port_id, d->rxq[q].queue_id, pkts,
						      burst);

			if (n > 0)
				dpmon_distributor_burst(d, d->rxq[q].port_index, pkts, n);
			got += n;
		}
		/* The heartbeat: one plain store per round (single writer). */
		__atomic_store_n(&d->rounds, d->rounds + 1, __ATOMIC_RELAXED);
		dpmon_idle_round(&idle, got != 0);
	}
	return 0;
}
