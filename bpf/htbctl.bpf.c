// SPDX-License-Identifier: GPL-2.0
/* tc clsact egress: classify, compute the HTB departure time, stamp it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "htb_types.h"

/* Sizes are set by the loader before load (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * 1024);
	__type(key, __u32);
	__type(value, struct htb_class_conf);
} class_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct htb_class_state);
} class_state SEC(".maps");

SEC("tc")
int htb_egress(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
