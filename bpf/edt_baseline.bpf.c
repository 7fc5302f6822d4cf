// SPDX-License-Identifier: GPL-2.0
/*
 * The yardstick for bench/bench_prog.c, never attached by htbctl: a
 * minimal one-bucket EDT shaper in the style of Cilium's bandwidth
 * manager (one hash lookup, one division, one stamp, last departure kept
 * with plain racy loads and stores, no burst, drop beyond a horizon).
 * Keyed by skb->priority so that it does the same kind of lookup as
 * htbctl's first classifier.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
#define NSEC_PER_SEC	1000000000ull

struct edt_bucket {
	__u64 rate_Bps;
	__u64 t_last;
	__u64 horizon_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct edt_bucket);
} edt_buckets SEC(".maps");

SEC("tc")
int edt_egress(struct __sk_buff *skb)
{
	__u32 key = skb->priority;
	struct edt_bucket *b;
	__u64 now, t, next, delay, len = skb->wire_len;

	b = bpf_map_lookup_elem(&edt_buckets, &key);
	if (!b || !b->rate_Bps)
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	delay = len * NSEC_PER_SEC / b->rate_Bps;
	t = skb->tstamp;
	if (t < now)
		t = now;
	next = *(volatile __u64 *)&b->t_last + delay;
	if (next <= t) {
		*(volatile __u64 *)&b->t_last = t;
		return TC_ACT_OK;
	}
	if (next - now >= b->horizon_ns)
		return TC_ACT_SHOT;
	*(volatile __u64 *)&b->t_last = next;
	skb->tstamp = next;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
