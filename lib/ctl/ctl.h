/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl.h — dpmonctl, the operator's command line client of dpmon's REST
 * API: its entry point.
 */
#ifndef DPMON_CTL_H
#define DPMON_CTL_H

/** Exit statuses of dpmonctl (docs/operations.md, dpmonctl(8)). */
enum ctl_exit {
	CTL_EXIT_OK = 0,        /**< done; healthy */
	CTL_EXIT_ERROR = 1,     /**< the request failed, or the API refused it */
	CTL_EXIT_USAGE = 2,     /**< bad command line */
	CTL_EXIT_UNHEALTHY = 3, /**< health: dpmon answered, unhealthy */
};

/**
 * Run dpmonctl with its command line.
 *
 * @param argc  argument count
 * @param argv  arguments, argv[0] being the program
 * @return an exit status of enum ctl_exit. The main thread.
 */
int ctl_main(int argc, char **argv);

#endif
