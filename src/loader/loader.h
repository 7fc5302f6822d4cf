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
