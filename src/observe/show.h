/* SPDX-License-Identifier: GPL-2.0 */
/* `htbctl show` (observe/show.c): a device's classes, live, in text or JSON. */
#ifndef HTBCTL_OBSERVE_SHOW_H
#define HTBCTL_OBSERVE_SHOW_H

#include <linux/types.h>
#include "common/common.h"
#include "observe/snapshot.h"

int show_dev(const struct ctx *ctx, const char *ifname, __u64 interval_ns,
	     const struct show_filter *f);

#endif
