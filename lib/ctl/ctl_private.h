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
#include "fmt.h"
#include "http.h"

/** One run of dpmonctl: the connection, the output and the options. */
/** The options of "flowspec add", each the API body's key of the same name. */
enum ctl_fs_opt {
	CTL_FS_SOURCE,            /**< --source PREFIX */
	CTL_FS_PROTOCOL,          /**< --protocol NAME|NUMBER */
	CTL_FS_SOURCE_PORTS,      /**< --source-ports N[,N...] */
	CTL_FS_DESTINATION_PORTS, /**< --destination-ports N[,N...] */
	CTL_FS_PACKET_LENGTH,     /**< --packet-length MIN-MAX (either may be left out) */
	CTL_FS_TCP_FLAGS,         /**< --tcp-flags F[+F...][,...] */
	CTL_FS_FRAGMENT,          /**< --fragment (no value) */
	CTL_FS_ICMP_TYPE,         /**< --icmp-type N[,N...] */
	CTL_FS_ICMP_CODE,         /**< --icmp-code N */
	CTL_FS_ACTION,            /**< --action TEXT */
	CTL_FS_N,
};

struct ctl_ctx {
	struct ctl_http http;
	FILE *out;                /**< results */
	FILE *err;                /**< messages ("dpmonctl: ...") */
	bool json;                /**< -o json: the API's JSON unchanged */
	bool colour;              /**< ANSI colours in tables */
	const char *sort;         /**< top --sort, or NULL */
	const char *direction;    /**< top --direction, or NULL */
	const char *subnet;       /**< top --subnet, or NULL */
	unsigned int limit;       /**< top -n */
	bool active;              /**< alerts --active */
	const char *pid_file;     /**< reload --pid-file, or NULL: systemctl */
	const char *unit;         /**< reload: the systemd unit */
	double reload_wait_s;     /**< reload: how long to wait for the verdict */
	const char *fs[CTL_FS_N]; /**< flowspec add's options; NULL when absent */
};

/** A command: its words after the command name. @return an exit status. */
typedef int (*ctl_cmd_fn)(struct ctl_ctx *ctx, int argc, char **argv);

/*
 * METHOD path, or path/ITEM with item percent-encoded when item is not
 * NULL, with body (or NULL): 0 with the parsed document in *doc and the
 * raw answer in *r on a 2xx, else CTL_EXIT_ERROR with the message printed
 * to ctx->err.
 */
int ctl_call(struct ctl_ctx *ctx, const char *method, const char *path, const char *item,
	     const char *body, struct ctl_reply *r, json_t **doc);

/* Print an answer's body unchanged, with a final newline (-o json). */
void ctl_print_body(struct ctl_ctx *ctx, const struct ctl_reply *r);

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Room for the text cells of one row (bytes each), and the most columns. */
#define CTL_CELL_LEN CTL_FMT_LEN
#define CTL_MAX_COLS 16

/*
 * One row of a table from one element of a JSON array: fills row[] with
 * strings of the element or cells written into cell[]; arg is the
 * caller's. @return the row's colour (enum ctl_colour).
 */
typedef int (*ctl_row_fn)(const json_t *item, const void *arg, char cell[][CTL_CELL_LEN],
			  const char **row);

/*
 * Print a table of one row per element of items, with these titles and
 * right alignment per column. @return 0, or CTL_EXIT_ERROR without memory.
 */
int ctl_print_rows(struct ctl_ctx *ctx, json_t *items, unsigned int n_cols,
		   const char *const *heads, const bool *right, ctl_row_fn fn, const void *arg);

/* The views (cmd_view.c). */
int ctl_cmd_summary(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_top(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_host(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_subnets(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_alerts(struct ctl_ctx *ctx, int argc, char **argv);

/* The commands that act (cmd_act.c). */
int ctl_cmd_blackhole(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_flowspec(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_health(struct ctl_ctx *ctx, int argc, char **argv);
int ctl_cmd_reload(struct ctl_ctx *ctx, int argc, char **argv);

/*
 * --watch: run cmd every interval_s seconds, redrawing the terminal in
 * place, until q, Ctrl-C or SIGTERM (watch.c). @return an exit status.
 */
int ctl_watch(struct ctl_ctx *ctx, ctl_cmd_fn cmd, const char *title, double interval_s, int argc,
	      char **argv);

#endif
