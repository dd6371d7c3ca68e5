/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_gen_attack.c — unit tests of lib/gen/attack.c (dpmon-gen --attack).
 *
 * Design: write a capture with every kind of attack on IPv4 and IPv6
 * victims, read it back with libpcap together with its labels file, and
 * check each frame with a small decoder of its own: the IP lengths match
 * the frame, the IPv4 header checksum verifies, every IP packet fits 1500
 * bytes, each victim gets its packets in turn and exactly
 * floor(k x P / 100) of its first k are labelled legitimate, and the
 * attack packets carry their kind's mark (source port, TCP flags,
 * destination port, fragment, source). Also: the summary against a
 * recount, determinism, and the option errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attack.h"
#include "check.h"

#define PACKETS 3600

/* What a frame holds, as far as the checks need. */
struct seen {
	unsigned family;
	uint8_t proto; /* the upper layer's, after an IPv6 fragment header */
	uint8_t flags;
	bool frag, later;
	uint16_t sport, dport;
	uint32_t ip_len; /* the whole IP packet */
	uint8_t src[16], dst[16];
};

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Decode frame @p f of @p len bytes; false when it is malformed. */
static bool
decode(const uint8_t *f, uint32_t len, struct seen *s)
{
	const uint8_t *l3 = f + 14, *l4;
	uint32_t sum = 0;

	memset(s, 0, sizeof(*s));
	if (be16(f + 12) == 0x0800) {
		uint16_t fo = be16(l3 + 6);

		s->family = 4;
		s->ip_len = be16(l3 + 2);
		s->proto = l3[9];
		memcpy(s->src + 12, l3 + 12, 4);
		memcpy(s->dst + 12, l3 + 16, 4);
		for (int i = 0; i < 20; i += 2)
			sum += be16(l3 + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		if (sum != 0xffff)
			return false;
		s->frag = (fo & 0x3fff) != 0;
		s->later = (fo & 0x1fff) != 0;
		l4 = l3 + 20;
	} else {
		s->family = 6;
		s->ip_len = 40u + be16(l3 + 4);
		s->proto = l3[6];
		memcpy(s->src, l3 + 8, 16);
		memcpy(s->dst, l3 + 24, 16);
		l4 = l3 + 40;
		if (s->proto == 44) {
			s->proto = l4[0];
			s->frag = true;
			s->later = (be16(l4 + 2) >> 3) != 0;
			l4 += 8;
		}
	}
	if (14 + s->ip_len != len || s->ip_len > 1500)
		return false;
	if (!s->later && (s->proto == 6 || s->proto == 17)) {
		s->sport = be16(l4);
		s->dport = be16(l4 + 2);
		s->flags = s->proto == 6 ? l4[13] : 0;
	}
	return true;
}

/* Does attack packet @p s carry the mark of @p kind? */
static bool
marked(enum dpmon_gen_attack_kind kind, const struct seen *s, uint64_t j)
{
	static const uint8_t one4[4] = {203, 0, 113, 66};

	switch (kind) {
	case DPMON_GEN_ATTACK_DNS_AMP:
		return s->proto == 17 && s->sport == 53 && s->ip_len >= 1200;
	case DPMON_GEN_ATTACK_NTP_AMP:
		return s->proto == 17 && s->sport == 123 &&
		       s->ip_len == (s->family == 4 ? 468 : 488);
	case DPMON_GEN_ATTACK_MEMCACHED:
		return s->proto == 17 && s->sport == 11211 && s->ip_len >= 1400;
	case DPMON_GEN_ATTACK_SYN:
		return s->proto == 6 && s->dport == 443 && s->flags == 0x02;
	case DPMON_GEN_ATTACK_FRAG:
		return s->proto == 17 && s->frag && s->later == (j % 3 != 0);
	case DPMON_GEN_ATTACK_ACK:
		return s->proto == 6 && s->flags == 0x10;
	case DPMON_GEN_ATTACK_UDP_SYN:
		return j % 2 == 0 ? s->proto == 17 && s->ip_len == (s->family == 4 ? 540 : 560)
				  : s->proto == 6 && s->dport == 80 && s->flags == 0x02;
	case DPMON_GEN_ATTACK_ONE_SOURCE:
		return s->proto == 17 && (s->family == 6 || memcmp(s->src + 12, one4, 4) == 0);
	case DPMON_GEN_ATTACK_SPOOFED:
	default:
		return s->proto == 17 && s->dport == 27015;
	}
}

static void
options(struct dpmon_gen_attack_opts *o, const char *pcap, const char *labels)
{
	char a[64];

	memset(o, 0, sizeof(*o));
	o->output = pcap;
	o->labels = labels;
	o->packets = PACKETS;
	o->legit_percent = 33;
	o->seed = 7;
	for (int k = 0; k < DPMON_GEN_ATTACK_KINDS; k++) {
		snprintf(a, sizeof(a), "10.0.0.%d", 11 + k);
		REQUIRE(dpmon_gen_attack_add_victim(o, (enum dpmon_gen_attack_kind)k, a, NULL) ==
			0);
		snprintf(a, sizeof(a), "2001:db8::%x", 0x11 + k);
		REQUIRE(dpmon_gen_attack_add_victim(o, (enum dpmon_gen_attack_kind)k, a, NULL) ==
			0);
	}
}

static void
test_capture(void)
{
	char pcap_path[] = "/tmp/dpmon-test-attack-XXXXXX", labels_path[64], err[PCAP_ERRBUF_SIZE];
	struct dpmon_gen_attack_opts o;
	struct dpmon_gen_attack_summary s;
	uint64_t k[DPMON_GEN_MAX_VICTIMS] = {0}, legit[DPMON_GEN_MAX_VICTIMS] = {0};
	uint64_t att[DPMON_GEN_MAX_VICTIMS] = {0}, bad = 0, bytes = 0, idx = 0;
	struct pcap_pkthdr *h;
	const u_char *f;
	pcap_t *pd;
	FILE *lab;
	int fd = mkstemp(pcap_path);

	REQUIRE(fd >= 0);
	close(fd);
	snprintf(labels_path, sizeof(labels_path), "%s.labels", pcap_path);
	options(&o, pcap_path, labels_path);
	REQUIRE(dpmon_gen_attack_write(&o, &s, stderr) == 0);
	CHECK_EQ_U64(s.packets, PACKETS);
	pd = pcap_open_offline(pcap_path, err);
	lab = fopen(labels_path, "rb");
	REQUIRE(pd != NULL && lab != NULL);
	while (pcap_next_ex(pd, &h, &f) == 1) {
		uint32_t v = (uint32_t)(idx % o.n_victims);
		int label = fgetc(lab);
		bool want_legit = (k[v] + 1) * 33 / 100 > k[v] * 33 / 100;
		struct seen sn;
		size_t off;

		k[v]++;
		bytes += h->caplen;
		off = o.victims[v].family == 4 ? 12 : 0;
		if (!decode(f, h->caplen, &sn) ||
		    memcmp(sn.dst + off, o.victims[v].addr.b + off, 16 - off) != 0 ||
		    sn.family != o.victims[v].family ||
		    label != (want_legit ? DPMON_GEN_LABEL_LEGITIMATE : DPMON_GEN_LABEL_ATTACK) ||
		    (!want_legit && !marked(o.victims[v].kind, &sn, att[v]))) {
			if (bad++ == 0)
				fprintf(stderr,
					"frame %" PRIu64 " (victim %u, label %d) is wrong\n", idx,
					v, label);
		}
		if (want_legit)
			legit[v]++;
		else
			att[v]++;
		idx++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(idx, PACKETS);
	CHECK(fgetc(lab) == EOF);
	CHECK_EQ_U64(bytes, s.bytes);
	for (uint32_t v = 0; v < o.n_victims; v++) {
		CHECK_EQ_U64(s.victims[v].legitimate_packets, legit[v]);
		CHECK_EQ_U64(s.victims[v].attack_packets, att[v]);
		CHECK_EQ_U64(legit[v], PACKETS / 18 * 33 / 100); /* 200 each: 66 legitimate */
	}
	fclose(lab);
	pcap_close(pd);
	unlink(pcap_path);
	unlink(labels_path);
}

/* Read the whole file @p path into a malloc'd buffer; *n its length. */
static char *
slurp(const char *path, long *n)
{
	FILE *fp = fopen(path, "rb");
	char *b = NULL;

	if (fp != NULL && fseek(fp, 0, SEEK_END) == 0 && (*n = ftell(fp)) > 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (b = malloc((size_t)*n)) != NULL &&
	    fread(b, 1, (size_t)*n, fp) != (size_t)*n) {
		free(b);
		b = NULL;
	}
	if (fp != NULL)
		fclose(fp);
	return b;
}

static void
test_determinism_and_errors(void)
{
	const char *p1 = "/tmp/dpmon-test-attack-1.pcap", *p2 = "/tmp/dpmon-test-attack-2.pcap";
	struct dpmon_gen_attack_opts o;
	struct dpmon_gen_attack_summary s;
	enum dpmon_gen_attack_kind kind;
	const char *why = NULL;
	long n1 = 0, n2 = 0;
	char *b1, *b2;

	options(&o, p1, NULL);
	REQUIRE(dpmon_gen_attack_write(&o, &s, NULL) == 0);
	o.output = p2;
	REQUIRE(dpmon_gen_attack_write(&o, &s, NULL) == 0);
	b1 = slurp(p1, &n1);
	b2 = slurp(p2, &n2);
	CHECK(b1 != NULL && b2 != NULL && n1 == n2 && memcmp(b1, b2, (size_t)n1) == 0);
	free(b1);
	free(b2);
	unlink(p1);
	unlink(p2);

	CHECK(dpmon_gen_attack_kind_parse("udp-syn", &kind) == 0 &&
	      kind == DPMON_GEN_ATTACK_UDP_SYN);
	CHECK(dpmon_gen_attack_kind_parse("smurf", &kind) == -EINVAL);
	CHECK(strcmp(dpmon_gen_attack_kind_name(DPMON_GEN_ATTACK_ONE_SOURCE), "one-source") == 0);
	CHECK(dpmon_gen_attack_add_victim(&o, kind, "10.0.0.11", &why) == -EINVAL);
	CHECK(strcmp(why, "this victim is already attacked") == 0);
	CHECK(dpmon_gen_attack_add_victim(&o, kind, "10.0.0.256", &why) == -EINVAL);
	CHECK(strcmp(why, "expected an IPv4 or IPv6 address") == 0);
	o.legit_percent = 101;
	CHECK(dpmon_gen_attack_write(&o, &s, NULL) == -EINVAL);
	o.legit_percent = 33;
	o.n_victims = 0;
	CHECK(dpmon_gen_attack_write(&o, &s, NULL) == -EINVAL);
	options(&o, "/nonexistent-dir/x.pcap", NULL);
	CHECK(dpmon_gen_attack_write(&o, &s, NULL) < 0);
	CHECK_EQ_U64(s.packets, 0);
}

int
main(void)
{
	test_capture();
	test_determinism_and_errors();
	return check_finish("test_gen_attack");
}
