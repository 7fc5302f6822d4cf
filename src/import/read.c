// SPDX-License-Identifier: GPL-2.0
/*
 * import: reading a device's kernel HTB setup over rtnetlink. One dump of
 * the qdiscs, one of the classes, one of the filters per attach point (the
 * HTB qdisc and each class: a filter may hang on any of them).
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "import/filter.h"
#include "import/import.h"
#include "import/u32.h"
#include "netlink/nl.h"

static const struct nlattr *tc_options(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg))
		if (mnl_attr_get_type(a) == TCA_OPTIONS)
			return a;
	return NULL;
}

/* ---- qdiscs ---------------------------------------------------------- */

struct qd_seen {
	struct imp_tree *t;
	int ifindex;
	char root_kind[16];
	char other[160];		/* the qdiscs that are neither HTB nor a leaf */
	__u32 ingress;
	/* leaf qdiscs, matched to classes once these are read */
	struct leafq { __u32 parent; char kind[16]; __u64 target_us, interval_us; int ecn; } *lq;
	int nlq;
};

static void codel_opts(const struct nlattr *opts, bool fq, struct leafq *l)
{
	const struct nlattr *a;

	l->ecn = -1;
	mnl_attr_for_each_nested(a, opts) {
		int type = mnl_attr_get_type(a);

		if (mnl_attr_get_payload_len(a) < 4)
			continue;
		if (type == (fq ? TCA_FQ_CODEL_TARGET : TCA_CODEL_TARGET))
			l->target_us = mnl_attr_get_u32(a);
		else if (type == (fq ? TCA_FQ_CODEL_INTERVAL : TCA_CODEL_INTERVAL))
			l->interval_us = mnl_attr_get_u32(a);
		else if (type == (fq ? TCA_FQ_CODEL_ECN : TCA_CODEL_ECN))
			l->ecn = (int)mnl_attr_get_u32(a);
	}
}

static void htb_glob(struct imp_tree *t, const struct nlattr *opts)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, opts) {
		if (mnl_attr_get_type(a) == TCA_HTB_INIT &&
		    mnl_attr_get_payload_len(a) >= sizeof(struct tc_htb_glob)) {
			const struct tc_htb_glob *g = mnl_attr_get_payload(a);

			t->r2q = g->rate2quantum;
			t->defcls = g->defcls;
		} else if (mnl_attr_get_type(a) == TCA_HTB_DIRECT_QLEN &&
			   mnl_attr_get_payload_len(a) >= sizeof(__u32)) {
			t->direct_qlen = mnl_attr_get_u32(a);
		}
	}
}

/* TCA_STAB's base (struct tc_sizespec), if the qdisc has one. */
static void qdisc_stab(const struct nlmsghdr *nlh, struct imp_stab *st)
{
	const struct nlattr *a, *b;

	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg)) {
		if (mnl_attr_get_type(a) != TCA_STAB)
			continue;
		mnl_attr_for_each_nested(b, a) {
			const struct tc_sizespec *sz = mnl_attr_get_payload(b);

			if (mnl_attr_get_type(b) != TCA_STAB_BASE || mnl_attr_get_payload_len(b) < sizeof(*sz))
				continue;
			st->set = true;
			st->overhead = sz->overhead;
			st->mpu = sz->mpu;
			st->linklayer = sz->linklayer;
			st->mtu = sz->mtu;
			st->tsize = sz->tsize;
			st->cell_log = sz->cell_log;
			return;
		}
	}
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qd_seen *s = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const char *kind = tc_msg_kind(nlh);
	const struct nlattr *opts = tc_options(nlh);
	struct leafq *l;

	if (nlh->nlmsg_type != RTM_NEWQDISC || tcm->tcm_ifindex != s->ifindex)
		return 0;
	if (tcm->tcm_parent == TC_H_ROOT) {
		snprintf(s->root_kind, sizeof(s->root_kind), "%s", kind);
		if (!strcmp(kind, "htb")) {
			s->t->handle = tcm->tcm_handle;
			if (opts)
				htb_glob(s->t, opts);
			qdisc_stab(nlh, &s->t->stab);	/* only a root may have one */
		}
		return 0;
	}
	/* ingress and clsact hang on TC_H_INGRESS; a leaf qdisc may have the
	 * handle ffff: too (it is only ingress's by custom) */
	if (tcm->tcm_parent == TC_H_INGRESS) {
		s->ingress = tcm->tcm_handle ? tcm->tcm_handle : TC_H_INGRESS;
		return 0;
	}
	l = realloc(s->lq, (s->nlq + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	s->lq = l;
	l = &s->lq[s->nlq++];
	memset(l, 0, sizeof(*l));
	l->parent = tcm->tcm_parent;
	l->ecn = -1;
	snprintf(l->kind, sizeof(l->kind), "%s", kind);
	if (opts && (!strcmp(kind, "fq_codel") || !strcmp(kind, "codel")))
		codel_opts(opts, kind[0] == 'f', l);
	return 0;
}

/* ---- classes --------------------------------------------------------- */

/*
 * Burst as tc prints it: tc_calc_xmitsize(rate, buffer), the buffer's
 * ticks (64 ns each, PSCHED_SHIFT 6, what /proc/net/psched says) turned
 * into whole microseconds (tc_core_tick2time returns an unsigned), times
 * the rate. Done the same way, so the bytes written are the bytes
 * `tc -d class show` shows; they are below the kernel's buffer by less
 * than one microsecond at the rate (tc itself truncated the burst it was
 * given to whole microseconds when it made the class).
 */
static __u32 xmitsize(__u64 rate, __u32 buffer)
{
	unsigned int us = (unsigned int)((double)buffer / 15.625);

	return (__u32)((double)rate * us / 1000000.0);
}

static void htb_class(struct imp_class *c, const struct nlattr *opts)
{
	const struct tc_htb_opt *o = NULL;
	const struct nlattr *a;
	__u64 rate64 = 0, ceil64 = 0;

	mnl_attr_for_each_nested(a, opts) {
		int type = mnl_attr_get_type(a);

		if (type == TCA_HTB_PARMS && mnl_attr_get_payload_len(a) >= sizeof(*o))
			o = mnl_attr_get_payload(a);
		else if (type == TCA_HTB_RATE64 && mnl_attr_get_payload_len(a) >= 8)
			rate64 = mnl_attr_get_u64(a);
		else if (type == TCA_HTB_CEIL64 && mnl_attr_get_payload_len(a) >= 8)
			ceil64 = mnl_attr_get_u64(a);
	}
	if (!o)
		return;
	c->rate = rate64 ? rate64 : o->rate.rate;
	c->ceil = ceil64 ? ceil64 : o->ceil.rate;
	c->burst = xmitsize(c->rate, o->buffer);
	c->cburst = xmitsize(c->ceil, o->cbuffer);
	/* under a microsecond tc shows 0b, which is no burst: the kernel's
	 * buffer itself then (ticks of 64 ns at the rate) */
	c->burst_exact = !c->burst;
	c->cburst_exact = !c->cburst;
	if (!c->burst)
		c->burst = (__u32)((double)c->rate * o->buffer * 64 / 1e9) ?: 1;
	if (!c->cburst)
		c->cburst = (__u32)((double)c->ceil * o->cbuffer * 64 / 1e9) ?: 1;
	c->quantum = o->quantum;
	c->prio = o->prio;
	c->level = o->level;
	c->leaf = o->level == 0;
	c->overhead = o->rate.overhead;
	c->mpu = o->rate.mpu;
	c->linklayer = o->rate.linklayer & TC_LINKLAYER_MASK;
}

static int class_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qd_seen *s = data;
	struct imp_tree *t = s->t;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *opts = tc_options(nlh);
	struct imp_class *c;

	if (nlh->nlmsg_type != RTM_NEWTCLASS || tcm->tcm_ifindex != s->ifindex ||
	    TC_H_MAJ(tcm->tcm_handle) != t->handle || strcmp(tc_msg_kind(nlh), "htb") || !opts)
		return 0;
	c = realloc(t->cls, (t->ncls + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	t->cls = c;
	c = &t->cls[t->ncls++];
	memset(c, 0, sizeof(*c));
	c->classid = tcm->tcm_handle;
	/* a top-level class is dumped with parent root */
	c->parent = tcm->tcm_parent == TC_H_ROOT || tcm->tcm_parent == t->handle ? 0 : tcm->tcm_parent;
	htb_class(c, opts);
	return 0;
}

/* The leaf qdiscs the operator added: fq_codel and codel become htbctl's
 * own CoDel (fq_codel with sparse flows); every other kind is a note. */
static void attach_leaf_qdiscs(struct qd_seen *s)
{
	struct imp_tree *t = s->t;

	for (int i = 0; i < s->nlq; i++) {
		const struct leafq *l = &s->lq[i];
		struct imp_class *c = (struct imp_class *)imp_class_find(t, l->parent);

		if (!c) {
			imp_note(t, 0, true, "qdisc %s under %x:%x is not under this HTB tree: not converted",
				 l->kind, TC_H_MAJ(l->parent) >> 16, TC_H_MIN(l->parent));
			continue;
		}
		snprintf(c->leaf_kind, sizeof(c->leaf_kind), "%s", l->kind);
		if (strcmp(l->kind, "fq_codel") && strcmp(l->kind, "codel")) {
			imp_note(t, c->classid, true,
				 "leaf qdisc %s is not converted: htbctl's class is its own queue (CoDel and sparse flows by default)",
				 l->kind);
			continue;
		}
		c->aqm_set = c->aqm = true;
		c->flows_set = true;
		c->flows = l->kind[0] == 'f';
		c->target_ns = l->target_us * 1000;
		c->interval_ns = l->interval_us * 1000;
		c->ecn = l->ecn > 0;
	}
}

/* ---- filters --------------------------------------------------------- */

struct flt_seen {
	struct qd_seen *s;
	struct u32_graph *g;
	__u32 attach;
	int err;
	/* fw classifiers seen without rules: (attach, pref) */
	__u32 fw_bare[16][2];
	int nfw_bare;
};

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	struct flt_seen *f = data;
	struct imp_tree *t = f->s->t;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	__u32 pref = TC_H_MAJ(tcm->tcm_info) >> 16, chain = 0;

	if (nlh->nlmsg_type != RTM_NEWTFILTER || tcm->tcm_ifindex != f->s->ifindex)
		return 0;
	if (!tc_options(nlh)) {
		if (!strcmp(tc_msg_kind(nlh), "fw") && f->nfw_bare < 16) {
			f->fw_bare[f->nfw_bare][0] = f->attach;
			f->fw_bare[f->nfw_bare++][1] = pref;
		}
		return 0;
	}
	mnl_attr_for_each(a, nlh, sizeof(*tcm))
		if (mnl_attr_get_type(a) == TCA_CHAIN && mnl_attr_get_payload_len(a) >= 4)
			chain = mnl_attr_get_u32(a);
	if (chain) {
		imp_note(t, f->attach == t->handle ? 0 : f->attach, true,
			 "filter pref %u in chain %u (reached only by a goto_chain action) is not converted",
			 pref, chain);
		return 0;
	}
	if (!strcmp(tc_msg_kind(nlh), "u32"))
		return u32_graph_add(f->g, f->attach, pref, ntohs(TC_H_MIN(tcm->tcm_info)), nlh);
	if (imp_filter_decode(t, nlh) < 0)
		return -ENOMEM;
	t->rules[t->nrules - 1].attach = f->attach;	/* as the dump was asked */
	return 0;
}

static int dump(int type, int ifindex, __u32 parent, nl_msg_cb cb, void *data, const char *what,
		struct nlerr *e)
{
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return -1;
	rc = nl_talk(&nl, tc_msg(nl.buf, type, NLM_F_DUMP, ifindex, parent, 0), cb, data, e, what);
	nl_close(&nl);
	return rc;
}

/* An fw classifier with no rules classifies by the mark itself, as a
 * class id; htbctl's nearest is skb->priority, which it already uses. */
static void note_bare_fw(struct imp_tree *t, const struct flt_seen *f)
{
	for (int i = 0; i < f->nfw_bare; i++) {
		bool rules = false;

		for (int j = 0; j < t->nrules && !rules; j++)
			rules = !strcmp(t->rules[j].kind, "fw") && t->rules[j].attach == f->fw_bare[i][0] &&
				t->rules[j].pref == f->fw_bare[i][1];
		if (!rules)
			imp_note(t, 0, true, "fw filter pref %u has no rules: it takes the packet's mark as its class id; not converted",
				 f->fw_bare[i][1]);
	}
}

static int read_filters(struct qd_seen *s, struct nlerr *e)
{
	struct imp_tree *t = s->t;
	struct flt_seen f = { .s = s, .g = u32_graph_new() };
	int rc = f.g ? 0 : -ENOMEM;

	for (int i = -1; !rc && i < t->ncls; i++) {
		f.attach = i < 0 ? t->handle : t->cls[i].classid;
		rc = dump(RTM_GETTFILTER, s->ifindex, f.attach, filter_cb, &f, "listing filters", e);
	}
	if (!rc)
		u32_graph_resolve(f.g, t);
	u32_graph_free(f.g);
	note_bare_fw(t, &f);
	return rc;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWTFILTER && tc_options(nlh))
		(*(int *)data)++;
	return 0;
}

static void note_ingress(struct qd_seen *s, struct nlerr *e)
{
	int n = 0;

	if (!s->ingress)
		return;
	dump(RTM_GETTFILTER, s->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS), count_cb, &n,
	     "listing ingress filters", e);
	if (!n)
		dump(RTM_GETTFILTER, s->ifindex, TC_H_INGRESS, count_cb, &n, "listing ingress filters", e);
	imp_note(s->t, 0, true, "the ingress side (%d filter entries) is not converted: htbctl shapes egress", n);
}

static int read_tree(const struct ctx *ctx, struct qd_seen *s)
{
	struct imp_tree *t = s->t;
	struct nlerr e = { 0 };

	if (dump(RTM_GETQDISC, s->ifindex, 0, qdisc_cb, s, "listing qdiscs", &e) ||
	    dump(RTM_GETTCLASS, s->ifindex, t->handle, class_cb, s, "listing classes", &e)) {
		p_err(ctx, "%s: %s", t->dev, e.msg);
		return -1;
	}
	imp_class_sort(t);
	attach_leaf_qdiscs(s);
	if (read_filters(s, &e)) {
		p_err(ctx, "%s: %s", t->dev, e.msg);
		return -1;
	}
	note_ingress(s, &e);
	return 0;
}

int import_read(const struct ctx *ctx, const char *dev, struct imp_tree *t)
{
	struct qd_seen s = { .t = t };
	struct nlerr e = { 0 };
	int rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->dev, sizeof(t->dev), "%s", dev);
	s.ifindex = (int)if_nametoindex(dev);
	if (!s.ifindex) {
		p_err(ctx, "device %s: %s", dev, strerror(errno));
		return -1;
	}
	/* the root first: its handle says which classes and filters are HTB's */
	if (dump(RTM_GETQDISC, s.ifindex, 0, qdisc_cb, &s, "listing qdiscs", &e)) {
		p_err(ctx, "%s: %s", dev, e.msg);
		return -1;
	}
	if (strcmp(s.root_kind, "htb")) {
		p_err(ctx, "%s: the root qdisc is %s, not htb: nothing to import%s", dev,
		      s.root_kind[0] ? s.root_kind : "none",
		      !strcmp(s.root_kind, "mq") ? " (an HTB per TX queue under mq is not supported: import one HTB tree)" : "");
		return -1;
	}
	/* htbctl's class ids take majors 1..fffe (config.md): classes
	 * ffff:N would make a config check refuses */
	if (TC_H_MAJ(t->handle) == TC_H_MAJ(TC_H_INGRESS)) {
		p_err(ctx, "%s: the HTB qdisc's handle is ffff:, which htbctl's class ids do not take (majors 1..fffe; ffff: is ingress's): give it another handle",
		      dev);
		free(s.lq);
		return -1;
	}
	free(s.lq);
	s.lq = NULL;
	s.nlq = 0;
	rc = read_tree(ctx, &s);
	free(s.lq);
	return rc;
}
