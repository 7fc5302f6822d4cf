/* SPDX-License-Identifier: GPL-2.0 */
/* Prometheus text exposition of a loaded device (observe/metrics.c). */
#ifndef HTBCTL_METRICS_H
#define HTBCTL_METRICS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "common/common.h"

/* Which classes get series: the cardinality is the operator's choice. */
enum metrics_classes {
	METRICS_INNER,		/* every class that is not a leaf (the default) */
	METRICS_ALL,
	METRICS_TOP,		/* inner classes and the top_n busiest leaves */
};

/* What only a daemon knows: its last reload (NULL for the command). */
struct metrics_daemon {
	bool reloaded;			/* a reload was tried */
	bool last_ok;
	double last_time;		/* its end, seconds since the epoch */
	__u64 reloads_ok, reloads_failed;	/* since the daemon started */
	__u64 reattaches_ok, reattaches_failed;	/* loads after the attachment went */
	__u64 conns_deadline, conns_limit;	/* /metrics connections it shut down */
};

struct snapshot_memo;

struct metrics_opts {
	enum metrics_classes classes;
	__u32 top_n;
	__u64 interval_ns;		/* between the two reads (current rate) */
	const struct metrics_daemon *daemon;
	struct snapshot_memo *memo;	/* the previous scrape; NULL: two reads,
					 * interval_ns apart */
};

#define METRICS_DEFAULT_INTERVAL_NS	(100 * 1000 * 1000ull)

/* A label value as the exposition format wants it (\, " and newline
 * escaped), malloc'ed; NULL: out of memory. */
char *metrics_label_value(const char *v);

/* "inner", "all" or "top:N" into o; 0, or -1 with one line printed. */
int metrics_parse_classes(const struct ctx *ctx, const char *s, struct metrics_opts *o);
/* The exposition of ifname's state on out; 0, or -1 with one line printed. */
int metrics_write(const struct ctx *ctx, const char *ifname,
		  const struct metrics_opts *o, FILE *out);

#endif
