/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_capture_dir.c — unit tests of lib/detect/capture_dir.c, the bound
 * of the alerts' capture directory: the oldest capture files go first
 * (by modification time, then name), by count and by bytes, with room for
 * a new one; a file being written stays and counts as a whole file;
 * other files are neither counted nor removed; a bound that cannot be
 * met says so. No DPDK.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include "capture_dir.h"
#include "check.h"

static char dir[64];

/* @p name in the test directory: @p bytes bytes, modified at @p mtime (s). */
static void
make(const char *name, size_t bytes, time_t mtime)
{
	struct utimbuf t = {.actime = mtime, .modtime = mtime};
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	REQUIRE(fclose(f) == 0);
	REQUIRE(utime(path, &t) == 0);
}

/* The names in the test directory, sorted, space separated (static buffer). */
static const char *
listing(void)
{
	static char buf[1024];
	char cmd[128];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls '%s' | sort | tr '\\n' ' '", dir);
	p = popen(cmd, "r");
	REQUIRE(p != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	pclose(p);
	return buf;
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_capture_dir_XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	/* Oldest first: 3 (an earlier run's, aside), 1, 2 and 10 at the same
	 * time (then by name: 10 before 2), 5 (being written). */
	make("3.20251130T170000Z.pcap", 100, 1000);
	make("1.pcap", 100, 2000);
	make("2.pcap", 100, 3000);
	make("10.pcap", 100, 3000);
	make("5.pcap", 40, 4000);
	make("notes.txt", 5000, 10);
	make("x.pcap", 100, 10);
	make("7.pcap.tmp", 100, 10);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	REQUIRE(system(cmd) == 0);
}

/* By count, with room for one more: 5 capture files, at most 3 with the new one. */
static void
test_count(void)
{
	uint64_t open_ids[] = {5};
	struct dpmon_capture_bound b = {.max_files = 3,
					.max_bytes = UINT64_MAX,
					.file_max_bytes = 100,
					.open_ids = open_ids,
					.n_open = 1};

	setup();
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 1), 3);
	CHECK_EQ_STR(listing(), "2.pcap 5.pcap 7.pcap.tmp notes.txt x.pcap ");
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 0), 0); /* within the bound */
	teardown();
}

/* By bytes: 100 each, the open 5.pcap counted as 100 (not its 40), room for 100. */
static void
test_bytes(void)
{
	uint64_t open_ids[] = {5};
	struct dpmon_capture_bound b = {.max_files = 1000,
					.max_bytes = 300,
					.file_max_bytes = 100,
					.open_ids = open_ids,
					.n_open = 1};

	setup();
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 1), 3);
	CHECK_EQ_STR(listing(), "2.pcap 5.pcap 7.pcap.tmp notes.txt x.pcap ");
	b.max_bytes = 299; /* 2.pcap and 5.pcap with room for one: only 5.pcap and the room fit */
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 1), 1);
	CHECK_EQ_STR(listing(), "5.pcap 7.pcap.tmp notes.txt x.pcap ");
	teardown();
}

/* The files being written are kept even when the bound cannot be met. */
static void
test_full(void)
{
	uint64_t open_ids[] = {5, 2};
	struct dpmon_capture_bound b = {.max_files = 2,
					.max_bytes = UINT64_MAX,
					.file_max_bytes = 100,
					.open_ids = open_ids,
					.n_open = 2};

	setup();
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 1), (uint64_t)-ENOSPC);
	CHECK_EQ_STR(listing(), "2.pcap 5.pcap 7.pcap.tmp notes.txt x.pcap ");
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 0), 0); /* the two open ones fit */
	b.max_files = 1;
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 0), (uint64_t)-ENOSPC);
	teardown();
	CHECK_EQ_U64(dpmon_capture_dir_prune(dir, &b, 0), (uint64_t)-ENOENT);
}

int
main(void)
{
	test_count();
	test_bytes();
	test_full();
	return check_finish("test_capture_dir");
}
