/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpmon-gen.c — command line front end of the synthetic traffic writer.
 *
 * Design: parse the options with getopt_long into a struct dpmon_gen_opts
 * (lib/gen/gen.h does the parsing of subnets, mixes and sizes, and all
 * the validation; lib/gen/numbers.h the plain numbers), call
 * dpmon_gen_write(), print the summary on stdout.
 * With --profile FILE the packets come from a Pktgen-DPDK or kernel
 * pktgen profile instead (lib/gen/profile.h): only --output, --packets, --seed
 * and --summary apply, and any synthetic-traffic option is a usage error.
 * With --attack KIND the packets are attacks on the --victim addresses
 * that follow, mixed with the victims' own traffic (lib/gen/attack.h):
 * --output, --packets, --seed, --summary, --legit-percent and --labels
 * apply, and an option of the mix generator is a usage error.
 * Exit status: 0 written, 1 write failed, 2 usage error (a profile line
 * dpmon-gen does not understand is a usage error too).
 *
 * Reference: docs/dpmon-gen.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attack.h"
#include "gen.h"
#include "numbers.h"
#include "profile.h"

#ifndef DPMON_VERSION
#define DPMON_VERSION "dev"
#endif

#define EXIT_USAGE 2

/* ------------------------------------------------------------------------
 * The command line.
 * --------------------------------------------------------------------- */

enum {
	OPT_HOSTS = 256,
	OPT_MIX,
	OPT_SIZE,
	OPT_EGRESS,
	OPT_INTERNAL,
	OPT_PEERS,
	OPT_VLAN,
	OPT_SEED,
	OPT_SUMMARY,
	OPT_PROFILE,
	OPT_ATTACK,
	OPT_VICTIM,
	OPT_LEGIT,
	OPT_LABELS,
};

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"subnet", required_argument, NULL, 's'},
	{"packets", required_argument, NULL, 'n'},
	{"hosts", required_argument, NULL, OPT_HOSTS},
	{"mix", required_argument, NULL, OPT_MIX},
	{"size", required_argument, NULL, OPT_SIZE},
	{"egress-percent", required_argument, NULL, OPT_EGRESS},
	{"internal-percent", required_argument, NULL, OPT_INTERNAL},
	{"peers", required_argument, NULL, OPT_PEERS},
	{"vlan", required_argument, NULL, OPT_VLAN},
	{"seed", required_argument, NULL, OPT_SEED},
	{"summary", required_argument, NULL, OPT_SUMMARY},
	{"profile", required_argument, NULL, OPT_PROFILE},
	{"attack", required_argument, NULL, OPT_ATTACK},
	{"victim", required_argument, NULL, OPT_VICTIM},
	{"legit-percent", required_argument, NULL, OPT_LEGIT},
	{"labels", required_argument, NULL, OPT_LABELS},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void
usage(FILE *out)
{
	fputs("usage: dpmon-gen --output FILE.pcap [options]\n"
	      "\n"
	      "Write deterministic synthetic IPv4/IPv6 traffic to a pcap file (Ethernet)\n"
	      "and print exact per-subnet totals of what was written.\n"
	      "\n"
	      "  -o, --output FILE        pcap file to create (required)\n"
	      "  -s, --subnet CIDR[=NAME] monitored subnet, IPv4 or IPv6; repeatable.\n"
	      "                           default: 10.0.0.0/24=office 10.0.1.0/24=servers\n"
	      "                           192.0.2.0/24=dmz 2001:db8:10::/64=office-v6\n"
	      "      --hosts N            hosts per subnet: the first N addresses after the\n"
	      "                           network address (default 64; must fit)\n"
	      "  -n, --packets N          packets to write (default 100000)\n"
	      "      --mix tcp=W,udp=W,icmp=W,other=W\n"
	      "                           protocol weights (default "
	      "tcp=40,udp=50,icmp=10,other=0)\n"
	      "      --size N|imix|N,N,.. frame bytes incl. Ethernet header, excl. FCS and VLAN\n"
	      "                           tag (default 64); imix = 64,594,1518 as 7:4:1; a list\n"
	      "                           is a uniform choice. A size below a packet's minimum\n"
	      "                           grows to it: IPv4 TCP 54, UDP 42, ICMP 42, other 38;\n"
	      "                           IPv6 TCP 74, UDP 62, ICMPv6 62, other 54\n"
	      "      --egress-percent P   external packets sent by the monitored host (default "
	      "30)\n"
	      "      --internal-percent P packets between two monitored hosts (default 0)\n"
	      "      --peers N            external peers per family (default 256; IPv4 max 508)\n"
	      "      --vlan VID           add one 802.1Q tag (0..4094): 4 bytes on top of --size\n"
	      "      --seed S             PRNG seed (default 1); same options + seed = same file\n"
	      "      --summary text|json  summary format on stdout (default text)\n"
	      "      --profile FILE       render a Pktgen-DPDK (.pkt) or kernel pktgen (.sh)\n"
	      "                           profile instead; with --output, --packets (default:\n"
	      "                           the profile's count), --seed, --summary only\n"
	      "      --attack KIND        write an attack capture instead: the victims of the\n"
	      "                           --victim options that follow get attack KIND:\n"
	      "                           dns-amp, ntp-amp, memcached, syn, frag, ack, udp-syn,\n"
	      "                           one-source, spoofed; with --output, --packets (dealt\n"
	      "                           to the victims in turn), --seed, --summary, and:\n"
	      "      --victim ADDR        an IPv4 or IPv6 victim of the last --attack; repeatable\n"
	      "      --legit-percent P    the share of each victim's packets that are its own\n"
	      "                           traffic (TCP 443/80, DNS, ping) (default 33)\n"
	      "      --labels FILE        write one byte per packet: 1 attack, 0 legitimate\n"
	      "  -h, --help               this help\n"
	      "  -V, --version            print the version\n"
	      "\n"
	      "See docs/dpmon-gen.md.\n",
	      out);
}

/* ------------------------------------------------------------------------
 * Option values.
 * --------------------------------------------------------------------- */

static int
bad_value(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "dpmon-gen: --%s %s: %s\n", opt, arg, why);
	return -EINVAL;
}

/* Apply one option to @p o; returns 0 or -EINVAL (message printed). */
static int
apply_option(int c, const char *arg, struct dpmon_gen_opts *o, bool *json)
{
	const char *why = NULL;
	uint32_t v32;

	switch (c) {
	case 'o':
		o->output = arg;
		return 0;
	case 's':
		return dpmon_gen_add_subnet(o, arg, &why) ? bad_value("subnet", arg, why) : 0;
	case 'n':
		return gen_parse_uint(arg, strlen(arg), UINT64_MAX, &o->packets) == 0
			       ? 0
			       : bad_value("packets", arg, "expected a number of packets");
	case OPT_HOSTS:
		return gen_parse_u32(arg, DPMON_GEN_MAX_HOSTS, &o->hosts) == 0 && o->hosts > 0
			       ? 0
			       : bad_value("hosts", arg, "expected 1..16777216");
	case OPT_MIX:
		return dpmon_gen_parse_mix(o, arg, &why) ? bad_value("mix", arg, why) : 0;
	case OPT_SIZE:
		return dpmon_gen_parse_sizes(o, arg, &why) ? bad_value("size", arg, why) : 0;
	case OPT_EGRESS:
		return gen_parse_u32(arg, 100, &o->egress_percent) == 0
			       ? 0
			       : bad_value("egress-percent", arg, "expected 0..100");
	case OPT_INTERNAL:
		return gen_parse_u32(arg, 100, &o->internal_percent) == 0
			       ? 0
			       : bad_value("internal-percent", arg, "expected 0..100");
	case OPT_PEERS:
		return gen_parse_u32(arg, DPMON_GEN_MAX_PEERS, &o->peers) == 0 && o->peers > 0
			       ? 0
			       : bad_value("peers", arg, "expected 1..16777216");
	case OPT_VLAN:
		if (gen_parse_u32(arg, 4094, &v32) != 0)
			return bad_value("vlan", arg, "expected a VLAN id 0..4094");
		o->vlan = (int32_t)v32;
		return 0;
	case OPT_SEED:
		return gen_parse_uint(arg, strlen(arg), UINT64_MAX, &o->seed) == 0
			       ? 0
			       : bad_value("seed", arg, "expected an unsigned 64-bit number");
	case OPT_SUMMARY:
		if (strcmp(arg, "text") != 0 && strcmp(arg, "json") != 0)
			return bad_value("summary", arg, "expected text or json");
		*json = strcmp(arg, "json") == 0;
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---------------------------------------------------------- --profile */

/* Command-line state beyond struct dpmon_gen_opts. */
struct cli {
	bool json;
	const char *profile;     /* --profile FILE, or NULL */
	bool packets_given;      /* --packets was given */
	const char *synthetic;   /* the first synthetic-traffic option given, or NULL */
	const char *mix_only;    /* the first option of the mix generator alone, or NULL */
	const char *attack_only; /* the first option of attack captures alone, or NULL */
	bool attack_given;       /* an --attack was given (the kind of the next victims) */
	bool victim_pending;     /* the last --attack has no --victim yet */
	enum dpmon_gen_attack_kind kind;
	struct dpmon_gen_attack_opts attack;
};

/* True for the options of attack captures alone. */
static bool
attack_option(int c)
{
	return c == OPT_ATTACK || c == OPT_VICTIM || c == OPT_LEGIT || c == OPT_LABELS;
}

/* Remember what --profile and --attack need to know about option @p c. */
static void
note_option(struct cli *cli, int c)
{
	const struct option *lo;
	const char *name = NULL;

	if (c == 'n')
		cli->packets_given = true;
	if (c == 'o' || c == 'n' || c == OPT_SEED || c == OPT_SUMMARY || c == OPT_PROFILE)
		return;
	for (lo = long_opts; lo->name != NULL; lo++)
		if (lo->val == c)
			name = lo->name;
	if (cli->synthetic == NULL)
		cli->synthetic = name;
	if (attack_option(c) && cli->attack_only == NULL)
		cli->attack_only = name;
	else if (!attack_option(c) && cli->mix_only == NULL)
		cli->mix_only = name;
}

/*
 * Render --profile: load, pick the packet count, write, print the summary.
 * @return the exit status.
 */
static int
run_profile(const struct dpmon_gen_opts *o, const struct cli *cli)
{
	struct dpmon_profile *p;
	struct dpmon_profile_summary s;
	uint64_t packets;
	int rc;

	if (cli->synthetic != NULL) {
		fprintf(stderr,
			"dpmon-gen: --%s cannot be combined with --profile (the profile "
			"defines the traffic)\n",
			cli->synthetic);
		return EXIT_USAGE;
	}
	rc = dpmon_profile_load(cli->profile, &p, stderr);
	if (rc == -EINVAL)
		return EXIT_USAGE;
	if (rc != 0)
		return EXIT_FAILURE;
	packets = cli->packets_given ? o->packets : dpmon_profile_count(p);
	if (packets == 0 && !cli->packets_given) {
		fprintf(stderr, "dpmon-gen: %s sends until stopped (count 0): give --packets N\n",
			cli->profile);
		dpmon_profile_free(p);
		return EXIT_USAGE;
	}
	rc = dpmon_profile_render(p, o->output, packets, o->seed, &s, stderr);
	if (rc == 0)
		rc = cli->json
			     ? dpmon_profile_summary_print_json(p, o->output, o->seed, &s, stdout)
			     : dpmon_profile_summary_print_text(p, o->output, o->seed, &s, stdout);
	dpmon_profile_free(p);
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ----------------------------------------------------------- --attack */

static const char usage_attack[] = "usage: dpmon-gen --attack KIND --victim ADDR... --output "
				   "FILE.pcap [options]; see --help\n";

/* Apply attack option @p c to @p cli; returns 0 or -EINVAL (message printed). */
static int
apply_attack_option(int c, const char *arg, struct cli *cli)
{
	const char *why = NULL;

	switch (c) {
	case OPT_ATTACK:
		if (dpmon_gen_attack_kind_parse(arg, &cli->kind) != 0)
			return bad_value("attack", arg,
					 "expected dns-amp, ntp-amp, memcached, syn, frag, ack, "
					 "udp-syn, one-source or spoofed");
		cli->attack_given = true;
		cli->victim_pending = true;
		return 0;
	case OPT_VICTIM:
		if (!cli->attack_given)
			return bad_value("victim", arg, "give --attack KIND before its victims");
		cli->victim_pending = false;
		return dpmon_gen_attack_add_victim(&cli->attack, cli->kind, arg, &why)
			       ? bad_value("victim", arg, why)
			       : 0;
	case OPT_LEGIT:
		return gen_parse_u32(arg, 100, &cli->attack.legit_percent) == 0
			       ? 0
			       : bad_value("legit-percent", arg, "expected 0..100");
	case OPT_LABELS:
		cli->attack.labels = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * Write the attack capture of @p cli with the common options of @p o.
 * @return the exit status.
 */
static int
run_attack(const struct dpmon_gen_opts *o, struct cli *cli)
{
	struct dpmon_gen_attack_summary s;
	int rc;

	if (cli->mix_only != NULL) {
		fprintf(stderr,
			"dpmon-gen: --%s cannot be combined with --attack (the attack "
			"defines the traffic)\n",
			cli->mix_only);
		return EXIT_USAGE;
	}
	if (!cli->attack_given || cli->victim_pending) {
		fprintf(stderr, "dpmon-gen: %s\n",
			cli->attack_given ? "--attack KIND needs a --victim ADDR after it"
					  : "--victim, --legit-percent and --labels need --attack");
		return EXIT_USAGE;
	}
	cli->attack.output = o->output;
	cli->attack.packets = o->packets;
	cli->attack.seed = o->seed;
	rc = dpmon_gen_attack_write(&cli->attack, &s, stderr);
	if (rc == -EINVAL)
		return EXIT_USAGE;
	if (rc == 0)
		rc = dpmon_gen_attack_summary_print(&cli->attack, &s, cli->json, stdout);
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ------------------------------------------------------------------------
 * Main.
 * --------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	struct dpmon_gen_opts o;
	struct dpmon_gen_summary s;
	struct cli cli = {0};
	int c, rc = 0;

	dpmon_gen_defaults(&o);
	cli.attack.legit_percent = 33;
	while (rc == 0 && (c = getopt_long(argc, argv, "o:s:n:hV", long_opts, NULL)) != -1) {
		if (c == 'h' || c == 'V') {
			if (c == 'h')
				usage(stdout);
			else
				printf("dpmon-gen %s\n", DPMON_VERSION);
			dpmon_gen_opts_free(&o);
			return 0;
		}
		note_option(&cli, c);
		if (c == '?')
			rc = -EINVAL;
		else if (c == OPT_PROFILE)
			cli.profile = optarg;
		else if (attack_option(c))
			rc = apply_attack_option(c, optarg, &cli);
		else
			rc = apply_option(c, optarg, &o, &cli.json);
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "dpmon-gen: unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	if (rc == 0 && o.output == NULL) {
		fprintf(stderr, "dpmon-gen: --output FILE.pcap is required\n");
		rc = -EINVAL;
	}
	if (rc == 0 && (cli.profile != NULL || cli.attack_only != NULL)) {
		rc = cli.profile != NULL ? run_profile(&o, &cli) : run_attack(&o, &cli);
		dpmon_gen_opts_free(&o);
		if (rc == EXIT_USAGE)
			fputs(cli.profile != NULL
				      ? "usage: dpmon-gen --profile FILE --output FILE.pcap "
					"[--packets N] [--seed S] [--summary text|json]\n"
				      : usage_attack,
			      stderr);
		return rc;
	}
	if (rc == 0)
		rc = dpmon_gen_check(&o, stderr);
	if (rc != 0) {
		fputs(cli.attack_only != NULL
			      ? usage_attack
			      : "usage: dpmon-gen --output FILE.pcap [options]; see --help\n",
		      stderr);
		dpmon_gen_opts_free(&o);
		return EXIT_USAGE;
	}
	rc = dpmon_gen_write(&o, &s, stderr);
	dpmon_gen_opts_free(&o);
	if (rc != 0)
		return EXIT_FAILURE;
	rc = cli.json ? dpmon_gen_summary_print_json(&s, stdout)
		      : dpmon_gen_summary_print_text(&s, stdout);
	dpmon_gen_summary_free(&s);
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
