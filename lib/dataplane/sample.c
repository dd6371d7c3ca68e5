/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample.c — the workers' side of the alert packet sampler (sample.h):
 * the watch list's seqlock, written by the main lcore and read by each
 * worker lcore per burst while hosts are watched, the copy of a matching
 * packet into the worker's ring, and the rings themselves.
 *
 * Worker side: dpmon_sample_watch_read (the seqlock read of the watch list)
 * and dpmon_sample_copy (one copy into the worker's SP/SC ring of fixed
 * slots; worker.c decides which packets match). Main lcore side: the
 * rings' creation, the watch list's writer and the rings' consumer, for
 * the sampler (lib/detect/sampler.c), which counts and writes the copies.
 */
#include "sample.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "counters.h"

static unsigned instance; /* unique ring names */

/* ------------------------------------------------------------------------
 * The rings and the watch list (main lcore).
 * --------------------------------------------------------------------- */

int
dpmon_sample_feed_init(struct dpmon_sample_feed *f, unsigned n_workers)
{
	unsigned id = __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED);

	f->n_workers = n_workers;
	f->watch = rte_zmalloc("dpmon_sample_watch", sizeof(*f->watch), RTE_CACHE_LINE_SIZE);
	f->cores =
		rte_zmalloc("dpmon_sample_cores", sizeof(*f->cores) * (n_workers ? n_workers : 1),
			    RTE_CACHE_LINE_SIZE);
	if (f->watch == NULL || f->cores == NULL)
		goto fail;
	for (unsigned w = 0; w < n_workers; w++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "dpmon_smp%u_%u", id, w);
		f->cores[w].watch = f->watch;
		f->cores[w].ring = rte_ring_create_elem(name, sizeof(struct dpmon_sample_rec),
							DPMON_SAMPLE_RING, SOCKET_ID_ANY,
							RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (f->cores[w].ring == NULL)
			goto fail;
	}
	return 0;
fail:
	dpmon_sample_feed_fini(f);
	return -ENOMEM;
}

void
dpmon_sample_feed_fini(struct dpmon_sample_feed *f)
{
	for (unsigned w = 0; f->cores != NULL && w < f->n_workers; w++)
		rte_ring_free(f->cores[w].ring);
	rte_free(f->cores);
	rte_free(f->watch);
	f->cores = NULL;
	f->watch = NULL;
}

uint64_t
dpmon_sample_feed_dropped(const struct dpmon_sample_feed *f)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < f->n_workers; w++)
		n += dpmon_count_read(&f->cores[w].dropped);
	return n;
}

uint64_t
dpmon_sample_feed_copied(const struct dpmon_sample_feed *f)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < f->n_workers; w++)
		n += dpmon_count_read(&f->cores[w].copied);
	return n;
}

unsigned
dpmon_sample_core_dequeue(struct dpmon_sample_core *c, struct dpmon_sample_rec *recs, unsigned n)
{
	return rte_ring_sc_dequeue_burst_elem(c->ring, recs, sizeof(recs[0]), n, NULL);
}

/* ------------------------------------------------------------------------
 * The watch list (seqlock: one writer, the main lcore).
 * --------------------------------------------------------------------- */

int
dpmon_sample_watch_write(struct dpmon_sample_watch *w, const struct dpmon_addr *hosts,
			 const uint64_t *alert_ids, unsigned n)
{
	return dpmon_sample_watch_write_prefixes(w, hosts, NULL, alert_ids, n);
}

int
dpmon_sample_watch_write_prefixes(struct dpmon_sample_watch *w, const struct dpmon_addr *hosts,
				  const uint8_t *bits, const uint64_t *alert_ids, unsigned n)
{
	uint32_t seq = w->seq;

	if (n > DPMON_SAMPLE_WATCH_MAX)
		return -E2BIG;
	__atomic_store_n(&w->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* odd before the new list */
	for (unsigned i = 0; i < n; i++) {
		uint64_t x[2];

		memcpy(x, hosts[i].b, sizeof(x));
		__atomic_store_n(&w->addr[i][0], x[0], __ATOMIC_RELAXED);
		__atomic_store_n(&w->addr[i][1], x[1], __ATOMIC_RELAXED);
		__atomic_store_n(&w->alert_id[i], alert_ids[i], __ATOMIC_RELAXED);
		__atomic_store_n(&w->bits[i], bits != NULL ? bits[i] : 128, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&w->n, n, __ATOMIC_RELAXED);
	__atomic_store_n(&w->seq, seq + 2, __ATOMIC_RELEASE);
	return 0;
}

bool
dpmon_sample_watch_has(const struct dpmon_sample_watch *w, uint64_t alert_id)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->alert_id[i] == alert_id)
			return true;
	return false;
}

bool
dpmon_sample_watch_read(const struct dpmon_sample_core *c, struct dpmon_sample_list *out)
{
	const struct dpmon_sample_watch *w = c->watch;
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	uint32_t n = __atomic_load_n(&w->n, __ATOMIC_RELAXED);

	if ((seq & 1) != 0 || n > DPMON_SAMPLE_WATCH_MAX)
		return false;
	out->masked = false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t x[2] = {__atomic_load_n(&w->addr[i][0], __ATOMIC_RELAXED),
				 __atomic_load_n(&w->addr[i][1], __ATOMIC_RELAXED)};

		memcpy(out->addr[i].b, x, sizeof(x));
		out->alert_id[i] = __atomic_load_n(&w->alert_id[i], __ATOMIC_RELAXED);
		out->bits[i] = __atomic_load_n(&w->bits[i], __ATOMIC_RELAXED);
		out->masked |= out->bits[i] < 128;
	}
	out->n = n;
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy before the re-read */
	return __atomic_load_n(&w->seq, __ATOMIC_RELAXED) == seq;
}

/* ------------------------------------------------------------------------
 * The copy (worker lcore).
 * --------------------------------------------------------------------- */

void
dpmon_sample_copy(struct dpmon_sample_core *c, const struct rte_mbuf *m, uint64_t alert_id,
		  const struct dpmon_addr *src, uint16_t sport, uint16_t dport, bool ports)
{
	struct dpmon_sample_rec r;
	uint32_t len = m->pkt_len < DPMON_SAMPLE_SNAPLEN ? m->pkt_len : DPMON_SAMPLE_SNAPLEN;
	const void *d = rte_pktmbuf_read(m, 0, len, r.data);

	if (d != NULL && d != r.data)
		memcpy(r.data, d, len);
	r.alert_id = alert_id;
	r.tsc = rte_rdtsc();
	r.src = *src;
	r.wire_len = m->pkt_len;
	r.cap_len = (uint16_t)(d != NULL ? len : 0);
	r.sport = ports ? sport : 0;
	r.dport = ports ? dport : 0;
	r.ports = ports;
	r.pad[0] = 0;
	if (rte_ring_sp_enqueue_elem(c->ring, &r, sizeof(r)) != 0)
		dpmon_count_inc(&c->dropped, 1);
	else
		dpmon_count_inc(&c->copied, 1);
}
