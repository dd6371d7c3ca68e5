/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefix.c — address and CIDR text conversion.
 *
 * Thin wrappers over inet_pton/inet_ntop (glibc's inet_ntop already emits
 * the RFC 5952 canonical form: lower case, longest zero run compressed, a
 * single zero group never compressed) plus the mapped-IPv4 convention of
 * prefix.h.
 */
#include "prefix.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
dpmon_addr_parse(const char *text, struct dpmon_addr *out)
{
	struct in_addr v4;

	if (text == NULL)
		return -EINVAL;
	if (inet_pton(AF_INET, text, &v4) == 1) {
		dpmon_addr_from_v4(out, ntohl(v4.s_addr));
		return 0;
	}
	if (strchr(text, ':') != NULL && inet_pton(AF_INET6, text, out->b) == 1)
		return 0;
	return -EINVAL;
}

char *
dpmon_addr_format(const struct dpmon_addr *a, char *buf, size_t len)
{
	if (dpmon_addr_is_v4(a)) {
		/* By hand: glibc's inet_ntop formats IPv4 with sprintf, and the
		 * exporter formats a million addresses per interval. */
		uint32_t v = dpmon_addr_v4(a);
		char tmp[INET_ADDRSTRLEN], *o = tmp;

		for (int shift = 24; shift >= 0; shift -= 8) {
			unsigned octet = (v >> shift) & 0xff;

			if (octet >= 100)
				*o++ = (char)('0' + octet / 100);
			if (octet >= 10)
				*o++ = (char)('0' + octet / 10 % 10);
			*o++ = (char)('0' + octet % 10);
			*o++ = shift > 0 ? '.' : '\0';
		}
		if ((size_t)(o - tmp) <= len)
			memcpy(buf, tmp, (size_t)(o - tmp));
		else if (len)
			buf[0] = '\0';
	} else if (inet_ntop(AF_INET6, a->b, buf, (socklen_t)len) == NULL && len) {
		buf[0] = '\0';
	}
	return buf;
}

/* Zero every bit after the first @p bits of the 16-byte address. */
static void
mask_after(struct dpmon_addr *a, unsigned bits)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned lo = i * 8;
		if (bits >= lo + 8)
			continue;
		a->b[i] &= bits <= lo ? 0 : (uint8_t)(0xff << (8 - (bits - lo)));
	}
}

static unsigned
mapped_bits(const struct dpmon_prefix *p)
{
	return p->family == 4 ? 96u + p->depth : p->depth;
}

int
dpmon_prefix_parse(const char *text, struct dpmon_prefix *out, const char **why)
{
	char buf[DPMON_PREFIX_STRLEN + 8];
	const char *dummy;
	char *slash, *end;
	long depth;
	struct dpmon_addr masked;

	if (why == NULL)
		why = &dummy;
	if (text == NULL || strlen(text) >= sizeof(buf)) {
		*why = "bad CIDR (expected ADDRESS/LENGTH)";
		return -EINVAL;
	}
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash == NULL) {
		*why = "bad CIDR (expected ADDRESS/LENGTH)";
		return -EINVAL;
	}
	*slash = '\0';
	if (dpmon_addr_parse(buf, &out->addr) != 0) {
		*why = "bad CIDR (not an IPv4 or IPv6 address)";
		return -EINVAL;
	}
	out->family = dpmon_addr_is_v4(&out->addr) && strchr(buf, ':') == NULL ? 4 : 6;
	errno = 0;
	if (slash[1] < '0' || slash[1] > '9') {
		*why = "bad CIDR (prefix length is not a number)";
		return -EINVAL;
	}
	depth = strtol(slash + 1, &end, 10);
	if (*end != '\0') {
		*why = "bad CIDR (prefix length is not a number)";
		return -EINVAL;
	}
	if (errno != 0 || depth < 0 || depth > (out->family == 4 ? 32 : 128)) {
		*why = out->family == 4 ? "bad CIDR (IPv4 prefix length must be 0..32)"
					: "bad CIDR (IPv6 prefix length must be 0..128)";
		return -EINVAL;
	}
	out->depth = (uint8_t)depth;
	masked = out->addr;
	mask_after(&masked, mapped_bits(out));
	if (dpmon_addr_cmp(&masked, &out->addr) != 0) {
		*why = "host bits set (address is not the network address of the prefix)";
		return -EINVAL;
	}
	return 0;
}

char *
dpmon_prefix_format(const struct dpmon_prefix *p, char *buf, size_t len)
{
	char a[DPMON_ADDR_STRLEN];

	if (p->family == 6 && dpmon_addr_is_v4(&p->addr)) {
		/* An IPv6 prefix inside ::ffff:0:0/96 prints in IPv6 form. */
		inet_ntop(AF_INET6, p->addr.b, a, sizeof(a));
	} else {
		dpmon_addr_format(&p->addr, a, sizeof(a));
	}
	snprintf(buf, len, "%s/%u", a, p->depth);
	return buf;
}

bool
dpmon_prefix_contains(const struct dpmon_prefix *p, const struct dpmon_addr *a)
{
	struct dpmon_addr masked = *a;

	if (p->family == 4 && !dpmon_addr_is_v4(a))
		return false;
	mask_after(&masked, mapped_bits(p));
	return dpmon_addr_cmp(&masked, &p->addr) == 0;
}

bool
dpmon_prefix_equal(const struct dpmon_prefix *x, const struct dpmon_prefix *y)
{
	return x->family == y->family && x->depth == y->depth &&
	       dpmon_addr_cmp(&x->addr, &y->addr) == 0;
}

int
dpmon_prefix_cmp(const struct dpmon_prefix *x, const struct dpmon_prefix *y)
{
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return dpmon_addr_cmp(&x->addr, &y->addr);
}

char *
dpmon_host_format(const struct dpmon_addr *a, unsigned len, char *buf, size_t size)
{
	unsigned family = dpmon_addr_is_v4(a) ? 4 : 6;
	size_t n;

	dpmon_addr_format(a, buf, size);
	if (len >= dpmon_family_bits(family))
		return buf;
	n = strlen(buf);
	snprintf(buf + n, size > n ? size - n : 0, "/%u", len);
	return buf;
}
