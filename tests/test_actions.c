/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_actions.c — unit tests of lib/detect/actions.c: events posted directly,
 * the notify script (a shell script written here that records its
 * arguments and stdin), ExaBGP's command pipe (a FIFO read here), the
 * blackhole list (manual and alert interplay, subnet check) and the state
 * file. No DPDK. Every test runs in its own temporary directory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "check.h"
#include "config.h"
#include "heartbeat.h"
#include "log.h"

static char dir[64];
static struct dpmon_subnet_conf subnets[2];

/* Events the actions dropped on a full queue (dpmon_actions_stats). */
static uint64_t
events_dropped(struct dpmon_actions *a)
{
	struct dpmon_actions_stats st;

	dpmon_actions_stats(a, &st);
	return st.events_dropped;
}

/* Notify script runs that exited 0 (dpmon_actions_stats). */
static uint64_t
events_ok(struct dpmon_actions *a)
{
	struct dpmon_actions_stats st;

	dpmon_actions_stats(a, &st);
	return st.notify_ok;
}

/* A fresh directory and a config monitoring 10.0.0.0/24 and 2001:db8::/64. */
static void
setup(struct dpmon_config *cfg)
{
	snprintf(dir, sizeof(dir), "/tmp/test_actions_XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	dpmon_config_defaults(cfg);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &subnets[0].prefix, NULL) == 0);
	REQUIRE(dpmon_prefix_parse("2001:db8::/64", &subnets[1].prefix, NULL) == 0);
	cfg->subnets = subnets;
	cfg->n_subnets = 2;
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void
path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* The whole file @p name of the test directory, or "" (static buffer). */
static const char *
slurp(const char *name)
{
	static char buf[65536];
	char p[256];
	FILE *f;
	size_t n = 0;

	path_in(p, sizeof(p), name);
	buf[0] = '\0';
	f = fopen(p, "r");
	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* A notify script recording "$@" into args and stdin into stdin. */
static void
write_script(struct dpmon_config *cfg, const char *extra)
{
	char p[256];
	FILE *f;

	path_in(p, sizeof(p), "notify.sh");
	f = fopen(p, "w");
	REQUIRE(f != NULL);
	fprintf(f, "#!/bin/sh\necho \"$@\" >> '%s/args'\ncat >> '%s/stdin'\n%s", dir, dir, extra);
	fclose(f);
	REQUIRE(chmod(p, 0755) == 0);
	snprintf(cfg->actions.notify_script, sizeof(cfg->actions.notify_script), "%s", p);
}

static struct dpmon_addr
addr(const char *text)
{
	struct dpmon_addr a;

	REQUIRE(dpmon_addr_parse(text, &a) == 0);
	return a;
}

static int
post(struct dpmon_actions *a, enum dpmon_action_kind kind, const char *ip, uint64_t id, bool ban)
{
	struct dpmon_action_event ev = {
		.kind = kind,
		.addr = addr(ip),
		.dir = DPMON_DIR_INGRESS,
		.alert_id = id,
		.start_unix_s = 1700000000.5,
		.end_unix_s = kind == DPMON_ACTION_ALERT_END ? 1700000060.5 : 0,
		.ban = ban,
		.alert = json_pack("{s:I,s:s}", "id", (json_int_t)id, "address", ip)};

	return dpmon_actions_post(a, &ev);
}

/* Read what is in the FIFO @p fd within @p timeout_ms (appending to @p buf). */
static const char *
read_fifo(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = strlen(buf);
	double end = check_now_s() + timeout_ms / 1000.0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t r;

	while (check_now_s() < end && n + 1 < len) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		r = read(fd, buf + n, len - n - 1);
		if (r > 0)
			n += (size_t)r;
		buf[n] = '\0';
		if (n > 0 && buf[n - 1] == '\n')
			break;
	}
	buf[n] = '\0';
	return buf;
}

/* The notify script gets the documented arguments and the alert on stdin. */
static void
test_notify(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;

	setup(&cfg);
	write_script(&cfg, "");
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.5", 7, false) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "10.0.0.5", 7, false) == 0);
	CHECK(dpmon_blackhole_add(a, &(struct dpmon_addr){0}, NULL) == -EDOM);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(slurp("args"), "10.0.0.5 ingress attack_start 7\n"
				    "10.0.0.5 ingress attack_end 7\n");
	CHECK_EQ_STR(slurp("stdin"), "{\"id\":7,\"address\":\"10.0.0.5\"}\n"
				     "{\"id\":7,\"address\":\"10.0.0.5\"}\n");
	/* Not banned: no blackhole. */
	{
		struct dpmon_blackhole *l;

		CHECK(dpmon_blackhole_list(a, &l) == 0);
	}
	dpmon_actions_free(a);
	teardown();
}

/*
 * The script inherits only stdin, stdout and stderr: a descriptor of dpmon
 * opened without O_CLOEXEC (as DPDK's memory files are) must not be kept
 * alive by a child the script leaves behind.
 */
static void
test_notify_fds(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char marker[256], extra[512];
	int fd;

	setup(&cfg);
	path_in(marker, sizeof(marker), "marker");
	fd = open(marker, O_RDWR | O_CREAT, 0600); /* inheritable */
	REQUIRE(fd >= 0);
	snprintf(extra, sizeof(extra), "ls -l /proc/$$/fd | grep -c '%s' >> '%s/fds'\n", marker,
		 dir);
	write_script(&cfg, extra);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.5", 7, false) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(slurp("fds"), "0\n");
	dpmon_actions_free(a);
	close(fd);
	teardown();
}

/* A manual ban and unban notify too: direction "none", alert id 0. */
static void
test_notify_manual(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_addr ad = addr("2001:db8::5");
	char want[256];

	setup(&cfg);
	write_script(&cfg, "");
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_add(a, &ad, NULL) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_remove(a, &ad) == 0);
	CHECK(dpmon_blackhole_remove(a, &ad) == 1); /* idempotent: no second unban */
	dpmon_actions_flush(a);
	CHECK_EQ_STR(slurp("args"), "2001:db8::5 none ban 0\n2001:db8::5 none unban 0\n");
	/* stdin: the entry, "since" varies: check the fixed fields. */
	snprintf(want, sizeof(want),
		 "{\"address\":\"2001:db8::5\",\"source\":\"manual\","
		 "\"alert_id\":null,\"since\":");
	CHECK(strncmp(slurp("stdin"), want, strlen(want)) == 0);
	dpmon_actions_free(a);
	teardown();
}

/* A script that sleeps is killed at notify_timeout_ms, children included. */
static void
test_notify_timeout(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	double t0;

	setup(&cfg);
	write_script(&cfg, "sleep 30\necho late >> \"$0.late\"\n");
	cfg.actions.notify_timeout_ms = 300;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	t0 = check_now_s();
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.6", 8, false) == 0);
	CHECK(check_now_s() - t0 < 0.1); /* posting never waits */
	dpmon_actions_flush(a);
	CHECK(check_now_s() - t0 >= 0.3);
	CHECK(check_now_s() - t0 < 5);
	CHECK_EQ_STR(slurp("args"), "10.0.0.6 ingress attack_start 8\n");
	usleep(200000);
	CHECK_EQ_STR(slurp("notify.sh.late"), ""); /* killed, not finished */
	dpmon_actions_free(a);
	teardown();
}

/* The thread's heartbeat "actions": beaten while it waits (every 1 s at
 * most), overdue past 1 s + notify_timeout_ms + 5 s, that limit following
 * a reload, and gone with the module. */
static void
test_heartbeat(void)
{
	struct dpmon_heartbeat_late late[4];
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	uint64_t now;

	setup(&cfg);
	cfg.actions.notify_timeout_ms = 300;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	usleep(1200000); /* idle: the 1 s tick beats */
	now = dpmon_heartbeat_now_ns();
	CHECK_EQ_U64(dpmon_heartbeat_overdue(now, late, 4), 0);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(now + 6400000000ull, late, 4), 1);
	CHECK_EQ_STR(late[0].name, "actions");
	CHECK_EQ_U64(late[0].max_age_ms, 1000 + 300 + 5000);
	cfg.actions.notify_timeout_ms = 2000;
	CHECK(dpmon_actions_reconfigure(a, &cfg) == 0);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 6400000000ull, late, 4), 0);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 8100000000ull, late, 4), 1);
	CHECK_EQ_U64(late[0].max_age_ms, 1000 + 2000 + 5000);
	dpmon_actions_free(a);
	CHECK_EQ_U64(dpmon_heartbeat_overdue(dpmon_heartbeat_now_ns() + 100000000000ull, late, 4),
		     0);
	teardown();
}

/* Exact announce/withdraw lines on the FIFO; host routes only. */
static void
test_exabgp(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char fifo[256], buf[4096] = "";
	struct dpmon_addr v4 = addr("10.0.0.5"), v6 = addr("2001:db8::7");
	struct dpmon_blackhole b;
	int fd;

	setup(&cfg);
	path_in(fifo, sizeof(fifo), "exabgp.cmd");
	REQUIRE(mkfifo(fifo, 0600) == 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	snprintf(cfg.actions.exabgp_pipe, sizeof(cfg.actions.exabgp_pipe), "%s", fifo);
	snprintf(cfg.actions.exabgp_community, sizeof(cfg.actions.exabgp_community), "65535:666");
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_add(a, &v4, &b) == 0);
	CHECK(b.manual && b.alert_id == 0);
	CHECK(dpmon_blackhole_add(a, &v4, NULL) == 1);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 2000),
		     "announce route 10.0.0.5/32 next-hop 192.0.2.1 community [65535:666]\n");
	CHECK(dpmon_blackhole_get(a, &v4, &b) == 0 && b.announced);
	buf[0] = '\0';
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8::7", 3, true) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 2000),
		     "announce route 2001:db8::7/128 next-hop 100::1 community [65535:666]\n");
	buf[0] = '\0';
	CHECK(post(a, DPMON_ACTION_ALERT_END, "2001:db8::7", 3, true) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 2000),
		     "withdraw route 2001:db8::7/128 next-hop 100::1\n");
	buf[0] = '\0';
	CHECK(dpmon_blackhole_remove(a, &v4) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 2000),
		     "withdraw route 10.0.0.5/32 next-hop 192.0.2.1\n");
	CHECK(dpmon_blackhole_get(a, &v6, &b) == -ENOENT);
	dpmon_actions_free(a);
	close(fd);
	teardown();
}

/* No reader: posting and adding do not block; the reader gets the
 * announce when it comes; a reader that leaves and comes back gets it again. */
static void
test_exabgp_no_reader(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char fifo[256], buf[4096] = "";
	struct dpmon_addr v4 = addr("10.0.0.9");
	struct dpmon_blackhole b;
	double t0;
	int fd;

	setup(&cfg);
	path_in(fifo, sizeof(fifo), "exabgp.cmd");
	REQUIRE(mkfifo(fifo, 0600) == 0);
	snprintf(cfg.actions.exabgp_pipe, sizeof(cfg.actions.exabgp_pipe), "%s", fifo);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	t0 = check_now_s();
	CHECK(dpmon_blackhole_add(a, &v4, NULL) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.9", 4, true) == 0);
	dpmon_actions_flush(a);
	CHECK(check_now_s() - t0 < 1.0);
	CHECK(dpmon_blackhole_get(a, &v4, &b) == 0 && !b.announced);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce route 10.0.0.9/32 next-hop 192.0.2.1\n");
	close(fd); /* ExaBGP goes away ... */
	usleep(1500 * 1000);
	fd = open(fifo, O_RDONLY | O_NONBLOCK); /* ... and comes back */
	REQUIRE(fd >= 0);
	buf[0] = '\0';
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce route 10.0.0.9/32 next-hop 192.0.2.1\n");
	dpmon_actions_free(a);
	close(fd);
	teardown();
}

/* A link to a regular file put in the FIFO's place: never written through,
 * the route stays unannounced; the FIFO back: announced there. */
static void
test_exabgp_not_fifo(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char fifo[256], victim[256], buf[4096] = "";
	struct dpmon_addr v4 = addr("10.0.0.11");
	struct dpmon_blackhole b;
	FILE *f;
	int fd;

	setup(&cfg);
	path_in(fifo, sizeof(fifo), "exabgp.cmd");
	path_in(victim, sizeof(victim), "victim");
	f = fopen(victim, "w");
	REQUIRE(f != NULL && fputs("precious\n", f) >= 0 && fclose(f) == 0);
	REQUIRE(symlink(victim, fifo) == 0);
	snprintf(cfg.actions.exabgp_pipe, sizeof(cfg.actions.exabgp_pipe), "%s", fifo);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_add(a, &v4, NULL) == 0);
	dpmon_actions_flush(a);
	f = fopen(victim, "r");
	REQUIRE(f != NULL);
	CHECK(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	CHECK_EQ_STR(buf, "precious\n");
	CHECK(dpmon_blackhole_get(a, &v4, &b) == 0 && !b.announced);
	REQUIRE(unlink(fifo) == 0);
	REQUIRE(mkfifo(fifo, 0600) == 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	buf[0] = '\0';
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce route 10.0.0.11/32 next-hop 192.0.2.1\n");
	dpmon_actions_free(a);
	close(fd);
	unlink(victim);
	teardown();
}

/* A reload naming another pipe and a community: everything announced there again. */
static void
test_exabgp_reconfigure(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char f1[256], f2[256], buf[4096] = "";
	struct dpmon_addr v4 = addr("10.0.0.5");
	int fd1, fd2;

	setup(&cfg);
	path_in(f1, sizeof(f1), "one.cmd");
	path_in(f2, sizeof(f2), "two.cmd");
	REQUIRE(mkfifo(f1, 0600) == 0 && mkfifo(f2, 0600) == 0);
	fd1 = open(f1, O_RDONLY | O_NONBLOCK);
	fd2 = open(f2, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd1 >= 0 && fd2 >= 0);
	snprintf(cfg.actions.exabgp_pipe, sizeof(cfg.actions.exabgp_pipe), "%s", f1);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_add(a, &v4, NULL) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd1, buf, sizeof(buf), 2000),
		     "announce route 10.0.0.5/32 next-hop 192.0.2.1\n");
	snprintf(cfg.actions.exabgp_pipe, sizeof(cfg.actions.exabgp_pipe), "%s", f2);
	snprintf(cfg.actions.exabgp_community, sizeof(cfg.actions.exabgp_community), "65000:1");
	CHECK(dpmon_actions_reconfigure(a, &cfg) == 0);
	buf[0] = '\0';
	CHECK_EQ_STR(read_fifo(fd2, buf, sizeof(buf), 3000),
		     "announce route 10.0.0.5/32 next-hop 192.0.2.1 community [65000:1]\n");
	buf[0] = '\0';
	CHECK_EQ_STR(read_fifo(fd1, buf, sizeof(buf), 300), ""); /* nothing more on the old one */
	dpmon_actions_free(a);
	close(fd1);
	close(fd2);
	teardown();
}

/*
 * Many subnets and many blackholes: a reload (run on the main lcore, the
 * list locked) checks every entry against the subnets by a binary search,
 * not by a scan of every subnet (65536 x 20000: many seconds). Overlapping
 * and nested subnets, both families: the same answers as the prefixes.
 */
static void
test_many_subnets(void)
{
	enum {
		N_SUB = 65536,
		N_BH = 20000
	};
	static struct dpmon_subnet_conf many[N_SUB];
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_blackhole *l = NULL;
	struct dpmon_addr x;
	double t0, took;
	int added = 0;

	setup(&cfg);
	/* 11.0.0.0/24 .. 11.255.254.0/24, then 11.255.255.0/24 nested in
	 * 11.255.0.0/16 and 2001:db8::/32 holding 2001:db8:1::/48. */
	for (uint32_t i = 0; i < N_SUB - 3; i++) {
		dpmon_addr_from_v4(&many[i].prefix.addr, 0x0b000000u | i << 8);
		many[i].prefix.family = 4;
		many[i].prefix.depth = 24;
	}
	REQUIRE(dpmon_prefix_parse("11.255.0.0/16", &many[N_SUB - 3].prefix, NULL) == 0);
	REQUIRE(dpmon_prefix_parse("2001:db8::/32", &many[N_SUB - 2].prefix, NULL) == 0);
	REQUIRE(dpmon_prefix_parse("2001:db8:1::/48", &many[N_SUB - 1].prefix, NULL) == 0);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	for (uint32_t i = 0; i < N_BH; i++) {
		dpmon_addr_from_v4(&x, 0x0a000000u | i); /* 10.0.0.0/24 of setup() */
		added += dpmon_blackhole_add(a, &x, NULL) == 0;
		if (i >= 255)
			break;
	}
	cfg.subnets = many;
	cfg.n_subnets = N_SUB;
	CHECK(dpmon_actions_reconfigure(a, &cfg) == 0); /* 10.0.0.0/24 gone: all withdrawn */
	CHECK(dpmon_blackhole_list(a, &l) == 0);
	free(l);
	for (uint32_t i = 0; i < N_BH; i++) {
		dpmon_addr_from_v4(&x, 0x0b000000u | (i * 797u % 0xffffffu));
		added += dpmon_blackhole_add(a, &x, NULL) == 0;
	}
	CHECK(added == 256 + N_BH);
	t0 = check_now_s();
	CHECK(dpmon_actions_reconfigure(a, &cfg) == 0);
	took = check_now_s() - t0;
	printf("reload with %d subnets and %d blackholes: %.3f s\n", N_SUB, N_BH, took);
	CHECK(took < 1.0);
	CHECK(dpmon_blackhole_list(a, &l) == N_BH); /* every one still inside */
	free(l);
	/* Edges: both ends of the nested /16, outside it, and IPv6. */
	CHECK(dpmon_blackhole_add(a, &(struct dpmon_addr){0}, NULL) == -EDOM);
	x = addr("11.255.255.255");
	CHECK(dpmon_blackhole_add(a, &x, NULL) == 0);
	x = addr("12.0.0.0");
	CHECK(dpmon_blackhole_add(a, &x, NULL) == -EDOM);
	x = addr("10.255.255.255");
	CHECK(dpmon_blackhole_add(a, &x, NULL) == -EDOM);
	x = addr("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
	CHECK(dpmon_blackhole_add(a, &x, NULL) == 0);
	x = addr("2001:db9::");
	CHECK(dpmon_blackhole_add(a, &x, NULL) == -EDOM);
	x = addr("::ffff:0:0");
	CHECK(dpmon_blackhole_add(a, &x, NULL) == -EDOM);
	dpmon_actions_free(a);
	teardown();
}

/* Manual and alert blackholes of one address. */
static void
test_interplay(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_addr h = addr("10.0.0.20"), out = addr("192.168.1.1");
	struct dpmon_blackhole b, *l = NULL;

	setup(&cfg);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	/* Alert, then manual: the alert's end keeps it. */
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.20", 11, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &h, &b) == 0 && !b.manual && b.alert_id == 11);
	CHECK(dpmon_blackhole_add(a, &h, &b) == 0);
	CHECK(b.manual && b.alert_id == 11);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "10.0.0.20", 11, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &h, &b) == 0 && b.manual && b.alert_id == 0);
	CHECK(dpmon_blackhole_remove(a, &h) == 0);
	CHECK(dpmon_blackhole_get(a, &h, &b) == -ENOENT);
	/* Two banning alerts: the entry lasts until the last ends. */
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.20", 12, true) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.20", 13, true) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "10.0.0.20", 12, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &h, &b) == 0 && !b.manual && b.alert_id == 13);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "10.0.0.20", 13, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &h, &b) == -ENOENT);
	/* An operator's DELETE ends an alert blackhole too. */
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.20", 14, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_remove(a, &h) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "10.0.0.20", 14, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &h, &b) == -ENOENT);
	/* Outside every monitored subnet: never blackholed. */
	CHECK(dpmon_blackhole_add(a, &out, NULL) == -EDOM);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "192.168.1.1", 15, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_list(a, &l) == 0 && l == NULL);
	/* Reload without 2001:db8::/64: its blackhole goes. */
	CHECK(dpmon_blackhole_add(a, &(struct dpmon_addr){0}, NULL) == -EDOM);
	{
		struct dpmon_addr v6 = addr("2001:db8::1");

		CHECK(dpmon_blackhole_add(a, &v6, NULL) == 0);
		CHECK(dpmon_blackhole_add(a, &h, NULL) == 0);
		cfg.n_subnets = 1;
		CHECK(dpmon_actions_reconfigure(a, &cfg) == 0);
		CHECK(dpmon_blackhole_get(a, &v6, &b) == -ENOENT);
		CHECK(dpmon_blackhole_get(a, &h, &b) == 0);
		CHECK(dpmon_blackhole_add(a, &v6, NULL) == -EDOM);
	}
	CHECK(events_dropped(a) == 0);
	dpmon_actions_free(a);
	teardown();
}

/* The state file: exact content, atomic (no temporary left), reloaded. */
static void
test_state(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_addr m = addr("10.0.0.1"), al = addr("2001:db8::2");
	struct dpmon_blackhole b, *l = NULL;
	char path[256];
	json_t *doc;
	json_error_t je;
	DIR *d;
	struct dirent *e;
	int files = 0;

	setup(&cfg);
	path_in(path, sizeof(path), "state.json");
	snprintf(cfg.actions.state_file, sizeof(cfg.actions.state_file), "%s", path);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(access(path, F_OK) != 0); /* nothing changed yet */
	CHECK(dpmon_blackhole_add(a, &m, NULL) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8::2", 21, true) == 0);
	dpmon_actions_flush(a);
	dpmon_actions_free(a);
	doc = json_load_file(path, 0, &je);
	REQUIRE(doc != NULL);
	CHECK(json_integer_value(json_object_get(doc, "version")) == 1);
	CHECK(json_array_size(json_object_get(doc, "blackholes")) == 2);
	{
		json_t *e0 = json_array_get(json_object_get(doc, "blackholes"), 0);
		json_t *e1 = json_array_get(json_object_get(doc, "blackholes"), 1);

		CHECK_EQ_STR(json_string_value(json_object_get(e0, "address")), "10.0.0.1");
		CHECK(json_is_true(json_object_get(e0, "manual")));
		CHECK(json_array_size(json_object_get(e0, "alert_ids")) == 0);
		CHECK_EQ_STR(json_string_value(json_object_get(e1, "address")), "2001:db8::2");
		CHECK(json_is_false(json_object_get(e1, "manual")));
		CHECK(json_integer_value(json_array_get(json_object_get(e1, "alert_ids"), 0)) ==
		      21);
	}
	json_decref(doc);
	d = opendir(dir);
	REQUIRE(d != NULL);
	while ((e = readdir(d)) != NULL)
		files += e->d_name[0] != '.';
	closedir(d);
	CHECK(files == 1); /* no temporary file left */

	/* Restart: both back, as they were. */
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_list(a, &l) == 2);
	CHECK(l != NULL && dpmon_addr_cmp(&l[0].addr, &m) == 0 && l[0].manual);
	CHECK(l != NULL && dpmon_addr_cmp(&l[1].addr, &al) == 0 && !l[1].manual &&
	      l[1].alert_id == 21);
	free(l);
	CHECK(dpmon_blackhole_remove(a, &m) == 0);
	/* The restored alert 21 never ends; a new alert of the host takes the
	 * entry over, and its end removes it. */
	CHECK(post(a, DPMON_ACTION_ALERT_END, "2001:db8::2", 99, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &al, &b) == 0 && b.alert_id == 21);
	/* Nor does this run's alert 21 of the host (ids start at 1 again), one
	 * that does not ban: its end is another alert's, the entry stays. */
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8::2", 21, false) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "2001:db8::2", 21, false) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &al, &b) == 0 && b.alert_id == 21 && !b.manual);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8::2", 30, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &al, &b) == 0 && b.alert_id == 30);
	dpmon_actions_flush(a);
	dpmon_actions_free(a);
	/* ... restart once more: alert 30 is restored, then ends the entry. */
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8::2", 31, true) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "2001:db8::2", 31, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &al, &b) == -ENOENT);
	CHECK(dpmon_blackhole_add(a, &al, NULL) == 0); /* for the subnet check below */
	dpmon_actions_flush(a);
	dpmon_actions_free(a);

	/* A restart with a subnet gone drops its blackhole. */
	cfg.n_subnets = 1;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_get(a, &al, &b) == -ENOENT);
	dpmon_actions_free(a);

	/* A corrupt file stops the start with its name in the message. */
	{
		FILE *f = fopen(path, "w");

		REQUIRE(f != NULL);
		fputs("{\"version\": 1, \"blackholes\": [{\"address\": \"10.0.0.300\"}]}", f);
		fclose(f);
	}
	errno = 0;
	CHECK(dpmon_actions_create_cfg(&cfg) == NULL);
	CHECK(errno == EINVAL);
	{
		FILE *f = fopen(path, "w");

		REQUIRE(f != NULL);
		fputs("{\"version\": 1, \"blackholes\": [", f);
		fclose(f);
	}
	CHECK(dpmon_actions_create_cfg(&cfg) == NULL);
	/* Not a regular file (checked by the configuration, but it may have
	 * changed since): refused at once, a FIFO without a writer included. */
	REQUIRE(unlink(path) == 0);
	REQUIRE(mkfifo(path, 0600) == 0);
	errno = 0;
	CHECK(dpmon_actions_create_cfg(&cfg) == NULL);
	CHECK(errno == EINVAL);
	REQUIRE(unlink(path) == 0);
	REQUIRE(mkdir(path, 0700) == 0);
	errno = 0;
	CHECK(dpmon_actions_create_cfg(&cfg) == NULL);
	CHECK(errno == EINVAL);
	/* A file that may exist but cannot be reached (a link to itself) is
	 * not a missing one: the rules it may hold would never be withdrawn. */
	REQUIRE(rmdir(path) == 0);
	REQUIRE(symlink("state.json", path) == 0);
	errno = 0;
	CHECK(dpmon_actions_create_cfg(&cfg) == NULL);
	CHECK(errno == EINVAL);
	teardown();
}

/* A full queue drops the event (counted) and posting still never waits. */
static void
test_queue_full(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char flag[256], extra[512];
	double t0;
	int rc = 0, ok = 0;
	FILE *f;

	setup(&cfg);
	path_in(flag, sizeof(flag), "go");
	/* The first run waits for the flag file; later runs find it at once. */
	snprintf(extra, sizeof(extra), "while [ ! -e '%s' ]; do sleep 0.05; done\n", flag);
	write_script(&cfg, extra);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.1", 1, false) == 0);
	usleep(300 * 1000); /* the thread took it and waits in the script */
	t0 = check_now_s();
	for (int i = 0; i < 1025; i++) {
		rc = post(a, DPMON_ACTION_ALERT_START, "10.0.0.2", (uint64_t)i + 2, false);
		ok += rc == 0;
	}
	CHECK(check_now_s() - t0 < 1.0);
	CHECK(ok == 1024);
	CHECK(rc == -ENOBUFS);
	CHECK(events_dropped(a) == 1);
	f = fopen(flag, "w");
	REQUIRE(f != NULL);
	fclose(f);
	dpmon_actions_flush(a);
	{
		const char *args = slurp("args");
		int lines = 0;

		for (const char *p = args; *p; p++)
			lines += *p == '\n';
		CHECK(lines == 1025); /* every queued event ran, in order */
		CHECK(strncmp(args,
			      "10.0.0.1 ingress attack_start 1\n10.0.0.2 ingress attack_start 2\n",
			      63) == 0);
	}
	dpmon_actions_free(a);
	teardown();
}

/*
 * A full queue (a slow script) drops an event's script, never its list
 * change: the end of a banning alert still removes its blackhole (else it
 * stayed announced for good), the start of one still adds it.
 */
static void
test_queue_full_ban(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_blackhole b;
	struct dpmon_addr ended = addr("10.0.0.3"), started = addr("10.0.0.4");
	char flag[256], extra[512];
	int ok = 0;
	FILE *f;

	setup(&cfg);
	path_in(flag, sizeof(flag), "go");
	snprintf(extra, sizeof(extra), "while [ ! -e '%s' ]; do sleep 0.05; done\n", flag);
	write_script(&cfg, extra);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.1", 1, false) == 0);
	usleep(300 * 1000); /* the thread took it and waits in the script */
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.3", 100, true) == 0);
	for (int i = 0; i < 1023; i++)
		ok += post(a, DPMON_ACTION_ALERT_START, "10.0.0.2", (uint64_t)i + 2, false) == 0;
	CHECK(ok == 1023);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "10.0.0.3", 100, true) == -ENOBUFS);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.4", 200, true) == -ENOBUFS);
	CHECK(events_dropped(a) == 2);
	/* At once, while the script still waits. */
	CHECK(dpmon_blackhole_get(a, &ended, &b) == -ENOENT);
	CHECK(dpmon_blackhole_get(a, &started, &b) == 0 && b.alert_id == 200);
	f = fopen(flag, "w");
	REQUIRE(f != NULL);
	fclose(f);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_get(a, &ended, &b) == -ENOENT);
	CHECK(dpmon_blackhole_get(a, &started, &b) == 0 && b.alert_id == 200);
	dpmon_actions_free(a);
	teardown();
}

static void *
free_thread(void *a)
{
	dpmon_actions_free(a);
	return NULL;
}

/* The log lines written to @p f since it was set up, as one string (static buffer). */
static const char *
log_text(FILE *f)
{
	static char buf[65536];
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	return buf;
}

/* Lines of @p text holding @p what. */
static unsigned
count_lines(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *l = text; l != NULL && *l != '\0';
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n'), *hit = strstr(l, what);

		n += hit != NULL && (end == NULL || hit < end);
	}
	return n;
}

/*
 * At the stop, the queued events' list changes are saved at once, even
 * while a script runs; the queued scripts are dropped (counted in one log
 * line), and the running one is killed at its timeout, within the stop's
 * grace of 1 s.
 */
static void
test_stop(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char path[256];
	pthread_t t;
	const char *st;
	FILE *log = tmpfile();
	double t0;

	REQUIRE(log != NULL);
	dpmon_log_setup(log, 100, DPMON_LOG_WINDOW_NS, NULL);
	setup(&cfg);
	write_script(&cfg, "sleep 30\n");
	cfg.actions.notify_timeout_ms = 1000;
	path_in(path, sizeof(path), "state.json");
	snprintf(cfg.actions.state_file, sizeof(cfg.actions.state_file), "%s", path);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.1", 1, true) == 0);
	usleep(200 * 1000); /* its script sleeps */
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.2", 2, true) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.3", 3, true) == 0);
	t0 = check_now_s();
	REQUIRE(pthread_create(&t, NULL, free_thread, a) == 0);
	usleep(300 * 1000); /* the first script still sleeps */
	st = slurp("state.json");
	CHECK(strstr(st, "\"10.0.0.2\"") != NULL);
	CHECK(strstr(st, "\"10.0.0.3\"") != NULL);
	pthread_join(t, NULL);
	CHECK(check_now_s() - t0 < 1.0 + 0.5); /* the first script's timeout, and slack */
	CHECK_EQ_STR(slurp("args"), "10.0.0.1 ingress attack_start 1\n");
	st = log_text(log);
	CHECK_EQ_U64(count_lines(st, "actions: stop: 2 queued notify script run(s) dropped"), 1);
	CHECK_EQ_U64(count_lines(st, "attack_start 1: killed after 1000 ms"), 1);
	dpmon_log_setup(NULL, DPMON_LOG_BURST, DPMON_LOG_WINDOW_NS, NULL);
	fclose(log);
	teardown();
}

/*
 * At the stop, a script that runs longer than the grace is killed after
 * 1 s, and dozens of queued scripts cost nothing: 40 manual bans, a
 * script that sleeps with a timeout of 10 s, and the stop takes about 1 s.
 */
static void
test_stop_bound(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	struct dpmon_addr host;
	char ip[32];
	FILE *log = tmpfile();
	double t0, took;

	REQUIRE(log != NULL);
	dpmon_log_setup(log, 100, DPMON_LOG_WINDOW_NS, NULL);
	setup(&cfg);
	write_script(&cfg, "sleep 30\n");
	cfg.actions.notify_timeout_ms = 10000;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	for (int i = 1; i <= 40; i++) {
		snprintf(ip, sizeof(ip), "10.0.0.%d", i);
		host = addr(ip);
		CHECK(dpmon_blackhole_add(a, &host, NULL) == 0);
	}
	for (int k = 0; k < 100 && slurp("args")[0] == '\0'; k++)
		usleep(20 * 1000); /* the first script runs */
	t0 = check_now_s();
	dpmon_actions_free(a);
	took = check_now_s() - t0;
	CHECK(took >= 0.9 && took < 1.0 + 0.5);
	CHECK_EQ_STR(slurp("args"), "10.0.0.1 none ban 0\n");
	CHECK_EQ_U64(
		count_lines(log_text(log), "actions: stop: 39 queued notify script run(s) dropped"),
		1);
	CHECK_EQ_U64(count_lines(log_text(log), "ban 0: killed at dpmon's stop"), 1);
	dpmon_log_setup(NULL, DPMON_LOG_BURST, DPMON_LOG_WINDOW_NS, NULL);
	fclose(log);
	teardown();
}

/*
 * A script's stdout and stderr go to the log, NOTIFY_OUTPUT_LINES (10)
 * lines of a run at most, each cut at 200 bytes, the rest counted in one
 * line; the "notify" kind's budget bounds the runs together.
 */
static void
test_notify_output(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	FILE *log = tmpfile();
	const char *text;

	REQUIRE(log != NULL);
	dpmon_log_setup(log, 15, DPMON_LOG_WINDOW_NS, NULL);
	setup(&cfg);
	/* 100 000 lines of 6 bytes on stdout, a line of 300 on stderr first. */
	write_script(&cfg, "printf '%0300d\\n' 0 >&2\nyes 12345 | head -n 100000\n");
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	for (int i = 1; i <= 3; i++)
		CHECK(post(a, DPMON_ACTION_ALERT_START, "10.0.0.1", (uint64_t)i, false) == 0);
	dpmon_actions_flush(a);
	CHECK(events_ok(a) == 3);
	dpmon_actions_free(a);
	text = log_text(log);
	/* Run 1: its 10 lines, then the count; run 2: 4 lines fit the budget of 15. */
	CHECK_EQ_U64(count_lines(text, ": output: 12345"), 9 + 4 - 1);
	CHECK_EQ_U64(count_lines(text, "attack_start 1: output: 000000"), 1);
	CHECK_EQ_U64(count_lines(text, "attack_start 2: output: 000000"), 1);
	CHECK_EQ_U64(count_lines(text, "0000000 [cut]"), 2);
	CHECK_EQ_U64(count_lines(text, "attack_start 1: 599946 more bytes of output not logged"),
		     1);
	CHECK_EQ_U64(count_lines(text, "more bytes of output not logged"), 1);
	CHECK(strlen(text) < 8000);
	dpmon_log_setup(NULL, DPMON_LOG_BURST, DPMON_LOG_WINDOW_NS, NULL);
	fclose(log);
	teardown();
}

/*
 * Blackholes of subnets with a host_prefix_len (10.9.0.0/16 by /24,
 * 2001:db8:5::/48 by /64): the route is the host's prefix, whether an
 * operator named any address inside it or an alert its prefix; the state
 * file keeps the prefix.
 */
static void
test_exabgp_host_prefix(void)
{
	static struct dpmon_subnet_conf sub[3];
	struct dpmon_config cfg;
	struct dpmon_actions *a;
	char fifo[256], state[256], buf[4096] = "";
	struct dpmon_addr in24 = addr("10.9.1.77"), in64 = addr("2001:db8:5:1::abc");
	struct dpmon_blackhole b, *l = NULL;
	json_t *j;
	int fd;

	setup(&cfg);
	REQUIRE(dpmon_prefix_parse("10.9.0.0/16", &sub[0].prefix, NULL) == 0);
	sub[0].host_prefix_len = 24;
	REQUIRE(dpmon_prefix_parse("2001:db8:5::/48", &sub[1].prefix, NULL) == 0);
	sub[1].host_prefix_len = 64;
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &sub[2].prefix, NULL) == 0);
	cfg.subnets = sub;
	cfg.n_subnets = 3;
	path_in(fifo, sizeof(fifo), "exabgp.cmd");
	path_in(state, sizeof(state), "state.json");
	REQUIRE(mkfifo(fifo, 0600) == 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd >= 0);
	snprintf(cfg.actions.exabgp_pipe, sizeof(cfg.actions.exabgp_pipe), "%s", fifo);
	snprintf(cfg.actions.state_file, sizeof(cfg.actions.state_file), "%s", state);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_host_len(a, &in24) == 24);
	CHECK(dpmon_blackhole_host_len(a, &in64) == 64);
	{
		struct dpmon_addr whole = addr("10.0.0.5"), out = addr("192.168.1.1");

		CHECK(dpmon_blackhole_host_len(a, &whole) == 32);
		CHECK(dpmon_blackhole_host_len(a, &out) == -EDOM);
	}

	CHECK(dpmon_blackhole_add(a, &in24, &b) == 0);
	CHECK(b.manual && b.prefix_len == 24);
	CHECK(dpmon_addr_cmp(&b.addr, &(struct dpmon_addr){0}) != 0);
	j = dpmon_blackhole_json(&b);
	CHECK_EQ_STR(json_string_value(json_object_get(j, "address")), "10.9.1.0/24");
	json_decref(j);
	{
		struct dpmon_addr other = addr("10.9.1.3"); /* the same host */

		CHECK(dpmon_blackhole_add(a, &other, NULL) == 1);
	}
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 2000),
		     "announce route 10.9.1.0/24 next-hop 192.0.2.1\n");
	buf[0] = '\0';
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8:5:1::", 4, true) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 2000),
		     "announce route 2001:db8:5:1::/64 next-hop 100::1\n");
	CHECK(dpmon_blackhole_get(a, &in64, &b) == 0 && b.prefix_len == 64 && b.alert_id == 4);
	CHECK(dpmon_blackhole_list(a, &l) == 2);
	free(l);
	dpmon_actions_free(a);

	/* The state file keeps the prefixes; a restart restores them. */
	j = json_load_file(state, 0, NULL);
	REQUIRE(j != NULL);
	CHECK_EQ_STR(json_string_value(json_object_get(
			     json_array_get(json_object_get(j, "blackholes"), 0), "address")),
		     "10.9.1.0/24");
	CHECK_EQ_STR(json_string_value(json_object_get(
			     json_array_get(json_object_get(j, "blackholes"), 1), "address")),
		     "2001:db8:5:1::/64");
	json_decref(j);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	CHECK(dpmon_blackhole_get(a, &in24, &b) == 0 && b.prefix_len == 24 && b.manual);
	buf[0] = '\0';
	CHECK(post(a, DPMON_ACTION_ALERT_START, "2001:db8:5:1::", 1, true) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, "2001:db8:5:1::", 1, true) == 0);
	dpmon_actions_flush(a);
	CHECK(dpmon_blackhole_remove(a, &in24) == 0);
	dpmon_actions_flush(a);
	/* Announced again at the start, then both withdrawn: the prefixes' routes
	 * (the /64 may be withdrawn before its announce was written). */
	for (int k = 0; k < 8 && strstr(buf, "withdraw route 10.9.1.0/24") == NULL; k++)
		read_fifo(fd, buf, sizeof(buf), 500);
	CHECK(strstr(buf, "announce route 10.9.1.0/24 next-hop 192.0.2.1\n") != NULL);
	CHECK(strstr(buf, "withdraw route 2001:db8:5:1::/64 next-hop 100::1\n") != NULL);
	CHECK(strstr(buf, "withdraw route 10.9.1.0/24 next-hop 192.0.2.1\n") != NULL);
	CHECK(dpmon_blackhole_list(a, &l) == 0);
	dpmon_actions_free(a);
	close(fd);
	teardown();
}

int
main(void)
{
	test_notify();
	test_notify_manual();
	test_notify_timeout();
	test_heartbeat();
	test_exabgp();
	test_exabgp_host_prefix();
	test_exabgp_no_reader();
	test_exabgp_not_fifo();
	test_exabgp_reconfigure();
	test_interplay();
	test_notify_fds();
	test_state();
	test_queue_full();
	test_queue_full_ban();
	test_many_subnets();
	test_stop();
	test_stop_bound();
	test_notify_output();
	return check_finish("test_actions");
}
