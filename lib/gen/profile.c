/*
 * profile.c — Pktgen-DPDK / kernel pktgen profiles rendered to pcap (see profile.h).
 *
 * Design. Parsing fills a struct dpmon_profile with "streams": packet
 * templates whose variable fields (source, destination, ports, size, VLAN
 * id) are struct field values with a mode saying how the generator moves
 * them from one packet (pktgen) or one skb (kernel) to the next. Parsing
 * is table-free and strict: each command has one function that checks its
 * exact token count and values; whatever no function accepts is reported
 * as "PATH:LINE: ..." and the load fails. Whole-profile checks (range mode
 * needs every ranged field, sequence entries must exist, ICMP is IPv4 only
 * in pktgen, ...) run after the last line.
 *
 * Rendering walks the packets: pick the stream (sequence: i mod n), move
 * the fields when the generator would, resolve the size with the
 * generator's minimums, build the frame (Ethernet, optional 802.1Q, IPv4
 * or IPv6, TCP/UDP/ICMP, payload) in one buffer and dump it. Addresses are
 * 128-bit integers (IPv4 in the low 32 bits) so stepping and masking are
 * plain arithmetic. Random draws use splitmix64 from the seed.
 */
#include "cksum.h"
#include "numbers.h"
#include "profile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h" /* DPMON_GEN_EPOCH_SEC */

typedef unsigned __int128 u128;

#define MAX_TOKENS 32
#define MAX_LINE 1024
#define MAX_SEQ 16            /* pktgen NUM_SEQ_PKTS */
#define MAX_IMIX 20           /* kernel MAX_IMIX_ENTRIES */
#define IMIX_PRECISION 100    /* kernel IMIX_PRECISION */
#define MAX_REPORTED 20
#define FCS 4
#define PKTGEN_MIN_FRAME 64   /* pktgen sizes, FCS included */
#define PKTGEN_MIN_V6 78      /* pktgen MIN_v6_PKT_SIZE, FCS included */
#define PKTGEN_MAX_FRAME 1518
#define KPKTGEN_HDR 16        /* struct pktgen_hdr: magic, seq, tv_sec, tv_usec */
#define KPKTGEN_MAGIC 0xbe9be955u
#define MAX_FRAME 9018
#define STDIO_BUFFER (1u << 20)

enum { TCP_FIN = 0x01, TCP_SYN = 0x02, TCP_RST = 0x04, TCP_PSH = 0x08, TCP_ACK = 0x10,
       TCP_URG = 0x20 };

/* How a field moves between packets (pktgen) or skbs (kernel). */
enum fmode {
	F_FIXED,      /* always start */
	F_STEP,       /* pktgen range: start first, += inc, past max -> min */
	F_KSEQ,       /* kernel address: ++ before each skb, past max -> min */
	F_KSEQ_PORT,  /* kernel UDP port: ++ before each skb, reaching max -> min */
	F_KRAND,      /* kernel: min + rand % (max - min) */
	F_KMASK,      /* kernel IPv6 dst6_min/max: (rand | min) & max */
};

struct field {
	enum fmode mode;
	u128 start, min, max, inc;
	u128 cur;
};

struct stream {
	unsigned family;     /* 4 or 6 */
	uint8_t proto;       /* 6, 17 or 1 */
	uint8_t tcp_flags;
	uint8_t ttl;
	bool tagged;
	uint8_t dmac[6], smac[6];
	struct field src, dst, sport, dport, size, vlan;
};

struct dpmon_profile {
	char *path;
	enum dpmon_profile_kind kind;
	uint64_t count;
	struct stream streams[MAX_SEQ];
	uint32_t n_streams;
	/* kernel only */
	uint32_t repeat;                 /* packets per skb */
	uint32_t imix_size[MAX_IMIX];
	uint32_t n_imix;
	uint8_t imix_dist[IMIX_PRECISION];
	bool udp_csum, no_timestamp;
};

/* ------------------------------------------------------------ parsing state */

/* Four values of a pktgen range field; @c set has bit i when value i was given. */
struct rfield {
	u128 v[4];
	unsigned fam[4];
	unsigned set;
};

struct seq_entry {
	bool set;
	struct stream s;
};

/* Everything a .pkt file says, before it becomes streams. */
struct pkt_conf {
	struct stream single; /* family, proto, flags, ttl, macs, fixed fields */
	bool src_set, dst_set;
	uint32_t vlan_id;
	bool vlan_on, range_on;
	uint32_t seq_cnt;
	unsigned range_family;
	uint8_t range_proto, range_flags;
	bool range_proto_set;
	uint8_t range_dmac[6], range_smac[6];
	struct rfield r_src, r_dst, r_sport, r_dport, r_size, r_vlan;
	struct seq_entry seq[MAX_SEQ];
};

/* Everything a kernel script says. */
struct k_conf {
	uint32_t pkt_size, clone_skb, burst, vlan_id;
	bool tagged, v4, v6;
	bool dst_set, src_set, dst6_set, src6_set;
	u128 dst_min, dst_max, src_min, src_max, dst6, src6, dst6_min, dst6_max;
	uint32_t usrc_min, usrc_max, udst_min, udst_max;
	bool ipsrc_rnd, ipdst_rnd, usrc_rnd, udst_rnd;
	uint8_t dmac[6], smac[6];
	uint32_t imix_w[MAX_IMIX];
};

struct parse {
	const char *path;
	unsigned line;
	FILE *err;
	unsigned n_errors;
	struct dpmon_profile *p;
	struct pkt_conf pc;
	struct k_conf kc;
};

static const uint8_t default_dmac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t default_smac[6] = {0x02, 0, 0, 0, 0, 0x01};

/* Report one problem at the current line (line 0: the whole file). */
static void
bad(struct parse *ps, const char *fmt, ...)
{
	va_list ap;

	ps->n_errors++;
	if (ps->err == NULL || ps->n_errors > MAX_REPORTED)
		return;
	if (ps->line)
		fprintf(ps->err, "%s:%u: ", ps->path, ps->line);
	else
		fprintf(ps->err, "%s: ", ps->path);
	va_start(ap, fmt);
	vfprintf(ps->err, fmt, ap);
	va_end(ap);
	fputc('\n', ps->err);
}

/* ------------------------------------------------------------ value parsers */

static u128
bytes_to_u128(const uint8_t *b, size_t n)
{
	u128 v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

/* An IPv4 or IPv6 address (no mask) into @p v, family into @p fam. */
static bool
parse_ip(const char *s, u128 *v, unsigned *fam)
{
	uint8_t b[16];

	if (inet_pton(AF_INET, s, b) == 1) {
		*v = bytes_to_u128(b, 4);
		*fam = 4;
		return true;
	}
	if (inet_pton(AF_INET6, s, b) == 1) {
		*v = bytes_to_u128(b, 16);
		*fam = 6;
		return true;
	}
	return false;
}

/* "ADDR/LEN": the address part; false without a valid mask. */
static bool
parse_ip_mask(const char *s, u128 *v, unsigned *fam)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	uint32_t len;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(buf))
		return false;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (!parse_ip(buf, v, fam))
		return false;
	return gen_parse_u32(slash + 1, *fam == 4 ? 32 : 128, &len) == 0;
}

/* MAC as 00:11:22:33:44:55 or 0011:2233:4455 (both pktgen forms). */
static bool
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned x[6];
	int n = -1;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &x[0], &x[1], &x[2], &x[3], &x[4], &x[5],
		   &n) == 6 && n == 17 && s[n] == '\0') {
		for (int i = 0; i < 6; i++)
			mac[i] = (uint8_t)x[i];
		return true;
	}
	n = -1;
	if (sscanf(s, "%4x:%4x:%4x%n", &x[0], &x[1], &x[2], &n) == 3 && n == 14 &&
	    s[n] == '\0') {
		for (int i = 0; i < 3; i++) {
			mac[2 * i] = (uint8_t)(x[i] >> 8);
			mac[2 * i + 1] = (uint8_t)x[i];
		}
		return true;
	}
	return false;
}

static bool
parse_tcp_flag(const char *s, uint8_t *flag)
{
	static const struct { const char *name; uint8_t bit; } t[] = {
		{"urg", TCP_URG}, {"ack", TCP_ACK}, {"psh", TCP_PSH}, {"rst", TCP_RST},
		{"syn", TCP_SYN}, {"fin", TCP_FIN}, {"all", 0x3f},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(s, t[i].name) == 0) {
			*flag = t[i].bit;
			return true;
		}
	}
	return false;
}

/* "start|minimum|maximum|increment|min|max|inc" -> 0..3, or -1. */
static int
smmi_index(const char *s)
{
	static const char *const names[] = {"start", "min", "max", "inc", "minimum",
					    "maximum", "increment"};
	static const int idx[] = {0, 1, 2, 3, 1, 2, 3};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return idx[i];
	return -1;
}

/* Split @p line in place at blanks; returns the token count (-1: too many). */
static int
tokenize(char *line, char **tv)
{
	int tc = 0;

	for (char *s = strtok(line, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
		if (tc == MAX_TOKENS)
			return -1;
		tv[tc++] = s;
	}
	return tc;
}

/* ---------------------------------------------------- Pktgen-DPDK commands */

/* The port list: dpmon-gen renders port 0 ("0" or "all"). */
static bool
pkt_port(struct parse *ps, const char *s)
{
	if (strcmp(s, "0") == 0 || strcmp(s, "all") == 0)
		return true;
	bad(ps, "port list '%s': dpmon-gen renders port 0 only (use 0 or all)", s);
	return false;
}

static bool
pkt_type(const char *s, unsigned *fam)
{
	if (strcmp(s, "ipv4") == 0 || strcmp(s, "ip4") == 0)
		*fam = 4;
	else if (strcmp(s, "ipv6") == 0 || strcmp(s, "ip6") == 0)
		*fam = 6;
	else
		return false;
	return true;
}

static bool
pkt_proto(const char *s, bool icmp_ok, uint8_t *proto)
{
	if (strcmp(s, "udp") == 0)
		*proto = 17;
	else if (strcmp(s, "tcp") == 0)
		*proto = 6;
	else if (icmp_ok && strcmp(s, "icmp") == 0)
		*proto = 1;
	else
		return false;
	return true;
}

/* "set 0 <key> <number>" */
static void
pkt_set_number(struct parse *ps, const char *key, const char *val)
{
	struct pkt_conf *pc = &ps->pc;
	uint32_t v;

	if (gen_parse_u32(val, UINT32_MAX, &v) != 0) {
		bad(ps, "set %s: '%s' is not a number", key, val);
		return;
	}
	if (strcmp(key, "count") == 0)
		ps->p->count = v;
	else if (strcmp(key, "size") == 0)
		pc->single.size.start = v;
	else if (strcmp(key, "rate") == 0 && v >= 1 && v <= 100)
		; /* the rate does not change what is sent */
	else if (strcmp(key, "burst") == 0 || strcmp(key, "txburst") == 0)
		; /* nor does the TX burst */
	else if (strcmp(key, "sport") == 0 && v <= 65535)
		pc->single.sport.start = v;
	else if (strcmp(key, "dport") == 0 && v <= 65535)
		pc->single.dport.start = v;
	else if (strcmp(key, "ttl") == 0 && v <= 255)
		pc->single.ttl = (uint8_t)v;
	else if ((strcmp(key, "vlan") == 0 || strcmp(key, "vlanid") == 0) && v >= 1 && v <= 4095)
		pc->vlan_id = v;
	else if ((strcmp(key, "seq_cnt") == 0 || strcmp(key, "seqCnt") == 0 ||
		  strcmp(key, "seqcnt") == 0) && v <= MAX_SEQ)
		pc->seq_cnt = v;
	else
		bad(ps, "set %s %s: not a setting dpmon-gen renders, or out of range", key, val);
}

static void
pkt_set_ip(struct parse *ps, const char *which, const char *val)
{
	struct pkt_conf *pc = &ps->pc;
	struct field *f = strcmp(which, "src") == 0 ? &pc->single.src : &pc->single.dst;
	unsigned fam;
	char buf[64];

	if (f == &pc->single.src) {
		if (!parse_ip_mask(val, &f->start, &fam)) {
			bad(ps, "set src ip '%s': needs ADDRESS/MASK, e.g. 198.51.100.1/24", val);
			return;
		}
		pc->src_set = true;
	} else {
		snprintf(buf, sizeof(buf), "%s", val);
		if (strchr(buf, '/'))
			*strchr(buf, '/') = '\0'; /* pktgen drops a mask here */
		if (!parse_ip(buf, &f->start, &fam)) {
			bad(ps, "set dst ip '%s': not an IPv4 or IPv6 address", val);
			return;
		}
		pc->dst_set = true;
	}
	if (fam != pc->single.family)
		bad(ps, "set %s ip %s: the packet type is IPv%u (set 0 type ... first)", which, val,
		    pc->single.family);
}

/* "set 0 ..." */
static void
pkt_set(struct parse *ps, char **a, int n)
{
	struct stream *s = &ps->pc.single;
	uint8_t flag;

	if (n == 2 && strcmp(a[0], "type") == 0) {
		if (!pkt_type(a[1], &s->family))
			bad(ps, "set type %s: dpmon-gen renders ipv4 and ipv6", a[1]);
	} else if (n == 2 && strcmp(a[0], "proto") == 0) {
		if (!pkt_proto(a[1], true, &s->proto))
			bad(ps, "set proto %s: expected udp, tcp or icmp", a[1]);
	} else if (n == 2 && strcmp(a[0], "pattern") == 0) {
		if (strcmp(a[1], "zero") != 0)
			bad(ps, "set pattern %s: dpmon-gen renders 'pattern zero' only", a[1]);
	} else if (n == 2) {
		pkt_set_number(ps, a[0], a[1]);
	} else if (n == 3 && strcmp(a[1], "mac") == 0 &&
		   (strcmp(a[0], "src") == 0 || strcmp(a[0], "dst") == 0)) {
		if (!parse_mac(a[2], strcmp(a[0], "src") == 0 ? s->smac : s->dmac))
			bad(ps, "set %s mac %s: not a MAC address", a[0], a[2]);
	} else if (n == 3 && strcmp(a[1], "ip") == 0 &&
		   (strcmp(a[0], "src") == 0 || strcmp(a[0], "dst") == 0)) {
		pkt_set_ip(ps, a[0], a[2]);
	} else if (n == 4 && strcmp(a[0], "tcp") == 0 && strcmp(a[1], "flag") == 0 &&
		   (strcmp(a[2], "set") == 0 || strcmp(a[2], "clr") == 0) &&
		   parse_tcp_flag(a[3], &flag)) {
		s->tcp_flags = strcmp(a[2], "set") == 0 ? s->tcp_flags | flag
							: s->tcp_flags & (uint8_t)~flag;
	} else {
		bad(ps, "unknown or unsupported 'set' command");
	}
}

/* One value of a ranged number field; @p max bounds it. */
static void
range_number(struct parse *ps, struct rfield *r, int i, const char *val, uint32_t max,
	     const char *what)
{
	uint32_t v;

	if (gen_parse_u32(val, max, &v) != 0) {
		bad(ps, "range %s: '%s' is not a number 0..%u", what, val, max);
		return;
	}
	r->v[i] = v;
	r->set |= 1u << i;
}

static void
range_ip(struct parse *ps, struct rfield *r, int i, const char *val)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s", val);
	if (strchr(buf, '/'))
		*strchr(buf, '/') = '\0'; /* pktgen drops a mask in range ip */
	if (!parse_ip(buf, &r->v[i], &r->fam[i])) {
		bad(ps, "range ip: '%s' is not an IPv4 or IPv6 address", val);
		return;
	}
	r->set |= 1u << i;
}

/* "range 0 <field> SMMI V" or "range 0 <field> START MIN MAX INC". */
static void
range_values(struct parse *ps, struct rfield *r, char **a, int n, bool ip, uint32_t max,
	     const char *what)
{
	int i;

	if (n == 2 && (i = smmi_index(a[0])) >= 0) {
		if (ip)
			range_ip(ps, r, i, a[1]);
		else
			range_number(ps, r, i, a[1], max, what);
	} else if (n == 4) {
		for (i = 0; i < 4; i++) {
			if (ip)
				range_ip(ps, r, i, a[i]);
			else
				range_number(ps, r, i, a[i], max, what);
		}
	} else {
		bad(ps, "range %s: expected start|min|max|inc VALUE, or START MIN MAX INC", what);
	}
}

/* "range 0 ..." */
static void
pkt_range(struct parse *ps, char **a, int n)
{
	struct pkt_conf *pc = &ps->pc;
	bool src = n > 0 && strcmp(a[0], "src") == 0, dst = n > 0 && strcmp(a[0], "dst") == 0;
	uint8_t flag;

	if ((src || dst) && n >= 2 && strcmp(a[1], "ip") == 0)
		range_values(ps, src ? &pc->r_src : &pc->r_dst, a + 2, n - 2, true, 0, "ip");
	else if ((src || dst) && n >= 2 && strcmp(a[1], "port") == 0)
		range_values(ps, src ? &pc->r_sport : &pc->r_dport, a + 2, n - 2, false, 65535,
			     "port");
	else if ((src || dst) && n == 4 && strcmp(a[1], "mac") == 0 && strcmp(a[2], "start") == 0) {
		if (!parse_mac(a[3], src ? pc->range_smac : pc->range_dmac))
			bad(ps, "range %s mac: '%s' is not a MAC address", a[0], a[3]);
	} else if (n >= 1 && strcmp(a[0], "size") == 0)
		range_values(ps, &pc->r_size, a + 1, n - 1, false, 65535, "size");
	else if (n >= 1 && strcmp(a[0], "vlan") == 0)
		range_values(ps, &pc->r_vlan, a + 1, n - 1, false, 4095, "vlan");
	else if (n == 2 && strcmp(a[0], "proto") == 0) {
		if (!pkt_proto(a[1], false, &pc->range_proto))
			bad(ps, "range proto %s: expected tcp or udp", a[1]);
		pc->range_proto_set = true;
	} else if (n == 2 && strcmp(a[0], "type") == 0) {
		if (!pkt_type(a[1], &pc->range_family))
			bad(ps, "range type %s: expected ipv4 or ipv6", a[1]);
	} else if (n == 4 && strcmp(a[0], "tcp") == 0 && strcmp(a[1], "flag") == 0 &&
		   (strcmp(a[2], "set") == 0 || strcmp(a[2], "clr") == 0) &&
		   parse_tcp_flag(a[3], &flag)) {
		pc->range_flags = strcmp(a[2], "set") == 0 ? pc->range_flags | flag
							   : pc->range_flags & (uint8_t)~flag;
	} else {
		bad(ps, "unknown or unsupported 'range' command");
	}
}

/* Fill a sequence entry from its 11 values (dmac smac dip sip sport dport type proto vlan size). */
static void
seq_fill(struct parse *ps, struct stream *s, char **v)
{
	unsigned fd, fs;
	uint32_t sp = 0, dp = 0, vlan = 0, size = 0; /* 0 if not a number: the load fails */

	*s = ps->pc.single;
	if (!parse_mac(v[0], s->dmac) || !parse_mac(v[1], s->smac))
		bad(ps, "seq: bad MAC address '%s' or '%s'", v[0], v[1]);
	if (!parse_ip(v[2], &s->dst.start, &fd))
		bad(ps, "seq: bad destination address '%s'", v[2]);
	else if (!parse_ip_mask(v[3], &s->src.start, &fs))
		bad(ps, "seq: source '%s' needs ADDRESS/MASK", v[3]);
	else if (fd != fs)
		bad(ps, "seq: source and destination are of different families");
	if (gen_parse_u32(v[4], 65535, &sp) != 0 || gen_parse_u32(v[5], 65535, &dp) != 0)
		bad(ps, "seq: ports '%s' '%s' must be 0..65535", v[4], v[5]);
	if (!pkt_type(v[6], &s->family) || s->family != fd)
		bad(ps, "seq: type '%s' does not match the addresses", v[6]);
	if (!pkt_proto(v[7], true, &s->proto))
		bad(ps, "seq: protocol '%s': expected udp, tcp or icmp", v[7]);
	if (gen_parse_u32(v[8], 4095, &vlan) != 0 || gen_parse_u32(v[9], 65535, &size) != 0)
		bad(ps, "seq: vlan '%s' (0..4095) or size '%s' invalid", v[8], v[9]);
	s->sport.start = sp;
	s->dport.start = dp;
	s->vlan.start = vlan;
	s->size.start = size;
}

/*
 * "seq N 0 dst MAC src MAC dst IP src IP/M sport P dport P ipv4|ipv6 udp|tcp|icmp vlan V size S"
 * or the positional "seq N 0 DMAC SMAC DIP SIP/M SPORT DPORT TYPE PROTO VLAN SIZE".
 */
static void
pkt_seq(struct parse *ps, char **tv, int tc)
{
	static const char *const kw[] = {"dst", "src", "dst", "src", "sport", "dport"};
	char *v[10];
	uint32_t idx;

	if (tc < 3 || gen_parse_u32(tv[1], MAX_SEQ - 1, &idx) != 0) {
		bad(ps, "seq: expected an entry number 0..%d", MAX_SEQ - 1);
		return;
	}
	if (!pkt_port(ps, tv[2]))
		return;
	if (tc == 13) {
		memcpy(v, tv + 3, sizeof(v));
	} else if (tc == 21) {
		for (int i = 0; i < 6; i++) {
			if (strcmp(tv[3 + 2 * i], kw[i]) != 0) {
				bad(ps, "seq: expected '%s' where '%s' is", kw[i], tv[3 + 2 * i]);
				return;
			}
			v[i] = tv[4 + 2 * i];
		}
		v[6] = tv[15];
		v[7] = tv[16];
		if (strcmp(tv[17], "vlan") != 0 || strcmp(tv[19], "size") != 0) {
			bad(ps, "seq: expected 'vlan V size S' at the end");
			return;
		}
		v[8] = tv[18];
		v[9] = tv[20];
	} else {
		bad(ps, "seq: expected 'seq N 0 dst MAC src MAC dst IP src IP/M sport P dport P "
			"ipv4|ipv6 udp|tcp|icmp vlan V size S'");
		return;
	}
	seq_fill(ps, &ps->pc.seq[idx].s, v);
	ps->pc.seq[idx].set = true;
}

static void
pkt_line(struct parse *ps, char **tv, int tc)
{
	const char *cmd = tv[0];

	if (strcmp(cmd, "seq") == 0 || strcmp(cmd, "sequence") == 0) {
		pkt_seq(ps, tv, tc);
		return;
	}
	if (tc < 2) {
		bad(ps, "unknown or incomplete command '%s'", cmd);
		return;
	}
	if (strcmp(cmd, "set") == 0 && tc >= 4) {
		if (pkt_port(ps, tv[1]))
			pkt_set(ps, tv + 2, tc - 2);
	} else if (strcmp(cmd, "range") == 0 && tc >= 4) {
		if (pkt_port(ps, tv[1]))
			pkt_range(ps, tv + 2, tc - 2);
	} else if ((strcmp(cmd, "enable") == 0 || strcmp(cmd, "disable") == 0) && tc == 3) {
		bool on = cmd[0] == 'e';
		if (!pkt_port(ps, tv[1]))
			return;
		if (strcmp(tv[2], "range") == 0)
			ps->pc.range_on = on;
		else if (strcmp(tv[2], "vlan") == 0)
			ps->pc.vlan_on = on;
		else
			bad(ps, "%s %s: dpmon-gen renders range and vlan only", cmd, tv[2]);
	} else if ((strcmp(cmd, "start") == 0 || strcmp(cmd, "stop") == 0) && tc == 2) {
		pkt_port(ps, tv[1]); /* starting and stopping change no packet */
	} else {
		bad(ps, "unknown or unsupported command '%s'", cmd);
	}
}

/* -------------------------------------------- Pktgen-DPDK: build the streams */

/* A ranged field from its four values; false (reported) when one is missing. */
static bool
range_field(struct parse *ps, const struct rfield *r, const char *what, struct field *f)
{
	static const char *const names[] = {"start", "min", "max", "inc"};

	if (r->set != 0xf) {
		for (int i = 0; i < 4; i++)
			if (!(r->set & (1u << i)))
				bad(ps, "range mode: 'range 0 %s %s' is not set (dpmon-gen assumes "
					"none of pktgen's defaults)", what, names[i]);
		return false;
	}
	f->mode = r->v[3] ? F_STEP : F_FIXED;
	f->start = f->cur = r->v[0];
	f->min = r->v[1];
	f->max = r->v[2];
	f->inc = r->v[3];
	if (f->start < f->min || f->start > f->max || f->min > f->max) {
		bad(ps, "range mode: %s needs min <= start <= max", what);
		return false;
	}
	return true;
}

static void
range_ip_family(struct parse *ps, const struct rfield *r, const char *what, unsigned fam)
{
	for (int i = 0; i < 4; i++)
		if ((r->set & (1u << i)) && r->fam[i] != fam)
			bad(ps, "range mode: %s values are not IPv%u (range 0 type)", what, fam);
}

static void
build_range_stream(struct parse *ps, struct stream *s)
{
	struct pkt_conf *pc = &ps->pc;

	*s = pc->single;
	s->family = pc->range_family;
	if (!pc->range_proto_set)
		bad(ps, "range mode: 'range 0 proto tcp|udp' is not set");
	s->proto = pc->range_proto;
	s->tcp_flags = pc->range_flags;
	memcpy(s->dmac, pc->range_dmac, 6);
	memcpy(s->smac, pc->range_smac, 6);
	range_ip_family(ps, &pc->r_src, "src ip", s->family);
	range_ip_family(ps, &pc->r_dst, "dst ip", s->family);
	range_field(ps, &pc->r_src, "src ip", &s->src);
	range_field(ps, &pc->r_dst, "dst ip", &s->dst);
	range_field(ps, &pc->r_sport, "src port", &s->sport);
	range_field(ps, &pc->r_dport, "dst port", &s->dport);
	range_field(ps, &pc->r_size, "size", &s->size);
	s->tagged = pc->vlan_on;
	if (pc->vlan_on)
		range_field(ps, &pc->r_vlan, "vlan", &s->vlan);
}

static void
check_stream(struct parse *ps, const struct stream *s, const char *what)
{
	if (s->proto == 1 && s->family == 6)
		bad(ps, "%s: pktgen sends ICMP over IPv4 only", what);
	if (s->size.max > PKTGEN_MAX_FRAME || s->size.start > PKTGEN_MAX_FRAME)
		bad(ps, "%s: size above %d bytes (pktgen would clamp it)", what, PKTGEN_MAX_FRAME);
}

static void
finish_pktgen(struct parse *ps)
{
	struct pkt_conf *pc = &ps->pc;
	struct dpmon_profile *p = ps->p;
	char what[32];

	ps->line = 0;
	if (pc->range_on && pc->seq_cnt > 0) {
		bad(ps, "both range mode and a sequence (seq_cnt) are enabled: pick one");
		return;
	}
	if (pc->range_on) {
		build_range_stream(ps, &p->streams[0]);
		p->n_streams = 1;
		check_stream(ps, &p->streams[0], "range mode");
		return;
	}
	if (pc->seq_cnt > 0) {
		for (uint32_t i = 0; i < pc->seq_cnt; i++) {
			snprintf(what, sizeof(what), "seq %u", i);
			if (!pc->seq[i].set)
				bad(ps, "set 0 seq_cnt %u: sequence entry %u is not defined",
				    pc->seq_cnt, i);
			p->streams[i] = pc->seq[i].s;
			p->streams[i].tagged = pc->vlan_on;
			check_stream(ps, &p->streams[i], what);
		}
		p->n_streams = pc->seq_cnt;
		return;
	}
	if (!pc->src_set || !pc->dst_set)
		bad(ps, "single mode: 'set 0 src ip ADDR/MASK' and 'set 0 dst ip ADDR' are both "
			"needed (dpmon-gen assumes none of pktgen's defaults)");
	p->streams[0] = pc->single;
	p->streams[0].tagged = pc->vlan_on;
	p->streams[0].vlan.start = pc->vlan_id;
	p->n_streams = 1;
	check_stream(ps, &p->streams[0], "single mode");
}

/* ------------------------------------------------------ kernel pktgen lines */

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
	static const struct { const char *key; uint32_t max; } t[] = {
		{"count", UINT32_MAX}, {"pkt_size", MAX_FRAME}, {"clone_skb", UINT32_MAX},
		{"burst", 1024}, {"delay", UINT32_MAX}, {"ratep", UINT32_MAX},
		{"rate", UINT32_MAX}, {"udp_src_min", 65535}, {"udp_src_max", 65535},
		{"udp_dst_min", 65535}, {"udp_dst_max", 65535}, {"vlan_id", 4095},
	};
	struct k_conf *kc = &ps->kc;
	uint32_t *dst[] = {NULL, &kc->pkt_size, &kc->clone_skb, &kc->burst, NULL, NULL, NULL,
			   &kc->usrc_min, &kc->usrc_max, &kc->udst_min, &kc->udst_max,
			   &kc->vlan_id};
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
static void
k_line(struct parse *ps, char *line)
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

/* ------------------------------------------------ kernel: build the stream */

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

static void
finish_kernel(struct parse *ps)
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
	k_field_addr(&s->src, kc->src_min, kc->src_max ? kc->src_max : kc->src_min,
		     kc->ipsrc_rnd);
	k_field_addr(&s->dst, kc->dst_min, kc->dst_max ? kc->dst_max : kc->dst_min,
		     kc->ipdst_rnd);
	if (p->n_imix)
		k_imix_table(p, kc->imix_w);
}

/* ------------------------------------------------------------------ loading */

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void
defaults(struct parse *ps)
{
	struct stream *s = &ps->pc.single;

	s->family = 4;
	s->proto = 6;
	s->tcp_flags = TCP_ACK; /* pktgen DEFAULT_TCP_FLAGS */
	s->ttl = 64;
	s->size.start = PKTGEN_MIN_FRAME;
	s->sport.start = 1234;
	s->dport.start = 5678;
	memcpy(s->dmac, default_dmac, 6);
	memcpy(s->smac, default_smac, 6);
	ps->pc.vlan_id = 1;
	ps->pc.range_family = 4;
	ps->pc.range_flags = TCP_ACK;
	memcpy(ps->pc.range_dmac, default_dmac, 6);
	memcpy(ps->pc.range_smac, default_smac, 6);
	ps->kc.pkt_size = 60; /* ETH_ZLEN */
	ps->kc.usrc_min = ps->kc.usrc_max = 9;
	ps->kc.udst_min = ps->kc.udst_max = 9;
	memcpy(ps->kc.dmac, default_dmac, 6);
	memcpy(ps->kc.smac, default_smac, 6);
	ps->p->count = ps->p->kind == DPMON_PROFILE_LINUX_PKTGEN ? 1000 : 0;
}

/* Parse every line of @p f. Comments (#...) and blank lines are skipped. */
static int
parse_lines(struct parse *ps, FILE *f)
{
	char line[MAX_LINE + 2];
	char *tv[MAX_TOKENS];

	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line;
		int tc;

		ps->line++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			bad(ps, "line longer than %d bytes", MAX_LINE);
			return -EINVAL;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0')
			continue;
		if (ps->p->kind == DPMON_PROFILE_LINUX_PKTGEN) {
			k_line(ps, s);
			continue;
		}
		tc = tokenize(s, tv);
		if (tc < 0)
			bad(ps, "more than %d words", MAX_TOKENS);
		else
			pkt_line(ps, tv, tc);
	}
	return ferror(f) ? -EIO : 0;
}

int
dpmon_profile_load(const char *path, struct dpmon_profile **out, FILE *err)
{
	struct parse *ps = calloc(1, sizeof(*ps));
	struct dpmon_profile *p = calloc(1, sizeof(*p));
	FILE *f;
	int rc;

	*out = NULL;
	if (ps == NULL || p == NULL || (p->path = strdup(path)) == NULL) {
		free(ps);
		dpmon_profile_free(p);
		return -ENOMEM;
	}
	ps->path = path;
	ps->err = err;
	ps->p = p;
	if (ends_with(path, ".pkt")) {
		p->kind = DPMON_PROFILE_PKTGEN_DPDK;
	} else if (ends_with(path, ".sh")) {
		p->kind = DPMON_PROFILE_LINUX_PKTGEN;
	} else {
		bad(ps, "unknown profile kind: expected a Pktgen-DPDK .pkt file or a kernel "
			"pktgen .sh script");
		free(ps);
		dpmon_profile_free(p);
		return -EINVAL;
	}
	defaults(ps);
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		if (err)
			fprintf(err, "%s: %s\n", path, strerror(errno));
		free(ps);
		dpmon_profile_free(p);
		return rc;
	}
	rc = parse_lines(ps, f);
	fclose(f);
	if (rc == 0 && ps->n_errors == 0) {
		if (p->kind == DPMON_PROFILE_PKTGEN_DPDK)
			finish_pktgen(ps);
		else
			finish_kernel(ps);
	}
	if (ps->n_errors > MAX_REPORTED && err)
		fprintf(err, "%s: ... and %u more problems\n", path, ps->n_errors - MAX_REPORTED);
	if (rc == 0 && ps->n_errors)
		rc = -EINVAL;
	free(ps);
	if (rc != 0)
		dpmon_profile_free(p);
	else
		*out = p;
	return rc;
}

enum dpmon_profile_kind
dpmon_profile_kind(const struct dpmon_profile *p)
{
	return p->kind;
}

uint64_t
dpmon_profile_count(const struct dpmon_profile *p)
{
	return p->count;
}

void
dpmon_profile_free(struct dpmon_profile *p)
{
	if (p == NULL)
		return;
	free(p->path);
	free(p);
}

/* ---------------------------------------------------------------- rendering */

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

/* ------------------------------------------------------------------ frames */

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
		put16(h + 14, 8192);   /* DEFAULT_WND_SIZE */
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
	enum dpmon_proto pr = st->proto == 6 ? DPMON_PROTO_TCP
			    : st->proto == 17 ? DPMON_PROTO_UDP : DPMON_PROTO_ICMP;
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
				     min_l4(k.s->proto) || k.size > MAX_FRAME)
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
	if (rc == 0) {
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

/* ---------------------------------------------------------------- printing */

static const char *
kind_name(const struct dpmon_profile *p)
{
	return p->kind == DPMON_PROFILE_PKTGEN_DPDK ? "pktgen-dpdk" : "linux-pktgen";
}

int
dpmon_profile_summary_print_json(const struct dpmon_profile *p, const char *output,
				 uint64_t seed, const struct dpmon_profile_summary *s, FILE *out)
{
	fputs("{\"profile\": ", out);
	dpmon_gen_json_string(out, p->path);
	fprintf(out, ", \"generator\": \"%s\", \"output\": ", kind_name(p));
	dpmon_gen_json_string(out, output);
	fprintf(out, ", \"seed\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64,
		seed, s->total.packets, s->total.bytes);
	for (int i = 0; i < DPMON_PROTO_MAX; i++)
		fprintf(out, ", \"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			dpmon_proto_name((enum dpmon_proto)i), s->proto[i].packets,
			s->proto[i].bytes);
	fprintf(out, ", \"tcp_syn\": %" PRIu64 ", \"tagged\": %" PRIu64 ", \"min_frame\": %" PRIu32
		", \"max_frame\": %" PRIu32 "}\n", s->tcp_syn, s->tagged, s->min_frame,
		s->max_frame);
	return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}

int
dpmon_profile_summary_print_text(const struct dpmon_profile *p, const char *output,
				 uint64_t seed, const struct dpmon_profile_summary *s, FILE *out)
{
	fprintf(out, "dpmon-gen: rendered %s profile %s: %" PRIu64 " packets, %" PRIu64
		" bytes to %s (seed %" PRIu64 ")\n", kind_name(p), p->path, s->total.packets,
		s->total.bytes, output, seed);
	fprintf(out, "tcp %" PRIu64 " (syn %" PRIu64 "), udp %" PRIu64 ", icmp %" PRIu64
		", tagged %" PRIu64 ", frames %" PRIu32 "..%" PRIu32 " bytes\n",
		s->proto[DPMON_PROTO_TCP].packets, s->tcp_syn, s->proto[DPMON_PROTO_UDP].packets,
		s->proto[DPMON_PROTO_ICMP].packets, s->tagged, s->min_frame, s->max_frame);
	return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}
