/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_entry.c — one worker entry as the merger reads and retires it:
 * its counters (low words from the worker, high words from the carry
 * records the merger keeps), and a request that the worker retire it.
 *
 * A leaf of the merge: merge_fold.c (the fold of the touched hosts, and
 * the idle entries its scan finds) and merge_life.c (the final counts of
 * a retired entry, the least recently active entries of a full table)
 * both call it; it calls no other file of the merge.
 */
#include "merge_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

/* Retire requests one merge makes at most per worker (a bounded pause). */
#define REQUESTS_MAX DPMON_RETIRE_RING

/* ------------------------------------------------------------------------
 * Carries: the high words of the host counters.
 * --------------------------------------------------------------------- */

/* The high words kept for entry @p idx of core @p c, zeroed on first use; NULL: no memory. */
static struct carry_hi *
carry_of(struct dpmon_merge *m, unsigned c, uint32_t idx)
{
	uint32_t *slot = &m->workers.map[c].carry[idx];

	if (*slot == 0) {
		if (m->fold.n_carries == m->fold.cap_carries) {
			uint32_t cap = m->fold.cap_carries ? m->fold.cap_carries * 2 : 64;
			void *p = realloc(m->fold.carries, sizeof(*m->fold.carries) * cap);

			if (p == NULL)
				return NULL;
			m->fold.carries = p;
			m->fold.cap_carries = cap;
		}
		memset(&m->fold.carries[m->fold.n_carries], 0, sizeof(*m->fold.carries));
		*slot = ++m->fold.n_carries;
	}
	return &m->fold.carries[*slot - 1];
}

int
merge_consume_carries(struct dpmon_merge *m, unsigned c)
{
	struct dpmon_core *core = m->workers.core[c];
	uint32_t head = __atomic_load_n(&core->carry_head, __ATOMIC_ACQUIRE);
	uint32_t tail = core->carry_tail;

	for (; tail != head; tail++) {
		uint32_t rec = core->carry[tail & (DPMON_CARRY_RING - 1)];
		struct carry_hi *h = carry_of(m, c, rec / DPMON_HOST_SLOTS);

		if (h == NULL)
			return -ENOMEM;
		h->hi[rec % DPMON_HOST_SLOTS]++;
		/* Released one record at a time: on -ENOMEM the rest stays queued. */
		__atomic_store_n(&core->carry_tail, tail + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Retire requests.
 * --------------------------------------------------------------------- */

bool
merge_retire_request(struct dpmon_merge *m, unsigned c, uint32_t i, uint32_t stamp,
		     enum dpmon_retire_why why)
{
	uint64_t v = dpmon_retire_req(i, stamp, why);

	if (rte_ring_sp_enqueue_elem(m->workers.core[c]->retire_ring, &v, sizeof(v)) != 0)
		return false;
	m->workers.map[c].state[i] = ENTRY_PENDING;
	m->workers.map[c].pending++;
	return true;
}

uint32_t
merge_retire_budget(const struct dpmon_merge *m, unsigned c)
{
	return RTE_MIN(rte_ring_free_count(m->workers.core[c]->retire_ring),
		       (unsigned)REQUESTS_MAX);
}
