/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_checks.c — the checks of a request head libmicrohttpd parsed, as
 * verdicts (http_checks.h). A leaf of http.c.
 */
#include "http_checks.h"

#include <string.h>
#include <strings.h>

/* libmicrohttpd's iterator over the header fields: Content-Length and
 * Transfer-Encoding into the struct dpmon_http_framing @p cls. */
static enum MHD_Result
note_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct dpmon_http_framing *f = cls;

	(void)kind;
	if (value == NULL)
		value = "";
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0 && f->n_content_length++ == 0) {
		f->content_length = value;
		f->content_length_len = strlen(value);
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0 &&
		   f->n_transfer_encoding++ == 0) {
		f->transfer_encoding = value;
		f->transfer_encoding_len = strlen(value);
	}
	return MHD_YES;
}

struct dpmon_http_verdict
http_checks_framing(struct MHD_Connection *c)
{
	struct dpmon_http_framing f = {0};

	MHD_get_connection_values(c, MHD_HEADER_KIND, note_framing, &f);
	return dpmon_http_framing_check(&f);
}

struct dpmon_http_verdict
http_checks_head(struct MHD_Connection *c, const char *version, bool long_target)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	int fields = MHD_get_connection_values(c, MHD_HEADER_KIND, NULL, NULL);

	return dpmon_http_head_limits(long_target, info != NULL ? info->header_size : 0,
				      fields > 0 ? (unsigned)fields : 0, version);
}

/* The header fields the access checks read, each of which may appear once:
 * a repeated one could show the checks one value and the endpoint another
 * (RFC 9112 section 3.2: more than one Host is a 400). */
static const char *const single_fields[] = {MHD_HTTP_HEADER_HOST, "Origin",
					    MHD_HTTP_HEADER_CONTENT_TYPE,
					    MHD_HTTP_HEADER_AUTHORIZATION};
#define N_SINGLE_FIELDS (sizeof(single_fields) / sizeof(single_fields[0]))

/* MHD_get_connection_values' iterator: counts the fields of single_fields. */
static enum MHD_Result
count_single_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	unsigned *seen = cls;

	(void)kind;
	(void)value;
	for (unsigned i = 0; i < N_SINGLE_FIELDS; i++)
		if (strcasecmp(key, single_fields[i]) == 0)
			seen[i]++;
	return MHD_YES;
}

struct dpmon_http_verdict
http_checks_single_fields(struct MHD_Connection *c, const char *version)
{
	unsigned seen[N_SINGLE_FIELDS] = {0};

	MHD_get_connection_values(c, MHD_HEADER_KIND, count_single_field, seen);
	for (unsigned i = 0; i < N_SINGLE_FIELDS; i++)
		if (seen[i] > 1)
			return (struct dpmon_http_verdict){
				.status = 400,
				.message = "Host, Origin, Content-Type and Authorization may each "
					   "appear once"};
	if (seen[0] == 0 && version != NULL && strcmp(version, "HTTP/1.1") == 0)
		return (struct dpmon_http_verdict){
			.status = 400, .message = "an HTTP/1.1 request needs a Host field"};
	return (struct dpmon_http_verdict){.status = 0};
}
