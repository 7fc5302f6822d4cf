/* SPDX-License-Identifier: GPL-2.0 */
/* htbctl top: a live view of a loaded device (observe/top.c). */
#ifndef HTBCTL_TOP_H
#define HTBCTL_TOP_H

#include "common/common.h"
#include "observe/snapshot.h"

#define TOP_DEFAULT_INTERVAL_NS	(1000 * 1000 * 1000ull)

struct top_opts {
	__u64 interval_ns;		/* between frames, and the rates' window */
	enum show_sort sort;		/* SORT_RATE unless asked */
	__u32 n;			/* 0: as many as the terminal has rows for */
};

int top_dev(const struct ctx *ctx, const char *ifname, const struct top_opts *o);

#endif
