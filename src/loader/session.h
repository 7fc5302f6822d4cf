/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every device command does before its work (docs/loader.md "Checks
 * first"): privileges and kernel features (loader/privs.c), the device, the
 * global lock, the state of the pins (loader/session.c).
 */
#ifndef HTBCTL_LOADER_SESSION_H
#define HTBCTL_LOADER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "common/common.h"
#include "loader/pins.h"
#include "loader/maps.h"

/* ---- loader/privs.c: privileges and kernel features -------------------------- */

#define NEED_NET_ADMIN	(1u << 0)	/* change qdiscs and filters */
#define NEED_BPF	(1u << 1)	/* load programs, create and read maps */
#define NEED_BPFFS	(1u << 2)	/* /sys/fs/bpf mounted */
#define NEED_CLSACT	(1u << 3)	/* the kernel knows clsact */
#define NEED_FQ		(1u << 4)	/* the kernel knows fq */
/* load the egress program: the verifier takes its packet reads (pointer
 * arithmetic on the packet) only with CAP_PERFMON */
#define NEED_PROG	(1u << 5)

/* Checks what `what` (the command name) needs, in the order a user would
 * fix them; prints one clear line and returns -1 at the first miss. */
int privs_check(const struct ctx *ctx, const char *what, unsigned int need);

/* 0 if ifname can be a device's name (ifname_valid), else -1 with one
 * clear line printed: the first check of every device command, since the
 * name becomes a path under PIN_ROOT. */
int dev_name_check(const struct ctx *ctx, const char *ifname);
/* The device's ifindex, or 0 with one clear line printed. */
int dev_ifindex(const struct ctx *ctx, const char *ifname);

/* ---- loader/session.c: what every device command does first ---------------- */

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

#endif
