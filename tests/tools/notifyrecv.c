// SPDX-License-Identifier: GPL-2.0
/*
 * notifyrecv: the receiving end of systemd's notification socket, for
 * tests of the daemon's sd_notify messages (tests/net/systemd.sh).
 *
 *   notifyrecv PATH SECONDS
 *
 * Binds a datagram socket at PATH and prints each message it receives as
 * one line, its fields joined by '|', prefixed by the milliseconds since
 * it started ("1234 READY=1|STATUS=..."), until SECONDS have passed;
 * then removes PATH. Output is line-buffered, so a test can poll it.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long t0 = ms_now(), end;
	char buf[4096];
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notifyrecv PATH SECONDS\n");
		return 2;
	}
	end = t0 + atol(argv[2]) * 1000;
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("notifyrecv");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (ms_now() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, (int)(end - ms_now())) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (char *c = buf; *c; c++)
			if (*c == '\n')
				*c = '|';
		printf("%lld %s\n", ms_now() - t0, buf);
	}
	unlink(argv[1]);
	return 0;
}
