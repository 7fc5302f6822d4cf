// SPDX-License-Identifier: GPL-2.0
/*
 * What the sharing loop (htbctl daemon, src/daemon/collect.c) reads of every
 * class each tick, gathered in the kernel: each class_state entry's bytes
 * and shaped_until copied into class_seen, an array the daemon mmap()s.
 * One BPF_PROG_RUN per tick instead of a batched lookup of class_state,
 * whose per-element copy_to_user and checks were 3/4 of the tick (1,094
 * classes: 3.1 of 4.1 ms in the emulated VM, 153 of 210 us on the host;
 * docs/log.md, "CI failed scenario 17; the sharing loop's read").
 * class_state holds a bpf_spin_lock, so it cannot be mmap()ed itself.
 *
 * The daemon reuses the pinned class_state (bpf_map__reuse_fd) and sizes
 * class_seen before load; the fields are read without the class's lock,
 * as the batched lookup did: the two may come from different charges.
 * A tc program run on an empty frame, not a syscall program: 6.1 refuses
 * a map with a bpf_spin_lock to sleepable programs, and syscall programs
 * are sleepable. bpf_loop: 5.17.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "htb/types.h"
#include "class_state.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct htb_class_seen);
} class_seen SEC(".maps");

static long copy_one(__u32 i, void *unused)
{
	struct htb_class_state *st = bpf_map_lookup_elem(&class_state, &i);
	struct htb_class_seen *seen = bpf_map_lookup_elem(&class_seen, &i);

	if (!st || !seen)
		return 1;	/* beyond either map: done */
	seen->bytes = st->bytes;
	seen->shaped_until = st->shaped_until;
	return 0;
}

/* Slots to copy, 0..n-1: set through the skeleton before each run. */
__u32 n;

SEC("tc")
int htb_collect(struct __sk_buff *skb)
{
	bpf_loop(n, copy_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
