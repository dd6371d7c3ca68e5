/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_upload.c — the body of a request on a resource that changes state,
 * read whole and bounded (http_upload.h). A leaf of http.c.
 */
#include "http_upload.h"

#include <stdlib.h>
#include <string.h>

bool
http_upload_announced_too_big(struct MHD_Connection *c)
{
	const char *cl =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return cl != NULL && strtoull(cl, NULL, 10) > DPMON_API_BODY_MAX;
}

void
http_upload_append(struct upload *u, const char *data, size_t size)
{
	if (u->len + size > sizeof(u->data))
		u->too_big = true;
	else
		memcpy(u->data + u->len, data, size);
	u->len += u->too_big ? 0 : size;
}
