/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * actions_state.c — the state file (actions_state.h): read once before
 * the actions thread starts, rewritten by the thread after each change of
 * the blackholes or of the FlowSpec rules sent, so that blackholes survive
 * a restart and no rule outlives its alert.
 *
 * The file is JSON {"version":1,"blackholes":[{"address","manual",
 * "alert_ids":[...],"since"}],"flowspec":[{"id","alert_id","announce",
 * "withdraw","created"}]}; "flowspec" is optional (files written before
 * dpmon kept rules load as none). It is rewritten after each change as a
 * new file of mode 0600 (file_write.h: a random temporary in the same
 * directory, fsync, rename and an fsync of the directory).
 * A missing file is an empty list; a file that cannot be read or parsed
 * stops the start (create returns NULL): starting with an empty list would
 * overwrite the operator's blackholes at the next change.
 */
#include "actions_state.h"
#include "file.h"
#include "file_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_VERSION 1

/* The largest state file read: DPMON_MAX_BLACKHOLES entries with
 * BH_MAX_ALERTS alert ids each take about 24 MiB as written. */
#define STATE_MAX_FILE_BYTES (64u << 20)

/* ------------------------------------------------------------------------
 * Saving (the actions thread).
 * --------------------------------------------------------------------- */

static int
cmp_bh(const void *x, const void *y)
{
	return dpmon_addr_cmp(&((const struct bh *)x)->addr, &((const struct bh *)y)->addr);
}

json_t *
actions_state_json(struct bh_list *l, json_t *flowspec)
{
	json_t *list = json_array(), *ids, *e;
	char t[DPMON_PREFIX_STRLEN];

	if (l->n > 1) /* a stable file for diffs */
		qsort(l->bh, l->n, sizeof(l->bh[0]), cmp_bh);
	for (uint32_t i = 0; list != NULL && i < l->n; i++) {
		const struct bh *b = &l->bh[i];

		ids = json_array();
		for (uint32_t k = 0; ids != NULL && k < b->n_alerts; k++)
			json_array_append_new(ids, json_integer((json_int_t)b->alert_ids[k]));
		e = json_pack("{s:s,s:b,s:o,s:f}", "address",
			      dpmon_host_format(&b->addr, b->len, t, sizeof(t)), "manual",
			      b->manual, "alert_ids", ids, "since", b->since);
		if (e == NULL || json_array_append_new(list, e) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	if (list == NULL || flowspec == NULL) {
		json_decref(list);
		json_decref(flowspec);
		return NULL;
	}
	return json_pack("{s:i,s:o,s:o}", "version", STATE_VERSION, "blackholes", list, "flowspec",
			 flowspec);
}

int
actions_state_write(const char *path, const json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	size_t len;
	int rc;

	if (text == NULL)
		return -ENOMEM;
	len = strlen(text);
	text[len++] = '\n'; /* json_dumps' NUL becomes the final newline */
	rc = dpmon_file_write_new(path, DPMON_FILE_MODE_PRIVATE, text, len, true);
	free(text);
	return rc;
}

/* ------------------------------------------------------------------------
 * Loading (before the thread starts).
 * --------------------------------------------------------------------- */

/* One entry of the state file at index @p i; false (logged) when malformed. */
static bool
load_entry(struct bh_list *l, const char *path, size_t i, json_t *e)
{
	json_t *addr = json_object_get(e, "address"), *manual = json_object_get(e, "manual"),
	       *ids = json_object_get(e, "alert_ids"), *since = json_object_get(e, "since"), *v;
	struct dpmon_prefix p;
	struct dpmon_addr ad;
	unsigned len;
	struct bh *b;
	size_t k;

	/* An address, or a host prefix in CIDR form (host_prefix_len). */
	if (json_is_string(addr) && strchr(json_string_value(addr), '/') != NULL &&
	    dpmon_prefix_parse(json_string_value(addr), &p, NULL) == 0 &&
	    !(p.family == 6 && dpmon_addr_is_v4(&p.addr))) {
		ad = p.addr;
		len = p.depth;
	} else if (json_is_string(addr) && dpmon_addr_parse(json_string_value(addr), &ad) == 0) {
		len = dpmon_family_bits(dpmon_addr_is_v4(&ad) ? 4 : 6);
	} else {
		LOG("state file %s: $.blackholes[%zu].address: not an IPv4 or IPv6 address or "
		    "prefix",
		    path, i);
		return false;
	}
	if (!json_is_boolean(manual) || !json_is_array(ids) || !json_is_number(since)) {
		LOG("state file %s: $.blackholes[%zu]: expected \"manual\" (boolean), "
		    "\"alert_ids\" "
		    "(array) and \"since\" (number)",
		    path, i);
		return false;
	}
	if (actions_bh_find(l, &ad) >= 0) {
		LOG("state file %s: $.blackholes[%zu].address: duplicate address", path, i);
		return false;
	}
	b = actions_bh_new(l, &ad, len, json_number_value(since));
	if (b == NULL) {
		LOG("state file %s: $.blackholes[%zu]: more than %d blackholes", path, i,
		    DPMON_MAX_BLACKHOLES);
		return false;
	}
	b->manual = json_is_true(manual);
	json_array_foreach(ids, k, v) if (json_is_integer(v) && json_integer_value(v) > 0 &&
					  b->n_alerts < BH_MAX_ALERTS) b->alert_ids[b->n_alerts++] =
		(uint64_t)json_integer_value(v);
	b->restored_ids = b->n_alerts > 0;
	if (!b->manual && b->n_alerts == 0) {
		LOG("state file %s: $.blackholes[%zu]: neither manual nor held by an alert", path,
		    i);
		return false;
	}
	return true;
}

/*
 * The parsed state file @p path (which exists), or NULL with the reason
 * logged: it cannot be read, is not a regular file of at most
 * STATE_MAX_FILE_BYTES (file.h: a FIFO put in its place must not block the
 * start) or is not JSON.
 */
static json_t *
read_doc(const char *path)
{
	char why[128], *text = NULL;
	json_error_t je;
	size_t len = 0;
	json_t *doc;

	if (dpmon_file_read(path, STATE_MAX_FILE_BYTES, &text, &len, why, sizeof(why)) != 0) {
		LOG("state file %s: %s (fix or remove it; dpmon does not start with its "
		    "blackholes unknown)",
		    path, why);
		return NULL;
	}
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (doc == NULL)
		LOG("state file %s: line %d column %d: %s (fix or remove it; dpmon does not start "
		    "with its blackholes unknown)",
		    path, je.line, je.column, je.text);
	return doc;
}

/* Every entry of @p doc into the list. @return false (logged) at the
 * first problem: not the expected document, or a malformed entry. */
static bool
load_doc(struct bh_list *l, const char *path, json_t *doc)
{
	json_t *list = json_object_get(doc, "blackholes"), *fs = json_object_get(doc, "flowspec"),
	       *e;
	size_t i;

	if (!json_is_integer(json_object_get(doc, "version")) ||
	    json_integer_value(json_object_get(doc, "version")) != STATE_VERSION ||
	    !json_is_array(list) || (fs != NULL && !json_is_array(fs))) {
		LOG("state file %s: expected {\"version\": %d, \"blackholes\": [...], "
		    "\"flowspec\": [...] (optional)}",
		    path, STATE_VERSION);
		return false;
	}
	json_array_foreach(list, i, e) if (!load_entry(l, path, i, e)) return false;
	return true;
}

int
actions_state_load(struct bh_list *l, const char *path, json_t **flowspec)
{
	json_t *doc;
	bool ok;

	*flowspec = NULL;
	if (path[0] == '\0')
		return 0;
	if (access(path, F_OK) != 0) {
		/* Only a missing file is an empty list: one that cannot be
		 * reached (a link loop, a directory it cannot search) may hold
		 * rules that would then never be withdrawn. */
		if (errno == ENOENT)
			return 0;
		LOG("state file %s: %s (fix or remove it; dpmon does not start with its "
		    "blackholes unknown)",
		    path, strerror(errno));
		return -EINVAL;
	}
	doc = read_doc(path);
	if (doc == NULL)
		return -EINVAL;
	ok = load_doc(l, path, doc);
	if (ok)
		*flowspec = json_incref(json_object_get(doc, "flowspec"));
	json_decref(doc);
	return ok ? 0 : -EINVAL;
}
