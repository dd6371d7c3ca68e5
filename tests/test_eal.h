/*
 * test_eal.h — shared by the C unit tests that need DPDK: CHECK macros and
 * an EAL start-up that never shares a runtime directory with another test
 * (--no-shconf) and needs no hugepages.
 */
#ifndef DPMON_TEST_EAL_H
#define DPMON_TEST_EAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                              \
	do {                                                                     \
		test_checks++;                                                   \
		if (!(cond)) {                                                   \
			test_failures++;                                         \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,   \
				__LINE__, #cond);                                \
		}                                                                \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                       \
	do {                                                                     \
		unsigned long long va_ = (unsigned long long)(a);                \
		unsigned long long vb_ = (unsigned long long)(b);                \
		test_checks++;                                                   \
		if (va_ != vb_) {                                                \
			test_failures++;                                         \
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", \
				__FILE__, __LINE__, #a, va_, #b, vb_);           \
		}                                                                \
	} while (0)

static inline void
test_eal_init(const char *prog)
{
	char *argv[] = {(char *)prog, "--no-huge", "-m", "512", "--no-pci", "--no-shconf",
			"--log-level", "lib.eal:error", "-l", "0", NULL};
	if (rte_eal_init(10, argv) < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", prog, rte_strerror(rte_errno));
		exit(1);
	}
}

static inline int
test_finish(const char *prog)
{
	printf("%s: %d checks, %d failed\n", prog, test_checks, test_failures);
	rte_eal_cleanup();
	return test_failures ? 1 : 0;
}

#endif
