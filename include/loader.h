/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htbctl's control plane: load, reload, unload, show, set (docs/loader.md),
 * and the checks that come before any of them.
 */
#ifndef HTBCTL_LOADER_H
#define HTBCTL_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include "common.h"

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

#endif
