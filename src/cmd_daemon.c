// SPDX-License-Identifier: GPL-2.0
/*
 * htbctl daemon dev IFACE config FILE [--no-qdisc]: load FILE (or adopt a
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

#include "commands.h"
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

int do_daemon(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct kwarg kw[] = {
		{ "dev", &o.ifname, true },
		{ "config", &o.config, true },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], *dir, *base;
	__u64 pending = 0, next_check;
	int ifd, wd, n = 0;
	bool last_ok;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--no-qdisc"))
			o.no_qdisc = true;
		else
			argv[n++] = argv[i];
	}
	if (parse_kwargs(ctx, n, argv, kw, 2))
		return EXIT_USAGE;
	if (privs_check(ctx, "daemon", NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS))
		return EXIT_FAIL;
	if (!dev_ifindex(ctx, o.ifname))
		return EXIT_FAIL;

	snprintf(dirbuf, sizeof(dirbuf), "%s", o.config);
	snprintf(basebuf, sizeof(basebuf), "%s", o.config);
	dir = dirname(dirbuf);
	base = basename(basebuf);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0) {
		p_err(ctx, "inotify: %s", strerror(errno));
		return EXIT_FAIL;
	}
	wd = inotify_add_watch(ifd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
			       IN_DELETE | IN_MOVED_FROM | IN_ATTRIB);
	if (wd < 0) {
		p_err(ctx, "watching %s: %s", dir, strerror(errno));
		close(ifd);
		return EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (ensure(ctx, &o, true)) {
		/* A first failure is fatal unless the device is merely missing. */
		int ifindex;
		enum pin_state st = state_of(o.ifname, &ifindex);

		if (st != PINS_OK) {
			p_err(ctx, "daemon: %s is not shaped; giving up", o.ifname);
			close(ifd);
			return EXIT_FAIL;
		}
		p_warn(ctx, "daemon: %s stays shaped by the tree in force", o.ifname);
	}
	last_ok = true;
	fflush(stdout);
	next_check = mono_ms() + CHECK_MS;

	while (!stop_signal) {
		struct pollfd pfd = { .fd = ifd, .events = POLLIN };
		__u64 now = mono_ms();
		int timeout = (int)(next_check > now ? next_check - now : 0);

		if (pending && (int)(pending - now) < timeout)
			timeout = pending > now ? (int)(pending - now) : 0;
		if (poll(&pfd, 1, timeout) > 0) {
			char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
			ssize_t len;

			while ((len = read(ifd, buf, sizeof(buf))) > 0) {
				for (char *p = buf; p < buf + len; ) {
					struct inotify_event *ev = (struct inotify_event *)p;

					if (ev->len && !strcmp(ev->name, base))
						pending = mono_ms() + DEBOUNCE_MS;
					p += sizeof(*ev) + ev->len;
				}
			}
		}
		now = mono_ms();
		if (pending && now >= pending) {
			pending = 0;
			if (access(o.config, R_OK) == 0) {
				last_ok = ensure(ctx, &o, true) == 0;
				if (!last_ok)
					p_warn(ctx, "daemon: %s not applied; the tree in force "
					       "stays", o.config);
			}
			fflush(stdout);
		}
		if (now >= next_check) {
			int ifindex;

			next_check = now + CHECK_MS;
			if (state_of(o.ifname, &ifindex) != PINS_OK) {
				last_ok = ensure(ctx, &o, false) == 0;
				fflush(stdout);
			}
		}
	}
	(void)last_ok;
	p_info(ctx, "daemon: %s, leaving %s shaped", strsignal(stop_signal), o.ifname);
	close(ifd);
	return EXIT_OK;
}
