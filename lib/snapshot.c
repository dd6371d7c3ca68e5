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
 * without any lock. The host array of a freed snapshot is kept for the next
 * merge (one array, under its own mutex): a million hosts are 340 MB, and
 * a fresh allocation would fault in every page of it again each interval. Hosts are kept sorted by address (merge.c does that)
 * so lookups are a binary search; subnets are few and stay in
 * configuration order, so their lookup is a linear scan.
 */
#include "snapshot.h"

#include <stdbool.h>
#include <stdlib.h>

/* calloc that never returns NULL for a zero count (arrays always exist). */
static void *
array_alloc(uint32_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* One recycled host array (see the file comment). */
static struct {
	pthread_mutex_t lock;
	struct dpmon_snap_host *hosts;
	uint32_t cap;
} spare = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

/* A host array of at least @p n entries, recycled when one is big enough
 * and at most twice that (so one huge array is not kept for a small run). */
static struct dpmon_snap_host *
hosts_take(uint32_t n, uint32_t *cap)
{
	struct dpmon_snap_host *h = NULL;

	pthread_mutex_lock(&spare.lock);
	if (spare.hosts != NULL && spare.cap >= n && spare.cap / 2 <= n) {
		h = spare.hosts;
		*cap = spare.cap;
		spare.hosts = NULL;
	}
	pthread_mutex_unlock(&spare.lock);
	if (h == NULL) {
		*cap = n ? n : 1;
		h = malloc(sizeof(*h) * *cap);
	}
	return h;
}

static void
hosts_give(struct dpmon_snap_host *h, uint32_t cap)
{
	struct dpmon_snap_host *old;

	pthread_mutex_lock(&spare.lock);
	old = spare.hosts;
	spare.hosts = h;
	spare.cap = cap;
	pthread_mutex_unlock(&spare.lock);
	free(old);
}

/* Both allocators: header and small arrays zeroed; hosts zeroed or recycled. */
static struct dpmon_snapshot *
snapshot_alloc(uint32_t n_ports, uint32_t n_workers, uint32_t n_subnets, uint32_t n_hosts,
	       bool zero_hosts)
{
	struct dpmon_snapshot *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->ports = array_alloc(n_ports, sizeof(*s->ports));
	s->workers = array_alloc(n_workers, sizeof(*s->workers));
	s->subnets = array_alloc(n_subnets, sizeof(*s->subnets));
	if (zero_hosts) {
		s->hosts = array_alloc(n_hosts, sizeof(*s->hosts));
		s->hosts_cap = n_hosts ? n_hosts : 1;
	} else {
		s->hosts = hosts_take(n_hosts, &s->hosts_cap);
	}
	if (!s->ports || !s->workers || !s->subnets || !s->hosts) {
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
dpmon_snapshot_alloc_uninit_hosts(uint32_t n_ports, uint32_t n_workers, uint32_t n_subnets,
				  uint32_t n_hosts)
{
	return snapshot_alloc(n_ports, n_workers, n_subnets, n_hosts, false);
}

struct dpmon_snapshot *
dpmon_snapshot_alloc(uint32_t n_ports, uint32_t n_workers, uint32_t n_subnets,
		     uint32_t n_hosts)
{
	return snapshot_alloc(n_ports, n_workers, n_subnets, n_hosts, true);
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
	if (s->hosts != NULL)
		hosts_give(s->hosts, s->hosts_cap);
	free(s);
}

const struct dpmon_snap_host *
dpmon_snapshot_find_host(const struct dpmon_snapshot *s, const struct dpmon_addr *a)
{
	uint32_t lo = 0, hi = s->n_hosts; /* search [lo, hi) */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = dpmon_addr_cmp(&s->hosts[mid].addr, a);

		if (c == 0)
			return &s->hosts[mid];
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
