/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_log.c — the per-kind rate limit of lib/common/log.c, with an injected
 * clock and the lines captured in memory (exact text compared): budgets,
 * and the suppressed line written by dpmon_log_tick when a window ends.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "log.h"

static uint64_t fake_now;

static uint64_t
fake_clock(void)
{
	return fake_now;
}

/* The captured output so far, then cleared. */
static char *
take(FILE *f, char **buf, size_t *len)
{
	static char copy[4096];

	fflush(f);
	snprintf(copy, sizeof(copy), "%s", *buf ? *buf : "");
	rewind(f);
	memset(*buf, 0, *len);
	fflush(f);
	return copy;
}

static void
test_budget_per_kind(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	fake_now = 1000;
	dpmon_log_setup(f, 2, 100, fake_clock);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_NOTICE, "reload %d", 1) == 1);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_NOTICE, "reload %d", 2) == 1);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_NOTICE, "reload %d", 3) == 0);
	fake_now = 1099; /* still the same window */
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_NOTICE, "reload %d", 4) == 0);
	/* Another kind has its own budget. */
	CHECK(dpmon_log(DPMON_LOG_MERGE, DPMON_LOG_ERR, "merge %s", "a") == 1);
	CHECK(strcmp(take(f, &buf, &len),
		     "<5>dpmon: reload 1\n<5>dpmon: reload 2\n<3>dpmon: merge a\n") == 0);
	fake_now = 1100; /* the window reopens: the suppressed count comes first */
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING, "reload %d", 5) == 1);
	CHECK(strcmp(take(f, &buf, &len),
		     "<4>dpmon: suppressed 2 messages of kind reload\n<4>dpmon: reload 5\n") == 0);
	/* The new window started at 1100: budget 2 again, then suppressed. */
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING, "reload %d", 6) == 1);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING, "reload %d", 7) == 0);
	fake_now = 5000; /* long after: one suppressed line, no double report */
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING, "x") == 1);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_WARNING, "y") == 1);
	CHECK(strcmp(take(f, &buf, &len),
		     "<4>dpmon: reload 6\n<4>dpmon: suppressed 1 messages of kind reload\n"
		     "<4>dpmon: x\n<4>dpmon: y\n") == 0);
	/* Out of range kinds write nothing. */
	CHECK(dpmon_log(DPMON_LOG_KIND_MAX, DPMON_LOG_ERR, "nope") == 0);
	CHECK(dpmon_log((enum dpmon_log_kind) - 1, DPMON_LOG_ERR, "nope") == 0);
	CHECK(strcmp(take(f, &buf, &len), "") == 0);
	dpmon_log_setup(NULL, DPMON_LOG_BURST, DPMON_LOG_WINDOW_NS, NULL);
	fclose(f);
	free(buf);
}

static void
test_lines_and_long_text(void)
{
	char *buf = NULL, *big, *out;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	fake_now = 1;
	dpmon_log_setup(f, 1, 10, fake_clock);
	/* Every line of a message gets the prefix; the message counts once. */
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR,
			"refused:\n  a: $.x: bad\n  b: $.y: worse\n") == 1);
	CHECK(strcmp(take(f, &buf, &len),
		     "<3>dpmon: refused:\n<3>dpmon:   a: $.x: bad\n<3>dpmon:   b: $.y: worse\n") ==
	      0);
	/* A text longer than the stack buffer is written whole. */
	fake_now = 100;
	big = malloc(2001);
	REQUIRE(big != NULL);
	memset(big, 'z', 2000);
	big[2000] = '\0';
	CHECK(dpmon_log(DPMON_LOG_DROP, DPMON_LOG_INFO, "%s", big) == 1);
	fflush(f);
	out = buf;
	CHECK(strlen(out) == strlen("<6>dpmon: ") + 2000 + 1);
	CHECK(strncmp(out, "<6>dpmon: zzz", 13) == 0);
	CHECK(strcmp(dpmon_log_kind_name(DPMON_LOG_DROP), "drop") == 0);
	CHECK(strcmp(dpmon_log_kind_name(99), "?") == 0);
	free(big);
	dpmon_log_setup(NULL, DPMON_LOG_BURST, DPMON_LOG_WINDOW_NS, NULL);
	fclose(f);
	free(buf);
}

/*
 * The suppressed line is written when the window ends, by the tick, not
 * with the next message: exact time and text, with the injected clock.
 */
static void
test_tick_at_window_end(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	fake_now = 1000;
	dpmon_log_setup(f, 2, 100, fake_clock);
	/* Nothing suppressed: nothing to do, ever. */
	CHECK(dpmon_log_tick() == UINT64_MAX);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 1) == 1);
	CHECK(dpmon_log_tick() == UINT64_MAX);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 2) == 1);
	fake_now = 1010;
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 3) == 0);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 4) == 0);
	fake_now = 1050; /* the http window starts later, ends later */
	CHECK(dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_WARNING, "http %d", 1) == 1);
	CHECK(dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_WARNING, "http %d", 2) == 1);
	CHECK(dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_WARNING, "http %d", 3) == 0);
	CHECK(strcmp(take(f, &buf, &len), "<3>dpmon: refused 1\n<3>dpmon: refused 2\n"
					  "<4>dpmon: http 1\n<4>dpmon: http 2\n") == 0);
	/* Before the end of the reload window: nothing written; call again at 1100. */
	fake_now = 1099;
	CHECK_EQ_U64(dpmon_log_tick(), 1100);
	CHECK(strcmp(take(f, &buf, &len), "") == 0);
	/* At its end: the line, at once, without another message. */
	fake_now = 1100;
	CHECK_EQ_U64(dpmon_log_tick(), 1150);
	CHECK(strcmp(take(f, &buf, &len), "<4>dpmon: suppressed 2 messages of kind reload\n") == 0);
	/* Reported once: the next tick has only http left. */
	fake_now = 1149;
	CHECK_EQ_U64(dpmon_log_tick(), 1150);
	CHECK(strcmp(take(f, &buf, &len), "") == 0);
	fake_now = 1230; /* a late tick reports a window that ended meanwhile */
	CHECK(dpmon_log_tick() == UINT64_MAX);
	CHECK(strcmp(take(f, &buf, &len), "<4>dpmon: suppressed 1 messages of kind http\n") == 0);
	/* A message after the report opens a new window: no second report, a
	 * full budget from its own time (1240: ends at 1340). */
	fake_now = 1240;
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 5) == 1);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 6) == 1);
	CHECK(dpmon_log(DPMON_LOG_RELOAD, DPMON_LOG_ERR, "refused %d", 7) == 0);
	CHECK_EQ_U64(dpmon_log_tick(), 1340);
	CHECK(strcmp(take(f, &buf, &len), "<3>dpmon: refused 5\n<3>dpmon: refused 6\n") == 0);
	fake_now = 1340;
	CHECK(dpmon_log_tick() == UINT64_MAX);
	CHECK(strcmp(take(f, &buf, &len), "<4>dpmon: suppressed 1 messages of kind reload\n") == 0);
	/* At stop, dpmon_log_flush reports the windows still open, once. */
	fake_now = 2000;
	CHECK(dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_INFO, "s %d", 1) == 1);
	CHECK(dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_INFO, "s %d", 2) == 1);
	CHECK(dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_INFO, "s %d", 3) == 0);
	CHECK(dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_INFO, "s %d", 4) == 0);
	CHECK(dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_INFO, "s %d", 5) == 0);
	fake_now = 2001;
	dpmon_log_flush();
	CHECK(strcmp(take(f, &buf, &len), "<6>dpmon: s 1\n<6>dpmon: s 2\n"
					  "<4>dpmon: suppressed 3 messages of kind sample\n") == 0);
	dpmon_log_flush();
	CHECK(dpmon_log_tick() == UINT64_MAX);
	CHECK(strcmp(take(f, &buf, &len), "") == 0);
	dpmon_log_setup(NULL, DPMON_LOG_BURST, DPMON_LOG_WINDOW_NS, NULL);
	fclose(f);
	free(buf);
}

int
main(void)
{
	test_budget_per_kind();
	test_tick_at_window_end();
	test_lines_and_long_text();
	return check_finish("log");
}
