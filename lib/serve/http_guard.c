/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_guard.c — connection admission in front of libmicrohttpd, so that
 * slow or hostile clients cannot take the management port away.
 *
 * libmicrohttpd 0.9.75 has a connection limit that refuses newcomers, a
 * per-address limit that refuses them too, and an idle timeout
 * (MHD_OPTION_CONNECTION_TIMEOUT) that any trickle of bytes renews: a
 * client sending one header line every few seconds holds its connection
 * for ever, and enough of them lock everyone else out. Its parser also
 * answers some malformed heads itself, in HTML, sometimes twice or not at
 * all (an invalid Content-Length gets two header blocks: the error
 * response's head is built when the fault is found and again when the
 * state machine, which the fault did not stop, reaches START_REPLY; a
 * request line whose parameters exhaust the connection's memory pool gets
 * none), and it waits for a line end that bytes that are not HTTP never
 * send. So this file does what libmicrohttpd cannot, around it:
 *
 *  - It owns the listening socket and runs the daemon from its own thread
 *    (MHD_USE_EPOLL without internal thread, MHD_USE_NO_LISTEN_SOCKET): an
 *    epoll loop over the listening socket, the connections it still holds,
 *    libmicrohttpd's epoll descriptor and a wake-up eventfd, calling
 *    MHD_run() on every pass. All libmicrohttpd callbacks run in this
 *    thread, so the guard's state needs no lock, and a connection it cuts
 *    (shutdown(2), libmicrohttpd then closes it) cannot have had its
 *    descriptor closed and reused: the close notification comes first.
 *
 *  - Admission. Every accepted connection counts toward the total
 *    (DPMON_HTTP_MAX_CONNECTIONS, lowered to fit the file-descriptor
 *    limit, whose soft value is raised to the hard one) and toward its
 *    client address (DPMON_HTTP_MAX_PER_ADDR). At a limit the newcomer is
 *    not refused: the oldest connection of that address (or of any, for
 *    the total) that is waiting for a request head is cut instead, first
 *    among those that never completed a request (list "fresh"), then among
 *    idle keep-alive ones (list "idle"). A connection busy with a request
 *    is never cut. A poller behind an address that also holds many slow
 *    connections therefore always gets in, and its keep-alive connection,
 *    which completed requests, is cut only after every slow one.
 *
 *  - Header deadline: a connection must send each request whole (head and
 *    body) within DPMON_HTTP_HEADER_DEADLINE_MS of its opening or of the
 *    end of its previous response, however slowly the bytes trickle; the
 *    clock stops when http.c queues the answer (dpmon_http_guard_answering).
 *    The lists are kept in the order of that start, so a sweep on every
 *    pass looks only at their heads. A connection the guard still holds
 *    gets a 408 first; one libmicrohttpd holds is shut down (it cannot be
 *    written to from here). A keep-alive connection thus waits at most
 *    that long for its next request. Sending a response is bounded by
 *    libmicrohttpd's idle timeout alone.
 *
 *  - The first request of every connection is read with MSG_PEEK (so
 *    libmicrohttpd later reads it whole) and checked by
 *    dpmon_http_head_check before the connection is handed over with
 *    MHD_add_connection: bytes that are not HTTP get a 400 as soon as the
 *    first wrong byte arrives, a long line 414, a long or crowded head
 *    431, unsound framing (RFC 9112 6.3) 400; each answer is JSON
 *    ({"error": ...}), the connection is closed after it. Later requests
 *    on a keep-alive connection are parsed by libmicrohttpd alone (it
 *    offers no way to look at them first); http.c checks their framing
 *    with dpmon_http_framing_check, and the header deadline still bounds
 *    them.
 *
 *  - HTTPS (MHD_USE_TLS): bytes under TLS cannot be peeked at, so the guard
 *    looks at the first byte alone. A TLS handshake record (content type
 *    22, RFC 8446 section 5.1, then major version 3) is handed over at
 *    once and libmicrohttpd runs the handshake; anything else (plain HTTP
 *    to the HTTPS port) gets a plain-text JSON 400 at once. The admission
 *    and the header deadline stay as above (a connection handed over stays
 *    on list "fresh" until it is answered), and the handshake has a
 *    deadline of its own, DPMON_HTTP_HANDSHAKE_DEADLINE_MS from the
 *    opening: a connection that never sent a byte by then is closed, one
 *    whose handshake GnuTLS has not finished is cut. The checks of the
 *    first request head move after the decryption, into http.c's access
 *    handler (head_refused, which judges every request's head).
 *
 * A refusal is written at once (it fits in the socket buffer), then the
 * connection lingers half-closed for up to LINGER_MS, its input drained,
 * so that the close does not reset it before the client has read the
 * answer.
 */
#include "http_guard.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <jansson.h>

#include "http_addr.h"
#include "http_conn.h"
#include "log.h"

/* Descriptors kept for the rest of dpmon (DPDK, files, exporters, sockets). */
#define FD_RESERVE      256
/* Connections cut but not yet closed by libmicrohttpd, and lingering ones. */
#define CUT_SLACK       256
#define LINGER_MS       2000
#define TICK_MS         100 /* the longest epoll wait: deadline sweep resolution */
#define ACCEPT_BATCH    16
#define ACCEPT_PAUSE_MS 100 /* after EMFILE and the like */

/* The refusal texts below spell this limit out. */
_Static_assert(DPMON_HTTP_HEADER_DEADLINE_MS == 5000, "update the refusal texts");

struct dpmon_http_guard {
	int listen_fd, epoll_fd, wake_fd, mhd_fd;
	struct MHD_Daemon *daemon;
	pthread_t thread;
	bool running;
	bool tls;                /* the daemon speaks TLS: first-byte check, handshake deadline */
	unsigned max_conns;      /* admission limit */
	struct http_conns conns; /* the connection records, their lists and counts */
	struct conn *adding;     /* the connection MHD_add_connection is taking */
	uint64_t accept_paused_until;
	uint16_t port;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------------------
 * Answers the guard writes itself.
 * --------------------------------------------------------------------- */

static const char *
reason_phrase(unsigned status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 408:
		return "Request Timeout";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Error";
	}
}

/* Read and drop what the client sent (bounded): a close with unread input
 * would reset the connection and could lose the answer. @return false at
 * EOF or on an error. */
static bool
drain(int fd)
{
	char scratch[16384];

	for (int k = 0; k < 16; k++) {
		ssize_t n = recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT);

		if (n > 0)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
	}
	return true;
}

/* Write the JSON error @p status / @p message to @p fd, without blocking. */
static void
send_error(int fd, unsigned status, const char *message, bool head_method)
{
	json_t *j = json_pack("{s:s}", "error", message);
	char *body = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	char buf[1024];
	size_t blen = body != NULL ? strlen(body) : 0;
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
			 "Cache-Control: no-store\r\nConnection: close\r\n"
			 "Content-Length: %zu\r\n\r\n%s",
			 status, reason_phrase(status), blen,
			 body != NULL && !head_method ? body : "");

	json_decref(j);
	free(body);
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)!send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Refuse @p c, which the guard holds: drain, answer, half-close, linger. */
static void
refuse_conn(struct dpmon_http_guard *g, struct conn *c, const struct dpmon_http_verdict *v,
	    bool head_method, uint64_t now)
{
	bool open = drain(c->fd);

	send_error(c->fd, v->status, v->message, head_method);
	if (!open || shutdown(c->fd, SHUT_WR) != 0) {
		http_conn_close(&g->conns, c);
		return;
	}
	http_conn_uncount(&g->conns, c);
	c->where = CONN_LINGER;
	http_conn_push(&g->conns, c, LIST_LINGER, now);
}

/* ------------------------------------------------------------------------
 * The first request head, and the handover.
 * --------------------------------------------------------------------- */

static void
hand_over(struct dpmon_http_guard *g, struct conn *c)
{
	epoll_ctl(g->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	g->adding = c;
	/* libmicrohttpd closes the socket if it fails; its STARTED notification
	 * takes c (dpmon_http_guard_notify), its CLOSED one frees it. */
	(void)MHD_add_connection(g->daemon, c->fd, (const struct sockaddr *)&c->ss, c->ss_len);
	if (g->adding == c) { /* refused before it was started */
		g->adding = NULL;
		http_conn_free(&g->conns, c);
	}
}

/* Under TLS, the first bytes of @p c (@p n of @p buf): a handshake record
 * is handed over; anything else is refused. */
static void
on_tls_bytes(struct dpmon_http_guard *g, struct conn *c, const char *buf, size_t n, uint64_t now)
{
	static const struct dpmon_http_verdict plain = {
		.status = 400, .message = "this port speaks HTTPS (TLS): use an https:// URL"};
	/* RFC 8446 5.1: ContentType handshake(22), then legacy_record_version 3.x */
	bool handshake = (unsigned char)buf[0] == 22 && (n < 2 || (unsigned char)buf[1] == 3);

	if (handshake)
		hand_over(g, c);
	else
		refuse_conn(g, c, &plain, false, now);
}

/* New bytes (or EOF) on a connection the guard holds. */
static void
on_conn_event(struct dpmon_http_guard *g, struct conn *c, uint64_t now)
{
	char buf[DPMON_HTTP_HEAD_MAX + 1];
	struct dpmon_http_verdict v;
	size_t head_len;
	bool head_method;
	ssize_t n;
	int r;

	if (c->where == CONN_LINGER) {
		if (!drain(c->fd))
			http_conn_close(&g->conns, c);
		return;
	}
	if (c->where != CONN_PEEK)
		return; /* an event from before a handover in the same batch */
	n = recv(c->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		http_conn_close(&g->conns, c);
		return;
	}
	if (g->tls) {
		on_tls_bytes(g, c, buf, (size_t)n, now);
		return;
	}
	r = dpmon_http_head_check(buf, (size_t)n, &head_len, &head_method, &v);
	if (r < 0)
		refuse_conn(g, c, &v, head_method, now);
	else if (r > 0)
		hand_over(g, c);
}

/* ------------------------------------------------------------------------
 * Admission.
 * --------------------------------------------------------------------- */

/* Make room for a connection from @p key; @return false when every
 * connection in the way is busy with a request. */
static bool
make_room(struct dpmon_http_guard *g, const uint8_t key[16])
{
	struct conn *victim;

	if (http_addr_count(&g->conns.addrs, key) >= DPMON_HTTP_MAX_PER_ADDR) {
		if ((victim = http_conn_evictable(&g->conns, key)) == NULL)
			return false;
		http_conn_cut(&g->conns, victim);
	}
	if (g->conns.n_conns >= g->max_conns) {
		if ((victim = http_conn_evictable(&g->conns, NULL)) == NULL)
			return false;
		http_conn_cut(&g->conns, victim);
	}
	return true;
}

static void
admit(struct dpmon_http_guard *g, int fd, const struct sockaddr_storage *ss, socklen_t len,
      uint64_t now)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET};
	uint8_t key[16];
	struct conn *c;

	http_addr_key(ss, key);
	if (!make_room(g, key) || (c = http_conn_alloc(&g->conns)) == NULL) {
		send_error(fd, 503, "too many connections", false);
		close(fd);
		return;
	}
	*c = (struct conn){.g = g,
			   .fd = fd,
			   .where = CONN_PEEK,
			   .list = LIST_NONE,
			   .counted = true,
			   .ss = *ss,
			   .ss_len = len};
	memcpy(c->key, key, 16);
	http_conn_count(&g->conns, c);
	http_conn_push(&g->conns, c, LIST_FRESH, now);
	ev.data.ptr = c;
	if (epoll_ctl(g->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		http_conn_close(&g->conns, c);
		return;
	}
	/* A client usually sends its request with the handshake's last ACK:
	 * read it now, before later arrivals of this address could evict it. */
	on_conn_event(g, c, now);
}

static void
pause_accept(struct dpmon_http_guard *g, uint64_t now)
{
	struct epoll_event ev = {.events = 0, .data.ptr = &g->listen_fd};

	g->accept_paused_until = now + ACCEPT_PAUSE_MS;
	epoll_ctl(g->epoll_fd, EPOLL_CTL_MOD, g->listen_fd, &ev);
}

static void
on_listen_event(struct dpmon_http_guard *g, uint64_t now)
{
	for (int k = 0; k < ACCEPT_BATCH; k++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(g->listen_fd, (struct sockaddr *)&ss, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			admit(g, fd, &ss, len, now);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			pause_accept(g, now);
		if (errno != EINTR && errno != ECONNABORTED)
			return;
	}
}

/* Has GnuTLS finished the handshake of @p c, which libmicrohttpd holds?
 * gnutls_session_get_desc describes a session only once its initial
 * negotiation is complete (NULL before). Once seen, it stays so. */
static bool
tls_handshake_done(struct conn *c)
{
	const union MHD_ConnectionInfo *info =
		c->mc != NULL ? MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_GNUTLS_SESSION)
			      : NULL;
	char *desc;

	if (!c->tls_done && info != NULL && info->tls_session != NULL &&
	    (desc = gnutls_session_get_desc((gnutls_session_t)info->tls_session)) != NULL) {
		gnutls_free(desc);
		c->tls_done = true;
	}
	return c->tls_done;
}

/*
 * Under TLS, cut the connections that opened DPMON_HTTP_HANDSHAKE_DEADLINE_MS
 * ago or earlier without a complete handshake: closed when they never sent
 * a byte, else shut down for libmicrohttpd to close. List "fresh" is in
 * the order of opening; the walk stops at the first younger one, so it
 * looks only at connections that are past the handshake deadline and
 * within the header deadline.
 */
static void
sweep_handshakes(struct dpmon_http_guard *g, uint64_t now)
{
	struct conn *c = g->conns.lists[LIST_FRESH].head, *next;

	for (; c != NULL && c->since_ms + DPMON_HTTP_HANDSHAKE_DEADLINE_MS <= now; c = next) {
		next = c->next;
		if (c->where == CONN_PEEK)
			http_conn_close(&g->conns, c);
		else if (c->where == CONN_MHD && !tls_handshake_done(c))
			http_conn_cut(&g->conns, c);
	}
}

/* Cut what is past its deadline; resume accepting after a pause. */
static void
sweep(struct dpmon_http_guard *g, uint64_t now)
{
	static const struct dpmon_http_verdict late = {
		.status = 408, .message = "request head not complete within 5 s"};
	struct conn *c;

	for (int l = LIST_FRESH; l <= LIST_IDLE; l++)
		while ((c = g->conns.lists[l].head) != NULL &&
		       c->since_ms + DPMON_HTTP_HEADER_DEADLINE_MS <= now) {
			if (c->where == CONN_PEEK)
				refuse_conn(g, c, &late, false, now);
			else
				http_conn_cut(&g->conns, c);
		}
	if (g->tls)
		sweep_handshakes(g, now);
	while ((c = g->conns.lists[LIST_LINGER].head) != NULL && c->since_ms + LINGER_MS <= now)
		http_conn_close(&g->conns, c);
	if (g->accept_paused_until != 0 && now >= g->accept_paused_until) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &g->listen_fd};

		g->accept_paused_until = 0;
		epoll_ctl(g->epoll_fd, EPOLL_CTL_MOD, g->listen_fd, &ev);
	}
}

/* ------------------------------------------------------------------------
 * libmicrohttpd's side.
 * --------------------------------------------------------------------- */

void
dpmon_http_guard_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct dpmon_http_guard *g = cls;
	struct conn *c;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		c = g->adding;
		g->adding = NULL;
		if (c != NULL) {
			c->where = CONN_MHD;
			c->mc = mc;
		}
		*socket_context = c;
		return;
	}
	c = *socket_context;
	*socket_context = NULL;
	if (c != NULL)
		http_conn_free(&g->conns, c); /* the descriptor is closed by libmicrohttpd */
}

static struct conn *
conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info != NULL ? info->socket_context : NULL;
}

void
dpmon_http_guard_answering(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (c != NULL && c->counted)
		http_conn_unlist(&c->g->conns, c);
}

void
dpmon_http_guard_request_done(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (c != NULL && c->counted)
		http_conn_push(&c->g->conns, c, LIST_IDLE, now_ms());
}

/* ------------------------------------------------------------------------
 * The thread.
 * --------------------------------------------------------------------- */

static void *
guard_main(void *arg)
{
	struct dpmon_http_guard *g = arg;
	struct epoll_event ev[64];
	bool stop = false;

	while (!stop) {
		MHD_UNSIGNED_LONG_LONG mhd_ms;
		int wait = TICK_MS, n;
		uint64_t now;

		/* 0 when libmicrohttpd has buffered work (a pipelined request) */
		if (MHD_get_timeout(g->daemon, &mhd_ms) == MHD_YES && mhd_ms < (unsigned)wait)
			wait = (int)mhd_ms;
		n = epoll_wait(g->epoll_fd, ev, 64, wait);
		now = now_ms();

		for (int k = 0; k < n; k++) {
			void *p = ev[k].data.ptr;

			if (p == &g->wake_fd)
				stop = true;
			else if (p == &g->listen_fd)
				on_listen_event(g, now);
			else if (p != &g->mhd_fd)
				on_conn_event(g, p, now);
		}
		sweep(g, now);
		MHD_run(g->daemon);
	}
	return NULL;
}

int
dpmon_http_guard_start(struct dpmon_http_guard *g, struct MHD_Daemon *daemon)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
	struct epoll_event ev = {.events = EPOLLIN};
	int err;

	if (info == NULL)
		return -EINVAL;
	g->daemon = daemon;
	g->mhd_fd = info->epoll_fd;
	ev.data.ptr = &g->mhd_fd;
	if (epoll_ctl(g->epoll_fd, EPOLL_CTL_ADD, g->mhd_fd, &ev) != 0)
		return -errno;
	err = pthread_create(&g->thread, NULL, guard_main, g);
	if (err != 0)
		return -err;
	/* the thread that runs libmicrohttpd (bench/bench.py counts "MHD*" threads) */
	pthread_setname_np(g->thread, "MHD-guard");
	g->running = true;
	return 0;
}

void
dpmon_http_guard_stop(struct dpmon_http_guard *g)
{
	uint64_t one = 1;

	if (g == NULL || !g->running)
		return;
	(void)!write(g->wake_fd, &one, sizeof(one));
	pthread_join(g->thread, NULL);
	g->running = false;
}

/* ------------------------------------------------------------------------
 * Creation.
 * --------------------------------------------------------------------- */

/* Raise the soft descriptor limit to the hard one; @return the connection
 * limit that fits under it. */
static unsigned
fit_fd_limit(void)
{
	struct rlimit rl;
	rlim_t need = DPMON_HTTP_MAX_CONNECTIONS + CUT_SLACK + FD_RESERVE;
	unsigned max;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return DPMON_HTTP_MAX_CONNECTIONS;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = {.rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl.rlim_cur = rl.rlim_max;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return DPMON_HTTP_MAX_CONNECTIONS;
	max = rl.rlim_cur > CUT_SLACK + FD_RESERVE + 64
		      ? (unsigned)(rl.rlim_cur - CUT_SLACK - FD_RESERVE)
		      : 64;
	dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_WARNING,
		  "http: file-descriptor limit %llu: at most %u connections (not %u)",
		  (unsigned long long)rl.rlim_cur, max, DPMON_HTTP_MAX_CONNECTIONS);
	return max;
}

static int
open_listener(struct dpmon_http_guard *g, const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	int one = 1;

	g->listen_fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (g->listen_fd < 0)
		return -errno;
	setsockopt(g->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(g->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(g->listen_fd, sa, len) != 0 || listen(g->listen_fd, SOMAXCONN) != 0 ||
	    getsockname(g->listen_fd, (struct sockaddr *)&bound, &blen) != 0)
		return -errno;
	g->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						    : ((struct sockaddr_in *)&bound)->sin_port);
	return 0;
}

/* The epoll set with the listening socket and the wake-up eventfd. */
static int
open_loop(struct dpmon_http_guard *g)
{
	struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &g->listen_fd};
	struct epoll_event wev = {.events = EPOLLIN, .data.ptr = &g->wake_fd};

	g->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	g->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->epoll_fd < 0 || g->wake_fd < 0 ||
	    epoll_ctl(g->epoll_fd, EPOLL_CTL_ADD, g->listen_fd, &lev) != 0 ||
	    epoll_ctl(g->epoll_fd, EPOLL_CTL_ADD, g->wake_fd, &wev) != 0)
		return -errno;
	return 0;
}

struct dpmon_http_guard *
dpmon_http_guard_create(const struct sockaddr *sa, socklen_t len, bool tls)
{
	struct dpmon_http_guard *g = calloc(1, sizeof(*g));
	int err;

	if (g == NULL)
		return NULL;
	g->tls = tls;
	g->listen_fd = g->epoll_fd = g->wake_fd = g->mhd_fd = -1;
	g->max_conns = fit_fd_limit();
	err = http_conns_init(&g->conns, g->max_conns + CUT_SLACK);
	if (err == 0)
		err = open_listener(g, sa, len);
	if (err == 0)
		err = open_loop(g);
	if (err != 0) {
		dpmon_http_guard_destroy(g);
		errno = -err;
		return NULL;
	}
	return g;
}

uint16_t
dpmon_http_guard_port(const struct dpmon_http_guard *g)
{
	return g->port;
}

unsigned
dpmon_http_guard_mhd_limit(const struct dpmon_http_guard *g)
{
	return g->max_conns + CUT_SLACK;
}

void
dpmon_http_guard_destroy(struct dpmon_http_guard *g)
{
	if (g == NULL)
		return;
	dpmon_http_guard_stop(g);
	if (g->listen_fd >= 0)
		close(g->listen_fd);
	if (g->epoll_fd >= 0)
		close(g->epoll_fd);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	http_conns_free(&g->conns);
	free(g);
}
