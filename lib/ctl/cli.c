/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.c — dpmonctl's command line (ctl.h): global and command options,
 * the environment (DPMON_URL, DPMON_TOKEN_FILE, NO_COLOR), the token
 * file, and the dispatch to a command, once or under --watch.
 */
#include "ctl_private.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CTL_DEFAULT_URL     "http://127.0.0.1:8080"
#define CTL_DEFAULT_LIMIT   20
#define CTL_DEFAULT_WATCH_S 2.0
#define CTL_RELOAD_WAIT_S   10.0
/* A token file larger than this is not a token (bytes). */
#define CTL_TOKEN_MAX       4096

/* ------------------------------------------------------------------------
 * Usage
 * --------------------------------------------------------------------- */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: dpmonctl [OPTIONS] COMMAND [ARGUMENTS]\n"
		"Query and steer a running dpmon through its REST API.\n"
		"\n"
		"Commands:\n"
		"  summary                      totals, ports, worker lcores, health\n"
		"  top                          the top hosts by a metric\n"
		"  host ADDRESS                 one host, by direction and protocol class\n"
		"  subnets                      every monitored subnet\n"
		"  alerts                       active and recent alerts\n"
		"  blackhole list               every blackhole\n"
		"  blackhole add ADDRESS        blackhole a host (needs the token, if any)\n"
		"  blackhole del ADDRESS        remove a blackhole (needs the token, if any)\n"
		"  flowspec list                the FlowSpec rules, of the alerts and manual\n"
		"  flowspec add DESTINATION     add a manual FlowSpec rule (needs the token, if "
		"any)\n"
		"  flowspec del ID              withdraw a FlowSpec rule (needs the token, if "
		"any)\n"
		"  health                       the health verdict; exit status 0 when healthy, 3 "
		"when not\n"
		"  reload                       reload the configuration and say whether it was "
		"applied\n"
		"\n"
		"Options:\n"
		"  --url URL                    dpmon's API (default $DPMON_URL, "
		"else " CTL_DEFAULT_URL ")\n"
		"  --token-file FILE            bearer token for requests that change state\n"
		"                               (default $DPMON_TOKEN_FILE)\n"
		"  --cacert FILE                CA certificates for an https URL\n"
		"  -o, --output FORMAT          table (default) or json (the API's JSON "
		"unchanged)\n"
		"  --watch [SECONDS]            redraw summary, top or alerts every SECONDS "
		"(default 2)\n"
		"                               until q or Ctrl-C\n"
		"  --sort METRIC                top: pps, bps (default), packets, bytes, avg_pps, "
		"avg_bps,\n"
		"                               syn_pps, fragments_pps, tcp_pps, tcp_bps, udp_pps, "
		"udp_bps,\n"
		"                               icmp_pps, icmp_bps, flows or peers\n"
		"  --direction DIRECTION        top: ingress (default) or egress\n"
		"  --subnet PREFIX              top: only the hosts of this monitored subnet\n"
		"  -n, --limit N                top: at most N hosts, 1..10000 (default 20)\n"
		"  --active                     alerts: only the active ones\n"
		"  --pid-file FILE              reload: send SIGHUP to the pid in FILE\n"
		"                               (default: systemctl reload of the unit)\n"
		"  --unit NAME                  reload: the systemd unit (default dpmon)\n"
		"  --source PREFIX              flowspec add: the match components, as the API's\n"
		"  --protocol NAME|NUMBER       body (docs/api.md): lists are comma-separated,\n"
		"  --source-ports N[,N...]      a length range is MIN-MAX (either may be left\n"
		"  --destination-ports N[,N...] out), TCP flags are names joined by '+'\n"
		"  --packet-length MIN-MAX\n"
		"  --tcp-flags FLAGS[,FLAGS...]\n"
		"  --fragment\n"
		"  --icmp-type N[,N...]\n"
		"  --icmp-code N\n"
		"  --action ACTION              discard (default), rate-limit N, redirect ASN:V, "
		"mark N\n"
		"  -h, --help                   this text\n"
		"  -V, --version                dpmonctl's version\n"
		"\n"
		"Exit status: 0 done (health: healthy), 1 error, 2 bad command line,\n"
		"3 health: dpmon is unhealthy. Colours only on a terminal, never with NO_COLOR.\n");
}

/* ------------------------------------------------------------------------
 * Option values
 * --------------------------------------------------------------------- */

enum {
	OPT_URL = 256,
	OPT_TOKEN_FILE,
	OPT_CACERT,
	OPT_WATCH,
	OPT_SORT,
	OPT_DIRECTION,
	OPT_SUBNET,
	OPT_ACTIVE,
	OPT_PID_FILE,
	OPT_UNIT,
	OPT_FS, /* OPT_FS + enum ctl_fs_opt: flowspec add's options */
};

static const struct option options[] = {
	{"url", required_argument, NULL, OPT_URL},
	{"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	{"cacert", required_argument, NULL, OPT_CACERT},
	{"output", required_argument, NULL, 'o'},
	{"watch", optional_argument, NULL, OPT_WATCH},
	{"sort", required_argument, NULL, OPT_SORT},
	{"direction", required_argument, NULL, OPT_DIRECTION},
	{"subnet", required_argument, NULL, OPT_SUBNET},
	{"limit", required_argument, NULL, 'n'},
	{"active", no_argument, NULL, OPT_ACTIVE},
	{"pid-file", required_argument, NULL, OPT_PID_FILE},
	{"unit", required_argument, NULL, OPT_UNIT},
	{"source", required_argument, NULL, OPT_FS + CTL_FS_SOURCE},
	{"protocol", required_argument, NULL, OPT_FS + CTL_FS_PROTOCOL},
	{"source-ports", required_argument, NULL, OPT_FS + CTL_FS_SOURCE_PORTS},
	{"destination-ports", required_argument, NULL, OPT_FS + CTL_FS_DESTINATION_PORTS},
	{"packet-length", required_argument, NULL, OPT_FS + CTL_FS_PACKET_LENGTH},
	{"tcp-flags", required_argument, NULL, OPT_FS + CTL_FS_TCP_FLAGS},
	{"fragment", no_argument, NULL, OPT_FS + CTL_FS_FRAGMENT},
	{"icmp-type", required_argument, NULL, OPT_FS + CTL_FS_ICMP_TYPE},
	{"icmp-code", required_argument, NULL, OPT_FS + CTL_FS_ICMP_CODE},
	{"action", required_argument, NULL, OPT_FS + CTL_FS_ACTION},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* SECONDS of --watch: a decimal number from 0.1 to 3600. */
static bool
parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0.1 || v > 3600)
		return false;
	*out = v;
	return true;
}

/* N of -n: 1..10000, decimal digits only (as the API's limit). */
static bool
parse_limit(const char *s, unsigned int *out)
{
	unsigned long v = 0;

	if (*s == '\0' || strlen(s) > 5)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < 1 || v > 10000)
		return false;
	*out = (unsigned int)v;
	return true;
}

/* The token: the file's first line, without surrounding white space. */
static int
read_token(const char *path, char **token)
{
	char buf[CTL_TOKEN_MAX + 1];
	size_t n, start = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "dpmonctl: cannot read the token file %s: %s\n", path,
			strerror(errno));
		return CTL_EXIT_ERROR;
	}
	n = fread(buf, 1, CTL_TOKEN_MAX, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	while (buf[start] == ' ' || buf[start] == '\t')
		start++;
	if (buf[start] == '\0') {
		fprintf(stderr, "dpmonctl: the token file %s holds no token\n", path);
		return CTL_EXIT_ERROR;
	}
	*token = strdup(buf + start);
	return *token ? 0 : CTL_EXIT_ERROR;
}

/* ------------------------------------------------------------------------
 * Commands
 * --------------------------------------------------------------------- */

/* Which command-specific options a command takes (bits of OPTS_*). */
enum {
	OPTS_TOP = 1,
	OPTS_ALERTS = 2,
	OPTS_RELOAD = 4,
	OPTS_FLOWSPEC = 8,
};

static const struct command {
	const char *name;
	ctl_cmd_fn fn;
	bool watch; /* takes --watch */
	unsigned int opts;
} commands[] = {
	{"summary", ctl_cmd_summary, true, 0},
	{"top", ctl_cmd_top, true, OPTS_TOP},
	{"host", ctl_cmd_host, false, 0},
	{"subnets", ctl_cmd_subnets, false, 0},
	{"alerts", ctl_cmd_alerts, true, OPTS_ALERTS},
	{"blackhole", ctl_cmd_blackhole, false, 0},
	{"flowspec", ctl_cmd_flowspec, false, OPTS_FLOWSPEC},
	{"health", ctl_cmd_health, false, 0},
	{"reload", ctl_cmd_reload, false, OPTS_RELOAD},
};

/*
 * argv with "--watch SECONDS" joined into "--watch=SECONDS", so that the
 * optional value may follow as its own word (getopt wants it attached).
 */
static char **
join_watch(int *argc, char **argv)
{
	char **out = calloc((size_t)*argc + 1, sizeof(*out));
	int n = 0;
	double s;

	if (out == NULL)
		return NULL;
	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				out[n++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--watch") == 0 && i + 1 < *argc &&
		    parse_seconds(argv[i + 1], &s)) {
			if (asprintf(&out[n++], "--watch=%s", argv[i + 1]) < 0)
				return NULL;
			i++;
			continue;
		}
		out[n++] = argv[i];
	}
	*argc = n;
	return out;
}

/* The command options that take a text as it is: where it goes in the
 * context and which commands take it. */
static const struct text_option {
	int opt;
	size_t offset; /* of a const char * in struct ctl_ctx */
	unsigned int used;
} text_options[] = {
	{OPT_SORT, offsetof(struct ctl_ctx, sort), OPTS_TOP},
	{OPT_DIRECTION, offsetof(struct ctl_ctx, direction), OPTS_TOP},
	{OPT_SUBNET, offsetof(struct ctl_ctx, subnet), OPTS_TOP},
	{OPT_PID_FILE, offsetof(struct ctl_ctx, pid_file), OPTS_RELOAD},
	{OPT_UNIT, offsetof(struct ctl_ctx, unit), OPTS_RELOAD},
};

/* If @p opt is one of text_options, store @p arg in @p ctx, add its
 * commands to @p used and return true. */
static bool
set_text_option(struct ctl_ctx *ctx, int opt, const char *arg, unsigned int *used)
{
	for (size_t i = 0; i < sizeof(text_options) / sizeof(text_options[0]); i++)
		if (text_options[i].opt == opt) {
			memcpy((char *)ctx + text_options[i].offset, &arg, sizeof(arg));
			*used |= text_options[i].used;
			return true;
		}
	return false;
}

int
ctl_main(int argc, char **argv)
{
	struct ctl_ctx ctx = {
		.out = stdout,
		.err = stderr,
		.limit = CTL_DEFAULT_LIMIT,
		.unit = "dpmon",
		.reload_wait_s = CTL_RELOAD_WAIT_S,
	};
	const char *url = getenv("DPMON_URL"), *token_file = getenv("DPMON_TOKEN_FILE");
	const char *cacert = NULL, *no_colour = getenv("NO_COLOR");
	const struct command *cmd = NULL;
	unsigned int used = 0; /* OPTS_* of the command options given */
	double watch_s = 0;
	char **args, *token = NULL, msg[512];
	int opt, rc;

	args = join_watch(&argc, argv);
	if (args == NULL) {
		fprintf(stderr, "dpmonctl: out of memory\n");
		return CTL_EXIT_ERROR;
	}
	while ((opt = getopt_long(argc, args, "o:n:hV", options, NULL)) != -1) {
		switch (opt) {
		case OPT_URL:
			url = optarg;
			break;
		case OPT_TOKEN_FILE:
			token_file = optarg;
			break;
		case OPT_CACERT:
			cacert = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
				fprintf(stderr,
					"dpmonctl: invalid -o '%s': expected table or json\n",
					optarg);
				return CTL_EXIT_USAGE;
			}
			ctx.json = strcmp(optarg, "json") == 0;
			break;
		case OPT_WATCH:
			watch_s = CTL_DEFAULT_WATCH_S;
			if (optarg != NULL && !parse_seconds(optarg, &watch_s)) {
				fprintf(stderr,
					"dpmonctl: invalid --watch '%s': expected seconds, "
					"0.1 to 3600\n",
					optarg);
				return CTL_EXIT_USAGE;
			}
			break;
		case 'n':
			if (!parse_limit(optarg, &ctx.limit)) {
				fprintf(stderr,
					"dpmonctl: invalid -n '%s': expected an integer "
					"1..10000\n",
					optarg);
				return CTL_EXIT_USAGE;
			}
			used |= OPTS_TOP;
			break;
		case OPT_ACTIVE:
			ctx.active = true;
			used |= OPTS_ALERTS;
			break;
		case 'h':
			usage(stdout);
			return CTL_EXIT_OK;
		case 'V':
			printf("dpmonctl %s\n", DPMON_VERSION);
			return CTL_EXIT_OK;
		default:
			if (set_text_option(&ctx, opt, optarg, &used))
				break;
			if (opt >= OPT_FS && opt < OPT_FS + CTL_FS_N) {
				ctx.fs[opt - OPT_FS] = optarg != NULL ? optarg : "";
				used |= OPTS_FLOWSPEC;
				break;
			}
			fprintf(stderr, "dpmonctl: see dpmonctl --help\n");
			return CTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "dpmonctl: a command is missing (dpmonctl --help)\n");
		return CTL_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(args[optind], commands[i].name) == 0)
			cmd = &commands[i];
	if (cmd == NULL) {
		fprintf(stderr, "dpmonctl: unknown command '%s' (dpmonctl --help)\n", args[optind]);
		return CTL_EXIT_USAGE;
	}
	if (used & ~cmd->opts) {
		fprintf(stderr,
			"dpmonctl: %s takes none of --sort, --direction, --subnet, -n, "
			"--active, --pid-file, --unit but its own (dpmonctl --help)\n",
			cmd->name);
		return CTL_EXIT_USAGE;
	}
	if (watch_s > 0 && (!cmd->watch || optind + 1 < argc)) {
		fprintf(stderr, "dpmonctl: --watch redraws summary, top or alerts only, without "
				"arguments\n");
		return CTL_EXIT_USAGE;
	}
	if (watch_s > 0 && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "dpmonctl: --watch redraws a terminal; for a pipe or a file, run "
				"the command in a loop\n");
		return CTL_EXIT_USAGE;
	}
	if (token_file != NULL && token_file[0] != '\0' &&
	    (rc = read_token(token_file, &token)) != 0)
		return rc;
	if (url == NULL || url[0] == '\0')
		url = CTL_DEFAULT_URL;
	if ((rc = ctl_http_open(&ctx.http, url, token, cacert, msg, sizeof(msg))) != 0) {
		fprintf(stderr, "dpmonctl: %s\n", msg);
		free(token);
		return rc == -EINVAL ? CTL_EXIT_USAGE : CTL_EXIT_ERROR;
	}
	free(token);
	ctx.colour = isatty(STDOUT_FILENO) && (no_colour == NULL || no_colour[0] == '\0');
	if (watch_s > 0)
		rc = ctl_watch(&ctx, cmd->fn, cmd->name, watch_s, argc - optind - 1,
			       args + optind + 1);
	else
		rc = cmd->fn(&ctx, argc - optind - 1, args + optind + 1);
	ctl_http_close(&ctx.http);
	free(args); /* the joined "--watch=N" words stay until exit */
	return rc;
}
