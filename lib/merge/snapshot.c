/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * snapshot.c — snapshot allocation, lookups, and the publication store.
 *
 * Publication is reference counting under one mutex. The store owns one
 * reference to the current snapshot; every dpmon_snap_acquire takes another
 * and every dpmon_snap_release drops one; whoever drops the last frees the
 * snapshot. The mutex only guards the pointer swap and the counters (a few
 * instructions), never rendering or freeing, so the publisher (the main
 * lcore) is never held up by a slow HTTP client: it replaces the pointer and
 * moves on, and the old snapshot dies when its last reader lets go.
 *
 * A snapshot is immutable once published, which is why readers can use it
 * without any lock. Hosts are kept sorted by address (merge_hosts.c does that)
 * so lookups are a binary search; subnets are few and stay in
 * configuration order, so their lookup is a linear scan.
 *
 * A merge's snapshot does not own its host records: it lists pointers to
 * records in slabs shared with other snapshots (snapshot.h), holding a
 * reference to each slab. The pointer array of a freed snapshot is kept
 * for the next merge (one array, under its own mutex): at a million hosts
 * it is 8 MB, and a fresh allocation would fault in every page of it
 * again each interval.
 */
#include "snapshot.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* An empty cache of host orders (snapshot.h); NULL on failure. */
static struct dpmon_host_orders *
orders_create(void)
{
	struct dpmon_host_orders *c = calloc(1, sizeof(*c));

	if (c != NULL && pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		c = NULL;
	}
	return c;
}

/* Free @p c and every order built in it; NULL ignored. */
static void
orders_free(struct dpmon_host_orders *c)
{
	if (c == NULL)
		return;
	for (unsigned i = 0; i < DPMON_HOST_ORDER_SLOTS; i++)
		free(c->slot[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* calloc that never returns NULL for a zero count (arrays always exist). */
static void *
array_alloc(uint32_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* One recycled host pointer array (see the file comment). */
static struct {
	pthread_mutex_t lock;
	const struct dpmon_snap_host **ptr;
	uint32_t cap;
} spare = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

/* A pointer array of at least @p n entries, recycled when one is big enough
 * and at most twice that (so one huge array is not kept for a small run). */
static const struct dpmon_snap_host **
host_at_take(uint32_t n, uint32_t *cap)
{
	const struct dpmon_snap_host **p = NULL;

	pthread_mutex_lock(&spare.lock);
	if (spare.ptr != NULL && spare.cap >= n && spare.cap / 2 <= n) {
		p = spare.ptr;
		*cap = spare.cap;
		spare.ptr = NULL;
	}
	pthread_mutex_unlock(&spare.lock);
	if (p == NULL) {
		*cap = n ? n : 1;
		p = malloc(sizeof(*p) * *cap);
	}
	return p;
}

static void
host_at_give(const struct dpmon_snap_host **p, uint32_t cap)
{
	const struct dpmon_snap_host **old;

	pthread_mutex_lock(&spare.lock);
	old = spare.ptr;
	spare.ptr = p;
	spare.cap = cap;
	pthread_mutex_unlock(&spare.lock);
	free(old);
}

/* Both allocators: header and small arrays zeroed; hosts owned (zeroed) or shared. */
static struct dpmon_snapshot *
snapshot_alloc(uint32_t n_ports, uint32_t n_workers, uint32_t n_subnets, uint32_t n_hosts,
	       bool own_hosts)
{
	struct dpmon_snapshot *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->ports = array_alloc(n_ports, sizeof(*s->ports));
	s->workers = array_alloc(n_workers, sizeof(*s->workers));
	s->subnets = array_alloc(n_subnets, sizeof(*s->subnets));
	s->host_at = host_at_take(n_hosts, &s->host_at_cap);
	s->orders = orders_create();
	if (own_hosts) {
		s->hosts = array_alloc(n_hosts, sizeof(*s->hosts));
		for (uint32_t i = 0; s->hosts != NULL && s->host_at != NULL && i < n_hosts; i++)
			s->host_at[i] = &s->hosts[i];
	}
	if (!s->ports || !s->workers || !s->subnets || !s->host_at || !s->orders ||
	    (own_hosts && !s->hosts)) {
		dpmon_snapshot_free(s);
		return NULL;
	}
	s->n_ports = n_ports;
	s->n_workers = n_workers;
	s->n_subnets = n_subnets;
	s->n_hosts = n_hosts;
	return s;
}

struct dpmon_snapshot *
dpmon_snapshot_alloc_shared_hosts(uint32_t n_ports, uint32_t n_workers, uint32_t n_subnets,
				  uint32_t n_hosts)
{
	return snapshot_alloc(n_ports, n_workers, n_subnets, n_hosts, false);
}

struct dpmon_snapshot *
dpmon_snapshot_alloc(uint32_t n_ports, uint32_t n_workers, uint32_t n_subnets, uint32_t n_hosts)
{
	return snapshot_alloc(n_ports, n_workers, n_subnets, n_hosts, true);
}

/*
 * Freed slabs kept for the next merges (most merges write slabs of similar
 * sizes): a fresh one would fault in every page again. At most SPARE_SLABS
 * of them, and SPARE_RECORDS records besides the largest one (a merge that
 * touches every host writes one slab of them all, as big as the host array
 * the snapshots used to recycle). The largest is always kept: over the
 * record limit the second-largest goes, over the count limit the smallest.
 * The pool is sorted by capacity, smallest first, so each of them is at an
 * end of it.
 */
#define SPARE_SLABS   8
#define SPARE_RECORDS (512u * 1024)
static struct {
	pthread_mutex_t lock;
	struct dpmon_host_slab *b[SPARE_SLABS]; /* [0, n), by ascending cap */
	unsigned n;
	uint64_t records;
} spare_slabs = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0, 0};

static void
slab_destroy(struct dpmon_host_slab *b)
{
	free(b->gid);
	free(b);
}

/* Removes and returns spare @p i, keeping the order. Lock held. */
static struct dpmon_host_slab *
spare_remove(unsigned i)
{
	struct dpmon_host_slab *b = spare_slabs.b[i];

	assert(i < spare_slabs.n);
	memmove(&spare_slabs.b[i], &spare_slabs.b[i + 1],
		sizeof(spare_slabs.b[0]) * (spare_slabs.n - i - 1));
	spare_slabs.n--;
	spare_slabs.records -= b->cap;
	return b;
}

/* Adds @p b in its place by cap; there must be room. Lock held. */
static void
spare_insert(struct dpmon_host_slab *b)
{
	unsigned i = spare_slabs.n;

	assert(i < SPARE_SLABS);
	for (; i > 0 && spare_slabs.b[i - 1]->cap > b->cap; i--)
		spare_slabs.b[i] = spare_slabs.b[i - 1];
	spare_slabs.b[i] = b;
	spare_slabs.n++;
	spare_slabs.records += b->cap;
}

/* A spare slab of @p cap to 2 * @p cap records, or NULL. */
static struct dpmon_host_slab *
slab_take(uint32_t cap)
{
	struct dpmon_host_slab *b = NULL;
	unsigned i = 0;

	pthread_mutex_lock(&spare_slabs.lock);
	while (i < spare_slabs.n && spare_slabs.b[i]->cap < cap)
		i++;
	/* The smallest that is large enough; the later ones are larger. */
	if (i < spare_slabs.n && spare_slabs.b[i]->cap / 2 < cap)
		b = spare_remove(i);
	pthread_mutex_unlock(&spare_slabs.lock);
	return b;
}

/* Keep @p b as a spare, evicting others over the limits (see spare_slabs). */
static void
slab_give(struct dpmon_host_slab *b)
{
	struct dpmon_host_slab *out[SPARE_SLABS + 1];
	unsigned n_out = 0;

	pthread_mutex_lock(&spare_slabs.lock);
	spare_insert(b); /* room: the pool is trimmed to SPARE_SLABS - 1 */
	while (spare_slabs.n == SPARE_SLABS)
		out[n_out++] = spare_remove(0);
	/* There is a second-largest: the largest alone is within the limit. */
	while (spare_slabs.records - spare_slabs.b[spare_slabs.n - 1]->cap > SPARE_RECORDS)
		out[n_out++] = spare_remove(spare_slabs.n - 2);
	pthread_mutex_unlock(&spare_slabs.lock);
	for (unsigned i = 0; i < n_out; i++)
		slab_destroy(out[i]);
}

struct dpmon_host_slab *
dpmon_host_slab_alloc(uint32_t cap)
{
	struct dpmon_host_slab *b;

	/* A power of two (at most twice the need) so freed slabs fit again. */
	cap = cap <= 64 ? 64 : cap > (1u << 31) ? cap : 1u << (32 - __builtin_clz(cap - 1));
	b = slab_take(cap);
	if (b == NULL) {
		b = malloc(sizeof(*b) + sizeof(b->h[0]) * (size_t)cap);
		if (b == NULL)
			return NULL;
		b->gid = malloc(sizeof(*b->gid) * cap);
		if (b->gid == NULL) {
			free(b);
			return NULL;
		}
		b->cap = cap;
	}
	b->refs = 1;
	b->n = b->live = 0;
	return b;
}

void
dpmon_host_slab_ref(struct dpmon_host_slab *b)
{
	__atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
}

void
dpmon_host_slab_unref(struct dpmon_host_slab *b)
{
	if (b != NULL && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
		slab_give(b);
}

const struct dpmon_dir_stats *
dpmon_snap_host_dir(const struct dpmon_snapshot *s, const struct dpmon_snap_host *h, int d,
		    struct dpmon_dir_stats *tmp)
{
	const struct dpmon_dir_stats *src = &h->dir[d];
	double k;

	if (dpmon_snap_host_fresh(s, h))
		return src;
	k = dpmon_snap_host_decay(s, h);
	*tmp = *src;
	tmp->total.pps = tmp->total.bps = 0;
	for (int p = 0; p < DPMON_PROTO_MAX; p++)
		tmp->proto[p].pps = tmp->proto[p].bps = 0;
	for (int f = 0; f < DPMON_FLAG_MAX; f++)
		tmp->flag[f].pps = tmp->flag[f].bps = 0;
	dpmon_dir_avgs_scale(tmp, k);
	tmp->flows = tmp->peers = s->no_flows ? -1 : 0;
	return tmp;
}

struct dpmon_hist_point *
dpmon_hist_point_alloc(uint32_t n_subnets)
{
	struct dpmon_hist_point *p =
		calloc(1, sizeof(*p) + sizeof(p->sub[0]) * DPMON_DIR_MAX * (size_t)n_subnets);

	if (p != NULL) {
		p->refs = 1;
		p->n_subnets = n_subnets;
	}
	return p;
}

void
dpmon_hist_point_ref(struct dpmon_hist_point *p)
{
	__atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED);
}

void
dpmon_hist_point_unref(struct dpmon_hist_point *p)
{
	if (p != NULL && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(p);
}

void
dpmon_snapshot_free(struct dpmon_snapshot *s)
{
	if (s == NULL)
		return;
	for (uint32_t i = 0; i < s->n_history; i++)
		dpmon_hist_point_unref(s->history[i]);
	free(s->history);
	for (uint32_t i = 0; i < s->n_alerts; i++)
		dpmon_alert_unref(s->alerts[i]);
	free(s->alerts);
	free(s->ports);
	free(s->workers);
	free(s->subnets);
	free(s->ignored);
	free(s->ignored_subnets);
	for (uint32_t i = 0; i < s->n_slabs; i++)
		dpmon_host_slab_unref(s->slabs[i]);
	free(s->slabs);
	free(s->hosts);
	orders_free(s->orders);
	if (s->host_at != NULL)
		host_at_give(s->host_at, s->host_at_cap);
	free(s);
}

const struct dpmon_snap_host *
dpmon_snapshot_find_host(const struct dpmon_snapshot *s, const struct dpmon_addr *a)
{
	uint32_t lo = 0, hi = s->n_hosts; /* search [lo, hi) */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = dpmon_addr_cmp(&s->host_at[mid]->addr, a);

		if (c == 0)
			return s->host_at[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int
dpmon_snapshot_find_subnet(const struct dpmon_snapshot *s, const struct dpmon_prefix *p)
{
	for (uint32_t i = 0; i < s->n_subnets; i++)
		if (dpmon_prefix_equal(&s->subnets[i].prefix, p))
			return (int)i;
	return -1;
}

void
dpmon_snap_store_init(struct dpmon_snap_store *st)
{
	pthread_mutex_init(&st->lock, NULL);
	st->current = NULL;
}

void
dpmon_snap_publish(struct dpmon_snap_store *st, struct dpmon_snapshot *s)
{
	struct dpmon_snapshot *old;

	if (s != NULL)
		s->refs = 1; /* the store's reference */
	pthread_mutex_lock(&st->lock);
	old = st->current;
	st->current = s;
	pthread_mutex_unlock(&st->lock);
	dpmon_snap_release(st, old);
}

struct dpmon_snapshot *
dpmon_snap_acquire(struct dpmon_snap_store *st)
{
	struct dpmon_snapshot *s;

	pthread_mutex_lock(&st->lock);
	s = st->current;
	if (s != NULL)
		s->refs++;
	pthread_mutex_unlock(&st->lock);
	return s;
}

void
dpmon_snap_release(struct dpmon_snap_store *st, struct dpmon_snapshot *s)
{
	int left;

	if (s == NULL)
		return;
	pthread_mutex_lock(&st->lock);
	left = --s->refs;
	pthread_mutex_unlock(&st->lock);
	if (left == 0)
		dpmon_snapshot_free(s);
}

/*
 * The mutex is deliberately not destroyed: a reader that still holds a
 * reference may release it after shutdown, and a default Linux mutex owns
 * no resources.
 */
void
dpmon_snap_store_destroy(struct dpmon_snap_store *st)
{
	dpmon_snap_publish(st, NULL);
}
