/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_exabgp.c — ExaBGP's command pipe as a set of keyed routes
 * (actions_exabgp.h), written by the actions thread.
 *
 * The set is the routes that should be announced, sorted by key (a binary
 * search finds one); each remembers whether its announce line reached the
 * pipe, and a removed route leaves a pending withdraw, written before any
 * announce. The FIFO is opened O_WRONLY|O_NONBLOCK (ENXIO or ENOENT: no
 * reader yet — retried every round; anything but a FIFO, such as a link
 * to a regular file put in its place, is closed unwritten) and kept open,
 * so a reader such as `cat` or socat never sees an end of file between
 * events. Each line is
 * one write() shorter than PIPE_BUF, hence atomic: a full pipe (EAGAIN)
 * writes nothing and the rest waits for the next round. A reader that goes
 * away (EPIPE, or POLLERR on the idle descriptor) marks every route
 * unannounced: a restarted ExaBGP gets them all again.
 *
 * Locking: e->lock guards the routes, the withdraws and the path; the
 * descriptor is the writing thread's (read, relaxed, by
 * actions_exabgp_connected). The thread leaves the lock for every write.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_CLOEXEC */
#endif

#include "actions_exabgp.h"
#include "actions_private.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One route that should be announced. */
struct route {
	char key[ACTIONS_EXABGP_KEY_LEN];
	char *announce; /* with its newline; owned */
	char *withdraw; /* likewise */
	unsigned flags;
	bool announced;   /* its announce line reached the current reader */
	uint64_t version; /* changes with @c announce */
};

/* One withdraw waiting for the pipe; @c line NULL: cancelled. */
struct withdraw {
	char key[ACTIONS_EXABGP_KEY_LEN];
	char *line;   /* with its newline; owned */
	uint64_t seq; /* names it while the lock is left */
};

struct actions_exabgp {
	pthread_mutex_t lock;
	uint32_t max;
	struct route **routes; /* sorted by key */
	uint32_t n, cap;
	uint32_t n_due;      /* routes not announced */
	uint32_t cursor;     /* where the last announce due was found */
	struct withdraw *wd; /* due from wd_head to n_wd, oldest first */
	uint32_t wd_head, n_wd, cap_wd, wd_live;
	uint64_t version;
	char path[DPMON_PATH_LEN];
	bool reopen; /* the path changed: close the old pipe */
	/* the writing thread's (fifo also read, relaxed, by actions_exabgp_connected) */
	int fifo;
	bool missing_logged;
};

/* ------------------------------------------------------------------------
 * Routes and withdraws (lock held).
 * --------------------------------------------------------------------- */

/* The index of @p key in e->routes, or -(insertion point) - 1. */
static int64_t
route_find(const struct actions_exabgp *e, const char *key)
{
	uint32_t lo = 0, hi = e->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(e->routes[mid]->key, key);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(int64_t)lo - 1;
}

static void
route_free(struct route *r)
{
	free(r->announce);
	free(r->withdraw);
	free(r);
}

/* A copy of @p line with its newline, or NULL (ENOMEM). */
static char *
line_dup(const char *line)
{
	size_t n = strlen(line);
	char *s = malloc(n + 2);

	if (s != NULL) {
		memcpy(s, line, n);
		s[n] = '\n';
		s[n + 1] = '\0';
	}
	return s;
}

static bool
line_ok(const char *line)
{
	return strlen(line) + 1 < ACTIONS_EXABGP_LINE_MAX && strchr(line, '\n') == NULL;
}

/* Drop the pending withdraw of @p key, if any. */
static void
wd_cancel(struct actions_exabgp *e, const char *key)
{
	for (uint32_t i = e->wd_head; i < e->n_wd; i++)
		if (e->wd[i].line != NULL && strcmp(e->wd[i].key, key) == 0) {
			free(e->wd[i].line);
			e->wd[i].line = NULL;
			e->wd_live--;
		}
}

/* Queue @p line (taken) as the withdraw of @p key. @return 0 or -ENOSPC
 * (@p line freed, logged). */
static int
wd_push(struct actions_exabgp *e, const char *key, char *line)
{
	struct withdraw *bigger;

	if (e->n_wd == e->cap_wd) { /* squeeze out the written and the cancelled */
		uint32_t n = 0;

		for (uint32_t i = e->wd_head; i < e->n_wd; i++)
			if (e->wd[i].line != NULL)
				e->wd[n++] = e->wd[i];
		e->wd_head = 0;
		e->n_wd = n;
	}
	if (e->wd_live < e->max && e->n_wd == e->cap_wd) {
		uint32_t cap = e->cap_wd ? e->cap_wd * 2 : 16;

		bigger = realloc(e->wd, cap * sizeof(*bigger));
		if (bigger != NULL) {
			e->wd = bigger;
			e->cap_wd = cap;
		}
	}
	if (e->wd_live == e->max || e->n_wd == e->cap_wd) {
		LOG("withdraw of %s lost: %u withdraws already wait for ExaBGP", key, e->wd_live);
		free(line);
		return -ENOSPC;
	}
	snprintf(e->wd[e->n_wd].key, sizeof(e->wd[0].key), "%s", key);
	e->wd[e->n_wd].seq = ++e->version;
	e->wd[e->n_wd++].line = line;
	e->wd_live++;
	return 0;
}

/* Remove route @p i, its withdraw due when a pipe is set. @return 0 or -ENOSPC. */
static int
route_remove(struct actions_exabgp *e, uint32_t i)
{
	struct route *r = e->routes[i];
	int rc = 0;

	if (e->path[0] != '\0') {
		rc = wd_push(e, r->key, r->withdraw);
		r->withdraw = NULL;
	}
	if (!r->announced)
		e->n_due--;
	memmove(&e->routes[i], &e->routes[i + 1], (e->n - i - 1) * sizeof(*e->routes));
	e->n--;
	route_free(r);
	return rc;
}

/* Every route due again (a new reader). */
static void
all_due(struct actions_exabgp *e)
{
	for (uint32_t i = 0; i < e->n; i++)
		e->routes[i]->announced = false;
	e->n_due = e->n;
	e->cursor = 0; /* in key order again */
}

/* ------------------------------------------------------------------------
 * The API (any thread).
 * --------------------------------------------------------------------- */

struct actions_exabgp *
actions_exabgp_create(uint32_t max_routes)
{
	struct actions_exabgp *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	e->max = max_routes;
	__atomic_store_n(&e->fifo, -1, __ATOMIC_RELAXED);
	return e;
}

void
actions_exabgp_free(struct actions_exabgp *e)
{
	if (e == NULL)
		return;
	if (e->fifo >= 0)
		close(e->fifo);
	for (uint32_t i = 0; i < e->n; i++)
		route_free(e->routes[i]);
	for (uint32_t i = e->wd_head; i < e->n_wd; i++)
		free(e->wd[i].line);
	free(e->routes);
	free(e->wd);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

void
actions_exabgp_set_pipe(struct actions_exabgp *e, const char *path)
{
	pthread_mutex_lock(&e->lock);
	if (strcmp(e->path, path) != 0) {
		snprintf(e->path, sizeof(e->path), "%s", path);
		e->reopen = true;
		all_due(e);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Insert a new route @p r at @p at. @return 0, -ENOSPC or -ENOMEM. */
static int
route_insert(struct actions_exabgp *e, uint32_t at, struct route *r)
{
	struct route **bigger;

	if (e->n == e->max)
		return -ENOSPC;
	if (e->n == e->cap) {
		uint32_t cap = e->cap ? e->cap * 2 : 16;

		bigger = realloc(e->routes, cap * sizeof(*bigger));
		if (bigger == NULL)
			return -ENOMEM;
		e->routes = bigger;
		e->cap = cap;
	}
	memmove(&e->routes[at + 1], &e->routes[at], (e->n - at) * sizeof(*e->routes));
	e->routes[at] = r;
	e->n++;
	e->n_due++;
	return 0;
}

int
actions_exabgp_announce(struct actions_exabgp *e, const char *key, const char *announce,
			const char *withdraw, unsigned flags)
{
	char *ann, *wd;
	struct route *r;
	int64_t i;
	int rc = 0;

	if (strlen(key) >= ACTIONS_EXABGP_KEY_LEN || !line_ok(announce) || !line_ok(withdraw))
		return -EINVAL;
	ann = line_dup(announce);
	wd = line_dup(withdraw);
	if (ann == NULL || wd == NULL) {
		free(ann);
		free(wd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&e->lock);
	i = route_find(e, key);
	if (i >= 0) {
		r = e->routes[i];
		free(r->withdraw);
		r->withdraw = wd;
		wd = NULL;
		r->flags = flags;
		if (strcmp(r->announce, ann) == 0) {
			rc = r->announced ? 1 : 0;
		} else {
			free(r->announce);
			r->announce = ann;
			ann = NULL;
			r->version = ++e->version;
			if (r->announced)
				e->n_due++;
			r->announced = false;
		}
	} else if ((r = calloc(1, sizeof(*r))) == NULL) {
		rc = -ENOMEM;
	} else {
		*r = (struct route){.announce = ann, .withdraw = wd, .flags = flags};
		snprintf(r->key, sizeof(r->key), "%s", key);
		r->version = ++e->version;
		rc = route_insert(e, (uint32_t)(-i - 1), r);
		if (rc != 0)
			free(r);
		else
			ann = wd = NULL; /* the route's now */
	}
	if (rc >= 0)
		wd_cancel(e, key);
	pthread_mutex_unlock(&e->lock);
	free(ann); /* what no route took */
	free(wd);
	return rc;
}

int
actions_exabgp_withdraw(struct actions_exabgp *e, const char *key)
{
	int64_t i;
	int rc = 1;

	pthread_mutex_lock(&e->lock);
	i = route_find(e, key);
	if (i >= 0)
		rc = route_remove(e, (uint32_t)i);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

int
actions_exabgp_reannounce(struct actions_exabgp *e, const char *key)
{
	struct route *r;
	int64_t i;
	int rc = -ENOENT;

	pthread_mutex_lock(&e->lock);
	i = route_find(e, key);
	if (i >= 0) {
		r = e->routes[i];
		if (r->announced) {
			r->announced = false;
			r->version = ++e->version;
			e->n_due++;
		}
		rc = 0;
	}
	pthread_mutex_unlock(&e->lock);
	return rc;
}

bool
actions_exabgp_announced(struct actions_exabgp *e, const char *key)
{
	bool announced;
	int64_t i;

	pthread_mutex_lock(&e->lock);
	i = route_find(e, key);
	announced = i >= 0 && e->routes[i]->announced;
	pthread_mutex_unlock(&e->lock);
	return announced;
}

uint32_t
actions_exabgp_routes(struct actions_exabgp *e)
{
	uint32_t n;

	pthread_mutex_lock(&e->lock);
	n = e->n;
	pthread_mutex_unlock(&e->lock);
	return n;
}

bool
actions_exabgp_connected(struct actions_exabgp *e)
{
	return __atomic_load_n(&e->fifo, __ATOMIC_RELAXED) >= 0;
}

/* ------------------------------------------------------------------------
 * The pipe (the writing thread).
 * --------------------------------------------------------------------- */

/* The reader went away: close, and announce everything to the next one. */
static void
fifo_lost(struct actions_exabgp *e, const char *path)
{
	sigset_t pipe_set;
	struct timespec zero = {0, 0};

	close(e->fifo);
	__atomic_store_n(&e->fifo, -1, __ATOMIC_RELAXED);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE) /* the EPIPE's signal */
		;
	pthread_mutex_lock(&e->lock);
	all_due(e);
	pthread_mutex_unlock(&e->lock);
	LOG("ExaBGP stopped reading %s: routes will be announced again when it reads", path);
}

/* Open the pipe if needed. @return true when open. */
static bool
fifo_open(struct actions_exabgp *e, const char *path)
{
	struct pollfd p;
	struct stat st;
	int fd;

	if (e->fifo >= 0) {
		p = (struct pollfd){.fd = e->fifo, .events = POLLOUT};
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))
			fifo_lost(e, path);
	}
	if (e->fifo >= 0)
		return true;
	fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))) {
		/* Something put in the FIFO's place (a link to a regular file)
		 * is never written: opened without O_TRUNC, so left as it was. */
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	__atomic_store_n(&e->fifo, fd, __ATOMIC_RELAXED);
	if (e->fifo >= 0) {
		e->missing_logged = false;
		return true;
	}
	if (!e->missing_logged)
		LOG("ExaBGP's pipe %s: %s (retried every %d ms)", path,
		    errno == ENXIO    ? "no reader"
		    : errno == EINVAL ? "not a FIFO, not written"
				      : strerror(errno),
		    READER_CHECK_MS);
	e->missing_logged = true;
	return false;
}

/* Write one line; @return 1 written, 0 pipe full, -1 reader lost. */
static int
fifo_write(struct actions_exabgp *e, const char *path, const char *line, size_t len)
{
	ssize_t n;

	do
		n = write(e->fifo, line, len);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 1;
	if (n < 0 && errno == EAGAIN)
		return 0;
	fifo_lost(e, path);
	return -1;
}

/* ------------------------------------------------------------------------
 * Writing what is due (the writing thread).
 * --------------------------------------------------------------------- */

/* The line to write next and what marks it written. */
struct next_line {
	char line[ACTIONS_EXABGP_LINE_MAX];
	bool announce;
	uint64_t wd_seq;                  /* a withdraw's */
	char key[ACTIONS_EXABGP_KEY_LEN]; /* an announce's route */
	uint64_t version;                 /* and its version */
};

/*
 * The path into @p path, and the pipe closed when the path changed (the
 * old one is left; fifo_open opens the new one). Takes the lock.
 */
static void
take_path(struct actions_exabgp *e, char *path, size_t len)
{
	bool reopen;

	pthread_mutex_lock(&e->lock);
	snprintf(path, len, "%s", e->path);
	reopen = e->reopen;
	e->reopen = false;
	pthread_mutex_unlock(&e->lock);
	if (reopen && e->fifo >= 0) {
		close(e->fifo);
		__atomic_store_n(&e->fifo, -1, __ATOMIC_RELAXED);
	}
	if (reopen)
		e->missing_logged = false;
}

/* The oldest withdraw due, else an announce due, into @p nl. Takes the
 * lock. @return false when everything is written. */
static bool
next_line(struct actions_exabgp *e, struct next_line *nl)
{
	bool found = false;

	pthread_mutex_lock(&e->lock);
	while (e->wd_head < e->n_wd && e->wd[e->wd_head].line == NULL)
		e->wd_head++;
	if (e->wd_head < e->n_wd) {
		nl->announce = false;
		nl->wd_seq = e->wd[e->wd_head].seq;
		snprintf(nl->line, sizeof(nl->line), "%s", e->wd[e->wd_head].line);
		found = true;
	}
	for (uint32_t k = 0; !found && e->n_due > 0 && k < e->n; k++) {
		const struct route *r = e->routes[(e->cursor + k) % e->n];

		if (r->announced)
			continue;
		e->cursor = (e->cursor + k) % e->n;
		nl->announce = true;
		nl->version = r->version;
		snprintf(nl->key, sizeof(nl->key), "%s", r->key);
		snprintf(nl->line, sizeof(nl->line), "%s", r->announce);
		found = true;
	}
	pthread_mutex_unlock(&e->lock);
	return found;
}

/* @p nl reached the pipe: its withdraw is done, or its route announced
 * (if not changed meanwhile). Takes the lock. */
static void
line_written(struct actions_exabgp *e, const struct next_line *nl)
{
	int64_t i;

	pthread_mutex_lock(&e->lock);
	for (uint32_t k = e->wd_head; !nl->announce && k < e->n_wd; k++)
		if (e->wd[k].line != NULL && e->wd[k].seq == nl->wd_seq) {
			free(e->wd[k].line);
			e->wd[k].line = NULL;
			e->wd_live--;
			break;
		}
	if (nl->announce && (i = route_find(e, nl->key)) >= 0 &&
	    e->routes[i]->version == nl->version && !e->routes[i]->announced) {
		e->routes[i]->announced = true;
		e->n_due--;
	}
	pthread_mutex_unlock(&e->lock);
}

void
actions_exabgp_sync(struct actions_exabgp *e)
{
	char path[DPMON_PATH_LEN];
	struct next_line nl;

	take_path(e, path, sizeof(path));
	if (path[0] == '\0' || !fifo_open(e, path))
		return;
	while (next_line(e, &nl)) {
		if (fifo_write(e, path, nl.line, strlen(nl.line)) != 1)
			return; /* full or lost: the rest at the next round */
		line_written(e, &nl);
	}
}

/* Withdraw lines still waiting for the pipe. Takes the lock. */
static uint32_t
withdraws_due(struct actions_exabgp *e)
{
	uint32_t n;

	pthread_mutex_lock(&e->lock);
	n = e->wd_live;
	pthread_mutex_unlock(&e->lock);
	return n;
}

/* Milliseconds of CLOCK_MONOTONIC. */
static uint64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

void
actions_exabgp_stop(struct actions_exabgp *e, uint32_t drain_ms)
{
	uint64_t end = now_ms() + drain_ms, now;
	uint32_t left;

	pthread_mutex_lock(&e->lock);
	for (uint32_t i = e->n; i-- > 0;)
		if (!(e->routes[i]->flags & ACTIONS_ROUTE_KEEP_ON_STOP))
			(void)route_remove(e, i);
	pthread_mutex_unlock(&e->lock);
	/* A full pipe holds the rest: wait for the reader to make room, within
	 * the bound (POLLOUT: room for PIPE_BUF bytes, a whole line). */
	for (actions_exabgp_sync(e);
	     (left = withdraws_due(e)) > 0 && e->fifo >= 0 && (now = now_ms()) < end;
	     actions_exabgp_sync(e)) {
		struct pollfd p = {.fd = e->fifo, .events = POLLOUT};

		(void)poll(&p, 1, (int)(end - now));
	}
	if (left > 0 && e->fifo >= 0)
		LOG("stop: %u withdraw line(s) not written: ExaBGP's pipe stayed full for "
		    "%u ms",
		    left, drain_ms);
}
