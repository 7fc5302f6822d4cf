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
#include "maps.h"

/* ---- privs.c: privileges and kernel features -------------------------- */

#define NEED_NET_ADMIN	(1u << 0)	/* change qdiscs and filters */
#define NEED_BPF	(1u << 1)	/* load programs, create and read maps */
#define NEED_BPFFS	(1u << 2)	/* /sys/fs/bpf mounted */
#define NEED_CLSACT	(1u << 3)	/* the kernel knows clsact */
#define NEED_FQ		(1u << 4)	/* the kernel knows fq */

/* Checks what `what` (the command name) needs, in the order a user would
 * fix them; prints one clear line and returns -1 at the first miss. */
int privs_check(const struct ctx *ctx, const char *what, unsigned int need);

/* 0 if ifname can be a device's name (ifname_valid), else -1 with one
 * clear line printed: the first check of every device command, since the
 * name becomes a path under PIN_ROOT. */
int dev_name_check(const struct ctx *ctx, const char *ifname);
/* The device's ifindex, or 0 with one clear line printed. */
int dev_ifindex(const struct ctx *ctx, const char *ifname);

/* ---- session.c: what every device command does first ---------------- */

enum pins_want {
	WANT_NOTHING,		/* only whether htbctl trusts where they are */
	WANT_UNLOADED,		/* load: none */
	WANT_LOADED,		/* reload, set, show: loaded and attached */
	WANT_ANY,		/* unload: any state, the command decides */
};

struct dev_cmd {
	const char *verb;	/* the command, as messages name it */
	unsigned int need;	/* NEED_* */
	bool lock;		/* it changes the device: hold the global lock */
	bool device_may_be_gone;	/* unload: pins of a deleted device */
	enum pins_want want;
};

struct session {
	const struct ctx *ctx;
	const char *ifname;
	int ifindex;		/* 0: no such device (device_may_be_gone) */
	int lock;		/* the flock, or -1 */
	bool root_created;	/* PIN_ROOT made by this command's lock */
	bool lock_held;		/* the caller holds the lock already (the daemon) */
	enum pin_state pins;
	bool have_meta;
	struct htbctl_meta m;	/* valid when have_meta */
	char why[512];		/* PINS_STALE, _FOREIGN, _UNTRUSTED: the reason */
};

/* Runs the checks of cmd for IFACE; prints the first problem and returns
 * -1. session_close() in either case. session_open is session_check
 * (privileges, features, the device) then session_lock (the lock, the
 * pins): a command with slow work to do first (reading a file that may be
 * a FIFO) does it between the two, so that it never holds the lock. */
int session_open(struct session *s, const struct ctx *ctx,
		 const struct dev_cmd *cmd, const char *ifname);
int session_check(struct session *s, const struct ctx *ctx,
		  const struct dev_cmd *cmd, const char *ifname);
int session_lock(struct session *s, const struct dev_cmd *cmd);
void session_close(struct session *s);
const char *stale_hint(char *buf, size_t len, const char *ifname);

/* ---- loader_plan.c: what the maps must hold for a config ----------- */

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
int plan_build(struct plan *p, const struct htb_config *cfg, __u32 *slot,
	       __u32 nslots, __u32 capacity);
void plan_free(struct plan *p);
void plan_fq_demand(const struct htb_config *cfg, struct fq_demand *d);

/* An entry selecting slot val in both generations. */
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
/* 0 and cls filled (ksize set by the caller) if a valid shadow with this
 * tag is pinned; negative otherwise. */
int shadow_read(const char *ifname, struct kv cls[HTB_NCLS], __u64 tag);

/* ---- loader_load.c, loader_reload.c, loader_unload.c ---------------- */

struct load_opts {
	const char *ifname;
	const char *config;
	/* The config's text when the caller read it (the daemon); NULL: the
	 * command reads the file config names, before taking the lock. */
	const char *config_text;
	size_t config_len;
	bool no_qdisc;
	bool force;		/* unload: also a crashed run's leftovers */
	bool quiet;		/* daemon: no summary on stdout */
	/* The daemon took the global lock itself (without waiting, so its loop
	 * never stalls) and checked the pins under it: the command does not
	 * take it again. */
	bool lock_held;
};

/* Capacity (class slots) fixed at load for n classes. */
__u32 loader_capacity(__u32 nclasses);

int loader_load(const struct ctx *ctx, const struct load_opts *o);
int loader_reload(const struct ctx *ctx, const struct load_opts *o);
int loader_unload(const struct ctx *ctx, const struct load_opts *o);

/* ---- loader_util.c: what load, reload and unload share ---------------- */

/* The config's text: o->config_text, or the file read into *buf (freed by
 * the caller). Prints the problem and "config F rejected; nothing changed". */
int loader_config_text(const struct ctx *ctx, const struct load_opts *o,
		       char **buf, const char **text, size_t *len);
/* Parses it into cfg; prints the problem likewise. */
int loader_parse_config(const struct ctx *ctx, const struct load_opts *o,
			const char *text, size_t len, struct htb_config *cfg);

/* Routes libbpf's messages: shown with -v, else dropped. */
void loader_libbpf_log(const struct ctx *ctx);
double ms_since(const struct timespec *t0);
/* -v: the time of a step since the last call (name NULL starts the clock). */
void loader_phase(const struct ctx *ctx, struct timespec *t, const char *cmd,
		  const char *name);
/* HTBCTL_TEST_FAIL=STEP: true after STEP (the rollback runs);
 * HTBCTL_TEST_FAIL=crash-STEP: exits there, as a crash would. */
bool loader_test_fail(const struct ctx *ctx, const char *step);
/* Undoes what m records, newest first (a failed load, unload). Returns
 * the number of steps that could not be undone; *restored (if not NULL)
 * says whether the saved root qdisc was put back. */
int loader_undo(const struct ctx *ctx, const char *ifname, int ifindex,
		struct htbctl_meta *m, const struct qdisc_tree *saved, bool rollback,
		bool *restored);
/* htbctl's filters on ifindex egress, found by their program (named
 * htb_egress, with htbctl's maps) whatever the pins say, up to max into
 * own; returns how many there are. */
int loader_own_filters(int ifindex, struct tc_filter *own, int max);
/* unload --force: removes them all (warning about any that stays);
 * returns how many went. */
int loader_remove_own_filters(const struct ctx *ctx, const char *ifname, int ifindex);

/* ---- loader_set.c, show.c, daemon.c ----------------------------------- */

int loader_set_hysteresis(const struct ctx *ctx, const char *ifname, bool on);
struct show_filter;
int show_dev(const struct ctx *ctx, const char *ifname, __u64 interval_ns,
	     const struct show_filter *f);

#endif
