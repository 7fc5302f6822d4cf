/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `htbctl daemon ... libreqos CSV JSON` (feed.c): LibreQoS's two files
 * watched; when they change and are quiet, imported with the class ids of
 * the daemon's config FILE kept (import libreqos --keep-ids FILE), into a
 * config text the daemon writes to FILE and puts in force.
 */
#ifndef HTBCTL_DAEMON_FEED_H
#define HTBCTL_DAEMON_FEED_H

#include <stdbool.h>
#include <sys/stat.h>
#include "common/common.h"
#include "daemon/watch.h"
#include "import/libreqos.h"

/* LibreQoS's CRM integrations write ShapedDevices.csv and network.json one
 * after the other, each in several writes or by a rename: the import waits
 * until both files' directories have been quiet this long (at most
 * FEED_QUIET_MAX_MS after the first event, as the config's watch does). */
#define FEED_QUIET_MS		1000
#define FEED_QUIET_MAX_MS	10000

enum { FEED_CSV, FEED_JSON, FEED_FILES };

/* The command line's part (cli/cmd_daemon.c fills it). */
struct feed_opts {
	const char *file[FEED_FILES];	/* NULL: no feed */
	struct lqos tmpl;		/* import libreqos's options, copied into each import */
};

/* A file as an import read it: a file whose stat is the same is not read
 * again (a busy directory wakes the watch; the files did not change). */
struct feed_seen {
	bool there;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct feed {
	const struct feed_opts *o;
	const char *config;		/* FILE: its ids kept, the result written there */
	struct watch w[FEED_FILES];
	struct feed_seen seen[FEED_FILES];
	bool due;			/* an event came: import once both are quiet */
	char err[1024];			/* the last failure, one line */
	unsigned circuits;		/* the last import that succeeded */
};

/* The result of one import. */
struct feed_text {
	char *buf;			/* malloc'ed, NUL-terminated */
	size_t len;
};

enum feed_result { FEED_OK, FEED_SAME, FEED_FAILED };

int feed_open(const struct ctx *ctx, struct feed *f, const struct feed_opts *o,
	      const char *config);
void feed_close(struct feed *f);
/* The earliest pending timer of the two watches (0: none). */
__u64 feed_pending(const struct feed *f);
/* The watches' events read and timers run; true when the import is due
 * now: an event came and both files are quiet (and closed by their
 * writers, or open unchanged for writer_ms). */
bool feed_ready(const struct ctx *ctx, struct feed *f, __u64 now, __u64 writer_ms);
/* Each watch's directory checked (daemon/watch.c watch_check). */
void feed_check(const struct ctx *ctx, struct feed *f);
/*
 * The import: FEED_OK with *t the config (the caller frees it); FEED_SAME
 * when neither file changed since the last import (unless force); or
 * FEED_FAILED with f->err the one line saying why, FILE:LINE where the
 * files give one (printed by the caller). Nothing is written.
 */
enum feed_result feed_import(const struct ctx *ctx, struct feed *f, bool force,
			     struct feed_text *t);
/* t written to FILE atomically (a temporary file renamed over it). */
int feed_write(const struct ctx *ctx, const struct feed *f, const struct feed_text *t);

#endif
