/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_kernel.c — the Linux kernel pktgen parser of the profile
 * renderer (profile.h): a ".sh" script built on
 * pktgen-profiles/linux-pktgen/kpktgen.sh, whose device parameters are
 * `pg_set "PARAM VALUE"` lines, read into the one stream of the kernel's
 * device. The loader (profile.c) calls it line by line, then once to
 * finish; the model and the helpers are in profile_private.h.
 */
#include "numbers.h"
#include "profile_private.h"

#include <stdbool.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Kernel pktgen lines.
 * --------------------------------------------------------------------- */

void
dpmon_profile_kernel_defaults(struct k_conf *kc)
{
	kc->pkt_size = 60; /* ETH_ZLEN */
	kc->usrc_min = kc->usrc_max = 9;
	kc->udst_min = kc->udst_max = 9;
	memcpy(kc->dmac, default_dmac, 6);
	memcpy(kc->smac, default_smac, 6);
}

/* Exact lines of the kpktgen.sh skeleton that carry no packet parameter. */
static const char *const k_skeleton[] = {
	"set -eu",
	". \"$(dirname \"$0\")/kpktgen.sh\"",
	"pg_start \"$@\"",
	"pg_run",
};

static void
k_addr4(struct parse *ps, const char *key, const char *val, u128 *out, bool *set)
{
	unsigned fam;

	if (!parse_ip(val, out, &fam) || fam != 4) {
		bad(ps, "%s %s: not an IPv4 address", key, val);
		return;
	}
	*set = true;
	ps->kc.v4 = true;
}

static void
k_addr6(struct parse *ps, const char *key, const char *val, u128 *out, bool *set)
{
	unsigned fam;

	if (!parse_ip(val, out, &fam) || fam != 6) {
		bad(ps, "%s %s: not an IPv6 address", key, val);
		return;
	}
	*set = true;
	ps->kc.v6 = true;
}

static void
k_flag(struct parse *ps, const char *f)
{
	struct k_conf *kc = &ps->kc;

	if (strcmp(f, "IPSRC_RND") == 0)
		kc->ipsrc_rnd = true;
	else if (strcmp(f, "IPDST_RND") == 0)
		kc->ipdst_rnd = true;
	else if (strcmp(f, "UDPSRC_RND") == 0)
		kc->usrc_rnd = true;
	else if (strcmp(f, "UDPDST_RND") == 0)
		kc->udst_rnd = true;
	else if (strcmp(f, "UDPCSUM") == 0)
		ps->p->udp_csum = true;
	else if (strcmp(f, "NO_TIMESTAMP") == 0)
		ps->p->no_timestamp = true;
	else if (strcmp(f, "QUEUE_MAP_CPU") == 0)
		; /* which TX queue: no effect on the packets */
	else
		bad(ps, "flag %s: not a flag dpmon-gen renders", f);
}

/* "imix_weights SIZE,WEIGHT ..." */
static void
k_imix(struct parse *ps, char **a, int n)
{
	struct dpmon_profile *p = ps->p;

	if (n < 1 || n > MAX_IMIX) {
		bad(ps, "imix_weights: 1..%d SIZE,WEIGHT pairs", MAX_IMIX);
		return;
	}
	for (int i = 0; i < n; i++) {
		char *comma = strchr(a[i], ',');
		uint32_t size, w;

		if (comma == NULL) {
			bad(ps, "imix_weights: '%s' is not SIZE,WEIGHT", a[i]);
			return;
		}
		*comma = '\0';
		if (gen_parse_u32(a[i], MAX_FRAME, &size) != 0 ||
		    gen_parse_u32(comma + 1, 1000000, &w) != 0 || w == 0) {
			bad(ps, "imix_weights: bad size or weight '%s,%s'", a[i], comma + 1);
			return;
		}
		p->imix_size[i] = size;
		ps->kc.imix_w[i] = w;
	}
	p->n_imix = (uint32_t)n;
}

/* A numeric kernel parameter; true when @p key is one. */
static bool
k_number(struct parse *ps, const char *key, const char *val)
{
	static const struct {
		const char *key;
		uint32_t max;
	} t[] = {
		{"count", UINT32_MAX},  {"pkt_size", MAX_FRAME}, {"clone_skb", UINT32_MAX},
		{"burst", 1024},        {"delay", UINT32_MAX},   {"ratep", UINT32_MAX},
		{"rate", UINT32_MAX},   {"udp_src_min", 65535},  {"udp_src_max", 65535},
		{"udp_dst_min", 65535}, {"udp_dst_max", 65535},  {"vlan_id", 4095},
	};
	struct k_conf *kc = &ps->kc;
	uint32_t *dst[] = {NULL,          &kc->pkt_size, &kc->clone_skb, &kc->burst,
			   NULL,          NULL,          NULL,           &kc->usrc_min,
			   &kc->usrc_max, &kc->udst_min, &kc->udst_max,  &kc->vlan_id};
	uint32_t v;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(key, t[i].key) != 0)
			continue;
		if (gen_parse_u32(val, t[i].max, &v) != 0) {
			bad(ps, "%s %s: expected a number 0..%u", key, val, t[i].max);
			return true;
		}
		if (i == 0)
			ps->p->count = v;
		else if (dst[i])
			*dst[i] = v;
		if (dst[i] == &kc->vlan_id)
			kc->tagged = true;
		return true;
	}
	return false;
}

/* One kernel pktgen device parameter: "KEY VALUE..." as written to /proc/net/pktgen/DEV. */
static void
k_param(struct parse *ps, char **a, int n)
{
	struct k_conf *kc = &ps->kc;
	const char *k = a[0];

	if (strcmp(k, "imix_weights") == 0) {
		k_imix(ps, a + 1, n - 1);
		return;
	}
	if (n != 2) {
		bad(ps, "pg_set \"%s ...\": expected one value", k);
		return;
	}
	if (k_number(ps, k, a[1]))
		return;
	if (strcmp(k, "dst") == 0 || strcmp(k, "dst_min") == 0)
		k_addr4(ps, k, a[1], &kc->dst_min, &kc->dst_set);
	if (strcmp(k, "dst") == 0 || strcmp(k, "dst_max") == 0)
		k_addr4(ps, k, a[1], &kc->dst_max, &kc->dst_set);
	else if (strcmp(k, "src_min") == 0)
		k_addr4(ps, k, a[1], &kc->src_min, &kc->src_set);
	else if (strcmp(k, "src_max") == 0)
		k_addr4(ps, k, a[1], &kc->src_max, &kc->src_set);
	else if (strcmp(k, "dst6") == 0)
		k_addr6(ps, k, a[1], &kc->dst6, &kc->dst6_set);
	else if (strcmp(k, "dst6_min") == 0)
		k_addr6(ps, k, a[1], &kc->dst6_min, &kc->dst6_set);
	else if (strcmp(k, "dst6_max") == 0)
		k_addr6(ps, k, a[1], &kc->dst6_max, &kc->dst6_set);
	else if (strcmp(k, "src6") == 0)
		k_addr6(ps, k, a[1], &kc->src6, &kc->src6_set);
	else if (strcmp(k, "dst_mac") == 0 || strcmp(k, "src_mac") == 0) {
		if (!parse_mac(a[1], k[0] == 'd' ? kc->dmac : kc->smac))
			bad(ps, "%s %s: not a MAC address", k, a[1]);
	} else if (strcmp(k, "flag") == 0)
		k_flag(ps, a[1]);
	else if (strcmp(k, "dst_min") != 0)
		bad(ps, "pg_set \"%s\": not a parameter dpmon-gen renders", k);
}

/* A line of a kernel pktgen script: skeleton, pg_set "...", comment or blank. */
void
dpmon_profile_kernel_line(struct parse *ps, char *line)
{
	char *tv[MAX_TOKENS];
	size_t len = strlen(line);
	int tc;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	for (size_t i = 0; i < sizeof(k_skeleton) / sizeof(k_skeleton[0]); i++)
		if (strcmp(line, k_skeleton[i]) == 0)
			return;
	if (strncmp(line, "pg_set \"", 8) != 0 || len < 10 || line[len - 1] != '"' ||
	    memchr(line + 8, '"', len - 9) != NULL) {
		bad(ps, "not a line dpmon-gen understands (expected pg_set \"PARAM VALUE\")");
		return;
	}
	line[len - 1] = '\0';
	tc = tokenize(line + 8, tv);
	if (tc <= 0) {
		bad(ps, "pg_set: empty or too long parameter");
		return;
	}
	k_param(ps, tv, tc);
}

/* ------------------------------------------------------------------------
 * Kernel: build the stream.
 * --------------------------------------------------------------------- */

static void
k_field_addr(struct field *f, u128 min, u128 max, bool rnd)
{
	f->start = f->cur = f->min = min;
	f->max = max;
	f->mode = min < max ? (rnd ? F_KRAND : F_KSEQ) : F_FIXED;
}

static void
k_field_port(struct field *f, uint32_t min, uint32_t max, bool rnd)
{
	f->start = f->cur = f->min = min;
	f->max = max;
	f->mode = min < max ? (rnd ? F_KRAND : F_KSEQ_PORT) : F_FIXED;
}

/* The kernel's imix_distribution table (net/core/pktgen.c fill_imix_distribution). */
static void
k_imix_table(struct dpmon_profile *p, const uint32_t *w)
{
	uint64_t total = 0, cum = 0;
	uint32_t cumul[MAX_IMIX];
	uint32_t j = 0;

	for (uint32_t i = 0; i < p->n_imix; i++)
		total += w[i];
	for (uint32_t i = 0; i + 1 < p->n_imix; i++) {
		cum += (uint64_t)w[i] * IMIX_PRECISION / total;
		cumul[i] = (uint32_t)cum;
	}
	cumul[p->n_imix - 1] = IMIX_PRECISION;
	for (uint32_t i = 0; i < IMIX_PRECISION; i++) {
		while (j + 1 < p->n_imix && i >= cumul[j])
			j++;
		p->imix_dist[i] = (uint8_t)j;
	}
}

void
dpmon_profile_kernel_finish(struct parse *ps)
{
	struct k_conf *kc = &ps->kc;
	struct dpmon_profile *p = ps->p;
	struct stream *s = &p->streams[0];

	ps->line = 0;
	p->n_streams = 1;
	p->repeat = (kc->clone_skb ? kc->clone_skb : 1) * (kc->burst ? kc->burst : 1);
	s->proto = 17;
	s->ttl = 32;
	s->tagged = kc->tagged;
	s->vlan.start = kc->vlan_id;
	memcpy(s->dmac, kc->dmac, 6);
	memcpy(s->smac, kc->smac, 6);
	s->size.start = kc->pkt_size;
	k_field_port(&s->sport, kc->usrc_min, kc->usrc_max, kc->usrc_rnd);
	k_field_port(&s->dport, kc->udst_min, kc->udst_max, kc->udst_rnd);
	if (kc->v4 && kc->v6) {
		bad(ps, "IPv4 (dst, src_min, ...) and IPv6 (dst6, src6, ...) parameters mixed");
		return;
	}
	if (kc->v6) {
		s->family = 6;
		if (!kc->dst6_set || !kc->src6_set)
			bad(ps, "IPv6: dst6 (or dst6_min/dst6_max) and src6 are needed");
		s->src.start = s->src.cur = kc->src6;
		s->dst.start = s->dst.cur = kc->dst6;
		if (kc->dst6_min) { /* the kernel randomises only when dst6_min is set */
			s->dst.mode = F_KMASK;
			s->dst.min = kc->dst6_min;
			s->dst.max = kc->dst6_max;
		}
		return;
	}
	s->family = 4;
	if (!kc->dst_set || !kc->src_set)
		bad(ps, "IPv4: dst (or dst_min/dst_max) and src_min/src_max are needed (the kernel "
			"would use the device's own address, which dpmon-gen cannot know)");
	k_field_addr(&s->src, kc->src_min, kc->src_max ? kc->src_max : kc->src_min, kc->ipsrc_rnd);
	k_field_addr(&s->dst, kc->dst_min, kc->dst_max ? kc->dst_max : kc->dst_min, kc->ipdst_rnd);
	if (p->n_imix)
		k_imix_table(p, kc->imix_w);
}
