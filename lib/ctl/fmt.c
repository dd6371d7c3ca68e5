/* SPDX-License-Identifier: BSD-3-Clause */
/* fmt.c — units, times and aligned tables of dpmonctl's human output (fmt.h). */
#include "fmt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CTL_TABLE_MAX_COLS 16

static const char *const sgr[] = {
	[CTL_PLAIN] = "",         [CTL_BOLD] = "\033[1m",    [CTL_RED] = "\033[31m",
	[CTL_GREEN] = "\033[32m", [CTL_YELLOW] = "\033[33m",
};

/* ------------------------------------------------------------------------
 * Numbers and times
 * --------------------------------------------------------------------- */

char *
ctl_fmt_unit(char *buf, double v, const char *unit)
{
	static const char prefixes[] = "kMGTP";
	int i = -1;

	if (!isfinite(v) || v < 0) {
		snprintf(buf, CTL_FMT_LEN, "-");
		return buf;
	}
	if (v < 999.5) {
		snprintf(buf, CTL_FMT_LEN, "%.0f%s%s", v, unit[0] ? " " : "", unit);
		return buf;
	}
	/* Scale so that the printed value, rounded to one decimal, is below 1000. */
	while (i < 4 && (i < 0 || v >= 999.95)) {
		v /= 1000.0;
		i++;
	}
	snprintf(buf, CTL_FMT_LEN, "%.1f%s%c%s", v, unit[0] ? " " : "", prefixes[i], unit);
	return buf;
}

char *
ctl_fmt_time(char *buf, double unix_s)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	if (!isfinite(unix_s) || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, CTL_FMT_LEN, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, CTL_FMT_LEN, "-");
	return buf;
}

char *
ctl_fmt_duration(char *buf, double s)
{
	long long t = (long long)s;

	if (!isfinite(s) || s < 0)
		snprintf(buf, CTL_FMT_LEN, "-");
	else if (s < 60)
		snprintf(buf, CTL_FMT_LEN, "%.1fs", s);
	else if (t < 3600)
		snprintf(buf, CTL_FMT_LEN, "%lldm %llds", t / 60, t % 60);
	else if (t < 86400)
		snprintf(buf, CTL_FMT_LEN, "%lldh %lldm", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, CTL_FMT_LEN, "%lldd %lldh", t / 86400, t % 86400 / 3600);
	return buf;
}

void
ctl_put(FILE *out, bool colour, enum ctl_colour c, const char *text)
{
	if (colour && c != CTL_PLAIN)
		fprintf(out, "%s%s\033[0m", sgr[c], text);
	else
		fputs(text, out);
}

/* ------------------------------------------------------------------------
 * Tables
 * --------------------------------------------------------------------- */

struct ctl_table {
	unsigned int n_cols;
	bool right[CTL_TABLE_MAX_COLS];
	size_t width[CTL_TABLE_MAX_COLS];
	char **cells;             /* (n_rows + 1) * n_cols; row 0 holds the titles */
	enum ctl_colour *colours; /* per row, row 0 included */
	size_t n_rows;            /* rows, titles included */
	size_t cap;
};

/* Display width of UTF-8 text: code points, as the tables hold no wide characters. */
static size_t
text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static int
add_row(struct ctl_table *t, const char *const *cells, enum ctl_colour colour)
{
	if (t->n_rows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **c = realloc(t->cells, cap * t->n_cols * sizeof(*c));
		enum ctl_colour *k;

		if (c == NULL)
			return -ENOMEM;
		t->cells = c;
		k = realloc(t->colours, cap * sizeof(*k));
		if (k == NULL)
			return -ENOMEM;
		t->colours = k;
		t->cap = cap;
	}
	for (unsigned int i = 0; i < t->n_cols; i++) {
		char *s = strdup(cells[i] ? cells[i] : "");
		size_t w;

		if (s == NULL) {
			while (i-- > 0)
				free(t->cells[t->n_rows * t->n_cols + i]);
			return -ENOMEM;
		}
		t->cells[t->n_rows * t->n_cols + i] = s;
		w = text_width(s);
		if (w > t->width[i])
			t->width[i] = w;
	}
	t->colours[t->n_rows++] = colour;
	return 0;
}

struct ctl_table *
ctl_table_new(unsigned int n_cols, const char *const *heads, const bool *right)
{
	struct ctl_table *t;

	if (n_cols == 0 || n_cols > CTL_TABLE_MAX_COLS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->n_cols = n_cols;
	memcpy(t->right, right, n_cols * sizeof(*right));
	if (add_row(t, heads, CTL_BOLD) != 0) {
		ctl_table_free(t);
		return NULL;
	}
	return t;
}

int
ctl_table_add(struct ctl_table *t, const char *const *cells, enum ctl_colour colour)
{
	return add_row(t, cells, colour);
}

void
ctl_table_print(const struct ctl_table *t, FILE *out, bool colour)
{
	for (size_t r = 0; r < t->n_rows; r++) {
		char line[4096];
		size_t len = 0;

		for (unsigned int i = 0; i < t->n_cols && len < sizeof(line); i++) {
			const char *s = t->cells[r * t->n_cols + i];
			int pad = (int)(t->width[i] - text_width(s));
			bool last = i + 1 == t->n_cols;

			if (t->right[i])
				len += snprintf(line + len, sizeof(line) - len, "%s%*s%s",
						i ? "  " : "", pad, "", s);
			else
				len += snprintf(line + len, sizeof(line) - len, "%s%s%*s",
						i ? "  " : "", s, last ? 0 : pad, "");
		}
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		while (len > 0 && line[len - 1] == ' ')
			len--;
		line[len] = '\0';
		ctl_put(out, colour, t->colours[r], line);
		fputc('\n', out);
	}
}

void
ctl_table_free(struct ctl_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->colours);
	free(t);
}
