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
	fluid_scratch_free(l->scratch);
	memset(l, 0, sizeof(*l));
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
	    !l->backlogged || !l->hold_until)
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

void share_seen(const struct htb_class_state *st, __u32 n, struct htb_class_seen *seen)
{
	for (__u32 i = 0; i < n; i++)
		seen[i] = (struct htb_class_seen){ st[i].bytes, st[i].shaped_until };
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

int share_tick(struct share_loop *l, const struct htb_class_seen *st, __u64 now,
	       struct htb_class_share *out)
{
	double a = 0, per_ns = 0;

	if (l->prev_now && now > l->prev_now) {
		a = 1 - exp(-(double)(now - l->prev_now) / (double)SHARE_TAU_NS);
		per_ns = 1e9 / (double)(now - l->prev_now);
	}
	for (__u32 i = 0; i < l->n; i++)
		if (l->node[i].leaf)
			estimate(l, i, &st[l->slot[i]], now, a, per_ns);
	l->prev_now = now;
	if (fluid_solve(l->node, l->n, &l->scratch))
		return -1;
	for (__u32 i = 0; i < l->n; i++)
		put_limit(l, i, &out[l->slot[i]]);
	l->fresh = false;
	return 0;
}
