/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http.h — the embedded HTTP server (libmicrohttpd) that serves the
 * published snapshot: JSON through api.c, Prometheus text through prom.c,
 * and the embedded dashboard page. It runs in its own thread (heavy answers
 * in two more: lib/serve/http_pool.h), never touches worker memory, and
 * holds a snapshot reference only while rendering one response.
 */
#ifndef DPMON_HTTP_H
#define DPMON_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "actions.h"
#include "config.h"
#include "health.h"
#include "snapshot.h"

struct dpmon_http;

/** What the server needs from the configuration. */
struct dpmon_http_opts {
	const char *listen_addr;    /**< IPv4 or IPv6 literal */
	uint16_t port;              /**< 0 = let the kernel choose */
	uint32_t metrics_top_hosts; /**< per-host series on /metrics (metrics.top_hosts) */
	/** Subnets with per-subnet series on /metrics (metrics.top_subnets). */
	uint32_t metrics_top_subnets;
	uint32_t n_cors_origins; /**< entries of @c cors_origins, 0..DPMON_MAX_CORS_ORIGINS */
	/** Allowed CORS origins ("*" or "scheme://host[:port]"); copied at start. */
	const char (*cors_origins)[DPMON_ORIGIN_LEN];
	/** Entries of @c allowed_hosts, 0..DPMON_MAX_ALLOWED_HOSTS; 0 = the
	 *  default list (http_access.h). */
	uint32_t n_allowed_hosts;
	/** Host names allowed in the Host header (http.allowed_hosts); copied. */
	const char (*allowed_hosts)[DPMON_HOST_NAME_LEN];
	/** Bearer token that requests changing state need (http.write_token_file,
	 *  token_file.h); NULL or "" = none. Read at start. */
	const char *write_token_file;
	/** Bearer token that reads other than /health need (http.read_token_file);
	 *  NULL or "" = none. Read at start. */
	const char *read_token_file;
	/** PEM certificate chain (http.tls_cert_file, tls_file.h): serve HTTPS;
	 *  NULL or "" = plain HTTP. Read at start only. */
	const char *tls_cert_file;
	/** Its PEM private key (http.tls_key_file), a private file; needed with
	 *  @c tls_cert_file. Read at start only. */
	const char *tls_key_file;
	/**
	 * The blackhole list served at /api/v1/blackholes (GET, POST, DELETE;
	 * api.h, dpmon_api_request.actions); NULL: those paths answer 404.
	 * Not owned.
	 */
	struct dpmon_actions *actions;
	/**
	 * The main lcore's health board (health.h) that /health and the
	 * summary judge at request time; NULL: only the heartbeats
	 * (heartbeat.h) are judged. Not owned; must outlive the server.
	 */
	const struct dpmon_health *health;
};

/**
 * Start listening as @p o says (see struct dpmon_http_opts); the options
 * are copied. Serves GET / (the dashboard), /metrics (prom.c) and the JSON
 * API (api.c), with ETag / If-None-Match (304) per snapshot and CORS for
 * the configured origins, and the blackhole list (o->actions). Every
 * request passes the access policy first (http_access.h: Host, and for a
 * request that changes state Origin and Content-Type; 403 or 415), then
 * the bearer tokens (http_token.h; 401). With o->tls_cert_file it speaks
 * HTTPS only (TLS 1.2 and 1.3, RFC 8996), through libmicrohttpd's GnuTLS.
 * @return the server, or NULL with errno set (EADDRINUSE, EINVAL for a bad
 *         address or NULL argument or token file or certificate or key
 *         (logged), EPERM for a token or key file others may read,
 *         ENOTSUP for TLS with a libmicrohttpd built without it, ENOMEM, ...).
 * Thread-safety: main thread, once per server.
 */
struct dpmon_http *dpmon_http_start_opts(const struct dpmon_http_opts *o,
					 struct dpmon_snap_store *store);

/**
 * Start listening on @p listen_addr (IPv4 or IPv6 literal) and @p port
 * (0 = let the kernel choose; see dpmon_http_port), with the default
 * options: metrics.top_hosts 20, metrics.top_subnets 1000, no CORS origin.
 * @return the server, or NULL with errno set (EADDRINUSE, EINVAL, ...).
 * Thread-safety: main thread, once.
 */
struct dpmon_http *dpmon_http_start(const char *listen_addr, uint16_t port,
				    struct dpmon_snap_store *store);

/**
 * @return the TCP port @p h is bound to (the kernel's choice when started
 *         with port 0).
 * Thread-safety: any thread, while @p h runs.
 */
uint16_t dpmon_http_port(const struct dpmon_http *h);

/**
 * Stop the server: close the listening socket and every connection, wait
 * for libmicrohttpd's thread (which destroys every response), then free
 * the cached bodies and @p h. NULL is ignored.
 * Thread-safety: the thread that started it, once; no callback runs after
 * it returns.
 */
void dpmon_http_stop(struct dpmon_http *h);

/**
 * Replace the bearer tokens with those of @p write_token_file and
 * @p read_token_file (NULL or "" = none; token_file.h); on any failure
 * both tokens stay as they were.
 * @param err     receives "FILE: reason" on failure; may be NULL.
 * @param errlen  size of @p err in bytes.
 * @return 0, or -errno as dpmon_token_file_read (-EPERM, -EINVAL, -ENOENT, ...).
 * Thread-safety: any thread while @p h runs (the main thread on SIGHUP).
 */
int dpmon_http_reload_tokens(struct dpmon_http *h, const char *write_token_file,
			     const char *read_token_file, char *err, size_t errlen);

/**
 * Render for snapshot @p s, into the server's query cache, the
 * GET /api/v1/hosts queries answered from the snapshot before it, so that
 * a dashboard polling them finds them ready instead of waiting for the
 * first request's render (~3.5 ms at limit=100). Nothing when none.
 * @param s  the snapshot just published, held by the caller.
 * Thread-safety: any thread other than the server's; the main lcore calls
 * it right after publishing @p s.
 */
void dpmon_http_prewarm(struct dpmon_http *h, const struct dpmon_snapshot *s);

#endif /* DPMON_HTTP_H */
