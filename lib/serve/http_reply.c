/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_reply.c — an answer being built, before it is queued
 * (http_reply.h). A leaf of http.c and http_render.c.
 */
#include "http_reply.h"

#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "api.h"

char *
http_persistent_buffer(const char *p)
{
	union {
		const char *in;
		char *out;
	} u = {.in = p};

	return u.out;
}

void
http_reply_json(struct reply *r, unsigned status, json_t *body, char *text)
{
	static const char fallback[] = "{\"error\":\"out of memory\"}";

	if (body != NULL) {
		free(text);
		text = json_dumps(body, DPMON_API_JSON_FLAGS);
		json_decref(body);
	}
	*r = (struct reply){.status = status,
			    .body = text,
			    .body_owned = true,
			    .ctype = "application/json",
			    .cache = "no-store"};
	if (text == NULL) {
		r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		r->body = http_persistent_buffer(fallback);
		r->body_owned = false;
	}
	r->len = strlen(r->body);
}

void
http_reply_error(struct reply *r, unsigned status, const char *msg)
{
	http_reply_json(r, status, json_pack("{s:s}", "error", msg), NULL);
}

void
http_reply_drop_body(struct reply *r)
{
	if (r->body_owned)
		free(r->body);
	http_body_put(r->shared);
	r->body = http_persistent_buffer("");
	r->len = 0;
	r->body_owned = false;
	r->shared = NULL;
}
