// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's LibreQoS feed (daemon/feed.h): ShapedDevices.csv and
 * network.json watched, imported as `htbctl import libreqos CSV JSON
 * --keep-ids FILE` does (import/libreqos.c, lqos_read_files), the config
 * kept in memory until the daemon has checked it; FILE is written only
 * then (feed_write), so a bad pair leaves FILE and the tree in force.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/feed.h"

int feed_open(const struct ctx *ctx, struct feed *f, const struct feed_opts *o,
	      const char *config)
{
	memset(f, 0, sizeof(*f));
	f->o = o;
	f->config = config;
	for (int i = 0; i < FEED_FILES; i++)
		f->w[i].fd = -1;
	for (int i = 0; i < FEED_FILES; i++) {
		if (watch_open(ctx, o->file[i], &f->w[i])) {
			feed_close(f);
			return -1;
		}
		f->w[i].quiet_ms = FEED_QUIET_MS;
		f->w[i].max_ms = FEED_QUIET_MAX_MS;
	}
	return 0;
}

void feed_close(struct feed *f)
{
	for (int i = 0; i < FEED_FILES; i++)
		if (f->w[i].fd >= 0)
			watch_close(&f->w[i]);
}

__u64 feed_pending(const struct feed *f)
{
	__u64 p = 0;

	for (int i = 0; i < FEED_FILES; i++)
		if (f->w[i].pending && (!p || f->w[i].pending < p))
			p = f->w[i].pending;
	return p;
}

void feed_check(const struct ctx *ctx, struct feed *f)
{
	for (int i = 0; i < FEED_FILES; i++)
		watch_check(ctx, &f->w[i]);
}

/* A writer that keeps one of the files open: waited for, up to writer_ms
 * after its last write (the daemon's rule for FILE, daemon.c). */
static bool writer_waited_for(const struct ctx *ctx, struct feed *f, __u64 now,
			      __u64 writer_ms)
{
	for (int i = 0; i < FEED_FILES; i++) {
		struct watch *w = &f->w[i];

		if (!w->writing)
			continue;
		if (now - w->last_event < writer_ms) {
			w->pending = w->last_event + writer_ms;
			return true;
		}
		p_warn(ctx, "daemon: %s is still open for writing, unchanged for %llu s; "
		       "importing it as it is", f->o->file[i], writer_ms / 1000);
		w->writing = false;
	}
	return false;
}

bool feed_ready(const struct ctx *ctx, struct feed *f, __u64 now, __u64 writer_ms)
{
	for (int i = 0; i < FEED_FILES; i++) {
		struct watch *w = &f->w[i];

		if (!w->pending || now < w->pending)
			continue;
		watch_timer_done(w);
		if (w->wd < 0 || w->lost)
			watch_check(ctx, w);
		f->due = true;
	}
	/* one import for a CRM's write of both files: the other's quiet too */
	if (!f->due || feed_pending(f) || writer_waited_for(ctx, f, now, writer_ms))
		return false;
	f->due = false;
	return true;
}

static void seen_of(const char *path, struct feed_seen *s)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (stat(path, &st))
		return;
	s->there = true;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->size = st.st_size;
	s->mtime = st.st_mtim;
	s->ctime = st.st_ctim;
}

/* Both files as the last import found them (stat: a rewrite changes the
 * inode or the times). */
static bool unchanged(struct feed *f)
{
	bool same = true;

	for (int i = 0; i < FEED_FILES; i++) {
		struct feed_seen s;

		seen_of(f->o->file[i], &s);
		same = same && !memcmp(&s, &f->seen[i], sizeof(s));
		f->seen[i] = s;
	}
	return same;
}

/* q's config in memory. */
static int write_text(struct lqos *q, struct feed_text *t)
{
	FILE *m = open_memstream(&t->buf, &t->len);
	int rc;

	if (!m)
		return -1;
	rc = lqos_write(q, m);
	if (fclose(m) || rc) {	/* fclose first: it sets t->buf */
		free(t->buf);
		t->buf = NULL;
		return -1;
	}
	return 0;
}

enum feed_result feed_import(const struct ctx *ctx, struct feed *f, bool force,
			     struct feed_text *t)
{
	struct msg_tap tap = { .mute = true };
	struct ctx qctx = *ctx;
	struct lqos q = f->o->tmpl;
	struct stat st;
	/* the first import has no FILE to keep ids from */
	const char *prev = stat(f->config, &st) == 0 ? f->config : NULL;
	int rc;

	t->buf = NULL;
	t->len = 0;
	if (unchanged(f) && !force)
		return FEED_SAME;
	qctx.tap = &tap;	/* the importer's error is the caller's line */
	rc = lqos_read_files(&qctx, &q, f->o->file[FEED_CSV], f->o->file[FEED_JSON], prev);
	if (!rc && write_text(&q, t))
		snprintf(tap.last, sizeof(tap.last), "the config: %s", strerror(errno ? errno : ENOMEM));
	if (rc || !t->buf) {
		snprintf(f->err, sizeof(f->err), "%s", tap.last);
		lqos_free(&q);
		return FEED_FAILED;
	}
	for (unsigned i = 0; i < q.nwarn; i++)
		p_warn(ctx, "daemon: import: %s", q.warns[i]);
	f->circuits = q.ncirc;
	p_info(ctx, "daemon: imported %s and %s: %u circuits, %u classes, %u ids kept from %s",
	       f->o->file[FEED_CSV], f->o->file[FEED_JSON], q.ncirc, q.nclasses, q.kept,
	       prev ? prev : "(no FILE yet)");
	lqos_free(&q);
	return FEED_OK;
}

static int fill_text(const struct ctx *ctx, FILE *out, void *arg)
{
	const struct feed_text *t = arg;

	(void)ctx;
	return fwrite(t->buf, 1, t->len, out) == t->len ? 0 : -1;
}

int feed_write(const struct ctx *ctx, const struct feed *f, const struct feed_text *t)
{
	return write_file_atomic(ctx, f->config, fill_text, (void *)t);
}
