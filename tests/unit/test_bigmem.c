// SPDX-License-Identifier: GPL-2.0
/* common/bigmem.c: zeroed blocks below and above BIG_MIN, growth that
 * keeps contents and zeroes the rest, in place and across BIG_MIN. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/bigmem.h"

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 1);
}

static bool filled(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 7 + 1))
			return false;
	return true;
}

/* A block of n bytes, filled, grown (or shrunk) to m: what it held is
 * still there and the rest reads zero. */
static unsigned char *resized(unsigned char *p, size_t n, size_t m)
{
	p = big_realloc(p, m, 1);
	cr_assert(p);
	cr_expect(filled(p, n < m ? n : m));
	if (m > n)
		cr_expect(all_zero(p + n, m - n));
	return p;
}

static unsigned char *filled_block(size_t n)
{
	unsigned char *p = big_calloc(n, 1);

	cr_assert(p);
	fill(p, n);
	return p;
}

Test(bigmem, small_and_large_blocks_are_zeroed)
{
	unsigned char *s = big_calloc(100, 3), *l = big_calloc(BIG_MIN / 8 + 1, 8);

	cr_assert(s && l);
	cr_expect(all_zero(s, 300));
	cr_expect(all_zero(l, BIG_MIN + 8));
	big_free(s);
	big_free(l);
}

Test(bigmem, a_mapping_grows_keeping_contents_and_zeroing_the_rest)
{
	big_free(resized(filled_block(2 * BIG_MIN + 123), 2 * BIG_MIN + 123, 9 * BIG_MIN));
}

Test(bigmem, growth_across_big_min_keeps_contents)
{
	unsigned char *p = resized(filled_block(1000), 1000, 3 * BIG_MIN);

	big_free(resized(p, 1000, 500));	/* and back below it */
}

/* A shrink that keeps the mapping, then a growth: what was cut off reads
 * zero again. */
Test(bigmem, shrink_then_grow_reads_zero)
{
	size_t a = 3 * BIG_MIN, c = 2 * BIG_MIN + 64;
	unsigned char *p = resized(filled_block(a), a, c);

	big_free(resized(p, c, a));
}

Test(bigmem, overflow_and_null)
{
	unsigned char *p;

	cr_expect_null(big_calloc(SIZE_MAX / 2, 4));
	cr_expect_null(big_realloc(NULL, SIZE_MAX, 2));
	big_free(NULL);
	p = big_realloc(NULL, 10, 10);	/* NULL grows like a new block */
	cr_assert(p);
	cr_expect(all_zero(p, 100));
	cr_expect_null(big_realloc(p, SIZE_MAX / 2, 3));	/* p left as it was */
	big_free(p);
}
