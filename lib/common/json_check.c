/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_check.c — the JSON checker's reports, JSONPaths and value checks
 * (json_check.h).
 *
 * Messages are "ORIGIN: PATH: why", one line each. Key names and strings
 * from the document are printed as JSON string literals, and jansson's
 * own messages with their control bytes escaped, so that nothing a file
 * holds can split a line or forge another.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the GNU strerror_r */
#endif

#include "json_check.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Reporting.
 * --------------------------------------------------------------------- */

void
dpmon_check_report(struct dpmon_check *c, const char *path, const char *fmt, ...)
{
	va_list ap;

	c->errors++;
	if (c->err == NULL)
		return;
	fprintf(c->err, "%s: %s: ", c->origin, path);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fputc('\n', c->err);
}

/* The JSON type of @p v as a word: "object", "integer", "boolean", ... */
static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "real";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

void
dpmon_check_type(struct dpmon_check *c, const char *path, const char *expected, const json_t *v)
{
	dpmon_check_report(c, path, "wrong type: expected %s, got %s", expected, type_name(v));
}

void
dpmon_check_unknown(struct dpmon_check *c, const char *path)
{
	dpmon_check_report(c, path, "unknown key");
}

const char *
dpmon_check_quote(const char *s, char *buf, size_t len)
{
	json_t *str = json_string(s);
	char *dump = str ? json_dumps(str, JSON_ENCODE_ANY) : NULL;

	if (dump == NULL) {
		snprintf(buf, len, "\"?\"");
	} else if (strlen(dump) < len) {
		memcpy(buf, dump, strlen(dump) + 1);
	} else {
		snprintf(buf, len, "%.*s...", (int)(len > 4 ? len - 4 : 0), dump);
	}
	free(dump);
	json_decref(str);
	return buf;
}

/* Write jansson's message to @p f with control bytes shown as \xNN. */
static void
put_sanitized(FILE *f, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

void
dpmon_check_syntax(struct dpmon_check *c, const json_error_t *je)
{
	c->errors++;
	if (c->err == NULL)
		return;
	fprintf(c->err, "%s:%d:%d: invalid JSON: ", c->origin, je->line, je->column);
	put_sanitized(c->err, je->text);
	fputc('\n', c->err);
}

const char *
dpmon_check_strerror(int e, char *buf, size_t len)
{
#if defined(__GLIBC__)
	return strerror_r(e, buf, len); /* GNU variant: may not use buf */
#else
	if (strerror_r(e, buf, len) != 0)
		snprintf(buf, len, "error %d", e);
	return buf;
#endif
}

/* ------------------------------------------------------------------------
 * JSONPath.
 * --------------------------------------------------------------------- */

static bool
is_identifier(const char *key)
{
	if (!isalpha((unsigned char)key[0]) && key[0] != '_')
		return false;
	for (const char *p = key + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

/* End a path that snprintf cut short (@p n: its return) with "...". */
static void
path_mark_truncated(char *buf, size_t len, int n)
{
	if (n >= 0 && (size_t)n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

void
dpmon_check_path_key(char *buf, size_t len, const char *parent, const char *key)
{
	char q[DPMON_CHECK_PATH_LEN];
	int n;

	if (is_identifier(key))
		n = snprintf(buf, len, "%s.%s", parent, key);
	else
		n = snprintf(buf, len, "%s[%s]", parent, dpmon_check_quote(key, q, sizeof(q)));
	path_mark_truncated(buf, len, n);
}

void
dpmon_check_path_index(char *buf, size_t len, const char *parent, size_t i)
{
	path_mark_truncated(buf, len, snprintf(buf, len, "%s[%zu]", parent, i));
}

/* The member at jansson's iterator m->iter into @p m (key NULL: none). */
static void
member_at(const char *path, struct dpmon_check_member *m)
{
	m->key = m->iter != NULL ? json_object_iter_key(m->iter) : NULL;
	m->v = m->key != NULL ? json_object_iter_value(m->iter) : NULL;
	if (m->key != NULL)
		dpmon_check_path_key(m->path, sizeof(m->path), path, m->key);
}

void
dpmon_check_member_first(struct dpmon_check *c, const char *path, json_t *obj,
			 struct dpmon_check_member *m)
{
	m->iter = dpmon_check_object(c, path, obj) ? json_object_iter(obj) : NULL;
	member_at(path, m);
}

void
dpmon_check_member_next(const char *path, json_t *obj, struct dpmon_check_member *m)
{
	m->iter = json_object_iter_next(obj, m->iter);
	member_at(path, m);
}

/* ------------------------------------------------------------------------
 * Values.
 * --------------------------------------------------------------------- */

/* @p ok: whether @p v is a @p what (a JSON type's name); reported when not. */
static bool
is_a(struct dpmon_check *c, const char *path, const json_t *v, bool ok, const char *what)
{
	if (!ok)
		dpmon_check_type(c, path, what, v);
	return ok;
}

bool
dpmon_check_int(struct dpmon_check *c, const char *path, const json_t *v, json_int_t min,
		json_int_t max, json_int_t *out)
{
	json_int_t n = json_integer_value(v); /* 0 when it is none */

	if (!is_a(c, path, v, json_is_integer(v), "integer"))
		return false;
	if (n < min || n > max) {
		dpmon_check_report(c, path,
				   "must be an integer %" JSON_INTEGER_FORMAT
				   "..%" JSON_INTEGER_FORMAT ", got %" JSON_INTEGER_FORMAT,
				   min, max, n);
		return false;
	}
	*out = n;
	return true;
}

bool
dpmon_check_int_key(struct dpmon_check *c, const char *path, const char *key, const json_t *v,
		    const struct dpmon_check_int_key *keys, size_t n_keys, void *base)
{
	json_int_t n;

	for (size_t i = 0; i < n_keys; i++) {
		if (strcmp(key, keys[i].name) != 0)
			continue;
		if (dpmon_check_int(c, path, v, keys[i].min, keys[i].max, &n))
			*(uint32_t *)((char *)base + keys[i].offset) = (uint32_t)n;
		return true;
	}
	return false;
}

bool
dpmon_check_string(struct dpmon_check *c, const char *path, const json_t *v, size_t min_len,
		   size_t max_len, char *out)
{
	size_t n;

	if (!is_a(c, path, v, json_is_string(v), "string"))
		return false;
	n = json_string_length(v);
	if (n >= min_len && n <= max_len) {
		memcpy(out, json_string_value(v), n + 1);
		return true;
	}
	if (min_len == 0)
		dpmon_check_report(c, path, "must be at most %zu bytes, got %zu", max_len, n);
	else
		dpmon_check_report(c, path, "must be %zu..%zu bytes, got %zu", min_len, max_len, n);
	return false;
}

bool
dpmon_check_bool(struct dpmon_check *c, const char *path, const json_t *v, bool *out)
{
	if (!is_a(c, path, v, json_is_boolean(v), "boolean"))
		return false;
	*out = json_is_true(v);
	return true;
}

bool
dpmon_check_object(struct dpmon_check *c, const char *path, const json_t *v)
{
	return is_a(c, path, v, json_is_object(v), "object");
}

bool
dpmon_check_array(struct dpmon_check *c, const char *path, const json_t *v, size_t min, size_t max)
{
	size_t n;

	if (!is_a(c, path, v, json_is_array(v), "array"))
		return false;
	n = json_array_size(v);
	if (n < min || n > max) {
		/* Still walked by the caller: every entry's errors are useful. */
		dpmon_check_report(c, path, "must have %zu..%zu entries, got %zu", min, max, n);
	}
	return true;
}

void
dpmon_check_require(struct dpmon_check *c, const char *parent, json_t *obj, const char *key)
{
	char path[DPMON_CHECK_PATH_LEN];

	if (json_object_get(obj, key) != NULL)
		return;
	dpmon_check_path_key(path, sizeof(path), parent, key);
	dpmon_check_report(c, path, "missing required key");
}

bool
dpmon_check_is_comment(const char *key)
{
	return strcmp(key, "comment") == 0 || strcmp(key, "_comment") == 0;
}
