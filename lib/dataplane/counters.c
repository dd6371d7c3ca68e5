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
 * Entries are never deleted, so the first empty slot ends a probe; a full
 * bucket overflows into the next one (linear probing over buckets).
 */
#include "counters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

static uint32_t
buckets_for(uint32_t capacity)
{
	uint32_t n = 1;

	while (n * DPMON_BUCKET_SLOTS < 2ull * capacity)
		n <<= 1;
	return n;
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
	c->hosts = rte_zmalloc_socket("dpmon_hosts", sizeof(*c->hosts) * capacity,
				      RTE_CACHE_LINE_SIZE, socket_id);
	c->meta = rte_zmalloc_socket("dpmon_host_meta", sizeof(*c->meta) * capacity,
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
	if (!c->hosts || !c->meta || !c->flag_lines || !c->buckets || !c->flow_tot || !c->hsk ||
	    !c->flow_pool || !c->carry) {
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
	rte_free(c->flag_lines);
	rte_free(c->flow_tot);
	rte_free(c->hsk);
	rte_free(c->flow_pool);
	rte_free(c->buckets);
	rte_free(c->carry);
	rte_free(c);
}

size_t
dpmon_core_bytes(const struct dpmon_core *c)
{
	return sizeof(*c) + (sizeof(*c->hosts) + sizeof(*c->meta)) * c->capacity +
	       sizeof(*c->flag_lines) * c->flag_capacity + sizeof(*c->flow_tot) * DPMON_DIR_MAX +
	       sizeof(*c->hsk) * DPMON_HOST_SKETCHES + sizeof(*c->flow_pool) * DPMON_FLOW_POOL +
	       sizeof(*c->buckets) * (c->bucket_mask + 1ull) + sizeof(*c->carry) * DPMON_CARRY_RING;
}

int32_t
dpmon_core_host_find(const struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig)
{
	for (uint32_t b = sig & c->bucket_mask, n = 0; n <= c->bucket_mask;
	     b = (b + 1) & c->bucket_mask, n++) {
		const struct dpmon_host_bucket *bk = &c->buckets[b];

		for (unsigned s = 0; s < DPMON_BUCKET_SLOTS; s++) {
			uint32_t idx = bk->idx[s];

			if (idx == 0)
				return -ENOENT;
			if (bk->sig[s] == sig && dpmon_addr_eq(&c->meta[idx - 1].addr, a))
				return (int32_t)(idx - 1);
		}
	}
	return -ENOENT;
}

int32_t
dpmon_core_host_insert(struct dpmon_core *c, const struct dpmon_addr *a, uint32_t sig,
		       uint32_t subnet)
{
	uint32_t idx = c->n_hosts;

	for (uint32_t b = sig & c->bucket_mask, n = 0; n <= c->bucket_mask;
	     b = (b + 1) & c->bucket_mask, n++) {
		struct dpmon_host_bucket *bk = &c->buckets[b];

		for (unsigned s = 0; s < DPMON_BUCKET_SLOTS; s++) {
			uint32_t cur = bk->idx[s];

			if (cur != 0) {
				if (bk->sig[s] == sig && dpmon_addr_eq(&c->meta[cur - 1].addr, a))
					return (int32_t)(cur - 1);
				continue;
			}
			if (idx >= c->capacity)
				return -ENOSPC;
			c->meta[idx].addr = *a;
			c->meta[idx].subnet = subnet;
			/* Counters of a new entry are already zero (rte_zmalloc). */
			bk->sig[s] = sig;
			bk->idx[s] = idx + 1;
			__atomic_store_n(&c->n_hosts, idx + 1, __ATOMIC_RELEASE);
			return (int32_t)idx;
		}
	}
	return -ENOSPC;
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
		if (c->n_flag_lines >= c->flag_capacity) {
			dpmon_count_inc(&c->stats.host_ext_full, 1);
			return;
		}
		xi = ++c->n_flag_lines;
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
