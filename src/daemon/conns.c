// SPDX-License-Identifier: GPL-2.0
/*
 * The /metrics server's connections (daemon/metrics_server.c), bounded in number
 * and in time. 7112e5f let MHD hold 16 connections with a 10 s timeout of
 * inactivity: 16 idle ones (or ones sending a byte now and then) locked
 * every scrape out for as long as they stayed. Now:
 * - a connection has METRICS_HEADER_MS from its accept (or from the end of
 *   its previous response, kept alive) until its request is in, and
 *   METRICS_SEND_MS from the request until the response is sent; past its
 *   deadline it is shut down, whatever it sends;
 * - a response whose reader stops taking it (METRICS_STALL_MS) is shut
 *   down too;
 * - at most METRICS_MAX_CONNS are held: one more shuts down the oldest one
 *   still waiting for its request, else the response read least lately,
 *   or itself if every one is being read.
 * A shutdown() from here wakes MHD's thread, which closes the connection.
 * The fd stays valid while this file holds the lock: MHD says CLOSED (and
 * the entry goes, under the lock) before it closes the socket (libmicrohttpd 0.9.75,
 * src/microhttpd/daemon.c MHD_cleanup_connections and internal_add_connection).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <linux/tcp.h>	/* tcpi_bytes_acked, which glibc's tcp_info lacks */
#include <sys/socket.h>

#include "daemon/clock.h"
#include "daemon/conns.h"

struct metrics_conn {
	struct metrics_conn *prev, *next;
	int fd;
	bool serving;			/* its request is in, the response going out */
	bool shut;			/* shut down here; MHD closes it */
	bool listed;			/* in the list (else MHD's timeout ends it) */
	__u64 deadline;			/* daemon_now_ms */
	__u64 acked;			/* bytes its reader had taken at progress_ms */
	__u64 progress_ms;		/* when it last took METRICS_STALL_BYTES */
};

/* What the reader has taken of the connection's bytes (TCP's acked). */
static __u64 conn_acked(const struct metrics_conn *e)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(e->fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return 0;
	return ti.tcpi_bytes_acked;
}

/* A response whose reader took too little lately: stalled. */
static bool conn_stalled(struct metrics_conn *e, __u64 now)
{
	__u64 acked;

	if (!e->serving)
		return false;
	acked = conn_acked(e);
	if (acked >= e->acked + METRICS_STALL_BYTES) {
		e->acked = acked;
		e->progress_ms = now;
	}
	return now - e->progress_ms > METRICS_STALL_MS;
}

static void conn_shut(struct metrics_conns *cs, struct metrics_conn *e, bool limit)
{
	shutdown(e->fd, SHUT_RDWR);
	e->shut = true;
	cs->live--;
	if (limit)
		cs->shut_limit++;
	else
		cs->shut_deadline++;
}

/* One connection too many: the oldest one still waiting for its request
 * goes (a scraper sends its request at once), else the response whose
 * reader has taken nothing for longest, if for METRICS_SWEEP_MS (a scrape
 * being read takes a buffer's worth in far less), else the new one. */
static void evict(struct metrics_conns *cs, struct metrics_conn *new)
{
	struct metrics_conn *old = NULL, *slow = NULL;
	__u64 now = daemon_now_ms();

	for (struct metrics_conn *e = cs->head; e; e = e->next) {
		if (e->shut || e == new)
			continue;
		if (!e->serving) {
			if (!old || e->deadline < old->deadline)
				old = e;
			continue;
		}
		conn_stalled(e, now);	/* its progress as of now */
		if (now - e->progress_ms >= METRICS_SWEEP_MS &&
		    (!slow || e->progress_ms < slow->progress_ms))
			slow = e;
	}
	conn_shut(cs, old ? old : slow ? slow : new, true);
}

static void conn_started(struct metrics_conns *cs, struct MHD_Connection *c, void **ctx)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct metrics_conn *e = calloc(1, sizeof(*e));

	*ctx = e;
	if (!e || !ci)
		return;		/* MHD's own timeout still ends it */
	e->fd = ci->connect_fd;
	e->listed = true;
	e->deadline = daemon_now_ms() + METRICS_HEADER_MS;
	pthread_mutex_lock(&cs->lock);
	e->next = cs->head;
	if (cs->head)
		cs->head->prev = e;
	cs->head = e;
	if (++cs->live > METRICS_MAX_CONNS)
		evict(cs, e);
	pthread_mutex_unlock(&cs->lock);
}

static void conn_closed(struct metrics_conns *cs, struct metrics_conn *e)
{
	if (!e || !e->listed)
		goto out;
	pthread_mutex_lock(&cs->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		cs->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	if (!e->shut)
		cs->live--;
	pthread_mutex_unlock(&cs->lock);
out:
	free(e);
}

void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code)
{
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		conn_started(cls, c, socket_context);
	else
		conn_closed(cls, *socket_context);
}

/* The connection's entry, or NULL. */
static struct metrics_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* serving: the request is in (METRICS_SEND_MS to send the response), or
 * the response is done (METRICS_HEADER_MS for the next request). */
static void conn_phase(struct metrics_conns *cs, struct MHD_Connection *c, bool serving)
{
	struct metrics_conn *e = conn_of(c);

	if (!e || !e->listed)
		return;
	pthread_mutex_lock(&cs->lock);
	e->serving = serving;
	e->deadline = daemon_now_ms() + (serving ? METRICS_SEND_MS : METRICS_HEADER_MS);
	e->progress_ms = daemon_now_ms();
	e->acked = conn_acked(e);
	pthread_mutex_unlock(&cs->lock);
}

void conns_request(struct metrics_conns *cs, struct MHD_Connection *c)
{
	conn_phase(cs, c, true);
}

void conns_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe)
{
	(void)con_cls;
	(void)toe;
	conn_phase(cls, c, false);
}

/* Every METRICS_SWEEP_MS: the connections past their deadline go. */
static void *sweeper(void *arg)
{
	struct metrics_conns *cs = arg;
	struct timespec ts;

	pthread_mutex_lock(&cs->lock);
	while (!cs->stop) {
		__u64 now = daemon_now_ms();

		for (struct metrics_conn *e = cs->head; e; e = e->next)
			if (!e->shut && (now >= e->deadline || conn_stalled(e, now)))
				conn_shut(cs, e, false);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += METRICS_SWEEP_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&cs->wake, &cs->lock, &ts);
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

int conns_start(struct metrics_conns *cs)
{
	pthread_condattr_t ca;

	memset(cs, 0, sizeof(*cs));
	pthread_mutex_init(&cs->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cs->wake, &ca);
	pthread_condattr_destroy(&ca);
	cs->init = true;
	errno = pthread_create(&cs->thread, NULL, sweeper, cs);
	cs->running = errno == 0;
	return cs->running ? 0 : -1;
}

void conns_stop_sweeper(struct metrics_conns *cs)
{
	if (!cs->running)
		return;
	pthread_mutex_lock(&cs->lock);
	cs->stop = true;
	pthread_cond_signal(&cs->wake);
	pthread_mutex_unlock(&cs->lock);
	pthread_join(cs->thread, NULL);
	cs->running = false;
}

void conns_free(struct metrics_conns *cs)
{
	if (!cs->init)
		return;
	pthread_cond_destroy(&cs->wake);
	pthread_mutex_destroy(&cs->lock);
	cs->init = false;
}
