/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rate math shared by the BPF program and userspace: length to time (l2t)
 * with a precomputed reciprocal, as the kernel's psched_ratecfg does it.
 *
 * Precompute (psched_ratecfg_precompute, refined form): shift = 0,
 * factor = 1e9; repeat mult = factor / rate until mult has bit 31 set or
 * factor has bit 63 set, doubling factor and adding 1 to shift each round.
 * Then l2t(len) = (adj(len) * mult) >> shift, where adj adds the overhead,
 * raises the result to mpu and, for ATM, rounds up to whole 48-byte cells
 * of 53 bytes each.
 *
 * Accuracy: mult = floor(1e9 * 2^shift / rate) undershoots by less than
 * one unit, so len * mult undershoots the exact len * 2^shift * 1e9 / rate
 * by less than len (relative error below 2^-31 whenever mult reached bit
 * 31). Above 8e9 B/s (64 Gbit/s) factor reaches bit 63 first (shift 34)
 * and mult stays below 2^31, but then len * 2^-34 ns is below 2^-14 ns
 * even for 256 KiB.
 *
 * Rounding: the kernel truncates the final shift (error in [0, 1) ns on
 * top of mult's). htb_l2t_ns() rounds to nearest instead (error within
 * +-0.5 ns on top), which keeps every (rate, len) within max(1 ns, 2^-30
 * of the exact value); the kernel's truncation misses that bound for
 * about 0.8% of the pairs, around 0.5-2 s per packet at very low rates
 * (measured by tests/unit/test_ratemath.c). mult and shift themselves are
 * exactly the kernel's.
 *
 * Carry: the last ns matters at high rates: at 100 Gbit/s a 64-byte
 * packet takes 5.12 ns and a per-packet l2t charges 5 (2.3% too fast); at
 * 800 Gbit/s it charges 1 for 0.64. So the scheduler uses htb_l2t_carry():
 * the bits the shift drops are kept per bucket and added to the next
 * packet's product, so a train of N packets is charged exactly
 * floor((N * adj(len) * mult + carry0) >> shift): within 1 ns plus mult's
 * 2^-31 of the exact total, whatever the packet size. This is where
 * htbctl knowingly differs from the kernel, which loses up to 1 ns per
 * packet.
 *
 * Everything here is static inline and freestanding: no libc, no helpers,
 * so the same code runs in the BPF program and in the userspace tests.
 */
#ifndef HTB_RATE_H
#define HTB_RATE_H

#include "htb/types.h"

#ifndef HTB_INLINE
#define HTB_INLINE static inline __attribute__((always_inline))
#endif

/*
 * Fill r for rate_Bps bytes per second. rate_Bps == 0 leaves mult = 0:
 * every length then costs 0 ns (callers treat rate 0 as "no bucket").
 */
HTB_INLINE void htb_ratecfg_precompute(struct htb_ratecfg *r, __u64 rate_Bps,
				       __s32 overhead, __u16 mpu, __u8 linklayer)
{
	__u64 factor = HTB_NSEC_PER_SEC;
	__u64 mult = 0;
	__u8 shift = 0;
	int i;

	r->rate_Bps = rate_Bps;
	r->overhead = overhead;
	r->mpu = mpu;
	r->linklayer = linklayer;
	r->pad = 0;
	if (rate_Bps > 0) {
		/* at most 64 rounds: factor reaches bit 63 by then */
		for (i = 0; i < 64; i++) {
			mult = factor / rate_Bps;
			if ((mult & (1ull << 31)) || (factor & (1ull << 63)))
				break;
			factor <<= 1;
			shift++;
		}
	}
	r->mult = (__u32)mult;
	r->shift = shift;
}

/* The length the rate is applied to: overhead, mpu, ATM cells. */
HTB_INLINE __u64 htb_adj_len(const struct htb_ratecfg *r, __u32 len)
{
	__s64 l = (__s64)len + r->overhead;
	__u64 u;

	if (l < (__s64)r->mpu)
		l = r->mpu;
	u = l > 0 ? (__u64)l : 0;	/* unsigned: BPF has no signed divide */
	if (r->linklayer == HTB_LINKLAYER_ATM)
		u = ((u + 47) / 48) * 53;
	return u;
}

/* psched_l2t_ns: ns to send len bytes at r, rounded to nearest. */
HTB_INLINE __u64 htb_l2t_ns(const struct htb_ratecfg *r, __u32 len)
{
	__u64 half = (1ull << r->shift) >> 1;

	return (htb_adj_len(r, len) * r->mult + half) >> r->shift;
}

/* adj(len) * mult: the cost of len in units of 2^-shift ns. */
HTB_INLINE __u64 htb_l2t_prod(const struct htb_ratecfg *r, __u32 len)
{
	return htb_adj_len(r, len) * r->mult;
}

/*
 * A cost in units of 2^-shift ns (htb_l2t_prod) to whole ns, with the
 * fraction carried over: *carry holds the bits below 1 ns left over from
 * earlier packets of the same bucket; it is always below 2^shift. The
 * split is all that has to happen under a bucket's lock.
 */
HTB_INLINE __u64 htb_carry_ns(__u64 prod, __u8 shift, __u64 *carry)
{
	__u64 mask = (1ull << shift) - 1;
	__u64 x = prod + (*carry & mask);

	*carry = x & mask;
	return x >> shift;
}

/* l2t with the truncated fraction carried over (see htb_carry_ns). */
HTB_INLINE __u64 htb_l2t_carry(const struct htb_ratecfg *r, __u32 len,
			       __u64 *carry)
{
	return htb_carry_ns(htb_l2t_prod(r, len), r->shift, carry);
}

#endif /* HTB_RATE_H */
