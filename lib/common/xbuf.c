/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xbuf.c — the growable text buffer (xbuf.h). Integers are written by hand
 * rather than through printf: an export batch or a Prometheus page of a
 * million hosts holds tens of millions of them.
 */
#include "xbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
xbuf_grow(struct xbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	if (n > SIZE_MAX / 2 - b->len) {
		b->oom = true;
		return false;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

char *
xbuf_reserve(struct xbuf *b, size_t n)
{
	return xbuf_room(b, n) ? b->p + b->len : NULL;
}

void
xbuf_put(struct xbuf *b, const char *s, size_t n)
{
	if (!xbuf_room(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void
xbuf_puts(struct xbuf *b, const char *s)
{
	xbuf_put(b, s, strlen(s));
}

void
xbuf_putc(struct xbuf *b, char c)
{
	if (xbuf_room(b, 1))
		b->p[b->len++] = c;
}

void
xbuf_u64(struct xbuf *b, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	if (!xbuf_room(b, (size_t)n))
		return;
	while (n > 0)
		b->p[b->len++] = tmp[--n];
}

void
xbuf_double(struct xbuf *b, double v)
{
	char tmp[32];
	uint64_t milli, frac;
	int n;

	if (!isfinite(v))
		v = 0;
	/* Rates and averages to the thousandth, by hand: printf's %f costs
	 * more than the rest of a row. */
	if (v >= 0 && v < 1e15) {
		milli = (uint64_t)llround(v * 1000.0);
		xbuf_u64(b, milli / 1000);
		frac = milli % 1000;
		if (frac != 0) {
			char d[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
				     (char)('0' + frac % 10)};
			size_t len = 4;

			while (d[len - 1] == '0')
				len--;
			xbuf_put(b, d, len);
		}
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.6f", v);
	while (n > 1 && tmp[n - 1] == '0')
		n--;
	if (n > 1 && tmp[n - 1] == '.')
		n--;
	xbuf_put(b, tmp, (size_t)n);
}

void
xbuf_printf(struct xbuf *b, const char *fmt, ...)
{
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	/* Room for the NUL vsnprintf writes, which len does not count. */
	if (n < 0)
		b->oom = true;
	else if (xbuf_room(b, (size_t)n + 1)) {
		vsnprintf(b->p + b->len, (size_t)n + 1, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
}

char *
xbuf_cstr(struct xbuf *b)
{
	if (!xbuf_room(b, 1))
		return NULL;
	b->p[b->len] = '\0';
	return b->p;
}

void
xbuf_shrink(struct xbuf *b)
{
	char *p;

	if (b->p == NULL || b->cap <= b->len + 1)
		return;
	p = realloc(b->p, b->len + 1);
	if (p != NULL) {
		b->p = p;
		b->cap = b->len + 1;
	}
}

void
xbuf_free(struct xbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
