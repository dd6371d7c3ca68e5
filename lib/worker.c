/*
 * worker.c — the per-burst hot path (see worker.h).
 *
 * A burst is processed in passes so each library call sees a batch:
 *   1. parse every frame (prefetching ahead; the RX queue's port decides
 *      which tunnels are decapsulated), count its parse reason, and for a
 *      counted packet its rare notes (anomalies, fragment, decapsulated,
 *      TCP SYN: one predictable branch); gather the IPv4 and IPv6
 *      addresses into flat arrays;
 *   2. classify them with one bulk LPM lookup per family;
 *   3. count totals and subnets, and gather host keys;
 *   4. look the host keys up with rte_hash_lookup_bulk_data (64 at a time),
 *      insert the rare misses, count the hosts.
 * Counters are updated with dpmon_ctr_add (plain stores, single writer).
 */
#include "worker.h"

#include <rte_ethdev.h>
#include <rte_prefetch.h>

#include "parse.h"

#define PREFETCH_AHEAD 4
#define HOST_BULK RTE_HASH_LOOKUP_BULK_MAX

/* Per-burst working set, on the worker's stack. */
struct burst_ctx {
	struct dpmon_pkt pkt[DPMON_MAX_BURST];
	uint32_t len[DPMON_MAX_BURST];
	uint32_t sub[DPMON_MAX_BURST][DPMON_DIR_MAX]; /* subnet of dst (ingress) and src (egress) */
	uint16_t v4[DPMON_MAX_BURST], v6[DPMON_MAX_BURST];
	uint16_t slot[DPMON_MAX_BURST]; /* packet's index among its family's */
	uint16_t n_v4, n_v6;
	/* 16-aligned: rte_lpm_lookupx4 loads and stores four at a time. */
	uint32_t a4[2 * DPMON_MAX_BURST] __rte_aligned(16);
	uint32_t s4[2 * DPMON_MAX_BURST] __rte_aligned(16);
	uint8_t a6[2 * DPMON_MAX_BURST][16];
	uint32_t s6[2 * DPMON_MAX_BURST];
	/* host keys: address, packet index, direction */
	struct dpmon_addr hkey[2 * DPMON_MAX_BURST];
	uint16_t hpkt[2 * DPMON_MAX_BURST];
	uint8_t hdir[2 * DPMON_MAX_BURST];
	uint16_t n_hkey;
};

/* Count what a counted packet's parse noted: anomalies, fragment, tunnel, SYN. */
static void __rte_noinline
count_notes(struct dpmon_core *core, const struct dpmon_pkt *p)
{
	for (uint32_t a = p->anomalies; a != 0; a &= a - 1)
		dpmon_count_inc(&core->stats.anomalies[__builtin_ctz(a)], 1);
	if (p->fragment)
		dpmon_count_inc(&core->stats.ip_stats[DPMON_IPSTAT_FRAGMENTS], 1);
	if (p->tunnels)
		dpmon_count_inc(&core->stats.ip_stats[DPMON_IPSTAT_DECAPSULATED], 1);
	if ((p->tcp_flags & (DPMON_TCP_SYN | DPMON_TCP_ACK)) == DPMON_TCP_SYN)
		dpmon_count_inc(&core->stats.ip_stats[DPMON_IPSTAT_TCP_SYN], 1);
}

static void
parse_pass(struct dpmon_core *core, struct burst_ctx *b, struct rte_mbuf **pkts, uint16_t n,
	   uint32_t decap)
{
	uint8_t scratch[DPMON_PARSE_GATHER];

	b->n_v4 = b->n_v6 = 0;
	for (uint16_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (uint16_t i = 0; i < n; i++) {
		struct dpmon_pkt *p = &b->pkt[i];
		enum dpmon_reason r;

		if (i + PREFETCH_AHEAD < n) {
			const struct rte_mbuf *ah = pkts[i + PREFETCH_AHEAD];

			rte_prefetch0(rte_pktmbuf_mtod(ah, void *));
			if (ah->data_len > RTE_CACHE_LINE_SIZE)
				rte_prefetch0(rte_pktmbuf_mtod_offset(ah, char *, RTE_CACHE_LINE_SIZE));
		}
		r = dpmon_parse_mbuf_decap(pkts[i], decap, p, scratch);
		b->len[i] = p->len;
		dpmon_count_inc(&core->stats.reasons[r], 1);
		if (r != DPMON_REASON_OK) {
			p->family = 0;
			continue;
		}
		if (unlikely((p->anomalies | p->fragment | p->tunnels) != 0 ||
			     (p->tcp_flags & (DPMON_TCP_SYN | DPMON_TCP_ACK)) == DPMON_TCP_SYN))
			count_notes(core, p);
		if (p->family == 4) {
			b->a4[2 * b->n_v4] = p->dst4;
			b->a4[2 * b->n_v4 + 1] = p->src4;
			b->slot[i] = b->n_v4;
			b->v4[b->n_v4++] = i;
		} else {
			/* Copy: with a multi-segment mbuf src6/dst6 point into scratch. */
			memcpy(b->a6[2 * b->n_v6], p->dst6, 16);
			memcpy(b->a6[2 * b->n_v6 + 1], p->src6, 16);
			b->slot[i] = b->n_v6;
			b->v6[b->n_v6++] = i;
		}
	}
}

static void
classify_pass(const struct dpmon_classifier *cls, struct burst_ctx *b)
{
	dpmon_classify_v4(cls, b->a4, b->s4, 2u * b->n_v4);
	dpmon_classify_v6(cls, b->a6, b->s6, 2u * b->n_v6);
	for (uint16_t k = 0; k < b->n_v4; k++) {
		b->sub[b->v4[k]][DPMON_DIR_INGRESS] = b->s4[2 * k];
		b->sub[b->v4[k]][DPMON_DIR_EGRESS] = b->s4[2 * k + 1];
	}
	for (uint16_t k = 0; k < b->n_v6; k++) {
		b->sub[b->v6[k]][DPMON_DIR_INGRESS] = b->s6[2 * k];
		b->sub[b->v6[k]][DPMON_DIR_EGRESS] = b->s6[2 * k + 1];
	}
}

static void
host_key(struct burst_ctx *b, uint16_t i, uint8_t dir)
{
	const struct dpmon_pkt *p = &b->pkt[i];
	struct dpmon_addr *k = &b->hkey[b->n_hkey];

	if (p->family == 4)
		dpmon_addr_from_v4(k, dir == DPMON_DIR_INGRESS ? p->dst4 : p->src4);
	else
		memcpy(k->b, b->a6[2 * b->slot[i] + (dir == DPMON_DIR_INGRESS ? 0 : 1)], 16);
	b->hpkt[b->n_hkey] = i;
	b->hdir[b->n_hkey] = dir;
	b->n_hkey++;
}

static void
count_pass(struct dpmon_core *core, struct burst_ctx *b, uint16_t n)
{
	b->n_hkey = 0;
	for (uint16_t i = 0; i < n; i++) {
		const struct dpmon_pkt *p = &b->pkt[i];
		uint32_t in, out;
		uint64_t len = b->len[i];

		if (p->family == 0)
			continue;
		in = b->sub[i][DPMON_DIR_INGRESS];
		out = b->sub[i][DPMON_DIR_EGRESS];
		if (in != DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_INGRESS].proto[p->proto], len);
			dpmon_ctr_add(&core->subnets[in].dir[DPMON_DIR_INGRESS].proto[p->proto], len);
			host_key(b, i, DPMON_DIR_INGRESS);
		}
		if (out != DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_EGRESS].proto[p->proto], len);
			dpmon_ctr_add(&core->subnets[out].dir[DPMON_DIR_EGRESS].proto[p->proto], len);
			host_key(b, i, DPMON_DIR_EGRESS);
		}
		if (in != DPMON_NO_SUBNET && out != DPMON_NO_SUBNET)
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_INTERNAL].proto[p->proto], len);
		else if (in == DPMON_NO_SUBNET && out == DPMON_NO_SUBNET)
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_EXTERNAL].proto[p->proto], len);
	}
}

static void
host_pass(struct dpmon_core *core, struct burst_ctx *b)
{
	const void *keys[HOST_BULK];
	void *data[HOST_BULK];

	for (uint16_t base = 0; base < b->n_hkey; base += HOST_BULK) {
		uint16_t cnt = b->n_hkey - base < HOST_BULK ? b->n_hkey - base : HOST_BULK;
		uint64_t hits = 0;

		for (uint16_t j = 0; j < cnt; j++)
			keys[j] = &b->hkey[base + j];
		rte_hash_lookup_bulk_data(core->host_hash, keys, cnt, &hits, data);
		for (uint16_t j = 0; j < cnt; j++) {
			uint16_t k = base + j;
			uint16_t i = b->hpkt[k];
			int32_t idx;

			if (hits & (1ULL << j)) {
				idx = (int32_t)(uintptr_t)data[j];
			} else {
				idx = dpmon_core_host_insert(core, &b->hkey[k], b->sub[i][b->hdir[k]]);
				if (idx < 0) {
					dpmon_count_inc(&core->stats.host_table_full, 1);
					continue;
				}
			}
			dpmon_ctr_add(&core->hosts[idx].dir[b->hdir[k]].proto[b->pkt[i].proto],
				      b->len[i]);
		}
	}
}

void
dpmon_worker_count_decap(struct dpmon_core *core, const struct dpmon_classifier *cls,
			 struct rte_mbuf **pkts, uint16_t n, uint32_t decap)
{
	struct burst_ctx b;

	RTE_ASSERT(n <= DPMON_MAX_BURST);
	if (n == 0)
		return;
	parse_pass(core, &b, pkts, n, decap);
	classify_pass(cls, &b);
	count_pass(core, &b, n);
	host_pass(core, &b);
	/* Last, with release: a merge that sees these packets counted here
	 * (acquire) sees every counter this burst touched (counters.h). */
	dpmon_count_inc(&core->stats.bursts, 1);
	__atomic_store_n(&core->stats.packets, core->stats.packets + n, __ATOMIC_RELEASE);
}

void
dpmon_worker_count(struct dpmon_core *core, const struct dpmon_classifier *cls,
		   struct rte_mbuf **pkts, uint16_t n)
{
	dpmon_worker_count_decap(core, cls, pkts, n, 0);
}

void
dpmon_worker_burst(struct dpmon_core *core, const struct dpmon_classifier *cls,
		   struct rte_mbuf **pkts, uint16_t n)
{
	dpmon_worker_count(core, cls, pkts, n);
	rte_pktmbuf_free_bulk(pkts, n);
}

int
dpmon_worker_loop(void *arg)
{
	struct dpmon_worker *w = arg;
	struct rte_mbuf *pkts[DPMON_MAX_BURST];

	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED)) {
		for (uint16_t q = 0; q < w->n_rxq; q++) {
			uint16_t n = rte_eth_rx_burst(w->rxq[q].port_id, w->rxq[q].queue_id,
						      pkts, w->burst_size);
			dpmon_worker_count_decap(w->core, w->cls, pkts, n, w->rxq[q].decap);
			rte_pktmbuf_free_bulk(pkts, n);
		}
	}
	return 0;
}
