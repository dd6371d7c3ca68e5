/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file_write.h — creating a file dpmon writes (the blackholes' state file,
 * the --http-port-file, the alerts' capture files) so that nothing planted
 * in the file system can redirect the write.
 *
 * The data goes to a new file under a temporary name dpmon chooses itself,
 * at random, in the target's directory (TARGET.tmp.XXXXXX, mkostemp:
 * O_CREAT | O_EXCL, here with O_NOFOLLOW too), so that no existing file,
 * FIFO or symbolic link is ever opened for writing; its mode is set on the
 * descriptor (fchmod, so the umask cannot widen nor narrow it). Once
 * written, rename(2) puts it in the target's place atomically: a symbolic
 * link that was at the target is replaced, never followed.
 *
 * Modes: DPMON_FILE_MODE_PRIVATE (0600) for what only dpmon reads back
 * (state file, port file), DPMON_FILE_MODE_GROUP (0640) for what a group
 * of operators may read (capture files).
 *
 * Thread-safety: no state; any thread. A temporary left by a crash keeps
 * its random name (TARGET.tmp.XXXXXX) and is never reused.
 */
#ifndef DPMON_FILE_WRITE_H
#define DPMON_FILE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** Mode of a file only dpmon's user reads back: the state file, the port file. */
#define DPMON_FILE_MODE_PRIVATE 0600
/** Mode of a file a group of operators may read: the capture files. */
#define DPMON_FILE_MODE_GROUP   0640

/** What the temporary name adds to the target's: ".tmp.XXXXXX" (mkostemp). */
#define DPMON_FILE_TMP_SUFFIX ".tmp.XXXXXX"

/**
 * Create a new, empty temporary file for @p path in its directory, with a
 * random name (@p path + ".tmp." + 6 random characters), O_CREAT | O_EXCL
 * | O_NOFOLLOW | O_CLOEXEC, open for reading and writing, of mode @p mode.
 * @param path    the target the file is for (dpmon_file_place).
 * @param mode    its permission bits (DPMON_FILE_MODE_PRIVATE, ...).
 * @param tmp     receives the temporary's name, NUL-terminated.
 * @param tmplen  size of @p tmp in bytes; at least strlen(@p path) +
 *                sizeof(DPMON_FILE_TMP_SUFFIX).
 * @return the descriptor (the caller closes it), or -errno: -EINVAL (NULL
 *         or empty @p path), -ENAMETOOLONG (@p tmp too small), or the
 *         errno of mkostemp or fchmod (-EACCES, -ENOENT, -ENOSPC, ...),
 *         with nothing left behind.
 * Any thread.
 */
int dpmon_file_create(const char *path, mode_t mode, char *tmp, size_t tmplen);

/**
 * Put the temporary @p tmp (dpmon_file_create) in @p path's place with
 * rename(2): whatever @p path named before (a file, a symbolic link) is
 * replaced, never written. When @p durable, fsync @p fd first and the
 * directory after, so that the new content survives a power loss. On
 * failure the temporary is removed. @p fd stays open either way.
 * @param fd       the temporary's descriptor, fsync'd when @p durable; -1
 *                 when the caller closed it (after its own fsync).
 * @param tmp      the temporary's name.
 * @param path     the target, in the same directory.
 * @param durable  fsync the file and its directory.
 * @return 0, or -errno of fsync or rename (-EISDIR: @p path is a
 *         directory, -EIO, ...).
 * Any thread.
 */
int dpmon_file_place(int fd, const char *tmp, const char *path, bool durable);

/**
 * Close @p fd (if >= 0) and remove the temporary @p tmp: a file given up
 * before dpmon_file_place.
 * @param fd   the temporary's descriptor, or -1 when already closed.
 * @param tmp  the temporary's name.
 * Any thread.
 */
void dpmon_file_discard(int fd, const char *tmp);

/**
 * Replace @p path by a new file of mode @p mode holding the @p len bytes
 * of @p data: dpmon_file_create, write, dpmon_file_place, close.
 * @param path     the target.
 * @param mode     its permission bits (DPMON_FILE_MODE_PRIVATE, ...).
 * @param data     the content.
 * @param len      its length in bytes.
 * @param durable  fsync the file and its directory before returning.
 * @return 0, or -errno as dpmon_file_create and dpmon_file_place, write's
 *         (-ENOSPC, -EIO, ...) or close's; @p path is then unchanged and
 *         no temporary is left.
 * Any thread.
 */
int dpmon_file_write_new(const char *path, mode_t mode, const void *data, size_t len, bool durable);

#endif /* DPMON_FILE_WRITE_H */
