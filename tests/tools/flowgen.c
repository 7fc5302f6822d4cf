// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen: thousands of paced UDP flows, and the goodput each address pair
 * gets, for the shaping scenarios (router, bridge, unconnected-socket host).
 *
 *   flowgen send [--src ADDR] [--size BYTES] [--seconds D] [--tos N]
 *                [--skip S] [--until U] TARGET...
 *   flowgen recv --port BASE --flows N [--seconds D] [--skip S] [--until U]
 *                [--from-first] [--bind ADDR]
 *
 * send: TARGET is DST,PORT,FLOWS,RATE[,SRC] (commas, so that an IPv6 DST
 * needs no brackets), e.g. 198.18.2.2,6000,2000,12000000 or
 * fd00:2::2,6000,300,3m. SRC, an address of this host in DST's family,
 * is the source of the target's datagrams (IP_PKTINFO / IPV6_PKTINFO on
 * each, the one socket's bound address otherwise): many subscribers'
 * uploads from one process, as the router and bridge scenarios send them.
 * All datagrams leave by ONE unconnected UDP socket, never connect()ed: its
 * packets are the "socketless" kind to fq (hashed by flow, not by socket).
 * The family comes from the addresses: all TARGETs and --src must be one.
 * --src binds the socket to ADDR (port 0); BYTES is the UDP payload
 * (default 1000, 1..65000); D the seconds to send (default 10, a fraction
 * allowed, at most 86400); --tos sets IP_TOS or IPV6_TCLASS (0..255).
 * Each target is paced on its own to RATE bits/s of UDP payload (as iperf3
 * -b counts), a whole number or one with a k, m or g suffix (10^3, 10^6,
 * 10^9), 1..100g. Its i-th datagram (from 0) goes to DST port
 * PORT + i mod FLOWS, so its FLOWS flows (1..65535, PORT+FLOWS-1 <= 65535)
 * share RATE evenly.
 * Pacing: a loop sleeps 1 ms (CLOCK_MONOTONIC), then gives each target its
 * credit, the datagrams due since the start (elapsed * RATE/8 / BYTES) less
 * those it already had, all targets' in sendmmsg() batches of up to 64
 * (several targets to a batch; each message has its own destination and
 * source). After a stall
 * of the process (the emulated VM's host may stop it for tens of ms) a
 * target sends at most 20 ms of its rate at once (at least one datagram);
 * the credit beyond that is dropped and counted as skipped, as a real
 * aggregate of subscribers would not have sent it in a burst either. The
 * socket is non-blocking with a 4 MB send buffer (SO_SNDBUFFORCE, else
 * SO_SNDBUF as far as the sysctl allows). A datagram the kernel refuses
 * with ENOBUFS, ECONNREFUSED or EPERM is counted as an error and the next
 * one is tried; EAGAIN (the send buffer is full) counts the rest of that
 * target's credit of the round as errors. Any other send error ends the
 * run (exit 1). SIGTERM or SIGINT ends the sending early; the report
 * follows all the same. Then one line per target, in the order given
 * (one line each):
 *   target TARGET sent_packets P sent_bytes B errors E skipped K \
 *   window_due WD window_skipped WK
 * TARGET as given on the command line, P the datagrams the kernel took,
 * B = P * BYTES, E the datagrams refused, K the credit dropped after stalls
 * (P + E + K is what RATE asked for over the time sent); WD and WK the
 * same, due and skipped, from --skip S seconds after the start (default
 * 0) until --until U (default D; S < U <= D): the window a receiver
 * counts (recv --skip and --until), so that a stall at the start, outside
 * it, does not count. An edge is marked after the first round at or past
 * it (a round a millisecond).
 *
 * recv: N UDP sockets (N 1..65535, BASE+N-1 <= 65535) on ports
 * BASE..BASE+N-1, bound to ADDR, or to :: with IPV6_V6ONLY off so that
 * IPv4 and IPv6 both arrive; RLIMIT_NOFILE is raised to N+16 if lower (or
 * the run ends saying it cannot be: that takes CAP_SYS_RESOURCE beyond the
 * hard limit). Each socket is non-blocking with a 4 MB
 * receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF), in one epoll; a ready
 * socket is drained with recvmmsg() (MSG_TRUNC: the payload is not copied,
 * its length is counted). Each datagram's destination address comes from
 * IP_PKTINFO or IPV6_PKTINFO, its arrival from the kernel's software
 * receive timestamp (SO_TIMESTAMPING, RX_SOFTWARE: taken as the packet
 * enters the receiver's namespace, at netif_rx, or at local delivery for
 * one that carries a delivery time). Once every socket is bound it prints
 * "ready" (flushed); D (default 10), S (default 0) and U (default D;
 * S < U <= D) count from there, or with --from-first from the first
 * datagram's arrival (senders that start a while after ready, as under
 * emulation, then still fill the window). It receives until D seconds
 * after ready (or SIGTERM/SIGINT), then reads every socket again until a
 * round of them finds nothing that arrived before the window closed, and
 * counts, per
 * (source address, destination address) pair, the datagrams and payload
 * bytes that arrived in the window from S seconds after ready until U
 * seconds after it (or the signal, if sooner), and apart from that all
 * those read from ready to the end. By arrival, not by the time read: a
 * receiver that the VM does not run across an edge of its window (so
 * that it reads late) still counts the window's arrivals. Then it prints
 * one line per pair that sent anything, IPv4 before IPv6, sorted by
 * source then destination address (an IPv4 address, also one that
 * arrived v4-mapped on the dual-stack socket, prints dotted):
 *   SRC DST packets P bytes B bps X total_packets TP total_bytes TB
 * P and B count the window, TP and TB the whole run (a pair heard only
 * outside the window has P 0, B 0, X 0). X = B * 8 / the window's length
 * in seconds (U - S, or from S to the signal), rounded to a whole
 * number. A last line gives L, the longest a datagram waited to be read,
 * in ms to 0.1 (how late the receiver ran at worst), and N, the
 * datagrams that came without a timestamp or with one not in the past,
 * counted by the time they were read instead (0 unless the kernel or the
 * clocks misbehave):
 *   read_lag max_ms L unstamped N
 *
 * Arguments are checked strictly: a count, port, size or TOS that is not
 * a whole decimal number in range, or a time (D, S, U) that is not digits
 * with an optional fraction in range, is a one-line error naming the option
 * and the range (exit 2, as for any other usage error; "flowgen --help" prints
 * the usage). Runtime failures are one line too, and exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

#define BATCH		64		/* datagrams per sendmmsg/recvmmsg */
#define TICK_NS		1000000ull	/* the sender's sleep */
#define BURST_NS	20000000ull	/* the most credit sent at once */
#define SOCK_BUF	(4 << 20)
#define MAX_SIZE	65000
#define MAX_RATE	100000000000ull	/* 100g */
#define MAX_SECONDS	86400
#define EXTRA_FILES	16		/* stdio, epoll, ... beside the sockets */
#define MAX_EVENTS	256

union addr {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

struct target {
	const char *spec;	/* the argument as given, for the report */
	union addr dst;		/* port set per datagram */
	socklen_t len;
	union addr src;		/* SRC, the datagrams' source */
	socklen_t src_len;	/* 0: none (the socket's) */
	unsigned int port, flows;
	double pps;		/* datagrams per second */
	uint64_t burst;		/* the most datagrams one round sends */
	uint64_t sent, errors, skipped;
	uint64_t owed;		/* this round's credit not sent yet */
	/* sent + errors + skipped, and skipped, when the window opened
	 * and when it closed (--skip, --until) */
	uint64_t due_from, skipped_from, due_until, skipped_until;
};

struct send_opts {
	union addr src;
	socklen_t src_len;	/* 0: no --src */
	int family;
	long size, tos;		/* tos -1: not set */
	double seconds;
	double skip, until;	/* the report's window (--skip, --until) */
	struct target *t;
	int n;
};

struct send_batch {
	struct mmsghdr msgs[BATCH];
	union addr names[BATCH];
	struct iovec iov;
	/* a target's SRC, as IP_PKTINFO or IPV6_PKTINFO */
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} ctl[BATCH];
};

struct recv_opts {
	long port, flows;
	double seconds, skip, until;	/* until 0: not set, D */
	bool from_first;	/* D, S, U count from the first datagram */
	union addr bind;
	socklen_t bind_len;	/* 0: no --bind, :: dual-stack */
};

/* Room for IP_PKTINFO and IPV6_PKTINFO both, and the receive timestamp. */
#define CTL_SPACE (CMSG_SPACE(sizeof(struct in_pktinfo)) + \
		   CMSG_SPACE(sizeof(struct in6_pktinfo)) + \
		   CMSG_SPACE(sizeof(struct scm_timestamping)))

struct recv_batch {
	struct mmsghdr msgs[BATCH];
	union addr names[BATCH];
	union { char buf[CTL_SPACE]; struct cmsghdr align; } ctl[BATCH];
	struct iovec iov;
	char scratch[64];	/* MSG_TRUNC: the payload itself is not wanted */
};

/* Addresses as IPv6, IPv4 v4-mapped. */
struct pair {
	struct in6_addr src, dst;
	uint64_t packets, bytes;		/* in the window */
	uint64_t total_packets, total_bytes;	/* the whole run; 0: a free slot */
};

struct pairs {
	struct pair *slot;
	size_t cap, used;
};

/* A run's times, as now_ns(): the window [skip_at, closed) within
 * [ready, end]; closed is U after t0, or a signal's time if sooner. */
struct recv_times {
	uint64_t skip_at, end, closed;
	uint64_t t0;		/* what they count from; 0: the first datagram's arrival, not yet */
	uint64_t lag_max;	/* the longest a datagram waited to be read */
	uint64_t unstamped;	/* datagrams placed by the time read */
};

/* D, S and U from t0 on. */
static void recv_clock(struct recv_times *t, const struct recv_opts *o, uint64_t t0)
{
	t->t0 = t0;
	t->skip_at = t0 + (uint64_t)(o->skip * 1e9);
	t->closed = t0 + (uint64_t)(o->until * 1e9);
	t->end = t0 + (uint64_t)(o->seconds * 1e9);
}

/* Set by SIGTERM and SIGINT: the only global, the handler's. */
static volatile sig_atomic_t stop;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flowgen send [--src ADDR] [--size BYTES] [--seconds D] [--tos N]\n"
		"                    [--skip S] [--until U] TARGET...\n"
		"         TARGET = DST,PORT,FLOWS,RATE[,SRC] (RATE bits/s, k/m/g suffixes)\n"
		"       flowgen recv --port BASE --flows N [--seconds D] [--skip S] [--until U]\n"
		"                    [--from-first] [--bind ADDR]\n");
}

__attribute__((noreturn, format(printf, 1, 2)))
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("flowgen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* A runtime failure: the message, errno's text, exit 1. */
__attribute__((noreturn, format(printf, 1, 2)))
static void fail(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fputs("flowgen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(1);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* No SA_RESTART: a signal cuts the sleep or the epoll_wait short. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		fail("sigaction");
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every time of a run is on the monotonic clock; receive stamps come on
 * the real one. */
static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static uint64_t real_ns(void) { return clock_ns(CLOCK_REALTIME); }

/* The value of the n characters at s if they are all decimal digits (at
 * least one) and it fits; else -1. */
static int digits(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || *v > (UINT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return 0;
}

/* A whole decimal number in [lo, hi], or a one-line error and exit 2. */
static uint64_t parse_num(const char *what, const char *s, uint64_t lo, uint64_t hi)
{
	uint64_t v;

	if (digits(s, strlen(s), &v) || v < lo || v > hi)
		usage_error("%s: '%s' is not a number in %" PRIu64 "..%" PRIu64, what, s, lo, hi);
	return v;
}

/* Bits/s: digits, then k, m or g (powers of 1000) if any, 1..100g. */
static uint64_t parse_rate(const char *what, const char *s)
{
	size_t n = strlen(s);
	uint64_t v, mult = 1;
	const char *suffix = n ? strchr("kKmMgG", s[n - 1]) : NULL;	/* not the NUL: n = strlen */

	if (suffix) {
		mult = *suffix == 'k' || *suffix == 'K' ? 1000u :
		       *suffix == 'm' || *suffix == 'M' ? 1000000u : 1000000000u;
		n--;
	}
	if (digits(s, n, &v) || v < 1 || v > MAX_RATE / mult)
		usage_error("%s: '%s' is not a rate in 1..100g (bits/s; k, m, g: 10^3, 10^6, 10^9)",
			    what, s);
	return v * mult;
}

/* Seconds: digits with an optional fraction ("5", "0.5"), in (0, 86400],
 * or [0, 86400] when zero_ok. */
static double parse_seconds(const char *what, const char *s, int zero_ok)
{
	size_t n = strlen(s), dots = 0;
	double v = -1;

	for (size_t i = 0; i < n; i++)
		dots += s[i] == '.';
	if (n && strspn(s, "0123456789.") == n && dots <= 1 && strcspn(s, "0123456789") < n)
		v = strtod(s, NULL);
	if (v < 0 || v > MAX_SECONDS || (!zero_ok && v == 0))
		usage_error("%s: '%s' is not a time in %c0, %d] seconds", what, s,
			    zero_ok ? '[' : '(', MAX_SECONDS);
	return v;
}

/* An IPv4 or IPv6 address as a sockaddr (port 0); its family, 0 if neither. */
static int parse_addr(const char *s, union addr *a, socklen_t *len)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->v4.sin_addr) == 1) {
		a->v4.sin_family = AF_INET;
		*len = sizeof(a->v4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &a->v6.sin6_addr) == 1) {
		a->v6.sin6_family = AF_INET6;
		*len = sizeof(a->v6);
		return AF_INET6;
	}
	return 0;
}

static const char *family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

/* DST,PORT,FLOWS,RATE into t (exit 2 if it is not one). */
static void parse_target(const char *spec, long size, struct target *t)
{
	char buf[256], what[320], *f[5], *p;
	uint64_t rate;
	int n = 0;

	if (strlen(spec) >= sizeof(buf))
		usage_error("target '%.40s...' is too long", spec);
	strcpy(buf, spec);
	for (p = buf; n < 5 && p; n++) {
		f[n] = p;
		p = strchr(p, ',');
		if (p)
			*p++ = '\0';
	}
	if (n < 4 || p)
		usage_error("target '%s' is not DST,PORT,FLOWS,RATE[,SRC]", spec);
	t->spec = spec;
	if (!parse_addr(f[0], &t->dst, &t->len))
		usage_error("target '%s': DST '%s' is not an IPv4 or IPv6 address", spec, f[0]);
	if (n == 5 && (!parse_addr(f[4], &t->src, &t->src_len) ||
		       t->src.sa.sa_family != t->dst.sa.sa_family))
		usage_error("target '%s': SRC '%s' is not an address of DST's family", spec, f[4]);
	snprintf(what, sizeof(what), "target '%s': PORT", spec);
	t->port = (unsigned int)parse_num(what, f[1], 1, 65535);
	snprintf(what, sizeof(what), "target '%s': FLOWS", spec);
	t->flows = (unsigned int)parse_num(what, f[2], 1, 65535);
	if (t->port + t->flows - 1 > 65535)
		usage_error("target '%s': ports %u..%u go past 65535", spec, t->port,
			    t->port + t->flows - 1);
	snprintf(what, sizeof(what), "target '%s': RATE", spec);
	rate = parse_rate(what, f[3]);
	t->pps = (double)rate / 8 / (double)size;
	t->burst = (uint64_t)(t->pps * BURST_NS / 1e9 + 0.999999);
	if (t->burst < 1)
		t->burst = 1;
}

/* One socket, one family: --src's, else the first target's. */
static void check_family(struct send_opts *o)
{
	o->family = o->src_len ? o->src.sa.sa_family : o->t[0].dst.sa.sa_family;
	for (int i = 0; i < o->n; i++)
		if (o->t[i].dst.sa.sa_family != o->family)
			usage_error("target '%s' is %s but %s is %s: one socket, one family",
				    o->t[i].spec, family_name(o->t[i].dst.sa.sa_family),
				    o->src_len ? "--src" : "the first target", family_name(o->family));
}

/* A 4 MB socket buffer: beyond the sysctl's cap if allowed, else up to it. */
static void set_buf(int fd, int force, int plain, const char *what)
{
	int v = SOCK_BUF;

	if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof(v)) &&
	    setsockopt(fd, SOL_SOCKET, plain, &v, sizeof(v)))
		fail("setsockopt %s", what);
}

static int send_socket(const struct send_opts *o)
{
	int v4 = o->family == AF_INET, tos = (int)o->tos;
	int fd = socket(o->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("socket");
	set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, "SO_SNDBUF");
	if (o->tos >= 0 &&
	    setsockopt(fd, v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_TOS : IPV6_TCLASS,
		       &tos, sizeof(tos)))
		fail("setsockopt %s (--tos)", v4 ? "IP_TOS" : "IPV6_TCLASS");
	if (o->src_len && bind(fd, &o->src.sa, o->src_len))
		fail("bind (--src)");
	return fd;
}

/* A datagram's source, t's SRC when it has one (the kernel takes
 * ipi_spec_dst, or ipi6_addr, as the source of an unconnected send). */
static void set_source(struct msghdr *h, void *ctl, const struct target *t)
{
	struct cmsghdr *c;

	h->msg_control = NULL;
	h->msg_controllen = 0;
	if (!t->src_len)
		return;
	h->msg_control = ctl;
	h->msg_controllen = t->src.sa.sa_family == AF_INET ?
		CMSG_SPACE(sizeof(struct in_pktinfo)) : CMSG_SPACE(sizeof(struct in6_pktinfo));
	memset(ctl, 0, h->msg_controllen);
	c = CMSG_FIRSTHDR(h);
	if (t->src.sa.sa_family == AF_INET) {
		struct in_pktinfo pi = { .ipi_spec_dst = t->src.v4.sin_addr };

		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	} else {
		struct in6_pktinfo pi = { .ipi6_addr = t->src.v6.sin6_addr };

		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	}
}

/* Message k of the batch: t's datagram `queued` after those it has sent
 * or failed (its port goes round t's flows). */
static void fill_one(struct send_batch *b, unsigned int k, const struct target *t,
		     uint64_t queued)
{
	uint64_t i = t->sent + t->errors + queued;
	uint16_t port = htons((uint16_t)(t->port + i % t->flows));
	struct msghdr *h = &b->msgs[k].msg_hdr;

	b->names[k] = t->dst;
	if (t->dst.sa.sa_family == AF_INET)
		b->names[k].v4.sin_port = port;
	else
		b->names[k].v6.sin6_port = port;
	h->msg_name = &b->names[k];
	h->msg_namelen = t->len;
	h->msg_iov = &b->iov;
	h->msg_iovlen = 1;
	set_source(h, &b->ctl[k], t);
}

/*
 * A datagram the kernel refused: counted, and sending goes on. EAGAIN (the
 * send buffer is full, and stays full this round) counts the round's whole
 * credit. Returns how many datagrams it counted.
 */
static uint64_t send_failed(struct target *t, uint64_t credit)
{
	switch (errno) {
	case EAGAIN:
		t->errors += credit;
		return credit;
	case ENOBUFS:
	case ECONNREFUSED:
	case EPERM:
	case EINTR:	/* not on a non-blocking socket; never fatal all the same */
		t->errors++;
		return 1;
	default:
		fail("sendmmsg (target '%s')", t->spec);
	}
}

/* What t owes after elapsed_ns: its credit, cut to one burst (the rest
 * is skipped: the sender did not run). */
static uint64_t owed(struct target *t, uint64_t elapsed_ns)
{
	uint64_t due = (uint64_t)((double)elapsed_ns / 1e9 * t->pps);
	uint64_t done = t->sent + t->errors + t->skipped, credit;

	if (due <= done)
		return 0;
	credit = due - done;
	if (credit > t->burst) {
		t->skipped += credit - t->burst;
		credit = t->burst;
	}
	return credit;
}

/* Fills the batch with what the targets owe, in order; who[k] is message
 * k's target. Returns how many. */
static unsigned int fill_round(struct send_batch *b, const struct send_opts *o,
			       struct target **who)
{
	unsigned int n = 0;

	for (int i = 0; i < o->n && n < BATCH; i++)
		for (uint64_t q = 0; q < o->t[i].owed && n < BATCH; q++) {
			fill_one(b, n, &o->t[i], q);
			who[n++] = &o->t[i];
		}
	return n;
}

/* One round: every target's credit, many targets to one sendmmsg, not a
 * call per target: scenario 17's download sender has 32 targets of a
 * datagram or two a round, a round a millisecond, in the emulated VM
 * where a syscall is dear (its skips fell in the runs after, with the
 * shaper's fixes beside: not measured apart; docs/log.md, "A debt of
 * seconds in the borrow bucket"). */
static void send_round(int fd, struct send_batch *b, const struct send_opts *o,
		       uint64_t elapsed_ns)
{
	struct target *who[BATCH];
	unsigned int n;

	for (int i = 0; i < o->n; i++)
		o->t[i].owed = owed(&o->t[i], elapsed_ns);
	while ((n = fill_round(b, o, who)) > 0) {
		int r = sendmmsg(fd, b->msgs, n, 0);

		if (r > 0) {
			for (int k = 0; k < r; k++) {
				who[k]->sent++;
				who[k]->owed--;
			}
		} else {	/* the first message's error; the rest go on */
			who[0]->owed -= send_failed(who[0], who[0]->owed);
		}
	}
}

static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);	/* EINTR: stop is set */
}

/* Each target's counts so far, into FROM or UNTIL (the window's edges). */
static void mark_window(const struct send_opts *o, int until)
{
	for (int i = 0; i < o->n; i++) {
		struct target *t = &o->t[i];
		uint64_t done = t->sent + t->errors + t->skipped;

		if (until) {
			t->due_until = done;
			t->skipped_until = t->skipped;
		} else {
			t->due_from = done;
			t->skipped_from = t->skipped;
		}
	}
}

/* The pacing loop: every tick, each target's credit up to now; the
 * window's edges marked after the first round at or past them. */
static void pace(int fd, const struct send_opts *o, struct send_batch *b)
{
	uint64_t t0 = now_ns(), dur = (uint64_t)(o->seconds * 1e9);
	uint64_t from = (uint64_t)(o->skip * 1e9), until = (uint64_t)(o->until * 1e9);
	int opened = !from, closed = 0;

	if (opened)	/* from the start: before the first round's skips */
		mark_window(o, 0);

	while (!stop) {
		uint64_t elapsed = now_ns() - t0;
		int last = elapsed >= dur;

		if (last)
			elapsed = dur;
		send_round(fd, b, o, elapsed);
		if (!opened && elapsed >= from) {
			mark_window(o, 0);
			opened = 1;
		}
		if (!closed && elapsed >= until) {
			mark_window(o, 1);
			closed = 1;
		}
		if (last)
			break;
		nap(TICK_NS);
	}
	if (!opened)	/* stopped before the window: an empty one */
		mark_window(o, 0);
	if (!closed)	/* stopped early: the window ends here */
		mark_window(o, 1);
}

static void report_targets(const struct send_opts *o)
{
	for (int i = 0; i < o->n; i++) {
		const struct target *t = &o->t[i];

		printf("target %s sent_packets %" PRIu64 " sent_bytes %" PRIu64
		       " errors %" PRIu64 " skipped %" PRIu64 " window_due %" PRIu64
		       " window_skipped %" PRIu64 "\n", t->spec, t->sent,
		       t->sent * (uint64_t)o->size, t->errors, t->skipped,
		       t->due_until - t->due_from, t->skipped_until - t->skipped_from);
	}
	fflush(stdout);
}

static int do_send(struct send_opts *o)
{
	struct send_batch *b = calloc(1, sizeof(*b));
	char *payload = calloc(1, (size_t)o->size);
	int fd;

	if (!b || !payload)
		fail("calloc");
	b->iov.iov_base = payload;
	b->iov.iov_len = (size_t)o->size;
	fd = send_socket(o);
	catch_signals();
	pace(fd, o, b);
	report_targets(o);
	close(fd);
	free(payload);
	free(b);
	return 0;
}

/* N sockets and a few more descriptors: RLIMIT_NOFILE raised as needed. */
static void raise_nofile(long flows)
{
	rlim_t need = (rlim_t)flows + EXTRA_FILES;
	struct rlimit r, old;

	if (getrlimit(RLIMIT_NOFILE, &r))
		fail("getrlimit");
	if (r.rlim_cur >= need)
		return;
	old = r;
	r.rlim_cur = need;
	if (r.rlim_max < need)
		r.rlim_max = need;
	if (setrlimit(RLIMIT_NOFILE, &r))
		fail("--flows %ld needs %llu open files, RLIMIT_NOFILE is %llu (hard %llu) and cannot be raised",
		     flows, (unsigned long long)need, (unsigned long long)old.rlim_cur,
		     (unsigned long long)old.rlim_max);
}

/* One receiving socket on port, in the epoll ep; returns it. */
static int open_port(const struct recv_opts *o, int ep, uint16_t port)
{
	int family = o->bind_len ? o->bind.sa.sa_family : AF_INET6, on = 1, off = 0;
	int ts_flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct epoll_event ev = { .events = EPOLLIN };
	union addr a = o->bind;

	if (fd < 0)
		fail("socket (port %u)", port);
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, "SO_RCVBUF");
	if (family == AF_INET) {
		if (setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on)))
			fail("setsockopt IP_PKTINFO");
		a.v4.sin_port = htons(port);
	} else {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on)))
			fail("setsockopt IPV6_V6ONLY/IPV6_RECVPKTINFO");
		if (!o->bind_len)
			a.v6 = (struct sockaddr_in6){ .sin6_family = AF_INET6,
						      .sin6_addr = IN6ADDR_ANY_INIT };
		a.v6.sin6_port = htons(port);
	}
	/* SO_TIMESTAMPING, not SO_TIMESTAMPNS, which stamps a packet that
	 * has none when it is read: a missing stamp must show as one */
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &ts_flags, sizeof(ts_flags)))
		fail("setsockopt SO_TIMESTAMPING");
	if (bind(fd, &a.sa, family == AF_INET ? sizeof(a.v4) : sizeof(a.v6)))
		fail("bind port %u", port);
	ev.data.fd = fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		fail("epoll_ctl");
	return fd;	/* never closed: the process's exit closes it */
}

/* The N sockets, in the epoll ep; returns them (the last read sweeps
 * them all). */
static int *open_ports(const struct recv_opts *o, int ep)
{
	int *fds = calloc((size_t)o->flows, sizeof(*fds));

	if (!fds)
		fail("calloc");
	raise_nofile(o->flows);
	for (long i = 0; i < o->flows; i++)
		fds[i] = open_port(o, ep, (uint16_t)(o->port + i));
	return fds;
}

/* An address as IPv6 (IPv4 v4-mapped). */
static void as_v6(struct in6_addr *out, int family, const void *addr)
{
	if (family == AF_INET) {
		memset(out, 0, sizeof(*out));
		out->s6_addr[10] = out->s6_addr[11] = 0xff;
		memcpy(&out->s6_addr[12], addr, 4);
	} else {
		memcpy(out, addr, sizeof(*out));
	}
}

static uint64_t pair_hash(const struct in6_addr *src, const struct in6_addr *dst)
{
	const unsigned char *p[2] = { src->s6_addr, dst->s6_addr };
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 16; j++)
			h = (h ^ p[i][j]) * 1099511628211ull;
	return h;
}

static struct pair *pair_slot(struct pair *slot, size_t cap, const struct in6_addr *src,
			      const struct in6_addr *dst)
{
	size_t i = (size_t)pair_hash(src, dst) & (cap - 1);

	while (slot[i].total_packets && (memcmp(&slot[i].src, src, sizeof(*src)) ||
				   memcmp(&slot[i].dst, dst, sizeof(*dst))))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

/* Doubles the table (open addressing, at most half full). */
static void pairs_grow(struct pairs *p)
{
	size_t cap = p->cap ? p->cap * 2 : 1024;
	struct pair *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		fail("calloc");
	for (size_t i = 0; i < p->cap; i++)
		if (p->slot[i].total_packets)
			*pair_slot(slot, cap, &p->slot[i].src, &p->slot[i].dst) = p->slot[i];
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
}

/* One datagram of the pair: in the totals, and in the window if in_window. */
static void pair_count(struct pairs *p, const struct in6_addr *src,
		       const struct in6_addr *dst, unsigned int bytes, int in_window)
{
	struct pair *e;

	if (2 * (p->used + 1) > p->cap)
		pairs_grow(p);
	e = pair_slot(p->slot, p->cap, src, dst);
	if (!e->total_packets) {
		e->src = *src;
		e->dst = *dst;
		p->used++;
	}
	e->total_packets++;
	e->total_bytes += bytes;
	if (in_window) {
		e->packets++;
		e->bytes += bytes;
	}
}

/* A received datagram's pair: source from its name, destination from its
 * PKTINFO (:: if it has none). */
static void msg_pair(const struct msghdr *h, struct in6_addr *src, struct in6_addr *dst)
{
	const union addr *from = h->msg_name;
	struct cmsghdr *c;

	if (from->sa.sa_family == AF_INET)
		as_v6(src, AF_INET, &from->v4.sin_addr);
	else
		as_v6(src, AF_INET6, &from->v6.sin6_addr);
	*dst = in6addr_any;
	for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR((struct msghdr *)h, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			as_v6(dst, AF_INET, &pi.ipi_addr);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			as_v6(dst, AF_INET6, &pi.ipi6_addr);
		}
	}
}

/* Names and control buffers back to full size for the next recvmmsg. */
static void recv_reset(struct recv_batch *b)
{
	for (int k = 0; k < BATCH; k++) {
		struct msghdr *h = &b->msgs[k].msg_hdr;

		h->msg_name = &b->names[k];
		h->msg_namelen = sizeof(b->names[k]);
		h->msg_iov = &b->iov;
		h->msg_iovlen = 1;
		h->msg_control = b->ctl[k].buf;
		h->msg_controllen = sizeof(b->ctl[k].buf);
		h->msg_flags = 0;
	}
}

/* now_ns() and CLOCK_REALTIME at one instant: real read on both sides of
 * now, up to three times if something (a stalled vCPU) came between
 * them; the closest pair, real at its midpoint. */
static void clock_pair(uint64_t *now, uint64_t *real)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3 && best > 50000; i++) {
		uint64_t r0 = real_ns(), m = now_ns(), r1 = real_ns();

		if (r1 >= r0 && r1 - r0 < best) {
			best = r1 - r0;
			*now = m;
			*real = r0 + best / 2;
		}
	}
	if (best == UINT64_MAX) {	/* the real clock stepped back each time */
		*now = now_ns();
		*real = real_ns();
	}
}

/* A datagram's arrival as now_ns() in *at: its receive timestamp
 * (CLOCK_REALTIME) is that long before real, and so before now. False,
 * and now, if it has none or one that is not in the past. */
static bool msg_arrival(const struct msghdr *h, uint64_t now, uint64_t real, uint64_t *at)
{
	struct cmsghdr *c;

	*at = now;
	for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR((struct msghdr *)h, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
			struct scm_timestamping ts;	/* ts[0]: software */
			uint64_t rt;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			rt = (uint64_t)ts.ts[0].tv_sec * 1000000000u + (uint64_t)ts.ts[0].tv_nsec;
			if (!rt || rt > real || real - rt >= now)
				return false;
			*at = now - (real - rt);
			return true;
		}
	}
	return false;
}

/* One datagram that arrived at `at`: the first starts the clock (when it
 * waits for one), and it counts in the window if it arrived in it. */
static void count_arrival(const struct msghdr *h, unsigned int len, uint64_t at,
			  struct pairs *p, struct recv_times *t, const struct recv_opts *o)
{
	struct in6_addr src, dst;

	if (!t->t0)
		recv_clock(t, o, at);
	msg_pair(h, &src, &dst);
	pair_count(p, &src, &dst, len, at >= t->skip_at && at < t->closed);
}

/* Reads and counts all that waits on fd, or in the last read (last) until
 * a batch holds nothing from before the window closed, so that a sender
 * still sending cannot hold it; returns how many arrived before the close.
 * The clocks are read once a batch: a batch's arrivals are all earlier. */
static unsigned int drain(int fd, struct recv_batch *b, struct pairs *p, struct recv_times *t,
			  const struct recv_opts *o, bool last)
{
	unsigned int early = 0;

	for (;;) {
		unsigned int batch_early = 0;
		uint64_t now, real;
		int n;

		recv_reset(b);
		n = recvmmsg(fd, b->msgs, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return early;
			fail("recvmmsg");
		}
		clock_pair(&now, &real);
		for (int k = 0; k < n; k++) {
			uint64_t at;

			if (!msg_arrival(&b->msgs[k].msg_hdr, now, real, &at))
				t->unstamped++;
			if (now - at > t->lag_max)
				t->lag_max = now - at;
			count_arrival(&b->msgs[k].msg_hdr, b->msgs[k].msg_len, at, p, t, o);
			batch_early += at < t->closed;
		}
		early += batch_early;
		if (n < BATCH || (last && !batch_early))
			return early;
	}
}

/* The last read: every socket, again while a round of them finds
 * datagrams that arrived before the window closed (what the CPUs' backlogs
 * still held the round before); a round without one finds only later ones,
 * from senders that may not have stopped. */
static void read_last(const int *fds, long n, struct recv_batch *b, struct pairs *p,
		      struct recv_times *t, const struct recv_opts *o)
{
	unsigned int early;

	do {
		early = 0;
		for (long i = 0; i < n; i++)
			early += drain(fds[i], b, p, t, o, true);
	} while (early);
}

/* Receives until end, or a signal: the window then ends at the signal.
 * What waits at either is read before the report. With --from-first the
 * clock starts at the first datagram's arrival. */
static void receive(int ep, const int *fds, struct recv_batch *b, struct pairs *p,
		    struct recv_times *t, const struct recv_opts *o)
{
	struct epoll_event ev[MAX_EVENTS];
	uint64_t now;

	while (!stop) {
		int n, ms = -1;

		now = now_ns();
		if (t->t0) {
			if (now >= t->end)
				break;
			ms = (int)((t->end - now + 999999) / 1000000);
		}
		n = epoll_wait(ep, ev, MAX_EVENTS, ms);
		if (n < 0 && errno != EINTR)
			fail("epoll_wait");
		for (int i = 0; i < n; i++)
			drain(ev[i].data.fd, b, p, t, o, false);
	}
	now = now_ns();
	if (!t->t0)
		recv_clock(t, o, now);
	if (now < t->closed)
		t->closed = now;
	read_last(fds, o->flows, b, p, t, o);
}

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int x6 = !IN6_IS_ADDR_V4MAPPED(&x->src), y6 = !IN6_IS_ADDR_V4MAPPED(&y->src);
	int c;

	if (x6 != y6)
		return x6 - y6;
	c = memcmp(&x->src, &y->src, sizeof(x->src));
	if (c)
		return c;
	x6 = !IN6_IS_ADDR_V4MAPPED(&x->dst);
	y6 = !IN6_IS_ADDR_V4MAPPED(&y->dst);
	if (x6 != y6)
		return x6 - y6;
	return memcmp(&x->dst, &y->dst, sizeof(x->dst));
}

/* An address as text, an IPv4 one (v4-mapped too) dotted. */
static const char *addr_str(const struct in6_addr *a, char *buf)
{
	if (IN6_IS_ADDR_V4MAPPED(a))
		return inet_ntop(AF_INET, &a->s6_addr[12], buf, INET6_ADDRSTRLEN);
	return inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN);
}

static void report_pairs(struct pairs *p, double window)
{
	size_t n = 0;

	for (size_t i = 0; i < p->cap; i++)
		if (p->slot[i].total_packets)
			p->slot[n++] = p->slot[i];
	qsort(p->slot, n, sizeof(*p->slot), pair_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct pair *e = &p->slot[i];
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

		printf("%s %s packets %" PRIu64 " bytes %" PRIu64 " bps %.0f total_packets %"
		       PRIu64 " total_bytes %" PRIu64 "\n", addr_str(&e->src, s),
		       addr_str(&e->dst, d), e->packets, e->bytes,
		       window > 0 ? (double)e->bytes * 8 / window : 0.0, e->total_packets,
		       e->total_bytes);
	}
	fflush(stdout);
}

static int do_recv(const struct recv_opts *o)
{
	struct recv_batch *b = calloc(1, sizeof(*b));
	struct pairs p = { 0 };
	struct recv_times t = { 0 };
	int ep = epoll_create1(EPOLL_CLOEXEC), *fds;

	if (!b)
		fail("calloc");
	if (ep < 0)
		fail("epoll_create1");
	b->iov.iov_base = b->scratch;
	b->iov.iov_len = sizeof(b->scratch);
	catch_signals();
	fds = open_ports(o, ep);
	printf("ready\n");
	fflush(stdout);
	if (!o->from_first)
		recv_clock(&t, o, now_ns());
	receive(ep, fds, b, &p, &t, o);
	report_pairs(&p, t.closed > t.skip_at ? (double)(t.closed - t.skip_at) / 1e9 : 0);
	printf("read_lag max_ms %.1f unstamped %" PRIu64 "\n", (double)t.lag_max / 1e6, t.unstamped);
	free(p.slot);
	free(fds);
	free(b);
	return 0;
}

/* A window from SKIP until *UNTIL (0: SECONDS) within SECONDS, send's and
 * recv's alike. */
static void check_window(double seconds, double skip, double *until)
{
	if (skip >= seconds)
		usage_error("--skip %g must be less than --seconds %g", skip, seconds);
	if (!*until)
		*until = seconds;
	if (*until <= skip || *until > seconds)
		usage_error("--until %g must be more than --skip %g and at most --seconds %g",
			    *until, skip, seconds);
}

/* getopt's own complaint, as one line of ours (opterr is off). */
static void bad_option(const char *mode, int c, char **argv)
{
	if (c == ':')
		usage_error("%s: %s needs a value", mode, argv[optind - 1]);
	usage_error("%s: unknown option '%s' (flowgen --help)", mode, argv[optind - 1]);
}

static int main_send(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "src", required_argument, NULL, 'a' },
		{ "size", required_argument, NULL, 'l' },
		{ "seconds", required_argument, NULL, 't' },
		{ "tos", required_argument, NULL, 'q' },
		{ "skip", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ 0 }
	};
	struct send_opts o = { .size = 1000, .tos = -1, .seconds = 10 };
	int c;

	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!parse_addr(optarg, &o.src, &o.src_len))
				usage_error("--src: '%s' is not an IPv4 or IPv6 address", optarg);
			break;
		case 'l': o.size = (long)parse_num("--size", optarg, 1, MAX_SIZE); break;
		case 't': o.seconds = parse_seconds("--seconds", optarg, 0); break;
		case 'q': o.tos = (long)parse_num("--tos", optarg, 0, 255); break;
		case 's': o.skip = parse_seconds("--skip", optarg, 1); break;
		case 'u': o.until = parse_seconds("--until", optarg, 0); break;
		default: bad_option("send", c, argv);
		}
	}
	check_window(o.seconds, o.skip, &o.until);
	o.n = argc - optind;
	if (!o.n)
		usage_error("send needs at least one TARGET (DST,PORT,FLOWS,RATE)");
	o.t = calloc((size_t)o.n, sizeof(*o.t));
	if (!o.t)
		fail("calloc");
	for (int i = 0; i < o.n; i++)
		parse_target(argv[optind + i], o.size, &o.t[i]);
	check_family(&o);
	c = do_send(&o);
	free(o.t);
	return c;
}

static int main_recv(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "skip", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "bind", required_argument, NULL, 'b' },
		{ "from-first", no_argument, NULL, 'f' },
		{ 0 }
	};
	struct recv_opts o = { .seconds = 10 };
	int c;

	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o.port = (long)parse_num("--port", optarg, 1, 65535); break;
		case 'n': o.flows = (long)parse_num("--flows", optarg, 1, 65535); break;
		case 't': o.seconds = parse_seconds("--seconds", optarg, 0); break;
		case 's': o.skip = parse_seconds("--skip", optarg, 1); break;
		case 'u': o.until = parse_seconds("--until", optarg, 0); break;
		case 'f': o.from_first = true; break;
		case 'b':
			if (!parse_addr(optarg, &o.bind, &o.bind_len))
				usage_error("--bind: '%s' is not an IPv4 or IPv6 address", optarg);
			break;
		default: bad_option("recv", c, argv);
		}
	}
	if (optind != argc)
		usage_error("recv: unexpected argument '%s'", argv[optind]);
	if (!o.port || !o.flows)
		usage_error("recv needs --port BASE and --flows N");
	if (o.port + o.flows - 1 > 65535)
		usage_error("recv: ports %ld..%ld go past 65535", o.port, o.port + o.flows - 1);
	check_window(o.seconds, o.skip, &o.until);
	return do_recv(&o);
}

int main(int argc, char **argv)
{
	opterr = 0;
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return main_send(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return main_recv(argc - 1, argv + 1);
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
