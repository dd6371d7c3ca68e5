/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fmt.h — dpmonctl's human output: numbers with SI units (1.2 Mpps,
 * 9.4 Gbps, 3.4 MB), times, and aligned tables, coloured only when asked.
 */
#ifndef DPMON_CTL_FMT_H
#define DPMON_CTL_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/** Room for any value ctl_fmt_unit() and ctl_fmt_time() write. */
#define CTL_FMT_LEN 48

/** Colours of a cell (ANSI SGR), shown only when the table is coloured. */
enum ctl_colour {
	CTL_PLAIN = 0,
	CTL_BOLD,
	CTL_RED,
	CTL_GREEN,
	CTL_YELLOW,
};

/**
 * A value with an SI prefix and a unit: below 1000 as an integer
 * ("512 pps", "0 bps"), above with one decimal and k, M, G, T, P
 * ("1.2 Mpps", "9.4 Gbps"). Negative or non-finite values print as "-".
 *
 * @param buf   at least CTL_FMT_LEN bytes
 * @param v     the value in the base unit (packets/s, bits/s, bytes)
 * @param unit  "pps", "bps", "B", ...
 * @return buf.
 */
char *ctl_fmt_unit(char *buf, double v, const char *unit);

/**
 * A Unix time as "YYYY-MM-DD HH:MM:SS" in UTC.
 *
 * @param buf     at least CTL_FMT_LEN bytes
 * @param unix_s  seconds since the Unix epoch
 * @return buf.
 */
char *ctl_fmt_time(char *buf, double unix_s);

/**
 * A duration as "3d 4h", "2h 5m", "4m 10s" or "12.3s".
 *
 * @param buf  at least CTL_FMT_LEN bytes
 * @param s    seconds
 * @return buf.
 */
char *ctl_fmt_duration(char *buf, double s);

/** An aligned table: a header row and rows of text cells. */
struct ctl_table;

/**
 * A table with these columns.
 *
 * @param n_cols  number of columns (at most 16)
 * @param heads   the column titles
 * @param right   for each column, whether it is right-aligned (numbers)
 * @return the table, or NULL without memory.
 */
struct ctl_table *ctl_table_new(unsigned int n_cols, const char *const *heads, const bool *right);

/**
 * Append a row; the cells are copied.
 *
 * @param t       the table
 * @param cells   n_cols strings
 * @param colour  colour of the whole row (CTL_PLAIN for none)
 * @return 0, or -ENOMEM.
 */
int ctl_table_add(struct ctl_table *t, const char *const *cells, enum ctl_colour colour);

/**
 * Print the table: titles (bold when coloured), then the rows, columns
 * separated by two spaces, no trailing spaces.
 *
 * @param t       the table
 * @param out     where to print
 * @param colour  whether ANSI colours are written
 */
void ctl_table_print(const struct ctl_table *t, FILE *out, bool colour);

/** Free a table. @param t the table, or NULL. */
void ctl_table_free(struct ctl_table *t);

/**
 * Print text in a colour (or plain).
 *
 * @param out     where to print
 * @param colour  whether ANSI colours are written
 * @param c       the colour
 * @param text    the text
 */
void ctl_put(FILE *out, bool colour, enum ctl_colour c, const char *text);

#endif
