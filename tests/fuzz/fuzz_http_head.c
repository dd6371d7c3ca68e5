/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_http_head.c — libFuzzer target for the request-head scanner
 * (lib/serve/http_head.c), which reads every byte a client sends to the
 * management port before libmicrohttpd does.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined from the scanner's
 * source alone (tests/meson.build); its seeds are tests/fuzz/http_head/,
 * one file per accepted head and per refusal the guard answers.
 *
 * The input is the bytes received so far. Each input is copied into a heap
 * block of exactly its size, so ASan reports any read past the bytes
 * received. Invariants checked (abort() on violation, which libFuzzer
 * reports):
 *   - the result is 1, 0 or -1; 1 and 0 come with status 0 and no text,
 *     -1 with one of the statuses of http_head.h (400, 414, 431, 501, 505)
 *     and a text;
 *   - 1: the head ends inside the input, at an empty line, and is at most
 *     DPMON_HTTP_HEAD_MAX bytes; the head alone is judged the same (the
 *     bytes after it are never looked at); "HEAD" is noted only for a head
 *     that starts with that method;
 *   - 0: the input is at most DPMON_HTTP_HEAD_MAX bytes (a longer one is
 *     refused, never waited on);
 *   - a verdict is never taken back as bytes arrive: a prefix of an
 *     accepted input waits until it holds the whole head, then gives the
 *     same head; every prefix of a waiting input waits; no prefix of a
 *     refused input is accepted (it may wait, or be refused for a limit
 *     it reached first). Checked on the prefixes one byte and half the
 *     input shorter.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_head.h"

struct judged {
	int r;
	size_t head_len;
	bool head_method;
	struct dpmon_http_verdict v;
};

static struct judged
judge(const uint8_t *data, size_t size)
{
	/* An exact-size copy: a read past the end is a heap overflow. */
	char *buf = malloc(size > 0 ? size : 1);
	struct judged j = {.head_len = SIZE_MAX};

	if (buf == NULL)
		abort();
	if (size > 0)
		memcpy(buf, data, size);
	j.r = dpmon_http_head_check(buf, size, &j.head_len, &j.head_method, &j.v);
	free(buf);
	return j;
}

static bool
refusal_status(unsigned status)
{
	return status == 400 || status == 414 || status == 431 || status == 501 || status == 505;
}

/* The verdict on the first @p n bytes of an input judged @p whole. */
static void
check_prefix(const struct judged *whole, const uint8_t *data, size_t n)
{
	struct judged p = judge(data, n);

	switch (whole->r) {
	case 1: /* the head is found as soon as it is whole, not before */
		if (p.r != (n >= whole->head_len ? 1 : 0) ||
		    (p.r == 1 && p.head_len != whole->head_len))
			abort();
		break;
	case 0: /* nothing wrong yet: nothing wrong before */
		if (p.r != 0)
			abort();
		break;
	default: /* refused: never acceptable before (a prefix may wait) */
		if (p.r == 1)
			abort();
		break;
	}
}

/* Whether the request line of @p data (after the empty lines that may
 * precede it) starts with the method HEAD. */
static bool
starts_with_head(const uint8_t *data, size_t size)
{
	size_t i = 0;

	while (i < size && (data[i] == '\r' || data[i] == '\n'))
		i++;
	return size - i >= 5 && memcmp(data + i, "HEAD ", 5) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct judged j = judge(data, size);

	switch (j.r) {
	case 1:
		if (j.v.status != 0 || j.v.message != NULL || j.head_len < 2 || j.head_len > size ||
		    j.head_len > DPMON_HTTP_HEAD_MAX || data[j.head_len - 1] != '\n')
			abort();
		if (j.head_method != starts_with_head(data, size))
			abort();
		if (j.head_len < size) { /* the head alone: the same verdict */
			struct judged h = judge(data, j.head_len);

			if (h.r != 1 || h.head_len != j.head_len || h.head_method != j.head_method)
				abort();
		}
		break;
	case 0:
		if (j.v.status != 0 || j.v.message != NULL || size > DPMON_HTTP_HEAD_MAX)
			abort();
		break;
	case -1:
		if (!refusal_status(j.v.status) || j.v.message == NULL || j.v.message[0] == '\0')
			abort();
		break;
	default:
		abort();
	}
	if (size > 0)
		check_prefix(&j, data, size - 1);
	if (size > 1)
		check_prefix(&j, data, size / 2);
	return 0;
}
