// SPDX-License-Identifier: GPL-2.0
/*
 * systemd's notification protocol (sd_notify(3)) without libsystemd: one
 * datagram to the AF_UNIX socket $NOTIFY_SOCKET names (a leading '@' is
 * the abstract namespace). Without the variable nothing is sent: the
 * daemon run by hand is unchanged. The watchdog: $WATCHDOG_USEC (and
 * $WATCHDOG_PID, when set, naming this process) asks for WATCHDOG=1 at
 * least that often; the daemon's loop sends it every half of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "daemon/clock.h"
#include "daemon/notify.h"

int notify_send(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	socklen_t len;
	int fd, rc = 0;

	if (!path || !*path)
		return 1;
	n = strlen(path);
	if (n >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

void notify_watchdog_init(struct notify_watchdog *w)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v = us ? strtoull(us, NULL, 10) : 0;

	w->every_ms = 0;
	w->next_ms = 0;
	if (!v || (pid && strtol(pid, NULL, 10) != getpid()))
		return;
	w->every_ms = v / 2000 ? v / 2000 : 1;	/* half the interval, in ms */
	w->next_ms = daemon_now_ms();
}

void notify_watchdog_tick(struct notify_watchdog *w)
{
	__u64 now = daemon_now_ms();

	if (!w->every_ms || now < w->next_ms)
		return;
	notify_send("WATCHDOG=1");
	w->next_ms = now + w->every_ms;
}
