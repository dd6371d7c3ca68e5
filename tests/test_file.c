/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_file.c — lib/common/file.c: what dpmon_file_read accepts (regular
 * files up to the bound, empty ones) and refuses at once, without
 * blocking (a FIFO nobody writes, a directory, /dev/zero, a socket, a file
 * too large, a missing one), with the exact reason text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "file.h"

static char dir[64];

/* dir/NAME into @p out. */
static const char *
in_dir(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
	return out;
}

static void
write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");

	REQUIRE(f != NULL);
	REQUIRE(fwrite(text, 1, len, f) == len);
	REQUIRE(fclose(f) == 0);
}

/* dpmon_file_read(@p path, @p max) must fail with @p rc and reason @p why. */
static void
expect_refused(const char *path, size_t max, int rc, const char *why)
{
	static char untouched[] = "untouched";
	char err[128] = "", *buf = untouched;
	size_t len = 12345;
	int got = dpmon_file_read(path, max, &buf, &len, err, sizeof(err));

	CHECK(got == rc);
	if (strcmp(err, why) != 0)
		fprintf(stderr, "%s: reason \"%s\", expected \"%s\"\n", path, err, why);
	CHECK(strcmp(err, why) == 0);
	CHECK(buf == untouched);
	CHECK(len == 12345);
}

static void
test_regular_and_empty(void)
{
	char p[128], err[128] = "", *buf = NULL;
	size_t len = 99;

	write_file(in_dir(p, sizeof(p), "ok.json"), "{\"a\": 1}\n", 9);
	REQUIRE(dpmon_file_read(p, 9, &buf, &len, err, sizeof(err)) == 0);
	CHECK(len == 9);
	CHECK(memcmp(buf, "{\"a\": 1}\n", 10) == 0); /* NUL-terminated */
	CHECK(err[0] == '\0');
	free(buf);
	/* One byte over the bound is refused. */
	expect_refused(p, 8, -EFBIG, "larger than 8 bytes");
	/* Embedded NUL bytes are read as they are. */
	write_file(p, "a\0b", 3);
	REQUIRE(dpmon_file_read(p, 100, &buf, &len, NULL, 0) == 0);
	CHECK(len == 3 && buf[0] == 'a' && buf[1] == '\0' && buf[2] == 'b' && buf[3] == '\0');
	free(buf);
	write_file(in_dir(p, sizeof(p), "empty.json"), "", 0);
	buf = NULL;
	REQUIRE(dpmon_file_read(p, 100, &buf, &len, err, sizeof(err)) == 0);
	CHECK(len == 0);
	CHECK(buf != NULL && buf[0] == '\0');
	free(buf);
	unlink(in_dir(p, sizeof(p), "ok.json"));
	unlink(in_dir(p, sizeof(p), "empty.json"));
}

/* A file larger than the bound, and one of unknown size (/proc) read whole. */
static void
test_large_and_proc(void)
{
	char p[128], *big = malloc(100000), *buf = NULL;
	size_t len = 0;

	REQUIRE(big != NULL);
	memset(big, 'x', 100000);
	write_file(in_dir(p, sizeof(p), "big.json"), big, 100000);
	expect_refused(p, 99999, -EFBIG, "larger than 99999 bytes");
	REQUIRE(dpmon_file_read(p, 100000, &buf, &len, NULL, 0) == 0);
	CHECK(len == 100000 && memcmp(buf, big, 100000) == 0);
	free(buf);
	unlink(p);
	free(big);
	/* /proc/self/status: fstat says 0 bytes, the text is longer. */
	REQUIRE(dpmon_file_read("/proc/self/status", 1 << 20, &buf, &len, NULL, 0) == 0);
	CHECK(len > 100 && strncmp(buf, "Name:", 5) == 0 && strlen(buf) == len);
	free(buf);
	/* And its bound holds when fstat tells nothing. */
	expect_refused("/proc/self/status", 10, -EFBIG, "larger than 10 bytes");
}

/* Nothing that is not a regular file is read, and nothing blocks. */
static void
test_not_regular(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char p[128];
	int s;

	REQUIRE(mkfifo(in_dir(p, sizeof(p), "fifo"), 0600) == 0);
	expect_refused(p, 100, -EINVAL, "not a regular file (FIFO)");
	unlink(p);
	expect_refused(dir, 100, -EISDIR, "Is a directory");
	expect_refused("/dev/zero", 100, -EINVAL, "not a regular file (character device)");
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(s >= 0);
	in_dir(p, sizeof(p), "sock");
	REQUIRE(strlen(p) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, p, strlen(p) + 1);
	REQUIRE(bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	expect_refused(p, 100, -EINVAL, "not a regular file (socket)");
	close(s);
	unlink(p);
	expect_refused(in_dir(p, sizeof(p), "missing"), 100, -ENOENT, "No such file or directory");
	expect_refused(NULL, 100, -EINVAL, "Invalid argument");
}

/* dpmon_file_open alone: 0 = any size; the descriptor is non-blocking. */
static void
test_open(void)
{
	char p[128], err[64];
	int fd;

	write_file(in_dir(p, sizeof(p), "any"), "12345", 5);
	fd = dpmon_file_open(p, 0, err, sizeof(err));
	REQUIRE(fd >= 0);
	CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
	CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	close(fd);
	CHECK(dpmon_file_open(p, 4, err, sizeof(err)) == -EFBIG);
	CHECK(strcmp(err, "larger than 4 bytes") == 0);
	/* A short reason buffer truncates, never overflows. */
	CHECK(dpmon_file_open(p, 4, err, 6) == -EFBIG);
	CHECK(strcmp(err, "large") == 0);
	unlink(p);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/dpmon-test-file.XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	test_regular_and_empty();
	test_large_and_proc();
	test_not_regular();
	test_open();
	rmdir(dir);
	return check_finish("file");
}
