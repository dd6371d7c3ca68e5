/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_checks.h — the checks of a request head libmicrohttpd parsed, as
 * verdicts (http_head.h): its framing (RFC 9112 6.3), the head limits,
 * and the header fields the access checks read, which may each appear
 * once. The owner (http.c) turns a refusal into its answer. Private to
 * lib/serve (http.c).
 */
#ifndef DPMON_HTTP_CHECKS_H
#define DPMON_HTTP_CHECKS_H

#include <stdbool.h>

#include <microhttpd.h>

#include "http_head.h"

/**
 * The framing of request @p c's header fields (Content-Length,
 * Transfer-Encoding) judged by dpmon_http_framing_check.
 * @return status 0, or the refusal (400, 501).
 * Thread-safety: the HTTP thread.
 */
struct dpmon_http_verdict http_checks_framing(struct MHD_Connection *c);

/**
 * The head limits of request @p c (dpmon_http_head_limits: the size of its
 * head and its fields as libmicrohttpd counted them, protocol @p version;
 * @p long_target: the raw target was over DPMON_HTTP_TARGET_MAX bytes).
 * @return status 0, or the refusal (414, 431, 505).
 * Thread-safety: the HTTP thread.
 */
struct dpmon_http_verdict http_checks_head(struct MHD_Connection *c, const char *version,
					   bool long_target);

/**
 * The fields the access checks read, of request @p c with protocol
 * @p version: Host, Origin, Content-Type and Authorization may each appear
 * once (a repeated one could show the checks one value and the endpoint
 * another), and an HTTP/1.1 request has exactly one Host (RFC 9112
 * section 3.2: a request without Host or with more than one is a 400).
 * @return status 0, or the refusal (400).
 * Thread-safety: the HTTP thread.
 */
struct dpmon_http_verdict http_checks_single_fields(struct MHD_Connection *c, const char *version);

#endif
