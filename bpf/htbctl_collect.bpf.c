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
 *
 * A slot is copied only when its bytes differ from its copy's, and then
 * listed in class_changed: class_seen stays a copy of every slot ever
 * asked, and the loop's arithmetic visits only the classes that sent
 * since the last run (src/share/share.c, "the active set"). bytes alone
 * decides: the program writes shaped_until only in the locked charge that
 * adds to bytes, before it (include/htb/sched.h, htb_leaf_commit), and a
 * second word is a second cache line per class (docs/log.md, "2026-12-06:
 * The sharing loop's tick, proportional to the active classes"). Nothing
 * is written for a class that did not send.
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

/* The slots copied by the last run, slot k at class_changed[k / 2].slot[k % 2]
 * for k < changed: two to an entry, as an array map's values are 8 bytes
 * apart, so the daemon's mmap() of it reads as one array of __u32. */
struct changed_pair {
	__u32 slot[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct changed_pair);
} class_changed SEC(".maps");

/* Slots to look at, 0..n-1: set through the skeleton before each run. */
__u32 n;
/* Out: how many slots the run listed in class_changed. */
__u32 changed;

static long copy_one(__u32 i, void *unused)
{
	struct htb_class_state *st = bpf_map_lookup_elem(&class_state, &i);
	struct htb_class_seen *seen = bpf_map_lookup_elem(&class_seen, &i);
	__u64 bytes, until;
	__u32 k = changed, half = k / 2;
	struct changed_pair *pair;

	if (!st || !seen)
		return 1;	/* beyond either map: done */
	bytes = st->bytes;
	if (bytes == seen->bytes)
		return 0;
	until = st->shaped_until;
	seen->bytes = bytes;
	seen->shaped_until = until;
	pair = bpf_map_lookup_elem(&class_changed, &half);
	if (pair) {	/* class_changed holds as many slots as class_seen */
		pair->slot[k & 1] = i;
		changed = k + 1;
	}
	return 0;
}

SEC("tc")
int htb_collect(struct __sk_buff *skb)
{
	changed = 0;
	bpf_loop(n, copy_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
