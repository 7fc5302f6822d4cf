// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing loop's arithmetic (src/share/share.h): demand estimates in, borrow
 * limits out. Why a loop and what it costs: docs/design.md, "Sharing
 * spare bandwidth".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "share/share.h"
#include "htb/rate.h"

void share_free(struct share_loop *l)
{
	free(l->node);
	free(l->slot);
	free(l->node_of);
	free(l->prev_bytes);
	free(l->est);
	free(l->backlogged);
	free(l->hold_until);
	free(l->member);
	free(l->active);
	free(l->mark);
	free(l->sub);
	free(l->sub_of);
	free(l->subnode);
	fluid_scratch_free(l->scratch);
	memset(l, 0, sizeof(*l));
}

/* The active set's arrays, n nodes (share_alloc's part). */
static int share_alloc_active(struct share_loop *l, __u32 n)
{
	size_t m = n ? n : 1;

	l->member = malloc(m * sizeof(*l->member));
	l->active = calloc(m, sizeof(*l->active));
	l->mark = calloc((m + 63) / 64, sizeof(*l->mark));
	l->sub = malloc(m * sizeof(*l->sub));
	l->sub_of = malloc(m * sizeof(*l->sub_of));
	l->subnode = malloc(m * sizeof(*l->subnode));
	return l->member && l->active && l->mark && l->sub && l->sub_of && l->subnode ? 0 : -1;
}

static int share_alloc(struct share_loop *l, __u32 cap, __u32 n)
{
	l->cap = cap;
	l->n = n;
	l->node = calloc(n ? n : 1, sizeof(*l->node));
	l->slot = calloc(n ? n : 1, sizeof(*l->slot));
	l->node_of = malloc((size_t)(cap ? cap : 1) * sizeof(*l->node_of));
	l->prev_bytes = calloc(n ? n : 1, sizeof(*l->prev_bytes));
	l->est = calloc(n ? n : 1, sizeof(*l->est));
	l->backlogged = calloc(n ? n : 1, sizeof(*l->backlogged));
	l->hold_until = calloc(n ? n : 1, sizeof(*l->hold_until));
	if (!l->node || !l->slot || !l->node_of || !l->prev_bytes || !l->est ||
	    !l->backlogged || !l->hold_until || share_alloc_active(l, n))
		return -1;
	for (__u32 s = 0; s < cap; s++)
		l->node_of[s] = FLUID_NONE;
	return 0;
}

static bool conf_valid(const struct htb_class_conf *c)
{
	return (c->flags & HTB_CONF_VALID) && c->depth >= 1 && c->depth <= HTB_MAX_DEPTH;
}

/* Node i from class slot s; its parent (one level up) is already a node. */
static void plan_node(struct share_loop *l, __u32 i, __u32 s,
		      const struct htb_class_conf *c)
{
	struct fluid_node *f = &l->node[i];
	__u32 up = c->depth > 1 ? c->path[1] : HTB_NO_CLASS;

	memset(f, 0, sizeof(*f));
	f->parent = up < l->cap ? l->node_of[up] : FLUID_NONE;
	f->leaf = !!(c->flags & HTB_CONF_LEAF);
	f->prio = (__u8)(c->prio > 7 ? 7 : c->prio);
	f->quantum = c->quantum ? c->quantum : 1;
	f->rate = c->rate.rate_Bps;
	f->ceil = c->ceil.rate_Bps;
	l->slot[i] = s;
	l->node_of[s] = i;
	l->borrowers += f->leaf && f->parent != FLUID_NONE && f->ceil > f->rate;
	if (s + 1 > l->hw)
		l->hw = s + 1;
}

int share_plan(struct share_loop *l, const struct htb_class_conf *conf, __u32 cap)
{
	__u32 n = 0, i = 0;

	share_free(l);
	for (__u32 s = 0; s < cap; s++)
		n += conf_valid(&conf[s]);
	if (share_alloc(l, cap, n)) {
		share_free(l);
		return -1;
	}
	l->fresh = true;	/* the first tick writes every entry */
	/* parents first: by depth (a parent is one level up) */
	for (__u32 d = 1; d <= HTB_MAX_DEPTH; d++)
		for (__u32 s = 0; s < cap; s++)
			if (conf_valid(&conf[s]) && conf[s].depth == d)
				plan_node(l, i++, s, &conf[s]);
	/* a class whose parent is no class is no class either */
	for (i = 0; i < n; i++)
		if (conf[l->slot[i]].depth > 1 && l->node[i].parent == FLUID_NONE)
			l->node[i].leaf = 0;
	return 0;
}

__u64 share_period(const struct share_loop *l, __u64 cost_ns)
{
	__u64 p = 3 * cost_ns;

	if (!l->borrowers)
		return SHARE_TICK_MAX_NS;
	return p < SHARE_TICK_NS ? SHARE_TICK_NS : p > SHARE_TICK_MAX_NS ? SHARE_TICK_MAX_NS : p;
}

__u64 share_lease(__u64 period_ns)
{
	return 10 * period_ns > SHARE_LEASE_NS ? 10 * period_ns : SHARE_LEASE_NS;
}

__u64 share_word(__u64 borrow_Bps)
{
	struct htb_ratecfg r;

	if (!borrow_Bps)
		return HTB_SHARE_ON;
	htb_ratecfg_precompute(&r, borrow_Bps, 0, 0, HTB_LINKLAYER_ETHERNET);
	return HTB_SHARE_ON | (__u64)r.shift << 32 | r.mult;
}

void share_store(struct htb_class_share *dst, const struct htb_class_share *v)
{
	__atomic_store_n(&dst->bbuffer, v->bbuffer, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->borrow_Bps, v->borrow_Bps, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->demand_Bps, v->demand_Bps, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->borrow_l2t, v->borrow_l2t, __ATOMIC_RELEASE);
}

__u32 share_seen(const struct htb_class_state *st, __u32 n, struct htb_class_seen *seen,
		 __u32 *changed)
{
	__u32 k = 0;

	for (__u32 i = 0; i < n; i++) {
		if (seen[i].bytes == st[i].bytes)
			continue;
		seen[i] = (struct htb_class_seen){ st[i].bytes, st[i].shaped_until };
		changed[k++] = i;
	}
	return k;
}

/* A leaf's offered rate: all it can get while the shaper holds its packets
 * back, else what it sent, smoothed over SHARE_TAU_NS (a: the smoothing
 * weight of this tick's sample; per_ns: 1e9 / the tick's length). */
static void estimate(struct share_loop *l, __u32 i, const struct htb_class_seen *st,
		     __u64 now, double a, double per_ns)
{
	struct fluid_node *f = &l->node[i];
	bool was;

	if (a > 0) {
		__u64 sent = st->bytes >= l->prev_bytes[i] ? st->bytes - l->prev_bytes[i] : 0;

		l->est[i] += a * ((double)sent * per_ns - l->est[i]);
	}
	l->prev_bytes[i] = st->bytes;
	if (st->shaped_until > now + SHARE_DEEP_NS)
		l->hold_until[i] = now + SHARE_HOLD_NS;
	was = l->backlogged[i];
	l->backlogged[i] = st->shaped_until > now || now < l->hold_until[i];
	l->let_go += was && !l->backlogged[i];
	f->demand = l->backlogged[i] ? FLUID_INF : (__u64)l->est[i];
}

/* What leaf i may borrow: its share of the spare when it is backlogged;
 * room to grow when it sends all it has (it becomes backlogged, and gets
 * its share, as soon as the limit holds it back). */
static __u64 borrow_limit(const struct share_loop *l, __u32 i)
{
	const struct fluid_node *f = &l->node[i];
	__u64 want = f->got;

	if (!l->backlogged[i]) {
		__u64 grow = (__u64)(l->est[i] * 1.25) + SHARE_HEADROOM_BPS;

		if (grow > want)
			want = grow;
		if (want > f->ceil)
			want = f->ceil;
	}
	return want > f->rate ? want - f->rate : 0;
}

/* Leaf i's limit into out (stored only when it changed: a store is a
 * write to a line the program reads on every packet of the class). */
static void put_limit(struct share_loop *l, __u32 i, struct htb_class_share *out)
{
	struct htb_class_share v = { 0 };

	if (l->node[i].leaf) {
		v.borrow_Bps = borrow_limit(l, i);
		v.borrow_l2t = share_word(v.borrow_Bps);
		v.bbuffer = (__s64)SHARE_BBUFFER_NS;
		v.demand_Bps = l->node[i].demand;
	}
	if (l->fresh || out->borrow_l2t != v.borrow_l2t || out->demand_Bps != v.demand_Bps)
		share_store(out, &v);
}

/* Leaf i into the active set (from the next estimate on). */
static void join(struct share_loop *l, __u32 i)
{
	if (l->active[i] || !l->node[i].leaf)
		return;
	l->active[i] = true;
	l->member[l->nmember++] = i;
}

/* The leaves that sent join: every leaf on the first tick after
 * share_plan (what it holds of them is no longer known). */
static void join_changed(struct share_loop *l, const __u32 *changed, __u32 nchanged)
{
	if (l->fresh) {
		for (__u32 i = 0; i < l->n; i++)
			join(l, i);
		return;
	}
	for (__u32 k = 0; k < nchanged; k++)
		if (changed[k] < l->cap && l->node_of[changed[k]] != FLUID_NONE)
			join(l, l->node_of[changed[k]]);
}

/* A member that offers nothing: what the whole tree's solve would give it
 * (demand 0, so a share of 0; its estimate below 1 B/s counts as 0 in
 * every limit), so its entry is the same as if the loop still visited it. */
static bool idle(const struct share_loop *l, __u32 i)
{
	return !l->backlogged[i] && l->est[i] * 1.25 < 1.0;
}

/* Members that offer nothing leave the set, with that limit stored: the
 * entry of a leaf that wants nothing (put_limit of got 0). */
static void let_idle_go(struct share_loop *l, struct htb_class_share *out)
{
	__u32 kept = 0;

	for (__u32 k = 0; k < l->nmember; k++) {
		__u32 i = l->member[k];

		if (!idle(l, i)) {
			l->member[kept++] = i;
			continue;
		}
		l->active[i] = false;
		l->est[i] = 0;
		l->node[i].demand = 0;
		l->node[i].got = 0;
		put_limit(l, i, &out[l->slot[i]]);
	}
	l->nmember = kept;
}

/* Marks node i and its ancestors into the subtree (stops at one marked). */
static void mark_path(struct share_loop *l, __u32 i)
{
	for (; i != FLUID_NONE && !(l->mark[i / 64] >> (i % 64) & 1); i = l->node[i].parent) {
		l->mark[i / 64] |= 1ull << (i % 64);
		l->nsub++;
	}
}

/* The marked nodes into sub[], in index order (a parent before its
 * children, lenders of one depth in the whole tree's order: the fluid
 * ideal's rule 2), the marks cleared. A word per 64 nodes: 1,600 at
 * 100,000 classes. */
static void gather_sub(struct share_loop *l)
{
	__u32 k = 0;

	for (__u32 w = 0; k < l->nsub && w < (l->n + 63) / 64; w++) {
		__u64 bits = l->mark[w];

		l->mark[w] = 0;
		for (; bits; bits &= bits - 1) {
			__u32 i = w * 64 + (__u32)__builtin_ctzll(bits);

			l->sub_of[i] = k;
			l->sub[k++] = i;
		}
	}
}

/* The fluid ideal over the members and their ancestors; each member's
 * share into its node's got. With half the nodes or more active, over the
 * whole tree in place, as the loop did before the active set: the same
 * shares (the others offer nothing), without copying most of the tree. */
static int solve_active(struct share_loop *l)
{
	if (2 * (__u64)l->nmember >= l->n)
		return fluid_solve(l->node, l->n, &l->scratch);
	l->nsub = 0;
	for (__u32 k = 0; k < l->nmember; k++)
		mark_path(l, l->member[k]);
	gather_sub(l);
	for (__u32 k = 0; k < l->nsub; k++) {
		const struct fluid_node *f = &l->node[l->sub[k]];

		l->subnode[k] = *f;
		l->subnode[k].parent = f->parent == FLUID_NONE ? FLUID_NONE : l->sub_of[f->parent];
	}
	if (fluid_solve(l->subnode, l->nsub, &l->scratch))
		return -1;
	for (__u32 k = 0; k < l->nsub; k++)
		l->node[l->sub[k]].got = l->subnode[k].got;
	return 0;
}

int share_tick(struct share_loop *l, const struct htb_class_seen *st,
	       const __u32 *changed, __u32 nchanged, __u64 now,
	       struct htb_class_share *out)
{
	double a = 0, per_ns = 0;

	if (l->prev_now && now > l->prev_now) {
		a = 1 - exp(-(double)(now - l->prev_now) / (double)SHARE_TAU_NS);
		per_ns = 1e9 / (double)(now - l->prev_now);
	}
	join_changed(l, changed, nchanged);
	for (__u32 k = 0; k < l->nmember; k++) {
		__u32 i = l->member[k];

		estimate(l, i, &st[l->slot[i]], now, a, per_ns);
	}
	l->prev_now = now;
	let_idle_go(l, out);
	if (solve_active(l))
		return -1;
	if (l->fresh)	/* every entry: the inner classes' and the idle leaves' too */
		for (__u32 i = 0; i < l->n; i++)
			put_limit(l, i, &out[l->slot[i]]);
	else
		for (__u32 k = 0; k < l->nmember; k++)
			put_limit(l, l->member[k], &out[l->slot[l->member[k]]]);
	l->fresh = false;
	return 0;
}
