/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_private.h — what the three parts of the profile renderer share
 * (profile.h is their public face): the model a profile is parsed into,
 * the parser's state, the problem reporter and value parsers of both
 * dialects, and the kernel parser's entry points called by the loader.
 *
 *   profile.c         loading, and the Pktgen-DPDK (.pkt) parser
 *   profile_kernel.c  the Linux kernel pktgen (.sh) parser
 *   profile_render.c  a parsed profile written to pcap, and its summary
 *
 * Not installed, not for other libraries: include it from those three
 * files only. Addresses are 128-bit integers (IPv4 in the low 32 bits) so
 * that stepping and masking them is plain arithmetic.
 */
#ifndef DPMON_PROFILE_PRIVATE_H
#define DPMON_PROFILE_PRIVATE_H

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"

typedef unsigned __int128 u128;

/* ------------------------------------------------------------------------
 * Limits.
 * --------------------------------------------------------------------- */

#define MAX_TOKENS       32   /* words on one line */
#define MAX_SEQ          16   /* pktgen NUM_SEQ_PKTS */
#define MAX_IMIX         20   /* kernel MAX_IMIX_ENTRIES */
#define IMIX_PRECISION   100  /* kernel IMIX_PRECISION */
#define MAX_REPORTED     20   /* problems printed; the rest are counted */
#define PKTGEN_MIN_FRAME 64   /* pktgen sizes, FCS included */
#define MAX_FRAME        9018 /* largest kernel pkt_size or IMIX size, bytes */

enum {
	TCP_FIN = 0x01,
	TCP_SYN = 0x02,
	TCP_RST = 0x04,
	TCP_PSH = 0x08,
	TCP_ACK = 0x10,
	TCP_URG = 0x20
};

/* Locally administered MACs for when a profile names none. */
static const uint8_t default_dmac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t default_smac[6] = {0x02, 0, 0, 0, 0, 0x01};

/* ------------------------------------------------------------------------
 * The model.
 * --------------------------------------------------------------------- */

/* How a field moves between packets (pktgen) or skbs (kernel). */
enum fmode {
	F_FIXED,     /* always start */
	F_STEP,      /* pktgen range: start first, += inc, past max -> min */
	F_KSEQ,      /* kernel address: ++ before each skb, past max -> min */
	F_KSEQ_PORT, /* kernel UDP port: ++ before each skb, reaching max -> min */
	F_KRAND,     /* kernel: min + rand % (max - min) */
	F_KMASK,     /* kernel IPv6 dst6_min/max: (rand | min) & max */
};

/* A variable field of a stream: its values and how it moves. */
struct field {
	enum fmode mode;
	u128 start, min, max, inc;
	u128 cur;
};

/* A packet template: pktgen's single or range packet, one of its sequence
 * packets, or the kernel's one device. */
struct stream {
	unsigned family; /* 4 or 6 */
	uint8_t proto;   /* 6, 17 or 1 */
	uint8_t tcp_flags;
	uint8_t ttl;
	bool tagged;
	uint8_t dmac[6], smac[6];
	struct field src, dst, sport, dport, size, vlan;
};

/* A loaded profile (opaque in profile.h). */
struct dpmon_profile {
	char *path;
	enum dpmon_profile_kind kind;
	uint64_t count;
	struct stream streams[MAX_SEQ];
	uint32_t n_streams;
	/* kernel only */
	uint32_t repeat; /* packets per skb */
	uint32_t imix_size[MAX_IMIX];
	uint32_t n_imix;
	uint8_t imix_dist[IMIX_PRECISION];
	bool udp_csum, no_timestamp;
};

/* ------------------------------------------------------------------------
 * Parsing state.
 * --------------------------------------------------------------------- */

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

/* One load in progress (dpmon_profile_load). */
struct parse {
	const char *path;
	unsigned line; /* current line, 1-based; 0 once the lines are read */
	FILE *err;     /* where problems go; may be NULL */
	unsigned n_errors;
	struct dpmon_profile *p;
	struct pkt_conf pc;
	struct k_conf kc;
};

/* ------------------------------------------------------------------------
 * Reporting, value parsers.
 * --------------------------------------------------------------------- */

/**
 * Report one problem at the current line of @p ps ("PATH:LINE: why";
 * line 0: "PATH: why" for the whole file) and count it: the load fails
 * when any was counted. Past MAX_REPORTED problems only the count grows.
 * @param fmt  printf format of the reason, no newline.
 * Thread-safety: the thread that owns @p ps.
 */
static inline void bad(struct parse *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void
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

/**
 * The @p n bytes at @p b as a big-endian number (n <= 16).
 * Thread-safety: any thread.
 */
static inline u128
bytes_to_u128(const uint8_t *b, size_t n)
{
	u128 v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

/**
 * An IPv4 or IPv6 address, no mask, as inet_pton reads it.
 * @param v    set to the address (IPv4 in the low 32 bits).
 * @param fam  set to 4 or 6.
 * @return true when @p s is an address. Thread-safety: any thread.
 */
static inline bool
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

/**
 * A MAC address as 00:11:22:33:44:55 or 0011:2233:4455 (both pktgen
 * forms; the kernel's dst_mac/src_mac use the first).
 * @return true when @p s is one (@p mac set). Thread-safety: any thread.
 */
static inline bool
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned x[6];
	int n = -1;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &n) ==
		    6 &&
	    n == 17 && s[n] == '\0') {
		for (int i = 0; i < 6; i++)
			mac[i] = (uint8_t)x[i];
		return true;
	}
	n = -1;
	if (sscanf(s, "%4x:%4x:%4x%n", &x[0], &x[1], &x[2], &n) == 3 && n == 14 && s[n] == '\0') {
		for (int i = 0; i < 3; i++) {
			mac[2 * i] = (uint8_t)(x[i] >> 8);
			mac[2 * i + 1] = (uint8_t)x[i];
		}
		return true;
	}
	return false;
}

/**
 * Split @p line in place at blanks (space, tab, CR, LF) into @p tv, which
 * holds MAX_TOKENS entries.
 * @return the token count, or -1 when there are more than MAX_TOKENS.
 * Thread-safety: uses strtok, so one load at a time per process.
 */
static inline int
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

/* ------------------------------------------------------------------------
 * Kernel pktgen parser.
 * --------------------------------------------------------------------- */

/**
 * Set the kernel parser's defaults in @p kc (those of net/core/pktgen.c
 * that change a packet: 60-byte pkt_size, UDP ports 9, the default MACs).
 * Thread-safety: the thread that owns @p kc.
 */
void dpmon_profile_kernel_defaults(struct k_conf *kc);

/**
 * Parse one non-blank, non-comment line of a kernel pktgen script into
 * @p ps: a line of the kpktgen.sh skeleton or `pg_set "PARAM VALUE..."`.
 * @p line is modified. A line not understood is reported with bad().
 * Thread-safety: the thread that owns @p ps (one load at a time: tokenize).
 */
void dpmon_profile_kernel_line(struct parse *ps, char *line);

/**
 * After the last line: build the kernel profile's one stream from @p ps,
 * reporting (bad(), as line 0) what is missing or inconsistent.
 * Thread-safety: the thread that owns @p ps.
 */
void dpmon_profile_kernel_finish(struct parse *ps);

#endif /* DPMON_PROFILE_PRIVATE_H */
