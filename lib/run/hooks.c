/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hooks.c — test hooks of the main lcore (run_private.h): a test that
 * sets DPMON_TEST_HOOKS=DIR in dpmon's environment freezes parts of dpmon
 * by creating files in DIR, and releases them by removing the files:
 *
 *   DIR/hold-merge          the main lcore stops merging (and so stops
 *                           feeding the systemd watchdog), as a merge
 *                           stuck on a blocking call would;
 *   DIR/hold-worker-<N>     worker lcore N stops polling its RX queues
 *                           (struct dpmon_worker.hold).
 *
 * The files are looked at once per loop round (and every HOLD_POLL_MS
 * while the merge is held). Without the variable nothing is looked at.
 */
#include "run_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define HOLD_POLL_MS 10

void
app_hooks_init(struct app *a)
{
	const char *dir = getenv("DPMON_TEST_HOOKS");

	a->hooks_dir = dir != NULL && dir[0] != '\0' ? dir : NULL;
	if (a->hooks_dir != NULL)
		fprintf(stderr, "dpmon: test hooks in %s\n", a->hooks_dir);
}

/* Does the hook file DIR/@p name exist? */
static bool
hook_set(const struct app *a, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", a->hooks_dir, name);
	return access(path, F_OK) == 0;
}

/* Hold or release each worker as its file says. */
static void
hold_workers(struct app *a)
{
	for (unsigned w = 0; w < a->n_workers; w++) {
		char name[32];
		bool hold;

		snprintf(name, sizeof(name), "hold-worker-%u", a->lcores[w]);
		hold = hook_set(a, name);

		if (hold != a->workers[w].hold)
			fprintf(stderr, "dpmon: test hook: worker lcore %u %s\n", a->lcores[w],
				hold ? "held" : "released");
		__atomic_store_n(&a->workers[w].hold, hold, __ATOMIC_RELAXED);
	}
}

void
app_hooks_round(struct app *a)
{
	const struct timespec pause = {.tv_nsec = HOLD_POLL_MS * 1000000L};
	bool held = false;

	if (a->hooks_dir == NULL)
		return;
	hold_workers(a);
	while (!app_stop_signal() && hook_set(a, "hold-merge")) {
		if (!held)
			fprintf(stderr, "dpmon: test hook: merge held\n");
		held = true;
		nanosleep(&pause, NULL);
		hold_workers(a);
	}
	if (held)
		fprintf(stderr, "dpmon: test hook: merge released\n");
}
