/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's /metrics server (metrics_server.c): its address, options
 * and state. */
#ifndef HTBCTL_DAEMON_METRICS_SERVER_H
#define HTBCTL_DAEMON_METRICS_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <linux/types.h>
#include "common/common.h"
#include "observe/metrics.h"
#include "observe/snapshot.h"
#include "daemon/conns.h"

/* --metrics ADDR:PORT, parsed. */
struct metrics_addr {
	struct sockaddr_in v4;		/* sin_family 0: v6 is the one */
	struct sockaddr_in6 v6;
	__u16 port;
	char text[80];			/* as given, for messages */
};

/* The daemon's metrics options (cli/cmd_daemon.c fills them). */
struct daemon_metrics_opts {
	bool on;
	struct metrics_addr addr;
	struct metrics_opts opts;
};

/* The LibreQoS feed's imports (daemon/feed.c), as the daemon noted them. */
struct metrics_import {
	__u64 failed;			/* since the daemon started */
	bool tried, last_ok;
	double last_success;		/* seconds since the epoch; 0: none */
	unsigned circuits;		/* of the last import that succeeded */
};

/* Expositions sent at once before a request shares the newest
 * (metrics_server.c, body_shared): a few scrapers at their own pace. */
#define METRICS_MAX_BODIES	4u

struct body;
struct metrics_server {
	const struct ctx *ctx;
	bool feed;			/* the daemon imports LibreQoS's files: imp shown */
	struct metrics_import imp;	/* guarded by lock */
	const char *ifname;
	struct metrics_opts opts;
	struct MHD_Daemon *mhd;		/* NULL: not serving */
	pthread_mutex_t lock;		/* guards dm */
	bool lock_init;
	struct metrics_daemon dm;
	struct snapshot_memo memo;	/* the previous scrape */
	char *spare;			/* the last exposition's buffer, for the next */
	size_t spare_cap;
	struct body *latest;		/* the newest exposition being sent (lock) */
	unsigned bodies;		/* expositions being sent (lock) */
	struct metrics_conns conns;
};

/* "127.0.0.1:9101", "[::1]:9101", ":9101" (127.0.0.1); 0 or -1 with one
 * line printed. */
int metrics_addr_parse(const struct ctx *ctx, const char *spec, struct metrics_addr *a);
/* Listens on a in its own thread; 0, or -1 with one line printed. */
int metrics_server_start(const struct ctx *ctx, struct metrics_server *m,
			 const char *ifname, const struct metrics_addr *a);
/* A reload (or the first load) ended, put in force or not. */
void metrics_server_note(struct metrics_server *m, bool ok);
/* A load after the attachment went (daemon.c's reattach) ended. */
void metrics_server_note_reattach(struct metrics_server *m, bool ok);
/* An import of the feed ended: ok, or failed (the tree in force stays). */
void metrics_server_note_import(struct metrics_server *m, bool ok, unsigned circuits);
void metrics_server_stop(struct metrics_server *m);

#endif
