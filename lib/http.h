/*
 * http.h — the embedded HTTP server (libmicrohttpd) that serves the
 * published snapshot through api.c. It runs in libmicrohttpd's own thread,
 * never touches worker memory, and holds a snapshot reference only while
 * rendering one response.
 */
#ifndef DPMON_HTTP_H
#define DPMON_HTTP_H

#include <stdint.h>

#include "snapshot.h"

struct dpmon_http;

/**
 * Start listening on @p listen_addr (IPv4 or IPv6 literal) and @p port
 * (0 = let the kernel choose; see dpmon_http_port).
 * @return the server, or NULL with errno set (EADDRINUSE, EINVAL, ...).
 * Thread-safety: main thread, once.
 */
struct dpmon_http *dpmon_http_start(const char *listen_addr, uint16_t port,
				    struct dpmon_snap_store *store);

/** The TCP port actually bound. */
uint16_t dpmon_http_port(const struct dpmon_http *h);

/** Stop the server and wait for its thread. NULL is ignored. */
void dpmon_http_stop(struct dpmon_http *h);

#endif /* DPMON_HTTP_H */
