// SPDX-License-Identifier: GPL-2.0
/*
 * import: the decoded filters turned into each leaf's match lines, checked
 * against HTB's order (filters by pref, first match wins) where htbctl's
 * fixed precedence (mark, DSCP, dst, src, ports) could decide otherwise,
 * then the config written with every note as a comment where it belongs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>

#include "config/config.h"
#include "import/filter.h"
#include "import/import.h"

static const char *cid(__u32 id, char *buf, size_t len)
{
	snprintf(buf, len, "%x:%x", TC_H_MAJ(id) >> 16, TC_H_MIN(id));
	return buf;
}

/* "u32 pref 1 (800::800)" or "fw pref 3 (handle 0x5)" */
static const char *rule_name(const struct imp_rule *r, char *buf, size_t len)
{
	if (!strcmp(r->kind, "u32"))
		snprintf(buf, len, "u32 filter pref %u (%x:%x:%x)", r->pref, TC_U32_USERHTID(r->handle),
			 TC_U32_HASH(r->handle), TC_U32_NODE(r->handle));
	else
		snprintf(buf, len, "%s filter pref %u (handle 0x%x)", r->kind, r->pref, r->handle);
	return buf;
}

static void drop_rule(struct imp_tree *t, struct imp_rule *r, bool warn, const char *fmt,
		      const char *arg)
{
	char name[64], why[IMP_TEXT_LEN];

	snprintf(why, sizeof(why), fmt, arg);
	imp_note(t, imp_class_find(t, r->classid) ? r->classid : 0, warn, "not converted: %s%s%s: %s",
		 rule_name(r, name, sizeof(name)), r->text[0] && r->text[0] != '*' ? ", match " : "",
		 r->text[0] != '*' ? r->text : "", why);
	r->text[0] = '\0';
	if (!r->why[0])
		snprintf(r->why, sizeof(r->why), "%s", why);
}

/* ---- where a filter leads ------------------------------------------- */

static bool is_inner(const struct imp_tree *t, __u32 classid)
{
	const struct imp_class *c = imp_class_find(t, classid);

	return c && !c->leaf;
}

/* r's condition includes gate's: gate is every packet, or a prefix of the
 * same field that holds r's prefix. */
static bool implies(const struct imp_rule *r, const struct imp_rule *gate)
{
	const struct imp_key *a, *b;
	int nbytes;

	if (gate->text[0] == '*')
		return true;
	if (r->nkeys == gate->nkeys && !memcmp(r->keys, gate->keys, r->nkeys * sizeof(r->keys[0])))
		return true;
	if (r->nkeys != 1 || gate->nkeys != 1)
		return false;
	a = &r->keys[0];
	b = &gate->keys[0];
	if (a->field != b->field || (a->field != IF_SRC && a->field != IF_DST) ||
	    a->af != b->af || a->plen < b->plen)
		return false;
	nbytes = b->plen / 8;
	if (memcmp(a->addr, b->addr, nbytes))
		return false;
	return b->plen % 8 == 0 ||
	       !((a->addr[nbytes] ^ b->addr[nbytes]) & (0xff << (8 - b->plen % 8)));
}

/* A filter on an inner class X sees only what the filters above sent to
 * X; it converts alone when its condition lies within one of theirs. */
static bool gate_holds(struct imp_tree *t, const struct imp_rule *r, int depth)
{
	if (r->attach == t->handle)
		return true;
	if (depth > 8)
		return false;
	for (int i = 0; i < t->nrules; i++) {
		const struct imp_rule *g = &t->rules[i];

		if (g->classid != r->attach || !g->text[0])
			continue;
		if (implies(r, g) && gate_holds(t, g, depth + 1))
			return true;
	}
	return false;
}

/* A catch-all filter on inner class X (every packet HTB sent to X goes to
 * one leaf) is the condition of the one filter that leads to X, when that
 * is a match line. */
static void inherit_catchalls(struct imp_tree *t)
{
	for (int i = 0; i < t->nrules; i++) {
		struct imp_rule *r = &t->rules[i], *g = NULL;
		int n = 0;

		if (r->text[0] != '*' || r->attach == t->handle)
			continue;
		for (int j = 0; j < t->nrules; j++)
			if (t->rules[j].classid == r->attach && t->rules[j].text[0] && ++n)
				g = &t->rules[j];
		if (n == 1 && g->text[0] != '*' && g->attach == t->handle) {
			r->nkeys = g->nkeys;
			memcpy(r->keys, g->keys, sizeof(r->keys));
			snprintf(r->text, sizeof(r->text), "%s", g->text);
		}
	}
}

static void resolve_targets(struct imp_tree *t)
{
	char id[16];

	for (int i = 0; i < t->nrules; i++) {
		struct imp_rule *r = &t->rules[i];

		if (!r->why[0])
			imp_rule_express(r);
		if (r->why[0]) {
			drop_rule(t, r, true, "%s", r->why);
			continue;
		}
		if (!imp_class_find(t, r->classid))
			drop_rule(t, r, true, "class %s is not in the HTB tree", cid(r->classid, id, sizeof(id)));
		else if (r->attach != t->handle && !is_inner(t, r->attach))
			drop_rule(t, r, false, "it hangs on leaf %s, where HTB never looks",
				  cid(r->attach, id, sizeof(id)));
	}
	inherit_catchalls(t);
	for (int i = 0; i < t->nrules; i++) {
		struct imp_rule *r = &t->rules[i];

		if (r->text[0] && r->attach != t->handle && !gate_holds(t, r, 0))
			drop_rule(t, r, true,
				  "it hangs on class %s and its condition together with the filters leading there cannot be written",
				  cid(r->attach, id, sizeof(id)));
	}
}

/* Filters that send packets to an inner class are how HTB reaches the
 * filters hanging there: gates, with no match of their own (their text
 * stays for the order checks). Packets a gate takes that no filter below
 * claims go to HTB's default class (check_gates). */
static void resolve_inner_targets(struct imp_tree *t)
{
	char id[16], name[64];

	for (int i = 0; i < t->nrules; i++) {
		struct imp_rule *r = &t->rules[i];
		bool below = false;

		if (!r->text[0] || !is_inner(t, r->classid))
			continue;
		for (int j = 0; j < t->nrules && !below; j++)
			below = t->rules[j].attach == r->classid && t->rules[j].text[0];
		r->gate = true;
		if (!below)
			imp_note(t, r->classid, false,
				 "%s sends to inner class %s, which has no filters: HTB puts those packets in the default class",
				 rule_name(r, name, sizeof(name)), cid(r->classid, id, sizeof(id)));
	}
}

/* ---- HTB's order against htbctl's precedence -------------------------- */

/* A rule's place in HTB's order: hi, the top-level filter that leads to
 * it (its own place for a filter on the qdisc); lo, its own place on the
 * class it hangs on (0 on the qdisc). A place is pref, then the order
 * the rules were read in (u32's walk within a pref). */
struct pos {
	__u64 hi, lo;
	int idx;
};

static struct pos rule_pos(const struct imp_tree *t, const struct imp_rule *r, int idx)
{
	struct pos p = { .idx = idx };
	__u64 own = (__u64)r->pref << 32 | (__u32)idx;

	for (int d = 0; d < 8 && r->attach != t->handle; d++) {
		int g;

		for (g = 0; g < t->nrules; g++)
			if (t->rules[g].gate && t->rules[g].classid == r->attach && implies(r, &t->rules[g]))
				break;
		if (g == t->nrules)
			break;
		r = &t->rules[g];
		idx = g;
		p.lo = own;
	}
	p.hi = (__u64)r->pref << 32 | (__u32)idx;
	return p;
}

/* htbctl's precedence: lower wins (mark, DSCP, dst, src, dport, sport). */
static const struct imp_key *field_key(const struct imp_rule *r)
{
	for (int i = 0; i < r->nkeys; i++)
		if (r->keys[i].field != IF_PROTO)
			return &r->keys[i];
	return NULL;
}

static int rank(const struct imp_rule *r)
{
	static const int rk[] = { [IF_MARK] = 0, [IF_DSCP] = 1, [IF_DST] = 2, [IF_SRC] = 3,
				  [IF_DPORT] = 4, [IF_SPORT] = 5 };
	const struct imp_key *k = field_key(r);

	return k ? rk[k->field] : 9;
}

static int proto_of(const struct imp_rule *r)
{
	for (int i = 0; i < r->nkeys; i++)
		if (r->keys[i].field == IF_PROTO)
			return (int)r->keys[i].val;
	return 0;
}

/* Can one packet satisfy both? */
static bool overlap(const struct imp_rule *a, const struct imp_rule *b)
{
	const struct imp_key *x = field_key(a), *y = field_key(b);
	int pa = proto_of(a), pb = proto_of(b);

	if (!x || !y)
		return true;
	if (pa && pb && pa != pb)
		return false;
	if ((x->field == IF_SRC || x->field == IF_DST) && (y->field == IF_SRC || y->field == IF_DST) &&
	    x->af != y->af)
		return false;
	if (x->field != y->field)
		return true;
	switch (x->field) {
	case IF_SRC:
	case IF_DST:
		return implies(a, b) || implies(b, a);
	case IF_SPORT:
	case IF_DPORT:
		for (int i = 0; i <= x->two; i++)
			for (int j = 0; j <= y->two; j++)
				if ((i ? x->lo2 : x->lo) <= (j ? y->hi2 : y->hi) &&
				    (j ? y->lo2 : y->lo) <= (i ? x->hi2 : x->hi))
					return true;
		return false;
	case IF_MARK:
		return !((x->val ^ y->val) & x->mask & y->mask);
	default:
		return x->val == y->val;
	}
}

/* Who gets a packet both match, in htbctl: -1 a, 1 b, 0 the config
 * refuses the pair (the same claim twice). */
static int htbctl_winner(const struct imp_rule *a, const struct imp_rule *b)
{
	const struct imp_key *x = field_key(a), *y = field_key(b);

	if (rank(a) != rank(b))
		return rank(a) < rank(b) ? -1 : 1;
	if ((x->field == IF_SRC || x->field == IF_DST) && x->plen != y->plen)
		return x->plen > y->plen ? -1 : 1;
	if ((x->field == IF_SPORT || x->field == IF_DPORT) && proto_of(a) != proto_of(b))
		return proto_of(a) ? -1 : 1;
	if (x->field == IF_MARK && x->mask != y->mask)
		return __builtin_popcount(x->mask) > __builtin_popcount(y->mask) ? -1 : 1;
	return 0;
}

static bool is_host(const struct imp_rule *r)
{
	const struct imp_key *k = field_key(r);

	return k && (k->field == IF_SRC || k->field == IF_DST) &&
	       k->plen == (k->af == AF_INET ? 32 : 128);
}

/* Does every packet a matches also match b? */
static bool subset(const struct imp_rule *a, const struct imp_rule *b)
{
	const struct imp_key *x = field_key(a), *y = field_key(b);

	if (!y)
		return true;
	if (!x || x->field != y->field || (proto_of(b) && proto_of(a) != proto_of(b)))
		return false;
	switch (x->field) {
	case IF_SRC:
	case IF_DST:
		return implies(a, b);
	case IF_SPORT:
	case IF_DPORT:
		for (int i = 0; i <= x->two; i++) {
			__u16 lo = i ? x->lo2 : x->lo, hi = i ? x->hi2 : x->hi;

			if (!((y->lo <= lo && hi <= y->hi) || (y->two && y->lo2 <= lo && hi <= y->hi2)))
				return false;
		}
		return true;
	case IF_MARK:
		return !(y->mask & ~x->mask) && !((x->val ^ y->val) & y->mask);
	default:
		return x->val == y->val;
	}
}

/* "udp dport 80-89" for a range of r's port key. */
static void port_text(const struct imp_rule *r, __u16 lo, __u16 hi, char *out, size_t len)
{
	const char *proto = proto_of(r) == IPPROTO_TCP ? "tcp " : proto_of(r) == IPPROTO_UDP ? "udp " : "";
	const char *f = field_key(r)->field == IF_SPORT ? "sport" : "dport";

	if (lo == hi)
		snprintf(out, len, "%s%s %u", proto, f, lo);
	else
		snprintf(out, len, "%s%s %u-%u", proto, f, lo, hi);
}

/* later's port ranges without earlier's (each one or two ranges); false,
 * changing nothing, if more than two ranges would be left. */
static bool narrow_ports(struct imp_rule *later, const struct imp_rule *earlier)
{
	struct imp_key *x = (struct imp_key *)field_key(later);
	const struct imp_key *y = field_key(earlier);
	unsigned lo[6], hi[6], n = 0;

	lo[n] = x->lo, hi[n++] = x->hi;
	if (x->two)
		lo[n] = x->lo2, hi[n++] = x->hi2;
	for (int j = 0; j <= y->two; j++) {
		unsigned elo = j ? y->lo2 : y->lo, ehi = j ? y->hi2 : y->hi, m = 0;
		unsigned nlo[6], nhi[6];

		for (unsigned i = 0; i < n; i++) {
			if (hi[i] < elo || lo[i] > ehi) {
				nlo[m] = lo[i], nhi[m++] = hi[i];
				continue;
			}
			if (lo[i] < elo)
				nlo[m] = lo[i], nhi[m++] = elo - 1;
			if (hi[i] > ehi)
				nlo[m] = ehi + 1, nhi[m++] = hi[i];
		}
		if (m > 2 || !m)
			return false;
		memcpy(lo, nlo, sizeof(lo));
		memcpy(hi, nhi, sizeof(hi));
		n = m;
	}
	x->lo = (__u16)lo[0];
	x->hi = (__u16)hi[0];
	x->two = n == 2;
	x->lo2 = n == 2 ? (__u16)lo[1] : 0;
	x->hi2 = n == 2 ? (__u16)hi[1] : 0;
	port_text(later, x->lo, x->hi, later->text, sizeof(later->text));
	return true;
}

/* later overlaps earlier, and HTB gives the packets both match to earlier's
 * class. Where htbctl would decide the same, nothing to do; where every
 * packet of later is earlier's, later is dead in HTB and dropped; where
 * they are one port range partly over another, later is narrowed to what
 * is its own; otherwise the difference is reported. */
static int check_pair(struct imp_tree *t, struct imp_rule *earlier, struct imp_rule *later)
{
	char name[64], id[16], msg[IMP_TEXT_LEN];
	int w;

	if (!earlier->text[0] || !later->text[0] || earlier->classid == later->classid ||
	    !overlap(earlier, later))
		return 0;
	w = htbctl_winner(earlier, later);
	if (w < 0)
		return 0;
	snprintf(msg, sizeof(msg), "%s to class %s comes first in HTB and takes its packets",
		 rule_name(earlier, name, sizeof(name)), cid(earlier->classid, id, sizeof(id)));
	if (subset(later, earlier)) {
		drop_rule(t, later, false, "%s", msg);
		return 1;
	}
	if (w == 0 && (field_key(later)->field == IF_SPORT || field_key(later)->field == IF_DPORT)) {
		if (narrow_ports(later, earlier)) {
			imp_note(t, later->classid, false, "%s narrowed to the ports that are its own: %s",
				 rule_name(later, name, sizeof(name)), msg);
			return 1;
		}
		/* htbctl refuses overlapping ranges; what is left is three */
		drop_rule(t, later, true, "%s, and the ports left are more than two ranges", msg);
		return 1;
	}
	return 2;
}

/* One warning per filter whose packets htbctl's precedence would take
 * from filters HTB tries first: the first of them, and how many. */
static void report_reversed(struct imp_tree *t, const struct imp_rule *later,
			    const struct imp_rule *first, int n)
{
	char a[64], b[64], more[48] = "";

	if (n > 1)
		snprintf(more, sizeof(more), " and %d more", n - 1);
	imp_note(t, later->classid, true,
		 "%s, match %s, overlaps %s%s, which HTB tries first: htbctl's precedence sends the packets both match here",
		 rule_name(later, a, sizeof(a)), later->text, rule_name(first, b, sizeof(b)), more);
}

static int cmp_pos(const void *pa, const void *pb)
{
	const struct pos *a = pa, *b = pb;

	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Host prefixes (/32, /128) of the same field overlap only when equal:
 * sorted by address, equal ones are neighbours, and the one HTB tries
 * first takes them. A pass over n log n instead of n^2 pairs: a
 * LibreQoS tree has a /32 per subscriber. */
static int cmp_host(const void *pa, const void *pb, void *arg)
{
	const struct imp_tree *t = arg;
	const struct pos *a = pa, *b = pb;
	const struct imp_key *x = field_key(&t->rules[a->idx]);
	const struct imp_key *y = field_key(&t->rules[b->idx]);
	int c = x->field != y->field ? (x->field < y->field ? -1 : 1) : memcmp(x->addr, y->addr, 16);

	return c ? c : cmp_pos(a, b);
}

static bool same_host(const struct imp_tree *t, const struct pos *a, const struct pos *b)
{
	return !memcmp(field_key(&t->rules[a->idx]), field_key(&t->rules[b->idx]),
		       offsetof(struct imp_key, plen));
}

static void check_hosts(struct imp_tree *t, const struct pos *ord, int n)
{
	struct pos *h = calloc(n ? n : 1, sizeof(*h));
	int nh = 0;

	if (!h)
		return;
	for (int i = 0; i < n; i++)
		if (is_host(&t->rules[ord[i].idx]))
			h[nh++] = ord[i];
	qsort_r(h, nh, sizeof(*h), cmp_host, t);
	for (int i = 1, first = 0; i < nh; i++) {
		if (!same_host(t, &h[first], &h[i]))
			first = i;
		else
			check_pair(t, &t->rules[h[first].idx], &t->rules[h[i].idx]);
	}
	free(h);
}

/* A catch-all filter on the qdisc ends HTB's search: to a leaf it is the
 * default, to an inner class (a gate) it sends everything there; what
 * comes after it never matches. One of a protocol (`protocol ip u32
 * match u32 0 0`) ends it for that protocol only; htbctl has no match
 * for an address family, so its class becomes the default, which then
 * takes the other family's unclassified packets too (a warning). */
static void first_catchall(struct imp_tree *t, const struct pos *ord, int n)
{
	char id[16], id2[64];
	int at = -1, fam = -1;

	for (int i = 0; i < n; i++) {
		struct imp_rule *r = &t->rules[ord[i].idx];
		const struct imp_rule *c = at >= 0 ? &t->rules[ord[at].idx] :
					   fam >= 0 ? &t->rules[ord[fam].idx] : NULL;

		if (c && ord[i].hi != ord[at >= 0 ? at : fam].hi &&
		    (at >= 0 || r->proto == c->proto)) {
			if (!r->gate) {
				char what[64];

				snprintf(what, sizeof(what), "every %spacket (to %s)",
					 at >= 0 ? "" : c->proto == ETH_P_IP ? "IPv4 " : "IPv6 ",
					 cid(c->classid, id, sizeof(id)));
				drop_rule(t, r, false, "it comes after a filter that takes %s", what);
			}
			r->text[0] = '\0';
			continue;
		}
		if (at >= 0 || ord[i].lo || r->text[0] != '*')
			continue;
		if (r->proto != ETH_P_ALL && !r->gate && fam < 0) {
			fam = i;
			imp_note(t, 0, true, "%s takes every %s packet to %s: htbctl has no match for one address family, "
				 "so %s is the default, for the other family's unclassified packets too",
				 rule_name(r, id2, sizeof(id2)), r->proto == ETH_P_IP ? "IPv4" : "IPv6",
				 cid(r->classid, id, sizeof(id)), id);
		} else if (r->proto != ETH_P_ALL && !r->gate) {
			drop_rule(t, r, true, "%s", "a second catch-all of one protocol cannot be written");
			continue;
		} else {
			at = i;
			if (r->gate)
				continue;
		}
		if (t->defcls && t->defcls != r->classid)
			imp_note(t, 0, false, "HTB's default %s is never used: a filter takes every packet to %s",
				 cid(t->defcls, id, sizeof(id)), cid(r->classid, id2, sizeof(id2)));
		t->defcls = r->classid;
		r->text[0] = '\0';
	}
}

/* Does a filter below gate ord[i] take every packet the gate sends? */
static bool claimed(const struct imp_tree *t, const struct pos *ord, int n, int i)
{
	const struct imp_rule *g = &t->rules[ord[i].idx];

	for (int j = 0; j < n; j++) {
		const struct imp_rule *r = &t->rules[ord[j].idx];

		if (ord[j].hi == ord[i].hi && ord[j].lo && !r->gate && r->text[0] && subset(g, r))
			return true;
	}
	return false;
}

/* Packets a gate takes that no filter below it claims go to HTB's
 * default class, and never reach a later filter; in htbctl a later
 * filter that overlaps the gate takes them. One warning per gate. */
static void check_gates(struct imp_tree *t, const struct pos *ord, int n)
{
	char name[64], id[16], first[64];

	for (int i = 0; i < n; i++) {
		const struct imp_rule *g = &t->rules[ord[i].idx];
		int later = 0;

		if (!g->gate || ord[i].lo || !g->text[0] || g->text[0] == '*' || claimed(t, ord, n, i))
			continue;
		for (int j = i + 1; j < n; j++) {
			const struct imp_rule *r = &t->rules[ord[j].idx];

			if (ord[j].hi == ord[i].hi || r->gate || !r->text[0] || !overlap(g, r))
				continue;
			if (!later++)
				rule_name(r, first, sizeof(first));
		}
		if (later)
			imp_note(t, g->classid, true,
				 "%s sends %s to inner class %s; what no filter there claims goes to HTB's default class, "
				 "but in htbctl %d later filter(s) may take it (the first: %s)",
				 rule_name(g, name, sizeof(name)), g->text, cid(g->classid, id, sizeof(id)), later, first);
	}
}

/* Every pair of converted filters of different classes that HTB and
 * htbctl could decide differently (check_pair). Host prefixes against
 * each other only when equal (check_hosts), or when both src and dst
 * host filters exist (a packet has both). */
static void check_pairs(struct imp_tree *t, const struct pos *ord, int n)
{
	int *nonhost = calloc(n ? n : 1, sizeof(int)), nnh = 0;
	bool hsrc = false, hdst = false;

	for (int i = 0; i < n; i++) {
		const struct imp_rule *r = &t->rules[ord[i].idx];

		if (is_host(r) && !r->gate) {
			hsrc |= field_key(r)->field == IF_SRC;
			hdst |= field_key(r)->field == IF_DST;
		}
	}
	check_hosts(t, ord, n);
	for (int j = 0; nonhost && j < n; j++) {
		struct imp_rule *b = &t->rules[ord[j].idx];
		bool host = is_host(b), all = !host || (hsrc && hdst);
		const struct imp_rule *first = NULL;
		int reversed = 0;

		if (b->gate)
			continue;
		for (int i = 0; i < (all ? j : nnh) && b->text[0]; i++) {
			struct imp_rule *a = &t->rules[ord[all ? i : nonhost[i]].idx];

			if (a->gate || (host && is_host(a) && field_key(a)->field == field_key(b)->field))
				continue;	/* check_hosts did those */
			if (check_pair(t, a, b) == 2 && !reversed++)
				first = a;
		}
		if (reversed && b->text[0])
			report_reversed(t, b, first, reversed);
		if (!host)
			nonhost[nnh++] = j;
	}
	free(nonhost);
}

/* Two rules on one attach point that give one class the same match (a
 * filter given twice, u32 links reaching one node twice): the later in
 * HTB's order never gets a packet, so it goes before the order is
 * checked (no warning about it) and the line is written once. */
static int match_order(const struct imp_rule *a, const struct imp_rule *b)
{
	const struct imp_key *ka = field_key(a), *kb = field_key(b);
	int c = strcmp(a->text, b->text);

	if (a->classid != b->classid)
		return a->classid < b->classid ? -1 : 1;
	if (a->attach != b->attach)
		return a->attach < b->attach ? -1 : 1;
	if (c)
		return c;
	if ((ka && ka->two) != (kb && kb->two))
		return ka && ka->two ? 1 : -1;
	if (ka && ka->two && (ka->lo2 != kb->lo2 || ka->hi2 != kb->hi2))
		return ka->lo2 != kb->lo2 ? (ka->lo2 < kb->lo2 ? -1 : 1) : (ka->hi2 < kb->hi2 ? -1 : 1);
	return 0;
}

static int cmp_match(const void *pa, const void *pb, void *arg)
{
	const struct imp_tree *t = arg;
	int a = *(const int *)pa, b = *(const int *)pb;

	/* then HTB's order within one attach point: pref, then as read */
	return match_order(&t->rules[a], &t->rules[b]) ?:
	       t->rules[a].pref != t->rules[b].pref ? (t->rules[a].pref < t->rules[b].pref ? -1 : 1) : a - b;
}

static int drop_duplicates(struct imp_tree *t)
{
	int *ix = malloc((t->nrules ? t->nrules : 1) * sizeof(int)), n = 0;

	if (!ix)
		return -1;
	for (int i = 0; i < t->nrules; i++)
		if (t->rules[i].text[0] && !t->rules[i].gate)
			ix[n++] = i;
	qsort_r(ix, n, sizeof(int), cmp_match, t);
	for (int i = n - 1; i > 0; i--) {
		int a = ix[i - 1], b = ix[i];

		if (match_order(&t->rules[a], &t->rules[b]))
			continue;
		t->rules[b].text[0] = '\0';	/* the later one */
	}
	free(ix);
	return 0;
}

static void check_order(struct imp_tree *t)
{
	struct pos *ord = calloc(t->nrules ? t->nrules : 1, sizeof(*ord));
	int n = 0;

	if (!ord)
		return;
	for (int i = 0; i < t->nrules; i++)
		if (t->rules[i].text[0])
			ord[n++] = rule_pos(t, &t->rules[i], i);
	qsort(ord, n, sizeof(*ord), cmp_pos);
	first_catchall(t, ord, n);
	check_pairs(t, ord, n);
	check_gates(t, ord, n);
	free(ord);
}

/* ---- the config ------------------------------------------------------ */

static void write_rate(FILE *out, const char *key, __u64 Bps)
{
	__u64 bits = Bps * 8;

	if (bits && bits % 1000000000ull == 0)
		fprintf(out, "%s = %llugbit\n", key, (unsigned long long)(bits / 1000000000ull));
	else if (bits && bits % 1000000ull == 0)
		fprintf(out, "%s = %llumbit\n", key, (unsigned long long)(bits / 1000000ull));
	else if (bits && bits % 1000ull == 0)
		fprintf(out, "%s = %llukbit\n", key, (unsigned long long)(bits / 1000ull));
	else
		fprintf(out, "%s = %llubit\n", key, (unsigned long long)bits);
}

/* As tc prints a time (%.3g of s, ms or us): CoDel's times are kept in
 * units of 1024 ns, so fq_codel's "target 2ms" dumps as 1999 us; tc shows
 * 2ms, and so does the config. */
static void write_time(FILE *out, const char *key, __u64 ns)
{
	double us = (double)ns / 1000.0;

	if (us >= 1e6)
		fprintf(out, "%s = %.3gs\n", key, us / 1e6);
	else if (us >= 1e3)
		fprintf(out, "%s = %.3gms\n", key, us / 1e3);
	else
		fprintf(out, "%s = %.0fus\n", key, us);
}

static void write_notes(FILE *out, const struct imp_tree *t, __u32 at)
{
	for (int i = 0; i < t->nnotes; i++)
		if (t->notes[i].at == at)
			fprintf(out, "# %s\n", t->notes[i].text);
}

/* tc's default burst (rate / HZ + 1600 bytes: about 1600 bytes on a
 * modern kernel) is seed 003's trap: under one GSO packet a class falls
 * short of its rate. The import keeps HTB's values and says so once. */
static void small_bursts(FILE *out, const struct imp_tree *t)
{
	int n = 0;

	for (int i = 0; i < t->ncls; i++)
		n += t->cls[i].burst < 65536 || t->cls[i].cburst < 65536;
	if (n)
		fprintf(out, "# %d of %d classes have a burst or cburst under one 64 KB GSO packet (tc's default is about\n"
			     "# 1600 bytes), which `htbctl check` warns about: delete those lines to take htbctl's defaults,\n"
			     "# which reach the rate at any packet size.\n", n, t->ncls);
}

/* Why the HTB qdisc's size table cannot be the device's framing, NULL
 * if it can. */
static const char *stab_unconvertible(const struct imp_tree *t)
{
	const struct imp_class *c0 = &t->cls[0];
	const struct imp_stab *st = &t->stab;

	if (c0->overhead || c0->mpu || c0->linklayer == TC_LINKLAYER_ATM)
		return "the classes' own overhead/mpu/linklayer add to it in HTB; htbctl has one set";
	if (st->overhead < 0 || st->overhead > 65535 || st->mpu > 65535)
		return "htbctl's overhead and mpu are 0..65535";
	if (st->linklayer > TC_LINKLAYER_ATM)
		return "its linklayer is neither ethernet nor atm";
	return NULL;
}

/*
 * The device's overhead, mpu and linklayer (htbctl has them per device):
 * the HTB qdisc's size table (tc ... stab), which sets the length every
 * class's rate sees, when the classes have none of their own (both at
 * once add up in HTB: then the stab is a warning); else the first
 * class's, and a class that differs gets a note.
 */
static void write_framing(FILE *out, struct imp_tree *t)
{
	const struct imp_class *c0 = &t->cls[0];
	const struct imp_stab *st = &t->stab;
	const char *why = st->set ? stab_unconvertible(t) : NULL;
	long overhead = c0->overhead;
	__u32 mpu = c0->mpu;
	bool atm = c0->linklayer == TC_LINKLAYER_ATM;

	if (why)
		imp_note(t, 0, true, "the HTB qdisc's stab (overhead %d mpu %u linklayer %s) is not converted: %s",
			 st->overhead, st->mpu, st->linklayer == TC_LINKLAYER_ATM ? "atm" : "ethernet", why);
	if (st->set && !why) {
		overhead = st->overhead;
		mpu = st->mpu;
		atm = st->linklayer == TC_LINKLAYER_ATM;
		fprintf(out, "# overhead, mpu and linklayer: the HTB qdisc's size table (stab)\n");
		if (st->tsize)
			fprintf(out, "# (its table rounds lengths up to %u-byte cells; htbctl computes them exactly)\n",
				1u << st->cell_log);
	}
	if (overhead)
		fprintf(out, "overhead = %ld\n", overhead);
	if (mpu)
		fprintf(out, "mpu = %u\n", mpu);
	if (atm)
		fprintf(out, "linklayer = atm\n");
}

/* The [device] section. */
static void write_device(FILE *out, struct imp_tree *t, const char *source)
{
	const struct imp_class *c0 = &t->cls[0];
	char id[16], src[1024];

	/* the script's name is the user's: controls escaped, so that no name
	 * ends the comment's line and writes keys of its own */
	msg_clip(src, sizeof(src), source);
	fprintf(out, "# htbctl config imported from %s by `htbctl import`.\n", src);
	fprintf(out, "# Rates, ceils, bursts, prio and quantum are HTB's. A class's queue is htbctl's: CoDel and\n"
		     "# sparse flows (aqm, flows) unless its HTB leaf had fq_codel or codel; set\n"
		     "# `aqm = off` and `flows = off` under [device] for HTB's FIFO leaves.\n");
	fprintf(out, "[device]\n");
	if (t->defcls && imp_class_find(t, t->defcls) && imp_class_find(t, t->defcls)->leaf)
		fprintf(out, "default = %s\n", cid(t->defcls, id, sizeof(id)));
	else
		fprintf(out, "# no default class: HTB sends unclassified packets unshaped (direct), as htbctl does\n");
	if (t->direct_qlen)	/* not a key: htbctl queues nothing it does not shape */
		fprintf(out, "# direct_qlen %u: HTB's queue of packets it sends direct; htbctl sends them without one\n",
			t->direct_qlen);
	fprintf(out, "r2q = %u\n", t->r2q ? t->r2q : 10);
	write_framing(out, t);
	for (int i = 1; i < t->ncls; i++) {
		const struct imp_class *c = &t->cls[i];

		if (c->overhead != c0->overhead || c->mpu != c0->mpu || c->linklayer != c0->linklayer)
			imp_note(t, c->classid, true,
				 "its overhead %u, mpu %u, linklayer %s differ from the device's (htbctl has them per device)",
				 c->overhead, c->mpu, c->linklayer == TC_LINKLAYER_ATM ? "atm" : "ethernet");
	}
	small_bursts(out, t);
	write_notes(out, t, 0);
}

/* t->by_class: the rules' indexes by class, in HTB's order within one. */
static int cmp_by_class(const void *pa, const void *pb, void *arg)
{
	const struct imp_tree *t = arg;
	const struct imp_rule *a = &t->rules[*(const int *)pa];
	const struct imp_rule *b = &t->rules[*(const int *)pb];

	if (a->classid != b->classid)
		return a->classid < b->classid ? -1 : 1;
	return *(const int *)pa - *(const int *)pb;
}

static int index_rules(struct imp_tree *t)
{
	t->by_class = calloc(t->nrules ? t->nrules : 1, sizeof(int));
	if (!t->by_class)
		return -1;
	for (int i = 0; i < t->nrules; i++)
		t->by_class[i] = i;
	qsort_r(t->by_class, t->nrules, sizeof(int), cmp_by_class, t);
	return 0;
}

static int first_rule_of(const struct imp_tree *t, __u32 classid)
{
	int lo = 0, hi = t->nrules;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (t->rules[t->by_class[mid]].classid < classid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void write_leaf(FILE *out, const struct imp_tree *t, const struct imp_class *c)
{
	bool clamped;

	if (c->prio)
		fprintf(out, "prio = %u\n", c->prio);
	if (c->quantum != config_default_quantum(c->rate, t->r2q, &clamped) || clamped)
		fprintf(out, "quantum = %u\n", c->quantum);
	if (c->aqm_set) {
		fprintf(out, "aqm = codel\nflows = %s\necn = %s\n", c->flows ? "on" : "off",
			c->ecn ? "on" : "off");
		if (c->target_ns)
			write_time(out, "target", c->target_ns);
		if (c->interval_ns)
			write_time(out, "interval", c->interval_ns);
	}
	for (int i = first_rule_of(t, c->classid); i < t->nrules; i++) {
		const struct imp_rule *r = &t->rules[t->by_class[i]];

		if (r->classid != c->classid)
			break;
		if (r->text[0] && !r->gate)
			fprintf(out, "match = %s\n", r->text);
		if (r->text[0] && !r->gate && field_key(r) && field_key(r)->two) {
			char more[64];

			port_text(r, field_key(r)->lo2, field_key(r)->hi2, more, sizeof(more));
			fprintf(out, "match = %s\n", more);
		}
	}
}

static void write_class(FILE *out, const struct imp_tree *t, const struct imp_class *c)
{
	char id[16];

	fprintf(out, "\n[class %s]\n", cid(c->classid, id, sizeof(id)));
	if (c->parent)
		fprintf(out, "parent = %s\n", cid(c->parent, id, sizeof(id)));
	write_rate(out, "rate", c->rate);
	write_rate(out, "ceil", c->ceil);
	fprintf(out, "burst = %ub\ncburst = %ub\n", c->burst, c->cburst);
	if (c->burst_exact || c->cburst_exact)
		fprintf(out, "# tc shows %s 0b (it prints whole microseconds): the kernel's buffer, under 1 us, is written\n",
			c->burst_exact && c->cburst_exact ? "burst and cburst" : c->burst_exact ? "burst" : "cburst");
	if (c->leaf)
		write_leaf(out, t, c);
	write_notes(out, t, c->classid);
}

/* Parents before children, as the kernel requires and a reader expects:
 * kids holds the class indexes sorted by parent (then id). */
static int cmp_by_parent(const void *pa, const void *pb, void *arg)
{
	const struct imp_tree *t = arg;
	const struct imp_class *a = &t->cls[*(const int *)pa], *b = &t->cls[*(const int *)pb];

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	return a->classid < b->classid ? -1 : a->classid > b->classid;
}

static void write_subtree(FILE *out, const struct imp_tree *t, const int *kids, __u32 parent,
			  int depth)
{
	int lo = 0, hi = t->ncls;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (t->cls[kids[mid]].parent < parent)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int i = lo; i < t->ncls && t->cls[kids[i]].parent == parent && depth < 9; i++) {
		write_class(out, t, &t->cls[kids[i]]);
		write_subtree(out, t, kids, t->cls[kids[i]].classid, depth + 1);
	}
}

static int write_tree(FILE *out, const struct imp_tree *t)
{
	int *kids = calloc(t->ncls ? t->ncls : 1, sizeof(int));

	if (!kids)
		return -1;
	for (int i = 0; i < t->ncls; i++)
		kids[i] = i;
	qsort_r(kids, t->ncls, sizeof(int), cmp_by_parent, (void *)t);
	write_subtree(out, t, kids, 0, 0);
	free(kids);
	return 0;
}

int import_write(const struct ctx *ctx, struct imp_tree *t, const char *source, FILE *out)
{
	if (t->defcls && !(t->defcls >> 16))
		t->defcls |= t->handle;
	resolve_targets(t);
	resolve_inner_targets(t);
	if (drop_duplicates(t)) {
		p_err(ctx, "out of memory");
		return 0;
	}
	check_order(t);
	if (!t->ncls) {
		p_err(ctx, "%s: the HTB qdisc has no classes: nothing to import", t->dev);
		return 0;
	}
	if (index_rules(t)) {
		p_err(ctx, "out of memory");
		return 0;
	}
	write_device(out, t, source);
	if (write_tree(out, t)) {
		p_err(ctx, "out of memory");
		return 0;
	}
	for (int i = 0; i < t->nnotes; i++)
		if (t->notes[i].warn) {
			char id[16];

			if (t->notes[i].at)
				p_warn(ctx, "import: class %s: %s", cid(t->notes[i].at, id, sizeof(id)),
				       t->notes[i].text);
			else
				p_warn(ctx, "import: %s", t->notes[i].text);
		}
	return t->ncls;
}
