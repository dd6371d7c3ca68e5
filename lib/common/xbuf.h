/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xbuf.h — the growable text buffer: a body or a batch written one piece
 * after another (exporters' batches, the Prometheus text, the API's long
 * listings). Out of memory sticks: once an allocation failed, @c oom is set,
 * later pieces are dropped, and the owner answers -ENOMEM for the whole.
 *
 * Not thread-safe: a buffer belongs to the thread that writes it.
 */
#ifndef DPMON_XBUF_H
#define DPMON_XBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A growable byte buffer; zero-initialised it is empty and usable. */
struct xbuf {
	char *p;    /**< malloc'd bytes; NULL until the first piece */
	size_t len; /**< bytes written */
	size_t cap; /**< bytes allocated */
	bool oom;   /**< an allocation failed: the text is incomplete */
};

/**
 * Grow @p b so that @p n more bytes fit; xbuf_room's slow path.
 * @param n bytes to add.
 * @return true when they fit, false when out of memory (@c oom set).
 */
bool xbuf_grow(struct xbuf *b, size_t n);

/**
 * Room for @p n more bytes, at once when there is (every piece asks).
 * @param n bytes to add.
 * @return true when they fit, false once @p b is out of memory.
 */
static inline bool
xbuf_room(struct xbuf *b, size_t n)
{
	return (!b->oom && b->cap - b->len >= n) || xbuf_grow(b, n);
}

/**
 * Room for @p n more bytes: where to write them (then add what was
 * written to @c len).
 * @param n bytes to add.
 * @return the first free byte, or NULL when out of memory (@c oom set).
 */
char *xbuf_reserve(struct xbuf *b, size_t n);

/**
 * Append the @p n bytes of @p s (any bytes, NULs included).
 * @param n length of @p s in bytes.
 */
void xbuf_put(struct xbuf *b, const char *s, size_t n);

/** Append the NUL-terminated text @p s, without its NUL. */
void xbuf_puts(struct xbuf *b, const char *s);

/** Append the byte @p c. */
void xbuf_putc(struct xbuf *b, char c);

/** Append @p v in decimal, as "%" PRIu64 prints it. */
void xbuf_u64(struct xbuf *b, uint64_t v);

/** Append @p v to the thousandth, trailing zeros dropped ("12.5", "3"); NaN and infinities as 0. */
void xbuf_double(struct xbuf *b, double v);

/** Append the printf-formatted text; an encoding error sets @c oom as a failed piece. */
__attribute__((format(printf, 2, 3))) void xbuf_printf(struct xbuf *b, const char *fmt, ...);

/**
 * End the text with a NUL that @c len does not count.
 * @return the text, or NULL when @p b is out of memory.
 */
char *xbuf_cstr(struct xbuf *b);

/** Give back the room past the text and one byte for its NUL (kept when realloc fails). */
void xbuf_shrink(struct xbuf *b);

/** Free @p b's bytes and empty it (usable again). */
void xbuf_free(struct xbuf *b);

#endif /* DPMON_XBUF_H */
