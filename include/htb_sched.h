/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The departure-time algorithm: HTB's token state and charge rules turned
 * into an EDT stamp, per packet, along the path from a leaf to the root.
 * This header is the one place the algorithm lives; it is compiled into
 * the BPF program (bpf/htbctl.bpf.c) and into the userspace tests and
 * simulations (tests/unit/test_sched.c), so both run the same code.
 *
 * How it works and why is docs/design.md, under "Datapath": "Departure
 * times" (buckets, where t_c lives, readiness, levels, charge, limit),
 * "Concurrency" (steps 1, 2a and 2b below), "Batches", "AQM", "Sparse
 * flows", and "Program size" (why the per-class steps are global
 * subprograms). What the includer provides: "Environment" below.
 */
#ifndef HTB_SCHED_H
#define HTB_SCHED_H

#include "htb_types.h"
#include "htb_rate.h"

/*
 * Environment. The includer provides (defaults below are the userspace
 * ones: plain arrays, no locks):
 *   struct htb_env			opaque per-packet environment
 *   HTB_ENV_CONF(env, idx)		const struct htb_class_conf * or NULL
 *   HTB_ENV_STATE(env, idx)		struct htb_class_state * or NULL
 *   HTB_ENV_SHARE(env, idx)		const struct htb_class_share * or NULL
 *   HTB_ENV_BATCH(env, idx)		this CPU's struct htb_class_batch * or
 *					NULL (no batches: every charge at once)
 *   HTB_ENV_HAS_FLOWS(env)		flow state kept (else flows count as off)
 *   HTB_ENV_FLOW(env, idx, hash)	struct htb_flow * or NULL (a new flow)
 *   HTB_LOCK(st) / HTB_UNLOCK(st)	take / release st's lock
 *   HTB_RAISE(p, v)			*p = max(*p, v), atomic against other
 *					CPUs doing the same without the lock
 *   HTB_CAS(p, old, v)		*p = v if *p == old, atomically
 */
#ifndef HTB_ENV_CONF
/* Userspace default: classes are array elements 0..n-1. */
struct htb_env {
	const struct htb_class_conf *conf;
	struct htb_class_state *state;
	const struct htb_class_share *share;	/* NULL: no sharing loop */
	struct htb_flow *flows;	/* NULL: no flow state; else nflows entries,
				 * a flow's at hash % nflows (the caller keeps
				 * its hashes apart) */
	struct htb_class_batch *batch;	/* NULL: no batches; else n entries,
					 * the batches of the CPU this env is */
	__u32 n, nflows;
};
#define HTB_ENV_CONF(env, idx)	((idx) < (env)->n ? &(env)->conf[idx] : (void *)0)
#define HTB_ENV_STATE(env, idx)	((idx) < (env)->n ? &(env)->state[idx] : (void *)0)
#define HTB_ENV_SHARE(env, idx)	((idx) < (env)->n && (env)->share ? &(env)->share[idx] : (void *)0)
#define HTB_ENV_BATCH(env, idx)	((idx) < (env)->n && (env)->batch ? &(env)->batch[idx] : (void *)0)
#define HTB_ENV_HAS_FLOWS(env)	((env)->flows != (void *)0)
#define HTB_ENV_FLOW(env, idx, hash) \
	((env)->nflows ? &(env)->flows[(hash) % (env)->nflows] : (void *)0)
#define HTB_LOCK(st)		do { } while (0)
#define HTB_UNLOCK(st)		do { } while (0)
#define HTB_RAISE(p, v)		do { if (*(p) < (v)) *(p) = (v); } while (0)
#define HTB_CAS(p, old, v)	do { if (*(p) == (old)) *(p) = (v); } while (0)
#endif

/* One load the compiler may neither split nor repeat. */
#define HTB_LOAD_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define HTB_MIN(a, b)	((a) < (b) ? (a) : (b))
#define HTB_MAX(a, b)	((a) > (b) ? (a) : (b))

enum htb_verdict {
	HTB_SEND = 0,		/* stamp decision.tstamp */
	HTB_DROP = 1,		/* beyond the leaf's limit or CoDel's signal on a
				 * packet that cannot be marked: nothing charged */
	HTB_UNSHAPED = 2,	/* broken conf (no path): pass untouched */
	HTB_SEND_CE = 3,	/* as HTB_SEND, and set CE (CoDel's signal on ECT) */
};

struct htb_decision {
	__u64 tstamp;		/* departure time (HTB_SEND) */
	__u32 level;		/* path index of the lender */
	__u32 stale;		/* the incoming stamp was beyond the horizon */
	__u32 sparse;		/* it left ahead of the backlog (sparse flow) */
	__u32 flow_new;		/* flows on and the flow had no state: the
				 * caller adds {tstamp, sparse ? vfinish : BULK} */
	__u64 vfinish;		/* the flow's new vfinish (struct htb_flow) */
};

/* Settings read per packet from the runtime map. The BPF program passes
 * this struct to global subprograms, whose callers must have written every
 * byte of it: hence pad, written as 0. */
struct htb_params {
	__u64 now;
	__u64 horizon_ns;
	__u32 hysteresis;
	__u32 share;		/* the sharing loop's lease runs: class_share counts */
	__u32 ect;		/* the packet is ECT(0) or ECT(1): CE may replace a drop */
	__u32 flow_hash;	/* the packet's flow (skb hash), for sparse flows */
};

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
};

HTB_INLINE void htb_blimit_of(struct htb_env *env, const struct htb_params *p,
			      __u32 idx, struct htb_blimit *bl)
{
	const struct htb_class_share *sh;

	bl->word = 0;
	bl->bbuffer = 0;
	if (!p->share)
		return;		/* no loop: not even the lookup */
	sh = HTB_ENV_SHARE(env, idx);
	if (!sh)
		return;
	bl->word = HTB_LOAD_ONCE(sh->borrow_l2t);
	bl->bbuffer = HTB_LOAD_ONCE(sh->bbuffer);
}

/* A packet's costs for one class in units of 2^-shift ns, computed before
 * taking the class's lock (htb_l2t_prod) so the locked part stays short.
 * The borrow cost uses the class's ceil ratecfg (its overhead, mpu and
 * linklayer) with the loop's mult and shift. */
struct htb_cost {
	__u64 r, c, b;
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

	k->r = htb_l2t_prod(&c->rate, len);
	k->c = htb_l2t_prod(&c->ceil, len);
	k->len = len;
	k->b = 0;
	k->bshift = 0;
	k->blimit = bl->word != 0;
	k->bbuffer = bl->bbuffer;
	if (k->blimit) {
		b.mult = HTB_SHARE_MULT(bl->word);
		b.shift = HTB_SHARE_SHIFT(bl->word);
		k->b = htb_l2t_prod(&b, len);
		k->bshift = b.shift;
	}
}

/*
 * Apply charges to one class at now (caller holds its lock): one packet's
 * (htb_charge) or a CPU's batch of them (htb_class_commit). a->r and a->c
 * are split with the class's carries, so a batch costs exactly what its
 * packets one by one would; a->b is whole ns. blimit, bbuffer: the borrow
 * limit in force (its bucket is kept full while there is none).
 */
HTB_INLINE void htb_apply(const struct htb_class_conf *c,
			  struct htb_class_state *st, __u64 now,
			  const struct htb_class_batch *a, int blimit,
			  __s64 bbuffer, __u32 hyst)
{
	__s64 diff = htb_diff(st->t_c, now);
	__s64 toks = htb_fill(st->tokens, diff, c->buffer);
	__s64 ctoks = htb_fill(st->ctokens, diff, c->cbuffer);
	__u32 mode;

	toks -= (__s64)htb_carry_ns(a->r, c->rate.shift, &st->rcarry);
	toks = htb_clamp_mbuffer(toks);
	ctoks -= (__s64)htb_carry_ns(a->c, c->ceil.shift, &st->ccarry);
	ctoks = htb_clamp_mbuffer(ctoks);
	if (blimit)
		st->btokens = htb_clamp_mbuffer(htb_fill(st->btokens, diff, bbuffer) -
						(__s64)a->b);
	else	/* no limit: full whenever one is set (htb_fill caps it) */
		st->btokens = (__s64)HTB_MBUFFER_NS;
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

/* A batch ready to apply to class c: costs in c's current units. */
HTB_INLINE void htb_batch_rescale(const struct htb_class_conf *c,
				  struct htb_class_batch *a)
{
	a->r = htb_batch_units(a->r, a->rshift, c->rate.shift);
	a->c = htb_batch_units(a->c, a->cshift, c->ceil.shift);
	a->rshift = c->rate.shift;
	a->cshift = c->ceil.shift;
}

/* Add one packet's costs to a batch. rate: the class is at or above the
 * sending level (pays rate tokens); lender: it is that level. The caller
 * keeps the batch in the class's units (htb_class_commit). */
HTB_INLINE void htb_batch_add(struct htb_class_batch *a, const struct htb_cost *k,
			      int rate, int lender)
{
	if (rate) {
		a->r += k->r;
		a->lends += !!lender;
	} else {
		a->borrows++;
		if (k->blimit)
			a->b += k->b >> k->bshift;
	}
	a->c += k->c;
	a->bytes += k->len;
	a->packets++;
}

/*
 * Charge one class for a packet at now (caller holds its lock): a batch
 * of one, with the borrow cost split by the class's own carry.
 */
HTB_INLINE void htb_charge(const struct htb_class_conf *c,
			   struct htb_class_state *st, __u64 now,
			   const struct htb_cost *k, int rate, int lender,
			   __u32 hyst)
{
	struct htb_class_batch a = { 0 };

	htb_batch_add(&a, k, rate, lender);
	if (k->blimit && !rate)
		a.b = htb_carry_ns(k->b, k->bshift, &st->bcarry);
	htb_apply(c, st, now, &a, k->blimit, k->bbuffer, hyst);
}

/* Whether a class's charges may wait in a batch: not with hysteresis on
 * (its thresholds follow the mode, which only an apply updates), nor when
 * a bucket holds less than a batch (its cap would then be applied a
 * batch late, costing more than the burst). */
HTB_INLINE int htb_batchable(const struct htb_class_conf *c, const struct htb_params *p)
{
	return !p->hysteresis && c->buffer >= (__s64)HTB_BATCH_NS &&
	       c->cbuffer >= (__s64)HTB_BATCH_NS;
}

/* Whether costs of this size are due for the shared state: HTB_BATCH_NS of
 * rate, ceil or borrow tokens (see struct htb_class_batch). */
HTB_INLINE int htb_batch_due(const struct htb_class_conf *c, __u64 r, __u64 ce,
			     __u64 b_ns)
{
	return (r >> c->rate.shift) >= HTB_BATCH_NS ||
	       (ce >> c->ceil.shift) >= HTB_BATCH_NS || b_ns >= HTB_BATCH_NS;
}

/* A packet's costs k for class c into this CPU's batch a, when batches
 * apply (ok: htb_batchable) or one is pending (it is applied with this
 * packet). Returns 1 when the batch keeps waiting (nothing more to do),
 * 0 when it is due (the caller moves it out, htb_batch_out, and applies
 * it under the class's lock), -1 when the packet is charged by itself
 * (no batch pending, and batches off or the packet alone due). */
HTB_INLINE int htb_batch_take(const struct htb_class_conf *c,
			      struct htb_class_batch *a, const struct htb_cost *k,
			      int rate, int lender, int ok)
{
	if (!a || !(a->packets || (ok && !htb_batch_due(c, k->r, k->c, k->b >> k->bshift))))
		return -1;
	if (!a->packets) {
		a->rshift = c->rate.shift;
		a->cshift = c->ceil.shift;
	} else if (a->rshift != c->rate.shift || a->cshift != c->ceil.shift) {
		htb_batch_rescale(c, a);	/* a reload changed the rate */
	}
	htb_batch_add(a, k, rate, lender);
	return ok && a->packets < HTB_BATCH_PKTS && !htb_batch_due(c, a->r, a->c, a->b);
}

/* A due batch moved out of the CPU's entry into *due; the entry starts
 * empty, counting one more apply (maps_read_state relies on it). */
HTB_INLINE void htb_batch_out(struct htb_class_batch *a, struct htb_class_batch *due)
{
	__u32 applied = a->applied + 1;

	*due = *a;
	__builtin_memset(a, 0, sizeof(*a));
	a->applied = applied;
}

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

/*
 * Per-class steps as separate functions. In BPF they are global
 * subprograms (HTB_SUBPROG): the verifier checks each once, on its own,
 * with unknown arguments, instead of once per path through the walk up
 * the tree. Inlined, the walk's branches (caps, clamps, modes, levels)
 * multiply into most of the verifier's 1,000,000-instruction limit; as
 * subprograms the program needs a small fraction of it (the counts, and
 * how to measure them: docs/design.md, "Program size"). In userspace
 * they are plain static inline functions: the same code.
 */
#ifndef HTB_SUBPROG
#define HTB_SUBPROG static inline
#endif

/* One class seen unlocked at now (step 1). */
struct htb_ready {
	__u64 c;		/* ceil bucket at its lowater */
	__u64 r;		/* rate bucket at its hiwater */
	__u64 b;		/* borrow bucket at 0 (now if no borrow limit) */
	__u64 last_stamp;
};

/* What the charging steps need to know (step 2); one struct because a
 * BPF function takes at most five arguments. */
struct htb_job {
	__u64 T;		/* departure time; the leaf step may raise it */
	__u32 len;		/* bytes charged */
	__u32 idx;		/* class */
	__s32 below;		/* levels down to the lender: > 0 borrow, 0 lend, < 0 rate */
	__u32 flags;		/* out of the leaf step: HTB_JOB_* */
	__u64 own_ts;		/* max(now, the packet's valid stamp): a later T is
				 * the shaper's doing (shaped_until) */
	__u64 vfinish;		/* out of the leaf step: the flow's, if sparse */
};

#define HTB_JOB_SPARSE		1u	/* left ahead of the backlog */
#define HTB_JOB_FLOW_NEW	2u	/* flows on, no state for the flow yet */

/* ---- Sparse flows (docs/design.md, "Sparse flows") ---- */

/* Where the flow's sparse packets end, at the class's rate, once this
 * one of cost ns is added: now + what it has ahead + cost;
 * HTB_FLOW_BULK while a packet of it waits behind the backlog. A new
 * flow (no state) has nothing ahead. */
HTB_INLINE __u64 htb_flow_end(const struct htb_flow *fl, __u64 now, __u64 cost)
{
	if (!fl)
		return now + cost;
	if (fl->vfinish == HTB_FLOW_BULK)
		return fl->last_stamp > now ? HTB_FLOW_BULK : now + cost;
	return HTB_MAX(fl->vfinish, now) + cost;
}

/* The lane's clock once it takes a packet costing lane ns there. */
HTB_INLINE __u64 htb_lane_next(const struct htb_class_state *st, __u64 now,
			       __u64 lane)
{
	return HTB_MAX(st->sparse_next, now) + lane;
}

/* When a packet may leave through the leaf's sparse lane (caller holds
 * the leaf's lock), ~0 if its flow is not sparse: the flow has at most one
 * full frame ahead with it (end, htb_flow_end); the lane, at a quarter of
 * the rate, lets it go once its clock is at most its burst ahead (lane:
 * the packet's cost there); never before floor (the packet's own valid
 * stamp and its flow's last one). */
HTB_INLINE __u64 htb_sparse_T(const struct htb_class_conf *c,
			      const struct htb_class_state *st, __u64 now,
			      __u64 end, __u64 lane, __u64 floor)
{
	__u64 burst = (HTB_SPARSE_BURST_PKTS * c->mtu_ns) << HTB_SPARSE_SHIFT;
	__u64 next = htb_lane_next(st, now, lane), T = now;

	if (end == HTB_FLOW_BULK || end - now > c->mtu_ns)
		return ~0ull;
	if (next > now + burst)
		T = next - burst;	/* waits its turn in the lane */
	return HTB_MAX(T, floor);
}

/* The flow's state after a packet leaving at T (caller holds the leaf's
 * lock): vfinish end, or HTB_FLOW_BULK if it waits behind the backlog.
 * Returns the new vfinish. */
HTB_INLINE __u64 htb_flow_update(struct htb_flow *fl, __u64 T, __u64 end,
				 int queued)
{
	__u64 v = queued ? HTB_FLOW_BULK : end;

	if (fl) {
		fl->vfinish = v;
		if (T > fl->last_stamp)
			fl->last_stamp = T;
	}
	return v;
}

HTB_INLINE int htb_ready_of(struct htb_env *env, const struct htb_params *p,
			    __u32 idx, struct htb_ready *out)
{
	const struct htb_class_conf *c;
	const struct htb_class_batch *a;
	struct htb_class_state *st;
	struct htb_blimit bl;
	__s64 diff, toks, ctoks, btoks;
	__u32 mode;

	if (!env || !p || !out)
		return -1;
	c = HTB_ENV_CONF(env, idx);
	st = HTB_ENV_STATE(env, idx);
	if (!c || !st)
		return -1;
	htb_blimit_of(env, p, idx, &bl);
	diff = htb_diff(st->t_c, p->now);
	mode = st->mode;
	toks = htb_fill(st->tokens, diff, c->buffer);
	ctoks = htb_fill(st->ctokens, diff, c->cbuffer);
	btoks = htb_fill(st->btokens, diff, bl.bbuffer);
	/* what this CPU charged and has not applied yet, with the carries:
	 * what applying it would take */
	a = HTB_ENV_BATCH(env, idx);
	if (a && a->packets) {
		__u64 rc = st->rcarry, cc = st->ccarry;

		toks -= (__s64)htb_carry_ns(htb_batch_units(a->r, a->rshift, c->rate.shift),
					    c->rate.shift, &rc);
		ctoks -= (__s64)htb_carry_ns(htb_batch_units(a->c, a->cshift, c->ceil.shift),
					     c->ceil.shift, &cc);
		btoks -= (__s64)a->b;
	}
	out->c = htb_ready(p->now, ctoks, htb_lowater(c, mode, p->hysteresis));
	out->r = htb_ready(p->now, toks, htb_hiwater(c, mode, p->hysteresis));
	out->b = p->now;
	if (bl.word && !HTB_SHARE_MULT(bl.word))
		out->b = ~0ull;		/* the loop gives it nothing to borrow */
	else if (bl.word)
		out->b = htb_ready(p->now, btoks, 0);
	out->last_stamp = st->last_stamp;
	return 0;
}

HTB_SUBPROG int htb_class_ready(struct htb_env *env, const struct htb_params *p,
				__u32 idx, struct htb_ready *out)
{
	return htb_ready_of(env, p, idx, out);
}

/* The leaf's charge under its lock: with what this CPU's batch holds for
 * it, if anything (a leaf's batch is applied at its next locked packet,
 * so the state's tokens and counters are never more than a batch behind). */
HTB_INLINE void htb_leaf_charge(const struct htb_class_conf *c,
				struct htb_class_state *st,
				struct htb_class_batch *a, const struct htb_params *p,
				const struct htb_cost *k, int rate, int lender)
{
	struct htb_class_batch due;

	if (htb_batch_take(c, a, k, rate, lender, 0) < 0 || !a) {
		htb_charge(c, st, p->now, k, rate, lender, p->hysteresis);
		return;
	}
	htb_batch_out(a, &due);
	htb_apply(c, st, p->now, &due, k->blimit, k->bbuffer, p->hysteresis);
}

/* Whether the leaf's packet may skip the lock (docs/design.md, "Batches"):
 * it lends (the leaf is within its rate), leaves at its own time (nothing
 * of the class or its flow scheduled later), CoDel is idle (its state
 * would not change: the delay is 0) and the class batches. Read unlocked:
 * another CPU may change last_stamp meanwhile, which HTB_RAISE keeps
 * monotonic. */
HTB_INLINE int htb_leaf_unlocked(const struct htb_class_conf *c,
				 const struct htb_class_state *st,
				 const struct htb_params *p, const struct htb_job *j,
				 __u64 fl_last, __u64 limit, int ok)
{
	return ok && j->below == 0 && j->T == j->own_ts && fl_last <= j->T &&
	       HTB_LOAD_ONCE(st->last_stamp) <= j->T && j->T - p->now <= limit &&
	       !HTB_LOAD_ONCE(st->codel_first_above) && !HTB_LOAD_ONCE(st->codel_dropping);
}

/* Step 2a without the lock (htb_leaf_unlocked), for a leaf that lends at
 * the packet's own time (j->T == j->own_ts, j->below == 0): the charge
 * into this CPU's batch. HTB_SEND when done, -1 when the packet needs the
 * locked step. */
HTB_INLINE int htb_leaf_try_unlocked(struct htb_env *env, const struct htb_params *p,
				     struct htb_job *j)
{
	const struct htb_class_conf *c = HTB_ENV_CONF(env, j->idx);
	struct htb_class_state *st = HTB_ENV_STATE(env, j->idx);
	struct htb_class_batch *a = HTB_ENV_BATCH(env, j->idx), due;
	struct htb_flow *fl = (void *)0;
	struct htb_blimit bl;
	struct htb_cost k;
	__u64 limit, fl_last = 0, end = 0, vf = 0;
	int flows, take;

	if (!c || !st || !a || !htb_batchable(c, p))
		return -1;
	limit = c->limit_ns ? c->limit_ns : HTB_DEFAULT_LIMIT_NS;
	htb_blimit_of(env, p, j->idx, &bl);
	htb_cost_of(c, &bl, j->len, &k);
	flows = (c->flags & HTB_CONF_FLOWS) && HTB_ENV_HAS_FLOWS(env);
	if (flows) {
		fl = HTB_ENV_FLOW(env, j->idx, p->flow_hash);
		if (fl) {
			fl_last = HTB_LOAD_ONCE(fl->last_stamp);
			vf = HTB_LOAD_ONCE(fl->vfinish);
		}
		end = htb_flow_end(fl, p->now, k.r >> c->rate.shift);
	}
	if (!htb_leaf_unlocked(c, st, p, j, fl_last, limit, 1))
		return -1;
	j->flags = fl || !flows ? 0 : HTB_JOB_FLOW_NEW;
	take = htb_batch_take(c, a, &k, 1, 1, 1);
	/* The flow's entry without the leaf's lock: another CPU's packet of
	 * the same flow may be queued under it meanwhile (vfinish BULK, a
	 * later last_stamp). So vfinish changes only if it is still what this
	 * packet's decision saw, and last_stamp is only raised: a queued
	 * packet's state is never overwritten. */
	j->vfinish = end;
	if (fl) {
		HTB_CAS(&fl->vfinish, vf, end);
		HTB_RAISE(&fl->last_stamp, j->T);
	}
	/* a stamp not ahead of now orders nothing (any later packet's floor
	 * is its own now): not written, so CPUs sending to one leaf within
	 * its rate share no written line */
	if (j->T > p->now)
		HTB_RAISE(&st->last_stamp, j->T);
	if (take > 0)
		return HTB_SEND;
	if (take == 0)
		htb_batch_out(a, &due);
	HTB_LOCK(st);
	if (take == 0)
		htb_apply(c, st, p->now, &due, k.blimit, k.bbuffer, p->hysteresis);
	else	/* due by itself */
		htb_charge(c, st, p->now, &k, 1, 1, p->hysteresis);
	HTB_UNLOCK(st);
	return HTB_SEND;
}

/* Steps 1 and 2a for the leaf in one call, the common case: its snapshot
 * into *r, and when it lends at the packet's own time the unlocked charge
 * (HTB_SEND, j->T set). Else -1: the walk goes on from *r (or
 * HTB_UNSHAPED for a broken leaf). */
HTB_SUBPROG int htb_leaf_first(struct htb_env *env, const struct htb_params *p,
			       struct htb_job *j, struct htb_ready *r)
{
	if (!env || !p || !j || !r)
		return HTB_UNSHAPED;
	if (htb_ready_of(env, p, j->idx, r))
		return HTB_UNSHAPED;
	if (HTB_MAX(r->c, r->r) > j->own_ts || r->last_stamp > j->own_ts)
		return -1;
	j->T = j->own_ts;
	j->below = 0;
	return htb_leaf_try_unlocked(env, p, j);
}

/* Step 2a, the leaf under its lock: final T against last_stamp, the
 * limit, CoDel, the charge with the leaf's pending batch. Returns an enum
 * htb_verdict. */
HTB_SUBPROG int htb_leaf_commit(struct htb_env *env, const struct htb_params *p,
				struct htb_job *j)
{
	const struct htb_class_conf *c;
	struct htb_class_state *st;
	struct htb_class_batch *a;
	struct htb_flow *fl = (void *)0;
	struct htb_blimit bl;
	struct htb_cost k;
	__u64 limit, T, lane = 0, end = 0, fl_last = 0;
	int sig, flows;

	if (!env || !p || !j)
		return HTB_UNSHAPED;
	c = HTB_ENV_CONF(env, j->idx);
	st = HTB_ENV_STATE(env, j->idx);
	if (!c || !st)
		return HTB_UNSHAPED;
	limit = c->limit_ns ? c->limit_ns : HTB_DEFAULT_LIMIT_NS;
	T = j->T;
	j->flags = 0;
	htb_blimit_of(env, p, j->idx, &bl);
	htb_cost_of(c, &bl, j->len, &k);
	a = HTB_ENV_BATCH(env, j->idx);
	flows = (c->flags & HTB_CONF_FLOWS) && HTB_ENV_HAS_FLOWS(env);
	if (flows) {
		fl = HTB_ENV_FLOW(env, j->idx, p->flow_hash);
		if (!fl)
			j->flags |= HTB_JOB_FLOW_NEW;
		else
			fl_last = fl->last_stamp;
		lane = (k.r >> c->rate.shift) << HTB_SPARSE_SHIFT;
		end = htb_flow_end(fl, p->now, lane >> HTB_SPARSE_SHIFT);
	}
	HTB_LOCK(st);
	if (flows) {
		__u64 Ts;

		Ts = htb_sparse_T(c, st, p->now, end, lane, HTB_MAX(fl_last, j->own_ts));
		if (fl_last > T)
			T = fl_last;
		if (st->last_stamp > T)
			T = st->last_stamp;
		/* the lane if that is sooner than the backlog */
		if (Ts < T) {
			T = Ts;
			st->sparse_next = htb_lane_next(st, p->now, lane);
			st->sparse_packets++;
			j->vfinish = htb_flow_update(fl, T, end, 0);
			htb_leaf_charge(c, st, a, p, &k, j->below <= 0, j->below == 0);
			HTB_UNLOCK(st);
			j->flags |= HTB_JOB_SPARSE;
			j->T = T;
			return HTB_SEND;
		}
	}
	if (st->last_stamp > T)
		T = st->last_stamp;
	if (T - p->now > limit) {
		st->drops++;
		HTB_UNLOCK(st);
		j->T = T;
		return HTB_DROP;
	}
	sig = htb_codel(c, st, p->now, T - j->own_ts);
	if (sig && !(p->ect && (c->flags & HTB_CONF_ECN))) {
		st->aqm_drops++;
		HTB_UNLOCK(st);
		j->T = T;
		return HTB_DROP;
	}
	if (sig)
		st->ecn_marks++;
	if (flows)	/* queued unless it leaves at its own time */
		j->vfinish = htb_flow_update(fl, T, end, T > j->own_ts);
	HTB_RAISE(&st->last_stamp, T);
	if (T > j->own_ts)
		st->shaped_until = T;
	htb_leaf_charge(c, st, a, p, &k, j->below <= 0, j->below == 0);
	HTB_UNLOCK(st);
	j->T = T;
	return sig ? HTB_SEND_CE : HTB_SEND;
}

/* Step 2b, one ancestor (htb_path_commit): into this CPU's batch, which goes to the shared
 * state under the class's lock when it is due (docs/design.md, "Batches");
 * at once when there are no batches or the packet alone is due. */
HTB_INLINE int htb_class_commit(struct htb_env *env, const struct htb_params *p,
				 const struct htb_job *j)
{
	const struct htb_class_conf *c;
	struct htb_class_state *st;
	struct htb_class_batch *a, due;
	struct htb_blimit bl;
	struct htb_cost k;
	int rate = j->below <= 0, lender = j->below == 0, take;

	if (!env || !p || !j)
		return -1;
	c = HTB_ENV_CONF(env, j->idx);
	if (!c)
		return -1;
	htb_blimit_of(env, p, j->idx, &bl);
	htb_cost_of(c, &bl, j->len, &k);
	a = HTB_ENV_BATCH(env, j->idx);
	take = htb_batch_take(c, a, &k, rate, lender, a && htb_batchable(c, p));
	if (take > 0)
		return 0;	/* the shared state not even looked up */
	st = HTB_ENV_STATE(env, j->idx);
	if (!st)
		return -1;
	if (take == 0 && a) {
		htb_batch_out(a, &due);
		HTB_LOCK(st);
		htb_apply(c, st, p->now, &due, k.blimit, k.bbuffer, p->hysteresis);
		HTB_UNLOCK(st);
		return 0;
	}
	HTB_LOCK(st);
	htb_charge(c, st, p->now, &k, rate, lender, p->hysteresis);
	HTB_UNLOCK(st);
	return 0;
}

/* Step 2b for every ancestor of the leaf jl->idx (jl->below: the leaf's
 * level), in one subprogram: a call per packet, not per class (depth 8:
 * 302 -> 254 ns per packet, bench/bench_prog.c). */
HTB_SUBPROG int htb_path_commit(struct htb_env *env, const struct htb_params *p,
				const struct htb_job *jl, __u32 depth)
{
	const struct htb_class_conf *leaf;
	struct htb_job j;
	__u32 k;

	if (!env || !p || !jl)
		return -1;
	leaf = HTB_ENV_CONF(env, jl->idx);
	if (!leaf)
		return -1;
	j = *jl;
	for (k = 1; k < HTB_MAX_DEPTH; k++) {
		if (k >= depth)
			break;
		j.idx = leaf->path[k];
		j.below--;
		if (htb_class_commit(env, p, &j))
			return -1;	/* a broken path ends here */
	}
	return 0;
}

/*
 * Schedule one packet of len bytes (wire length) for the leaf whose conf
 * is leaf, with incoming stamp in_ts (0: none). Fills d; returns an
 * enum htb_verdict. Charges the path on HTB_SEND and HTB_SEND_CE only.
 */
HTB_INLINE int htb_schedule(struct htb_env *env,
			    const struct htb_class_conf *leaf,
			    const struct htb_params *p, __u32 len,
			    __u64 in_ts, struct htb_decision *d)
{
	__u64 now = p->now, floor = now, best = ~0ull, cmax = 0, bmax = 0, Tk;
	__u32 depth = leaf->depth, level = 0, k;
	struct htb_ready r;
	struct htb_job j;
	int found = 0, verdict;

	__builtin_memset(&r, 0, sizeof(r));
	__builtin_memset(&j, 0, sizeof(j));
	d->stale = 0;
	d->level = 0;
	d->tstamp = 0;
	d->sparse = 0;
	d->flow_new = 0;
	d->vfinish = 0;
	if (in_ts > now) {
		if (in_ts - now <= p->horizon_ns)
			floor = in_ts;
		else
			d->stale = 1;
	}
	j.own_ts = floor;
	if (depth > HTB_MAX_DEPTH)
		depth = HTB_MAX_DEPTH;
	if (depth == 0)
		return HTB_UNSHAPED;

	/* 0. The leaf lending at the packet's own time: done in one call. */
	j.len = len;
	j.idx = leaf->path[0];
	verdict = htb_leaf_first(env, p, &j, &r);
	if (verdict == HTB_UNSHAPED)
		return HTB_UNSHAPED;
	if (verdict == HTB_SEND) {
		d->tstamp = j.T;
		d->flow_new = !!(j.flags & HTB_JOB_FLOW_NEW);
		d->vfinish = j.vfinish;
		goto ancestors;
	}

	/* 1. Decide T and the level from an unlocked snapshot (the leaf's is
	 * in r already). */
	for (k = 0; k < HTB_MAX_DEPTH; k++) {
		if (k >= depth)
			break;
		if (k > 0 && htb_class_ready(env, p, leaf->path[k], &r)) {
			depth = k;	/* a broken path ends here */
			break;
		}
		if (k == 0 && r.last_stamp > floor)
			floor = r.last_stamp;
		cmax = HTB_MAX(cmax, r.c);
		Tk = HTB_MAX(cmax, bmax);
		Tk = HTB_MAX(Tk, r.r);
		if (Tk <= floor) {
			level = k;
			found = 1;
			break;
		}
		if (Tk < best) {
			best = Tk;
			level = k;
		}
		bmax = HTB_MAX(bmax, r.b);
	}

	/* 2. Charge, leaf first, one lock at a time. */
	j.T = found ? floor : HTB_MAX(floor, best);
	j.len = len;
	j.idx = leaf->path[0];
	j.below = (__s32)level;
	verdict = htb_leaf_commit(env, p, &j);
	d->tstamp = j.T;
	d->level = level;
	d->sparse = !!(j.flags & HTB_JOB_SPARSE);
	d->flow_new = !!(j.flags & HTB_JOB_FLOW_NEW);
	d->vfinish = j.vfinish;
	if (verdict != HTB_SEND && verdict != HTB_SEND_CE)
		return verdict;
ancestors:
	if (depth > 1)
		htb_path_commit(env, p, &j, depth);
	return verdict;
}

#endif /* HTB_SCHED_H */
