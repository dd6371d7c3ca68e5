/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attack.c — attack captures: each victim's attack mixed with its own
 * legitimate traffic, written to a pcap file with a labels file beside it.
 *
 * Design. Packet i goes to victim i mod n; a victim's packet k is
 * legitimate when floor((k + 1) P / 100) > floor(k P / 100) (P the
 * legitimate percent), so the share is exact and spread evenly. Every
 * other choice (sources, ports, lengths, sequence numbers) is drawn from
 * rng.h in a fixed order, so a run is a pure function of its options.
 * A packet is first described (struct pkt: ends, protocol, ports, flags,
 * length, fragment) by the attack's or the legitimate traffic's recipe,
 * then built: Ethernet II, IPv4 (DF unless a fragment) or IPv6 (with a
 * fragment header for a fragment), TCP/UDP/ICMP with valid checksums over
 * a zero payload. Lengths are chosen as IPv4 total lengths; an IPv6 packet
 * carries the same transport segment, so it is 20 bytes longer.
 */
#include "attack.h"
#include "cksum.h"
#include "gen.h"
#include "numbers.h"
#include "rng.h"

#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME_MAX 1600 /* the longest frame written: 14 + 40 + 8 + 1448 */

static const char *const kind_names[DPMON_GEN_ATTACK_KINDS] = {
	[DPMON_GEN_ATTACK_DNS_AMP] = "dns-amp",     [DPMON_GEN_ATTACK_NTP_AMP] = "ntp-amp",
	[DPMON_GEN_ATTACK_MEMCACHED] = "memcached", [DPMON_GEN_ATTACK_SYN] = "syn",
	[DPMON_GEN_ATTACK_FRAG] = "frag",           [DPMON_GEN_ATTACK_ACK] = "ack",
	[DPMON_GEN_ATTACK_UDP_SYN] = "udp-syn",     [DPMON_GEN_ATTACK_ONE_SOURCE] = "one-source",
	[DPMON_GEN_ATTACK_SPOOFED] = "spoofed",
};

enum {
	TCP_FIN = 0x01,
	TCP_SYN = 0x02,
	TCP_PSH = 0x08,
	TCP_ACK = 0x10
};
enum frag {
	FRAG_NONE,
	FRAG_FIRST,
	FRAG_MIDDLE,
	FRAG_LAST
};

/* One packet, described before it is built. */
struct pkt {
	struct dpmon_addr src;
	unsigned family;  /* 4 or 6, the victim's */
	uint8_t proto;    /* 6, 17, or 1 (ICMP echo, ICMPv6 on IPv6) */
	uint8_t flags;    /* TCP flags */
	uint8_t tcp_hlen; /* 20, or 32 with the timestamp option */
	uint16_t sport, dport;
	uint32_t len; /* IPv4 total length of the packet (IPv6: 20 more) */
	enum frag frag;
	uint32_t frag_off; /* fragment offset in bytes */
	uint32_t dgram;    /* a fragmented datagram's UDP length */
	uint32_t id;       /* IP identification of a fragment */
};

/* Per victim: its packets so far, and its attack packets so far. */
struct victim_state {
	uint64_t k;
	uint64_t attack;
};

/* ------------------------------------------------------------------------
 * Options.
 * --------------------------------------------------------------------- */

int
dpmon_gen_attack_kind_parse(const char *name, enum dpmon_gen_attack_kind *kind)
{
	for (int k = 0; k < DPMON_GEN_ATTACK_KINDS; k++)
		if (strcmp(name, kind_names[k]) == 0) {
			*kind = (enum dpmon_gen_attack_kind)k;
			return 0;
		}
	return -EINVAL;
}

const char *
dpmon_gen_attack_kind_name(enum dpmon_gen_attack_kind kind)
{
	return kind < DPMON_GEN_ATTACK_KINDS ? kind_names[kind] : "?";
}

int
dpmon_gen_attack_add_victim(struct dpmon_gen_attack_opts *o, enum dpmon_gen_attack_kind kind,
			    const char *addr, const char **why)
{
	struct dpmon_gen_victim v = {.kind = kind};

	if (dpmon_addr_parse(addr, &v.addr) != 0) {
		if (why != NULL)
			*why = "expected an IPv4 or IPv6 address";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < o->n_victims; i++)
		if (dpmon_addr_eq(&o->victims[i].addr, &v.addr)) {
			if (why != NULL)
				*why = "this victim is already attacked";
			return -EINVAL;
		}
	if (o->n_victims == DPMON_GEN_MAX_VICTIMS) {
		if (why != NULL)
			*why = "too many victims (at most 64)";
		return -EINVAL;
	}
	v.family = dpmon_addr_is_v4(&v.addr) ? 4 : 6;
	o->victims[o->n_victims++] = v;
	return 0;
}

/* ------------------------------------------------------------------------
 * Sources.
 * --------------------------------------------------------------------- */

/* Reflector or bot @p i of 200: 198.18.0.1..198.18.3.50, 2001:db8:1818::1..200. */
static void
reflector_at(uint32_t i, unsigned family, struct dpmon_addr *a)
{
	if (family == 4) {
		dpmon_addr_from_v4(a, 198u << 24 | 18u << 16 | (i / 50) << 8 | (1 + i % 50));
		return;
	}
	dpmon_addr_parse("2001:db8:1818::", a);
	a->b[15] = (uint8_t)(1 + i);
}

/* One of the 200 reflectors or bots, at random. */
static void
reflector(struct rng *r, unsigned family, struct dpmon_addr *a)
{
	reflector_at(rng_below(r, 200), family, a);
}

/* A spoofed source: IPv4 in 11.0.0.0..126.255.255.255, IPv6 in 2a00::/8. */
static void
spoofed(struct rng *r, unsigned family, struct dpmon_addr *a)
{
	uint64_t x = rng_next(r);

	if (family == 4) {
		dpmon_addr_from_v4(a, (11 + (uint32_t)(x >> 56) % 116) << 24 |
					      (uint32_t)(x & 0xffffff));
		return;
	}
	a->b[0] = 0x2a;
	for (int i = 1; i < 16; i++)
		a->b[i] = (uint8_t)(i < 9 ? x >> (8 * (i - 1)) : rng_next(r));
}

/* A client of the victim: IPv4 in 100.64.0.0/10, IPv6 in 2001:db8:c000::/40. */
static void
client(struct rng *r, unsigned family, struct dpmon_addr *a)
{
	uint64_t x = rng_next(r);

	if (family == 4) {
		dpmon_addr_from_v4(a, 100u << 24 | 64u << 16 | (uint32_t)(x & 0x3fffff));
		return;
	}
	dpmon_addr_parse("2001:db8:c000::", a);
	for (int i = 5; i < 16; i++) {
		if (i == 13)
			x = rng_next(r); /* bytes 5..12 from the first draw, 13..15 from a second */
		a->b[i] = (uint8_t)(x >> (8 * ((i - 5) % 8)));
	}
}

/*
 * A long packet's length (IPv4 total length), @p lo .. 1499 for IPv4 and
 * @p lo .. 1479 for IPv6, so that the IP packet fits a 1500-byte MTU in
 * both families.
 */
static inline uint32_t
long_len(struct rng *r, unsigned family, uint32_t lo)
{
	return lo + rng_below(r, (family == 4 ? 1500 : 1480) - lo);
}

/* An ephemeral port, 1024..65535. */
static inline uint16_t
ephemeral(struct rng *r)
{
	return (uint16_t)(1024 + rng_below(r, 64512));
}

/* ------------------------------------------------------------------------
 * What each packet is.
 * --------------------------------------------------------------------- */

static void
l4(struct pkt *p, uint8_t proto, uint16_t sport, uint16_t dport, uint32_t len)
{
	p->proto = proto;
	p->sport = sport;
	p->dport = dport;
	p->len = len;
	p->tcp_hlen = 20;
}

/*
 * The victim's own traffic: 70 % TCP clients (45 % to 443, 25 % to 80;
 * 1 % SYN, 2 % FIN|ACK, 47 % ACK, the rest PSH|ACK with data; the
 * timestamp option on every segment but a SYN), 10 % answers to its DNS
 * queries, 10 % queries to its resolver, 10 % ICMP echo requests.
 */
static void
legitimate(struct rng *r, struct pkt *p)
{
	uint32_t k = rng_below(r, 100);

	client(r, p->family, &p->src);
	if (k < 70) {
		uint32_t f = rng_below(r, 100);

		l4(p, 6, (uint16_t)(32768 + rng_below(r, 28000)), k < 45 ? 443 : 80, 52);
		p->flags = f < 1    ? TCP_SYN
			   : f < 3  ? TCP_FIN | TCP_ACK
			   : f < 50 ? TCP_ACK
				    : TCP_PSH | TCP_ACK;
		if (p->flags == TCP_SYN)
			p->len = 40;
		else
			p->tcp_hlen = 32;
		if (p->flags == (TCP_PSH | TCP_ACK))
			p->len = long_len(r, p->family, 53);
	} else if (k < 80) {
		l4(p, 17, 53, (uint16_t)(32768 + rng_below(r, 28000)), 90 + rng_below(r, 300));
	} else if (k < 90) {
		l4(p, 17, (uint16_t)(32768 + rng_below(r, 28000)), 53, 60 + rng_below(r, 30));
	} else {
		l4(p, 1, 0, 0, 84);
	}
}

/* Attack packet @p j (0-based, of this victim) of @p kind. */
static void
attack(struct rng *r, enum dpmon_gen_attack_kind kind, uint64_t j, struct pkt *p)
{
	uint32_t chunk;

	switch (kind) {
	case DPMON_GEN_ATTACK_DNS_AMP:
		reflector(r, p->family, &p->src);
		l4(p, 17, 53, ephemeral(r), long_len(r, p->family, 1200));
		break;
	case DPMON_GEN_ATTACK_NTP_AMP:
		reflector(r, p->family, &p->src);
		l4(p, 17, 123, ephemeral(r), 468);
		break;
	case DPMON_GEN_ATTACK_MEMCACHED:
		reflector(r, p->family, &p->src);
		l4(p, 17, 11211, ephemeral(r), long_len(r, p->family, 1400));
		break;
	case DPMON_GEN_ATTACK_SYN:
		spoofed(r, p->family, &p->src);
		l4(p, 6, ephemeral(r), 443, 40);
		p->flags = TCP_SYN;
		break;
	case DPMON_GEN_ATTACK_FRAG: /* datagram j / 3: 2980 UDP bytes in three fragments */
		chunk = p->family == 4 ? 1480 : 1448;
		reflector_at((uint32_t)(j / 3 % 200), p->family, &p->src);
		l4(p, 17, ephemeral(r), (uint16_t)rng_below(r, 65536), 0);
		p->frag = j % 3 == 0 ? FRAG_FIRST : j % 3 == 1 ? FRAG_MIDDLE : FRAG_LAST;
		p->dgram = 2980;
		p->id = (uint32_t)(j / 3);
		/* IPv4: 1480 + 1480 + 20 bytes; IPv6: 1448 + 1448 + 84, after its fragment header */
		p->frag_off = (uint32_t)(j % 3) * chunk;
		p->len = (p->family == 4 ? 20 : 28) +
			 (p->frag == FRAG_LAST ? p->dgram - 2 * chunk : chunk);
		break;
	case DPMON_GEN_ATTACK_ACK:
		spoofed(r, p->family, &p->src);
		l4(p, 6, ephemeral(r), (uint16_t)rng_below(r, 65536), 40);
		p->flags = TCP_ACK;
		break;
	case DPMON_GEN_ATTACK_UDP_SYN:
		spoofed(r, p->family, &p->src);
		if (j % 2 == 0) {
			l4(p, 17, ephemeral(r), (uint16_t)rng_below(r, 65536), 540);
		} else {
			l4(p, 6, ephemeral(r), 80, 40);
			p->flags = TCP_SYN;
		}
		break;
	case DPMON_GEN_ATTACK_ONE_SOURCE:
		dpmon_addr_parse(p->family == 4 ? "203.0.113.66" : "2001:db8:66::66", &p->src);
		l4(p, 17, ephemeral(r), (uint16_t)rng_below(r, 65536), 64 + rng_below(r, 1400));
		break;
	case DPMON_GEN_ATTACK_SPOOFED:
	default:
		spoofed(r, p->family, &p->src);
		l4(p, 17, ephemeral(r), 27015, 64 + rng_below(r, 1400));
		break;
	}
}

/* ------------------------------------------------------------------------
 * Building a frame.
 * --------------------------------------------------------------------- */

/* Pseudo-header sum of the transport checksum (RFC 793 3.1, RFC 8200 8.1). */
static uint32_t
pseudo_sum(const struct pkt *p, const struct dpmon_addr *dst, uint8_t proto, uint32_t len)
{
	uint32_t sum = proto + (len >> 16) + (len & 0xffff);
	int off = p->family == 4 ? 12 : 0, n = p->family == 4 ? 4 : 16;

	return csum_add(csum_add(sum, p->src.b + off, (size_t)n), dst->b + off, (size_t)n);
}

/* The transport header at @p h (the payload after it is zero). */
static void
put_l4(uint8_t *h, const struct pkt *p, const struct dpmon_addr *dst, struct rng *r)
{
	uint32_t seg = p->frag == FRAG_NONE ? p->len - 20 : p->dgram;
	uint8_t proto = p->proto == 1 && p->family == 6 ? 58 : p->proto;
	uint64_t x = rng_next(r);

	if (p->proto == 6) {
		put16(h, p->sport);
		put16(h + 2, p->dport);
		put32(h + 4, (uint32_t)x);
		put32(h + 8, p->flags & TCP_ACK ? (uint32_t)(x >> 32) : 0);
		h[12] = (uint8_t)(p->tcp_hlen / 4 << 4);
		h[13] = p->flags;
		put16(h + 14, 65535);
		if (p->tcp_hlen == 32) { /* NOP, NOP, timestamps (RFC 7323 3) */
			h[20] = 1;
			h[21] = 1;
			h[22] = 8;
			h[23] = 10;
			put32(h + 24, (uint32_t)(x >> 16));
			put32(h + 28, (uint32_t)(x >> 24));
		}
		put16(h + 16, csum_fold(csum_add(pseudo_sum(p, dst, proto, seg), h, p->tcp_hlen)));
	} else if (p->proto == 17) {
		uint16_t c;

		put16(h, p->sport);
		put16(h + 2, p->dport);
		put16(h + 4, seg);
		c = csum_fold(csum_add(pseudo_sum(p, dst, proto, seg), h, 8));
		put16(h + 6, c ? c : 0xffff); /* 0 means "no checksum" (RFC 768) */
	} else {                              /* echo request: RFC 792, RFC 4443 4.1 */
		h[0] = p->family == 4 ? 8 : 128;
		put16(h + 4, (uint32_t)(x & 0xffff));
		put16(h + 6, (uint32_t)(x >> 16 & 0xffff));
		put16(h + 2, csum_fold(csum_add(p->family == 4 ? 0 : pseudo_sum(p, dst, proto, seg),
						h, 8)));
	}
}

/* Build @p p to @p dst in @p f (FRAME_MAX bytes); returns the frame length. */
static uint32_t
build(uint8_t *f, const struct pkt *p, const struct dpmon_addr *dst, uint64_t index, struct rng *r)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
	bool v4 = p->family == 4, frag = p->frag != FRAG_NONE;
	uint8_t proto = p->proto == 1 && !v4 ? 58 : p->proto;
	uint32_t l3 = v4 ? p->len : p->len + 20, hdr = v4 ? 20 : 40 + (frag ? 8 : 0);
	uint8_t *h = f + 14;

	memset(f, 0, 14 + l3);
	memcpy(f, macs, 12);
	put16(f + 12, v4 ? 0x0800 : 0x86dd);
	if (v4) {
		h[0] = 0x45;
		put16(h + 2, l3);
		put16(h + 4, frag ? p->id : (uint32_t)(index & 0xffff));
		put16(h + 6, frag ? (p->frag != FRAG_LAST ? 0x2000 : 0) | p->frag_off / 8 : 0x4000);
		h[8] = 64;
		h[9] = proto;
		memcpy(h + 12, p->src.b + 12, 4);
		memcpy(h + 16, dst->b + 12, 4);
		put16(h + 10, csum_fold(csum_add(0, h, 20)));
	} else {
		put32(h, 0x60000000u);
		put16(h + 4, l3 - 40);
		h[6] = frag ? 44 : proto;
		h[7] = 64;
		memcpy(h + 8, p->src.b, 16);
		memcpy(h + 24, dst->b, 16);
		if (frag) { /* RFC 8200 4.5 */
			h[40] = proto;
			put16(h + 42, p->frag_off | (p->frag != FRAG_LAST ? 1 : 0));
			put32(h + 44, p->id);
		}
	}
	if (p->frag == FRAG_NONE || p->frag == FRAG_FIRST)
		put_l4(h + hdr, p, dst, r);
	return 14 + l3;
}

/* ------------------------------------------------------------------------
 * Writing the capture.
 * --------------------------------------------------------------------- */

/* Write every packet to @p d and its label to @p labels (may be NULL). */
static int
write_packets(const struct dpmon_gen_attack_opts *o, struct dpmon_gen_attack_summary *s,
	      pcap_dumper_t *d, FILE *labels)
{
	struct victim_state st[DPMON_GEN_MAX_VICTIMS] = {{0}};
	uint8_t frame[FRAME_MAX];
	struct rng r;

	rng_seed(&r, o->seed);
	for (uint64_t i = 0; i < o->packets; i++) {
		uint32_t v = (uint32_t)(i % o->n_victims);
		const struct dpmon_gen_victim *vic = &o->victims[v];
		struct pkt p = {.family = vic->family};
		uint64_t k = st[v].k++;
		bool legit = (k + 1) * o->legit_percent / 100 > k * o->legit_percent / 100;
		struct pcap_pkthdr h;

		if (legit)
			legitimate(&r, &p);
		else
			attack(&r, vic->kind, st[v].attack++, &p);
		h.caplen = h.len = build(frame, &p, &vic->addr, i, &r);
		h.ts.tv_sec = (time_t)(DPMON_GEN_EPOCH_SEC + i / 1000000);
		h.ts.tv_usec = (suseconds_t)(i % 1000000);
		pcap_dump((u_char *)d, &h, frame);
		if (labels != NULL &&
		    fputc(legit ? DPMON_GEN_LABEL_LEGITIMATE : DPMON_GEN_LABEL_ATTACK, labels) ==
			    EOF)
			return errno ? -errno : -EIO;
		s->packets++;
		s->bytes += h.caplen;
		s->victims[v].bytes += h.caplen;
		if (legit)
			s->victims[v].legitimate_packets++;
		else
			s->victims[v].attack_packets++;
	}
	errno = 0;
	if (pcap_dump_flush(d) != 0 || ferror(pcap_dump_file(d)) ||
	    (labels != NULL && fflush(labels) != 0))
		return errno ? -errno : -EIO;
	return 0;
}

int
dpmon_gen_attack_write(const struct dpmon_gen_attack_opts *o, struct dpmon_gen_attack_summary *s,
		       FILE *err)
{
	pcap_t *pd = NULL;
	pcap_dumper_t *d = NULL;
	FILE *labels = NULL;
	const char *failed = o->output;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (o->output == NULL || o->n_victims == 0 || o->n_victims > DPMON_GEN_MAX_VICTIMS ||
	    o->legit_percent > 100) {
		if (err != NULL)
			fprintf(err,
				"dpmon-gen: an attack capture needs an output, 1..%d victims "
				"and a legitimate percent of 0..100\n",
				DPMON_GEN_MAX_VICTIMS);
		return -EINVAL;
	}
	pd = pcap_open_dead(DLT_EN10MB, 65535);
	if (pd == NULL)
		return -ENOMEM;
	errno = 0;
	d = pcap_dump_open(pd, o->output);
	if (d == NULL) {
		rc = errno ? -errno : -EIO;
		if (err != NULL)
			fprintf(err, "dpmon-gen: %s\n", pcap_geterr(pd)); /* "FILE: why" */
		pcap_close(pd);
		return rc;
	}
	if (o->labels != NULL) {
		labels = fopen(o->labels, "wb");
		if (labels == NULL) {
			rc = -errno;
			failed = o->labels;
		}
	}
	if (rc == 0) {
		rc = write_packets(o, s, d, labels);
		failed = rc != 0 && labels != NULL && ferror(labels) ? o->labels : o->output;
	}
	pcap_dump_close(d);
	pcap_close(pd);
	if (labels != NULL && fclose(labels) != 0 && rc == 0) {
		rc = errno ? -errno : -EIO;
		failed = o->labels;
	}
	if (rc != 0) {
		if (err != NULL)
			fprintf(err, "dpmon-gen: %s: %s\n", failed, strerror(-rc));
		unlink(o->output);
		if (o->labels != NULL)
			unlink(o->labels);
		memset(s, 0, sizeof(*s));
	}
	return rc;
}

/* ------------------------------------------------------------------------
 * The summary.
 * --------------------------------------------------------------------- */

int
dpmon_gen_attack_summary_print(const struct dpmon_gen_attack_opts *o,
			       const struct dpmon_gen_attack_summary *s, bool json, FILE *out)
{
	char a[DPMON_ADDR_STRLEN];

	if (json) {
		fputs("{\"output\": ", out);
		dpmon_gen_json_string(out, o->output);
		fprintf(out,
			", \"seed\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"legitimate_percent\": %u, \"victims\": [",
			o->seed, s->packets, s->bytes, o->legit_percent);
	} else {
		fprintf(out,
			"dpmon-gen: wrote %" PRIu64 " packets, %" PRIu64
			" bytes to %s (seed %" PRIu64 ")\n\n%-40s %-11s %14s %14s %14s\n",
			s->packets, s->bytes, o->output, o->seed, "victim", "attack", "attack pkts",
			"legit pkts", "bytes");
	}
	for (uint32_t i = 0; i < o->n_victims; i++) {
		const struct dpmon_gen_victim_summary *v = &s->victims[i];

		dpmon_addr_format(&o->victims[i].addr, a, sizeof(a));
		if (json)
			fprintf(out,
				"%s{\"victim\": \"%s\", \"attack\": \"%s\", \"attack_packets\": "
				"%" PRIu64 ", \"legitimate_packets\": %" PRIu64
				", \"bytes\": %" PRIu64 "}",
				i ? ", " : "", a, kind_names[o->victims[i].kind], v->attack_packets,
				v->legitimate_packets, v->bytes);
		else
			fprintf(out, "%-40s %-11s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", a,
				kind_names[o->victims[i].kind], v->attack_packets,
				v->legitimate_packets, v->bytes);
	}
	if (json)
		fputs("]}\n", out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
