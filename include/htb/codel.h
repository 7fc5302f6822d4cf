/* SPDX-License-Identifier: GPL-2.0 */
/* CoDel on a leaf's scheduled delay (docs/design.md, "AQM"). */
#ifndef HTB_CODEL_H
#define HTB_CODEL_H

#include "htb/env.h"

/* ---- AQM: CoDel on the scheduled delay (docs/design.md, "AQM") ---- */

/* 2^32 / sqrt(n), rounded (n = 1: just below 1.0); index 0 unused. */
static const __u32 htb_rsqrt_q32[16] = {
	0x00000000, 0xffffffff, 0xb504f334, 0x93cd3a2d, 0x80000000, 0x727c9717,
	0x6882f5c0, 0x60c2479b, 0x5a82799a, 0x55555555, 0x50f44d89, 0x4d2fd8f4,
	0x49e69d16, 0x47006a81, 0x446b3b96, 0x4219528b,
};

/* 1/sqrt(count) in Q0.32: the table, else one Newton step from y, the
 * value of a count at most this one, y' = y (3 - count y^2) / 2. */
HTB_INLINE __u32 htb_codel_rsqrt(__u32 count, __u32 y)
{
	__u64 y2, cy2, t;

	if (count < 16) {
		/* The mask, behind a barrier the compiler cannot see
		 * through, bounds the index for 6.1's verifier: clang
		 * indexes with count + 1 computed before the caller's
		 * increment was checked, and 6.1 does not carry the check
		 * over to that register ("R5 unbounded memory access"). */
		__u32 i = count;

		__asm__ __volatile__("" : "+r"(i));
		return htb_rsqrt_q32[i & 15];
	}
	y2 = ((__u64)y * y) >> 32;
	cy2 = (__u64)count * y2;
	if (cy2 >= (3ull << 32))	/* y from a larger count: start over */
		return htb_rsqrt_q32[15];
	t = ((3ull << 32) - cy2) >> 2;	/* below 2^32: the product fits */
	return (__u32)(((__u64)y * t) >> 31);
}

/* The control law: t + interval / sqrt(count). */
HTB_INLINE __u64 htb_codel_next(__u64 t, __u64 interval, __u32 rsqrt)
{
	return t + ((interval * rsqrt) >> 32);
}

/* Whether the delay has been above target for an interval (CoDel's
 * ok-to-drop, "should drop" in Linux); arms first_above on the way. */
HTB_INLINE int htb_codel_above(const struct htb_class_conf *c,
			       struct htb_class_state *st, __u64 now, __u64 delay)
{
	if (delay < c->target_ns || delay <= c->mtu_ns) {
		if (st->codel_first_above)
			st->codel_first_above = 0;
		return 0;
	}
	if (!st->codel_first_above) {
		st->codel_first_above = now + c->interval_ns;
		return 0;
	}
	return now >= st->codel_first_above;
}

/* Entering the dropping state: the count of the last one if it ended
 * less than 16 intervals ago (Linux: count - lastcount, the signals of
 * that state), else 1. drop_next may still lie ahead: the difference is
 * signed, as Linux's codel_time_before. */
HTB_INLINE void htb_codel_enter(const struct htb_class_conf *c,
				struct htb_class_state *st, __u64 now)
{
	__u32 delta = st->codel_count - st->codel_lastcount;

	if (delta > 1 &&
	    (__s64)(now - st->codel_drop_next) < (__s64)(16 * c->interval_ns)) {
		st->codel_count = delta;
		st->codel_rec_inv_sqrt = htb_codel_rsqrt(delta, st->codel_rec_inv_sqrt);
	} else {
		st->codel_count = 1;
		st->codel_rec_inv_sqrt = htb_rsqrt_q32[1];
	}
	st->codel_lastcount = st->codel_count;
	st->codel_dropping = 1;
	st->codel_drop_next = htb_codel_next(now, c->interval_ns,
					     st->codel_rec_inv_sqrt);
}

/* CoDel for one packet of the leaf (caller holds its lock): 1 to signal
 * it. The state is cleared while AQM is off, so turning it on by a reload
 * starts afresh. */
HTB_INLINE int htb_codel(const struct htb_class_conf *c,
			 struct htb_class_state *st, __u64 now, __u64 delay)
{
	int above;

	if (!(c->flags & HTB_CONF_AQM)) {
		/* stored only when set: a store per packet dirties the line */
		if (st->codel_first_above)
			st->codel_first_above = 0;
		if (st->codel_dropping)
			st->codel_dropping = 0;
		return 0;
	}
	above = htb_codel_above(c, st, now, delay);
	if (st->codel_dropping) {
		if (!above) {
			st->codel_dropping = 0;
			return 0;
		}
		if (now < st->codel_drop_next)
			return 0;
		/* saturates: a flood keeps one dropping state for 2^32
		 * signals after 2 interval sqrt(2^32), 3.6 h at 100 ms */
		if (st->codel_count != ~0u)
			st->codel_count++;
		st->codel_rec_inv_sqrt = htb_codel_rsqrt(st->codel_count,
							 st->codel_rec_inv_sqrt);
		st->codel_drop_next = htb_codel_next(st->codel_drop_next,
						     c->interval_ns,
						     st->codel_rec_inv_sqrt);
		return 1;
	}
	if (!above)
		return 0;
	htb_codel_enter(c, st, now);
	return 1;
}

#endif /* HTB_CODEL_H */
