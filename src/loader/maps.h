/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The datapath's maps: which there are, how to reach them (from the
 * skeleton before load, from the pins after), and every read and write of
 * them. The loader, show, set and the BPF tests all write through the
 * maps_put_* / maps_*_state calls below, in batches where the kernel has
 * batch operations for the map type.
 */
#ifndef HTBCTL_MAPS_H
#define HTBCTL_MAPS_H

#include <stdbool.h>
#include <linux/types.h>
#include "common/common.h"
#include "htb/types.h"

struct htbctl_bpf;

enum map_id {
	M_CONF, M_STATE, M_RUNTIME, M_TREE, M_DEVSTATS, M_SHARE, M_FLOWS,
	M_BATCH, M_MINOR,
	M_CLS,				/* M_CLS + enum htb_cls: classifier maps */
	M_NMAPS = M_CLS + HTB_NCLS
};

struct maps {
	int fd[M_NMAPS];
	__u32 max_entries[M_NMAPS];
	bool owned;			/* fds from the pins: closed by maps_close */
	/* tree_conf.prio_major, as last read or written: the priority
	 * classifier's entries of that major with a minor below cls_minor's
	 * size live in cls_minor, by minor, the others in cls_prio. */
	__u32 prio_major;
};

/* The map's name: its pin under IFACE, its name in the BPF object. */
const char *map_name(enum map_id id);

/* What userspace needs to know of a classifier map (include/htb/types.h
 * HTB_CLASSIFIERS). */
struct cls_desc {
	__u32 ksize;
	__u32 skip;			/* HTB_SKIP_*, set when the map is empty */
	bool lpm;
};
extern const struct cls_desc cls_desc[HTB_NCLS];

/* Before load: sizes for cap class slots, the entries the config needs
 * per classifier (nkeys[], by enum htb_cls) and the highest minor of
 * cls_minor's major (plan_main_major). */
int maps_size_skel(struct htbctl_bpf *skel, __u32 cap, const __u64 *nkeys,
		   __u32 top_minor);
/* After load: the skeleton's map fds (owned by the skeleton). */
void maps_from_skel(struct maps *m, struct htbctl_bpf *skel);
/* Opens every map pinned under IFACE (bpf_obj_get). Prints the failure. */
int maps_open_pinned(const struct ctx *ctx, const char *ifname, struct maps *m);
void maps_close(struct maps *m);

/* ---- batched access, any map ---- */

/* Reads values of keys first..first+n-1 of an array map into vals, with
 * one batched syscall where the kernel has them (elem_flags: BPF_F_LOCK
 * for spin-locked values). Returns 0 or -errno. */
int array_read(int fd, __u32 first, __u32 n, void *vals, __u32 vsize,
	       __u64 elem_flags);
/* Updates n key/value pairs (keys of ksize bytes, values of vsize), in
 * batches where the map type supports it, else one by one. */
int map_update_many(int fd, const void *keys, __u32 ksize, const void *vals,
		    __u32 vsize, __u32 n, __u64 elem_flags);
int map_delete_many(int fd, const void *keys, __u32 ksize, __u32 n);
/* Every key and value of a hash or LPM map; *keys and *vals malloc'ed.
 * Returns the count or -errno. */
long map_dump(int fd, __u32 ksize, __u32 vsize, __u32 max_entries,
	      void **keys, void **vals);

/* ---- the datapath's entries; each returns 0 or -errno ---- */

/* One classifier map entry: a key (up to 20 bytes, zero-padded) and the
 * class slot it selects in each generation (struct htb_cls_val). */
struct ent {
	__u8 key[20];
	__u32 val[2];
};

/* class_conf of generation gen: conf[i] goes to slot slots[i]. */
int maps_put_conf(const struct maps *m, __u32 gen, __u32 cap, const __u32 *slots,
		  const struct htb_class_conf *conf, __u32 n);
/* class_state of slots[i]: full buckets for conf[i] as of now. */
int maps_init_state(const struct maps *m, const __u32 *slots,
		    const struct htb_class_conf *conf, __u32 n, __u64 now);
/* class_state and every CPU's batch of the slots zeroed (classes removed). */
int maps_clear_state(const struct maps *m, const __u32 *slots, __u32 n);
/* Every CPU's batch of the given slots zeroed (struct htb_class_batch):
 * a slot a new class takes, one that turns from leaf to inner class, or
 * one freed; only while the program leaves them alone (not inner classes
 * of the generation in force). */
int maps_clear_batches(const struct maps *m, const __u32 *slots, __u32 n);
/* class_state of slots 0..n-1 as the classes stand: each inner class's
 * applied state with every CPU's batch added (counters) and taken off its
 * buckets (struct htb_class_batch); conf: the slots' conf, the active
 * generation's. A CPU's path carry (struct htb_path_carry) is left out:
 * an inner class's counters are behind by at most a carry per CPU, and
 * never go back, as they would when a carry that reached its batch
 * between the reads were counted twice or not at all. */
int maps_read_state(const struct maps *m, const struct htb_class_conf *conf,
		    __u32 n, struct htb_class_state *st);
/* tree_conf of generation gen; m takes its prio_major. */
int maps_put_tree(struct maps *m, __u32 gen, const struct htb_tree_conf *t);
/* Every entry of cls_minor "no class" (a zeroed entry would say slot 0):
 * once, on maps just made, before any maps_put_cls. */
int maps_init_minor(const struct maps *m);
/* The classifier entries: keys as the config gives them (cls_prio's a
 * classid, wherever maps.prio_major places it). */
int maps_put_cls(const struct maps *m, enum htb_cls c, const struct ent *e, __u32 n);
int maps_del_cls(const struct maps *m, enum htb_cls c, const struct ent *e, __u32 n);
/* Every entry of classifier c, LPM keys normalized; *e from big_calloc
 * (common/bigmem.h: big_free it). Returns the count or -errno. */
long maps_dump_cls(const struct maps *m, enum htb_cls c, struct ent **e);
int maps_get_runtime(const struct maps *m, struct htb_runtime *rt);
int maps_set_runtime(const struct maps *m, const struct htb_runtime *rt);

/* An LPM key's address bits beyond its prefix do not take part in
 * matching; clear them so equal entries compare equal. */
void ent_normalize_lpm(struct ent *e, __u32 ksize);

#endif
