/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_call.h — calling the JSON API as http.c does, from the text of a
 * request target: "PATH?QUERY" is cut at '?', the query split on '&' and
 * '=' into a struct dpmon_api_query (api.h), and dpmon_api_handle_keys
 * gets its lookup and its key list. Plain text only, no percent-decoding:
 * the tests write their targets decoded. Shared by test_api.c and
 * test_detect.c; header-only.
 */
#ifndef DPMON_TEST_API_CALL_H
#define DPMON_TEST_API_CALL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

/** A query string split in place: the keys and values point into @c buf. */
struct api_call_query {
	char buf[1024];
	struct dpmon_api_query q;
};

/**
 * Split @p text ("a=1&b&c=", NULL = no query) into @p t: "b" has no value
 * (NULL), "c=" the empty one. Keys beyond DPMON_API_MAX_ARGS are dropped.
 */
static inline void
api_call_parse(const char *text, struct api_call_query *t)
{
	char *save = NULL, *tok;

	memset(t, 0, sizeof(*t));
	if (text == NULL)
		return;
	snprintf(t->buf, sizeof(t->buf), "%s", text);
	for (tok = strtok_r(t->buf, "&", &save); tok != NULL; tok = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(tok, '=');

		if (eq != NULL)
			*eq = '\0';
		if (dpmon_api_query_add(&t->q, tok, eq != NULL ? eq + 1 : NULL) != 0)
			break;
	}
}

/**
 * The body of @p r as a tree: a listing that came as text (r->text) is
 * parsed into r->body and its text freed. Exits the test when the text is
 * not one JSON value, or not byte for byte what the tree's dump would be
 * (what the body would have been had the endpoint answered with a tree).
 */
static inline void
api_call_tree(struct dpmon_api_response *r)
{
	json_error_t e;
	char *again;

	if (r->text == NULL)
		return;
	if (strlen(r->text) != r->text_len) {
		fprintf(stderr, "api_call: text_len %zu, the text has %zu bytes\n", r->text_len,
			strlen(r->text));
		exit(1);
	}
	r->body = json_loadb(r->text, r->text_len, 0, &e);
	if (r->body == NULL) {
		fprintf(stderr, "api_call: the body is not JSON (%s at %d): %.200s\n", e.text,
			e.position, r->text);
		exit(1);
	}
	again = json_dumps(r->body, DPMON_API_JSON_FLAGS);
	if (again == NULL || strcmp(again, r->text) != 0) {
		fprintf(stderr,
			"api_call: the text differs from its tree's dump:\n%.300s\n%.300s\n",
			r->text, again != NULL ? again : "(no memory)");
		exit(1);
	}
	free(again);
	free(r->text);
	r->text = NULL;
	r->text_len = 0;
}

/**
 * @p method on @p target ("PATH?QUERY") against snapshot @p s (NULL: none
 * yet), the query's keys listed as http.c lists them; the body as the API
 * gave it (a tree or text).
 * @return dpmon_api_handle_keys's: 0, or -ENOMEM.
 */
static inline int
api_call_raw(const struct dpmon_snapshot *s, const char *method, const char *target,
	     struct dpmon_api_response *r)
{
	struct api_call_query t;
	char path[2048];
	char *qm;

	snprintf(path, sizeof(path), "%s", target);
	qm = strchr(path, '?');
	if (qm != NULL)
		*qm++ = '\0';
	api_call_parse(qm, &t);
	return dpmon_api_handle_keys(s, method, path, dpmon_api_query_lookup, &t.q, t.q.keys, r);
}

/**
 * As api_call_raw, the body then as a tree (api_call_tree).
 * @return as api_call_raw; the caller json_decref()s r->body.
 */
static inline int
api_call(const struct dpmon_snapshot *s, const char *method, const char *target,
	 struct dpmon_api_response *r)
{
	int rc = api_call_raw(s, method, target, r);

	api_call_tree(r);
	return rc;
}

#endif /* DPMON_TEST_API_CALL_H */
