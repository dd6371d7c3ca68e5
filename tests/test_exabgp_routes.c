/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_exabgp_routes.c — unit tests of lib/detect/actions_exabgp.c, the
 * keyed routes written to ExaBGP's command pipe: exact lines on a FIFO read
 * here, announce and withdraw, a route replaced, a reader that comes back,
 * the stop, and refused input. The test is the writing thread. No DPDK.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
	actions_exabgp_stop(e);
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

int
main(void)
{
	test_routes();
	test_reader_back();
	test_refused();
	return check_finish("test_exabgp_routes");
}
