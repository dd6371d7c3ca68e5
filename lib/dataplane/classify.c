/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * classify.c — builds and queries the LPM tables (see classify.h).
 *
 * IPv4 lookups go four at a time through rte_lpm_lookupx4 (SIMD on x86),
 * IPv6 through rte_lpm6_lookup_bulk_func: the library's bulk paths, so the
 * per-packet cost is the table walk alone.
 */
#include "classify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

/*
 * tbl8 groups the tables need at most: rte_lpm resolves the first 24 bits
 * in tbl24 and each further 8 bits in one tbl8 group, so a prefix longer
 * than /24 needs ceil((depth - 24) / 8) groups (IPv4: at most 1, IPv6: up
 * to 13), plus slack for groups shared by nothing.
 */
static uint64_t
tbl8_of(const struct dpmon_prefix *p, uint8_t family)
{
	return p->family == family && p->depth > 24 ? (p->depth - 24 + 7) / 8u : 0;
}

static uint32_t
tbl8_count(const struct dpmon_subnet_conf *subnets, uint32_t n, const struct dpmon_prefix *ignored,
	   uint32_t n_ignored, uint8_t family)
{
	uint64_t t = 64;

	for (uint32_t i = 0; i < n; i++)
		t += tbl8_of(&subnets[i].prefix, family);
	for (uint32_t i = 0; i < n_ignored; i++)
		t += tbl8_of(&ignored[i], family);
	return t > (1u << 24) ? (1u << 24) : (uint32_t)t;
}

static int
add_v4(struct rte_lpm *lpm, const struct dpmon_prefix *p, uint32_t idx)
{
	uint32_t ip = dpmon_addr_v4(&p->addr);

	if (p->depth == 0) {
		int rc = rte_lpm_add(lpm, 0, 1, idx);
		return rc != 0 ? rc : rte_lpm_add(lpm, 0x80000000u, 1, idx);
	}
	return rte_lpm_add(lpm, ip, p->depth, idx);
}

static int
add_v6(struct rte_lpm6 *lpm, const struct dpmon_prefix *p, uint32_t idx)
{
	uint8_t ip[16];

	memcpy(ip, p->addr.b, 16);
	if (p->depth == 0) {
		int rc = rte_lpm6_add(lpm, ip, 1, idx);
		ip[0] = 0x80;
		return rc != 0 ? rc : rte_lpm6_add(lpm, ip, 1, idx);
	}
	return rte_lpm6_add(lpm, ip, p->depth, idx);
}

static int
add_prefix(struct dpmon_classifier *c, const struct dpmon_prefix *p, uint32_t idx)
{
	return p->family == 4 ? add_v4(c->lpm4, p, idx) : add_v6(c->lpm6, p, idx);
}

int
dpmon_classifier_create_ignoring(struct dpmon_classifier *c, const char *tag,
				 const struct dpmon_subnet_conf *subnets, uint32_t n,
				 const struct dpmon_prefix *ignored, uint32_t n_ignored,
				 int socket_id)
{
	uint32_t n4 = 0, n6 = 0;
	char name[RTE_LPM6_NAMESIZE];
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->n_subnets = n;
	c->n_ignored = n_ignored;
	for (uint32_t i = 0; i < n + n_ignored; i++) {
		const struct dpmon_prefix *p = i < n ? &subnets[i].prefix : &ignored[i - n];

		if (p->family == 4)
			n4++;
		else
			n6++;
	}
	if (n4 > 0) {
		struct rte_lpm_config cfg = {.max_rules = n4 + 1,
					     .number_tbl8s =
						     tbl8_count(subnets, n, ignored, n_ignored, 4)};
		snprintf(name, sizeof(name), "dpmon4_%s", tag);
		c->lpm4 = rte_lpm_create(name, socket_id, &cfg);
		if (c->lpm4 == NULL)
			return -rte_errno;
	}
	if (n6 > 0) {
		struct rte_lpm6_config cfg = {
			.max_rules = n6 + 1,
			.number_tbl8s = tbl8_count(subnets, n, ignored, n_ignored, 6)};
		snprintf(name, sizeof(name), "dpmon6_%s", tag);
		c->lpm6 = rte_lpm6_create(name, socket_id, &cfg);
		if (c->lpm6 == NULL) {
			rc = -rte_errno;
			dpmon_classifier_free(c);
			return rc;
		}
	}
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = add_prefix(c, &subnets[i].prefix, i);
	for (uint32_t i = 0; i < n_ignored && rc == 0; i++)
		rc = add_prefix(c, &ignored[i], DPMON_IGNORED_SOURCE);
	if (rc != 0)
		dpmon_classifier_free(c);
	return rc;
}

int
dpmon_classifier_create(struct dpmon_classifier *c, const char *tag,
			const struct dpmon_subnet_conf *subnets, uint32_t n, int socket_id)
{
	return dpmon_classifier_create_ignoring(c, tag, subnets, n, NULL, 0, socket_id);
}

void
dpmon_classifier_free(struct dpmon_classifier *c)
{
	rte_lpm_free(c->lpm4);
	rte_lpm6_free(c->lpm6);
	c->lpm4 = NULL;
	c->lpm6 = NULL;
}

void
dpmon_classify_v4(const struct dpmon_classifier *c, const uint32_t *addrs, uint32_t *subnet,
		  unsigned n)
{
	unsigned i = 0;

	if (c->lpm4 == NULL) {
		for (; i < n; i++)
			subnet[i] = DPMON_NO_SUBNET;
		return;
	}
	for (; i + 4 <= n; i += 4) {
		xmm_t ip;

		memcpy(&ip, addrs + i, sizeof(ip)); /* unaligned-safe on every ISA */
		rte_lpm_lookupx4(c->lpm4, ip, subnet + i, DPMON_NO_SUBNET);
	}
	for (; i < n; i++) {
		if (rte_lpm_lookup(c->lpm4, addrs[i], &subnet[i]) != 0)
			subnet[i] = DPMON_NO_SUBNET;
	}
}

void
dpmon_classify_v6(const struct dpmon_classifier *c, uint8_t (*addrs)[16], uint32_t *subnet,
		  unsigned n)
{
	int32_t hop[n > 0 ? n : 1];

	if (c->lpm6 == NULL || n == 0) {
		for (unsigned i = 0; i < n; i++)
			subnet[i] = DPMON_NO_SUBNET;
		return;
	}
	rte_lpm6_lookup_bulk_func(c->lpm6, addrs, hop, n);
	for (unsigned i = 0; i < n; i++)
		subnet[i] = hop[i] < 0 ? DPMON_NO_SUBNET : (uint32_t)hop[i];
}
