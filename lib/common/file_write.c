/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file_write.c — new files under a random temporary name, renamed into
 * place (file_write.h).
 *
 * glibc's mkostemp makes the random name and opens it with O_CREAT |
 * O_EXCL (an existing name, a symbolic link included, is never opened: it
 * tries another), passing O_NOFOLLOW and O_CLOEXEC on; its mode 0600 is
 * then set to the one asked for on the descriptor.
 */
#include "file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
dpmon_file_create(const char *path, mode_t mode, char *tmp, size_t tmplen)
{
	int fd, n;

	if (path == NULL || path[0] == '\0' || tmp == NULL)
		return -EINVAL;
	n = snprintf(tmp, tmplen, "%s" DPMON_FILE_TMP_SUFFIX, path);
	if (n < 0 || (size_t)n >= tmplen) {
		if (tmplen > 0)
			tmp[0] = '\0';
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode & 07777) != 0) {
		int rc = -errno;

		dpmon_file_discard(fd, tmp);
		return rc;
	}
	return fd;
}

/* fsync the directory of @p path, so that a rename into it is durable. */
static int
sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash == NULL   ? strdup(".")
		    : slash == path ? strdup("/")
				    : strndup(path, (size_t)(slash - path));
	int fd, rc = 0;

	if (dir == NULL)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int
dpmon_file_place(int fd, const char *tmp, const char *path, bool durable)
{
	int rc = 0;

	if (durable && fd >= 0 && fsync(fd) != 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	/* The new file is in place: a directory that cannot be synced only
	 * makes it less durable, it is no reason to call the write failed. */
	if (durable)
		(void)sync_dir(path);
	return 0;
}

void
dpmon_file_discard(int fd, const char *tmp)
{
	if (fd >= 0)
		close(fd);
	if (tmp != NULL && tmp[0] != '\0')
		unlink(tmp);
}

int
dpmon_file_write_new(const char *path, mode_t mode, const void *data, size_t len, bool durable)
{
	size_t tmplen = (path != NULL ? strlen(path) : 0) + sizeof(DPMON_FILE_TMP_SUFFIX);
	const char *p = data;
	char *tmp = malloc(tmplen);
	size_t off = 0;
	int fd, rc = 0;

	if (tmp == NULL)
		return -ENOMEM;
	fd = dpmon_file_create(path, mode, tmp, tmplen);
	if (fd < 0) {
		free(tmp);
		return fd;
	}
	while (rc == 0 && off < len) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	/* Synced and closed before the rename: an error of either (a full
	 * disk on NFS shows at close) leaves the target as it was. */
	if (rc == 0 && durable && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0)
		rc = dpmon_file_place(-1, tmp, path, durable);
	else
		unlink(tmp);
	free(tmp);
	return rc;
}
