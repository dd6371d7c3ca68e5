/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_upload.h — the body of a request on a resource that changes state
 * (the blackhole list), read whole before it is answered: at most
 * DPMON_API_BODY_MAX bytes kept, a longer one marked for a 413. Private to
 * lib/serve (http.c, which keeps a struct upload in libmicrohttpd's
 * con_cls and frees it when the request ends).
 */
#ifndef DPMON_HTTP_UPLOAD_H
#define DPMON_HTTP_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "api.h"

/* The body of a request on a resource that changes state, read before answering. */
struct upload {
	size_t len;
	bool too_big;
	char data[DPMON_API_BODY_MAX];
};

/**
 * @return whether request @p c announces (Content-Length) a body over
 *         DPMON_API_BODY_MAX bytes, which is refused before it is read.
 * Thread-safety: the HTTP thread.
 */
bool http_upload_announced_too_big(struct MHD_Connection *c);

/**
 * Keep the @p size bytes of @p data after those of @p u, or mark @p u too
 * big when they would not fit (the bytes are then dropped).
 * Thread-safety: the HTTP thread.
 */
void http_upload_append(struct upload *u, const char *data, size_t size);

#endif /* DPMON_HTTP_UPLOAD_H */
