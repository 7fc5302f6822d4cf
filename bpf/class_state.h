/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The class_state map (struct htb_class_state, a slot per class), defined
 * once for both programs that use it: bpf/htbctl.bpf.c, whose load
 * creates and pins it, and bpf/htbctl_collect.bpf.c, which the daemon
 * loads over the pinned one (bpf_map__reuse_fd). The loader sets the size
 * before load; 64 is only a default.
 */
#ifndef HTBCTL_BPF_CLASS_STATE_H
#define HTBCTL_BPF_CLASS_STATE_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct htb_class_state);
} class_state SEC(".maps");

#endif
