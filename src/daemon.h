/* SPDX-License-Identifier: GPL-2.0 */
/* What daemon.c shares with daemon_watch.c (the config file's directory,
 * watched) and daemon_lock.c (one daemon per device). */
#ifndef HTBCTL_DAEMON_H
#define HTBCTL_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>
#include "common.h"

#define DAEMON_DEBOUNCE_MS	200	/* quiet this long before the file is read */
/* ... but no longer than this after the first event: a directory that is
 * never quiet (a log written next to the file) must not hold updates back. */
#define DAEMON_DEBOUNCE_MAX_MS	2000
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

static inline __u64 daemon_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- daemon_lock.c ---- */

#define DAEMON_RUN_DIR	"/run/htbctl"

/* Takes the lock of IFACE's daemon, a flock on DAEMON_RUN_DIR/daemon.IFACE
 * (the directory created root's, mode 0700, and refused when it is not
 * root's alone), and writes this process's pid in it. Returns the fd to
 * keep open while the daemon runs, or -1 with one line printed (naming
 * the daemon that holds it). */
int daemon_lock(const struct ctx *ctx, const char *ifname);

/* The pid of the daemon that holds IFACE's lock: 0 when none does, -1 when
 * one does and has not written its pid yet. */
int daemon_holder(const char *ifname);

/* ---- daemon_watch.c ---- */

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

/* ---- daemon_share.c ---- */

#include "maps.h"
#include "share.h"

/* The sharing loop on IFACE's pinned maps (see there). */
struct share_run {
	struct maps mp;
	bool open;
	__u32 map_id;			/* the runtime map held; 0: none */
	__u32 failed_id;		/* one that could not be held (not tried again) */
	struct htb_runtime *rt;		/* mmap()ed */
	size_t rt_len;
	struct htb_class_share *sh;	/* mmap()ed, cap entries */
	size_t sh_len;
	struct htb_class_conf *conf;	/* the generation planned */
	struct htb_class_state *st;	/* read each tick */
	__u32 cap, gen;			/* gen ~0: none planned */
	struct share_loop loop;
	__u64 next_ns;			/* the next tick (htb_clock_ns) */
	__u64 period_ns;		/* share_period of the last tick's cost */
	__u64 ticks, busy_ns;		/* what the loop has cost */
	__u64 last_ns, max_gap_ns;	/* the last tick; the longest time between two */
};

void share_run_attach(const struct ctx *ctx, struct share_run *r, const char *ifname);
void share_run_tick(const struct ctx *ctx, struct share_run *r);
/* Ends the lease (borrowing first come, first served) and lets go. */
void share_run_close(const struct ctx *ctx, struct share_run *r);

/* ---- daemon_notify.c ---- */

/* msg to $NOTIFY_SOCKET: 0 sent, 1 no socket named, -errno. */
int notify_send(const char *msg);

struct notify_watchdog {
	__u64 every_ms;			/* 0: no watchdog asked for */
	__u64 next_ms;			/* daemon_now_ms of the next WATCHDOG=1 */
};
void notify_watchdog_init(struct notify_watchdog *w);
/* WATCHDOG=1 when it is due. */
void notify_watchdog_tick(struct notify_watchdog *w);

/* ---- daemon_metrics.c ---- */

#include <pthread.h>
#include <netinet/in.h>
#include "metrics.h"
#include "snapshot.h"

/* --metrics ADDR:PORT, parsed. */
struct metrics_addr {
	struct sockaddr_in v4;		/* sin_family 0: v6 is the one */
	struct sockaddr_in6 v6;
	__u16 port;
	char text[80];			/* as given, for messages */
};

/* The daemon's metrics options (cmd_daemon.c fills them). */
struct daemon_metrics_opts {
	bool on;
	struct metrics_addr addr;
	struct metrics_opts opts;
};

/* ---- daemon_conns.c: the server's connections, bounded ---- */

#include <microhttpd.h>

/* Measured here (loopback, 2 CPUs): a scrape's request arrives within a
 * millisecond of the connection, so 5 s to send one is generous for any
 * scraper and short for a connection held idle. Prometheus gives up on a
 * scrape after its scrape_timeout (10 s by default, at most its interval,
 * 1 min by default): nobody reads a response after a minute; 100,000
 * classes with `all` (130 MB) take 0.7 s on loopback. 32 connections: a
 * few scrapers and a curl or two, with room. */
#define METRICS_HEADER_MS	5000	/* accept (or the last response) to a request */
#define METRICS_SEND_MS		60000	/* the request to the end of its response */
#define METRICS_MAX_CONNS	32u
#define METRICS_SWEEP_MS	250	/* how often the deadlines are looked at */

struct metrics_conn;
struct metrics_conns {
	pthread_mutex_t lock;		/* guards the list and the counts */
	pthread_cond_t wake;
	pthread_t thread;		/* the sweeper */
	bool init, running, stop;
	struct metrics_conn *head;
	unsigned int live;		/* held and not shut down */
};

/* The sweeper's thread; 0, or -1 with errno. */
int conns_start(struct metrics_conns *cs);
/* MHD's callbacks (cls: the metrics_conns), and the request's start. */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code);
void conns_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe);
void conns_request(struct metrics_conns *cs, struct MHD_Connection *c);
/* Before MHD_stop_daemon (which says CLOSED for each), then conns_free. */
void conns_stop_sweeper(struct metrics_conns *cs);
void conns_free(struct metrics_conns *cs);

struct metrics_server {
	const struct ctx *ctx;
	const char *ifname;
	struct metrics_opts opts;
	struct MHD_Daemon *mhd;		/* NULL: not serving */
	pthread_mutex_t lock;		/* guards dm */
	bool lock_init;
	struct metrics_daemon dm;
	struct snapshot_memo memo;	/* the previous scrape */
	char *spare;			/* the last exposition's buffer, for the next */
	size_t spare_cap;
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
void metrics_server_stop(struct metrics_server *m);

struct load_opts;
int daemon_run(const struct ctx *ctx, struct load_opts *o,
	       const struct daemon_metrics_opts *mo);

#endif
