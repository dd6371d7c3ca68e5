/* SPDX-License-Identifier: BSD-3-Clause */
/* hll.c — HyperLogLog estimate and merge (see hll.h). */
#include "hll.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

void
dpmon_hll_merge(uint8_t *dst, const uint8_t *src, unsigned p)
{
	/* Eight registers per relaxed 64-bit load (sketches are 8-aligned);
	 * a word of zeros, common in a sparse sketch, costs one compare. */
	typedef uint64_t __attribute__((may_alias)) word_t; /* reads the bytes' words */

	for (uint32_t i = 0; i < DPMON_HLL_M(p); i += 8) {
		uint64_t w =
			__atomic_load_n((const word_t *)(const void *)&src[i], __ATOMIC_RELAXED);

		for (unsigned b = 0; w != 0; b++, w >>= 8)
			if ((uint8_t)w > dst[i + b])
				dst[i + b] = (uint8_t)w;
	}
}

double
dpmon_hll_estimate(const uint8_t *reg, unsigned p)
{
	const double m = (double)DPMON_HLL_M(p);
	double alpha, sum = 0, e;
	uint32_t zeros = 0;

	switch (p) {
	case 4:
		alpha = 0.673;
		break;
	case 5:
		alpha = 0.697;
		break;
	case 6:
		alpha = 0.709;
		break;
	default:
		alpha = 0.7213 / (1 + 1.079 / m);
		break;
	}
	/* 2^-k, k = 0..65 (ranks are at most 64 - p + 1). */
	static const double inv[66] = {
		0x1p-0,  0x1p-1,  0x1p-2,  0x1p-3,  0x1p-4,  0x1p-5,  0x1p-6,  0x1p-7,  0x1p-8,
		0x1p-9,  0x1p-10, 0x1p-11, 0x1p-12, 0x1p-13, 0x1p-14, 0x1p-15, 0x1p-16, 0x1p-17,
		0x1p-18, 0x1p-19, 0x1p-20, 0x1p-21, 0x1p-22, 0x1p-23, 0x1p-24, 0x1p-25, 0x1p-26,
		0x1p-27, 0x1p-28, 0x1p-29, 0x1p-30, 0x1p-31, 0x1p-32, 0x1p-33, 0x1p-34, 0x1p-35,
		0x1p-36, 0x1p-37, 0x1p-38, 0x1p-39, 0x1p-40, 0x1p-41, 0x1p-42, 0x1p-43, 0x1p-44,
		0x1p-45, 0x1p-46, 0x1p-47, 0x1p-48, 0x1p-49, 0x1p-50, 0x1p-51, 0x1p-52, 0x1p-53,
		0x1p-54, 0x1p-55, 0x1p-56, 0x1p-57, 0x1p-58, 0x1p-59, 0x1p-60, 0x1p-61, 0x1p-62,
		0x1p-63, 0x1p-64, 0x1p-65};
	/* A histogram of the register values first (integer increments in
	 * four independent tables), then the sum over at most 66 values. */
	uint32_t hist[4][66];

	memset(hist, 0, sizeof(hist));
	for (uint32_t i = 0; i < DPMON_HLL_M(p); i += 4) {
		uint32_t w;

		memcpy(&w, &reg[i], 4);
		if (w == 0) { /* four empty registers: common in a sparse sketch */
			hist[0][0] += 4;
			continue;
		}
		for (unsigned k = 0; k < 4; k++)
			hist[k][reg[i + k] < 66 ? reg[i + k] : 65]++;
	}
	for (unsigned v = 0; v < 66; v++) {
		uint32_t n = hist[0][v] + hist[1][v] + hist[2][v] + hist[3][v];

		sum += n * inv[v];
		if (v == 0)
			zeros = n;
	}
	e = alpha * m * m / sum;
	if (e <= 2.5 * m && zeros > 0)
		e = m * log(m / (double)zeros); /* linear counting */
	return e;
}

double
dpmon_bitmap_estimate(uint64_t bits)
{
	/* ln(max(64 - k, 1) / 64) / ln(63 / 64) for k = 0..64 set bits: the n
	 * for which k bits are expected to be set, 64 (1 - (63/64)^n) = k
	 * (closer than 64 ln(64 / zeros) for small n). A table: the merge
	 * estimates two bitmaps per touched host and direction. */
	static const double est[65] = {0,
				       1,
				       2.0160006773285466,
				       3.048522413067539,
				       4.0981113946134453,
				       5.1653413507532546,
				       6.2508154350583176,
				       7.3551682730753107,
				       8.4790681907117555,
				       9.6232196434081807,
				       10.788365868206048,
				       11.975291783713869,
				       13.184827166308464,
				       14.417850134760775,
				       15.675290979938644,
				       16.958136381423511,
				       18.2674340589178,
				       19.604297913377412,
				       20.969913721075525,
				       22.365545453531247,
				       23.792542307712537,
				       25.252346544510658,
				       26.746502249629554,
				       28.276665150293592,
				       29.844613644243005,
				       31.452261225226266,
				       33.101670522704865,
				       34.795069214143879,
				       36.5348681178356,
				       38.323681834954755,
				       40.164352384390334,
				       42.059976366630337,
				       44.013936308547358,
				       46.029936985875899,
				       48.112047703160805,
				       50.264751743605672,
				       52.493004499259115,
				       54.802302176753408,
				       57.198763474855824,
				       59.689227288486009,
				       62.281370367465158,
				       64.983850029622886,
				       67.806478616259909,
				       70.760438558176915,
				       73.858549952790355,
				       77.115606831252236,
				       80.548804426382972,
				       84.178288692937684,
				       88.027872617094715,
				       92.125984011708169,
				       96.506940807806473,
				       101.21269978340318,
				       106.29530667601252,
				       111.82041492480725,
				       117.87248626133773,
				       124.56274073493032,
				       132.04180892564207,
				       140.52087711635383,
				       150.30924298455989,
				       161.88642256988507,
				       176.05574523418943,
				       194.32317929310724,
				       220.06968154273679,
				       264.08361785128415,
				       264.08361785128415};

	return est[__builtin_popcountll(bits)];
}

double
dpmon_hll_unseen(uint64_t pre, const uint8_t *reg, unsigned p)
{
	const uint32_t per = DPMON_HLL_M(p) >> 6;
	uint32_t empty_set = 0, empty_clear = 0, clear = 0;
	int k = __builtin_popcountll(pre);
	double bits;

	for (unsigned j = 0; j < 64; j++) {
		bool empty = true;

		/* per >= 1; blocks of 8 or more registers are read by words */
		for (uint32_t i = j * per; i < (j + 1) * per && empty; i += per >= 8 ? 8 : 1) {
			uint64_t w = reg[i];

			if (per >= 8)
				memcpy(&w, &reg[i], 8);
			empty = w == 0;
		}
		if (pre >> j & 1) {
			empty_set += empty;
		} else {
			clear++;
			empty_clear += empty;
		}
	}
	if (k == 0 || empty_set == 0)
		return 0;
	/* Set bits whose items were not seen again: the empty ones, divided by
	 * the chance that a block stays empty (1 when no bit is clear). */
	bits = clear == 0         ? empty_set
	       : empty_clear == 0 ? k
				  : fmin(k, empty_set * (double)clear / empty_clear);
	return bits * dpmon_bitmap_estimate(pre) / k;
}
