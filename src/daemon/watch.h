/* SPDX-License-Identifier: GPL-2.0 */
/* The config file, watched through its directory (watch.c). */
#ifndef HTBCTL_DAEMON_WATCH_H
#define HTBCTL_DAEMON_WATCH_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "common/common.h"

#define DAEMON_DEBOUNCE_MS	200	/* quiet this long before the file is read */
/* ... but no longer than this after the first event: a directory that is
 * never quiet (a log written next to the file) must not hold updates back. */
#define DAEMON_DEBOUNCE_MAX_MS	2000
/*
 * The config file, watched through its directory: any event there may
 * change what the path resolves to (an editor's rename, a ConfigMap's
 * ..data symlink swap), so every one arms the debounce timer. The watch
 * follows the directory's inode; when that is moved, deleted or replaced
 * the path is watched again.
 */
struct watch {
	int fd;				/* inotify */
	int wd;				/* the directory's watch; -1: none */
	dev_t dev;			/* the directory watched */
	ino_t ino;
	bool lost;			/* it was moved or deleted: watch the path again */
	bool writing;			/* the file was written to and not closed since */
	__u64 pending;			/* when to look at the file (0: no change seen) */
	__u64 first_event;		/* since the file was last looked at (0: none) */
	__u64 last_event;
	unsigned quiet_ms, max_ms;	/* the debounce: DAEMON_DEBOUNCE_MS, _MAX_MS by default */
	char dir[PATH_MAX];
	char base[NAME_MAX + 1];	/* the file's name in it */
};

int watch_open(const struct ctx *ctx, const char *path, struct watch *w);
void watch_close(struct watch *w);
/* Reads the events there are; arms w->pending. */
void watch_read(struct watch *w);
/* The timer ran out: w->pending cleared, the file is looked at now. */
void watch_timer_done(struct watch *w);
/* Watches the path again when the directory watched is no longer the one
 * there (or there is none); logs the directory going and coming back. */
void watch_check(const struct ctx *ctx, struct watch *w);

#endif
