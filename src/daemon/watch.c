// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's config file, watched through its directory (daemon/daemon.h).
 * Reading the file does not change the directory (no IN_OPEN, IN_ACCESS
 * in the mask), so the daemon's own reads do not wake it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "daemon/clock.h"
#include "daemon/watch.h"

#define WATCH_MASK	(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | \
			 IN_CREATE | IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | \
			 IN_MOVE_SELF | IN_ONLYDIR)

/* Watches the directory now at w->dir; the watch of the one before (if it
 * is still there, moved) goes. Records which directory it is, so that
 * watch_check sees a replacement that sent no event here (the path's own
 * parent changed, or a symlink on the path). */
static int watch_arm(struct watch *w)
{
	struct stat st;
	int wd;

	if (stat(w->dir, &st) < 0)
		return -errno;
	wd = inotify_add_watch(w->fd, w->dir, WATCH_MASK);
	if (wd < 0)
		return -errno;
	if (w->wd >= 0 && w->wd != wd)
		inotify_rm_watch(w->fd, w->wd);
	w->wd = wd;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	w->lost = false;
	return 0;
}

int watch_open(const struct ctx *ctx, const char *path, struct watch *w)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX];
	int rc;

	memset(w, 0, sizeof(*w));
	w->wd = -1;
	w->quiet_ms = DAEMON_DEBOUNCE_MS;
	w->max_ms = DAEMON_DEBOUNCE_MAX_MS;
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	snprintf(basebuf, sizeof(basebuf), "%s", path);
	snprintf(w->dir, sizeof(w->dir), "%s", dirname(dirbuf));
	snprintf(w->base, sizeof(w->base), "%s", basename(basebuf));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		p_err(ctx, "daemon: inotify: %s", strerror(errno));
		return -1;
	}
	rc = watch_arm(w);
	if (rc) {
		p_err(ctx, "daemon: watching %s: %s", w->dir, strerror(-rc));
		close(w->fd);
		return -1;
	}
	return 0;
}

void watch_close(struct watch *w)
{
	close(w->fd);
	w->fd = -1;
}

/* An event that names the file: is a writer still at it? A regular file
 * just created is open for writing by its creator (touch and cp close it
 * at once, and the close comes as an event too); a symlink or a new hard
 * link to a file is complete. */
static void file_event(struct watch *w, const struct inotify_event *ev)
{
	char path[PATH_MAX + NAME_MAX + 2];
	struct stat st;

	if (ev->mask & IN_MODIFY)
		w->writing = true;
	if (ev->mask & IN_CREATE) {
		snprintf(path, sizeof(path), "%s/%s", w->dir, w->base);
		w->writing = lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
			     st.st_nlink == 1;
	}
	if (ev->mask & (IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
		w->writing = false;
}

static void one_event(struct watch *w, const struct inotify_event *ev)
{
	__u64 now = daemon_now_ms();

	if (ev->wd != w->wd && !(ev->mask & IN_Q_OVERFLOW))
		return;		/* the directory watched before */
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
		w->lost = true;
	if (ev->len && !strcmp(ev->name, w->base))
		file_event(w, ev);
	if (!w->first_event)
		w->first_event = now;
	w->pending = now + w->quiet_ms;
	if (w->pending > w->first_event + w->max_ms)
		w->pending = w->first_event + w->max_ms;
	w->last_event = now;
}

void watch_timer_done(struct watch *w)
{
	w->pending = 0;
	w->first_event = 0;
}

void watch_read(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len; ) {
			struct inotify_event *ev = (struct inotify_event *)p;

			one_event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

void watch_check(const struct ctx *ctx, struct watch *w)
{
	bool had = w->wd >= 0;
	struct stat st;

	if (had && !w->lost && stat(w->dir, &st) == 0 && st.st_dev == w->dev &&
	    st.st_ino == w->ino)
		return;
	if (watch_arm(w)) {
		if (had) {
			inotify_rm_watch(w->fd, w->wd);
			w->wd = -1;
			p_warn(ctx, "daemon: directory %s is gone; the tree in force stays "
			       "until it is back", w->dir);
		}
		/* look again soon: it may be on its way (mv new dir) */
		w->pending = daemon_now_ms() + w->quiet_ms;
		return;
	}
	p_info(ctx, "daemon: watching %s again (%s)", w->dir,
	       had ? "it was replaced" : "it is back");
	w->pending = daemon_now_ms() + w->quiet_ms;
}
