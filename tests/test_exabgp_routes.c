/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_exabgp_routes.c — unit tests of lib/detect/actions_exabgp.c, the
 * keyed routes written to ExaBGP's command pipe: exact lines on a FIFO read
 * here, announce and withdraw, a route replaced, a reader that comes back,
 * the stop, and refused input; at the stop, more withdraws than the pipe
 * holds: all read whole by a reader that comes late, and a bounded wait
 * for one that never reads. The test is the writing thread. No DPDK.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions_exabgp.h"
#include "check.h"

#define FLOW1_ANN                                                                                 \
	"announce flow route { match { destination 10.0.0.5/32; protocol udp; } then { discard; " \
	"} }"
#define FLOW1_WD "withdraw flow route { match { destination 10.0.0.5/32; protocol udp; } }"
#define BH_ANN   "announce route 10.0.0.5/32 next-hop 192.0.2.1"
#define BH_WD    "withdraw route 10.0.0.5/32 next-hop 192.0.2.1"

static char dir[64], fifo[128];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_exabgp_routes_XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(fifo, sizeof(fifo), "%s/exabgp.cmd", dir);
	REQUIRE(mkfifo(fifo, 0600) == 0);
}

static void
teardown(void)
{
	unlink(fifo);
	rmdir(dir);
}

/* Everything the pipe holds now (the writer wrote before), into @p buf. */
static const char *
drain(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && (r = read(fd, buf + n, len - n - 1)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

/* Announce, the same line again, another line, withdraw; exact lines. */
static void
test_routes(void)
{
	struct actions_exabgp *e = actions_exabgp_create(16);
	char buf[4096];
	int fd;

	setup();
	REQUIRE(e != NULL);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	actions_exabgp_set_pipe(e, fifo);
	CHECK(actions_exabgp_announce(e, "flow:1", FLOW1_ANN, FLOW1_WD, 0) == 0);
	CHECK(actions_exabgp_announce(e, "10.0.0.5/32", BH_ANN, BH_WD,
				      ACTIONS_ROUTE_KEEP_ON_STOP) == 0);
	CHECK(!actions_exabgp_announced(e, "flow:1"));
	CHECK_EQ_U64(actions_exabgp_routes(e), 2);
	actions_exabgp_sync(e);
	CHECK(actions_exabgp_connected(e));
	/* Announces in key order. */
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), BH_ANN "\n" FLOW1_ANN "\n");
	CHECK(actions_exabgp_announced(e, "flow:1") && actions_exabgp_announced(e, "10.0.0.5/32"));
	/* The same line: nothing to write. Another: written again. */
	CHECK(actions_exabgp_announce(e, "flow:1", FLOW1_ANN, FLOW1_WD, 0) == 1);
	actions_exabgp_sync(e);
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), "");
	CHECK(actions_exabgp_announce(e, "10.0.0.5/32", BH_ANN " community [65535:666]", BH_WD,
				      ACTIONS_ROUTE_KEEP_ON_STOP) == 0);
	CHECK(!actions_exabgp_announced(e, "10.0.0.5/32"));
	actions_exabgp_sync(e);
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), BH_ANN " community [65535:666]\n");
	/* Withdraws come before announces. */
	CHECK(actions_exabgp_announce(e, "flow:2", "announce flow route { x }",
				      "withdraw flow route { x }", 0) == 0);
	CHECK(actions_exabgp_withdraw(e, "flow:1") == 0);
	CHECK(actions_exabgp_withdraw(e, "flow:1") == 1);
	CHECK(actions_exabgp_withdraw(e, "flow:9") == 1);
	actions_exabgp_sync(e);
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), FLOW1_WD "\nannounce flow route { x }\n");
	CHECK_EQ_U64(actions_exabgp_routes(e), 2);
	/* At the stop, the routes not kept are withdrawn. */
	actions_exabgp_stop(e, 1000);
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), "withdraw flow route { x }\n");
	CHECK_EQ_U64(actions_exabgp_routes(e), 1);
	actions_exabgp_free(e);
	close(fd);
	teardown();
}

/* No reader: lines wait; a re-announce cancels a withdraw still waiting; a
 * reader that goes and comes back gets every route again. */
static void
test_reader_back(void)
{
	struct actions_exabgp *e = actions_exabgp_create(16);
	char buf[4096];
	int fd;

	setup();
	REQUIRE(e != NULL);
	actions_exabgp_set_pipe(e, fifo);
	CHECK(actions_exabgp_announce(e, "flow:1", FLOW1_ANN, FLOW1_WD, 0) == 0);
	CHECK(actions_exabgp_announce(e, "flow:2", "announce two", "withdraw two", 0) == 0);
	CHECK(actions_exabgp_withdraw(e, "flow:2") == 0);
	CHECK(actions_exabgp_announce(e, "flow:3", "announce three", "withdraw three", 0) == 0);
	CHECK(actions_exabgp_withdraw(e, "flow:3") == 0);
	CHECK(actions_exabgp_announce(e, "flow:3", "announce three", "withdraw three", 0) == 0);
	actions_exabgp_sync(e); /* no reader: nothing, and no block */
	CHECK(!actions_exabgp_connected(e));
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	actions_exabgp_sync(e);
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), "withdraw two\n" FLOW1_ANN "\nannounce three\n");
	close(fd); /* ExaBGP goes away ... */
	actions_exabgp_sync(e);
	CHECK(!actions_exabgp_connected(e));
	CHECK(!actions_exabgp_announced(e, "flow:1"));
	fd = open(fifo, O_RDONLY | O_NONBLOCK); /* ... and comes back */
	REQUIRE(fd >= 0);
	actions_exabgp_sync(e);
	CHECK_EQ_STR(drain(fd, buf, sizeof(buf)), FLOW1_ANN "\nannounce three\n");
	CHECK(actions_exabgp_announced(e, "flow:1") && actions_exabgp_announced(e, "flow:3"));
	actions_exabgp_free(e);
	close(fd);
	teardown();
}

/* Refused input changes nothing; without a pipe a removal leaves no withdraw. */
static void
test_refused(void)
{
	struct actions_exabgp *e = actions_exabgp_create(2);
	char key[ACTIONS_EXABGP_KEY_LEN + 1], *line = malloc(ACTIONS_EXABGP_LINE_MAX + 1);
	char buf[4096];
	int fd;

	setup();
	REQUIRE(e != NULL && line != NULL);
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	memset(line, 'a', ACTIONS_EXABGP_LINE_MAX);
	line[ACTIONS_EXABGP_LINE_MAX] = '\0';
	CHECK(actions_exabgp_announce(e, key, "a", "w", 0) == -EINVAL);
	CHECK(actions_exabgp_announce(e, "k", line, "w", 0) == -EINVAL);
	line[ACTIONS_EXABGP_LINE_MAX - 2] = '\0'; /* with its newline: the longest */
	CHECK(actions_exabgp_announce(e, "k", "a\nb", "w", 0) == -EINVAL);
	CHECK(actions_exabgp_announce(e, "k", "a", "w\n", 0) == -EINVAL);
	CHECK_EQ_U64(actions_exabgp_routes(e), 0);
	CHECK(actions_exabgp_announce(e, "k", line, "w", 0) == 0);
	CHECK(actions_exabgp_announce(e, "l", "b", "w", 0) == 0);
	CHECK(actions_exabgp_announce(e, "m", "c", "w", 0) == -ENOSPC);
	CHECK_EQ_U64(actions_exabgp_routes(e), 2);
	CHECK(actions_exabgp_withdraw(e, "l") == 0); /* no pipe: no withdraw */
	actions_exabgp_set_pipe(e, fifo);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	actions_exabgp_sync(e);
	drain(fd, buf, sizeof(buf));
	CHECK_EQ_U64(strlen(buf), ACTIONS_EXABGP_LINE_MAX - 1);
	CHECK(strchr(buf, '\n') == buf + ACTIONS_EXABGP_LINE_MAX - 2);
	actions_exabgp_free(e);
	free(line);
	close(fd);
	teardown();
}

/* ------------------------------------------------------------------------
 * The stop with more withdraws than the pipe holds.
 * --------------------------------------------------------------------- */

#define MANY 600 /* withdraw lines of about 150 bytes: 90 KB, more than a pipe's 64 KiB */

/* What the late reader saw. */
struct late_reader {
	int fd;
	unsigned start_ms; /* it sleeps this long before reading */
	unsigned lines;    /* whole withdraw lines read */
	unsigned bad;      /* lines that are not a whole withdraw */
};

/* Read the FIFO from @c start_ms on, for 3 s at most or until MANY lines came. */
static void *
late_read(void *arg)
{
	struct late_reader *r = arg;
	static char buf[128 * 1024];
	size_t n = 0;
	double end;

	usleep(r->start_ms * 1000);
	end = check_now_s() + 3;
	while (r->lines + r->bad < MANY && check_now_s() < end) {
		struct pollfd p = {.fd = r->fd, .events = POLLIN};
		ssize_t got;
		char *nl;

		if (poll(&p, 1, 50) <= 0 || (got = read(r->fd, buf + n, sizeof(buf) - n)) <= 0)
			continue;
		n += (size_t)got;
		while ((nl = memchr(buf, '\n', n)) != NULL) {
			size_t len = (size_t)(nl - buf);

			if (len > 22 && strncmp(buf, "withdraw flow route { ", 22) == 0 &&
			    strncmp(nl - 3, "} }", 3) == 0)
				r->lines++;
			else
				r->bad++;
			memmove(buf, nl + 1, n - len - 1);
			n -= len + 1;
		}
	}
	return NULL;
}

/* MANY routes announced (the test reading them), their withdraws due at @p e's stop. */
static void
announce_many(struct actions_exabgp *e, int fd)
{
	char key[32], ann[256], wd[256], buf[4096];

	for (unsigned i = 0; i < MANY; i++) {
		snprintf(key, sizeof(key), "flow:%u", i + 1);
		snprintf(ann, sizeof(ann),
			 "announce flow route { match { destination 10.0.%u.%u/32; protocol tcp; "
			 "destination-port [ =1 =2 =3 =4 ]; source-port [ =5 =6 =7 =8 ]; } "
			 "then { discard; } }",
			 i / 250, i % 250);
		snprintf(wd, sizeof(wd),
			 "withdraw flow route { match { destination 10.0.%u.%u/32; protocol tcp; "
			 "destination-port [ =1 =2 =3 =4 ]; source-port [ =5 =6 =7 =8 ]; } }",
			 i / 250, i % 250);
		REQUIRE(actions_exabgp_announce(e, key, ann, wd, 0) == 0);
		actions_exabgp_sync(e);
		drain(fd, buf, sizeof(buf));
	}
	for (int k = 0; k < 100; k++) { /* the last lines a full pipe held back */
		actions_exabgp_sync(e);
		drain(fd, buf, sizeof(buf));
	}
}

/* The stop waits for a full pipe's reader within its bound, and no longer. */
static void
test_stop_full_pipe(void)
{
	struct actions_exabgp *e = actions_exabgp_create(2 * MANY);
	struct late_reader r = {.start_ms = 300};
	pthread_t t;
	double t0;

	setup();
	REQUIRE(e != NULL);
	r.fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(r.fd >= 0);
	actions_exabgp_set_pipe(e, fifo);
	announce_many(e, r.fd);
	/* The reader comes 300 ms after the stop began: every withdraw, whole. */
	REQUIRE(pthread_create(&t, NULL, late_read, &r) == 0);
	actions_exabgp_stop(e, 2000);
	pthread_join(t, NULL);
	CHECK_EQ_U64(r.lines, MANY);
	CHECK_EQ_U64(r.bad, 0);
	actions_exabgp_free(e);
	close(r.fd);
	teardown();

	/* A reader that never reads: the stop gives up after its bound. */
	e = actions_exabgp_create(2 * MANY);
	setup();
	REQUIRE(e != NULL);
	r.fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(r.fd >= 0);
	actions_exabgp_set_pipe(e, fifo);
	announce_many(e, r.fd);
	t0 = check_now_s();
	actions_exabgp_stop(e, 300);
	CHECK(check_now_s() - t0 >= 0.29);
	CHECK(check_now_s() - t0 < 2.0);
	actions_exabgp_free(e);
	close(r.fd);
	teardown();
}

int
main(void)
{
	test_routes();
	test_reader_back();
	test_refused();
	test_stop_full_pipe();
	return check_finish("test_exabgp_routes");
}
