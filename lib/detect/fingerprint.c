/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fingerprint.c — an attack's fingerprint (fingerprint.h): the sampled
 * packets' header fields, read from the sampler's copies with dpmon's own
 * parser, and their distributions, counted by sorting the values (a few
 * hundred packets: no hash table needed).
 */
#include "fingerprint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "parse.h"
#include "prefix_table.h"

/* ------------------------------------------------------------------------
 * The packets.
 * --------------------------------------------------------------------- */

int
dpmon_fp_init(struct dpmon_fp *fp, uint32_t want)
{
	memset(fp, 0, sizeof(*fp));
	if (want == 0 || want > DPMON_FP_MAX_PACKETS)
		return -EINVAL;
	fp->pkts = calloc(want, sizeof(*fp->pkts));
	if (fp->pkts == NULL)
		return -ENOMEM;
	fp->want = want;
	return 0;
}

void
dpmon_fp_fini(struct dpmon_fp *fp)
{
	free(fp->pkts);
	memset(fp, 0, sizeof(*fp));
}

bool
dpmon_fp_add(struct dpmon_fp *fp, const struct dpmon_fp_pkt *p)
{
	if (fp->n < fp->want)
		fp->pkts[fp->n++] = *p;
	return fp->n >= fp->want;
}

bool
dpmon_fp_add_unless_ignored(struct dpmon_fp *fp, const struct dpmon_fp_pkt *p,
			    const struct dpmon_prefix_table *ignored)
{
	if (fp->n < fp->want && ignored != NULL &&
	    dpmon_prefix_table_lookup(ignored, &p->src) >= 0) {
		fp->ignored++;
		return false;
	}
	return dpmon_fp_add(fp, p);
}

int
dpmon_fp_decode(const uint8_t *frame, uint32_t cap_len, uint32_t wire_len, uint16_t sport,
		uint16_t dport, bool ports, struct dpmon_fp_pkt *out)
{
	struct dpmon_pkt pkt;
	uint32_t ip_len;

	memset(out, 0, sizeof(*out));
	if (dpmon_parse_frame(frame, cap_len, &pkt) != DPMON_REASON_OK)
		return -EINVAL;
	out->family = pkt.family;
	out->ip_proto = pkt.ip_proto;
	if (pkt.family == 4) {
		dpmon_addr_from_v4(&out->src, pkt.src4);
	} else {
		memcpy(out->src.b, pkt.src6, sizeof(out->src.b));
	}
	ip_len = wire_len > pkt.l3_offset ? wire_len - pkt.l3_offset : 0;
	out->ip_len = (uint16_t)(ip_len > UINT16_MAX ? UINT16_MAX : ip_len);
	/* The parser reads no L4 header of a fragment at a later offset. */
	out->frag = !pkt.fragment        ? DPMON_FP_FRAG_NONE
		    : pkt.l4_offset != 0 ? DPMON_FP_FRAG_FIRST
					 : DPMON_FP_FRAG_LATER;
	if (ports && out->frag != DPMON_FP_FRAG_LATER) {
		out->ports = 1;
		out->sport = sport;
		out->dport = dport;
	}
	if (pkt.ip_proto == DPMON_IPPROTO_TCP && pkt.ports)
		out->tcp_flags = pkt.tcp_flags;
	if ((pkt.ip_proto == DPMON_IPPROTO_ICMP || pkt.ip_proto == DPMON_IPPROTO_ICMPV6) &&
	    pkt.l4_offset != 0 && (uint32_t)pkt.l4_offset + 2 <= cap_len) {
		out->icmp = 1;
		out->icmp_type = frame[pkt.l4_offset];
		out->icmp_code = frame[pkt.l4_offset + 1];
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Fields and their distributions.
 * --------------------------------------------------------------------- */

bool
dpmon_fp_has(const struct dpmon_fp_pkt *p, enum dpmon_fp_field f)
{
	switch (f) {
	case DPMON_FP_SPORT:
	case DPMON_FP_DPORT:
		return p->ports;
	case DPMON_FP_FLAGS:
		return p->ports && p->ip_proto == DPMON_IPPROTO_TCP;
	case DPMON_FP_ICMP:
		return p->icmp;
	default:
		return true;
	}
}

void
dpmon_fp_get(const struct dpmon_fp_pkt *p, enum dpmon_fp_field f, struct dpmon_fp_value *v)
{
	memset(v, 0, sizeof(*v));
	switch (f) {
	case DPMON_FP_PROTO:
		v->v = p->ip_proto;
		break;
	case DPMON_FP_SPORT:
		v->v = p->sport;
		break;
	case DPMON_FP_DPORT:
		v->v = p->dport;
		break;
	case DPMON_FP_LENGTH:
		v->v = p->ip_len;
		break;
	case DPMON_FP_FLAGS:
		v->v = p->tcp_flags;
		break;
	case DPMON_FP_FRAG:
		v->v = p->frag;
		break;
	case DPMON_FP_ICMP:
		v->v = (uint32_t)p->icmp_type << 8 | p->icmp_code;
		break;
	case DPMON_FP_SOURCE:
	default:
		v->addr = p->src;
		break;
	}
}

/* Values in order: address, then value (a total order for counting runs). */
static int
value_cmp(const void *x, const void *y)
{
	const struct dpmon_fp_value *a = x, *b = y;
	int c = dpmon_addr_cmp(&a->addr, &b->addr);

	if (c != 0)
		return c;
	return (a->v > b->v) - (a->v < b->v);
}

/* Most packets first; ties: the smaller value first. */
static int
count_cmp(const void *x, const void *y)
{
	const struct dpmon_fp_value *a = x, *b = y;

	if (a->packets != b->packets)
		return a->packets < b->packets ? 1 : -1;
	return value_cmp(x, y);
}

int
dpmon_fp_values(const struct dpmon_fp_pkt *const *pkts, uint32_t n, enum dpmon_fp_field f,
		struct dpmon_fp_value *out, uint32_t max)
{
	struct dpmon_fp_value *all = calloc(n ? n : 1, sizeof(*all));
	uint32_t k = 0, runs = 0;

	if (all == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (dpmon_fp_has(pkts[i], f))
			dpmon_fp_get(pkts[i], f, &all[k++]);
	qsort(all, k, sizeof(*all), value_cmp);
	for (uint32_t i = 0; i < k; i++) {
		if (runs > 0 && value_cmp(&all[runs - 1], &all[i]) == 0) {
			all[runs - 1].packets++;
			continue;
		}
		all[runs] = all[i];
		all[runs++].packets = 1;
	}
	qsort(all, runs, sizeof(*all), count_cmp);
	memcpy(out, all, sizeof(*out) * (runs < max ? runs : max));
	free(all);
	return (int)runs;
}

/* ------------------------------------------------------------------------
 * JSON.
 * --------------------------------------------------------------------- */

const char *
dpmon_fp_state_name(enum dpmon_fp_state state)
{
	static const char *const names[] = {"sampling", "ready", "timed_out"};

	return (unsigned)state < RTE_DIM(names) ? names[state] : "sampling";
}

char *
dpmon_fp_flags_text(uint8_t flags, char sep, char *buf, size_t len)
{
	static const char *const names[8] = {"fin", "syn",    "rst", "push",
					     "ack", "urgent", "ece", "cwr"};
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned b = 0; b < 8; b++) {
		int w;

		if ((flags & (1u << b)) == 0)
			continue;
		w = snprintf(buf + at, len - at, "%s%s", at ? (char[]){sep, '\0'} : "", names[b]);
		if (w < 0 || (size_t)w >= len - at)
			break;
		at += (size_t)w;
	}
	return buf;
}

static const char *
proto_text(uint32_t p)
{
	switch (p) {
	case DPMON_IPPROTO_ICMP:
		return "icmp";
	case DPMON_IPPROTO_TCP:
		return "tcp";
	case DPMON_IPPROTO_UDP:
		return "udp";
	case DPMON_IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return "other";
	}
}

/* One top-list element of field @p f. */
static json_t *
value_json(enum dpmon_fp_field f, const struct dpmon_fp_value *v)
{
	char text[DPMON_ADDR_STRLEN];
	json_int_t n = (json_int_t)v->packets;

	switch (f) {
	case DPMON_FP_PROTO:
		return json_pack("{s:s,s:i,s:I}", "protocol", proto_text(v->v), "number", (int)v->v,
				 "packets", n);
	case DPMON_FP_FLAGS:
		return json_pack("{s:s,s:i,s:I}", "flags",
				 dpmon_fp_flags_text((uint8_t)v->v, '+', text, sizeof(text)),
				 "value", (int)v->v, "packets", n);
	case DPMON_FP_ICMP:
		return json_pack("{s:i,s:i,s:I}", "type", (int)(v->v >> 8), "code",
				 (int)(v->v & 0xff), "packets", n);
	case DPMON_FP_SOURCE:
		return json_pack("{s:s,s:I}", "address",
				 dpmon_addr_format(&v->addr, text, sizeof(text)), "packets", n);
	default:
		return json_pack("{s:i,s:I}", "port", (int)v->v, "packets", n);
	}
}

/* The top DPMON_FP_TOP values of field @p f as a JSON array. */
static json_t *
top_json(const struct dpmon_fp_pkt *const *pkts, uint32_t n, enum dpmon_fp_field f)
{
	struct dpmon_fp_value top[DPMON_FP_TOP];
	int k = dpmon_fp_values(pkts, n, f, top, DPMON_FP_TOP);
	json_t *arr = k >= 0 ? json_array() : NULL;

	for (int i = 0; arr != NULL && i < k && i < DPMON_FP_TOP; i++)
		if (json_array_append_new(arr, value_json(f, &top[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	return arr;
}

/* Packet-length buckets' upper bounds, bytes (the last is open). */
static const uint32_t len_edges[] = {63, 127, 255, 511, 1023, 1499, UINT16_MAX};

static json_t *
lengths_json(const struct dpmon_fp *fp)
{
	uint32_t counts[RTE_DIM(len_edges)] = {0}, lo = UINT16_MAX, hi = 0;
	json_t *buckets = json_array();

	for (uint32_t i = 0; i < fp->n; i++) {
		uint32_t l = fp->pkts[i].ip_len, b = 0;

		while (l > len_edges[b])
			b++;
		counts[b]++;
		lo = l < lo ? l : lo;
		hi = l > hi ? l : hi;
	}
	for (unsigned b = 0; buckets != NULL && b < RTE_DIM(len_edges); b++) {
		if (counts[b] == 0)
			continue;
		if (json_array_append_new(buckets, json_pack("{s:i,s:i,s:I}", "from",
							     b ? (int)len_edges[b - 1] + 1 : 0,
							     "to", (int)len_edges[b], "packets",
							     (json_int_t)counts[b])) != 0) {
			json_decref(buckets);
			buckets = NULL;
		}
	}
	if (fp->n == 0)
		return json_pack("{s:n,s:n,s:o*}", "min", "max", "buckets", buckets);
	return json_pack("{s:i,s:i,s:o*}", "min", (int)lo, "max", (int)hi, "buckets", buckets);
}

json_t *
dpmon_fp_json(const struct dpmon_fp *fp, enum dpmon_fp_state state)
{
	const struct dpmon_fp_pkt **ptr = calloc(fp->n ? fp->n : 1, sizeof(*ptr));
	uint32_t frag[3] = {0};
	json_t *j;

	if (ptr == NULL)
		return NULL;
	for (uint32_t i = 0; i < fp->n; i++) {
		ptr[i] = &fp->pkts[i];
		frag[fp->pkts[i].frag < 3 ? fp->pkts[i].frag : 0]++;
	}
	j = json_pack("{s:s,s:I,s:I,s:I,s:o*,s:o*,s:o*,s:o*,s:o*,s:{s:I,s:I,s:I},s:o*,s:o*}",
		      "state", dpmon_fp_state_name(state), "packets", (json_int_t)fp->n, "wanted",
		      (json_int_t)fp->want, "ignored_packets", (json_int_t)fp->ignored, "protocols",
		      top_json(ptr, fp->n, DPMON_FP_PROTO), "source_ports",
		      top_json(ptr, fp->n, DPMON_FP_SPORT), "destination_ports",
		      top_json(ptr, fp->n, DPMON_FP_DPORT), "lengths", lengths_json(fp),
		      "tcp_flags", top_json(ptr, fp->n, DPMON_FP_FLAGS), "fragments", "none",
		      (json_int_t)frag[DPMON_FP_FRAG_NONE], "first",
		      (json_int_t)frag[DPMON_FP_FRAG_FIRST], "later",
		      (json_int_t)frag[DPMON_FP_FRAG_LATER], "icmp",
		      top_json(ptr, fp->n, DPMON_FP_ICMP), "sources",
		      top_json(ptr, fp->n, DPMON_FP_SOURCE));
	free(ptr);
	return j;
}
