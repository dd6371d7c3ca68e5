/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profile.c — unit tests of lib/gen/profile*.c (dpmon-gen --profile).
 *
 * Design: each test writes a small profile to a temporary directory,
 * loads and renders it, and reads the capture back with libpcap, looking
 * at the few fields the generators' semantics decide: frame length,
 * VLAN id, addresses, ports, TCP flags. The cases pin down what the
 * integration test (tests/integration/test_profiles.py) only sees in
 * aggregate: the order of range stepping and its wrap, the kernel's
 * sequential addresses (min + 1 first) and port wrap (max excluded), the
 * skb repeat of clone_skb x burst, the size rules of both generators, the
 * kernel IMIX table, determinism, and that every bad line is reported
 * with its line number and makes the load fail with -EINVAL.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "profile.h"

#define MAX_FRAMES 4096

/* What a test looks at in one frame. */
struct frame {
	uint32_t len;
	int vlan; /* -1: untagged */
	unsigned family;
	uint8_t src[16], dst[16]; /* IPv4 in the first 4 bytes */
	uint16_t sport, dport;
	uint8_t tcp_flags;
	uint8_t proto;
};

static char tmpdir[256];
static struct frame frames[MAX_FRAMES];

static char *
tmp_path(const char *name)
{
	static char paths[4][320];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

static const char *
write_file(const char *name, const char *text)
{
	char *path = tmp_path(name);
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	fputs(text, f);
	fclose(f);
	return path;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
decode(const uint8_t *b, uint32_t len, struct frame *f)
{
	uint32_t l3 = 14, l4;
	uint16_t et = be16(b + 12);

	memset(f, 0, sizeof(*f));
	f->len = len;
	f->vlan = -1;
	if (et == 0x8100) {
		f->vlan = be16(b + 14) & 0xfff;
		et = be16(b + 16);
		l3 = 18;
	}
	if (et == 0x0800) {
		f->family = 4;
		f->proto = b[l3 + 9];
		memcpy(f->src, b + l3 + 12, 4);
		memcpy(f->dst, b + l3 + 16, 4);
		l4 = l3 + 20;
	} else {
		f->family = 6;
		f->proto = b[l3 + 6];
		memcpy(f->src, b + l3 + 8, 16);
		memcpy(f->dst, b + l3 + 24, 16);
		l4 = l3 + 40;
	}
	if (f->proto == 6 || f->proto == 17) {
		f->sport = be16(b + l4);
		f->dport = be16(b + l4 + 2);
	}
	if (f->proto == 6)
		f->tcp_flags = b[l4 + 13];
}

/* Load @p text as @p name, render @p n packets; returns the frame count read back. */
static int
render(const char *name, const char *text, uint64_t n, uint64_t seed,
       struct dpmon_profile_summary *s)
{
	struct dpmon_profile *p;
	struct dpmon_profile_summary dummy;
	char err[PCAP_ERRBUF_SIZE];
	const char *out = tmp_path("out.pcap");
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;
	int count = 0;

	REQUIRE(dpmon_profile_load(write_file(name, text), &p, stderr) == 0);
	REQUIRE(dpmon_profile_render(p, out, n, seed, s ? s : &dummy, stderr) == 0);
	dpmon_profile_free(p);
	pc = pcap_open_offline(out, err);
	REQUIRE(pc != NULL);
	while (count < MAX_FRAMES && pcap_next_ex(pc, &h, &data) == 1) {
		CHECK(h->caplen == h->len);
		decode(data, h->caplen, &frames[count++]);
	}
	pcap_close(pc);
	return count;
}

/* Last octet of an IPv4 address. */
static unsigned
v4_last(const uint8_t *a)
{
	return a[3];
}

/* ------------------------------------------------------------------------
 * Pktgen-DPDK.
 * --------------------------------------------------------------------- */

static const char range_prefix[] =
	"enable 0 range\nrange 0 proto udp\n"
	"range 0 src ip 198.51.100.1 198.51.100.1 198.51.100.1 0.0.0.0\n"
	"range 0 src port 100 100 102 1\n"
	"range 0 dst port start 9\nrange 0 dst port min 9\nrange 0 dst port max 9\n"
	"range 0 dst port inc 0\n";

static void
test_range_steps_and_wraps(void)
{
	char text[1024];
	int n;

	snprintf(text, sizeof(text), "%s%s", range_prefix,
		 "range 0 dst ip start 10.0.0.3\nrange 0 dst ip min 10.0.0.2\n"
		 "range 0 dst ip max 10.0.0.4\nrange 0 dst ip inc 0.0.0.1\n"
		 "range 0 size 64 64 128 32\n");
	n = render("r.pkt", text, 7, 1, NULL);
	REQUIRE(n == 7);
	/* start first, then +inc, past max back to min */
	static const unsigned dst[] = {3, 4, 2, 3, 4, 2, 3};
	static const unsigned sport[] = {100, 101, 102, 100, 101, 102, 100};
	static const unsigned len[] = {60, 92, 124, 60, 92, 124, 60};
	for (int i = 0; i < n; i++) {
		CHECK_EQ_U64(v4_last(frames[i].dst), dst[i]);
		CHECK_EQ_U64(frames[i].sport, sport[i]);
		CHECK_EQ_U64(frames[i].len, len[i]);
		CHECK_EQ_U64(frames[i].proto, 17);
	}
}

static void
test_pktgen_sizes(void)
{
	/* below 64 (FCS included) is raised to 64: 60 captured */
	render("small.pkt",
	       "set 0 size 40\nset 0 proto udp\nset 0 src ip 198.51.100.1/24\n"
	       "set 0 dst ip 10.0.0.1\n",
	       2, 1, NULL);
	CHECK_EQ_U64(frames[0].len, 60);
	/* IPv6: at least 78 with the FCS, 74 captured */
	render("v6.pkt",
	       "set 0 type ipv6\nset 0 proto udp\nset 0 size 64\n"
	       "set 0 src ip 2001:db8:ffff::1/64\nset 0 dst ip 2001:db8:10::1\n",
	       2, 1, NULL);
	CHECK_EQ_U64(frames[0].len, 74);
	CHECK_EQ_U64(frames[0].family, 6);
	/* VLAN: the tag is inside the size */
	render("vlan.pkt",
	       "set 0 size 128\nset 0 vlan 42\nenable 0 vlan\nset 0 proto tcp\n"
	       "set 0 src ip 198.51.100.1/24\nset 0 dst ip 10.0.0.1\n",
	       2, 1, NULL);
	CHECK_EQ_U64(frames[0].len, 124);
	CHECK_EQ_U64(frames[0].vlan, 42);
	CHECK_EQ_U64(frames[0].tcp_flags, 0x10); /* pktgen's default: ACK */
}

static void
test_sequence_order_and_flags(void)
{
	struct dpmon_profile_summary s;
	const char *text =
		"seq 0 0 dst 02:00:00:00:00:02 src 02:00:00:00:00:01 dst 10.0.0.1 src 10.0.1.1/24 "
		"sport 1 dport 2 ipv4 tcp vlan 1 size 64\n"
		"seq 1 0 02:00:00:00:00:02 02:00:00:00:00:01 10.0.0.2 10.0.1.1/24 3 4 ipv4 icmp 1 "
		"100\n"
		"set 0 seq_cnt 2\n";
	int n = render("seq.pkt", text, 5, 1, &s);

	REQUIRE(n == 5);
	for (int i = 0; i < n; i++) {
		CHECK_EQ_U64(v4_last(frames[i].dst), (unsigned)(i % 2 + 1));
		CHECK_EQ_U64(frames[i].proto, i % 2 ? 1 : 6);
		CHECK_EQ_U64(frames[i].len, i % 2 ? 96 : 60);
	}
	CHECK_EQ_U64(s.proto[DPMON_PROTO_TCP].packets, 3);
	CHECK_EQ_U64(s.proto[DPMON_PROTO_ICMP].packets, 2);
	CHECK_EQ_U64(s.tcp_syn, 0);
	CHECK_EQ_U64(s.total.bytes, 3 * 60 + 2 * 96);
}

static void
test_syn_flags(void)
{
	struct dpmon_profile_summary s;

	render("syn.pkt",
	       "set 0 proto tcp\nset 0 tcp flag clr all\nset 0 tcp flag set syn\n"
	       "set 0 src ip 198.51.100.1/24\nset 0 dst ip 10.0.0.1\n",
	       4, 1, &s);
	CHECK_EQ_U64(frames[0].tcp_flags, 0x02);
	CHECK_EQ_U64(s.tcp_syn, 4);
}

/* ------------------------------------------------------------------------
 * Kernel pktgen.
 * --------------------------------------------------------------------- */

static void
test_kernel_sequential_and_repeat(void)
{
	const char *text = "pg_set \"dst_min 10.0.0.1\"\npg_set \"dst_max 10.0.0.3\"\n"
			   "pg_set \"src_min 198.51.100.1\"\npg_set \"src_max 198.51.100.1\"\n"
			   "pg_set \"udp_src_min 10\"\npg_set \"udp_src_max 12\"\n"
			   "pg_set \"clone_skb 2\"\npg_set \"burst 1\"\n";
	int n = render("seq.sh", text, 8, 1, NULL);

	REQUIRE(n == 8);
	/* a new skb every 2 packets; addresses +1 first (min+1), wrap past max;
	 * ports +1, back to min on reaching max (max itself never sent) */
	static const unsigned dst[] = {2, 2, 3, 3, 1, 1, 2, 2};
	static const unsigned sport[] = {11, 11, 10, 10, 11, 11, 10, 10};
	for (int i = 0; i < n; i++) {
		CHECK_EQ_U64(v4_last(frames[i].dst), dst[i]);
		CHECK_EQ_U64(frames[i].sport, sport[i]);
		CHECK_EQ_U64(frames[i].len, 60); /* default pkt_size, no FCS */
		CHECK_EQ_U64(frames[i].proto, 17);
	}
}

static void
test_kernel_random_and_sizes(void)
{
	bool seen[256] = {false};
	unsigned distinct = 0;
	int n;

	n = render("rnd.sh",
		   "pg_set \"dst 10.0.0.9\"\npg_set \"src_min 198.51.100.10\"\n"
		   "pg_set \"src_max 198.51.100.14\"\npg_set \"flag IPSRC_RND\"\n"
		   "pg_set \"pkt_size 40\"\n",
		   400, 3, NULL);
	for (int i = 0; i < n; i++) {
		unsigned a = v4_last(frames[i].src);
		CHECK(a >= 10 && a < 14); /* [min, max) as the kernel draws */
		distinct += !seen[a];
		seen[a] = true;
		CHECK_EQ_U64(frames[i].len, 58); /* 14 + 20 + 8 + 16-byte pktgen header */
	}
	CHECK_EQ_U64(distinct, 4);
	render("v6.sh",
	       "pg_set \"dst6 2001:db8:10::1\"\npg_set \"src6 2001:db8:ffff::1\"\n"
	       "pg_set \"dst6_min 2001:db8:10::1\"\npg_set \"dst6_max 2001:db8:10::ff\"\n"
	       "pg_set \"vlan_id 7\"\n",
	       200, 1, NULL);
	for (int i = 0; i < 200; i++) {
		CHECK_EQ_U64(frames[i].len, 82); /* 14 + 4 + 40 + 8 + 16 */
		CHECK_EQ_U64(frames[i].vlan, 7);
		CHECK(frames[i].dst[15] & 1); /* (random | ::1) & ::ff: odd */
		CHECK(memcmp(frames[i].dst, "\x20\x01\x0d\xb8\x00\x10\0\0\0\0\0\0\0\0\0", 15) == 0);
	}
}

static void
test_kernel_imix(void)
{
	struct dpmon_profile_summary a, b;
	unsigned small = 0, mid = 0, big = 0;
	int n = render("imix.sh",
		       "pg_set \"dst 10.0.1.10\"\npg_set \"src_min 198.51.100.1\"\n"
		       "pg_set \"imix_weights 60,7 590,4 1514,1\"\n",
		       4000, 5, &a);

	for (int i = 0; i < n; i++) {
		small += frames[i].len == 60;
		mid += frames[i].len == 590;
		big += frames[i].len == 1514;
	}
	CHECK_EQ_U64(small + mid + big, 4000);
	/* the kernel's table: 58 / 33 / 9 slots of 100 */
	CHECK(small > 2200 && small < 2440);
	CHECK(mid > 1220 && mid < 1420);
	CHECK(big > 280 && big < 440);
	render("imix.sh",
	       "pg_set \"dst 10.0.1.10\"\npg_set \"src_min 198.51.100.1\"\n"
	       "pg_set \"imix_weights 60,7 590,4 1514,1\"\n",
	       4000, 5, &b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0); /* deterministic */
}

/* ------------------------------------------------------------------------
 * Errors.
 * --------------------------------------------------------------------- */

static void
test_errors(void)
{
	struct dpmon_profile *p = (struct dpmon_profile *)1;
	char buf[4096] = "";
	FILE *err = fmemopen(buf, sizeof(buf) - 1, "w");
	const char *path = write_file("bad.pkt", "# ok\nset 0 sizee 64\n\nset 0 src ip 10.0.0.1\n"
						 "bogus\n");

	REQUIRE(err != NULL);
	CHECK(dpmon_profile_load(path, &p, err) == -EINVAL);
	fclose(err);
	CHECK(p == NULL);
	CHECK(strstr(buf, "bad.pkt:2: set sizee 64") != NULL);
	CHECK(strstr(buf, "bad.pkt:4: set src ip '10.0.0.1': needs ADDRESS/MASK") != NULL);
	CHECK(strstr(buf, "bad.pkt:5: unknown or incomplete command 'bogus'") != NULL);
	CHECK(dpmon_profile_load(tmp_path("missing.pkt"), &p, NULL) == -ENOENT);
	CHECK(dpmon_profile_load(write_file("x.txt", "set 0 size 64\n"), &p, NULL) == -EINVAL);
	CHECK(dpmon_profile_load(write_file("mix.sh",
					    "pg_set \"dst 10.0.0.1\"\n"
					    "pg_set \"dst6 2001:db8::1\"\npg_set \"src6 ::1\"\n"),
				 &p, NULL) == -EINVAL);
	CHECK(dpmon_profile_load(write_file("both.pkt", "enable 0 range\nset 0 seq_cnt 1\n"), &p,
				 NULL) == -EINVAL);
	/* counts: the profile's own, the kernel's default */
	REQUIRE(dpmon_profile_load(write_file("c.pkt", "set 0 count 77\nset 0 src ip 1.2.3.4/8\n"
						       "set 0 dst ip 10.0.0.1\n"),
				   &p, NULL) == 0);
	CHECK_EQ_U64(dpmon_profile_count(p), 77);
	CHECK(dpmon_profile_kind(p) == DPMON_PROFILE_PKTGEN_DPDK);
	dpmon_profile_free(p);
	REQUIRE(dpmon_profile_load(write_file("c.sh", "pg_set \"dst 10.0.0.1\"\n"
						      "pg_set \"src_min 10.0.0.2\"\n"),
				   &p, NULL) == 0);
	CHECK_EQ_U64(dpmon_profile_count(p), 1000);
	CHECK(dpmon_profile_kind(p) == DPMON_PROFILE_LINUX_PKTGEN);
	CHECK(dpmon_profile_render(p, tmp_path("no/such/dir.pcap"), 1, 1,
				   &(struct dpmon_profile_summary){0}, NULL) == -ENOENT);
	dpmon_profile_free(p);
}

int
main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_profile.XXXXXX", base);
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_range_steps_and_wraps();
	test_pktgen_sizes();
	test_sequence_order_and_flags();
	test_syn_flags();
	test_kernel_sequential_and_repeat();
	test_kernel_random_and_sizes();
	test_kernel_imix();
	test_errors();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish("test_profile");
}
