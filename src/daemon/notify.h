/* SPDX-License-Identifier: GPL-2.0 */
/* systemd's notify protocol: readiness, status, watchdog (notify.c). */
#ifndef HTBCTL_DAEMON_NOTIFY_H
#define HTBCTL_DAEMON_NOTIFY_H

#include <linux/types.h>

/* msg to $NOTIFY_SOCKET: 0 sent, 1 no socket named, -errno. */
int notify_send(const char *msg);

struct notify_watchdog {
	__u64 every_ms;			/* 0: no watchdog asked for */
	__u64 next_ms;			/* daemon_now_ms of the next WATCHDOG=1 */
};
void notify_watchdog_init(struct notify_watchdog *w);
/* WATCHDOG=1 when it is due. */
void notify_watchdog_tick(struct notify_watchdog *w);

#endif
