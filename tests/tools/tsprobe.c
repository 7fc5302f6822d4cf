// SPDX-License-Identifier: GPL-2.0
/*
 * tsprobe: probe traffic for the shaping scenarios, timestamped by the
 * kernel so that the emulated VM's own scheduling noise stays out of what
 * is measured.
 *
 *   tsprobe send [-q] ADDR PORT COUNT INTERVAL_US FRAME_BYTES [MARK]
 *   tsprobe recv PORT COUNT IDLE_SECONDS
 *   tsprobe ping ADDR COUNT INTERVAL_US [MARK]
 *
 * send/recv: a paced UDP stream (a VoIP call, or a bulk sender that costs
 * one wake-up per packet). The sender keeps an absolute schedule (a late
 * wake-up does not shift the packets after it) and writes its
 * CLOCK_REALTIME send time into each payload just before send(). The
 * receiver takes the kernel's receive timestamp (SO_TIMESTAMPNS, set when
 * the packet enters the receiving namespace) and prints
 * "SEQ SEND_NS RECV_NS FRAME_BYTES" per packet; the change of transit time
 * between consecutive packets, (R_i - R_{i-1}) - (S_i - S_{i-1}), is RFC
 * 3550's interarrival jitter, free of the sender's wake-up noise. Both ends
 * share one clock (network namespaces of one kernel).
 *
 * The sender also prints "SEQ SEND_NS SCHED_NS" per packet: SCHED_NS is the
 * kernel's SOF_TIMESTAMPING_TX_SCHED stamp, taken as the packet enters
 * __dev_queue_xmit, just before the tc egress hook. Transit from there
 * is the shaper's part alone (tc, the qdisc, the veth), without the
 * sender's own socket and IP path, which under software emulation adds
 * milliseconds now and then whatever the shaper does.
 *
 * ping: ICMP echo requests (IPv4, raw socket, root) on the same kind of
 * schedule; prints "SEQ SEND_NS SCHED_NS RECV_NS" per request, RECV_NS the
 * kernel's receive stamp of the reply (0: no reply). RECV_NS - SEND_NS is
 * what ping(8) reports; RECV_NS - SCHED_NS is the network's round trip.
 *
 * TSPROBE_START_NS (a CLOCK_REALTIME time in ns) makes send and ping wait
 * for that instant and start their schedule there, so that two probes,
 * e.g. one per shaper, send their packets at the same moments and a stall
 * of the (emulated) machine falls on both alike.
 *
 * TSPROBE_SRC (an IPv4 address of the namespace) makes ping send from that
 * address: a subscriber's ping from a namespace that holds several.
 * TSPROBE_IDENT (0..65535) replaces ping's echo identifier (its pid), and
 * TSPROBE_SEQ0 (0..65535) is its first sequence number (0): two pings of
 * one identifier have one flow hash, and different SEQ0s keep their
 * replies apart.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

struct probe_hdr {
	uint32_t seq;
	uint32_t pad;
	uint64_t send_ns;
};

static int die(const char *what)
{
	fprintf(stderr, "tsprobe: %s: %s\n", what, strerror(errno));
	return 1;
}

static int parse_ulong(const char *s, const char *name, unsigned long min,
		       unsigned long max, unsigned long *out)
{
	char *end;

	/* strtoul skips blanks and takes "-5" as a huge number: a digit first. */
	errno = 0;
	*out = strtoul(s, &end, 0);
	if (errno || *s < '0' || *s > '9' || *end || *out < min || *out > max) {
		fprintf(stderr, "tsprobe: %s '%s' is not a number in %lu..%lu\n",
			name, s, min, max);
		return -1;
	}
	return 0;
}


/* Ethernet 14 + IP 20 or 40 + UDP 8: FRAME_BYTES is what the link carries.
 * A v4-mapped peer on the receiver's dual-stack socket came over IPv4. */
static size_t hdrs_of(const struct sockaddr_in6 *peer)
{
	int v6 = peer->sin6_family == AF_INET6 &&
		 !IN6_IS_ADDR_V4MAPPED(&peer->sin6_addr);

	return 14 + (v6 ? 40 : 20) + 8;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + ts->tv_nsec;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts_ns(&ts);
}

static void advance(struct timespec *t, unsigned long us)
{
	t->tv_nsec += (long)(us * 1000);
	while (t->tv_nsec >= 1000000000) {
		t->tv_nsec -= 1000000000;
		t->tv_sec++;
	}
}

/* The schedule's first instant: now, or TSPROBE_START_NS (see above). */
static int schedule_start(struct timespec *next)
{
	const char *s = getenv("TSPROBE_START_NS");
	unsigned long start;

	if (s) {
		if (parse_ulong(s, "TSPROBE_START_NS", 0, ULONG_MAX, &start))
			return -1;
		struct timespec at = { .tv_sec = (time_t)(start / 1000000000),
				       .tv_nsec = (long)(start % 1000000000) };
		while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, next);
	return 0;
}

static int enable_tx_sched(int fd)
{
	int flags = SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_TSONLY | SOF_TIMESTAMPING_OPT_ID;

	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags));
}

/* The SO_TIMESTAMPNS receive stamp of a message, 0 if it has none. */
static uint64_t rx_stamp(struct msghdr *msg)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return ts_ns(&ts);
		}
	}
	return 0;
}

/*
 * The TX_SCHED stamp of packet id (OPT_ID counts sends from 0), 0 if it
 * has none. It is queued synchronously inside send(), so it is already
 * there; stamps of earlier packets still queued are skipped.
 */
static uint64_t read_tx_sched(int fd, uint32_t id)
{
	for (;;) {
		char cbuf[256];
		struct msghdr msg = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		uint64_t stamp = 0;
		uint32_t got = UINT32_MAX;
		struct cmsghdr *c;

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return 0;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
				struct scm_timestamping t;

				memcpy(&t, CMSG_DATA(c), sizeof(t));
				stamp = ts_ns(&t.ts[0]);
			} else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
				   (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)) {
				struct sock_extended_err e;

				memcpy(&e, CMSG_DATA(c), sizeof(e));
				if (e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING)
					got = e.ee_data;
			}
		}
		if (got == id)
			return stamp;
	}
}

static int do_send(int argc, char **argv)
{
	unsigned long count, interval_us, frame, mark = 0;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	char buf[1500] = { 0 };
	struct probe_hdr *h = (struct probe_hdr *)buf;
	struct timespec next;
	size_t payload, hdrs;
	int fd, err;

	/* -q: no TX_SCHED stamps and no output, for bulk senders (each stamp
	 * is a clock read and an error-queue read per packet: under TCG that
	 * is what limits the rate). */
	int quiet = argc > 0 && !strcmp(argv[0], "-q");

	if (quiet) {
		argc--;
		argv++;
	}
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "tsprobe send: [-q] ADDR PORT COUNT INTERVAL_US FRAME_BYTES [MARK]\n");
		return 2;
	}
	if (parse_ulong(argv[2], "COUNT", 1, 1000000, &count) ||
	    parse_ulong(argv[3], "INTERVAL_US", 1, 10000000, &interval_us) ||
	    parse_ulong(argv[4], "FRAME_BYTES", 100, 1514, &frame) ||
	    (argc == 6 && parse_ulong(argv[5], "MARK", 0, UINT32_MAX, &mark)))
		return 2;
	err = getaddrinfo(argv[0], argv[1], &hints, &ai);
	if (err) {
		fprintf(stderr, "tsprobe: %s port %s: %s\n", argv[0], argv[1], gai_strerror(err));
		return 2;
	}
	hdrs = hdrs_of((struct sockaddr_in6 *)ai->ai_addr);
	payload = frame - hdrs;
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	if (mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &(int){ (int)mark }, sizeof(int)))
		return die("SO_MARK");
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		return die("connect");
	freeaddrinfo(ai);

	if (!quiet && enable_tx_sched(fd))
		return die("SO_TIMESTAMPING");

	if (schedule_start(&next))
		return 2;
	for (unsigned long i = 0; i < count; i++) {
		uint64_t sched_ns;

		h->seq = (uint32_t)i;
		h->send_ns = now_ns(CLOCK_REALTIME);
		/* A shaper's drop (ENOBUFS) is a lost packet, and an ICMP error from a
		 * receiver not yet (or no longer) bound is not the sender's failure. */
		if (send(fd, buf, payload, 0) < 0 && errno != ENOBUFS && errno != ECONNREFUSED)
			return die("send");
		if (!quiet) {
			sched_ns = read_tx_sched(fd, (uint32_t)i);
			printf("%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", h->seq, h->send_ns, sched_ns);
		}
		advance(&next, interval_us);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	fflush(stdout);
	close(fd);
	return 0;
}

static int do_recv(int argc, char **argv)
{
	unsigned long port, count, idle;
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	char buf[2048], cbuf[CMSG_SPACE(sizeof(struct timespec))];
	unsigned long got = 0;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "tsprobe recv: PORT COUNT IDLE_SECONDS\n");
		return 2;
	}
	if (parse_ulong(argv[0], "PORT", 1, 65535, &port) ||
	    parse_ulong(argv[1], "COUNT", 1, 1000000, &count) ||
	    parse_ulong(argv[2], "IDLE_SECONDS", 1, 3600, &idle))
		return 2;
	/* One dual-stack socket takes the IPv4 and the IPv6 stream. */
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	sa.sin6_port = htons((uint16_t)port);
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){ 0 }, sizeof(int)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &(int){ 1 }, sizeof(int)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO,
		       &(struct timeval){ .tv_sec = (time_t)idle }, sizeof(struct timeval)))
		return die("setsockopt");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return die("bind");
	/* The sender may start late; the idle limit counts from here too. */
	while (got < count) {
		struct iovec iov = { buf, sizeof(buf) };
		struct sockaddr_in6 from;
		struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from),
				      .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct probe_hdr h;
		uint64_t rx_ns;
		ssize_t n = recvmsg(fd, &msg, 0);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return die("recvmsg");
		}
		if ((size_t)n < sizeof(h))
			continue;
		rx_ns = rx_stamp(&msg);
		if (!rx_ns)
			rx_ns = now_ns(CLOCK_REALTIME);
		memcpy(&h, buf, sizeof(h));
		printf("%" PRIu32 " %" PRIu64 " %" PRIu64 " %zu\n", h.seq, h.send_ns, rx_ns,
		       (size_t)n + hdrs_of(&from));
		got++;
	}
	fflush(stdout);
	close(fd);
	if (!got) {
		fprintf(stderr, "tsprobe: nothing received on port %lu in %lu s\n", port, idle);
		return 1;
	}
	return 0;
}

struct ping_probe {
	uint64_t send_ns, sched_ns, recv_ns;
};

static uint16_t inet_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* Takes the echo replies waiting on fd; stamps those that are ours. */
static void ping_collect(int fd, uint16_t ident, uint16_t seq0,
			 struct ping_probe *pr, unsigned long count)
{
	for (;;) {
		char buf[1500], cbuf[CMSG_SPACE(sizeof(struct timespec))];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		const struct iphdr *ip = (const struct iphdr *)buf;
		struct icmphdr icmp;
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
		uint16_t seq;

		if (n < 0)
			return;
		/* A raw socket gets the IP header too. */
		if (n < (ssize_t)sizeof(*ip) || n < (ssize_t)(ip->ihl * 4 + sizeof(icmp)))
			continue;
		memcpy(&icmp, buf + ip->ihl * 4, sizeof(icmp));
		if (icmp.type != ICMP_ECHOREPLY || ntohs(icmp.un.echo.id) != ident)
			continue;
		seq = (uint16_t)(ntohs(icmp.un.echo.sequence) - seq0);
		if (seq < count && !pr[seq].recv_ns) {
			pr[seq].recv_ns = rx_stamp(&msg);
			if (!pr[seq].recv_ns)
				pr[seq].recv_ns = now_ns(CLOCK_REALTIME);
		}
	}
}

/* Waits for replies until the monotonic deadline. */
static void ping_wait(int fd, const struct timespec *until, uint16_t ident,
		      uint16_t seq0, struct ping_probe *pr, unsigned long count)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(ts_ns(until) - now_ns(CLOCK_MONOTONIC));

		if (left <= 0)
			return;
		if (poll(&pfd, 1, (int)(left / 1000000) + 1) > 0)
			ping_collect(fd, ident, seq0, pr, count);
	}
}

/* Binds the ping's socket to $TSPROBE_SRC, if set; 1 on failure (said). */
static int bind_source(int fd)
{
	const char *src = getenv("TSPROBE_SRC");
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (!src || !*src)
		return 0;
	if (inet_pton(AF_INET, src, &a.sin_addr) != 1) {
		fprintf(stderr, "tsprobe: TSPROBE_SRC '%s' is not an IPv4 address\n", src);
		return 1;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "tsprobe: binding to TSPROBE_SRC %s: %s\n", src, strerror(errno));
		return 1;
	}
	return 0;
}

static int do_ping(int argc, char **argv)
{
	unsigned long count, interval_us, mark = 0;
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct ping_probe *pr;
	struct timespec next;
	unsigned long ident = (uint16_t)getpid(), seq0 = 0;
	int fd;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "tsprobe ping: ADDR COUNT INTERVAL_US [MARK]\n");
		return 2;
	}
	if (inet_pton(AF_INET, argv[0], &to.sin_addr) != 1) {
		fprintf(stderr, "tsprobe: '%s' is not an IPv4 address\n", argv[0]);
		return 2;
	}
	if (parse_ulong(argv[1], "COUNT", 1, 65535, &count) ||
	    parse_ulong(argv[2], "INTERVAL_US", 1000, 10000000, &interval_us) ||
	    (argc == 4 && parse_ulong(argv[3], "MARK", 0, UINT32_MAX, &mark)) ||
	    (getenv("TSPROBE_IDENT") && parse_ulong(getenv("TSPROBE_IDENT"), "TSPROBE_IDENT", 0, 65535, &ident)) ||
	    (getenv("TSPROBE_SEQ0") && parse_ulong(getenv("TSPROBE_SEQ0"), "TSPROBE_SEQ0", 0, 65535, &seq0)))
		return 2;
	pr = calloc(count, sizeof(*pr));
	if (!pr)
		return die("calloc");
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0)
		return die("raw ICMP socket");
	if (mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &(int){ (int)mark }, sizeof(int)))
		return die("SO_MARK");
	if (bind_source(fd))
		return 2;
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &(int){ 1 }, sizeof(int)) ||
	    enable_tx_sched(fd))
		return die("setsockopt");

	if (schedule_start(&next))
		return 2;
	for (unsigned long i = 0; i < count; i++) {
		/* 56 bytes of data as ping(8) sends: 84-byte IP packets. */
		struct { struct icmphdr h; char data[56]; } req = { 0 };

		req.h.type = ICMP_ECHO;
		req.h.un.echo.id = htons((uint16_t)ident);
		req.h.un.echo.sequence = htons((uint16_t)(seq0 + i));
		req.h.checksum = inet_csum(&req, sizeof(req));
		pr[i].send_ns = now_ns(CLOCK_REALTIME);
		if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&to, sizeof(to)) < 0 &&
		    errno != ENOBUFS)
			return die("sendto");
		pr[i].sched_ns = read_tx_sched(fd, (uint32_t)i);
		advance(&next, interval_us);
		ping_wait(fd, &next, ident, seq0, pr, count);
	}
	advance(&next, 1000000);	/* late replies: one more second */
	ping_wait(fd, &next, ident, seq0, pr, count);
	for (unsigned long i = 0; i < count; i++)
		printf("%lu %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, pr[i].send_ns,
		       pr[i].sched_ns, pr[i].recv_ns);
	free(pr);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return do_recv(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "ping"))
		return do_ping(argc - 2, argv + 2);
	fprintf(stderr, "usage: tsprobe send [-q] ADDR PORT COUNT INTERVAL_US FRAME_BYTES [MARK]\n"
			"       tsprobe recv PORT COUNT IDLE_SECONDS\n"
			"       tsprobe ping ADDR COUNT INTERVAL_US [MARK]\n");
	return 2;
}
