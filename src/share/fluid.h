/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HTB's fluid ideal (issue 11): the steady-state rate every class of a
 * tree gets for a set of offered rates, as kernel HTB shares a parent's
 * spare bandwidth. `htbctl simulate` prints it; the daemon's sharing loop
 * calls fluid_solve() every 10 ms with measured demands, so the API below
 * is a contract between the two (fields may only be added at the end).
 *
 * Plain arrays, no config/config.h: the caller fills one fluid_node per class.
 *
 * The rules (docs/design.md, "The fluid ideal"):
 * 1. Every leaf gets own = min(demand, rate, ceil): a class within its
 *    rate is never delayed by sharing.
 * 2. Inner classes lend, deepest first (HTB serves lower levels first, so
 *    a leaf borrows from its nearest ancestor with spare first); at one
 *    depth in preorder (index order when the nodes are in preorder, as
 *    a config's classes are). A lender P lends
 *      budget = max(0, min(min(rate_P, ceil_P) - used(P),
 *                          ceil_A - used(A) for every ancestor A))
 *    where used(X) is what the leaves under X got so far (HTB charges P's
 *    rate bucket with everything its subtree sends, unless it borrowed
 *    from above P, which has not happened yet when P lends).
 * 3. The budget goes to the leaves under P that want more
 *    (want = min(demand, ceil) - got) strictly by prio, 0 first; within
 *    one prio weighted max-min by quantum, each leaf capped by its want
 *    and by every class X strictly between it and P (what X's leaves got
 *    stays within ceil_X). What a capped leaf or group cannot use goes to
 *    the others, so the budget is used whenever someone can take it.
 * Results are whole bytes/s, each within 1 byte/s of the exact rational
 * answer, and a lender's total is exact; the same input gives the same
 * output.
 *
 * Cost: linear expected (a weighted selection per lender and capping
 * class, no sort), O(n log n) worst case, memory for ~200 bytes a node
 * kept in the scratch. Measured on the project's 2-CPU VM with other
 * work running (best of 5, every leaf backlogged; docs/log.md,
 * "2026-12-01: The fluid ideal's cost"): 1,000
 * classes 0.05 ms, 10,000 0.5-0.65 ms, 100,000 7-9 ms as 1,000 inner
 * classes of 100 leaves, 10.5-13 ms under one more top class. At 100,000
 * the cost is memory traffic: reading and writing the nodes alone takes
 * 2.5-3 ms there.
 */
#ifndef HTBCTL_FLUID_H
#define HTBCTL_FLUID_H

#include <linux/types.h>

#include "htb/types.h"

#define FLUID_NONE	0xffffffffu	/* no parent */
#define FLUID_INF	(~0ull)		/* demand: takes all it can get (backlogged) */

enum fluid_limit {	/* what stops a leaf getting more */
	FLUID_IDLE = 0,		/* offers nothing */
	FLUID_DEMAND,		/* gets all it offers */
	FLUID_CEIL,		/* its own ceil */
	FLUID_ANCESTOR_CEIL,	/* an ancestor's ceil (limiter = that class) */
	FLUID_SPARE,		/* wants more; no lender has spare left for it */
};

struct fluid_node {
	/* in */
	__u32 parent;	/* index of the parent, FLUID_NONE at top level; a
			 * parent's index is below its children's */
	__u8 leaf;	/* 1: a leaf (only leaves offer and get prio/quantum) */
	__u8 prio;	/* 0..7, leaves */
	__u16 pad;
	__u32 quantum;	/* bytes, > 0, leaves: weight within a prio */
	__u64 rate, ceil;	/* bytes/s; ceil may be below rate (tc accepts
				 * it): a leaf's own share is then capped by
				 * ceil, an inner class lends min(rate, ceil) */
	__u64 demand;	/* bytes/s offered (leaves only; FLUID_INF allowed) */
	/* out */
	__u64 got;	/* bytes/s: a leaf's share; an inner class: its subtree's total */
	__u64 own;	/* part sent on its own rate: min(got, rate) for a leaf;
			 * an inner class: what its subtree sent charged to
			 * its rate (got less what was borrowed from above it) */
	__u64 borrowed[HTB_MAX_DEPTH];	/* leaf: bytes/s lent by the ancestor
					 * k levels up (k=1 parent ...); [0] unused */
	__u64 lent;	/* inner: bytes/s of its spare it lent to descendants */
	__u32 limit;	/* enum fluid_limit (leaves) */
	__u32 limiter;	/* FLUID_ANCESTOR_CEIL: index of the class whose ceil
			 * binds (the one that held it below the others in a
			 * fill, else the nearest full one on its path, when
			 * an ancestor still has rate to lend); else FLUID_NONE */
};

/* Opaque, reused across calls so the 10 ms loop allocates nothing. */
struct fluid_scratch;

/*
 * Fills the out fields of n[0..count). *scratch may be NULL at first; it
 * is (re)allocated as needed and must be freed with fluid_scratch_free.
 * Returns 0, or -1 with errno ENOMEM, or EINVAL for bad input (a parent
 * index not below its child's, a leaf with children, a leaf with quantum
 * 0 or prio above 7, a tree deeper than HTB_MAX_DEPTH): the out fields
 * are then unspecified.
 */
int fluid_solve(struct fluid_node *n, __u32 count, struct fluid_scratch **scratch);
void fluid_scratch_free(struct fluid_scratch *s);

#endif /* HTBCTL_FLUID_H */
