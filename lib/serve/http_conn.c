/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_conn.c — the HTTP guard's connection records, their lists and their
 * counts toward the limits (http_conn.h). A leaf of http_guard.c.
 */
#include "http_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
http_conns_init(struct http_conns *cs, unsigned n)
{
	*cs = (struct http_conns){.pool_n = n};
	cs->pool = calloc(n, sizeof(*cs->pool));
	if (cs->pool == NULL || http_addr_table_init(&cs->addrs, n) != 0)
		return -ENOMEM;
	for (unsigned i = n; i-- > 0;) {
		cs->pool[i] = (struct conn){.fd = -1, .list = LIST_NONE, .next = cs->free};
		cs->free = &cs->pool[i];
	}
	return 0;
}

void
http_conns_free(struct http_conns *cs)
{
	for (unsigned i = 0; cs->pool != NULL && i < cs->pool_n; i++)
		if (cs->pool[i].where == CONN_PEEK || cs->pool[i].where == CONN_LINGER)
			close(cs->pool[i].fd);
	free(cs->pool);
	cs->pool = NULL;
	http_addr_table_free(&cs->addrs);
}

void
http_conn_count(struct http_conns *g, struct conn *c)
{
	g->n_conns++;
	http_addr_ref(&g->addrs, c->key);
}

void
http_conn_unlist(struct http_conns *g, struct conn *c)
{
	struct conn_dl *l;

	if (c->list == LIST_NONE)
		return;
	l = &g->lists[c->list];
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->list = LIST_NONE;
}

void
http_conn_push(struct http_conns *g, struct conn *c, enum conn_list which, uint64_t now)
{
	struct conn_dl *l = &g->lists[which];

	http_conn_unlist(g, c);
	c->since_ms = now;
	c->list = which;
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail != NULL)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

void
http_conn_uncount(struct http_conns *g, struct conn *c)
{
	if (!c->counted)
		return;
	c->counted = false;
	g->n_conns--;
	http_addr_unref(&g->addrs, c->key);
}

void
http_conn_free(struct http_conns *g, struct conn *c)
{
	http_conn_uncount(g, c);
	http_conn_unlist(g, c);
	c->where = CONN_FREE;
	c->fd = -1;
	c->next = g->free;
	g->free = c;
}

void
http_conn_close(struct http_conns *g, struct conn *c)
{
	close(c->fd);
	http_conn_free(g, c);
}

void
http_conn_cut(struct http_conns *g, struct conn *c)
{
	if (c->where != CONN_MHD) {
		http_conn_close(g, c);
		return;
	}
	shutdown(c->fd, SHUT_RDWR); /* we run in its thread: the fd is still its own */
	http_conn_uncount(g, c);
	http_conn_unlist(g, c);
}

struct conn *
http_conn_evictable(struct http_conns *g, const uint8_t *key)
{
	static const enum conn_list order[] = {LIST_FRESH, LIST_IDLE};

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (struct conn *c = g->lists[order[k]].head; c != NULL; c = c->next)
			if (key == NULL || memcmp(c->key, key, 16) == 0)
				return c;
	return NULL;
}

struct conn *
http_conn_alloc(struct http_conns *g)
{
	struct conn *c = g->free;

	if (c == NULL && g->lists[LIST_LINGER].head != NULL) {
		http_conn_close(g, g->lists[LIST_LINGER].head);
		c = g->free;
	}
	if (c != NULL)
		g->free = c->next;
	return c;
}
