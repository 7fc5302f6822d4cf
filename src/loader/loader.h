/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htbctl's control plane: load, reload, unload, set (docs/loader.md).
 * The checks every device command makes first are session.h; what a
 * config puts in the maps, plan.h.
 */
#ifndef HTBCTL_LOADER_H
#define HTBCTL_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "common/common.h"
#include "config/config.h"
#include "netlink/qdisc.h"
#include "loader/maps.h"
#include "loader/pins.h"
#include "loader/session.h"

/* ---- loader/load.c, loader/reload.c, loader/unload.c ---------------- */

/* What one device's load or reload gets from a config of two directions,
 * or of ingress shaping (loader/dirs.c, docs/loader.md "Directions"). */
struct load_dir {
	const struct htb_config *cfg;	/* the direction's tree (config_direction) */
	__u32 dir;			/* META_DIR_* */
	const char *partner;		/* the other direction's device, or NULL */
	/* load: create the ifb o->ifname and redirect this device's
	 * ingress to it; NULL: o->ifname is there and shapes its egress */
	const char *ingress_of;
	/* out: what the load recorded, for the summary of both */
	struct htbctl_meta *done;
	__u32 nclasses;
};

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
	/* A device of a config of two directions or of ingress shaping
	 * (loader/dirs.c runs one command per device); NULL otherwise. */
	struct load_dir *dir;
	bool one;		/* unload, show: this device only, not its partner */
};

/* Capacity (class slots) fixed at load for n classes. */
__u32 loader_capacity(__u32 nclasses);

/* The commands on every device a config or a name stands for
 * (loader/dirs.c): one, or both directions. */
int loader_load(const struct ctx *ctx, const struct load_opts *o);
int loader_reload(const struct ctx *ctx, const struct load_opts *o);
int loader_unload(const struct ctx *ctx, const struct load_opts *o);
/* The same on one device (load.c, reload.c, unload.c). */
int loader_load_one(const struct ctx *ctx, const struct load_opts *o);
int loader_reload_one(const struct ctx *ctx, const struct load_opts *o);
int loader_unload_one(const struct ctx *ctx, const struct load_opts *o);
/* reload_one in steps, so two devices switch together (dirs.c): prepare
 * writes what the new tree needs beside the one in force (NULL: failed,
 * said, nothing in force changed); flip puts it in force; cancel (after
 * a flip or not) puts the tree before back and frees; finish cleans up,
 * prints and frees. */
struct reload_run;
struct reload_run *loader_reload_prepare(const struct ctx *ctx, const struct load_opts *o);
int loader_reload_flip(struct reload_run *r);
void loader_reload_cancel(struct reload_run *r, bool flipped);
int loader_reload_finish(struct reload_run *r);
void loader_reload_free(struct reload_run *r);

/* load's summary line of one device (its -j object). */
void loader_print_loaded(const struct ctx *ctx, const char *ifname,
			 const struct htbctl_meta *m, __u32 nclasses, double ms);
/* Whether a leaf borrows (the note on the sharing loop after a load). */
bool loader_tree_borrows(const struct htb_config *cfg);

/* ---- loader/dirs.c: the devices of a name ------------------------------ */

/* The devices htbctl shapes for a name, download first: the name's own
 * pins and their partner, or else the ifb that shapes the name's ingress
 * (and its partner). n 0: none. */
struct dev_group {
	int n;
	char dev[2][16];
	__u32 dir[2];		/* META_DIR_* */
	const char *name[2];	/* dev[i], or the name given (dirs_group_or_name) */
};
void dirs_group(const char *name, struct dev_group *g);
/* The same, or else the name itself as the one device (n 1): a command
 * then says what is wrong with it (not loaded, not a device's name). */
void dirs_group_or_name(const char *name, struct dev_group *g);
/* The ifb's name for ingress shaping of ifname: "ifb-" + ifname when it
 * fits in 15 bytes, else "ifb-" + its first 7 bytes + 4 hex digits of a
 * hash of the whole name (two long names sharing 7 bytes still differ). */
void dirs_ifb_name(const char *ifname, char *buf, size_t len);

/* ---- loader/util.c: what load, reload and unload share ---------------- */

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
/*
 * Test hooks (docs/loader.md "Test hooks"), only in build/htbctl-test,
 * whose load.c is built with -DHTBCTL_TEST_HOOKS and linked with
 * loader/test_hooks.c; a release build has these stubs, reads no such
 * variable and cannot be made to fail or exit on purpose.
 * loader_test_fail: HTBCTL_TEST_FAIL=STEP: true after STEP (the rollback
 * runs); HTBCTL_TEST_FAIL=crash-STEP: exits there, as a crash would.
 * loader_test_qdisc: HTBCTL_TEST_QDISC=KIND installs KIND instead of fq
 * (a kernel without sch_fq); NULL when unset.
 */
#ifdef HTBCTL_TEST_HOOKS
bool loader_test_fail(const struct ctx *ctx, const char *step);
const char *loader_test_qdisc(void);
#else
static inline bool loader_test_fail(const struct ctx *ctx, const char *step)
{
	return false;
}

static inline const char *loader_test_qdisc(void)
{
	return NULL;
}
#endif
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

/* ---- loader/set.c ---- */

int loader_set_hysteresis(const struct ctx *ctx, const char *ifname, bool on);

#endif
