/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check.h — the assertion macros every C unit test uses.
 *
 * CHECK counts and reports a failure and goes on, so one run shows every
 * broken expectation; REQUIRE stops the test at once, for checks whose
 * failure would make the next lines meaningless (a NULL pointer, a missing
 * object). check_finish prints the count and gives the exit status;
 * check_now_s is the clock the tests time their waits with.
 * CHECK_SANITIZED tells a test it runs in the sanitizer build.
 */
#ifndef DPMON_TEST_CHECK_H
#define DPMON_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * 1 in a build with -Db_sanitize (tests/meson.build then defines
 * DPMON_TEST_SANITIZED), 0 otherwise. Code runs there 3 to 10 times
 * slower: a heavy case scales its work down by it (fewer hosts, fewer
 * rounds, never a looser assertion) to stay well within its timeout.
 */
#ifdef DPMON_TEST_SANITIZED
#define CHECK_SANITIZED 1
#else
#define CHECK_SANITIZED 0
#endif

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		test_checks++;                                                                   \
		if (!(cond)) {                                                                   \
			test_failures++;                                                         \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                    \
	do {                                                                                  \
		unsigned long long va_ = (unsigned long long)(a);                             \
		unsigned long long vb_ = (unsigned long long)(b);                             \
		test_checks++;                                                                \
		if (va_ != vb_) {                                                             \
			test_failures++;                                                      \
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, \
				__LINE__, #a, va_, #b, vb_);                                  \
		}                                                                             \
	} while (0)

/* Two strings equal; NULL for @p a is a failure. */
#define CHECK_EQ_STR(a, b)                                                                \
	do {                                                                              \
		const char *sa_ = (a), *sb_ = (b);                                        \
		test_checks++;                                                            \
		if (sa_ == NULL || strcmp(sa_, sb_) != 0) {                               \
			test_failures++;                                                  \
			fprintf(stderr, "%s:%d: got \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, sa_ ? sa_ : "(null)", sb_);                     \
		}                                                                         \
	} while (0)

/* Report and stop the test now. */
#define FAIL(...)                                               \
	do {                                                    \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                   \
		fputc('\n', stderr);                            \
		exit(1);                                        \
	} while (0)

#define REQUIRE(cond)                                      \
	do {                                               \
		test_checks++;                             \
		if (!(cond))                               \
			FAIL("REQUIRE failed: %s", #cond); \
	} while (0)

/* Print "NAME: N checks, N failed"; @return the exit status. */
static inline int
check_finish(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
	return test_failures ? 1 : 0;
}

/** Seconds on the monotonic clock, for the tests that time their waits. */
static inline double
check_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
