/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c — rate-limited journal lines (see log.h).
 *
 * Per kind: the start of the current window, the messages written in it
 * and the messages suppressed since the last line written. What a window
 * suppressed is reported when it ends: by dpmon_log_tick, which the main
 * lcore calls from its loop and which tells it when to call again, or,
 * should a message of the kind come first, by that message, which opens a
 * new window (starting now). Fixed windows rather than a refilling
 * bucket: the limit an operator reads in the journal ("at most 10 per
 * minute") is exactly what happens.
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kind_budget {
	uint64_t window_start; /* ns; 0 with used == 0: no window yet */
	uint32_t used;         /* messages written in this window */
	uint64_t suppressed;   /* messages dropped since the last one written */
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_out;
static uint32_t log_burst = DPMON_LOG_BURST;
static uint64_t log_window_ns = DPMON_LOG_WINDOW_NS;
static uint64_t (*log_clock)(void);
static struct kind_budget budgets[DPMON_LOG_KIND_MAX];

static const char *const kind_names[DPMON_LOG_KIND_MAX] = {
	[DPMON_LOG_RELOAD] = "reload",   [DPMON_LOG_MERGE] = "merge",
	[DPMON_LOG_DROP] = "drop",       [DPMON_LOG_HTTP] = "http",
	[DPMON_LOG_ACTIONS] = "actions", [DPMON_LOG_SAMPLE] = "sample",
	[DPMON_LOG_EXPORT] = "export",   [DPMON_LOG_NOTIFY] = "notify",
};

static uint64_t
monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

const char *
dpmon_log_kind_name(int kind)
{
	return kind >= 0 && kind < DPMON_LOG_KIND_MAX ? kind_names[kind] : "?";
}

void
dpmon_log_setup(FILE *out, uint32_t burst, uint64_t window_ns, uint64_t (*clock_ns)(void))
{
	pthread_mutex_lock(&log_lock);
	log_out = out;
	log_burst = burst > 0 ? burst : 1;
	log_window_ns = window_ns > 0 ? window_ns : 1;
	log_clock = clock_ns;
	memset(budgets, 0, sizeof(budgets));
	pthread_mutex_unlock(&log_lock);
}

/* Write @p text with "<level>dpmon: " before each of its lines. Lock held. */
static void
write_lines(FILE *f, int level, const char *text)
{
	const char *line = text;

	do {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) : (int)strlen(line);

		fprintf(f, "<%d>dpmon: %.*s\n", level, len, line);
		line = nl ? nl + 1 : NULL;
	} while (line != NULL && *line != '\0');
	fflush(f);
}

/* Close kind @p kind's window: report what it suppressed, if anything;
 * the next message opens a new one. Lock held. */
static void
window_close(struct kind_budget *b, FILE *f, int kind)
{
	if (b->suppressed > 0) {
		char line[96];

		snprintf(line, sizeof(line), "suppressed %llu messages of kind %s",
			 (unsigned long long)b->suppressed, kind_names[kind]);
		write_lines(f, DPMON_LOG_WARNING, line);
		b->suppressed = 0;
	}
	b->used = 0;
}

/* May kind @p b write now (@p now ns)? Opens a new window when due. Lock held. */
static int
budget_take(struct kind_budget *b, uint64_t now, FILE *f, int kind)
{
	if (b->used == 0 || now - b->window_start >= log_window_ns) {
		window_close(b, f, kind);
		b->window_start = now;
	}
	if (b->used >= log_burst) {
		b->suppressed++;
		return 0;
	}
	b->used++;
	return 1;
}

uint64_t
dpmon_log_tick(void)
{
	uint64_t now, end, next = UINT64_MAX;
	FILE *f;

	pthread_mutex_lock(&log_lock);
	f = log_out ? log_out : stderr;
	now = log_clock ? log_clock() : monotonic_ns();
	for (int k = 0; k < DPMON_LOG_KIND_MAX; k++) {
		struct kind_budget *b = &budgets[k];

		if (b->suppressed == 0)
			continue; /* nothing to report: the next message opens a window */
		end = b->window_start + log_window_ns;
		if (now - b->window_start >= log_window_ns)
			window_close(b, f, k);
		else if (end < next)
			next = end;
	}
	pthread_mutex_unlock(&log_lock);
	return next;
}

void
dpmon_log_flush(void)
{
	FILE *f;

	pthread_mutex_lock(&log_lock);
	f = log_out ? log_out : stderr;
	for (int k = 0; k < DPMON_LOG_KIND_MAX; k++)
		if (budgets[k].suppressed > 0)
			window_close(&budgets[k], f, k);
	pthread_mutex_unlock(&log_lock);
}

int
dpmon_vlog(enum dpmon_log_kind kind, int level, const char *fmt, va_list ap)
{
	char small[512], *text = small;
	va_list again;
	FILE *f;
	int ok, len;

	if ((int)kind < 0 || kind >= DPMON_LOG_KIND_MAX)
		return 0;
	va_copy(again, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small) && (text = malloc((size_t)len + 1)) != NULL)
		vsnprintf(text, (size_t)len + 1, fmt, again);
	va_end(again);
	if (text == NULL)
		text = small; /* out of memory: the truncated text */
	pthread_mutex_lock(&log_lock);
	f = log_out ? log_out : stderr;
	ok = budget_take(&budgets[kind], log_clock ? log_clock() : monotonic_ns(), f, (int)kind);
	if (ok)
		write_lines(f, level, text);
	pthread_mutex_unlock(&log_lock);
	if (text != small)
		free(text);
	return ok;
}

int
dpmon_log(enum dpmon_log_kind kind, int level, const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = dpmon_vlog(kind, level, fmt, ap);
	va_end(ap);
	return ok;
}
