/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_cache.c — the HTTP server's response caches (http_cache.h): the
 * bodies of the parameter-less endpoints and of the last /api/v1/hosts
 * queries, per snapshot, as refcounted rendered text.
 *
 * Each body is rendered once per snapshot by http.c and kept in a slot
 * keyed by the snapshot's seq (and, for a query, by its parameters as the
 * client gave them); every later request for the same snapshot hands
 * libmicrohttpd that body without copying it, the response holding one
 * reference. The slot drops its reference when a newer snapshot replaces
 * it, and the last response sent frees the body. The lock is held for a
 * pointer swap, never while rendering. A query put takes the query's own
 * slot, else an empty or older one, else the next one in turn.
 */
#include "http_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cached_paths[CACHE_MAX] = {
	[CACHE_SUMMARY] = "/api/v1/summary", /* small */
	[CACHE_SUBNETS] = "/api/v1/subnets", /* O(subnets) */
	[CACHE_HEALTH] = "/health",          /* small */
	[CACHE_METRICS] = "/metrics",        /* O(subnets + top hosts) */
	[CACHE_HISTORY] = "/api/v1/history", /* O(subnets × points): megabytes */
};

struct body *
http_body_new(char *text, size_t len)
{
	struct body *b = malloc(sizeof(*b));

	if (b == NULL)
		return NULL;
	b->refs = 1; /* not shared yet */
	b->len = len;
	b->text = text;
	return b;
}

void
http_body_ref(struct body *b)
{
	__atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
}

void
http_body_put(struct body *b)
{
	if (b != NULL && __atomic_fetch_sub(&b->refs, 1, __ATOMIC_ACQ_REL) == 1) {
		free(b->text);
		free(b);
	}
}

void
http_body_free_cb(void *cls)
{
	http_body_put(cls);
}

int
http_cache_slot_of(const char *method, const char *url, const struct dpmon_api_query *q)
{
	if (q->n != 0 || q->overflow || !http_is_read_method(method))
		return -1;
	for (int i = 0; i < CACHE_MAX; i++)
		if (strcmp(url, cached_paths[i]) == 0)
			return i;
	return -1;
}

size_t
http_cache_query_key(const char *method, const char *url, const struct dpmon_api_query *q,
		     char key[QCACHE_KEY_MAX])
{
	size_t len = 0;

	if (q->overflow || !http_is_read_method(method) || strcmp(url, "/api/v1/hosts") != 0)
		return 0;
	key[len++] = 'h'; /* never empty, also without parameters */
	for (unsigned i = 0; i < q->n; i++) {
		const char *v = q->values[i];
		int w = v != NULL ? snprintf(key + len, QCACHE_KEY_MAX - len, "%zu:%s=%zu:%s;",
					     strlen(q->keys[i]), q->keys[i], strlen(v), v)
				  : snprintf(key + len, QCACHE_KEY_MAX - len, "%zu:%s=-;",
					     strlen(q->keys[i]), q->keys[i]);

		if (w < 0 || (size_t)w >= QCACHE_KEY_MAX - len)
			return 0;
		len += (size_t)w;
	}
	return len;
}

/* Slot @p c's body, referenced, when it was rendered from snapshot @p seq. Lock held. */
static struct body *
slot_get(struct cache_slot *c, uint64_t seq)
{
	struct body *b = NULL;

	if (c->body != NULL && c->seq == seq) {
		b = c->body;
		http_body_ref(b);
	}
	return b;
}

/* Put @p b (referenced here) in slot @p c for snapshot @p seq, unless it
 * holds a newer one. @return the body to drop (outside the lock). Lock held. */
static struct body *
slot_put(struct cache_slot *c, uint64_t seq, struct body *b)
{
	struct body *old = NULL;

	if (c->body == NULL || seq > c->seq) {
		old = c->body;
		http_body_ref(b);
		*c = (struct cache_slot){.seq = seq, .body = b};
	}
	return old;
}

/* The slot of query @p key (@p len bytes), or NULL. Lock held. */
static struct query_slot *
query_slot_of(struct http_cache *h, const char *key, size_t len)
{
	for (unsigned i = 0; i < QCACHE_SLOTS; i++) {
		struct query_slot *s = &h->query[i];

		if (s->c.body != NULL && s->key_len == len && memcmp(s->key, key, len) == 0)
			return s;
	}
	return NULL;
}

struct body *
http_cache_get(struct http_cache *h, int i, const char *key, size_t key_len, uint64_t seq)
{
	struct query_slot *s;
	struct body *b = NULL;

	pthread_mutex_lock(&h->lock);
	if (i >= 0)
		b = slot_get(&h->slot[i], seq);
	else if ((s = query_slot_of(h, key, key_len)) != NULL)
		b = slot_get(&s->c, seq);
	pthread_mutex_unlock(&h->lock);
	return b;
}

void
http_cache_put(struct http_cache *h, int i, const char *key, size_t key_len, uint64_t seq,
	       struct body *b)
{
	struct query_slot *s = NULL;
	struct body *old;

	pthread_mutex_lock(&h->lock);
	if (i >= 0) {
		old = slot_put(&h->slot[i], seq, b);
	} else {
		s = query_slot_of(h, key, key_len);
		for (unsigned j = 0; s == NULL && j < QCACHE_SLOTS; j++)
			if (h->query[j].c.body == NULL || h->query[j].c.seq < seq)
				s = &h->query[j];
		if (s == NULL) {
			s = &h->query[h->query_next];
			h->query_next = (h->query_next + 1) % QCACHE_SLOTS;
			s->c.seq = 0; /* replaced even though of the same snapshot */
		}
		old = slot_put(&s->c, seq, b);
		if (s->c.body == b) {
			memcpy(s->key, key, key_len);
			s->key_len = key_len;
		}
	}
	pthread_mutex_unlock(&h->lock);
	http_body_put(old);
}

unsigned
http_cache_queries_of(struct http_cache *h, uint64_t seq, char keys[QCACHE_SLOTS][QCACHE_KEY_MAX],
		      size_t lens[QCACHE_SLOTS])
{
	unsigned n = 0;

	pthread_mutex_lock(&h->lock);
	for (unsigned i = 0; i < QCACHE_SLOTS; i++) {
		const struct query_slot *q = &h->query[i];

		if (q->c.body != NULL && q->c.seq == seq && q->c.body->len <= QCACHE_PREWARM_MAX) {
			memcpy(keys[n], q->key, q->key_len);
			lens[n++] = q->key_len;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return n;
}

/*
 * The text "<len>:<bytes>" at key[*i] (the key is @p len bytes, and
 * @p after more must follow the text) copied into buf + *o as a C string;
 * *i and *o move past it. @return the copy, or NULL when malformed.
 */
static char *
take_text(const char *key, size_t len, size_t after, size_t *i, char *buf, size_t *o)
{
	char *end, *t;
	size_t n = strtoul(key + *i, &end, 10);

	*i = (size_t)(end - key);
	if (*i >= len || key[*i] != ':' || *i + 1 + n + after > len || *o + n + 1 > QCACHE_KEY_MAX)
		return NULL;
	t = memcpy(buf + *o, key + *i + 1, n);
	t[n] = '\0';
	*o += n + 1;
	*i += 1 + n;
	return t;
}

bool
http_cache_query_of_key(const char *key, size_t len, char *buf, struct dpmon_api_query *q)
{
	size_t i = 1, o = 0; /* key[0] is 'h' */

	*q = (struct dpmon_api_query){.n = 0};
	while (i < len) {
		char *k = take_text(key, len, 1, &i, buf, &o), *v = NULL;

		if (k == NULL || key[i++] != '=')
			return false;
		if (key[i] == '-')
			i++;
		else if ((v = take_text(key, len, 0, &i, buf, &o)) == NULL)
			return false;
		if (i >= len || key[i++] != ';' || dpmon_api_query_add(q, k, v) != 0)
			return false;
	}
	return true;
}

void
http_cache_init(struct http_cache *c)
{
	*c = (struct http_cache){.query_next = 0};
	pthread_mutex_init(&c->lock, NULL);
}

void
http_cache_destroy(struct http_cache *c)
{
	for (int i = 0; i < CACHE_MAX; i++)
		http_body_put(c->slot[i].body);
	for (int i = 0; i < QCACHE_SLOTS; i++)
		http_body_put(c->query[i].c.body);
	pthread_mutex_destroy(&c->lock);
}
