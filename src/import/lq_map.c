// SPDX-License-Identifier: GPL-2.0
/* The hash index (import/lq_map.h). */
#include <stdlib.h>

#include "common/bigmem.h"
#include "import/lq_map.h"

__u32 lq_hash(const void *key, size_t len)
{
	const unsigned char *b = key;
	__u32 h = 2166136261u;		/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

long lq_map_find(const struct lq_map *m, __u32 h, lq_same_fn same, const void *arg,
		 const void *key)
{
	if (!m->cap)
		return -1;
	for (__u32 i = h & (m->cap - 1); m->slot[i].idx1; i = (i + 1) & (m->cap - 1))
		if (m->slot[i].hash == h && same(arg, m->slot[i].idx1 - 1, key))
			return m->slot[i].idx1 - 1;
	return -1;
}

/* Twice the size, every entry placed again by its kept hash. In pages of
 * 2 MB where it is that large (common/bigmem.h): the index of 219,000
 * addresses is 4 MB, touched at random. */
static int grow(struct lq_map *m)
{
	__u32 cap = m->cap ? m->cap * 2 : 1024;
	struct lq_slot *s = big_calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (__u32 i = 0; i < m->cap; i++) {
		__u32 j;

		if (!m->slot[i].idx1)
			continue;
		for (j = m->slot[i].hash & (cap - 1); s[j].idx1; j = (j + 1) & (cap - 1))
			;
		s[j] = m->slot[i];
	}
	big_free(m->slot);
	m->slot = s;
	m->cap = cap;
	return 0;
}

int lq_map_add(struct lq_map *m, __u32 h, __u32 idx)
{
	__u32 i;

	/* at most half full: probes stay short */
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -1;
	for (i = h & (m->cap - 1); m->slot[i].idx1; i = (i + 1) & (m->cap - 1))
		;
	m->slot[i].idx1 = idx + 1;
	m->slot[i].hash = h;
	m->n++;
	return 0;
}

void lq_map_free(struct lq_map *m)
{
	big_free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
