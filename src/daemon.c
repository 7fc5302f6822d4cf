// SPDX-License-Identifier: GPL-2.0
/*
 * daemon (src/cmd_daemon.c parses its arguments): load FILE (or adopt a
 * load that is there and bring it to FILE), then reload whenever FILE
 * changes, and load again if the attachment disappears (clsact deleted,
 * device re-created). SIGINT/SIGTERM end it and leave IFACE shaped.
 *
 * FILE is watched through its directory with inotify, so editors that
 * write a new file and rename it over the old one are seen too; changes
 * are applied once they have been quiet for DEBOUNCE_MS. A bad file is
 * reported and the tree in force stays.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/inotify.h>

#include "loader.h"

#define DEBOUNCE_MS	200
#define CHECK_MS	2000	/* how often the attachment is checked */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the pins say about IFACE right now, quietly. */
static enum pin_state state_of(const char *ifname, int *ifindex)
{
	struct htbctl_meta m;
	bool have_meta;
	char why[512];

	*ifindex = (int)if_nametoindex(ifname);
	return pins_check(ifname, *ifindex, &m, &have_meta, why, sizeof(why));
}

/* Load, or bring an existing load to FILE; after stale pins (attachment
 * gone, device re-created) clear them first. Returns 0 when IFACE is
 * shaped by FILE's tree (or the last good one). */
static int ensure(const struct ctx *ctx, struct load_opts *o, bool apply_file)
{
	int ifindex;

	switch (state_of(o->ifname, &ifindex)) {
	case PINS_OK:
		return apply_file ? (loader_reload(ctx, o) == EXIT_OK ? 0 : -1) : 0;
	case PINS_FOREIGN:
	case PINS_UNTRUSTED:
		return -1;
	case PINS_STALE:
		if (!ifindex)
			return -1;	/* the device is gone: wait for it */
		p_warn(ctx, "daemon: htbctl's attachment to %s is gone; loading again",
		       o->ifname);
		o->force = true;
		loader_unload(ctx, o);
		o->force = false;
		/* fall through */
	case PINS_NONE:
		if (!ifindex)
			return -1;
		return loader_load(ctx, o) == EXIT_OK ? 0 : -1;
	}
	return -1;
}

/* The config file, watched through its directory. */
struct watch {
	int fd;
	char base[PATH_MAX];		/* the file's name in its directory */
	__u64 pending;			/* when to apply a change (0: none) */
};

static int watch_open(const struct ctx *ctx, const char *path, struct watch *w)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX];

	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	snprintf(basebuf, sizeof(basebuf), "%s", path);
	snprintf(w->base, sizeof(w->base), "%s", basename(basebuf));
	w->pending = 0;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		p_err(ctx, "inotify: %s", strerror(errno));
		return -1;
	}
	if (inotify_add_watch(w->fd, dirname(dirbuf), IN_CLOSE_WRITE | IN_MOVED_TO |
			      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB) < 0) {
		p_err(ctx, "watching %s: %s", dirname(dirbuf), strerror(errno));
		close(w->fd);
		return -1;
	}
	return 0;
}

/* Reads the events there are; an event for the file (re)arms the
 * debounce timer. */
static void watch_read(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len; ) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->len && !strcmp(ev->name, w->base))
				w->pending = mono_ms() + DEBOUNCE_MS;
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* Waits for a file event, the debounce timer or the next check. */
static void wait_event(struct watch *w, __u64 next_check)
{
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	__u64 now = mono_ms();
	int timeout = (int)(next_check > now ? next_check - now : 0);

	if (w->pending && (int)(w->pending - now) < timeout)
		timeout = w->pending > now ? (int)(w->pending - now) : 0;
	if (poll(&pfd, 1, timeout) > 0)
		watch_read(w);
}

/* The first load or adoption: fatal unless a tree stays in force. */
static int start(const struct ctx *ctx, struct load_opts *o)
{
	int ifindex;

	if (ensure(ctx, o, true) == 0)
		return 0;
	if (state_of(o->ifname, &ifindex) != PINS_OK) {
		p_err(ctx, "daemon: %s is not shaped; giving up", o->ifname);
		return -1;
	}
	p_warn(ctx, "daemon: %s stays shaped by the tree in force", o->ifname);
	return 0;
}

static void serve(const struct ctx *ctx, struct load_opts *o, struct watch *w)
{
	__u64 next_check = mono_ms() + CHECK_MS, now;
	int ifindex;

	while (!stop_signal) {
		wait_event(w, next_check);
		now = mono_ms();
		if (w->pending && now >= w->pending) {
			w->pending = 0;
			if (access(o->config, R_OK) == 0 && ensure(ctx, o, true))
				p_warn(ctx, "daemon: %s not applied; the tree in force "
				       "stays", o->config);
			fflush(stdout);
		}
		if (now >= next_check) {
			next_check = now + CHECK_MS;
			if (state_of(o->ifname, &ifindex) != PINS_OK) {
				ensure(ctx, o, false);
				fflush(stdout);
			}
		}
	}
}

int daemon_run(const struct ctx *ctx, struct load_opts *o)
{
	static const struct dev_cmd cmd = {
		.verb = "daemon", .need = NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS,
		.want = WANT_NOTHING,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct session s;
	struct watch w;
	int rc = session_open(&s, ctx, &cmd, o->ifname);

	session_close(&s);	/* each load and reload takes the lock itself */
	if (rc || watch_open(ctx, o->config, &w))
		return EXIT_FAIL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (start(ctx, o)) {
		close(w.fd);
		return EXIT_FAIL;
	}
	fflush(stdout);
	serve(ctx, o, &w);
	p_info(ctx, "daemon: %s, leaving %s shaped", strsignal(stop_signal), o->ifname);
	close(w.fd);
	return EXIT_OK;
}
