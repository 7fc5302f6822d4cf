// SPDX-License-Identifier: GPL-2.0
/*
 * udpblast: the sender (and the receiver's sink) of scripts/bench-path.sh,
 * which compares what the whole egress path costs the sending CPU with no
 * shaper, kernel HTB and htbctl.
 *
 *   udpblast send --dst ADDR --dport N [--sport N] [--cpu N] [--seconds D]
 *                 [--size BYTES] [--batch B] [--start-at NS]
 *   udpblast sink --port N [--count K]
 *
 * send: one connected UDP socket (IPv4) sends BYTES-byte datagrams (default
 * 64) as fast as it can for D seconds (default 3), B datagrams per
 * sendmmsg() call (default 32; 1 uses send()), pinned to CPU N when --cpu
 * is given. --start-at waits for that CLOCK_REALTIME instant (ns) first,
 * so that several senders run over the same interval. Then one line:
 *   packets P errors E elapsed_ns T user_ns U sys_ns S cpu_ns C late_ns L
 * P datagrams the kernel accepted, E calls that failed (the loop goes on),
 * T the loop's wall time, U/S/C the thread's own CPU time over the loop
 * (getrusage RUSAGE_THREAD), L how late the loop started after --start-at.
 * On a veth the receive side up to the sink runs in softirq on the
 * sender's CPU, in its context, so C covers the whole path (this kernel has
 * no IRQ time accounting: that time is the task's).
 *
 * sink: K UDP sockets bound to ports N..N+K-1 (any address) that never
 * read, with the smallest receive buffer, so that datagrams to them are
 * dropped as soon as the socket is found (the buffer is full) rather than
 * answered by ICMP port unreachable or queued. Prints "ready" once bound
 * and sleeps until killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define MAX_BATCH 1024
#define MAX_SIZE 65507	/* the largest IPv4 UDP payload */

struct send_opts {
	const char *dst;
	long dport, sport, cpu, size, batch;
	double seconds;
	uint64_t start_at;
};

static void die(const char *what)
{
	fprintf(stderr, "udpblast: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: udpblast send --dst ADDR --dport N [--sport N] [--cpu N] [--seconds D]\n"
		"                     [--size BYTES] [--batch B] [--start-at NS]\n"
		"       udpblast sink --port N [--count K]\n");
	exit(2);
}

/* A whole decimal number in [lo, hi], or a one-line error and exit 2. */
static long parse_long(const char *name, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "udpblast: --%s: '%s' is not a number in %ld..%ld\n", name, s, lo, hi);
		exit(2);
	}
	return v;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

static void thread_cpu(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage");
	*user = tv_ns(&ru.ru_utime);
	*sys = tv_ns(&ru.ru_stime);
}

static void pin(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity (--cpu)");
}

static int connected_socket(const struct send_opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	if (o->sport) {
		a.sin_port = htons((uint16_t)o->sport);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
			die("bind (--sport)");
	}
	a.sin_port = htons((uint16_t)o->dport);
	if (inet_pton(AF_INET, o->dst, &a.sin_addr) != 1) {
		fprintf(stderr, "udpblast: --dst: '%s' is not an IPv4 address\n", o->dst);
		exit(2);
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	return fd;
}

/* Waits for the CLOCK_REALTIME instant at (ns); 0 returns at once. */
static void wait_until(uint64_t at)
{
	struct timespec ts = { .tv_sec = (time_t)(at / 1000000000u),
			       .tv_nsec = (long)(at % 1000000000u) };

	if (!at)
		return;
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int do_send(const struct send_opts *o)
{
	static struct mmsghdr msgs[MAX_BATCH];	/* zeroed: no names, no control */
	struct iovec iov;
	uint64_t packets = 0, errors = 0, t0, t1, deadline, late, u0, s0, u1, s1;
	char *buf;
	int fd;

	if (o->cpu >= 0)
		pin(o->cpu);
	fd = connected_socket(o);
	buf = calloc(1, (size_t)o->size);
	if (!buf)
		die("calloc");
	iov.iov_base = buf;
	iov.iov_len = (size_t)o->size;
	for (long i = 0; i < o->batch; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}

	wait_until(o->start_at);
	late = now_ns(CLOCK_REALTIME);
	late = o->start_at && late > o->start_at ? late - o->start_at : 0;
	thread_cpu(&u0, &s0);
	t0 = now_ns(CLOCK_MONOTONIC);
	deadline = t0 + (uint64_t)(o->seconds * 1e9);
	do {
		/* A failed call (ENOBUFS from a full queue, a stray ICMP error
		 * on the connected socket) is counted and the loop goes on: the
		 * benchmark must run its whole interval. */
		if (o->batch == 1) {
			if (send(fd, buf, (size_t)o->size, 0) == o->size)
				packets++;
			else
				errors++;
		} else {
			int n = sendmmsg(fd, msgs, (unsigned int)o->batch, 0);

			if (n > 0)
				packets += (uint64_t)n;
			if (n < o->batch)
				errors++;
		}
		t1 = now_ns(CLOCK_MONOTONIC);
	} while (t1 < deadline);
	thread_cpu(&u1, &s1);

	printf("packets %llu errors %llu elapsed_ns %llu user_ns %llu sys_ns %llu cpu_ns %llu late_ns %llu\n",
	       (unsigned long long)packets, (unsigned long long)errors,
	       (unsigned long long)(t1 - t0), (unsigned long long)(u1 - u0),
	       (unsigned long long)(s1 - s0),
	       (unsigned long long)(u1 - u0 + s1 - s0), (unsigned long long)late);
	free(buf);
	close(fd);
	return 0;
}

static int do_sink(long port, long count)
{
	int small = 1;	/* the kernel raises it to its minimum */

	if (port + count - 1 > 65535) {
		fprintf(stderr, "udpblast: sink ports %ld..%ld go past 65535\n", port, port + count - 1);
		return 2;
	}
	for (long i = 0; i < count; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons((uint16_t)(port + i)) };
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		if (fd < 0)
			die("socket");
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)))
			die("setsockopt SO_RCVBUF");
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
			die("bind (sink port)");
		/* never read, never closed: the process's exit closes it */
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dst", required_argument, NULL, 'd' },
		{ "dport", required_argument, NULL, 'p' },
		{ "sport", required_argument, NULL, 's' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 'l' },
		{ "batch", required_argument, NULL, 'b' },
		{ "start-at", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'P' },
		{ "count", required_argument, NULL, 'n' },
		{ 0 }
	};
	struct send_opts o = { .cpu = -1, .size = 64, .batch = 32, .seconds = 3 };
	long port = 0, count = 1;
	const char *mode;
	char *end;
	int c;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o.dst = optarg; break;
		case 'p': o.dport = parse_long("dport", optarg, 1, 65535); break;
		case 's': o.sport = parse_long("sport", optarg, 1, 65535); break;
		case 'c': o.cpu = parse_long("cpu", optarg, 0, CPU_SETSIZE - 1); break;
		case 'l': o.size = parse_long("size", optarg, 0, MAX_SIZE); break;
		case 'b': o.batch = parse_long("batch", optarg, 1, MAX_BATCH); break;
		case 'P': port = parse_long("port", optarg, 1, 65535); break;
		case 'n': count = parse_long("count", optarg, 1, 65535); break;
		case 't':
			errno = 0;
			o.seconds = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o.seconds > 0 && o.seconds <= 86400)) {
				fprintf(stderr, "udpblast: --seconds: '%s' is not a time in (0, 86400]\n", optarg);
				return 2;
			}
			break;
		case 'a':
			errno = 0;
			o.start_at = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end) {
				fprintf(stderr, "udpblast: --start-at: '%s' is not a time in ns\n", optarg);
				return 2;
			}
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!strcmp(mode, "send")) {
		if (!o.dst || !o.dport) {
			fprintf(stderr, "udpblast: send needs --dst and --dport\n");
			return 2;
		}
		return do_send(&o);
	}
	if (!strcmp(mode, "sink")) {
		if (!port) {
			fprintf(stderr, "udpblast: sink needs --port\n");
			return 2;
		}
		return do_sink(port, count);
	}
	usage();
}
