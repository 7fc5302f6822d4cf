/* SPDX-License-Identifier: GPL-2.0 */
/* The /metrics server's connections, bounded (conns.c). */
#ifndef HTBCTL_DAEMON_CONNS_H
#define HTBCTL_DAEMON_CONNS_H

#include <pthread.h>
#include <stdbool.h>
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
/* A response whose reader takes less than METRICS_STALL_BYTES (acked, as
 * TCP_INFO counts) in METRICS_STALL_MS is shut down: 32 readers that sent
 * their request and read nothing held every slot for the 60 s of
 * METRICS_SEND_MS (52b6d7f: every scrape refused). 32 KB/s is a hundredth
 * of the slowest link a scrape of 130 MB in a minute needs. */
#define METRICS_STALL_MS	2000
#define METRICS_STALL_BYTES	(64u << 10)

struct metrics_conn;
struct metrics_conns {
	pthread_mutex_t lock;		/* guards the list and the counts */
	pthread_cond_t wake;
	pthread_t thread;		/* the sweeper */
	bool init, running, stop;
	struct metrics_conn *head;
	unsigned int live;		/* held and not shut down */
	/* connections shut down here, for /metrics: past their deadline,
	 * and the oldest waiting one when one more came than the limit */
	unsigned long long shut_deadline, shut_limit;
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

#endif
