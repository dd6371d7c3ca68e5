/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll.h — HyperLogLog distinct counters (flows, peers), mergeable by
 * register-wise maximum, for the flow and peer counts (docs/architecture.md,
 * "Flows").
 *
 * A sketch of precision p has m = 2^p one-byte registers. A 64-bit hash
 * picks a register with its top p bits; the register keeps the largest
 * rank (1 + leading zeros of the remaining 64 - p bits) seen. The estimate
 * is the harmonic-mean estimator of Flajolet et al. (2007) with linear
 * counting while it is below 2.5 m and some register is still zero; with
 * 64-bit hashes no large-range correction is needed. Sketches of the same
 * precision merge by taking each register's maximum, so a union over
 * worker lcores costs m byte compares and nothing is counted twice.
 *
 * Relative standard error about 1.04 / sqrt(m):
 *   p = 14 (16 KiB)  0.81 %   subnets and totals;
 *   p = 6  (64 B)    13 %     per host (a small sketch).
 * Measured figures are in tests/test_hll.c and docs/architecture.md.
 *
 * Thread-safety: a sketch has one writer; dpmon_hll_merge reads @p src
 * with relaxed atomic loads of 8-byte words (@p src must be 8-aligned), so
 * it may run concurrently with src's writer (a register read is a value it
 * really held).
 */
#ifndef DPMON_HLL_H
#define DPMON_HLL_H

#include <stdint.h>
#include <string.h>

#define DPMON_HLL_P_MIN 4
#define DPMON_HLL_P_MAX 16

/** Registers of a sketch of precision @p p. */
#define DPMON_HLL_M(p) (1u << (p))

/** A 5-tuple, the key of a flow; IPv4 addresses mapped into ::ffff:0:0/96. */
struct dpmon_flow_key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3]; /**< zero */
};

/** 64-bit hash of @p len bytes at @p data (a multiply-xorshift mix per 8 bytes). */
static inline uint64_t
dpmon_hash64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *b = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, b, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		b += 8;
		len -= 8;
	}
	if (len > 0) {
		uint64_t w = 0;

		memcpy(&w, b, len);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	/* splitmix64 finalizer */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/** Hash of a flow key. */
static inline uint64_t
dpmon_flow_hash(const struct dpmon_flow_key *k)
{
	return dpmon_hash64(k, sizeof(*k), 0);
}

/**
 * HyperLogLog rank of hash @p h under precision @p p: the position of the
 * first set bit after the @p p index bits, 64 - p + 1 when they are all
 * zero. Branch-free: bit p - 1 of the shifted hash (always zero there)
 * set as a sentinel bounds the count of leading zeros.
 */
static inline uint32_t
dpmon_hll_rank(uint64_t h, unsigned p)
{
	return (uint32_t)__builtin_clzll(h << p | 1ull << (p - 1)) + 1;
}

/** Add the item of hash @p h to the @p p -precision registers @p reg. Single writer. */
static inline void
dpmon_hll_add(uint8_t *reg, unsigned p, uint64_t h)
{
	uint32_t i = (uint32_t)(h >> (64 - p));
	uint32_t rank = dpmon_hll_rank(h, p);

	if (rank > reg[i])
		__atomic_store_n(&reg[i], (uint8_t)rank, __ATOMIC_RELAXED);
}

/** dst = register-wise max(dst, src), both of precision @p p. */
void dpmon_hll_merge(uint8_t *dst, const uint8_t *src, unsigned p);

/**
 * Estimated distinct items of a 64-bit linear-counting bitmap (bit = top 6
 * bits of the item's hash): the n for which @p bits' number of set bits is
 * expected, ln(zero bits / 64) / ln(63 / 64); 0 for no bit set; a full
 * bitmap reads as ln(1/64) / ln(63/64) = 264 (the largest value it tells).
 */
double dpmon_bitmap_estimate(uint64_t bits);

/**
 * Estimated distinct items of a bitmap @p pre (as dpmon_bitmap_estimate)
 * that are not in the registers @p reg of precision @p p (>= 6), both fed
 * from the same 64-bit hashes: the items a sketch started after them
 * (a promoted host) never saw. A set bit of @p pre whose block of
 * registers (those whose index has the bit's number as top 6 bits) is all
 * zero holds only such items; the blocks of the clear bits tell how often
 * a block stays empty by chance. Scaled by the bitmap's items per bit; 0
 * when no block is empty (the sketch is then far larger than 44 items).
 */
double dpmon_hll_unseen(uint64_t pre, const uint8_t *reg, unsigned p);

/** Estimated distinct items of the registers @p reg of precision @p p. */
double dpmon_hll_estimate(const uint8_t *reg, unsigned p);

#endif /* DPMON_HLL_H */
