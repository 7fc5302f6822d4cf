// SPDX-License-Identifier: GPL-2.0
/* The hash index (import/lq_map.h). */
#include <stdlib.h>
#include <sys/random.h>

#include "common/bigmem.h"
#include "import/lq_map.h"

/* SipHash-1-3 (Aumasson and Bernstein's keyed hash, written from its
 * description) under the map's random key: with the unkeyed FNV-1a of
 * 52b6d7f, crafted Circuit IDs that collide made the import quadratic
 * (50,000 ids: 8.7 s against 0.67 s). */
static __u64 rotl(__u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_round(__u64 v[4])
{
	v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
	v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
	v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
	v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
}

static void sip_word(__u64 v[4], __u64 m)
{
	v[3] ^= m;
	sip_round(v);
	v[0] ^= m;
}

__u32 lq_hash(const struct lq_map *m, const void *key, size_t len)
{
	const unsigned char *b = key;
	__u64 v[4] = { m->key[0] ^ 0x736f6d6570736575ull, m->key[1] ^ 0x646f72616e646f6dull,
		       m->key[0] ^ 0x6c7967656e657261ull, m->key[1] ^ 0x7465646279746573ull };
	__u64 last = (__u64)len << 56;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		__u64 w = 0;

		for (int k = 7; k >= 0; k--)
			w = w << 8 | b[i + k];
		sip_word(v, w);
	}
	for (int k = 0; i + k < len; k++)
		last |= (__u64)b[i + k] << (8 * k);
	sip_word(v, last);
	v[2] ^= 0xff;
	for (int r = 0; r < 3; r++)
		sip_round(v);
	return (__u32)(v[0] ^ v[1] ^ v[2] ^ v[3]);
}

int lq_map_seed(struct lq_map *m)
{
	return getrandom(m->key, sizeof(m->key), 0) == (ssize_t)sizeof(m->key) ? 0 : -1;
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
