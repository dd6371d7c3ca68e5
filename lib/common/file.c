/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file.c — non-blocking, bounded reads of the files dpmon is given (file.h).
 *
 * The checks are made on the descriptor (fstat), not on the path before
 * opening it, so that nothing put in the file's place between a check and
 * the open is read. The buffer starts at the size fstat gives and grows
 * (doubling, up to the bound plus one byte, which tells a file that grew
 * too large) for files whose size is not known in advance (/proc).
 * Our own code rather than jansson's json_load_file or json_loadfd: those
 * neither check what the path names nor bound what they read.
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First buffer for a file whose fstat size is 0 (empty, or /proc). */
#define FIRST_READ_BYTES 4096u

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* What a file of mode @p mode that is not a regular file is, in words. */
static const char *
kind_of(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "FIFO";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	if (S_ISSOCK(mode))
		return "socket";
	return "unknown type";
}

/* open's errno @p e for @p path as -errno and its reason; a socket (ENXIO)
 * is named as such. */
static int
open_failed(const char *path, int e, char *err, size_t errlen)
{
	struct stat st;

	if (e == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		set_err(err, errlen, "not a regular file (socket)");
		return -EINVAL;
	}
	set_err(err, errlen, "%s", strerror(e));
	return -e;
}

int
dpmon_file_open(const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc = 0;

	if (path == NULL) {
		set_err(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return open_failed(path, errno, err, errlen);
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		set_err(err, errlen, "%s", strerror(-rc));
	} else if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		set_err(err, errlen, "%s", strerror(EISDIR));
	} else if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		set_err(err, errlen, "not a regular file (%s)", kind_of(st.st_mode));
	} else if (max_bytes > 0 && (uint64_t)st.st_size > max_bytes) {
		rc = -EFBIG;
		set_err(err, errlen, "larger than %llu bytes", (unsigned long long)max_bytes);
	}
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* Make room for more than @p len bytes (+ the NUL) in @p *buf of @p *cap,
 * never beyond @p max + 1. @return 0, -EFBIG (already max + 1) or -ENOMEM. */
static int
grow(char **buf, size_t *cap, size_t len, size_t max)
{
	char *bigger;
	size_t n;

	if (len < *cap)
		return 0;
	if (*cap > max)
		return -EFBIG;
	n = *cap > max / 2 ? max + 1 : *cap * 2;
	bigger = realloc(*buf, n + 1);
	if (bigger == NULL)
		return -ENOMEM;
	*buf = bigger;
	*cap = n;
	return 0;
}

/* Read @p fd to its end into @p *buf (@p *cap bytes + 1); @return 0 or -errno. */
static int
read_all(int fd, char **buf, size_t *cap, size_t *len, size_t max)
{
	for (;;) {
		ssize_t n;
		int rc = grow(buf, cap, *len, max);

		if (rc != 0)
			return rc;
		n = read(fd, *buf + *len, *cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		*len += (size_t)n;
		if (*len > max)
			return -EFBIG;
	}
}

/* dpmon_file_read, and when @p private also refusing a file that its
 * group or others may read or write (mode & 077, checked on the open file). */
static int
read_file(const char *path, size_t max_bytes, bool private, char **buf, size_t *len, char *err,
	  size_t errlen)
{
	struct stat st;
	size_t cap, got = 0;
	char *b;
	int fd, rc;

	if (max_bytes == 0) {
		set_err(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	fd = dpmon_file_open(path, max_bytes, err, errlen);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		set_err(err, errlen, "%s", strerror(-rc));
		close(fd);
		return rc;
	}
	if (private && (st.st_mode & 077) != 0) {
		set_err(err, errlen, "group or others may access it (mode %04o; chmod 600)",
			(unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	cap = st.st_size > 0 ? (size_t)st.st_size : FIRST_READ_BYTES;
	if (cap > max_bytes)
		cap = max_bytes; /* a small bound: one more read tells the end */
	b = malloc(cap + 1);
	rc = b == NULL ? -ENOMEM : read_all(fd, &b, &cap, &got, max_bytes);
	close(fd);
	if (rc == -EFBIG)
		set_err(err, errlen, "larger than %zu bytes", max_bytes);
	else if (rc != 0)
		set_err(err, errlen, "%s", strerror(-rc));
	if (rc != 0) {
		free(b);
		return rc;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int
dpmon_file_read(const char *path, size_t max_bytes, char **buf, size_t *len, char *err,
		size_t errlen)
{
	return read_file(path, max_bytes, false, buf, len, err, errlen);
}

int
dpmon_file_read_private(const char *path, size_t max_bytes, char **buf, size_t *len, char *err,
			size_t errlen)
{
	return read_file(path, max_bytes, true, buf, len, err, errlen);
}
