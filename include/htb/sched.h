/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The departure-time algorithm: HTB's token state and charge rules turned
 * into an EDT stamp, per packet, along the path from a leaf to the root.
 * include/htb/ is the one place the algorithm lives, one header per
 * concern (env.h, bucket.h, batch.h, codel.h, flows.h; this one the steps
 * along the path); it is compiled into the BPF program (bpf/htbctl.bpf.c)
 * and into the userspace tests and simulations (tests/unit/test_sched.c),
 * so both run the same code.
 *
 * How it works and why is docs/design.md, under "Datapath": "Departure
 * times" (buckets, where t_c lives, readiness, levels, charge, limit),
 * "Concurrency" (steps 1, 2a and 2b below), "Batches", "AQM", "Sparse
 * flows", and "Program size" (why the per-class steps are global
 * subprograms). What the includer provides: htb/env.h.
 */
#ifndef HTB_SCHED_H
#define HTB_SCHED_H

#include "htb/env.h"
#include "htb/bucket.h"
#include "htb/batch.h"
#include "htb/codel.h"
#include "htb/flows.h"

/*
 * Per-class steps as separate functions. In BPF they are global
 * subprograms (HTB_SUBPROG): the verifier checks each once, on its own,
 * with unknown arguments, instead of once per path through the walk up
 * the tree. Inlined, the walk's branches (caps, clamps, modes, levels)
 * multiply into most of the verifier's 1,000,000-instruction limit; as
 * subprograms the program needs a small fraction of it (the counts, and
 * how to measure them: docs/design.md, "Program size"). In userspace
 * they are plain static inline functions: the same code (HTB_SUBPROG is
 * defined in htb/env.h).
 */

/* One class seen unlocked at now (step 1). */
struct htb_ready {
	__u64 ceil_at;		/* when the ceil bucket is at its lowater */
	__u64 rate_at;		/* when the rate bucket is at its hiwater */
	__u64 borrow_at;	/* when the borrow bucket is at 0 (now if no borrow limit) */
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
#define HTB_JOB_CARRY_DUE	4u	/* this CPU's path carry is due (htb_carry_flush) */

/* One class's entries, looked up once for a step: the verifier inlines
 * the lookups of array maps, but clang cannot tell that two lookups of
 * one key return one entry. The borrow limit is read by the step that
 * needs it (a packet that lends within its rate does not). */
struct htb_one {
	const struct htb_class_conf *c;
	struct htb_class_state *st;
	struct htb_class_batch *a;	/* NULL: no batches */
};

HTB_INLINE int htb_one_of(struct htb_env *env, __u32 idx, struct htb_one *x)
{
	x->c = HTB_ENV_CONF(env, idx);
	x->st = HTB_ENV_STATE(env, idx);
	if (!x->c || !x->st)
		return -1;
	x->a = HTB_ENV_BATCH(env, idx);
	return 0;
}

/* A class's rate and ceil buckets diff ns after t_c, less what this CPU
 * charged and has not applied yet, with the carries: what applying its
 * batch would leave. */
/* What x's pending batch costs, taken off its filled buckets. */
HTB_INLINE void htb_batch_debit(const struct htb_one *x, __s64 *toks, __s64 *ctoks)
{
	const struct htb_class_conf *c = x->c;
	const struct htb_class_batch *a = x->a;
	const struct htb_class_state *st = x->st;

	if (a && a->packets) {
		__u64 rc = st->rcarry, cc = st->ccarry;

		*toks -= (__s64)htb_carry_ns(htb_batch_rcost(c, a), c->rate.shift, &rc);
		*ctoks -= (__s64)htb_carry_ns(htb_batch_ccost(c, a), c->ceil.shift, &cc);
	}
}

HTB_INLINE void htb_toks_at_now(const struct htb_one *x, __s64 diff,
				__s64 *toks, __s64 *ctoks)
{
	*toks = htb_fill(x->st->tokens, diff, x->c->buffer);
	*ctoks = htb_fill(x->st->ctokens, diff, x->c->cbuffer);
	htb_batch_debit(x, toks, ctoks);
}

HTB_INLINE void htb_ready_from(const struct htb_one *x, const struct htb_blimit *bl,
			       const struct htb_params *p,
			       struct htb_ready *out)
{
	const struct htb_class_conf *c = x->c;
	const struct htb_class_batch *a = x->a;
	const struct htb_class_state *st = x->st;
	__s64 diff, toks, ctoks, btoks;
	__u32 mode;

	diff = htb_diff(st->t_c, p->now);
	mode = st->mode;
	htb_toks_at_now(x, diff, &toks, &ctoks);
	btoks = htb_fill(st->btokens, diff, bl->bbuffer);
	if (a && a->packets)
		btoks -= (__s64)htb_batch_bns(a);
	out->ceil_at = htb_ready(p->now, ctoks, htb_lowater(c, mode, p->hysteresis));
	out->rate_at = htb_ready(p->now, toks, htb_hiwater(c, mode, p->hysteresis));
	out->borrow_at = p->now;
	if (bl->word && !HTB_SHARE_MULT(bl->word))
		out->borrow_at = ~0ull;		/* the loop gives it nothing to borrow */
	else if (bl->word)
		out->borrow_at = htb_ready(p->now, btoks, 0);
	out->last_stamp = st->last_stamp;
}

HTB_INLINE int htb_ready_of(struct htb_env *env, const struct htb_params *p,
			    __u32 idx, struct htb_ready *out)
{
	struct htb_blimit bl;
	struct htb_one x;

	if (!env || !p || !out || htb_one_of(env, idx, &x))
		return -1;
	htb_blimit_of(env, p, idx, &bl);
	htb_ready_from(&x, &bl, p, out);
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
	htb_apply(c, st, p->now, &due, k, p->hysteresis);
}

/* The locked part of a charge made without the lock (the leaf's within
 * its rate, htb_leaf_try_unlocked, and an ancestor's, htb_class_commit):
 * this CPU's batch when it came due with the packet (take 0), or the
 * packet's charge by itself (take < 0: no batches, or the packet alone is
 * due). k: the packet's costs for class c. */
HTB_INLINE int htb_settle(struct htb_env *env, const struct htb_params *p,
			  const struct htb_job *j, const struct htb_class_conf *c,
			  struct htb_class_batch *a, const struct htb_cost *k, int take)
{
	struct htb_class_state *st = HTB_ENV_STATE(env, j->idx);
	struct htb_class_batch due;

	if (!st)
		return -1;
	if (take == 0 && a) {
		htb_batch_out(a, &due);
		HTB_LOCK(st);
		htb_apply(c, st, p->now, &due, k, p->hysteresis);
		HTB_UNLOCK(st);
		return 0;
	}
	HTB_LOCK(st);
	htb_charge(c, st, p->now, k, j->below <= 0, j->below == 0, p->hysteresis);
	HTB_UNLOCK(st);
	return 0;
}

/* htb_settle as a subprogram of its own, for the fast path: called for at
 * most one packet in HTB_BATCH_PKTS there, and inlined into it its stack
 * and lock paths came with every packet (the program's three-call stack
 * then passed BPF's 512 bytes). */
HTB_SUBPROG int htb_class_settle(struct htb_env *env, const struct htb_params *p,
				 const struct htb_job *j, int take)
{
	const struct htb_class_conf *c;
	struct htb_blimit bl;
	struct htb_cost k;

	if (!env || !p || !j)
		return -1;
	c = HTB_ENV_CONF(env, j->idx);
	if (!c)
		return -1;
	htb_blimit_of(env, p, j->idx, &bl);
	htb_cost_of(c, &bl, j->len, &k);
	return htb_settle(env, p, j, c, HTB_ENV_BATCH(env, j->idx), &k, take);
}

/* Step 2b, one ancestor: the packet's costs into this CPU's batch, which
 * goes to the shared state under the class's lock when it is due
 * (docs/design.md, "Batches"); at once when there are no batches or the
 * packet alone is due. call: that part through htb_class_settle (the fast
 * path), else inline (after the leaf's locked step, where a class that
 * cannot batch, e.g. one borrowing below its burst, needs it every time:
 * a call a level there was 75 -> 88 ns a borrowing level, bench "depth"). */
HTB_INLINE int htb_class_commit(struct htb_env *env, const struct htb_params *p,
				const struct htb_job *j, const int call)
{
	const struct htb_class_conf *c;
	struct htb_class_batch *a;
	struct htb_blimit bl;
	struct htb_cost k;
	int take;

	c = HTB_ENV_CONF(env, j->idx);
	if (!c)
		return -1;
	a = HTB_ENV_BATCH(env, j->idx);
	/* On the fast path, below the lender (rate and ceil), a linear class
	 * sums bytes. Not after the locked step: there the branch per level
	 * took the verifier from 88k to 108k instructions (6.18), for packets
	 * that queue or borrow. */
	if (call && j->below < 0 && htb_batch_linear(c, a, p)) {
		take = htb_batch_take_lin(c, a, p, j->len, 0);
		return take > 0 ? 0 : htb_class_settle(env, p, j, take);
	}
	htb_blimit_of(env, p, j->idx, &bl);
	htb_cost_of(c, &bl, j->len, &k);
	take = htb_batch_take(c, a, &k, j->below <= 0, j->below == 0,
			      a && htb_batchable(c, p));
	if (take > 0)
		return 0;	/* the shared state not even looked up */
	if (call)
		return htb_class_settle(env, p, j, take);
	return htb_settle(env, p, j, c, a, &k, take);
}

/* Step 2b for every ancestor of the leaf j->idx (j->below: the leaf's
 * level); j is left at the last class charged (the callers read only its
 * T, flags and vfinish after). call: as htb_class_commit's. Inlined into the leaf's step (htb_leaf_first) and called as a
 * subprogram of its own after the locked one (htb_path_charge): a call's
 * return costs more than a level's batch add where returns are mitigated
 * (docs/log.md, "2026-12-03: Calls on the fast path"). */
HTB_INLINE int htb_path_commit(struct htb_env *env, const struct htb_params *p,
			       struct htb_job *j, const struct htb_class_conf *leaf,
			       const int call)
{
	__u32 k, depth = leaf->depth;

	for (k = 1; k < HTB_MAX_DEPTH; k++) {
		if (k >= depth)
			break;
		j->idx = leaf->path[k];
		j->below--;
		if (htb_class_commit(env, p, j, call))
			return -1;	/* a broken path ends here */
	}
	return 0;
}

HTB_SUBPROG int htb_path_charge(struct htb_env *env, const struct htb_params *p,
				struct htb_job *j)
{
	const struct htb_class_conf *leaf;

	if (!env || !p || !j)
		return -1;
	leaf = HTB_ENV_CONF(env, j->idx);
	if (!leaf)
		return -1;
	return htb_path_commit(env, p, j, leaf, 0);
}

/*
 * The path carry (struct htb_path_carry; docs/design.md, "Batches"). A
 * leaf's packet within its rate, charged without the lock, leaves its
 * ancestors' charge in this CPU's carry: one add, where charging each
 * ancestor's batch took two lookups and the batch's checks a level (9-12
 * of the 73-78 ns of a depth-3 leaf within its rate, bench --only steps).
 */

/* One ancestor's share of the carry lump, priced by the conf of the tree
 * its packets were sent in: into this CPU's batch of the class when that
 * sums bytes of the same tree, else applied at once (a batch of costs,
 * hysteresis switched on, a reload since). */
HTB_SUBPROG int htb_carry_into(struct htb_env *env, const struct htb_params *p,
			       __u32 idx, const struct htb_path_carry *lump)
{
	const struct htb_class_conf *c;
	struct htb_class_state *st;
	struct htb_class_batch *a, due;
	struct htb_blimit bl;
	struct htb_cost k;

	if (!env || !p || !lump)
		return -1;
	c = HTB_ENV_CONF_AT(env, idx, lump->gen);
	st = HTB_ENV_STATE(env, idx);
	a = HTB_ENV_BATCH(env, idx);
	if (!c || !st)
		return -1;
	htb_carry_batch(c, lump, lump->gen, &due);
	if (lump->gen == p->gen && a && htb_batch_linear(c, a, p)) {
		if (htb_batch_add_lin(c, a, p->gen, due.lin, due.bytes, due.packets))
			return 0;
		htb_batch_out(a, &due);
	}
	htb_blimit_of(env, p, idx, &bl);
	htb_cost_of(c, &bl, 0, &k);
	HTB_LOCK(st);
	htb_apply(c, st, p->now, &due, &k, p->hysteresis);
	HTB_UNLOCK(st);
	return 0;
}

/* This CPU's carry into its leaf's ancestors, the carry left empty: when
 * it is due, before a walk reads the ancestors (so one CPU decides on
 * exactly what it charged, as with batches alone), and at this CPU's
 * first packet after a reload (the path and prices are those of the
 * carried packets' tree, still whole until the next reload). */
HTB_SUBPROG int htb_carry_flush(struct htb_env *env, const struct htb_params *p)
{
	struct htb_path_carry *cy, lump;
	const struct htb_class_conf *leaf;
	__u32 k, depth;

	if (!env || !p)
		return -1;
	cy = HTB_ENV_CARRY(env);
	if (!cy || !cy->packets)
		return 0;
	lump = *cy;
	cy->packets = 0;
	cy->bytes = 0;
	leaf = HTB_ENV_CONF_AT(env, lump.leaf, lump.gen);
	if (!leaf)
		return -1;
	depth = leaf->depth;
	for (k = 1; k < HTB_MAX_DEPTH; k++) {
		if (k >= depth)
			break;
		htb_carry_into(env, p, leaf->path[k], &lump);
	}
	return 0;
}

/* The leaf's packet j (within its rate, charged without the lock) into
 * the carry: 1 when its ancestors' charge is there (HTB_JOB_CARRY_DUE set
 * when the carry is due: flushed by htb_schedule, whose stack the flush's
 * adds less to than the leaf's step), 0 when the caller charges them (the
 * carry holds another leaf's, or the leaf cannot carry: hysteresis on, a
 * path not linear). */
HTB_INLINE int htb_carry_add(struct htb_env *env, const struct htb_params *p,
			     struct htb_job *j, const struct htb_class_conf *leaf)
{
	struct htb_path_carry *cy;

	if (!(leaf->flags & HTB_CONF_CARRY) || p->hysteresis)
		return 0;
	cy = HTB_ENV_CARRY(env);
	if (!cy)
		return 0;
	if (cy->packets && cy->gen != p->gen) {
		j->flags |= HTB_JOB_CARRY_DUE;	/* a reload since: flushed now */
		return 0;
	}
	if (cy->packets && cy->leaf != j->idx)
		return 0;
	cy->leaf = j->idx;
	cy->gen = p->gen;
	cy->bytes += j->len;
	cy->packets++;
	if (cy->packets >= HTB_BATCH_PKTS ||
	    cy->bytes + (__u64)cy->packets * (__u32)leaf->rate.overhead >= leaf->carry_due)
		j->flags |= HTB_JOB_CARRY_DUE;
	return 1;
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
				     struct htb_job *j, const struct htb_one *x)
{
	const struct htb_class_conf *c = x->c;
	struct htb_class_state *st = x->st;
	struct htb_class_batch *a = x->a;
	struct htb_flow *fl = (void *)0;
	struct htb_blimit bl;
	struct htb_cost k;
	__u64 limit, fl_last = 0, end = 0, vf = 0;
	int flows, take;

	if (!a || !htb_batchable(c, p))
		return -1;
	limit = c->limit_ns ? c->limit_ns : HTB_DEFAULT_LIMIT_NS;
	/* A packet that leaves now needs no flow state: no packet of its flow
	 * waits (the class's last_stamp, checked below, is at least every
	 * flow's queued stamp), and its stamp is no floor for the next. Its
	 * flow is then new or as it was when the class next queues, as a flow
	 * with an empty queue is to fq_codel. Not looking it up is 25 of the
	 * 60 ns of a defaults leaf within its rate (bench --only steps;
	 * docs/log.md, "2026-12-03: Where a packet's nanoseconds go"). */
	flows = (c->flags & HTB_CONF_FLOWS) && HTB_ENV_HAS_FLOWS(env) && j->T > p->now;
	if (flows) {
		fl = HTB_ENV_FLOW(env, j->idx, p->flow_hash);
		if (fl) {
			fl_last = HTB_LOAD_ONCE(fl->last_stamp);
			vf = HTB_LOAD_ONCE(fl->vfinish);
		}
		end = htb_flow_end(fl, p->now, htb_l2t_prod(&c->rate, j->len) >> c->rate.shift);
	}
	if (!htb_leaf_unlocked(c, st, p, j, fl_last, limit, 1))
		return -1;
	j->flags = fl || !flows ? 0 : HTB_JOB_FLOW_NEW;
	if (htb_batch_bytes_ok(c, a, p)) {	/* a batches: checked above */
		take = htb_batch_take_lin(c, a, p, j->len, 1);
	} else {
		htb_blimit_of(env, p, j->idx, &bl);
		htb_cost_of(c, &bl, j->len, &k);
		take = htb_batch_take(c, a, &k, 1, 1, 1);
	}
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
	if (take <= 0)	/* the batch due, or the packet by itself */
		htb_class_settle(env, p, j, take);
	return HTB_SEND;
}

/* Whether the leaf lends at own_ts (>= now), as its snapshot would say
 * (htb_ready_from: ceil_at, rate_at and last_stamp not after own_ts),
 * for the case whose packets may skip the lock, hysteresis off
 * (htb_batchable): both buckets, less this CPU's batch, reach 0 by
 * own_ts. Without the borrow bucket or a snapshot written. */
HTB_INLINE int htb_leaf_lends_at(const struct htb_one *x, const struct htb_params *p,
				 __u64 own_ts)
{
	const struct htb_class_batch *a = x->a;
	const struct htb_class_conf *c = x->c;
	const struct htb_class_state *st = x->st;
	__s64 toks, ctoks, diff, ahead = (__s64)(own_ts - p->now);

	if (p->hysteresis || st->last_stamp > own_ts)
		return 0;
	diff = htb_diff(st->t_c, p->now);
	toks = htb_fill(st->tokens, diff, c->buffer) + ahead;
	ctoks = htb_fill(st->ctokens, diff, c->cbuffer) + ahead;
	/* A batch of bytes of this tree below batch_lin costs under
	 * HTB_BATCH_NS of either bucket (at most that with the carries):
	 * buckets holding that much need not price it. Its two products and
	 * carries were about 1 of the leaf's 12-13 ns (bench --only steps). */
	if (toks >= (__s64)HTB_BATCH_NS && ctoks >= (__s64)HTB_BATCH_NS &&
	    (!a || !a->packets || (a->lin && a->b == p->gen && a->lin < c->batch_lin)))
		return 1;
	htb_batch_debit(x, &toks, &ctoks);
	return toks >= 0 && ctoks >= 0;
}

/* The leaf's borrow bucket at the limit now in force, once per change of
 * the limit (htb_btokens_at; the bucket is as of t_c). */
HTB_INLINE void htb_leaf_rebase(const struct htb_one *x, const struct htb_blimit *bl)
{
	struct htb_class_state *st = x->st;

	if (!bl->word || HTB_LOAD_ONCE(st->brate) == bl->rate)
		return;
	HTB_LOCK(st);
	st->btokens = htb_btokens_at(st->btokens, htb_ahead(st, st->t_c), st->brate, bl->rate);
	st->brate = bl->rate;
	HTB_UNLOCK(st);
}

/* Steps 1 and 2a for the leaf in one call, the common case: its snapshot
 * into *r, and when it lends at the packet's own time the unlocked charge
 * (HTB_SEND, j->T set). Else -1: the walk goes on from *r (or
 * HTB_UNSHAPED for a broken leaf). leaf: the conf the caller classified
 * by (j->idx's), passed rather than looked up again: 1-2 ns of the leaf's
 * step (docs/log.md, "2026-12-05: The leaf's step, 1.5x"). */
HTB_SUBPROG int htb_leaf_first(struct htb_env *env, const struct htb_params *p,
			      const struct htb_class_conf *leaf,
			      struct htb_job *j, struct htb_ready *r)
{
	struct htb_blimit bl;
	struct htb_one x = { .c = leaf };

	if (!env || !p || !leaf || !j || !r)
		return HTB_UNSHAPED;
	x.st = HTB_ENV_STATE(env, j->idx);
	if (!x.st)
		return HTB_UNSHAPED;
	x.a = HTB_ENV_BATCH(env, j->idx);
	if (htb_leaf_lends_at(&x, p, j->own_ts)) {
		j->T = j->own_ts;
		j->below = 0;
		if (htb_leaf_try_unlocked(env, p, j, &x) == HTB_SEND) {
			if (!htb_carry_add(env, p, j, x.c))
				htb_path_commit(env, p, j, x.c, 1);
			return HTB_SEND;
		}
	}
	htb_blimit_of(env, p, j->idx, &bl);
	htb_leaf_rebase(&x, &bl);
	htb_ready_from(&x, &bl, p, r);
	return -1;
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
		lane = (k.rate_cost >> c->rate.shift) << HTB_SPARSE_SHIFT;
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
	if (flows && T > p->now)	/* queued unless it leaves at its own time */
		j->vfinish = htb_flow_update(fl, T, end, T > j->own_ts);
	else	/* leaves now: no flow state, as without the lock */
		j->flags &= ~HTB_JOB_FLOW_NEW;
	HTB_RAISE(&st->last_stamp, T);
	if (T > j->own_ts)
		st->shaped_until = T;
	htb_leaf_charge(c, st, a, p, &k, j->below <= 0, j->below == 0);
	HTB_UNLOCK(st);
	j->T = T;
	return sig ? HTB_SEND_CE : HTB_SEND;
}

/*
 * Schedule one packet of len bytes (wire length) for the leaf whose conf
 * is leaf, with incoming stamp in_ts (0: none). Fills d; returns an
 * enum htb_verdict. Charges the path on HTB_SEND and HTB_SEND_CE only.
 * leaf must be the env's own entry, HTB_ENV_CONF(env, leaf->path[0]):
 * the leaf's step reads it, the locked steps look it up again.
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
	verdict = htb_leaf_first(env, p, leaf, &j, &r);
	if (verdict == HTB_UNSHAPED)
		return HTB_UNSHAPED;
	if (verdict == HTB_SEND) {
		d->tstamp = j.T;
		d->flow_new = !!(j.flags & HTB_JOB_FLOW_NEW);
		d->vfinish = j.vfinish;
		if (j.flags & HTB_JOB_CARRY_DUE)
			htb_carry_flush(env, p);
		return HTB_SEND;	/* the ancestors charged or carried */
	}

	/* 1. Decide T and the level from an unlocked snapshot (the leaf's is
	 * in r already), with this CPU's carry in the ancestors' batches. */
	htb_carry_flush(env, p);
	for (k = 0; k < HTB_MAX_DEPTH; k++) {
		if (k >= depth)
			break;
		if (k > 0 && htb_class_ready(env, p, leaf->path[k], &r)) {
			depth = k;	/* a broken path ends here */
			break;
		}
		if (k == 0 && r.last_stamp > floor)
			floor = r.last_stamp;
		cmax = HTB_MAX(cmax, r.ceil_at);
		Tk = HTB_MAX(cmax, bmax);
		Tk = HTB_MAX(Tk, r.rate_at);
		if (Tk <= floor) {
			level = k;
			found = 1;
			break;
		}
		if (Tk < best) {
			best = Tk;
			level = k;
		}
		bmax = HTB_MAX(bmax, r.borrow_at);
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
	if (depth > 1)
		htb_path_charge(env, p, &j);
	return verdict;
}

#endif /* HTB_SCHED_H */
