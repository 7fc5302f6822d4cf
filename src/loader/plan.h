/* SPDX-License-Identifier: GPL-2.0 */
/* A config turned into what the maps must hold (plan.c), and the shadow
 * of the classifier entries a reload diffs against. */
#ifndef HTBCTL_LOADER_PLAN_H
#define HTBCTL_LOADER_PLAN_H

#include <linux/types.h>
#include "config/config.h"
#include "netlink/qdisc.h"
#include "loader/maps.h"

/* ---- loader/plan.c: what the maps must hold for a config ----------- */

/* Entries of one classifier map, sorted by key. */
struct kv {
	__u32 ksize;
	struct ent *e;
	__u32 n, cap;
};

struct plan {
	const struct htb_config *cfg;
	__u32 capacity;
	__u32 nslots;			/* conf[] covers slots 0..nslots-1 */
	__u32 *slot;			/* config index -> slot (owned) */
	struct htb_class_conf *conf;	/* by slot; flags 0 where unused */
	struct htb_tree_conf tree;
	struct kv cls[HTB_NCLS];		/* sorted by key */
};

/* slot (malloc'ed, taken over) maps config indexes to class slots. */
/* The major most leaves have, the lowest of a tie (0: no leaf), and the
 * highest minor among its leaves: cls_minor serves that major, by minor
 * (a reload keeps the load's major: src/loader/reload.c). */
int plan_main_major(const struct htb_config *cfg, __u32 *major, __u32 *top_minor);
int plan_build(struct plan *p, const struct htb_config *cfg, __u32 *slot,
	       __u32 nslots, __u32 capacity);
void plan_free(struct plan *p);
void plan_fq_demand(const struct htb_config *cfg, struct fq_demand *d);

/* An entry selecting slot val in both generations. */
/* Room for n entries (0, or -ENOMEM and kv as it was). */
int kv_reserve(struct kv *kv, __u32 n);
int kv_push(struct kv *kv, const void *key, __u32 val);
int kv_push_ent(struct kv *kv, const struct ent *e);
/* The entry with this key, or NULL (kv sorted). */
const struct ent *kv_find(const struct kv *kv, const void *key);
void kv_sort(struct kv *kv);
void kv_free(struct kv *kv);

/*
 * The classifier entries as htbctl last wrote them, sorted, pinned as
 * cls_shadow: a reload diffs against this instead of walking every
 * classifier map. tag is meta.reloads at the time of writing; a shadow
 * with another tag (or a reload that did not finish) is not trusted and
 * the maps are read instead.
 */
int shadow_write(const char *ifname, const struct kv cls[HTB_NCLS], __u64 tag);
/* The pinned shadow, tagged old_tag, takes tag: for a reload that changed
 * no classifier entry (the shadow already says what the maps hold; a
 * rewrite cost 10 ms at 100,392 classes). 0, or negative (then write it). */
int shadow_retag(const char *ifname, __u64 old_tag, __u64 tag);
/* 0 and cls filled (ksize set by the caller) if a valid shadow with this
 * tag is pinned; negative otherwise. */
int shadow_read(const char *ifname, struct kv cls[HTB_NCLS], __u64 tag);

#endif
