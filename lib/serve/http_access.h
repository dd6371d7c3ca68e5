/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_access.h — who may use the API: the Host of every request must be
 * one of the allowed host names (a DNS-rebinding page names its own
 * domain), and a request that changes state must carry
 * Content-Type: application/json (which a browser cannot send cross-site
 * without a CORS preflight) and, when it has an Origin, come from one of
 * the configured CORS origins or from the server's own origin. A pure
 * function of the request's method and header fields and the settings.
 * Private to lib/serve (http.c).
 */
#ifndef DPMON_HTTP_ACCESS_H
#define DPMON_HTTP_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "http_head.h"

/** Most names in struct http_access: the configured ones, or the defaults. */
#define HTTP_ACCESS_MAX_HOSTS (DPMON_MAX_ALLOWED_HOSTS + 4)

/** The access settings, filled once at start (http_access_init). */
struct http_access {
	/** Host names and IP literals allowed in Host, lower case, no port,
	 *  IPv6 without brackets. */
	char hosts[HTTP_ACCESS_MAX_HOSTS][DPMON_HOST_NAME_LEN];
	uint32_t n_hosts;
	/** Any IP literal is allowed in Host (the listen address is a
	 *  wildcard and no list was configured). */
	bool any_ip;
	/** Origins allowed to change state ("scheme://host[:port]"; "*" in
	 *  http.cors_origins allows reads only and is left out). */
	char origins[DPMON_MAX_CORS_ORIGINS][DPMON_ORIGIN_LEN];
	uint32_t n_origins;
};

/** The request fields the check reads; NULL = the field is absent. */
struct http_access_request {
	const char *method;       /**< "GET", "POST", ... */
	bool changes_state;       /**< the target is a resource that changes state */
	const char *host;         /**< Host (RFC 9110 7.2) */
	const char *origin;       /**< Origin (RFC 6454 7) */
	const char *content_type; /**< Content-Type (RFC 9110 8.3) */
};

/**
 * Fill @p a. @p allowed_hosts (@p n_allowed entries, from
 * http.allowed_hosts) replaces the default list, which is
 * @p listen_addr (any IP literal when it is 0.0.0.0 or ::), "localhost"
 * and @p own_name (the machine's name from gethostname(); NULL or "" =
 * none). The origins are copied from @p cors (@p n_cors entries).
 * Thread-safety: any thread, on its own @p a.
 */
void http_access_init(struct http_access *a, const char *listen_addr, const char *own_name,
		      const char (*allowed_hosts)[DPMON_HOST_NAME_LEN], uint32_t n_allowed,
		      const char (*cors)[DPMON_ORIGIN_LEN], uint32_t n_cors);

/**
 * Judge request @p r: 403 when Host names a host not allowed (a missing
 * Host passes: HTTP/1.0); for a method other than GET, HEAD and OPTIONS on
 * a resource that changes state, 403 when Origin is present and neither
 * an allowed origin nor the server's own ("scheme://" + Host), "null"
 * included, and 415 when the media type of Content-Type is not
 * application/json (parameters such as charset are ignored).
 * @return the verdict: status 0, or 403/415 with a static message.
 * Thread-safety: any thread (reads @p a only).
 */
struct dpmon_http_verdict http_access_check(const struct http_access *a,
					    const struct http_access_request *r);

#endif /* DPMON_HTTP_ACCESS_H */
