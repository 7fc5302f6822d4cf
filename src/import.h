/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htbctl import: a kernel HTB setup (qdisc, classes, leaf qdiscs, filters)
 * read over netlink (import_read.c), its filters decoded into htbctl's
 * one-field matches (import_filter.c, import_u32.c), and written as an
 * htbctl config with what could not be converted as comments
 * (import_write.c). docs/import.md says what converts and what does not.
 */
#ifndef HTBCTL_IMPORT_H
#define HTBCTL_IMPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/netlink.h>

#include "common.h"

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
	struct imp_class *cls;
	int ncls;
	struct imp_rule *rules;
	int nrules, caprules;
	int *by_class;			/* rule indexes sorted by class (import_write) */
	struct imp_note *notes;
	int nnotes, capnotes;
};

/* Reads the HTB tree on dev (root HTB qdisc) into t. 0, or -1 with one
 * line printed. */
int import_read(const struct ctx *ctx, const char *dev, struct imp_tree *t);
void import_free(struct imp_tree *t);

void imp_note(struct imp_tree *t, __u32 at, bool warn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct imp_rule *imp_rule_new(struct imp_tree *t);
const struct imp_class *imp_class_find(const struct imp_tree *t, __u32 classid);

/* A filter message (RTM_NEWTFILTER) decoded into rules (u32 may give
 * several, or none for its hash tables). */
int imp_filter_decode(struct imp_tree *t, const struct nlmsghdr *nlh);
/* u32's nodes are kept until every one is read: links point anywhere. */
struct u32_graph;
struct u32_graph *u32_graph_new(void);
int u32_graph_add(struct u32_graph *g, __u32 attach, __u32 pref, __u16 proto,
		  const struct nlmsghdr *nlh);
void u32_graph_resolve(struct u32_graph *g, struct imp_tree *t);
void u32_graph_free(struct u32_graph *g);

/* The actions of a filter (an ACT nest, or u32/fw's legacy police): a
 * note, or r->why when they decide the packet's fate. */
/* The kinds of the actions in an ACT nest ("police, mirred"), false if
 * none. */
bool imp_action_kinds(const struct nlattr *act, char *out, size_t len);
void imp_rule_actions(struct imp_tree *t, struct imp_rule *r, const struct nlattr *act,
		      bool legacy_police);

void imp_key_mask(struct imp_key *k);

/* The keys of r as one htbctl match line in r->text, or why not in r->why. */
void imp_rule_express(struct imp_rule *r);

/* Filters turned into each leaf's matches (precedence checked), then the
 * config. Returns how many classes were written (0: nothing converted). */
int import_write(const struct ctx *ctx, struct imp_tree *t, const char *source, FILE *out);

/* A script line as tc -batch reads it (import_tc.c). */
#define TC_MAX_WORDS 511		/* tc's makeargs exits past this */

enum tc_object { TC_NONE, TC_QDISC, TC_CLASS, TC_FILTER, TC_CHAIN, TC_ACTIONS, TC_MONITOR,
		 TC_EXEC, TC_HELP };

struct tc_line {
	char *w[TC_MAX_WORDS];
	int n;
	int obj;			/* the object's word: tc's command starts there */
	enum tc_object kind;		/* TC_NONE: not a tc command */
	bool del;			/* its verb deletes (delete, flush) */
};

bool tc_matches(const char *word, const char *name);
int tc_split(char *line, struct tc_line *l, const char **why);
void tc_classify(struct tc_line *l);
const char *tc_refusal(const struct tc_line *l);
size_t tc_join(const struct tc_line *l, char *out, size_t len);
const char *tc_next_dev(const struct tc_line *l, int *from);

/* import script: a scratch network namespace with the script's devices,
 * the script applied with tc -batch. 0, or -1 with one line printed
 * (FILE:LINE for a line tc refused). *dev gets the device to import. */
int import_script_apply(const struct ctx *ctx, const char *file, const char *want_dev,
			char *dev, size_t devlen);

#endif
