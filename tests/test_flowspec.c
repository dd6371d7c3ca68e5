/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_flowspec.c — FlowSpec rules (lib/detect/flowspec.h): the rule
 * choice on samples of nine attacks, each mixed with a third of legitimate
 * traffic to the same victim (TCP 443 and 80, DNS, ICMP echo), matched
 * back against the labelled packets: at least 95 % of the attack and at
 * most 1 % of the legitimate packets, with the rule's ExaBGP text exact;
 * the same with the attack's share underestimated; the reasons when no
 * rule fits; the router checks; the actions' parse and text; IPv6 text;
 * a rule as JSON (flowspec_json.h), written and read back.
 * With --exabgp-announce or --exabgp-withdraw it prints the lines of the
 * chosen rules instead, for Debian's exabgp to judge
 * (tests/integration/test_flowspec_exabgp.py).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "check.h"
#include "flowspec.h"
#include "flowspec_json.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define SAMPLE          500

/* ------------------------------------------------------------------------
 * Labelled samples.
 * --------------------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t
rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33) % n;
}

struct sample {
	struct dpmon_fp_pkt p[SAMPLE];
	bool attack[SAMPLE];
	uint32_t n;
};

static struct dpmon_fp_pkt *
add(struct sample *s, bool attack)
{
	struct dpmon_fp_pkt *p = &s->p[s->n];

	memset(p, 0, sizeof(*p));
	p->family = 4;
	s->attack[s->n++] = attack;
	return p;
}

static void
set_src(struct dpmon_fp_pkt *p, uint32_t a)
{
	dpmon_addr_from_v4(&p->src, a);
}

static void
l4(struct dpmon_fp_pkt *p, uint8_t proto, uint16_t sport, uint16_t dport, uint16_t len)
{
	p->ip_proto = proto;
	p->ports = 1;
	p->sport = sport;
	p->dport = dport;
	p->ip_len = len;
}

/* One legitimate packet to the victim: web clients, DNS, ping. */
static void
legit(struct sample *s)
{
	struct dpmon_fp_pkt *p = add(s, false);
	uint32_t k = rnd(100);

	set_src(p, IP4(100, 64, rnd(256), rnd(256)));
	if (k < 70) { /* HTTPS and HTTP clients: ACK, PSH+ACK, a few SYN and FIN */
		uint32_t f = rnd(100);

		l4(p, 6, (uint16_t)(32768 + rnd(28000)), k < 45 ? 443 : 80,
		   (uint16_t)(52 + rnd(1448)));
		p->tcp_flags = f < 1 && k >= 45 ? 0x02 : f < 3 ? 0x11 : f < 50 ? 0x10 : 0x18;
		if (p->tcp_flags != 0x18)
			p->ip_len = 52;
	} else if (k < 80) { /* answers to the victim's own DNS queries */
		l4(p, 17, 53, (uint16_t)(32768 + rnd(28000)), (uint16_t)(90 + rnd(300)));
	} else if (k < 90) { /* queries to the victim's resolver */
		l4(p, 17, (uint16_t)(32768 + rnd(28000)), 53, (uint16_t)(60 + rnd(30)));
	} else { /* ping */
		p->ip_proto = 1;
		p->icmp = 1;
		p->icmp_type = 8;
		p->ip_len = 84;
	}
}

enum attack {
	DNS_AMP,
	NTP_AMP,
	MEMCACHED,
	SYN_FLOOD,
	FRAGMENT_FLOOD,
	ACK_FLOOD,
	UDP_AND_SYN,
	ONE_SOURCE,
	SPOOFED,
	ATTACKS
};

static const char *const attack_name[ATTACKS] = {
	"DNS amplification", "NTP amplification", "memcached",
	"SYN flood",         "fragment flood",    "ACK flood",
	"UDP + SYN",         "one source",        "spoofed random sources"};

static void
attack_pkt(struct sample *s, enum attack a, uint32_t i)
{
	struct dpmon_fp_pkt *p = add(s, true);
	uint16_t eph = (uint16_t)(1024 + rnd(64000));

	set_src(p, IP4(198, 18, rnd(4), rnd(50))); /* 200 reflectors or bots */
	switch (a) {
	case DNS_AMP:
		l4(p, 17, 53, eph, (uint16_t)(1200 + rnd(300)));
		break;
	case NTP_AMP:
		l4(p, 17, 123, eph, 468);
		break;
	case MEMCACHED:
		l4(p, 17, 11211, eph, (uint16_t)(1400 + rnd(100)));
		break;
	case SYN_FLOOD:
		l4(p, 6, eph, 443, 40);
		p->tcp_flags = 0x02;
		set_src(p, IP4(rnd(224), rnd(256), rnd(256), rnd(256)));
		break;
	case FRAGMENT_FLOOD: /* 3000-byte datagrams: 1500, 1500, 40 */
		p->ip_proto = 17;
		p->frag = i % 3 == 0 ? DPMON_FP_FRAG_FIRST : DPMON_FP_FRAG_LATER;
		p->ip_len = i % 3 == 2 ? 40 : 1500;
		if (i % 3 == 0) {
			p->ports = 1;
			p->sport = eph;
			p->dport = (uint16_t)rnd(65536);
		}
		break;
	case ACK_FLOOD:
		l4(p, 6, eph, (uint16_t)rnd(65536), 40);
		p->tcp_flags = 0x10;
		set_src(p, IP4(rnd(224), rnd(256), rnd(256), rnd(256)));
		break;
	case UDP_AND_SYN:
		if (i % 2 == 0) {
			l4(p, 17, eph, (uint16_t)rnd(65536), 540);
		} else {
			l4(p, 6, eph, 80, 40);
			p->tcp_flags = 0x02;
		}
		set_src(p, IP4(rnd(224), rnd(256), rnd(256), rnd(256)));
		break;
	case ONE_SOURCE:
		l4(p, 17, eph, (uint16_t)rnd(65536), (uint16_t)(64 + rnd(1400)));
		set_src(p, IP4(192, 0, 2, 66));
		break;
	case SPOOFED:
	default:
		l4(p, 17, eph, 27015, (uint16_t)(64 + rnd(1400)));
		set_src(p, IP4(rnd(224), rnd(256), rnd(256), rnd(256)));
		break;
	}
}

/* A sample of attack @p a: two attack packets for every legitimate one, shuffled. */
static void
make_sample(struct sample *s, enum attack a, uint64_t seed)
{
	rng_state = seed;
	s->n = 0;
	for (uint32_t i = 0; i < SAMPLE; i++) {
		if (i % 3 == 2)
			legit(s);
		else
			attack_pkt(s, a, i - i / 3);
	}
}

static struct dpmon_fs_params
params(double share)
{
	struct dpmon_fs_params p = {
		.family = 4,
		.dst_len = 32,
		.attack_share = share,
		.min_coverage = 0.95,
		.max_rules = 3,
		.components = DPMON_FS_C_ALL,
		.action = {.kind = DPMON_FS_DISCARD},
	};

	dpmon_addr_from_v4(&p.dst, IP4(10, 0, 0, 5));
	return p;
}

/* The shares of attack and legitimate packets of @p s the rules of @p c match. */
static void
coverages(const struct sample *s, const struct dpmon_fs_choice *c, double *att, double *leg)
{
	uint32_t a = 0, l = 0, ma = 0, ml = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		bool m = false;

		for (uint32_t r = 0; r < c->n_rules; r++)
			m = m || dpmon_fs_rule_match(&c->rules[r], &s->p[i]);
		if (s->attack[i]) {
			a++;
			ma += m;
		} else {
			l++;
			ml += m;
		}
	}
	*att = (double)ma / a;
	*leg = (double)ml / l;
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */

/* The rule each attack gets, as ExaBGP's announce lines (one per rule). */
static const char *const expected[ATTACKS] = {
	[DNS_AMP] = "announce flow route { match { destination 10.0.0.5/32; protocol udp;"
		    " source-port =53; packet-length >=1168&<=1531; } then { discard; } }\n",
	[NTP_AMP] = "announce flow route { match { destination 10.0.0.5/32; protocol udp;"
		    " source-port =123; packet-length >=436&<=500; } then { discard; } }\n",
	[MEMCACHED] = "announce flow route { match { destination 10.0.0.5/32; protocol udp;"
		      " source-port =11211; packet-length >=1368&<=1531; } then { discard; } }\n",
	[SYN_FLOOD] = "announce flow route { match { destination 10.0.0.5/32; protocol tcp;"
		      " destination-port =443; tcp-flags [ =syn&!fin+rst+push+ack+urgent ];"
		      " packet-length >=8&<=72; } then { discard; } }\n",
	[FRAGMENT_FLOOD] = "announce flow route { match { destination 10.0.0.5/32; protocol udp;"
			   " fragment [ is-fragment ]; } then { discard; } }\n",
	[ACK_FLOOD] = "announce flow route { match { destination 10.0.0.5/32; protocol tcp;"
		      " tcp-flags [ =ack&!fin+syn+rst+push+urgent ]; packet-length >=8&<=46; }"
		      " then { discard; } }\n",
	[UDP_AND_SYN] = "announce flow route { match { destination 10.0.0.5/32; protocol tcp;"
			" destination-port =80; tcp-flags [ =syn&!fin+rst+push+ack+urgent ];"
			" packet-length >=8&<=46; } then { discard; } }\n"
			"announce flow route { match { destination 10.0.0.5/32; protocol udp;"
			" packet-length >=508&<=572; } then { discard; } }\n",
	[ONE_SOURCE] = "announce flow route { match { destination 10.0.0.5/32;"
		       " source 192.0.2.66/32; protocol udp; } then { discard; } }\n",
	[SPOOFED] = "announce flow route { match { destination 10.0.0.5/32; protocol udp;"
		    " destination-port =27015; } then { discard; } }\n",
};

static void
test_attacks(void)
{
	static struct sample s;

	printf("%-24s %-9s %-9s rules\n", "attack", "attack %", "legit %");
	for (int a = 0; a < ATTACKS; a++) {
		struct dpmon_fs_params p = params(2.0 / 3);
		struct dpmon_fs_choice c;
		char text[4 * DPMON_FS_TEXT_LEN] = "", line[DPMON_FS_TEXT_LEN];
		double att, leg;

		make_sample(&s, (enum attack)a, 1000 + (uint64_t)a);
		REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0);
		for (uint32_t r = 0; r < c.n_rules; r++) {
			REQUIRE(dpmon_fs_rule_exabgp(&c.rules[r], true, line, sizeof(line)) > 0);
			strcat(text, line);
		}
		coverages(&s, &c, &att, &leg);
		printf("%-24s %8.1f %8.1f  %s", attack_name[a], 100 * att, 100 * leg,
		       c.n_rules ? text : c.reason);
		if (c.n_rules == 0)
			printf("\n");
		CHECK(att >= 0.95);
		CHECK(leg <= 0.01);
		CHECK(c.coverage >= 0.95);
		if (strcmp(text, expected[a]) != 0) {
			test_failures++;
			fprintf(stderr, "%s: rules\n%s expected\n%s", attack_name[a], text,
				expected[a]);
		}
		/* The attack's share underestimated (the host's own traffic fell): still within bounds. */
		for (int k = 0; k < 1; k++) {
			p.attack_share = 0.6;
			REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0);
			coverages(&s, &c, &att, &leg);
			if (att < 0.95 || leg > 0.01) {
				test_failures++;
				fprintf(stderr, "%s, share %.2f: attack %.3f legit %.3f\n",
					attack_name[a], p.attack_share, att, leg);
			}
		}
	}
}

static void
test_no_rule(void)
{
	static struct sample s;
	struct dpmon_fs_params p = params(2.0 / 3);
	struct dpmon_fs_choice c;

	/* The mixed attack with one rule allowed: none, and why. */
	make_sample(&s, UDP_AND_SYN, 7);
	p.max_rules = 1;
	REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0);
	CHECK_EQ_U64(c.n_rules, 0);
	CHECK(strcmp(c.reason, "the attack spreads over 2 protocols or fragment states, more than"
			       " max_rules_per_alert (1)") == 0);

	/* Bad parameters. */
	p = params(0);
	CHECK(dpmon_fs_choose(s.p, s.n, &p, &c) == -EINVAL);
	p = params(0.5);
	p.max_rules = DPMON_FS_MAX_RULES + 1;
	CHECK(dpmon_fs_choose(s.p, s.n, &p, &c) == -EINVAL);
	p = params(0.5);
	CHECK(dpmon_fs_choose(s.p, 0, &p, &c) == -EINVAL);

	/*
	 * The limit far below the traffic (share estimated 1.0) with 3 % of the
	 * host's own packets: the source port's sharp cut (53, then scattered
	 * ports) shows they are not attack, and the rule leaves them out.
	 */
	rng_state = 99;
	s.n = 0;
	for (uint32_t i = 0; i < 200; i++) {
		struct dpmon_fp_pkt *q = add(&s, i % 33 > 1);

		set_src(q, IP4(198, 18, 0, 1 + i % 50));
		if (i % 33 == 0)
			l4(q, 6, (uint16_t)(40000 + i), 443, 52);
		else if (i % 33 == 1)
			l4(q, 17, (uint16_t)(40000 + i), 53, 66);
		else
			l4(q, 17, 53, (uint16_t)(1024 + rnd(60000)), (uint16_t)(1200 + rnd(300)));
	}
	p = params(1.0);
	REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0);
	REQUIRE(c.n_rules == 1);
	CHECK_EQ_U64(c.rules[0].n_sport, 1);
	CHECK_EQ_U64(c.rules[0].sport[0], 53);
	/* 200 estimated, less the 7 queries the sharp cut showed to be legitimate. */
	CHECK_EQ_U64(c.attack_packets, 193);
	{
		double att, leg;

		coverages(&s, &c, &att, &leg);
		CHECK(att == 1.0 && leg == 0.0);
	}

	/* Ports turned off: the DNS amplification keeps its length range only. */
	make_sample(&s, DNS_AMP, 1000);
	p = params(2.0 / 3);
	p.components &= ~(uint32_t)(DPMON_FS_C_SOURCE_PORT | DPMON_FS_C_DESTINATION_PORT);
	REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0);
	REQUIRE(c.n_rules == 1);
	CHECK_EQ_U64(c.rules[0].n_sport, 0);
	CHECK_EQ_U64(c.rules[0].has_len, 1);
}

static struct dpmon_fs_rule
rule4(void)
{
	struct dpmon_fs_rule r = {.family = 4, .dst_len = 32, .has_proto = 1, .proto = 17};

	dpmon_addr_from_v4(&r.dst, IP4(10, 0, 0, 5));
	return r;
}

static void
test_check(void)
{
	struct dpmon_fs_rule r = rule4();
	const char *why = NULL;

	CHECK(dpmon_fs_rule_check(&r, &why) == 0);
	r.n_sport = 1;
	r.sport[0] = 53;
	CHECK(dpmon_fs_rule_check(&r, &why) == 0);
	r.frag = DPMON_FS_FRAG_IS;
	CHECK(dpmon_fs_rule_check(&r, &why) == -EINVAL);
	CHECK(strcmp(why, "ports with a fragment match (a later fragment has no ports)") == 0);
	r.frag = DPMON_FS_FRAG_ANY;
	r.proto = 1;
	CHECK(dpmon_fs_rule_check(&r, &why) == -EINVAL);
	CHECK(strcmp(why, "ports need protocol tcp or udp") == 0);
	r = rule4();
	r.n_flags = 1;
	CHECK(dpmon_fs_rule_check(&r, &why) == -EINVAL);
	CHECK(strcmp(why, "tcp-flags need protocol tcp") == 0);
	r = rule4();
	r.dst_len = 24; /* 10.0.0.5/24: host bits set */
	CHECK(dpmon_fs_rule_check(&r, &why) == -EINVAL);
	CHECK(strcmp(why, "bad destination prefix") == 0);
	r = rule4();
	r.has_len = 1;
	r.len_lo = 100;
	r.len_hi = 99;
	CHECK(dpmon_fs_rule_check(&r, &why) == -EINVAL);
	r = rule4();
	r.action.kind = DPMON_FS_MARK;
	r.action.dscp = 64;
	CHECK(dpmon_fs_rule_check(&r, NULL) == -EINVAL);
	r = rule4();
	r.n_icmp_type = 1;
	CHECK(dpmon_fs_rule_check(&r, &why) == -EINVAL);
	r.proto = 1;
	CHECK(dpmon_fs_rule_check(&r, &why) == 0);
}

static void
test_actions(void)
{
	struct dpmon_fs_action a;
	const char *why = NULL;
	char b[64];

	CHECK(dpmon_fs_action_parse("discard", &a, &why) == 0 && a.kind == DPMON_FS_DISCARD);
	CHECK(dpmon_fs_action_parse("rate-limit 9600", &a, &why) == 0 &&
	      a.kind == DPMON_FS_RATE_LIMIT && a.rate == 9600);
	CHECK(dpmon_fs_action_parse("redirect 65000:666", &a, &why) == 0 &&
	      a.kind == DPMON_FS_REDIRECT && a.asn == 65000 && a.value == 666);
	CHECK(dpmon_fs_action_parse("mark 46", &a, &why) == 0 && a.kind == DPMON_FS_MARK &&
	      a.dscp == 46);
	dpmon_fs_action_text(&a, b, sizeof(b));
	CHECK(strcmp(b, "mark 46") == 0);
	CHECK(dpmon_fs_action_parse("mark 64", &a, &why) == -EINVAL);
	CHECK(strcmp(why, "DSCP above 63") == 0);
	CHECK(dpmon_fs_action_parse("rate-limit -1", &a, &why) == -EINVAL);
	CHECK(dpmon_fs_action_parse("rate-limit 9600x", &a, &why) == -EINVAL);
	CHECK(dpmon_fs_action_parse("redirect 4200000000:70000", &a, &why) == -EINVAL);
	CHECK(strcmp(why, "redirect with a 32-bit ASN takes a 16-bit value (RFC 7674)") == 0);
	CHECK(dpmon_fs_action_parse("drop", &a, &why) == -EINVAL);
	CHECK(strcmp(why, "expected discard, rate-limit BYTES_PER_S, redirect ASN:VALUE or"
			  " mark DSCP") == 0);
}

static void
test_text(void)
{
	struct dpmon_fs_rule r = {.family = 6, .dst_len = 128, .has_proto = 1, .proto = 17};
	char b[DPMON_FS_TEXT_LEN];

	REQUIRE(dpmon_addr_parse("2001:db8::5", &r.dst) == 0);
	r.n_dport = 2;
	r.dport[0] = 80;
	r.dport[1] = 443;
	r.has_len = 1;
	r.len_lo = 100;
	r.len_hi = 200;
	r.action.kind = DPMON_FS_RATE_LIMIT;
	r.action.rate = 125000;
	CHECK(dpmon_fs_rule_exabgp(&r, true, b, sizeof(b)) > 0);
	CHECK(strcmp(b, "announce flow route { match { destination 2001:db8::5/128;"
			" next-header udp; destination-port [ =80 =443 ];"
			" packet-length >=100&<=200; } then { rate-limit 125000; } }\n") == 0);
	CHECK(dpmon_fs_rule_exabgp(&r, false, b, sizeof(b)) > 0);
	CHECK(strcmp(b, "withdraw flow route { match { destination 2001:db8::5/128;"
			" next-header udp; destination-port [ =80 =443 ];"
			" packet-length >=100&<=200; } }\n") == 0);
	CHECK(dpmon_fs_rule_exabgp(&r, false, b, 20) == -ENOSPC);

	r = rule4();
	r.proto = 1;
	r.n_icmp_type = 1;
	r.icmp_type[0] = 8;
	r.has_icmp_code = 1;
	r.action.kind = DPMON_FS_REDIRECT;
	r.action.asn = 65000;
	r.action.value = 666;
	CHECK(dpmon_fs_rule_exabgp(&r, true, b, sizeof(b)) > 0);
	CHECK(strcmp(b, "announce flow route { match { destination 10.0.0.5/32; protocol =1;"
			" icmp-type =8; icmp-code =0; } then { redirect 65000:666; } }\n") == 0);
	CHECK(dpmon_fs_rule_match_text(&r, b, sizeof(b)) > 0);
	CHECK(strcmp(b, "destination 10.0.0.5/32; protocol =1; icmp-type =8; icmp-code =0;") == 0);
}

/* Rule @p r written as JSON: the text @p want, read back the same rule. */
static void
check_json(const struct dpmon_fs_rule *r, const char *want)
{
	struct dpmon_fs_json_error err;
	struct dpmon_fs_rule back;
	json_t *j = dpmon_fs_rule_to_json(r);
	char *t = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	REQUIRE(t != NULL);
	CHECK_EQ_STR(t, want);
	CHECK(dpmon_fs_rule_from_json(j, &back, &err) == 0);
	CHECK(memcmp(&back, r, sizeof(back)) == 0);
	free(t);
	json_decref(j);
}

/* dpmon_fs_rule_from_json of @p text refused: its fault, field and why. */
static void
check_json_refused(const char *text, enum dpmon_fs_json_fault fault, const char *field,
		   const char *what)
{
	struct dpmon_fs_json_error err;
	struct dpmon_fs_rule r;
	json_t *j = json_loads(text, 0, NULL);

	REQUIRE(j != NULL);
	CHECK(dpmon_fs_rule_from_json(j, &r, &err) == -EINVAL);
	CHECK_EQ_U64(err.fault, fault);
	CHECK_EQ_STR(err.field != NULL ? err.field : "", field);
	CHECK_EQ_STR(err.what, what);
	json_decref(j);
}

/* A rule as JSON (the manual rules' form): written, read back the same. */
static void
test_json(void)
{
	struct dpmon_fs_rule r = {0};

	r.family = 4;
	r.dst_len = 32;
	REQUIRE(dpmon_addr_parse("10.0.0.5", &r.dst) == 0);
	check_json(&r, "{\"action\":\"discard\",\"destination\":\"10.0.0.5\"}");

	r.dst_len = 24;
	REQUIRE(dpmon_addr_parse("10.0.0.0", &r.dst) == 0);
	r.src_len = 32;
	REQUIRE(dpmon_addr_parse("192.0.2.66", &r.src) == 0);
	r.has_proto = 1;
	r.proto = 6;
	r.n_sport = 1;
	r.sport[0] = 1024;
	r.n_dport = 2;
	r.dport[0] = 80;
	r.dport[1] = 443;
	r.has_len = 1;
	r.len_lo = 40;
	r.len_hi = 72;
	r.n_flags = 2;
	r.flags[0] = 0x02;
	r.flags[1] = 0x12;
	r.action.kind = DPMON_FS_RATE_LIMIT;
	r.action.rate = 9600;
	check_json(&r, "{\"action\":\"rate-limit 9600\",\"destination\":\"10.0.0.0/24\","
		       "\"destination_ports\":[80,443],\"packet_length\":{\"max\":72,\"min\":40},"
		       "\"protocol\":6,\"source\":\"192.0.2.66\",\"source_ports\":[1024],"
		       "\"tcp_flags\":[\"syn\",\"syn+ack\"]}");

	r = (struct dpmon_fs_rule){.family = 6, .dst_len = 128, .has_proto = 1, .proto = 58};
	REQUIRE(dpmon_addr_parse("2001:db8::6", &r.dst) == 0);
	r.n_icmp_type = 1;
	r.icmp_type[0] = 128;
	r.has_icmp_code = 1;
	r.frag = DPMON_FS_FRAG_IS;
	r.action = (struct dpmon_fs_action){.kind = DPMON_FS_REDIRECT, .asn = 65000, .value = 666};
	check_json(&r, "{\"action\":\"redirect 65000:666\",\"destination\":\"2001:db8::6\","
		       "\"fragment\":true,\"icmp_code\":0,\"icmp_type\":[128],\"protocol\":58}");

	check_json_refused("[]", DPMON_FS_JSON_NOT_OBJECT, "", "");
	check_json_refused("{\"protocol\": 6}", DPMON_FS_JSON_BAD_FIELD, "destination",
			   "is missing (an address or a prefix)");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"port\": 1}",
			   DPMON_FS_JSON_UNKNOWN_KEY, "port", "unknown key");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"packet_length\": {\"min\": -1}}",
			   DPMON_FS_JSON_BAD_FIELD, "packet_length.min",
			   "must be an integer 0 .. 65535");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"icmp_type\": [1, 2, 3, 4, 5]}",
			   DPMON_FS_JSON_BAD_FIELD, "icmp_type",
			   "must be an array of 1 .. 4 values");
	/* A TCP flags value with an empty, unknown or repeated flag name. */
	check_json_refused("{\"destination\": \"10.0.0.5\", \"tcp_flags\": [\"\"]}",
			   DPMON_FS_JSON_REFUSED, "tcp_flags[0]",
			   "must be flag names fin, syn, rst, push, ack, urgent joined by '+' "
			   "(\"syn+ack\")");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"tcp_flags\": [\"ack\", \"syn+\"]}",
			   DPMON_FS_JSON_REFUSED, "tcp_flags[1]",
			   "must be flag names fin, syn, rst, push, ack, urgent joined by '+' "
			   "(\"syn+ack\")");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"tcp_flags\": [\"+syn\"]}",
			   DPMON_FS_JSON_BAD_FIELD, "tcp_flags[0]",
			   "must be flag names fin, syn, rst, push, ack, urgent joined by '+' "
			   "(\"syn+ack\")");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"tcp_flags\": [\"syn+syn\"]}",
			   DPMON_FS_JSON_REFUSED, "tcp_flags[0]",
			   "must be flag names fin, syn, rst, push, ack, urgent joined by '+' "
			   "(\"syn+ack\")");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"tcp_flags\": [\"xmas\"]}",
			   DPMON_FS_JSON_BAD_FIELD, "tcp_flags[0]",
			   "must be flag names fin, syn, rst, push, ack, urgent joined by '+' "
			   "(\"syn+ack\")");
	/* A value given twice in a list. */
	check_json_refused("{\"destination\": \"10.0.0.5\", \"destination_ports\": [1, 1]}",
			   DPMON_FS_JSON_REFUSED, "destination_ports[1]",
			   "repeats destination_ports[0] (1): give each value once");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"source_ports\": [53, 80, 53]}",
			   DPMON_FS_JSON_REFUSED, "source_ports[2]",
			   "repeats source_ports[0] (53): give each value once");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"icmp_type\": [8, 0, 0]}",
			   DPMON_FS_JSON_REFUSED, "icmp_type[2]",
			   "repeats icmp_type[1] (0): give each value once");
	check_json_refused(
		"{\"destination\": \"10.0.0.5\", \"tcp_flags\": [\"syn+ack\", \"ack+syn\"]}",
		DPMON_FS_JSON_REFUSED, "tcp_flags[1]",
		"repeats the flags of tcp_flags[0]: give each value once");
	/* An IPv4-mapped IPv6 address or prefix. */
	check_json_refused("{\"destination\": \"::ffff:10.0.0.5\"}", DPMON_FS_JSON_REFUSED,
			   "destination", "is an IPv4-mapped IPv6 address: give the IPv4 address");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"source\": \"::ffff:192.0.2.0/120\"}",
			   DPMON_FS_JSON_REFUSED, "source",
			   "is an IPv4-mapped IPv6 address: give the IPv4 address");
	/* A source prefix of length 0. */
	check_json_refused("{\"destination\": \"10.0.0.5\", \"source\": \"0.0.0.0/0\"}",
			   DPMON_FS_JSON_REFUSED, "source",
			   "of length 0 matches everything: leave source out instead");
	check_json_refused("{\"destination\": \"2001:db8::6\", \"source\": \"::/0\"}",
			   DPMON_FS_JSON_REFUSED, "source",
			   "of length 0 matches everything: leave source out instead");
	check_json_refused("{\"destination\": \"10.0.0.5\", \"action\": \"drop\"}",
			   DPMON_FS_JSON_BAD_FIELD, "action",
			   "expected discard, rate-limit BYTES_PER_S, redirect ASN:VALUE or mark "
			   "DSCP");
}

/* ------------------------------------------------------------------------
 * The lines for tests/integration/test_flowspec_exabgp.py.
 * --------------------------------------------------------------------- */

/* @p s as IPv6: every source moved into 2001:db8:ff::/48, the family 6. */
static void
to_ipv6(struct sample *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct dpmon_addr a;
		uint32_t v4 = dpmon_addr_v4(&s->p[i].src);

		REQUIRE(dpmon_addr_parse("2001:db8:ff::", &a) == 0);
		memcpy(a.b + 12, &v4, 4);
		s->p[i].src = a;
		s->p[i].family = 6;
		if (s->p[i].ip_proto == 1)
			s->p[i].ip_proto = 58;
	}
}

static void
print_rule(const struct dpmon_fs_rule *r, bool announce)
{
	char line[DPMON_FS_TEXT_LEN];

	REQUIRE(dpmon_fs_rule_check(r, NULL) == 0);
	REQUIRE(dpmon_fs_rule_exabgp(r, announce, line, sizeof(line)) > 0);
	fputs(line, stdout);
}

/*
 * Print the ExaBGP lines of the rules chosen for every attack (IPv4, and
 * three of them in IPv6) and of one rule per action, announces or withdraws.
 */
static void
print_lines(bool announce)
{
	static struct sample s;
	static const enum attack v6[] = {DNS_AMP, SYN_FLOOD, FRAGMENT_FLOOD};
	struct dpmon_fs_params p;
	struct dpmon_fs_choice c;
	struct dpmon_fs_rule r;

	for (int a = 0; a < ATTACKS; a++) {
		make_sample(&s, (enum attack)a, 1000 + (uint64_t)a);
		p = params(2.0 / 3);
		REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0 && c.n_rules > 0);
		for (uint32_t i = 0; i < c.n_rules; i++)
			print_rule(&c.rules[i], announce);
	}
	for (unsigned k = 0; k < RTE_DIM(v6); k++) {
		make_sample(&s, v6[k], 1000 + (uint64_t)v6[k]);
		to_ipv6(&s);
		p = params(2.0 / 3);
		p.family = 6;
		p.dst_len = 128;
		REQUIRE(dpmon_addr_parse("2001:db8::5", &p.dst) == 0);
		REQUIRE(dpmon_fs_choose(s.p, s.n, &p, &c) == 0 && c.n_rules > 0);
		for (uint32_t i = 0; i < c.n_rules; i++)
			print_rule(&c.rules[i], announce);
	}
	/* One rule per action, and ICMP of both families. */
	r = rule4();
	r.dst_len = 24;
	dpmon_addr_from_v4(&r.dst, IP4(10, 0, 1, 0)); /* a subnet alert's prefix */
	r.n_dport = 1;
	r.dport[0] = 123;
	r.action = (struct dpmon_fs_action){.kind = DPMON_FS_RATE_LIMIT, .rate = 125000};
	print_rule(&r, announce);
	r = rule4();
	r.proto = 1;
	r.n_icmp_type = 1;
	r.icmp_type[0] = 8;
	r.has_icmp_code = 1;
	r.action = (struct dpmon_fs_action){.kind = DPMON_FS_REDIRECT, .asn = 65000, .value = 666};
	print_rule(&r, announce);
	r = (struct dpmon_fs_rule){.family = 6,
				   .dst_len = 128,
				   .has_proto = 1,
				   .proto = 58,
				   .n_icmp_type = 1,
				   .icmp_type = {128}};
	REQUIRE(dpmon_addr_parse("2001:db8::6", &r.dst) == 0);
	r.action = (struct dpmon_fs_action){.kind = DPMON_FS_MARK, .dscp = 8};
	print_rule(&r, announce);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--exabgp-announce") == 0) {
		print_lines(true);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--exabgp-withdraw") == 0) {
		print_lines(false);
		return 0;
	}
	test_attacks();
	test_no_rule();
	test_check();
	test_actions();
	test_text();
	test_json();
	return check_finish("test_flowspec");
}
