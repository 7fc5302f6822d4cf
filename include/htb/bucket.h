/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One class's buckets as HTB keeps them (docs/design.md, "Departure
 * times"): tokens at a time, the class's mode, when a bucket is ready,
 * the borrow limit and a packet's costs, and applying charges.
 */
#ifndef HTB_BUCKET_H
#define HTB_BUCKET_H

#include "htb/env.h"

/* Time since t_c, as HTB: capped at mbuffer; 0 if another CPU already
 * moved t_c past now; "forever" for a fresh class. */
HTB_INLINE __s64 htb_diff(__u64 t_c, __u64 now)
{
	__u64 d;

	if (t_c == 0)
		return (__s64)HTB_MBUFFER_NS;
	if (now <= t_c)
		return 0;
	d = now - t_c;
	return d > HTB_MBUFFER_NS ? (__s64)HTB_MBUFFER_NS : (__s64)d;
}

/* Bucket value at t_c + diff, capped at its size. */
HTB_INLINE __s64 htb_fill(__s64 toks, __s64 diff, __s64 cap)
{
	toks += diff;
	return toks > cap ? cap : toks;
}

HTB_INLINE __s64 htb_clamp_mbuffer(__s64 toks)
{
	if (toks <= -(__s64)HTB_MBUFFER_NS)
		toks = 1 - (__s64)HTB_MBUFFER_NS;
	return toks;
}

/*
 * The borrow bucket's tokens btok (as of now), counted at the borrow limit
 * from (B/s), at the limit to. What the bucket owes is two things: the
 * class's packets already stamped ahead of now (up to ahead, its
 * last_stamp - now), which leave when they were given to leave whatever
 * the limit is now, and the rest, the spacing the last borrowed packet
 * bought at the old limit: that part is bytes, and costs what they cost at
 * the new one. Without this a packet borrowed under a small limit (the
 * loop gives a leaf that stopped sending its estimate x 5/4 plus 100
 * kbit/s, which can be a few kbit/s above its rate) owed seconds, still
 * owed once the loop raised the limit, and held the class at its rate for
 * that long: 4.9 s owed in scenario 17 (docs/log.md, "A debt of seconds").
 * Rescaling all of it held back a class whose limit fell with a queue
 * stamped at the old one (tests/unit/test_share.c, converges_within_300ms:
 * 9.96 Mbit/s of 30). Credit (btok > 0, at most bbuffer) stays as it is.
 * Applied once per change of the limit, under the leaf's lock
 * (htb_leaf_rebase), not where the bucket is read and charged: inlined
 * there it cost the verifier 43,000 more instructions (85,561 ->
 * 128,647), and BPF calls no global subprogram under a lock.
 */
HTB_INLINE __s64 htb_btokens_at(__s64 btok, __u64 ahead, __u64 from, __u64 to)
{
	__u64 debt;

	if (btok >= 0 || from == to || !from || !to || from >= (1ull << 43) ||
	    (__u64)-btok <= ahead)
		return btok;
	debt = (__u64)-btok - ahead;
	if (debt > HTB_MBUFFER_NS)
		debt = HTB_MBUFFER_NS;	/* below 2^36 */
	if (from >= (1ull << 27)) {	/* 1 Gbit/s: to 11 bits at least */
		from >>= 16;
		to >>= 16;
	}
	if (!to)
		return 1 - (__s64)HTB_MBUFFER_NS;
	if (from / to >= 128) {		/* a fall: whole times are close enough */
		__u64 q = from / to;

		debt = debt >= HTB_MBUFFER_NS / q ? HTB_MBUFFER_NS : debt * q;
	} else {
		debt = debt * from / to;	/* below 2^63 */
	}
	if (ahead > HTB_MBUFFER_NS)
		ahead = HTB_MBUFFER_NS;
	return htb_clamp_mbuffer(-(__s64)(debt + ahead));
}

/* How far the class's last stamp lies ahead of now (0: not ahead). */
HTB_INLINE __u64 htb_ahead(const struct htb_class_state *st, __u64 now)
{
	return st->last_stamp > now ? st->last_stamp - now : 0;
}

HTB_INLINE __s64 htb_lowater(const struct htb_class_conf *c, __u32 mode,
			     __u32 hyst)
{
	return hyst && mode != HTB_MODE_CANT_SEND ? -c->cbuffer : 0;
}

HTB_INLINE __s64 htb_hiwater(const struct htb_class_conf *c, __u32 mode,
			     __u32 hyst)
{
	return hyst && mode == HTB_MODE_CAN_SEND ? -c->buffer : 0;
}

/* HTB's htb_class_mode at diff 0. */
HTB_INLINE __u32 htb_class_mode(const struct htb_class_conf *c, __s64 toks,
				__s64 ctoks, __u32 mode, __u32 hyst)
{
	if (ctoks < htb_lowater(c, mode, hyst))
		return HTB_MODE_CANT_SEND;
	if (toks >= htb_hiwater(c, mode, hyst))
		return HTB_MODE_CAN_SEND;
	return HTB_MODE_MAY_BORROW;
}

/* Earliest time a bucket holding toks at now reaches thresh. */
HTB_INLINE __u64 htb_ready(__u64 now, __s64 toks, __s64 thresh)
{
	return toks >= thresh ? now : now + (__u64)(thresh - toks);
}

/* A class's borrow limit as the program sees it: the share word loaded
 * once (see struct htb_class_share). */
struct htb_blimit {
	__u64 word;		/* 0: no limit */
	__s64 bbuffer;
	__u64 rate;		/* B/s the word encodes (htb_btokens_at) */
};

HTB_INLINE void htb_blimit_of(struct htb_env *env, const struct htb_params *p,
			      __u32 idx, struct htb_blimit *bl)
{
	const struct htb_class_share *sh;

	bl->word = 0;
	bl->bbuffer = 0;
	bl->rate = 0;
	if (!p->share)
		return;		/* no loop: not even the lookup */
	sh = HTB_ENV_SHARE(env, idx);
	if (!sh)
		return;
	bl->word = HTB_LOAD_ONCE(sh->borrow_l2t);
	bl->bbuffer = HTB_LOAD_ONCE(sh->bbuffer);
	bl->rate = HTB_LOAD_ONCE(sh->borrow_Bps);
}

/* A packet's costs for one class in units of 2^-shift ns, computed before
 * taking the class's lock (htb_l2t_prod) so the locked part stays short.
 * The borrow cost uses the class's ceil ratecfg (its overhead, mpu and
 * linklayer) with the loop's mult and shift. */
struct htb_cost {
	__u64 rate_cost;	/* 2^-rate.shift ns (htb_l2t_prod) */
	__u64 ceil_cost;	/* 2^-ceil.shift ns */
	__u64 borrow_cost;	/* 2^-bshift ns; 0 without a borrow limit */
	__u32 len;
	__u8 bshift;
	__u8 blimit;		/* the borrow bucket is charged */
	__u16 pad;
	__s64 bbuffer;
};

HTB_INLINE void htb_cost_of(const struct htb_class_conf *c,
			    const struct htb_blimit *bl, __u32 len,
			    struct htb_cost *k)
{
	struct htb_ratecfg b = c->ceil;

	k->rate_cost = htb_l2t_prod(&c->rate, len);
	k->ceil_cost = htb_l2t_prod(&c->ceil, len);
	k->len = len;
	k->borrow_cost = 0;
	k->bshift = 0;
	k->blimit = bl->word != 0;
	k->bbuffer = bl->bbuffer;
	if (k->blimit) {
		b.mult = HTB_SHARE_MULT(bl->word);
		b.shift = HTB_SHARE_SHIFT(bl->word);
		k->borrow_cost = htb_l2t_prod(&b, len);
		k->bshift = b.shift;
	}
}

/*
 * A linear class's batch sums bytes (htb_batch_take_lin): then lin holds
 * the length-adjusted bytes, c is 0, and the fields a batch of costs
 * would use say what the bytes cost: r the multipliers of the conf they
 * were summed under (rate's << 32 | ceil's), rshift and cshift its
 * shifts, b the generation (struct htb_params.gen; a reload starts a new
 * one). A packet of another generation turns the sum into costs
 * (htb_batch_fold), so a reload that changes the rate leaves what was
 * pending at its old worth, as a batch of costs keeps it. These read a
 * batch of either kind: its rate and ceil costs in its own units, its
 * borrow ns.
 */
HTB_INLINE __u64 htb_batch_rprod(const struct htb_class_batch *a)
{
	return a->lin ? (__u64)a->lin * (a->r >> 32) : a->r;
}

HTB_INLINE __u64 htb_batch_cprod(const struct htb_class_batch *a)
{
	return a->lin ? (__u64)a->lin * (__u32)a->r : a->c;
}

HTB_INLINE __u64 htb_batch_bns(const struct htb_class_batch *a)
{
	return a->lin ? 0 : a->b;
}

/* A batch's cost in units of 2^-to ns, from 2^-from (the shift when the
 * batch began): the same cost unless a reload changed the class's rate
 * meanwhile; then rescaled, to within 1 ns. */
HTB_INLINE __u64 htb_batch_units(__u64 v, __u8 from, __u8 to)
{
	if (from == to)
		return v;
	if (from > to)
		return v >> ((from - to) & 63);
	return v << ((to - from) & 63);
}

/* The same costs in c's current units */
HTB_INLINE __u64 htb_batch_rcost(const struct htb_class_conf *c,
				 const struct htb_class_batch *a)
{
	return htb_batch_units(htb_batch_rprod(a), a->rshift, c->rate.shift);
}

HTB_INLINE __u64 htb_batch_ccost(const struct htb_class_conf *c,
				 const struct htb_class_batch *a)
{
	return htb_batch_units(htb_batch_cprod(a), a->cshift, c->ceil.shift);
}

/*
 * Apply charges to one class at now (caller holds its lock): one packet's
 * (htb_charge) or a CPU's batch of them (htb_class_commit). a->r and a->c
 * (read through htb_batch_rprod: a batch of bytes or of costs, in c's
 * units: htb_batch_take rescales a batch of costs, and a batch of bytes
 * of this generation is in its conf's)
 * are split with the class's carries, so a batch costs exactly what its
 * packets one by one would; a->b is whole ns. k->blimit, bbuffer: the
 * borrow limit in force (its bucket is kept full while there is none).
 */
HTB_INLINE void htb_apply(const struct htb_class_conf *c,
			  struct htb_class_state *st, __u64 now,
			  const struct htb_class_batch *a, const struct htb_cost *k,
			  __u32 hyst)
{
	__s64 diff = htb_diff(st->t_c, now);
	__s64 toks = htb_fill(st->tokens, diff, c->buffer);
	__s64 ctoks = htb_fill(st->ctokens, diff, c->cbuffer);
	__u32 mode;

	toks -= (__s64)htb_carry_ns(htb_batch_rprod(a), c->rate.shift, &st->rcarry);
	toks = htb_clamp_mbuffer(toks);
	ctoks -= (__s64)htb_carry_ns(htb_batch_cprod(a), c->ceil.shift, &st->ccarry);
	ctoks = htb_clamp_mbuffer(ctoks);
	if (k->blimit) {
		st->btokens = htb_clamp_mbuffer(htb_fill(st->btokens, diff, k->bbuffer) -
						(__s64)htb_batch_bns(a));
	} else {	/* no limit: full whenever one is set (htb_fill caps it) */
		st->btokens = (__s64)HTB_MBUFFER_NS;
	}
	st->tokens = toks;
	st->ctokens = ctoks;
	if (now > st->t_c)
		st->t_c = now;
	st->bytes += a->bytes;
	st->packets += a->packets;
	st->lends += a->lends;
	st->borrows += a->borrows;
	mode = htb_class_mode(c, toks, ctoks, st->mode, hyst);
	if (mode != st->mode) {
		if (mode == HTB_MODE_CANT_SEND)
			st->overlimits++;
		st->mode = mode;
	}
}

#endif /* HTB_BUCKET_H */
