/* SPDX-License-Identifier: GPL-2.0 */
/* One daemon per device (lock.c); `unload` asks who holds it. */
#ifndef HTBCTL_DAEMON_LOCK_H
#define HTBCTL_DAEMON_LOCK_H

#include "common/common.h"

#define DAEMON_RUN_DIR	"/run/htbctl"

/* Takes the lock of IFACE's daemon, a flock on DAEMON_RUN_DIR/daemon.IFACE
 * (the directory created root's, mode 0700, and refused when it is not
 * root's alone), and writes this process's pid in it. Returns the fd to
 * keep open while the daemon runs, or -1 with one line printed (naming
 * the daemon that holds it). */
int daemon_lock(const struct ctx *ctx, const char *ifname);

/* The pid of the daemon that holds IFACE's lock: 0 when none does, -1 when
 * one does and has not written its pid yet. */
int daemon_holder(const char *ifname);

#endif
