/* SPDX-License-Identifier: GPL-2.0 */
/* A hash index for import libreqos: open addressing from a key to an
 * index of the caller's array, which holds the keys (the map compares
 * through the caller's function). Linear in the number of entries at any
 * size: 100,000 circuits are not 10^10 string compares. */
#ifndef HTBCTL_IMPORT_LQ_MAP_H
#define HTBCTL_IMPORT_LQ_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct lq_slot {
	__u32 idx1;		/* index + 1; 0: empty */
	__u32 hash;
};

struct lq_map {
	struct lq_slot *slot;
	__u32 cap, n;
	__u64 key[2];		/* lq_hash's; random from lq_map_seed */
};

/* Whether entry idx of arg's array has key. */
typedef bool (*lq_same_fn)(const void *arg, __u32 idx, const void *key);

/* A hash of key keyed by m's random key (lq_map_seed, before the first
 * lq_hash; unseeded, the key is 0): a file's keys cannot be crafted to
 * collide. */
__u32 lq_hash(const struct lq_map *m, const void *key, size_t len);
int lq_map_seed(struct lq_map *m);
/* The index under key (hash h), or -1. */
long lq_map_find(const struct lq_map *m, __u32 h, lq_same_fn same, const void *arg,
		 const void *key);
/* Adds idx under hash h (the caller found no equal key). 0, or -1 out of memory. */
int lq_map_add(struct lq_map *m, __u32 h, __u32 idx);
void lq_map_free(struct lq_map *m);

#endif
