/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * token_file.c — a credential from its file (token_file.h): one line read
 * through the one file reader (file.h), with its private-file check for
 * the bearer tokens dpmon checks.
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

/* Why the line @p buf of @p n bytes (its line break stripped) is no
 * credential, or NULL when it is one. */
static const char *
line_refusal(const char *buf, size_t n)
{
	if (n == 0)
		return "empty";
	if (memchr(buf, '\n', n) != NULL || memchr(buf, '\r', n) != NULL)
		return "more than one line";
	if (memchr(buf, '\0', n) != NULL)
		return "holds a NUL byte";
	return NULL;
}

/*
 * The one line of @p path (a private file when @p private) into @p out of
 * @p max + 1 bytes, without one trailing "\n" or "\r\n"; on failure @p out
 * is untouched and the reason is in @p err (may be NULL).
 * @return 0 or -errno (token_file.h).
 */
static int
read_line(const char *path, bool private, size_t max, char *out, size_t *len, char *err,
	  size_t errlen)
{
	char *buf = NULL, e[128] = "";
	const char *why;
	size_t n = 0;
	/* room for the line and a "\r\n" after it */
	int rc = private ? dpmon_file_read_private(path, max + 2, &buf, &n, e, sizeof(e))
			 : dpmon_file_read(path, max + 2, &buf, &n, e, sizeof(e));

	if (rc == 0) {
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
		if ((why = line_refusal(buf, n)) != NULL) {
			rc = -EINVAL;
			snprintf(e, sizeof(e), "%s", why);
		} else if (n > max) {
			rc = -EFBIG;
		}
	}
	if (rc == -EFBIG)
		snprintf(e, sizeof(e), "longer than %zu bytes", max);
	if (rc == 0) {
		memcpy(out, buf, n);
		out[n] = '\0';
		*len = n;
	} else if (err != NULL && errlen > 0) {
		snprintf(err, errlen, "%s", e);
	}
	if (buf != NULL)
		explicit_bzero(buf, n);
	free(buf);
	return rc;
}

int
dpmon_secret_file_read(const char *path, char out[DPMON_SECRET_MAX + 1], size_t *len, char *err,
		       size_t errlen)
{
	return read_line(path, false, DPMON_SECRET_MAX, out, len, err, errlen);
}

int
dpmon_token_file_read(const char *path, char out[DPMON_TOKEN_MAX + 1], size_t *len, char *err,
		      size_t errlen)
{
	char tok[DPMON_TOKEN_MAX + 1];
	size_t n = 0, bad = 0;
	int rc = read_line(path, true, DPMON_TOKEN_MAX, tok, &n, err, errlen);

	for (size_t i = 0; rc == 0 && bad == 0 && i < n; i++)
		if (!b64token_char((unsigned char)tok[i]) ||
		    (i > 0 && tok[i - 1] == '=' && tok[i] != '='))
			bad = i + 1;
	if (bad != 0) {
		rc = -EINVAL;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen,
				 "byte %zu is not a token character (RFC 6750 2.1: "
				 "letters, digits, -._~+/ and = at the end)",
				 bad);
	}
	if (rc == 0) {
		memcpy(out, tok, n + 1);
		*len = n;
	}
	explicit_bzero(tok, sizeof(tok));
	return rc;
}
