/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_private.h — what the files of the actions module share: its
 * state (struct dpmon_actions), its jobs and blackhole entries, and the
 * functions one of its files calls in another. Only lib/detect/actions*.c
 * include it; everyone else uses actions.h.
 *
 * The parts (queue and thread, blackhole list, state file, ExaBGP pipe,
 * notify script) talk through this header only:
 *
 *   actions.c             life cycle, the job queue and the thread's round
 *   actions_blackholes.c  the blackhole list, its pending withdraws and the
 *                         list change of each alert event
 *   actions_state.c       the state file: read at the start, saved atomically
 *   actions_exabgp.c      ExaBGP's command pipe
 *   actions_notify.c      the notify script
 *
 * Locking: one mutex, a->lock, guards every field of struct dpmon_actions
 * but those marked "thread only" (see the design in actions.c). Each
 * function below says whether its caller holds the lock.
 */
#ifndef DPMON_ACTIONS_PRIVATE_H
#define DPMON_ACTIONS_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "actions.h"
#include "config.h"
#include "heartbeat.h"
#include "log.h"
#include "prefix.h"
#include "prefix_table.h"
#include "stats.h"

/* ------------------------------------------------------------------------
 * Limits.
 * --------------------------------------------------------------------- */

/* Jobs waiting for the thread; posts beyond are dropped (counted). */
#define QUEUE_LEN     1024
/* Banning alerts remembered per blackhole (more share the oldest's fate). */
#define BH_MAX_ALERTS 8
/* Milliseconds between two attempts to reach ExaBGP's pipe (and the
 * thread's tick). */
#define RETRY_MS      1000

/* The actions thread's heartbeat may be this late beyond a round's
 * longest wait (RETRY_MS) and script (notify_timeout_ms), milliseconds:
 * the state file and ExaBGP's pipe are written in the same round. */
#define HEARTBEAT_SLACK_MS 5000

/* ------------------------------------------------------------------------
 * Types.
 * --------------------------------------------------------------------- */

/* What a job is: an alert event (dpmon_actions_post) or an operator's
 * change of the blackhole list (its notify script only). */
enum job_kind {
	JOB_ALERT_START,
	JOB_ALERT_END,
	JOB_BAN,
	JOB_UNBAN
};

/* A route to ExaBGP: a host's prefix (its network address and length). */
struct route {
	struct dpmon_addr addr;
	uint8_t len; /* bits of its family: the host prefix length of its subnet */
};

/* One entry of the queue. */
struct job {
	enum job_kind kind;
	struct dpmon_addr addr;
	bool subnet;                /* a subnet alert's: never a blackhole */
	struct dpmon_prefix prefix; /* the subnet, when @c subnet */
	uint8_t len; /* addr's host prefix length, bits of its family (actions_host_len) */
	enum dpmon_dir dir;
	uint64_t alert_id;
	bool ban;
	bool applied; /* its list change was made (early, at the stop) */
	json_t *doc;  /* what the script reads on stdin; owned */
};

/* One blackhole (struct dpmon_blackhole is its public view). */
struct bh {
	struct dpmon_addr addr; /* the host prefix's network address */
	uint8_t len;            /* its length, bits of the family: the route announced */
	bool manual;
	bool announced;
	bool restored_ids; /* alert_ids come from the state file: no end will come */
	uint32_t n_alerts;
	uint64_t alert_ids[BH_MAX_ALERTS];
	double since;
};

/* How a notify script run ended (dpmon_actions_stats). */
enum notify_outcome {
	NOTIFY_OK,
	NOTIFY_FAILED,
	NOTIFY_KILLED
};

struct dpmon_actions {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* to the thread: a job, a change, the stop */
	pthread_cond_t idle; /* from the thread: a round ended */
	pthread_t thread;
	bool started, stop;
	struct dpmon_actions_conf conf;
	/* the monitored subnets, valued by their host prefix length (bits of the family) */
	struct dpmon_prefix_table subnets;
	uint32_t n_subnets;
	/* queue */
	struct job queue[QUEUE_LEN];
	uint32_t head, count;
	uint64_t posted, done, dropped;
	uint64_t notify[3]; /* script runs by enum notify_outcome */
	/* blackholes */
	struct bh *bh;
	uint32_t n_bh, cap_bh;
	struct route *withdraws; /* pending withdraw lines */
	uint32_t n_wd, cap_wd;
	uint64_t gen, saved_gen; /* list changes, and the one saved */
	bool busy;               /* the thread is in a round */
	bool fifo_reopen;        /* the pipe's path changed (reconfigure) */
	/* ExaBGP pipe, thread only (fifo is also read, relaxed, by the stats) */
	int fifo;
	bool fifo_missing_logged;
	/* beaten by the thread each round (heartbeat.h); NULL: registry full */
	struct dpmon_heartbeat *hb;
};

/* ------------------------------------------------------------------------
 * Logging (actions.c).
 * --------------------------------------------------------------------- */

/*
 * "<level>dpmon: actions: MESSAGE" to the journal, within the "actions"
 * kind's budget (log.h: one write per line, threads do not interleave).
 * @param level  DPMON_LOG_WARNING, DPMON_LOG_INFO, ... (log.h).
 * Any thread.
 */
void actions_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Problems and events of the actions thread: rate limited per kind (log.h). */
#define LOG(...)      actions_log(DPMON_LOG_WARNING, __VA_ARGS__)
#define LOG_INFO(...) actions_log(DPMON_LOG_INFO, __VA_ARGS__)

/* ------------------------------------------------------------------------
 * The job queue (actions.c).
 * --------------------------------------------------------------------- */

/*
 * Queue a copy of @p j and wake the thread; the queue then owns j->doc.
 * @return false when the queue is full (counted in a->dropped; j->doc is
 *         still the caller's).
 * Lock held.
 */
bool actions_enqueue(struct dpmon_actions *a, const struct job *j);

/* ------------------------------------------------------------------------
 * The blackhole list (actions_blackholes.c). Lock held for all.
 * --------------------------------------------------------------------- */

/* Is @p addr in a monitored subnet? Lock held (or the thread not started). */
static inline bool
actions_inside_subnets(const struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	return dpmon_prefix_table_lookup(&a->subnets, addr) >= 0;
}

/*
 * The length, in bits of its family, of the host prefix @p addr belongs to:
 * its subnet's host_prefix_len (longest match), the whole address outside
 * every subnet. Lock held (or the thread not started).
 */
static inline unsigned
actions_host_len(const struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	int64_t v = dpmon_prefix_table_lookup(&a->subnets, addr);

	return v >= 0 ? (unsigned)v : dpmon_family_bits(dpmon_addr_is_v4(addr) ? 4 : 6);
}

/*
 * @p addr as the network address of its host prefix, into @p out
 * (actions_host_len); @return that length. Lock held (or not started).
 */
static inline unsigned
actions_host_key(const struct dpmon_actions *a, const struct dpmon_addr *addr,
		 struct dpmon_addr *out)
{
	unsigned len = actions_host_len(a, addr);

	*out = *addr;
	dpmon_addr_mask(out, dpmon_mapped_bits(dpmon_addr_is_v4(addr) ? 4 : 6, len));
	return len;
}

/* @return the index of @p addr in a->bh, or -1. Lock held. */
int actions_bh_find(const struct dpmon_actions *a, const struct dpmon_addr *addr);

/* Drop the pending withdraw of @p addr, if any. Lock held. */
void actions_wd_cancel(struct dpmon_actions *a, const struct dpmon_addr *addr);

/*
 * Append a new entry for the prefix @p addr / @p len (bits of its family;
 * not in the list), made at @p since (seconds since the epoch); cancels
 * its pending withdraw. a->gen is the caller's to bump.
 * @return the entry, or NULL at DPMON_MAX_BLACKHOLES or out of memory.
 * Lock held.
 */
struct bh *actions_bh_new(struct dpmon_actions *a, const struct dpmon_addr *addr, unsigned len,
			  double since);

/* Remove entry @p i (< a->n_bh), queue its withdraw and bump a->gen. Lock held. */
void actions_bh_delete(struct dpmon_actions *a, uint32_t i);

/*
 * The list change of alert job @p j: ALERT_START with ban adds the host
 * (inside the monitored subnets only), the ALERT_END of its last banning
 * alert removes an entry that no operator made. Other jobs: nothing.
 * Lock held.
 */
void actions_apply_alert(struct dpmon_actions *a, const struct job *j);

/* ------------------------------------------------------------------------
 * The state file (actions_state.c).
 * --------------------------------------------------------------------- */

/*
 * Read a->conf.state_file into the list, dropping (and withdrawing) the
 * entries outside the monitored subnets when some are known. A missing
 * file is an empty list.
 * @return 0, or -EINVAL with the reason logged (the module must not start).
 * Before the thread starts.
 */
int actions_state_load(struct dpmon_actions *a);

/*
 * Write the list to the state file when it changed since the last save
 * (a->gen != a->saved_gen); takes the lock, and leaves it for the I/O.
 * A failure is logged and tried again at the next change.
 * The actions thread only.
 */
void actions_state_save(struct dpmon_actions *a);

/* ------------------------------------------------------------------------
 * ExaBGP's pipe (actions_exabgp.c).
 * --------------------------------------------------------------------- */

/*
 * Open the pipe if needed (after a reconfigure, the new one), then write
 * the pending withdraws and the announces not yet written, each line
 * atomic, until all are written or the pipe is full or lost. Takes the
 * lock, and leaves it for the I/O.
 * The actions thread only.
 */
void actions_exabgp_sync(struct dpmon_actions *a);

/* ------------------------------------------------------------------------
 * The notify script (actions_notify.c).
 * --------------------------------------------------------------------- */

/*
 * Run @p script for job @p j (argv as docs/detection.md, j->doc on its
 * stdin) and wait for it, killing its process group after @p timeout_ms
 * milliseconds. Lock not held.
 * @return how it ended (NOTIFY_FAILED when it could not be started).
 * The actions thread only.
 */
enum notify_outcome actions_notify_run(const char *script, uint32_t timeout_ms,
				       const struct job *j);

#endif /* DPMON_ACTIONS_PRIVATE_H */
