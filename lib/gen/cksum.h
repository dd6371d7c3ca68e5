/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cksum.h — the Internet checksum (RFC 1071) for the capture writers
 * (dpmon-gen and its profile renderer). Plain C, no DPDK: dpmon-gen's
 * library code runs without EAL.
 */
#ifndef DPMON_CKSUM_H
#define DPMON_CKSUM_H

#include <stddef.h>
#include <stdint.h>

/**
 * Add the big-endian 16-bit words of @p n bytes at @p p to @p sum (an odd
 * last byte is padded with zero, RFC 1071 section 4.1); unfolded.
 */
static inline uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (i < n)
		sum += (uint32_t)p[i] << 8;
	return sum;
}

/** Fold @p sum to 16 bits and complement it: the checksum field's value. */
static inline uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif /* DPMON_CKSUM_H */
