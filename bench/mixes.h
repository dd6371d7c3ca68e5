/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mixes.h — the benchmark's traffic mixes, shared by every mode of
 * dpmon-bench (capture generation, hot path, merge sizing).
 *
 * Design: a mix is a pure description (subnets, hosts per subnet, protocol
 * mix, frame sizes, packet count) turned into dpmon-gen options by
 * bench_mix_opts(); the same seed gives the same capture on every run, so
 * the end-to-end rows, the hot-path rows and testpmd all see identical
 * packets. Every mix has at least 65 536 distinct packets so the capture
 * does not sit in L1/L2.
 */
#ifndef DPMON_BENCH_MIXES_H
#define DPMON_BENCH_MIXES_H

#include <stdint.h>
#include <stdio.h>

#include "gen.h"

/** One benchmark traffic mix. */
struct bench_mix {
	const char *name;  /**< short id used on the command line and in JSON */
	const char *title; /**< one line for the table */
	uint32_t n_v4;     /**< IPv4 subnets, consecutive from 10.0.0.0 */
	uint8_t v4_len;    /**< their prefix length */
	uint32_t n_v6;     /**< IPv6 /64 subnets 2001:db8:0:N::/64 */
	uint32_t hosts;    /**< hosts per subnet */
	uint64_t packets;  /**< packets in the capture */
	const char *proto; /**< dpmon-gen --mix */
	const char *sizes; /**< dpmon-gen --size */
};

/** The mixes, in table order. */
extern const struct bench_mix bench_mixes[];
/** Number of entries of bench_mixes. */
extern const unsigned bench_n_mixes;

/** Find a mix by name. @return it, or NULL. */
const struct bench_mix *bench_mix_find(const char *name);

/**
 * Fill dpmon-gen options for @p mx writing to @p output (seed 1).
 * @return 0, or a negative errno (-ENOMEM, -EINVAL).
 */
int bench_mix_opts(const struct bench_mix *mx, const char *output, struct dpmon_gen_opts *o);

/** Monitored hosts configured by @p mx (subnets x hosts). */
uint64_t bench_mix_hosts(const struct bench_mix *mx);

/**
 * Print the dpmon configuration's "subnets" array for @p mx (JSON) to @p f.
 */
void bench_mix_print_subnets(const struct bench_mix *mx, FILE *f);

#endif /* DPMON_BENCH_MIXES_H */
