/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mixes.c — the benchmark's traffic mixes (see mixes.h).
 *
 * Subnets are numbered, not listed: IPv4 subnet i of length L starts at
 * 10.0.0.0 + i * 2^(32-L); IPv6 subnet i is 2001:db8:0:i::/64. Neither
 * overlaps dpmon-gen's external peer pools.
 */
#include "mixes.h"

#include <errno.h>
#include <string.h>

const struct bench_mix bench_mixes[] = {
	{"udp64-254h", "64 B UDP, 254 hosts in one /24", 1, 24, 0, 254, 65536, "udp=100", "64"},
	{"64k-hosts", "64 B, 65 536 hosts in 256 subnets", 256, 23, 0, 256, 131072,
	 "tcp=40,udp=50,icmp=10", "64"},
	{"1m-hosts", "64 B, 1 048 576 hosts in 256 subnets", 256, 19, 0, 4096, 1048576,
	 "tcp=40,udp=50,icmp=10", "64"},
	{"v4v6", "64 B (62-74 B IPv6), 50/50 IPv4/IPv6, 65 536 hosts", 128, 23, 128, 256, 131072,
	 "tcp=40,udp=50,icmp=10", "64"},
	{"imix", "IMIX 64/594/1518 7:4:1, 65 536 hosts", 256, 23, 0, 256, 131072,
	 "tcp=40,udp=50,icmp=10", "imix"},
};
const unsigned bench_n_mixes = sizeof(bench_mixes) / sizeof(bench_mixes[0]);

const struct bench_mix *
bench_mix_find(const char *name)
{
	for (unsigned i = 0; i < bench_n_mixes; i++)
		if (strcmp(bench_mixes[i].name, name) == 0)
			return &bench_mixes[i];
	return NULL;
}

uint64_t
bench_mix_hosts(const struct bench_mix *mx)
{
	return (uint64_t)(mx->n_v4 + mx->n_v6) * mx->hosts;
}

static void
v4_subnet(const struct bench_mix *mx, uint32_t i, char *buf, size_t len)
{
	uint32_t a = (10u << 24) + i * (1u << (32 - mx->v4_len));

	snprintf(buf, len, "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
		 mx->v4_len);
}

static void
v6_subnet(uint32_t i, char *buf, size_t len)
{
	snprintf(buf, len, "2001:db8:0:%x::/64", i);
}

int
bench_mix_opts(const struct bench_mix *mx, const char *output, struct dpmon_gen_opts *o)
{
	char buf[64];
	int rc = 0;

	dpmon_gen_defaults(o);
	o->output = output;
	o->hosts = mx->hosts;
	o->packets = mx->packets;
	o->seed = 1;
	for (uint32_t i = 0; i < mx->n_v4 && rc == 0; i++) {
		v4_subnet(mx, i, buf, sizeof(buf));
		rc = dpmon_gen_add_subnet(o, buf, NULL);
	}
	for (uint32_t i = 0; i < mx->n_v6 && rc == 0; i++) {
		v6_subnet(i, buf, sizeof(buf));
		rc = dpmon_gen_add_subnet(o, buf, NULL);
	}
	if (rc == 0)
		rc = dpmon_gen_parse_mix(o, mx->proto, NULL);
	if (rc == 0)
		rc = dpmon_gen_parse_sizes(o, mx->sizes, NULL);
	return rc;
}

void
bench_mix_print_subnets(const struct bench_mix *mx, FILE *f)
{
	char buf[64];

	fputc('[', f);
	for (uint32_t i = 0; i < mx->n_v4 + mx->n_v6; i++) {
		if (i < mx->n_v4)
			v4_subnet(mx, i, buf, sizeof(buf));
		else
			v6_subnet(i - mx->n_v4, buf, sizeof(buf));
		fprintf(f, "%s{\"prefix\": \"%s\"}", i ? ", " : "", buf);
	}
	fputc(']', f);
}
