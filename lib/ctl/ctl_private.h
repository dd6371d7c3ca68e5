/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_private.h — what dpmonctl's files share: the options of one run and
 * the commands.
 */
#ifndef DPMON_CTL_PRIVATE_H
#define DPMON_CTL_PRIVATE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "ctl.h"
#include "http.h"

/** One run of dpmonctl: the connection, the output and the options. */
struct ctl_ctx {
	struct ctl_http http;
	FILE *out;             /**< results */
	FILE *err;             /**< messages ("dpmonctl: ...") */
	bool json;             /**< -o json: the API's JSON unchanged */
	bool colour;           /**< ANSI colours in tables */
	const char *sort;      /**< top --sort, or NULL */
	const char *direction; /**< top --direction, or NULL */
	const char *subnet;    /**< top --subnet, or NULL */
	unsigned int limit;    /**< top -n */
	bool active;           /**< alerts --active */
	const char *pid_file;  /**< reload --pid-file, or NULL: systemctl */
	const char *unit;      /**< reload: the systemd unit */
	double reload_wait_s;  /**< reload: how long to wait for the verdict */
};

/** A command: its words after the command name. @return an exit status. */
typedef int (*ctl_cmd_fn)(struct ctl_ctx *ctx, int argc, char **argv);

/*
 * GET path: 0 with the parsed document in *doc and the raw answer in *r
 * on a 2xx, else CTL_EXIT_ERROR with the message printed to ctx->err.
 */
int ctl_get(struct ctl_ctx *ctx, const char *path, struct ctl_reply *r, json_t **doc);

/* Print an answer's body unchanged, with a final newline (-o json). */
void ctl_print_body(struct ctl_ctx *ctx, const struct ctl_reply *r);

/* The views (cmd_view.c). */
int ctl_cmd_summary(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_top(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_host(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_subnets(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_alerts(struct ctl_ctx *ctx, int argc, char **argv);

/* The commands that act (cmd_act.c). */
int ctl_cmd_blackhole(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_health(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_reload(struct ctl_ctx *ctx, int argc, char **argv);

/*
 * --watch: run cmd every interval_s seconds, redrawing the terminal in
 * place, until q, Ctrl-C or SIGTERM (watch.c). @return an exit status.
 */
int ctl_watch(struct ctl_ctx *ctx, ctl_cmd_fn cmd, const char *title, double interval_s, int argc,
	      char **argv);

#endif
