/*
 * counters.c — allocation of the per-core tables and host insertion (see
 * counters.h for the merge protocol they implement).
 *
 * The host table is an rte_hash with the extendable bucket table, so an
 * insert fails only when the table really holds @c capacity hosts; its
 * value is the dense entry index, which lets the main lcore walk
 * [0, n_hosts) without touching the hash.
 */
#include "counters.h"

#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

struct dpmon_core *
dpmon_core_create(const char *tag, uint32_t n_subnets, uint32_t capacity, int socket_id)
{
	char name[RTE_HASH_NAMESIZE];
	struct dpmon_core *c;

	c = rte_zmalloc_socket("dpmon_core", sizeof(*c), RTE_CACHE_LINE_SIZE, socket_id);
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->capacity = capacity;
	c->n_subnets = n_subnets;
	c->subnets = rte_zmalloc_socket("dpmon_subnets", sizeof(*c->subnets) * (n_subnets + 1),
					RTE_CACHE_LINE_SIZE, socket_id);
	c->hosts = rte_zmalloc_socket("dpmon_hosts", sizeof(*c->hosts) * capacity,
				      RTE_CACHE_LINE_SIZE, socket_id);
	c->host_addr = rte_zmalloc_socket("dpmon_host_addr", sizeof(*c->host_addr) * capacity,
					  RTE_CACHE_LINE_SIZE, socket_id);
	c->host_subnet = rte_zmalloc_socket("dpmon_host_subnet",
					    sizeof(*c->host_subnet) * capacity,
					    RTE_CACHE_LINE_SIZE, socket_id);
	snprintf(name, sizeof(name), "dpmon_h_%s", tag);
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = capacity,
		.key_len = sizeof(struct dpmon_addr),
		.hash_func = rte_hash_crc,
		.socket_id = socket_id,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	rte_errno = ENOMEM; /* rte_zmalloc does not set it */
	if (c->subnets && c->hosts && c->host_addr && c->host_subnet)
		c->host_hash = rte_hash_create(&hp);
	if (c->host_hash == NULL) {
		int err = rte_errno;
		dpmon_core_free(c);
		rte_errno = err;
		return NULL;
	}
	return c;
}

void
dpmon_core_free(struct dpmon_core *c)
{
	if (c == NULL)
		return;
	rte_hash_free(c->host_hash);
	rte_free(c->subnets);
	rte_free(c->hosts);
	rte_free(c->host_addr);
	rte_free(c->host_subnet);
	rte_free(c);
}

int32_t
dpmon_core_host_insert(struct dpmon_core *c, const struct dpmon_addr *a, uint32_t subnet)
{
	void *data;
	uint32_t idx = c->n_hosts;

	if (rte_hash_lookup_data(c->host_hash, a, &data) >= 0)
		return (int32_t)(uintptr_t)data;
	if (idx >= c->capacity)
		return -ENOSPC;
	if (rte_hash_add_key_data(c->host_hash, a, (void *)(uintptr_t)idx) != 0)
		return -ENOSPC;
	c->host_addr[idx] = *a;
	c->host_subnet[idx] = subnet;
	/* Counters of a new entry are already zero (rte_zmalloc). */
	__atomic_store_n(&c->n_hosts, idx + 1, __ATOMIC_RELEASE);
	return (int32_t)idx;
}
