/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_cors.c — CORS (the Fetch standard's CORS protocol) and conditional
 * requests for the HTTP server (http_cors.h): the headers of an answer to
 * an allowed origin, the answer to a preflight, and the If-None-Match
 * comparison. A leaf of http.c: it reads only the configured origins and
 * the request's header fields.
 */
#include "http_cors.h"

#include <string.h>
#include <strings.h>

#include "api.h"
#include "http_guard.h"

/* The Access-Control-Allow-Origin value for @p origin, or NULL. */
static const char *
allowed_origin(const struct http_cors *h, const char *origin)
{
	if (origin == NULL)
		return NULL;
	for (uint32_t i = 0; i < h->n; i++) {
		if (strcmp(h->origins[i], "*") == 0)
			return "*";
		if (strcasecmp(h->origins[i], origin) == 0)
			return origin;
	}
	return NULL;
}

void
http_cors_add_headers(const struct http_cors *h, struct MHD_Connection *c, struct MHD_Response *rsp)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *allow = allowed_origin(h, origin);

	if (h->n > 0 && (allow == NULL || strcmp(allow, "*") != 0))
		MHD_add_response_header(rsp, "Vary", "Origin");
	if (allow == NULL)
		return;
	MHD_add_response_header(rsp, "Access-Control-Allow-Origin", allow);
	MHD_add_response_header(rsp, "Access-Control-Expose-Headers", "ETag");
}

bool
http_cors_is_preflight(const struct http_cors *h, struct MHD_Connection *c, const char *method)
{
	return strcmp(method, "OPTIONS") == 0 &&
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Method") !=
		       NULL &&
	       allowed_origin(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin")) != NULL;
}

enum MHD_Result
http_cors_send_preflight(const struct http_cors *h, struct MHD_Connection *c, const char *url,
			 bool with_actions)
{
	struct MHD_Response *rsp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	struct dpmon_api_resource res;
	enum MHD_Result ok;

	if (rsp == NULL)
		return MHD_NO;
	dpmon_http_guard_answering(c); /* off the header deadline */
	http_cors_add_headers(h, c, rsp);
	dpmon_api_resource_of(url, with_actions, &res);
	MHD_add_response_header(rsp, "Access-Control-Allow-Methods", res.methods);
	MHD_add_response_header(rsp, "Access-Control-Allow-Headers",
				res.changes_state ? "If-None-Match, Content-Type"
						  : "If-None-Match");
	MHD_add_response_header(rsp, "Access-Control-Max-Age", "600");
	MHD_add_response_header(rsp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ok = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, rsp);
	MHD_destroy_response(rsp);
	return ok;
}

bool
http_etag_matches(const char *inm, const char *etag)
{
	size_t n = strlen(etag);

	while (inm != NULL && *inm != '\0') {
		inm += strspn(inm, " \t,");
		if (*inm == '*')
			return true;
		if (strncmp(inm, "W/", 2) == 0)
			inm += 2;
		if (strncmp(inm, etag, n) == 0 &&
		    (inm[n] == '\0' || inm[n] == ',' || inm[n] == ' ' || inm[n] == '\t'))
			return true;
		inm = strchr(inm, ',');
	}
	return false;
}
