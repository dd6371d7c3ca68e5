/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_reply.h — an answer being built by the HTTP server, before it is
 * queued: status, body (owned, static or a shared rendered body), the
 * header fields it carries; the JSON and error answers. Private to
 * lib/serve (http.c and http_render.c).
 */
#ifndef DPMON_HTTP_REPLY_H
#define DPMON_HTTP_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "http_cache.h"

/* Everything needed to send one response. */
struct reply {
	unsigned status;
	char *body; /* malloc'd when body_owned, else static */
	size_t len;
	bool body_owned;
	struct body *shared; /* when set: body is shared->text, one reference held */
	const char *ctype;
	const char *cache; /* Cache-Control */
	const char *allow; /* Allow, for 405 */
	char etag[64];     /* "" = none */
	bool page_headers; /* the dashboard's security headers */
	bool close;        /* Connection: close (the request's framing was refused) */
};

/**
 * @return @p p as the writable pointer libmicrohttpd's
 *         MHD_create_response_from_buffer takes, for a read-only buffer
 *         passed with MHD_RESPMEM_PERSISTENT, which it never writes
 *         (libmicrohttpd 0.9.75 has no const variant).
 * Thread-safety: any thread (no state).
 */
char *http_persistent_buffer(const char *p);

/**
 * Fill @p r with a JSON answer of HTTP status @p status from @p body, or
 * when it is NULL from @p text (either consumed: decref'd or freed); a
 * fixed 500 text when neither is there (no memory).
 * Thread-safety: any thread.
 */
void http_reply_json(struct reply *r, unsigned status, json_t *body, char *text);

/**
 * Fill @p r with a JSON error answer {"error": @p msg} of HTTP status
 * @p status. Thread-safety: any thread.
 */
void http_reply_error(struct reply *r, unsigned status, const char *msg);

/**
 * Drop the body of @p r (its owned text freed, its shared reference put):
 * @p r then has an empty static body. Thread-safety: any thread.
 */
void http_reply_drop_body(struct reply *r);

#endif
