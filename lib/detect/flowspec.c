/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowspec.c — BGP FlowSpec rules (flowspec.h): the rule choice from an
 * attack's sampled packets, the check of what routers accept, the match
 * of a rule against a packet, and ExaBGP 4's text for a rule.
 */
#include "flowspec.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TCP flags a rule's flags value matches exactly (FIN, SYN, RST, PSH, ACK, URG). */
#define FLAGS_EXACT   0x3f
/* Packet-length gap, bytes, that still joins a packet to a length cluster. */
#define LENGTH_GAP    8
/* A gap of this many times the mean spacing of a cluster's lengths ends it. */
#define LENGTH_SPREAD 8
/* Bytes a length range reaches past the sample's lengths, each way. */
#define LENGTH_MARGIN 32
/*
 * A sharp cut: the values left out hold each at most 1/SHARP_RATIO of the
 * least of the values kept (a scattered remainder, not a second cluster).
 */
#define SHARP_RATIO   10
/* Widest length cluster, bytes, kept when it leaves nothing out. */
#define LENGTH_SPAN   512

/* ------------------------------------------------------------------------
 * Match and check.
 * --------------------------------------------------------------------- */

static bool
in16(const uint16_t *v, unsigned n, uint16_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool
in8(const uint8_t *v, unsigned n, uint8_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool
dpmon_fs_rule_match(const struct dpmon_fs_rule *r, const struct dpmon_fp_pkt *pkt)
{
	if (r->src_len != 0) {
		struct dpmon_addr a = pkt->src;

		dpmon_addr_mask(&a, dpmon_mapped_bits(r->family, r->src_len));
		if (!dpmon_addr_eq(&a, &r->src))
			return false;
	}
	if (r->has_proto && pkt->ip_proto != r->proto)
		return false;
	if (r->frag == DPMON_FS_FRAG_IS && pkt->frag == DPMON_FP_FRAG_NONE)
		return false;
	if ((r->n_sport || r->n_dport) && !pkt->ports)
		return false;
	if (r->n_sport && !in16(r->sport, r->n_sport, pkt->sport))
		return false;
	if (r->n_dport && !in16(r->dport, r->n_dport, pkt->dport))
		return false;
	if (r->n_flags && (!dpmon_fp_has(pkt, DPMON_FP_FLAGS) ||
			   !in8(r->flags, r->n_flags, pkt->tcp_flags & FLAGS_EXACT)))
		return false;
	if ((r->n_icmp_type || r->has_icmp_code) && !pkt->icmp)
		return false;
	if (r->n_icmp_type && !in8(r->icmp_type, r->n_icmp_type, pkt->icmp_type))
		return false;
	if (r->has_icmp_code && pkt->icmp_code != r->icmp_code)
		return false;
	if (r->has_len && (pkt->ip_len < r->len_lo || pkt->ip_len > r->len_hi))
		return false;
	return true;
}

/* Does @p a have host bits set past @p len bits of @p family? */
static bool
host_bits_set(const struct dpmon_addr *a, unsigned family, unsigned len)
{
	struct dpmon_addr m = *a;

	dpmon_addr_mask(&m, dpmon_mapped_bits(family, len));
	return !dpmon_addr_eq(&m, a);
}

int
dpmon_fs_rule_check(const struct dpmon_fs_rule *r, const char **why)
{
	const char *dummy = NULL;
	unsigned bits;
	bool ports = r->n_sport || r->n_dport;

	why = why != NULL ? why : &dummy;
	if (r->family != 4 && r->family != 6) {
		*why = "no destination";
		return -EINVAL;
	}
	bits = dpmon_family_bits(r->family);
	if (r->dst_len > bits || dpmon_addr_is_v4(&r->dst) != (r->family == 4) ||
	    host_bits_set(&r->dst, r->family, r->dst_len)) {
		*why = "bad destination prefix";
		return -EINVAL;
	}
	if (r->src_len > bits || (r->src_len && (dpmon_addr_is_v4(&r->src) != (r->family == 4) ||
						 host_bits_set(&r->src, r->family, r->src_len)))) {
		*why = "bad source prefix (its family must be the destination's)";
		return -EINVAL;
	}
	if (ports &&
	    !(r->has_proto && (r->proto == DPMON_IPPROTO_TCP || r->proto == DPMON_IPPROTO_UDP))) {
		*why = "ports need protocol tcp or udp";
		return -EINVAL;
	}
	if (ports && r->frag != DPMON_FS_FRAG_ANY) {
		*why = "ports with a fragment match (a later fragment has no ports)";
		return -EINVAL;
	}
	if (r->n_sport > DPMON_FS_VALUES || r->n_dport > DPMON_FS_VALUES ||
	    r->n_flags > DPMON_FS_VALUES || r->n_icmp_type > DPMON_FS_VALUES) {
		*why = "too many values in a component";
		return -EINVAL;
	}
	if (r->n_flags && !(r->has_proto && r->proto == DPMON_IPPROTO_TCP)) {
		*why = "tcp-flags need protocol tcp";
		return -EINVAL;
	}
	if ((r->n_icmp_type || r->has_icmp_code) &&
	    !(r->has_proto &&
	      r->proto == (r->family == 4 ? DPMON_IPPROTO_ICMP : DPMON_IPPROTO_ICMPV6))) {
		*why = "icmp-type and icmp-code need protocol icmp (IPv6: icmpv6, 58)";
		return -EINVAL;
	}
	if (r->has_len && r->len_lo > r->len_hi) {
		*why = "packet-length range with its low end above its high end";
		return -EINVAL;
	}
	return dpmon_fs_action_check(&r->action, why);
}

bool
dpmon_fs_rule_same_match(const struct dpmon_fs_rule *r, const struct dpmon_fs_rule *o)
{
	struct dpmon_fs_rule a = *r, b = *o;

	memset(&a.action, 0, sizeof(a.action));
	memset(&b.action, 0, sizeof(b.action));
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* ------------------------------------------------------------------------
 * ExaBGP's text.
 * --------------------------------------------------------------------- */

/* A bounded text buffer: appends stop, and @c full is set, at its end. */
struct text {
	char *b;
	size_t len, at;
	bool full;
};

static void __attribute__((format(printf, 2, 3))) put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (t->full)
		return;
	va_start(ap, fmt);
	w = vsnprintf(t->b + t->at, t->len - t->at, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= t->len - t->at) {
		t->full = true;
		return;
	}
	t->at += (size_t)w;
}

/* "name =V;" or "name [ =V1 =V2 ];" */
static void
put_values(struct text *t, const char *name, const uint16_t *v, unsigned n)
{
	put(t, " %s%s", name, n > 1 ? " [" : "");
	for (unsigned i = 0; i < n; i++)
		put(t, " =%u", v[i]);
	put(t, "%s;", n > 1 ? " ]" : "");
}

/* TCP flags value @p v as an exact match: "=SET&!CLEAR" (RFC 8955 section 4.2.2.9). */
static void
put_flags(struct text *t, uint8_t v)
{
	char set[64], clear[64];

	dpmon_fp_flags_text(v & FLAGS_EXACT, '+', set, sizeof(set));
	dpmon_fp_flags_text((uint8_t)(~v & FLAGS_EXACT), '+', clear, sizeof(clear));
	if (set[0] != '\0' && clear[0] != '\0')
		put(t, " =%s&!%s", set, clear);
	else if (set[0] != '\0')
		put(t, " =%s", set);
	else
		put(t, " !%s", clear);
}

static void
put_match(struct text *t, const struct dpmon_fs_rule *r)
{
	char a[DPMON_ADDR_STRLEN];
	uint16_t v[DPMON_FS_VALUES];

	put(t, "destination %s/%u;", dpmon_addr_format(&r->dst, a, sizeof(a)), r->dst_len);
	if (r->src_len)
		put(t, " source %s/%u;", dpmon_addr_format(&r->src, a, sizeof(a)), r->src_len);
	if (r->has_proto) {
		const char *kw = r->family == 4 ? "protocol" : "next-header";

		if (r->proto == DPMON_IPPROTO_TCP || r->proto == DPMON_IPPROTO_UDP)
			put(t, " %s %s;", kw, r->proto == DPMON_IPPROTO_TCP ? "tcp" : "udp");
		else
			put(t, " %s =%u;", kw, r->proto);
	}
	if (r->n_dport)
		put_values(t, "destination-port", r->dport, r->n_dport);
	if (r->n_sport)
		put_values(t, "source-port", r->sport, r->n_sport);
	if (r->n_icmp_type) {
		for (unsigned i = 0; i < r->n_icmp_type; i++)
			v[i] = r->icmp_type[i];
		put_values(t, "icmp-type", v, r->n_icmp_type);
	}
	if (r->has_icmp_code)
		put(t, " icmp-code =%u;", r->icmp_code);
	if (r->n_flags) {
		put(t, " tcp-flags [");
		for (unsigned i = 0; i < r->n_flags; i++)
			put_flags(t, r->flags[i]);
		put(t, " ];");
	}
	if (r->has_len) {
		if (r->len_lo == r->len_hi)
			put(t, " packet-length =%u;", r->len_lo);
		else if (r->len_lo == 0)
			put(t, " packet-length <=%u;", r->len_hi);
		else if (r->len_hi == UINT16_MAX)
			put(t, " packet-length >=%u;", r->len_lo);
		else
			put(t, " packet-length >=%u&<=%u;", r->len_lo, r->len_hi);
	}
	if (r->frag == DPMON_FS_FRAG_IS)
		put(t, " fragment [ is-fragment ];");
}

int
dpmon_fs_rule_match_text(const struct dpmon_fs_rule *r, char *buf, size_t len)
{
	struct text t = {buf, len, 0, false};

	buf[0] = '\0';
	put_match(&t, r);
	return t.full ? -ENOSPC : (int)t.at;
}

int
dpmon_fs_rule_exabgp(const struct dpmon_fs_rule *r, bool announce, char *buf, size_t len)
{
	struct text t = {buf, len, 0, false};
	char act[64];

	put(&t, "%s flow route { match { ", announce ? "announce" : "withdraw");
	put_match(&t, r);
	put(&t, " }");
	if (announce) {
		dpmon_fs_action_text(&r->action, act, sizeof(act));
		put(&t, " then { %s; }", act);
	}
	put(&t, " }\n");
	return t.full ? -ENOSPC : (int)t.at;
}

/* ------------------------------------------------------------------------
 * The rule choice.
 * --------------------------------------------------------------------- */

/* What the choice may still leave out of the rules, in sample packets. */
struct allowance {
	double legit;     /* packets presumed legitimate, not yet left out */
	double missed;    /* attack packets the coverage may still miss */
	uint32_t *attack; /* the estimated attack packets, lowered by a sharp cut */
};

/* Leave @p k more packets out: the presumed legitimate ones first. */
static void
allowance_take(struct allowance *al, double k)
{
	double l = k < al->legit ? k : al->legit;

	al->legit -= l;
	al->missed -= k - l;
	if (al->missed < 0)
		al->missed = 0;
}

/* One group's rule and the sample packets it matches so far. */
struct branch {
	struct dpmon_fs_rule r;
	bool fragments; /* the group of fragments: no ports, flags or ICMP type */
	const struct dpmon_fp_pkt **m;
	uint32_t n;
};

/* Keep the packets of @p b its rule (now narrower) still matches. */
static void
branch_refilter(struct branch *b)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < b->n; i++)
		if (dpmon_fs_rule_match(&b->r, b->m[i]))
			b->m[k++] = b->m[i];
	b->n = k;
}

/* Most values a component of field @p f may list. */
static uint32_t
field_limit(enum dpmon_fp_field f)
{
	return f == DPMON_FP_SOURCE ? 1 : DPMON_FS_VALUES;
}

/*
 * The values of field @p f that most of @p b's packets share: the top
 * values until they hold @p keep_min packets, then the next ones while
 * each holds at least half of the last one taken (the rest of the same
 * cluster). Failing that, a sharp cut (@p *sharp set): the top cluster
 * holds at least half of the packets and every value left out at most
 * 1/SHARP_RATIO of its least one. @return how many (0: not concentrated
 * enough), in @p out.
 */
static uint32_t
cluster_values(const struct branch *b, enum dpmon_fp_field f, double keep_min,
	       struct dpmon_fp_value *out, int *err, bool *sharp)
{
	uint32_t limit = field_limit(f), k = 0, min_each = b->n >= 10 ? 2 : 1;
	struct dpmon_fp_value *all = calloc(b->n ? b->n : 1, sizeof(*all));
	int n = all != NULL ? dpmon_fp_values(b->m, b->n, f, all, b->n) : -ENOMEM;
	double cum = 0;

	if (n < 0) {
		free(all);
		*err = n;
		return 0;
	}
	while ((int)k < n && cum < keep_min && k <= limit)
		cum += all[k++].packets;
	while ((int)k < n && k <= limit && all[k].packets * 2 >= all[k - 1].packets)
		cum += all[k++].packets;
	if (cum < keep_min || k > limit || k == 0 || all[k - 1].packets < min_each)
		k = 0;
	if (k == 0 && n > 0) {
		/* A sharp cut: a cluster holding most packets, the rest scattered. */
		for (cum = all[0].packets, k = 1;
		     (int)k < n && k < limit && all[k].packets * 2 >= all[k - 1].packets; k++)
			cum += all[k].packets;
		*sharp = (int)k < n && 2 * cum >= b->n && all[k - 1].packets >= min_each &&
			 (uint64_t)all[k].packets * SHARP_RATIO <= all[k - 1].packets;
		if (!*sharp)
			k = 0;
	}
	memcpy(out, all, sizeof(*out) * k);
	free(all);
	return k;
}

/* Narrow @p b by field @p f (not the length) when its packets concentrate on few values. */
static int
narrow_discrete(struct branch *b, enum dpmon_fp_field f, struct allowance *al)
{
	struct dpmon_fp_value v[DPMON_FS_VALUES + 1];
	double keep_min = (double)b->n - (al->legit + al->missed);
	int err = 0;
	bool sharp = false;
	uint32_t k = cluster_values(b, f, keep_min, v, &err, &sharp), before = b->n;
	struct dpmon_fs_rule *r = &b->r;

	if (k == 0)
		return err;
	switch (f) {
	case DPMON_FP_SPORT:
		for (uint32_t i = 0; i < k; i++)
			r->sport[i] = (uint16_t)v[i].v;
		r->n_sport = (uint8_t)k;
		break;
	case DPMON_FP_DPORT:
		for (uint32_t i = 0; i < k; i++)
			r->dport[i] = (uint16_t)v[i].v;
		r->n_dport = (uint8_t)k;
		break;
	case DPMON_FP_FLAGS:
		/* Exact on FIN..URG: values differing only in ECE/CWR merge. */
		r->n_flags = 0;
		for (uint32_t i = 0; i < k; i++)
			if (!in8(r->flags, r->n_flags, (uint8_t)(v[i].v & FLAGS_EXACT)))
				r->flags[r->n_flags++] = (uint8_t)(v[i].v & FLAGS_EXACT);
		break;
	case DPMON_FP_ICMP:
		r->n_icmp_type = 0;
		r->has_icmp_code = 1;
		r->icmp_code = (uint8_t)(v[0].v & 0xff);
		for (uint32_t i = 0; i < k; i++) {
			if (!in8(r->icmp_type, r->n_icmp_type, (uint8_t)(v[i].v >> 8)))
				r->icmp_type[r->n_icmp_type++] = (uint8_t)(v[i].v >> 8);
			if ((v[i].v & 0xff) != r->icmp_code)
				r->has_icmp_code = 0;
		}
		break;
	case DPMON_FP_SOURCE:
		r->src = v[0].addr;
		r->src_len = (uint8_t)dpmon_family_bits(r->family);
		break;
	default:
		return 0;
	}
	branch_refilter(b);
	if (sharp && before - b->n > al->legit) {
		/* Evidence that the attack is smaller than estimated: what the cut
		 * leaves out beyond the packets presumed legitimate was legitimate too. */
		double over = before - b->n - al->legit;

		*al->attack = *al->attack > over ? *al->attack - (uint32_t)over : 1;
		al->legit += over;
	}
	allowance_take(al, before - b->n);
	return 0;
}

static int
len_cmp(const void *x, const void *y)
{
	uint16_t a = *(const uint16_t *)x, b = *(const uint16_t *)y;

	return (a > b) - (a < b);
}

/*
 * Narrow @p b to a packet-length range when its packets' lengths form one
 * cluster: the shortest window of lengths holding what must be kept, grown
 * while the next length is within LENGTH_SPREAD times the window's mean
 * spacing of lengths (at least LENGTH_GAP bytes): a flood of random
 * lengths is one cluster, not cut at a chance gap. The range is that
 * window widened by LENGTH_MARGIN bytes each way (lengths the sample
 * missed), but never past halfway to a length left out. A window that
 * leaves nothing out and spans more than LENGTH_SPAN bytes is no cluster.
 */
static int
narrow_length(struct branch *b, struct allowance *al)
{
	double keep_min = (double)b->n - (al->legit + al->missed);
	uint32_t n = b->n, need, best = 0, i, j, before = b->n, lo, hi, gap;
	uint16_t *l;

	if (n == 0)
		return 0;
	need = keep_min <= 1 ? 1 : keep_min >= n ? n : (uint32_t)ceil(keep_min);
	l = malloc(sizeof(*l) * n);
	if (l == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		l[i] = b->m[i]->ip_len;
	qsort(l, n, sizeof(*l), len_cmp);
	for (i = 1; i + need <= n; i++)
		if (l[i + need - 1] - l[i] < l[best + need - 1] - l[best])
			best = i;
	i = best;
	j = best + need - 1;
	/* A gap joins when it is short for the window's own spacing of lengths. */
	gap = j > i ? LENGTH_SPREAD * (l[j] - l[i]) / (j - i) : 0;
	gap = gap > LENGTH_GAP ? gap : LENGTH_GAP;
	while (i > 0 && (uint32_t)(l[i] - l[i - 1]) <= gap)
		i--;
	while (j + 1 < n && (uint32_t)(l[j + 1] - l[j]) <= gap)
		j++;
	if (i > 0 || j + 1 < n || l[j] - l[i] <= LENGTH_SPAN) {
		lo = l[i] > LENGTH_MARGIN ? l[i] - LENGTH_MARGIN : 0;
		hi = l[j] + LENGTH_MARGIN < UINT16_MAX ? l[j] + LENGTH_MARGIN : UINT16_MAX;
		if (i > 0 && lo < (l[i - 1] + l[i] + 1u) / 2)
			lo = (l[i - 1] + l[i] + 1u) / 2;
		if (j + 1 < n && hi > (l[j] + l[j + 1]) / 2u)
			hi = (l[j] + l[j + 1]) / 2u;
		b->r.has_len = 1;
		b->r.len_lo = (uint16_t)lo;
		b->r.len_hi = (uint16_t)hi;
		branch_refilter(b);
		allowance_take(al, before - b->n);
	}
	free(l);
	return 0;
}

/* The order in which a group's rule is narrowed, by protocol. */
static unsigned
narrow_order(const struct branch *b, enum dpmon_fp_field *order)
{
	const struct dpmon_fs_rule *r = &b->r;
	unsigned k = 0;

	if (!b->fragments && r->proto == DPMON_IPPROTO_TCP) {
		order[k++] = DPMON_FP_FLAGS;
		order[k++] = DPMON_FP_DPORT;
		order[k++] = DPMON_FP_SPORT;
	} else if (!b->fragments && r->proto == DPMON_IPPROTO_UDP) {
		order[k++] = DPMON_FP_SPORT;
		order[k++] = DPMON_FP_DPORT;
	} else if (!b->fragments &&
		   r->proto == (r->family == 4 ? DPMON_IPPROTO_ICMP : DPMON_IPPROTO_ICMPV6)) {
		order[k++] = DPMON_FP_ICMP;
	}
	order[k++] = DPMON_FP_LENGTH;
	order[k++] = DPMON_FP_SOURCE;
	return k;
}

/* The switch (enum dpmon_fs_component) of the component made of field @p f. */
static uint32_t
component_of(enum dpmon_fp_field f)
{
	switch (f) {
	case DPMON_FP_SPORT:
		return DPMON_FS_C_SOURCE_PORT;
	case DPMON_FP_DPORT:
		return DPMON_FS_C_DESTINATION_PORT;
	case DPMON_FP_LENGTH:
		return DPMON_FS_C_PACKET_LENGTH;
	case DPMON_FP_FLAGS:
		return DPMON_FS_C_TCP_FLAGS;
	case DPMON_FP_FRAG:
		return DPMON_FS_C_FRAGMENT;
	case DPMON_FP_ICMP:
		return DPMON_FS_C_ICMP;
	case DPMON_FP_SOURCE:
		return DPMON_FS_C_SOURCE_PREFIX;
	default:
		return 0;
	}
}

static int
branch_narrow(struct branch *b, uint32_t components, struct allowance *al)
{
	enum dpmon_fp_field order[8];
	unsigned k = narrow_order(b, order);
	int err = 0;

	for (unsigned i = 0; i < k && err == 0; i++) {
		if ((components & component_of(order[i])) == 0)
			continue;
		err = order[i] == DPMON_FP_LENGTH ? narrow_length(b, al)
						  : narrow_discrete(b, order[i], al);
	}
	return err;
}

/* A group of the sample: one protocol, fragments or not. */
struct group {
	uint8_t proto;
	uint8_t frag;
	uint32_t packets;
};

static int
group_cmp(const void *x, const void *y)
{
	const struct group *a = x, *b = y;

	if (a->packets != b->packets)
		return a->packets < b->packets ? 1 : -1;
	return (a->proto * 2 + a->frag) - (b->proto * 2 + b->frag);
}

static int __attribute__((format(printf, 2, 3)))
no_rule(struct dpmon_fs_choice *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	out->n_rules = 0;
	return 0;
}

/* Sort @p n packets into groups, largest first. @return how many groups. */
static uint32_t
make_groups(const struct dpmon_fp_pkt *pkts, uint32_t n, struct group *g)
{
	uint32_t count[512] = {0}, k = 0;

	for (uint32_t i = 0; i < n; i++)
		count[pkts[i].ip_proto * 2 + (pkts[i].frag != DPMON_FP_FRAG_NONE)]++;
	for (unsigned c = 0; c < 512; c++)
		if (count[c] != 0)
			g[k++] = (struct group){(uint8_t)(c / 2), (uint8_t)(c % 2), count[c]};
	qsort(g, k, sizeof(*g), group_cmp);
	return k;
}

/* The rule of group @p g before narrowing: destination, protocol, fragment. */
static void
group_rule(const struct group *g, const struct dpmon_fs_params *p, struct dpmon_fs_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->family = p->family;
	r->dst = p->dst;
	r->dst_len = p->dst_len;
	r->action = p->action;
	r->has_proto = 1;
	r->proto = g->proto;
	if (g->frag && (p->components & DPMON_FS_C_FRAGMENT))
		r->frag = DPMON_FS_FRAG_IS;
}

/* Count what the chosen rules match, alone and together, and their coverage. */
static void
tally(const struct dpmon_fp_pkt *pkts, uint32_t n, struct dpmon_fs_choice *out)
{
	out->matched_total = 0;
	memset(out->matched, 0, sizeof(out->matched));
	for (uint32_t i = 0; i < n; i++) {
		bool any = false;

		for (uint32_t r = 0; r < out->n_rules; r++)
			if (dpmon_fs_rule_match(&out->rules[r], &pkts[i])) {
				out->matched[r]++;
				any = true;
			}
		out->matched_total += any;
	}
	out->coverage = out->matched_total >= out->attack_packets
				? 1.0
				: (double)out->matched_total / out->attack_packets;
}

int
dpmon_fs_choose(const struct dpmon_fp_pkt *pkts, uint32_t n, const struct dpmon_fs_params *p,
		struct dpmon_fs_choice *out)
{
	struct group g[512];
	struct branch b = {0};
	struct allowance al;
	uint32_t k, take = 0, sum = 0, need;
	const char *why;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0 || !(p->attack_share > 0 && p->attack_share <= 1) ||
	    !(p->min_coverage > 0 && p->min_coverage <= 1) || p->max_rules == 0 ||
	    p->max_rules > DPMON_FS_MAX_RULES || (p->family != 4 && p->family != 6))
		return -EINVAL;
	out->attack_packets = (uint32_t)lround(p->attack_share * n);
	if (out->attack_packets == 0)
		out->attack_packets = 1;
	need = (uint32_t)ceil(p->min_coverage * out->attack_packets - 1e-9);
	k = make_groups(pkts, n, g);
	while (take < k && sum < need)
		sum += g[take++].packets;
	if (take > p->max_rules)
		return no_rule(out,
			       "the attack spreads over %" PRIu32 " protocols or fragment states,"
			       " more than max_rules_per_alert (%" PRIu32 ")",
			       take, p->max_rules);
	al.legit = (double)(n - out->attack_packets);
	al.missed = (double)(out->attack_packets - need);
	al.attack = &out->attack_packets;
	allowance_take(&al, n - sum);
	b.m = malloc(sizeof(*b.m) * n);
	if (b.m == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < take && err == 0; i++) {
		b.n = 0;
		for (uint32_t j = 0; j < n; j++)
			if (pkts[j].ip_proto == g[i].proto &&
			    (pkts[j].frag != DPMON_FP_FRAG_NONE) == g[i].frag)
				b.m[b.n++] = &pkts[j];
		group_rule(&g[i], p, &b.r);
		b.fragments = g[i].frag;
		err = branch_narrow(&b, p->components, &al);
		out->rules[out->n_rules++] = b.r;
	}
	free(b.m);
	if (err != 0)
		return err;
	for (uint32_t i = 0; i < out->n_rules; i++)
		if (dpmon_fs_rule_check(&out->rules[i], &why) != 0)
			return no_rule(out, "rule not valid for a router: %s", why);
	tally(pkts, n, out);
	if (out->coverage + 1e-9 < p->min_coverage)
		return no_rule(out,
			       "the rules would match %.1f %% of the attack, below min_coverage",
			       100 * out->coverage);
	return 0;
}
