/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.c — the exporter threads (export.h): the handoff from the main
 * lcore, the spool, the retries with exponential backoff, the stop.
 *
 * Each exporter is one pthread with its own libcurl handle. The main lcore
 * hands it snapshot references through a single-producer, single-consumer
 * rte_ring (lock-free; a full ring skips the snapshot, which the next
 * batch's deltas then cover). The thread encodes each snapshot into a
 * batch at once (against the previous one, whose reference it keeps),
 * appends it to the spool, and sends the spool in order while the server
 * answers. A failure waits 0.5 s, then twice as long each time, up to
 * retry_max_ms. A full spool (spool_intervals batches or spool_mb MiB)
 * drops its oldest batch and counts it.
 *
 * Every loop round, and every libcurl progress call during a request,
 * stores CLOCK_MONOTONIC in last_progress_ns, so a health check can tell
 * a thread that waits on a slow server from one that is stuck, and beats
 * the exporter's heartbeat ("exporter clickhouse", heartbeat.h): /health
 * answers 503 when it is HEARTBEAT_MAX_AGE_MS overdue.
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <rte_lcore.h>
#include <rte_ring.h>

#include "export_private.h"
#include "log.h"

/** Snapshots that may wait between the main lcore and an exporter. */
#define HANDOFF_SLOTS        16
/*
 * Host records that waiting snapshots may hold, in bytes, once two wait:
 * a snapshot keeps the records of its merge alive (at a million hosts
 * that all moved, about 700 MB each), so while the exporter encodes more
 * slowly than the merges, sixteen of them would hold gigabytes, and every
 * merge would write its records into fresh pages (zeroed by the kernel at
 * first touch) instead of the memory of a freed snapshot. Past the bound
 * the snapshot is skipped as when the ring is full. Small snapshots still
 * wait up to HANDOFF_SLOTS.
 */
#define HANDOFF_RECORD_BYTES (256ull << 20)
/** First wait after a failure, ms. */
#define BACKOFF_FIRST_MS     500
/** Longest sleep of an idle round, ms (the progress stamp's period). */
#define IDLE_ROUND_MS        20
/*
 * The longest an exporter may go without progress before /health calls
 * it stuck: far above its 20 ms rounds, libcurl's progress calls (at
 * least once a second during a request) and one interval's encoding at
 * a million hosts (about 2 s of CPU).
 */
#define HEARTBEAT_MAX_AGE_MS 15000

/* ------------------------------------------------------------------------
 * State.
 * --------------------------------------------------------------------- */

struct exporter {
	int kind;
	struct export_sink sink; /* thread only (conf swapped in under @c lock) */
	struct rte_ring *handoff;
	struct dpmon_snap_store *store;
	pthread_t thread;
	bool started;

	pthread_mutex_t lock; /* guards @c st, @c next_conf, @c conf_changed */
	struct dpmon_snap_exporter st;
	struct dpmon_export_conf next_conf;
	bool conf_changed;

	int stop;                  /* the thread flushes and exits (__atomic builtins) */
	uint64_t progress_ns;      /* __atomic builtins */
	uint64_t stop_deadline_ns; /* set with @c stop: requests end by then */
	uint32_t flush_ms;         /* flush_timeout_ms; main lcore only */
	/* Set before @c stop when a reload removes the backend: what the
	 * flush could not send stays in the spool (exporter_stop). __atomic
	 * builtins (ordered by @c stop's release and acquire). */
	bool park;

	/* Thread only. */
	struct dpmon_snapshot *prev;
	struct export_batch **spool; /* ring of spool_cap */
	uint32_t spool_head, spool_n, spool_cap;
	size_t spool_bytes;
	/* The bodies of the last batch that left the spool, emptied: the next
	 * batch writes into them (pages already faulted in). */
	struct xbuf spare[EXPORT_TABLES];
	bool prepared;
	uint32_t backoff_ms;
	uint64_t next_try_ns;
};

struct dpmon_export {
	struct dpmon_snap_store *store;
	struct exporter *ex[DPMON_EXPORT_MAX];
	/*
	 * A backend a reload removed, its thread stopped: its last snapshot
	 * (the base of its next deltas) and what it could not send. Added
	 * again, it goes on from there, so that no interval is sent twice or
	 * lost (exporter_stop, exporter_resume).
	 */
	struct exporter *parked[DPMON_EXPORT_MAX];
};

static uint64_t
mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static double
unix_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double
thread_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
beat(struct exporter *x)
{
	__atomic_store_n(&x->progress_ns, mono_ns(), __ATOMIC_RELAXED);
	if (x->sink.hb != NULL)
		dpmon_heartbeat_beat(x->sink.hb);
}

void
export_batch_free(struct export_batch *b)
{
	if (b == NULL)
		return;
	for (uint32_t i = 0; i < EXPORT_TABLES; i++)
		xbuf_free(&b->part[i].body);
	free(b);
}

/* ------------------------------------------------------------------------
 * Settings: the secrets, the spool's size.
 * --------------------------------------------------------------------- */

/* Make @p c the settings in force (thread). */
static int
apply_conf(struct exporter *x, const struct dpmon_export_conf *c)
{
	struct export_sink *s = &x->sink;
	const struct dpmon_export_sink_conf *sc = &c->sink[x->kind];
	struct export_batch **spool;
	uint32_t cap = c->spool_intervals;

	/* A smaller spool keeps its newest batches. */
	spool = calloc(cap, sizeof(*spool));
	if (spool == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < x->spool_n; i++) {
		struct export_batch *b = x->spool[(x->spool_head + i) % x->spool_cap];

		if (x->spool_n - i > cap) {
			x->spool_bytes -= b->bytes;
			export_batch_free(b);
			pthread_mutex_lock(&x->lock);
			x->st.dropped_intervals++;
			pthread_mutex_unlock(&x->lock);
		} else
			spool[(i - (x->spool_n > cap ? x->spool_n - cap : 0))] = b;
	}
	x->spool_n = x->spool_n < cap ? x->spool_n : cap;
	free(x->spool);
	x->spool = spool;
	x->spool_head = 0;
	x->spool_cap = cap;
	s->conf = *c;
	s->sc = &s->conf.sink[x->kind];
	/* Read with the configuration (token_file.h): no file opened here. */
	snprintf(s->secret, sizeof(s->secret), "%s", sc->api == 2 ? sc->token : sc->password);
	s->timeout_ms = sc->timeout_ms;
	x->prepared = false;
	x->backoff_ms = 0;
	x->next_try_ns = 0;
	return 0;
}

/* A reconfiguration the main lcore posted, if any. */
static void
take_conf(struct exporter *x)
{
	struct dpmon_export_conf c;
	bool changed;

	pthread_mutex_lock(&x->lock);
	changed = x->conf_changed;
	if (changed)
		c = x->next_conf;
	x->conf_changed = false;
	pthread_mutex_unlock(&x->lock);
	if (changed && apply_conf(x, &c) != 0)
		dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_ERR,
			  "export to %s: out of memory for the new settings; keeping the old ones",
			  x->sink.be->name);
}

/* ------------------------------------------------------------------------
 * The spool.
 * --------------------------------------------------------------------- */

/* The spool's depth and size into the counters readers see. */
static void
spool_publish(struct exporter *x)
{
	pthread_mutex_lock(&x->lock);
	x->st.spool_depth = x->spool_n;
	x->st.spool_bytes = x->spool_bytes;
	pthread_mutex_unlock(&x->lock);
}

/*
 * Free batch @p b, keeping its bodies' memory as @p x's spare ones where
 * it has none: at a million hosts a batch is about 165 MB, which a fresh
 * buffer would take from the kernel again (zeroed pages) every interval.
 */
static void
batch_recycle(struct exporter *x, struct export_batch *b)
{
	for (uint32_t i = 0; i < EXPORT_TABLES; i++) {
		struct xbuf *body = &b->part[i].body;

		if (x->spare[i].p == NULL && body->p != NULL && !body->oom) {
			x->spare[i] = *body;
			x->spare[i].len = 0;
			*body = (struct xbuf){.p = NULL};
		}
	}
	export_batch_free(b);
}

/* A new batch whose bodies start in @p x's spare memory. NULL: out of memory. */
static struct export_batch *
batch_new(struct exporter *x)
{
	struct export_batch *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	for (uint32_t i = 0; i < EXPORT_TABLES; i++) {
		b->part[i].body = x->spare[i];
		x->spare[i] = (struct xbuf){.p = NULL};
	}
	return b;
}

static void
spool_pop(struct exporter *x)
{
	struct export_batch *b = x->spool[x->spool_head];

	x->spool_bytes -= b->bytes;
	batch_recycle(x, b);
	x->spool_head = (x->spool_head + 1) % x->spool_cap;
	x->spool_n--;
	spool_publish(x);
}

/* Append @p b; drop the oldest while the spool is over its limits. */
static void
spool_push(struct exporter *x, struct export_batch *b)
{
	size_t max_bytes = (size_t)x->sink.conf.spool_mb << 20;
	uint64_t dropped = 0;

	while (x->spool_n > 0 &&
	       (x->spool_n >= x->spool_cap || x->spool_bytes + b->bytes > max_bytes)) {
		spool_pop(x);
		dropped++;
	}
	x->spool[(x->spool_head + x->spool_n) % x->spool_cap] = b;
	x->spool_n++;
	x->spool_bytes += b->bytes;
	pthread_mutex_lock(&x->lock);
	x->st.dropped_intervals += dropped;
	pthread_mutex_unlock(&x->lock);
	spool_publish(x);
	if (dropped != 0)
		dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_WARNING,
			  "export to %s: spool full (%u batches, %zu bytes); dropped the oldest "
			  "interval",
			  x->sink.be->name, x->spool_n, x->spool_bytes);
}

/* ------------------------------------------------------------------------
 * Encoding.
 * --------------------------------------------------------------------- */

/* Snapshot @p s (a reference, which moves to x->prev) into a batch. */
static void
encode(struct exporter *x, struct dpmon_snapshot *s)
{
	struct export_interval iv = {
		.instance = x->sink.conf.instance,
		.seq = s->seq,
		.unix_s = s->alerts_unix_s > 0 ? s->alerts_unix_s : unix_now(),
		.interval_s = x->prev != NULL ? s->uptime_s - x->prev->uptime_s : s->uptime_s,
	};
	struct export_batch *b = batch_new(x);
	double t0 = thread_cpu_s();
	int rc = b != NULL ? x->sink.be->encode(&x->sink, s, x->prev, &iv, b) : -ENOMEM;

	if (rc != 0) {
		/* The counts stay in the next batch's deltas: keep the old prev. */
		export_batch_free(b);
		dpmon_snap_release(x->store, s);
		dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_ERR,
			  "export to %s: out of memory encoding interval %" PRIu64
			  "; it goes with the next one",
			  x->sink.be->name, s->seq);
		return;
	}
	b->seq = s->seq;
	for (uint32_t i = 0; i < b->n_parts; i++) {
		b->rows += b->part[i].rows;
		b->bytes += b->part[i].body.len;
	}
	if (x->prev != NULL)
		dpmon_snap_release(x->store, x->prev);
	x->prev = s;
	spool_push(x, b);
	pthread_mutex_lock(&x->lock);
	x->st.intervals++;
	x->st.last_rows = b->rows;
	x->st.cpu_s = thread_cpu_s();
	x->st.encode_s = x->st.cpu_s - t0;
	pthread_mutex_unlock(&x->lock);
}

/* Encode every snapshot waiting in the handoff ring. */
static void
drain_handoff(struct exporter *x)
{
	void *p;

	while (rte_ring_sc_dequeue(x->handoff, &p) == 0) {
		beat(x);
		encode(x, p);
	}
}

/* ------------------------------------------------------------------------
 * Sending.
 * --------------------------------------------------------------------- */

static void
failed(struct exporter *x, const char *what, const char *why)
{
	uint32_t max = x->sink.conf.retry_max_ms;

	x->backoff_ms = x->backoff_ms == 0 ? BACKOFF_FIRST_MS : x->backoff_ms * 2;
	if (x->backoff_ms > max)
		x->backoff_ms = max;
	x->next_try_ns = mono_ns() + (uint64_t)x->backoff_ms * 1000000ull;
	pthread_mutex_lock(&x->lock);
	x->st.failures++;
	x->st.last_error_unix_s = unix_now();
	snprintf(x->st.last_error, sizeof(x->st.last_error), "%s: %s", what, why);
	pthread_mutex_unlock(&x->lock);
	dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_WARNING,
		  "export to %s (%s): %s failed: %s; %u batch(es) spooled, next attempt in %u ms",
		  x->sink.be->name, x->sink.sc->url, what, why, x->spool_n, x->backoff_ms);
}

/* The oldest batches sent together: how many (at most), and how many bytes. */
#define COALESCE_BATCHES 64
#define COALESCE_BYTES   (16u << 20)

/* The spool's @p k oldest batches: the @p j-th. */
static struct export_batch *
spool_at(const struct exporter *x, uint32_t j)
{
	return x->spool[(x->spool_head + j) % x->spool_cap];
}

/*
 * How many of the oldest batches go in the next requests: those encoded
 * in the first one's format (a reload may have changed it since).
 */
static uint32_t
coalesce_count(const struct exporter *x)
{
	size_t bytes = 0;
	uint32_t k = 0;

	while (k < x->spool_n && k < COALESCE_BATCHES) {
		if (spool_at(x, k)->part[0].format != spool_at(x, 0)->part[0].format)
			break;
		bytes += spool_at(x, k)->bytes;
		if (k > 0 && bytes > COALESCE_BYTES)
			break;
		k++;
	}
	return k;
}

/*
 * Part @p i of the @p k oldest batches, those not sent yet, as one body
 * into @p out (the first's own when it is alone). @return its rows.
 */
static uint32_t
gather_part(const struct exporter *x, uint32_t k, uint32_t i, struct export_part *out, bool *copied)
{
	uint32_t rows = 0, n = 0;

	*copied = false;
	for (uint32_t j = 0; j < k; j++) {
		const struct export_part *p = &spool_at(x, j)->part[i];

		if (!p->sent && p->rows > 0) {
			n++;
			*out = *p;
		}
	}
	if (n <= 1) {
		rows = n == 1 ? out->rows : 0;
		return rows;
	}
	memset(out, 0, sizeof(*out));
	out->table = spool_at(x, 0)->part[i].table;
	out->format = spool_at(x, 0)->part[i].format;
	for (uint32_t j = 0; j < k; j++) {
		const struct export_part *p = &spool_at(x, j)->part[i];

		if (!p->sent && p->rows > 0) {
			xbuf_put(&out->body, p->body.p, p->body.len);
			out->rows += p->rows;
		}
	}
	*copied = true;
	return out->rows;
}

/*
 * Send the oldest batches, up to COALESCE_BATCHES of them in one request
 * per part (a server catching up after an outage takes them in few
 * requests: ClickHouse prefers few large inserts). @return 0 when all went.
 */
static int
send_oldest(struct exporter *x)
{
	uint32_t k = coalesce_count(x), n_parts = spool_at(x, 0)->n_parts;
	char err[192], what[48];

	for (uint32_t i = 0; i < n_parts; i++) {
		struct export_part p = {.rows = 0};
		bool copied;
		uint32_t rows = gather_part(x, k, i, &p, &copied);
		int rc = 0;

		if (rows > 0) {
			if (p.body.oom) {
				snprintf(err, sizeof(err), "out of memory");
				rc = -1;
			} else
				rc = x->sink.be->send(&x->sink, &p, err, sizeof(err));
		}
		if (copied)
			xbuf_free(&p.body);
		if (rc != 0) {
			/* The tables went away (dropped, a server back empty):
			 * made again (or checked) before the next attempt. */
			if (rc == -ENOENT)
				x->prepared = false;
			snprintf(what, sizeof(what), "writing %s", export_table_name(p.table));
			failed(x, what, err);
			return -1;
		}
		for (uint32_t j = 0; j < k; j++)
			spool_at(x, j)->part[i].sent = true;
		pthread_mutex_lock(&x->lock);
		x->st.rows += rows;
		pthread_mutex_unlock(&x->lock);
		beat(x);
	}
	pthread_mutex_lock(&x->lock);
	x->st.batches += k;
	x->st.last_success_unix_s = unix_now();
	x->st.cpu_s = thread_cpu_s();
	pthread_mutex_unlock(&x->lock);
	while (k-- > 0)
		spool_pop(x);
	return 0;
}

/* Send while the server takes batches; new snapshots are encoded between. */
static void
send_round(struct exporter *x)
{
	char err[160];

	if (!x->prepared) {
		if (x->sink.be->prepare(&x->sink, err, sizeof(err)) != 0) {
			failed(x, "preparing the tables", err);
			return;
		}
		x->prepared = true;
	}
	while (x->spool_n > 0) {
		if (send_oldest(x) != 0)
			return;
		x->backoff_ms = 0;
		drain_handoff(x);
	}
}

static void
sleep_ms(uint64_t ms)
{
	struct timespec t = {.tv_sec = (time_t)(ms / 1000),
			     .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&t, NULL);
}

/*
 * Encode the store's current snapshot when it is newer than the last one
 * encoded: the last merge's, skipped at its handoff (queue full), would
 * otherwise never be exported, as no later batch covers it.
 */
static void
encode_latest(struct exporter *x)
{
	struct dpmon_snapshot *s = dpmon_snap_acquire(x->store);

	if (s == NULL)
		return;
	if (x->prev != NULL && s->seq <= x->prev->seq) {
		dpmon_snap_release(x->store, s);
		return;
	}
	encode(x, s);
}

/* What the spool holds at the end of the stop is lost: counted. */
static void
flush_at_stop(struct exporter *x)
{
	uint64_t now = mono_ns();
	uint64_t deadline = __atomic_load_n(&x->stop_deadline_ns, __ATOMIC_RELAXED);

	drain_handoff(x);
	encode_latest(x);
	x->backoff_ms = 0;
	x->next_try_ns = 0;
	while (x->spool_n > 0 && (now = mono_ns()) < deadline) {
		uint64_t left_ms = (deadline - now) / 1000000ull;

		beat(x);
		x->sink.timeout_ms = left_ms < x->sink.sc->timeout_ms ? (uint32_t)left_ms + 1
								      : x->sink.sc->timeout_ms;
		if (now >= x->next_try_ns)
			send_round(x);
		else
			sleep_ms(IDLE_ROUND_MS);
	}
	if (x->spool_n > 0 && __atomic_load_n(&x->park, __ATOMIC_RELAXED)) {
		dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_WARNING,
			  "export to %s: removed with %u interval(s) unsent after %u ms; kept for "
			  "when it is configured again",
			  x->sink.be->name, x->spool_n, x->sink.conf.flush_timeout_ms);
		return;
	}
	if (x->spool_n > 0) {
		dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_WARNING,
			  "export to %s: stopping with %u interval(s) unsent after %u ms; dropped",
			  x->sink.be->name, x->spool_n, x->sink.conf.flush_timeout_ms);
		pthread_mutex_lock(&x->lock);
		x->st.dropped_intervals += x->spool_n;
		pthread_mutex_unlock(&x->lock);
	}
	while (x->spool_n > 0)
		spool_pop(x);
}

/*
 * The lowest CPU priority (nice 19) for the calling thread: when every
 * CPU has an lcore, the exporter shares the main lcore's, and its
 * encoding must never delay a merge. It takes what the main lcore leaves
 * between merges; when that is not enough, snapshots wait in the handoff
 * and are counted when skipped.
 */
static void
lower_priority(void)
{
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) != 0)
		dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_WARNING,
			  "export: cannot lower the exporter thread's priority: %s",
			  strerror(errno));
}

static void *
exporter_main(void *arg)
{
	struct exporter *x = arg;

	lower_priority();
	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now;

		beat(x);
		take_conf(x);
		drain_handoff(x);
		now = mono_ns();
		if (x->spool_n > 0 && now >= x->next_try_ns)
			send_round(x);
		else
			sleep_ms(IDLE_ROUND_MS);
		pthread_mutex_lock(&x->lock);
		x->st.cpu_s = thread_cpu_s();
		pthread_mutex_unlock(&x->lock);
	}
	take_conf(x);
	flush_at_stop(x);
	beat(x);
	return NULL;
}

/* ------------------------------------------------------------------------
 * Life cycle (main lcore).
 * --------------------------------------------------------------------- */

/*
 * Stop @p x's thread after it sent its spool for at most flush_ms; with
 * @p park, what it could not send stays spooled, else it is dropped and
 * counted. The snapshots waiting in the handoff are released: the next
 * deltas, against x->prev, cover them.
 */
static void
exporter_stop(struct exporter *x, bool park)
{
	void *p;

	if (x->started) {
		__atomic_store_n(&x->park, park, __ATOMIC_RELAXED);
		/* A request running now ends by the deadline too (export_http.c). */
		__atomic_store_n(&x->stop_deadline_ns,
				 mono_ns() + (uint64_t)x->flush_ms * 1000000ull + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
		pthread_join(x->thread, NULL);
		x->started = false;
	}
	while (x->handoff != NULL && rte_ring_sc_dequeue(x->handoff, &p) == 0)
		dpmon_snap_release(x->store, p);
	if (x->sink.hb != NULL)
		dpmon_heartbeat_unregister(x->sink.hb);
	x->sink.hb = NULL;
}

static void
exporter_free(struct exporter *x)
{
	if (x == NULL)
		return;
	exporter_stop(x, false);
	if (x->prev != NULL)
		dpmon_snap_release(x->store, x->prev);
	while (x->spool_n > 0)
		spool_pop(x);
	for (uint32_t i = 0; i < EXPORT_TABLES; i++)
		xbuf_free(&x->spare[i]);
	free(x->spool);
	free(x->handoff);
	if (x->sink.curl != NULL)
		curl_easy_cleanup(x->sink.curl);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

/*
 * Start @p x's thread (a new exporter, or a parked one) with its
 * heartbeat. @return 0, or a negative errno (x unchanged otherwise).
 */
static int
exporter_run(struct exporter *x)
{
	char name[RTE_RING_NAMESIZE];
	int rc;

	/* The thread is not running: these are ordered by its creation. */
	__atomic_store_n(&x->stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&x->stop_deadline_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&x->park, false, __ATOMIC_RELAXED);
	snprintf(name, sizeof(name), "exporter %s", x->sink.be->name);
	x->sink.hb = dpmon_heartbeat_register(name, HEARTBEAT_MAX_AGE_MS);
	if (x->sink.hb == NULL)
		return -ENOMEM;
	beat(x);
	/* A DPDK control thread: on the CPUs the EAL gave no lcore, or on
	 * the main lcore's when every CPU has one. */
	snprintf(name, sizeof(name), "dpmon-%.9s", x->sink.be->name);
	rc = rte_ctrl_thread_create(&x->thread, name, NULL, exporter_main, x);
	if (rc != 0) {
		dpmon_heartbeat_unregister(x->sink.hb);
		x->sink.hb = NULL;
		return -rc;
	}
	x->started = true;
	return 0;
}

static struct exporter *
exporter_start(int kind, const struct dpmon_export_conf *cfg, struct dpmon_snap_store *store)
{
	struct exporter *x = calloc(1, sizeof(*x));
	ssize_t sz = rte_ring_get_memsize(HANDOFF_SLOTS);
	char name[RTE_RING_NAMESIZE];
	int rc;

	if (x == NULL || sz < 0)
		goto nomem;
	pthread_mutex_init(&x->lock, NULL);
	x->kind = kind;
	x->store = store;
	x->sink.be = kind == DPMON_EXPORT_CLICKHOUSE ? &export_clickhouse : &export_influx;
	x->sink.progress_ns = &x->progress_ns;
	x->sink.abort_after_ns = &x->stop_deadline_ns;
	snprintf(x->st.name, sizeof(x->st.name), "%s", x->sink.be->name);
	x->flush_ms = cfg->flush_timeout_ms;
	x->handoff = malloc((size_t)sz);
	x->sink.curl = curl_easy_init();
	if (x->handoff == NULL || x->sink.curl == NULL || apply_conf(x, cfg) != 0)
		goto nomem;
	snprintf(name, sizeof(name), "export_%s", x->sink.be->name);
	if (rte_ring_init(x->handoff, name, HANDOFF_SLOTS, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0)
		goto nomem;
	rc = exporter_run(x);
	if (rc != 0) {
		exporter_free(x);
		errno = -rc;
		return NULL;
	}
	return x;
nomem:
	exporter_free(x);
	errno = ENOMEM;
	return NULL;
}

/*
 * Parked exporter @p x (a backend a reload removed) with the settings
 * @p cfg, its thread started again: its next batch's deltas are against
 * the last snapshot it encoded, after what it had left in its spool.
 * @return @p x, or NULL with errno set (@p x freed).
 */
static struct exporter *
exporter_resume(struct exporter *x, const struct dpmon_export_conf *cfg)
{
	int rc;

	x->flush_ms = cfg->flush_timeout_ms;
	rc = apply_conf(x, cfg) != 0 ? -ENOMEM : exporter_run(x);
	if (rc != 0) {
		exporter_free(x);
		errno = -rc;
		return NULL;
	}
	return x;
}

struct dpmon_export *
dpmon_export_create(const struct dpmon_export_conf *cfg, struct dpmon_snap_store *store)
{
	struct dpmon_export *ex = calloc(1, sizeof(*ex));

	if (ex == NULL)
		return NULL;
	ex->store = store;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (int k = 0; k < DPMON_EXPORT_MAX; k++) {
		if (!cfg->sink[k].enabled)
			continue;
		ex->ex[k] = exporter_start(k, cfg, store);
		if (ex->ex[k] == NULL) {
			int e = errno;

			dpmon_export_free(ex);
			errno = e;
			return NULL;
		}
	}
	return ex;
}

/* Whether @p s would hold more host records in @p x's handoff than it may
 * (HANDOFF_RECORD_BYTES) with those waiting. Main lcore. */
static bool
handoff_full(struct exporter *x, const struct dpmon_snapshot *s)
{
	uint64_t waiting = rte_ring_count(x->handoff);

	return waiting >= 2 &&
	       (waiting + 1) * s->n_hosts * sizeof(struct dpmon_snap_host) > HANDOFF_RECORD_BYTES;
}

void
dpmon_export_offer(struct dpmon_export *ex, struct dpmon_snapshot *s)
{
	if (ex == NULL || s == NULL)
		return;
	for (int k = 0; k < DPMON_EXPORT_MAX; k++) {
		struct exporter *x = ex->ex[k];
		struct dpmon_snapshot *ref;

		if (x == NULL)
			continue;
		ref = dpmon_snap_acquire(ex->store);
		if (ref == NULL)
			continue;
		if (ref != s || handoff_full(x, s) || rte_ring_sp_enqueue(x->handoff, ref) != 0) {
			dpmon_snap_release(ex->store, ref);
			pthread_mutex_lock(&x->lock);
			x->st.handoff_skipped++;
			pthread_mutex_unlock(&x->lock);
		}
	}
}

uint32_t
dpmon_export_stats(struct dpmon_export *ex, struct dpmon_snap_exporter *out, uint32_t max)
{
	uint32_t n = 0;

	if (ex == NULL)
		return 0;
	for (int k = 0; k < DPMON_EXPORT_MAX; k++) {
		struct exporter *x = ex->ex[k];

		if (x == NULL)
			continue;
		if (n < max) {
			pthread_mutex_lock(&x->lock);
			out[n] = x->st;
			pthread_mutex_unlock(&x->lock);
			out[n].last_progress_ns =
				__atomic_load_n(&x->progress_ns, __ATOMIC_RELAXED);
			out[n].progress_age_s =
				(double)(int64_t)(mono_ns() - out[n].last_progress_ns) * 1e-9;
		}
		n++;
	}
	return n;
}

int
dpmon_export_reconfigure(struct dpmon_export *ex, const struct dpmon_export_conf *cfg)
{
	int rc = 0;

	if (ex == NULL)
		return 0;
	for (int k = 0; k < DPMON_EXPORT_MAX; k++) {
		struct exporter *x = ex->ex[k];

		if (x != NULL && !cfg->sink[k].enabled) {
			/* Sends its spool within flush_timeout_ms; kept with
			 * its last snapshot and what it could not send. */
			exporter_stop(x, true);
			ex->parked[k] = x;
			ex->ex[k] = NULL;
		} else if (x != NULL) {
			pthread_mutex_lock(&x->lock);
			x->next_conf = *cfg;
			x->conf_changed = true;
			pthread_mutex_unlock(&x->lock);
			x->flush_ms = cfg->flush_timeout_ms;
		} else if (cfg->sink[k].enabled && ex->parked[k] != NULL) {
			ex->ex[k] = exporter_resume(ex->parked[k], cfg);
			ex->parked[k] = NULL;
			if (ex->ex[k] == NULL) {
				rc = -errno;
				dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_ERR,
					  "export to %s: cannot start again: %s",
					  dpmon_export_kind_name(k), strerror(errno));
			}
		} else if (cfg->sink[k].enabled) {
			ex->ex[k] = exporter_start(k, cfg, ex->store);
			if (ex->ex[k] == NULL) {
				rc = -errno;
				dpmon_log(DPMON_LOG_EXPORT, DPMON_LOG_ERR,
					  "export to %s: cannot start: %s",
					  dpmon_export_kind_name(k), strerror(errno));
			}
		}
	}
	return rc;
}

void
dpmon_export_free(struct dpmon_export *ex)
{
	if (ex == NULL)
		return;
	for (int k = 0; k < DPMON_EXPORT_MAX; k++) {
		exporter_free(ex->ex[k]);
		exporter_free(ex->parked[k]);
	}
	free(ex);
}

int
dpmon_export_print_schema(const struct dpmon_export_conf *cfg, const char *cluster, FILE *out)
{
	struct xbuf b = {0};
	int rc = export_clickhouse_schema(&cfg->sink[DPMON_EXPORT_CLICKHOUSE], cluster, &b);

	if (rc == 0)
		fwrite(b.p, 1, b.len, out);
	xbuf_free(&b);
	return rc;
}
