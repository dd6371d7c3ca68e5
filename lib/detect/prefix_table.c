/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefix_table.c — longest-prefix match of addresses to a value, on the
 * main lcore or the actions thread (see prefix_table.h).
 *
 * The prefixes of one family are flattened into disjoint address ranges,
 * each with the value of the longest prefix covering it, sorted; a lookup
 * is a binary search. Built once per configuration, a few bytes per prefix
 * (an rte_lpm would take 64 MiB of EAL memory for its tbl24 alone, for
 * lookups that are not on the hot path). Addresses are handled as 128-bit
 * integers (IPv4 as the mapped form ::ffff:a.b.c.d, prefix.h).
 */
#include "prefix_table.h"

#include <errno.h>
#include <stdlib.h>

typedef unsigned __int128 addr128;

static addr128
to128(const struct dpmon_addr *a)
{
	addr128 x = 0;

	for (int i = 0; i < 16; i++)
		x = x << 8 | a->b[i];
	return x;
}

/* A prefix to insert: its range and value. */
struct span {
	addr128 first, last;
	uint32_t value;
};

static int
span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	/* Same start: the wider (outer) prefix first. */
	return a->last > b->last ? -1 : a->last < b->last;
}

/* Append [first, last] = value to @p t (room reserved by the caller). */
static void
emit(struct dpmon_prefix_ranges *t, addr128 first, addr128 last, uint32_t value)
{
	if (t->n > 0 && t->r[t->n - 1].value == value && t->r[t->n - 1].last + 1 == first) {
		t->r[t->n - 1].last = last; /* adjacent pieces of one prefix */
		return;
	}
	t->r[t->n++] = (struct dpmon_prefix_range){first, last, value};
}

/*
 * Flatten @p n spans (prefixes: any two are nested or disjoint) into
 * disjoint ranges valued by the innermost span. A sweep in start order
 * with a stack of the open spans: each span starts a range at its first
 * address; when it closes, the span around it (if any) resumes after it.
 * At most 2n + 1 ranges.
 */
static int
flatten(struct dpmon_prefix_ranges *t, struct span *sp, uint32_t n)
{
	struct span *stack = malloc(sizeof(*stack) * (n ? n : 1));
	uint32_t depth = 0;
	addr128 pos = 0;   /* first address not yet covered by a range */
	bool full = false; /* the address space's last address is covered */

	t->r = malloc(sizeof(*t->r) * (2 * (size_t)n + 1));
	t->n = 0;
	if (stack == NULL || t->r == NULL) {
		free(stack);
		free(t->r);
		t->r = NULL;
		return -ENOMEM;
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (uint32_t i = 0; i <= n; i++) {
		/* Close the open spans that end before span i (all of them at the end). */
		while (depth > 0 && (i == n || stack[depth - 1].last < sp[i].first)) {
			const struct span *top = &stack[--depth];

			if (!full && pos <= top->last)
				emit(t, pos, top->last, top->value);
			if (top->last == ~(addr128)0)
				full = true;
			else if (!full && pos <= top->last)
				pos = top->last + 1;
		}
		if (i == n)
			break;
		if (depth > 0 && pos < sp[i].first)
			emit(t, pos, sp[i].first - 1, stack[depth - 1].value);
		pos = sp[i].first;
		stack[depth++] = sp[i];
	}
	free(stack);
	return 0;
}

/* The value of the innermost prefix of @p t containing @p x, or -1. */
static int64_t
table_lookup(const struct dpmon_prefix_ranges *t, addr128 x)
{
	uint32_t lo = 0, hi = t->n; /* the answer is the last range with first <= x */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].first <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && x <= t->r[lo - 1].last ? (int64_t)t->r[lo - 1].value : -1;
}

void
dpmon_prefix_table_free(struct dpmon_prefix_table *p)
{
	free(p->v4.r);
	free(p->v6.r);
	p->v4.r = p->v6.r = NULL;
}

int
dpmon_prefix_table_build(struct dpmon_prefix_table *p, const struct dpmon_prefix *const *lists,
			 const uint32_t *counts, uint32_t n_lists, bool by_list)
{
	uint32_t n = 0, n4 = 0, n6 = 0;
	struct span *s4, *s6;
	int rc;

	p->v4.r = p->v6.r = NULL;
	p->v4.n = p->v6.n = 0;
	for (uint32_t l = 0; l < n_lists; l++)
		n += counts[l];
	s4 = malloc(sizeof(*s4) * (n ? n : 1));
	s6 = malloc(sizeof(*s6) * (n ? n : 1));
	if (s4 == NULL || s6 == NULL) {
		free(s4);
		free(s6);
		return -ENOMEM;
	}
	for (uint32_t l = 0; l < n_lists; l++)
		for (uint32_t i = 0; i < counts[l]; i++) {
			const struct dpmon_prefix *x = &lists[l][i];
			/* Bits of the 128-bit address the prefix fixes. */
			unsigned bits = x->family == 4 ? 96u + x->depth : x->depth;
			addr128 host = bits >= 128 ? 0 : ~(addr128)0 >> bits;
			struct span sp = {to128(&x->addr), to128(&x->addr) | host, by_list ? l : 1};

			if (x->family == 4)
				s4[n4++] = sp;
			else
				s6[n6++] = sp;
		}
	rc = flatten(&p->v4, s4, n4);
	if (rc == 0)
		rc = flatten(&p->v6, s6, n6);
	free(s4);
	free(s6);
	if (rc != 0)
		dpmon_prefix_table_free(p);
	return rc;
}

int64_t
dpmon_prefix_table_lookup(const struct dpmon_prefix_table *p, const struct dpmon_addr *a)
{
	return table_lookup(dpmon_addr_is_v4(a) ? &p->v4 : &p->v6, to128(a));
}
