/* hll.c — HyperLogLog estimate and merge (see hll.h). */
#include "hll.h"

#include <math.h>

void
dpmon_hll_merge(uint8_t *dst, const uint8_t *src, unsigned p)
{
	for (uint32_t i = 0; i < DPMON_HLL_M(p); i++) {
		uint8_t v = __atomic_load_n(&src[i], __ATOMIC_RELAXED);

		if (v > dst[i])
			dst[i] = v;
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
		0x1p-0, 0x1p-1, 0x1p-2, 0x1p-3, 0x1p-4, 0x1p-5, 0x1p-6, 0x1p-7, 0x1p-8, 0x1p-9,
		0x1p-10, 0x1p-11, 0x1p-12, 0x1p-13, 0x1p-14, 0x1p-15, 0x1p-16, 0x1p-17, 0x1p-18,
		0x1p-19, 0x1p-20, 0x1p-21, 0x1p-22, 0x1p-23, 0x1p-24, 0x1p-25, 0x1p-26, 0x1p-27,
		0x1p-28, 0x1p-29, 0x1p-30, 0x1p-31, 0x1p-32, 0x1p-33, 0x1p-34, 0x1p-35, 0x1p-36,
		0x1p-37, 0x1p-38, 0x1p-39, 0x1p-40, 0x1p-41, 0x1p-42, 0x1p-43, 0x1p-44, 0x1p-45,
		0x1p-46, 0x1p-47, 0x1p-48, 0x1p-49, 0x1p-50, 0x1p-51, 0x1p-52, 0x1p-53, 0x1p-54,
		0x1p-55, 0x1p-56, 0x1p-57, 0x1p-58, 0x1p-59, 0x1p-60, 0x1p-61, 0x1p-62, 0x1p-63,
		0x1p-64, 0x1p-65
	};
	for (uint32_t i = 0; i < DPMON_HLL_M(p); i++) {
		sum += inv[reg[i] < 66 ? reg[i] : 65];
		zeros += reg[i] == 0;
	}
	e = alpha * m * m / sum;
	if (e <= 2.5 * m && zeros > 0)
		e = m * log(m / (double)zeros); /* linear counting */
	return e;
}

double
dpmon_bitmap_estimate(uint64_t bits)
{
	int zeros = 64 - __builtin_popcountll(bits);

	/* The n for which k = 64 - zeros bits are expected to be set:
	 * 64 (1 - (63/64)^n) = k (closer than 64 ln(64/zeros) for small n). */
	return log((zeros > 0 ? zeros : 1) / 64.0) / log(63.0 / 64.0);
}
