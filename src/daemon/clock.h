/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's clock for its timers: milliseconds, monotonic. */
#ifndef HTBCTL_DAEMON_CLOCK_H
#define HTBCTL_DAEMON_CLOCK_H

#include <time.h>
#include <linux/types.h>

static inline __u64 daemon_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
