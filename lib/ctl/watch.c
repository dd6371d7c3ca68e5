/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * watch.c — dpmonctl --watch: a view redrawn in place, like top(1), on
 * the terminal's alternate screen, until q, Ctrl-C or SIGTERM; the
 * terminal's mode, cursor and screen are restored on the way out.
 */
#include "ctl_private.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"

/* Alternate screen and hidden cursor on entry; the reverse on exit. */
#define ENTER_SCREEN "\033[?1049h\033[?25l"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"
#define HOME_CLEAR   "\033[H\033[2J"

static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* Wait up to ms milliseconds for a key on stdin; true when it asks to quit. */
static bool
wait_key(int *fd, int ms)
{
	struct pollfd p = {.fd = *fd, .events = POLLIN};
	char keys[64];
	ssize_t n;

	if (*fd < 0) {
		struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};

		nanosleep(&t, NULL);
		return false;
	}
	if (poll(&p, 1, ms) <= 0)
		return false;
	n = read(*fd, keys, sizeof(keys));
	if (n <= 0) {
		*fd = -1; /* end of input (not a terminal): keep redrawing */
		return false;
	}
	return memchr(keys, 'q', (size_t)n) != NULL || memchr(keys, 'Q', (size_t)n) != NULL;
}

int
ctl_watch(struct ctl_ctx *ctx, ctl_cmd_fn cmd, const char *title, double interval_s, int argc,
	  char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	FILE *out = ctx->out, *err = ctx->err;
	struct termios saved, raw;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	int fd = STDIN_FILENO, rc = CTL_EXIT_OK;
	bool quit = false;

	if (tty) {
		/* Keys without Enter and without echo; Ctrl-C still signals. */
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fputs(ENTER_SCREEN, out);
	while (!quit && !stop_signal) {
		char *buf = NULL, when[CTL_FMT_LEN];
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (m == NULL) {
			rc = CTL_EXIT_ERROR;
			break;
		}
		ctx->out = ctx->err = m;
		rc = cmd(ctx, argc, argv);
		fclose(m);
		ctx->out = out;
		ctx->err = err;
		fprintf(out, HOME_CLEAR "every %.1f s: dpmonctl %s    %s UTC    q: quit\n\n",
			interval_s, title, ctl_fmt_time(when, (double)time(NULL)));
		fwrite(buf, 1, len, out);
		fflush(out);
		free(buf);
		if (rc == CTL_EXIT_USAGE)
			break;
		quit = wait_key(&fd, (int)(interval_s * 1000));
	}
	fputs(LEAVE_SCREEN, out);
	fflush(out);
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	/* Quitting is the normal end; the last view's failure is on screen. */
	return rc == CTL_EXIT_USAGE ? rc : CTL_EXIT_OK;
}
