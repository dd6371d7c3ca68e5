/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_cors.h — CORS and conditional requests for the HTTP server: for a
 * request whose Origin is in the configured list (or when the list has
 * "*") every answer, errors included, gets Access-Control-Allow-Origin and
 * exposes ETag; a preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) from such an origin is a 204 allowing the
 * methods of its resource. If-None-Match is compared weakly (RFC 9110
 * 13.1.2). Private to lib/serve (http.c).
 */
#ifndef DPMON_HTTP_CORS_H
#define DPMON_HTTP_CORS_H

#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

#include "config.h"

/* The origins allowed to read the API from a browser (http.cors_origins). */
struct http_cors {
	char origins[DPMON_MAX_CORS_ORIGINS][DPMON_ORIGIN_LEN]; /* "*" = any */
	uint32_t n;
};

/**
 * Add the CORS headers for request @p c to @p rsp: Vary: Origin when the
 * answer depends on it, and for an allowed origin
 * Access-Control-Allow-Origin and Access-Control-Expose-Headers: ETag.
 * Thread-safety: the HTTP thread.
 */
void http_cors_add_headers(const struct http_cors *h, struct MHD_Connection *c,
			   struct MHD_Response *rsp);

/**
 * @return whether request @p c with @p method is a CORS preflight (OPTIONS
 *         with Origin and Access-Control-Request-Method) from an allowed
 *         origin. Thread-safety: the HTTP thread.
 */
bool http_cors_is_preflight(const struct http_cors *h, struct MHD_Connection *c,
			    const char *method);

/**
 * Queue the answer to a preflight: 204 with the methods of @p url's
 * resource (the API's route table; @p with_actions: the blackhole list is
 * served), and Content-Type among the allowed headers for a resource that
 * changes state. @return libmicrohttpd's result (MHD_NO closes the
 * connection). Thread-safety: the HTTP thread.
 */
enum MHD_Result http_cors_send_preflight(const struct http_cors *h, struct MHD_Connection *c,
					 const char *url, bool with_actions);

/**
 * @return whether the If-None-Match list @p inm (NULL = none) names
 *         @p etag (quoted). Weak comparison (RFC 9110 13.1.2): "W/"
 *         prefixes are ignored; "*" matches anything.
 * Thread-safety: any thread (no state).
 */
bool http_etag_matches(const char *inm, const char *etag);

#endif /* DPMON_HTTP_CORS_H */
