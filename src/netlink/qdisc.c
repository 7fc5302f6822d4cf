// SPDX-License-Identifier: GPL-2.0
/*
 * Root qdisc handling over rtnetlink with libmnl. Everything here is one
 * request and its ack (or a dump), on a socket opened per call: htbctl runs
 * a handful of these per command, so simplicity wins over reuse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "htb/flowtag.h"
#include "netlink/nl.h"
#include "netlink/qdisc.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef TC_H_CLSACT
#define TC_H_CLSACT TC_H_INGRESS
#endif


char *tc_handle_str(__u32 h, char *buf, size_t len)
{
	if (h == TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (h == TC_H_UNSPEC)
		snprintf(buf, len, "none");
	else if (TC_H_MIN(h) == 0)
		snprintf(buf, len, "%x:", TC_H_MAJ(h) >> 16);
	else
		snprintf(buf, len, "%x:%x", TC_H_MAJ(h) >> 16, TC_H_MIN(h));
	return buf;
}

/* ---- links ---------------------------------------------------------- */

struct link_q {
	__u32 ntxq;
};

static int link_attr_cb(const struct nlattr *a, void *data)
{
	struct link_q *q = data;

	if (mnl_attr_get_type(a) == IFLA_NUM_TX_QUEUES &&
	    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
		q->ntxq = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;
	mnl_attr_parse(nlh, sizeof(struct ifinfomsg), link_attr_cb, data);
	return 0;
}

int link_info(int ifindex, __u32 *ntxq, struct nlerr *e)
{
	struct link_q q = { .ntxq = 1 };
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return -1;
	nlh = mnl_nlmsg_put_header(nl.buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	rc = nl_talk(&nl, nlh, link_cb, &q, e, "reading the device");
	nl_close(&nl);
	if (rc)
		return rc;
	if (ntxq)
		*ntxq = q.ntxq;
	return 0;
}

/* ---- qdisc dumps ---------------------------------------------------- */

/* A copy of one dumped qdisc or class message. */
struct tc_obj {
	int type;			/* RTM_NEWQDISC, RTM_NEWTCLASS */
	__u32 handle, parent;
	char kind[QDISC_KIND_LEN];
	struct nlmsghdr *nlh;		/* malloc'ed copy */
	bool done;
};

struct obj_vec {
	int ifindex;
	struct tc_obj *v;
	int n, cap;
};

static void obj_vec_free(struct obj_vec *ov)
{
	for (int i = 0; i < ov->n; i++)
		free(ov->v[i].nlh);
	free(ov->v);
	ov->v = NULL;
	ov->n = ov->cap = 0;
}

static void tc_kind(const struct nlmsghdr *nlh, char *kind)
{
	snprintf(kind, QDISC_KIND_LEN, "%s", tc_msg_kind(nlh));
}

/* An fq's orphan_mask as dumped, 0 for any other qdisc. */
static __u32 fq_orphan_mask(const struct nlmsghdr *nlh, const char *kind)
{
	const struct nlattr *a, *o;

	if (strcmp(kind, "fq"))
		return 0;
	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg)) {
		if (mnl_attr_get_type(a) != TCA_OPTIONS)
			continue;
		mnl_attr_for_each_nested(o, a)
			if (mnl_attr_get_type(o) == TCA_FQ_ORPHAN_MASK &&
			    mnl_attr_get_payload_len(o) >= sizeof(__u32))
				return mnl_attr_get_u32(o);
	}
	return 0;
}

static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct obj_vec *ov = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct tc_obj *o;

	if (nlh->nlmsg_type != RTM_NEWQDISC && nlh->nlmsg_type != RTM_NEWTCLASS)
		return 0;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm) ||
	    tcm->tcm_ifindex != ov->ifindex)
		return 0;
	if (ov->n == ov->cap) {
		int cap = ov->cap ? 2 * ov->cap : 16;
		struct tc_obj *v = realloc(ov->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ov->v = v;
		ov->cap = cap;
	}
	o = &ov->v[ov->n];
	memset(o, 0, sizeof(*o));
	o->nlh = malloc(nlh->nlmsg_len);
	if (!o->nlh)
		return -ENOMEM;
	memcpy(o->nlh, nlh, nlh->nlmsg_len);
	o->type = nlh->nlmsg_type;
	o->handle = tcm->tcm_handle;
	o->parent = tcm->tcm_parent;
	tc_kind(nlh, o->kind);
	ov->n++;
	return 0;
}

static int dump_objs(int ifindex, int type, struct obj_vec *ov, struct nlerr *e)
{
	struct nlmsghdr *nlh;
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return -1;
	nlh = tc_msg(nl.buf, type, NLM_F_DUMP, ifindex, 0, 0);
	ov->ifindex = ifindex;
	rc = nl_talk(&nl, nlh, obj_cb, ov, e,
		     type == RTM_GETQDISC ? "listing qdiscs" : "listing classes");
	nl_close(&nl);
	return rc;
}

static bool is_ingress_side(const struct tc_obj *o)
{
	return o->parent == TC_H_INGRESS || o->parent == TC_H_CLSACT ||
	       TC_H_MAJ(o->handle) == TC_H_MAJ(TC_H_INGRESS);
}

int qdisc_list(int ifindex, struct qdisc_info **out, struct nlerr *e)
{
	struct obj_vec ov = { 0 };
	struct qdisc_info *q;
	int rc;

	rc = dump_objs(ifindex, RTM_GETQDISC, &ov, e);
	if (rc) {
		obj_vec_free(&ov);
		return rc < 0 ? rc : -EIO;
	}
	q = calloc(ov.n ? ov.n : 1, sizeof(*q));
	if (!q) {
		obj_vec_free(&ov);
		nl_set_err(e, -ENOMEM, "listing qdiscs: out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < ov.n; i++) {
		q[i].handle = ov.v[i].handle;
		q[i].parent = ov.v[i].parent;
		memcpy(q[i].kind, ov.v[i].kind, QDISC_KIND_LEN);
		q[i].orphan_mask = fq_orphan_mask(ov.v[i].nlh, q[i].kind);
	}
	rc = ov.n;
	obj_vec_free(&ov);
	*out = q;
	return rc;
}

int qdisc_get_root(int ifindex, struct qdisc_info *root, char *ingress_kind,
		   struct nlerr *e)
{
	struct qdisc_info *q;
	bool found = false;
	int n;

	n = qdisc_list(ifindex, &q, e);
	if (n < 0)
		return n;
	if (ingress_kind)
		ingress_kind[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (q[i].parent == TC_H_ROOT) {
			*root = q[i];
			found = true;
		} else if (q[i].parent == TC_H_INGRESS && ingress_kind) {
			memcpy(ingress_kind, q[i].kind, QDISC_KIND_LEN);
		}
	}
	free(q);
	if (!found) {
		/* A device that is down may have no qdisc yet: noop. */
		memset(root, 0, sizeof(*root));
		root->parent = TC_H_ROOT;
		snprintf(root->kind, sizeof(root->kind), "noop");
	}
	return 0;
}

int qdisc_fq_orphan_mask(int ifindex, __u32 *mask, struct nlerr *e)
{
	struct qdisc_info *q;
	int n, nfq = 0;

	n = qdisc_list(ifindex, &q, e);
	if (n < 0)
		return n;
	*mask = 0xffffffffu;
	for (int i = 0; i < n; i++) {
		if (strcmp(q[i].kind, "fq"))
			continue;
		nfq++;
		if (q[i].orphan_mask < *mask)
			*mask = q[i].orphan_mask;
	}
	free(q);
	return nfq;
}

__u32 qdisc_free_handle(int ifindex)
{
	struct qdisc_info *q = NULL;
	__u32 maj = 0x4854;	/* "HT" */
	int n = qdisc_list(ifindex, &q, NULL);

	for (bool clash = true; clash && maj < 0xfff0; ) {
		clash = false;
		for (int i = 0; i < n; i++) {
			if (TC_H_MAJ(q[i].handle) == maj << 16) {
				clash = true;
				maj++;
				break;
			}
		}
	}
	free(q);
	return maj << 16;
}

/* ---- saving and restoring the root tree ----------------------------- */

/* Classful qdiscs whose classes are made one by one with RTM_NEWTCLASS;
 * the classes of every other kind come with the qdisc (mq, prio, tbf...). */
static bool kind_has_user_classes(const char *kind)
{
	static const char *const kinds[] = { "htb", "hfsc", "drr", "qfq" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/*
 * Dumps that the kernel does not take back as they are. htb dumps the full
 * HTB_VER (0x30011) in tc_htb_glob.version but htb_init wants its major
 * (3), as tc sends it.
 */
static void replay_fixup(struct nlmsghdr *nlh, const char *kind)
{
	struct nlattr *a, *o;

	if (nlh->nlmsg_type != RTM_NEWQDISC || strcmp(kind, "htb"))
		return;
	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg)) {
		if (mnl_attr_get_type(a) != TCA_OPTIONS)
			continue;
		mnl_attr_for_each_nested(o, a) {
			struct tc_htb_glob *g = mnl_attr_get_payload(o);

			if (mnl_attr_get_type(o) == TCA_HTB_INIT &&
			    mnl_attr_get_payload_len(o) >= sizeof(*g) &&
			    g->version > 0xffff)
				g->version >>= 16;
		}
	}
}

#define QTREE_MAX_BLOB (1u << 20)

/* Appends a replayable copy of o to t->blob: tcmsg plus TCA_KIND,
 * TCA_OPTIONS and TCA_STAB exactly as dumped. */
static int blob_add(struct qdisc_tree *t, const struct tc_obj *o, bool *stab_table)
{
	const struct tcmsg *src = mnl_nlmsg_get_payload(o->nlh);
	unsigned char *buf;
	struct nlmsghdr *nlh;
	const struct nlattr *a;
	__u32 parent = src->tcm_parent;
	size_t need = o->nlh->nlmsg_len + 64;

	if (t->len + need > QTREE_MAX_BLOB)
		return -E2BIG;
	buf = realloc(t->blob, t->len + need);
	if (!buf)
		return -ENOMEM;
	t->blob = buf;
	/* A top-level class is dumped with parent root; replayed as X:0 so
	 * it lands in its own qdisc, which need not be the root. */
	if (o->type == RTM_NEWTCLASS && parent == TC_H_ROOT)
		parent = TC_H_MAJ(o->handle);
	nlh = tc_msg(buf + t->len, o->type, 0, 0, parent, o->handle);
	mnl_attr_for_each(a, o->nlh, sizeof(struct tcmsg)) {
		int type = mnl_attr_get_type(a);

		if (type != TCA_KIND && type != TCA_OPTIONS && type != TCA_STAB)
			continue;
		if (type == TCA_STAB) {
			const struct nlattr *s;

			mnl_attr_for_each_nested(s, a) {
				const struct tc_sizespec *ss = mnl_attr_get_payload(s);

				if (mnl_attr_get_type(s) == TCA_STAB_BASE &&
				    mnl_attr_get_payload_len(s) >= sizeof(*ss) &&
				    ss->tsize)
					*stab_table = true;
			}
		}
		memcpy((char *)nlh + nlh->nlmsg_len, a, a->nla_len);
		nlh->nlmsg_len += MNL_ALIGN(a->nla_len);
	}
	replay_fixup(nlh, o->kind);
	t->len += MNL_ALIGN(nlh->nlmsg_len);
	return 0;
}

static bool created_qdisc(const struct obj_vec *ov, __u32 maj)
{
	for (int i = 0; i < ov->n; i++)
		if (ov->v[i].type == RTM_NEWQDISC && ov->v[i].done &&
		    TC_H_MAJ(ov->v[i].handle) == TC_H_MAJ(maj))
			return true;
	return false;
}

static const struct tc_obj *find_class(const struct obj_vec *ov, __u32 classid)
{
	for (int i = 0; i < ov->n; i++)
		if (ov->v[i].type == RTM_NEWTCLASS && ov->v[i].handle == classid)
			return &ov->v[i];
	return NULL;
}

/* Whether o can be created once everything marked done exists. */
static bool ready(const struct obj_vec *ov, const struct tc_obj *o)
{
	const struct tc_obj *pc;

	if (o->type == RTM_NEWTCLASS) {
		if (!created_qdisc(ov, o->handle))
			return false;
		if (o->parent == TC_H_ROOT || TC_H_MIN(o->parent) == 0)
			return true;
		pc = find_class(ov, o->parent);
		return pc ? pc->done : true;
	}
	/* A child qdisc hangs off a class: one we replay, or one that comes
	 * with its qdisc (tbf's 20:1, mq's 1:3). */
	pc = find_class(ov, o->parent);
	if (pc)
		return pc->done;
	return created_qdisc(ov, o->parent);
}

/* The objects to replay: non-default qdiscs of the root tree, and the
 * classes of kinds whose classes are made one by one. Filters hanging off
 * any of them are counted (they make the tree unrestorable). */
static int select_replayable(int ifindex, const struct obj_vec *qd,
			     const struct obj_vec *cl, struct obj_vec *all,
			     struct qdisc_tree *t)
{
	int nfilt;

	all->ifindex = ifindex;
	all->v = calloc(qd->n + cl->n + 1, sizeof(*all->v));
	if (!all->v)
		return -ENOMEM;
	for (int i = 0; i < qd->n; i++)
		if (!is_ingress_side(&qd->v[i]) && qd->v[i].handle != 0)
			all->v[all->n++] = qd->v[i];
	for (int i = 0; i < cl->n; i++) {
		const struct tc_obj *owner = NULL;

		for (int k = 0; k < all->n; k++)
			if (all->v[k].type == RTM_NEWQDISC &&
			    TC_H_MAJ(all->v[k].handle) == TC_H_MAJ(cl->v[i].handle))
				owner = &all->v[k];
		if (!owner)
			continue;
		/* any entry: an empty u32 hash table cannot be replayed either */
		nfilt = tc_filter_prefs(ifindex, cl->v[i].handle, NULL, 0, NULL);
		if (nfilt > 0)
			t->nfilters += nfilt;
		if (kind_has_user_classes(owner->kind))
			all->v[all->n++] = cl->v[i];
	}
	for (int k = 0; k < all->n; k++) {
		if (all->v[k].type != RTM_NEWQDISC)
			continue;
		nfilt = tc_filter_prefs(ifindex, all->v[k].handle, NULL, 0, NULL);
		if (nfilt > 0)
			t->nfilters += nfilt;
	}
	return 0;
}

/* Appends the objects to t's blob parents before children: the root,
 * then whatever is ready, until all are in. */
static int save_in_order(struct obj_vec *all, const char *root_kind,
			 struct qdisc_tree *t, struct nlerr *e)
{
	bool stab_table = false;
	int rc, left;

	for (left = all->n; left > 0; ) {
		int progress = 0;

		for (int k = 0; k < all->n; k++) {
			struct tc_obj *o = &all->v[k];

			if (o->done || (!(o->type == RTM_NEWQDISC && o->parent == TC_H_ROOT) &&
					!ready(all, o)))
				continue;
			rc = blob_add(t, o, &stab_table);
			if (rc) {
				nl_set_err(e, rc, "saving the root qdisc: %s", rc == -E2BIG ?
					"the tree is too large to save" : strerror(-rc));
				return rc;
			}
			o->done = true;
			progress++;
			left--;
			if (o->type == RTM_NEWQDISC)
				t->nqdiscs++;
			else
				t->nclasses++;
		}
		if (!progress) {
			nl_set_err(e, -EINVAL, "saving the root qdisc: %d objects of the %s "
				"tree have parents htbctl cannot find", left, root_kind);
			return -EINVAL;
		}
	}
	if (stab_table)
		t->flags |= QTREE_F_STAB_TABLE;
	return 0;
}

int qdisc_tree_save(int ifindex, struct qdisc_tree *t, struct nlerr *e)
{
	struct obj_vec qd = { 0 }, cl = { 0 }, all = { 0 };
	const struct tc_obj *root = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = dump_objs(ifindex, RTM_GETQDISC, &qd, e);
	if (rc)
		goto out;
	for (int i = 0; i < qd.n; i++)
		if (qd.v[i].parent == TC_H_ROOT)
			root = &qd.v[i];
	if (!root || root->handle == 0) {
		t->is_default = true;
		snprintf(t->root_kind, sizeof(t->root_kind), "%s",
			 root ? root->kind : "noop");
		goto out;
	}
	t->root_handle = root->handle;
	memcpy(t->root_kind, root->kind, QDISC_KIND_LEN);
	rc = dump_objs(ifindex, RTM_GETTCLASS, &cl, e);
	if (!rc) {
		rc = select_replayable(ifindex, &qd, &cl, &all, t);
		if (rc)
			nl_set_err(e, rc, "saving the root qdisc: out of memory");
	}
	if (!rc)
		rc = save_in_order(&all, root->kind, t, e);
out:
	/* all.v shares its messages with qd and cl */
	free(all.v);
	obj_vec_free(&qd);
	obj_vec_free(&cl);
	if (rc) {
		qdisc_tree_free(t);
		if (rc > 0)
			rc = -EIO;
	}
	return rc;
}

const char *qdisc_tree_unrestorable(const struct qdisc_tree *t)
{
	static char why[128];

	if (t->is_default)
		return NULL;
	if (t->flags & QTREE_F_STAB_TABLE)
		return "it has a size table (stab), which the kernel does not dump";
	if (t->nfilters) {
		snprintf(why, sizeof(why), "tc filters hang off it (%u dump "
			 "entries), and htbctl does not restore filters", t->nfilters);
		return why;
	}
	return NULL;
}

void qdisc_tree_free(struct qdisc_tree *t)
{
	free(t->blob);
	t->blob = NULL;
	t->len = 0;
}

static int qdisc_del(struct nl *nl, int ifindex, __u32 parent, __u32 handle,
		     struct nlerr *e, const char *what)
{
	struct nlmsghdr *nlh = tc_msg(nl->buf, RTM_DELQDISC, 0, ifindex, parent, handle);

	return nl_talk(nl, nlh, NULL, NULL, e, what);
}

int qdisc_delete_root(int ifindex, __u32 handle, struct nlerr *e)
{
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return -1;
	rc = qdisc_del(&nl, ifindex, TC_H_ROOT, handle, e, "deleting htbctl's root qdisc");
	nl_close(&nl);
	return rc;
}

int qdisc_tree_restore(int ifindex, const struct qdisc_tree *t, __u32 ours,
		       struct nlerr *e)
{
	struct nl nl;
	__u32 off = 0;
	int rc = 0;

	if (t->is_default)
		return ours ? qdisc_delete_root(ifindex, ours, e) : 0;
	if (nl_open(&nl, e))
		return -1;
	while (off + sizeof(struct nlmsghdr) <= t->len) {
		const struct nlmsghdr *src = (const void *)(t->blob + off);
		struct nlmsghdr *nlh;
		struct tcmsg *tcm;
		char what[96], h[16], k[QDISC_KIND_LEN];

		if (src->nlmsg_len < sizeof(*src) + sizeof(*tcm) ||
		    off + src->nlmsg_len > t->len) {
			rc = -EINVAL;
			nl_set_err(e, rc, "restoring the root qdisc: the saved tree is corrupt");
			break;
		}
		memcpy(nl.buf, src, src->nlmsg_len);
		nlh = (struct nlmsghdr *)nl.buf;
		tcm = mnl_nlmsg_get_payload(nlh);
		tcm->tcm_ifindex = ifindex;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE;
		if (nlh->nlmsg_type == RTM_NEWQDISC)
			nlh->nlmsg_flags |= NLM_F_REPLACE;
		tc_kind(nlh, k);
		snprintf(what, sizeof(what), "restoring %s %s %s",
			 nlh->nlmsg_type == RTM_NEWQDISC ? "qdisc" : "class", k,
			 tc_handle_str(tcm->tcm_handle, h, sizeof(h)));
		rc = nl_talk(&nl, nlh, NULL, NULL, e, what);
		if (rc)
			break;
		off += MNL_ALIGN(src->nlmsg_len);
	}
	nl_close(&nl);
	return rc;
}

/* ---- installing fq -------------------------------------------------- */

static void put_fq_opts(struct nlmsghdr *nlh, const struct fq_params *p)
{
	struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_FQ_PLIMIT, p->plimit);
	mnl_attr_put_u32(nlh, TCA_FQ_FLOW_PLIMIT, p->flow_plimit);
	mnl_attr_put_u32(nlh, TCA_FQ_BUCKETS_LOG, p->buckets_log);
	mnl_attr_put_u32(nlh, TCA_FQ_ORPHAN_MASK, p->orphan_mask);
	mnl_attr_put_u32(nlh, TCA_FQ_HORIZON, p->horizon_us);
	mnl_attr_put_u8(nlh, TCA_FQ_HORIZON_DROP, 1);
	mnl_attr_nest_end(nlh, opts);
}

static int add_qdisc(struct nl *nl, int ifindex, __u32 parent, __u32 handle,
		     const char *kind, const struct fq_params *p, struct nlerr *e)
{
	struct nlmsghdr *nlh;
	char what[64], h[16];

	nlh = tc_msg(nl->buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE,
		     ifindex, parent, handle);
	mnl_attr_put_strz(nlh, TCA_KIND, kind);
	if (p && !strcmp(kind, "fq"))
		put_fq_opts(nlh, p);
	snprintf(what, sizeof(what), "installing %s at %s", kind,
		 tc_handle_str(parent, h, sizeof(h)));
	return nl_talk(nl, nlh, NULL, NULL, e, what);
}

int qdisc_install_root(int ifindex, __u32 handle, __u32 ntxq,
		       const char *leaf_kind, const struct fq_params *p,
		       struct nlerr *e)
{
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return -1;
	if (ntxq <= 1) {
		rc = add_qdisc(&nl, ifindex, TC_H_ROOT, handle, leaf_kind, p, e);
	} else {
		rc = add_qdisc(&nl, ifindex, TC_H_ROOT, handle, "mq", NULL, e);
		for (__u32 i = 1; !rc && i <= ntxq; i++)
			rc = add_qdisc(&nl, ifindex, TC_H_MAKE(handle, i), 0,
				       leaf_kind, p, e);
	}
	nl_close(&nl);
	return rc;
}

static __u64 div_up(__u64 a, __u64 b)
{
	return a / b + (a % b != 0);
}

void fq_params_compute(const struct fq_demand *d, struct fq_params *p)
{
	/*
	 * Count in the smallest frame a class may carry: Ethernet + IPv4 +
	 * UDP headers with no payload. The program charges a packet's tokens
	 * when it stamps it; a packet fq then drops for a full flow wastes
	 * that slot, and a class of small packets would fall far below its
	 * rate (docs/loader.md, "The root qdisc htbctl installs", has the
	 * measurement). fq only holds what is queued, so a
	 * high limit costs nothing while idle.
	 */
	const __u64 min_frame = 14 + 20 + 8;
	__u64 flow, total, horizon_ns;
	__u32 log = 10;

	/* Packets a class can have waiting: ceil x limit in minimum frames
	 * (the program drops what would wait longer than the limit). */
	flow = div_up(d->max_class_bytes, min_frame);
	if (flow < 100)
		flow = 100;			/* fq's default */
	if (flow > (1u << 24))
		flow = 1u << 24;
	total = div_up(d->total_bytes, min_frame);
	if (total < flow)
		total = flow;
	if (total < 10000)
		total = 10000;			/* fq's default */
	if (total > (1u << 26))
		total = 1u << 26;
	p->flow_plimit = (__u32)flow;
	p->plimit = (__u32)total;
	/* Socketless traffic (forwarded, bridged, unconnected sockets) goes
	 * into the flow hash & orphan_mask: the whole hash, which the program
	 * has tagged with the class (include/htb/flowtag.h). */
	p->orphan_mask = HTB_FQ_ORPHAN_MASK;
	while (log < 16 && (1ull << log) < d->nleaves)
		log++;
	p->buckets_log = log;
	/* A stamp is never further out than the largest class limit; fq's
	 * horizon stays at its default 10 s unless a limit needs more. */
	horizon_ns = 2 * d->max_limit_ns;
	if (horizon_ns < 10ull * 1000000000ull)
		horizon_ns = 10ull * 1000000000ull;
	if (horizon_ns / 1000 > 0xffffffffull)
		horizon_ns = 0xffffffffull * 1000;
	p->horizon_us = (__u32)(horizon_ns / 1000);
}

/* ---- probing -------------------------------------------------------- */

int qdisc_kind_supported(const char *kind)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct nlerr e;
		struct nl nl;
		int rc;

		if (unshare(CLONE_NEWNET))
			_exit(3);
		if (nl_open(&nl, &e))
			_exit(3);
		if (!strcmp(kind, "clsact") || !strcmp(kind, "ingress"))
			rc = add_qdisc(&nl, 1, TC_H_CLSACT, TC_H_MAKE(TC_H_CLSACT, 0),
				       kind, NULL, &e);
		else
			rc = add_qdisc(&nl, 1, TC_H_ROOT, 0, kind, NULL, &e);
		/* Unknown kinds are ENOENT; a known kind may still refuse
		 * empty options (htb: EINVAL), which says it exists. */
		if (rc == -ENOENT)
			_exit(1);
		_exit(rc == -EPERM || rc == -EACCES || rc == -EOPNOTSUPP ? 2 : 0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status))
		return -EIO;
	switch (WEXITSTATUS(status)) {
	case 0: return 1;
	case 1: return 0;
	case 3: return -EPERM;
	default: return -EIO;
	}
}

/* ---- filters -------------------------------------------------------- */

struct filters_acc {
	struct tc_filter *f;
	int n, max;
};

/* The id of the program a cls_bpf filter runs (TCA_OPTIONS/TCA_BPF_ID). */
static __u32 bpf_prog_id(const struct nlmsghdr *nlh)
{
	const struct nlattr *a, *o;

	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg)) {
		if (mnl_attr_get_type(a) != TCA_OPTIONS)
			continue;
		mnl_attr_for_each_nested(o, a)
			if (mnl_attr_get_type(o) == TCA_BPF_ID &&
			    mnl_attr_validate(o, MNL_TYPE_U32) == 0)
				return mnl_attr_get_u32(o);
	}
	return 0;
}

/* A dump has an entry per pref with no handle (the classifier itself),
 * and u32 adds one per hash table (node bits 0): neither is a filter. */
static int filters_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct filters_acc *a = data;
	char kind[QDISC_KIND_LEN];

	if (nlh->nlmsg_type != RTM_NEWTFILTER || !tcm->tcm_handle)
		return 0;
	tc_kind(nlh, kind);
	if (!strcmp(kind, "u32") && !(tcm->tcm_handle & 0xfff))
		return 0;
	if (a->n < a->max) {
		struct tc_filter *f = &a->f[a->n];

		f->pref = TC_H_MAJ(tcm->tcm_info) >> 16;
		f->handle = tcm->tcm_handle;
		memcpy(f->kind, kind, sizeof(f->kind));
		f->prog_id = !strcmp(kind, "bpf") ? bpf_prog_id(nlh) : 0;
	}
	a->n++;
	return 0;
}

/* One dump of the filters at ifindex/parent, each message to cb: 0, or
 * the error. */
static int dump_filters(int ifindex, __u32 parent, nl_msg_cb cb, void *acc,
			struct nlerr *e)
{
	struct nlmsghdr *nlh;
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return -1;
	nlh = tc_msg(nl.buf, RTM_GETTFILTER, NLM_F_DUMP, ifindex, parent, 0);
	rc = nl_talk(&nl, nlh, cb, acc, e, "listing filters");
	nl_close(&nl);
	return rc;
}

int tc_filters(int ifindex, __u32 parent, struct tc_filter *f, int max,
	       struct nlerr *e)
{
	struct filters_acc a = { .f = f, .max = max };
	int rc = dump_filters(ifindex, parent, filters_cb, &a, e);

	return rc ? rc : a.n;
}

int tc_filter_count(int ifindex, __u32 parent, struct nlerr *e)
{
	return tc_filters(ifindex, parent, NULL, 0, e);
}

struct prefs_acc {
	__u32 *prefs;
	int n, max;
};

static int prefs_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct prefs_acc *a = data;

	if (nlh->nlmsg_type != RTM_NEWTFILTER)
		return 0;
	if (a->n < a->max)
		a->prefs[a->n] = TC_H_MAJ(tcm->tcm_info) >> 16;
	a->n++;
	return 0;
}

int tc_filter_prefs(int ifindex, __u32 parent, __u32 *prefs, int max,
		    struct nlerr *e)
{
	struct prefs_acc a = { .prefs = prefs, .max = max };
	int rc = dump_filters(ifindex, parent, prefs_cb, &a, e);

	return rc ? rc : a.n;
}
