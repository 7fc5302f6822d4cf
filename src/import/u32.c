// SPDX-License-Identifier: GPL-2.0
/*
 * import: u32 filters. u32 matches raw header bytes (value/mask/offset
 * keys) and links nodes to hash tables, so its nodes are collected first
 * and walked the way u32_classify walks them: a pref's root table, its
 * nodes in handle order, a link into a table's bucket. Along a path the
 * keys are laid over one header template (all of them must hold), which
 * is then read back as fields: an IPv4 or IPv6 prefix, a port range, the
 * protocol, the DSCP. A hash table's bucket is a condition too: a node
 * whose keys fix the hashed bits sits in the bucket they hash to, or it
 * never matches (HTB would never use it); one that hashes on bytes it
 * does not fix is not converted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "import/filter.h"
#include "import/u32.h"

#define TPL_LEN 64		/* header bytes a key may touch */

#define MAX_SEEN 64

struct u32_node {
	__u32 pref, handle, ht, link, classid, divisor;
	/* past 4095 nodes in one bucket the kernel has no node id left and
	 * gives every further node id fff (cls_u32.c gen_new_kid()): nodes
	 * of one handle are told apart by their place in the dump */
	__u32 occ;
	__u32 seen[MAX_SEEN];		/* a table: every attach point that dumped it */
	int nseen;
	__u16 proto;
	bool is_ht, police, has_mark, indev, seen_cut;
	__u32 mark_val, mark_mask;
	struct tc_u32_sel sel;
	struct tc_u32_key keys[16];
	char acts[96];			/* its actions' kinds */
	const struct nlattr *act;	/* only while decoding */
};

struct u32_graph {
	struct u32_node *v;
	int n, cap;
};

struct u32_graph *u32_graph_new(void)
{
	return calloc(1, sizeof(struct u32_graph));
}

void u32_graph_free(struct u32_graph *g)
{
	if (g)
		free(g->v);
	free(g);
}

static void node_attr(struct u32_node *n, const struct nlattr *a)
{
	const struct tc_u32_sel *sel;
	const struct tc_u32_mark *mk;

	switch (mnl_attr_get_type(a)) {
	case TCA_U32_DIVISOR:
		n->is_ht = true;
		n->divisor = mnl_attr_get_u32(a);
		break;
	case TCA_U32_HASH:
		n->ht = mnl_attr_get_u32(a);
		break;
	case TCA_U32_LINK:
		n->link = mnl_attr_get_u32(a);
		break;
	case TCA_U32_CLASSID:
		n->classid = mnl_attr_get_u32(a);
		break;
	case TCA_U32_SEL:
		sel = mnl_attr_get_payload(a);
		if (mnl_attr_get_payload_len(a) < sizeof(*sel))
			break;
		n->sel = *sel;
		if (n->sel.nkeys > 16)
			n->sel.nkeys = 16;
		if (mnl_attr_get_payload_len(a) < sizeof(*sel) + n->sel.nkeys * sizeof(sel->keys[0]))
			n->sel.nkeys = 0;
		memcpy(n->keys, sel->keys, n->sel.nkeys * sizeof(sel->keys[0]));
		break;
	case TCA_U32_MARK:
		mk = mnl_attr_get_payload(a);
		if (mnl_attr_get_payload_len(a) >= sizeof(*mk)) {
			n->has_mark = true;
			n->mark_val = mk->val;
			n->mark_mask = mk->mask;
		}
		break;
	case TCA_U32_POLICE:
		n->police = true;
		break;
	case TCA_U32_INDEV:
		n->indev = true;
		break;
	}
}

int u32_graph_add(struct u32_graph *g, __u32 attach, __u32 pref, __u16 proto,
		  const struct nlmsghdr *nlh)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *b;
	struct u32_node *n;

	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 64;
		struct u32_node *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	n = &g->v[g->n];
	memset(n, 0, sizeof(*n));
	n->pref = pref;
	n->proto = proto;
	n->handle = tcm->tcm_handle;
	n->seen[n->nseen++] = attach;
	if (g->n && g->v[g->n - 1].handle == n->handle && g->v[g->n - 1].seen[0] == attach)
		n->occ = g->v[g->n - 1].occ + 1;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) != TCA_OPTIONS)
			continue;
		mnl_attr_for_each_nested(b, a) {
			if (mnl_attr_get_type(b) == TCA_U32_ACT) {
				/* the kinds now: the message is gone after the dump */
				imp_action_kinds(b, n->acts, sizeof(n->acts));
			} else {
				node_attr(n, b);
			}
		}
	}
	if (!TC_U32_NODE(n->handle) && !n->is_ht)
		return 0;	/* a table seen without its divisor: nothing to walk */
	g->n++;
	return 0;
}

/* ---- the header template --------------------------------------------- */

struct tpl {
	__u8 val[TPL_LEN], mask[TPL_LEN];
	bool never;			/* two keys want different bytes */
	char why[IMP_TEXT_LEN];
};

static void tpl_key(struct tpl *t, const struct tc_u32_key *k)
{
	__u32 m = ntohl(k->mask), v = ntohl(k->val) & m;

	if (!m)
		return;		/* match u32 0 0: every packet */
	if (k->offmask || k->off < 0 || k->off + 4 > TPL_LEN || (k->off & 3)) {
		snprintf(t->why, sizeof(t->why), "a key at %s offset %d",
			 k->offmask ? "a next-header" : "an unaligned or far", k->off);
		return;
	}
	for (int i = 0; i < 4; i++) {
		__u8 mb = m >> (24 - 8 * i), vb = v >> (24 - 8 * i);
		int at = k->off + i;

		if ((t->mask[at] & mb & (t->val[at] ^ vb)))
			t->never = true;
		t->mask[at] |= mb;
		t->val[at] = (t->val[at] & ~mb) | vb;
	}
}

static void tpl_node(struct tpl *t, const struct u32_node *n)
{
	if (n->sel.flags & (TC_U32_OFFSET | TC_U32_VAROFFSET | TC_U32_EAT))
		snprintf(t->why, sizeof(t->why), "u32's offset/eat (next header) machinery");
	for (int i = 0; i < n->sel.nkeys; i++)
		tpl_key(t, &n->keys[i]);
}

/* Layout of the fields htbctl classifies on, per network protocol. */
struct layout {
	int src, dst, alen;		/* address bytes */
	int proto;			/* the protocol byte */
	int ports;			/* sport, then dport (IHL 5 / no extension header) */
	int tos;			/* the DSCP: byte and shift of its 6 bits */
};

static const struct layout v4 = { 12, 16, 4, 9, 20, 1 };
static const struct layout v6 = { 8, 24, 16, 6, 40, 0 };

static bool bytes_clear(const struct tpl *t, int from, int to)
{
	for (int i = from; i < to; i++)
		if (t->mask[i])
			return false;
	return true;
}

/* The mask of bytes [at, at+len) as a prefix length, -1 if not one. */
static int tpl_plen(const struct tpl *t, int at, int len)
{
	int plen = 0, i = 0;

	while (i < len && t->mask[at + i] == 0xff) {
		plen += 8;
		i++;
	}
	if (i < len) {
		__u8 b = t->mask[at + i];

		while (b & 0x80) {
			plen++;
			b <<= 1;
		}
		if (b || !bytes_clear(t, at + i + 1, at + len))
			return -1;
	}
	return plen;
}

static void add_addr(struct imp_rule *r, const struct tpl *t, const struct layout *l, int at,
		     enum imp_field f)
{
	int plen = tpl_plen(t, at, l->alen);
	struct imp_key *k;

	if (bytes_clear(t, at, at + l->alen))
		return;
	if (plen < 0) {
		snprintf(r->why, sizeof(r->why), "an address mask that is not a prefix");
		return;
	}
	k = &r->keys[r->nkeys++];
	k->field = f;
	k->af = l->alen == 4 ? AF_INET : AF_INET6;
	k->plen = (__u8)plen;
	memcpy(k->addr, t->val + at, l->alen);
}

/* A port under a mask of leading ones is an aligned range (1024/0xfc00 is
 * 1024-2047); any other mask is not a range. */
static void add_port(struct imp_rule *r, const struct tpl *t, int at, enum imp_field f)
{
	__u16 m = (__u16)(t->mask[at] << 8 | t->mask[at + 1]);
	__u16 v = (__u16)(t->val[at] << 8 | t->val[at + 1]);
	struct imp_key *k;

	if (!m)
		return;
	if ((__u16)(~m & (__u16)(~m + 1))) {
		snprintf(r->why, sizeof(r->why), "a port under mask 0x%04x (not a range)", m);
		return;
	}
	k = &r->keys[r->nkeys++];
	k->field = f;
	k->lo = v & m;
	k->hi = (v & m) | (__u16)~m;
	if (!k->lo && k->hi)
		k->lo = 1;	/* no packet has port 0; the config refuses it */
}

static void add_dscp(struct imp_rule *r, const struct tpl *t, bool ip6)
{
	/* IPv4: byte 1 is the TOS; IPv6: the traffic class spans bytes 0-1 */
	__u16 m = ip6 ? (__u16)((t->mask[0] & 0x0f) << 4 | t->mask[1] >> 4) : t->mask[1];
	__u16 v = ip6 ? (__u16)((t->val[0] & 0x0f) << 4 | t->val[1] >> 4) : t->val[1];
	struct imp_key *k;

	if (!m)
		return;
	if (m != 0xfc) {
		snprintf(r->why, sizeof(r->why), "the TOS byte under mask 0x%02x (only the DSCP bits, 0xfc, convert)", m);
		return;
	}
	k = &r->keys[r->nkeys++];
	k->field = IF_DSCP;
	k->val = v >> 2;
}

/* The template's bytes as keys of r (the fields it fixes). */
static void tpl_fields(struct imp_rule *r, const struct tpl *t, __u16 proto)
{
	bool ip6 = proto == ETH_P_IPV6;
	const struct layout *l = ip6 ? &v6 : &v4;
	__u8 known[TPL_LEN] = { 0 };

	if (proto != ETH_P_IP && proto != ETH_P_IPV6 && proto != ETH_P_ALL) {
		snprintf(r->why, sizeof(r->why), "protocol 0x%04x (htbctl classifies IPv4 and IPv6)", proto);
		return;
	}
	memset(known + l->src, 0xff, l->alen);
	memset(known + l->dst, 0xff, l->alen);
	memset(known + l->ports, 0xff, 4);
	known[l->proto] = 0xff;
	if (ip6) {
		known[0] = 0x0f;
		known[1] = 0xf0;
	} else {
		known[1] = 0xff;
	}
	for (int i = 0; i < TPL_LEN; i++)
		if (t->mask[i] & ~known[i]) {
			snprintf(r->why, sizeof(r->why), "header bytes at offset %d (htbctl classifies on addresses, protocol, ports and DSCP)", i);
			return;
		}
	add_addr(r, t, l, l->src, IF_SRC);
	add_addr(r, t, l, l->dst, IF_DST);
	add_port(r, t, l->ports, IF_SPORT);
	add_port(r, t, l->ports + 2, IF_DPORT);
	add_dscp(r, t, ip6);
	if (t->mask[l->proto] == 0xff) {
		struct imp_key *k = &r->keys[r->nkeys++];

		k->field = IF_PROTO;
		k->val = t->val[l->proto];
	} else if (t->mask[l->proto]) {
		snprintf(r->why, sizeof(r->why), "the protocol byte under a mask");
	}
}

/* ---- the walk -------------------------------------------------------- */

/* u32_classify follows at most this many links (TC_U32_MAXDEPTH in
 * net/sched/cls_u32.c); one more and it gives up on the packet ("dead
 * loop"): nothing of this filter matches it. */
#define U32_MAXDEPTH 8

/*
 * One visit of a table: what it yields depends only on the table, the
 * template laid so far, the link's hash selector and the depth left. A
 * second visit with all of these equal yields the first one's rules again,
 * later in HTB's order, so never first: it is skipped. Tables linking to
 * tables through several nodes each (7112e5f walked every path: a 43-line
 * script took 21 s) then cost one visit per distinct state.
 */
struct visit {
	int ht;				/* the table's index in the graph */
	__u32 hmask;
	int hoff;
	__u8 depth, via, never, why;
	__u8 val[TPL_LEN], mask[TPL_LEN];
};

struct visits {
	struct visit *v;		/* open addressing; ht -1: empty */
	size_t cap, n;
};

struct walk {
	struct u32_graph *g;
	struct imp_tree *t;
	int depth;
	__u32 attach, pref;		/* of the table the walk started at */
	struct visits seen;
	long steps, max_steps;		/* nodes walked: a bound on the work */
	bool cut, deep;			/* notes given once per pref */
};

/* By handle (table, bucket, node: u32's own order within a bucket), then
 * by place among the nodes of one handle (the kernel's order too); the
 * tables of one pref number come out in every attach point's dump. */
static int cmp_node(const void *pa, const void *pb)
{
	const struct u32_node *a = pa, *b = pb;

	if (a->handle != b->handle)
		return a->handle < b->handle ? -1 : 1;
	return a->occ < b->occ ? -1 : a->occ > b->occ;
}

/* One entry per handle and place (the same node listed by several attach
 * points); a table keeps every attach point that listed it. */
static void dedupe(struct u32_graph *g)
{
	int n = 0;

	if (!g->n)
		return;		/* no u32 filter: g->v is NULL, which qsort may not take */
	qsort(g->v, g->n, sizeof(g->v[0]), cmp_node);
	for (int i = 0; i < g->n; i++) {
		struct u32_node *keep = n ? &g->v[n - 1] : NULL;

		if (keep && keep->handle == g->v[i].handle && keep->occ == g->v[i].occ) {
			bool dup = false;

			for (int k = 0; k < keep->nseen; k++)
				dup |= keep->seen[k] == g->v[i].seen[0];
			if (!dup && keep->nseen < MAX_SEEN)
				keep->seen[keep->nseen++] = g->v[i].seen[0];
			else if (!dup)
				keep->seen_cut = true;
			continue;
		}
		g->v[n++] = g->v[i];
	}
	g->n = n;
}

/* The first entry of table htid (the table itself sorts first: node 0). */
static int ht_start(const struct u32_graph *g, __u32 htid)
{
	int lo = 0, hi = g->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (g->v[mid].handle < TC_U32_HTID(htid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct u32_node *find_ht(const struct u32_graph *g, __u32 htid)
{
	int i = ht_start(g, htid);

	return i < g->n && g->v[i].is_ht && TC_U32_HTID(g->v[i].handle) == TC_U32_HTID(htid) ?
	       &g->v[i] : NULL;
}

static void emit(struct walk *w, const struct u32_node *n, const struct tpl *tp)
{
	struct imp_rule *r = imp_rule_new(w->t);

	if (!r)
		return;
	r->attach = w->attach;
	r->pref = w->pref;
	r->handle = n->handle;
	r->classid = n->classid;
	r->proto = n->proto;
	snprintf(r->kind, sizeof(r->kind), "u32");
	if (tp->why[0])
		snprintf(r->why, sizeof(r->why), "%s", tp->why);
	else
		tpl_fields(r, tp, n->proto);
	if (n->indev)
		snprintf(r->why, sizeof(r->why), "it matches an input device");
	if (n->has_mark && (n->mark_val & ~n->mark_mask))
		snprintf(r->why, sizeof(r->why), "mark 0x%x has bits outside mask 0x%x: it never matches in HTB",
			 n->mark_val, n->mark_mask);
	else if (n->has_mark && r->nkeys < IMP_MAX_KEYS) {
		struct imp_key *k = &r->keys[r->nkeys++];

		k->field = IF_MARK;
		k->val = n->mark_val & n->mark_mask;
		k->mask = n->mark_mask;
	}
	if (n->police || !strcmp(n->acts, "police"))
		imp_note(w->t, n->classid, true,
			 "filter pref %u (u32): its police action is not converted (htbctl does not police); its match is kept",
			 w->pref);
	else if (n->acts[0])
		snprintf(r->why, sizeof(r->why), "its actions (%s) are not converted", n->acts);
}

/* The bucket a template hashes to under link node n, -1 if it does not
 * fix the hashed bits. */
static int tpl_bucket(const struct tpl *t, const struct u32_node *n, __u32 divisor)
{
	__u32 hm = ntohl(n->sel.hmask), v = 0, m = 0;
	int off = n->sel.hoff;

	if (!hm)
		return 0;
	if (off < 0 || off + 4 > TPL_LEN)
		return -1;
	for (int i = 0; i < 4; i++) {
		v = v << 8 | t->val[off + i];
		m = m << 8 | t->mask[off + i];
	}
	if ((m & hm) != hm)
		return -1;
	return (int)(((v & hm) >> (__builtin_ffs((int)hm) - 1)) & (divisor - 1));
}

static void walk_ht(struct walk *w, const struct u32_node *ht, const struct tpl *above,
		    const struct u32_node *via);

static __u64 visit_hash(const struct visit *k)
{
	const __u8 *p = (const __u8 *)k;
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int visits_grow(struct visits *vs)
{
	size_t cap = vs->cap ? 2 * vs->cap : 256;
	struct visit *v = malloc(cap * sizeof(*v)), *old = vs->v;

	if (!v)
		return -1;
	for (size_t i = 0; i < cap; i++)
		v[i].ht = -1;
	vs->v = v;
	for (size_t i = 0, c = vs->cap; i < c; i++) {
		size_t at = visit_hash(&old[i]) & (cap - 1);

		if (old[i].ht < 0)
			continue;
		while (v[at].ht >= 0)
			at = (at + 1) & (cap - 1);
		v[at] = old[i];
	}
	vs->cap = cap;
	free(old);
	return 0;
}

/* Records the visit; false if it was made before (or memory ran out:
 * then the walk goes on without the shortcut). */
static bool first_visit(struct walk *w, const struct u32_node *ht, const struct tpl *t,
			const struct u32_node *via)
{
	struct visits *vs = &w->seen;
	struct visit k;
	size_t at;

	memset(&k, 0, sizeof(k));	/* the padding too: the key is hashed whole */
	k.ht = (int)(ht - w->g->v);
	k.hmask = via ? via->sel.hmask : 0;
	k.hoff = via ? via->sel.hoff : 0;
	k.via = via != NULL;
	k.depth = (__u8)w->depth;
	k.never = t->never;
	k.why = t->why[0] != 0;
	memcpy(k.val, t->val, TPL_LEN);
	memcpy(k.mask, t->mask, TPL_LEN);
	if (2 * (vs->n + 1) > vs->cap && visits_grow(vs))
		return true;
	for (at = visit_hash(&k) & (vs->cap - 1); vs->v[at].ht >= 0; at = (at + 1) & (vs->cap - 1))
		if (!memcmp(&vs->v[at], &k, sizeof(k)))
			return false;
	vs->v[at] = k;
	vs->n++;
	return true;
}

/* Follows link node n into its table, once per state. True when it is
 * past u32's depth: the kernel gives up on the packet there. */
static bool walk_link(struct walk *w, const struct u32_node *n, const struct tpl *t)
{
	const struct u32_node *down = find_ht(w->g, n->link);

	if (!down)
		return false;
	if (w->depth >= U32_MAXDEPTH) {
		if (!w->deep)
			imp_note(w->t, 0, true, "u32 filter pref %u links more than %d tables deep, where the kernel gives up on the packet (\"dead loop\"): those paths are not converted",
				 w->pref, U32_MAXDEPTH);
		w->deep = true;
		return true;
	}
	if (first_visit(w, down, t, n)) {
		w->depth++;
		walk_ht(w, down, t, n);
		w->depth--;
	}
	return false;
}

static void walk_node(struct walk *w, const struct u32_node *n, const struct tpl *above,
		      const struct u32_node *via, __u32 bucket, __u32 divisor)
{
	struct tpl t = *above;

	tpl_node(&t, n);
	if (t.never)
		return;		/* two keys disagree: no packet matches */
	if (via && !t.why[0] && divisor > 1) {
		int b = tpl_bucket(&t, via, divisor);

		if (b < 0) {
			snprintf(t.why, sizeof(t.why),
				 "it sits in hash bucket %x of table %x:, hashed on bytes it does not fix",
				 bucket, TC_U32_USERHTID(n->handle));
		} else if ((__u32)b != bucket) {
			imp_note(w->t, n->classid, true,
				 "u32 filter %x:%x:%x never matches in HTB (its keys hash to bucket %x): dropped",
				 TC_U32_USERHTID(n->handle), TC_U32_HASH(n->handle), TC_U32_NODE(n->handle), b);
			return;
		}
	}
	if (n->link) {
		if (walk_link(w, n, &t))
			return;
		/* nothing matched below: u32_classify pops back to this node,
		 * whose own class (if it has one) is the answer */
		if (n->classid)
			emit(w, n, &t);
		return;
	}
	if (n->classid || n->acts[0])
		emit(w, n, &t);
}

static void walk_ht(struct walk *w, const struct u32_node *ht, const struct tpl *above,
		    const struct u32_node *via)
{
	__u32 divisor = ht->divisor ? ht->divisor : 1;

	/* sorted by handle: the table's nodes follow it, bucket by bucket */
	for (int i = ht_start(w->g, ht->handle); i < w->g->n; i++) {
		const struct u32_node *n = &w->g->v[i];

		if (TC_U32_HTID(n->handle) != TC_U32_HTID(ht->handle))
			break;
		if (n->is_ht || TC_U32_HASH(n->handle) >= divisor)
			continue;
		if (++w->steps > w->max_steps) {
			if (!w->cut)
				imp_note(w->t, 0, true, "u32 filter pref %u: its links lead through more than %ld filter nodes; the rest of the pref is not converted",
					 w->pref, w->max_steps);
			w->cut = true;
			return;
		}
		walk_node(w, n, above, via, TC_U32_HASH(n->handle), divisor);
	}
}

/* Tables some node links to; 4096 table ids (12 bits). */
static bool linked_to(const struct u32_graph *g, const struct u32_node *ht)
{
	for (int i = 0; i < g->n; i++)
		if (g->v[i].link && TC_U32_HTID(g->v[i].link) == TC_U32_HTID(ht->handle))
			return true;
	return false;
}

static bool under(const struct imp_tree *t, __u32 classid, __u32 ancestor)
{
	for (int d = 0; d < 9 && classid; d++) {
		const struct imp_class *c = imp_class_find(t, classid);

		if (!c)
			return false;
		if (c->parent == ancestor)
			return true;
		classid = c->parent;
	}
	return false;
}

/* Does every class table ht's nodes give, through its links too, lie
 * under attach? Each table is looked at once per depth it is first
 * reached at (mind: the least depth seen per graph entry, -1 none), so
 * tables linked through many nodes are not walked once per path. */
static bool all_under_from(const struct u32_graph *g, const struct imp_tree *t,
			   const struct u32_node *ht, __u32 attach, int depth, int *mind)
{
	int self = (int)(ht - g->v);

	if (mind[self] >= 0 && mind[self] <= depth)
		return true;	/* looked at from here or nearer the root */
	mind[self] = depth;
	for (int i = ht_start(g, ht->handle); i < g->n; i++) {
		const struct u32_node *n = &g->v[i], *down;

		if (TC_U32_HTID(n->handle) != TC_U32_HTID(ht->handle))
			break;
		if (!n->is_ht && n->classid && !under(t, n->classid, attach))
			return false;
		if (!n->is_ht && n->link && depth < U32_MAXDEPTH && (down = find_ht(g, n->link)) &&
		    !all_under_from(g, t, down, attach, depth + 1, mind))
			return false;
	}
	return true;
}

static bool all_under(const struct u32_graph *g, const struct imp_tree *t,
		      const struct u32_node *ht, __u32 attach)
{
	int *mind = malloc((g->n ? g->n : 1) * sizeof(int));
	bool ok;

	if (!mind)
		return false;	/* then the qdisc owns it, as when unsure */
	memset(mind, 0xff, (g->n ? g->n : 1) * sizeof(int));
	ok = all_under_from(g, t, ht, attach, 0, mind);
	free(mind);
	return ok;
}

/*
 * u32 keeps one set of tables per qdisc, and a dump of a pref on any
 * attach point lists every table of that pref number: a table's dump does
 * not say which attach point's classifier it is the root of. When the
 * same pref is on several, the table goes to the deepest one whose
 * classes it all leads to (a filter on class X classifies into X's
 * subtree), else to the qdisc; the note says so.
 */
static __u32 owner(const struct u32_graph *g, struct imp_tree *t, const struct u32_node *ht)
{
	__u32 best = t->handle;
	int depth = -1;

	if (ht->seen_cut)
		imp_note(t, 0, true, "u32 table %x: (pref %u) is listed on more than %d attach points: its owner is a guess",
			 TC_U32_USERHTID(ht->handle), ht->pref, MAX_SEEN);
	if (ht->nseen == 1)
		return ht->seen[0];
	for (int i = 0; i < ht->nseen; i++) {
		__u32 a = ht->seen[i];
		int d = 0;

		for (__u32 c = a; c && c != t->handle && d < 9; d++) {
			const struct imp_class *cl = imp_class_find(t, c);

			c = cl ? cl->parent : 0;
		}
		if (a != t->handle && d > depth && all_under(g, t, ht, a)) {
			best = a;
			depth = d;
		}
	}
	imp_note(t, 0, false, "u32 table %x: (pref %u) is listed on %d attach points; taken as %s %x:%x's%s",
		 TC_U32_USERHTID(ht->handle), ht->pref, ht->nseen, best == t->handle ? "qdisc" : "class",
		 TC_H_MAJ(best) >> 16, TC_H_MIN(best), best == t->handle ? "" : " (its classes are below it)");
	return best;
}

/* The kernel numbers the root tables it makes for each pref from 800:
 * (cls_u32.c, gen_new_htid: its generator starts at 0x7ff). */
#define U32_ROOT_HTID	0x800

/* Each pref's tables that nothing links to are where u32_classify starts
 * (the one the kernel made for the pref, 800: and up). */
void u32_graph_resolve(struct u32_graph *g, struct imp_tree *t)
{
	struct walk w = { .g = g, .t = t };
	struct tpl empty = { 0 };

	/* a generous bound: every node a few times over (a hash table linked
	 * from several nodes is walked once for each) */
	w.max_steps = 4L * g->n + 16384;
	dedupe(g);
	for (int i = 0; i < g->n; i++) {
		if (!g->v[i].is_ht || linked_to(g, &g->v[i]))
			continue;
		/* a pref's root table has one bucket and an id the kernel gave
		 * it (800: and up); a table made by hand (a smaller id) or one
		 * of more buckets that nothing links to is never consulted */
		if (g->v[i].divisor > 1 || TC_U32_USERHTID(g->v[i].handle) < U32_ROOT_HTID) {
			imp_note(t, 0, true, "u32 %stable %x: is linked from no filter: never consulted, not converted",
				 g->v[i].divisor > 1 ? "hash " : "", TC_U32_USERHTID(g->v[i].handle));
			continue;
		}
		w.attach = owner(g, t, &g->v[i]);
		w.pref = g->v[i].pref;
		w.deep = false;
		w.seen.n = 0;	/* a visit's rules are this root's: another root's are its own */
		for (size_t k = 0; k < w.seen.cap; k++)
			w.seen.v[k].ht = -1;
		walk_ht(&w, &g->v[i], &empty, NULL);
	}
	free(w.seen.v);
}
