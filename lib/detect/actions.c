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
 * The round's other parts have files of their own (actions_private.h
 * lists them): the blackhole list, the state file, ExaBGP's pipe and the
 * notify script.
 */
#include "actions_private.h"

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

/* ------------------------------------------------------------------------
 * Logging.
 * --------------------------------------------------------------------- */

void
actions_log(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dpmon_log(DPMON_LOG_ACTIONS, level, "actions: %s", buf);
}

/* ------------------------------------------------------------------------
 * The job queue (lock held).
 * --------------------------------------------------------------------- */

bool
actions_enqueue(struct dpmon_actions *a, const struct job *j)
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
	return a->count > 0 || a->gen != a->saved_gen || a->stop;
}

/* Make queued job @p j's list change, unless made already. Lock held. */
static void
apply_job(struct dpmon_actions *a, struct job *j)
{
	if (!j->applied && (j->kind == JOB_ALERT_START || j->kind == JOB_ALERT_END))
		actions_apply_alert(a, j);
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

/* Wait for work: a job, a list change or the stop, RETRY_MS at most. Lock held. */
static void
wait_work(struct dpmon_actions *a)
{
	struct timespec until;

	if (has_work(a))
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += RETRY_MS / 1000;
	pthread_cond_timedwait(&a->wake, &a->lock, &until);
}

/*
 * The I/O of a round, lock released: the state file, ExaBGP's pipe, then
 * job @p j's notify script (@p have: there is a job; its doc is freed).
 * @return the script's enum notify_outcome, or -1 when none ran.
 */
static int
round_io(struct dpmon_actions *a, struct job *j, bool have, const char *script, uint32_t timeout_ms)
{
	int outcome;

	actions_state_save(a);
	actions_exabgp_sync(a);
	outcome = have && script[0] != '\0' ? (int)actions_notify_run(script, timeout_ms, j) : -1;
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

static void *
actions_main(void *arg)
{
	struct dpmon_actions *a = arg;
	sigset_t pipe_set;
	struct job j;
	bool have;
	char script[DPMON_PATH_LEN];
	int outcome;
	uint32_t timeout_ms;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE); /* a lost reader is EPIPE, not a signal */
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	pthread_mutex_lock(&a->lock);
	for (;;) {
		wait_work(a);
		dpmon_heartbeat_beat(a->hb);
		if (a->stop && a->count == 0 && a->gen == a->saved_gen)
			break;
		if (a->stop)
			apply_all(a);
		have = pop_job(a, &j);
		a->busy = true;
		snprintf(script, sizeof(script), "%s", a->conf.notify_script);
		timeout_ms = a->conf.notify_timeout_ms;
		pthread_mutex_unlock(&a->lock);

		outcome = round_io(a, &j, have, script, timeout_ms);
		dpmon_heartbeat_beat(a->hb);

		pthread_mutex_lock(&a->lock);
		if (outcome >= 0)
			a->notify[outcome]++;
		if (have)
			a->done++;
		a->busy = false;
		pthread_cond_broadcast(&a->idle);
	}
	pthread_mutex_unlock(&a->lock);
	actions_exabgp_sync(a); /* a last attempt; what is left is in the state file */
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

	if (list == NULL)
		return -ENOMEM;
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
	dpmon_prefix_table_free(&a->subnets);
	a->subnets = t;
	a->n_subnets = cfg->n_subnets;
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
	__atomic_store_n(&a->fifo, -1, __ATOMIC_RELAXED);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	pthread_cond_init(&a->idle, NULL);
	rc = cfg != NULL ? take_config(a, cfg) : 0;
	if (rc == 0)
		rc = actions_state_load(a);
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
	if (a->n_bh > 0 || a->n_wd > 0)
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

/* Does ExaBGP need every route again going from @p o to @p n (another
 * pipe, or announces with other attributes)? */
static bool
routes_changed(const struct dpmon_actions_conf *o, const struct dpmon_actions_conf *n)
{
	return strcmp(o->exabgp_pipe, n->exabgp_pipe) != 0 ||
	       strcmp(o->exabgp_next_hop, n->exabgp_next_hop) != 0 ||
	       strcmp(o->exabgp_next_hop6, n->exabgp_next_hop6) != 0 ||
	       strcmp(o->exabgp_community, n->exabgp_community) != 0;
}

int
dpmon_actions_reconfigure(struct dpmon_actions *a, const struct dpmon_config *cfg)
{
	const struct dpmon_actions_conf *n = &cfg->actions;
	char t[DPMON_ADDR_STRLEN];
	bool reannounce;
	int rc;

	pthread_mutex_lock(&a->lock);
	rc = take_config(a, cfg);
	if (rc == 0) {
		reannounce = routes_changed(&a->conf, n);
		if (strcmp(a->conf.state_file, n->state_file) != 0)
			a->gen++; /* write the new file */
		if (strcmp(a->conf.exabgp_pipe, n->exabgp_pipe) != 0)
			a->fifo_reopen = true;
		a->conf = *n;
		dpmon_heartbeat_set_max_age(a->hb, heartbeat_max_age_ms(n));
		for (uint32_t i = a->n_bh; i-- > 0;) {
			if (reannounce)
				a->bh[i].announced = false;
			if (!actions_inside_subnets(a, &a->bh[i].addr)) {
				LOG("%s is outside every monitored subnet now: withdrawn",
				    dpmon_addr_format(&a->bh[i].addr, t, sizeof(t)));
				actions_bh_delete(a, i);
			}
		}
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
			.doc = ev->alert};
	char t[DPMON_ADDR_STRLEN];
	bool ok;

	ev->alert = NULL;
	if (j.doc == NULL)
		j.doc = event_json(ev);
	pthread_mutex_lock(&a->lock);
	j.len = (uint8_t)actions_host_len(a, &j.addr);
	ok = actions_enqueue(a, &j);
	if (!ok) {
		/* Only the script is dropped: the list changes of the queued
		 * events, then this one's, are made now (in memory; the thread
		 * saves and announces), so an end still removes its blackhole. */
		apply_all(a);
		actions_apply_alert(a, &j);
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
	       (a->done < target || a->busy || a->gen != a->saved_gen || a->count > 0))
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
	st->blackholes = a->n_bh;
	st->exabgp_connected = __atomic_load_n(&a->fifo, __ATOMIC_RELAXED) >= 0;
	pthread_mutex_unlock(&a->lock);
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
		a->stop = true;
		pthread_cond_signal(&a->wake);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
	}
	dpmon_heartbeat_unregister(a->hb);
	for (uint32_t i = 0; i < a->count; i++)
		json_decref(a->queue[(a->head + i) % QUEUE_LEN].doc);
	if (a->fifo >= 0)
		close(a->fifo);
	pthread_cond_destroy(&a->idle);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	dpmon_prefix_table_free(&a->subnets);
	free(a->bh);
	free(a->withdraws);
	free(a);
}
