/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_sections.c — the configuration's plain sections: "ports",
 * "subnets", "http" and "metrics" (docs/configuration.md has their keys).
 *
 * Besides the checks of each key, two across entries: duplicate port
 * devices (at most 32 ports, pairwise) and duplicate subnets (up to 65536
 * of them: a copy of the valid prefixes tagged with their index is
 * sorted, so equal prefixes are adjacent, O(n log n)).
 */
#include "config_private.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "stats.h"
#include "tls_file.h"
#include "token_file.h"

#define PORT_RXQ_MIN 1
#define PORT_RXQ_MAX 1024
#define PORT_RXD_MIN 64
#define PORT_RXD_MAX 16384

/* A subnet prefix tagged with its position, for the duplicate check. */
struct indexed_prefix {
	struct dpmon_prefix prefix;
	uint32_t index;
};

/* ------------------------------------------------------------------------
 * Ports.
 * --------------------------------------------------------------------- */

/* The enum dpmon_tunnel bit named @p name, or 0. */
static uint32_t
tunnel_bit(const char *name)
{
	for (unsigned i = 0; i < DPMON_TUNNEL_KINDS; i++)
		if (strcmp(name, dpmon_tunnel_name(i)) == 0)
			return 1u << i;
	return 0;
}

/* "gre, erspan, ..." into @p buf: the accepted names, for messages. */
static const char *
tunnel_names_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < DPMON_TUNNEL_KINDS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
				      dpmon_tunnel_name(i));
	return buf;
}

/*
 * ports[].decap: true (every kind), false (none) or an array of distinct
 * tunnel kind names ("gre", "erspan", "vxlan", "ipip", "mpls_udp", "gre_udp").
 */
static void
parse_decap(struct dpmon_check *c, const char *path, const json_t *v, uint32_t *out)
{
	char ipath[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN], names[128];
	uint32_t mask = 0, bit;
	size_t i;
	json_t *e;

	if (json_is_boolean(v)) {
		*out = json_is_true(v) ? DPMON_TUNNEL_ALL : 0;
		return;
	}
	if (!json_is_array(v)) {
		dpmon_check_type(c, path, "boolean or array of tunnel kinds", v);
		return;
	}
	json_array_foreach(v, i, e)
	{
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		if (!json_is_string(e)) {
			dpmon_check_type(c, ipath, "string", e);
			continue;
		}
		bit = tunnel_bit(json_string_value(e));
		if (bit == 0)
			dpmon_check_report(c, ipath, "unknown tunnel kind %s (expected one of %s)",
					   dpmon_check_quote(json_string_value(e), q, sizeof(q)),
					   tunnel_names_list(names, sizeof(names)));
		else if (mask & bit)
			dpmon_check_report(c, ipath, "duplicate tunnel kind %s",
					   dpmon_check_quote(json_string_value(e), q, sizeof(q)));
		mask |= bit;
	}
	*out = mask;
}

static void
parse_port(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_port_conf *out)
{
	struct dpmon_check_member m;
	json_int_t n;

	if (!dpmon_check_object(c, path, obj))
		return;
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "device") == 0) {
			dpmon_check_string(c, m.path, m.v, 1, DPMON_DEVICE_LEN - 1, out->device);
		} else if (strcmp(m.key, "rx_queues") == 0) {
			if (dpmon_check_int(c, m.path, m.v, PORT_RXQ_MIN, PORT_RXQ_MAX, &n))
				out->rx_queues = (uint16_t)n;
		} else if (strcmp(m.key, "rx_descriptors") == 0) {
			if (json_is_integer(m.v) && json_integer_value(m.v) == 0)
				out->rx_descriptors = 0;
			else if (!json_is_integer(m.v))
				dpmon_check_type(c, m.path, "integer", m.v);
			else if (json_integer_value(m.v) < PORT_RXD_MIN ||
				 json_integer_value(m.v) > PORT_RXD_MAX)
				dpmon_check_report(
					c, m.path,
					"must be 0 or an integer %d..%d, got %" JSON_INTEGER_FORMAT,
					PORT_RXD_MIN, PORT_RXD_MAX, json_integer_value(m.v));
			else
				out->rx_descriptors = (uint16_t)json_integer_value(m.v);
		} else if (strcmp(m.key, "mbufs") == 0) {
			if (dpmon_check_int(c, m.path, m.v, DPMON_MBUFS_MIN, DPMON_MBUFS_MAX, &n))
				out->mbufs = (uint32_t)n;
		} else if (strcmp(m.key, "decap") == 0) {
			parse_decap(c, m.path, m.v, &out->decap);
		} else {
			dpmon_check_unknown(c, m.path);
		}
	}
	dpmon_check_require(c, path, obj, "device");
}

/* Each port after the first that names an earlier port's device. */
static void
check_duplicate_devices(struct dpmon_check *c, const struct dpmon_config *cfg)
{
	char path[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN];

	for (uint32_t i = 1; i < cfg->n_ports; i++) {
		if (cfg->ports[i].device[0] == '\0')
			continue; /* invalid; already reported */
		for (uint32_t j = 0; j < i; j++) {
			if (strcmp(cfg->ports[i].device, cfg->ports[j].device) != 0)
				continue;
			snprintf(path, sizeof(path), "$.ports[%u].device", i);
			dpmon_check_report(c, path, "duplicate device %s (also $.ports[%u])",
					   dpmon_check_quote(cfg->ports[i].device, q, sizeof(q)),
					   j);
			break;
		}
	}
}

void
config_parse_ports(struct dpmon_check *c, const char *path, json_t *arr, struct dpmon_config *cfg)
{
	char ipath[DPMON_CHECK_PATH_LEN];
	size_t i;
	json_t *v;

	if (!dpmon_check_array(c, path, arr, 1, DPMON_MAX_PORTS))
		return;
	json_array_foreach(arr, i, v)
	{
		/* Entries past the limit are checked but not kept. */
		struct dpmon_port_conf port = {
			.rx_queues = DPMON_RXQ_AUTO, .rx_descriptors = 0, .decap = 0};

		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		parse_port(c, ipath, v, &port);
		if (i < DPMON_MAX_PORTS)
			cfg->ports[cfg->n_ports++] = port;
	}
	check_duplicate_devices(c, cfg);
}

/* ------------------------------------------------------------------------
 * Subnets.
 * --------------------------------------------------------------------- */

/*
 * subnets[].host_prefix_len @p v (NULL: absent) of subnet @p out, whose
 * prefix parsed when @p prefix_ok: the subnet's own length (at least 1)
 * .. the whole address; absent, 0 (the whole address).
 */
static void
parse_host_prefix_len(struct dpmon_check *c, const char *path, const json_t *v, bool prefix_ok,
		      struct dpmon_subnet_conf *out)
{
	char kpath[DPMON_CHECK_PATH_LEN];
	unsigned full = dpmon_family_bits(out->prefix.family);
	unsigned min = out->prefix.depth > 0 ? out->prefix.depth : 1;
	json_int_t n;

	out->host_prefix_len = 0;
	if (v == NULL)
		return;
	dpmon_check_path_key(kpath, sizeof(kpath), path, "host_prefix_len");
	if (!json_is_integer(v)) {
		dpmon_check_type(c, kpath, "integer", v);
		return;
	}
	if (!prefix_ok)
		return; /* the range depends on the prefix, reported already */
	n = json_integer_value(v);
	if (n < min || n > (json_int_t)full) {
		dpmon_check_report(c, kpath,
				   "must be %u..%u (the subnet's prefix length, at least 1, .. a "
				   "whole IPv%u address), got %" JSON_INTEGER_FORMAT,
				   min, full, out->prefix.family, n);
		return;
	}
	out->host_prefix_len = (uint8_t)n;
}

/* One subnet into @p out; false when its prefix is unusable. */
static bool
parse_subnet(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_subnet_conf *out)
{
	struct dpmon_check_member m;
	char q[DPMON_CHECK_PATH_LEN];
	const char *why;
	json_t *host_prefix_len = NULL;
	bool prefix_ok = false;

	if (!dpmon_check_object(c, path, obj))
		return false;
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "prefix") == 0) {
			if (!json_is_string(m.v))
				dpmon_check_type(c, m.path, "string", m.v);
			else if (dpmon_prefix_parse(json_string_value(m.v), &out->prefix, &why) !=
				 0)
				dpmon_check_report(
					c, m.path, "%s, got %s", why,
					dpmon_check_quote(json_string_value(m.v), q, sizeof(q)));
			else
				prefix_ok = true;
		} else if (strcmp(m.key, "name") == 0) {
			dpmon_check_string(c, m.path, m.v, 0, DPMON_NAME_LEN - 1, out->name);
		} else if (strcmp(m.key, "thresholds") == 0) {
			config_parse_thresholds(c, m.path, m.v, &out->thresholds);
			out->thresholds_set = true;
		} else if (strcmp(m.key, "detection") == 0) {
			dpmon_check_bool(c, m.path, m.v, &out->detection);
		} else if (strcmp(m.key, "host_prefix_len") == 0) {
			host_prefix_len = m.v; /* checked once the prefix is known */
		} else {
			dpmon_check_unknown(c, m.path);
		}
	}
	dpmon_check_require(c, path, obj, "prefix");
	parse_host_prefix_len(c, path, host_prefix_len, prefix_ok, out);
	return prefix_ok;
}

static int
indexed_prefix_cmp(const void *a, const void *b)
{
	const struct indexed_prefix *x = a, *y = b;
	int r = dpmon_prefix_cmp(&x->prefix, &y->prefix);

	if (r != 0)
		return r;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Report each subnet whose prefix equals an earlier one's, in file order.
 * @p valid[i] says whether subnet i parsed. Sorting a copy puts equal
 * prefixes side by side, the lowest index first.
 */
static void
check_duplicate_subnets(struct dpmon_check *c, const struct dpmon_subnet_conf *subnets,
			const bool *valid, uint32_t n)
{
	struct indexed_prefix *sorted;
	uint32_t *first, m = 0;
	char path[DPMON_CHECK_PATH_LEN], text[DPMON_PREFIX_STRLEN];

	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	first = malloc((n ? n : 1) * sizeof(*first));
	if (sorted == NULL || first == NULL) {
		dpmon_check_report(c, "$.subnets", "out of memory checking for duplicates");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		first[i] = i;
		if (valid[i])
			sorted[m++] = (struct indexed_prefix){subnets[i].prefix, i};
	}
	qsort(sorted, m, sizeof(*sorted), indexed_prefix_cmp);
	for (uint32_t k = 1, run = 0; k < m; k++) {
		if (dpmon_prefix_equal(&sorted[k].prefix, &sorted[run].prefix))
			first[sorted[k].index] = sorted[run].index;
		else
			run = k;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (first[i] == i)
			continue;
		snprintf(path, sizeof(path), "$.subnets[%u].prefix", i);
		dpmon_check_report(c, path, "duplicate subnet %s (also $.subnets[%u])",
				   dpmon_prefix_format(&subnets[i].prefix, text, sizeof(text)),
				   first[i]);
	}
out:
	free(sorted);
	free(first);
}

/* By family, then network address, then length: a prefix is followed by
 * every prefix inside it (those of its address range), then by the rest. */
static int
nesting_cmp(const void *a, const void *b)
{
	const struct indexed_prefix *x = a, *y = b;
	int r;

	if (x->prefix.family != y->prefix.family)
		return x->prefix.family < y->prefix.family ? -1 : 1;
	r = dpmon_addr_cmp(&x->prefix.addr, &y->prefix.addr);
	if (r != 0)
		return r;
	if (x->prefix.depth != y->prefix.depth)
		return x->prefix.depth < y->prefix.depth ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Report each subnet whose host_prefix_len is shorter than a subnet inside
 * it: one of its host prefixes would hold part of the other subnet, whose
 * addresses the classifier gives to the other one (longest match), so a
 * host key of each could be the same. The inner subnet must be a whole
 * number of host prefixes (its length at most host_prefix_len). In the
 * order nesting_cmp gives, the subnets inside one follow it.
 */
static void
check_host_prefix_nesting(struct dpmon_check *c, const struct dpmon_subnet_conf *subnets,
			  const bool *valid, uint32_t n)
{
	struct indexed_prefix *sorted;
	char path[DPMON_CHECK_PATH_LEN], text[DPMON_PREFIX_STRLEN];
	uint32_t m = 0, short_ones = 0;

	for (uint32_t i = 0; i < n; i++)
		short_ones += valid[i] && dpmon_subnet_host_len(&subnets[i]) <
						  dpmon_family_bits(subnets[i].prefix.family);
	if (short_ones == 0)
		return;
	sorted = malloc(n * sizeof(*sorted));
	if (sorted == NULL) {
		dpmon_check_report(c, "$.subnets", "out of memory checking host_prefix_len");
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		if (valid[i])
			sorted[m++] = (struct indexed_prefix){subnets[i].prefix, i};
	qsort(sorted, m, sizeof(*sorted), nesting_cmp);
	for (uint32_t k = 0; k < m; k++) {
		const struct dpmon_prefix *a = &sorted[k].prefix;
		unsigned len = dpmon_subnet_host_len(&subnets[sorted[k].index]);

		if (len >= dpmon_family_bits(a->family))
			continue;
		for (uint32_t j = k + 1; j < m && sorted[j].prefix.family == a->family &&
					 dpmon_prefix_contains(a, &sorted[j].prefix.addr);
		     j++) {
			if (sorted[j].prefix.depth <= len)
				continue;
			snprintf(path, sizeof(path), "$.subnets[%u].host_prefix_len",
				 sorted[k].index);
			dpmon_check_report(
				c, path,
				"%u would put part of subnet %s ($.subnets[%u]) in one host; "
				"use at least %u",
				len, dpmon_prefix_format(&sorted[j].prefix, text, sizeof(text)),
				sorted[j].index, sorted[j].prefix.depth);
			break;
		}
	}
	free(sorted);
}

void
config_parse_subnets(struct dpmon_check *c, const char *path, json_t *arr, struct dpmon_config *cfg)
{
	char ipath[DPMON_CHECK_PATH_LEN];
	size_t i, n;
	json_t *v;
	bool *valid;

	if (!dpmon_check_array(c, path, arr, 1, DPMON_MAX_SUBNETS))
		return;
	n = json_array_size(arr);
	if (n == 0)
		return;
	free(cfg->subnets); /* unreachable twice (no duplicate keys), but cheap */
	cfg->subnets = calloc(n, sizeof(*cfg->subnets));
	valid = calloc(n, sizeof(*valid));
	if (cfg->subnets == NULL || valid == NULL) {
		dpmon_check_report(c, path, "out of memory for %zu subnets", n);
		free(valid);
		return;
	}
	cfg->n_subnets = (uint32_t)n;
	json_array_foreach(arr, i, v)
	{
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		cfg->subnets[i].detection = true;
		valid[i] = parse_subnet(c, ipath, v, &cfg->subnets[i]);
	}
	check_duplicate_subnets(c, cfg->subnets, valid, cfg->n_subnets);
	check_host_prefix_nesting(c, cfg->subnets, valid, cfg->n_subnets);
	free(valid);
}

/* ------------------------------------------------------------------------
 * HTTP and metrics.
 * --------------------------------------------------------------------- */

/* "http" or "https", then "://", a host and an optional port: the
 * serialisation a browser sends in Origin (RFC 6454), so the scheme and
 * host must be lower case, and a default port would never match. */
static const char *
origin_problem(const char *o)
{
	const char *host, *p;
	unsigned long port;

	if (strcmp(o, "*") == 0)
		return NULL;
	if (strncmp(o, "http://", 7) == 0)
		host = o + 7;
	else if (strncmp(o, "https://", 8) == 0)
		host = o + 8;
	else
		return "not \"*\" or an origin http://HOST[:PORT] or https://HOST[:PORT] "
		       "(lower-case scheme)";
	if (*host == '[') {
		p = strchr(host, ']');
		if (p == NULL || p == host + 1 ||
		    strspn(host + 1, "0123456789abcdef:.") != (size_t)(p - host - 1))
			return "bad bracketed IPv6 host (lower-case hex digits, ':' and '.')";
		p++;
	} else {
		p = host + strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789.-");
		if (p == host)
			return "missing or bad host (lower-case letters, digits, '.', '-')";
	}
	if (*p == '\0')
		return NULL;
	if (*p != ':' || p[1] == '\0' || strspn(p + 1, "0123456789") != strlen(p + 1) ||
	    strlen(p + 1) > 5)
		return "an origin has no path, query or trailing slash: only [:PORT] may follow "
		       "the host";
	port = strtoul(p + 1, NULL, 10);
	if (port < 1 || port > 65535)
		return "port must be 1..65535";
	if ((host == o + 7 && port == 80) || (host == o + 8 && port == 443))
		return "browsers omit the scheme's default port: leave it out";
	return NULL;
}

/*
 * A list of at most @p max strings of 1..DPMON_ORIGIN_LEN - 1 bytes at
 * @p path into @p out (rows of @p row bytes), *@p n of them, in lower
 * case when @p lower; each judged by @p problem, which returns the reason
 * of a refusal or NULL.
 */
static void
parse_string_list(struct dpmon_check *c, const char *path, const json_t *arr, uint32_t max,
		  char *out, size_t row, uint32_t *n, const char *(*problem)(const char *text),
		  bool lower)
{
	char ipath[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN], text[DPMON_ORIGIN_LEN];

	_Static_assert(DPMON_HOST_NAME_LEN <= DPMON_ORIGIN_LEN, "text holds a host name");
	const char *why;
	size_t i;
	json_t *v;

	if (!dpmon_check_array(c, path, arr, 0, max))
		return;
	json_array_foreach(arr, i, v)
	{
		dpmon_check_path_index(ipath, sizeof(ipath), path, i);
		if (!dpmon_check_string(c, ipath, v, 1, row - 1, text))
			continue;
		if ((why = problem(text)) != NULL) {
			dpmon_check_report(c, ipath, "%s, got %s", why,
					   dpmon_check_quote(text, q, sizeof(q)));
			continue;
		}
		for (char *p = text; lower && *p != '\0'; p++)
			*p = (char)tolower((unsigned char)*p);
		if (*n < max)
			memcpy(out + row * (*n)++, text, strlen(text) + 1);
	}
}

/* A problem of host name @p h in http.allowed_hosts, or NULL: a DNS name
 * (letters, digits, '-', '.', '_') or an IP literal, no port. */
static const char *
allowed_host_problem(const char *h)
{
	struct dpmon_addr addr;

	if (strchr(h, ':') != NULL)
		return dpmon_addr_parse(h, &addr) == 0
			       ? NULL
			       : "a host name or IP address without port or brackets";
	for (const char *p = h; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_')
			return "a host name or IP address without port or brackets";
	return NULL;
}

/* A bearer token file (http.write_token_file, http.read_token_file): an
 * absolute path to a token that dpmon_token_file_read accepts. */
static void
parse_token_file(struct dpmon_check *c, const char *path, const json_t *v, char *out)
{
	char q[DPMON_CHECK_PATH_LEN], tmp[DPMON_PATH_LEN], tok[DPMON_TOKEN_MAX + 1], e[160];
	size_t len;

	if (!config_check_abs_path(c, path, v, tmp))
		return;
	if (dpmon_token_file_read(tmp, tok, &len, e, sizeof(e)) != 0)
		dpmon_check_report(c, path, "token file %s: %s",
				   dpmon_check_quote(tmp, q, sizeof(q)), e);
	else
		memcpy(out, tmp, strlen(tmp) + 1);
}

/*
 * http.tls_cert_file and http.tls_key_file (@p obj is the http section at
 * @p path): both or neither; both read and checked as the start will
 * (tls_file.h), the refusal reported at the key of the file it is about.
 */
static void
parse_tls_files(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	static const char *const keys[2] = {"tls_cert_file", "tls_key_file"};
	char *outs[2] = {cfg->http_tls_cert_file, cfg->http_tls_key_file};
	char kpath[2][DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN], e[320];
	enum dpmon_tls_file_which which;
	struct dpmon_tls_pem pem;
	bool ok[2];

	for (int i = 0; i < 2; i++) {
		json_t *v = json_object_get(obj, keys[i]);

		dpmon_check_path_key(kpath[i], sizeof(kpath[i]), path, keys[i]);
		ok[i] = v != NULL && config_check_abs_path(c, kpath[i], v, outs[i]);
		if (v == NULL && json_object_get(obj, keys[1 - i]) != NULL)
			dpmon_check_report(c, kpath[1 - i], "needs http.%s too", keys[i]);
	}
	if (!ok[0] || !ok[1]) {
		outs[0][0] = outs[1][0] = '\0';
		return;
	}
	if (dpmon_tls_files_read(outs[0], outs[1], &pem, &which, e, sizeof(e)) != 0) {
		int i = which == DPMON_TLS_FILE_KEY;

		dpmon_check_report(c, kpath[i], "%s file %s: %s", i ? "key" : "certificate",
				   dpmon_check_quote(outs[i], q, sizeof(q)), e);
		outs[0][0] = outs[1][0] = '\0';
		return;
	}
	dpmon_tls_pem_free(&pem);
}

/* Is @p text a loopback address (127.0.0.0/8, ::1)? */
static bool
is_loopback(const char *text)
{
	struct in_addr v4;
	struct in6_addr v6;

	if (inet_pton(AF_INET, text, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, text, &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

/* "metrics": the top hosts and subnets with series. */
static const struct dpmon_check_int_key metrics_ints[] = {
	DPMON_CHECK_U32_KEY("top_hosts", 0, DPMON_TOP_HOSTS_MAX, struct dpmon_config,
			    metrics_top_hosts),
	DPMON_CHECK_U32_KEY("top_subnets", 0, DPMON_MAX_SUBNETS, struct dpmon_config,
			    metrics_top_subnets),
};

void
config_parse_metrics(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	struct dpmon_check_member m;

	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (!dpmon_check_int_key(c, m.path, m.key, m.v, DPMON_CHECK_KEYS(metrics_ints),
					 cfg))
			dpmon_check_unknown(c, m.path);
	}
}

void
config_parse_http(struct dpmon_check *c, const char *path, json_t *obj, struct dpmon_config *cfg)
{
	struct dpmon_check_member m;
	char kpath[DPMON_CHECK_PATH_LEN], q[DPMON_CHECK_PATH_LEN];
	json_int_t n;
	struct dpmon_addr addr;

	if (!dpmon_check_object(c, path, obj))
		return;
	DPMON_CHECK_FOREACH_MEMBER(c, path, obj, &m)
	{
		if (strcmp(m.key, "listen") == 0) {
			if (!json_is_string(m.v))
				dpmon_check_type(c, m.path, "string", m.v);
			else if (json_string_length(m.v) >= sizeof(cfg->http_listen) ||
				 dpmon_addr_parse(json_string_value(m.v), &addr) != 0)
				dpmon_check_report(
					c, m.path, "not an IPv4 or IPv6 address, got %s",
					dpmon_check_quote(json_string_value(m.v), q, sizeof(q)));
			else if (strchr(json_string_value(m.v), ':') && dpmon_addr_is_v4(&addr))
				dpmon_check_report(
					c, m.path,
					"an IPv4-mapped IPv6 address cannot "
					"be bound; write the IPv4 form, got %s",
					dpmon_check_quote(json_string_value(m.v), q, sizeof(q)));
			else
				memcpy(cfg->http_listen, json_string_value(m.v),
				       json_string_length(m.v) + 1);
		} else if (strcmp(m.key, "port") == 0) {
			if (dpmon_check_int(c, m.path, m.v, 0, 65535, &n))
				cfg->http_port = (uint16_t)n;
		} else if (strcmp(m.key, "cors_origins") == 0) {
			parse_string_list(c, m.path, m.v, DPMON_MAX_CORS_ORIGINS,
					  &cfg->http_cors_origins[0][0], DPMON_ORIGIN_LEN,
					  &cfg->n_cors_origins, origin_problem, false);
		} else if (strcmp(m.key, "allowed_hosts") == 0) {
			parse_string_list(c, m.path, m.v, DPMON_MAX_ALLOWED_HOSTS,
					  &cfg->http_allowed_hosts[0][0], DPMON_HOST_NAME_LEN,
					  &cfg->n_allowed_hosts, allowed_host_problem, true);
		} else if (strcmp(m.key, "write_token_file") == 0) {
			parse_token_file(c, m.path, m.v, cfg->http_write_token_file);
		} else if (strcmp(m.key, "read_token_file") == 0) {
			parse_token_file(c, m.path, m.v, cfg->http_read_token_file);
		} else if (strcmp(m.key, "tls_cert_file") == 0 ||
			   strcmp(m.key, "tls_key_file") == 0) {
			; /* parse_tls_files, after the loop */
		} else if (strcmp(m.key, "allow_unauthenticated_writes") == 0) {
			dpmon_check_bool(c, m.path, m.v, &cfg->http_allow_unauthenticated_writes);
		} else {
			dpmon_check_unknown(c, m.path);
		}
	}
	parse_tls_files(c, path, obj, cfg);
	if (!is_loopback(cfg->http_listen) && json_object_get(obj, "write_token_file") == NULL &&
	    !cfg->http_allow_unauthenticated_writes) {
		dpmon_check_path_key(kpath, sizeof(kpath), path, "listen");
		dpmon_check_report(c, kpath,
				   "%s is not a loopback address: set http.write_token_file, or "
				   "http.allow_unauthenticated_writes to true",
				   dpmon_check_quote(cfg->http_listen, q, sizeof(q)));
	}
}
