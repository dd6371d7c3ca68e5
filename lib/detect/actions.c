/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions.c — the actions module's life cycle, its job queue and the
 * thread that carries the jobs out: what dpmon does about an alert, off
 * the data plane (actions.h).
 *
 * Design
 * ------
 *
 * One mutex (a->lock) guards everything shared: the bounded job queue, the
 * blackhole list, the pending withdraws and the configuration copy. Posters
 * (the main lcore's detection, the HTTP thread) take it only to copy a job
 * in or to change the list in memory; they never wait for I/O. The
 * thread takes it to pick a job and to apply it, and releases it for all
 * I/O (state file, pipe, script), so posters wait at most for a list
 * update. The workers never come here.
 *
 * The thread's round, each time it wakes (a job, a list change, or a
 * 1 s tick):
 *
 *   pop one job → apply it to the list (ALERT_START with ban adds, the
 *   ALERT_END of the last banning alert removes) → save the state file if
 *   the list changed → write the ExaBGP lines pending → run the job's
 *   notify script (one at a time, each within notify_timeout_ms)
 *
 * so an announce never waits for a slow script of the same event. Each
 * round beats the thread's heartbeat ("actions", heartbeat.h), so a round
 * stuck longer than a wait, a script and HEARTBEAT_SLACK_MS shows in
 * /health. At the
 * stop, every queued event's list change is made at once (state saved,
 * lines written) before the remaining scripts run.
 *
 * The round's other parts have files of their own, leaves that this file
 * calls and that never call back (actions_private.h lists them): the
 * blackhole list, the state file, ExaBGP's pipe and the notify script.
 */
#include "actions_blackholes.h"
#include "actions_exabgp.h"
#include "actions_flowspec.h"
#include "actions_notify.h"
#include "actions_private.h"
#include "actions_state.h"
#include "heartbeat.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The actions thread's heartbeat may be this late beyond a round's
 * longest wait (RETRY_MS) and script (notify_timeout_ms), milliseconds:
 * the state file and ExaBGP's pipe are written in the same round. */
#define HEARTBEAT_SLACK_MS 5000

/* At the stop, the notify script running gets this long more at most,
 * milliseconds (after the list changes are saved and written). */
#define STOP_GRACE_MS 1000
/* At the stop, how long a full pipe may hold the withdraws back: ExaBGP
 * reads 400 rules' withdraws (80 KB, more than a pipe holds) well within. */
#define STOP_DRAIN_MS 1000

/* round_io's outcome of a script the stop dropped before it started. */
#define NOTIFY_DROPPED (-2)

/* Most routes in ExaBGP's pipe: every blackhole, and as many others. */
#define MAX_ROUTES (2 * DPMON_MAX_BLACKHOLES)

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

/* The notify script's EVENT argument of each kind. */
static const char *const event_names[] = {
	[JOB_ALERT_START] = "attack_start",
	[JOB_ALERT_END] = "attack_end",
	[JOB_BAN] = "ban",
	[JOB_UNBAN] = "unban",
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
	enum dpmon_mitigation
		mitigation; /* a banning alert's start blackholes only with BLACKHOLE */
	double end_unix_s;  /* an alert's end: its FlowSpec rules' hold starts */
	bool applied;       /* its list change was made (early, at the stop) */
	json_t *doc;        /* what the script reads on stdin; owned */
};

/*
 * The module. One mutex, a->lock, guards every field but the thread's
 * handle; the ExaBGP writer has a lock of its own, taken inside a->lock
 * (never the other way).
 */
struct dpmon_actions {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* to the thread: a job, a change, the stop */
	pthread_cond_t idle; /* from the thread: a round ended */
	pthread_t thread;
	bool started, stop;
	struct dpmon_actions_conf conf;
	struct actions_subnets subnets;
	/* queue */
	struct job queue[QUEUE_LEN];
	uint32_t head, count;
	uint64_t posted, done, dropped;
	uint64_t notify[3];    /* script runs by enum notify_outcome (but NOTIFY_LEFT) */
	uint64_t stop_dropped; /* queued scripts the stop dropped */
	/* blackholes, announced through @c exabgp */
	struct bh_list bh;
	uint64_t saved_gen;            /* the state change saved (state_gen) */
	bool busy;                     /* the thread is in a round */
	struct actions_exabgp *exabgp; /* ExaBGP's pipe */
	struct fs_list fs;             /* FlowSpec rules, announced through @c exabgp */
	struct fs_scope fs_scope;      /* where a manual rule's destination may point */
	/* beaten by the thread each round (heartbeat.h); NULL: registry full */
	struct dpmon_heartbeat *hb;
};

static double now_unix_s(void);

/* The state file's generation: bumped by every change of the blackholes
 * or of the FlowSpec rules sent (both only grow). Lock held. */
static uint64_t
state_gen(const struct dpmon_actions *a)
{
	return a->bh.gen + a->fs.gen;
}

/* ------------------------------------------------------------------------
 * The job queue (lock held).
 * --------------------------------------------------------------------- */

/*
 * Queue a copy of @p j and wake the thread; the queue then owns j->doc.
 * @return false when the queue is full (counted in a->dropped; j->doc is
 *         still the caller's).
 */
static bool
enqueue(struct dpmon_actions *a, const struct job *j)
{
	if (a->count == QUEUE_LEN) {
		a->dropped++;
		return false;
	}
	a->queue[(a->head + a->count) % QUEUE_LEN] = *j;
	a->count++;
	a->posted++;
	pthread_cond_signal(&a->wake);
	return true;
}

/* ------------------------------------------------------------------------
 * The thread.
 * --------------------------------------------------------------------- */

/* Anything for the thread to do now? Lock held. */
static bool
has_work(const struct dpmon_actions *a)
{
	return a->count > 0 || state_gen(a) != a->saved_gen || a->stop;
}

/* Make queued job @p j's list change, unless made already. Lock held. */
static void
apply_job(struct dpmon_actions *a, struct job *j)
{
	/* A subnet alert never blackholes (docs/detection.md). */
	if (!j->applied && !j->subnet && j->kind == JOB_ALERT_START && j->ban &&
	    j->mitigation == DPMON_MITIGATION_BLACKHOLE)
		actions_bh_alert_start(&a->bh, &a->subnets, &j->addr, j->alert_id);
	else if (!j->applied && !j->subnet && j->kind == JOB_ALERT_END)
		actions_bh_alert_end(&a->bh, &a->subnets, &j->addr, j->alert_id);
	if (!j->applied && j->kind == JOB_ALERT_END)
		actions_fs_alert_end(&a->fs, j->alert_id, j->end_unix_s);
	j->applied = true;
}

/*
 * Make every queued event's list change now: at the stop, so that the
 * state file and ExaBGP are up to date before the remaining scripts run
 * (a service manager may kill dpmon while they do); and before the list
 * change of an event the full queue refuses. Lock held.
 */
static void
apply_all(struct dpmon_actions *a)
{
	for (uint32_t k = 0; k < a->count; k++)
		apply_job(a, &a->queue[(a->head + k) % QUEUE_LEN]);
}

/* Take the oldest job into @p j, its list change made. Lock held.
 * @return false when the queue is empty. */
static bool
pop_job(struct dpmon_actions *a, struct job *j)
{
	if (a->count == 0)
		return false;
	*j = a->queue[a->head];
	a->head = (a->head + 1) % QUEUE_LEN;
	a->count--;
	apply_job(a, j);
	return true;
}

/*
 * Wait for work: a job, a list change or the stop; RETRY_MS at most, or
 * READER_CHECK_MS with an ExaBGP pipe. A FIFO tells its writer that the
 * reader went away only while no other reader has it open (POLLERR), so
 * a restarted ExaBGP that opened it again before the next round would
 * never get the routes again: the pipe is looked at every
 * READER_CHECK_MS, far less than ExaBGP takes to start. Lock held.
 */
static void
wait_work(struct dpmon_actions *a)
{
	long ms = a->conf.exabgp_pipe[0] != '\0' ? READER_CHECK_MS : RETRY_MS;
	struct timespec until;

	if (has_work(a))
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&a->wake, &a->lock, &until);
}

/*
 * Write the list to the state file when it changed since the last save;
 * takes the lock, and leaves it for the I/O. A failure is logged and
 * tried again at the next change. The actions thread only.
 */
static void
save_state(struct dpmon_actions *a)
{
	char path[DPMON_PATH_LEN];
	json_t *doc;
	uint64_t gen;
	int rc;

	pthread_mutex_lock(&a->lock);
	gen = state_gen(a);
	snprintf(path, sizeof(path), "%s", a->conf.state_file);
	doc = gen != a->saved_gen && path[0] != '\0'
		      ? actions_state_json(&a->bh, actions_fs_state_json(&a->fs))
		      : NULL;
	if (doc == NULL && gen != a->saved_gen && path[0] != '\0')
		LOG("cannot write the state file %s: %s (tried again at the next change)", path,
		    strerror(ENOMEM));
	if (doc == NULL)
		a->saved_gen = gen;
	pthread_mutex_unlock(&a->lock);
	if (doc == NULL)
		return;
	rc = actions_state_write(path, doc);
	json_decref(doc);
	if (rc != 0)
		LOG("cannot write the state file %s: %s (tried again at the next change)", path,
		    strerror(-rc));
	pthread_mutex_lock(&a->lock);
	if (a->saved_gen < gen)
		a->saved_gen = gen;
	pthread_cond_broadcast(&a->idle);
	pthread_mutex_unlock(&a->lock);
}

/* Run job @p j's notify script @p script (actions_notify_run). Lock not held. */
static enum notify_outcome
notify(struct dpmon_actions *a, const struct job *j, const char *script, uint32_t timeout_ms,
       struct notify_run *left)
{
	char target[DPMON_PREFIX_STRLEN];
	struct notify_event ev = {.event = event_names[j->kind],
				  .target = target,
				  .dir = j->dir < DPMON_DIR_MAX ? dpmon_dir_name(j->dir) : "none",
				  .alert_id = j->alert_id,
				  .doc = j->doc};

	if (j->subnet)
		dpmon_prefix_format(&j->prefix, target, sizeof(target));
	else
		dpmon_host_format(&j->addr,
				  j->len ? j->len
					 : dpmon_family_bits(dpmon_addr_is_v4(&j->addr) ? 4 : 6),
				  target, sizeof(target));
	return actions_notify_run(script, timeout_ms, &ev, &a->stop, left);
}

/*
 * The I/O of a round, lock released: the state file, ExaBGP's pipe, then
 * job @p j's notify script (@p have: there is a job; its doc is freed).
 * @return the script's enum notify_outcome (NOTIFY_LEFT: the stop came
 *         while it ran, the run is in @p left), NOTIFY_DROPPED when the
 *         stop came before it, or -1 when none was due.
 */
static int
round_io(struct dpmon_actions *a, struct job *j, bool have, const char *script, uint32_t timeout_ms,
	 struct notify_run *left)
{
	int outcome = -1;

	save_state(a);
	actions_exabgp_sync(a->exabgp);
	if (have && script[0] != '\0' && __atomic_load_n(&a->stop, __ATOMIC_RELAXED))
		outcome = NOTIFY_DROPPED;
	else if (have && script[0] != '\0')
		outcome = (int)notify(a, j, script, timeout_ms, left);
	if (have)
		json_decref(j->doc);
	return outcome;
}

/* The longest time between two beats of the thread's heartbeat for @p c. */
static uint32_t
heartbeat_max_age_ms(const struct dpmon_actions_conf *c)
{
	return RETRY_MS + c->notify_timeout_ms + HEARTBEAT_SLACK_MS;
}

/*
 * The stop, lock held (and left): every queued event's list change made,
 * the state file saved and ExaBGP's lines written, first; then the queued
 * notify scripts dropped (counted and logged), and the script the stop
 * interrupted (@p left, NULL: none) given STOP_GRACE_MS more at most.
 */
static void
stop_round(struct dpmon_actions *a, struct notify_run *left)
{
	uint64_t dropped;
	int outcome;

	apply_all(a);
	for (uint32_t k = 0; k < a->count; k++)
		json_decref(a->queue[(a->head + k) % QUEUE_LEN].doc);
	a->stop_dropped += a->count;
	a->head = a->count = 0;
	dropped = a->stop_dropped;
	a->busy = true;
	pthread_mutex_unlock(&a->lock);
	save_state(a);
	/* Blackholes stay announced; what is not written is in the state file. */
	actions_exabgp_stop(a->exabgp, STOP_DRAIN_MS);
	if (dropped > 0)
		dpmon_log(DPMON_LOG_ACTIONS, DPMON_LOG_NOTICE,
			  "actions: stop: %" PRIu64 " queued notify script run(s) dropped",
			  dropped);
	outcome = left != NULL ? (int)actions_notify_finish(left, STOP_GRACE_MS) : -1;
	pthread_mutex_lock(&a->lock);
	if (outcome >= 0)
		a->notify[outcome]++;
	a->busy = false;
	pthread_cond_broadcast(&a->idle);
	pthread_mutex_unlock(&a->lock);
}

static void *
actions_main(void *arg)
{
	struct dpmon_actions *a = arg;
	struct notify_run left;
	sigset_t pipe_set;
	struct job j;
	bool have;
	char script[DPMON_PATH_LEN];
	int outcome = -1;
	uint32_t timeout_ms;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE); /* a lost reader is EPIPE, not a signal */
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	pthread_mutex_lock(&a->lock);
	for (;;) {
		wait_work(a);
		dpmon_heartbeat_beat(a->hb);
		if (a->stop)
			break;
		have = pop_job(a, &j);
		actions_fs_expire(&a->fs, a->exabgp, a->conf.flowspec.hold_s, now_unix_s());
		a->busy = true;
		snprintf(script, sizeof(script), "%s", a->conf.notify_script);
		timeout_ms = a->conf.notify_timeout_ms;
		pthread_mutex_unlock(&a->lock);

		outcome = round_io(a, &j, have, script, timeout_ms, &left);
		dpmon_heartbeat_beat(a->hb);

		pthread_mutex_lock(&a->lock);
		if (outcome == NOTIFY_DROPPED)
			a->stop_dropped++;
		else if (outcome >= 0 && outcome != NOTIFY_LEFT)
			a->notify[outcome]++;
		if (have)
			a->done++;
		a->busy = false;
		pthread_cond_broadcast(&a->idle);
		if (outcome == NOTIFY_LEFT)
			break; /* the stop came while the script ran */
	}
	stop_round(a, outcome == NOTIFY_LEFT ? &left : NULL);
	return NULL;
}

/* ------------------------------------------------------------------------
 * Life cycle and configuration.
 * --------------------------------------------------------------------- */

/*
 * Take @p cfg's subnets for actions_inside_subnets (they may overlap or
 * nest): the same answers as dpmon_prefix_contains over every subnet, with
 * the host prefix length of the longest one (actions_host_len).
 * Lock held or not started. @return 0, or -ENOMEM with nothing changed.
 */
static int
take_config(struct dpmon_actions *a, const struct dpmon_config *cfg)
{
	struct dpmon_prefix *list = malloc(sizeof(*list) * (cfg->n_subnets ? cfg->n_subnets : 1));
	const struct dpmon_prefix *lists[129];
	uint32_t counts[129] = {0}, at = 0;
	struct dpmon_prefix_table t;
	int rc;

	if (list == NULL || actions_fs_scope_take(&a->fs_scope, cfg) != 0) {
		free(list);
		return -ENOMEM;
	}
	/* List l: the subnets whose hosts are /l prefixes, so the value found is l. */
	for (unsigned l = 0; l <= 128; l++) {
		lists[l] = list + at;
		for (uint32_t i = 0; i < cfg->n_subnets; i++)
			if (dpmon_subnet_host_len(&cfg->subnets[i]) == l) {
				list[at++] = cfg->subnets[i].prefix;
				counts[l]++;
			}
	}
	rc = dpmon_prefix_table_build(&t, lists, counts, 129, true);
	free(list);
	if (rc != 0)
		return rc;
	dpmon_prefix_table_free(&a->subnets.table);
	a->subnets.table = t;
	a->subnets.n = cfg->n_subnets;
	return 0;
}

/*
 * Read the state file into the list, dropping (and withdrawing) the
 * entries outside the monitored subnets when some are known; announce its
 * manual FlowSpec rules again and withdraw the others (their alerts did
 * not survive the restart), the file rewritten without them in the
 * thread's first round.
 * @return 0, or -EINVAL (logged). Before the thread starts.
 */
static int
load_state(struct dpmon_actions *a)
{
	char context[DPMON_PATH_LEN + 16];
	json_t *rules;
	int rc = actions_state_load(&a->bh, a->conf.state_file, &rules);

	if (rc == 0)
		rc = actions_fs_restore(&a->fs, a->exabgp, &a->conf.flowspec, &a->fs_scope, rules,
					a->conf.state_file);
	json_decref(rules);
	if (rc < 0)
		return rc;
	if (rc > 0)
		LOG("%d flowspec rule(s) of %s withdrawn", rc, a->conf.state_file);
	snprintf(context, sizeof(context), "state file %s: ", a->conf.state_file);
	if (a->subnets.n > 0)
		actions_bh_drop_outside(&a->bh, &a->subnets, context);
	a->saved_gen = a->bh.gen; /* a restored rule leaves a->fs.gen ahead: saved */
	if (a->bh.n > 0)
		LOG("%u blackhole(s) restored from %s", a->bh.n, a->conf.state_file);
	return 0;
}

static struct dpmon_actions *
actions_new(const struct dpmon_actions_conf *conf, const struct dpmon_config *cfg)
{
	struct dpmon_actions *a = calloc(1, sizeof(*a));
	int rc;

	if (a == NULL)
		return NULL;
	a->conf = *conf;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	pthread_cond_init(&a->idle, NULL);
	a->exabgp = actions_exabgp_create(MAX_ROUTES);
	if (a->exabgp == NULL) {
		dpmon_actions_free(a);
		errno = ENOMEM;
		return NULL;
	}
	actions_exabgp_set_pipe(a->exabgp, conf->exabgp_pipe);
	actions_bh_init(&a->bh, a->exabgp, conf);
	rc = cfg != NULL ? take_config(a, cfg) : 0;
	if (rc == 0)
		rc = load_state(a);
	if (rc == 0) {
		a->hb = dpmon_heartbeat_register("actions", heartbeat_max_age_ms(conf));
		rc = -pthread_create(&a->thread, NULL, actions_main, a);
		a->started = rc == 0;
	}
	if (rc != 0) {
		dpmon_actions_free(a);
		errno = -rc;
		return NULL;
	}
	if (a->bh.n > 0 || actions_exabgp_routes(a->exabgp) > 0)
		pthread_cond_signal(&a->wake); /* re-announce what was loaded */
	return a;
}

struct dpmon_actions *
dpmon_actions_create(const struct dpmon_actions_conf *conf)
{
	return actions_new(conf, NULL);
}

struct dpmon_actions *
dpmon_actions_create_cfg(const struct dpmon_config *cfg)
{
	return actions_new(&cfg->actions, cfg);
}

int
dpmon_actions_reconfigure(struct dpmon_actions *a, const struct dpmon_config *cfg)
{
	const struct dpmon_actions_conf *n = &cfg->actions;
	int rc;

	pthread_mutex_lock(&a->lock);
	rc = take_config(a, cfg);
	if (rc == 0) {
		if (strcmp(a->conf.state_file, n->state_file) != 0)
			a->bh.gen++; /* write the new file */
		/* Another pipe, or other attributes: every route announced again. */
		actions_exabgp_set_pipe(a->exabgp, n->exabgp_pipe);
		actions_bh_set_attributes(&a->bh, n);
		a->conf = *n;
		dpmon_heartbeat_set_max_age(a->hb, heartbeat_max_age_ms(n));
		actions_bh_drop_outside(&a->bh, &a->subnets, "after the reload, ");
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

/* ------------------------------------------------------------------------
 * Events, flush and counters.
 * --------------------------------------------------------------------- */

/* The stdin of an alert's script when the poster gave no alert JSON. */
static json_t *
event_json(const struct dpmon_action_event *ev)
{
	char t[DPMON_PREFIX_STRLEN];

	return json_pack("{s:I,s:s,s:s,s:f,s:f}", "id", (json_int_t)ev->alert_id,
			 ev->subnet ? "prefix" : "address",
			 ev->subnet ? dpmon_prefix_format(&ev->prefix, t, sizeof(t))
				    : dpmon_addr_format(&ev->addr, t, sizeof(t)),
			 "direction", ev->dir < DPMON_DIR_MAX ? dpmon_dir_name(ev->dir) : "none",
			 "start_unix_s", ev->start_unix_s, "end_unix_s", ev->end_unix_s);
}

int
dpmon_actions_post(struct dpmon_actions *a, struct dpmon_action_event *ev)
{
	struct job j = {.kind = ev->kind == DPMON_ACTION_ALERT_START ? JOB_ALERT_START
								     : JOB_ALERT_END,
			.addr = ev->addr,
			.subnet = ev->subnet,
			.prefix = ev->prefix,
			.dir = ev->dir,
			.alert_id = ev->alert_id,
			.ban = ev->ban && !ev->subnet,
			.mitigation = ev->mitigation,
			.end_unix_s = ev->end_unix_s,
			.doc = ev->alert};
	char t[DPMON_ADDR_STRLEN];
	bool ok;

	ev->alert = NULL;
	if (j.doc == NULL)
		j.doc = event_json(ev);
	pthread_mutex_lock(&a->lock);
	j.len = (uint8_t)actions_host_len(&a->subnets, &j.addr);
	ok = enqueue(a, &j);
	if (!ok) {
		/* Only the script is dropped: the list changes of the queued
		 * events, then this one's, are made now (in memory; the thread
		 * saves and announces), so an end still removes its blackhole. */
		apply_all(a);
		apply_job(a, &j);
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->lock);
	if (ok)
		return 0;
	json_decref(j.doc);
	LOG("queue full (%d events): notify script not run for alert %" PRIu64 " %s of %s",
	    QUEUE_LEN, ev->alert_id, ev->kind == DPMON_ACTION_ALERT_START ? "start" : "end",
	    dpmon_addr_format(&ev->addr, t, sizeof(t)));
	return -ENOBUFS;
}

void
dpmon_actions_flush(struct dpmon_actions *a)
{
	uint64_t target;

	pthread_mutex_lock(&a->lock);
	target = a->posted;
	pthread_cond_signal(&a->wake);
	while (a->started &&
	       (a->done < target || a->busy || state_gen(a) != a->saved_gen || a->count > 0))
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);
}

void
dpmon_actions_stats(struct dpmon_actions *a, struct dpmon_actions_stats *st)
{
	pthread_mutex_lock(&a->lock);
	st->events_dropped = a->dropped;
	st->notify_ok = a->notify[NOTIFY_OK];
	st->notify_failed = a->notify[NOTIFY_FAILED];
	st->notify_killed = a->notify[NOTIFY_KILLED];
	st->blackholes = a->bh.n;
	st->flowspec_rules = a->fs.n;
	st->flowspec_announced = a->fs.announced;
	st->flowspec_refused = a->fs.refused;
	st->exabgp_connected = actions_exabgp_connected(a->exabgp);
	pthread_mutex_unlock(&a->lock);
}

/* ------------------------------------------------------------------------
 * Operators' blackholes.
 * --------------------------------------------------------------------- */

/* A notify job for an operator's ban/unban, when a script is configured. Lock held. */
static void
enqueue_manual(struct dpmon_actions *a, enum job_kind kind, const struct bh *b)
{
	struct dpmon_blackhole pub;
	struct job j = {.kind = kind, .addr = b->addr, .len = b->len, .dir = DPMON_DIR_MAX};

	if (a->conf.notify_script[0] == '\0')
		return;
	actions_bh_public(&a->bh, b, &pub);
	j.doc = dpmon_blackhole_json(&pub);
	if (!enqueue(a, &j)) {
		json_decref(j.doc);
		LOG("queue full: notify script not run for a manual %s",
		    kind == JOB_BAN ? "ban" : "unban");
	}
}

static double
now_unix_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
dpmon_blackhole_add(struct dpmon_actions *a, const struct dpmon_addr *addr,
		    struct dpmon_blackhole *out)
{
	struct dpmon_addr key;
	unsigned len;
	struct bh *b;
	int i, rc = 0;

	pthread_mutex_lock(&a->lock);
	if (!actions_inside_subnets(&a->subnets, addr)) {
		rc = -EDOM;
		goto out;
	}
	len = actions_host_key(&a->subnets, addr, &key);
	i = actions_bh_find(&a->bh, &key);
	if (i >= 0 && a->bh.bh[i].manual) {
		rc = 1;
		b = &a->bh.bh[i];
	} else {
		b = i >= 0 ? &a->bh.bh[i] : actions_bh_new(&a->bh, &key, len, now_unix_s());
		if (b == NULL) {
			rc = a->bh.n == DPMON_MAX_BLACKHOLES ? -ENOSPC : -ENOMEM;
			goto out;
		}
		b->manual = true;
		a->bh.gen++;
		enqueue_manual(a, JOB_BAN, b);
		pthread_cond_signal(&a->wake);
	}
	if (out != NULL)
		actions_bh_public(&a->bh, b, out);
out:
	pthread_mutex_unlock(&a->lock);
	return rc;
}

/* The index of the entry of @p addr (that address's, else that of its
 * host prefix), or -1. Lock held. */
static int
find_host(const struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	struct dpmon_addr key;
	int i = actions_bh_find(&a->bh, addr);

	if (i < 0) {
		(void)actions_host_key(&a->subnets, addr, &key);
		i = actions_bh_find(&a->bh, &key);
	}
	return i;
}

int
dpmon_blackhole_remove(struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	struct bh copy;
	int i;

	pthread_mutex_lock(&a->lock);
	i = find_host(a, addr);
	if (i >= 0) {
		copy = a->bh.bh[i];
		actions_bh_delete(&a->bh, (uint32_t)i);
		enqueue_manual(a, JOB_UNBAN, &copy);
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->lock);
	return i >= 0 ? 0 : 1;
}

int
dpmon_blackhole_get(struct dpmon_actions *a, const struct dpmon_addr *addr,
		    struct dpmon_blackhole *out)
{
	int i;

	pthread_mutex_lock(&a->lock);
	i = find_host(a, addr);
	if (i >= 0)
		actions_bh_public(&a->bh, &a->bh.bh[i], out);
	pthread_mutex_unlock(&a->lock);
	return i >= 0 ? 0 : -ENOENT;
}

int
dpmon_blackhole_host_len(struct dpmon_actions *a, const struct dpmon_addr *addr)
{
	int len;

	pthread_mutex_lock(&a->lock);
	len = actions_inside_subnets(&a->subnets, addr) ? (int)actions_host_len(&a->subnets, addr)
							: -EDOM;
	pthread_mutex_unlock(&a->lock);
	return len;
}

static int
cmp_blackhole(const void *x, const void *y)
{
	return dpmon_addr_cmp(&((const struct dpmon_blackhole *)x)->addr,
			      &((const struct dpmon_blackhole *)y)->addr);
}

int
dpmon_blackhole_list(struct dpmon_actions *a, struct dpmon_blackhole **out)
{
	struct dpmon_blackhole *l = NULL;
	uint32_t n;

	pthread_mutex_lock(&a->lock);
	n = a->bh.n;
	if (n > 0 && (l = malloc(n * sizeof(*l))) != NULL)
		for (uint32_t i = 0; i < n; i++)
			actions_bh_public(&a->bh, &a->bh.bh[i], &l[i]);
	pthread_mutex_unlock(&a->lock);
	if (n > 0 && l == NULL)
		return -ENOMEM;
	if (n > 0)
		qsort(l, n, sizeof(*l), cmp_blackhole);
	*out = l;
	return (int)n;
}

/* ------------------------------------------------------------------------
 * FlowSpec rules.
 * --------------------------------------------------------------------- */

uint32_t
dpmon_actions_flowspec(struct dpmon_actions *a, uint64_t alert_id, const struct dpmon_addr *addr,
		       bool blackhole_fallback, const struct dpmon_fs_choice *c, uint32_t *refused)
{
	double now = now_unix_s();
	uint32_t added = 0;

	*refused = 0;
	pthread_mutex_lock(&a->lock);
	for (uint32_t i = 0; i < c->n_rules; i++) {
		int64_t id = actions_fs_add(&a->fs, a->exabgp, &a->conf.flowspec, alert_id,
					    &c->rules[i], c->matched[i], c->coverage, now);

		if (id > 0) {
			added++;
		} else if (id == -ENOSPC) {
			(*refused)++;
			LOG("flowspec: alert %" PRIu64 ": rule refused, %" PRIu32
			    " rules already (flowspec.max_rules)",
			    alert_id, a->fs.n);
		} else {
			LOG("flowspec: alert %" PRIu64 ": rule not added: %s", alert_id,
			    strerror((int)-id));
		}
	}
	if (c->n_rules == 0 && blackhole_fallback)
		actions_bh_alert_start(&a->bh, &a->subnets, addr, alert_id);
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	return added;
}

int64_t
dpmon_flowspec_add(struct dpmon_actions *a, const struct dpmon_fs_rule *r, const char **why)
{
	int64_t id;

	pthread_mutex_lock(&a->lock);
	/* Without a pipe only a dry run has a use for a manual rule. */
	if (a->conf.flowspec.announce && a->conf.exabgp_pipe[0] == '\0') {
		*why = "actions.exabgp_pipe is not set: nothing would announce the rule";
		pthread_mutex_unlock(&a->lock);
		return -ENOTCONN;
	}
	id = actions_fs_add_manual(&a->fs, a->exabgp, &a->conf.flowspec, &a->fs_scope, r,
				   now_unix_s(), why);
	if (id == -ENOSPC)
		LOG("flowspec: manual rule refused, %" PRIu32 " rules already (flowspec.max_rules)",
		    a->fs.n);
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	return id;
}

json_t *
dpmon_flowspec_list(struct dpmon_actions *a)
{
	json_t *j;

	pthread_mutex_lock(&a->lock);
	j = actions_fs_json(&a->fs, a->exabgp);
	pthread_mutex_unlock(&a->lock);
	return j;
}

int
dpmon_flowspec_remove(struct dpmon_actions *a, uint64_t id)
{
	int rc;

	pthread_mutex_lock(&a->lock);
	rc = actions_fs_remove(&a->fs, a->exabgp, id);
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	return rc;
}

/* ------------------------------------------------------------------------
 * Stop.
 * --------------------------------------------------------------------- */

void
dpmon_actions_free(struct dpmon_actions *a)
{
	if (a == NULL)
		return;
	if (a->started) {
		pthread_mutex_lock(&a->lock);
		__atomic_store_n(&a->stop, true,
				 __ATOMIC_RELAXED); /* read by a running script's wait */
		pthread_cond_signal(&a->wake);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
	}
	dpmon_heartbeat_unregister(a->hb);
	for (uint32_t i = 0; i < a->count; i++)
		json_decref(a->queue[(a->head + i) % QUEUE_LEN].doc);
	pthread_cond_destroy(&a->idle);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	dpmon_prefix_table_free(&a->subnets.table);
	actions_bh_fini(&a->bh);
	actions_fs_free(&a->fs);
	actions_fs_scope_free(&a->fs_scope);
	actions_exabgp_free(a->exabgp);
	free(a);
}
