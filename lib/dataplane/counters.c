/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counters.c — allocation of the per-core tables, the host index and the
 * carry path (see counters.h for the merge protocol they implement).
 *
 * The host index is hand-written rather than an rte_hash: rte_hash keeps
 * keys in its own key store and returns a data pointer, so a lookup costs
 * the bucket, the key-store entry and then our counters (three cache
 * misses on a large table) and 60+ bytes of overhead per entry. Here the
 * index bucket holds 8 × (32-bit signature, entry index) in one cache line
 * and the key is compared in our own meta array, which the update touches
 * anyway, so a lookup costs the bucket and the entry: two misses, 16 bytes
 * of index per entry at full capacity (buckets sized for a load of 1/2).
 * A full bucket overflows into the next one (linear probing over
 * buckets). A bucket's used slots are always its first ones (a delete
 * moves the last one into the hole), and its overflow count says how
 * many entries stored further on passed it on their way: a lookup that
 * does not find its key in a bucket with a count of 0 ends there, so a
 * miss costs one bucket as long as few buckets ever filled (at a load of
 * 1/2, 2 % of them hold more than 8 homes).
 */
#include "counters.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

static uint32_t
buckets_for(uint32_t capacity)
{
	uint32_t n = 1;

	while (n * DPMON_BUCKET_SLOTS < 2ull * capacity)
		n <<= 1;
	return n;
}

/* Ring sizes: requests and freed entries in flight, and their answers. */
static uint32_t
retire_ring_size(uint32_t capacity)
{
	uint32_t n = 64;

	while (n < capacity && n < DPMON_RETIRE_RING)
		n <<= 1;
	return n;
}

/* The three rings of the entries' round trip (counters.h). 0 or -ENOMEM. */
static int
rings_create(struct dpmon_core *c, int socket_id)
{
	static unsigned instance;
	unsigned id = __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED);
	uint32_t n = retire_ring_size(c->capacity);
	const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ;
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "dpmon_rt%u", id);
	c->retire_ring = rte_ring_create_elem(name, sizeof(uint64_t), n, socket_id, flags);
	snprintf(name, sizeof(name), "dpmon_ev%u", id);
	/* Answers to the requests in flight plus a NEW per freed entry. */
	c->event_ring = rte_ring_create_elem(name, sizeof(uint64_t), 2 * n, socket_id, flags);
	snprintf(name, sizeof(name), "dpmon_fr%u", id);
	c->free_ring = rte_ring_create_elem(name, sizeof(uint64_t), n, socket_id, flags);
	return c->retire_ring && c->event_ring && c->free_ring ? 0 : -ENOMEM;
}

struct dpmon_core *
dpmon_core_create(const char *tag, uint32_t capacity, int socket_id)
{
	struct dpmon_core *c;
	uint32_t nb = buckets_for(capacity);

	(void)tag;
	if (capacity < 8 || capacity > (1u << 24)) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = rte_zmalloc_socket("dpmon_core", sizeof(*c), RTE_CACHE_LINE_SIZE, socket_id);
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->capacity = capacity;
	c->flag_capacity = capacity / 4 < 8 ? 8 : capacity / 4;
	c->bucket_mask = nb - 1;
	c->epoch = c->worker_epoch = c->merge_epoch = 1;
	c->flow_sketches = true;
	c->hosts = rte_zmalloc_socket("dpmon_hosts", sizeof(*c->hosts) * capacity,
				      RTE_CACHE_LINE_SIZE, socket_id);
	c->meta = rte_zmalloc_socket("dpmon_host_meta", sizeof(*c->meta) * capacity,
				     RTE_CACHE_LINE_SIZE, socket_id);
	c->stamp = rte_zmalloc_socket("dpmon_host_stamp", sizeof(*c->stamp) * capacity,
				      RTE_CACHE_LINE_SIZE, socket_id);
	c->buckets = rte_zmalloc_socket("dpmon_host_index", sizeof(*c->buckets) * nb,
					RTE_CACHE_LINE_SIZE, socket_id);
	c->flag_lines =
		rte_zmalloc_socket("dpmon_host_flag", sizeof(*c->flag_lines) * c->flag_capacity,
				   RTE_CACHE_LINE_SIZE, socket_id);
	c->flow_tot = rte_zmalloc_socket("dpmon_flow_tot", sizeof(*c->flow_tot) * DPMON_DIR_MAX,
					 RTE_CACHE_LINE_SIZE, socket_id);
	/* Full size even with few subnets: a reload may add more (worker.h). */
	c->flow_pool =
		rte_zmalloc_socket("dpmon_flow_pool", sizeof(*c->flow_pool) * DPMON_FLOW_POOL,
				   RTE_CACHE_LINE_SIZE, socket_id);
	c->hsk = rte_zmalloc_socket("dpmon_host_sketch", sizeof(*c->hsk) * DPMON_HOST_SKETCHES,
				    RTE_CACHE_LINE_SIZE, socket_id);
	c->carry = rte_zmalloc_socket("dpmon_carry", sizeof(*c->carry) * DPMON_CARRY_RING,
				      RTE_CACHE_LINE_SIZE, socket_id);
	c->overflow = rte_zmalloc_socket("dpmon_host_overflow", nb, RTE_CACHE_LINE_SIZE, socket_id);
	c->free_flag_lines = rte_zmalloc_socket("dpmon_free_flag_lines",
						sizeof(*c->free_flag_lines) * c->flag_capacity,
						RTE_CACHE_LINE_SIZE, socket_id);
	if (!c->hosts || !c->meta || !c->stamp || !c->flag_lines || !c->buckets || !c->flow_tot ||
	    !c->hsk || !c->flow_pool || !c->carry || !c->overflow || !c->free_flag_lines ||
	    rings_create(c, socket_id) != 0) {
		dpmon_core_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	return c;
}

void
dpmon_core_free(struct dpmon_core *c)
{
	if (c == NULL)
		return;
	rte_free(c->hosts);
	rte_free(c->meta);
	rte_free(c->stamp);
	rte_free(c->flag_lines);
	rte_free(c->flow_tot);
	rte_free(c->hsk);
	rte_free(c->flow_pool);
	rte_free(c->buckets);
	rte_free(c->carry);
	rte_free(c->overflow);
	rte_free(c->free_flag_lines);
	rte_ring_free(c->retire_ring);
	rte_ring_free(c->event_ring);
	rte_ring_free(c->free_ring);
	rte_free(c);
}

size_t
dpmon_core_bytes(const struct dpmon_core *c)
{
	return sizeof(*c) +
	       (sizeof(*c->hosts) + sizeof(*c->meta) + sizeof(*c->stamp)) * c->capacity +
	       sizeof(*c->flag_lines) * c->flag_capacity + sizeof(*c->flow_tot) * DPMON_DIR_MAX +
	       sizeof(*c->hsk) * DPMON_HOST_SKETCHES + sizeof(*c->flow_pool) * DPMON_FLOW_POOL +
	       sizeof(*c->buckets) * (c->bucket_mask + 1ull) +
	       sizeof(*c->carry) * DPMON_CARRY_RING + (c->bucket_mask + 1ull) +
	       sizeof(*c->free_flag_lines) * c->flag_capacity +
	       rte_ring_get_memsize_elem(sizeof(uint64_t), retire_ring_size(c->capacity)) * 4;
}

/* ------------------------------------------------------------------------
 * The index.
 * --------------------------------------------------------------------- */

/* Where host @p a is in the index: bucket and slot. */
struct index_pos {
	uint32_t bucket;
	unsigned slot;
};

/* Find @p a (hash @p sig) in the index into @p pos. @return its entry index, or -ENOENT. */
static int32_t
index_find(const struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig,
	   struct index_pos *pos)
{
	for (uint32_t b = sig & c->bucket_mask, n = 0; n <= c->bucket_mask;
	     b = (b + 1) & c->bucket_mask, n++) {
		const struct dpmon_host_bucket *bk = &c->buckets[b];

		for (unsigned s = 0; s < DPMON_BUCKET_SLOTS; s++) {
			uint32_t idx = bk->idx[s];

			if (idx == 0)
				break; /* used slots come first */
			if (bk->sig[s] == sig && dpmon_addr_eq(&c->meta[idx - 1].addr, a)) {
				pos->bucket = b;
				pos->slot = s;
				return (int32_t)(idx - 1);
			}
		}
		if (c->overflow[b] == 0)
			return -ENOENT;
	}
	return -ENOENT;
}

/* Put entry @p idx under hash @p sig: the first free slot on its probe path. */
static void
index_add(struct dpmon_core *c, uint32_t sig, uint32_t idx)
{
	for (uint32_t b = sig & c->bucket_mask, n = 0; n <= c->bucket_mask;
	     b = (b + 1) & c->bucket_mask, n++) {
		struct dpmon_host_bucket *bk = &c->buckets[b];

		for (unsigned s = 0; s < DPMON_BUCKET_SLOTS; s++) {
			if (bk->idx[s] == 0) {
				bk->sig[s] = sig;
				bk->idx[s] = idx + 1;
				return;
			}
		}
		if (c->overflow[b] < UINT8_MAX)
			c->overflow[b]++;
	}
	RTE_ASSERT(0); /* the index has twice as many slots as entries */
}

/* Remove the index slot at @p pos, home bucket of hash @p sig. */
static void
index_del(struct dpmon_core *c, uint32_t sig, const struct index_pos *pos)
{
	struct dpmon_host_bucket *bk = &c->buckets[pos->bucket];
	unsigned last = pos->slot;

	while (last + 1 < DPMON_BUCKET_SLOTS && bk->idx[last + 1] != 0)
		last++;
	bk->sig[pos->slot] = bk->sig[last];
	bk->idx[pos->slot] = bk->idx[last];
	bk->sig[last] = 0;
	bk->idx[last] = 0;
	for (uint32_t b = sig & c->bucket_mask; b != pos->bucket; b = (b + 1) & c->bucket_mask)
		if (c->overflow[b] < UINT8_MAX)
			c->overflow[b]--;
}

int32_t
dpmon_core_host_find(const struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig)
{
	struct index_pos pos;

	return index_find(c, a, sig, &pos);
}

/* ------------------------------------------------------------------------
 * Entries: new ones, and the round trip of retired ones (counters.h).
 * --------------------------------------------------------------------- */

/* Give flag line @p xi (index + 1) back, zeroed. */
static void
flag_line_free(struct dpmon_core *c, uint32_t xi)
{
	memset(&c->flag_lines[xi - 1], 0, sizeof(c->flag_lines[xi - 1]));
	RTE_ASSERT(c->n_free_flag_lines < c->flag_capacity);
	c->free_flag_lines[c->n_free_flag_lines++] = xi;
}

/*
 * An entry for a new host: a never-used one, else one the merge freed,
 * zeroed (the merge no longer reads it: it folded it for the last time
 * before freeing it). @return its index, or -ENOSPC.
 */
static int32_t
entry_take(struct dpmon_core *c, bool *reused)
{
	uint64_t v;
	uint32_t idx;
	struct dpmon_host_meta *m;

	if (c->n_hosts < c->capacity) {
		*reused = false;
		return (int32_t)c->n_hosts;
	}
	/* Room for the NEW record first: an entry taken is always announced. */
	if (rte_ring_free_count(c->event_ring) == 0 ||
	    rte_ring_sc_dequeue_elem(c->free_ring, &v, sizeof(v)) != 0)
		return -ENOSPC;
	idx = (uint32_t)v;
	m = &c->meta[idx];
	memset(&c->hosts[idx], 0, sizeof(c->hosts[idx]));
	if (m->flag_idx != 0) {
		flag_line_free(c, m->flag_idx);
		m->flag_idx = 0;
	}
	/* Stamp 0: the first touch zeroes the bitmaps and sketch slots. */
	m->epoch = 0;
	__atomic_store_n(&c->stamp[idx], 0, __ATOMIC_RELAXED);
	*reused = true;
	return (int32_t)idx;
}

int32_t
dpmon_core_host_insert(struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig,
		       uint32_t subnet)
{
	struct index_pos pos;
	int32_t idx = index_find(c, a, sig, &pos);
	bool reused;

	if (idx >= 0)
		return idx;
	idx = entry_take(c, &reused);
	if (idx < 0)
		return idx;
	c->meta[idx].addr = *a;
	c->meta[idx].subnet = subnet;
	index_add(c, sig, (uint32_t)idx);
	if (reused) {
		uint64_t ev = dpmon_host_event(DPMON_HOST_NEW, (uint32_t)idx);

		/* Room checked by entry_take. Release: the merge sees the key. */
		rte_ring_sp_enqueue_elem(c->event_ring, &ev, sizeof(ev));
	} else {
		/* Counters of a never-used entry are zero (rte_zmalloc). */
		__atomic_store_n(&c->n_hosts, (uint32_t)idx + 1, __ATOMIC_RELEASE);
	}
	return idx;
}

unsigned
dpmon_core_maintain(struct dpmon_core *c, unsigned max)
{
	uint64_t req[32];
	unsigned done = 0;

	/* Between bursts: an idle worker adopts the epoch too, so its
	 * entries age (the merge never asks for one stamped in the epoch the
	 * worker last reported). */
	dpmon_core_burst_begin(c);
	while (done < max) {
		/* No more requests than answers the event ring has room for. */
		unsigned room = RTE_MIN(rte_ring_free_count(c->event_ring), RTE_DIM(req));
		unsigned n = rte_ring_sc_dequeue_burst_elem(c->retire_ring, req, sizeof(req[0]),
							    RTE_MIN(max - done, room), NULL);

		if (n == 0)
			break;
		for (unsigned k = 0; k < n; k++) {
			uint32_t idx = (uint32_t)(req[k] & 0xffffff);
			uint32_t stamp = (uint32_t)(req[k] >> 24);
			struct dpmon_host_meta *m = &c->meta[idx];
			uint32_t sig = dpmon_host_hash(&m->addr);
			struct index_pos pos;
			uint64_t ev;

			RTE_ASSERT(idx < c->n_hosts);
			if (m->epoch == stamp &&
			    index_find(c, &m->addr, sig, &pos) == (int32_t)idx) {
				index_del(c, sig, &pos);
				dpmon_count_inc((req[k] >> 56) == DPMON_RETIRE_EVICT
							? &c->stats.host_evictions
							: &c->stats.host_expired,
						1);
				ev = dpmon_host_event(DPMON_HOST_DEAD, idx);
			} else {
				ev = dpmon_host_event(DPMON_HOST_KEPT, idx);
			}
			/* Room checked above. Release: the entry's last counter
			 * stores come before. */
			rte_ring_sp_enqueue_elem(c->event_ring, &ev, sizeof(ev));
		}
		done += n;
	}
	return done;
}

void
dpmon_core_host_wrap(struct dpmon_core *c, uint32_t idx, uint32_t *pk_word, uint32_t *by_word,
		     uint32_t pk_slot, uint32_t by_slot, uint32_t packets, uint32_t bytes,
		     int pk_wrapped, int by_wrapped)
{
	uint32_t seq = c->wrap_seq, head = c->carry_head;
	uint32_t tail = __atomic_load_n(&c->carry_tail, __ATOMIC_ACQUIRE);
	uint32_t need = (pk_wrapped != 0) + (by_wrapped != 0);

	if (head - tail + need > DPMON_CARRY_RING) {
		/* The merge has not run for 4096 wraps (16 TiB): drop this
		 * update rather than let the merged value go backwards. */
		dpmon_count_inc(&c->stats.carry_lost, 1);
		return;
	}
	__atomic_store_n(&c->wrap_seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* odd before the new low words */
	__atomic_store_n(pk_word, packets, __ATOMIC_RELAXED);
	__atomic_store_n(by_word, bytes, __ATOMIC_RELAXED);
	if (pk_wrapped)
		c->carry[head++ & (DPMON_CARRY_RING - 1)] = idx * DPMON_HOST_SLOTS + pk_slot;
	if (by_wrapped)
		c->carry[head++ & (DPMON_CARRY_RING - 1)] = idx * DPMON_HOST_SLOTS + by_slot;
	__atomic_store_n(&c->carry_head, head, __ATOMIC_RELEASE);
	__atomic_store_n(&c->wrap_seq, seq + 2, __ATOMIC_RELEASE);
}

void
dpmon_host_flag_add(struct dpmon_core *c, uint32_t idx, unsigned d, unsigned flag_mask,
		    uint32_t len)
{
	uint32_t xi = c->meta[idx].flag_idx;
	struct dpmon_host_flag_ctr *h;

	if (xi == 0) {
		if (c->n_free_flag_lines > 0) {
			xi = c->free_flag_lines[--c->n_free_flag_lines];
		} else if (c->n_flag_lines < c->flag_capacity) {
			xi = ++c->n_flag_lines;
		} else {
			dpmon_count_inc(&c->stats.host_ext_full, 1);
			return;
		}
		/* The line is zero (rte_zmalloc); the merge reads flag_idx after the
		 * acquire of stats.packets, which this burst stores later. */
		__atomic_store_n(&c->meta[idx].flag_idx, xi, __ATOMIC_RELAXED);
	}
	h = &c->flag_lines[xi - 1];
	for (unsigned f = 0; f < DPMON_FLAG_MAX; f++) {
		uint32_t old, pk, by, s;

		if (!(flag_mask & (1u << f)))
			continue;
		old = h->bytes[d][f];
		pk = h->packets[d][f] + 1;
		by = old + len;
		if (unlikely(pk == 0 || by < old)) {
			s = dpmon_host_flag_slot(d, f);
			dpmon_core_host_wrap(c, idx, &h->packets[d][f], &h->bytes[d][f], s,
					     s + DPMON_DIR_MAX * DPMON_FLAG_MAX, pk, by, pk == 0,
					     by < old);
			continue;
		}
		__atomic_store_n(&h->packets[d][f], pk, __ATOMIC_RELAXED);
		__atomic_store_n(&h->bytes[d][f], by, __ATOMIC_RELAXED);
	}
}

void
dpmon_host_promote(struct dpmon_core *c, uint32_t idx, unsigned d, uint64_t fh, uint64_t ph)
{
	struct dpmon_host_sketch *k;

	RTE_ASSERT(c->meta[idx].hsk[d] == 0 && c->meta[idx].epoch == c->epoch);
	if (c->n_hsk >= DPMON_HOST_SKETCHES) {
		dpmon_count_inc(&c->stats.host_flow_full, 1);
		__atomic_store_n(&c->meta[idx].hsk[d], DPMON_HSK_NONE, __ATOMIC_RELAXED);
		return;
	}
	/* Last used in an older epoch, which the merge no longer reads. */
	k = &c->hsk[c->n_hsk++];
	memset(k, 0, sizeof(*k));
	dpmon_hll_add(k->flows, DPMON_HOST_FLOW_P, fh);
	dpmon_hll_add(k->peers, DPMON_HOST_PEER_P, ph);
	k->pre_flows = c->meta[idx].flows[d];
	k->pre_peers = c->meta[idx].peers[d];
	/* Release: a merge that reads the slot (acquire) sees it zeroed. */
	__atomic_store_n(&c->meta[idx].hsk[d], (uint16_t)c->n_hsk, __ATOMIC_RELEASE);
}

struct dpmon_flow_sketch *
dpmon_flow_pool_take(struct dpmon_core *c, uint32_t *slot)
{
	uint32_t tag = c->epoch & 0xffffff, v, k;

	v = *slot;
	if ((v >> 8) != tag || (v & 0xff) == 0) { /* 0: a zeroed slot, never taken */
		/* First packet of this direction in this epoch: take a slot. */
		k = c->n_flow_pool < DPMON_FLOW_POOL ? ++c->n_flow_pool : DPMON_FLOW_SLOT_NONE;
		v = tag << 8 | k;
		__atomic_store_n(slot, v, __ATOMIC_RELAXED);
	}
	k = v & 0xff;
	return k == DPMON_FLOW_SLOT_NONE ? NULL : &c->flow_pool[k - 1];
}
