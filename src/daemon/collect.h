/* SPDX-License-Identifier: GPL-2.0 */
/* What the sharing loop reads of every class each tick (struct
 * htb_class_seen), gathered in the kernel by bpf/htbctl_collect.bpf.c. */
#ifndef HTBCTL_DAEMON_COLLECT_H
#define HTBCTL_DAEMON_COLLECT_H

#include <stddef.h>
#include <linux/types.h>
#include "htb/types.h"

struct htbctl_collect_bpf;

struct collect {
	struct htbctl_collect_bpf *skel;
	int prog_fd;
	struct htb_class_seen *seen;	/* mmap()ed, cap entries */
	size_t len;
	__u32 *changed;			/* mmap()ed: the slots the last run copied */
	size_t changed_len;
	__u32 nchanged;			/* ... changed[0..nchanged) */
	__u32 cap;
};

/* Loads the collector over state_fd (a class_state of cap slots). Returns
 * 0 or -errno, with nothing held. */
int collect_open(struct collect *c, int state_fd, __u32 cap);
/* Brings c->seen up to date for slots 0..n-1 (one BPF_PROG_RUN): copies
 * the slots whose bytes changed since their last copy (or since
 * collect_open: 0) and lists them in c->changed[0..c->nchanged). 0 or
 * -errno. */
int collect_run(struct collect *c, __u32 n);
void collect_close(struct collect *c);

#endif
