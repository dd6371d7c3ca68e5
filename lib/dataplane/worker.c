/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker.c — the per-burst hot path (see worker.h).
 *
 * A burst is processed in passes so each library call sees a batch:
 *   1. parse every frame (prefetching ahead; the RX queue's port decides
 *      which tunnels are decapsulated, and when its PMD reports packet
 *      types the parse starts from them: parse_fast.h's parse_ptype, the
 *      pass compiled twice), count its parse reason, and for a
 *      counted packet its rare notes (anomalies, fragment, decapsulated,
 *      TCP SYN: one predictable branch); gather the IPv4 and IPv6
 *      addresses into flat arrays;
 *   2. classify them with one bulk LPM lookup per family;
 *   3. count totals and subnets, gather host keys (masked to the
 *      subnet's host prefix when the generation has host_bits: one
 *      predictable branch otherwise; fragments and SYNs,
 *      flagged by pass 1, also count in a third, rarely touched line), and
 *      hash the 5-tuple of each packet with a monitored side, prefetching
 *      the flow-sketch registers it will update (pass 5): one loop, so a
 *      packet's subnets are read once;
 *   4. hosts, as a software pipeline over the burst's keys: hash every key
 *      and prefetch its index bucket; find each key's candidate entry by
 *      signature and prefetch its meta and counter lines; then compare the
 *      keys, insert the rare misses and count (one counter line per host
 *      update, stamped with the merge epoch: counters.h), and add the
 *      packet's flow and remote peer to the host's bitmaps in its meta
 *      line (or, for a promoted host, to its full sketches);
 *   5. the flows into the totals' and subnets' sketches.
 * With core->flow_sketches false ("flow_sketches": false) passes 3 and 4
 * skip the 5-tuple hash, the sketches and the host bitmaps (each pass is
 * compiled twice, so that costs a burst two predictable branches) and pass 5
 * does not run.
 * With ignored source prefixes (classify.h), pass 2 maps their lookup
 * result to "no subnet" and marks the packet in its flag mask, so that
 * pass 4 also counts it, on its rare path, into the generation's side
 * table (ignored.h); without them pass 2 is the same loop as before (it is
 * compiled twice: one predictable branch per burst).
 * While the alert sampler watches hosts or subnets (sample.h), pass 1 is
 * followed by a copy of the packets to and from them; otherwise that costs a burst
 * one predictable branch.
 * A build with -Dstage_profile=true makes each pass a function of its own
 * (DPMON_PASS), so that callgrind gives each stage's cost per packet
 * (bench/cg_stages.py, docs/performance.md); otherwise the compiler
 * inlines them (1.3 % fewer instructions).
 * Counters are updated with plain stores (single writer). Parse reasons are
 * summed on the stack and stored once per burst.
 * The loop also counts polls and the TSC cycles of non-empty bursts, so
 * the merge can report each worker's busy ratio (counters.h), and serves
 * a few of the merge's retire requests per round (dpmon_core_maintain).
 * Subnet counters and sketches come from the generation (worker.h) the loop
 * loaded for this round: no per-packet check of the generation.
 */
#include "worker.h"

#include <assert.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_prefetch.h>

#include "hll.h"
#include "idle.h"
#include "parse_fast.h"
#include "sample.h"

/* A pass of the burst: its own function in a stage-profile build. */
#ifdef DPMON_STAGE_PROFILE
#define DPMON_PASS __rte_noinline
#else
#define DPMON_PASS
#endif

#define PREFETCH_AHEAD      4 /* frame data, packets ahead */
#define PREFETCH_MBUF_AHEAD 8 /* mbuf headers (buf_addr, data_off, pkt_len) */
static_assert(PREFETCH_AHEAD < PREFETCH_MBUF_AHEAD, "frame data is read from prefetched mbufs");

/* Flag-mask bit of a packet from an ignored source, above the flags. */
#define FLAG_IGNORED (1u << 7)
/* Flag-mask bits of the flags themselves (enum dpmon_flag). */
#define FLAG_KINDS   ((1u << DPMON_FLAG_MAX) - 1)
static_assert(DPMON_FLAG_MAX < 7, "FLAG_IGNORED must stay above the flags, in a uint8_t");
static_assert((DPMON_TUNNEL_ALL & DPMON_WORKER_PTYPE) == 0, "the packet-type flag is not a tunnel");

/* Per-burst working set, on the worker's stack. */
struct burst_ctx {
	struct dpmon_pkt pkt[DPMON_MAX_BURST];
	uint8_t flag_mask[DPMON_MAX_BURST]; /* bit DPMON_FLAG_* (fragment, SYN), FLAG_IGNORED */
	uint64_t fhash[DPMON_MAX_BURST]; /* 5-tuple hash of counted packets with a monitored side */
	struct dpmon_flow_sketch
		*fsk[DPMON_MAX_BURST][DPMON_DIR_MAX]; /* subnet sketches, NULL = none */
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
	uint32_t hsig[2 * DPMON_MAX_BURST];
	int32_t hidx[2 * DPMON_MAX_BURST]; /* candidate entry, -1 = none */
	uint16_t hpkt[2 * DPMON_MAX_BURST];
	uint8_t hdir[2 * DPMON_MAX_BURST];
	uint16_t n_hkey;
	uint32_t reasons[DPMON_REASON_MAX];
	struct dpmon_ignored_table *ign; /* the generation's side table, NULL = none */
};

/* Is @p p a connection's first SYN (SYN without ACK, RFC 9293 3.5)? */
static inline bool
is_syn(const struct dpmon_pkt *p)
{
	return (p->tcp_flags & (DPMON_TCP_SYN | DPMON_TCP_ACK)) == DPMON_TCP_SYN;
}

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
	if (is_syn(p))
		dpmon_count_inc(&core->stats.ip_stats[DPMON_IPSTAT_TCP_SYN], 1);
}

/* Prefetch the frame data of @p m (its second line too when it has one). */
static __rte_always_inline void
prefetch_frame(const struct rte_mbuf *m)
{
	rte_prefetch0(rte_pktmbuf_mtod(m, void *));
	if (m->data_len > RTE_CACHE_LINE_SIZE)
		rte_prefetch0(rte_pktmbuf_mtod_offset(m, char *, RTE_CACHE_LINE_SIZE));
}

/* The flag-mask bits of a counted packet's fragment and SYN (enum dpmon_flag). */
static inline uint8_t
packet_flags(const struct dpmon_pkt *p)
{
	return (uint8_t)((p->fragment ? 1u << DPMON_FLAG_FRAG : 0) |
			 (is_syn(p) ? 1u << DPMON_FLAG_SYN : 0));
}

/*
 * Parse packet @p i (@p m), count its rare notes, and gather its addresses.
 * A frame of the parser's fast path (parse_fast.h) is counted in @p n_fast
 * (reason OK) and has no anomaly, fragment or tunnel: only a SYN is rare.
 */
static __rte_always_inline void
parse_one(struct dpmon_core *core, struct burst_ctx *b, const struct rte_mbuf *m, uint16_t i,
	  uint32_t decap, uint8_t *scratch, uint32_t *n_fast, const bool ptype)
{
	struct dpmon_pkt *p = &b->pkt[i];

	b->flag_mask[i] = 0;
	if (likely(ptype ? dpmon_parse_mbuf_fast_ptype(m, decap, p)
			 : dpmon_parse_mbuf_fast(m, decap, p))) {
		(*n_fast)++;
		if (unlikely(is_syn(p))) {
			count_notes(core, p);
			b->flag_mask[i] = 1u << DPMON_FLAG_SYN;
		}
	} else {
		enum dpmon_reason r = dpmon_parse_mbuf_full(m, decap, p, scratch);

		b->reasons[r]++;
		if (r != DPMON_REASON_OK) {
			p->family = 0;
			return;
		}
		if (unlikely((p->anomalies | p->fragment | p->tunnels) != 0 || is_syn(p))) {
			count_notes(core, p);
			b->flag_mask[i] = packet_flags(p);
		}
	}
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

/* Parse the burst: the packets with PREFETCH_MBUF_AHEAD more after them
 * without a bounds test on the prefetches, then the last ones. @p ptype:
 * the mbufs' packet types are the PMD's (parse_ptype). */
static __rte_always_inline void
parse_packets(struct dpmon_core *core, struct burst_ctx *b, struct rte_mbuf **pkts, uint16_t n,
	      uint32_t decap, const bool ptype)
{
	uint8_t scratch[DPMON_PARSE_GATHER];
	uint16_t i = 0, body = n > PREFETCH_MBUF_AHEAD ? n - PREFETCH_MBUF_AHEAD : 0;
	uint32_t n_fast = 0;

	b->n_v4 = b->n_v6 = 0;
	memset(b->reasons, 0, sizeof(b->reasons));
	for (uint16_t k = 0; k < n && k < PREFETCH_MBUF_AHEAD; k++)
		rte_prefetch0(pkts[k]);
	for (uint16_t k = 0; k < n && k < PREFETCH_AHEAD; k++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[k], void *));
	for (; i < body; i++) {
		rte_prefetch0(pkts[i + PREFETCH_MBUF_AHEAD]);
		prefetch_frame(pkts[i + PREFETCH_AHEAD]);
		parse_one(core, b, pkts[i], i, decap, scratch, &n_fast, ptype);
	}
	for (; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			prefetch_frame(pkts[i + PREFETCH_AHEAD]);
		parse_one(core, b, pkts[i], i, decap, scratch, &n_fast, ptype);
	}
	b->reasons[DPMON_REASON_OK] += n_fast;
}

/* parse_packets, compiled once for queues whose PMD reports packet types
 * (DPMON_WORKER_PTYPE) and once for the others. */
static void DPMON_PASS
parse_pass(struct dpmon_core *core, struct burst_ctx *b, struct rte_mbuf **pkts, uint16_t n,
	   uint32_t decap)
{
	if (decap & DPMON_WORKER_PTYPE)
		parse_packets(core, b, pkts, n, decap & ~DPMON_WORKER_PTYPE, true);
	else
		parse_packets(core, b, pkts, n, decap, false);
}

/* Store the burst's parse reasons: one store per reason seen, not per packet. */
static void
reasons_store(struct dpmon_core *core, const struct burst_ctx *b)
{
	for (int r = 0; r < DPMON_REASON_MAX; r++)
		if (b->reasons[r] != 0)
			dpmon_count_inc(&core->stats.reasons[r], b->reasons[r]);
}

/* Packet @p i's subnets from its lookups @p in (destination) and @p out
 * (source). @p ignoring: the classifier has ignored prefixes, whose result
 * is no subnet; an ignored source also marks the packet (FLAG_IGNORED). */
static __rte_always_inline void
set_subnets(struct burst_ctx *b, uint16_t i, uint32_t in, uint32_t out, const bool ignoring)
{
	if (ignoring) {
		if (unlikely(in == DPMON_IGNORED_SOURCE))
			in = DPMON_NO_SUBNET;
		if (unlikely(out == DPMON_IGNORED_SOURCE)) {
			out = DPMON_NO_SUBNET;
			b->flag_mask[i] |= FLAG_IGNORED;
		}
	}
	b->sub[i][DPMON_DIR_INGRESS] = in;
	b->sub[i][DPMON_DIR_EGRESS] = out;
}

/* Every packet's subnets, from the lookups of both families. */
static __rte_always_inline void
classify_packets(struct burst_ctx *b, const bool ignoring)
{
	for (uint16_t k = 0; k < b->n_v4; k++)
		set_subnets(b, b->v4[k], b->s4[2 * k], b->s4[2 * k + 1], ignoring);
	for (uint16_t k = 0; k < b->n_v6; k++)
		set_subnets(b, b->v6[k], b->s6[2 * k], b->s6[2 * k + 1], ignoring);
}

static void DPMON_PASS
classify_pass(const struct dpmon_classifier *cls, struct burst_ctx *b)
{
	dpmon_classify_v4(cls, b->a4, b->s4, 2u * b->n_v4);
	dpmon_classify_v6(cls, b->a6, b->s6, 2u * b->n_v6);
	if (unlikely(cls->n_ignored != 0))
		classify_packets(b, true);
	else
		classify_packets(b, false);
}

/* The mapped address of an IPv4 address (host order), without memset. */
static inline void
key_from_v4(struct dpmon_addr *k, uint32_t v4)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	uint32_t be = rte_cpu_to_be_32(v4);

	memcpy(k->b, mapped, sizeof(mapped));
	memcpy(k->b + 12, &be, 4);
}

/* Queue the host key of packet @p i in @p dir. @return false when skipped. */
static __rte_always_inline bool
host_key(struct burst_ctx *b, uint16_t i, uint8_t dir)
{
	const struct dpmon_pkt *p = &b->pkt[i];
	struct dpmon_addr *k = &b->hkey[b->n_hkey];

	if (p->family == 4) {
		key_from_v4(k, dir == DPMON_DIR_INGRESS ? p->dst4 : p->src4);
	} else {
		memcpy(k->b, b->a6[2 * b->slot[i] + (dir == DPMON_DIR_INGRESS ? 0 : 1)], 16);
		/* Host keys are 16-byte addresses with IPv4 mapped into
		 * ::ffff:0:0/96 (prefix.h); an IPv6 packet carrying such an
		 * address must not count for the IPv4 host. */
		if (unlikely(dpmon_addr_is_v4(k)))
			return false;
	}
	b->hpkt[b->n_hkey] = i;
	b->hdir[b->n_hkey] = dir;
	b->n_hkey++;
	return true;
}

/* Copy the packets to or from a watched host or subnet (sample.h): only
 * called while the watch list is not empty. The destination is matched
 * first; a host or subnet listed twice (ingress and egress alerts) gives its
 * received packets to its first entry, its sent ones to its second. */
static void __rte_noinline
sample_pass(struct dpmon_core *core, const struct burst_ctx *b, struct rte_mbuf **pkts, uint16_t n)
{
	struct dpmon_sample_list l;

	if (!dpmon_sample_watch_read(core->sample, &l) || l.n == 0)
		return;
	for (uint16_t i = 0; i < n; i++) {
		const struct dpmon_pkt *p = &b->pkt[i];
		struct dpmon_addr src, dst;
		int w;

		if (p->family == 0)
			continue;
		if (p->family == 4) {
			key_from_v4(&src, p->src4);
			key_from_v4(&dst, p->dst4);
		} else {
			memcpy(src.b, b->a6[2 * b->slot[i] + 1], 16);
			memcpy(dst.b, b->a6[2 * b->slot[i]], 16);
		}
		/* An IPv6 packet's IPv4-mapped address is not the IPv4 host of
		 * the same number (as in host_key). */
		w = p->family == 6 && dpmon_addr_is_v4(&dst) ? -1 : dpmon_sample_match(&l, &dst);
		if (w < 0 && !(p->family == 6 && dpmon_addr_is_v4(&src)))
			w = dpmon_sample_match_source(&l, &src);
		if (w >= 0)
			dpmon_sample_copy(core->sample, pkts[i], l.alert_id[w], &src, &dst,
					  p->sport, p->dport, p->ports != 0);
	}
}

/* Fragments and SYNs of packet @p i for the totals and subnets (rare). */
static void __rte_noinline
count_flags(struct dpmon_core *core, struct dpmon_pair_ctr *subnets, unsigned flag_mask,
	    uint32_t in, uint32_t out, uint64_t len)
{
	for (unsigned f = 0; f < DPMON_FLAG_MAX; f++) {
		if (!(flag_mask & (1u << f)))
			continue;
		if (in != DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->flag_totals[DPMON_TOTAL_INGRESS].flag[f], len);
			dpmon_ctr_add(&subnets[in].flags[DPMON_DIR_INGRESS].flag[f], len);
		}
		if (out != DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->flag_totals[DPMON_TOTAL_EGRESS].flag[f], len);
			dpmon_ctr_add(&subnets[out].flags[DPMON_DIR_EGRESS].flag[f], len);
		}
		if (in != DPMON_NO_SUBNET && out != DPMON_NO_SUBNET)
			dpmon_ctr_add(&core->flag_totals[DPMON_TOTAL_INTERNAL].flag[f], len);
		else if (in == DPMON_NO_SUBNET && out == DPMON_NO_SUBNET)
			dpmon_ctr_add(&core->flag_totals[DPMON_TOTAL_EXTERNAL].flag[f], len);
	}
}

/* 64-bit hash of packet @p i's 5-tuple (the parser leaves the ports 0
 * when it did not read them: parse.h). */
static inline uint64_t
flow_hash(const struct burst_ctx *b, uint16_t i)
{
	const struct dpmon_pkt *p = &b->pkt[i];
	uint64_t l4 = (uint64_t)p->sport << 24 | (uint64_t)p->dport << 8 | p->ip_proto;

	if (p->family == 4) {
		uint64_t k[2] = {(uint64_t)p->src4 << 32 | p->dst4, l4};

		return dpmon_hash64(k, sizeof(k), 4);
	} else {
		uint64_t k[5];

		memcpy(&k[0], b->a6[2 * b->slot[i] + 1], 16); /* source */
		memcpy(&k[2], b->a6[2 * b->slot[i]], 16);     /* destination */
		k[4] = l4;
		return dpmon_hash64(k, sizeof(k), 6);
	}
}

/* Register of flow hash @p h in a sketch (as dpmon_flow_add picks it). */
static inline const uint32_t *
flow_reg(const struct dpmon_flow_sketch *s, uint64_t h)
{
	return &s->reg[h >> (64 - DPMON_FLOW_P)];
}

/* Flow sketch of subnet @p sub in direction @p d in generation @p g: fixed
 * for the first subnets, from the core's pool past them (counters.h); NULL
 * when none is left. */
static inline struct dpmon_flow_sketch *
sub_sketch(struct dpmon_core *core, const struct dpmon_generation *g, uint32_t sub, unsigned d)
{
	uint32_t *slot, v;

	if (likely(sub < g->n_flow_subnets))
		return &g->flow_sub[sub * DPMON_DIR_MAX + d];
	slot = &g->flow_slot[(sub - g->n_flow_subnets) * DPMON_DIR_MAX + d];
	v = *slot;
	if (unlikely((v >> 8) != (core->epoch & 0xffffff) || (v & 0xff) == 0))
		return dpmon_flow_pool_take(core, slot); /* first packet this epoch */
	return (v & 0xff) == DPMON_FLOW_SLOT_NONE ? NULL : &core->flow_pool[(v & 0xff) - 1];
}

/*
 * Totals and subnets of each counted packet, its host keys, and stage 1 of
 * distinct flows: hash the 5-tuple of a packet with a monitored side, find
 * the subnet sketches of its directions and prefetch the registers it will
 * update (the subnet sketches span megabytes; the host pass runs in
 * between and hides the misses). One loop: each packet's subnets are read
 * once.
 */
static __rte_always_inline void
count_packets(struct dpmon_core *core, const struct dpmon_generation *g, struct burst_ctx *b,
	      uint16_t n, const bool flows)
{
	struct dpmon_pair_ctr *subnets = g->subnets;

	b->n_hkey = 0;
	for (uint16_t i = 0; i < n; i++) {
		const struct dpmon_pkt *p = &b->pkt[i];
		struct dpmon_flow_sketch *si = NULL, *so = NULL;
		uint32_t in, out;
		uint64_t len = p->len, h;

		if (p->family == 0)
			continue;
		in = b->sub[i][DPMON_DIR_INGRESS];
		out = b->sub[i][DPMON_DIR_EGRESS];
		if (unlikely(b->flag_mask[i] != 0))
			count_flags(core, subnets, b->flag_mask[i], in, out, len);
		if (in == DPMON_NO_SUBNET && out == DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_EXTERNAL].proto[p->proto], len);
			continue;
		}
		h = flows ? flow_hash(b, i) : 0;
		b->fhash[i] = h;
		if (in != DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_INGRESS].proto[p->proto], len);
			dpmon_ctr_add(&subnets[in].dir[DPMON_DIR_INGRESS].proto[p->proto], len);
			if (!host_key(b, i, DPMON_DIR_INGRESS))
				dpmon_count_inc(&core->stats.host_v4mapped, 1);
			else if (unlikely(g->host_bits != NULL))
				dpmon_addr_mask(&b->hkey[b->n_hkey - 1], g->host_bits[in]);
			if (flows) {
				rte_prefetch0(flow_reg(&core->flow_tot[DPMON_DIR_INGRESS], h));
				si = sub_sketch(core, g, in, DPMON_DIR_INGRESS);
				if (si != NULL)
					rte_prefetch0(flow_reg(si, h));
			}
		}
		if (out != DPMON_NO_SUBNET) {
			dpmon_ctr_add(&core->totals[DPMON_TOTAL_EGRESS].proto[p->proto], len);
			dpmon_ctr_add(&subnets[out].dir[DPMON_DIR_EGRESS].proto[p->proto], len);
			if (!host_key(b, i, DPMON_DIR_EGRESS))
				dpmon_count_inc(&core->stats.host_v4mapped, 1);
			else if (unlikely(g->host_bits != NULL))
				dpmon_addr_mask(&b->hkey[b->n_hkey - 1], g->host_bits[out]);
			if (flows) {
				rte_prefetch0(flow_reg(&core->flow_tot[DPMON_DIR_EGRESS], h));
				so = sub_sketch(core, g, out, DPMON_DIR_EGRESS);
				if (so != NULL)
					rte_prefetch0(flow_reg(so, h));
			}
			if (in != DPMON_NO_SUBNET)
				dpmon_ctr_add(&core->totals[DPMON_TOTAL_INTERNAL].proto[p->proto],
					      len);
		}
		b->fsk[i][DPMON_DIR_INGRESS] = si;
		b->fsk[i][DPMON_DIR_EGRESS] = so;
	}
}

/* count_packets, compiled once with the flows and once without. */
static void DPMON_PASS
count_pass(struct dpmon_core *core, const struct dpmon_generation *g, struct burst_ctx *b,
	   uint16_t n)
{
	if (likely(core->flow_sketches))
		count_packets(core, g, b, n, true);
	else
		count_packets(core, g, b, n, false);
}

/* Distinct flows, stage 2: each hashed packet into the flow sketches of the
 * totals and subnets of its direction(s) (counters.h). */
static void DPMON_PASS
flow_pass(struct dpmon_core *core, const struct burst_ctx *b, uint16_t n)
{
	const uint32_t e = core->epoch;

	for (uint16_t i = 0; i < n; i++) {
		uint32_t in, out;
		uint64_t h;

		if (b->pkt[i].family == 0)
			continue;
		in = b->sub[i][DPMON_DIR_INGRESS];
		out = b->sub[i][DPMON_DIR_EGRESS];
		if (in == DPMON_NO_SUBNET && out == DPMON_NO_SUBNET)
			continue;
		h = b->fhash[i];
		if (in != DPMON_NO_SUBNET) {
			dpmon_flow_add(&core->flow_tot[DPMON_DIR_INGRESS], e, h);
			if (b->fsk[i][DPMON_DIR_INGRESS] != NULL)
				dpmon_flow_add(b->fsk[i][DPMON_DIR_INGRESS], e, h);
		}
		if (out != DPMON_NO_SUBNET) {
			dpmon_flow_add(&core->flow_tot[DPMON_DIR_EGRESS], e, h);
			if (b->fsk[i][DPMON_DIR_EGRESS] != NULL)
				dpmon_flow_add(b->fsk[i][DPMON_DIR_EGRESS], e, h);
		}
	}
}

/* Stage 1: hash every key and prefetch its index bucket. */
static void DPMON_PASS
host_hash_stage(const struct dpmon_core *core, struct burst_ctx *b)
{
	for (uint16_t k = 0; k < b->n_hkey; k++) {
		uint32_t sig = dpmon_host_hash(&b->hkey[k]);

		b->hsig[k] = sig;
		rte_prefetch0(&core->buckets[sig & core->bucket_mask]);
	}
}

/* Stage 2: the first entry of the home bucket whose signature matches (or
 * -1), with its meta and counter lines prefetched for stage 3. */
static void DPMON_PASS
host_probe_stage(const struct dpmon_core *core, struct burst_ctx *b)
{
	for (uint16_t k = 0; k < b->n_hkey; k++) {
		const struct dpmon_host_bucket *bk = &core->buckets[b->hsig[k] & core->bucket_mask];
		int32_t idx = -1;

		for (unsigned s = 0; s < DPMON_BUCKET_SLOTS; s++) {
			if (bk->sig[s] == b->hsig[k] && bk->idx[s] != 0) {
				idx = (int32_t)bk->idx[s] - 1;
				break;
			}
		}
		b->hidx[k] = idx;
		if (idx >= 0) {
			rte_prefetch0(&core->meta[idx]);
			rte_prefetch0(&core->hosts[idx]);
		}
	}
}

/* 64-bit hash of packet @p i's remote peer in direction @p dir: the source
 * of an ingress packet, the destination of an egress one. */
static inline uint64_t
peer_hash(const struct burst_ctx *b, uint16_t i, uint8_t dir)
{
	const struct dpmon_pkt *p = &b->pkt[i];

	if (p->family == 4) {
		uint64_t h = (dir == DPMON_DIR_INGRESS ? p->src4 : p->dst4) * 0x9e3779b97f4a7c15ull;

		/* splitmix64 finalizer */
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
		h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
		return h ^ (h >> 31);
	}
	return dpmon_hash64(b->a6[2 * b->slot[i] + (dir == DPMON_DIR_INGRESS ? 1 : 0)], 16, 6);
}

/* The rare part of host key @p k's update (entry @p idx): its packet's
 * fragment or SYN into the entry's flag line; a packet from an ignored
 * source also into the side table, under its destination (ignored.h). */
static void __rte_noinline
host_rare(struct dpmon_core *core, const struct burst_ctx *b, uint16_t k, uint32_t idx)
{
	uint16_t i = b->hpkt[k];
	uint8_t d = b->hdir[k];
	unsigned kinds = b->flag_mask[i] & FLAG_KINDS;

	if (kinds != 0)
		dpmon_host_flag_add(core, idx, d, kinds, b->pkt[i].len);
	if ((b->flag_mask[i] & FLAG_IGNORED) && d == DPMON_DIR_INGRESS && b->ign != NULL &&
	    dpmon_ignored_add(b->ign, &b->hkey[k], b->hsig[k], b->sub[i][d], b->pkt[i].proto, kinds,
			      b->pkt[i].len) != 0)
		dpmon_count_inc(&core->stats.ignored_full, 1);
}

/* Stage 3: confirm the key (or take the slow path: full probe, insert),
 * stamp the entry, count, and add the flow and peer (counters.h). */
static __rte_always_inline void
host_count(struct dpmon_core *core, struct burst_ctx *b, const bool flows)
{
	for (uint16_t k = 0; k < b->n_hkey; k++) {
		uint16_t i = b->hpkt[k];
		uint8_t d = b->hdir[k];
		int32_t idx = b->hidx[k];

		if (unlikely(idx < 0 || !dpmon_addr_eq(&core->meta[idx].addr, &b->hkey[k]))) {
			idx = dpmon_core_host_insert(core, &b->hkey[k], b->hsig[k], b->sub[i][d]);
			if (idx < 0) {
				dpmon_count_inc(&core->stats.host_table_full, 1);
				continue;
			}
		}
		dpmon_host_touch(core, (uint32_t)idx);
		dpmon_host_add(core, (uint32_t)idx, d, b->pkt[i].proto, b->pkt[i].len);
		if (unlikely(b->flag_mask[i] != 0))
			host_rare(core, b, k, (uint32_t)idx);
		if (flows)
			dpmon_host_flow_add(core, (uint32_t)idx, d, b->fhash[i],
					    peer_hash(b, i, d));
	}
}

/* host_count, compiled once with the flows and peers and once without. */
static void DPMON_PASS
host_count_stage(struct dpmon_core *core, struct burst_ctx *b)
{
	if (likely(core->flow_sketches))
		host_count(core, b, true);
	else
		host_count(core, b, false);
}

static void
host_pass(struct dpmon_core *core, struct burst_ctx *b)
{
	host_hash_stage(core, b);
	host_probe_stage(core, b);
	host_count_stage(core, b);
}

void
dpmon_worker_count_generation(struct dpmon_core *core, const struct dpmon_generation *g,
			      struct rte_mbuf **pkts, uint16_t n, uint32_t decap)
{
	struct burst_ctx b;

	RTE_ASSERT(n <= DPMON_MAX_BURST);
	if (n == 0)
		return;
	dpmon_core_burst_begin(core);
	b.ign = g->ign;
	parse_pass(core, &b, pkts, n, decap);
	if (unlikely(core->sample != NULL && dpmon_sample_watching(core->sample)))
		sample_pass(core, &b, pkts, n);
	classify_pass(g->cls, &b);
	reasons_store(core, &b);
	count_pass(core, g, &b, n);
	host_pass(core, &b);
	if (likely(core->flow_sketches))
		flow_pass(core, &b, n);
	/* Last, with release: a merge that sees these packets counted here
	 * (acquire) sees every counter this burst touched (counters.h). */
	dpmon_count_inc(&core->stats.bursts, 1);
	__atomic_store_n(&core->stats.packets, core->stats.packets + n, __ATOMIC_RELEASE);
}

void
dpmon_worker_count(struct dpmon_core *core, const struct dpmon_generation *g,
		   struct rte_mbuf **pkts, uint16_t n)
{
	dpmon_worker_count_generation(core, g, pkts, n, 0);
}

void
dpmon_worker_burst(struct dpmon_core *core, const struct dpmon_generation *g,
		   struct rte_mbuf **pkts, uint16_t n)
{
	dpmon_worker_count_generation(core, g, pkts, n, 0);
	rte_pktmbuf_free_bulk(pkts, n);
}

/* One rx_burst on @p rxq and its processing; counts the poll and, when
 * packets came, the cycles from before the rx_burst to the end (load). */
static inline uint16_t
poll_queue(struct dpmon_worker *w, const struct dpmon_generation *g, const struct dpmon_rxq *rxq,
	   struct rte_mbuf **pkts)
{
	struct dpmon_core_stats *st = &w->core->stats;
	uint64_t t0 = rte_rdtsc();
	uint16_t n = rte_eth_rx_burst(rxq->port_id, rxq->queue_id, pkts, w->burst_size);

	dpmon_count_inc(&st->polls, 1);
	if (n == 0)
		return 0;
	dpmon_worker_count_generation(w->core, g, pkts, n,
				      rxq->decap | (rxq->ptype ? DPMON_WORKER_PTYPE : 0));
	rte_pktmbuf_free_bulk(pkts, n);
	dpmon_count_inc(&st->busy_cycles, rte_rdtsc() - t0);
	return n;
}

/* A round without polls while a test holds the worker: quiescent, asleep 1 ms. */
static void __rte_noinline
hold_round(struct dpmon_worker *w)
{
	if (w->qsv != NULL)
		rte_rcu_qsbr_quiescent(w->qsv, w->qs_id);
	rte_delay_us_sleep(1000);
}

int
dpmon_worker_loop(void *arg)
{
	struct dpmon_worker *w = arg;
	struct rte_mbuf *pkts[DPMON_MAX_BURST];
	struct dpmon_idle idle = {.sleep_us = w->idle_sleep_us};

	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED)) {
		/* Once per round: the generation these bursts count into. */
		const struct dpmon_generation *g = __atomic_load_n(&w->gen, __ATOMIC_ACQUIRE);
		uint32_t got = 0;

		/* A test holds the worker (worker.h): one predictable branch per round. */
		if (unlikely(__atomic_load_n(&w->hold, __ATOMIC_RELAXED))) {
			hold_round(w);
			continue;
		}
		for (uint16_t q = 0; q < w->n_rxq; q++)
			got += poll_queue(w, g, &w->rxq[q], pkts);
		/* Outside packet processing: g is no longer referenced. */
		if (w->qsv != NULL)
			rte_rcu_qsbr_quiescent(w->qsv, w->qs_id);
		/* Between bursts: the merge's retire requests, a few per round
		 * so that a wave of them never delays the RX queues. */
		dpmon_core_maintain(w->core, DPMON_RETIRE_PER_ROUND);
		dpmon_idle_round(&idle, got != 0);
	}
	if (w->qsv != NULL)
		rte_rcu_qsbr_thread_offline(w->qsv, w->qs_id);
	return 0;
}

struct dpmon_generation *
dpmon_generation_create(const struct dpmon_classifier *cls, uint32_t n_subnets, int socket_id)
{
	struct dpmon_generation *g =
		rte_zmalloc_socket("dpmon_generation", sizeof(*g), RTE_CACHE_LINE_SIZE, socket_id);

	if (g == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	g->cls = cls;
	g->n_subnets = n_subnets;
	g->n_flow_subnets = n_subnets < DPMON_FLOW_SUBNETS_MAX ? n_subnets : DPMON_FLOW_SUBNETS_MAX;
	/* One spare entry each: never a zero-size allocation. */
	g->subnets = rte_zmalloc_socket("dpmon_gen_subnets", sizeof(*g->subnets) * (n_subnets + 1),
					RTE_CACHE_LINE_SIZE, socket_id);
	g->flow_sub =
		rte_zmalloc_socket("dpmon_gen_flow_sub",
				   sizeof(*g->flow_sub) * DPMON_DIR_MAX * (g->n_flow_subnets + 1),
				   RTE_CACHE_LINE_SIZE, socket_id);
	g->flow_slot = rte_zmalloc_socket("dpmon_gen_flow_slot",
					  sizeof(*g->flow_slot) * DPMON_DIR_MAX *
						  (n_subnets - g->n_flow_subnets + 1),
					  RTE_CACHE_LINE_SIZE, socket_id);
	if (cls != NULL && cls->n_ignored != 0)
		g->ign = rte_zmalloc_socket("dpmon_gen_ignored", sizeof(*g->ign),
					    RTE_CACHE_LINE_SIZE, socket_id);
	if (g->subnets == NULL || g->flow_sub == NULL || g->flow_slot == NULL ||
	    (cls != NULL && cls->n_ignored != 0 && g->ign == NULL)) {
		dpmon_generation_free(g);
		rte_errno = ENOMEM;
		return NULL;
	}
	return g;
}

int
dpmon_generation_host_prefixes(struct dpmon_generation *g, const struct dpmon_subnet_conf *subnets,
			       uint32_t n, int socket_id)
{
	bool shorter = false;

	if (n != g->n_subnets)
		return -EINVAL;
	for (uint32_t i = 0; i < n && !shorter; i++)
		shorter = dpmon_subnet_host_len(&subnets[i]) <
			  dpmon_family_bits(subnets[i].prefix.family);
	rte_free(g->host_bits);
	g->host_bits = NULL;
	if (!shorter)
		return 0;
	g->host_bits = rte_malloc_socket("dpmon_gen_host_bits", n, RTE_CACHE_LINE_SIZE, socket_id);
	if (g->host_bits == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		g->host_bits[i] = (uint8_t)dpmon_mapped_bits(subnets[i].prefix.family,
							     dpmon_subnet_host_len(&subnets[i]));
	return 0;
}

void
dpmon_generation_free(struct dpmon_generation *g)
{
	if (g == NULL)
		return;
	rte_free(g->host_bits);
	rte_free(g->ign);
	rte_free(g->subnets);
	rte_free(g->flow_sub);
	rte_free(g->flow_slot);
	rte_free(g);
}
