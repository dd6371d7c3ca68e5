/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_actions_flowspec.c — the FlowSpec rules in the actions module
 * (lib/detect/actions_flowspec.h, dpmon_actions_flowspec): the exact
 * announce and withdraw lines on ExaBGP's FIFO, the budget
 * (flowspec.max_rules: refused and counted), the withdraw at the alert's
 * end, the list and DELETE, the dry run (listed, never sent), the
 * withdraw at stop unless keep_on_stop, the blackhole only as the
 * fallback of flowspec+blackhole and never at the start of such an alert,
 * the rules kept in the state file and withdrawn at the next start;
 * the manual rules (dpmon_flowspec_add): their checks, the budget, no
 * withdraw at an alert's end, only at DELETE and at stop; kept in the
 * state file with their components and announced again at the next start.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions.h"
#include "check.h"

static char dir[64];
static struct dpmon_subnet_conf subnet;
static struct dpmon_prefix whitelist; /* detection.whitelist when n_whitelist is 1 */
static uint32_t n_whitelist;

#define ANN1                                                                                    \
	"announce flow route { match { destination 10.0.0.5/32; protocol udp; source-port =53;" \
	" } then { discard; } }\n"
#define WD1                                                                                     \
	"withdraw flow route { match { destination 10.0.0.5/32; protocol udp; source-port =53;" \
	" } }\n"

/* The state file's entry of rule 3 of alert 7 (ANN1, WD1). */
#define ALERT_ENTRY_3                                                                           \
	"{\"id\": 3, \"alert_id\": 7, \"announce\": \"announce flow route { match { "           \
	"destination 10.0.0.5/32; protocol udp; source-port =53; } then { discard; } }\", "     \
	"\"withdraw\": \"withdraw flow route { match { destination 10.0.0.5/32; protocol udp; " \
	"source-port =53; } }\", \"created\": 1700000000.5}"

/* Read what the FIFO @p fd holds within @p timeout_ms into @p buf (emptied first). */
static const char *
read_fifo(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = 0;
	double end = check_now_s() + timeout_ms / 1000.0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	buf[0] = '\0';
	while (check_now_s() < end && n + 1 < len) {
		ssize_t r;

		if (poll(&p, 1, 50) <= 0)
			continue;
		r = read(fd, buf + n, len - n - 1);
		if (r > 0)
			n += (size_t)r;
		buf[n] = '\0';
		if (n > 0 && buf[n - 1] == '\n')
			break;
	}
	return buf;
}

static struct dpmon_actions *
start(struct dpmon_config *cfg, int *fd, bool announce, bool keep_on_stop, uint32_t max_rules)
{
	char fifo[128];
	struct dpmon_actions *a;

	snprintf(dir, sizeof(dir), "/tmp/test_actions_fs_XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	dpmon_config_defaults(cfg);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &subnet.prefix, NULL) == 0);
	cfg->subnets = &subnet;
	cfg->n_subnets = 1;
	cfg->detect.whitelist = n_whitelist ? &whitelist : NULL;
	cfg->detect.n_whitelist = n_whitelist;
	snprintf(fifo, sizeof(fifo), "%s/exabgp.cmd", dir);
	REQUIRE(mkfifo(fifo, 0600) == 0);
	*fd = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(*fd >= 0);
	snprintf(cfg->actions.exabgp_pipe, sizeof(cfg->actions.exabgp_pipe), "%s", fifo);
	cfg->actions.flowspec.announce = announce;
	cfg->actions.flowspec.keep_on_stop = keep_on_stop;
	cfg->actions.flowspec.max_rules = max_rules;
	a = dpmon_actions_create_cfg(cfg);
	REQUIRE(a != NULL);
	return a;
}

static void
stop(int fd)
{
	char p[128];

	close(fd);
	snprintf(p, sizeof(p), "%s/exabgp.cmd", dir);
	unlink(p);
	rmdir(dir);
}

/* A choice of @p n rules to 10.0.0.5 from source ports 53, 123, ... */
static void
choice(struct dpmon_fs_choice *c, uint32_t n)
{
	static const uint16_t ports[] = {53, 123, 11211};

	memset(c, 0, sizeof(*c));
	c->n_rules = n;
	c->coverage = 1;
	c->attack_packets = 300;
	for (uint32_t i = 0; i < n; i++) {
		struct dpmon_fs_rule *r = &c->rules[i];

		r->family = 4;
		r->dst_len = 32;
		REQUIRE(dpmon_addr_parse("10.0.0.5", &r->dst) == 0);
		r->has_proto = 1;
		r->proto = 17;
		r->n_sport = 1;
		r->sport[0] = ports[i];
		c->matched[i] = 100;
	}
}

static int
post(struct dpmon_actions *a, enum dpmon_action_kind kind, uint64_t id, enum dpmon_mitigation m)
{
	struct dpmon_action_event ev = {.kind = kind,
					.dir = DPMON_DIR_INGRESS,
					.alert_id = id,
					.start_unix_s = 1700000000.5,
					.end_unix_s =
						kind == DPMON_ACTION_ALERT_END ? 1700000060.5 : 0,
					.ban = true,
					.mitigation = m};

	REQUIRE(dpmon_addr_parse("10.0.0.5", &ev.addr) == 0);
	return dpmon_actions_post(a, &ev);
}

static void
test_announce_budget_end(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions_stats st;
	struct dpmon_fs_choice c;
	struct dpmon_blackhole *l;
	struct dpmon_addr host;
	char buf[4096];
	uint32_t refused = 9;
	json_t *j;
	char *s;
	int fd;
	struct dpmon_actions *a = start(&cfg, &fd, true, false, 2);

	REQUIRE(dpmon_addr_parse("10.0.0.5", &host) == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_START, 7, DPMON_MITIGATION_FLOWSPEC) == 0);
	choice(&c, 3);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 7, &host, false, &c, &refused), 2);
	CHECK_EQ_U64(refused, 1);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     ANN1 "announce flow route { match { destination 10.0.0.5/32; protocol udp;"
			  " source-port =123; } then { discard; } }\n") == 0);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.flowspec_rules, 2);
	CHECK_EQ_U64(st.flowspec_announced, 2);
	CHECK_EQ_U64(st.flowspec_refused, 1);
	CHECK_EQ_U64(st.blackholes, 0); /* mitigation flowspec: no blackhole at the start */
	j = dpmon_flowspec_list(a);
	json_object_del(json_array_get(json_object_get(j, "rules"), 0), "created");
	json_object_del(json_array_get(json_object_get(j, "rules"), 1), "created");
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(strcmp(s, "{\"rules\":[{\"action\":\"discard\",\"alert_id\":7,\"announced\":true,"
			"\"coverage\":1.0,\"id\":1,\"match\":\"destination 10.0.0.5/32; protocol "
			"udp; source-port =53;\",\"packets\":100},{\"action\":\"discard\","
			"\"alert_id\":7,\"announced\":true,\"coverage\":1.0,\"id\":2,\"match\":"
			"\"destination 10.0.0.5/32; protocol udp; source-port =123;\","
			"\"packets\":100}]}") == 0);
	free(s);
	json_decref(j);

	/* DELETE of rule 2, then the alert's end withdraws rule 1 (hold_s 0). */
	CHECK(dpmon_flowspec_remove(a, 2) == 0);
	CHECK(dpmon_flowspec_remove(a, 2) == -ENOENT);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     "withdraw flow route { match { destination 10.0.0.5/32; protocol udp;"
		     " source-port =123; } }\n") == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, 7, DPMON_MITIGATION_FLOWSPEC) == 0);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), WD1) == 0);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.flowspec_rules, 0);
	CHECK(dpmon_blackhole_list(a, &l) == 0);
	dpmon_actions_free(a);
	stop(fd);
}

static void
test_dry_run_and_fallback(void)
{
	struct dpmon_config cfg;
	struct dpmon_actions_stats st;
	struct dpmon_fs_choice c;
	struct dpmon_addr host;
	char buf[4096];
	uint32_t refused;
	int fd;
	json_t *j;
	struct dpmon_actions *a = start(&cfg, &fd, false, false, 100);

	REQUIRE(dpmon_addr_parse("10.0.0.5", &host) == 0);
	/* flowspec+blackhole: no blackhole at the start ... */
	CHECK(post(a, DPMON_ACTION_ALERT_START, 8, DPMON_MITIGATION_FLOWSPEC_BLACKHOLE) == 0);
	dpmon_actions_flush(a);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.blackholes, 0);
	/* ... a dry run lists the rule and sends nothing ... */
	choice(&c, 1);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 8, &host, true, &c, &refused), 1);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 1500), "") == 0);
	j = dpmon_flowspec_list(a);
	CHECK(json_is_false(
		json_object_get(json_array_get(json_object_get(j, "rules"), 0), "announced")));
	json_decref(j);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.flowspec_announced, 0);
	CHECK_EQ_U64(st.blackholes, 0);
	/* ... and with no rule possible the blackhole comes as the fallback. */
	choice(&c, 0);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 8, &host, true, &c, &refused), 0);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce route 10.0.0.5/32 next-hop 192.0.2.1\n") == 0);
	CHECK(post(a, DPMON_ACTION_ALERT_END, 8, DPMON_MITIGATION_FLOWSPEC_BLACKHOLE) == 0);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     "withdraw route 10.0.0.5/32 next-hop 192.0.2.1\n") == 0);
	dpmon_actions_free(a);
	stop(fd);
}

static void
test_stop(void)
{
	struct dpmon_fs_choice c;
	struct dpmon_config cfg;
	struct dpmon_addr host;
	char buf[4096];
	uint32_t refused;
	int fd;
	struct dpmon_actions *a = start(&cfg, &fd, true, false, 100);

	/* At stop, a rule is withdrawn (keep_on_stop false) ... */
	REQUIRE(dpmon_addr_parse("10.0.0.5", &host) == 0);
	choice(&c, 1);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 9, &host, false, &c, &refused), 1);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), ANN1) == 0);
	dpmon_actions_free(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), WD1) == 0);
	stop(fd);

	/* ... and stays with keep_on_stop. */
	a = start(&cfg, &fd, true, true, 100);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 9, &host, false, &c, &refused), 1);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), ANN1) == 0);
	dpmon_actions_free(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 1000), "") == 0);
	stop(fd);
}

#define WD2                                                                                      \
	"withdraw flow route { match { destination 10.0.0.5/32; protocol udp; source-port =123;" \
	" } }\n"

/* Write @p text to the state file @p path. */
static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	REQUIRE(fputs(text, f) >= 0);
	REQUIRE(fclose(f) == 0);
}

/* The number of rules in the state file @p path, -1 when it has no "flowspec". */
static int
file_rules(const char *path, uint64_t *first_id)
{
	json_t *doc = json_load_file(path, 0, NULL), *fs = json_object_get(doc, "flowspec");
	int n = json_is_array(fs) ? (int)json_array_size(fs) : -1;

	*first_id = (uint64_t)json_integer_value(json_object_get(json_array_get(fs, 0), "id"));
	json_decref(doc);
	return n;
}

/* Start on state file @p text (NULL: left as it is), the actions with
 * keep_on_stop; @return NULL when the start is refused. */
static struct dpmon_actions *
start_state(struct dpmon_config *cfg, int *fd, const char *text, char *path, size_t len)
{
	char fifo[128];

	if (text != NULL) {
		snprintf(dir, sizeof(dir), "/tmp/test_actions_fs_XXXXXX");
		REQUIRE(mkdtemp(dir) != NULL);
		snprintf(fifo, sizeof(fifo), "%s/exabgp.cmd", dir);
		REQUIRE(mkfifo(fifo, 0600) == 0);
		*fd = open(fifo, O_RDONLY | O_NONBLOCK);
		REQUIRE(*fd >= 0);
		snprintf(path, len, "%s/state.json", dir);
		write_file(path, text);
	}
	dpmon_config_defaults(cfg);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &subnet.prefix, NULL) == 0);
	cfg->subnets = &subnet;
	cfg->n_subnets = 1;
	snprintf(cfg->actions.exabgp_pipe, sizeof(cfg->actions.exabgp_pipe), "%s/exabgp.cmd", dir);
	snprintf(cfg->actions.state_file, sizeof(cfg->actions.state_file), "%s", path);
	cfg->actions.flowspec.keep_on_stop = true;
	return dpmon_actions_create_cfg(cfg);
}

/* A start on state file @p text is refused (and leaves nothing behind). */
static void
check_start_refused(const char *text)
{
	struct dpmon_config cfg;
	char path[128];
	int fd;

	CHECK(start_state(&cfg, &fd, text, path, sizeof(path)) == NULL);
	unlink(path);
	stop(fd);
}

static void
test_state_file(void)
{
	struct dpmon_actions_stats st;
	struct dpmon_fs_choice c;
	struct dpmon_config cfg;
	struct dpmon_addr host;
	char path[128], buf[4096], more[4096];
	uint32_t refused;
	uint64_t id = 0;
	int fd;
	json_t *j;
	struct dpmon_actions *a = start_state(
		&cfg, &fd,
		"{\"version\": 1, \"blackholes\": [], \"flowspec\": [" ALERT_ENTRY_3 ","
		"{\"id\": 5, \"alert_id\": 8, \"announce\": \"announce flow route { match { "
		"destination 10.0.0.5/32; protocol udp; source-port =123; } then { discard; } }\", "
		"\"withdraw\": \"withdraw flow route { match { destination 10.0.0.5/32; protocol "
		"udp; "
		"source-port =123; } }\", \"created\": 1700000001.5}]}\n",
		path, sizeof(path));

	/* At the start: exactly the two rules' withdraw lines, and a file without them. */
	REQUIRE(a != NULL);
	dpmon_actions_flush(a);
	read_fifo(fd, buf, sizeof(buf), 3000);
	if (strcmp(buf, WD1) == 0)
		strcat(buf, read_fifo(fd, more, sizeof(more), 3000));
	CHECK(strcmp(buf, WD1 WD2) == 0);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 500), "") == 0);
	CHECK_EQ_U64(file_rules(path, &id), 0);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.flowspec_rules, 0);

	/* A new rule takes an id past the file's, and is kept in the file ... */
	REQUIRE(dpmon_addr_parse("10.0.0.5", &host) == 0);
	choice(&c, 1);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 9, &host, false, &c, &refused), 1);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), ANN1) == 0);
	j = dpmon_flowspec_list(a);
	CHECK_EQ_U64(json_integer_value(
			     json_object_get(json_array_get(json_object_get(j, "rules"), 0), "id")),
		     6);
	json_decref(j);
	CHECK_EQ_U64(file_rules(path, &id), 1);
	CHECK_EQ_U64(id, 6);
	/* ... stays announced at the stop (keep_on_stop) and in the file ... */
	dpmon_actions_free(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 1000), "") == 0);
	CHECK_EQ_U64(file_rules(path, &id), 1);
	/* ... and the next start withdraws it. */
	a = start_state(&cfg, &fd, NULL, path, sizeof(path));
	REQUIRE(a != NULL);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), WD1) == 0);
	CHECK_EQ_U64(file_rules(path, &id), 0);
	dpmon_actions_free(a);
	unlink(path);
	stop(fd);

	/* A file written before rules were kept loads: its blackhole, no line. */
	a = start_state(&cfg, &fd,
			"{\"version\": 1, \"blackholes\": [{\"address\": \"10.0.0.9\", "
			"\"manual\": true, \"alert_ids\": [], \"since\": 1700000000.5}]}\n",
			path, sizeof(path));
	REQUIRE(a != NULL);
	dpmon_actions_flush(a);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.blackholes, 1);
	CHECK_EQ_U64(st.flowspec_rules, 0);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce route 10.0.0.9/32 next-hop 192.0.2.1\n") == 0);
	CHECK_EQ_U64(file_rules(path, &id), -1); /* not rewritten: nothing changed */
	dpmon_actions_free(a);
	unlink(path);
	stop(fd);

	/* A malformed rule stops the start, naming its JSON path. */
	check_start_refused("{\"version\": 1, \"blackholes\": [], \"flowspec\": [{\"id\": 0}]}\n");
}

/* A manual rule to @p dst (address/len) from UDP source port @p sport. */
static struct dpmon_fs_rule
manual(const char *dst, unsigned len, uint16_t sport)
{
	struct dpmon_fs_rule r = {
		.family = 4, .dst_len = (uint8_t)len, .has_proto = 1, .proto = 17};

	REQUIRE(dpmon_addr_parse(dst, &r.dst) == 0);
	r.n_sport = 1;
	r.sport[0] = sport;
	return r;
}

/* dpmon_flowspec_add of @p r: its result, and its reason when it is @p want_rc. */
static void
check_add(struct dpmon_actions *a, const struct dpmon_fs_rule *r, int64_t want_rc,
	  const char *want_why)
{
	const char *why = "";
	int64_t rc = dpmon_flowspec_add(a, r, &why);

	CHECK_EQ_U64((uint64_t)rc, (uint64_t)want_rc);
	if (want_why != NULL && rc == want_rc)
		CHECK(strcmp(why, want_why) == 0);
}

static void
test_manual(void)
{
	struct dpmon_actions_stats st;
	struct dpmon_config cfg;
	struct dpmon_fs_rule r;
	char buf[4096];
	int fd;
	json_t *j;
	struct dpmon_actions *a;

	/* The whitelist is the upper half of the subnet 10.0.0.0/24. */
	REQUIRE(dpmon_prefix_parse("10.0.0.128/25", &whitelist, NULL) == 0);
	n_whitelist = 1;
	a = start(&cfg, &fd, true, false, 2);
	n_whitelist = 0;

	r = manual("10.0.0.5", 32, 53);
	check_add(a, &r, 1, NULL);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), ANN1) == 0);
	/* The same match is the same route: refused whatever its action. */
	r.action.kind = DPMON_FS_RATE_LIMIT;
	check_add(a, &r, -EEXIST, "rule 1 has the same match");
	/* Not a rule routers accept. */
	r = manual("10.0.0.5", 32, 123);
	r.proto = 1;
	check_add(a, &r, -EINVAL, "ports need protocol tcp or udp");
	r = manual("10.0.0.5", 32, 123);
	r.frag = DPMON_FS_FRAG_IS;
	check_add(a, &r, -EINVAL, "ports with a fragment match (a later fragment has no ports)");
	/* Out of scope: another subnet, wider than the subnet, meeting the whitelist. */
	r = manual("10.0.1.5", 32, 123);
	check_add(a, &r, -EDOM, "destination: not inside a monitored subnet");
	r = manual("10.0.0.0", 16, 123);
	check_add(a, &r, -EDOM, "destination: not inside a monitored subnet");
	r = manual("10.0.0.0", 24, 123);
	check_add(a, &r, -EDOM, "destination: overlaps 10.0.0.128/25 of detection.whitelist");
	r = manual("10.0.0.200", 32, 123);
	check_add(a, &r, -EDOM, "destination: overlaps 10.0.0.128/25 of detection.whitelist");
	/* The budget (max_rules 2) counts manual rules too. */
	r = manual("10.0.0.0", 25, 123);
	check_add(a, &r, 2, NULL);
	r = manual("10.0.0.6", 32, 123);
	check_add(a, &r, -ENOSPC, NULL);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce flow route { match { destination 10.0.0.0/25; protocol udp;"
		     " source-port =123; } then { discard; } }\n") == 0);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.flowspec_rules, 2);
	CHECK_EQ_U64(st.flowspec_refused, 1);
	j = dpmon_flowspec_list(a);
	CHECK(json_is_null(
		json_object_get(json_array_get(json_object_get(j, "rules"), 0), "alert_id")));
	json_decref(j);

	/* An alert's end leaves manual rules alone (their alert id is 0) ... */
	CHECK(post(a, DPMON_ACTION_ALERT_END, 7, DPMON_MITIGATION_FLOWSPEC) == 0);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 1000), "") == 0);
	dpmon_actions_stats(a, &st);
	CHECK_EQ_U64(st.flowspec_rules, 2);
	/* ... DELETE withdraws one, the stop the other. */
	CHECK(dpmon_flowspec_remove(a, 1) == 0);
	dpmon_actions_flush(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000), WD1) == 0);
	dpmon_actions_free(a);
	CHECK(strcmp(read_fifo(fd, buf, sizeof(buf), 3000),
		     "withdraw flow route { match { destination 10.0.0.0/25; protocol udp;"
		     " source-port =123; } }\n") == 0);
	stop(fd);
}

/* Without actions.exabgp_pipe a manual rule is refused (nothing would
 * announce it), unless the rules are a dry run. */
static void
test_manual_no_pipe(void)
{
	struct dpmon_config cfg;
	struct dpmon_fs_rule r = manual("10.0.0.5", 32, 53);
	struct dpmon_actions *a;
	json_t *j;

	dpmon_config_defaults(&cfg);
	REQUIRE(dpmon_prefix_parse("10.0.0.0/24", &subnet.prefix, NULL) == 0);
	cfg.subnets = &subnet;
	cfg.n_subnets = 1;
	REQUIRE(cfg.actions.exabgp_pipe[0] == '\0' && cfg.actions.flowspec.announce);
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	check_add(a, &r, -ENOTCONN,
		  "actions.exabgp_pipe is not set: nothing would announce the rule");
	j = dpmon_flowspec_list(a);
	CHECK(json_array_size(json_object_get(j, "rules")) == 0);
	json_decref(j);
	dpmon_actions_free(a);

	cfg.actions.flowspec.announce = false;
	a = dpmon_actions_create_cfg(&cfg);
	REQUIRE(a != NULL);
	check_add(a, &r, 1, NULL);
	dpmon_actions_free(a);
}

#define ANN_SSH                                                                                  \
	"announce flow route { match { destination 10.0.0.9/32; protocol tcp; destination-port " \
	"=22; } then { rate-limit 9600; } }\n"
#define WD_OUT                                                                     \
	"withdraw flow route { match { destination 192.168.0.9/32; protocol tcp; " \
	"destination-port =22; } }\n"
/* The state file's entry of manual rule @p id to @p dst, TCP port 22. */
#define MANUAL_ENTRY(id, dst)                                                                     \
	"{\"id\": " #id ", \"alert_id\": 0, \"created\": 1700000002.5, "                          \
	"\"announce\": \"announce flow route { match { destination " dst "/32; protocol tcp; "    \
	"destination-port =22; } then { rate-limit 9600; } }\", "                                 \
	"\"withdraw\": \"withdraw flow route { match { destination " dst "/32; protocol tcp; "    \
	"destination-port =22; } }\", "                                                           \
	"\"rule\": {\"destination\": \"" dst "\", \"protocol\": 6, \"destination_ports\": [22], " \
	"\"action\": \"rate-limit 9600\"}}"

/* Read @p lines lines from the FIFO @p fd within @p timeout_ms into @p buf,
 * sorted (the pipe writer orders withdraws before announces, not by id). */
static const char *
read_sorted(int fd, char *buf, size_t len, unsigned lines, int timeout_ms)
{
	char part[1024], *v[8], *save = NULL;
	unsigned n = 0, got = 0;

	buf[0] = '\0';
	for (double end = check_now_s() + timeout_ms / 1000.0;
	     got < lines && check_now_s() < end;) {
		read_fifo(fd, part, sizeof(part), 200);
		REQUIRE(strlen(buf) + strlen(part) < len);
		strcat(buf, part);
		got = 0;
		for (const char *c = buf; *c != '\0'; c++)
			got += *c == '\n';
	}
	for (char *t = strtok_r(buf, "\n", &save); t != NULL && n < 8;
	     t = strtok_r(NULL, "\n", &save))
		v[n++] = t;
	for (unsigned i = 1; i < n; i++) /* insertion sort of a few lines */
		for (unsigned k = i; k > 0 && strcmp(v[k - 1], v[k]) > 0; k--) {
			char *x = v[k];

			v[k] = v[k - 1];
			v[k - 1] = x;
		}
	snprintf(part, sizeof(part), "%s", "");
	for (unsigned i = 0; i < n; i++) {
		REQUIRE(strlen(part) + strlen(v[i]) + 2 < sizeof(part));
		strcat(part, v[i]);
		strcat(part, "\n");
	}
	snprintf(buf, len, "%s", part);
	return buf;
}

/* The "id" of every rule of dpmon_flowspec_list, with its alert id (0: manual), as text. */
static const char *
listed(struct dpmon_actions *a, char *buf, size_t len)
{
	json_t *j = dpmon_flowspec_list(a), *x;
	size_t i, n = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(j, "rules"), i, x)
	{
		n += (size_t)snprintf(buf + n, len - n, "%s%lld/%lld %s", i ? ", " : "",
				      json_integer_value(json_object_get(x, "id")),
				      json_integer_value(json_object_get(x, "alert_id")),
				      json_string_value(json_object_get(x, "match")));
		REQUIRE(n < len);
	}
	json_decref(j);
	return buf;
}

/*
 * Two listed rules with one match are one BGP route: when one goes, the
 * other is announced again after the withdraw, so that the route stays.
 * Here a manual rule and an alert's rule to the same traffic.
 */
static void
test_shared_route(void)
{
	struct dpmon_fs_choice c;
	struct dpmon_config cfg;
	struct dpmon_addr host;
	struct dpmon_fs_rule r = manual("10.0.0.5", 32, 53);
	const char *why = "";
	uint32_t refused = 9;
	char buf[4096];
	int fd;
	struct dpmon_actions *a = start(&cfg, &fd, true, false, 10);

	REQUIRE(dpmon_addr_parse("10.0.0.5", &host) == 0);
	CHECK_EQ_U64(dpmon_flowspec_add(a, &r, &why), 1);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000), ANN1);
	CHECK(post(a, DPMON_ACTION_ALERT_START, 7, DPMON_MITIGATION_FLOWSPEC) == 0);
	choice(&c, 1);
	CHECK_EQ_U64(dpmon_actions_flowspec(a, 7, &host, false, &c, &refused), 1);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000), ANN1);
	/* The alert ends (hold_s 0): its withdraw, then the manual rule's announce. */
	CHECK(post(a, DPMON_ACTION_ALERT_END, 7, DPMON_MITIGATION_FLOWSPEC) == 0);
	dpmon_actions_flush(a);
	read_fifo(fd, buf, sizeof(buf), 3000);
	if (strcmp(buf, WD1) == 0) {
		char more[4096];

		strcat(buf, read_fifo(fd, more, sizeof(more), 3000));
	}
	CHECK_EQ_STR(buf, WD1 ANN1);
	CHECK_EQ_STR(listed(a, buf, sizeof(buf)),
		     "1/0 destination 10.0.0.5/32; protocol udp; source-port =53;");
	/* DELETE of the last one withdraws the route for good. */
	CHECK(dpmon_flowspec_remove(a, 1) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000), WD1);
	dpmon_actions_free(a);
	stop(fd);
}

/* Manual rules survive a restart: announced again from the state file. */
static void
test_state_manual(void)
{
	struct dpmon_config cfg;
	char path[128], buf[4096];
	uint64_t id = 0;
	int fd;
	struct dpmon_actions *a = start_state(
		&cfg, &fd,
		"{\"version\": 1, \"blackholes\": [], \"flowspec\": [" ALERT_ENTRY_3
		", " MANUAL_ENTRY(4, "192.168.0.9") ", " MANUAL_ENTRY(5, "10.0.0.9") "]}\n",
		path, sizeof(path));
	struct dpmon_fs_rule r = manual("10.0.0.6", 32, 123);
	const char *why = "";

	/* The alert's rule and the manual one outside the subnets are
	 * withdrawn; the manual rule inside is announced again, under its id. */
	REQUIRE(a != NULL);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_sorted(fd, buf, sizeof(buf), 3, 3000), ANN_SSH WD1 WD_OUT);
	CHECK_EQ_STR(listed(a, buf, sizeof(buf)),
		     "5/0 destination 10.0.0.9/32; protocol tcp; destination-port =22;");
	CHECK_EQ_U64(file_rules(path, &id), 1);
	CHECK_EQ_U64(id, 5);
	/* A manual rule of this run joins it in the file, its id past the file's. */
	CHECK_EQ_U64(dpmon_flowspec_add(a, &r, &why), 6);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000),
		     "announce flow route { match { destination 10.0.0.6/32; protocol udp; "
		     "source-port =123; } then { discard; } }\n");
	CHECK_EQ_U64(file_rules(path, &id), 2);
	dpmon_actions_free(a); /* keep_on_stop: nothing withdrawn */
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 500), "");

	/* The next start announces both again, with their ids and actions. */
	a = start_state(&cfg, &fd, NULL, path, sizeof(path));
	REQUIRE(a != NULL);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_sorted(fd, buf, sizeof(buf), 2, 3000),
		     "announce flow route { match { destination 10.0.0.6/32; protocol udp; "
		     "source-port =123; } then { discard; } }\n" ANN_SSH);
	CHECK_EQ_STR(listed(a, buf, sizeof(buf)),
		     "5/0 destination 10.0.0.9/32; protocol tcp; destination-port =22;, "
		     "6/0 destination 10.0.0.6/32; protocol udp; source-port =123;");
	/* DELETE removes one from the file for good. */
	CHECK(dpmon_flowspec_remove(a, 5) == 0);
	dpmon_actions_flush(a);
	CHECK_EQ_U64(file_rules(path, &id), 1);
	CHECK_EQ_U64(id, 6);
	dpmon_actions_free(a);
	unlink(path);
	stop(fd);

	/* A manual rule whose components do not parse stops the start. */
	check_start_refused("{\"version\": 1, \"blackholes\": [], \"flowspec\": [{\"id\": 2, "
			    "\"alert_id\": 0, \"withdraw\": \"withdraw flow route { match { "
			    "destination 10.0.0.9/32; } }\", \"rule\": {\"destination\": "
			    "\"10.0.0.x\"}}]}\n");

	/* A manual rule whose components parse but are now refused (a port
	 * given twice, as an earlier version wrote it) is withdrawn. */
	a = start_state(&cfg, &fd,
			"{\"version\": 1, \"blackholes\": [], \"flowspec\": [{\"id\": 2, "
			"\"alert_id\": 0, \"withdraw\": \"withdraw flow route { match { "
			"destination 10.0.0.9/32; protocol tcp; destination-port =22; } }\", "
			"\"rule\": {\"destination\": \"10.0.0.9\", \"protocol\": 6, "
			"\"destination_ports\": [22, 22]}}]}\n",
			path, sizeof(path));
	REQUIRE(a != NULL);
	dpmon_actions_flush(a);
	CHECK_EQ_STR(read_fifo(fd, buf, sizeof(buf), 3000),
		     "withdraw flow route { match { destination 10.0.0.9/32; protocol tcp; "
		     "destination-port =22; } }\n");
	CHECK_EQ_STR(listed(a, buf, sizeof(buf)), "");
	CHECK_EQ_U64(file_rules(path, &id), 0);
	dpmon_actions_free(a);
	unlink(path);
	stop(fd);

	/* Two rules under one id would share one route of the pipe's writer
	 * (only the last reaches ExaBGP, both listed as announced): refused. */
	check_start_refused("{\"version\": 1, \"blackholes\": [], \"flowspec\": [" MANUAL_ENTRY(
		5, "10.0.0.9") ", " MANUAL_ENTRY(5, "10.0.0.10") "]}\n");

	/* An id past 2^53 - 1 (exact in JSON numbers) is refused: the next
	 * rule's id would go past 2^63 and be listed negative. */
	check_start_refused("{\"version\": 1, \"blackholes\": [], \"flowspec\": [" MANUAL_ENTRY(
		9007199254740992, "10.0.0.9") "]}\n");
	/* 2^53 - 1 itself loads. */
	a = start_state(&cfg, &fd,
			"{\"version\": 1, \"blackholes\": [], \"flowspec\": [" MANUAL_ENTRY(
				9007199254740991, "10.0.0.9") "]}\n",
			path, sizeof(path));
	CHECK(a != NULL);
	if (a != NULL) {
		dpmon_actions_flush(a);
		CHECK_EQ_STR(listed(a, buf, sizeof(buf)),
			     "9007199254740991/0 destination 10.0.0.9/32; protocol tcp; "
			     "destination-port =22;");
		dpmon_actions_free(a);
	}
	unlink(path);
	stop(fd);
}

int
main(void)
{
	test_announce_budget_end();
	test_dry_run_and_fallback();
	test_stop();
	test_state_file();
	test_manual();
	test_shared_route();
	test_manual_no_pipe();
	test_state_manual();
	return check_finish("test_actions_flowspec");
}
