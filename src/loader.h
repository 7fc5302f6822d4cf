/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htbctl's control plane: load, reload, unload, show, set (docs/loader.md),
 * and the checks that come before any of them.
 */
#ifndef HTBCTL_LOADER_H
#define HTBCTL_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "common.h"
#include "config.h"
#include "qdisc.h"
#include "pins.h"

/* ---- privs.c: privileges and kernel features -------------------------- */

#define NEED_NET_ADMIN	(1u << 0)	/* change qdiscs and filters */
#define NEED_BPF	(1u << 1)	/* load programs, create and read maps */
#define NEED_BPFFS	(1u << 2)	/* /sys/fs/bpf mounted */
#define NEED_CLSACT	(1u << 3)	/* the kernel knows clsact */
#define NEED_FQ		(1u << 4)	/* the kernel knows fq */

/* Checks what `what` (the command name) needs, in the order a user would
 * fix them; prints one clear line and returns -1 at the first miss. */
int privs_check(const struct ctx *ctx, const char *what, unsigned int need);

/* The device's ifindex, or 0 with one clear line printed. */
int dev_ifindex(const struct ctx *ctx, const char *ifname);

/* ---- loader_maps.c: the pinned maps and batched access ------------- */

enum map_id {
	M_CONF, M_STATE, M_RUNTIME, M_TREE,
	M_PRIO, M_MARK, M_DST4, M_SRC4, M_DST6, M_SRC6, M_PORT, M_CGROUP,
	M_DEVSTATS,
	M_NMAPS
};

extern const char *const map_names[M_NMAPS];

struct maps {
	int fd[M_NMAPS];
	__u32 max_entries[M_NMAPS];
};

/* Opens every map pinned under IFACE (bpf_obj_get). Prints the failure. */
int maps_open_pinned(const struct ctx *ctx, const char *ifname, struct maps *m);
void maps_close(struct maps *m);

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

/* ---- loader_plan.c: what the maps must hold for a config ----------- */

/* One classifier map entry: a key (up to 20 bytes, zero-padded) and the
 * class slot it selects. */
struct ent {
	__u8 key[20];
	__u32 val;
};

struct kv {
	__u32 ksize;
	struct ent *e;
	__u32 n, cap;
};

enum { C_PRIO, C_MARK, C_DST4, C_SRC4, C_DST6, C_SRC6, C_PORT, C_CGROUP, NCLS };

struct cls_desc {
	enum map_id map;
	int kind;		/* enum config_match_kind, -1 for cls_prio */
	__u32 ksize;
	__u32 skip;		/* HTB_SKIP_* when the map is empty */
	bool lpm;
};
extern const struct cls_desc cls_desc[NCLS];

struct plan {
	const struct htb_config *cfg;
	__u32 capacity;
	__u32 nslots;			/* conf[] covers slots 0..nslots-1 */
	__u32 *slot;			/* config index -> slot (owned) */
	struct htb_class_conf *conf;	/* by slot; flags 0 where unused */
	struct htb_tree_conf tree;
	struct kv cls[NCLS];		/* sorted by key */
};

/* slot (malloc'ed, taken over) maps config indexes to class slots. */
int plan_build(struct plan *p, const struct htb_config *cfg, __u32 *slot,
	       __u32 nslots, __u32 capacity);
void plan_free(struct plan *p);
void plan_fq_demand(const struct htb_config *cfg, struct fq_demand *d);

int kv_push(struct kv *kv, const void *key, __u32 val);
void kv_sort(struct kv *kv);
void kv_free(struct kv *kv);
void kv_normalize_lpm(struct ent *e, __u32 ksize);

/*
 * The classifier entries as htbctl last wrote them, sorted, pinned as
 * cls_shadow: a reload diffs against this instead of walking every
 * classifier map. tag is meta.reloads at the time of writing; a shadow
 * with another tag (or a reload that did not finish) is not trusted and
 * the maps are read instead.
 */
int shadow_write(const char *ifname, const struct kv cls[NCLS], __u64 tag);
/* 0 and cls filled (ksize set by the caller) if a valid shadow with this
 * tag is pinned; negative otherwise. */
int shadow_read(const char *ifname, struct kv cls[NCLS], __u64 tag);

/* ---- loader.c ------------------------------------------------------ */

struct load_opts {
	const char *ifname;
	const char *config;
	bool no_qdisc;
	bool force;		/* unload: also a crashed run's leftovers */
	bool quiet;		/* daemon: no summary on stdout */
};

/* Capacity (class slots) fixed at load for n classes. */
__u32 loader_capacity(__u32 nclasses);

int loader_load(const struct ctx *ctx, const struct load_opts *o);
int loader_reload(const struct ctx *ctx, const struct load_opts *o);
int loader_unload(const struct ctx *ctx, const struct load_opts *o);
/* Routes libbpf's messages: shown with -v, else dropped. */
void loader_libbpf_log(const struct ctx *ctx);
/* Checks IFACE is loaded and attached; prints the problem otherwise.
 * Returns the ifindex or 0. */
int loader_attached(const struct ctx *ctx, const char *ifname, const char *what,
		    struct htbctl_meta *m);

/* Writes used by load and reload (loader.c). */
int write_conf(int fd, __u32 gen, __u32 cap, const __u32 *slots,
	       const struct htb_class_conf *conf, __u32 n);
int init_state(int fd, const __u32 *slots, __u32 n,
	       const struct htb_class_conf *conf);
int kv_update(int fd, const struct kv *kv, const struct ent *e, __u32 n);
int kv_delete(int fd, const struct kv *kv, const struct ent *e, __u32 n);
double ms_since(const struct timespec *t0);
void loader_phase(const struct ctx *ctx, struct timespec *t, const char *cmd,
		  const char *name);
const char *stale_hint(char *buf, size_t len, const char *ifname);

/* ---- show.c -------------------------------------------------------- */

int show_dev(const struct ctx *ctx, const char *ifname, __u64 interval_ns);

#endif
