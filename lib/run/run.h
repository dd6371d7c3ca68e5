/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run.h — the appliance's life cycle: command line, EAL, ports, workers,
 * the merge loop on the main lcore, the HTTP server, orderly shutdown.
 * One file per step in lib/run (run_private.h lists them).
 */
#ifndef DPMON_RUN_H
#define DPMON_RUN_H

/**
 * Run dpmon: `dpmon [EAL options] -- --config FILE [--http-port N]
 * [--http-port-file FILE] [--duration SECONDS]`, or `dpmon --check-config
 * FILE` (no EAL), `dpmon --version`, `dpmon --help`.
 * @return the process exit status: 0 on success or clean stop (SIGINT,
 *         SIGTERM, --duration), 1 on a configuration error, 2 on usage
 *         errors, 3 when DPDK or a port could not start.
 * Thread-safety: call once, from main().
 */
int dpmon_main(int argc, char **argv);

#endif /* DPMON_RUN_H */
