/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rates.h — the arithmetic of rates and averages, shared by the merge and
 * its tests (docs/architecture.md, "Rates and averages").
 *
 * A rate is the difference of two reads of a monotonic 64-bit counter
 * divided by the interval measured between the reads (never the nominal
 * one): a merge that runs 1.9 s after the previous one divides by 1.9.
 * The difference is taken in unsigned 64-bit arithmetic, so it is exact
 * across 2^32 (host counters carry into their high words, counters.h) and
 * even across 2^64.
 *
 * Averages are exponentially weighted moving averages with time constant
 * tau, updated once per merge in double precision with the measured
 * interval dt:
 *     avg += alpha * (rate - avg),   alpha = 1 - exp(-dt / tau).
 * Nothing is rounded, so a steady 5 pps averages 5.0 (no truncation bias),
 * and the weight depends only on elapsed time: one step over a 2 s
 * interval (a skipped merge) gives exactly what two 1 s steps at the same
 * rate give, since (1 - alpha(1))^2 = exp(-2 / tau) = 1 - alpha(2). A
 * series starts at 0 (the address had no traffic before it was seen) and
 * reaches 99 % of a steady rate after 4.6 tau.
 */
#ifndef DPMON_RATES_H
#define DPMON_RATES_H

#include <math.h>
#include <stdint.h>

/** Per-second rate of a counter that went from @p prev to @p cur in @p dt s (0 if dt <= 0). */
static inline double
dpmon_rate_per_s(uint64_t cur, uint64_t prev, double dt)
{
	return dt > 0 ? (double)(cur - prev) / dt : 0.0;
}

/** Weight of a new sample after @p dt seconds, time constant @p tau seconds. */
static inline double
dpmon_ewma_alpha(double dt, double tau)
{
	if (!(dt > 0))
		return 0.0;
	if (!(tau > 0))
		return 1.0;
	return -expm1(-dt / tau);
}

/**
 * Factor by which an average falls in @p elapsed_s seconds of zero rate
 * with time constant @p tau_s: exp(-elapsed/tau), the product of the
 * (1 - alpha) of the EWMA steps in between (dpmon_ewma_alpha); 1 when no time
 * passed, 0 with no time constant (each step replaces the average).
 */
static inline double
dpmon_avg_decay(double elapsed_s, double tau_s)
{
	if (!(elapsed_s > 0))
		return 1.0;
	if (!(tau_s > 0))
		return 0.0;
	return exp(-elapsed_s / tau_s);
}

/** One step of the average @p avg towards @p x with weight @p alpha. */
static inline double
dpmon_ewma_step(double avg, double x, double alpha)
{
	return avg + alpha * (x - avg);
}

#endif /* DPMON_RATES_H */
