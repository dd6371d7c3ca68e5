/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * numbers.h — numbers in and out for dpmon-gen: the one decimal parser of
 * its command line, its option lists and the profiles it renders, and the
 * big-endian stores that write the frames' header fields. Header only,
 * plain C, no DPDK (dpmon-gen's library code runs without EAL).
 */
#ifndef DPMON_GEN_NUMBERS_H
#define DPMON_GEN_NUMBERS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Decimal in.
 * --------------------------------------------------------------------- */

/**
 * Parse the @p len bytes at @p s as a decimal number: ASCII digits only
 * (no sign, blank or base prefix), at least one, leading zeros allowed.
 * @param s    the text; need not be NUL-terminated.
 * @param len  its length in bytes.
 * @param max  the largest value accepted (any uint64_t).
 * @param out  set to the value on success, untouched on failure.
 * @return 0; -EINVAL when the text is empty or holds a non-digit;
 *         -ERANGE when the value is above @p max (or 2^64 - 1).
 * Thread-safety: any thread (no state).
 */
static inline int
gen_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');

		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/**
 * gen_parse_uint() on the whole NUL-terminated string @p s, into a 32-bit
 * value no larger than @p max.
 * @return 0, -EINVAL or -ERANGE as gen_parse_uint(); @p out untouched on
 *         failure. Thread-safety: any thread (no state).
 */
static inline int
gen_parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int rc = gen_parse_uint(s, strlen(s), max, &v);

	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

/* ------------------------------------------------------------------------
 * Big-endian out.
 * --------------------------------------------------------------------- */

/**
 * Store the low 16 bits of @p v at @p p, most significant byte first
 * (network order); @p p needs no alignment. Thread-safety: any thread.
 */
static inline void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * Store @p v at @p p, most significant byte first (network order);
 * @p p needs no alignment. Thread-safety: any thread.
 */
static inline void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

#endif /* DPMON_GEN_NUMBERS_H */
