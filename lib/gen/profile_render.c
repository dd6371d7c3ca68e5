/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_render.c — a parsed profile (profile_private.h) written to a
 * pcap file, and the summary of what was written (profile.h).
 *
 * Design. Rendering walks the packets: pick the stream (sequence: i mod
 * n), move the fields when the generator would, resolve the size with the
 * generator's minimums, build the frame (Ethernet, optional 802.1Q, IPv4
 * or IPv6, TCP/UDP/ICMP, payload) in one buffer and dump it. Addresses are
 * 128-bit integers (IPv4 in the low 32 bits) so stepping and masking are
 * plain arithmetic. Random draws use splitmix64 from the seed.
 */
#include "cksum.h"
#include "numbers.h"
#include "profile.h"
#include "profile_private.h"

#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h" /* DPMON_GEN_EPOCH_SEC, dpmon_gen_json_string */

#define FCS           4
#define PKTGEN_MIN_V6 78 /* pktgen MIN_v6_PKT_SIZE, FCS included */
#define KPKTGEN_HDR   16 /* struct pktgen_hdr: magic, seq, tv_sec, tv_usec */
#define KPKTGEN_MAGIC 0xbe9be955u
#define STDIO_BUFFER  (1u << 20)

/* ------------------------------------------------------------------------
 * Rendering.
 * --------------------------------------------------------------------- */

struct render {
	const struct dpmon_profile *p;
	struct stream streams[MAX_SEQ]; /* mutable copies: the fields' current values */
	uint64_t rng;
	uint8_t frame[MAX_FRAME + 64];
	struct dpmon_profile_summary *s;
};

static uint64_t
rng_next(struct render *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* pktgen range: the value to send now, then step for the next packet. */
static u128
field_take(struct field *f)
{
	u128 v = f->mode == F_STEP ? f->cur : f->start;

	if (f->mode == F_STEP) {
		f->cur += f->inc;
		if (f->cur > f->max || f->cur < f->min)
			f->cur = f->min;
	}
	return v;
}

/* kernel: move the field before a new skb (mod_cur_headers). */
static void
field_advance(struct render *r, struct field *f)
{
	switch (f->mode) {
	case F_KSEQ:
		f->cur = f->cur + 1 > f->max ? f->min : f->cur + 1;
		break;
	case F_KSEQ_PORT:
		f->cur = f->cur + 1 >= f->max ? f->min : f->cur + 1;
		break;
	case F_KRAND:
		f->cur = f->min + rng_next(r) % (uint64_t)(f->max - f->min);
		break;
	case F_KMASK: {
		u128 rnd = (u128)rng_next(r) << 64 | rng_next(r);
		f->cur = (rnd | f->min) & f->max;
		break;
	}
	default:
		break;
	}
}

/* One packet's resolved values. */
struct pkt {
	const struct stream *s;
	u128 src, dst;
	uint32_t sport, dport, vlan;
	uint32_t size; /* captured bytes, VLAN tag included, no FCS */
};

static uint32_t
min_l4(uint8_t proto)
{
	return proto == 6 ? 20 : 8;
}

/* pktgen: the size in bytes with FCS -> captured bytes, with pktgen's clamps. */
static uint32_t
pktgen_size(const struct stream *s, uint32_t size_fcs)
{
	uint32_t floor = s->family == 6 ? PKTGEN_MIN_V6 : PKTGEN_MIN_FRAME;

	return (size_fcs < floor ? floor : size_fcs) - FCS;
}

/* kernel: pkt_size -> captured bytes; the payload holds at least the pktgen header. */
static uint32_t
kernel_size(const struct stream *s, uint32_t pkt_size)
{
	uint32_t min = 14 + (s->tagged ? 4 : 0) + (s->family == 6 ? 40 : 20) + 8 + KPKTGEN_HDR;

	return pkt_size < min ? min : pkt_size;
}

static void
next_pktgen(struct render *r, uint64_t i, struct pkt *k)
{
	const struct dpmon_profile *p = r->p;
	struct stream *s = &r->streams[p->n_streams > 1 ? i % p->n_streams : 0];

	k->s = s;
	k->src = field_take(&s->src);
	k->dst = field_take(&s->dst);
	k->sport = (uint32_t)field_take(&s->sport);
	k->dport = (uint32_t)field_take(&s->dport);
	k->size = pktgen_size(s, (uint32_t)field_take(&s->size));
	k->vlan = (uint32_t)field_take(&s->vlan);
}

static void
next_kernel(struct render *r, uint64_t i, struct pkt *k)
{
	const struct dpmon_profile *p = r->p;
	struct stream *s = &r->streams[0];

	if (i % p->repeat == 0) { /* a new skb: the kernel's order of updates */
		field_advance(r, &s->sport);
		field_advance(r, &s->dport);
		field_advance(r, &s->src);
		field_advance(r, &s->dst);
		if (p->n_imix)
			s->size.cur = p->imix_size[p->imix_dist[rng_next(r) % IMIX_PRECISION]];
		else
			s->size.cur = s->size.start;
	}
	k->s = s;
	k->src = s->src.mode == F_FIXED ? s->src.start : s->src.cur;
	k->dst = s->dst.mode == F_FIXED ? s->dst.start : s->dst.cur;
	k->sport = (uint32_t)(s->sport.mode == F_FIXED ? s->sport.start : s->sport.cur);
	k->dport = (uint32_t)(s->dport.mode == F_FIXED ? s->dport.start : s->dport.cur);
	k->size = kernel_size(s, (uint32_t)s->size.cur);
	k->vlan = (uint32_t)s->vlan.start;
}

/* ------------------------------------------------------------------------
 * Frames.
 * --------------------------------------------------------------------- */

static void
put_addr(uint8_t *p, u128 v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

/* Ethernet (+ 802.1Q); returns the L2 header length. */
static size_t
put_l2(uint8_t *f, const struct pkt *k)
{
	const struct stream *s = k->s;

	memcpy(f, s->dmac, 6);
	memcpy(f + 6, s->smac, 6);
	if (!s->tagged) {
		put16(f + 12, s->family == 4 ? 0x0800 : 0x86dd);
		return 14;
	}
	put16(f + 12, 0x8100);
	put16(f + 14, k->vlan & 0xfff);
	put16(f + 16, s->family == 4 ? 0x0800 : 0x86dd);
	return 18;
}

/* IP header; returns its length. @p l3_len: IP header + payload bytes. */
static size_t
put_l3(uint8_t *h, const struct pkt *k, uint32_t l3_len, uint64_t id)
{
	const struct stream *s = k->s;
	uint8_t proto = s->family == 6 && s->proto == 1 ? 58 : s->proto;

	if (s->family == 4) {
		h[0] = 0x45;
		put16(h + 2, l3_len);
		put16(h + 4, (uint32_t)(id & 0xffff));
		h[8] = s->ttl;
		h[9] = proto;
		put_addr(h + 12, k->src, 4);
		put_addr(h + 16, k->dst, 4);
		put16(h + 10, csum_fold(csum_add(0, h, 20)));
		return 20;
	}
	put32(h, 0x60000000u);
	put16(h + 4, l3_len - 40);
	h[6] = proto;
	h[7] = s->ttl;
	put_addr(h + 8, k->src, 16);
	put_addr(h + 24, k->dst, 16);
	return 40;
}

/* TCP/UDP/ICMP header and checksum over header + @p payload bytes at h + hlen. */
static void
put_l4(uint8_t *h, const uint8_t *l3, const struct pkt *k, uint32_t l4_len, bool csum)
{
	const struct stream *s = k->s;
	bool v4 = s->family == 4;
	uint32_t sum = s->proto + (l4_len >> 16) + (l4_len & 0xffff);
	uint16_t c;

	sum = csum_add(sum, l3 + (v4 ? 12 : 8), v4 ? 8 : 32); /* pseudo-header addresses */
	if (s->proto == 6) {
		put16(h, k->sport);
		put16(h + 2, k->dport);
		put32(h + 4, 0x12378); /* pktgen DEFAULT_TCP_SEQ_NUMBER */
		put32(h + 8, 0x12390); /* DEFAULT_TCP_ACK_NUMBER */
		h[12] = 5 << 4;
		h[13] = s->tcp_flags;
		put16(h + 14, 8192); /* DEFAULT_WND_SIZE */
		put16(h + 16, csum_fold(csum_add(sum, h, l4_len)));
	} else if (s->proto == 17) {
		put16(h, k->sport);
		put16(h + 2, k->dport);
		put16(h + 4, l4_len);
		c = csum_fold(csum_add(sum, h, l4_len));
		put16(h + 6, csum ? (c ? c : 0xffff) : 0);
	} else {
		h[0] = 8; /* ICMP echo request */
		put16(h + 2, csum_fold(csum_add(0, h, l4_len)));
	}
}

/* Build packet @p i of @p k in r->frame; returns its length. */
static uint32_t
build_frame(struct render *r, const struct pkt *k, uint64_t i)
{
	bool kernel = r->p->kind == DPMON_PROFILE_LINUX_PKTGEN;
	uint8_t *f = r->frame;
	size_t l2, l3h;
	uint32_t l4_len;
	uint8_t *l3, *l4;

	memset(f, 0, k->size);
	l2 = put_l2(f, k);
	l3 = f + l2;
	l3h = put_l3(l3, k, k->size - (uint32_t)l2, kernel ? i / r->p->repeat : 0);
	l4 = l3 + l3h;
	l4_len = k->size - (uint32_t)(l2 + l3h);
	if (kernel && l4_len >= 8 + KPKTGEN_HDR) {
		uint64_t skb = i / r->p->repeat;
		put32(l4 + 8, KPKTGEN_MAGIC);
		put32(l4 + 12, (uint32_t)skb);
		if (!r->p->no_timestamp) {
			put32(l4 + 16, (uint32_t)(DPMON_GEN_EPOCH_SEC + i / 1000000));
			put32(l4 + 20, (uint32_t)(i % 1000000));
		}
	}
	put_l4(l4, l3, k, l4_len, !kernel || r->p->udp_csum);
	return k->size;
}

static void
account(struct dpmon_profile_summary *s, const struct pkt *k, const uint8_t *frame)
{
	const struct stream *st = k->s;
	enum dpmon_proto pr = st->proto == 6    ? DPMON_PROTO_TCP
			      : st->proto == 17 ? DPMON_PROTO_UDP
						: DPMON_PROTO_ICMP;
	size_t l4 = (st->tagged ? 18 : 14) + (st->family == 4 ? 20 : 40);

	s->total.packets++;
	s->total.bytes += k->size;
	s->proto[pr].packets++;
	s->proto[pr].bytes += k->size;
	if (st->proto == 6 && (frame[l4 + 13] & (TCP_SYN | TCP_ACK)) == TCP_SYN)
		s->tcp_syn++;
	s->tagged += st->tagged;
	if (s->min_frame == 0 || k->size < s->min_frame)
		s->min_frame = k->size;
	if (k->size > s->max_frame)
		s->max_frame = k->size;
}

static int
write_all(struct render *r, pcap_dumper_t *d, FILE *fp, uint64_t packets)
{
	struct pcap_pkthdr h;
	struct pkt k;

	for (uint64_t i = 0; i < packets; i++) {
		if (r->p->kind == DPMON_PROFILE_LINUX_PKTGEN)
			next_kernel(r, i, &k);
		else
			next_pktgen(r, i, &k);
		if (k.size < 14 + (k.s->tagged ? 4 : 0) + (k.s->family == 4 ? 20 : 40) +
				     min_l4(k.s->proto) ||
		    k.size > MAX_FRAME)
			return -EINVAL; /* excluded by the size rules; a bug if reached */
		h.caplen = h.len = build_frame(r, &k, i);
		h.ts.tv_sec = (time_t)(DPMON_GEN_EPOCH_SEC + i / 1000000);
		h.ts.tv_usec = (suseconds_t)(i % 1000000);
		pcap_dump((u_char *)d, &h, r->frame);
		account(r->s, &k, r->frame);
		if ((i & 0xffff) == 0xffff && ferror(fp))
			return errno ? -errno : -EIO;
	}
	errno = 0;
	if (pcap_dump_flush(d) != 0 || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}

int
dpmon_profile_render(const struct dpmon_profile *p, const char *output, uint64_t packets,
		     uint64_t seed, struct dpmon_profile_summary *s, FILE *err)
{
	struct render *r = calloc(1, sizeof(*r));
	pcap_t *pd = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = NULL;
	FILE *fp = NULL;
	char *buf = malloc(STDIO_BUFFER);
	struct stat st;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (r == NULL || pd == NULL || buf == NULL)
		rc = -ENOMEM;
	else if ((fp = fopen(output, "wb")) == NULL)
		rc = -errno;
	if (fp != NULL) { /* opened: rc is 0 */
		setvbuf(fp, buf, _IOFBF, STDIO_BUFFER);
		d = pcap_dump_fopen(pd, fp);
		if (d == NULL) {
			fclose(fp);
			rc = -EIO;
		}
	}
	if (rc == 0) {
		r->p = p;
		r->s = s;
		r->rng = seed;
		memcpy(r->streams, p->streams, sizeof(r->streams));
		rc = write_all(r, d, fp, packets);
		pcap_dump_close(d);
		if (rc != 0 && stat(output, &st) == 0 && S_ISREG(st.st_mode))
			unlink(output);
	}
	if (rc != 0 && err)
		fprintf(err, "dpmon-gen: %s: %s\n", output, strerror(-rc));
	if (pd)
		pcap_close(pd);
	free(buf);
	free(r);
	return rc;
}

/* ------------------------------------------------------------------------
 * Printing.
 * --------------------------------------------------------------------- */

static const char *
kind_name(const struct dpmon_profile *p)
{
	return p->kind == DPMON_PROFILE_PKTGEN_DPDK ? "pktgen-dpdk" : "linux-pktgen";
}

int
dpmon_profile_summary_print_json(const struct dpmon_profile *p, const char *output, uint64_t seed,
				 const struct dpmon_profile_summary *s, FILE *out)
{
	fputs("{\"profile\": ", out);
	dpmon_gen_json_string(out, p->path);
	fprintf(out, ", \"generator\": \"%s\", \"output\": ", kind_name(p));
	dpmon_gen_json_string(out, output);
	fprintf(out, ", \"seed\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64, seed,
		s->total.packets, s->total.bytes);
	for (int i = 0; i < DPMON_PROTO_MAX; i++)
		fprintf(out, ", \"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			dpmon_proto_name((enum dpmon_proto)i), s->proto[i].packets,
			s->proto[i].bytes);
	fprintf(out,
		", \"tcp_syn\": %" PRIu64 ", \"tagged\": %" PRIu64 ", \"min_frame\": %" PRIu32
		", \"max_frame\": %" PRIu32 "}\n",
		s->tcp_syn, s->tagged, s->min_frame, s->max_frame);
	return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}

int
dpmon_profile_summary_print_text(const struct dpmon_profile *p, const char *output, uint64_t seed,
				 const struct dpmon_profile_summary *s, FILE *out)
{
	fprintf(out,
		"dpmon-gen: rendered %s profile %s: %" PRIu64 " packets, %" PRIu64
		" bytes to %s (seed %" PRIu64 ")\n",
		kind_name(p), p->path, s->total.packets, s->total.bytes, output, seed);
	fprintf(out,
		"tcp %" PRIu64 " (syn %" PRIu64 "), udp %" PRIu64 ", icmp %" PRIu64
		", tagged %" PRIu64 ", frames %" PRIu32 "..%" PRIu32 " bytes\n",
		s->proto[DPMON_PROTO_TCP].packets, s->tcp_syn, s->proto[DPMON_PROTO_UDP].packets,
		s->proto[DPMON_PROTO_ICMP].packets, s->tagged, s->min_frame, s->max_frame);
	return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}
