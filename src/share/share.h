/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sharing loop: spare bandwidth by prio and quantum (docs/design.md,
 * "Sharing spare bandwidth"). Every SHARE_TICK_NS it reads the bytes and
 * backlog of the classes that sent, estimates what each active leaf
 * offers, asks the fluid ideal (src/share/fluid.h) what each should get,
 * and gives it a borrow limit of what it should borrow (struct
 * htb_class_share). The program enforces the limits while the loop's
 * lease runs.
 *
 * The active set: a leaf joins when its bytes change, and leaves when it
 * offers nothing any more (not backlogged, its estimate below 1 B/s), with
 * its limit stored as that of a leaf that offers nothing. The fluid ideal
 * is solved over the active leaves and their ancestors only: a leaf that
 * offers nothing gets nothing and takes nothing from any lender, so every
 * other leaf's share is the same as over the whole tree. A tick's work is
 * then in proportion to the active leaves, not to the tree (docs/log.md,
 * "2026-12-06: The sharing loop's tick, proportional to the active
 * classes").
 *
 * This part is pure: arrays in, arrays out, so the unit tests run it
 * beside the departure-time code on a simulated clock
 * (tests/unit/test_share.c). src/daemon/share_run.c runs it on the pinned
 * maps inside `htbctl daemon`.
 */
#ifndef HTBCTL_SHARE_H
#define HTBCTL_SHARE_H

#include <stdbool.h>
#include "htb/types.h"
#include "share/fluid.h"

#define SHARE_MS		1000000ull
#define SHARE_TICK_NS		(10 * SHARE_MS)
/* A tick that costs more than a third of SHARE_TICK_NS stretches the
 * period to three times its cost (the loop takes at most a third of a
 * CPU), up to this: at 100,000 classes with every leaf active a tick
 * costs about 10 ms here, with 1,000 active under 2 ms (bench/bench_share.c;
 * docs/log.md, "2026-12-06: The sharing loop's tick, proportional
 * to the active classes"). */
#define SHARE_TICK_MAX_NS	(100 * SHARE_MS)
/* A loop that has not run for this long no longer counts: borrowing is
 * first come, first served again (10 periods when the period is
 * stretched). Not shorter: in the VM the daemon went up to 164 ms without
 * a tick on a quiet host, and on a busy CI host a 200 ms lease ran out
 * often enough to give scenario 7's class C 13% over its share. Stale
 * limits only ever hold borrowing back, for this long at most. */
#define SHARE_LEASE_NS		(1000 * SHARE_MS)
/* Time constant of the offered-rate estimate of a class that is not
 * backlogged: it decides how fast a class that stops sending gives its
 * share back (about 3 x this to 5%). */
#define SHARE_TAU_NS		(30 * SHARE_MS)
/* Size of each borrow bucket: enough for a tick's jitter in the sender,
 * small enough that a class over its share is caught within it. */
#define SHARE_BBUFFER_NS	(5 * SHARE_MS)
/* A class that sends all it has may grow this much before it is shaped
 * (and so counted as backlogged, wanting all it can get): its limit is
 * its estimate x 5/4, plus SHARE_HEADROOM_BPS. */
#define SHARE_HEADROOM_BPS	12500ull	/* 100 kbit/s */
/* A class whose queue ran this far ahead of the clock at a tick still
 * counts as backlogged for SHARE_HOLD_NS after: a flood's sender that
 * stalls for a moment (a busy CPU; measured in the VM, scenario 9 (f):
 * shares swinging +-25% over 200-300 ms without it) does not flip between
 * wanting everything and its last estimate, which would hand it the 5/4
 * headroom on top of its share. A class that is only now and then held
 * back a little (a bursty sender below its share, TCP's few packets in
 * flight) is not held: it would keep a share it does not use. */
#define SHARE_DEEP_NS		(10 * SHARE_MS)
#define SHARE_HOLD_NS		(50 * SHARE_MS)

struct share_loop {
	__u32 cap;			/* class slots */
	__u32 n;			/* classes (fluid nodes), parents first */
	__u32 hw;			/* highest class slot + 1: the state to read */
	__u32 borrowers;		/* leaves under a parent with ceil above rate */
	struct fluid_node *node;
	__u32 *slot;			/* node -> class slot */
	__u32 *node_of;			/* class slot -> node, FLUID_NONE */
	__u64 *prev_bytes;		/* per node, at the last tick */
	double *est;			/* per node: offered B/s (not backlogged) */
	bool *backlogged;		/* per node, at the last tick */
	__u64 *hold_until;		/* per node: backlogged until then (SHARE_HOLD_NS) */
	__u64 prev_now;			/* 0: no tick yet */
	__u64 let_go;			/* times a backlogged leaf stopped being so */
	bool fresh;			/* planned anew: write every entry */
	struct fluid_scratch *scratch;
	/* The active set (see above): member[0..nmember), leaves by node. */
	__u32 *member;
	__u32 nmember;
	bool *active;			/* per node: in member[] */
	/* Each tick's subtree: the members and their ancestors, by node in
	 * index order (sub[0..nsub)), as fluid nodes (subnode). */
	__u64 *mark;			/* bit per node: in the subtree */
	__u32 *sub;
	__u32 *sub_of;			/* node -> its index in sub[] */
	__u32 nsub;
	struct fluid_node *subnode;
};

/* The tree in force: conf[slot] of the active generation, cap slots (an
 * entry without HTB_CONF_VALID is no class). Returns 0 or -1 (memory). */
int share_plan(struct share_loop *l, const struct htb_class_conf *conf, __u32 cap);
void share_free(struct share_loop *l);

/* One tick at now: st[slot] what the loop reads of each class (bytes,
 * shaped_until: src/daemon/collect.h gathers it), changed[0..nchanged)
 * the slots whose entry changed since the last tick (they join the active
 * set; the first tick after share_plan takes every leaf), out[slot] where
 * the limits go (each entry stored so the program never sees half of one:
 * share_store). Reads st and writes out of the active leaves only.
 * Returns 0 or -1. */
int share_tick(struct share_loop *l, const struct htb_class_seen *st,
	       const __u32 *changed, __u32 nchanged, __u64 now,
	       struct htb_class_share *out);

/* What bpf/htbctl_collect.bpf.c does, for the model: copies st[i] into
 * seen[i] for each i < n whose bytes changed, listing in changed[] the
 * slots it copied; returns how many. */
__u32 share_seen(const struct htb_class_state *st, __u32 n, struct htb_class_seen *seen,
		 __u32 *changed);

/* The period after a tick that cost cost_ns, and the lease to give. A
 * tree where no leaf can borrow has nothing to share: the loop then only
 * keeps its lease, every SHARE_TICK_MAX_NS (measured in the VM: at 10 ms
 * the daemon's wakeups took enough of the emulated CPU from a 64-byte UDP
 * sender in scenario 1 to cost it 8% of its rate). */
__u64 share_period(const struct share_loop *l, __u64 cost_ns);
__u64 share_lease(__u64 period_ns);

/* The share word for a borrow rate (0: may not borrow). */
__u64 share_word(__u64 borrow_Bps);
/* Writes v into *dst, the word last, with one 8-byte store. */
void share_store(struct htb_class_share *dst, const struct htb_class_share *v);

#endif
