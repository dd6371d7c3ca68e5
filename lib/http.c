/*
 * http.c — the HTTP transport: libmicrohttpd in front of api.c.
 *
 * libmicrohttpd runs its own polling thread (MHD_USE_AUTO picks epoll or
 * poll); every request is answered from that thread:
 *
 *   collect the query keys → acquire the snapshot → dpmon_api_handle_keys
 *   → release the snapshot → json_dumps → queue the response.
 *
 * GET and HEAD are answered on the access handler's second call, once
 * libmicrohttpd knows the whole request was read, so the connection stays
 * open for the next request (HTTP/1.1 keep-alive, which pollers and load
 * generators rely on); a body sent with them is discarded. Any other method
 * is refused with 405 on the first call, before its body is read, and
 * libmicrohttpd closes the connection instead of waiting for the upload. A snapshot reference is held only while the JSON is built, never
 * while the client reads the response (the rendered text is owned by the
 * response), so a slow client cannot pin an old snapshot.
 *
 * Robustness limits: at most HTTP_MAX_CONNECTIONS concurrent connections,
 * HTTP_MAX_PER_IP of them from one client address,
 * HTTP_TIMEOUT_S of idleness per connection, libmicrohttpd's default
 * 32 KiB of memory per connection (longer request lines get its own 414),
 * and at most HTTP_MAX_ARGS query parameters (400 beyond). The path is
 * handed over percent-decoded, so "%00" merely ends it early.
 *
 * The only state is the struct dpmon_http the caller owns; libmicrohttpd's
 * log messages go to stderr.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "api.h"

#define HTTP_MAX_CONNECTIONS 1024
/* One address cannot hold every connection (slow clients, slowloris). */
#define HTTP_MAX_PER_IP 64
#define HTTP_TIMEOUT_S 10
#define HTTP_MAX_ARGS 16

struct dpmon_http {
	struct MHD_Daemon *daemon;
	struct dpmon_snap_store *store;
	uint16_t port;
};

/* The query string of one request, as libmicrohttpd decoded it. */
struct query {
	const char *keys[HTTP_MAX_ARGS + 1]; /* NULL-terminated */
	const char *values[HTTP_MAX_ARGS];   /* NULL for "?key" without '=' */
	unsigned n;
	int overflow;
};

static enum MHD_Result
collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct query *q = cls;

	(void)kind;
	if (q->n == HTTP_MAX_ARGS) {
		q->overflow = 1;
		return MHD_NO;
	}
	q->keys[q->n] = key;
	q->values[q->n] = value;
	q->n++;
	return MHD_YES;
}

static const char *
lookup_arg(void *ctx, const char *key)
{
	const struct query *q = ctx;

	for (unsigned i = 0; i < q->n; i++)
		if (strcmp(q->keys[i], key) == 0)
			return q->values[i];
	return NULL;
}

/* The body text of @p res, malloc'd; NULL only when out of memory. */
static char *
render_body(const struct dpmon_api_response *res)
{
	static const char fallback[] = "{\"error\":\"out of memory\"}";
	char *text = res->body != NULL ? json_dumps(res->body, JSON_COMPACT) : NULL;

	return text != NULL ? text : strdup(fallback);
}

static enum MHD_Result
send_response(struct MHD_Connection *c, struct dpmon_api_response *res)
{
	char *text = render_body(res);
	struct MHD_Response *r;
	enum MHD_Result ok;
	unsigned status = res->status;

	if (text == NULL)
		return MHD_NO; /* closes the connection */
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	if (res->body == NULL)
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (res->allow != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, res->allow);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* A 400 built here, for what never reaches the API (too many parameters). */
static void
transport_error(struct dpmon_api_response *res, const char *msg)
{
	*res = (struct dpmon_api_response){
		.status = MHD_HTTP_BAD_REQUEST,
		.body = json_pack("{s:s}", "error", msg),
	};
}

/*
 * Per-request state, kept in libmicrohttpd's con_cls: set from the raw
 * request target before it is percent-decoded (uri_seen), then marked
 * once the headers were handled. The decoded target is a C string, so a
 * "%00" would silently cut the path or a parameter short: such requests are
 * refused with 400 instead.
 */
enum req_state { REQ_NEW = 1, REQ_NEW_NUL, REQ_HEADERS_DONE };
static const char req_marks[4];
#define REQ_MARK(st) ((void *)&req_marks[st])
#define REQ_IS(p, st) ((p) == REQ_MARK(st))

static void *
uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	return REQ_MARK(strcasestr(uri, "%00") != NULL ? REQ_NEW_NUL : REQ_NEW);
}

static bool
is_read_method(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
	       strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size,
	   void **con_cls)
{
	struct dpmon_http *h = cls;
	struct dpmon_api_response res;
	struct dpmon_snapshot *snap;
	struct query q = {.n = 0};
	enum MHD_Result ok;

	(void)version;
	(void)upload_data;
	if (is_read_method(method) && !REQ_IS(*con_cls, REQ_NEW_NUL)) {
		if (!REQ_IS(*con_cls, REQ_HEADERS_DONE)) { /* first call: headers only */
			*con_cls = REQ_MARK(REQ_HEADERS_DONE);
			return MHD_YES;
		}
		if (*upload_data_size != 0) { /* a body on GET: discard it */
			*upload_data_size = 0;
			return MHD_YES;
		}
	}
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &q);
	if (REQ_IS(*con_cls, REQ_NEW_NUL)) {
		transport_error(&res, "a NUL byte (%00) in the request target");
	} else if (q.overflow) {
		transport_error(&res, "too many query parameters");
	} else {
		snap = dpmon_snap_acquire(h->store);
		dpmon_api_handle_keys(snap, method, url, lookup_arg, &q, q.keys, &res);
		dpmon_snap_release(h->store, snap);
	}
	ok = send_response(c, &res);
	json_decref(res.body);
	return ok;
}

static void
log_to_stderr(void *cls, const char *fmt, va_list ap)
{
	int saved = errno; /* callers report errno after libmicrohttpd fails */

	(void)cls;
	fputs("dpmon: http: ", stderr);
	vfprintf(stderr, fmt, ap);
	errno = saved;
}

/* Fill @p ss from an IPv4 or IPv6 literal; @return its length or 0. */
static socklen_t
listen_sockaddr(const char *text, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (text == NULL)
		return 0;
	if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		return sizeof(*v4);
	}
	if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		return sizeof(*v6);
	}
	return 0;
}

struct dpmon_http *
dpmon_http_start(const char *listen_addr, uint16_t port, struct dpmon_snap_store *store)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct dpmon_http *h;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	int err;

	if (store == NULL || listen_sockaddr(listen_addr, port, &ss) == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->store = store;
	errno = 0;
	h->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_request, h,
				     /* first, so that every message goes through it */
				     MHD_OPTION_EXTERNAL_LOGGER, log_to_stderr, NULL,
				     MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_IP,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
				     MHD_OPTION_END);
	if (h->daemon == NULL) {
		err = errno != 0 ? errno : EIO;
		free(h);
		errno = err;
		return NULL;
	}
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info != NULL ? info->port : port;
	return h;
}

uint16_t
dpmon_http_port(const struct dpmon_http *h)
{
	return h->port;
}

void
dpmon_http_stop(struct dpmon_http *h)
{
	if (h == NULL)
		return;
	MHD_stop_daemon(h->daemon);
	free(h);
}
