// SPDX-License-Identifier: GPL-2.0
/*
 * import libreqos, the tree: where nodes and circuits hang and what each
 * class guarantees, rule by rule as LibreQoS builds its tree from the same
 * files (LibreQoS.py's refreshShapers: attach_circuits, flattenA/B, the
 * generated parent nodes; docs/import.md's table names each rule and its
 * test). Where htbctl differs, the comment says why.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "import/libreqos.h"

/* LibreQoS keeps five levels of nodes and hangs everything deeper on the
 * fifth as its children (flattenA/B: "HTB only supports 8 levels"), so
 * its nodes reach the sixth level. Here the root class is level 1 and a
 * top-level node level 2: a node hangs no deeper than level 7, its
 * circuits at 8, HTB's last. */
#define LQ_FLAT_FROM	6	/* the HTB level of LibreQoS's fifth */
#define LQ_NODE_MAX	(LQ_FLAT_FROM + 1)

static unsigned class_level(const struct lqos *q, int up)
{
	return up < 0 ? 1 : q->nodes[up].level;
}

/* The class a shaped node below a node at LQ_NODE_MAX hangs on. */
static int flatten_up(struct lqos *q, unsigned i, int up)
{
	char a[MSG_QUOTE_BUF], b[MSG_QUOTE_BUF];

	while (class_level(q, up) > LQ_FLAT_FROM)
		up = q->nodes[up].up;
	if (lq_warn(q, q->json_name, q->nodes[i].line,
		    "node %s is below LibreQoS's sixth level of nodes: it hangs on %s, as LibreQoS flattens it",
		    QV(a, q->nodes[i].name), QV(b, q->nodes[up].name)))
		return -2;
	return up;
}

int lqos_place_nodes(struct lqos *q)
{
	char a[MSG_QUOTE_BUF];

	for (unsigned i = 0; i < q->nnodes; i++) {
		struct lq_node *n = &q->nodes[i];
		int up = n->parent < 0 ? -1 : q->nodes[n->parent].shaped;

		if (!n->virt && !q->strict && class_level(q, up) >= LQ_NODE_MAX &&
		    (up = flatten_up(q, i, up)) == -2)
			return -1;
		n->up = up;
		n->shaped = n->virt ? up : (int)i;
		n->level = class_level(q, up) + !n->virt;
		if (n->level > HTB_MAX_DEPTH)
			return lq_err(q, q->json_name, n->line,
				      "node %s is at HTB level %u (the root class is level 1, virtual nodes do not count): HTB allows %d",
				      QV(a, n->name), n->level, HTB_MAX_DEPTH);
	}
	return 0;
}

/* ---- generated parent nodes ------------------------------------------ */

/* The class a circuit hangs on: a shaped node's index, or -1 the root. */
static int circuit_class(const struct lqos *q, const struct lq_circuit *c)
{
	return c->parent < 0 ? -1 : q->nodes[c->parent].shaped;
}

static int add_generated(struct lqos *q, unsigned k)
{
	struct lq_node *n;
	char name[32];

	snprintf(name, sizeof(name), "Generated_PN_%u", k + 1);
	n = lq_node_new(q);
	if (!n || !(n->name = strdup(name)) || !(n->type = strdup("generated")))
		return lq_err(q, q->json_name, 0, "out of memory");
	n->parent = n->up = -1;
	n->shaped = (int)(n - q->nodes);
	n->generated = true;
	n->level = 2;
	for (int d = LQ_DOWN; d <= LQ_UP; d++) {
		n->bw[d] = q->gen_bw[d] ? q->gen_bw[d] : LQ_GEN_PN_DEFAULT_MBPS * 1000000ull;
		if (q->root_set[d] && n->bw[d] > q->root_set[d])
			n->bw[d] = q->root_set[d];
	}
	return 0;
}

/* LibreQoS hangs every circuit without a shaped parent under its
 * generated parent nodes, one per CPU queue of its shaper, round-robin in
 * the file's order; their bandwidth (generated_pn_download_mbps, capped
 * at the link) caps what those circuits pass together. htbctl has one
 * program for every CPU and needs no queue split, but keeps the nodes so
 * that the same files pass the same traffic. --generated-pn 0 keeps the
 * circuits on the root, as htbctl did before. */
int lqos_generate_pn(struct lqos *q)
{
	unsigned first = q->nnodes, k = 0;

	if (!q->gen_pn)
		return 0;
	for (unsigned c = 0; c < q->ncirc; c++) {
		struct lq_circuit *ci = &q->circ[c];

		if (circuit_class(q, ci) >= 0)
			continue;
		if (k < q->gen_pn && add_generated(q, k))
			return -1;
		ci->parent = (int)(first + k % q->gen_pn);
		k++;
	}
	return 0;
}

/* ---- circuits by class ------------------------------------------------ */

/* The circuit's group: a shaped node's index, or nnodes for the root. */
static unsigned circuit_bucket(const struct lqos *q, const struct lq_circuit *c)
{
	int up = circuit_class(q, c);

	return up < 0 ? q->nnodes : (unsigned)up;
}

/* q->corder: the circuits grouped by the class they hang on (in node
 * order, the root's last), each group in file order; q->cstart[b] where
 * group b starts. A counting sort: linear at any size. */
int lqos_group_circuits(struct lqos *q)
{
	unsigned nb = q->nnodes + 1, *next;

	q->cstart = calloc((size_t)nb + 1, sizeof(*q->cstart));
	q->corder = calloc(q->ncirc ? q->ncirc : 1, sizeof(*q->corder));
	if (!q->cstart || !q->corder)
		return lq_err(q, q->csv_name, 0, "out of memory");
	for (unsigned c = 0; c < q->ncirc; c++)
		q->cstart[circuit_bucket(q, &q->circ[c]) + 1]++;
	for (unsigned b = 0; b < nb; b++)
		q->cstart[b + 1] += q->cstart[b];
	next = malloc((size_t)nb * sizeof(*next));
	if (!next)
		return lq_err(q, q->csv_name, 0, "out of memory");
	memcpy(next, q->cstart, (size_t)nb * sizeof(*next));
	for (unsigned c = 0; c < q->ncirc; c++)
		q->corder[next[circuit_bucket(q, &q->circ[c])]++] = c;
	free(next);
	return 0;
}

/* ---- rates ------------------------------------------------------------- */

/* The root: --root-mbps's, or what its children can use at once: the
 * top-level nodes' bandwidth, its own circuits' ceilings and the default
 * class's rate (then no top-level node's rate is cut). */
static void root_rates(struct lqos *q)
{
	for (int k = 0; k < 2; k++) {
		q->root[k] = q->root_set[k] ? q->root_set[k] : q->defrate;
		for (unsigned i = 0; !q->root_set[k] && i < q->nnodes; i++)
			if (!q->nodes[i].virt && q->nodes[i].up < 0)
				q->root[k] += q->nodes[i].bw[k];
		for (unsigned i = q->cstart[q->nnodes]; !q->root_set[k] && i < q->ncirc; i++)
			q->root[k] += q->circ[q->corder[i]].max[k];
	}
}

/* What bucket b (a node, or nnodes the root) guarantees the classes
 * below it. */
static __u64 bucket_rate(const struct lqos *q, unsigned b, int k)
{
	if (b < q->nnodes)
		return q->nodes[b].rate[k];
	return q->root[k] > q->defrate ? q->root[k] - q->defrate : 0;
}

static void bucket_mins(const struct lqos *q, unsigned b, __u64 sum[2])
{
	sum[0] = sum[1] = 0;
	for (unsigned i = q->cstart[b]; i < q->cstart[b + 1]; i++)
		for (int k = 0; k < 2; k++)
			sum[k] += q->circ[q->corder[i]].min[k];
}

/* The Min each of n circuits gets where theirs add up past the rates:
 * LibreQoS's 1 Mbps, its 10 kbit/s when n of those are still too many in
 * either direction, and (htbctl's step further, so that guarantees nest
 * as HTB needs) an even share of the rate when even those are. */
static void cut_min(const __u64 rate[2], unsigned n, __u64 to[2])
{
	static const __u64 steps[] = { 1000000, 10000 };

	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		if (steps[s] * n > rate[0] || steps[s] * n > rate[1])
			continue;
		to[0] = to[1] = steps[s];
		return;
	}
	for (int k = 0; k < 2; k++)
		to[k] = rate[k] / n >= 8 ? rate[k] / n : 8;
}

static int warn_cut(struct lqos *q, unsigned b, const __u64 sum[2], const __u64 rate[2],
		    const __u64 to[2])
{
	char a[MSG_QUOTE_BUF], m[4][32], t[2][32];
	const char *file = b < q->nnodes ? q->json_name : q->csv_name;

	lq_sprint_mbps(sum[0], m[0], sizeof(m[0]));
	lq_sprint_mbps(sum[1], m[1], sizeof(m[1]));
	lq_sprint_mbps(rate[0], m[2], sizeof(m[2]));
	lq_sprint_mbps(rate[1], m[3], sizeof(m[3]));
	lq_sprint_mbps(to[0], t[0], sizeof(t[0]));
	lq_sprint_mbps(to[1], t[1], sizeof(t[1]));
	return lq_warn(q, file, b < q->nnodes ? q->nodes[b].line : 0,
		       "%s%s: the Download/Upload Min of its %u circuits add up to %s/%s Mbps, above its rate %s/%s Mbps: each cut to %s/%s Mbps, as LibreQoS cuts them",
		       b < q->nnodes ? "node " : "the root",
		       b < q->nnodes ? QV(a, q->nodes[b].name) : "",
		       q->cstart[b + 1] - q->cstart[b], m[0], m[1], m[2], m[3], t[0], t[1]);
}

/* LibreQoS's attach_circuits: where the Mins of a node's own circuits
 * add up past the node's rate in either direction, every one of them is
 * cut in both (LibreQoS sets them to 1 Mbps, raising a Min of 0.5; here a
 * Min is only ever lowered, so that the sum does fit). The rate compared
 * is the node's guarantee here, which is LibreQoS's (its bandwidth, capped
 * at its parent's) unless its siblings oversubscribe their parent.
 * cmin[2 * b + k]: the Mins as they are then, for node_rate. */
static int cut_mins(struct lqos *q, unsigned b, __u64 *cmin)
{
	unsigned n = q->cstart[b + 1] - q->cstart[b];
	__u64 *sum = cmin + 2 * b, rate[2], to[2];
	int rc;

	bucket_mins(q, b, sum);
	for (int k = 0; k < 2; k++)
		rate[k] = bucket_rate(q, b, k);
	if (!n || (sum[0] <= rate[0] && sum[1] <= rate[1]))
		return 0;
	cut_min(rate, n, to);
	for (unsigned i = q->cstart[b]; i < q->cstart[b + 1]; i++) {
		struct lq_circuit *c = &q->circ[q->corder[i]];

		for (int k = 0; k < 2; k++)
			c->min[k] = to[k] < c->min[k] ? to[k] : c->min[k];
	}
	rc = warn_cut(q, b, sum, rate, to);
	bucket_mins(q, b, sum);
	return rc;
}

/* What the shaped children of each class ask: sum[2 * (b + 1) + k], b
 * the class's node (-1 the root). */
static void child_demand(struct lqos *q, __u64 *sum)
{
	for (unsigned i = 0; i < q->nnodes; i++) {
		const struct lq_node *n = &q->nodes[i];

		if (n->virt)
			continue;
		if (n->up >= 0)
			q->nodes[n->up].kids++;
		for (int k = 0; k < 2; k++)
			sum[2 * (n->up + 1) + k] += n->bw[k];
	}
}

/* A node's rate: its bandwidth, or where the shaped children of its
 * parent ask more than the parent's rate less its circuits' Mins (and at
 * the root the default class's rate), that rest split in proportion to
 * their bandwidths (a rate is HTB's guarantee, honoured without asking
 * the parent, so children must not be promised more than it has).
 * Rounded down to kbit, at least 1kbit. */
static void node_rate(struct lqos *q, unsigned i, const __u64 *want, const __u64 *cmin)
{
	struct lq_node *d = &q->nodes[i];
	unsigned b = d->up < 0 ? q->nnodes : (unsigned)d->up;

	for (int k = 0; k < 2; k++) {
		__u64 have = bucket_rate(q, b, k), w = want[2 * (d->up + 1) + k];
		__u64 avail = have > cmin[2 * b + k] ? have - cmin[2 * b + k] : 0;
		unsigned __int128 r = w > avail ? (unsigned __int128)d->bw[k] * avail / w : d->bw[k];

		d->rate[k] = r >= 1000 ? (__u64)r / 1000 * 1000 : 1000;
	}
}

/* Top-down: a class's circuits are cut to its rate before its children
 * nodes share what is left of it. */
int lqos_node_rates(struct lqos *q)
{
	/* want: by the parent's node + 1 (0 the root); cmin: by bucket */
	__u64 *want = calloc((size_t)q->nnodes + 1, 2 * sizeof(*want));
	__u64 *cmin = calloc((size_t)q->nnodes + 1, 2 * sizeof(*cmin));
	int rc = -1;

	if (!want || !cmin) {
		lq_err(q, q->json_name, 0, "out of memory");
		goto out;
	}
	if (lqos_group_circuits(q))
		goto out;
	child_demand(q, want);
	root_rates(q);
	if (cut_mins(q, q->nnodes, cmin))
		goto out;
	for (unsigned i = 0; i < q->nnodes; i++) {
		if (q->nodes[i].virt)
			continue;
		node_rate(q, i, want, cmin);
		if (cut_mins(q, i, cmin))
			goto out;
	}
	rc = 0;
out:
	free(want);
	free(cmin);
	return rc;
}

/* ---- LibreQoS's order of mapping addresses ---------------------------- */

struct order {
	struct lqos *q;
	unsigned *kids, *kstart;	/* shaped nodes by parent class, sorted by name */
	unsigned *circ;			/* a scratch array of one group's circuits */
	unsigned next;
};

static int by_parent_name(const void *a, const void *b, void *arg)
{
	const struct lqos *q = arg;
	const struct lq_node *x = &q->nodes[*(const unsigned *)a], *y = &q->nodes[*(const unsigned *)b];

	/* the root's children (up -1) last, as kstart has the root's bucket */
	unsigned bx = x->up < 0 ? q->nnodes : (unsigned)x->up;
	unsigned by = y->up < 0 ? q->nnodes : (unsigned)y->up;

	if (bx != by)
		return bx < by ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const char *circuit_key(const struct lq_circuit *c)
{
	return c->name[0] ? c->name : c->id;
}

static int by_circuit_name(const void *a, const void *b, void *arg)
{
	const struct lqos *q = arg;
	int r = strcmp(circuit_key(&q->circ[*(const unsigned *)a]),
		       circuit_key(&q->circ[*(const unsigned *)b]));

	return r ? r : (*(const unsigned *)a > *(const unsigned *)b) - (*(const unsigned *)a < *(const unsigned *)b);
}

/* One class's circuits by name, then its child nodes by name, each
 * with its own subtree (at most HTB_MAX_DEPTH deep). */
static void rank_class(struct order *o, unsigned b)
{
	struct lqos *q = o->q;
	unsigned n = q->cstart[b + 1] - q->cstart[b];

	memcpy(o->circ, q->corder + q->cstart[b], (size_t)n * sizeof(*o->circ));
	qsort_r(o->circ, n, sizeof(*o->circ), by_circuit_name, q);
	for (unsigned i = 0; i < n; i++)
		q->circ[o->circ[i]].rank = o->next++;
	for (unsigned i = o->kstart[b]; i < o->kstart[b + 1]; i++)
		rank_class(o, o->kids[i]);
}

/* LibreQoS maps each circuit's addresses walking its tree depth first
 * (the nodes of a level sorted by name, a node's circuits before its
 * children, sorted by Circuit Name or else ID), each mapping replacing
 * the one before: of two circuits with one address, the later in this
 * walk keeps it. */
int lqos_claim_order(struct lqos *q)
{
	struct order o = { .q = q };
	unsigned nk = 0;

	o.kids = malloc(((size_t)q->nnodes + 1) * sizeof(*o.kids));
	o.kstart = calloc((size_t)q->nnodes + 2, sizeof(*o.kstart));
	o.circ = malloc(((size_t)q->ncirc + 1) * sizeof(*o.circ));
	if (!o.kids || !o.kstart || !o.circ) {
		free(o.kids), free(o.kstart), free(o.circ);
		return lq_err(q, q->csv_name, 0, "out of memory");
	}
	for (unsigned i = 0; i < q->nnodes; i++)
		if (!q->nodes[i].virt)
			o.kids[nk++] = i;
	qsort_r(o.kids, nk, sizeof(*o.kids), by_parent_name, q);
	/* kstart is indexed by bucket: a node's index, the root's nnodes */
	for (unsigned i = 0; i < nk; i++) {
		int up = q->nodes[o.kids[i]].up;

		o.kstart[(up < 0 ? q->nnodes : (unsigned)up) + 1]++;
	}
	for (unsigned b = 0; b <= q->nnodes; b++)
		o.kstart[b + 1] += o.kstart[b];
	rank_class(&o, q->nnodes);
	free(o.kids), free(o.kstart), free(o.circ);
	return 0;
}
