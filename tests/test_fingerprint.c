/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fingerprint.c — an attack's fingerprint (lib/detect/fingerprint.h):
 * the header fields read from sampler copies cut at 128 bytes (UDP, TCP
 * flags, ICMP type and code, first and later IPv4 fragments, IPv6), the
 * distributions counted exactly, and the JSON the alert shows.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "fingerprint.h"
#include "frames.h"
#include "prefix_table.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static const uint8_t SRC6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
static const uint8_t DST6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

/* Decode frame @p f as the sampler hands it: at most 128 bytes, its wire length @p wire. */
static int
decode(const struct fb *f, uint32_t wire, uint16_t sport, uint16_t dport, bool ports,
       struct dpmon_fp_pkt *p)
{
	return dpmon_fp_decode(f->b, f->n < 128 ? f->n : 128, wire, sport, dport, ports, p);
}

static void
test_decode(void)
{
	struct fb f;
	struct dpmon_fp_pkt p;
	char text[64];

	/* A 1400-byte DNS response, copied at 128 bytes: the IP length is the wire's less 14. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, IP4(198, 51, 100, 7), IP4(10, 0, 0, 5), 0, 1386);
	fb_udp(&f, 53, 40000, 1358);
	REQUIRE(decode(&f, 1400, 53, 40000, true, &p) == 0);
	CHECK_EQ_U64(p.family, 4);
	CHECK_EQ_U64(p.ip_proto, 17);
	CHECK_EQ_U64(p.ip_len, 1386);
	CHECK_EQ_U64(p.ports, 1);
	CHECK_EQ_U64(p.sport, 53);
	CHECK_EQ_U64(p.dport, 40000);
	CHECK_EQ_U64(p.frag, DPMON_FP_FRAG_NONE);
	CHECK_EQ_U64(p.icmp, 0);
	CHECK(strcmp(dpmon_addr_format(&p.src, text, sizeof(text)), "198.51.100.7") == 0);

	/* A SYN, one VLAN tag: the IP length leaves the tag out. */
	fb_eth(&f, (const uint16_t[]){0x8100}, 1, 0x0800);
	fb_ipv4(&f, 5, 6, IP4(203, 0, 113, 1), IP4(10, 0, 0, 5), 0, 40);
	fb_tcp(&f, 1234, 443, 0x02);
	REQUIRE(decode(&f, f.n, 1234, 443, true, &p) == 0);
	CHECK_EQ_U64(p.ip_len, 40);
	CHECK_EQ_U64(p.tcp_flags, 0x02);
	CHECK_EQ_U64(p.dport, 443);
	CHECK(dpmon_fp_has(&p, DPMON_FP_FLAGS));

	/* ICMP echo request: type 8, code 0. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 1, IP4(203, 0, 113, 2), IP4(10, 0, 0, 5), 0, 84);
	fb_u8(&f, 8);
	fb_u8(&f, 0);
	fb_zero(&f, 62);
	REQUIRE(decode(&f, 98, 0, 0, false, &p) == 0);
	CHECK_EQ_U64(p.icmp, 1);
	CHECK_EQ_U64(p.icmp_type, 8);
	CHECK_EQ_U64(p.icmp_code, 0);
	CHECK(!dpmon_fp_has(&p, DPMON_FP_SPORT));
	CHECK(!dpmon_fp_has(&p, DPMON_FP_FLAGS));

	/* First fragment (MF, offset 0): ports kept; a later one (offset 185): none. */
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, IP4(203, 0, 113, 3), IP4(10, 0, 0, 5), 0x2000, 1500);
	fb_udp(&f, 5000, 6000, 1472);
	REQUIRE(decode(&f, 1514, 5000, 6000, true, &p) == 0);
	CHECK_EQ_U64(p.frag, DPMON_FP_FRAG_FIRST);
	CHECK_EQ_U64(p.ports, 1);
	fb_eth(&f, NULL, 0, 0x0800);
	fb_ipv4(&f, 5, 17, IP4(203, 0, 113, 3), IP4(10, 0, 0, 5), 185, 1500);
	fb_zero(&f, 1480);
	REQUIRE(decode(&f, 1514, 0, 0, false, &p) == 0);
	CHECK_EQ_U64(p.frag, DPMON_FP_FRAG_LATER);
	CHECK_EQ_U64(p.ports, 0);
	/* Ports the worker reported for a later fragment are not believed. */
	REQUIRE(decode(&f, 1514, 7, 7, true, &p) == 0);
	CHECK_EQ_U64(p.ports, 0);

	/* IPv6 UDP. */
	fb_eth(&f, NULL, 0, 0x86dd);
	fb_ipv6(&f, 17, SRC6, DST6, 108);
	fb_udp(&f, 123, 5555, 100);
	REQUIRE(decode(&f, f.n, 123, 5555, true, &p) == 0);
	CHECK_EQ_U64(p.family, 6);
	CHECK_EQ_U64(p.ip_len, 148);
	CHECK(strcmp(dpmon_addr_format(&p.src, text, sizeof(text)), "2001:db8:ff00::9") == 0);

	/* Not an IP packet. */
	fb_eth(&f, NULL, 0, 0x0806);
	fb_zero(&f, 28);
	CHECK(decode(&f, f.n, 0, 0, false, &p) == -EINVAL);
}

static struct dpmon_fp_pkt
udp_pkt(uint32_t src, uint16_t sport, uint16_t dport, uint16_t len)
{
	struct dpmon_fp_pkt p = {.family = 4, .ip_proto = 17, .ports = 1};

	dpmon_addr_from_v4(&p.src, src);
	p.sport = sport;
	p.dport = dport;
	p.ip_len = len;
	return p;
}

static void
test_distributions_and_json(void)
{
	struct dpmon_fp fp;
	struct dpmon_fp_pkt p;
	const struct dpmon_fp_pkt *ptr[10];
	struct dpmon_fp_value v[4];
	json_t *j;
	char *s;

	CHECK(dpmon_fp_init(&fp, 0) == -EINVAL);
	CHECK(dpmon_fp_init(&fp, DPMON_FP_MAX_PACKETS + 1) == -EINVAL);
	REQUIRE(dpmon_fp_init(&fp, 10) == 0);
	j = dpmon_fp_json(&fp, DPMON_FP_SAMPLING);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(strcmp(s,
		     "{\"destination_ports\":[],\"fragments\":{\"first\":0,\"later\":0,\"none\":0},"
		     "\"icmp\":[],\"ignored_packets\":0,\"lengths\":{\"buckets\":[],\"max\":null,"
		     "\"min\":null},"
		     "\"packets\":0,\"protocols\":[],\"source_ports\":[],\"sources\":[],"
		     "\"state\":\"sampling\",\"tcp_flags\":[],\"wanted\":10}") == 0);
	free(s);
	json_decref(j);

	/* 6 DNS responses from two resolvers, 2 SYNs, 1 ICMP echo, 1 later fragment. */
	for (int i = 0; i < 6; i++) {
		p = udp_pkt(i < 4 ? IP4(198, 51, 100, 7) : IP4(198, 51, 100, 8), 53,
			    (uint16_t)(40000 + i), (uint16_t)(1200 + 50 * i));
		CHECK(!dpmon_fp_add(&fp, &p));
	}
	for (int i = 0; i < 2; i++) {
		p = (struct dpmon_fp_pkt){.family = 4,
					  .ip_proto = 6,
					  .ports = 1,
					  .sport = 1000,
					  .dport = 443,
					  .tcp_flags = 0x02,
					  .ip_len = 40};
		dpmon_addr_from_v4(&p.src, IP4(203, 0, 113, 1));
		CHECK(!dpmon_fp_add(&fp, &p));
	}
	p = (struct dpmon_fp_pkt){
		.family = 4, .ip_proto = 1, .icmp = 1, .icmp_type = 8, .ip_len = 84};
	dpmon_addr_from_v4(&p.src, IP4(203, 0, 113, 2));
	CHECK(!dpmon_fp_add(&fp, &p));
	p = (struct dpmon_fp_pkt){
		.family = 4, .ip_proto = 17, .frag = DPMON_FP_FRAG_LATER, .ip_len = 1500};
	dpmon_addr_from_v4(&p.src, IP4(203, 0, 113, 3));
	CHECK(dpmon_fp_add(&fp, &p)); /* the 10th: full */
	CHECK(dpmon_fp_add(&fp, &p)); /* past it: not kept */
	CHECK_EQ_U64(fp.n, 10);

	for (int i = 0; i < 10; i++)
		ptr[i] = &fp.pkts[i];
	CHECK(dpmon_fp_values(ptr, 10, DPMON_FP_PROTO, v, 4) == 3);
	CHECK_EQ_U64(v[0].v, 17);
	CHECK_EQ_U64(v[0].packets, 7);
	CHECK_EQ_U64(v[1].v, 6);
	CHECK_EQ_U64(v[1].packets, 2);
	CHECK_EQ_U64(v[2].v, 1);
	CHECK(dpmon_fp_values(ptr, 10, DPMON_FP_SPORT, v, 1) == 2); /* 53 and 1000 */
	CHECK_EQ_U64(v[0].v, 53);
	CHECK_EQ_U64(v[0].packets, 6);

	j = dpmon_fp_json(&fp, DPMON_FP_READY);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(strcmp(s,
		     "{\"destination_ports\":[{\"packets\":2,\"port\":443},"
		     "{\"packets\":1,\"port\":40000},{\"packets\":1,\"port\":40001},"
		     "{\"packets\":1,\"port\":40002},{\"packets\":1,\"port\":40003},"
		     "{\"packets\":1,\"port\":40004},{\"packets\":1,\"port\":40005}],"
		     "\"fragments\":{\"first\":0,\"later\":1,\"none\":9},"
		     "\"icmp\":[{\"code\":0,\"packets\":1,\"type\":8}],\"ignored_packets\":0,"
		     "\"lengths\":{\"buckets\":[{\"from\":0,\"packets\":2,\"to\":63},"
		     "{\"from\":64,\"packets\":1,\"to\":127},"
		     "{\"from\":1024,\"packets\":6,\"to\":1499},"
		     "{\"from\":1500,\"packets\":1,\"to\":65535}],\"max\":1500,\"min\":40},"
		     "\"packets\":10,"
		     "\"protocols\":[{\"number\":17,\"packets\":7,\"protocol\":\"udp\"},"
		     "{\"number\":6,\"packets\":2,\"protocol\":\"tcp\"},"
		     "{\"number\":1,\"packets\":1,\"protocol\":\"icmp\"}],"
		     "\"source_ports\":[{\"packets\":6,\"port\":53},{\"packets\":2,\"port\":1000}],"
		     "\"sources\":[{\"address\":\"198.51.100.7\",\"packets\":4},"
		     "{\"address\":\"198.51.100.8\",\"packets\":2},"
		     "{\"address\":\"203.0.113.1\",\"packets\":2},"
		     "{\"address\":\"203.0.113.2\",\"packets\":1},"
		     "{\"address\":\"203.0.113.3\",\"packets\":1}],"
		     "\"state\":\"ready\",\"tcp_flags\":[{\"flags\":\"syn\",\"packets\":2,"
		     "\"value\":2}],"
		     "\"wanted\":10}") == 0);
	free(s);
	json_decref(j);
	dpmon_fp_fini(&fp);
	dpmon_fp_fini(&fp); /* again: nothing */
}

/* Packets from an ignored source are counted apart, never kept. */
static void
test_ignored_sources(void)
{
	struct dpmon_prefix ign[2];
	const struct dpmon_prefix *lists[1] = {ign};
	uint32_t n = 2;
	struct dpmon_prefix_table t = {0};
	struct dpmon_fp fp;
	struct dpmon_fp_pkt p;
	json_t *j;
	const char *why;

	REQUIRE(dpmon_prefix_parse("198.51.100.0/24", &ign[0], &why) == 0);
	REQUIRE(dpmon_prefix_parse("2001:db8:99::/48", &ign[1], &why) == 0);
	REQUIRE(dpmon_prefix_table_build(&t, lists, &n, 1, false) == 0);
	REQUIRE(dpmon_fp_init(&fp, 3) == 0);
	p = udp_pkt(0xc6336407, 53, 4444, 1200); /* 198.51.100.7: ignored */
	CHECK(!dpmon_fp_add_unless_ignored(&fp, &p, &t));
	CHECK(!dpmon_fp_add_unless_ignored(&fp, &p, &t));
	p = udp_pkt(0xcb007101, 53, 4444, 1200); /* 203.0.113.1 */
	CHECK(!dpmon_fp_add_unless_ignored(&fp, &p, &t));
	p.family = 6;
	REQUIRE(dpmon_addr_parse("2001:db8:99::1", &p.src) == 0); /* ignored */
	CHECK(!dpmon_fp_add_unless_ignored(&fp, &p, &t));
	REQUIRE(dpmon_addr_parse("2001:db8:98::1", &p.src) == 0);
	CHECK(!dpmon_fp_add_unless_ignored(&fp, &p, &t));
	CHECK(dpmon_fp_add_unless_ignored(&fp, &p, NULL)); /* no list: kept, the 3rd */
	CHECK(fp.n == 3);
	CHECK(fp.ignored == 3);
	for (uint32_t i = 0; i < fp.n; i++)
		CHECK(dpmon_prefix_table_lookup(&t, &fp.pkts[i].src) < 0);
	/* Full: nothing more is offered, ignored or not. */
	p = udp_pkt(0xc6336407, 53, 4444, 1200);
	CHECK(dpmon_fp_add_unless_ignored(&fp, &p, &t));
	CHECK(fp.ignored == 3);
	j = dpmon_fp_json(&fp, DPMON_FP_READY);
	CHECK(json_integer_value(json_object_get(j, "ignored_packets")) == 3);
	CHECK(json_integer_value(json_object_get(j, "packets")) == 3);
	json_decref(j);
	dpmon_fp_fini(&fp);
	dpmon_prefix_table_free(&t);
}

static void
test_names(void)
{
	char b[64];

	CHECK(strcmp(dpmon_fp_flags_text(0x12, '+', b, sizeof(b)), "syn+ack") == 0);
	CHECK(strcmp(dpmon_fp_flags_text(0, '+', b, sizeof(b)), "") == 0);
	CHECK(strcmp(dpmon_fp_flags_text(0xff, ',', b, sizeof(b)),
		     "fin,syn,rst,push,ack,urgent,ece,cwr") == 0);
	CHECK(strcmp(dpmon_fp_state_name(DPMON_FP_TIMED_OUT), "timed_out") == 0);
}

int
main(void)
{
	test_decode();
	test_distributions_and_json();
	test_ignored_sources();
	test_names();
	return check_finish("test_fingerprint");
}
