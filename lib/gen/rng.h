/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rng.h — dpmon-gen's pseudo-random generator: xoshiro256** 1.0
 * (Blackman & Vigna) seeded through splitmix64, so that a capture is a
 * pure function of its seed. Bounded draws use the high 32 bits times the
 * bound (bias < bound / 2^32, irrelevant here, and deterministic). Header
 * only, plain C; each writer owns its struct rng.
 */
#ifndef DPMON_GEN_RNG_H
#define DPMON_GEN_RNG_H

#include <stdint.h>

/** The generator's state; seed it with rng_seed(). */
struct rng {
	uint64_t s[4];
};

/** splitmix64: the next of the sequence from *@p x (advanced); any thread. */
static inline uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/** Seed @p r from @p seed through splitmix64; any thread, distinct @p r. */
static inline void
rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/** @p x rotated left by @p k bits, 1..63. */
static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** The next 64 random bits of @p r (xoshiro256** 1.0); any thread, distinct @p r. */
static inline uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/** A draw in [0, @p n), @p n <= 2^32. */
static inline uint32_t
rng_below(struct rng *r, uint64_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/** Index into a cumulative weight table cum[0..n) whose last entry is the total. */
static inline uint32_t
rng_weighted(struct rng *r, const uint32_t *cum, uint32_t n)
{
	uint32_t x = rng_below(r, cum[n - 1]);
	uint32_t i = 0;

	while (x >= cum[i])
		i++;
	return i;
}

#endif /* DPMON_GEN_RNG_H */
