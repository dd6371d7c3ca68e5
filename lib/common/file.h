/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file.h — reading a file dpmon is given (the configuration, the
 * blackholes' state file) without ever blocking the calling thread.
 *
 * A path may name something else than a regular file: a FIFO (whose open
 * and read wait for a writer), a character device (/dev/zero, endless), a
 * directory, a socket. dpmon_file_open opens with O_NONBLOCK (a FIFO's
 * open returns at once), fstat's what it opened and refuses anything but
 * a regular file of at most a given size; dpmon_file_read then reads it
 * whole, never past that size (a file that grows while read is refused
 * too). The reason of a refusal is a short text for the caller to put
 * after the file's name: "not a regular file (FIFO)", "larger than
 * 67108864 bytes", or strerror's text ("Is a directory").
 *
 * Thread-safety: no state; any thread.
 */
#ifndef DPMON_FILE_H
#define DPMON_FILE_H

#include <stddef.h>
#include <stdint.h>

/**
 * Open @p path for reading without blocking (O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | O_CLOEXEC) and check that it is a regular file of at most
 * @p max_bytes bytes.
 * @param path       the file.
 * @param max_bytes  largest size accepted, in bytes; 0 = any size.
 * @param err        receives the reason of a refusal (NUL-terminated,
 *                   truncated to @p errlen); may be NULL.
 * @param errlen     size of @p err in bytes.
 * @return the file descriptor (the caller closes it), or -errno:
 *         open's errno (-ENOENT, -EACCES, ...), -EISDIR for a directory,
 *         -EINVAL for any other file that is not a regular one (FIFO,
 *         device, socket), -EFBIG when larger than @p max_bytes.
 * Any thread.
 */
int dpmon_file_open(const char *path, uint64_t max_bytes, char *err, size_t errlen);

/**
 * Read all of @p path, a regular file of at most @p max_bytes bytes
 * (dpmon_file_open), into a malloc'd buffer, NUL-terminated after its
 * @p *len bytes (so a text can be used as a string; the file may hold
 * NUL bytes of its own).
 * @param path       the file.
 * @param max_bytes  largest size accepted, in bytes, >= 1.
 * @param buf        receives the buffer (the caller frees it); untouched
 *                   on failure.
 * @param len        receives the file's length in bytes (0 for an empty file).
 * @param err        receives the reason of a refusal, as dpmon_file_open; may be NULL.
 * @param errlen     size of @p err in bytes.
 * @return 0, or -errno as dpmon_file_open, -EFBIG also when the file grew
 *         past @p max_bytes while read, -ENOMEM, or read's errno (-EIO).
 * Any thread.
 */
int dpmon_file_read(const char *path, size_t max_bytes, char **buf, size_t *len, char *err,
		    size_t errlen);

/**
 * dpmon_file_read for a credential: also refuses a file that its group or
 * others may read or write (mode & 077 != 0, checked on the open file).
 * @param path       the file.
 * @param max_bytes  largest size accepted, in bytes, >= 1.
 * @param buf        receives the buffer (the caller frees it); untouched on failure.
 * @param len        receives the file's length in bytes.
 * @param err        receives the reason of a refusal; may be NULL.
 * @param errlen     size of @p err in bytes.
 * @return 0, or -errno as dpmon_file_read, -EPERM for a file others may access.
 * Any thread.
 */
int dpmon_file_read_private(const char *path, size_t max_bytes, char **buf, size_t *len, char *err,
			    size_t errlen);

#endif /* DPMON_FILE_H */
