/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * token_file.c — a bearer token from its file (token_file.h), read through
 * the one file reader (file.h) with its private-file check.
 */
#include "token_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

/* Is @p c a character of b64token (RFC 6750 2.1; '=' only at the end)? */
static bool
b64token_char(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
	       c == '=';
}

int
dpmon_token_file_read(const char *path, char out[DPMON_TOKEN_MAX + 1], size_t *len, char *err,
		      size_t errlen)
{
	char *buf = NULL, e[128] = "";
	size_t n = 0;
	/* room for the token and a "\r\n" after it */
	int rc = dpmon_file_read_private(path, DPMON_TOKEN_MAX + 2, &buf, &n, e, sizeof(e));

	if (rc == -EFBIG)
		snprintf(e, sizeof(e), "longer than %d bytes", DPMON_TOKEN_MAX);
	if (rc == 0) {
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
		if (n == 0) {
			rc = -EINVAL;
			snprintf(e, sizeof(e), "empty");
		} else if (n > DPMON_TOKEN_MAX) {
			rc = -EFBIG;
			snprintf(e, sizeof(e), "longer than %d bytes", DPMON_TOKEN_MAX);
		}
		for (size_t i = 0; rc == 0 && i < n; i++)
			if (!b64token_char((unsigned char)buf[i]) ||
			    (i > 0 && buf[i - 1] == '=' && buf[i] != '=')) {
				rc = -EINVAL;
				snprintf(e, sizeof(e),
					 "byte %zu is not a token character (RFC 6750 2.1: "
					 "letters, digits, -._~+/ and = at the end)",
					 i + 1);
			}
	}
	if (rc == 0) {
		memcpy(out, buf, n);
		out[n] = '\0';
		*len = n;
	} else if (err != NULL && errlen > 0) {
		snprintf(err, errlen, "%s", e);
	}
	free(buf);
	return rc;
}
