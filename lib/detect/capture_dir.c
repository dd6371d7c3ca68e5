/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture_dir.c — the bound of the alerts' capture directory
 * (capture_dir.h): list the capture files, oldest first, and remove as
 * many as the bound asks. Called by the sampler before a capture starts,
 * at a reload and at the start.
 */
#include "capture_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* One capture file found. */
struct capture_file {
	char name[64];
	struct timespec mtime;
	uint64_t bytes; /* as counted: an open one's at least file_max_bytes */
	bool open;
};

/* The alert id of a capture file's name, ID.pcap or ID.STAMP.pcap; @p
 * plain: it is ID.pcap. @return false for any other name. */
static bool
capture_name(const char *name, uint64_t *id, bool *plain)
{
	size_t n = strlen(name);
	char *end;

	if (n < 6 || n >= sizeof(((struct capture_file *)0)->name) ||
	    strcmp(name + n - 5, ".pcap") != 0 || name[0] < '0' || name[0] > '9')
		return false;
	errno = 0;
	*id = strtoull(name, &end, 10);
	if (errno != 0 || *end != '.')
		return false;
	*plain = end == name + n - 5;
	return true;
}

static bool
is_open(const struct dpmon_capture_bound *b, uint64_t id)
{
	for (unsigned i = 0; i < b->n_open; i++)
		if (b->open_ids[i] == id)
			return true;
	return false;
}

static int
older_first(const void *x, const void *y)
{
	const struct capture_file *a = x, *b = y;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}

/*
 * The capture files of @p dir (its descriptor @p fd, taken) into a
 * malloc'd @p *out, with their count and bytes. @return the count, or
 * -errno.
 */
static int
list_files(int fd, const struct dpmon_capture_bound *b, struct capture_file **out, uint64_t *bytes)
{
	DIR *d = fdopendir(fd);
	struct capture_file *l = NULL, *bigger;
	size_t n = 0, cap = 0;
	struct dirent *e;
	struct stat st;
	uint64_t id;
	bool plain;

	*bytes = 0;
	if (d == NULL) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d)) != NULL) {
		if (!capture_name(e->d_name, &id, &plain) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			bigger = realloc(l, cap * sizeof(*l));
			if (bigger == NULL) {
				free(l);
				closedir(d);
				return -ENOMEM;
			}
			l = bigger;
		}
		l[n] = (struct capture_file){.mtime = st.st_mtim,
					     .bytes = (uint64_t)st.st_size,
					     .open = plain && is_open(b, id)};
		snprintf(l[n].name, sizeof(l[n].name), "%s", e->d_name);
		if (l[n].open && l[n].bytes < b->file_max_bytes)
			l[n].bytes = b->file_max_bytes;
		*bytes += l[n].bytes;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(l, n, sizeof(*l), older_first);
	*out = l;
	return (int)n;
}

int
dpmon_capture_dir_prune(const char *dir, const struct dpmon_capture_bound *b, unsigned new_files)
{
	uint64_t bytes, room = (uint64_t)new_files * b->file_max_bytes;
	struct capture_file *l = NULL;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n, removed = 0;
	uint64_t files;

	if (fd < 0)
		return -errno;
	n = list_files(fd, b, &l, &bytes);
	if (n < 0)
		return n;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	files = (uint64_t)n;
	for (int i = 0;
	     fd >= 0 && i < n && (files + new_files > b->max_files || bytes + room > b->max_bytes);
	     i++) {
		if (l[i].open || unlinkat(fd, l[i].name, 0) != 0)
			continue;
		files--;
		bytes -= l[i].bytes;
		removed++;
	}
	if (fd >= 0)
		close(fd);
	free(l);
	if (removed > 0)
		dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_NOTICE,
			  "sample: %s: %d oldest capture file(s) removed, to stay within"
			  " actions.pcap_max_files and pcap_max_mb",
			  dir, removed);
	return files + new_files > b->max_files || bytes + room > b->max_bytes ? -ENOSPC : removed;
}
