/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefix.h — IPv4/IPv6 addresses and CIDR prefixes in one representation.
 *
 * Every address in dpmon is 16 bytes in network byte order: IPv6 as is,
 * IPv4 as an IPv4-mapped IPv6 address (::ffff:a.b.c.d, RFC 4291 section
 * 2.5.5.2). One 16-byte key serves both families in hash tables, and the
 * family is recoverable from the address itself. Text forms are the
 * canonical ones: dotted quad for IPv4, RFC 5952 for IPv6.
 *
 * No DPDK dependency: used by config, API, tests and dpmon-gen alike.
 * All functions are pure and thread-safe.
 */
#ifndef DPMON_PREFIX_H
#define DPMON_PREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Longest text form of an address ("ffff:...:255.255.255.255" + NUL). */
#define DPMON_ADDR_STRLEN   46
/** Longest text form of a prefix (address + "/128"). */
#define DPMON_PREFIX_STRLEN 50

/** An address: 16 bytes, network order, IPv4 mapped into ::ffff:0:0/96. */
struct dpmon_addr {
	_Alignas(8) uint8_t b[16]; /* 8-aligned: rte_hash_crc reads it as 2 x u64 */
};

/** A CIDR prefix. For IPv4, @c depth is 0..32 (the IPv4 prefix length). */
struct dpmon_prefix {
	struct dpmon_addr addr; /**< network address, host bits zero */
	uint8_t family;         /**< 4 or 6 */
	uint8_t depth;          /**< prefix length in bits, of the family */
};

/** Build the mapped address of an IPv4 address given in host byte order. */
static inline void
dpmon_addr_from_v4(struct dpmon_addr *a, uint32_t v4_host_order)
{
	memset(a->b, 0, 10);
	a->b[10] = 0xff;
	a->b[11] = 0xff;
	a->b[12] = (uint8_t)(v4_host_order >> 24);
	a->b[13] = (uint8_t)(v4_host_order >> 16);
	a->b[14] = (uint8_t)(v4_host_order >> 8);
	a->b[15] = (uint8_t)v4_host_order;
}

/** True when @p a is an IPv4-mapped address (RFC 4291 section 2.5.5.2). */
static inline bool
dpmon_addr_is_v4(const struct dpmon_addr *a)
{
	static const uint8_t map[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(a->b, map, 12) == 0;
}

/** The IPv4 address of a mapped address, host byte order. */
static inline uint32_t
dpmon_addr_v4(const struct dpmon_addr *a)
{
	return (uint32_t)a->b[12] << 24 | (uint32_t)a->b[13] << 16 | (uint32_t)a->b[14] << 8 |
	       a->b[15];
}

/**
 * Parse an address ("10.0.0.1", "2001:db8::1") into @p out.
 * @return 0, or -EINVAL when @p text is not an address.
 */
int dpmon_addr_parse(const char *text, struct dpmon_addr *out);

/**
 * Format @p a canonically (dotted quad, or RFC 5952 section 4 for IPv6)
 * into @p buf of @p len bytes (DPMON_ADDR_STRLEN is always enough).
 * @return @p buf.
 */
char *dpmon_addr_format(const struct dpmon_addr *a, char *buf, size_t len);

/** Compare two addresses bytewise; IPv4 sorts before IPv6. memcmp semantics. */
static inline int
dpmon_addr_cmp(const struct dpmon_addr *x, const struct dpmon_addr *y)
{
	return memcmp(x->b, y->b, 16);
}

/**
 * Whether @p x and @p y are the same address: two 64-bit compares (the
 * host tables' key compare, on the worker's hot path). Any thread.
 */
static inline bool
dpmon_addr_eq(const struct dpmon_addr *x, const struct dpmon_addr *y)
{
	uint64_t x0, x1, y0, y1;

	memcpy(&x0, x->b, 8);
	memcpy(&x1, x->b + 8, 8);
	memcpy(&y0, y->b, 8);
	memcpy(&y1, y->b + 8, 8);
	return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}

/**
 * Parse a CIDR prefix "ADDR/LEN" (RFC 4632 section 3.1; RFC 4291 section
 * 2.3 for IPv6). A missing "/LEN" is rejected.
 * @param why  on error, set to a static English reason ("bad address",
 *             "bad prefix length", "host bits set"); may be NULL.
 * @return 0, or -EINVAL.
 */
int dpmon_prefix_parse(const char *text, struct dpmon_prefix *out, const char **why);

/** Format "ADDR/LEN" canonically into @p buf (DPMON_PREFIX_STRLEN bytes). */
char *dpmon_prefix_format(const struct dpmon_prefix *p, char *buf, size_t len);

/** True when address @p a lies inside prefix @p p. */
bool dpmon_prefix_contains(const struct dpmon_prefix *p, const struct dpmon_addr *a);

/** True when the two prefixes are identical (same family, depth, network). */
bool dpmon_prefix_equal(const struct dpmon_prefix *x, const struct dpmon_prefix *y);

/**
 * Total order of prefixes: by family, then depth, then network address.
 * @return < 0, 0 (dpmon_prefix_equal) or > 0, like memcmp. Any thread.
 */
int dpmon_prefix_cmp(const struct dpmon_prefix *x, const struct dpmon_prefix *y);

/** Prefix length in bits of a whole address of @p family (4 or 6): 32 or 128. Any thread. */
static inline unsigned
dpmon_family_bits(unsigned family)
{
	return family == 4 ? 32u : 128u;
}

/**
 * Zero every bit of @p a after its first @p mapped_bits (0..128) of the
 * 16-byte form: for IPv4 that is 96 + the IPv4 prefix length, so the
 * ::ffff:0:0/96 part stays. Two 64-bit ANDs. Any thread (the worker's
 * host keys of subnets with a host_prefix_len shorter than a whole address).
 */
static inline void
dpmon_addr_mask(struct dpmon_addr *a, unsigned mapped_bits)
{
	uint64_t w[2];

	memcpy(w, a->b, 16);
	for (unsigned i = 0; i < 2; i++) {
		unsigned bits = mapped_bits > 64 * i ? mapped_bits - 64 * i : 0;
		/* The mask in host order, then as the bytes of the address. */
		uint64_t m = bits >= 64 ? ~0ull : bits == 0 ? 0 : ~0ull << (64 - bits);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		m = __builtin_bswap64(m);
#endif
		w[i] &= m;
	}
	memcpy(a->b, w, 16);
}

/**
 * Bits of the 16-byte form that a prefix length @p len of @p family keeps:
 * 96 + @p len for IPv4, @p len for IPv6 (the argument of dpmon_addr_mask).
 * Any thread.
 */
static inline unsigned
dpmon_mapped_bits(unsigned family, unsigned len)
{
	return family == 4 ? 96u + len : len;
}

/**
 * A host as the API names it: its address when @p len is the whole
 * address of its family (32 for IPv4, 128 for IPv6), else the prefix in
 * CIDR form ("2001:db8:1:2::/64"), into @p buf of @p size bytes
 * (DPMON_PREFIX_STRLEN is always enough).
 * @param a    the host's address (a prefix's network address).
 * @param len  its host prefix length, in bits of its family.
 * @return @p buf. Any thread.
 */
char *dpmon_host_format(const struct dpmon_addr *a, unsigned len, char *buf, size_t size);

#endif /* DPMON_PREFIX_H */
