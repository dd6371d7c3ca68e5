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
	static double inv[66];

	if (inv[0] == 0) /* 2^-k, k = 0..65; idempotent, so a race is harmless */
		for (int k = 65; k >= 0; k--)
			inv[k] = ldexp(1.0, -k);
	for (uint32_t i = 0; i < DPMON_HLL_M(p); i++) {
		sum += inv[reg[i] < 66 ? reg[i] : 65];
		zeros += reg[i] == 0;
	}
	e = alpha * m * m / sum;
	if (e <= 2.5 * m && zeros > 0)
		e = m * log(m / (double)zeros); /* linear counting */
	return e;
}
