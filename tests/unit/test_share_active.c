// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing loop's active set (src/share/share.h): a leaf joins on the
 * tick after it sent, leaves with its limit released when it offers
 * nothing, and the shares over the active leaves and their ancestors are
 * those of the fluid ideal over the whole tree. The class state is written
 * by hand here (bytes and shaped_until, what the collector reads);
 * test_share.c runs the loop beside the program's code.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "loader/maps_fill.h"
#include "share/share.h"

#define MS	1000000ull
#define SEC	1000000000ull
#define T0	(100 * SEC)
#define MBIT(x)	((__u64)((x) * 1e6 / 8))
#define SITES	10
#define PER	20		/* leaves per site */
#define N	(1 + SITES + SITES * PER)	/* root, sites, leaves */

struct tree {
	struct htb_class_conf conf[N];
	struct htb_class_state st[N];
	struct htb_class_seen seen[N];
	__u32 changed[N];
	struct htb_class_share sh[N];
	struct share_loop loop;
	__u64 now;
};

/* Class i of a root (0), SITES sites (1..SITES) and PER leaves under each
 * (site 1 + (i - 1 - SITES) / PER): rates, ceils, prios and quanta vary,
 * a site's ceil below the sum of its leaves' so that ancestors bind. */
static void class_conf(struct tree *t, __u32 i)
{
	struct htb_class_params p = {
		.classid = 0x10000 | (i + 1), .rate_Bps = MBIT(400), .ceil_Bps = MBIT(400),
		.burst = 15000, .cburst = 15000, .limit_ns = 100 * MS,
	};

	p.path[p.depth++] = i;
	if (i > SITES) {
		p.leaf = true;
		p.path[p.depth++] = 1 + (i - 1 - SITES) / PER;
		/* every fifth below SHARE_HEADROOM_BPS: may borrow while idle */
		p.rate_Bps = i % 5 ? MBIT(1 + i % 3) : MBIT(0.05);
		p.ceil_Bps = MBIT(40 + 20 * (i % 4));
		p.prio = i % 3;
		p.quantum = 1500 * (1 + i % 4);
	} else if (i) {
		p.rate_Bps = MBIT(5 * i);
		p.ceil_Bps = MBIT(40 + 5 * i);
	}
	if (i)
		p.path[p.depth++] = 0;
	cr_assert_eq(htb_conf_from_params(&p, &t->conf[i]), 0);
}

static struct tree *tree_new(void)
{
	struct tree *t = calloc(1, sizeof(*t));

	cr_assert_not_null(t);
	for (__u32 i = 0; i < N; i++)
		class_conf(t, i);
	t->now = T0;
	cr_assert_eq(share_plan(&t->loop, t->conf, N), 0);
	return t;
}

static void tree_free(struct tree *t)
{
	share_free(&t->loop);
	free(t);
}

static __u32 leaf(__u32 site, __u32 k)
{
	return 1 + SITES + site * PER + k;
}

/* Leaf i sends mbit for one tick; backlogged: held back past the tick. */
static void sends(struct tree *t, __u32 i, double mbit, bool backlogged)
{
	t->st[i].bytes += (__u64)(MBIT(mbit) * SHARE_TICK_NS / SEC);
	if (backlogged)
		t->st[i].shaped_until = t->now + SHARE_TICK_NS + 20 * MS;
}

/* One tick SHARE_TICK_NS after the last, on what the collector would list. */
static void tick(struct tree *t)
{
	__u32 nch;

	t->now += SHARE_TICK_NS;
	nch = share_seen(t->st, N, t->seen, t->changed);
	cr_assert_eq(share_tick(&t->loop, t->seen, t->changed, nch, t->now, t->sh), 0);
}

static bool member(const struct tree *t, __u32 slot)
{
	return t->loop.active[t->loop.node_of[slot]];
}

/* The entry of a leaf that offers nothing, as the loop wrote it before it
 * had an active set: demand 0, room to grow of SHARE_HEADROOM_BPS. */
static void expect_idle_entry(const struct tree *t, __u32 i)
{
	__u64 rate = t->conf[i].rate.rate_Bps;
	__u64 borrow = SHARE_HEADROOM_BPS > rate ? SHARE_HEADROOM_BPS - rate : 0;

	cr_expect_eq(t->sh[i].demand_Bps, 0, "slot %u", i);
	cr_expect_eq(t->sh[i].borrow_Bps, borrow, "slot %u", i);
	cr_expect_eq(t->sh[i].borrow_l2t, share_word(borrow), "slot %u", i);
	cr_expect_eq(t->sh[i].bbuffer, (__s64)SHARE_BBUFFER_NS, "slot %u", i);
}

/* The collector's model lists only the slots whose bytes changed, and
 * copies both words of them. */
Test(share_active, the_collector_lists_what_changed)
{
	struct tree *t = tree_new();
	__u32 nch;

	t->st[3].bytes = 10;
	t->st[9].bytes = 20;
	cr_expect_eq(share_seen(t->st, N, t->seen, t->changed), 2);
	cr_expect_eq(t->changed[0], 3);
	cr_expect_eq(t->changed[1], 9);
	cr_expect_eq(share_seen(t->st, N, t->seen, t->changed), 0, "nothing new");
	t->st[9].shaped_until = T0;
	t->st[9].bytes += 1500;
	nch = share_seen(t->st, N, t->seen, t->changed);
	cr_expect_eq(nch, 1);
	cr_expect_eq(t->changed[0], 9);
	cr_expect_eq(t->seen[9].shaped_until, T0);
	cr_expect_eq(t->seen[9].bytes, 1520);
	tree_free(t);
}

/* The first tick writes every entry: the inner classes' cleared, the idle
 * leaves' released. */
Test(share_active, the_first_tick_writes_every_entry)
{
	struct tree *t = tree_new();

	memset(t->sh, 0x5a, sizeof(t->sh));
	tick(t);
	for (__u32 i = 0; i <= SITES; i++)
		cr_expect_eq(t->sh[i].borrow_l2t, 0, "inner slot %u", i);
	for (__u32 i = SITES + 1; i < N; i++)
		expect_idle_entry(t, i);
	cr_expect_eq(t->loop.nmember, 0, "nothing sent, no one active");
	tree_free(t);
}

/* A leaf that sends joins at the next tick, its demand in its entry. */
Test(share_active, a_new_sender_joins_within_a_tick)
{
	struct tree *t = tree_new();
	__u32 a = leaf(2, 3), b = leaf(4, 0);

	tick(t);
	sends(t, a, 5, false);
	sends(t, b, 5, true);
	tick(t);
	cr_expect(member(t, a));
	cr_expect(member(t, b));
	cr_expect_eq(t->loop.nmember, 2);
	cr_expect_gt(t->sh[a].demand_Bps, 0, "its estimate");
	cr_expect_eq(t->sh[b].demand_Bps, FLUID_INF, "backlogged: wants all it can get");
	cr_expect_gt(t->sh[b].borrow_Bps, 0, "its share of the spare");
	tree_free(t);
}

/* A leaf that stops leaves the set once its estimate has decayed, its
 * limit released: the entry of a leaf that offers nothing. */
Test(share_active, a_leaf_that_goes_idle_is_released)
{
	struct tree *t = tree_new();
	__u32 a = leaf(1, 4);
	int k;

	cr_assert_lt(t->conf[a].rate.rate_Bps, SHARE_HEADROOM_BPS,
		     "its idle limit differs from its last one");
	tick(t);
	for (k = 0; k < 20; k++) {
		sends(t, a, 30, true);
		tick(t);
	}
	cr_assert(member(t, a));
	cr_expect_gt(t->sh[a].borrow_Bps, 0);
	for (k = 0; k < 200 && member(t, a); k++)
		tick(t);
	cr_expect(!member(t, a), "still active after %d idle ticks", k);
	cr_expect_gt(k, SHARE_HOLD_NS / SHARE_TICK_NS, "not before its hold ran out");
	expect_idle_entry(t, a);
	cr_expect_eq(t->loop.est[t->loop.node_of[a]], 0);
	cr_expect_eq(t->loop.let_go, 1, "the backlogged leaf let go once");
	/* it comes back: its rate from the bytes since it left */
	sends(t, a, 8, false);
	tick(t);
	cr_expect(member(t, a));
	cr_expect_gt(t->sh[a].demand_Bps, 0);
	cr_expect_lt(t->sh[a].demand_Bps, MBIT(8), "one tick of 8 Mbit/s, smoothed");
	tree_free(t);
}

/* What each member gets is the fluid ideal over the whole tree, with every
 * other leaf offering nothing: the subtree carries the ancestors' rates and
 * ceils and the lenders' order. */
static void expect_whole_tree_shares(const struct tree *t)
{
	const struct share_loop *l = &t->loop;
	struct fluid_node *whole = malloc(l->n * sizeof(*whole));
	struct fluid_scratch *scr = NULL;

	cr_assert_not_null(whole);
	memcpy(whole, l->node, l->n * sizeof(*whole));
	for (__u32 i = 0; i < l->n; i++)
		if (!l->active[i])
			whole[i].demand = 0;
	cr_assert_eq(fluid_solve(whole, l->n, &scr), 0);
	for (__u32 k = 0; k < l->nmember; k++) {
		__u32 i = l->member[k];

		cr_expect_eq(l->node[i].got, whole[i].got, "slot %u: %llu, whole tree %llu",
			     l->slot[i], (unsigned long long)l->node[i].got,
			     (unsigned long long)whole[i].got);
	}
	for (__u32 i = 0; i < l->n; i++)
		if (l->node[i].leaf && !l->active[i])
			cr_expect_eq(whole[i].got, 0, "an idle leaf gets nothing");
	fluid_scratch_free(scr);
	free(whole);
}

/* Few active (the subtree) and most active (the whole tree in place). */
static void shares_as_whole_tree(__u32 every, bool few)
{
	struct tree *t = tree_new();
	__u64 seed = 12345;

	tick(t);
	for (int k = 0; k < 15; k++) {
		for (__u32 i = SITES + 1; i < N; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			if ((seed >> 33) % every == 0)
				sends(t, i, (double)((seed >> 40) % 30 + 1), (seed >> 20) & 1);
		}
		tick(t);
		cr_assert_gt(t->loop.nmember, 0);
		cr_assert_eq(2 * t->loop.nmember < N, few, "%u active", t->loop.nmember);
		expect_whole_tree_shares(t);
	}
	tree_free(t);
}

Test(share_active, few_active_share_as_over_the_whole_tree)
{
	shares_as_whole_tree(32, true);
}

Test(share_active, most_active_share_as_over_the_whole_tree)
{
	shares_as_whole_tree(1, false);
}

/* The ancestors of one active leaf deep in the tree are planned: its share
 * is held by its site's ceil, not by its own. */
Test(share_active, an_active_leafs_ancestors_bind)
{
	struct tree *t = tree_new();
	__u32 a = leaf(0, 7);
	__u32 site = 1;
	__u64 site_ceil = t->conf[site].ceil.rate_Bps;

	cr_assert_lt(site_ceil, t->conf[a].ceil.rate_Bps, "the test's tree");
	tick(t);
	for (int k = 0; k < 5; k++) {
		sends(t, a, 100, true);
		tick(t);
	}
	cr_expect_eq(t->loop.nmember, 1);
	cr_expect_eq(t->loop.node[t->loop.node_of[a]].got, site_ceil);
	cr_expect_eq(t->sh[a].borrow_Bps, site_ceil - t->conf[a].rate.rate_Bps);
	tree_free(t);
}
