/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sample.c — the alert packet sampler (lib/dataplane/sample.h, lib/detect/sampler.h) driven through
 * the worker's burst function on built frames: nothing is copied while the
 * watch list is empty; watched hosts' packets (as destination or source,
 * IPv4 and IPv6) are counted per alert with exact top sources and ports;
 * the capture files hold the first pcap_packets copies (read back with
 * libpcap: snaplen 128, wire length, bytes) and never overwrite an earlier
 * run's capture of the same alert id (it is renamed to ID.MTIME.pcap, or
 * left alone with no capture written when that name is taken too); a full
 * ring counts its drops; a reload's pcap_dir and pcap_packets apply to the
 * files opened after it, and an open file closes at the new limit; the
 * directory's bound removes the oldest capture files first;
 * a worker never uses a torn watch list while the main lcore rewrites it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <dirent.h>
#include <utime.h>
#include <rte_malloc.h>

#include "classify.h"
#include "counters.h"
#include "detect.h"
#include "snapshot.h"
#include "frames.h"
#include "sample.h"
#include "test_eal.h"
#include "worker.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static const uint8_t EXT6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t IN6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

static struct rte_mempool *mp;

static struct rte_mbuf *
mbuf_of(const struct fb *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	REQUIRE(m != NULL);
	memcpy(rte_pktmbuf_append(m, (uint16_t)f->n), f->b, f->n);
	return m;
}

/* A UDP frame @p src:@p sport → @p dst:@p dport with @p payload bytes. */
static void
udp4(struct fb *f, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint16_t payload)
{
	fb_eth(f, NULL, 0, 0x0800);
	fb_ipv4(f, 5, 17, src, dst, 0, (uint16_t)(28 + payload));
	fb_udp(f, sport, dport, payload);
	for (uint16_t i = 0; i < payload; i++)
		f->b[f->n - payload + i] = (uint8_t)i; /* distinct bytes in the copy */
}

/* Count @p n copies of frame @p f through the worker's burst function. */
static void
send_frames(struct dpmon_core *c, const struct dpmon_generation *g, const struct fb *f, unsigned n)
{
	struct rte_mbuf *p[DPMON_MAX_BURST];

	while (n > 0) {
		unsigned k = n < DPMON_MAX_BURST ? n : DPMON_MAX_BURST;

		for (unsigned i = 0; i < k; i++)
			p[i] = mbuf_of(f);
		dpmon_worker_burst(c, g, p, (uint16_t)k);
		n -= k;
	}
}

static struct dpmon_addr
addr(const char *text)
{
	struct dpmon_addr a;

	REQUIRE(dpmon_addr_parse(text, &a) == 0);
	return a;
}

static json_t *
get(json_t *o, const char *path)
{
	return json_object_get(o, path);
}

/* Entry @p i of list @p key of summary @p j is (@p what, @p packets). */
static void
check_entry(json_t *j, const char *key, size_t i, const char *addr_or_null, int port,
	    long long packets)
{
	json_t *e = json_array_get(get(j, key), i);

	REQUIRE(e != NULL);
	if (addr_or_null != NULL)
		CHECK(json_is_string(get(e, "address")) &&
		      strcmp(json_string_value(get(e, "address")), addr_or_null) == 0);
	else
		CHECK(json_integer_value(get(e, "port")) == port);
	CHECK(json_integer_value(get(e, "packets")) == packets);
}

/* Read @p path back: @return packets; the first one's header and bytes in @p h, @p data. */
static int
read_pcap(const char *path, struct pcap_pkthdr *h0, uint8_t *data0, int *snaplen, int *dlt)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	int n = 0;

	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	*snaplen = pcap_snapshot(p);
	*dlt = pcap_datalink(p);
	while (pcap_next_ex(p, &h, &d) == 1) {
		if (n++ == 0) {
			*h0 = *h;
			memcpy(data0, d, h->caplen);
		}
	}
	pcap_close(p);
	return n;
}

/* The seqlock: a reader thread never uses a torn list while the main
 * thread publishes two lists in turn. */
struct race {
	struct dpmon_sample_core *core;
	int stop; /* __atomic builtins */
	uint64_t reads, torn, skipped;
};

static bool
list_is(const struct dpmon_sample_list *l, uint32_t n, uint64_t base)
{
	if (l->n != n)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t x[2];

		memcpy(x, l->addr[i].b, sizeof(x));
		if (x[0] != base + i || x[1] != ~(base + i) || l->alert_id[i] != base + i)
			return false;
	}
	return true;
}

static void *
race_reader(void *arg)
{
	struct race *r = arg;
	struct dpmon_sample_list l;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (!dpmon_sample_watch_read(r->core, &l)) {
			r->skipped++;
			continue;
		}
		r->reads++;
		if (!list_is(&l, 3, 1000) && !list_is(&l, DPMON_SAMPLE_WATCH_MAX, 5000))
			r->torn++;
	}
	return NULL;
}

static void
test_watch_race(void)
{
	struct dpmon_actions_conf conf;
	struct dpmon_addr a[DPMON_SAMPLE_WATCH_MAX], b[DPMON_SAMPLE_WATCH_MAX];
	uint64_t ia[DPMON_SAMPLE_WATCH_MAX], ib[DPMON_SAMPLE_WATCH_MAX];
	struct race r = {0};
	struct dpmon_sampler *s;
	pthread_t t;
	int fails = 0;

	memset(&conf, 0, sizeof(conf));
	s = dpmon_sampler_create(1, &conf);
	REQUIRE(s != NULL);
	for (uint64_t i = 0; i < DPMON_SAMPLE_WATCH_MAX; i++) {
		uint64_t x[2] = {1000 + i, ~(1000 + i)}, y[2] = {5000 + i, ~(5000 + i)};

		memcpy(a[i].b, x, sizeof(x));
		memcpy(b[i].b, y, sizeof(y));
		ia[i] = 1000 + i;
		ib[i] = 5000 + i;
	}
	REQUIRE(dpmon_sampler_watch(s, a, NULL, ia, 3) == 0);
	r.core = dpmon_sampler_core(s, 0);
	REQUIRE(pthread_create(&t, NULL, race_reader, &r) == 0);
	for (int k = 0; k < 100000; k++) {
		fails += dpmon_sampler_watch(s, k & 1 ? b : a, NULL, k & 1 ? ib : ia,
					     k & 1 ? DPMON_SAMPLE_WATCH_MAX : 3) != 0;
		for (int spin = 0; spin < 200; spin++)
			rte_pause(); /* room for whole reads, too */
	}
	CHECK(fails == 0);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("watch list race: %" PRIu64 " reads, %" PRIu64 " skipped, %" PRIu64 " torn\n",
	       r.reads, r.skipped, r.torn);
	CHECK(r.reads > 0);
	CHECK(r.torn == 0);
	dpmon_sampler_free(s);
}

/* Write @p text to @p path, modified at @p mtime (seconds since the epoch). */
static void
write_file(const char *path, const char *text, time_t mtime)
{
	struct utimbuf t = {.actime = mtime, .modtime = mtime};
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
	REQUIRE(utime(path, &t) == 0);
}

/* @p path holds exactly @p text. */
static bool
file_is(const char *path, const char *text)
{
	char buf[64] = {0};
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	return n == strlen(text) && memcmp(buf, text, n) == 0;
}

/*
 * Alert ids start at 1 again at every start of dpmon: the capture files of
 * an earlier run must survive. In @p dir, 7.pcap (earlier) is moved aside
 * to 7.20251130T170000Z.pcap (its mtime, UTC) and alert 7 writes a new
 * 7.pcap; 9.pcap cannot be moved (9.20251130T170000Z.pcap exists too), so
 * both stay as they were and alert 9 gets no capture file.
 */
static void
test_earlier_captures(const struct dpmon_generation *g, const struct fb *to7, const struct fb *to9)
{
	char dir[] = "/tmp/dpmon_test_sample_earlier.XXXXXX", path[128];
	const char *names[] = {"7.pcap", "7.20251130T170000Z.pcap", "9.pcap",
			       "9.20251130T170000Z.pcap"};
	struct dpmon_addr hosts[2] = {addr("10.1.0.1"), addr("2001:db8:1::7")};
	uint64_t ids[2] = {7, 9};
	struct dpmon_actions_conf conf;
	struct dpmon_sampler *s;
	struct dpmon_core *c;
	struct pcap_pkthdr h;
	uint8_t data[DPMON_SAMPLE_SNAPLEN];
	int snaplen = 0, dlt = 0;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/7.pcap", dir);
	write_file(path, "earlier 7", 1764522000);
	snprintf(path, sizeof(path), "%s/9.pcap", dir);
	write_file(path, "earlier 9", 1764522000);
	snprintf(path, sizeof(path), "%s/9.20251130T170000Z.pcap", dir);
	write_file(path, "earlier 9 aside", 1764522000);
	memset(&conf, 0, sizeof(conf));
	snprintf(conf.pcap_dir, sizeof(conf.pcap_dir), "%s", dir);
	conf.pcap_packets = 4;
	s = dpmon_sampler_create(1, &conf);
	c = dpmon_core_create("sample1", 64, SOCKET_ID_ANY);
	REQUIRE(s != NULL && c != NULL);
	c->sample = dpmon_sampler_core(s, 0);
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 2) == 0);
	send_frames(c, g, to7, 2);
	send_frames(c, g, to9, 1);
	dpmon_sampler_drain(s);
	CHECK(dpmon_sampler_copied(s) == 3);

	snprintf(path, sizeof(path), "%s/7.pcap", dir);
	CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 2);
	CHECK(h.len == to7->n);
	snprintf(path, sizeof(path), "%s/7.20251130T170000Z.pcap", dir);
	CHECK(file_is(path, "earlier 7"));
	snprintf(path, sizeof(path), "%s/9.pcap", dir);
	CHECK(file_is(path, "earlier 9"));
	snprintf(path, sizeof(path), "%s/9.20251130T170000Z.pcap", dir);
	CHECK(file_is(path, "earlier 9 aside"));

	dpmon_sampler_free(s);
	dpmon_core_free(c);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	CHECK(rmdir(dir) == 0); /* no other file was written */
}

/* Files in @p dir (not . and ..). */
static int
count_files(const char *dir)
{
	char cmd[160];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	REQUIRE(p != NULL);
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

/*
 * The capture directory's bound (pcap_max_files): alert 7's capture
 * removes the oldest earlier file to make room; a reload to a smaller
 * bound removes the next one, never the file being written; the other
 * files of the directory are not capture files and stay.
 */
static void
test_capture_bound(const struct dpmon_generation *g, const struct fb *to7)
{
	char dir[] = "/tmp/dpmon_test_sample_bound.XXXXXX", path[128];
	struct dpmon_addr hosts[1] = {addr("10.1.0.1")};
	uint64_t ids[1] = {7};
	struct dpmon_actions_conf conf;
	struct dpmon_sampler *s;
	struct dpmon_core *c;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/1.pcap", dir);
	write_file(path, "earlier 1", 1764522000);
	snprintf(path, sizeof(path), "%s/2.20251130T170000Z.pcap", dir);
	write_file(path, "earlier 2", 1764522100);
	snprintf(path, sizeof(path), "%s/notes", dir);
	write_file(path, "an operator's", 1764500000);
	memset(&conf, 0, sizeof(conf));
	snprintf(conf.pcap_dir, sizeof(conf.pcap_dir), "%s", dir);
	conf.pcap_packets = 4;
	conf.pcap_max_files = 2;
	s = dpmon_sampler_create(1, &conf);
	c = dpmon_core_create("sample_bound", 64, SOCKET_ID_ANY);
	REQUIRE(s != NULL && c != NULL);
	CHECK(count_files(dir) == 3); /* within the bound at the start */
	c->sample = dpmon_sampler_core(s, 0);
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 1) == 0);
	send_frames(c, g, to7, 2);
	dpmon_sampler_drain(s);
	snprintf(path, sizeof(path), "%s/1.pcap", dir);
	CHECK(access(path, F_OK) != 0 && errno == ENOENT);
	snprintf(path, sizeof(path), "%s/2.20251130T170000Z.pcap", dir);
	CHECK(file_is(path, "earlier 2"));
	conf.pcap_max_files = 1; /* a reload: 7.pcap, still written, stays */
	dpmon_sampler_reconfigure(s, &conf);
	CHECK(access(path, F_OK) != 0 && errno == ENOENT);
	send_frames(c, g, to7, 1);
	dpmon_sampler_drain(s);
	snprintf(path, sizeof(path), "%s/7.pcap", dir);
	{
		struct pcap_pkthdr h;
		uint8_t data[DPMON_SAMPLE_SNAPLEN];
		int snaplen = 0, dlt = 0;

		CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 3);
	}
	CHECK(count_files(dir) == 2);
	dpmon_sampler_free(s);
	dpmon_core_free(c);
	unlink(path);
	snprintf(path, sizeof(path), "%s/notes", dir);
	unlink(path);
	CHECK(rmdir(dir) == 0);
}

/*
 * A reload's pcap_dir and pcap_packets (dpmon_sampler_reconfigure): alert
 * 7's open file in A goes on in A up to the new limit (3) and is then
 * never reopened, even when the limit grows again; alert 9, opened after
 * the reload, writes to B; with pcap_dir "" alert 11 writes nothing.
 */
static void
test_reconfigure(const struct dpmon_generation *g, const struct fb *to7, const struct fb *to9)
{
	char a_dir[] = "/tmp/dpmon_test_sample_a.XXXXXX",
	     b_dir[] = "/tmp/dpmon_test_sample_b.XXXXXX";
	char path[128];
	struct dpmon_addr hosts[2] = {addr("10.1.0.1"), addr("2001:db8:1::7")};
	uint64_t ids[2] = {7, 9};
	struct dpmon_actions_conf conf;
	struct dpmon_sampler *s;
	struct dpmon_core *c;
	struct pcap_pkthdr h;
	uint8_t data[DPMON_SAMPLE_SNAPLEN];
	int snaplen = 0, dlt = 0;

	REQUIRE(mkdtemp(a_dir) != NULL && mkdtemp(b_dir) != NULL);
	memset(&conf, 0, sizeof(conf));
	snprintf(conf.pcap_dir, sizeof(conf.pcap_dir), "%s", a_dir);
	conf.pcap_packets = 4;
	s = dpmon_sampler_create(1, &conf);
	c = dpmon_core_create("sample2", 64, SOCKET_ID_ANY);
	REQUIRE(s != NULL && c != NULL);
	c->sample = dpmon_sampler_core(s, 0);
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 1) == 0); /* alert 7 */
	send_frames(c, g, to7, 2);
	dpmon_sampler_drain(s);

	snprintf(conf.pcap_dir, sizeof(conf.pcap_dir), "%s", b_dir);
	conf.pcap_packets = 3;
	dpmon_sampler_reconfigure(s, &conf);
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 2) == 0); /* alerts 7 and 9 */
	send_frames(c, g, to7, 5);
	send_frames(c, g, to9, 5);
	dpmon_sampler_drain(s);
	conf.pcap_packets = 10;
	dpmon_sampler_reconfigure(s, &conf);
	send_frames(c, g, to7, 5);
	dpmon_sampler_drain(s);
	snprintf(path, sizeof(path), "%s/7.pcap", a_dir);
	CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 3);
	CHECK(count_files(a_dir) == 1);
	snprintf(path, sizeof(path), "%s/9.pcap", b_dir);
	CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 3);
	CHECK(h.len == to9->n);
	CHECK(count_files(b_dir) == 1);

	conf.pcap_dir[0] = '\0';
	dpmon_sampler_reconfigure(s, &conf);
	ids[0] = 11;
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 1) == 0);
	send_frames(c, g, to7, 2);
	dpmon_sampler_drain(s);
	CHECK(count_files(a_dir) == 1 && count_files(b_dir) == 1);
	CHECK(dpmon_sampler_copied(s) == 19);

	dpmon_sampler_free(s);
	dpmon_core_free(c);
	snprintf(path, sizeof(path), "%s/7.pcap", a_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/9.pcap", b_dir);
	unlink(path);
	CHECK(rmdir(a_dir) == 0 && rmdir(b_dir) == 0);
}

/* Remove @p dir and the files in it. */
static void
remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[300];

	REQUIRE(d != NULL);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	CHECK(rmdir(dir) == 0);
}

/* Open file descriptors of this process. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	REQUIRE(d != NULL);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* Bytes allocated from the EAL heaps (rte_hash tables live there). */
static size_t
eal_heap_bytes(void)
{
	struct rte_malloc_socket_stats st;
	size_t n = 0;

	for (unsigned sock = 0; sock < RTE_MAX_NUMA_NODES; sock++)
		if (rte_malloc_get_socket_stats((int)sock, &st) == 0)
			n += st.heap_allocsz_bytes;
	return n;
}

/*
 * Alerts that come and go (detection with the real sampler, packets through
 * the worker's burst function): each ended alert keeps its sample in the
 * alert, and the sampler lets go of it: no capture file left open, no
 * hash table kept. 300 alerts, one at a time, with capture files of at most
 * 100 packets (1 written each: never complete).
 */
static void
test_alert_churn(struct dpmon_core *c, const struct dpmon_generation *g, const char *dir,
		 const struct fb *to_host)
{
	struct dpmon_config cfg;
	struct dpmon_sampler *s;
	struct dpmon_detect *d;
	struct dpmon_snapshot *snap;
	char json[512], path[160];
	int fds0, ended = 0, snaplen = 0, dlt = 0;
	struct pcap_pkthdr h;
	uint8_t data[DPMON_SAMPLE_SNAPLEN];
	size_t heap0;

	snprintf(json, sizeof(json),
		 "{\"ports\": [{\"device\": \"a\"}], \"subnets\": [{\"prefix\": \"10.1.0.0/16\"}],"
		 " \"detection\": {\"hold_s\": 0, \"recent_alerts\": 2,"
		 " \"thresholds\": {\"ingress\": {\"pps\": 10}}},"
		 " \"actions\": {\"pcap_dir\": \"%s\", \"pcap_packets\": 100}}",
		 dir);
	REQUIRE(dpmon_config_parse(json, "test", &cfg, stderr) == 0);
	s = dpmon_sampler_create(1, &cfg.actions);
	d = dpmon_detect_create(&cfg.detect, s, NULL);
	REQUIRE(s != NULL && d != NULL);
	c->sample = dpmon_sampler_core(s, 0);
	fds0 = open_fds();
	heap0 = eal_heap_bytes();
	for (unsigned k = 0; k < 2 * 300; k++) {
		snap = dpmon_snapshot_alloc(0, 0, 0, 1);
		REQUIRE(snap != NULL);
		snap->seq = k + 1;
		snap->uptime_s = k + 1;
		snap->interval_s = 1.0;
		snap->hosts[0].addr = addr("10.1.0.1");
		snap->hosts[0].dir[0].flows = snap->hosts[0].dir[1].flows = -1;
		snap->hosts[0].dir[DPMON_DIR_INGRESS].avg_pps = k % 2 == 0 ? 50 : 0;
		REQUIRE(dpmon_detect_run(d, snap, 1700000000.0 + k) == 0);
		if (k % 2 == 0)
			send_frames(c, g, to_host, 1); /* copied for the new alert */
		else
			ended += snap->n_alerts >= 1 && snap->alerts[0]->end_unix_s != 0 &&
				 snap->alerts[0]->sample != NULL &&
				 json_integer_value(get(snap->alerts[0]->sample, "packets")) == 1;
		dpmon_snapshot_free(snap);
	}
	CHECK(ended == 300);
	CHECK(open_fds() == fds0);
	CHECK(eal_heap_bytes() <= heap0);
	if (open_fds() != fds0 || eal_heap_bytes() > heap0)
		fprintf(stderr, "alert churn: %d descriptors, %zu EAL heap bytes more\n",
			open_fds() - fds0, eal_heap_bytes() - heap0);
	dpmon_detect_free(d);
	dpmon_sampler_free(s);
	c->sample = NULL;
	for (unsigned id = 1; id <= 300; id++) {
		snprintf(path, sizeof(path), "%s/%u.pcap", dir, id);
		CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 1); /* complete, 1 record */
		unlink(path);
	}
	dpmon_config_free(&cfg);
}

int
main(int argc, char **argv)
{
	struct dpmon_subnet_conf sub[2];
	struct dpmon_classifier cls;
	struct dpmon_generation *g0; /* the subnet counters the bursts count into */
	struct dpmon_actions_conf conf;
	struct dpmon_sampler *s;
	struct dpmon_core *c;
	char dir[] = "/tmp/dpmon_test_sample.XXXXXX", path[128];
	struct dpmon_addr hosts[DPMON_SAMPLE_WATCH_MAX + 1];
	uint64_t ids[DPMON_SAMPLE_WATCH_MAX + 1] = {7, 9};
	struct fb in1, in2, out1, other, v6, nonip;
	struct pcap_pkthdr h;
	uint8_t data[DPMON_SAMPLE_SNAPLEN];
	int snaplen = 0, dlt = 0;
	json_t *j;

	(void)argc;
	test_eal_init(argv[0]);
	mp = rte_pktmbuf_pool_create("test_sample", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	REQUIRE(mp != NULL);
	memset(sub, 0, sizeof(sub));
	REQUIRE(dpmon_prefix_parse("10.1.0.0/16", &sub[0].prefix, NULL) == 0);
	REQUIRE(dpmon_prefix_parse("2001:db8:1::/48", &sub[1].prefix, NULL) == 0);
	REQUIRE(dpmon_classifier_create(&cls, "sample", sub, 2, SOCKET_ID_ANY) == 0);
	g0 = dpmon_generation_create(&cls, 2, SOCKET_ID_ANY);
	REQUIRE(g0 != NULL);
	REQUIRE(mkdtemp(dir) != NULL);
	memset(&conf, 0, sizeof(conf));
	snprintf(conf.pcap_dir, sizeof(conf.pcap_dir), "%s", dir);
	conf.pcap_packets = 4;
	s = dpmon_sampler_create(1, &conf);
	c = dpmon_core_create("sample0", 64, SOCKET_ID_ANY);
	REQUIRE(s != NULL && c != NULL);
	c->sample = dpmon_sampler_core(s, 0);

	udp4(&in1, IP4(198, 51, 100, 1), 1000, IP4(10, 1, 0, 1), 53, 200); /* 242 B on the wire */
	udp4(&in2, IP4(198, 51, 100, 2), 1001, IP4(10, 1, 0, 1), 53, 0);
	fb_eth(&out1, NULL, 0, 0x0800); /* egress, TCP */
	fb_ipv4(&out1, 5, 6, IP4(10, 1, 0, 1), IP4(203, 0, 113, 5), 0, 40);
	fb_tcp(&out1, 80, 4000, 0x12);
	udp4(&other, IP4(198, 51, 100, 1), 1000, IP4(10, 1, 0, 2), 53, 0);
	fb_eth(&v6, NULL, 0, 0x86dd);
	fb_ipv6(&v6, 17, EXT6, IN6, 8);
	fb_udp(&v6, 7, 8, 0);
	fb_eth(&nonip, NULL, 0, 0x0806);
	fb_zero(&nonip, 28);

	/* Nothing watched: nothing copied, no summary, no file. */
	send_frames(c, g0, &in1, 3);
	dpmon_sampler_drain(s);
	CHECK(dpmon_sampler_copied(s) == 0 && dpmon_sampler_dropped(s) == 0);
	CHECK(dpmon_sampler_summary(s, 7) == NULL);
	snprintf(path, sizeof(path), "%s/7.pcap", dir);
	CHECK(access(path, F_OK) != 0);

	/* Too many hosts: refused, nothing changed. */
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, DPMON_SAMPLE_WATCH_MAX + 1) == -E2BIG);
	send_frames(c, g0, &in1, 1);
	CHECK(dpmon_sampler_copied(s) == 0);

	/* 10.1.0.1 (alert 7) and 2001:db8:1::7 (alert 9). */
	hosts[0] = addr("10.1.0.1");
	hosts[1] = addr("2001:db8:1::7");
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 2) == 0);
	send_frames(c, g0, &in1, 5);
	send_frames(c, g0, &in2, 3);
	send_frames(c, g0, &out1, 2);
	send_frames(c, g0, &other, 4);
	send_frames(c, g0, &v6, 1);
	send_frames(c, g0, &nonip, 1);
	CHECK(dpmon_sampler_copied(s) == 11);
	dpmon_sampler_drain(s);
	j = dpmon_sampler_summary(s, 7);
	REQUIRE(j != NULL);
	CHECK(json_integer_value(get(j, "packets")) == 10);
	CHECK(json_array_size(get(j, "sources")) == 3);
	check_entry(j, "sources", 0, "198.51.100.1", 0, 5);
	check_entry(j, "sources", 1, "198.51.100.2", 0, 3);
	check_entry(j, "sources", 2, "10.1.0.1", 0, 2);
	CHECK(json_array_size(get(j, "source_ports")) == 3);
	check_entry(j, "source_ports", 0, NULL, 1000, 5);
	check_entry(j, "source_ports", 1, NULL, 1001, 3);
	check_entry(j, "source_ports", 2, NULL, 80, 2);
	CHECK(json_array_size(get(j, "destination_ports")) == 2);
	check_entry(j, "destination_ports", 0, NULL, 53, 8);
	check_entry(j, "destination_ports", 1, NULL, 4000, 2);
	json_decref(j);
	j = dpmon_sampler_summary(s, 9);
	REQUIRE(j != NULL);
	CHECK(json_integer_value(get(j, "packets")) == 1);
	check_entry(j, "sources", 0, "2001:db8:ffff::1", 0, 1);
	check_entry(j, "source_ports", 0, NULL, 7, 1);
	check_entry(j, "destination_ports", 0, NULL, 8, 1);
	json_decref(j);
	CHECK(dpmon_sampler_summary(s, 8) == NULL);

	/* The capture files: the first pcap_packets (4) of alert 7, 1 of alert 9. */
	snprintf(path, sizeof(path), "%s/7.pcap", dir);
	CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 4);
	CHECK(snaplen == DPMON_SAMPLE_SNAPLEN && dlt == DLT_EN10MB);
	CHECK(h.caplen == DPMON_SAMPLE_SNAPLEN && h.len == in1.n && in1.n == 242);
	CHECK(memcmp(data, in1.b, DPMON_SAMPLE_SNAPLEN) == 0);
	CHECK(h.ts.tv_sec > 1600000000); /* wall-clock time */
	snprintf(path, sizeof(path), "%s/9.pcap", dir);
	CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 1);
	CHECK(h.caplen == v6.n && h.len == v6.n && memcmp(data, v6.b, v6.n) == 0);

	/* An IPv6 packet to or from ::ffff:10.1.0.1 is not a packet of the
	 * watched IPv4 host 10.1.0.1: nothing copied. */
	{
		static const uint8_t MAPPED[16] = {0, 0, 0,    0,    0,  0, 0, 0,
						   0, 0, 0xff, 0xff, 10, 1, 0, 1};
		struct fb m6to, m6from;
		uint64_t before = dpmon_sampler_copied(s);

		fb_eth(&m6to, NULL, 0, 0x86dd);
		fb_ipv6(&m6to, 17, EXT6, MAPPED, 8);
		fb_udp(&m6to, 7, 8, 0);
		fb_eth(&m6from, NULL, 0, 0x86dd);
		fb_ipv6(&m6from, 17, MAPPED, EXT6, 8);
		fb_udp(&m6from, 7, 8, 0);
		send_frames(c, g0, &m6to, 2);
		send_frames(c, g0, &m6from, 2);
		CHECK(dpmon_sampler_copied(s) == before);
	}

	/* A full ring: 1 100 copies without a drain; 1 023 fit, 77 dropped. */
	ids[0] = 11;
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 1) == 0);
	send_frames(c, g0, &in2, 1100);
	CHECK(dpmon_sampler_copied(s) == 11 + DPMON_SAMPLE_RING - 1);
	CHECK(dpmon_sampler_dropped(s) == 1100 - (DPMON_SAMPLE_RING - 1));
	dpmon_sampler_drain(s);
	j = dpmon_sampler_summary(s, 11);
	REQUIRE(j != NULL);
	CHECK(json_integer_value(get(j, "packets")) == DPMON_SAMPLE_RING - 1);
	json_decref(j);

	/* A host under an ingress and an egress alert is listed twice, ingress
	 * first: packets to it count for alert 21, packets from it for 22. */
	hosts[1] = hosts[0];
	ids[0] = 21;
	ids[1] = 22;
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 2) == 0);
	send_frames(c, g0, &in1, 3);
	send_frames(c, g0, &out1, 2);
	dpmon_sampler_drain(s);
	j = dpmon_sampler_summary(s, 21);
	REQUIRE(j != NULL);
	CHECK(json_integer_value(get(j, "packets")) == 3);
	check_entry(j, "sources", 0, "198.51.100.1", 0, 3);
	json_decref(j);
	j = dpmon_sampler_summary(s, 22);
	REQUIRE(j != NULL);
	CHECK(json_integer_value(get(j, "packets")) == 2);
	check_entry(j, "sources", 0, "10.1.0.1", 0, 2);
	check_entry(j, "destination_ports", 0, NULL, 4000, 2);
	json_decref(j);

	/* Watching stopped: nothing more copied; the summaries stay. */
	CHECK(dpmon_sampler_watch(s, NULL, NULL, NULL, 0) == 0);
	send_frames(c, g0, &in1, 10);
	dpmon_sampler_drain(s);
	CHECK(dpmon_sampler_copied(s) == 11 + DPMON_SAMPLE_RING - 1 + 5);
	j = dpmon_sampler_summary(s, 7);
	CHECK(j != NULL && json_integer_value(get(j, "packets")) == 10);
	json_decref(j);

	/* Reloaded settings: without pcap_dir no file; with it again (3 per
	 * alert), the alert's next copies are written there. */
	conf.pcap_dir[0] = '\0';
	dpmon_sampler_reconfigure(s, &conf);
	hosts[0] = addr("10.1.0.1");
	ids[0] = 30;
	CHECK(dpmon_sampler_watch(s, hosts, NULL, ids, 1) == 0);
	send_frames(c, g0, &in1, 2);
	dpmon_sampler_drain(s);
	snprintf(path, sizeof(path), "%s/30.pcap", dir);
	CHECK(access(path, F_OK) != 0);
	snprintf(conf.pcap_dir, sizeof(conf.pcap_dir), "%s", dir);
	conf.pcap_packets = 3;
	dpmon_sampler_reconfigure(s, &conf);
	send_frames(c, g0, &in1, 5);
	dpmon_sampler_drain(s);
	CHECK(read_pcap(path, &h, data, &snaplen, &dlt) == 3);
	j = dpmon_sampler_summary(s, 30);
	CHECK(j != NULL && json_integer_value(get(j, "packets")) == 7);
	json_decref(j);
	unlink(path);

	/* Host prefixes (host_prefix_len): 10.1.0.0/24 (alert 40) and
	 * 2001:db8:1::/64 (alert 41) take the packets of any address inside. */
	{
		const uint8_t depths[2] = {96 + 24, 64}; /* mapped-address bits */
		uint64_t before = dpmon_sampler_copied(s);

		hosts[0] = addr("10.1.0.0");
		hosts[1] = addr("2001:db8:1::");
		ids[0] = 40;
		ids[1] = 41;
		CHECK(dpmon_sampler_watch(s, hosts, depths, ids, 2) == 0);
		send_frames(c, g0, &in1, 2);   /* to 10.1.0.1 */
		send_frames(c, g0, &other, 1); /* to 10.1.0.2 */
		send_frames(c, g0, &out1, 1);  /* from 10.1.0.1 */
		send_frames(c, g0, &v6, 1);    /* to 2001:db8:1::7 */
		CHECK(dpmon_sampler_copied(s) == before + 5);
		dpmon_sampler_drain(s);
		j = dpmon_sampler_summary(s, 40);
		REQUIRE(j != NULL);
		CHECK(json_integer_value(get(j, "packets")) == 4);
		check_entry(j, "sources", 0, "198.51.100.1", 0, 3);
		check_entry(j, "sources", 1, "10.1.0.1", 0, 1);
		json_decref(j);
		j = dpmon_sampler_summary(s, 41);
		CHECK(j != NULL && json_integer_value(get(j, "packets")) == 1);
		json_decref(j);
		snprintf(path, sizeof(path), "%s/40.pcap", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/41.pcap", dir);
		unlink(path);
	}

	dpmon_sampler_free(s);
	test_alert_churn(c, g0, dir, &in1);
	dpmon_core_free(c);
	test_earlier_captures(g0, &in1, &v6);
	test_capture_bound(g0, &in1);
	test_reconfigure(g0, &in1, &v6);
	dpmon_generation_free(g0);
	dpmon_classifier_free(&cls);
	test_watch_race();
	remove_dir(dir);
	return test_finish("test_sample");
}
