/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_private.h — what every file of the actions module uses: its log
 * lines, its limits, and the monitored subnets with the host prefix of an
 * address in them. Only lib/detect/actions*.c include it; everyone else
 * uses actions.h.
 *
 * actions.c owns the module (its state, job queue, thread and lock) and
 * calls the other files, which never call back into it; each has a header
 * of its own:
 *
 *   actions_blackholes.h  the blackhole list and its routes
 *   actions_state.h       the state file: read at the start, saved atomically
 *   actions_exabgp.h      ExaBGP's command pipe: keyed routes
 *   actions_flowspec.h    the FlowSpec rules and their routes
 *   actions_notify.h      the notify script
 */
#ifndef DPMON_ACTIONS_PRIVATE_H
#define DPMON_ACTIONS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "log.h"
#include "prefix.h"
#include "prefix_table.h"

/* ------------------------------------------------------------------------
 * Limits.
 * --------------------------------------------------------------------- */

/* Jobs waiting for the thread; posts beyond are dropped (counted). */
#define QUEUE_LEN       1024
/* Banning alerts remembered per blackhole (more share the oldest's fate). */
#define BH_MAX_ALERTS   8
/* Milliseconds between two attempts to reach ExaBGP's pipe (and the
 * thread's tick). */
#define RETRY_MS        1000
/* Milliseconds between two looks at ExaBGP's pipe (a reader gone, a new one):
 * the thread's tick while a pipe is set. */
#define READER_CHECK_MS 100

/* ------------------------------------------------------------------------
 * Logging.
 * --------------------------------------------------------------------- */

/*
 * "<level>dpmon: actions: MESSAGE" to the journal, within the "actions"
 * kind's budget (log.h: one write per line, threads do not interleave).
 * The format is a string literal. Any thread.
 */
#define LOG(fmt, ...) \
	dpmon_log(DPMON_LOG_ACTIONS, DPMON_LOG_WARNING, "actions: " fmt, ##__VA_ARGS__)
#define LOG_INFO(fmt, ...) \
	dpmon_log(DPMON_LOG_ACTIONS, DPMON_LOG_INFO, "actions: " fmt, ##__VA_ARGS__)

/* ------------------------------------------------------------------------
 * The monitored subnets.
 * --------------------------------------------------------------------- */

/* The monitored subnets, each valued by its host prefix length (bits of
 * the family); built by actions.c from the configuration. */
struct actions_subnets {
	struct dpmon_prefix_table table;
	uint32_t n; /* subnets configured; 0: none known */
};

/* Is @p addr in a monitored subnet? */
static inline bool
actions_inside_subnets(const struct actions_subnets *s, const struct dpmon_addr *addr)
{
	return dpmon_prefix_table_lookup(&s->table, addr) >= 0;
}

/*
 * The length, in bits of its family, of the host prefix @p addr belongs to:
 * its subnet's host_prefix_len (longest match), the whole address outside
 * every subnet.
 */
static inline unsigned
actions_host_len(const struct actions_subnets *s, const struct dpmon_addr *addr)
{
	int64_t v = dpmon_prefix_table_lookup(&s->table, addr);

	return v >= 0 ? (unsigned)v : dpmon_family_bits(dpmon_addr_is_v4(addr) ? 4 : 6);
}

/*
 * @p addr as the network address of its host prefix, into @p out
 * (actions_host_len); @return that length.
 */
static inline unsigned
actions_host_key(const struct actions_subnets *s, const struct dpmon_addr *addr,
		 struct dpmon_addr *out)
{
	unsigned len = actions_host_len(s, addr);

	*out = *addr;
	dpmon_addr_mask(out, dpmon_mapped_bits(dpmon_addr_is_v4(addr) ? 4 : 6, len));
	return len;
}

#endif /* DPMON_ACTIONS_PRIVATE_H */
