/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_access.c — the access policy of the HTTP server (http_access.h):
 * the Host check against DNS rebinding, and the Origin and Content-Type
 * checks that keep a cross-site page from changing state. A leaf of
 * http.c: it reads only the settings and the strings it is given.
 */
#include "http_access.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Append @p name (at most @p len bytes) to the allowed hosts, lower case. */
static void
add_host(struct http_access *a, const char *name, size_t len)
{
	if (a->n_hosts >= HTTP_ACCESS_MAX_HOSTS || len == 0 || len >= DPMON_HOST_NAME_LEN)
		return;
	for (size_t i = 0; i < len; i++)
		a->hosts[a->n_hosts][i] = (char)tolower((unsigned char)name[i]);
	a->hosts[a->n_hosts][len] = '\0';
	a->n_hosts++;
}

void
http_access_init(struct http_access *a, const char *listen_addr, const char *own_name,
		 const char (*allowed_hosts)[DPMON_HOST_NAME_LEN], uint32_t n_allowed,
		 const char (*cors)[DPMON_ORIGIN_LEN], uint32_t n_cors)
{
	*a = (struct http_access){.n_hosts = 0};
	if (n_allowed > 0) {
		for (uint32_t i = 0; i < n_allowed; i++)
			add_host(a, allowed_hosts[i], strlen(allowed_hosts[i]));
	} else {
		if (listen_addr != NULL) {
			a->any_ip = strcmp(listen_addr, "0.0.0.0") == 0 ||
				    strcmp(listen_addr, "::") == 0;
			add_host(a, listen_addr, strlen(listen_addr));
		}
		add_host(a, "localhost", strlen("localhost"));
		if (own_name != NULL)
			add_host(a, own_name, strlen(own_name));
	}
	for (uint32_t i = 0; i < n_cors && a->n_origins < DPMON_MAX_CORS_ORIGINS; i++)
		if (strcmp(cors[i], "*") != 0)
			snprintf(a->origins[a->n_origins++], DPMON_ORIGIN_LEN, "%s", cors[i]);
}

/*
 * The host part of a Host value (RFC 9110 7.2: uri-host [":" port]) into
 * @p out, IPv6 brackets and one trailing dot removed. @return false when
 * it does not fit or is empty.
 */
static bool
host_part(const char *host, char out[DPMON_HOST_NAME_LEN])
{
	const char *end;
	size_t len;

	if (host[0] == '[') {
		host++;
		end = strchr(host, ']');
		if (end == NULL)
			return false;
	} else {
		end = strchr(host, ':');
		if (end == NULL)
			end = host + strlen(host);
	}
	len = (size_t)(end - host);
	if (len > 1 && host[len - 1] == '.')
		len--;
	if (len == 0 || len >= DPMON_HOST_NAME_LEN)
		return false;
	memcpy(out, host, len);
	out[len] = '\0';
	return true;
}

/* Is the Host value @p host one of the allowed hosts? */
static bool
host_allowed(const struct http_access *a, const char *host)
{
	char name[DPMON_HOST_NAME_LEN];
	unsigned char addr[16];

	if (!host_part(host, name))
		return false;
	if (a->any_ip &&
	    (inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1))
		return true;
	for (uint32_t i = 0; i < a->n_hosts; i++)
		if (strcasecmp(a->hosts[i], name) == 0)
			return true;
	return false;
}

/* Is @p origin allowed to change state: a configured origin, or the
 * server's own ("http://" or "https://" followed by the Host value)? */
static bool
origin_allowed(const struct http_access *a, const char *origin, const char *host)
{
	const char *authority = strstr(origin, "://");

	for (uint32_t i = 0; i < a->n_origins; i++)
		if (strcasecmp(a->origins[i], origin) == 0)
			return true;
	return host != NULL && authority != NULL &&
	       (strncasecmp(origin, "http://", 7) == 0 ||
		strncasecmp(origin, "https://", 8) == 0) &&
	       strcasecmp(authority + 3, host) == 0;
}

/* Is the media type of Content-Type @p ct application/json? */
static bool
is_json(const char *ct)
{
	static const char json[] = "application/json";
	size_t n = sizeof(json) - 1;

	if (ct == NULL)
		return false;
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, json, n) != 0)
		return false;
	ct += n;
	ct += strspn(ct, " \t");
	return *ct == '\0' || *ct == ';';
}

struct dpmon_http_verdict
http_access_check(const struct http_access *a, const struct http_access_request *r)
{
	if (r->host != NULL && !host_allowed(a, r->host))
		return (struct dpmon_http_verdict){
			.status = 403, .message = "Host is not one of http.allowed_hosts"};
	if (!r->changes_state || strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0 ||
	    strcmp(r->method, "OPTIONS") == 0)
		return (struct dpmon_http_verdict){.status = 0};
	if (r->origin != NULL && !origin_allowed(a, r->origin, r->host))
		return (struct dpmon_http_verdict){
			.status = 403,
			.message = "Origin is not one of http.cors_origins nor this server's own"};
	if (!is_json(r->content_type))
		return (struct dpmon_http_verdict){.status = 415,
						   .message = "a request that changes state needs "
							      "Content-Type: application/json"};
	return (struct dpmon_http_verdict){.status = 0};
}
