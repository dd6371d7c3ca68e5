/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.c — dpmon's command line (run_private.h).
 *
 *   dpmon [EAL options] -- --config FILE [--http-port N]
 *         [--http-port-file FILE] [--duration SECONDS]
 *   dpmon --check-config FILE | --version | --help
 *
 * The options that need no EAL are looked for first, before any "--";
 * dpmon's own options follow "--" and are checked before DPDK starts, so
 * that a typo costs no EAL start-up. Messages go to stderr, the usage of
 * --help to stdout.
 */
#include "run_private.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_version.h>

#include "config.h"
#include "file.h"

/* ------------------------------------------------------------------------
 * Usage and the options without EAL.
 * --------------------------------------------------------------------- */

void
app_usage(FILE *f)
{
	fprintf(f, "usage: dpmon [EAL options] -- --config FILE [--http-port N]\n"
		   "             [--http-port-file FILE] [--duration SECONDS]\n"
		   "       dpmon --check-config FILE\n"
		   "       dpmon --print-schema clickhouse [--cluster NAME] [--config FILE]\n"
		   "       dpmon --version | --help\n"
		   "Counts packets and bytes per monitored subnet and host on DPDK ports\n"
		   "and serves them as JSON over HTTP. See docs/configuration.md.\n");
}

/* --check-config FILE, argv[i] being the option. @return the exit status. */
static int
check_config(int argc, char **argv, int i)
{
	struct dpmon_config cfg;
	int rc;

	if (i != 1 || argc != 3) {
		fprintf(stderr, "dpmon: usage: dpmon --check-config FILE "
				"(one file, no other argument)\n");
		return EXIT_USAGE;
	}
	rc = dpmon_config_load(argv[i + 1], &cfg, stderr);
	if (rc != 0)
		return EXIT_CONFIG;
	printf("%s: valid (%u ports, %u subnets)\n", argv[i + 1], cfg.n_ports, cfg.n_subnets);
	dpmon_config_free(&cfg);
	return 0;
}

/*
 * --print-schema clickhouse [--cluster NAME] [--config FILE], argv[i]
 * being the option: the DDL of the export tables, with the database and
 * TTL of FILE's export.clickhouse (else the defaults). @return the exit
 * status.
 */
static int
print_schema(int argc, char **argv, int i)
{
	const char *cluster = NULL, *file = NULL;
	struct dpmon_config cfg;
	int rc;

	if (i != 1 || argc < 3 || strcmp(argv[2], "clickhouse") != 0)
		goto usage;
	for (int k = 3; k < argc; k += 2) {
		if (k + 1 >= argc)
			goto usage;
		if (strcmp(argv[k], "--cluster") == 0)
			cluster = argv[k + 1];
		else if (strcmp(argv[k], "--config") == 0)
			file = argv[k + 1];
		else
			goto usage;
	}
	if (file != NULL) {
		if (dpmon_config_load(file, &cfg, stderr) != 0)
			return EXIT_CONFIG;
	} else
		dpmon_config_defaults(&cfg);
	rc = dpmon_export_print_schema(&cfg.export, cluster, stdout);
	dpmon_config_free(&cfg);
	if (rc == -EINVAL) {
		fprintf(stderr,
			"dpmon: --cluster: '%s' is not a cluster name (letters, digits, "
			"'_')\n",
			cluster);
		return EXIT_USAGE;
	}
	return rc == 0 ? 0 : EXIT_START;
usage:
	fprintf(stderr, "dpmon: usage: dpmon --print-schema clickhouse [--cluster NAME] "
			"[--config FILE]\n");
	return EXIT_USAGE;
}

int
app_early_options(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--check-config") == 0)
			return check_config(argc, argv, i);
		if (strcmp(argv[i], "--print-schema") == 0)
			return print_schema(argc, argv, i);
		if (strcmp(argv[i], "--version") == 0) {
			printf("dpmon %s (%s)\n", DPMON_VERSION, rte_version());
			return 0;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			app_usage(stdout);
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------------------
 * dpmon's own options, after "--".
 * --------------------------------------------------------------------- */

/* A non-empty string of decimal digits (no sign, no spaces). */
static bool
all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The value of --http-port or --duration into @p o; @return 0 or -EINVAL. */
static int
parse_value(int opt, const char *arg, struct app_opts *o)
{
	char *end;

	if (opt == 'p') {
		o->http_port = strtol(arg, &end, 10);
		if (!all_digits(arg) || *end != '\0' || o->http_port > 65535) {
			fprintf(stderr, "dpmon: --http-port: '%s' is not 0..65535\n", arg);
			return -EINVAL;
		}
		return 0;
	}
	o->duration_s = strtod(arg, &end);
	if (*end != '\0' || !(o->duration_s > 0)) {
		fprintf(stderr,
			"dpmon: --duration: '%s' is not a positive number "
			"of seconds\n",
			arg);
		return -EINVAL;
	}
	return 0;
}

/* getopt_long over @p argv (argv[0] the program name); @return 0 or -EINVAL. */
static int
parse_app_args(int argc, char **argv, struct app_opts *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"http-port", required_argument, NULL, 'p'},
		{"http-port-file", required_argument, NULL, 'f'},
		{"duration", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->http_port = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'c') {
			o->config = optarg;
		} else if (opt == 'f') {
			o->port_file = optarg;
		} else if (opt == 'p' || opt == 'd') {
			if (parse_value(opt, optarg, o) != 0)
				return -EINVAL;
		} else {
			app_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dpmon: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->config == NULL) {
		fprintf(stderr, "dpmon: --config FILE is required (after the EAL options "
				"and '--')\n");
		app_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int
app_own_options(int argc, char **argv, struct app_opts *o, int *sep)
{
	char *saved;
	int s = 1, rc;

	while (s < argc && strcmp(argv[s], "--") != 0)
		s++;
	if (s == argc) {
		fprintf(stderr, "dpmon: missing '-- --config FILE' after the EAL options\n");
		app_usage(stderr);
		return EXIT_USAGE;
	}
	saved = argv[s];
	argv[s] = argv[0]; /* program name for getopt's messages */
	rc = parse_app_args(argc - s, argv + s, o);
	argv[s] = saved;
	*sep = s;
	return rc != 0 ? EXIT_USAGE : 0;
}

/* ------------------------------------------------------------------------
 * Capture files named in the EAL options.
 * --------------------------------------------------------------------- */

/*
 * DPDK's pcap PMD opens each rx_pcap= file inside rte_eal_init, with a
 * blocking open: a FIFO there would hold the start-up (and a SIGTERM) until
 * something wrote to it. The same check as for every file dpmon reads
 * (file.h) runs on those paths first.
 */
static int
check_vdev_files(const char *vdev)
{
	static const char key[] = "rx_pcap=";
	const char *p = vdev;
	char path[4096], why[128];

	while ((p = strstr(p, key)) != NULL) {
		size_t n;
		int fd;

		p += sizeof(key) - 1;
		n = strcspn(p, ",");
		if (n >= sizeof(path)) {
			fprintf(stderr, "dpmon: --vdev %s: rx_pcap path too long\n", vdev);
			return -ENAMETOOLONG;
		}
		memcpy(path, p, n);
		path[n] = '\0';
		fd = dpmon_file_open(path, 0, why, sizeof(why));
		if (fd < 0) {
			fprintf(stderr, "dpmon: --vdev: rx_pcap=%s: %s\n", path, why);
			return fd;
		}
		close(fd);
		p += n;
	}
	return 0;
}

int
app_check_eal_files(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			v = argv[++i];
		else if (strncmp(argv[i], "--vdev=", 7) == 0)
			v = argv[i] + 7;
		if (v != NULL && check_vdev_files(v) != 0)
			return EXIT_START;
	}
	return 0;
}
