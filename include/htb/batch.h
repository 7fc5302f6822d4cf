/* SPDX-License-Identifier: GPL-2.0 */
/* Per-CPU batches of charges (docs/design.md, "Batches"). */
#ifndef HTB_BATCH_H
#define HTB_BATCH_H

#include "htb/bucket.h"

/* A batch ready to apply to class c: costs in c's current units. */
HTB_INLINE void htb_batch_rescale(const struct htb_class_conf *c,
				  struct htb_class_batch *a)
{
	a->r = htb_batch_units(a->r, a->rshift, c->rate.shift);
	a->c = htb_batch_units(a->c, a->cshift, c->ceil.shift);
	a->rshift = c->rate.shift;
	a->cshift = c->ceil.shift;
}

/* A batch of bytes turned into one of costs, in its own units */
HTB_INLINE void htb_batch_fold(struct htb_class_batch *a)
{
	__u64 r = htb_batch_rprod(a), ce = htb_batch_cprod(a);

	a->b = htb_batch_bns(a);
	a->r = r;
	a->c = ce;
	a->lin = 0;
}

/* Add one packet's costs to a batch. rate: the class is at or above the
 * sending level (pays rate tokens); lender: it is that level. The caller
 * keeps the batch in the class's units (htb_class_commit). */
HTB_INLINE void htb_batch_add(struct htb_class_batch *a, const struct htb_cost *k,
			      int rate, int lender)
{
	if (rate) {
		a->r += k->rate_cost;
		a->lends += !!lender;
	} else {
		a->borrows++;
		if (k->blimit)
			a->b += k->borrow_cost >> k->bshift;
	}
	a->c += k->ceil_cost;
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
	struct htb_class_batch a = { .rshift = c->rate.shift, .cshift = c->ceil.shift };

	htb_batch_add(&a, k, rate, lender);
	if (k->blimit && !rate)
		a.b = htb_carry_ns(k->borrow_cost, k->bshift, &st->bcarry);
	htb_apply(c, st, now, &a, k, hyst);
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
	if (!a || !(a->packets || (ok && !htb_batch_due(c, k->rate_cost, k->ceil_cost, k->borrow_cost >> k->bshift))))
		return -1;
	if (!a->packets) {
		a->rshift = c->rate.shift;
		a->cshift = c->ceil.shift;
	} else {
		htb_batch_fold(a);	/* bytes so far: costs from here */
		if (a->rshift != c->rate.shift || a->cshift != c->ceil.shift)
			htb_batch_rescale(c, a);	/* a reload changed the rate */
	}
	htb_batch_add(a, k, rate, lender);
	return ok && a->packets < HTB_BATCH_PKTS && !htb_batch_due(c, a->r, a->c, a->b);
}

/* Whether a packet charged to rate and ceil may go into this CPU's batch
 * as bytes (htb_batch_take_lin): the class is linear (batch_lin), batches,
 * and its batch holds no summed costs (a borrowing packet's, say) and no
 * bytes of another generation (htb_batch_rprod). */
HTB_INLINE int htb_batch_bytes_ok(const struct htb_class_conf *c,
				  const struct htb_class_batch *a,
				  const struct htb_params *p)
{
	return c->batch_lin && !a->c && (!a->packets || (a->lin && a->b == p->gen));
}

HTB_INLINE int htb_batch_linear(const struct htb_class_conf *c,
				const struct htb_class_batch *a,
				const struct htb_params *p)
{
	return a && htb_batchable(c, p) && htb_batch_bytes_ok(c, a, p);
}

/* htb_batch_take for such a packet, with the same returns: its length
 * adjusted (the overhead) into the byte sum, due at batch_lin bytes, which
 * is where its costs would be due (the batch's layout: htb_batch_rprod). Neither cost is computed: a packet's
 * two l2t products, its cost struct and the due checks of both were 8 of
 * the 20 ns two ancestors took (docs/log.md, "2026-12-03: Calls on the
 * fast path"). */
HTB_INLINE void htb_batch_lin_start(const struct htb_class_conf *c,
				   struct htb_class_batch *a, __u32 gen)
{
	a->r = (__u64)c->rate.mult << 32 | c->ceil.mult;
	a->rshift = c->rate.shift;
	a->cshift = c->ceil.shift;
	a->b = gen;
}

/* packets packets of bytes bytes, lin length-adjusted, into a's byte sum
 * (of generation gen); 1 while the batch keeps waiting, 0 once due */
HTB_INLINE int htb_batch_add_lin(const struct htb_class_conf *c,
				 struct htb_class_batch *a, __u32 gen, __u32 lin,
				 __u64 bytes, __u32 packets)
{
	if (!a->packets)
		htb_batch_lin_start(c, a, gen);
	a->lin += lin;
	a->bytes += bytes;
	a->packets += packets;
	return a->packets < HTB_BATCH_PKTS && a->lin < c->batch_lin;
}

HTB_INLINE int htb_batch_take_lin(const struct htb_class_conf *c,
				  struct htb_class_batch *a,
				  const struct htb_params *p, __u32 len, int lender)
{
	__u32 adj = len + (__u32)c->rate.overhead;

	if (!a->packets && adj >= c->batch_lin)
		return -1;	/* due alone: charged by itself */
	a->lends += !!lender;
	return htb_batch_add_lin(c, a, p->gen, adj, len, 1);
}

/* A path carry's lump as a batch of bytes for ancestor c (linear), in
 * c's units: what htb_carry_into adds to c's batch or applies. */
HTB_INLINE void htb_carry_batch(const struct htb_class_conf *c,
				const struct htb_path_carry *lump, __u32 gen,
				struct htb_class_batch *b)
{
	__builtin_memset(b, 0, sizeof(*b));
	htb_batch_lin_start(c, b, gen);
	b->lin = (__u32)lump->bytes + lump->packets * (__u32)c->rate.overhead;
	b->bytes = lump->bytes;
	b->packets = lump->packets;
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

#endif /* HTB_BATCH_H */
