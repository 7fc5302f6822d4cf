// SPDX-License-Identifier: GPL-2.0
/* Large arrays in THP-advised mappings (common/bigmem.h says why). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/bigmem.h"

#define HUGE_SZ ((size_t)2 << 20)

/* Before every block; 64 bytes keep the caller's data aligned for any
 * type. */
struct big_hdr {
	size_t size;		/* bytes the caller asked for */
	size_t maplen;		/* 0: a malloc block, else the mapping's length */
	char pad[48];
};

static struct big_hdr *hdr_of(void *p)
{
	return (struct big_hdr *)((char *)p - sizeof(struct big_hdr));
}

static bool total_of(size_t n, size_t size, size_t *total)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes) ||
	    __builtin_add_overflow(bytes, sizeof(struct big_hdr), total) ||
	    *total > SIZE_MAX - HUGE_SZ)
		return false;
	return true;
}

/* Whole huge pages: the kernel aligns a mapping to one only when its
 * length is a multiple (mm: THP alignment of anonymous mappings). */
static size_t map_len(size_t total)
{
	return (total + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
}

static struct big_hdr *map_new(size_t total)
{
	size_t len = map_len(total);
	struct big_hdr *h = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (h == MAP_FAILED)
		return NULL;
	madvise(h, len, MADV_HUGEPAGE);	/* advice: no THP is no error */
	h->maplen = len;
	return h;
}

void *big_calloc(size_t n, size_t size)
{
	struct big_hdr *h;
	size_t total;

	if (!total_of(n, size, &total))
		return NULL;
	if (total - sizeof(*h) < BIG_MIN) {
		h = calloc(1, total);
		if (!h)
			return NULL;
	} else if (!(h = map_new(total))) {
		return NULL;
	}
	h->size = total - sizeof(*h);
	return h + 1;
}

/* A mapping grown or shrunk in place or moved by the kernel (no copy); the
 * new tail of a mapping is zero, and THP advice moves with it. */
static struct big_hdr *map_resize(struct big_hdr *h, size_t total)
{
	size_t len = map_len(total);
	struct big_hdr *n = h->maplen == len ? h :
			    mremap(h, h->maplen, len, MREMAP_MAYMOVE);

	if (n == MAP_FAILED)
		return NULL;
	n->maplen = len;
	return n;
}

void *big_realloc(void *p, size_t n, size_t size)
{
	struct big_hdr *h;
	size_t total, old;
	void *q;

	if (!p)
		return big_calloc(n, size);
	h = hdr_of(p);
	old = h->size;
	if (!total_of(n, size, &total))
		return NULL;
	if (h->maplen && total - sizeof(*h) >= BIG_MIN) {
		h = map_resize(h, total);
		if (!h)
			return NULL;
		h->size = total - sizeof(*h);
		/* what a shrink keeps mapped past the end reads zero again */
		if (h->size < old)
			memset((char *)(h + 1) + h->size, 0,
			       (old < h->maplen - sizeof(*h) ? old : h->maplen - sizeof(*h)) - h->size);
		return h + 1;
	}
	/* across BIG_MIN, or small to small: a new block and a copy */
	q = big_calloc(n, size);
	if (!q)
		return NULL;
	memcpy(q, p, old < total - sizeof(*h) ? old : total - sizeof(*h));
	big_free(p);
	return q;
}

void big_free(void *p)
{
	struct big_hdr *h;

	if (!p)
		return;
	h = hdr_of(p);
	if (h->maplen)
		munmap(h, h->maplen);
	else
		free(h);
}
