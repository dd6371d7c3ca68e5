/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_render.c — heavy answers rendered by the pool while their
 * connection is suspended, and large answers counted until sent
 * (http_render.h). A leaf of http.c: the pool (http_pool.c), the renders
 * in progress (http_inflight.c) and the hold (http_hold.c) are its leaves.
 */
#include "http_render.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include "http_addr.h"
#include "http_guard.h"

int
http_render_init(struct http_render *rd, uint32_t n_addrs, http_render_fn render, void *ctx)
{
	int err;

	rd->render = render;
	rd->ctx = ctx;
	if ((err = http_hold_init(&rd->hold, n_addrs)) != 0 ||
	    (err = http_inflight_init(&rd->inflight)) != 0 ||
	    (err = http_pool_start(&rd->pool)) != 0)
		return err;
	return 0;
}

void
http_render_stop(struct http_render *rd)
{
	http_pool_stop(&rd->pool);
}

void
http_render_free(struct http_render *rd)
{
	http_hold_free(&rd->hold);
	http_inflight_destroy(&rd->inflight);
}

/* A large answer being sent (http_hold.h): its body and where it goes. */
struct held {
	struct http_render *rd;
	struct body *shared; /* one reference, or NULL */
	char *owned;         /* malloc'd body, or NULL */
	size_t len;
	uint8_t key[16]; /* the client's address */
};

/* libmicrohttpd's free callback of a large answer's response: the answer
 * no longer holds its bytes. Thread-safety: the loop thread. */
static void
held_free(void *cls)
{
	struct held *a = cls;

	http_hold_release(&a->rd->hold, a->key, a->len);
	http_body_put(a->shared);
	free(a->owned);
	free(a);
}

/* The address key (http_addr.h) of the client of @p c into @p key. */
static void
client_key(struct MHD_Connection *c, uint8_t key[16])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct sockaddr_storage ss = {.ss_family = AF_UNSPEC};

	if (ci != NULL && ci->client_addr != NULL)
		memcpy(&ss, ci->client_addr,
		       ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							      : sizeof(struct sockaddr_in));
	http_addr_key(&ss, key);
}

/* 503: the answers client @p c has not read yet hold too much memory. */
static void
reply_unread(struct reply *r)
{
	char msg[160];

	snprintf(msg, sizeof(msg),
		 "too many unread answers: at most %u MiB per client address and %u MiB in all "
		 "are held; read the answers already requested first",
		 DPMON_HTTP_HOLD_PER_ADDR >> 20, DPMON_HTTP_HOLD_TOTAL >> 20);
	http_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
}

struct MHD_Response *
http_render_held_response(struct http_render *rd, struct MHD_Connection *c, struct reply *r)
{
	struct held *a = malloc(sizeof(*a));
	struct MHD_Response *rsp;

	if (a == NULL)
		return NULL;
	*a = (struct held){.rd = rd, .len = r->len};
	client_key(c, a->key);
	if (http_hold_take(&rd->hold, a->key, r->len) != 0) {
		free(a);
		http_reply_drop_body(r);
		reply_unread(r);
		return NULL;
	}
	rsp = MHD_create_response_from_buffer_with_free_callback_cls(
		r->len, r->shared != NULL ? r->shared->text : r->body, held_free, a);
	if (rsp == NULL) {
		http_hold_release(&rd->hold, a->key, r->len);
		free(a);
		return NULL;
	}
	a->shared = r->shared; /* the response owns the body from here */
	a->owned = r->body_owned ? r->body : NULL;
	return rsp;
}

/*
 * A pool thread's work: render the job's answer, then have the loop
 * thread take the connection up again (the owner sends the answer). A
 * cacheable answer another thread renders now is waited for instead, and
 * the jobs that waited for this one get the same body (one reference
 * each); an answer that is not a shared body (an error) each renders.
 */
static void
run_job(struct http_job *pj)
{
	struct http_render_job *j = (struct http_render_job *)pj;
	struct http_render *rd = j->rd;
	bool claimed = false;
	struct http_job *w;

	if ((j->slot >= 0 || j->key_len > 0) &&
	    http_inflight_join(&rd->inflight, j->slot, j->key, j->key_len, pj, &claimed))
		return; /* the render in progress answers it */
	rd->render(rd->ctx, j);
	w = claimed ? http_inflight_done(&rd->inflight, j->slot, j->key, j->key_len) : NULL;
	while (w != NULL) {
		struct http_render_job *o = (struct http_render_job *)w;

		w = w->next;
		if (j->r.shared != NULL) {
			o->r = j->r;
			http_body_ref(j->r.shared);
		} else {
			rd->render(rd->ctx, o);
		}
		MHD_resume_connection(o->c);
	}
	MHD_resume_connection(j->c); /* wakes the loop: libmicrohttpd's epoll set has its ITC */
}

/* The pool stopped before it ran job @p j: a 503, and the loop thread
 * sends it. Thread-safety: the thread that stops the server. */
static void
cancel_job(struct http_job *pj)
{
	struct http_render_job *j = (struct http_render_job *)pj;

	http_reply_error(&j->r, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is stopping");
	MHD_resume_connection(j->c);
}

bool
http_render_defer(struct http_render *rd, struct MHD_Connection *c, const char *url,
		  const char *method, const struct dpmon_api_query *q, int slot, const char *key,
		  size_t key_len, void **con_cls, struct reply *r)
{
	uint8_t client[16];
	struct http_render_job *j;
	int err;

	client_key(c, client);
	if (http_hold_full(&rd->hold, client)) {
		http_hold_refuse(&rd->hold);
		reply_unread(r);
		return false;
	}
	j = malloc(sizeof(*j));
	if (j == NULL) {
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return false;
	}
	*j = (struct http_render_job){.pj = {.run = run_job, .cancel = cancel_job},
				      .rd = rd,
				      .c = c,
				      .url = url,
				      .method = method,
				      .q = *q,
				      .slot = slot,
				      .key_len = key_len};
	memcpy(j->key, key, key_len);
	*con_cls = j;
	dpmon_http_guard_answering(c);
	MHD_suspend_connection(c);
	if ((err = http_pool_submit(&rd->pool, &j->pj)) != 0) {
		if (err == -EBUSY)
			__atomic_store_n(&rd->busy, rd->busy + 1, __ATOMIC_RELAXED);
		http_reply_error(&j->r, MHD_HTTP_SERVICE_UNAVAILABLE,
				 err == -EBUSY ? "too many heavy requests at once; retry later"
					       : "the server is stopping");
		MHD_resume_connection(c);
	}
	return true;
}

void
http_render_take(struct http_render_job *j, struct reply *r)
{
	*r = j->r;
	j->r = (struct reply){.body_owned = false};
}
