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
 * Running one script (thread only).
 * --------------------------------------------------------------------- */

/* Write @p text to the non-blocking @p fd until done, EPIPE or @p deadline. */
static void
feed_stdin(int fd, const char *text, size_t len, uint64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	size_t off = 0;
	ssize_t n;
	uint64_t now;

	while (off < len && (now = mono_ms()) < deadline) {
		n = write(fd, text + off, len - off);
		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno == EAGAIN)
			poll(&p, 1, (int)(deadline - now));
		else if (n < 0 && errno != EINTR)
			break; /* EPIPE: the script does not read its stdin */
	}
}

/* Wait for @p pid until @p deadline, then kill its process group.
 * @return how it ended (exit status 0 is NOTIFY_OK). */
static enum notify_outcome
reap(pid_t pid, uint64_t deadline, const char *what, uint32_t timeout_ms)
{
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && mono_ms() < deadline)
		nanosleep(&(struct timespec){0, 5 * 1000000}, NULL);
	if (r == 0) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		LOG("notify script %s: killed after %u ms", what, timeout_ms);
		return NOTIFY_KILLED;
	}
	if (r < 0) {
		LOG("notify script %s: waitpid: %s", what, strerror(errno));
		return NOTIFY_FAILED;
	}
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 0)
			LOG_INFO("notify script %s: exit status 0", what);
		else
			LOG("notify script %s: exit status %d", what, WEXITSTATUS(status));
		return WEXITSTATUS(status) == 0 ? NOTIFY_OK : NOTIFY_FAILED;
	}
	if (WIFSIGNALED(status))
		LOG("notify script %s: killed by signal %d", what, WTERMSIG(status));
	return NOTIFY_FAILED;
}

/*
 * The file actions and attributes of a script reading @p stdin_fd: only
 * stdin, stdout and stderr open, no signal blocked, SIGPIPE at its
 * default, a process group of its own.
 */
static void
spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at, int stdin_fd)
{
	sigset_t none, def;

	posix_spawn_file_actions_init(fa);
	posix_spawn_file_actions_adddup2(fa, stdin_fd, STDIN_FILENO);
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

/* @p text (json_dumps' string, or NULL: nothing) as one line on the
 * started script's stdin @p fd, until @p deadline. */
static void
feed_line(int fd, char *text, uint64_t deadline)
{
	size_t n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (text == NULL)
		return;
	n = strlen(text);
	text[n] = '\n'; /* the NUL becomes the line's end */
	feed_stdin(fd, text, n + 1, deadline);
}

enum notify_outcome
actions_notify_run(const char *script, uint32_t timeout_ms, const struct notify_event *ev)
{
	char id[24], what[DPMON_PATH_LEN + 96];
	/* posix_spawn takes writable strings: copies of the constant ones. */
	char script_arg[DPMON_PATH_LEN], target_arg[DPMON_PREFIX_STRLEN], dir_arg[16],
		event_arg[16];
	char *argv[] = {script_arg, target_arg, dir_arg, event_arg, id, NULL};
	char *text = ev->doc != NULL ? json_dumps(ev->doc, JSON_COMPACT) : NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	uint64_t deadline;
	int fds[2], rc;
	pid_t pid;

	snprintf(id, sizeof(id), "%" PRIu64, ev->alert_id);
	snprintf(script_arg, sizeof(script_arg), "%s",
		 script); /* a path of the configuration: fits */
	snprintf(target_arg, sizeof(target_arg), "%s", ev->target);
	snprintf(dir_arg, sizeof(dir_arg), "%s", ev->dir);
	snprintf(event_arg, sizeof(event_arg), "%s", ev->event);
	snprintf(what, sizeof(what), "%s %s %s %s %s", script, target_arg, dir_arg, event_arg, id);
	if (pipe2(fds, O_CLOEXEC) != 0) {
		LOG("notify script %s: pipe: %s", what, strerror(errno));
		free(text);
		return NOTIFY_FAILED;
	}
	spawn_setup(&fa, &at, fds[0]);
	/* + 1: mono_ms() truncates, so the script gets at least timeout_ms. */
	deadline = mono_ms() + timeout_ms + 1;
	rc = posix_spawn(&pid, script, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(fds[0]);
	if (rc != 0)
		LOG("notify script %s: cannot run: %s", what, strerror(rc));
	else
		feed_line(fds[1], text, deadline);
	close(fds[1]); /* end of file on the script's stdin */
	free(text);
	return rc == 0 ? reap(pid, deadline, what, timeout_ms) : NOTIFY_FAILED;
}
