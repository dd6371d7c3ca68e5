/* SPDX-License-Identifier: BSD-3-Clause */
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

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "check.h"

static inline void
test_eal_init(const char *prog)
{
	/* rte_eal_init takes writable strings (it may reorder them). */
	static char args[][16] = {"--no-huge",     "-m",          "512",
				  "--no-pci",      "--no-shconf", "--log-level",
				  "lib.eal:error", "-l",          "0"};
	char name[64];
	char *argv[RTE_DIM(args) + 2];

	snprintf(name, sizeof(name), "%s", prog);
	argv[0] = name;
	for (unsigned i = 0; i < RTE_DIM(args); i++)
		argv[i + 1] = args[i];
	argv[RTE_DIM(args) + 1] = NULL;
	if (rte_eal_init((int)RTE_DIM(args) + 1, argv) < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", prog, rte_strerror(rte_errno));
		exit(1);
	}
}

static inline int
test_finish(const char *prog)
{
	int rc = check_finish(prog);

	rte_eal_cleanup();
	return rc;
}

#endif
