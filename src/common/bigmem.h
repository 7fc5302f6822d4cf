/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-class arrays (megabytes at 100,000 classes: the config's classes and
 * matches, the plan, the class_conf read back) in mappings of their own,
 * advised for transparent huge pages. Why: a reload of 100,392 classes took
 * 35,000 page faults, a quarter to a third of its time on a paravirtualised
 * VM where each costs an exception (docs/log.md, 2026-12-06). Below
 * BIG_MIN bytes they are plain malloc blocks. Memory from big_* is freed
 * with big_free only; big_free(NULL) does nothing.
 */
#ifndef HTBCTL_BIGMEM_H
#define HTBCTL_BIGMEM_H

#include <stddef.h>

#define BIG_MIN ((size_t)1 << 20)

/* n * size bytes, zeroed; NULL on overflow or out of memory (n = 0 gives
 * a valid block). */
void *big_calloc(size_t n, size_t size);
/* p (from big_calloc or big_realloc, or NULL) grown or shrunk to n * size
 * bytes, what it held kept and any growth zeroed; NULL (p untouched) on
 * failure. */
void *big_realloc(void *p, size_t n, size_t size);
void big_free(void *p);

#endif
