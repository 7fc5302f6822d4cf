/* SPDX-License-Identifier: GPL-2.0 */
/* The sharing loop over a device's pinned maps (share_run.c); the
 * sharing itself is share/share.h's. */
#ifndef HTBCTL_DAEMON_SHARE_RUN_H
#define HTBCTL_DAEMON_SHARE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include "common/common.h"
#include "daemon/collect.h"
#include "loader/maps.h"
#include "share/share.h"

/* The sharing loop on IFACE's pinned maps (see there). */
struct share_run {
	struct maps mp;
	bool open;
	__u32 map_id;			/* the runtime map held; 0: none */
	__u32 failed_id;		/* one that could not be held (not tried again) */
	struct htb_runtime *rt;		/* mmap()ed */
	size_t rt_len;
	struct htb_class_share *sh;	/* mmap()ed, cap entries */
	size_t sh_len;
	struct htb_class_conf *conf;	/* the generation planned */
	struct collect col;		/* what it reads of each class, each tick */
	__u32 cap, gen;			/* gen ~0: none planned */
	struct share_loop loop;
	__u64 next_ns;			/* the next tick (htb_clock_ns) */
	__u64 period_ns;		/* share_period of the last tick's cost */
	__u64 ticks, busy_ns;		/* what the loop has cost */
	__u64 last_ns, max_gap_ns;	/* the last tick; the longest time between two */
	__u64 first_ns, gap_end_ns;	/* the first tick; the end of that longest gap */
};

void share_run_attach(const struct ctx *ctx, struct share_run *r, const char *ifname);
void share_run_tick(const struct ctx *ctx, struct share_run *r);
/* Ends the lease (borrowing first come, first served) and lets go. */
void share_run_close(const struct ctx *ctx, struct share_run *r);

#endif
