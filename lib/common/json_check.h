/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_check.h — a checker for JSON documents read with jansson: walk the
 * tree, and report each problem as one line "ORIGIN: PATH: why", PATH
 * being the JSONPath of the offending value ("$.subnets[2].prefix").
 *
 * A check reports and returns; it never stops the walk, so a document
 * with several mistakes gets them all in one pass. The caller walks each
 * object by iterating over *its* keys (so unknown keys and misspellings
 * are found) and asks for the required keys afterwards. Anything taken
 * from the document (key names, strings) is printed JSON-escaped, so a
 * hostile or broken file cannot split a line. dpmon's configuration
 * (config.c) is its user.
 *
 * Thread-safety: every function may be called from any thread; a struct
 * dpmon_check is its caller's (no global state). No DPDK.
 */
#ifndef DPMON_JSON_CHECK_H
#define DPMON_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/** Longest JSONPath printed, NUL included; longer ones end with "...". */
#define DPMON_CHECK_PATH_LEN 256

/** Where errors go, and how many there were. */
struct dpmon_check {
	const char *origin; /**< file name (or caller's label) for messages */
	FILE *err;          /**< NULL: count silently */
	int errors;         /**< problems reported so far */
};

/* ------------------------------------------------------------------------
 * Reporting.
 * --------------------------------------------------------------------- */

/**
 * Print "ORIGIN: PATH: why" to c->err (when not NULL) and count it.
 * @param path  the JSONPath of the value ("$" for the root).
 * @param fmt   printf format of the why, without a newline.
 * Any thread.
 */
void dpmon_check_report(struct dpmon_check *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Report "wrong type: expected @p expected, got <type of @p v>". Any thread. */
void dpmon_check_type(struct dpmon_check *c, const char *path, const char *expected,
		      const json_t *v);

/** Report "unknown key" at @p path (the key's own path). Any thread. */
void dpmon_check_unknown(struct dpmon_check *c, const char *path);

/**
 * Report jansson's parse error @p je as "ORIGIN:LINE:COLUMN: invalid JSON:
 * why" (control bytes of its text shown as \xNN) and count it.
 * Any thread.
 */
void dpmon_check_syntax(struct dpmon_check *c, const json_error_t *je);

/**
 * @p s as a JSON string literal (quoted, escaped) into @p buf of @p len
 * bytes, truncated with "..." if it does not fit: untrusted text on one line.
 * @return @p buf.
 * Any thread.
 */
const char *dpmon_check_quote(const char *s, char *buf, size_t len);

/**
 * The text of errno value @p e (strerror_r), in @p buf of @p len bytes or
 * a static string. @return the text.
 * Any thread.
 */
const char *dpmon_check_strerror(int e, char *buf, size_t len);

/* ------------------------------------------------------------------------
 * JSONPath.
 * --------------------------------------------------------------------- */

/**
 * @p parent + ".key" into @p buf (@p len bytes, DPMON_CHECK_PATH_LEN is
 * enough), or + "[\"odd key\"]" when @p key is not an identifier; "..."
 * ends a path cut short.
 * Any thread.
 */
void dpmon_check_path_key(char *buf, size_t len, const char *parent, const char *key);

/**
 * @p parent + "[i]" into @p buf (@p len bytes), "..." ending a path cut
 * short. Any thread.
 */
void dpmon_check_path_index(char *buf, size_t len, const char *parent, size_t i);

/* ------------------------------------------------------------------------
 * The members of an object, each with its JSONPath.
 * --------------------------------------------------------------------- */

/** One member of an object being walked (DPMON_CHECK_FOREACH_MEMBER). */
struct dpmon_check_member {
	const char *key;                 /**< NULL once past the last member */
	json_t *v;                       /**< its value */
	char path[DPMON_CHECK_PATH_LEN]; /**< the object's path + the key */
	void *iter;                      /**< jansson's iterator */
};

/**
 * The first member of @p obj, at JSONPath @p path, into @p m; m->key NULL
 * when it has none, or when @p obj is not an object (reported).
 * Any thread.
 */
void dpmon_check_member_first(struct dpmon_check *c, const char *path, json_t *obj,
			      struct dpmon_check_member *m);

/**
 * The member of @p obj (at @p path) after @p m into @p m; m->key NULL past
 * the last. Any thread.
 */
void dpmon_check_member_next(const char *path, json_t *obj, struct dpmon_check_member *m);

/*
 * Walk the members of object @p obj at JSONPath @p path, in the file's
 * order, each in *@p m (key, value, path); a value that is not an object
 * is reported and walked as an empty one. The configuration parsers'
 * loop: for (each member) { which key? parse it at m->path }.
 */
#define DPMON_CHECK_FOREACH_MEMBER(c, path, obj, m)                               \
	for (dpmon_check_member_first((c), (path), (obj), (m)); (m)->key != NULL; \
	     dpmon_check_member_next((path), (obj), (m)))

/* ------------------------------------------------------------------------
 * Values. Each reports what is wrong, and returns false then.
 * --------------------------------------------------------------------- */

/**
 * An integer in @p min .. @p max into @p out (untouched when wrong).
 * @return true when @p v is one.
 * Any thread.
 */
bool dpmon_check_int(struct dpmon_check *c, const char *path, const json_t *v, json_int_t min,
		     json_int_t max, json_int_t *out);

/** A bounded integer key of an object: its name, its bounds and its field. */
struct dpmon_check_int_key {
	const char *name;
	json_int_t min, max;
	size_t offset; /**< of a uint32_t in the struct the keys fill */
};

/**
 * An entry of a table of bounded integer keys: @p name, @p min .. @p max
 * into the uint32_t @p field of @p type (a field of another size does not
 * build).
 */
#define DPMON_CHECK_U32_KEY(name, min, max, type, field)                                   \
	{                                                                                  \
		(name), (min), (max),                                                      \
			offsetof(type, field) +                                            \
				0 * sizeof(char[sizeof(((type *)0)->field) == 4 ? 1 : -1]) \
	}

/** A table of struct dpmon_check_int_key as dpmon_check_int_key's @p keys, @p n_keys. */
#define DPMON_CHECK_KEYS(table) (table), (sizeof(table) / sizeof((table)[0]))

/**
 * When @p key is one of the @p n_keys keys of @p keys: check @p v as an
 * integer within its bounds (dpmon_check_int) and, when it is one, store
 * it in its uint32_t field of @p base.
 * @return true when @p key is one of them (valid or not: a bad value is
 *         reported at @p path), false otherwise (nothing reported).
 * Any thread.
 */
bool dpmon_check_int_key(struct dpmon_check *c, const char *path, const char *key, const json_t *v,
			 const struct dpmon_check_int_key *keys, size_t n_keys, void *base);

/**
 * A string of @p min_len .. @p max_len bytes copied, NUL included, into
 * @p out (@p max_len + 1 bytes; untouched when wrong).
 * @return true when @p v is one.
 * Any thread.
 */
bool dpmon_check_string(struct dpmon_check *c, const char *path, const json_t *v, size_t min_len,
			size_t max_len, char *out);

/**
 * A boolean into @p out (untouched when wrong).
 * @return true when @p v is one. Any thread.
 */
bool dpmon_check_bool(struct dpmon_check *c, const char *path, const json_t *v, bool *out);

/** @return true when @p v is an object. Any thread. */
bool dpmon_check_object(struct dpmon_check *c, const char *path, const json_t *v);

/**
 * @return true when @p v is an array. A size outside @p min .. @p max
 *         entries is reported, but still true: the caller walks the
 *         entries, whose own errors are useful too.
 * Any thread.
 */
bool dpmon_check_array(struct dpmon_check *c, const char *path, const json_t *v, size_t min,
		       size_t max);

/**
 * Report "missing required key" at @p parent.@p key when object @p obj
 * lacks it. Any thread.
 */
void dpmon_check_require(struct dpmon_check *c, const char *parent, json_t *obj, const char *key);

/**
 * Is @p key "comment" or "_comment", which the objects that allow notes
 * accept? Any thread.
 */
bool dpmon_check_is_comment(const char *key);

#endif /* DPMON_JSON_CHECK_H */
