/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One reading of a loaded device's maps, for `show` and `metrics`:
 * class_conf of the active generation once, class_state (with every CPU's
 * batch, maps_read_state) twice, interval apart, dev_stats, and the
 * sharing loop's limits while its lease runs. A few batched reads, no
 * syscall per class.
 */
#ifndef HTBCTL_SNAPSHOT_H
#define HTBCTL_SNAPSHOT_H

#include "loader/session.h"

/* A valid class in tree order: its slot and its class ids from the top. */
struct row {
	__u32 slot;
	__u32 depth;
	__u32 ids[HTB_MAX_DEPTH];	/* class ids from the top down to this one */
};

struct snapshot {
	struct htb_runtime rt;
	struct htb_dev_stats ds;
	__u32 hw;			/* slots read */
	struct htb_class_conf *conf;
	struct htb_class_state *s1, *s2;
	struct htb_class_share *sh;	/* NULL: no sharing loop runs */
	__u64 t0;			/* when rt was read */
	__u64 t1, t2;			/* when the two reads ended */
	__u64 interval;			/* asked between them (0: one read) */
	struct row *rows;		/* valid classes in tree order */
	__u32 nrows;
};

/* Reads the maps (hiwater: slots in use, from the meta record); errors
 * printed. 0 or -1; snapshot_free in either case. */
int snapshot_take(const struct ctx *ctx, const struct maps *mp, __u32 hiwater,
		  __u64 interval_ns, struct snapshot *sn);
/* sn->rows: the valid classes, each after its parent, siblings by id. */
void snapshot_sort(struct snapshot *sn);
void snapshot_free(struct snapshot *sn);
/* The current rate of slot s over the two reads, in bytes (pkts: packets)
 * per second; 0 with one read. */
__u64 snapshot_rate(const struct snapshot *sn, __u32 s, bool pkts);
/* Which rows show and top print (show_filter_rows). */
enum show_sort { SORT_TREE, SORT_RATE, SORT_DROPS, SORT_DELAY, SORT_BORROWED };
struct show_filter {
	__u32 classid;			/* 0: every class; else it and its ancestors */
	enum show_sort sort;		/* SORT_TREE: parents first, by class id */
	__u32 n;			/* 0: no limit */
};

/* The words of `sort KEY` and `n N` (either NULL: not given) into f, for
 * show and top; 0, or -1 with one line printed. */
int show_filter_parse(const struct ctx *ctx, const char *sort, const char *n,
		      struct show_filter *f);
/* sn->rows narrowed and ordered as f says (after snapshot_sort). 0, or
 * -ENOENT when f->classid is no class of the tree. */
int show_filter_rows(struct snapshot *sn, const struct show_filter *f);

/* A previous reading, by slot: the next one's current rates are measured
 * since it, with one read of the maps and no wait (the daemon's scrapes,
 * top's frames). */
struct snapshot_memo {
	__u32 n;			/* slots held */
	__u32 *classid;			/* a slot whose class changed reads rate 0 */
	__u64 *bytes, *packets, *drops;
	__u64 t;			/* when it was read (htb_clock_ns); 0: none */
};
/* A memo younger than this stands in for the first read. */
#define SNAPSHOT_MEMO_MAX_AGE_NS	(60 * HTB_NSEC_PER_SEC)
void snapshot_memo_apply(const struct snapshot_memo *m, struct snapshot *sn);
void snapshot_memo_save(struct snapshot_memo *m, const struct snapshot *sn);
void snapshot_memo_free(struct snapshot_memo *m);

/* "1:10" */
char *sprint_classid(__u32 id, char *buf, size_t len);

#endif
