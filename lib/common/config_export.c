/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_export.c — the configuration's "export" section: the appliance's
 * name in every row, the spool, and the ClickHouse and InfluxDB servers
 * the exporters write to (docs/export.md).
 *
 * URLs are parsed with libcurl's URL parser (the one the exporters send
 * with), so what passes here is what they will use. Credential files are
 * read with the configuration (token_file.h) and their secrets kept in it,
 * so that --check-config, the start and a reload refuse a missing, empty,
 * oversized or not regular one, and the exporters never open a file. A
 * server that does not answer is not a configuration error: the exporter
 * logs and counts it at run time.
 */
#include "config_private.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

static const char *const kind_names[DPMON_EXPORT_MAX] = {
	[DPMON_EXPORT_CLICKHOUSE] = "clickhouse",
	[DPMON_EXPORT_INFLUXDB] = "influxdb",
};

const char *
dpmon_export_kind_name(int k)
{
	return k >= 0 && k < DPMON_EXPORT_MAX ? kind_names[k] : NULL;
}

/* ------------------------------------------------------------------------
 * Defaults.
 * --------------------------------------------------------------------- */

static void
sink_defaults(struct dpmon_export_sink_conf *s, int kind)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->url, sizeof(s->url), "%s",
		 kind == DPMON_EXPORT_CLICKHOUSE ? "http://127.0.0.1:8123"
						 : "http://127.0.0.1:8086");
	snprintf(s->database, sizeof(s->database), "dpmon");
	s->timeout_ms = 10000;
	s->create_tables = true;
	s->api = 1;
}

void
config_export_defaults(struct dpmon_export_conf *e)
{
	char host[DPMON_NAME_LEN];

	memset(e, 0, sizeof(*e));
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	snprintf(e->instance, sizeof(e->instance), "%s", host[0] ? host : "dpmon");
	e->spool_intervals = 300;
	e->spool_mb = 1024;
	e->retry_max_ms = 30000;
	e->flush_timeout_ms = 5000;
	for (int k = 0; k < DPMON_EXPORT_MAX; k++)
		sink_defaults(&e->sink[k], k);
}

/* ------------------------------------------------------------------------
 * Values.
 * --------------------------------------------------------------------- */

/* A name for a row's tag or a SQL identifier: 1..63 of [A-Za-z0-9._:-]. */
static bool
is_plain_name(const char *s, bool identifier)
{
	if (s[0] == '\0')
		return false;
	for (const char *p = s; *p; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '_' ||
			  (!identifier && (*p == '.' || *p == '-' || *p == ':'));

		if (!ok)
			return false;
	}
	return !identifier || !(s[0] >= '0' && s[0] <= '9');
}

static void
parse_name(struct dpmon_check *c, const char *path, const json_t *v, bool identifier, char *out)
{
	char q[DPMON_CHECK_PATH_LEN], tmp[DPMON_NAME_LEN];

	if (!dpmon_check_string(c, path, v, 1, DPMON_NAME_LEN - 1, tmp))
		return;
	if (!is_plain_name(tmp, identifier)) {
		dpmon_check_report(
			c, path,
			identifier ? "not a name of letters, digits and '_' that does not "
				     "start with a digit, got %s"
				   : "not a name of letters, digits and '.', '_', ':', '-', got %s",
			dpmon_check_quote(tmp, q, sizeof(q)));
		return;
	}
	memcpy(out, tmp, strlen(tmp) + 1);
}

/* "http[s]://host[:port][/path]" (RFC 3986), no user, query or fragment. */
static void
parse_url(struct dpmon_check *c, const char *path, const json_t *v, char *out)
{
	char q[DPMON_CHECK_PATH_LEN], tmp[DPMON_URL_LEN];
	char *scheme = NULL, *host = NULL, *query = NULL, *frag = NULL, *user = NULL;
	const char *why = NULL;
	CURLU *u;

	if (!dpmon_check_string(c, path, v, 1, DPMON_URL_LEN - 1, tmp))
		return;
	u = curl_url();
	if (u == NULL) {
		dpmon_check_report(c, path, "out of memory");
		return;
	}
	if (curl_url_set(u, CURLUPART_URL, tmp, 0) != CURLUE_OK)
		why = "not a URL";
	else {
		curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
		curl_url_get(u, CURLUPART_HOST, &host, 0);
		curl_url_get(u, CURLUPART_QUERY, &query, 0);
		curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
		curl_url_get(u, CURLUPART_USER, &user, 0);
		if (scheme == NULL || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
			why = "the scheme must be http or https";
		else if (host == NULL || host[0] == '\0')
			why = "no host";
		else if (query != NULL || frag != NULL)
			why = "no query or fragment allowed (the exporter adds its own)";
		else if (user != NULL)
			why = "no user in the URL (use \"user\" and \"password_file\")";
	}
	if (why != NULL)
		dpmon_check_report(c, path, "%s, got %s", why,
				   dpmon_check_quote(tmp, q, sizeof(q)));
	else
		memcpy(out, tmp, strlen(tmp) + 1);
	curl_free(scheme);
	curl_free(host);
	curl_free(query);
	curl_free(frag);
	curl_free(user);
	curl_url_cleanup(u);
}

/*
 * An absolute path to a secret dpmon sends (a password or a token): the
 * file is read now (dpmon_secret_file_read: a regular file, one line, not
 * empty nor cut), so that an unreadable one refuses the configuration at
 * --check-config, at the start and at a reload, and the exporter never
 * opens a file.
 */
static void
parse_secret_file(struct dpmon_check *c, const char *path, const json_t *v, char *out,
		  char secret[DPMON_SECRET_MAX + 1])
{
	char q[DPMON_CHECK_PATH_LEN], tmp[DPMON_PATH_LEN], e[128];
	size_t len;

	if (!dpmon_check_string(c, path, v, 1, DPMON_PATH_LEN - 1, tmp))
		return;
	if (tmp[0] != '/')
		dpmon_check_report(c, path, "must be an absolute path, got %s",
				   dpmon_check_quote(tmp, q, sizeof(q)));
	else if (dpmon_secret_file_read(tmp, secret, &len, e, sizeof(e)) != 0)
		dpmon_check_report(c, path, "cannot read %s: %s",
				   dpmon_check_quote(tmp, q, sizeof(q)), e);
	else
		memcpy(out, tmp, strlen(tmp) + 1);
}

/* A password_file is the password of "user" (HTTP basic authentication,
 * RFC 7617): without a user it would never be sent. */
static void
check_password_user(struct dpmon_check *c, const char *path, const json_t *obj)
{
	char kpath[DPMON_CHECK_PATH_LEN];

	if (json_object_get(obj, "password_file") == NULL || json_object_get(obj, "user") != NULL)
		return;
	dpmon_check_path_key(kpath, sizeof(kpath), path, "password_file");
	dpmon_check_report(c, kpath,
			   "a password needs \"user\" (HTTP basic authentication sends both)");
}

/* "hosts": "all" (0) or a number of top hosts, 1..10000000. */
static void
parse_hosts(struct dpmon_check *c, const char *path, const json_t *v, uint32_t *out)
{
	json_int_t n;

	if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0)
		*out = 0;
	else if (json_is_integer(v)) {
		if (dpmon_check_int(c, path, v, 1, 10000000, &n))
			*out = (uint32_t)n;
	} else
		dpmon_check_type(c, path, "\"all\" or an integer (the top N hosts by bytes)", v);
}

/* ------------------------------------------------------------------------
 * The backends.
 * --------------------------------------------------------------------- */

/* The bounded integers both backends know. */
static const struct dpmon_check_int_key sink_ints[] = {
	DPMON_CHECK_U32_KEY("timeout_ms", 100, 600000, struct dpmon_export_sink_conf, timeout_ms),
};

/* The bounded integers of ClickHouse alone. */
static const struct dpmon_check_int_key clickhouse_ints[] = {
	DPMON_CHECK_U32_KEY("ttl_days", 0, 36500, struct dpmon_export_sink_conf, ttl_days),
};

/* A key both backends know; false when @p key is none of them. */
static bool
parse_sink_common(struct dpmon_check *c, const char *kpath, const char *key, const json_t *v,
		  struct dpmon_export_sink_conf *s)
{
	if (strcmp(key, "url") == 0)
		parse_url(c, kpath, v, s->url);
	else if (strcmp(key, "database") == 0)
		parse_name(c, kpath, v, true, s->database);
	else if (strcmp(key, "user") == 0)
		parse_name(c, kpath, v, false, s->user);
	else if (strcmp(key, "password_file") == 0)
		parse_secret_file(c, kpath, v, s->password_file, s->password);
	else if (strcmp(key, "hosts") == 0)
		parse_hosts(c, kpath, v, &s->top_hosts);
	else
		return dpmon_check_int_key(c, kpath, key, v, DPMON_CHECK_KEYS(sink_ints), s);
	return true;
}

/* "RowBinary" or "JSONEachRow" (ClickHouse's names for them, in its case). */
static void
parse_ch_format(struct dpmon_check *c, const char *path, const json_t *v, uint8_t *out)
{
	if (!json_is_string(v)) {
		dpmon_check_type(c, path, "string", v);
		return;
	}
	if (strcmp(json_string_value(v), "RowBinary") == 0)
		*out = DPMON_CH_FORMAT_ROWBINARY;
	else if (strcmp(json_string_value(v), "JSONEachRow") == 0)
		*out = DPMON_CH_FORMAT_JSONEACHROW;
	else
		dpmon_check_report(c, path,
				   "unknown format \"%s\" (expected RowBinary or JSONEachRow)",
				   json_string_value(v));
}

/* A key of one backend alone; false when @p key is none of them. */
typedef bool sink_key_fn(struct dpmon_check *c, const char *kpath, const char *key, const json_t *v,
			 struct dpmon_export_sink_conf *s);

static bool
clickhouse_key(struct dpmon_check *c, const char *kpath, const char *key, const json_t *v,
	       struct dpmon_export_sink_conf *s)
{
	if (strcmp(key, "create_tables") == 0)
		dpmon_check_bool(c, kpath, v, &s->create_tables);
	else if (strcmp(key, "format") == 0)
		parse_ch_format(c, kpath, v, &s->format);
	else
		return dpmon_check_int_key(c, kpath, key, v, DPMON_CHECK_KEYS(clickhouse_ints), s);
	return true;
}

static bool
influxdb_key(struct dpmon_check *c, const char *kpath, const char *key, const json_t *v,
	     struct dpmon_export_sink_conf *s)
{
	if (strcmp(key, "org") == 0)
		parse_name(c, kpath, v, false, s->org);
	else if (strcmp(key, "bucket") == 0)
		parse_name(c, kpath, v, false, s->bucket);
	else if (strcmp(key, "token_file") == 0)
		parse_secret_file(c, kpath, v, s->token_file, s->token);
	else
		return false;
	return true;
}

/*
 * A backend's object at @p path into @p s (enabled by its presence): the
 * keys both know, then @p own's. @return false when it is no object.
 */
static bool
parse_sink(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_export_sink_conf *s,
	   sink_key_fn *own)
{
	struct dpmon_check_member m;

	if (!dpmon_check_object(c, path, obj))
		return false;
	s->enabled = true;
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (!parse_sink_common(c, m.path, m.key, m.v, s) &&
		    !dpmon_check_is_comment(m.key) && !own(c, m.path, m.key, m.v, s))
			dpmon_check_unknown(c, m.path);
	}
	check_password_user(c, path, obj);
	return true;
}

static void
parse_influxdb(struct dpmon_check *c, const char *path, json_t *obj,
	       struct dpmon_export_sink_conf *s)
{
	char kpath[DPMON_CHECK_PATH_LEN];

	if (!parse_sink(c, path, obj, s, influxdb_key))
		return;
	/* A bucket means the 2.x API, which needs its organisation and token. */
	if (json_object_get(obj, "bucket") == NULL && json_object_get(obj, "org") == NULL &&
	    json_object_get(obj, "token_file") == NULL)
		return;
	s->api = 2;
	dpmon_check_require(c, path, obj, "bucket");
	dpmon_check_require(c, path, obj, "org");
	dpmon_check_require(c, path, obj, "token_file");
	if (json_object_get(obj, "database") != NULL) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, "database");
		dpmon_check_report(c, kpath,
				   "InfluxDB 2.x (\"bucket\") writes to a bucket, not a database: "
				   "give one or the other");
	}
}

/* ------------------------------------------------------------------------
 * The section.
 * --------------------------------------------------------------------- */

/* The section's bounded integers. */
static const struct dpmon_check_int_key export_ints[] = {
	DPMON_CHECK_U32_KEY("spool_intervals", 1, 86400, struct dpmon_export_conf, spool_intervals),
	DPMON_CHECK_U32_KEY("spool_mb", 1, 65536, struct dpmon_export_conf, spool_mb),
	DPMON_CHECK_U32_KEY("retry_max_ms", 100, 600000, struct dpmon_export_conf, retry_max_ms),
	DPMON_CHECK_U32_KEY("flush_timeout_ms", 0, 600000, struct dpmon_export_conf,
			    flush_timeout_ms),
};

void
config_parse_export(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	struct dpmon_export_conf *e = &cfg->export;
	struct dpmon_check_member m;

	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "instance") == 0)
			parse_name(c, m.path, m.v, false, e->instance);
		else if (strcmp(m.key, "clickhouse") == 0)
			parse_sink(c, m.path, m.v, &e->sink[DPMON_EXPORT_CLICKHOUSE],
				   clickhouse_key);
		else if (strcmp(m.key, "influxdb") == 0)
			parse_influxdb(c, m.path, m.v, &e->sink[DPMON_EXPORT_INFLUXDB]);
		else if (!dpmon_check_is_comment(m.key) &&
			 !dpmon_check_int_key(c, m.path, m.key, m.v, DPMON_CHECK_KEYS(export_ints),
					      e))
			dpmon_check_unknown(c, m.path);
	}
}
