// SPDX-License-Identifier: GPL-2.0
/*
 * top: a live view of a loaded device for people, like top(1). Every
 * interval a snapshot of the maps (observe/snapshot.c; one read a frame, the
 * rates measured since the previous frame's), the device's totals and the
 * busiest classes: rate, ceil, current rate and a bar of it against the
 * ceil, drops per second (limit and AQM), queue delay. On a terminal the
 * frame is redrawn in place (printed after the last where TERM cannot move
 * the cursor), its lines cut to the terminal's width, and q quits;
 * otherwise one frame is printed (its rates over one interval) and top
 * exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>

#include "loader/loader.h"
#include "loader/session.h"
#include "loader/maps_fill.h"
#include "observe/snapshot.h"
#include "observe/top.h"
#include "common/units.h"

#define BAR	20	/* characters of the bar of a class's ceil */

static const char *const sort_label[] = {
	[SORT_TREE] = "tree", [SORT_RATE] = "current rate", [SORT_DROPS] = "drops",
	[SORT_DELAY] = "queue delay", [SORT_BORROWED] = "borrowed packets",
};

/* What the output can do: a terminal (q quits, frames follow each other)
 * that understands escapes (frames redrawn in place) and its width. */
struct term {
	bool tty;
	bool escapes;
	unsigned cols;		/* 0: lines are not cut */
};

/* TERM unset, empty, dumb or unknown (Emacs' shell, a serial console
 * before login) cannot move the cursor: frames are printed one after
 * another there, without escapes, as git and less decide it too. */
static bool term_has_escapes(void)
{
	const char *t = getenv("TERM");

	return t && *t && strcmp(t, "dumb") && strcmp(t, "unknown");
}

static struct term term_now(bool tty)
{
	struct term t = { .tty = tty };
	struct winsize ws;

	if (!tty)
		return t;
	t.escapes = term_has_escapes();
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws))
		t.cols = ws.ws_col;
	return t;
}

/* Rows a terminal of this height has room for: all but the header. */
static __u32 rows_that_fit(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 6)
		return 20;
	return ws.ws_row - 5;
}

/* The frame, each line cut to the terminal's width: a line that wrapped
 * would push the header off the screen (a row is 103 characters, wider
 * than an 80-column terminal). */
static int write_frame(const char *buf, size_t len, unsigned cols)
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t line = nl ? (size_t)(nl - buf) : len, keep = line;

		if (cols && keep > cols)
			keep = cols;
		if (fwrite(buf, 1, keep, stdout) != keep || (nl && putchar('\n') == EOF))
			return -1;
		line += nl ? 1 : 0;
		buf += line;
		len -= line;
	}
	return fflush(stdout) ? -1 : 0;
}

static void bar(char *b, __u64 cur, __u64 ceil)
{
	__u64 fill = ceil ? (cur * BAR + ceil / 2) / ceil : 0;

	if (fill > BAR)
		fill = BAR;
	for (int i = 0; i < BAR; i++)
		b[i] = i < (int)fill ? '#' : '.';
	b[BAR] = '\0';
}

/* Per second of what grew since the frame before (s1: the memo's). */
static __u64 per_s(__u64 now, __u64 then, const struct snapshot *sn)
{
	__u64 dt = sn->t2 - sn->t1;

	return dt && now > then ? (__u64)((unsigned __int128)(now - then) * HTB_NSEC_PER_SEC / dt) : 0;
}

/* classes: the device's (shown: sn->nrows, after sort and n); a device of
 * a config of two directions says which it shapes. */
static void print_header(FILE *f, const char *ifname, const struct htbctl_meta *m,
			 const struct snapshot *sn, const struct top_opts *o,
			 __u32 classes, bool tty)
{
	const char *dir = meta_dir_name(m->dir);
	char r[UNIT_BUF], t[UNIT_BUF], d[64] = "";
	__u64 sent = 0;

	for (__u32 s = 0; s < sn->hw; s++)	/* top-level classes carry every byte */
		if ((sn->conf[s].flags & HTB_CONF_VALID) && sn->conf[s].depth == 1)
			sent += snapshot_rate(sn, s, false);
	sprint_time(o->interval_ns, t, sizeof(t));
	if (dir)
		snprintf(d, sizeof(d), " (%s%s%s)", dir, m->ingress_of[0] ? ", the ingress of " : "",
			 m->ingress_of);
	fprintf(f, "htbctl top: dev %s%s, %u classes, every %s, by %s%s\n", ifname, d, classes,
		t, sort_label[o->sort], tty ? " (q quits)" : "");
	sprint_rate(sent, r, sizeof(r));
	fprintf(f, " sending %s; unclassified %llu pkt, dropped %llu, spare bandwidth %s; %u shown\n\n",
		r, (unsigned long long)sn->ds.unclassified_packets,
		(unsigned long long)sn->ds.drops,
		sn->t0 < sn->rt.share_until_ns ? "by prio and quantum" : "first come, first served",
		sn->nrows);
	fprintf(f, "%-10s %-10s %10s %10s %10s  %-*s %5s %9s %9s\n", "CLASS", "PARENT", "RATE",
		"CEIL", "CURRENT", BAR, "OF CEIL", "", "DROPS/s", "DELAY");
}

static void print_row(FILE *f, const struct snapshot *sn, __u32 s)
{
	const struct htb_class_conf *c = &sn->conf[s];
	const struct htb_class_state *st = &sn->s2[s];
	char id[16], pid[16] = "root", r[UNIT_BUF], ce[UNIT_BUF], cur[UNIT_BUF], d[UNIT_BUF], b[BAR + 1];
	__u64 now = sn->t2, rate = snapshot_rate(sn, s, false);
	__u64 ceil = c->ceil.rate_Bps, pct = ceil ? rate * 100 / ceil : 0;

	if (c->depth > 1 && c->path[1] < sn->hw)
		sprint_classid(sn->conf[c->path[1]].classid, pid, sizeof(pid));
	sprint_rate(c->rate.rate_Bps, r, sizeof(r));
	sprint_rate(ceil, ce, sizeof(ce));
	sprint_rate(rate, cur, sizeof(cur));
	sprint_time(st->last_stamp > now ? st->last_stamp - now : 0, d, sizeof(d));
	bar(b, rate, ceil);
	fprintf(f, "%-10s %-10s %10s %10s %10s  %s %4llu%% %9llu %9s\n",
		sprint_classid(c->classid, id, sizeof(id)), pid, r, ce, cur, b,
		(unsigned long long)pct,
		(unsigned long long)per_s(st->drops + st->aqm_drops, sn->s1[s].drops, sn),
		c->flags & HTB_CONF_LEAF ? d : "-");
}

/* One device's part of a frame: its header and rows, into f. */
static int section(const struct ctx *ctx, FILE *f, const char *ifname,
		   const struct top_opts *o, struct snapshot_memo *memo, bool tty,
		   __u32 rows)
{
	static const struct dev_cmd cmd = {
		.verb = "top", .need = NEED_BPF | NEED_BPFFS, .want = WANT_LOADED,
	};
	struct show_filter fl = { .sort = o->sort, .n = o->n ? o->n : rows };
	struct snapshot sn = { 0 };
	struct session s;
	struct maps mp;
	__u32 classes;
	int rc = -1;

	if (session_open(&s, ctx, &cmd, ifname) || maps_open_pinned(ctx, ifname, &mp)) {
		session_close(&s);
		return -1;
	}
	if (snapshot_take(ctx, &mp, s.m.hiwater, memo->t ? 0 : o->interval_ns, &sn) == 0) {
		/* the rates since the last frame; drops per second from s1 */
		if (!memo->t)
			snapshot_memo_save(memo, &(struct snapshot){ .hw = sn.hw, .conf = sn.conf,
								  .s2 = sn.s1, .t2 = sn.t1 });
		snapshot_memo_apply(memo, &sn);
		snapshot_memo_save(memo, &sn);
		snapshot_sort(&sn);
		classes = sn.nrows;
		show_filter_rows(&sn, &fl);
		print_header(f, ifname, &s.m, &sn, o, classes, tty);
		for (__u32 i = 0; i < sn.nrows; i++)
			print_row(f, &sn, sn.rows[i].slot);
		rc = 0;
	}
	maps_close(&mp);
	snapshot_free(&sn);
	session_close(&s);
	return rc;
}

/* One frame into a buffer, written at once (no flicker): each device of
 * the name (both directions of a config: download, then upload), sharing
 * the terminal's rows. */
static int frame(const struct ctx *ctx, const struct dev_group *g, const struct top_opts *o,
		 struct snapshot_memo *memo, bool tty)
{
	struct term t = term_now(tty);
	bool first = !memo[0].t;
	__u32 rows = tty ? rows_that_fit() : 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = 0;

	if (!f)
		return -1;
	if (t.escapes)
		fputs("\033[H\033[2J", f);
	else if (t.tty && !first)
		fputc('\n', f);	/* frames one after another */
	if (g->n > 1 && rows)
		rows = rows > 8u ? rows / 2 - 3 : 1;	/* a header each */
	for (int i = 0; i < g->n && !rc; i++) {
		if (i)
			fputc('\n', f);
		rc = section(ctx, f, g->name[i], o, &memo[i], tty, rows);
	}
	if (fclose(f))
		rc = -1;
	if (!rc) {
		rc = write_frame(buf, len, t.cols);
		if (rc)
			p_err(ctx, "writing the output failed");
	}
	free(buf);
	return rc;
}

/* Waits up to ns for a key or a signal (sfd, -1 for none); true when it
 * is q, Ctrl-C, the input's end or a signal. */
static bool quit_key(__u64 ns, int sfd)
{
	struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
			       { .fd = sfd, .events = POLLIN } };
	char c;

	if (poll(p, sfd >= 0 ? 2 : 1, (int)(ns / 1000000)) <= 0)
		return false;
	if (p[1].revents)
		return true;
	if (read(STDIN_FILENO, &c, 1) != 1)
		return true;
	return c == 'q' || c == 'Q' || c == 3;
}

/*
 * The signals that end top arrive through a signalfd while the terminal is
 * raw, so the terminal is restored whatever ends it (7112e5f left it raw on
 * SIGTERM or SIGHUP). -1 if it cannot be had: the signals then keep their
 * default action.
 */
static int quit_signals(sigset_t *old)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &set, old))
		return -1;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		sigprocmask(SIG_SETMASK, old, NULL);
	return fd;
}

int top_dev(const struct ctx *ctx, const char *ifname, const struct top_opts *o)
{
	bool tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	struct snapshot_memo memo[2] = { 0 };
	struct termios old, raw;
	struct dev_group g;
	sigset_t mask;
	int rc, sfd;

	dirs_group_or_name(ifname, &g);
	if (!tty) {
		rc = frame(ctx, &g, o, memo, false);
		snapshot_memo_free(&memo[0]);
		snapshot_memo_free(&memo[1]);
		return rc ? EXIT_FAIL : EXIT_OK;
	}
	sfd = quit_signals(&mask);
	tcgetattr(STDIN_FILENO, &old);
	raw = old;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);	/* Ctrl-C comes as a key: the terminal is restored */
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	if (term_has_escapes())
		fputs("\033[?25l", stdout);	/* no cursor while it draws */
	while ((rc = frame(ctx, &g, o, memo, true)) == 0 && !quit_key(o->interval_ns, sfd))
		;
	if (term_has_escapes())
		fputs("\033[?25h", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, &old);
	if (sfd >= 0) {
		close(sfd);
		sigprocmask(SIG_SETMASK, &mask, NULL);
	}
	snapshot_memo_free(&memo[0]);
	snapshot_memo_free(&memo[1]);
	return rc ? EXIT_FAIL : EXIT_OK;
}
