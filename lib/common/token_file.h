/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * token_file.h — reading a credential from its file, through the one file
 * reader (file.h: a regular file, opened without blocking, of bounded
 * size), one line that is neither empty nor cut:
 *  - a secret dpmon sends (export.*.password_file, export.influxdb.token_file):
 *    at most DPMON_SECRET_MAX bytes once one trailing line break is
 *    stripped, no other line break and no NUL byte (nothing would be cut
 *    from it on the way to the server);
 *  - a bearer token dpmon checks (http.write_token_file,
 *    http.read_token_file): also a private file (mode & 077 == 0), of at
 *    most DPMON_TOKEN_MAX bytes, made only of the characters of a
 *    b64token (RFC 6750 2.1), so that it can be sent as is in an
 *    Authorization header.
 * A FIFO, a directory, a device, an empty file or a longer one is refused
 * with its reason ("not a regular file (FIFO)", "empty", "longer than 511
 * bytes"), for the caller to put after the file's name.
 *
 * Thread-safety: no state; any thread.
 */
#ifndef DPMON_TOKEN_FILE_H
#define DPMON_TOKEN_FILE_H

#include <stddef.h>

/** Longest token in bytes, NUL excluded. */
#define DPMON_TOKEN_MAX 512

/** Longest secret (password, API token of an export backend) in bytes, NUL excluded. */
#define DPMON_SECRET_MAX 511

/**
 * Read the secret in @p path into @p out: the file's one line, without
 * its line break.
 * @param path    the file.
 * @param out     receives the secret, NUL-terminated; untouched on failure.
 * @param len     receives its length in bytes (1..DPMON_SECRET_MAX).
 * @param err     receives the reason of a refusal ("empty", "more than one
 *                line", "not a regular file (FIFO)"); may be NULL.
 * @param errlen  size of @p err in bytes.
 * @return 0, or -errno as dpmon_file_read (-ENOENT, -EISDIR, -EINVAL for
 *         a FIFO or device, ...), -EINVAL for an empty file, a second line
 *         or a NUL byte, -EFBIG for a longer secret.
 * Any thread.
 */
int dpmon_secret_file_read(const char *path, char out[DPMON_SECRET_MAX + 1], size_t *len, char *err,
			   size_t errlen);

/**
 * Read the token in @p path into @p out.
 * @param path    the token file.
 * @param out     receives the token, NUL-terminated; untouched on failure.
 * @param len     receives its length in bytes (1..DPMON_TOKEN_MAX).
 * @param err     receives the reason of a refusal ("empty", "group or
 *                others may access it ...", "not a regular file (FIFO)");
 *                may be NULL.
 * @param errlen  size of @p err in bytes.
 * @return 0, or -errno as dpmon_file_read_private, -EINVAL for an empty
 *         token or a character outside b64token, -EFBIG for a longer token.
 * Any thread.
 */
int dpmon_token_file_read(const char *path, char out[DPMON_TOKEN_MAX + 1], size_t *len, char *err,
			  size_t errlen);

#endif /* DPMON_TOKEN_FILE_H */
