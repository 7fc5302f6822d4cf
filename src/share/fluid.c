// SPDX-License-Identifier: GPL-2.0
/*
 * The fluid ideal of HTB sharing (the rules are in share/fluid.h).
 *
 * How one lender's fill is computed without sorting: within one prio a
 * leaf i gets q_i * min(L, b_i), where L is the lender's water level and
 * b_i the level at which the leaf is full: want_i / q_i, lowered to the
 * level of every capping class above it. A capping class X between the
 * leaves and the lender is itself a fill of its own ceil headroom over
 * its leaves (once X is full, its leaves stop rising together, at X's
 * level), so classes are filled bottom-up and each lowers its leaves'
 * b_i; the lender's fill is then one flat weighted water-filling. Each
 * fill finds its level by a weighted selection on b (quickselect with a
 * three-way partition: expected linear, many equal levels in one pass),
 * falling back to a sort if the pivots go badly.
 *
 * Levels are doubles, so shares come out as reals; they are turned into
 * whole bytes/s by flooring and handing the lender's remainder out one
 * byte at a time, to the leaves that were rounded down first, never past
 * a want or a ceil headroom. The real totals are exact to well below
 * 1 byte/s at the rates a link carries (sums stay far below 2^53).
 *
 * Speed: at 100,000 classes memory traffic is the cost, not arithmetic
 * (on the project's VM a solve of 1,000 classes takes 50 ns a class, of
 * 100,000 160-250 ns a class while each class kept 300 bytes of state in
 * arrays by index, 70-130 ns now). So each class's working state is 40 bytes in preorder (a subtree is a
 * run of positions, scanned in memory order), the caller's nodes are
 * read once at the start and written once at the end, and a leaf keeps
 * what it borrowed from two levels beside it (more levels go to its
 * node's borrowed[], which only a deep tree with spare at three levels
 * above one leaf needs).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "share/fluid.h"

#define NPRIO		8
/* Selection rounds before the rest is sorted: a good pivot halves the
 * set, so 64 rounds are only reached when the pivots keep failing. */
#define SELECT_ROUNDS	64

/* A class's working state, at its preorder position. */
struct fl_class {
	__u64 got;	/* a leaf's share; an inner class: its leaves' total */
	__u64 top;	/* leaf: min(demand, ceil), the most it can get;
			 * inner: ceil, the most its leaves may get */
	__u64 cap;	/* min(rate, ceil): a leaf's own share, a lender's limit */
	__u32 up;	/* the parent's position, FLUID_NONE at top level */
	__u32 end;	/* the position after its subtree */
	__u32 quantum;
	__u8 leaf, prio, depth;
	__u8 borrows;	/* leaf: enum fl_borrows */
};

enum fl_borrows {
	FL_BORROWS_NONE = 0,	/* bor[] of the leaf is not in use */
	FL_BORROWS_SLOTS,	/* bor[] holds what it borrowed */
	FL_BORROWS_NODE,	/* and its node's borrowed[] holds more levels */
};

/* What a leaf borrowed, from the lenders lv[] levels up (0: slot free). */
struct fl_bor {
	__u64 amount[2];
	__u8 lv[2];
};

/* A leaf that wants more, in one lender's fill. */
struct fl_item {
	__u32 pos;		/* its position: a class's leaves are a run */
	__u32 q;		/* quantum: its weight */
	__u32 capper;		/* position of the class that set cap */
	__u8 prio;
	__u8 shorted;		/* rounding gave it less than its real share */
	__u16 pad;
	__u64 want;		/* bytes/s it can still take */
	double full;		/* want / q: the level at which it is full */
	double cap;		/* the lowest level a capping class allows it */
};

/* A point of a level selection: rises with weight q up to level b. */
struct fl_pt {
	double b, q;
};

/* The scratch's arrays, one element per node: "by index" in the caller's
 * order, the rest by position; own, lent are used at inner classes only. */
#define SCRATCH_ARRAYS(X)						\
	X(__u32, parent)	/* by index: the parent's index */	\
	X(__u32, size)		/* by index: nodes in its subtree */	\
	X(__u32, pos)		/* by index: its position */		\
	X(__u32, next)		/* by index: next free position below it */ \
	X(struct fl_class, cls)						\
	X(struct fl_class, cls_alt)	/* cls while it is put in preorder */ \
	X(struct fl_bor, bor)						\
	X(__u32, node)		/* the index at this position */	\
	X(__u32, limiter)	/* leaf: position of the ceil that capped it */ \
	X(__u64, own)		/* charged to its own rate */		\
	X(__u64, lent)							\
	X(__u32, inner)		/* positions of the inner classes, in order */ \
	X(__u32, lenders)	/* the same, deepest first */		\
	X(struct fl_item, items)	/* one lender's leaves that want more */ \
	X(struct fl_item, by_prio)	/* the same grouped by prio */	\
	X(struct fl_pt, pts)	/* a selection's working copy */

#define SCRATCH_FIELD_(type, name) type *name;
struct fluid_scratch {
	__u32 room;		/* nodes every array holds */
	SCRATCH_ARRAYS(SCRATCH_FIELD_)
};
#undef SCRATCH_FIELD_

/* One solve. */
struct fl_ctx {
	struct fluid_node *n;
	__u32 count;
	struct fluid_scratch *s;
	struct fl_class *cls;
	__u32 ninner;
	struct fl_item *it;		/* the lender's items, by prio */
	__u32 prio_start[NPRIO + 1];	/* items of prio p: [start[p], start[p+1]) */
};

static __u64 min_u64(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

/* fmin without libm's call (no NaN occurs here). */
static double min_d(double a, double b)
{
	return a < b ? a : b;
}

/* What limit leaves above used; 0 when used is already past it. */
static __u64 headroom(__u64 limit, __u64 used)
{
	return limit > used ? limit - used : 0;
}

void fluid_scratch_free(struct fluid_scratch *s)
{
	if (!s)
		return;
#define SCRATCH_FREE_(type, name) free(s->name);
	SCRATCH_ARRAYS(SCRATCH_FREE_)
#undef SCRATCH_FREE_
	free(s);
}

/* A scratch for count nodes; the old one stays if allocation fails. */
static int scratch_reserve(struct fluid_scratch **sp, __u32 count)
{
	struct fluid_scratch *s = *sp;
	int failed = 0;

	if (s && s->room >= count)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return -1;
	}
	s->room = count;
#define SCRATCH_ALLOC_(type, name) \
	failed |= !(s->name = malloc((size_t)count * sizeof(type)));
	SCRATCH_ARRAYS(SCRATCH_ALLOC_)
#undef SCRATCH_ALLOC_
	if (failed) {
		fluid_scratch_free(s);
		errno = ENOMEM;
		return -1;
	}
	fluid_scratch_free(*sp);
	*sp = s;
	return 0;
}

/* Node i against the contract (share/fluid.h), into cls[i]: the only read of
 * the caller's inputs. */
static int read_node(struct fl_ctx *c, __u32 i)
{
	const struct fluid_node *m = &c->n[i];
	struct fl_class *k = &c->cls[i];
	__u32 p = m->parent;

	if (m->leaf && (!m->quantum || m->prio >= NPRIO))
		return -1;
	if (p != FLUID_NONE && (p >= i || c->cls[p].leaf ||
				c->cls[p].depth >= HTB_MAX_DEPTH))
		return -1;
	c->s->parent[i] = p;
	c->s->size[i] = 1;
	*k = (struct fl_class){
		.up = p, .quantum = m->quantum, .leaf = m->leaf, .prio = m->prio,
		.depth = p == FLUID_NONE ? 1 : c->cls[p].depth + 1,
		.cap = min_u64(m->rate, m->ceil),
		.top = m->leaf ? min_u64(m->demand, m->ceil) : m->ceil,
	};
	k->got = m->leaf ? min_u64(m->demand, k->cap) : 0;
	return 0;
}

/*
 * Subtree sizes (and an inner class's got, the sum of its leaves') and
 * preorder positions, with no recursion: as a parent's index is below
 * its children's, sizes add up in one backward pass, and positions are
 * handed out in one forward pass (each child takes the next run of its
 * parent's range, in index order). Returns whether the nodes already are
 * in preorder (a config's classes are).
 */
static int layout(struct fl_ctx *c)
{
	struct fluid_scratch *s = c->s;
	__u32 i, p, top = 0;
	int preorder = 1;

	for (i = c->count; i-- > 0;) {
		p = s->parent[i];
		if (p != FLUID_NONE) {
			s->size[p] += s->size[i];
			c->cls[p].got += c->cls[i].got;
		}
	}
	for (i = 0; i < c->count; i++) {
		p = s->parent[i];
		if (p == FLUID_NONE) {
			s->pos[i] = top;
			top += s->size[i];
		} else {
			s->pos[i] = s->next[p];
			s->next[p] += s->size[i];
		}
		s->next[i] = s->pos[i] + 1;
		s->node[s->pos[i]] = i;
		c->cls[i].end = s->pos[i] + s->size[i];
		preorder &= s->pos[i] == i;
	}
	return preorder;
}

/* cls[] from index order into position order. */
static void reorder(struct fl_ctx *c)
{
	struct fluid_scratch *s = c->s;
	struct fl_class *k, *by_index = s->cls;

	for (__u32 i = 0; i < c->count; i++) {
		k = &s->cls_alt[s->pos[i]];
		*k = by_index[i];
		if (k->up != FLUID_NONE)
			k->up = s->pos[k->up];
	}
	s->cls = c->cls = s->cls_alt;
	s->cls_alt = by_index;
}

/* The working state, by position. -1: bad input. */
static int load(struct fl_ctx *c)
{
	for (__u32 i = 0; i < c->count; i++)
		if (read_node(c, i))
			return -1;
	if (!layout(c))
		reorder(c);
	memset(c->s->limiter, 0xff, c->count * sizeof(*c->s->limiter));	/* FLUID_NONE */
	return 0;
}

/* The inner classes by position (inner[]) and deepest first, in
 * position order within a depth (lenders[]). */
static void order_inner(struct fl_ctx *c)
{
	struct fluid_scratch *s = c->s;
	__u32 at[HTB_MAX_DEPTH + 2] = { 0 }, k = 0;

	for (__u32 j = 0; j < c->count; j++) {
		if (!c->cls[j].leaf) {
			s->own[j] = s->lent[j] = 0;
			s->inner[k++] = j;
			at[HTB_MAX_DEPTH + 1 - c->cls[j].depth]++;
		}
	}
	c->ninner = k;
	/* at[d]: where depth HTB_MAX_DEPTH + 1 - d starts, deepest first */
	for (__u32 d = 0, sum = 0, n; d < HTB_MAX_DEPTH + 2; d++) {
		n = at[d];
		at[d] = sum;
		sum += n;
	}
	for (__u32 i = 0; i < k; i++)
		s->lenders[at[HTB_MAX_DEPTH + 1 - c->cls[s->inner[i]].depth]++] = s->inner[i];
}

/* What lender p may lend now (share/fluid.h, rule 2). */
static __u64 lender_budget(const struct fl_ctx *c, __u32 p)
{
	const struct fl_class *k = c->cls;
	__u64 b = headroom(k[p].cap, k[p].got);

	for (__u32 a = k[p].up; a != FLUID_NONE && b; a = k[a].up)
		b = min_u64(b, headroom(k[a].top, k[a].got));
	return b;
}

/* Items of several prios into by_prio[], grouped by prio, each group in
 * position order (a counting sort); at[] holds the counts. */
static void group_by_prio(struct fl_ctx *c, __u32 n, __u32 *at)
{
	__u32 *start = c->prio_start;

	for (int q = 0; q < NPRIO; q++) {
		start[q + 1] = start[q] + at[q];
		at[q] = start[q];
	}
	for (__u32 i = 0; i < n; i++)
		c->s->by_prio[at[c->s->items[i].prio]++] = c->s->items[i];
	c->it = c->s->by_prio;
}

/* The leaves under p that want more, into c->it grouped by prio.
 * Returns how many. */
static __u32 gather(struct fl_ctx *c, __u32 p)
{
	const struct fl_class *k = c->cls;
	__u32 at[NPRIO] = { 0 }, n = 0, prios = 0;
	__u64 want;

	for (__u32 j = p + 1; j < k[p].end; j++) {
		if (!k[j].leaf || !(want = headroom(k[j].top, k[j].got)))
			continue;
		prios += !at[k[j].prio]++;
		c->s->items[n++] = (struct fl_item){
			.pos = j, .q = k[j].quantum, .prio = k[j].prio,
			.capper = FLUID_NONE, .want = want,
			.full = (double)want / k[j].quantum, .cap = INFINITY,
		};
	}
	c->prio_start[0] = 0;
	if (prios > 1) {
		group_by_prio(c, n, at);
		return n;
	}
	for (int q = 0; q < NPRIO; q++)	/* all n in one prio, or none */
		c->prio_start[q + 1] = n && q >= c->s->items[0].prio ? n : 0;
	c->it = c->s->items;
	return n;
}

struct fl_sums {
	double qb_le;	/* sum of q * b over the points at or below the pivot */
	double q_ge;	/* sum of q over the points at or above it */
	double q_gt;	/* ... strictly above it */
};

static void swap_pt(struct fl_pt *a, struct fl_pt *b)
{
	struct fl_pt t = *a;

	*a = *b;
	*b = t;
}

/* Three-way partition of a[lo, hi) around v: below [lo, *lt), equal
 * [*lt, *gt), above [*gt, hi); the sums the selection needs on the way. */
static struct fl_sums partition3(struct fl_pt *a, __u32 lo, __u32 hi, double v,
				 __u32 *plt, __u32 *pgt)
{
	struct fl_sums s = { 0 };
	__u32 lt = lo, i = lo, gt = hi;

	while (i < gt) {
		if (a[i].b < v) {
			s.qb_le += a[i].q * a[i].b;
			swap_pt(&a[lt++], &a[i++]);
		} else if (a[i].b > v) {
			s.q_gt += a[i].q;
			swap_pt(&a[i], &a[--gt]);
		} else {
			s.qb_le += a[i].q * a[i].b;
			s.q_ge += a[i].q;
			i++;
		}
	}
	s.q_ge += s.q_gt;
	*plt = lt;
	*pgt = gt;
	return s;
}

static double median3(double x, double y, double z)
{
	if (x > y) {
		double t = x;

		x = y;
		y = t;
	}
	return z < x ? x : z > y ? y : z;
}

static int cmp_pt(const void *x, const void *y)
{
	double a = ((const struct fl_pt *)x)->b, b = ((const struct fl_pt *)y)->b;

	return (a > b) - (a < b);
}

/* The level among a[0, k) when the selection gave up: sort and walk.
 * C and Q are what the points already decided contribute (below). */
static double sorted_level(struct fl_pt *a, __u32 k, double H, double C, double Q)
{
	double rest = 0;

	qsort(a, k, sizeof(*a), cmp_pt);
	for (__u32 i = 0; i < k; i++)
		rest += a[i].q;
	for (__u32 i = 0; i < k; i++) {
		/* at level a[i].b, points below i are full, the rest rise */
		if (C + a[i].b * (Q + rest) >= H)
			break;
		C += a[i].q * a[i].b;
		rest -= a[i].q;
	}
	return Q + rest > 0 ? (H > C ? (H - C) / (Q + rest) : 0) : INFINITY;
}

/*
 * The level L with sum q_i * min(b_i, L) = H over a[0, k), or INFINITY
 * when all of them together fit in H. Reorders a. C sums q * b of the
 * points known to be full at L, Q the weights of those known to rise.
 */
static double select_level(struct fl_pt *a, __u32 k, double H)
{
	double C = 0, Q = 0, total = 0, v;
	__u32 lo = 0, hi = k, lt, gt;
	struct fl_sums s;

	for (__u32 i = 0; i < k; i++)
		total += a[i].q * a[i].b;
	if (total <= H)
		return INFINITY;
	for (int round = 0; lo < hi; round++) {
		if (round == SELECT_ROUNDS)
			return sorted_level(a + lo, hi - lo, H, C, Q);
		v = median3(a[lo].b, a[lo + (hi - lo) / 2].b, a[hi - 1].b);
		s = partition3(a, lo, hi, v, &lt, &gt);
		if (C + s.qb_le + v * (Q + s.q_gt) >= H) {
			Q += s.q_ge;	/* L <= v: the points at v and above rise */
			hi = lt;
		} else {
			C += s.qb_le;	/* L > v: the points up to v are full */
			lo = gt;
		}
	}
	return Q > 0 ? (H > C ? (H - C) / Q : 0) : INFINITY;
}

/* The level of a fill of H over items it[0, k). */
static double fill_level(struct fl_ctx *c, const struct fl_item *it, __u32 k, __u64 H)
{
	struct fl_pt *pts = c->s->pts;

	for (__u32 i = 0; i < k; i++)
		pts[i] = (struct fl_pt){ min_d(it[i].full, it[i].cap), it[i].q };
	return select_level(pts, k, (double)H);
}

/* First item of it[0, k) at position pos or later. */
static __u32 item_at(const struct fl_item *it, __u32 k, __u32 pos)
{
	__u32 lo = 0, hi = k, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (it[mid].pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First inner class at position pos or later. */
static __u32 inner_at(const struct fl_ctx *c, __u32 pos)
{
	const __u32 *inner = c->s->inner;
	__u32 lo = 0, hi = c->ninner, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (inner[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Every class strictly between the items and lender p caps its leaves
 * at the level its ceil headroom allows, deepest first (a reverse
 * preorder visits a class after everything below it). */
static void cap_groups(struct fl_ctx *c, __u32 p, struct fl_item *it, __u32 k)
{
	const struct fl_class *cls = c->cls;
	__u32 lo = inner_at(c, p + 1), hi = inner_at(c, cls[p].end);
	__u32 x, a, b;
	double level;

	while (hi-- > lo) {
		x = c->s->inner[hi];
		a = item_at(it, k, x + 1);
		b = item_at(it, k, cls[x].end);
		if (a == b)
			continue;
		level = fill_level(c, it + a, b - a, headroom(cls[x].top, cls[x].got));
		for (__u32 i = a; i < b; i++) {
			if (level < it[i].cap) {	/* ties: the deeper class */
				it[i].cap = level;
				it[i].capper = x;
			}
		}
	}
}

/* What every class strictly between leaf j and lender p can still take. */
static __u64 path_room(const struct fl_ctx *c, __u32 j, __u32 p, __u64 room)
{
	const struct fl_class *k = c->cls;

	for (__u32 x = k[j].up; x != p && room; x = k[x].up)
		room = min_u64(room, headroom(k[x].top, k[x].got));
	return room;
}

/* Leaf j borrowed a from the lender lv levels up: into a slot of bor[j]
 * when one is free or holds lv, else into its node. */
static void book_borrow(struct fl_ctx *c, __u32 j, __u8 lv, __u64 a)
{
	struct fl_class *leaf = &c->cls[j];
	struct fl_bor *b = &c->s->bor[j];
	__u64 *node = c->n[c->s->node[j]].borrowed;

	if (leaf->borrows == FL_BORROWS_NONE) {
		*b = (struct fl_bor){ .lv = { lv } };
		leaf->borrows = FL_BORROWS_SLOTS;
	}
	for (int i = 0; i < 2; i++) {
		if (b->lv[i] == lv || !b->lv[i]) {
			b->lv[i] = lv;
			b->amount[i] += a;
			return;
		}
	}
	if (leaf->borrows == FL_BORROWS_SLOTS) {
		memset(node, 0, sizeof(c->n->borrowed));
		leaf->borrows = FL_BORROWS_NODE;
	}
	node[lv] += a;
}

/* Lender p gives item up to amount, as far as its want and the ceils on
 * the way allow; the books of every class above it follow. */
static __u64 give(struct fl_ctx *c, __u32 p, struct fl_item *item, __u64 amount)
{
	struct fl_class *k = c->cls;
	__u64 a = path_room(c, item->pos, p, min_u64(amount, item->want));

	if (!a)
		return 0;
	book_borrow(c, item->pos, k[item->pos].depth - k[p].depth, a);
	item->want -= a;
	c->s->lent[p] += a;
	for (__u32 x = item->pos; x != FLUID_NONE; x = k[x].up)
		k[x].got += a;
	return a;
}

/* An item's real share at lender level L. */
static double share(const struct fl_item *it, double L)
{
	double l = min_d(L, it->cap);

	return l >= it->full ? (double)it->want : it->q * l;
}

/* Lender p hands out level L to it[0, k) in whole bytes/s, at most budget
 * (see the top of this file). Returns what it gave. */
static __u64 assign(struct fl_ctx *c, __u32 p, struct fl_item *it, __u32 k,
		    double L, __u64 budget)
{
	long double sum = 0;
	__u64 total, given = 0, a;
	double x;

	for (__u32 i = 0; i < k; i++) {
		sum += share(&it[i], L);
		/* a class's ceil stopped it below the others: leaf_limit's */
		if (it[i].cap < L && it[i].cap < it[i].full)
			c->s->limiter[it[i].pos] = it[i].capper;
	}
	total = min_u64(budget, (__u64)llroundl(sum));
	for (__u32 i = 0; i < k; i++) {
		x = share(&it[i], L);
		a = give(c, p, &it[i], min_u64((__u64)x, total - given));
		given += a;
		it[i].shorted = x > (double)a;
	}
	for (__u32 i = 0; i < k && given < total; i++)
		if (it[i].shorted)
			given += give(c, p, &it[i], 1);
	for (__u32 i = 0; i < k && given < total; i++)
		given += give(c, p, &it[i], 1);
	return given;
}

/* Lender p's budget to the leaves under it, one prio after the other. */
static void lend(struct fl_ctx *c, __u32 p)
{
	__u64 budget = lender_budget(c, p);
	__u32 a, b;

	if (!budget || !gather(c, p))
		return;
	for (int q = 0; q < NPRIO && budget; q++) {
		a = c->prio_start[q];
		b = c->prio_start[q + 1];
		if (a == b)
			continue;
		cap_groups(c, p, c->it + a, b - a);
		budget -= assign(c, p, c->it + a, b - a,
				 fill_level(c, c->it + a, b - a, budget), budget);
	}
}

/* The nearest ancestor of leaf j whose ceil is used up, or FLUID_NONE. */
static __u32 full_ancestor(const struct fl_ctx *c, __u32 j)
{
	const struct fl_class *k = c->cls;

	for (__u32 x = k[j].up; x != FLUID_NONE; x = k[x].up)
		if (k[x].got >= k[x].top)
			return x;
	return FLUID_NONE;
}

/* Whether an ancestor of leaf j still has rate to lend. */
static int rate_left_above(const struct fl_ctx *c, __u32 j)
{
	const struct fl_class *k = c->cls;

	for (__u32 x = k[j].up; x != FLUID_NONE; x = k[x].up)
		if (headroom(k[x].cap, k[x].got))
			return 1;
	return 0;
}

/*
 * What holds leaf j (node m) back. One that wants more is held by an
 * ancestor's ceil when a fill capped it there (assign() left the class
 * in limiter), or when some ancestor still has rate to lend and a full
 * ceil on the way stops it; otherwise all spare is lent (a full top
 * class whose ceil is its rate counts as out of spare, not as a ceil).
 */
static void leaf_limit(struct fl_ctx *c, __u32 j, struct fluid_node *m)
{
	__u32 capper = c->s->limiter[j];
	__u64 got = c->cls[j].got;

	m->limiter = FLUID_NONE;
	if (!m->demand) {
		m->limit = FLUID_IDLE;
	} else if (m->demand != FLUID_INF && got >= m->demand) {
		m->limit = FLUID_DEMAND;
	} else if (got >= m->ceil) {
		m->limit = FLUID_CEIL;
	} else {
		if (capper == FLUID_NONE && rate_left_above(c, j))
			capper = full_ancestor(c, j);
		m->limit = capper == FLUID_NONE ? FLUID_SPARE : FLUID_ANCESTOR_CEIL;
		m->limiter = capper == FLUID_NONE ? FLUID_NONE : c->s->node[capper];
	}
}

/* Leaf j's results into its node m; what its ancestors sent on their own
 * rates: everything of it but what it borrowed from above them. */
static void leaf_out(struct fl_ctx *c, __u32 j, struct fluid_node *m)
{
	const struct fl_class *k = c->cls;
	const struct fl_bor *b = &c->s->bor[j];
	__u64 acc;
	__u32 lv = 1;

	if (k[j].borrows != FL_BORROWS_NODE)
		memset(m->borrowed, 0, sizeof(m->borrowed));
	for (int i = 0; i < 2 && k[j].borrows; i++)
		if (b->lv[i])
			m->borrowed[b->lv[i]] += b->amount[i];
	m->got = k[j].got;
	m->own = min_u64(m->demand, k[j].cap);
	m->lent = 0;
	leaf_limit(c, j, m);
	acc = m->own;
	for (__u32 x = k[j].up; x != FLUID_NONE; x = k[x].up, lv++) {
		acc += m->borrowed[lv];
		c->s->own[x] += acc;
	}
}

/* The results into the caller's nodes, children before parents so that
 * an inner class's own is complete when it is written. */
static void copy_out(struct fl_ctx *c)
{
	const struct fluid_scratch *s = c->s;
	struct fluid_node *m;
	__u32 j;

	for (__u32 i = c->count; i-- > 0;) {
		m = &c->n[i];
		j = s->pos[i];
		if (c->cls[j].leaf) {
			leaf_out(c, j, m);
			continue;
		}
		memset(m->borrowed, 0, sizeof(m->borrowed));
		m->got = c->cls[j].got;
		m->own = s->own[j];
		m->lent = s->lent[j];
		m->limit = FLUID_IDLE;
		m->limiter = FLUID_NONE;
	}
}

int fluid_solve(struct fluid_node *n, __u32 count, struct fluid_scratch **scratch)
{
	struct fl_ctx c = { .n = n, .count = count };

	if (!scratch || (count && !n)) {
		errno = EINVAL;
		return -1;
	}
	if (!count)
		return 0;
	if (scratch_reserve(scratch, count))
		return -1;
	c.s = *scratch;
	c.cls = c.s->cls;
	if (load(&c)) {
		errno = EINVAL;
		return -1;
	}
	order_inner(&c);
	for (__u32 l = 0; l < c.ninner; l++)
		lend(&c, c.s->lenders[l]);
	copy_out(&c);
	return 0;
}
