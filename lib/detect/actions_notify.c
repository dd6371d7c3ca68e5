/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_notify.c — the notify script (actions.notify_script,
 * actions_notify.h), run by the actions thread for each alert start and
 * end and each manual ban and unban, one at a time, each within
 * actions.notify_timeout_ms.
 *
 * The script is started with posix_spawn in a process group of its own,
 * with stdin, stdout and stderr only, SIGPIPE at its default and no
 * signal blocked; its arguments are ADDRESS DIRECTION EVENT ALERT_ID (a
 * subnet alert: its PREFIX, "10.9.0.0/24", in place of ADDRESS) and
 * its stdin one line of JSON (docs/detection.md). At the timeout its
 * whole group is killed (SIGKILL), so a child it left running does not
 * outlive it.
 *
 * Its stdout and stderr are one pipe that the thread reads while it waits
 * (one poll loop feeds the stdin, reads the output and reaps), so a script
 * that writes much never blocks, and never floods the journal: a run logs
 * NOTIFY_OUTPUT_LINES lines at most, within the "notify" kind's budget
 * (log.h), and counts the rest. At dpmon's stop the wait ends at once
 * (the run is "left"), so that the list changes are saved and written
 * first; actions_notify_finish then grants it a short grace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, O_CLOEXEC, posix_spawn_file_actions_addclosefrom_np */
#endif

#include "actions_notify.h"
#include "actions_private.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------------
 * Helpers.
 * --------------------------------------------------------------------- */

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------
 * Output (the thread).
 * --------------------------------------------------------------------- */

/* The output line assembled in @p r is complete: log it, or count it. */
static void
output_line(struct notify_run *r)
{
	if (r->lines_logged < NOTIFY_OUTPUT_LINES) {
		r->line[r->line_len] = '\0';
		dpmon_log(DPMON_LOG_NOTIFY, DPMON_LOG_INFO,
			  "actions: notify script %s: output: %s%s", r->what, r->line,
			  r->line_cut ? " [cut]" : "");
		r->lines_logged++;
	} else {
		r->bytes_dropped += r->line_len;
	}
	r->line_len = 0;
	r->line_cut = false;
}

/* @p n bytes of output @p buf, line by line. */
static void
output_take(struct notify_run *r, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r->lines_logged >= NOTIFY_OUTPUT_LINES) {
			r->bytes_dropped += n - i; /* nothing more is logged */
			return;
		}
		if (buf[i] == '\n')
			output_line(r);
		else if (r->line_len < NOTIFY_LINE_MAX)
			r->line[r->line_len++] = buf[i];
		else
			r->line_cut = true;
	}
}

/* Read what the output pipe holds now. @return false at its end (or error). */
static bool
output_read(struct notify_run *r)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(r->out, buf, sizeof(buf))) > 0)
		output_take(r, buf, (size_t)n);
	return n < 0 && (errno == EAGAIN || errno == EINTR);
}

/* The end of the output: its last line, what was not logged. */
static void
output_end(struct notify_run *r)
{
	if (r->out >= 0) {
		(void)output_read(r); /* what is there; a child left running may hold it */
		close(r->out);
		r->out = -1;
	}
	if (r->line_len > 0)
		output_line(r);
	if (r->bytes_dropped > 0)
		dpmon_log(DPMON_LOG_NOTIFY, DPMON_LOG_INFO,
			  "actions: notify script %s: %" PRIu64 " more bytes of output not logged",
			  r->what, r->bytes_dropped);
}

/* ------------------------------------------------------------------------
 * Running one script (the thread).
 * --------------------------------------------------------------------- */

/* Write what is left of the stdin line; close it when done or refused. */
static void
feed(struct notify_run *r)
{
	ssize_t n;

	while (r->in >= 0 && r->off < r->len) {
		n = write(r->in, r->text + r->off, r->len - r->off);
		if (n > 0)
			r->off += (size_t)n;
		else if (n < 0 && errno == EAGAIN)
			return;
		else if (n < 0 && errno != EINTR)
			break; /* EPIPE: the script does not read its stdin */
	}
	if (r->in >= 0) {
		close(r->in); /* end of file on the script's stdin */
		r->in = -1;
	}
}

/* How the script's exit @p status ends the run. */
static enum notify_outcome
exit_outcome(const struct notify_run *r, int status)
{
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 0)
			LOG_INFO("notify script %s: exit status 0", r->what);
		else
			LOG("notify script %s: exit status %d", r->what, WEXITSTATUS(status));
		return WEXITSTATUS(status) == 0 ? NOTIFY_OK : NOTIFY_FAILED;
	}
	if (WIFSIGNALED(status))
		LOG("notify script %s: killed by signal %d", r->what, WTERMSIG(status));
	return NOTIFY_FAILED;
}

/* Free what run @p r holds but its process. */
static void
run_close(struct notify_run *r)
{
	output_end(r);
	if (r->in >= 0)
		close(r->in);
	r->in = -1;
	free(r->text);
	r->text = NULL;
}

/*
 * Feed, read and wait for run @p r until it ends or @p deadline (ms), then
 * kill its process group (@p why says when, for the log); or until @p stop
 * turns true (NULL: never): NOTIFY_LEFT, the run kept as it is.
 * @return how it ended (exit status 0 is NOTIFY_OK).
 */
static enum notify_outcome
supervise(struct notify_run *r, uint64_t deadline, const bool *stop, const char *why)
{
	struct pollfd p[2];
	int status, nfds;
	uint64_t now;
	pid_t w;

	for (;;) {
		w = waitpid(r->pid, &status, WNOHANG);
		if (w != 0)
			break;
		if (stop != NULL && __atomic_load_n(stop, __ATOMIC_RELAXED))
			return NOTIFY_LEFT;
		if ((now = mono_ms()) >= deadline)
			break;
		nfds = 0;
		if (r->in >= 0)
			p[nfds++] = (struct pollfd){.fd = r->in, .events = POLLOUT};
		if (r->out >= 0)
			p[nfds++] = (struct pollfd){.fd = r->out, .events = POLLIN};
		/* 5 ms at most: the exit and the stop are polled, not signalled. */
		if (poll(p, (nfds_t)nfds, deadline - now < 5 ? (int)(deadline - now) : 5) > 0) {
			feed(r);
			if (r->out >= 0 && !output_read(r)) {
				close(r->out); /* end of the output: the exit follows */
				r->out = -1;
			}
		}
	}
	if (w == 0) {
		kill(-r->pid, SIGKILL);
		while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
			;
		run_close(r);
		LOG("notify script %s: killed %s", r->what, why);
		return NOTIFY_KILLED;
	}
	run_close(r);
	if (w < 0) {
		LOG("notify script %s: waitpid: %s", r->what, strerror(errno));
		return NOTIFY_FAILED;
	}
	return exit_outcome(r, status);
}

/*
 * The file actions and attributes of a script reading @p stdin_fd and
 * writing @p out_fd: only stdin, stdout and stderr open, no signal
 * blocked, SIGPIPE at its default, a process group of its own.
 */
static void
spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at, int stdin_fd, int out_fd)
{
	sigset_t none, def;

	posix_spawn_file_actions_init(fa);
	posix_spawn_file_actions_adddup2(fa, stdin_fd, STDIN_FILENO);
	posix_spawn_file_actions_adddup2(fa, out_fd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(fa, out_fd, STDERR_FILENO);
	/* Only stdin, stdout and stderr: DPDK's memory files and sockets are
	 * not close-on-exec, and a child the script leaves running would keep
	 * them (and the memory) after dpmon stops. */
	posix_spawn_file_actions_addclosefrom_np(fa, STDERR_FILENO + 1);
	posix_spawnattr_init(at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &def);
	posix_spawnattr_setpgroup(at, 0); /* its own group: a timeout kills its children too */
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					     POSIX_SPAWN_SETPGROUP);
}

/*
 * Start @p script for @p ev into @p r (its stdin line ready to feed).
 * @return 0, or -1 when it could not be started (logged; nothing held).
 */
static int
start(struct notify_run *r, const char *script, uint32_t timeout_ms, const struct notify_event *ev)
{
	char id[24];
	/* posix_spawn takes writable strings: copies of the constant ones. */
	char script_arg[DPMON_PATH_LEN], target_arg[DPMON_PREFIX_STRLEN], dir_arg[16],
		event_arg[16];
	char *argv[] = {script_arg, target_arg, dir_arg, event_arg, id, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, rc;

	*r = (struct notify_run){.in = -1, .out = -1, .timeout_ms = timeout_ms};
	snprintf(id, sizeof(id), "%" PRIu64, ev->alert_id);
	snprintf(script_arg, sizeof(script_arg), "%s",
		 script); /* a path of the configuration: fits */
	snprintf(target_arg, sizeof(target_arg), "%s", ev->target);
	snprintf(dir_arg, sizeof(dir_arg), "%s", ev->dir);
	snprintf(event_arg, sizeof(event_arg), "%s", ev->event);
	snprintf(r->what, sizeof(r->what), "%s %s %s %s %s", script, target_arg, dir_arg, event_arg,
		 id);
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		LOG("notify script %s: pipe: %s", r->what, strerror(errno));
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		return -1;
	}
	spawn_setup(&fa, &at, in[0], out[1]);
	/* + 1: mono_ms() truncates, so the script gets at least timeout_ms. */
	r->deadline_ms = mono_ms() + timeout_ms + 1;
	rc = posix_spawn(&r->pid, script, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(in[0]);
	close(out[1]);
	r->in = in[1];
	r->out = out[0];
	fcntl(r->in, F_SETFL, O_NONBLOCK);
	fcntl(r->out, F_SETFL, O_NONBLOCK);
	if (rc != 0) {
		LOG("notify script %s: cannot run: %s", r->what, strerror(rc));
		run_close(r);
		return -1;
	}
	r->text = ev->doc != NULL ? json_dumps(ev->doc, JSON_COMPACT) : NULL;
	if (r->text != NULL) {
		r->len = strlen(r->text);
		r->text[r->len++] = '\n'; /* the NUL becomes the line's end */
	}
	feed(r);
	return 0;
}

enum notify_outcome
actions_notify_run(const char *script, uint32_t timeout_ms, const struct notify_event *ev,
		   const bool *stop, struct notify_run *left)
{
	char why[48];

	if (start(left, script, timeout_ms, ev) != 0)
		return NOTIFY_FAILED;
	snprintf(why, sizeof(why), "after %u ms", timeout_ms);
	return supervise(left, left->deadline_ms, stop, why);
}

enum notify_outcome
actions_notify_finish(struct notify_run *r, uint32_t grace_ms)
{
	uint64_t until = mono_ms() + grace_ms;
	char why[48];

	if (until < r->deadline_ms)
		snprintf(why, sizeof(why), "at dpmon's stop");
	else
		snprintf(why, sizeof(why), "after %u ms", r->timeout_ms);
	return supervise(r, until < r->deadline_ms ? until : r->deadline_ms, NULL, why);
}
