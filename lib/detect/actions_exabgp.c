/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_exabgp.c — the announce and withdraw lines of the blackholes,
 * written by the actions thread to ExaBGP's command pipe
 * (actions.exabgp_pipe).
 *
 * The list is the set of routes that should be announced; each entry
 * remembers whether its announce line reached the pipe, and removed
 * entries leave a pending withdraw. The FIFO is opened O_WRONLY|O_NONBLOCK
 * (ENXIO or ENOENT: no reader yet — retried every second) and kept open,
 * so a reader such as `cat` or socat never sees an end of file between
 * events. Each line is one write() shorter than PIPE_BUF, hence atomic: a
 * full pipe (EAGAIN) writes nothing and the rest waits for the next round.
 * A reader that goes away (EPIPE, or POLLERR on the idle descriptor) marks
 * every entry unannounced: a restarted ExaBGP gets them all again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_CLOEXEC */
#endif

#include "actions_private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Longest ExaBGP line: "announce route ADDR/128 next-hop ADDR community [..]". */
#define LINE_LEN 256

/* ------------------------------------------------------------------------
 * Lines.
 * --------------------------------------------------------------------- */

/* "announce|withdraw route ADDR/LEN next-hop NH[ community [C]]\n" of
 * route @p r (a host's prefix: /32, /128 or its subnet's host_prefix_len);
 * NH is exabgp_next_hop for IPv4 routes, exabgp_next_hop6 for IPv6 ones. */
static int
exabgp_line(const struct dpmon_actions_conf *c, bool announce, const struct route *r, char *buf,
	    size_t len)
{
	char t[DPMON_ADDR_STRLEN];
	bool v4 = dpmon_addr_is_v4(&r->addr);
	int n;

	n = snprintf(buf, len, "%s route %s/%u next-hop %s", announce ? "announce" : "withdraw",
		     dpmon_addr_format(&r->addr, t, sizeof(t)),
		     r->len ? r->len : dpmon_family_bits(v4 ? 4 : 6),
		     v4 ? c->exabgp_next_hop : c->exabgp_next_hop6);
	if (announce && c->exabgp_community[0] != '\0')
		n += snprintf(buf + n, len - (size_t)n, " community [%s]", c->exabgp_community);
	n += snprintf(buf + n, len - (size_t)n, "\n");
	return n;
}

/* ------------------------------------------------------------------------
 * The pipe (thread only).
 * --------------------------------------------------------------------- */

/* The reader went away: close, and announce everything to the next one. */
static void
fifo_lost(struct dpmon_actions *a, const char *path)
{
	sigset_t pipe_set;
	struct timespec zero = {0, 0};

	close(a->fifo);
	__atomic_store_n(&a->fifo, -1, __ATOMIC_RELAXED);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE) /* the EPIPE's signal */
		;
	pthread_mutex_lock(&a->lock);
	for (uint32_t i = 0; i < a->n_bh; i++)
		a->bh[i].announced = false;
	pthread_mutex_unlock(&a->lock);
	LOG("ExaBGP stopped reading %s: blackholes will be announced again when it reads", path);
}

/* Open the pipe if needed. @return true when open. */
static bool
fifo_open(struct dpmon_actions *a, const char *path)
{
	struct pollfd p;

	if (a->fifo >= 0) {
		p = (struct pollfd){.fd = a->fifo, .events = POLLOUT};
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))
			fifo_lost(a, path);
	}
	if (a->fifo >= 0)
		return true;
	__atomic_store_n(&a->fifo, open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC), __ATOMIC_RELAXED);
	if (a->fifo >= 0) {
		a->fifo_missing_logged = false;
		return true;
	}
	if (!a->fifo_missing_logged)
		LOG("ExaBGP's pipe %s: %s (retried every %d ms)", path,
		    errno == ENXIO ? "no reader" : strerror(errno), RETRY_MS);
	a->fifo_missing_logged = true;
	return false;
}

/* Write one line; @return 1 written, 0 pipe full, -1 reader lost. */
static int
fifo_write(struct dpmon_actions *a, const char *path, const char *line, size_t len)
{
	ssize_t n;

	do
		n = write(a->fifo, line, len);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 1;
	if (n < 0 && errno == EAGAIN)
		return 0;
	fifo_lost(a, path);
	return -1;
}

/* ------------------------------------------------------------------------
 * Writing what is pending (thread only).
 * --------------------------------------------------------------------- */

/*
 * The configuration into @p c, and the pipe closed when its path changed
 * (the old one is left; fifo_open opens the new one). Takes the lock.
 */
static void
take_conf(struct dpmon_actions *a, struct dpmon_actions_conf *c)
{
	bool reopen;

	pthread_mutex_lock(&a->lock);
	*c = a->conf;
	reopen = a->fifo_reopen;
	a->fifo_reopen = false;
	pthread_mutex_unlock(&a->lock);
	if (reopen && a->fifo >= 0) { /* another pipe now: the old one is left */
		close(a->fifo);
		__atomic_store_n(&a->fifo, -1, __ATOMIC_RELAXED);
		a->fifo_missing_logged = false;
	}
}

/*
 * The next line to write into @p announce and @p addr: the oldest pending
 * withdraw, else the first entry not announced. Takes the lock.
 * @return false when everything is written.
 */
static bool
next_line(struct dpmon_actions *a, bool *announce, struct route *addr)
{
	int i = -1;

	pthread_mutex_lock(&a->lock);
	*announce = a->n_wd == 0;
	if (!*announce)
		*addr = a->withdraws[0];
	for (uint32_t k = 0; *announce && k < a->n_bh && i < 0; k++)
		if (!a->bh[k].announced)
			i = (int)k;
	if (*announce && i >= 0)
		*addr = (struct route){.addr = a->bh[i].addr, .len = a->bh[i].len};
	pthread_mutex_unlock(&a->lock);
	return !*announce || i >= 0;
}

/* The line of @p addr reached the pipe: its withdraw is done, or its entry
 * announced (if still listed). Takes the lock. */
static void
line_written(struct dpmon_actions *a, bool announce, const struct route *r)
{
	int i;

	pthread_mutex_lock(&a->lock);
	if (!announce)
		actions_wd_cancel(a, &r->addr);
	else if ((i = actions_bh_find(a, &r->addr)) >= 0)
		a->bh[i].announced = true;
	pthread_mutex_unlock(&a->lock);
}

void
actions_exabgp_sync(struct dpmon_actions *a)
{
	struct dpmon_actions_conf c;
	struct route addr;
	char line[LINE_LEN];
	bool announce;
	int n;

	take_conf(a, &c);
	if (c.exabgp_pipe[0] == '\0' || !fifo_open(a, c.exabgp_pipe))
		return;
	while (next_line(a, &announce, &addr)) {
		n = exabgp_line(&c, announce, &addr, line, sizeof(line));
		if (fifo_write(a, c.exabgp_pipe, line, (size_t)n) != 1)
			return; /* full or lost: the rest at the next round */
		line_written(a, announce, &addr);
	}
}
