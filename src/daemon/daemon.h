/* SPDX-License-Identifier: GPL-2.0 */
/* `htbctl daemon` (daemon/daemon.c): keeps a device shaped by a config file,
 * runs the sharing loop, serves /metrics. */
#ifndef HTBCTL_DAEMON_H
#define HTBCTL_DAEMON_H

#include "common/common.h"
#include "daemon/metrics_server.h"

struct load_opts;
struct feed_opts;
/* fo->file[0] NULL: no LibreQoS feed (daemon/feed.h). */
int daemon_run(const struct ctx *ctx, struct load_opts *o,
	       const struct daemon_metrics_opts *mo, const struct feed_opts *fo);

#endif
