/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_life.c — the hosts' life cycle on the merger's side: which worker
 * entries retire, what their last counts become, and when a host leaves
 * the snapshots.
 *
 * A worker entry retires in a round trip (counters.h; docs/architecture.md,
 * "Host life cycle"):
 *   1. a merge asks (retire ring) for an entry not touched in its own
 *      interval (stamp below the epoch it handed out for it), giving
 *      the stamp it saw: entries idle for host_idle_timeout_s, and
 *      on a table with no never-used entry left, the least recently
 *      active ones, until the entries free or on their way cover the
 *      table's reserve plus its misses of the last interval;
 *   2. the worker drops the entry from its index if the stamp is still
 *      that one, and answers DEAD (else KEPT: a packet came since);
 *   3. the next drain (during the same merge's end, or the next merge's
 *      start) reads the DEAD entry's final counts (no packet reaches it
 *      any more, and the answer's release orders its last stores before),
 *      adds them to its host's base (hosts.g_base: what the fold starts
 *      from), unchains it and hands it back on the free ring;
 *   4. the worker gives it to its next new host, zeroed, and says NEW.
 * A host none of whose entries is left leaves at the next merge's start:
 * out of the hash, the order and the records; its id goes to the next new
 * host. If it comes back meanwhile (a new entry, in any worker), it stays,
 * its base and its new entries' counts adding up as before: no packet is
 * lost or counted twice either way. A host that comes back after it left
 * starts from zero.
 *
 * Pinned hosts (an alert or a blackhole: dpmon_merge_pin) are never asked
 * for. A worker cannot wait for the merge, so a table about to fill keeps
 * entries free for the next interval's new hosts: as many as the most of
 * its reserve (a sixty-fourth of the table, 8 .. 1024 entries) and the
 * last interval's demand (the new hosts it took plus the updates that
 * found no entry), at most half the table. The hosts this costs leave at most that
 * many entries earlier than an exact least-recently-used order on demand
 * would make them (docs/architecture.md).
 */
#include "merge_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_debug.h>
#include <rte_hash.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

/* Longest wait at the end of a merge for the answers to its requests. */
#define ANSWER_WAIT_MS 2
/* Reserve of a full table: capacity / RESERVE_DIV, clamped. */
#define RESERVE_DIV    64u
#define RESERVE_MIN    8u
#define RESERVE_MAX    1024u

/* ------------------------------------------------------------------------
 * Bases: the final counts of a host's retired entries.
 * --------------------------------------------------------------------- */

/* Global id @p id's base, zeroed on first use. NULL: no memory. */
static struct dpmon_pair_ctr *
base_of(struct dpmon_merge *m, uint32_t id)
{
	struct merge_fold *f = &m->fold;
	uint32_t b = m->hosts.g_base[id];

	if (b != 0)
		return &f->bases[b - 1];
	if (f->n_free_bases > 0) {
		b = f->free_bases[--f->n_free_bases];
	} else {
		if (f->n_bases == f->cap_bases) {
			uint32_t cap = f->cap_bases ? f->cap_bases * 2 : 64;
			void *p = realloc(f->bases, sizeof(*f->bases) * cap);
			void *q;

			if (p == NULL)
				return NULL;
			f->bases = p;
			q = realloc(f->free_bases, sizeof(*f->free_bases) * cap);
			if (q == NULL)
				return NULL;
			f->free_bases = q;
			f->cap_bases = cap;
		}
		b = ++f->n_bases;
	}
	memset(&f->bases[b - 1], 0, sizeof(f->bases[b - 1]));
	m->hosts.g_base[id] = b;
	return &f->bases[b - 1];
}

/* Give global id @p id's base back, if it has one. */
static void
base_free(struct dpmon_merge *m, uint32_t id)
{
	uint32_t b = m->hosts.g_base[id];

	if (b == 0)
		return;
	m->fold.free_bases[m->fold.n_free_bases++] = b;
	m->hosts.g_base[id] = 0;
}

/* ------------------------------------------------------------------------
 * The workers' answers.
 * --------------------------------------------------------------------- */

/* Take entry OCC(@p c, @p i) out of global id @p id's chain. */
static void
unchain(struct dpmon_merge *m, uint32_t id, unsigned c, uint32_t i)
{
	uint32_t want = OCC(c, i);
	uint32_t *link = &m->fold.first[id];

	while (*link != want) {
		RTE_ASSERT(*link != OCC_END);
		link = &m->workers.map[*link >> 24].next[*link & 0xffffff];
	}
	*link = m->workers.map[c].next[i];
}

/*
 * Entry @p i of core @p c retired: its final counts into its host's base,
 * out of the chain, free. 0 or -ENOMEM (nothing changed).
 */
static int
entry_dead(struct dpmon_merge *m, unsigned c, uint32_t i)
{
	struct core_map *map = &m->workers.map[c];
	uint32_t id = map->gid[i];
	struct dpmon_pair_ctr *base = base_of(m, id);

	RTE_ASSERT(map->state[i] == ENTRY_PENDING);
	if (base == NULL)
		return -ENOMEM;
	merge_entry_read_add(m, c, i, base);
	unchain(m, id, c, i);
	if (map->carry[i] != 0) /* the slot stays the entry's, for its next host */
		memset(&m->fold.carries[map->carry[i] - 1], 0, sizeof(struct carry_hi));
	map->state[i] = ENTRY_FREE;
	map->pending--;
	map->n_dead++;
	map->free[map->n_free++] = i;
	if (m->fold.first[id] == OCC_END && !(m->hosts.g_flags[id] & HOST_DYING)) {
		m->hosts.g_flags[id] |= HOST_DYING;
		m->hosts.dying[m->hosts.n_dying++] = id;
	} else if (m->fold.first[id] != OCC_END && !(m->hosts.g_flags[id] & HOST_REFOLD)) {
		/* Its other entries may be untouched: fold it next merge all the
		 * same, so its cumulative counts hold the retired entry's last. */
		m->hosts.g_flags[id] |= HOST_REFOLD;
		m->hosts.refold[m->hosts.n_refold++] = id;
	}
	return 0;
}

/* Entry @p i of core @p c holds a new host now. 0, or -ENOMEM, -ENOSPC. */
static int
entry_new(struct dpmon_merge *m, unsigned c, uint32_t i)
{
	const struct dpmon_host_meta *e = &m->workers.core[c]->meta[i];
	int64_t id = merge_global_id(m, &e->addr, e->subnet, c);

	if (id < 0)
		return (int)id;
	RTE_ASSERT(m->workers.map[c].state[i] == ENTRY_FREE);
	m->workers.map[c].n_dead--;
	merge_map_entry(m, c, i, (uint32_t)id);
	return 0;
}

/* One answer of core @p c. 0, or a negative errno: @p ev is not applied. */
static int
apply_event(struct dpmon_merge *m, unsigned c, uint64_t ev)
{
	uint32_t i = (uint32_t)(ev & 0xffffff);

	switch (ev >> 62) {
	case DPMON_HOST_DEAD:
		return entry_dead(m, c, i);
	case DPMON_HOST_KEPT:
		RTE_ASSERT(m->workers.map[c].state[i] == ENTRY_PENDING);
		m->workers.map[c].state[i] = ENTRY_LIVE;
		m->workers.map[c].pending--;
		return 0;
	case DPMON_HOST_NEW:
		return entry_new(m, c, i);
	}
	RTE_ASSERT(0);
	return 0;
}

/* Freed entries of core @p c onto its free ring, as much as it holds. */
static void
hand_back(struct dpmon_merge *m, unsigned c)
{
	struct core_map *map = &m->workers.map[c];
	struct rte_ring *r = m->workers.core[c]->free_ring;

	while (map->n_free > 0) {
		uint64_t v = map->free[map->n_free - 1];

		if (rte_ring_sp_enqueue_elem(r, &v, sizeof(v)) != 0)
			break;
		map->n_free--;
	}
}

int
merge_drain_events(struct dpmon_merge *m)
{
	for (unsigned c = 0; c < m->workers.n; c++) {
		struct core_map *map = &m->workers.map[c];
		struct rte_ring *r = m->workers.core[c]->event_ring;

		for (;;) {
			if (map->held_pos == map->n_held) {
				map->n_held = rte_ring_sc_dequeue_burst_elem(
					r, map->held, sizeof(map->held[0]), RTE_DIM(map->held),
					NULL);
				map->held_pos = 0;
				if (map->n_held == 0)
					break;
				/* After the answers (acquire): the carries pushed
				 * before a DEAD one belong to the entry's last counts. */
				if (merge_consume_carries(m, c) != 0)
					return -ENOMEM;
			}
			/* On an error the answer stays held, first in line. */
			for (; map->held_pos < map->n_held; map->held_pos++) {
				int rc = apply_event(m, c, map->held[map->held_pos]);

				if (rc != 0)
					return rc;
			}
		}
		hand_back(m, c);
	}
	return 0;
}

void
merge_await_answers(struct dpmon_merge *m)
{
	uint64_t deadline = rte_rdtsc() + m->clock.tsc_hz / 1000 * ANSWER_WAIT_MS;

	for (;;) {
		uint32_t pending = 0;

		if (merge_drain_events(m) != 0)
			return;
		for (unsigned c = 0; c < m->workers.n; c++)
			pending += m->workers.map[c].pending;
		if (pending == 0 || rte_rdtsc() > deadline)
			return;
		rte_delay_us_sleep(50);
	}
}

/* ------------------------------------------------------------------------
 * Hosts leaving.
 * --------------------------------------------------------------------- */

/* Remove global id @p id (no worker entry left): out of everything but the order. */
static void
host_remove(struct dpmon_merge *m, uint32_t id)
{
	struct merge_hosts *h = &m->hosts;

	rte_hash_del_key(h->hash, &h->g_addr[id]);
	merge_record_drop(m, id);
	base_free(m, id);
	h->n_unmonitored -= h->g_subnet[id] == DPMON_NO_SUBNET;
	h->g_subnet[id] = HOST_REMOVED;
	h->g_flags[id] = 0;
	h->free_ids[h->n_free_ids++] = id;
}

/* Keep the ids of @p ids[0, @p n) that are not removed; @return how many. */
static uint32_t
keep_listed(const struct merge_hosts *h, uint32_t *ids, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t j = 0; j < n; j++)
		if (h->g_subnet[ids[j]] != HOST_REMOVED)
			ids[k++] = ids[j];
	return k;
}

void
merge_remove_dying(struct dpmon_merge *m)
{
	struct merge_hosts *h = &m->hosts;
	uint32_t removed = 0, kept = 0, new_sorted, unsorted;

	m->timing.removed = 0;
	for (uint32_t j = 0; j < h->n_dying; j++) {
		uint32_t id = h->dying[j];

		if (m->fold.first[id] != OCC_END) {
			h->g_flags[id] &= (uint8_t)~HOST_DYING;
			continue; /* back meanwhile: a new entry */
		}
		if (h->g_flags[id] & HOST_PINNED) {
			/* Pinned after its last entry was asked for: it stays
			 * listed (its base holds its counts) until it comes back
			 * or is unpinned. */
			h->dying[kept++] = id;
			continue;
		}
		host_remove(m, id);
		removed++;
	}
	h->n_dying = kept;
	if (removed == 0)
		return;
	h->n_sorted = keep_listed(h, h->sorted, h->n_sorted);
	/* New ids: the sorted ones, then the others, each kept in order. */
	new_sorted = keep_listed(h, h->new_ids, h->n_new_sorted);
	unsorted = keep_listed(h, h->new_ids + h->n_new_sorted, h->n_new - h->n_new_sorted);
	memmove(h->new_ids + new_sorted, h->new_ids + h->n_new_sorted, sizeof(uint32_t) * unsorted);
	h->n_new_sorted = new_sorted;
	h->n_new = new_sorted + unsorted;
	m->records.order_stale = true;
	m->timing.removed = removed;
}

/* ------------------------------------------------------------------------
 * Requests.
 * --------------------------------------------------------------------- */

/* A candidate for eviction: its last touch above, its entry below. */
static inline uint64_t
candidate(uint32_t last_ds, uint32_t i)
{
	return (uint64_t)last_ds << 32 | i;
}

/* Reorder @p v[0, @p n) so that its @p k smallest come first (quickselect). */
static void
select_smallest(uint64_t *v, uint32_t n, uint32_t k)
{
	uint32_t lo = 0, hi = n;

	/* The boundary k lies inside [lo, hi): partition it in three. */
	while (k > lo && k < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2];
		uint32_t lt = lo, i = lo, gt = hi;

		while (i < gt) {
			if (v[i] < pivot) {
				RTE_SWAP(v[lt], v[i]);
				lt++;
				i++;
			} else if (v[i] > pivot) {
				gt--;
				RTE_SWAP(v[i], v[gt]);
			} else {
				i++;
			}
		}
		if (k <= lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return;
	}
}

/*
 * Entries core @p c should free now: a table about to run out of
 * never-used entries keeps free (or on their way) as many as the most of
 * its reserve and the last interval's demand (the new hosts it took plus
 * the updates that found no entry), at most half the table.
 */
static uint32_t
eviction_need(struct dpmon_merge *m, unsigned c)
{
	const struct dpmon_core *core = m->workers.core[c];
	struct core_map *map = &m->workers.map[c];
	uint64_t full = dpmon_count_read(&core->stats.host_table_full);
	uint64_t demand = (full - map->prev_full) + (map->taken - map->prev_taken);
	uint32_t reserve = RTE_MIN(RTE_MAX(core->capacity / RESERVE_DIV, RESERVE_MIN), RESERVE_MAX);
	uint32_t want =
		(uint32_t)RTE_MIN(RTE_MAX((uint64_t)reserve, demand), (uint64_t)core->capacity / 2);
	uint32_t have = (core->capacity - map->mapped) + map->n_free +
			rte_ring_count(core->free_ring) + map->pending;

	map->prev_full = full;
	map->prev_taken = map->taken;
	return have >= want ? 0 : want - have;
}

/*
 * Requests for core @p c: @p need of its least recently active entries
 * not touched in this interval; @p scratch has room for all entries.
 * (The idle ones were asked for by merge_collect_touched.)
 */
static void
request_core(struct dpmon_merge *m, unsigned c, uint32_t need, uint64_t *scratch)
{
	const uint32_t *stamps = m->workers.core[c]->stamp;
	struct core_map *map = &m->workers.map[c];
	uint32_t n_cand = 0;

	for (uint32_t i = 0; i < map->mapped; i++) {
		if (map->state[i] != ENTRY_LIVE || (m->hosts.g_flags[map->gid[i]] & HOST_PINNED))
			continue;
		/* Touched in this merge's interval (or since): never. The
		 * worker checks the stamp again when it serves the request. */
		if (__atomic_load_n(&stamps[i], __ATOMIC_RELAXED) >= m->epoch)
			continue;
		scratch[n_cand++] = candidate(map->last_ds[i], i);
	}
	need = RTE_MIN(RTE_MIN(need, n_cand), merge_retire_budget(m, c));
	if (need == 0)
		return;
	select_smallest(scratch, n_cand, need);
	for (uint32_t k = 0; k < need; k++) {
		uint32_t i = (uint32_t)scratch[k];
		uint32_t stamp = __atomic_load_n(&stamps[i], __ATOMIC_RELAXED);

		if (stamp >= m->epoch)
			continue; /* touched since the scan: not eligible any more */
		if (!merge_retire_request(m, c, i, stamp, DPMON_RETIRE_EVICT))
			break;
	}
}

void
merge_request_retire(struct dpmon_merge *m)
{
	for (unsigned c = 0; c < m->workers.n; c++) {
		uint32_t need = eviction_need(m, c);
		uint64_t *scratch;

		if (need == 0)
			continue;
		/* Out of memory: no eviction this merge (the idle ones go on). */
		scratch = malloc(sizeof(*scratch) * m->workers.map[c].mapped);
		if (scratch != NULL)
			request_core(m, c, need, scratch);
		free(scratch);
	}
}

/* ------------------------------------------------------------------------
 * Pinned hosts.
 * --------------------------------------------------------------------- */

int
dpmon_merge_pin(struct dpmon_merge *m, const struct dpmon_addr *addrs, uint32_t n)
{
	struct merge_hosts *h = &m->hosts;

	for (uint32_t j = 0; j < h->n_pinned; j++)
		h->g_flags[h->pinned[j]] &= (uint8_t)~HOST_PINNED;
	h->n_pinned = 0;
	for (uint32_t j = 0; j < n; j++) {
		void *data;
		uint32_t id;

		if (rte_hash_lookup_data(h->hash, &addrs[j], &data) < 0)
			continue; /* not (or no longer) a host: nothing to keep */
		id = (uint32_t)(uintptr_t)data;
		if (h->g_flags[id] & HOST_PINNED)
			continue;
		h->g_flags[id] |= HOST_PINNED;
		h->pinned[h->n_pinned++] = id;
	}
	return (int)h->n_pinned;
}
