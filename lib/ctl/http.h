/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http.h — dpmonctl's HTTP client: one keep-alive connection to dpmon's
 * REST API over libcurl, a bearer token on requests that change state,
 * and errors worded for the operator.
 */
#ifndef DPMON_CTL_HTTP_H
#define DPMON_CTL_HTTP_H

#include <stddef.h>

/** A client of one dpmon API (one libcurl easy handle, reused). */
struct ctl_http {
	char *base;   /**< the URL without a trailing slash */
	char *token;  /**< the bearer token, or NULL */
	char *cacert; /**< CA bundle for an HTTPS listener, or NULL */
	void *curl;   /**< the CURL easy handle */
};

/** One answer: HTTP status and the body, NUL-terminated. */
struct ctl_reply {
	long status;    /**< HTTP status code */
	char *body;     /**< the body as received (malloc'd, NUL-terminated) */
	size_t len;     /**< bytes in body, without the NUL */
	int token_sent; /**< 1 when the request carried the bearer token */
};

/**
 * Prepare a client. Nothing is sent yet.
 *
 * @param c       the client to fill
 * @param url     dpmon's base URL (http://HOST:PORT or https://...)
 * @param token   bearer token for POST and DELETE, or NULL
 * @param cacert  path of a CA bundle for https, or NULL for the system's
 * @param err     message on failure
 * @param errlen  size of err, bytes
 * @return 0, or -EINVAL for a URL that is not http(s), -ENOMEM.
 * Any thread; one client is used by one thread at a time.
 */
int ctl_http_open(struct ctl_http *c, const char *url, const char *token, const char *cacert,
		  char *err, size_t errlen);

/**
 * Send one request and read the whole answer.
 *
 * @param c       an open client
 * @param method  "GET", "POST" or "DELETE"; POST and DELETE carry the token
 * @param path    path and query, starting with '/'
 * @param body    request body (JSON) or NULL
 * @param r       the answer, on success (free with ctl_reply_free())
 * @param err     on failure, one line saying what happened and what to do
 *                ("cannot connect to URL: ...; is dpmon running?")
 * @param errlen  size of err, bytes
 * @return 0 when an HTTP answer came (whatever its status), -ECONNREFUSED
 * when nothing listens at the URL, -EIO for any other transfer failure.
 */
int ctl_http_request(struct ctl_http *c, const char *method, const char *path, const char *body,
		     struct ctl_reply *r, char *err, size_t errlen);

/**
 * Percent-encode one path segment or query value.
 *
 * @param c     an open client
 * @param text  the raw text
 * @return a malloc'd string, or NULL without memory.
 */
char *ctl_http_escape(struct ctl_http *c, const char *text);

/**
 * The API's error message of a non-2xx answer: its {"error": "..."} when
 * the body is one, else "HTTP STATUS".
 *
 * @param r       the answer
 * @param buf     where to write the message
 * @param buflen  size of buf, bytes
 */
void ctl_reply_error(const struct ctl_reply *r, char *buf, size_t buflen);

/** Free an answer's body. @param r the answer; may be zeroed already. */
void ctl_reply_free(struct ctl_reply *r);

/** Close the connection and free the client. @param c the client. */
void ctl_http_close(struct ctl_http *c);

#endif
