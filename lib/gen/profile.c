/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile.c — loading a traffic-generator profile (profile.h), and the
 * Pktgen-DPDK (.pkt) parser; the kernel pktgen parser is profile_kernel.c,
 * the rendering profile_render.c, what they share profile_private.h.
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
 */
#include "numbers.h"
#include "profile.h"
#include "profile_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE         1024
#define PKTGEN_MAX_FRAME 1518

/* ------------------------------------------------------------------------
 * Pktgen-DPDK values.
 * --------------------------------------------------------------------- */

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

/* A pktgen TCP flag name (urg, ack, psh, rst, syn, fin, or all) as its bits. */
static bool
parse_tcp_flag(const char *s, uint8_t *flag)
{
	static const struct {
		const char *name;
		uint8_t bit;
	} t[] = {
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
	static const char *const names[] = {"start",   "min",     "max",      "inc",
					    "minimum", "maximum", "increment"};
	static const int idx[] = {0, 1, 2, 3, 1, 2, 3};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return idx[i];
	return -1;
}

/* ------------------------------------------------------------------------
 * Pktgen-DPDK commands.
 * --------------------------------------------------------------------- */

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
		  strcmp(key, "seqcnt") == 0) &&
		 v <= MAX_SEQ)
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
	unsigned fd = 0, fs = 0;                     /* 0 if not an address: the load fails */
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

/* ------------------------------------------------------------------------
 * Pktgen-DPDK: build the streams.
 * --------------------------------------------------------------------- */

/* A ranged field from its four values; false (reported) when one is missing. */
static bool
range_field(struct parse *ps, const struct rfield *r, const char *what, struct field *f)
{
	static const char *const names[] = {"start", "min", "max", "inc"};

	if (r->set != 0xf) {
		for (int i = 0; i < 4; i++)
			if (!(r->set & (1u << i)))
				bad(ps,
				    "range mode: 'range 0 %s %s' is not set (dpmon-gen assumes "
				    "none of pktgen's defaults)",
				    what, names[i]);
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

/* ------------------------------------------------------------------------
 * Loading.
 * --------------------------------------------------------------------- */

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
	dpmon_profile_kernel_defaults(&ps->kc);
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
			dpmon_profile_kernel_line(ps, s);
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
			dpmon_profile_kernel_finish(ps);
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
