/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * token_file.h — reading a bearer token from its file (http.write_token_file,
 * http.read_token_file): a private regular file (file.h), not empty, of at
 * most DPMON_TOKEN_MAX bytes once one trailing line break is stripped, and
 * made only of the characters of a b64token (RFC 6750 2.1), so that it can
 * be sent as is in an Authorization header.
 *
 * Thread-safety: no state; any thread.
 */
#ifndef DPMON_TOKEN_FILE_H
#define DPMON_TOKEN_FILE_H

#include <stddef.h>

/** Longest token in bytes, NUL excluded. */
#define DPMON_TOKEN_MAX 512

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
