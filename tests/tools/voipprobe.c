// SPDX-License-Identifier: GPL-2.0
/*
 * voipprobe: a paced UDP stream for the scenarios (a VoIP call, or a bulk
 * sender that costs one wake-up per packet), with the timestamps needed
 * for RFC 3550 interarrival jitter.
 *
 *   voipprobe send ADDR PORT COUNT INTERVAL_US FRAME_BYTES [MARK]
 *   voipprobe recv PORT COUNT IDLE_SECONDS
 *
 * The sender keeps an absolute schedule (a late wake-up does not shift the
 * packets after it) and writes its CLOCK_REALTIME send time into each
 * payload just before sendto(). The receiver takes the kernel's receive
 * timestamp (SO_TIMESTAMPNS, set when the packet enters the receiving
 * namespace) and prints "SEQ SEND_NS RECV_NS FRAME_BYTES" per packet. The difference
 * of consecutive transit times, (R_i - R_{i-1}) - (S_i - S_{i-1}), is then
 * what the path added, without the sender's wake-up noise, which under
 * software emulation alone is milliseconds. Both ends share one clock
 * (network namespaces of one kernel).
 *
 * The sender also prints "SEQ SEND_NS SCHED_NS" per packet: SCHED_NS is the
 * kernel's SOF_TIMESTAMPING_TX_SCHED stamp, taken as the packet enters
 * __dev_queue_xmit, just before the tc egress hook. Transit from there
 * is the shaper's part alone (tc, the qdisc, the veth), without the
 * sender's own socket and IP path.
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
#include <netinet/in.h>
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
	fprintf(stderr, "voipprobe: %s: %s\n", what, strerror(errno));
	return 1;
}

static int parse_ulong(const char *s, const char *name, unsigned long min,
		       unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || *out < min || *out > max) {
		fprintf(stderr, "voipprobe: %s '%s' is not a number in %lu..%lu\n",
			name, s, min, max);
		return -1;
	}
	return 0;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Ethernet 14 + IP 20 or 40 + UDP 8: FRAME_BYTES is what the link carries.
 * A v4-mapped peer on the receiver's dual-stack socket came over IPv4. */
static size_t hdrs_of(const struct sockaddr_in6 *peer)
{
	int v6 = peer->sin6_family == AF_INET6 &&
		 !IN6_IS_ADDR_V4MAPPED(&peer->sin6_addr);

	return 14 + (v6 ? 40 : 20) + 8;
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
		uint64_t ts_ns = 0;
		uint32_t got = UINT32_MAX;
		struct cmsghdr *c;

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return 0;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
				struct scm_timestamping t;

				memcpy(&t, CMSG_DATA(c), sizeof(t));
				ts_ns = (uint64_t)t.ts[0].tv_sec * 1000000000ull + t.ts[0].tv_nsec;
			} else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
				   (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)) {
				struct sock_extended_err e;

				memcpy(&e, CMSG_DATA(c), sizeof(e));
				if (e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING)
					got = e.ee_data;
			}
		}
		if (got == id)
			return ts_ns;
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

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "voipprobe send: ADDR PORT COUNT INTERVAL_US FRAME_BYTES [MARK]\n");
		return 2;
	}
	if (parse_ulong(argv[2], "COUNT", 1, 1000000, &count) ||
	    parse_ulong(argv[3], "INTERVAL_US", 1, 10000000, &interval_us) ||
	    parse_ulong(argv[4], "FRAME_BYTES", 100, 1514, &frame) ||
	    (argc == 6 && parse_ulong(argv[5], "MARK", 0, UINT32_MAX, &mark)))
		return 2;
	err = getaddrinfo(argv[0], argv[1], &hints, &ai);
	if (err) {
		fprintf(stderr, "voipprobe: %s port %s: %s\n", argv[0], argv[1], gai_strerror(err));
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

	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING,
		       &(int){ SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_SOFTWARE |
			       SOF_TIMESTAMPING_OPT_TSONLY | SOF_TIMESTAMPING_OPT_ID },
		       sizeof(int)))
		return die("SO_TIMESTAMPING");

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (unsigned long i = 0; i < count; i++) {
		uint64_t sched_ns;

		h->seq = (uint32_t)i;
		h->send_ns = now_ns(CLOCK_REALTIME);
		/* A shaper's drop (ENOBUFS) is a lost packet, and an ICMP error from a
		 * receiver not yet (or no longer) bound is not the sender's failure. */
		if (send(fd, buf, payload, 0) < 0 && errno != ENOBUFS && errno != ECONNREFUSED)
			return die("send");
		sched_ns = read_tx_sched(fd, (uint32_t)i);
		printf("%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", h->seq, h->send_ns, sched_ns);
		next.tv_nsec += (long)(interval_us * 1000);
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
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
		fprintf(stderr, "voipprobe recv: PORT COUNT IDLE_SECONDS\n");
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
		struct cmsghdr *c;
		uint64_t rx_ns = 0;
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
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				rx_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
			}
		}
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
		fprintf(stderr, "voipprobe: nothing received on port %lu in %lu s\n", port, idle);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return do_recv(argc - 2, argv + 2);
	fprintf(stderr, "usage: voipprobe send ADDR PORT COUNT INTERVAL_US FRAME_BYTES [MARK]\n"
			"       voipprobe recv PORT COUNT IDLE_SECONDS\n");
	return 2;
}
