/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Root qdisc handling over rtnetlink (libmnl): read what is on a device,
 * save it as replayable netlink messages, install fq (or mq with one fq per
 * TX queue), and put the saved tree back. See docs/loader.md.
 */
#ifndef HTBCTL_QDISC_H
#define HTBCTL_QDISC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define QDISC_KIND_LEN	16
#define QDISC_ERR_LEN	256

/* A failed request: the negative errno and a sentence that says what was
 * tried, with the kernel's extended ack message when it sent one. */
struct nlerr {
	int err;
	char msg[QDISC_ERR_LEN];
};

struct qdisc_info {
	__u32 handle;
	__u32 parent;
	char kind[QDISC_KIND_LEN];
	__u32 orphan_mask;	/* an fq's, as dumped; 0 for other kinds */
};

/*
 * The root qdisc tree of a device as found, in a form that can be replayed:
 * blob holds RTM_NEWQDISC / RTM_NEWTCLASS messages (TCA_KIND, TCA_OPTIONS,
 * TCA_STAB as the kernel dumped them) in an order where every parent comes
 * before its children. A kernel default root (handle 0: noqueue,
 * pfifo_fast, a default mq) is restored by deleting ours; the kernel then
 * attaches its default again.
 */
struct qdisc_tree {
	bool is_default;
	__u32 root_handle;
	char root_kind[QDISC_KIND_LEN];
	__u32 nqdiscs;		/* non-default qdiscs, root included */
	__u32 nclasses;		/* classes replayed (htb, hfsc, drr, qfq) */
	__u32 nfilters;		/* filters on the root tree: not restorable */
	__u32 flags;		/* QTREE_F_* */
	__u32 len;		/* bytes used in blob */
	unsigned char *blob;
};

#define QTREE_F_STAB_TABLE	(1u << 0)	/* a size table: not dumped, not restorable */

/* fq's parameters as htbctl installs them (docs/loader.md derives them). */
struct fq_params {
	__u32 plimit;		/* packets, whole qdisc */
	__u32 flow_plimit;	/* packets per flow */
	__u32 orphan_mask;	/* socketless traffic: orphan_mask + 1 pseudo-flows */
	__u32 buckets_log;	/* log2 of the flow hash table */
	__u32 horizon_us;	/* a stamp further out is dropped */
};

/* What fq_params_compute needs to know about the classes. */
struct fq_demand {
	__u64 max_class_bytes;	/* max over leaves of ceil (B/s) x limit (s) */
	__u64 total_bytes;	/* sum over top-level classes of ceil x limit */
	__u64 max_limit_ns;	/* largest class limit */
	__u32 nleaves;
	__u32 pad;
};

void fq_params_compute(const struct fq_demand *d, struct fq_params *p);

/* IFLA_NUM_TX_QUEUES of ifindex. */
int link_info(int ifindex, __u32 *ntxq, struct nlerr *e);

/* The root qdisc (parent TC_H_ROOT) and whether a clsact/ingress qdisc is
 * there (its kind in ingress_kind, "" if none). */
int qdisc_get_root(int ifindex, struct qdisc_info *root, char *ingress_kind,
		   struct nlerr *e);

/* Every visible qdisc of ifindex (clsact/ingress included); *out is
 * malloc'ed, the count is returned. */
int qdisc_list(int ifindex, struct qdisc_info **out, struct nlerr *e);

int qdisc_tree_save(int ifindex, struct qdisc_tree *t, struct nlerr *e);
/* Replaces the root (which should be ours, handle ours) by the saved tree. */
int qdisc_tree_restore(int ifindex, const struct qdisc_tree *t, __u32 ours,
		       struct nlerr *e);
/* Why the saved tree cannot be put back faithfully, or NULL if it can. */
const char *qdisc_tree_unrestorable(const struct qdisc_tree *t);
void qdisc_tree_free(struct qdisc_tree *t);

/* The narrowest orphan_mask of the fq qdiscs of ifindex in *mask (all ones
 * if none); returns how many fq qdiscs it has, or -errno. */
int qdisc_fq_orphan_mask(int ifindex, __u32 *mask, struct nlerr *e);

/* A handle for our root that no qdisc of ifindex uses. */
__u32 qdisc_free_handle(int ifindex);

/*
 * Installs leaf_kind as the root (handle), or, when ntxq > 1, mq as the
 * root with one leaf_kind per TX queue. leaf_kind is "fq" (with p) in
 * production; tests on a kernel without sch_fq pass another kind, whose
 * options are left empty.
 */
int qdisc_install_root(int ifindex, __u32 handle, __u32 ntxq,
		       const char *leaf_kind, const struct fq_params *p,
		       struct nlerr *e);
/* Deletes the root qdisc with this handle; the kernel default returns. */
int qdisc_delete_root(int ifindex, __u32 handle, struct nlerr *e);

/* Whether this kernel knows a qdisc kind: 1 yes, 0 no, negative errno if it
 * could not be found out. Probes on the loopback device of a private
 * network namespace in a child process, so nothing here changes. */
int qdisc_kind_supported(const char *kind);

/* One filter as `tc filter add` made it. */
struct tc_filter {
	__u32 pref;
	__u32 handle;
	__u32 prog_id;			/* "bpf": the program's id, else 0 */
	char kind[QDISC_KIND_LEN];	/* "bpf", "u32", "flower" ... */
};

/* The filters on the qdisc or class parent of ifindex, up to max of them
 * into f; returns how many there are (may exceed max). */
int tc_filters(int ifindex, __u32 parent, struct tc_filter *f, int max,
	       struct nlerr *e);
/* Just how many. */
int tc_filter_count(int ifindex, __u32 parent, struct nlerr *e);

/* The prefs (priorities) in use on parent, one per dump entry, up to max
 * of them; returns how many entries there are (may exceed max). */
int tc_filter_prefs(int ifindex, __u32 parent, __u32 *prefs, int max,
		    struct nlerr *e);

/* "1:", "ffff:fff1", "root" into buf. */
char *tc_handle_str(__u32 h, char *buf, size_t len);

#endif
