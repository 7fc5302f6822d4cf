/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flow hash the program gives every packet it sees, so that fq keeps
 * the packets of two classes in two flows whatever their origin.
 *
 * fq keys a flow by the packet's socket when it has a connected one; any
 * other packet (forwarded, bridged, from an unconnected UDP or a raw
 * socket, a SYN-ACK) goes into the flow `skb_get_hash(skb) & orphan_mask`.
 * Left to the packet's own hash, packets of different classes share such
 * flows, and fq holds a flow until its head's departure time: a class over
 * its rate holds back a class under it, and fq's per-flow limit drops the
 * latter's packets after the program has charged their tokens
 * (docs/log.md, "2026-12-03: The flow tag in the VM, before and after",
 * has the measurement).
 *
 * So the program rewrites the hash (bpf_set_hash) as
 *     (the packet's own hash & ~slot_mask) | class slot
 * with slot_mask = 2^bits - 1 and 2^bits > capacity, and the loader gives
 * fq an orphan_mask of all ones: two classes never share a flow, and a
 * class's flows stay apart by the 32 - bits high bits of their own hash
 * (21 bits at the usual capacity of 1024 slots). Packets the program lets
 * pass unshaped take the value no slot has, slot_mask itself. The high
 * bits are also the ones skb_tx_hash scales to a TX queue
 * (reciprocal_scale), so a class's flows still spread over mq's queues.
 *
 * Compiled into the program and into userspace (the loader, the tests).
 */
#ifndef HTB_FLOWTAG_H
#define HTB_FLOWTAG_H

#ifdef __BPF__
#include "vmlinux.h"
#else
#include <linux/types.h>
#endif

/* Slot bits for the largest capacity (2 x 1048576 classes, src/loader/load.c):
 * the program's default, correct for any capacity. */
#define HTB_FLOWTAG_BITS_MAX	22
/* fq's orphan_mask under htbctl: the whole hash. */
#define HTB_FQ_ORPHAN_MASK	0xffffffffu

/* The smallest number of low hash bits that holds every slot below
 * capacity and one value more (slot_mask, for unshaped packets). */
static inline __u32 htb_flowtag_bits(__u32 capacity)
{
	__u32 bits = 1;

	while (bits < HTB_FLOWTAG_BITS_MAX && (1u << bits) <= capacity)
		bits++;
	return bits;
}

static inline __u32 htb_flowtag_mask(__u32 bits)
{
	return (1u << bits) - 1;
}

/* The packet's hash with the class's slot in its low bits. */
static inline __u32 htb_flowtag(__u32 hash, __u32 slot, __u32 bits)
{
	__u32 mask = htb_flowtag_mask(bits);

	return (hash & ~mask) | (slot & mask);
}

/* The hash of a packet the program lets pass unshaped. */
static inline __u32 htb_flowtag_unshaped(__u32 hash, __u32 bits)
{
	return hash | htb_flowtag_mask(bits);
}

#endif
