/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampler.c — the main lcore's side of the alert packet sampler
 * (sampler.h): the copies drained from the workers' rings (sample.h),
 * counted per alert by source and destination address, source port and
 * destination port
 * in one rte_hash per alert, kept as the alert's fingerprint (the first
 * flowspec.sample_packets copies' header fields, fingerprint.h), and
 * written to the alert's capture file, mode 0640 (libpcap: pcap_open_dead
 * + pcap_dump_fopen on a new file, file_write.h). A capture file is never
 * overwritten: alert ids start at 1 at every start, so an earlier run's
 * DIR/ID.pcap is first renamed to DIR/ID.MTIME.pcap.
 *
 * An alert's counts and capture file are kept while it is active: at its
 * end the detection takes its last summary and lets it go
 * (dpmon_sampler_forget). Each costs its rte_hash and DPMON_SAMPLE_KEYS
 * counters (about 0.5 MiB).
 *
 * The directory is bounded (pcap_max_files, pcap_max_mb; capture_dir.h):
 * before a capture file is opened, at the start and at a reload, the
 * oldest capture files go to make room, never one still being written.
 */
#include "sampler.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include "capture_dir.h"
#include "file_write.h"
#include "log.h"
#include "prefix_table.h"

#define DRAIN_BURST 64
#define TOP_N       10

/* What a key counts. */
enum key_kind {
	KEY_SOURCE,
	KEY_DEST,
	KEY_SPORT,
	KEY_DPORT,
	KEY_KINDS
};

/* Key of one counter of an alert: its kind and value (address or port). */
struct sample_key {
	uint8_t kind;
	uint8_t pad[3];
	uint8_t v[16];
};

struct key_count {
	struct sample_key k;
	uint64_t packets;
};

/* Everything sampled for one alert. */
struct alert_agg {
	uint64_t id;
	uint64_t packets;
	struct rte_hash *keys;    /* sample_key → index into counts */
	struct key_count *counts; /* DPMON_SAMPLE_KEYS */
	uint32_t n_keys;
	pcap_t *dead;
	pcap_dumper_t *dump; /* open while fewer than pcap_packets were written */
	uint32_t written;
	bool pcap_failed;   /* reported once; no more attempts */
	bool pcap_done;     /* the capture file is complete: never reopened */
	struct dpmon_fp fp; /* the first flowspec.sample_packets copies' header fields */
};

struct dpmon_sampler {
	struct dpmon_sample_feed feed; /* the watch list, the workers' rings */
	struct dpmon_actions_conf conf;
	struct alert_agg *alerts;
	uint32_t n_alerts, cap_alerts;
	uint64_t tsc_hz;
	struct dpmon_prefix_table ignored; /* detection.ignore_sources: not fingerprinted */
	struct dpmon_sample_rec batch[DRAIN_BURST];
};

static unsigned instance; /* unique hash names */

/* ------------------------------------------------------------------------
 * The directory's bound (main lcore).
 * --------------------------------------------------------------------- */

/*
 * Remove the oldest capture files of pcap_dir beyond its bound, with room
 * for @p new_files more (capture_dir.h); the files being written stay.
 * @return as dpmon_capture_dir_prune.
 */
static int
prune_dir(const struct dpmon_sampler *s, unsigned new_files)
{
	uint64_t *open_ids = malloc(sizeof(*open_ids) * (s->n_alerts ? s->n_alerts : 1));
	struct dpmon_capture_bound b = {
		/* 0: no bound */
		.max_files = s->conf.pcap_max_files ? s->conf.pcap_max_files : UINT32_MAX,
		.max_bytes = s->conf.pcap_max_mb ? (uint64_t)s->conf.pcap_max_mb << 20 : UINT64_MAX,
		/* The file header, then each record's header and bytes (pcap(5)). */
		.file_max_bytes = 24 + (uint64_t)s->conf.pcap_packets * (16 + DPMON_SAMPLE_SNAPLEN),
		.open_ids = open_ids,
	};
	int rc;

	if (s->conf.pcap_max_files == 0 && s->conf.pcap_max_mb == 0) {
		free(open_ids);
		return 0;
	}
	if (open_ids == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (s->alerts[i].dump != NULL)
			open_ids[b.n_open++] = s->alerts[i].id;
	rc = dpmon_capture_dir_prune(s->conf.pcap_dir, &b, new_files);
	free(open_ids);
	if (rc < 0 && rc != -ENOSPC)
		dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_WARNING,
			  "sample: %s: cannot list its capture files: %s", s->conf.pcap_dir,
			  strerror(-rc));
	return rc;
}

/* ------------------------------------------------------------------------
 * Life cycle (main lcore).
 * --------------------------------------------------------------------- */

struct dpmon_sampler *
dpmon_sampler_create(unsigned n_workers, const struct dpmon_actions_conf *conf)
{
	struct dpmon_sampler *s = calloc(1, sizeof(*s));

	if (s == NULL)
		goto fail;
	s->conf = *conf;
	s->tsc_hz = rte_get_tsc_hz();
	if (dpmon_sample_feed_init(&s->feed, n_workers) != 0)
		goto fail;
	if (s->conf.pcap_dir[0] != '\0')
		(void)prune_dir(s, 0); /* an earlier run's files, a smaller bound */
	return s;
fail:
	dpmon_sampler_free(s);
	errno = ENOMEM;
	return NULL;
}

static void
alert_close_pcap(struct alert_agg *a)
{
	if (a->dump != NULL)
		pcap_dump_close(a->dump);
	if (a->dead != NULL)
		pcap_close(a->dead);
	a->dump = NULL;
	a->dead = NULL;
}

void
dpmon_sampler_reconfigure(struct dpmon_sampler *s, const struct dpmon_actions_conf *conf)
{
	bool new_dir = strcmp(s->conf.pcap_dir, conf->pcap_dir) != 0;
	bool new_bound = s->conf.pcap_max_files != conf->pcap_max_files ||
			 s->conf.pcap_max_mb != conf->pcap_max_mb ||
			 s->conf.pcap_packets != conf->pcap_packets;

	s->conf = *conf;
	for (uint32_t i = 0; i < s->n_alerts; i++) {
		struct alert_agg *a = &s->alerts[i];

		if (a->dump != NULL &&
		    (s->conf.pcap_dir[0] == '\0' || a->written >= s->conf.pcap_packets)) {
			alert_close_pcap(a); /* complete under the new settings */
			a->pcap_done = true;
		}
		if (new_dir && a->dump == NULL)
			a->pcap_failed = false; /* the new directory gets a try */
	}
	if (s->conf.pcap_dir[0] != '\0' && (new_dir || new_bound))
		(void)prune_dir(s, 0);
}

int
dpmon_sampler_set_ignored(struct dpmon_sampler *s, const struct dpmon_prefix *ignored, uint32_t n)
{
	struct dpmon_prefix_table t = {0};
	const struct dpmon_prefix *lists[1] = {ignored};
	int rc = dpmon_prefix_table_build(&t, lists, &n, 1, false);

	if (rc != 0)
		return rc;
	dpmon_prefix_table_free(&s->ignored);
	s->ignored = t;
	return 0;
}

void
dpmon_sampler_free(struct dpmon_sampler *s)
{
	if (s == NULL)
		return;
	dpmon_prefix_table_free(&s->ignored);
	for (uint32_t i = 0; i < s->n_alerts; i++) {
		alert_close_pcap(&s->alerts[i]);
		rte_hash_free(s->alerts[i].keys);
		free(s->alerts[i].counts);
		dpmon_fp_fini(&s->alerts[i].fp);
	}
	free(s->alerts);
	dpmon_sample_feed_fini(&s->feed);
	free(s);
}

struct dpmon_sample_core *
dpmon_sampler_core(struct dpmon_sampler *s, unsigned worker)
{
	RTE_ASSERT(worker < s->feed.n_workers);
	return &s->feed.cores[worker];
}

uint64_t
dpmon_sampler_dropped(const struct dpmon_sampler *s)
{
	return dpmon_sample_feed_dropped(&s->feed);
}

uint64_t
dpmon_sampler_copied(const struct dpmon_sampler *s)
{
	return dpmon_sample_feed_copied(&s->feed);
}

/* ------------------------------------------------------------------------
 * The watch list (main lcore, its only writer).
 * --------------------------------------------------------------------- */

int
dpmon_sampler_watch(struct dpmon_sampler *s, const struct dpmon_addr *hosts, const uint8_t *depths,
		    const uint64_t *alert_ids, unsigned n)
{
	return dpmon_sample_watch_write(s->feed.watch, hosts, depths, alert_ids, n);
}

/* ------------------------------------------------------------------------
 * Main lcore: per-alert counts and capture files.
 * --------------------------------------------------------------------- */

static struct alert_agg *
alert_find(const struct dpmon_sampler *s, uint64_t id)
{
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (s->alerts[i].id == id)
			return &s->alerts[i];
	return NULL;
}

/*
 * @p a's empty counts: its rte_hash and DPMON_SAMPLE_KEYS counters.
 * @return false when out of memory (nothing left allocated).
 */
static bool
alert_alloc_counts(struct alert_agg *a)
{
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = DPMON_SAMPLE_KEYS,
		.key_len = sizeof(struct sample_key),
		.hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
	};

	snprintf(name, sizeof(name), "dpmon_sa%u",
		 __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED));
	a->keys = rte_hash_create(&hp);
	a->counts = calloc(DPMON_SAMPLE_KEYS, sizeof(*a->counts));
	if (a->keys == NULL || a->counts == NULL) {
		rte_hash_free(a->keys);
		free(a->counts);
		return false;
	}
	return true;
}

/*
 * The alert's aggregate, created at its first copy while it is watched.
 * NULL on allocation failure, or for an alert no longer watched (ended and
 * forgotten: a late copy must not bring it back).
 */
static struct alert_agg *
alert_get(struct dpmon_sampler *s, uint64_t id)
{
	struct alert_agg *a = alert_find(s, id);

	if (a != NULL)
		return a;
	if (!dpmon_sample_watch_has(s->feed.watch, id))
		return NULL;
	if (s->n_alerts == s->cap_alerts) {
		uint32_t cap = s->cap_alerts ? 2 * s->cap_alerts : 16;
		void *p = realloc(s->alerts, sizeof(*s->alerts) * cap);

		if (p == NULL)
			return NULL;
		s->alerts = p;
		s->cap_alerts = cap;
	}
	a = &s->alerts[s->n_alerts];
	memset(a, 0, sizeof(*a));
	a->id = id;
	/* sample_packets 0 (a zeroed configuration): no fingerprint. */
	if (s->conf.flowspec.sample_packets > 0 &&
	    dpmon_fp_init(&a->fp, s->conf.flowspec.sample_packets) != 0)
		return NULL;
	if (!alert_alloc_counts(a)) {
		dpmon_fp_fini(&a->fp);
		return NULL;
	}
	s->n_alerts++;
	return a;
}

void
dpmon_sampler_forget(struct dpmon_sampler *s, uint64_t alert_id)
{
	struct alert_agg *a = alert_find(s, alert_id);

	if (a == NULL)
		return;
	alert_close_pcap(a);
	rte_hash_free(a->keys);
	free(a->counts);
	dpmon_fp_fini(&a->fp);
	*a = s->alerts[--s->n_alerts];
}

/* Count one packet under key (@p kind, @p v); a new key past the table's room is dropped. */
static void
key_count(struct alert_agg *a, enum key_kind kind, const void *v, size_t n)
{
	struct sample_key k;
	void *data;
	int32_t pos;

	memset(&k, 0, sizeof(k));
	k.kind = (uint8_t)kind;
	memcpy(k.v, v, n);
	if (rte_hash_lookup_data(a->keys, &k, &data) >= 0) {
		a->counts[(uintptr_t)data].packets++;
		return;
	}
	if (a->n_keys >= DPMON_SAMPLE_KEYS)
		return;
	pos = rte_hash_add_key_data(a->keys, &k, (void *)(uintptr_t)a->n_keys);
	if (pos < 0)
		return;
	a->counts[a->n_keys].k = k;
	a->counts[a->n_keys].packets = 1;
	a->n_keys++;
}

/*
 * Alert ids start at 1 again at every start of dpmon, so @p path may hold
 * the capture of an earlier run's alert: rename it to ID.MTIME.pcap (its
 * modification time, UTC, YYYYmmddTHHMMSSZ) so that it is never
 * overwritten. link + unlink, not rename: an existing ID.MTIME.pcap is
 * never replaced either.
 * @return 0 when @p path is free (it did not exist, or was moved), -errno
 *         when it could not be moved (reported; the caller writes nothing).
 */
static int
move_earlier_capture(const char *path, const char *dir, uint64_t id)
{
	char aside[DPMON_PATH_LEN + 64], stamp[32];
	struct stat st;
	struct tm tm;
	int err;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	gmtime_r(&st.st_mtime, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(aside, sizeof(aside), "%s/%" PRIu64 ".%s.pcap", dir, id, stamp);
	if (link(path, aside) != 0 || unlink(path) != 0) {
		err = errno;
		dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_WARNING,
			  "sample: %s (an earlier run's capture) cannot be moved to %s: %s;"
			  " not overwriting it, alert %" PRIu64 " gets no capture file",
			  path, aside, strerror(err), id);
		return -err;
	}
	dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_NOTICE,
		  "sample: %s was an earlier run's capture: moved to %s", path, aside);
	return 0;
}

/*
 * A new capture file at @p path, mode 0640, with its pcap header: a
 * random temporary renamed into place (file_write.h), so that no file or
 * link planted at @p path is written through. libpcap's pcap_dump_open
 * would open @p path itself, following a link.
 * @return the dumper, or NULL with the reason in @p why.
 */
static pcap_dumper_t *
create_capture(pcap_t *dead, const char *path, char *why, size_t whylen)
{
	char tmp[DPMON_PATH_LEN + 64];
	int fd = dpmon_file_create(path, DPMON_FILE_MODE_GROUP, tmp, sizeof(tmp)), rc;
	pcap_dumper_t *d;
	FILE *f;

	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(-fd));
		return NULL;
	}
	f = fdopen(fd, "wb");
	if (f == NULL) {
		snprintf(why, whylen, "%s", strerror(errno));
		dpmon_file_discard(fd, tmp);
		return NULL;
	}
	d = pcap_dump_fopen(dead, f);
	if (d == NULL) {
		/* The header could not be written; libpcap closed @p f then
		 * (its only failure for an activated pcap_open_dead handle). */
		snprintf(why, whylen, "%s", pcap_geterr(dead));
		dpmon_file_discard(-1, tmp);
		return NULL;
	}
	rc = dpmon_file_place(-1, tmp, path, false);
	if (rc != 0) {
		snprintf(why, whylen, "%s", strerror(-rc));
		pcap_dump_close(d);
		return NULL;
	}
	return d;
}

/* Open @p a's capture file (once; a failure is reported and not retried). */
static void
alert_open_pcap(const struct dpmon_sampler *s, struct alert_agg *a)
{
	char path[DPMON_PATH_LEN + 32], why[PCAP_ERRBUF_SIZE] = "out of memory";

	if (a->dump != NULL || a->pcap_failed)
		return;
	snprintf(path, sizeof(path), "%s/%" PRIu64 ".pcap", s->conf.pcap_dir, a->id);
	if (move_earlier_capture(path, s->conf.pcap_dir, a->id) != 0) {
		a->pcap_failed = true;
		return;
	}
	if (prune_dir(s, 1) == -ENOSPC) {
		dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_WARNING,
			  "sample: %s is full (pcap_max_files %" PRIu32 ", pcap_max_mb %" PRIu32
			  ", captures still written kept): alert %" PRIu64 " gets no capture file",
			  s->conf.pcap_dir, s->conf.pcap_max_files, s->conf.pcap_max_mb, a->id);
		a->pcap_failed = true;
		return;
	}
	a->dead = pcap_open_dead(DLT_EN10MB, DPMON_SAMPLE_SNAPLEN);
	if (a->dead != NULL)
		a->dump = create_capture(a->dead, path, why, sizeof(why));
	if (a->dump == NULL) {
		dpmon_log(DPMON_LOG_SAMPLE, DPMON_LOG_WARNING, "sample: cannot write %s: %s", path,
			  why);
		alert_close_pcap(a);
		a->pcap_failed = true;
	}
}

/*
 * Write copy @p r to @p a's capture file (opened at its first copy, closed
 * once complete), stamped with the time it was made: @p now (the drain's
 * clock) less the TSC cycles since (@p now_tsc).
 */
static void
capture(struct dpmon_sampler *s, struct alert_agg *a, const struct dpmon_sample_rec *r,
	uint64_t now_tsc, const struct timespec *now)
{
	struct pcap_pkthdr h;
	double ago;
	int64_t ns;

	if (a->dump == NULL && (a->pcap_done || s->conf.pcap_dir[0] == '\0'))
		return;
	alert_open_pcap(s, a);
	if (a->dump == NULL)
		return;
	ago = now_tsc > r->tsc ? (double)(now_tsc - r->tsc) / (double)s->tsc_hz : 0;
	ns = (int64_t)now->tv_sec * 1000000000 + now->tv_nsec - (int64_t)(ago * 1e9);
	h.ts.tv_sec = (time_t)(ns / 1000000000);
	h.ts.tv_usec = (suseconds_t)(ns % 1000000000 / 1000);
	h.caplen = r->cap_len;
	h.len = r->wire_len;
	pcap_dump((u_char *)a->dump, &h, r->data);
	if (++a->written >= s->conf.pcap_packets) {
		alert_close_pcap(a); /* complete */
		a->pcap_done = true;
	}
}

/* Take one copy: count it, and write it to its alert's capture file. */
static void
take(struct dpmon_sampler *s, const struct dpmon_sample_rec *r, uint64_t now_tsc,
     const struct timespec *now)
{
	struct alert_agg *a = alert_get(s, r->alert_id);

	if (a == NULL)
		return;
	a->packets++;
	key_count(a, KEY_SOURCE, r->src.b, sizeof(r->src.b));
	key_count(a, KEY_DEST, r->dst.b, sizeof(r->dst.b));
	if (r->ports) {
		uint16_t sp = r->sport, dp = r->dport;

		key_count(a, KEY_SPORT, &sp, sizeof(sp));
		key_count(a, KEY_DPORT, &dp, sizeof(dp));
	}
	if (a->fp.n < a->fp.want) {
		struct dpmon_fp_pkt p;

		if (dpmon_fp_decode(r->data, r->cap_len, r->wire_len, r->sport, r->dport, r->ports,
				    &p) == 0)
			dpmon_fp_add_unless_ignored(&a->fp, &p, &s->ignored);
	}
	capture(s, a, r, now_tsc, now);
}

void
dpmon_sampler_drain(struct dpmon_sampler *s)
{
	uint64_t now_tsc = rte_rdtsc();
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	for (unsigned w = 0; w < s->feed.n_workers; w++) {
		unsigned k;

		while ((k = dpmon_sample_core_dequeue(&s->feed.cores[w], s->batch, DRAIN_BURST)) >
		       0)
			for (unsigned i = 0; i < k; i++)
				take(s, &s->batch[i], now_tsc, &now);
	}
	for (uint32_t i = 0; i < s->n_alerts; i++)
		if (s->alerts[i].dump != NULL)
			pcap_dump_flush(s->alerts[i].dump);
}

/* ------------------------------------------------------------------------
 * Summaries (main lcore).
 * --------------------------------------------------------------------- */

/* Keys before: more packets, then the smaller key (a stable order). */
static bool
count_before(const struct key_count *x, const struct key_count *y)
{
	if (x->packets != y->packets)
		return x->packets > y->packets;
	return memcmp(x->k.v, y->k.v, sizeof(x->k.v)) < 0;
}

/* The TOP_N counters of @p kind, best first, into @p top. @return how many. */
static unsigned
top_of(const struct alert_agg *a, enum key_kind kind, const struct key_count **top)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < a->n_keys; i++) {
		const struct key_count *c = &a->counts[i];
		unsigned j;

		if (c->k.kind != kind || (n == TOP_N && !count_before(c, top[n - 1])))
			continue;
		j = n < TOP_N ? n++ : n - 1;
		while (j > 0 && count_before(c, top[j - 1])) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = c;
	}
	return n;
}

static json_t *
top_json(const struct alert_agg *a, enum key_kind kind)
{
	const struct key_count *top[TOP_N];
	unsigned n = top_of(a, kind, top);
	json_t *arr = json_array();

	for (unsigned i = 0; arr != NULL && i < n; i++) {
		json_t *o;

		if (kind == KEY_SOURCE || kind == KEY_DEST) {
			struct dpmon_addr x;
			char text[DPMON_ADDR_STRLEN];

			memcpy(x.b, top[i]->k.v, sizeof(x.b));
			o = json_pack("{s:s,s:I}", "address",
				      dpmon_addr_format(&x, text, sizeof(text)), "packets",
				      (json_int_t)top[i]->packets);
		} else {
			uint16_t port;

			memcpy(&port, top[i]->k.v, sizeof(port));
			o = json_pack("{s:i,s:I}", "port", (int)port, "packets",
				      (json_int_t)top[i]->packets);
		}
		if (json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

const struct dpmon_flowspec_conf *
dpmon_sampler_flowspec(const struct dpmon_sampler *s)
{
	return &s->conf.flowspec;
}

const struct dpmon_fp *
dpmon_sampler_fingerprint(struct dpmon_sampler *s, uint64_t alert_id)
{
	const struct alert_agg *a = alert_find(s, alert_id);

	return a != NULL ? &a->fp : NULL;
}

json_t *
dpmon_sampler_summary(struct dpmon_sampler *s, uint64_t alert_id)
{
	const struct alert_agg *a = alert_find(s, alert_id);

	if (a == NULL)
		return NULL;
	return json_pack("{s:I,s:o*,s:o*,s:o*,s:o*}", "packets", (json_int_t)a->packets, "sources",
			 top_json(a, KEY_SOURCE), "destinations", top_json(a, KEY_DEST),
			 "source_ports", top_json(a, KEY_SPORT), "destination_ports",
			 top_json(a, KEY_DPORT));
}
