// SPDX-License-Identifier: GPL-2.0
/* The flow hash the program hands fq (include/htb/flowtag.h): two classes
 * never share a value, a class keeps its packets' own high bits. */
#include <criterion/criterion.h>
#include "htb/flowtag.h"

Test(flowtag, bits_hold_every_slot_and_one_value_more)
{
	static const struct { __u32 cap, bits; } c[] = {
		{ 1, 1 }, { 2, 2 }, { 1023, 10 }, { 1024, 11 }, { 2048, 12 },
		{ 200000, 18 }, { 2u * 1048576, 22 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		__u32 b = htb_flowtag_bits(c[i].cap);

		cr_expect_eq(b, c[i].bits, "capacity %u: %u bits, want %u", c[i].cap, b, c[i].bits);
		/* the largest slot and the unshaped value both fit, apart */
		cr_expect_lt(c[i].cap - 1, htb_flowtag_mask(b));
	}
	cr_expect_leq(htb_flowtag_bits(0xffffffffu), HTB_FLOWTAG_BITS_MAX);
}

/* The same packet hash in every slot gives a value per slot; the slot is
 * read back from the low bits and the packet's high bits survive. */
Test(flowtag, classes_never_share_a_value)
{
	const __u32 cap = 1024, bits = htb_flowtag_bits(cap), mask = htb_flowtag_mask(bits);
	static const __u32 hashes[] = { 0, 1, 0x7ff, 0x800, 0xdeadbeef, 0xffffffff };

	for (size_t h = 0; h < sizeof(hashes) / sizeof(hashes[0]); h++) {
		__u32 unshaped = htb_flowtag_unshaped(hashes[h], bits);

		cr_expect_eq(unshaped & mask, mask);
		for (__u32 s = 0; s < cap; s++) {
			__u32 t = htb_flowtag(hashes[h], s, bits);

			cr_assert_eq(t & mask, s, "hash %#x slot %u -> %#x", hashes[h], s, t);
			cr_assert_eq(t & ~mask, hashes[h] & ~mask);
			cr_assert_neq(t, unshaped);
		}
	}
}

/* Flows of one class stay apart by their own high bits: two hashes that
 * differ there differ after the tag, whatever the slot. */
Test(flowtag, flows_of_a_class_keep_their_high_bits)
{
	const __u32 bits = htb_flowtag_bits(1024);

	cr_expect_eq(32 - bits, 21, "flow bits at capacity 1024");
	for (__u32 i = 1; i < (1u << 12); i++) {
		__u32 a = i << bits, b = (i + 1) << bits;

		cr_assert_neq(htb_flowtag(a | 5, 7, bits), htb_flowtag(b | 9, 7, bits));
	}
}
