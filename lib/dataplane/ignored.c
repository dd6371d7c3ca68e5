/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ignored.c — the side table of packets from ignored sources (ignored.h):
 * open addressing by the host key's hash, linear probing, no removal.
 */
#include "ignored.h"

#include <errno.h>

int
dpmon_ignored_add(struct dpmon_ignored_table *t, const struct dpmon_addr *key, uint32_t sig,
		  uint32_t subnet, unsigned proto, unsigned flag_mask, uint32_t len)
{
	for (unsigned k = 0; k < DPMON_IGNORED_PROBE; k++) {
		uint32_t s = (sig + k) & (DPMON_IGNORED_SLOTS - 1);
		struct dpmon_ignored_slot *e = &t->slot[s];

		if (!t->taken[s]) {
			e->key = *key;
			e->subnet = subnet;
			t->taken[s] = 1;
			t->used[t->n_used] = s;
			/* Publishes the key and subnet with the slot. */
			__atomic_store_n(&t->n_used, t->n_used + 1, __ATOMIC_RELEASE);
		} else if (!dpmon_addr_eq(&e->key, key)) {
			continue;
		}
		dpmon_ctr_add(&e->in.proto[proto], len);
		for (unsigned f = 0; f < DPMON_FLAG_MAX; f++)
			if (flag_mask & (1u << f))
				dpmon_ctr_add(&e->flags.flag[f], len);
		return 0;
	}
	return -ENOSPC;
}
