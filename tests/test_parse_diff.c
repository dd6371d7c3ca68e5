/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse_diff.c — differential test of the parser's fast path against
 * the full parser on real captures and seeded mutations of them.
 *
 *   test_parse_diff TESTDATA_DIR
 *
 * parse.c answers the common frame (one IPv4/IPv6 header, TCP/UDP/ICMP,
 * no anomaly) with a short fast path and hands everything else to the
 * full parser; dpmon_parse_frame_full is the full parser alone. Whatever
 * the frame, both must give the same result: the reason, every field of
 * struct dpmon_pkt before the addresses, and the addresses when the frame
 * is OK. test_parse.c checks this on its hand-built frames through the
 * contiguous entry point; this test covers what the worker really sees:
 *
 *  - every frame of every capture under TESTDATA_DIR/pcaps (found at run
 *    time; non-Ethernet captures are also fed with a made-up Ethernet
 *    header), then MUTATIONS seeded mutations aimed at the headers
 *    (EtherTypes, VLAN tags, IP version/IHL, lengths, fragment bits,
 *    protocols, TCP data offset, UDP length, tunnel ports, truncation,
 *    padding up to 64 KiB);
 *  - each with decapsulation none, all and a random subset of the kinds;
 *  - through dpmon_parse_frame_decap and through dpmon_parse_mbuf_decap
 *    with fake mbufs (no EAL; buffers are exact-size heap copies so that
 *    ASan sees any read past the bytes held) in these layouts: one
 *    segment; data_len > pkt_len; pkt_len > the bytes held; a stripped
 *    VLAN tag; stripped QinQ tags; several segments cut at random. The
 *    mbuf result is compared with dpmon_parse_mbuf_full (the full parser
 *    with the mbuf rules of parse.h: pkt_len, pkt_len_mismatch, stripped
 *    tags) on one segment holding the same bytes;
 *  - through dpmon_parse_mbuf_ptype in each of those layouts, with the
 *    packet type a NIC would report for the frame and with a random one
 *    (a NIC's report is a hint: the result must not depend on it).
 *
 * The seed is fixed, so a failure reproduces. A mismatch prints the frame
 * in hex, the entry point, the mbuf layout, the decap set and both
 * results; the test then fails. The counts compared are printed at the
 * end. Exit status: 0, or 1 on a mismatch or if no capture is found.
 */
#include <assert.h>
#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include "check.h"
#include "parse.h"
#include "parse_same.h"

#define SEED         0x5eed2026d1ffull
#define MUTATIONS    1000000u
#define MAX_REPORTED 20     /* mismatches printed in full */
#define MAX_SEGS     16     /* segments of a multi-segment layout */
#define GROW         70000u /* room a mutation may pad a frame by */

struct frame {
	uint8_t *b;
	uint32_t n;
};

/* One mbuf layout: what the fake mbuf looks like besides its bytes. */
struct layout {
	const char *name;
	const uint32_t *cuts; /* segment boundaries, ascending */
	unsigned ncuts;
	uint32_t pkt_len;
	uint64_t ol_flags;
	uint16_t tci, tci_outer;
};

static struct frame *frames;
static size_t nframes, frames_cap;
static char **paths;
static size_t npaths, paths_cap;
static unsigned long compared, mismatches, full_ok, captures;
static uint64_t rng_state = SEED;
static uint8_t scratch[DPMON_PARSE_GATHER];

/* xorshift64: fixed sequence for a fixed seed. */
static uint64_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* @return uniform-ish in [0, n); 0 when n is 0. */
static uint32_t
rn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* malloc that fails the test when out of memory; @p n may be 0. */
static void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		FAIL("out of memory (%zu bytes)", n);
	return p;
}

static void *
xrealloc(void *old, size_t n)
{
	void *p = realloc(old, n);

	if (p == NULL)
		FAIL("out of memory (%zu bytes)", n);
	return p;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
add_frame(const uint8_t *b, uint32_t n)
{
	if (nframes == frames_cap) {
		frames_cap = frames_cap ? 2 * frames_cap : 1024;
		frames = xrealloc(frames, frames_cap * sizeof(*frames));
	}
	frames[nframes].b = xmalloc(n);
	memcpy(frames[nframes].b, b, n);
	frames[nframes++].n = n;
}

/* ------------------------------------------------------------------------ */
/* captures                                                                 */
/* ------------------------------------------------------------------------ */

static int
collect_path(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t len = strlen(path);

	(void)st;
	(void)ftw;
	if (type != FTW_F || !((len > 5 && strcmp(path + len - 5, ".pcap") == 0) ||
			       (len > 7 && strcmp(path + len - 7, ".pcapng") == 0)))
		return 0;
	if (npaths == paths_cap) {
		paths_cap = paths_cap ? 2 * paths_cap : 256;
		paths = xrealloc(paths, paths_cap * sizeof(*paths));
	}
	paths[npaths] = xmalloc(len + 1);
	memcpy(paths[npaths], path, len + 1);
	npaths++;
	return 0;
}

static int
compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Add a record of link type @p lt; Ethernet-less records are also added
 * behind a made-up Ethernet header so that their IP headers get parsed.
 */
static void
add_record(int lt, const uint8_t *d, uint32_t n)
{
	uint8_t *t = xmalloc(n + 14);

	add_frame(d, n);
	memset(t, 0x02, 12);
	if ((lt == DLT_RAW || lt == 12 || lt == 14 || lt == 228 || lt == 229) && n > 0) {
		put16(t + 12, (d[0] >> 4) == 6 ? 0x86dd : 0x0800);
		memcpy(t + 14, d, n);
		add_frame(t, n + 14);
	} else if (lt == DLT_LINUX_SLL && n >= 16) {
		memcpy(t + 12, d + 14, n - 14);
		add_frame(t, n - 2);
	} else if ((lt == DLT_NULL || lt == DLT_LOOP) && n > 4) {
		put16(t + 12, (d[4] >> 4) == 6 ? 0x86dd : 0x0800);
		memcpy(t + 14, d + 4, n - 4);
		add_frame(t, n + 10);
	}
	free(t);
}

/* Read every record of @p path; a file libpcap cannot open is reported and skipped. */
static void
load_capture(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *pc = pcap_open_offline(path, err);
	int lt, rc;

	if (pc == NULL) {
		fprintf(stderr, "test_parse_diff: skipping %s: %s\n", path, err);
		return;
	}
	lt = pcap_datalink(pc);
	while ((rc = pcap_next_ex(pc, &h, &d)) >= 0)
		if (rc == 1)
			add_record(lt, d, h->caplen);
	pcap_close(pc);
	captures++;
}

/* Load every capture under @p testdata/pcaps, in path order; fail if none. */
static void
load_captures(const char *testdata)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/pcaps", testdata);
	if (nftw(dir, collect_path, 16, FTW_PHYS) != 0)
		FAIL("test data directory %s: %s (the shared test data is expected at "
		     "<source root>/../shared/testdata)",
		     dir, strerror(errno));
	if (npaths == 0)
		FAIL("no capture (*.pcap, *.pcapng) under %s", dir);
	qsort(paths, npaths, sizeof(*paths), compare_paths);
	for (size_t i = 0; i < npaths; i++) {
		load_capture(paths[i]);
		free(paths[i]);
	}
	free(paths);
	if (nframes == 0)
		FAIL("no frame read from the %zu captures under %s", npaths, dir);
}

/* ------------------------------------------------------------------------ */
/* comparison and report                                                    */
/* ------------------------------------------------------------------------ */

static void
print_hex(const uint8_t *b, uint32_t n)
{
	fprintf(stderr, "  frame (%u bytes): ", n);
	for (uint32_t i = 0; i < n; i++)
		fprintf(stderr, "%02x", b[i]);
	fputc('\n', stderr);
}

static void
print_pkt(const char *who, int r, const struct dpmon_pkt *p)
{
	fprintf(stderr,
		"  %s: reason=%d family=%u proto=%u ip_proto=%u fragment=%u vlan_depth=%u "
		"vlan_outer=%u vlan_inner=%u tcp_flags=%#04x ports=%u sport=%u dport=%u "
		"tunnels=%u l3_offset=%u l4_offset=%u anomalies=%#06x len=%u",
		who, r, p->family, p->proto, p->ip_proto, p->fragment, p->vlan_depth, p->vlan_outer,
		p->vlan_inner, p->tcp_flags, p->ports, p->sport, p->dport, p->tunnels, p->l3_offset,
		p->l4_offset, p->anomalies, p->len);
	if (r == DPMON_REASON_OK && p->family == 4)
		fprintf(stderr, " src4=%#010x dst4=%#010x", p->src4, p->dst4);
	fputc('\n', stderr);
}

static void
print_layout(const struct layout *l, uint32_t n)
{
	fprintf(stderr,
		"  mbuf layout: %s, bytes held %u, pkt_len %u, ol_flags %#llx, "
		"vlan_tci %#06x, vlan_tci_outer %#06x, segments cut at",
		l->name, n, l->pkt_len, (unsigned long long)l->ol_flags, l->tci, l->tci_outer);
	for (unsigned i = 0; i < l->ncuts; i++)
		fprintf(stderr, " %u", l->cuts[i]);
	fprintf(stderr, l->ncuts ? "\n" : " (one segment)\n");
}

/* Count a comparison; print the first MAX_REPORTED mismatches in full. */
static void
record(const char *entry, const struct layout *l, const uint8_t *b, uint32_t n, uint32_t decap,
       int rf, const struct dpmon_pkt *fast, int re, const struct dpmon_pkt *full)
{
	compared++;
	if (same_result(rf, fast, re, full))
		return;
	if (++mismatches > MAX_REPORTED)
		return;
	fprintf(stderr, "MISMATCH %lu: entry point %s, decap %#x\n", mismatches, entry, decap);
	print_hex(b, n);
	if (l != NULL)
		print_layout(l, n);
	print_pkt("fast path  ", rf, fast);
	print_pkt("full parser", re, full);
}

/* ------------------------------------------------------------------------ */
/* entry points                                                             */
/* ------------------------------------------------------------------------ */

/* The head of a fake mbuf of layout @p l: pkt_len, offload flags, stripped tags. */
static void
set_head(struct rte_mbuf *m, const struct layout *l, uint16_t nb_segs)
{
	m->nb_segs = nb_segs;
	m->pkt_len = l->pkt_len;
	m->ol_flags = l->ol_flags;
	m->vlan_tci = l->tci;
	m->vlan_tci_outer = l->tci_outer;
}

/*
 * The full parser's answer for the mbuf of layout @p l holding @p b (n
 * bytes): dpmon_parse_mbuf_full on one segment of the same bytes, so a
 * chain cut into segments is also checked against the frame in one piece.
 */
static int
expect_mbuf(const uint8_t *b, uint32_t n, const struct layout *l, uint32_t decap,
	    struct dpmon_pkt *p)
{
	static uint8_t scratch_full[DPMON_PARSE_GATHER];
	struct rte_mbuf m;

	assert(n <= UINT16_MAX);
	memset(&m, 0, sizeof(m));
	m.buf_addr = (void *)(uintptr_t)b;
	m.data_len = (uint16_t)n;
	set_head(&m, l, 1);
	return dpmon_parse_mbuf_full(&m, decap, p, scratch_full);
}

/* The packet type a NIC would report for @p b (n bytes) when it is an
 * untagged Ethernet frame with IPv4 or IPv6 and TCP or UDP by its EtherType
 * and protocol field (the fast path checks the rest), else 0. */
static uint32_t
ptype_guess(const uint8_t *b, uint32_t n)
{
	uint32_t l3, nh;

	if (n < 24)
		return 0;
	if (b[12] == 0x08 && b[13] == 0x00) {
		l3 = (b[14] & 0x0f) == 5 ? RTE_PTYPE_L3_IPV4 : RTE_PTYPE_L3_IPV4_EXT;
		nh = (b[20] & 0x3f) != 0 || b[21] != 0 ? 0 : b[23];
	} else if (b[12] == 0x86 && b[13] == 0xdd) {
		l3 = RTE_PTYPE_L3_IPV6;
		nh = b[20];
	} else {
		return 0;
	}
	if (nh == 6)
		return RTE_PTYPE_L2_ETHER | l3 | RTE_PTYPE_L4_TCP;
	if (nh == 17)
		return RTE_PTYPE_L2_ETHER | l3 | RTE_PTYPE_L4_UDP;
	return RTE_PTYPE_L2_ETHER | l3 | (nh == 0 ? RTE_PTYPE_L4_FRAG : 0);
}

/* A packet type for a frame whose report is wrong: one of the plain types
 * the fast path starts from (with or without _EXT_UNKNOWN), a fragment, or
 * any 32 bits. */
static uint32_t
ptype_random(void)
{
	static const uint32_t l3[] = {RTE_PTYPE_L3_IPV4, RTE_PTYPE_L3_IPV4_EXT_UNKNOWN,
				      RTE_PTYPE_L3_IPV6, RTE_PTYPE_L3_IPV6_EXT_UNKNOWN};
	static const uint32_t l4[] = {RTE_PTYPE_L4_TCP, RTE_PTYPE_L4_UDP, RTE_PTYPE_L4_FRAG};
	/* Its own sequence: the mutations stay those of the main one. */
	static uint64_t x = SEED ^ 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	if (x % 8 == 0)
		return (uint32_t)(x >> 32);
	return RTE_PTYPE_L2_ETHER | l3[(x >> 8) % 4] | l4[(x >> 16) % 3];
}

/* dpmon_parse_mbuf_decap on @p b (n bytes) as a fake mbuf chain of layout @p l. */
static void
compare_mbuf(const uint8_t *b, uint32_t n, const struct layout *l, uint32_t decap)
{
	struct rte_mbuf segs[MAX_SEGS + 1];
	uint8_t *bufs[MAX_SEGS + 1];
	struct dpmon_pkt fast, full;
	uint32_t from = 0;
	int rf, re;

	assert(l->ncuts <= MAX_SEGS);
	memset(segs, 0, sizeof(segs));
	for (unsigned i = 0; i <= l->ncuts; i++) {
		uint32_t to = i < l->ncuts ? l->cuts[i] : n;

		bufs[i] = xmalloc(to - from);
		memcpy(bufs[i], b + from, to - from);
		segs[i].buf_addr = bufs[i];
		segs[i].data_len = (uint16_t)(to - from);
		segs[i].next = i < l->ncuts ? &segs[i + 1] : NULL;
		from = to;
	}
	set_head(&segs[0], l, (uint16_t)(l->ncuts + 1));
	memset(&fast, 0xa5, sizeof(fast));
	memset(&full, 0xa5, sizeof(full));
	rf = dpmon_parse_mbuf_decap(&segs[0], decap, &fast, scratch);
	re = expect_mbuf(b, n, l, decap, &full);
	record("dpmon_parse_mbuf_decap", l, b, n, decap, rf, &fast, re, &full);
	/* With the packet type a NIC would report, and with a random one. */
	for (int k = 0; k < 2; k++) {
		segs[0].packet_type = k == 0 ? ptype_guess(b, n) : ptype_random();
		memset(&fast, 0xa5, sizeof(fast));
		rf = dpmon_parse_mbuf_ptype(&segs[0], decap, &fast, scratch);
		record(k == 0 ? "dpmon_parse_mbuf_ptype (its type)"
			      : "dpmon_parse_mbuf_ptype (a random type)",
		       l, b, n, decap, rf, &fast, re, &full);
	}
	for (unsigned i = 0; i <= l->ncuts; i++)
		free(bufs[i]);
}

/* Every mbuf layout of @p b; frames over 65535 bytes do not fit a segment. */
static void
compare_mbuf_layouts(const uint8_t *b, uint32_t n, uint32_t decap)
{
	static const uint64_t vlan = RTE_MBUF_F_RX_VLAN_STRIPPED;
	static const uint64_t qinq = RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_QINQ_STRIPPED;
	uint16_t tci = (uint16_t)rnd(), tco = (uint16_t)rnd();
	uint32_t cuts[MAX_SEGS];
	unsigned ncuts = 0;

	if (n > 65535)
		return;
	compare_mbuf(b, n, &(struct layout){"one segment", NULL, 0, n, 0, tci, tco}, decap);
	if (n > 0)
		compare_mbuf(
			b, n,
			&(struct layout){"data_len > pkt_len", NULL, 0, n - 1 - rn(n), 0, tci, tco},
			decap);
	compare_mbuf(
		b, n,
		&(struct layout){"pkt_len > bytes held", NULL, 0, n + 1 + rn(GROW), 0, tci, tco},
		decap);
	compare_mbuf(b, n, &(struct layout){"VLAN stripped", NULL, 0, n, vlan, tci, tco}, decap);
	compare_mbuf(b, n, &(struct layout){"QinQ stripped", NULL, 0, n, qinq, tci, tco}, decap);
	for (uint32_t at = 1 + rn(60); at < n && ncuts < MAX_SEGS; at += 1 + rn(200))
		cuts[ncuts++] = at;
	if (ncuts > 0)
		compare_mbuf(b, n, &(struct layout){"multi-segment", cuts, ncuts, n, 0, tci, tco},
			     decap);
}

/* Both entry points on @p src (n bytes, copied to an exact-size buffer). */
static void
compare_frame(const uint8_t *src, uint32_t n, uint32_t decap)
{
	uint8_t *b = xmalloc(n);
	struct dpmon_pkt fast, full;
	int rf, re;

	memcpy(b, src, n);
	memset(&fast, 0xa5, sizeof(fast));
	memset(&full, 0xa5, sizeof(full));
	rf = dpmon_parse_frame_decap(b, n, decap, &fast);
	re = dpmon_parse_frame_full(b, n, decap, &full);
	full_ok += re == DPMON_REASON_OK;
	record("dpmon_parse_frame_decap", NULL, b, n, decap, rf, &fast, re, &full);
	compare_mbuf_layouts(b, n, decap);
	free(b);
}

/* Decapsulation none, all and a random non-empty subset of the kinds. */
static void
compare_decaps(const uint8_t *b, uint32_t n)
{
	compare_frame(b, n, 0);
	compare_frame(b, n, DPMON_TUNNEL_ALL);
	compare_frame(b, n, 1u + rn(DPMON_TUNNEL_ALL));
}

/* ------------------------------------------------------------------------ */
/* mutations                                                                */
/* ------------------------------------------------------------------------ */

/* Sometimes insert a VLAN tag after the MAC addresses; @return new length. */
static uint32_t
insert_vlan(uint8_t *b, uint32_t n, uint32_t cap, uint32_t *l3, uint32_t *l4)
{
	static const uint16_t tpids[] = {0x8100, 0x88a8, 0x9100};

	if (rn(10) != 0 || n < 14 || n + 4 > cap)
		return n;
	memmove(b + 16, b + 12, n - 12);
	put16(b + 12, tpids[rn(3)]);
	put16(b + 14, (uint16_t)rnd());
	*l3 += 4;
	*l4 += 4;
	return n + 4;
}

/* One header-aimed change of @p b (n bytes); l3, l4: header offsets guessed. */
static void
mutate_field(uint8_t *b, uint32_t n, uint32_t l3, uint32_t l4)
{
	static const uint16_t ethertypes[] = {0x0800, 0x86dd, 0x8100, 0x88a8,
					      0x9100, 0x8847, 0x0806};
	static const uint8_t protos[] = {1, 6, 17, 58, 4, 41, 47, 132, 0, 43, 44, 60, 51, 59};
	static const uint16_t dports[] = {4789, 6635, 4754, 2152, 53, 80};
	static const uint8_t ver_ihl[] = {0x45, 0x44, 0x46, 0x4f, 0x40,
					  0x55, 0x60, 0x65, 0x35, 0x41};
	static const uint16_t frag[] = {0,      0x2000, 0x4000, 0x0001, 0x8000,
					0x1fff, 0x6000, 0x3fff, 0x2001};
	uint32_t at;

	switch (rn(16)) {
	case 0:
		if (n >= 14)
			put16(b + 12, ethertypes[rn(7)]);
		break;
	case 1:
		if (n >= 18)
			put16(b + 16, ethertypes[rn(7)]);
		break;
	case 2:
		if (l3 < n)
			b[l3] = ver_ihl[rn(10)];
		break;
	case 3:
		if (l3 + 4 <= n) { /* IPv4 total length */
			uint32_t c[] = {0,          1,           19,
					20,         21,          n - l3,
					n - l3 + 1, n - l3 - 1,  n - l3 + rn(9) - 4,
					0xffff,     rn(0x10000), 28,
					40};
			put16(b + l3 + 2, (uint16_t)c[rn(13)]);
		}
		break;
	case 4:
		if (l3 + 8 <= n)
			put16(b + l3 + 6, frag[rn(9)]);
		break;
	case 5:
		if (l3 + 10 <= n)
			b[l3 + 9] = protos[rn(14)];
		break;
	case 6:
		if (l3 + 6 <= n) { /* IPv6 payload length */
			uint32_t c[] = {0,           1,           7,
					8,           20,          n - l3 - 40,
					n - l3 - 39, n - l3 - 41, n - l3 - 40 + rn(9) - 4,
					0xffff,      rn(0x10000)};
			put16(b + l3 + 4, (uint16_t)c[rn(11)]);
		}
		break;
	case 7:
		if (l3 + 7 <= n)
			b[l3 + 6] = protos[rn(14)];
		break;
	case 8:
		if (l4 + 13 <= n)
			b[l4 + 12] = (uint8_t)(rn(16) << 4 | rn(2));
		break; /* TCP doff */
	case 9:
		if (l4 + 6 <= n) { /* UDP length */
			uint32_t c[] = {0,      7,          8,          9,
					n - l4, n - l4 + 1, n - l4 - 1, n - l4 + rn(9) - 4,
					0xffff, rn(0x10000)};
			put16(b + l4 + 4, (uint16_t)c[rn(10)]);
		}
		break;
	case 10:
		if (l4 + 4 <= n)
			put16(b + l4 + 2 * rn(2), dports[rn(6)]);
		break;
	case 11:
		if (l4 + 14 <= n)
			b[l4 + 13] = (uint8_t)rnd();
		break; /* TCP flags */
	case 12:
	case 13: /* a byte of the first 100: a bit flip or a random value */
		if (n) {
			at = rn(n < 100 ? n : 100);
			b[at] = rn(3) == 0 ? (uint8_t)(b[at] ^ (1u << rn(8))) : (uint8_t)rnd();
		}
		break;
	case 14:
		if (n)
			b[rn(n)] = (uint8_t)rnd();
		break;
	case 15:
		if (l3 < n)
			b[l3] = (uint8_t)rnd();
		break;
	}
}

/* Truncate, cut after L4, pad to the sizes the parser treats apart, or leave. */
static uint32_t
mutate_length(uint8_t *b, uint32_t n, uint32_t cap, uint32_t l4)
{
	uint32_t want, more;

	switch (rn(8)) {
	case 0:
	case 1:
		return rn(n + 1);
	case 2:
		want = l4 + rn(24);
		return want < n ? want : n;
	case 3:
		more = 1 + rn(64);
		if (n + more > cap)
			return n;
		for (uint32_t i = 0; i < more; i++)
			b[n + i] = rn(2) ? 0 : (uint8_t)rnd();
		return n + more;
	case 4:
		if (rn(6) != 0)
			return n;
		want = rn(2) ? 2030 + rn(40) : 65530 + rn(10);
		if (want <= n || want > cap)
			return n;
		memset(b + n, 0, want - n);
		return want;
	default:
		return n;
	}
}

/* Mutate @p b (n bytes, @p cap available); @return its new length. */
static uint32_t
mutate(uint8_t *b, uint32_t n, uint32_t cap)
{
	struct dpmon_pkt p;
	int r = dpmon_parse_frame_full(b, n, DPMON_TUNNEL_ALL, &p);
	uint32_t l3 = r == DPMON_REASON_OK ? p.l3_offset : 14;
	uint32_t l4 = r == DPMON_REASON_OK && p.l4_offset ? p.l4_offset : l3 + 20;

	n = insert_vlan(b, n, cap, &l3, &l4);
	for (unsigned k = 1 + rn(4); k > 0; k--)
		mutate_field(b, n, l3, l4);
	return mutate_length(b, n, cap, l4);
}

static void
compare_mutations(unsigned long count)
{
	for (unsigned long m = 0; m < count; m++) {
		const struct frame *src = &frames[rn((uint32_t)nframes)];
		uint32_t cap = src->n + GROW, n;
		uint8_t *b = xmalloc(cap);

		memcpy(b, src->b, src->n);
		n = mutate(b, src->n, cap);
		compare_decaps(b, n);
		free(b);
	}
}

int
main(int argc, char **argv)
{
	unsigned long capture_comparisons;

	if (argc != 2)
		FAIL("usage: %s TESTDATA_DIR", argv[0]);
	load_captures(argv[1]);
	for (size_t i = 0; i < nframes; i++)
		compare_decaps(frames[i].b, frames[i].n);
	capture_comparisons = compared;
	compare_mutations(MUTATIONS);
	printf("test_parse_diff: %lu captures, %zu frames (%lu comparisons), %u mutations "
	       "(seed %#llx), %lu comparisons in all, %lu full-parser OK on the contiguous "
	       "entry point, %lu mismatches\n",
	       captures, nframes, capture_comparisons, MUTATIONS, (unsigned long long)SEED,
	       compared, full_ok, mismatches);
	CHECK(nframes > 0);
	CHECK_EQ_U64(mismatches, 0);
	for (size_t i = 0; i < nframes; i++)
		free(frames[i].b);
	free(frames);
	return check_finish("test_parse_diff");
}
