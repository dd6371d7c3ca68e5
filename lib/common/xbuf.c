/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export_buf.c — the growable buffer the encoders write a batch into
 * (export_private.h). Integers are written by hand rather than through
 * printf: a batch of a million hosts holds tens of millions of them.
 */
#include "export_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for @p n more bytes. */
static bool
xbuf_room(struct xbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
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
xbuf_free(struct xbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
