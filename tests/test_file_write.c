/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_file_write.c — lib/common/file_write.c: a new file replaces its
 * target with the mode asked for whatever the umask, under a random
 * temporary name; a symbolic link or a FIFO planted at the target or at
 * TARGET.tmp is never written through nor waited on; a failure leaves the
 * target as it was and no temporary behind. Also the credential reader
 * (token_file.h): the refusals of a secret file, each with its reason.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "file_write.h"
#include "token_file.h"

static char dir[64];

/* dir/NAME into @p out. */
static const char *
in_dir(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
	return out;
}

/* The whole content of @p path (at most 255 bytes), "" when unreadable. */
static const char *
content(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;

	out[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return out;
}

/* @p len bytes of @p data into @p path, made or emptied first. */
static void
put_bytes(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, data, len) == (ssize_t)len);
	REQUIRE(close(fd) == 0);
}

static void
put(const char *path, const char *text)
{
	put_bytes(path, text, strlen(text));
}

/* How many entries of dir start with @p prefix. */
static int
count_names(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	REQUIRE(d != NULL);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

static unsigned
mode_of(const char *path)
{
	struct stat st;

	REQUIRE(lstat(path, &st) == 0);
	return (unsigned)(st.st_mode & 07777);
}

/* New files: content, modes 0600 and 0640 under any umask, replaced whole. */
static void
test_write_new(void)
{
	char p[128], buf[256];
	mode_t old = umask(0);

	CHECK(dpmon_file_write_new(in_dir(p, sizeof(p), "state"), DPMON_FILE_MODE_PRIVATE, "one\n",
				   4, true) == 0);
	CHECK_EQ_STR(content(p, buf, sizeof(buf)), "one\n");
	CHECK(mode_of(p) == 0600);
	umask(077); /* a narrower umask does not take the group's read away either */
	CHECK(dpmon_file_write_new(p, DPMON_FILE_MODE_GROUP, "two", 3, false) == 0);
	CHECK_EQ_STR(content(p, buf, sizeof(buf)), "two");
	CHECK(mode_of(p) == 0640);
	CHECK(dpmon_file_write_new(p, DPMON_FILE_MODE_PRIVATE, "", 0, false) == 0);
	CHECK_EQ_STR(content(p, buf, sizeof(buf)), "");
	CHECK(mode_of(p) == 0600);
	CHECK(count_names("state.tmp") == 0);
	umask(old);
	unlink(p);
}

/* The temporary: random, O_EXCL, in the target's directory, close-on-exec. */
static void
test_create(void)
{
	char p[128], t1[160], t2[160], small[8];
	int a, b;

	in_dir(p, sizeof(p), "port");
	a = dpmon_file_create(p, DPMON_FILE_MODE_PRIVATE, t1, sizeof(t1));
	b = dpmon_file_create(p, DPMON_FILE_MODE_PRIVATE, t2, sizeof(t2));
	REQUIRE(a >= 0 && b >= 0);
	CHECK(strncmp(t1, p, strlen(p)) == 0 && strncmp(t1 + strlen(p), ".tmp.", 5) == 0);
	CHECK(strlen(t1) == strlen(p) + strlen(DPMON_FILE_TMP_SUFFIX));
	CHECK(strcmp(t1, t2) != 0);
	CHECK((fcntl(a, F_GETFD) & FD_CLOEXEC) != 0);
	CHECK(mode_of(t1) == 0600);
	CHECK(access(p, F_OK) != 0); /* nothing in place before dpmon_file_place */
	CHECK(write(a, "8080\n", 5) == 5);
	CHECK(dpmon_file_place(a, t1, p, true) == 0);
	CHECK(access(t1, F_OK) != 0);
	close(a);
	dpmon_file_discard(b, t2);
	CHECK(access(t2, F_OK) != 0);
	CHECK(count_names("port.tmp") == 0);
	CHECK(dpmon_file_create(p, 0600, small, sizeof(small)) == -ENAMETOOLONG);
	CHECK(dpmon_file_create("", 0600, t1, sizeof(t1)) == -EINVAL);
	CHECK(dpmon_file_create(in_dir(t2, sizeof(t2), "nodir/x"), 0600, t1, sizeof(t1)) ==
	      -ENOENT);
	unlink(p);
}

/* Links and FIFOs planted at TARGET.tmp or at the target: never written. */
static void
test_planted(void)
{
	char p[128], tmp[160], victim[128], buf[256];

	put(in_dir(victim, sizeof(victim), "victim"), "precious\n");
	in_dir(p, sizeof(p), "out");
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	REQUIRE(symlink(victim, tmp) == 0);
	CHECK(dpmon_file_write_new(p, DPMON_FILE_MODE_PRIVATE, "9\n", 2, false) == 0);
	CHECK_EQ_STR(content(victim, buf, sizeof(buf)), "precious\n");
	CHECK_EQ_STR(content(p, buf, sizeof(buf)), "9\n");
	unlink(tmp);
	/* A FIFO nobody reads at TARGET.tmp: not opened, so not waited on. */
	REQUIRE(mkfifo(tmp, 0600) == 0);
	CHECK(dpmon_file_write_new(p, DPMON_FILE_MODE_PRIVATE, "10\n", 3, false) == 0);
	CHECK_EQ_STR(content(p, buf, sizeof(buf)), "10\n");
	unlink(tmp);
	/* A link at the target itself is replaced by the file, the victim kept. */
	unlink(p);
	REQUIRE(symlink(victim, p) == 0);
	CHECK(dpmon_file_write_new(p, DPMON_FILE_MODE_PRIVATE, "11\n", 3, true) == 0);
	CHECK_EQ_STR(content(victim, buf, sizeof(buf)), "precious\n");
	CHECK_EQ_STR(content(p, buf, sizeof(buf)), "11\n");
	CHECK(mode_of(p) == 0600);
	CHECK(mode_of(victim) == 0644);
	/* A directory at the target: refused, nothing left behind. */
	unlink(p);
	REQUIRE(mkdir(p, 0700) == 0);
	CHECK(dpmon_file_write_new(p, DPMON_FILE_MODE_PRIVATE, "12\n", 3, false) == -EISDIR);
	CHECK(count_names("out.tmp") == 0);
	rmdir(p);
	unlink(victim);
}

/* What the secret reader takes and refuses (dpmon_secret_file_read). */
static void
expect_secret(const char *path, int rc, const char *want)
{
	char out[DPMON_SECRET_MAX + 1] = "untouched", err[128] = "";
	size_t len = 0;
	int got = dpmon_secret_file_read(path, out, &len, err, sizeof(err));

	CHECK(got == rc);
	if (rc == 0) {
		CHECK_EQ_STR(out, want);
		CHECK(len == strlen(want));
	} else {
		CHECK_EQ_STR(err, want);
		CHECK_EQ_STR(out, "untouched");
	}
}

static void
test_secret(void)
{
	char p[128], big[DPMON_SECRET_MAX + 3];

	in_dir(p, sizeof(p), "pw");
	put(p, "s3cret\n");
	expect_secret(p, 0, "s3cret");
	put(p, "with spaces and \"quotes\"\r\n");
	expect_secret(p, 0, "with spaces and \"quotes\"");
	put(p, "");
	expect_secret(p, -EINVAL, "empty");
	put(p, "\n");
	expect_secret(p, -EINVAL, "empty");
	put(p, "one\ntwo\n");
	expect_secret(p, -EINVAL, "more than one line");
	put(p, "one\r\n\r\n");
	expect_secret(p, -EINVAL, "more than one line");
	put_bytes(p, "pass\0word\n", 10);
	expect_secret(p, -EINVAL, "holds a NUL byte");
	memset(big, 'x', DPMON_SECRET_MAX);
	big[DPMON_SECRET_MAX] = '\0';
	put(p, big);
	expect_secret(p, 0, big);
	big[DPMON_SECRET_MAX] = 'x';
	big[DPMON_SECRET_MAX + 1] = '\0';
	put(p, big);
	expect_secret(p, -EFBIG, "longer than 511 bytes");
	unlink(p);
	REQUIRE(mkfifo(p, 0600) == 0); /* nobody writes it: refused, not waited on */
	expect_secret(p, -EINVAL, "not a regular file (FIFO)");
	unlink(p);
	expect_secret(dir, -EISDIR, "Is a directory");
	expect_secret("/dev/zero", -EINVAL, "not a regular file (character device)");
	expect_secret(p, -ENOENT, "No such file or directory");
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/dpmon-test-file-write.XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	test_write_new();
	test_create();
	test_planted();
	test_secret();
	rmdir(dir);
	return check_finish("file_write");
}
