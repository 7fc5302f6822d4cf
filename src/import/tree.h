/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel HTB setup as import reads it (tree.c): classes, the rules
 * decoded from its filters, the notes for the output. */
#ifndef HTBCTL_IMPORT_TREE_H
#define HTBCTL_IMPORT_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define IMP_TEXT_LEN 200

/* A comment in the output at class `at` (0: the [device] section); a
 * warning is also one line on stderr. */
struct imp_note {
	__u32 at;
	bool warn;
	char text[IMP_TEXT_LEN];
};

struct imp_class {
	__u32 classid, parent;		/* parent 0: a child of the qdisc */
	__u64 rate, ceil;		/* bytes/s */
	__u32 burst, cburst;		/* bytes, as tc prints them */
	bool burst_exact, cburst_exact;	/* tc prints 0b: the kernel's buffer instead */
	__u32 quantum, prio, level;
	__u32 overhead, mpu, linklayer;	/* tc_ratespec of rate */
	bool leaf;
	/* the leaf's qdisc: "" for HTB's default pfifo */
	char leaf_kind[16];
	bool aqm_set, aqm, ecn, flows_set, flows;
	__u64 target_ns, interval_ns;	/* 0: not given */
};

/* One field of a filter's condition; a filter's fields all hold (AND). */
enum imp_field { IF_SRC, IF_DST, IF_SPORT, IF_DPORT, IF_MARK, IF_DSCP, IF_PROTO };

struct imp_key {
	enum imp_field field;
	int af;				/* IF_SRC/IF_DST: AF_INET or AF_INET6 */
	__u8 addr[16], plen;
	__u16 lo, hi;			/* ports */
	__u16 lo2, hi2;			/* a second range (two: narrowed around another) */
	bool two;
	__u32 val, mask;		/* mark; dscp in val; proto in val */
};

#define IMP_MAX_KEYS 8

/* A filter's condition and result, in the order HTB tries them. */
struct imp_rule {
	__u32 attach;			/* the qdisc or class the filter hangs on */
	__u32 pref, handle, classid;	/* classid 0: no class (an action) */
	__u16 proto;			/* the filter's protocol (ETH_P_*, host order) */
	bool gate;			/* leads to an inner class: no match of its own */
	char kind[16];
	int nkeys;
	struct imp_key keys[IMP_MAX_KEYS];
	char why[IMP_TEXT_LEN];		/* not convertible: why ("" if it is) */
	char text[IMP_TEXT_LEN];	/* the htbctl match, once converted */
};

/* A qdisc's size table (tc ... stab): the packet length every rate of the
 * qdisc sees is the table's, before the classes' own overhead. */
struct imp_stab {
	bool set;
	int overhead;
	__u32 mpu, linklayer, mtu, tsize;
	__u8 cell_log;
};

struct imp_tree {
	char dev[32];
	__u32 handle;			/* the HTB qdisc's handle (major << 16) */
	struct imp_stab stab;		/* the HTB qdisc's */
	__u32 defcls;			/* the default class, 0 if none */
	__u32 r2q;
	__u32 direct_qlen;		/* HTB's direct queue's length, 0 if not dumped */
	struct imp_class *cls;
	int ncls;
	struct imp_rule *rules;
	int nrules, caprules;
	int *by_class;			/* rule indexes sorted by class (import_write) */
	struct imp_note *notes;
	int nnotes, capnotes;
};

void import_free(struct imp_tree *t);
void imp_note(struct imp_tree *t, __u32 at, bool warn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct imp_rule *imp_rule_new(struct imp_tree *t);
const struct imp_class *imp_class_find(const struct imp_tree *t, __u32 classid);
/* Sorts t->cls by class id (imp_class_find needs it). */
void imp_class_sort(struct imp_tree *t);

#endif
