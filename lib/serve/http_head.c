/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_head.c — the request-head scanner: judges the bytes a client sent
 * first (request line, header fields, the empty line, RFC 9112 2 to 6) and
 * a request's message framing (RFC 9112 6.3), byte by byte, before
 * libmicrohttpd reads them. Pure: no state, no I/O, no allocation; the
 * caller (http_guard.c, http.c) owns the connection and the answer.
 */
#include "http_head.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "api.h"

#define METHOD_MAX 32

/* The refusal texts below spell these limits out. */
_Static_assert(DPMON_HTTP_LINE_MAX == 8192 && DPMON_HTTP_HEAD_MAX == 16384 &&
		       DPMON_HTTP_MAX_FIELDS == 64,
	       "update the refusal texts");

/* tchar (RFC 9110 5.6.2): the bytes of a method or a field name. */
static bool
is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static struct dpmon_http_verdict
refuse(unsigned status, const char *message)
{
	return (struct dpmon_http_verdict){.status = status, .message = message};
}

/* 1 to 18 decimal digits (no sign, no space): a value that fits in 63 bits. */
static bool
is_length(const char *s, size_t n)
{
	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

struct dpmon_http_verdict
dpmon_http_framing_check(const struct dpmon_http_framing *f)
{
	if (f->n_content_length > 0 && f->n_transfer_encoding > 0)
		return refuse(400, "both Content-Length and Transfer-Encoding in one request");
	if (f->n_content_length > 1)
		return refuse(400, "repeated Content-Length");
	if (f->n_content_length == 1 && !is_length(f->content_length, f->content_length_len))
		return refuse(400, "invalid Content-Length: expected 1 to 18 decimal digits");
	if (f->n_transfer_encoding > 1 ||
	    (f->n_transfer_encoding == 1 && (f->transfer_encoding_len != 7 ||
					     strncasecmp(f->transfer_encoding, "chunked", 7) != 0)))
		return refuse(501, "unsupported Transfer-Encoding: only chunked");
	return refuse(0, NULL);
}

/* The state of a head being read by dpmon_http_head_check. */
struct head_scan {
	const unsigned char *b;
	size_t len, i;
	size_t line_start; /* of the request line */
	bool line_done;
	struct dpmon_http_verdict *v;
};

/* The refusals of a head over a limit (this file's, and dpmon_http_head_limits's). */
static const char line_too_long[] = "request line over 8192 bytes";
static const char head_too_long[] = "request head over 16384 bytes";
static const char too_many_fields[] = "more than 64 header fields";
static const char bad_version[] = "HTTP version not supported (only HTTP/1.0 and HTTP/1.1)";
_Static_assert(DPMON_HTTP_LINE_MAX == 8192 && DPMON_HTTP_HEAD_MAX == 16384 &&
		       DPMON_HTTP_MAX_FIELDS == 64,
	       "update the refusal texts");

/* Out of bytes: wait for more, unless the line or head is already too long. */
static int
need_more(struct head_scan *s)
{
	if (!s->line_done && s->len - s->line_start > DPMON_HTTP_LINE_MAX) {
		*s->v = refuse(414, line_too_long);
		return -1;
	}
	if (s->len > DPMON_HTTP_HEAD_MAX) {
		*s->v = refuse(431, head_too_long);
		return -1;
	}
	return 0;
}

static int
bad(struct head_scan *s, unsigned status, const char *message)
{
	*s->v = refuse(status, message);
	return -1;
}

/* At a line end ("\r\n" or a bare "\n", RFC 9112 2.2): @return 1 and skip it,
 * 0 when the bytes end inside it, -1 for anything else (a CR without LF). */
static int
line_end(struct head_scan *s)
{
	if (s->b[s->i] == '\n') {
		s->i++;
		return 1;
	}
	if (s->b[s->i] != '\r')
		return -1;
	if (s->i + 1 >= s->len)
		return 0;
	if (s->b[s->i + 1] != '\n')
		return -1;
	s->i += 2;
	return 1;
}

/* Count the query parameters of the target b[from, to) as libmicrohttpd
 * would parse them: the non-empty pieces between '&' after the first '?'. */
static unsigned
query_params(const unsigned char *b, size_t from, size_t to)
{
	unsigned n = 0;
	bool query = false;

	for (size_t i = from; i < to; i++) {
		if (!query) {
			query = b[i] == '?';
			if (query && i + 1 < to && b[i + 1] != '&')
				n++;
		} else if (b[i] == '&' && i + 1 < to && b[i + 1] != '&') {
			n++;
		}
	}
	return n;
}

/* "METHOD SP target SP HTTP/d.d" and its line end. */
static int
scan_request_line(struct head_scan *s, bool *head_method)
{
	static const char version[] = "HTTP/";
	size_t m, t, d;
	int e;

	while (s->i < s->len && (s->b[s->i] == '\r' || s->b[s->i] == '\n'))
		s->i++; /* empty lines before the request line are ignored (RFC 9112 2.2) */
	s->line_start = m = s->i;
	while (s->i < s->len && is_tchar(s->b[s->i]) && s->i - m <= METHOD_MAX)
		s->i++;
	if (s->i == s->len)
		return need_more(s);
	if (s->b[s->i] != ' ' || s->i == m || s->i - m > METHOD_MAX)
		return bad(s, 400, "not an HTTP request");
	*head_method = s->i - m == 4 && memcmp(s->b + m, "HEAD", 4) == 0;
	t = ++s->i;
	while (s->i < s->len && s->b[s->i] > 0x20 && s->b[s->i] < 0x7f)
		s->i++;
	if (s->i == s->len)
		return need_more(s);
	if (s->b[s->i] != ' ' || s->i == t)
		return bad(s, 400, "invalid request target: expected visible ASCII, then a space");
	if (query_params(s->b, t, s->i) > DPMON_API_MAX_ARGS)
		return bad(s, 400, "too many query parameters");
	s->i++;
	for (size_t k = 0; k < sizeof(version) - 1; k++, s->i++) {
		if (s->i == s->len)
			return need_more(s);
		if (s->b[s->i] != (unsigned char)version[k])
			return bad(s, 400, "not an HTTP request");
	}
	d = s->i; /* the major digit */
	for (size_t k = 0; k < 3; k++, s->i++) {
		if (s->i == s->len)
			return need_more(s);
		if (k == 1 ? s->b[s->i] != '.' : (s->b[s->i] < '0' || s->b[s->i] > '9'))
			return bad(s, 400, "not an HTTP request");
	}
	if (s->i == s->len || (e = line_end(s)) == 0)
		return need_more(s);
	if (e < 0)
		return bad(s, 400, "not an HTTP request");
	s->line_done = true;
	if (s->i - s->line_start > DPMON_HTTP_LINE_MAX)
		return bad(s, 414, line_too_long);
	if (s->b[d] != '1' || s->b[d + 2] > '1')
		return bad(s, 505, bad_version);
	return 1;
}

/* Note field b[n, n + nl) with value b[v, v + vl) for the framing check. */
static void
note_field(struct head_scan *s, size_t n, size_t nl, size_t v, size_t vl,
	   struct dpmon_http_framing *f)
{
	const char *name = (const char *)s->b + n, *value = (const char *)s->b + v;

	if (nl == 14 && strncasecmp(name, "Content-Length", 14) == 0) {
		if (f->n_content_length++ == 0) {
			f->content_length = value;
			f->content_length_len = vl;
		}
	} else if (nl == 17 && strncasecmp(name, "Transfer-Encoding", 17) == 0) {
		if (f->n_transfer_encoding++ == 0) {
			f->transfer_encoding = value;
			f->transfer_encoding_len = vl;
		}
	}
}

/* One "name: value" line, or the empty line ending the head (@return 2). */
static int
scan_field(struct head_scan *s, unsigned *fields, struct dpmon_http_framing *f)
{
	size_t n = s->i, nl, v, ve;
	int e;

	if (s->b[s->i] == '\r' || s->b[s->i] == '\n') {
		if ((e = line_end(s)) == 0)
			return need_more(s);
		return e < 0 ? bad(s, 400, "a CR without LF in the request head") : 2;
	}
	if (s->b[s->i] == ' ' || s->b[s->i] == '\t')
		return bad(s, 400, "obsolete line folding in a header field");
	while (s->i < s->len && is_tchar(s->b[s->i]))
		s->i++;
	if (s->i == s->len)
		return need_more(s);
	if (s->b[s->i] != ':' || s->i == n)
		return bad(s, 400, "invalid header field: expected a name, then ':'");
	nl = s->i - n;
	v = ++s->i;
	while (s->i < s->len && s->b[s->i] != '\r' && s->b[s->i] != '\n') {
		unsigned char ch = s->b[s->i++];

		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return bad(s, 400, "a control byte in a header field");
	}
	if (s->i == s->len)
		return need_more(s);
	ve = s->i;
	if ((e = line_end(s)) == 0)
		return need_more(s);
	if (e < 0)
		return bad(s, 400, "a CR without LF in the request head");
	if (++*fields > DPMON_HTTP_MAX_FIELDS)
		return bad(s, 431, too_many_fields);
	while (v < ve && (s->b[v] == ' ' || s->b[v] == '\t'))
		v++;
	while (ve > v && (s->b[ve - 1] == ' ' || s->b[ve - 1] == '\t'))
		ve--;
	note_field(s, n, nl, v, ve - v, f);
	return 1;
}

int
dpmon_http_head_check(const char *buf, size_t len, size_t *head_len, bool *head_method,
		      struct dpmon_http_verdict *v)
{
	struct head_scan s = {.b = (const unsigned char *)buf, .len = len, .v = v};
	struct dpmon_http_framing f = {0};
	unsigned fields = 0;
	int r;

	*v = refuse(0, NULL);
	*head_method = false;
	if ((r = scan_request_line(&s, head_method)) != 1)
		return r;
	for (;;) {
		if (s.i == s.len)
			return need_more(&s);
		r = scan_field(&s, &fields, &f);
		if (r == 2)
			break;
		if (r != 1)
			return r;
	}
	if (s.i > DPMON_HTTP_HEAD_MAX)
		return bad(&s, 431, head_too_long);
	*v = dpmon_http_framing_check(&f);
	if (v->status != 0)
		return -1;
	*head_len = s.i;
	return 1;
}

struct dpmon_http_verdict
dpmon_http_head_limits(bool target_over, size_t head_len, unsigned n_fields, const char *version)
{
	if (target_over)
		return refuse(414, line_too_long);
	if (head_len > DPMON_HTTP_HEAD_MAX)
		return refuse(431, head_too_long);
	if (n_fields > DPMON_HTTP_MAX_FIELDS)
		return refuse(431, too_many_fields);
	if (version == NULL ||
	    (strcmp(version, "HTTP/1.1") != 0 && strcmp(version, "HTTP/1.0") != 0))
		return refuse(505, bad_version);
	return refuse(0, NULL);
}
