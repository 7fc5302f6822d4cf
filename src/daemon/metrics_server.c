// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's /metrics (--metrics ADDR:PORT): libmicrohttpd in its own
 * thread (one, so scrapes are served one after another), each GET
 * /metrics a fresh snapshot of the pinned maps rendered by observe/metrics.c.
 * The thread reads only the maps and what the daemon last said of its
 * reloads (under a mutex); the daemon's loop never waits for it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <microhttpd.h>

#include "daemon/metrics_server.h"

#define METRICS_PATH		"/metrics"
#define METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

int metrics_addr_parse(const struct ctx *ctx, const char *spec, struct metrics_addr *a)
{
	const char *colon = strrchr(spec, ':'), *host = spec;
	char hbuf[INET6_ADDRSTRLEN + 2] = "127.0.0.1", *end;
	size_t hlen = colon ? (size_t)(colon - spec) : 0;
	unsigned long port;

	memset(a, 0, sizeof(*a));
	errno = 0;
	port = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || !colon[1] || *end || errno || port < 1 || port > 65535 ||
	    hlen >= sizeof(hbuf))
		goto bad;
	if (hlen) {
		if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') {
			host++;
			hlen -= 2;
		}
		memcpy(hbuf, host, hlen);
		hbuf[hlen] = '\0';
	}
	if (inet_pton(AF_INET, hbuf, &a->v4.sin_addr) == 1) {
		a->v4.sin_family = AF_INET;
		a->v4.sin_port = htons((__u16)port);
	} else if (inet_pton(AF_INET6, hbuf, &a->v6.sin6_addr) == 1) {
		a->v6.sin6_family = AF_INET6;
		a->v6.sin6_port = htons((__u16)port);
	} else {
		goto bad;
	}
	a->port = (__u16)port;
	snprintf(a->text, sizeof(a->text), "%s", spec);
	return 0;
bad:
	p_err(ctx, "--metrics '%s': expected ADDR:PORT (an IPv4 address, [IPv6] or "
	      "nothing for 127.0.0.1; port 1-65535), e.g. 127.0.0.1:9101", spec);
	return -1;
}

/* Queues r (NULL: out of memory) with its content type. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned int code,
			     struct MHD_Response *r, const char *type)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body,
								  MHD_RESPMEM_MUST_FREE);

	if (!r)
		free(body);
	return queue(c, code, r, type);
}

static enum MHD_Result text_reply(struct MHD_Connection *c, unsigned int code, const char *msg)
{
	char *b = strdup(msg);

	return b ? reply(c, code, b, strlen(b), "text/plain; charset=utf-8") : MHD_NO;
}

/*
 * The exposition's buffer is kept for the next scrape: at 100,000 classes
 * it is 130 MB, and a fresh one each time cost the kernel a page fault and
 * a cleared page per 4 KB (a seventh of a scrape's CPU, measured with
 * perf). MHD hands it back when the response is sent. A request may come
 * while an earlier response is still being sent (a slow reader): it then
 * finds no spare and starts an empty buffer of its own. The spare moves
 * under the server's lock: MHD_stop_daemon frees pending responses from
 * the daemon's thread, not MHD's.
 */
struct body {
	struct metrics_server *m_owner;
	char *buf;
	size_t len, cap;
	unsigned refs;			/* responses sending it (m->lock) */
};

static ssize_t body_write(void *cookie, const char *data, size_t n)
{
	struct body *b = cookie;

	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		char *nb;

		while (cap < b->len + n)
			cap *= 2;
		nb = realloc(b->buf, cap);
		if (!nb)
			return -1;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	return (ssize_t)n;
}

/* b takes the spare buffer, if there is one. */
static void body_take_spare(struct metrics_server *m, struct body *b)
{
	pthread_mutex_lock(&m->lock);
	b->buf = m->spare;
	b->cap = m->spare ? m->spare_cap : 0;
	m->spare = NULL;
	m->spare_cap = 0;
	pthread_mutex_unlock(&m->lock);
}

/* b's buffer becomes the spare, or is freed if there is one already. */
static void body_done(struct metrics_server *m, struct body *b)
{
	char *drop = b->buf;

	pthread_mutex_lock(&m->lock);
	if (!m->spare) {
		m->spare = b->buf;
		m->spare_cap = b->cap;
		drop = NULL;
	}
	pthread_mutex_unlock(&m->lock);
	free(drop);
}

/* MHD's free callback for a sent exposition: the last response sending
 * it gives the buffer back as the spare. */
static void body_sent(void *cls)
{
	struct body *b = cls;
	struct metrics_server *m = b->m_owner;
	bool last;

	pthread_mutex_lock(&m->lock);
	last = !--b->refs;
	if (last) {
		m->bodies--;
		if (m->latest == b)
			m->latest = NULL;
	}
	pthread_mutex_unlock(&m->lock);
	if (!last)
		return;
	body_done(m, b);
	free(b);
}

/* While METRICS_MAX_BODIES expositions are being sent (readers slower than
 * the scrapes), a request shares the newest one instead of another
 * reading: memory stays a few expositions whatever the readers do (32
 * held requests of 6.6 MB each grew the daemon from 85 to 537 MB at
 * 52b6d7f). NULL: read the maps afresh. */
static struct body *body_shared(struct metrics_server *m)
{
	struct body *b = NULL;

	pthread_mutex_lock(&m->lock);
	if (m->bodies >= METRICS_MAX_BODIES && m->latest) {
		b = m->latest;
		b->refs++;
	}
	pthread_mutex_unlock(&m->lock);
	return b;
}

/* b, complete, is sent from now on (and is the newest). */
static void body_publish(struct metrics_server *m, struct body *b)
{
	pthread_mutex_lock(&m->lock);
	b->refs = 1;
	m->bodies++;
	m->latest = b;
	pthread_mutex_unlock(&m->lock);
}

static enum MHD_Result send_body(struct MHD_Connection *c, struct body *b)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->buf, body_sent, b);

	if (!r)
		body_sent(b);
	return queue(c, MHD_HTTP_OK, r, METRICS_CONTENT_TYPE);
}

/* The feed's imports: what an alert on a CRM's bad file wants (the last
 * result, its failures, the last success's time), for the one
 * device the daemon shapes. */
static void put_import(FILE *f, const char *ifname, const struct metrics_import *im)
{
	char *dev = metrics_label_value(ifname);

	if (!dev)
		return;
	fprintf(f, "# HELP htbctl_import_ok Whether the daemon's last import of LibreQoS's "
		"files succeeded (1), or failed (0: the tree in force and the config stayed; "
		"the log says why, FILE:LINE).\n# TYPE htbctl_import_ok gauge\n"
		"htbctl_import_ok{device=\"%s\"} %d\n", dev, !im->tried || im->last_ok);
	fprintf(f, "# HELP htbctl_import_failures_total Imports of LibreQoS's files that "
		"failed.\n# TYPE htbctl_import_failures_total counter\n"
		"htbctl_import_failures_total{device=\"%s\"} %llu\n",
		dev, (unsigned long long)im->failed);
	fprintf(f, "# HELP htbctl_import_last_success_timestamp_seconds When an import of "
		"LibreQoS's files last succeeded (0: not since the daemon started).\n"
		"# TYPE htbctl_import_last_success_timestamp_seconds gauge\n"
		"htbctl_import_last_success_timestamp_seconds{device=\"%s\"} %.3f\n",
		dev, im->last_success);
	fprintf(f, "# HELP htbctl_import_circuits Circuits of the last import that succeeded.\n"
		"# TYPE htbctl_import_circuits gauge\nhtbctl_import_circuits{device=\"%s\"} %u\n",
		dev, im->circuits);
	free(dev);
}

/* The exposition, or 500 with why (the daemon's stderr has the line too). */
static enum MHD_Result serve_metrics(struct metrics_server *m, struct MHD_Connection *c)
{
	static const cookie_io_functions_t io = { .write = body_write };
	struct metrics_opts o = m->opts;
	struct metrics_daemon dm;
	struct metrics_import im;
	struct body *b = body_shared(m);
	FILE *f = NULL;
	int rc;

	if (b)
		return send_body(c, b);
	b = calloc(1, sizeof(*b));
	pthread_mutex_lock(&m->lock);
	dm = m->dm;
	im = m->imp;
	pthread_mutex_unlock(&m->lock);
	pthread_mutex_lock(&m->conns.lock);
	dm.conns_deadline = m->conns.shut_deadline;
	dm.conns_limit = m->conns.shut_limit;
	pthread_mutex_unlock(&m->conns.lock);
	o.daemon = &dm;
	if (b) {
		b->m_owner = m;
		body_take_spare(m, b);
		f = fopencookie(b, "w", io);
	}
	if (!f) {
		if (b)
			body_done(m, b);
		free(b);
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	rc = metrics_write(m->ctx, m->ifname, &o, f);
	if (!rc && m->feed)
		put_import(f, m->ifname, &im);
	if (fclose(f) || rc) {
		body_done(m, b);
		free(b);
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "reading the device's maps failed (the daemon's log says why)\n");
	}
	body_publish(m, b);
	return send_body(c, b);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **con_cls)
{
	(void)version;
	(void)upload;
	(void)con_cls;
	if (*upload_len)
		return MHD_NO;	/* no request here has a body */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET " METRICS_PATH "\n");
	conns_request(&((struct metrics_server *)cls)->conns, c);
	if (strcmp(url, METRICS_PATH))
		return text_reply(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at "
				  METRICS_PATH "\n");
	return serve_metrics(cls, c);
}

int metrics_server_start(const struct ctx *ctx, struct metrics_server *m,
			 const char *ifname, const struct metrics_addr *a)
{
	/* without MHD_USE_ERROR_LOG: a failure is this file's one line */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;

	m->ctx = ctx;
	m->ifname = ifname;
	m->opts.memo = &m->memo;	/* only the server's thread touches it */
	pthread_mutex_init(&m->lock, NULL);
	m->lock_init = true;
	if (a->v6.sin6_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (conns_start(&m->conns)) {
		p_err(ctx, "daemon: --metrics: starting a thread: %s", strerror(errno));
		return -1;
	}
	m->mhd = MHD_start_daemon(flags, a->port, NULL, NULL, on_request, m,
				  MHD_OPTION_SOCK_ADDR, a->v6.sin6_family == AF_INET6 ?
				  (const struct sockaddr *)&a->v6 : (const struct sockaddr *)&a->v4,
				  /* room for those shut down and not yet closed */
				  MHD_OPTION_CONNECTION_LIMIT, 2 * METRICS_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				  MHD_OPTION_NOTIFY_CONNECTION, conns_notify, &m->conns,
				  MHD_OPTION_NOTIFY_COMPLETED, conns_completed, &m->conns,
				  MHD_OPTION_END);
	if (!m->mhd) {
		p_err(ctx, "daemon: --metrics %s: cannot listen there (%s)", a->text,
		      errno ? strerror(errno) : "in use, or not an address of this host");
		return -1;
	}
	p_info(ctx, "daemon: metrics at http://%s%s", a->text, METRICS_PATH);
	return 0;
}

void metrics_server_note(struct metrics_server *m, bool ok)
{
	struct timespec ts;

	if (!m->mhd)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&m->lock);
	m->dm.reloaded = true;
	m->dm.last_ok = ok;
	if (ok)
		m->dm.reloads_ok++;
	else
		m->dm.reloads_failed++;
	m->dm.last_time = ts.tv_sec + ts.tv_nsec / 1e9;
	pthread_mutex_unlock(&m->lock);
}

void metrics_server_note_reattach(struct metrics_server *m, bool ok)
{
	if (!m->mhd)
		return;
	pthread_mutex_lock(&m->lock);
	if (ok)
		m->dm.reattaches_ok++;
	else
		m->dm.reattaches_failed++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_server_note_import(struct metrics_server *m, bool ok, unsigned circuits)
{
	struct timespec ts;

	if (!m->mhd)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&m->lock);
	m->imp.tried = true;
	m->imp.last_ok = ok;
	if (ok) {
		m->imp.last_success = ts.tv_sec + ts.tv_nsec / 1e9;
		m->imp.circuits = circuits;
	} else {
		m->imp.failed++;
	}
	pthread_mutex_unlock(&m->lock);
}

void metrics_server_stop(struct metrics_server *m)
{
	conns_stop_sweeper(&m->conns);
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	m->mhd = NULL;
	conns_free(&m->conns);
	snapshot_memo_free(&m->memo);
	free(m->spare);
	m->spare = NULL;
	m->spare_cap = 0;
	if (m->lock_init)
		pthread_mutex_destroy(&m->lock);
	m->lock_init = false;
}
