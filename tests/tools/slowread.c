// SPDX-License-Identifier: GPL-2.0
/*
 * slowread ADDR PORT CONNS SECONDS: a local user's attack on /metrics
 * (tests/net/metrics.sh): CONNS connections to ADDR:PORT (IPv4), each with
 * a receive buffer of 2 KB, each sending "GET /metrics" and then reading
 * nothing, held for SECONDS. Prints "held N" once they are all sent
 * (whether the server shut them down is seen on its side: ss).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#define MAX_CONNS 256

static int open_one(const struct sockaddr_in *sa)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	int small = 2048, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	/* before connect, so the window the server sees is small from the start */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fds[MAX_CONNS], n, secs, held = 0;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 ||
	    (n = atoi(argv[3])) < 1 || n > MAX_CONNS || (secs = atoi(argv[4])) < 1) {
		fprintf(stderr, "usage: slowread ADDR PORT CONNS SECONDS (CONNS 1..%d)\n", MAX_CONNS);
		return 2;
	}
	sa.sin_port = htons((unsigned short)atoi(argv[2]));
	for (int i = 0; i < n; i++)
		if ((fds[held] = open_one(&sa)) >= 0)
			held++;
	printf("held %d\n", held);
	fflush(stdout);
	sleep((unsigned)secs);
	for (int i = 0; i < held; i++)
		close(fds[i]);
	return 0;
}
