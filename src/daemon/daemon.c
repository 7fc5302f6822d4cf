// SPDX-License-Identifier: GPL-2.0
/*
 * daemon (src/cli/cmd_daemon.c parses its arguments): load FILE (or adopt a
 * load that is there and bring it to FILE), then reload whenever FILE's
 * text changes, and load again if the attachment disappears (clsact
 * deleted, device re-created). SIGHUP re-reads FILE and applies it;
 * SIGINT/SIGTERM end the daemon and leave IFACE shaped. One daemon per
 * device (daemon/lock.c).
 *
 * FILE is watched through its directory (daemon/watch.c). After a change
 * the daemon waits until the directory has been quiet for the debounce,
 * and until a writer of FILE has closed it; then it reads FILE, waits the
 * debounce again and reads it again, and applies the text only if both
 * reads agree: exactly that text, handed to load or reload, so what is
 * applied is what was compared. Text equal to what is in force changes
 * nothing. A bad file is reported and the tree in force stays; the daemon
 * keeps the text of the last tree it applied, and re-attaches that one
 * when the file on disk is bad.
 *
 * With libreqos CSV JSON (daemon/feed.c) the daemon also writes FILE: a
 * change of LibreQoS's files is imported with FILE's class ids kept,
 * written to FILE and applied at once; a bad import leaves both FILE and
 * the tree in force (docs/loader.md "LibreQoS feed").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/feed.h"
#include "daemon/lock.h"
#include "daemon/notify.h"
#include "daemon/share_run.h"
#include "daemon/watch.h"
#include "loader/loader.h"
#include "loader/maps_fill.h"

#define DAEMON_CHECK_MS		2000	/* how often the attachment is checked */
/* How often the loop tries the global lock while another command holds
 * it: a try is an open and a flock (microseconds), the sharing loop's
 * tick is 10 ms, and a change waits at most this long after the lock is
 * free. */
#define DAEMON_LOCK_RETRY_MS	100
/* A re-attach that keeps failing with the same error is said again this
 * often, with a count: 144 lines a day, not 43,200. */
#define DAEMON_FAIL_SUMMARY_MS	(10 * 60 * 1000)
/* A file written to and not closed is waited for this long at most: a
 * writer that keeps it open for ever must not stop every update. */
#define DAEMON_WRITER_MS	10000


/* A config's text, as read (malloc'ed, not terminated); buf NULL: none. */
struct text {
	char *buf;
	size_t len;
};

enum file_state { FILE_OK, FILE_GONE, FILE_UNREADABLE };

struct daemon {
	const struct ctx *ctx;
	struct load_opts *o;
	struct watch w;
	int lock;			/* daemon_lock's */
	int sfd;			/* signalfd: SIGHUP, SIGINT, SIGTERM */
	sigset_t old_mask;		/* before they were blocked for it */
	int stop;			/* the signal that ends it; 0: running */
	struct text good;		/* the last text applied: the tree in force */
	struct text rejected;		/* the last text that did not apply */
	struct text candidate;		/* read once; applied if the next read agrees */
	enum file_state file;		/* what the last read found */
	bool dev_gone;			/* said so */
	bool said_stuck;		/* said that there is no tree to re-attach */
	/* the sharing loop (daemon/share_run.c), one per shaped device: a
	 * config of two directions shapes two (docs/loader.md "Directions") */
	struct share_run share[2];
	const struct daemon_metrics_opts *mo;
	struct metrics_server metrics;	/* --metrics (daemon/metrics_server.c) */
	struct notify_watchdog wd;	/* systemd's (daemon/notify.c) */
	const struct feed_opts *fo;
	struct feed feed;		/* libreqos CSV JSON (daemon/feed.c) */
	bool feeding;
	__u64 next_check;		/* daemon_now_ms of the next check */
	struct text waiting;		/* applied once the global lock is free */
	__u64 retry_ms;			/* when to try the lock again */
	__u64 busy_since;		/* the lock was found held (0: it was not) */
	/* What the loaders print through: ctx with tap, which keeps their last
	 * error and mutes them while a failed re-attach repeats. */
	struct ctx lctx;
	struct msg_tap tap;
	struct {
		unsigned int n;		/* re-attaches failed in a row */
		__u64 since, said;	/* the first; when it was last said */
		char err[1024];		/* the error said */
	} fails;
};

static void text_free(struct text *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = 0;
}

/* to takes over from's buffer. */
static void text_move(struct text *to, struct text *from)
{
	text_free(to);
	*to = *from;
	from->buf = NULL;
	from->len = 0;
}

static bool text_same(const struct text *a, const struct text *b)
{
	return a->buf && b->buf && a->len == b->len && !memcmp(a->buf, b->buf, a->len);
}

/* What the pins say about IFACE right now, quietly: about every device
 * of its config (both directions, or the ifb of its ingress), the first
 * that is not loaded and attached. why (if not NULL) gets its reason. */
static enum pin_state group_state(const char *ifname, char *why, size_t len)
{
	struct htbctl_meta m;
	struct dev_group g;
	enum pin_state st = PINS_NONE;
	bool have_meta;
	char buf[512];

	dirs_group(ifname, &g);
	if (g.n == 0)
		return pins_check(ifname, (int)if_nametoindex(ifname), &m, &have_meta,
				  why ? why : buf, why ? len : sizeof(buf));
	for (int i = 0; i < g.n; i++) {
		st = pins_check(g.dev[i], (int)if_nametoindex(g.dev[i]), &m, &have_meta,
				why ? why : buf, why ? len : sizeof(buf));
		if (st != PINS_OK)
			return st;
	}
	return st;
}

static enum pin_state state_of(const char *ifname, int *ifindex)
{
	*ifindex = (int)if_nametoindex(ifname);
	return group_state(ifname, NULL, 0);
}

/* The sharing loop on each shaped device of IFACE. */
static void share_attach(struct daemon *d)
{
	struct dev_group g;

	dirs_group(d->o->ifname, &g);
	for (int i = 0; i < 2; i++) {
		if (i < g.n)
			share_run_attach(d->ctx, &d->share[i], g.dev[i]);
		else
			share_run_close(d->ctx, &d->share[i]);
	}
}

/* ---- the file ---- */

/* Reads FILE into *t. A change of what the reads find (deleted, there
 * again, unreadable) is logged once, not at every try. */
static int read_file(struct daemon *d, struct text *t)
{
	const char *path = d->o->config;
	struct stat st;

	t->buf = NULL;
	if (stat(path, &st) < 0 && errno == ENOENT) {
		if (d->file != FILE_GONE)
			p_warn(d->ctx, "daemon: %s was deleted (or is a dangling link); the "
			       "tree in force stays", path);
		d->file = FILE_GONE;
		return -1;
	}
	/* checked at every read: the file or its directory may change hands */
	if (file_trusted(d->ctx, "config", path) ||
	    config_read_file(path, &t->buf, &t->len,
			     d->file == FILE_UNREADABLE ? NULL : stderr)) {
		if (d->file != FILE_UNREADABLE)
			p_warn(d->ctx, "daemon: %s cannot be read; the tree in force stays", path);
		d->file = FILE_UNREADABLE;
		return -1;
	}
	if (d->file == FILE_GONE)
		p_info(d->ctx, "daemon: %s is there again", path);
	d->file = FILE_OK;
	return 0;
}

/* t resolves to a tree. Its problems are printed as FILE:LINE unless it
 * is the text that was rejected last, whose problems were printed then. */
static bool text_valid(const struct daemon *d, const struct text *t)
{
	FILE *diag = text_same(t, &d->rejected) ? NULL : stderr;
	struct htb_config cfg;
	int rc = config_parse_string(t->buf, t->len, d->o->config, &cfg, diag);

	config_free(&cfg);
	return rc == 0;
}

/* ---- putting a text in force ---- */

/* put_in_force's results besides 0 and -1 */
enum { PUT_BUSY = 1, PUT_AGAIN };

/*
 * What is left of an earlier load removed as unload --force does, after
 * saying why; PUT_AGAIN: the load takes the lock anew, since the unload
 * may have removed PIN_ROOT, the directory the lock is on. Two cases:
 * stale pins (the attachment gone, the device re-created), and no pins
 * while htbctl's filter runs (the pin directory removed by hand, so the
 * maps in force can be neither reloaded nor read: 7112e5f's load refused
 * the device every 2 s for ever). Counters and token state start anew.
 */
static int clear_and_load_again(struct daemon *d, const char *why)
{
	p_warn(&d->lctx, "daemon: %s: %s; loading again", d->o->ifname, why);
	d->o->force = true;
	loader_unload(&d->lctx, d->o);
	d->o->force = false;
	return PUT_AGAIN;
}

/* Under the global lock: reload when IFACE is loaded, else load. */
static int put_locked(struct daemon *d)
{
	const struct ctx *ctx = &d->lctx;
	int ifindex = (int)if_nametoindex(d->o->ifname);
	char why[512];

	switch (group_state(d->o->ifname, why, sizeof(why))) {
	case PINS_OK:
		return loader_reload(ctx, d->o) == EXIT_OK ? 0 : -1;
	case PINS_FOREIGN:
	case PINS_UNTRUSTED:
		p_err(ctx, "daemon: %s", why);
		return -1;
	case PINS_STALE:
		/* the device gone: wait for it */
		return ifindex ? clear_and_load_again(d, "htbctl's attachment is gone") : -1;
	case PINS_NONE:
		break;
	}
	if (ifindex && loader_own_filters(ifindex, NULL, 0))
		return clear_and_load_again(d, "its pins are gone (removed by hand?) "
					    "while htbctl's filter runs, out of reach");
	return ifindex && loader_load(ctx, d->o) == EXIT_OK ? 0 : -1;
}

/*
 * Reload t when IFACE is loaded, else load it (after clearing stale
 * pins). 0 when t's tree is in force. The global lock is taken here and
 * the pins checked under it; in the loop (wait false) it is only tried:
 * PUT_BUSY while another command holds it. 7112e5f waited in flock() and
 * the sharing loop stopped for as long (9.1 s measured behind another
 * command; 4.3 s here behind `flock PIN_ROOT sleep 5`).
 */
static int put_in_force(struct daemon *d, const struct text *t, bool wait)
{
	struct load_opts *o = d->o;
	int rc = PUT_AGAIN;
	char why[512];
	bool created;

	o->config_text = t->buf;
	o->config_len = t->len;
	for (int i = 0; i < 2 && rc == PUT_AGAIN; i++) {
		int lock = wait ? pins_lock(&created, why, sizeof(why))
				: pins_lock_try(&created, why, sizeof(why));

		if (lock < 0) {
			rc = lock == -EWOULDBLOCK ? PUT_BUSY : -1;
			if (rc < 0)
				p_err(&d->lctx, "daemon: %s", why);
			break;
		}
		o->lock_held = true;
		rc = put_locked(d);
		o->lock_held = false;
		pins_unlock(lock, created);
	}
	o->config_text = NULL;
	o->config_len = 0;
	return rc == PUT_AGAIN ? -1 : rc;
}

/* Another command holds the lock: said once, until it is had again. */
static void lock_busy(struct daemon *d, const char *what)
{
	if (d->busy_since)
		return;
	d->busy_since = daemon_now_ms();
	p_info(d->ctx, "daemon: %s is locked by another htbctl command; %s when it is free "
	       "(trying every %d ms; sharing goes on)", PIN_ROOT, what, DAEMON_LOCK_RETRY_MS);
}

static void lock_had(struct daemon *d)
{
	if (!d->busy_since)
		return;
	p_info(d->ctx, "daemon: the lock is free after %.1f s",
	       (double)(daemon_now_ms() - d->busy_since) / 1e3);
	d->busy_since = 0;
}

/* systemd's READY=1 and a STATUS= line saying what is in force. */
static void notify_ready(struct daemon *d, const char *how)
{
	char msg[PATH_MAX + 160];

	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=shaping %s with %s%s", d->o->ifname,
		 d->o->config, how);
	notify_send(msg);
}

/* The start failed: the log and systemd's STATUS= say so (the exit status
 * follows). */
static void notify_failed(struct daemon *d, bool shaped)
{
	char msg[PATH_MAX + 200];
	const char *left = shaped ? "stays shaped by the tree in force" : "is not shaped";

	p_err(d->ctx, "daemon: %s was not put in force (see above); not starting, %s %s",
	      d->o->config, d->o->ifname, left);
	snprintf(msg, sizeof(msg), "STATUS=not started: %s was not put in force; %s %s",
		 d->o->config, d->o->ifname, left);
	notify_send(msg);
}

/* The lock is held by another command: t (taken over) waits for it, in
 * place of any text that waited before. */
static void wait_for_lock(struct daemon *d, struct text *t)
{
	text_move(&d->waiting, t);
	d->retry_ms = daemon_now_ms() + DAEMON_LOCK_RETRY_MS;
	lock_busy(d, "the change is applied");
}

/* Applies t (taken over): in force, it is the good text; if not, it is
 * not tried again until the file changes (or SIGHUP). While the lock is
 * held elsewhere it waits (RELOADING=1 said once, READY=1 when done). */
static void apply(struct daemon *d, struct text *from)
{
	struct text own = { 0 }, *t = &own;
	bool waited = d->waiting.buf;
	char msg[64];
	int rc;

	text_move(&own, from);	/* from may be d->waiting */
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)htb_clock_ns() / 1000);
	if (!waited)
		notify_send(msg);
	rc = put_in_force(d, t, false);
	if (rc == PUT_BUSY) {
		wait_for_lock(d, t);
		return;
	}
	lock_had(d);
	text_free(&d->waiting);		/* an older text t replaces */
	metrics_server_note(&d->metrics, rc == 0);
	notify_ready(d, rc == 0 ? "" : " (the last change was not applied: the tree before it stays)");
	if (rc == 0) {
		text_move(&d->good, t);
		text_free(&d->rejected);
		d->said_stuck = false;
		share_attach(d);
		return;
	}
	p_warn(d->ctx, "daemon: %s not applied; the tree in force stays", d->o->config);
	text_move(&d->rejected, t);
}

/* The debounce ran out: read the file, and apply it if this read agrees
 * with the one a debounce ago and the text is new. */
static void file_changed(struct daemon *d)
{
	struct watch *w = &d->w;
	__u64 now = daemon_now_ms();
	struct text t;

	if (w->wd < 0 || w->lost)
		watch_check(d->ctx, w);
	if (w->writing && now - w->last_event < DAEMON_WRITER_MS) {
		w->pending = w->last_event + DAEMON_WRITER_MS;	/* wait for the close */
		return;
	}
	if (w->writing)
		p_warn(d->ctx, "daemon: %s is still open for writing, unchanged for %d s; "
		       "reading it as it is", d->o->config, DAEMON_WRITER_MS / 1000);
	w->writing = false;
	if (d->dev_gone || read_file(d, &t))
		return;		/* the re-attach or the next change reads it */
	if (text_same(&t, &d->good) || text_same(&t, &d->rejected) ||
	    text_same(&t, &d->waiting)) {
		text_free(&t);
		text_free(&d->candidate);
	} else if (!text_same(&t, &d->candidate)) {
		text_move(&d->candidate, &t);	/* read again a debounce later */
		w->pending = now + DAEMON_DEBOUNCE_MS;
	} else {
		text_free(&t);
		apply(d, &d->candidate);
	}
}

/* ---- the LibreQoS feed ---- */

/* A bad import: the log, /metrics and systemd's STATUS= line say so
 * (`systemctl status` shows it until the next change is applied). */
static void feed_failed(struct daemon *d, const char *why)
{
	char msg[PATH_MAX + 1200];

	p_warn(d->ctx, "daemon: import not applied: %s; the tree in force and %s stay",
	       why, d->o->config);
	metrics_server_note_import(&d->metrics, false, 0);
	snprintf(msg, sizeof(msg), "STATUS=shaping %s with %s (the last import failed: %s)",
		 d->o->ifname, d->o->config, why);
	notify_send(msg);
}

/* The imported text parses as FILE would; quietly: its warnings are the
 * reload's to print (a 10,000-circuit import has 223). Its errors are
 * printed (FILE:LINE) by a second parse when there are any. */
static bool import_valid(const struct daemon *d, const struct text *t)
{
	struct htb_config cfg;
	int rc = config_parse_string(t->buf, t->len, d->o->config, &cfg, NULL);

	config_free(&cfg);
	return rc == 0 || text_valid(d, t);
}

/* An imported text t checked as FILE would be (the importer's own
 * output, so a failure here is a bug of ours), then written to FILE
 * unless FILE holds it already. 0: FILE holds t. */
static int feed_put(struct daemon *d, const struct text *t)
{
	struct feed_text ft = { .buf = t->buf, .len = t->len };
	struct text now = { 0 };
	bool same;

	if (!text_same(t, &d->good) && !import_valid(d, t)) {
		feed_failed(d, "the imported config is not valid (above)");
		return -1;
	}
	same = config_read_file(d->o->config, &now.buf, &now.len, NULL) == 0 && text_same(t, &now);
	text_free(&now);
	if (!same && feed_write(d->ctx, &d->feed, &ft)) {
		feed_failed(d, "FILE cannot be written (above)");
		return -1;
	}
	metrics_server_note_import(&d->metrics, true, d->feed.circuits);
	return 0;
}

/* The feed's files changed (force: SIGHUP, the start): imported into
 * FILE. 0: FILE holds the import, or neither file changed. */
static int feed_to_file(struct daemon *d, bool force, struct text *t)
{
	struct feed_text ft;

	t->buf = NULL;
	switch (feed_import(d->ctx, &d->feed, force, &ft)) {
	case FEED_SAME:
		return 0;
	case FEED_FAILED:
		feed_failed(d, d->feed.err);
		return -1;
	case FEED_OK:
		break;
	}
	t->buf = ft.buf;
	t->len = ft.len;
	if (feed_put(d, t) == 0)
		return 0;
	text_free(t);
	return -1;
}

/* The files are quiet after a change: the import into FILE, and in force
 * at once (FILE's own watch then finds the text in force and does
 * nothing). */
static void feed_changed(struct daemon *d)
{
	struct text t;

	if (feed_to_file(d, false, &t) || !t.buf)
		return;
	if (!text_same(&t, &d->good) && !text_same(&t, &d->waiting))
		apply(d, &t);
	text_free(&t);
}

static void on_sighup(struct daemon *d)
{
	struct text t;

	if (d->feeding) {
		p_info(d->ctx, "daemon: SIGHUP: importing %s and %s again",
		       d->fo->file[FEED_CSV], d->fo->file[FEED_JSON]);
		feed_to_file(d, true, &t);
		text_free(&t);
	}
	p_info(d->ctx, "daemon: SIGHUP: re-reading %s", d->o->config);
	text_free(&d->candidate);
	d->file = FILE_OK;	/* say again what is wrong with it */
	if (read_file(d, &t) == 0)
		apply(d, &t);
}

/* ---- keeping IFACE shaped ---- */

/* The text to load on a device that lost its tree: FILE read into *file
 * if it is good (or is the good text), else the last good text, with *bad
 * saying what is wrong with FILE. NULL: there is nothing to load. */
static const struct text *reattach_text(struct daemon *d, struct text *file,
					const char **bad)
{
	*bad = NULL;
	if (d->w.writing && d->good.buf) {
		*bad = "being written";	/* the change is applied once it is closed */
	} else if (read_file(d, file) == 0) {
		if (text_same(file, &d->good) || text_valid(d, file))
			return file;
		text_move(&d->rejected, file);	/* its problems are said once */
		*bad = "invalid";
	} else {
		*bad = d->file == FILE_GONE ? "gone" : "unreadable";
	}
	if (d->good.buf)
		return &d->good;
	if (!d->said_stuck)
		p_warn(d->ctx, "daemon: %s on disk is %s and no tree was applied before; %s "
		       "stays unshaped until the file is good", d->o->config, *bad,
		       d->o->ifname);
	d->said_stuck = true;
	return NULL;
}

/* A re-attach failed: said in full the first time; after that only when
 * the error changes, and every DAEMON_FAIL_SUMMARY_MS with a count (7112e5f
 * printed the same lines every 2 s for as long as it lasted). */
static void reattach_failed(struct daemon *d)
{
	__u64 now = daemon_now_ms();

	if (!d->fails.n++) {
		d->fails.since = d->fails.said = now;
		snprintf(d->fails.err, sizeof(d->fails.err), "%s", d->tap.last);
		p_warn(d->ctx, "daemon: loading %s again failed (above); trying every %d s, "
		       "saying so again only if the error changes (or every %d min)",
		       d->o->ifname, DAEMON_CHECK_MS / 1000, DAEMON_FAIL_SUMMARY_MS / 60000);
	} else if (strcmp(d->tap.last, d->fails.err)) {
		snprintf(d->fails.err, sizeof(d->fails.err), "%s", d->tap.last);
		d->fails.said = now;
		p_warn(d->ctx, "daemon: loading %s again now fails with: %s", d->o->ifname,
		       d->fails.err);
	} else if (now - d->fails.said >= DAEMON_FAIL_SUMMARY_MS) {
		d->fails.said = now;
		p_warn(d->ctx, "daemon: %s still not loaded again: %u tries failed in %llu s "
		       "(%s)", d->o->ifname, d->fails.n, (now - d->fails.since) / 1000,
		       d->fails.err);
	}
}

static void reattach_done(struct daemon *d)
{
	if (d->fails.n)
		p_info(d->ctx, "daemon: %s loaded again after %u failed tries in %llu s",
		       d->o->ifname, d->fails.n, (daemon_now_ms() - d->fails.since) / 1000);
	d->fails.n = 0;
}

/* IFACE is there but not shaped by htbctl: load again. A failure is tried
 * again at the next check, its messages muted after the first. */
static void reattach(struct daemon *d)
{
	struct text file = { 0 };
	const struct text *t;
	const char *bad;
	int rc;

	t = reattach_text(d, &file, &bad);
	if (!t)
		return;
	d->tap.last[0] = '\0';
	d->tap.mute = d->fails.n > 0;
	rc = put_in_force(d, t, false);
	d->tap.mute = false;
	if (rc == PUT_BUSY) {
		d->next_check = daemon_now_ms() + DAEMON_LOCK_RETRY_MS;
		lock_busy(d, "the device is loaded again");
	} else if (rc) {
		metrics_server_note_reattach(&d->metrics, false);
		reattach_failed(d);
	} else {
		metrics_server_note_reattach(&d->metrics, true);
		lock_had(d);
		reattach_done(d);
		if (bad)
			p_warn(d->ctx, "daemon: %s on disk is %s; re-attached the last good "
			       "tree to %s", d->o->config, bad, d->o->ifname);
		if (t == &file)
			text_move(&d->good, &file);
		text_free(&d->candidate);
	}
	text_free(&file);
}

/* Every DAEMON_CHECK_MS: the directory, the device, the attachment. */
static void check(struct daemon *d)
{
	const char *ifname = d->o->ifname;
	int ifindex;

	watch_check(d->ctx, &d->w);
	if (d->feeding)
		feed_check(d->ctx, &d->feed);
	if (!if_nametoindex(ifname)) {
		if (!d->dev_gone)
			p_warn(d->ctx, "daemon: %s is gone; waiting for it to come back", ifname);
		d->dev_gone = true;
		return;
	}
	if (d->dev_gone)
		p_info(d->ctx, "daemon: %s is back; attaching again", ifname);
	d->dev_gone = false;
	if (state_of(ifname, &ifindex) != PINS_OK)
		reattach(d);
	share_attach(d);
}

/* ---- the loop ---- */

/* The signals come as reads of a signalfd, so that none interrupts a
 * load or reload half-way: each waits for the loop. */
static void read_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP)
			d->stop = (int)si.ssi_signo;
		else if (!d->stop)
			on_sighup(d);
	}
}

/* Waits for a file event, a signal, the debounce timer, the next check
 * or the sharing loop's next tick (to the ns: the loop runs every 10 ms). */
static void wait_event(struct daemon *d)
{
	struct pollfd pfd[2 + FEED_FILES] = {
		{ .fd = d->w.fd, .events = POLLIN },
		{ .fd = d->sfd, .events = POLLIN },
	};
	__u64 now = htb_clock_ns(), until = d->next_check * 1000000;
	__u64 feed_at = d->feeding ? feed_pending(&d->feed) : 0;
	nfds_t n = 2;
	struct timespec ts;

	for (int i = 0; d->feeding && i < FEED_FILES; i++)
		pfd[n++] = (struct pollfd){ .fd = d->feed.w[i].fd, .events = POLLIN };
	if (d->w.pending && d->w.pending * 1000000 < until)
		until = d->w.pending * 1000000;
	if (feed_at && feed_at * 1000000 < until)
		until = feed_at * 1000000;
	if (d->waiting.buf && d->retry_ms * 1000000 < until)
		until = d->retry_ms * 1000000;
	for (int i = 0; i < 2; i++)
		if (d->share[i].map_id && d->share[i].next_ns < until)
			until = d->share[i].next_ns;
	if (d->wd.every_ms && d->wd.next_ms * 1000000 < until)
		until = d->wd.next_ms * 1000000;
	until = until > now ? until - now : 0;
	ts.tv_sec = (time_t)(until / 1000000000);
	ts.tv_nsec = (long)(until % 1000000000);
	if (ppoll(pfd, n, &ts, NULL) <= 0)
		return;
	if (pfd[0].revents)
		watch_read(&d->w);
	for (nfds_t i = 2; i < n; i++)
		if (pfd[i].revents)
			watch_read(&d->feed.w[i - 2]);
	if (pfd[1].revents)
		read_signals(d);
}

static void serve(struct daemon *d)
{
	__u64 now;

	d->next_check = daemon_now_ms() + DAEMON_CHECK_MS;
	while (!d->stop) {
		wait_event(d);
		if (d->stop)
			break;
		now = daemon_now_ms();
		if (d->w.pending && now >= d->w.pending) {
			watch_timer_done(&d->w);
			file_changed(d);
		}
		if (d->feeding && feed_ready(d->ctx, &d->feed, now, DAEMON_WRITER_MS))
			feed_changed(d);
		if (d->waiting.buf && now >= d->retry_ms)
			apply(d, &d->waiting);
		if (now >= d->next_check) {
			d->next_check = now + DAEMON_CHECK_MS;
			check(d);
		}
		for (int i = 0; i < 2; i++)
			if (d->share[i].map_id && htb_clock_ns() >= d->share[i].next_ns)
				share_run_tick(d->ctx, &d->share[i]);
		notify_watchdog_tick(&d->wd);
	}
}

/* The first load or adoption. A file that cannot be put in force ends the
 * daemon with exit 1 and a STATUS= line saying so, never READY=1: systemd
 * (and whoever ran `systemctl start`) sees a failed start, and Restart=
 * tries again. A tree already in force stays: the device is left as it
 * was, as when the daemon stops. */
static int start(struct daemon *d)
{
	struct text t = { 0 };
	int ifindex;

	if (d->feeding) {	/* a failed import starts with FILE as it is */
		feed_to_file(d, true, &t);
		text_free(&t);
	}
	if (config_read_file(d->o->config, &t.buf, &t.len, stderr) == 0 &&
	    put_in_force(d, &t, true) == 0) {
		text_move(&d->good, &t);
		return 0;
	}
	text_free(&t);
	notify_failed(d, state_of(d->o->ifname, &ifindex) == PINS_OK);
	return -1;
}

/* ---- setting up ---- */

static int signals_open(struct daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, &d->old_mask) < 0)
		return -1;
	d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sfd < 0) {
		p_err(d->ctx, "daemon: signalfd: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &d->old_mask, NULL);
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* a log file gets the summaries on stdout in order with stderr's lines */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return 0;
}

static void daemon_close(struct daemon *d)
{
	if (d->sfd >= 0) {
		close(d->sfd);
		sigprocmask(SIG_SETMASK, &d->old_mask, NULL);
	}
	if (d->w.fd >= 0)
		watch_close(&d->w);
	if (d->feeding)
		feed_close(&d->feed);
	share_run_close(d->ctx, &d->share[0]);
	share_run_close(d->ctx, &d->share[1]);
	metrics_server_stop(&d->metrics);
	if (d->lock >= 0)
		close(d->lock);
	text_free(&d->good);
	text_free(&d->rejected);
	text_free(&d->candidate);
	text_free(&d->waiting);
}

/* The checks, the lock, the watch, the signals and the metrics server, in
 * that order: a refused daemon changes nothing. */
static int daemon_open(struct daemon *d)
{
	static const struct dev_cmd cmd = {
		.verb = "daemon", .need = NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS,
		.want = WANT_NOTHING,
	};
	struct session s;
	int rc = session_open(&s, d->ctx, &cmd, d->o->ifname);

	session_close(&s);	/* each load and reload takes the lock itself */
	if (rc)
		return -1;
	d->lock = daemon_lock(d->ctx, d->o->ifname);
	if (d->lock < 0 || watch_open(d->ctx, d->o->config, &d->w))
		return -1;
	if (d->fo->file[FEED_CSV]) {
		if (feed_open(d->ctx, &d->feed, d->fo, d->o->config))
			return -1;
		d->feeding = true;
	}
	/* the signals blocked first: the server's thread inherits the mask,
	 * so SIGHUP, SIGINT and SIGTERM reach the signalfd, never that thread
	 * (whose default action would end the process) */
	if (signals_open(d))
		return -1;
	d->metrics.opts = d->mo->opts;
	d->metrics.feed = d->feeding;
	if (d->mo->on && metrics_server_start(d->ctx, &d->metrics, d->o->ifname, &d->mo->addr))
		return -1;
	return 0;
}

int daemon_run(const struct ctx *ctx, struct load_opts *o,
	       const struct daemon_metrics_opts *mo, const struct feed_opts *fo)
{
	struct daemon d = { .ctx = ctx, .o = o, .mo = mo, .fo = fo, .lock = -1, .sfd = -1,
			    .w.fd = -1, .lctx = *ctx };
	int rc;

	d.lctx.tap = &d.tap;
	rc = daemon_open(&d);

	for (int i = 0; i < 2; i++) {
		d.share[i].gen = ~0u;
		d.share[i].period_ns = SHARE_TICK_NS;
	}
	if (rc)
		notify_send("STATUS=not started: refused before loading anything (the log says why)");
	else
		rc = start(&d);
	if (rc == 0) {
		share_attach(&d);
		notify_ready(&d, "");
		notify_watchdog_init(&d.wd);
		serve(&d);
		notify_send("STOPPING=1");
		if (d.waiting.buf)
			p_warn(ctx, "daemon: %s's change that waited for the lock was not applied",
			       o->config);
		p_info(ctx, "daemon: %s, leaving %s shaped", strsignal(d.stop), o->ifname);
	}
	daemon_close(&d);
	return rc ? EXIT_FAIL : EXIT_OK;
}
