/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * idle.h — optional sleep of a polling lcore while its RX queues are empty.
 *
 * A worker or distributor lcore polls its RX queues in rounds. By default
 * it never sleeps (busy polling: lowest latency, no loss at line rate, one
 * whole core per lcore whatever the traffic). With "idle_sleep_us" set, an
 * lcore that has seen DPMON_IDLE_ROUNDS rounds in a row without a packet
 * sleeps that many microseconds (rte_delay_us_sleep, i.e. nanosleep: the
 * core is given back to the kernel) before each further empty round; the
 * first packet ends it. The NIC (or the kernel's TPACKET ring) must hold
 * what arrives during one sleep: a 10 Gbit/s port fills a 4096-descriptor
 * RX ring with 64-byte frames in 275 us, so keep the sleep well below the
 * ring size divided by the peak rate, or leave it at 0 on a busy link.
 * Like DPDK's l3fwd-power empty-poll heuristic, but with a plain sleep so
 * it works on any PMD (no RX interrupts needed).
 */
#ifndef DPMON_IDLE_H
#define DPMON_IDLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

/** Empty rounds in a row before the first sleep (a round polls every queue once). */
#define DPMON_IDLE_ROUNDS 256

/** Idle state of one polling lcore; zero it, then set @c sleep_us. */
struct dpmon_idle {
	uint32_t sleep_us; /**< sleep per empty round once idle, microseconds; 0 = never sleep */
	uint32_t empty_rounds; /**< rounds without a packet since the last packet */
};

/**
 * Account one round of polls and sleep when the lcore is idle.
 * @param st   this lcore's state.
 * @param got  true when the round received at least one packet.
 * Thread-safety: the polling lcore that owns @p st. Called once per round,
 * never per packet.
 */
static inline void
dpmon_idle_round(struct dpmon_idle *st, bool got)
{
	if (st->sleep_us == 0)
		return;
	if (got) {
		st->empty_rounds = 0;
		return;
	}
	if (st->empty_rounds < DPMON_IDLE_ROUNDS) {
		st->empty_rounds++;
		return;
	}
	rte_delay_us_sleep(st->sleep_us);
}

#endif /* DPMON_IDLE_H */
