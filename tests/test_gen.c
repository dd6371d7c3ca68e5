/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_gen.c — unit tests of lib/gen/gen.c (dpmon-gen's writer).
 *
 * Design: every test writes a small capture to a temporary file, reads it
 * back with libpcap and checks it with an independent minimal decoder
 * (Ethernet, one optional 802.1Q tag, IPv4/IPv6, TCP/UDP/ICMP): IP
 * lengths match the frame, every checksum verifies over the whole
 * segment, and a recount of per-subnet ingress/egress packets and bytes
 * per protocol, of the totals and of the hosts used equals the summary
 * exactly. Also: determinism, the VLAN tag, IMIX sizes, growth to the
 * minimum size, direction percentages, option validation, the JSON
 * summary (parsed back with jansson).
 *
 * CHECK prints file:line and the failed expression and counts; the exit
 * status is 1 when anything failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gen.h"

/* CHECK inside a per-packet loop: report the first failure only, then stop the loop. */
#define CHECK_LOOP(cond)                                                                   \
	if (!(cond)) {                                                                     \
		fprintf(stderr, "%s:%d: CHECK failed (frame %" PRIu64 "): %s\n", __FILE__, \
			__LINE__, idx, #cond);                                             \
		test_failures++;                                                           \
		break;                                                                     \
	}

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

static char tmpdir[256];

static char *
tmp_path(const char *name)
{
	static char paths[8][320];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

static void
opts_init(struct dpmon_gen_opts *o, const char *file, uint64_t packets)
{
	dpmon_gen_defaults(o);
	o->output = tmp_path(file);
	o->packets = packets;
}

static void
add_subnet(struct dpmon_gen_opts *o, const char *text)
{
	CHECK(dpmon_gen_add_subnet(o, text, NULL) == 0);
}

static uint32_t
get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* Ones' complement checksum over @p n bytes plus @p sum; 0 when the data verifies. */
static uint16_t
csum(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sum += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* What the decoder found in one frame. */
struct decoded {
	unsigned family;
	int vlan; /* -1 when untagged */
	struct dpmon_addr src, dst;
	enum dpmon_proto proto;
	uint32_t len;
	bool lengths_ok; /* IP lengths cover the frame exactly */
	bool csum_ok;    /* IPv4 header and L4 checksums verify */
	uint8_t l4[20];  /* first L4 bytes (zero padded) */
};

static enum dpmon_proto
proto_class(unsigned family, uint8_t p)
{
	if (p == 6)
		return DPMON_PROTO_TCP;
	if (p == 17)
		return DPMON_PROTO_UDP;
	if ((family == 4 && p == 1) || (family == 6 && p == 58))
		return DPMON_PROTO_ICMP;
	return DPMON_PROTO_OTHER;
}

/* Check the L4 checksum over the whole segment (pseudo-header where defined). */
static bool
l4_csum_ok(const struct decoded *d, uint8_t proto, const uint8_t *l4, uint32_t l4_len)
{
	uint32_t sum = proto + (l4_len >> 16) + (l4_len & 0xffff);
	const uint8_t *s = d->family == 4 ? d->src.b + 12 : d->src.b;
	const uint8_t *t = d->family == 4 ? d->dst.b + 12 : d->dst.b;
	size_t alen = d->family == 4 ? 4 : 16;

	if (d->proto == DPMON_PROTO_OTHER)
		return true;
	if (d->proto == DPMON_PROTO_ICMP && d->family == 4)
		return csum(0, l4, l4_len) == 0;
	for (size_t i = 0; i < alen; i += 2)
		sum += get16(s + i) + get16(t + i);
	return csum(sum, l4, l4_len) == 0;
}

static bool
decode(const uint8_t *f, uint32_t caplen, struct decoded *d)
{
	uint32_t off = 14, type = get16(f + 12), l4_off, l4_len;
	uint8_t proto;

	memset(d, 0, sizeof(*d));
	d->len = caplen;
	d->vlan = -1;
	if (type == 0x8100) {
		d->vlan = (int)(get16(f + 14) & 0x0fff);
		type = get16(f + 16);
		off = 18;
	}
	if (type == 0x0800 && caplen >= off + 20 && f[off] == 0x45) {
		d->family = 4;
		dpmon_addr_from_v4(&d->src,
				   (uint32_t)get16(f + off + 12) << 16 | get16(f + off + 14));
		dpmon_addr_from_v4(&d->dst,
				   (uint32_t)get16(f + off + 16) << 16 | get16(f + off + 18));
		proto = f[off + 9];
		d->lengths_ok = get16(f + off + 2) == caplen - off;
		d->csum_ok = csum(0, f + off, 20) == 0;
		l4_off = off + 20;
	} else if (type == 0x86dd && caplen >= off + 40 && f[off] >> 4 == 6) {
		d->family = 6;
		memcpy(d->src.b, f + off + 8, 16);
		memcpy(d->dst.b, f + off + 24, 16);
		proto = f[off + 6];
		d->lengths_ok = get16(f + off + 4) == caplen - off - 40;
		d->csum_ok = true;
		l4_off = off + 40;
	} else {
		return false;
	}
	d->proto = proto_class(d->family, proto);
	l4_len = caplen - l4_off;
	if (d->proto == DPMON_PROTO_UDP)
		d->lengths_ok = d->lengths_ok && l4_len >= 8 && get16(f + l4_off + 4) == l4_len;
	if (d->proto == DPMON_PROTO_TCP)
		d->lengths_ok = d->lengths_ok && l4_len >= 20 && f[l4_off + 12] >> 4 == 5;
	memcpy(d->l4, f + l4_off, l4_len < 20 ? l4_len : 20);
	d->csum_ok = d->csum_ok && l4_csum_ok(d, proto, f + l4_off, l4_len);
	return true;
}

/* The subnet holding @p a, or -1. */
static int
subnet_of(const struct dpmon_gen_subnet *sn, uint32_t n, const struct dpmon_addr *a)
{
	for (uint32_t i = 0; i < n; i++)
		if (dpmon_prefix_contains(&sn[i].prefix, a))
			return (int)i;
	return -1;
}

static int
cmp_addr(const void *x, const void *y)
{
	return dpmon_addr_cmp(x, y);
}

/* An independent recount, in the summary's own shape. */
struct recount {
	struct dpmon_gen_summary s;
	struct dpmon_addr *seen; /* monitored addresses, one per end */
	uint64_t n_seen;
	uint64_t frames, bad_decode, bad_len, bad_csum;
	uint64_t bad_ts;
	uint64_t self_addressed; /* source == destination */
};

static void
tally(struct dpmon_gen_count *c, uint32_t len)
{
	c->packets++;
	c->bytes += len;
}

static void
recount_frame(struct recount *rc, const struct dpmon_gen_subnet *sn, uint32_t n,
	      const struct decoded *d)
{
	int sub[2] = {subnet_of(sn, n, &d->src), subnet_of(sn, n, &d->dst)};
	const struct dpmon_addr *addr[2] = {&d->src, &d->dst};

	tally(&rc->s.total, d->len);
	tally(&rc->s.proto[d->proto], d->len);
	for (int end = 0; end < 2; end++) {
		struct dpmon_gen_dir_count *dc;
		if (sub[end] < 0)
			continue;
		dc = &rc->s.subnets[sub[end]].dir[end ? DPMON_DIR_INGRESS : DPMON_DIR_EGRESS];
		tally(&dc->all, d->len);
		tally(&dc->proto[d->proto], d->len);
		rc->seen[rc->n_seen++] = *addr[end];
	}
	if (sub[1] >= 0)
		tally(&rc->s.cat[DPMON_TOTAL_INGRESS], d->len);
	if (sub[0] >= 0)
		tally(&rc->s.cat[DPMON_TOTAL_EGRESS], d->len);
	if (sub[0] >= 0 && sub[1] >= 0)
		tally(&rc->s.cat[DPMON_TOTAL_INTERNAL], d->len);
	if (sub[0] < 0 && sub[1] < 0)
		tally(&rc->s.cat[DPMON_TOTAL_EXTERNAL], d->len);
}

/* Distinct hosts seen, in all and per subnet. */
static void
recount_hosts(struct recount *rc, const struct dpmon_gen_subnet *sn, uint32_t n)
{
	qsort(rc->seen, rc->n_seen, sizeof(rc->seen[0]), cmp_addr);
	for (uint64_t i = 0; i < rc->n_seen; i++) {
		if (i > 0 && dpmon_addr_cmp(&rc->seen[i], &rc->seen[i - 1]) == 0)
			continue;
		rc->s.hosts_used++;
		rc->s.subnets[subnet_of(sn, n, &rc->seen[i])].hosts_used++;
	}
}

/* Read @p path back and recount it; frames are also passed to @p each (may be NULL). */
static void
recount_file(const char *path, const struct dpmon_gen_subnet *sn, uint32_t n, uint64_t max_frames,
	     struct recount *rc, void (*each)(const struct decoded *, void *), void *arg)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, errbuf);
	struct pcap_pkthdr *h;
	const u_char *data;

	memset(rc, 0, sizeof(*rc));
	rc->s.subnets = calloc(n, sizeof(*rc->s.subnets));
	rc->seen = calloc(2 * max_frames + 1, sizeof(*rc->seen));
	CHECK(p != NULL && rc->s.subnets != NULL && rc->seen != NULL);
	if (p == NULL || rc->s.subnets == NULL || rc->seen == NULL)
		return;
	CHECK(pcap_datalink(p) == DLT_EN10MB);
	while (pcap_next_ex(p, &h, &data) == 1 && rc->frames < max_frames) {
		struct decoded d;
		uint64_t usec = rc->frames;
		if ((uint64_t)h->ts.tv_sec != DPMON_GEN_EPOCH_SEC + usec / 1000000 ||
		    (uint64_t)h->ts.tv_usec != usec % 1000000 || h->caplen != h->len)
			rc->bad_ts++;
		rc->frames++;
		if (!decode(data, h->caplen, &d)) {
			rc->bad_decode++;
			continue;
		}
		rc->bad_len += !d.lengths_ok;
		rc->bad_csum += !d.csum_ok;
		rc->self_addressed += dpmon_addr_cmp(&d.src, &d.dst) == 0;
		recount_frame(rc, sn, n, &d);
		if (each)
			each(&d, arg);
	}
	pcap_close(p);
	recount_hosts(rc, sn, n);
}

static void
recount_free(struct recount *rc)
{
	free(rc->s.subnets);
	free(rc->seen);
}

static bool
count_eq(const struct dpmon_gen_count *a, const struct dpmon_gen_count *b)
{
	return a->packets == b->packets && a->bytes == b->bytes;
}

static bool
dir_eq(const struct dpmon_gen_dir_count *a, const struct dpmon_gen_dir_count *b)
{
	for (int p = 0; p < DPMON_PROTO_MAX; p++)
		if (!count_eq(&a->proto[p], &b->proto[p]))
			return false;
	return count_eq(&a->all, &b->all);
}

/* Compare the recount with the summary, exactly. */
static void
check_summary(const struct recount *rc, const struct dpmon_gen_summary *s, uint64_t packets)
{
	CHECK(rc->frames == packets);
	CHECK(rc->bad_decode == 0);
	CHECK(rc->bad_len == 0);
	CHECK(rc->bad_csum == 0);
	CHECK(rc->bad_ts == 0);
	CHECK(rc->self_addressed == 0);
	CHECK(count_eq(&rc->s.total, &s->total));
	CHECK(s->total.packets == packets);
	for (int p = 0; p < DPMON_PROTO_MAX; p++)
		CHECK(count_eq(&rc->s.proto[p], &s->proto[p]));
	for (int t = 0; t < DPMON_TOTAL_MAX; t++)
		CHECK(count_eq(&rc->s.cat[t], &s->cat[t]));
	CHECK(s->cat[DPMON_TOTAL_EXTERNAL].packets == 0);
	CHECK(rc->s.hosts_used == s->hosts_used);
	for (uint32_t i = 0; i < s->n_subnets; i++) {
		const struct dpmon_gen_subnet_summary *a = &rc->s.subnets[i], *b = &s->subnets[i];
		CHECK(dir_eq(&a->dir[DPMON_DIR_INGRESS], &b->dir[DPMON_DIR_INGRESS]));
		CHECK(dir_eq(&a->dir[DPMON_DIR_EGRESS], &b->dir[DPMON_DIR_EGRESS]));
		CHECK(a->hosts_used == b->hosts_used);
	}
}

/* Write with @p o, recount, compare exactly; fills @p s (caller frees) when 0. */
static int
write_and_check(const struct dpmon_gen_opts *o, struct dpmon_gen_summary *s,
		void (*each)(const struct decoded *, void *), void *arg)
{
	struct dpmon_gen_subnet *sn;
	struct recount rc;
	int r = dpmon_gen_write(o, s, stderr);

	CHECK(r == 0);
	if (r != 0)
		return r;
	CHECK(s->n_subnets == (o->n_subnets ? o->n_subnets : 4));
	/* the summary's subnets are the ones in effect (defaults included) */
	sn = calloc(s->n_subnets, sizeof(*sn));
	CHECK(sn != NULL);
	if (sn == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_subnets; i++)
		sn[i] = s->subnets[i].subnet;
	recount_file(o->output, sn, s->n_subnets, o->packets, &rc, each, arg);
	check_summary(&rc, s, o->packets);
	recount_free(&rc);
	free(sn);
	return 0;
}

static bool
files_equal(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool eq = fa != NULL && fb != NULL;
	int ca, cb;

	while (eq) {
		ca = getc(fa);
		cb = getc(fb);
		eq = ca == cb;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return eq;
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

struct mixed_stats {
	uint64_t syn, icmp_v4_type8, icmp_v6_type128, gre, nonxt, ports_ok;
	uint64_t frames;
};

static void
mixed_each(const struct decoded *d, void *arg)
{
	struct mixed_stats *m = arg;
	uint32_t sport = get16(d->l4), dport = get16(d->l4 + 2);

	m->frames++;
	if (d->proto == DPMON_PROTO_TCP && (d->l4[13] & 0x02))
		m->syn++;
	if (d->proto == DPMON_PROTO_TCP || d->proto == DPMON_PROTO_UDP)
		m->ports_ok += sport >= 61440 && dport >= 61440;
	else
		m->ports_ok++;
	if (d->proto == DPMON_PROTO_ICMP && d->family == 4 && d->l4[0] == 8)
		m->icmp_v4_type8++;
	if (d->proto == DPMON_PROTO_ICMP && d->family == 6 && d->l4[0] == 128)
		m->icmp_v6_type128++;
	if (d->proto == DPMON_PROTO_OTHER && d->family == 4 && get16(d->l4 + 2) == 0x88b5)
		m->gre++;
	if (d->proto == DPMON_PROTO_OTHER && d->family == 6)
		m->nonxt++;
}

/* Defaults subnets, every protocol, internal traffic, several sizes. */
static void
test_mixed(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	struct mixed_stats m = {0};

	opts_init(&o, "mixed.pcap", 20000);
	CHECK(dpmon_gen_parse_mix(&o, "tcp=30,udp=30,icmp=20,other=20", NULL) == 0);
	CHECK(dpmon_gen_parse_sizes(&o, "1,64,200,1518", NULL) == 0);
	o.internal_percent = 25;
	o.hosts = 50;
	if (write_and_check(&o, &s, mixed_each, &m) != 0)
		return;
	CHECK(s.n_subnets == 4);
	CHECK(strcmp(s.subnets[0].subnet.name, "office") == 0);
	CHECK(strcmp(s.subnets[3].subnet.name, "office-v6") == 0);
	CHECK(s.hosts_configured == 200);
	CHECK(s.hosts_used == 200);
	CHECK(s.cat[DPMON_TOTAL_INTERNAL].packets > 4000 &&
	      s.cat[DPMON_TOTAL_INTERNAL].packets < 6000);
	CHECK(m.frames == 20000);
	/* 30:30:20:20 of 20000 = 6000, 6000, 4000, 4000, about 5 standard deviations */
	CHECK(s.proto[DPMON_PROTO_TCP].packets > 5680 && s.proto[DPMON_PROTO_TCP].packets < 6320);
	CHECK(s.proto[DPMON_PROTO_OTHER].packets > 3720 &&
	      s.proto[DPMON_PROTO_OTHER].packets < 4280);
	CHECK(m.ports_ok == m.frames);
	CHECK(m.syn > 0 && m.syn < s.proto[DPMON_PROTO_TCP].packets / 8);
	CHECK(m.icmp_v4_type8 + m.icmp_v6_type128 == s.proto[DPMON_PROTO_ICMP].packets);
	CHECK(m.icmp_v4_type8 > 0 && m.icmp_v6_type128 > 0);
	CHECK(m.gre + m.nonxt == s.proto[DPMON_PROTO_OTHER].packets);
	CHECK(m.gre > 0 && m.nonxt > 0);
	dpmon_gen_summary_free(&s);
	CHECK(s.subnets == NULL && s.output == NULL);
	unlink(o.output);
	dpmon_gen_opts_free(&o);
}

/* Mixed families, hosts limited: only the first N addresses of each subnet appear. */
struct host_range {
	const struct dpmon_gen_subnet *sn;
	uint32_t n, hosts;
	uint64_t outside;
};

static void
hosts_each(const struct decoded *d, void *arg)
{
	struct host_range *hr = arg;
	const struct dpmon_addr *a[2] = {&d->src, &d->dst};

	for (int e = 0; e < 2; e++) {
		int i = subnet_of(hr->sn, hr->n, a[e]);
		uint32_t low;
		if (i < 0)
			continue;
		low = (uint32_t)a[e]->b[12] << 24 | (uint32_t)a[e]->b[13] << 16 |
		      (uint32_t)a[e]->b[14] << 8 | a[e]->b[15];
		low -= dpmon_addr_v4(&hr->sn[i].prefix.addr);
		hr->outside += low < 1 || low > hr->hosts;
	}
}

static void
test_hosts_and_directions(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	struct host_range hr;

	opts_init(&o, "hosts.pcap", 5000);
	add_subnet(&o, "172.16.0.0/22=lab");
	add_subnet(&o, "2001:db8:1:2::/120=lab6");
	add_subnet(&o, "172.16.8.0/30=tiny");
	o.hosts = 2; /* a /30 holds 2 hosts */
	o.egress_percent = 100;
	hr = (struct host_range){.sn = o.subnets, .n = o.n_subnets, .hosts = 2};
	if (write_and_check(&o, &s, hosts_each, &hr) == 0) {
		CHECK(hr.outside == 0);
		CHECK(s.hosts_used == 6);
		CHECK(s.cat[DPMON_TOTAL_EGRESS].packets == 5000);
		CHECK(s.cat[DPMON_TOTAL_INGRESS].packets == 0);
		CHECK(strcmp(s.subnets[2].subnet.name, "tiny") == 0);
		dpmon_gen_summary_free(&s);
	}
	o.egress_percent = 0;
	if (write_and_check(&o, &s, NULL, NULL) == 0) {
		CHECK(s.cat[DPMON_TOTAL_INGRESS].packets == 5000);
		CHECK(s.cat[DPMON_TOTAL_EGRESS].packets == 0);
		dpmon_gen_summary_free(&s);
	}
	o.internal_percent = 100;
	if (write_and_check(&o, &s, NULL, NULL) == 0) {
		CHECK(s.cat[DPMON_TOTAL_INTERNAL].packets == 5000);
		CHECK(s.cat[DPMON_TOTAL_INGRESS].packets == 5000);
		CHECK(s.cat[DPMON_TOTAL_EGRESS].packets == 5000);
		dpmon_gen_summary_free(&s);
	}
	o.hosts = 3; /* does not fit the /30 */
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL);
	CHECK(dpmon_gen_write(&o, &s, NULL) == -EINVAL);
	CHECK(s.subnets == NULL);
	unlink(o.output);
	dpmon_gen_opts_free(&o);
}

static void
test_determinism(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	const char *a = tmp_path("det-a.pcap"), *b = tmp_path("det-b.pcap");
	const char *c = tmp_path("det-c.pcap");

	opts_init(&o, "det-a.pcap", 3000);
	CHECK(dpmon_gen_parse_sizes(&o, "imix", NULL) == 0);
	CHECK(dpmon_gen_parse_mix(&o, "tcp=1,udp=1,icmp=1,other=1", NULL) == 0);
	o.internal_percent = 10;
	o.seed = 42;
	CHECK(dpmon_gen_write(&o, &s, NULL) == 0);
	dpmon_gen_summary_free(&s);
	o.output = b;
	CHECK(dpmon_gen_write(&o, &s, NULL) == 0);
	dpmon_gen_summary_free(&s);
	CHECK(files_equal(a, b));
	o.output = c;
	o.seed = 43;
	CHECK(dpmon_gen_write(&o, &s, NULL) == 0);
	dpmon_gen_summary_free(&s);
	CHECK(!files_equal(a, c));
	unlink(a);
	unlink(b);
	unlink(c);
	dpmon_gen_opts_free(&o);
}

/* With --vlan, each frame is the untagged frame with a tag inserted after the MACs. */
static void
test_vlan(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s0, s1;
	char errbuf[PCAP_ERRBUF_SIZE];
	const char *plain = tmp_path("plain.pcap"), *tagged = tmp_path("tagged.pcap");
	pcap_t *p0, *p1;
	struct pcap_pkthdr *h0, *h1;
	const u_char *d0, *d1;
	uint64_t idx;

	opts_init(&o, "plain.pcap", 2000);
	CHECK(dpmon_gen_parse_sizes(&o, "64,100,1500", NULL) == 0);
	CHECK(write_and_check(&o, &s0, NULL, NULL) == 0);
	o.output = tagged;
	o.vlan = 1234;
	CHECK(write_and_check(&o, &s1, NULL, NULL) == 0);
	CHECK(s1.total.bytes == s0.total.bytes + 4 * 2000);
	p0 = pcap_open_offline(plain, errbuf);
	p1 = pcap_open_offline(tagged, errbuf);
	CHECK(p0 != NULL && p1 != NULL);
	for (idx = 0; p0 && p1 && pcap_next_ex(p0, &h0, &d0) == 1; idx++) {
		CHECK_LOOP(pcap_next_ex(p1, &h1, &d1) == 1);
		CHECK_LOOP(h1->caplen == h0->caplen + 4);
		CHECK_LOOP(get16(d1 + 12) == 0x8100 && get16(d1 + 14) == 1234);
		CHECK_LOOP(memcmp(d0, d1, 12) == 0);
		CHECK_LOOP(memcmp(d0 + 12, d1 + 16, h0->caplen - 12) == 0);
	}
	CHECK(idx == 2000);
	if (p0)
		pcap_close(p0);
	if (p1)
		pcap_close(p1);
	dpmon_gen_summary_free(&s0);
	dpmon_gen_summary_free(&s1);
	unlink(plain);
	unlink(tagged);
	dpmon_gen_opts_free(&o);
}

struct size_stats {
	uint64_t n64, n594, n1518, other;
	uint64_t below_min;
};

static void
imix_each(const struct decoded *d, void *arg)
{
	struct size_stats *st = arg;

	if (d->len == 64)
		st->n64++;
	else if (d->len == 594)
		st->n594++;
	else if (d->len == 1518)
		st->n1518++;
	else
		st->other++;
}

static void
test_imix(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	struct size_stats st = {0};
	const uint64_t n = 12000;

	opts_init(&o, "imix.pcap", n);
	add_subnet(&o, "10.20.0.0/16=a");
	add_subnet(&o, "10.30.0.0/24=b");
	CHECK(dpmon_gen_parse_sizes(&o, "imix", NULL) == 0);
	CHECK(o.n_sizes == 3);
	if (write_and_check(&o, &s, imix_each, &st) == 0) {
		CHECK(st.other == 0);
		/* 7:4:1 of 12000 = 7000, 4000, 1000; allow about 5 standard deviations */
		CHECK(st.n64 > 6730 && st.n64 < 7270);
		CHECK(st.n594 > 3740 && st.n594 < 4260);
		CHECK(st.n1518 > 850 && st.n1518 < 1150);
		CHECK(s.total.bytes == st.n64 * 64 + st.n594 * 594 + st.n1518 * 1518);
		dpmon_gen_summary_free(&s);
	}
	unlink(o.output);
	dpmon_gen_opts_free(&o);
}

static void
min_each(const struct decoded *d, void *arg)
{
	struct size_stats *st = arg;

	st->below_min += d->len != dpmon_gen_min_frame(d->family, d->proto);
}

/* --size 1: every frame grows to exactly its family/protocol minimum. */
static void
test_min_size(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	struct size_stats st = {0};

	CHECK(dpmon_gen_min_frame(4, DPMON_PROTO_TCP) == 54);
	CHECK(dpmon_gen_min_frame(4, DPMON_PROTO_UDP) == 42);
	CHECK(dpmon_gen_min_frame(4, DPMON_PROTO_ICMP) == 42);
	CHECK(dpmon_gen_min_frame(4, DPMON_PROTO_OTHER) == 38);
	CHECK(dpmon_gen_min_frame(6, DPMON_PROTO_TCP) == 74);
	CHECK(dpmon_gen_min_frame(6, DPMON_PROTO_UDP) == 62);
	CHECK(dpmon_gen_min_frame(6, DPMON_PROTO_ICMP) == 62);
	CHECK(dpmon_gen_min_frame(6, DPMON_PROTO_OTHER) == 54);
	opts_init(&o, "min.pcap", 4000);
	CHECK(dpmon_gen_parse_sizes(&o, "1", NULL) == 0);
	CHECK(dpmon_gen_parse_mix(&o, "other=1,icmp=1,udp=1,tcp=1", NULL) == 0);
	o.internal_percent = 50;
	if (write_and_check(&o, &s, min_each, &st) == 0) {
		CHECK(st.below_min == 0);
		dpmon_gen_summary_free(&s);
	}
	unlink(o.output);
	dpmon_gen_opts_free(&o);
}

/* The JSON summary parses and carries the same numbers; the text one prints. */
static void
test_printers(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	json_t *root, *sub;
	json_error_t jerr;

	opts_init(&o, "print.pcap", 1000);
	add_subnet(&o, "10.9.0.0/24=quote\"back\\slash");
	add_subnet(&o, "2001:db8:9::/64");
	o.internal_percent = 10;
	if (dpmon_gen_write(&o, &s, stderr) != 0) {
		CHECK(0);
		return;
	}
	mem = open_memstream(&text, &len);
	CHECK(dpmon_gen_summary_print_json(&s, mem) == 0);
	fclose(mem);
	root = json_loads(text, 0, &jerr);
	CHECK(root != NULL);
	if (root != NULL) {
		json_t *totals = json_object_get(root, "totals");
		sub = json_array_get(json_object_get(root, "subnets"), 0);
		CHECK(json_integer_value(json_object_get(totals, "packets")) == 1000);
		CHECK((uint64_t)json_integer_value(json_object_get(totals, "bytes")) ==
		      s.total.bytes);
		CHECK((uint64_t)json_integer_value(
			      json_object_get(json_object_get(totals, "internal"), "packets")) ==
		      s.cat[DPMON_TOTAL_INTERNAL].packets);
		CHECK(json_integer_value(json_object_get(json_object_get(totals, "external"),
							 "packets")) == 0);
		CHECK(strcmp(json_string_value(json_object_get(sub, "prefix")), "10.9.0.0/24") ==
		      0);
		CHECK(strcmp(json_string_value(json_object_get(sub, "name")),
			     "quote\"back\\slash") == 0);
		CHECK((uint64_t)json_integer_value(json_object_get(
			      json_object_get(json_object_get(sub, "egress"), "udp"), "bytes")) ==
		      s.subnets[0].dir[DPMON_DIR_EGRESS].proto[DPMON_PROTO_UDP].bytes);
		CHECK((uint64_t)json_integer_value(
			      json_object_get(json_object_get(sub, "ingress"), "packets")) ==
		      s.subnets[0].dir[DPMON_DIR_INGRESS].all.packets);
		CHECK(strcmp(json_string_value(json_object_get(
				     json_array_get(json_object_get(root, "subnets"), 1), "name")),
			     "") == 0);
		CHECK((uint64_t)json_integer_value(json_object_get(root, "hosts_used")) ==
		      s.hosts_used);
		CHECK(json_integer_value(json_object_get(root, "hosts_configured")) == 128);
		CHECK(json_integer_value(json_object_get(root, "seed")) == 1);
		json_decref(root);
	}
	free(text);
	text = NULL;
	mem = open_memstream(&text, &len);
	CHECK(dpmon_gen_summary_print_text(&s, mem) == 0);
	fclose(mem);
	CHECK(strstr(text, "10.9.0.0/24") != NULL && strstr(text, "2001:db8:9::/64") != NULL);
	CHECK(strstr(text, "internal") != NULL);
	free(text);
	dpmon_gen_summary_free(&s);
	unlink(o.output);
	dpmon_gen_opts_free(&o);
}

static void
test_empty_and_io_error(void)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p;

	opts_init(&o, "empty.pcap", 0);
	CHECK(dpmon_gen_write(&o, &s, stderr) == 0);
	CHECK(s.total.packets == 0 && s.hosts_used == 0);
	p = pcap_open_offline(o.output, errbuf);
	CHECK(p != NULL);
	if (p != NULL) {
		CHECK(pcap_next_ex(p, &h, &d) == PCAP_ERROR_BREAK);
		pcap_close(p);
	}
	dpmon_gen_summary_free(&s);
	unlink(o.output);
	o.output = "/nonexistent-dir-dpmon/x.pcap";
	CHECK(dpmon_gen_write(&o, &s, NULL) == -ENOENT);
	CHECK(s.subnets == NULL && s.output == NULL);
	dpmon_gen_opts_free(&o);
}

static void
test_validation(void)
{
	struct dpmon_gen_opts o;
	const char *why = NULL;

	dpmon_gen_defaults(&o);
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL); /* no output */
	o.output = tmp_path("never.pcap");
	CHECK(dpmon_gen_check(&o, NULL) == 0);
	CHECK(o.hosts == 64 && o.packets == 100000 && o.seed == 1 && o.peers == 256);
	CHECK(o.egress_percent == 30 && o.internal_percent == 0 && o.vlan == DPMON_GEN_NO_VLAN);
	CHECK(o.mix[DPMON_PROTO_TCP] == 40 && o.mix[DPMON_PROTO_UDP] == 50);
	CHECK(o.mix[DPMON_PROTO_ICMP] == 10 && o.mix[DPMON_PROTO_OTHER] == 0);
	CHECK(o.n_sizes == 1 && o.sizes[0] == 64);

	/* subnets */
	CHECK(dpmon_gen_add_subnet(&o, "10.0.0.1/24", &why) == -EINVAL && why != NULL);
	CHECK(dpmon_gen_add_subnet(&o, "10.0.0.0/33", NULL) == -EINVAL);
	CHECK(dpmon_gen_add_subnet(&o, "10.0.0.0/24=", NULL) == -EINVAL);
	CHECK(dpmon_gen_add_subnet(&o, "nonsense", NULL) == -EINVAL);
	CHECK(o.n_subnets == 0);
	add_subnet(&o, "10.0.0.0/16=big");
	add_subnet(&o, "10.0.5.0/24=inside");
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL); /* overlap */
	dpmon_gen_opts_free(&o);
	add_subnet(&o, "198.51.100.128/25");
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL); /* peer pool */
	dpmon_gen_opts_free(&o);
	add_subnet(&o, "2001:db8::/32");
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL); /* contains the IPv6 peer pool */
	dpmon_gen_opts_free(&o);
	add_subnet(&o, "10.0.0.0/24");
	add_subnet(&o, "10.0.1.0/24");
	o.hosts = 254;
	CHECK(dpmon_gen_check(&o, NULL) == 0);
	o.hosts = 255; /* the broadcast address is not a host */
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL);
	o.hosts = 64;
	o.peers = 509;
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL);
	o.peers = 508;
	CHECK(dpmon_gen_check(&o, NULL) == 0);
	o.vlan = 4095;
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL);
	o.vlan = 0;
	CHECK(dpmon_gen_check(&o, NULL) == 0);
	o.egress_percent = 101;
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL);
	o.egress_percent = 30;
	dpmon_gen_opts_free(&o);
	add_subnet(&o, "10.0.0.0/24");
	o.hosts = 1;
	o.internal_percent = 5;
	CHECK(dpmon_gen_check(&o, NULL) == -EINVAL); /* one host cannot talk to another */
	o.internal_percent = 0;
	CHECK(dpmon_gen_check(&o, NULL) == 0);

	/* mix */
	CHECK(dpmon_gen_parse_mix(&o, "tcp=1,udp=2,icmp=3,other=4", NULL) == 0);
	CHECK(o.mix[0] == 1 && o.mix[1] == 2 && o.mix[2] == 3 && o.mix[3] == 4);
	CHECK(dpmon_gen_parse_mix(&o, "udp=5", NULL) == 0);
	CHECK(o.mix[0] == 0 && o.mix[1] == 5 && o.mix[2] == 0 && o.mix[3] == 0);
	CHECK(dpmon_gen_parse_mix(&o, "tcp=0,udp=0", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_mix(&o, "sctp=1", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_mix(&o, "tcp=1,tcp=2", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_mix(&o, "tcp=-1", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_mix(&o, "tcp=1,", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_mix(&o, "tcp", NULL) == -EINVAL);
	CHECK(o.mix[1] == 5); /* unchanged by the failures */

	/* sizes */
	CHECK(dpmon_gen_parse_sizes(&o, "64,594,1518", NULL) == 0);
	CHECK(o.n_sizes == 3 && o.sizes[2] == 1518 && o.size_weights[0] == 1);
	CHECK(dpmon_gen_parse_sizes(&o, "0", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_sizes(&o, "65532", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_sizes(&o, "65531", NULL) == 0);
	CHECK(dpmon_gen_parse_sizes(&o, "64,,128", NULL) == -EINVAL);
	CHECK(dpmon_gen_parse_sizes(&o, "big", NULL) == -EINVAL);
	CHECK(o.n_sizes == 1 && o.sizes[0] == 65531);
	dpmon_gen_opts_free(&o);

	/* defaults */
	CHECK(dpmon_gen_default_subnets(&o) == 0);
	CHECK(o.n_subnets == 4);
	dpmon_gen_opts_free(&o);
}

int
main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_gen.XXXXXX", base);
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_validation();
	test_mixed();
	test_hosts_and_directions();
	test_determinism();
	test_vlan();
	test_imix();
	test_min_size();
	test_printers();
	test_empty_and_io_error();
	rmdir(tmpdir);
	return check_finish("test_gen");
}
