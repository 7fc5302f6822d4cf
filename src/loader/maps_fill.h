/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the datapath's maps hold for a class (docs/design.md, "Filling the
 * maps"):
 * from its rate/burst parameters to struct htb_class_conf, and the token
 * state a new class starts with. The loader's plan (src/loader/plan.c),
 * src/loader/maps.c's writers, the unit tests and the BPF tests and benchmarks all
 * compute entries here, so they agree. The order in which a (re)load
 * writes them, so that a packet never sees a half-written tree, is in
 * docs/loader.md.
 */
#ifndef HTBCTL_MAPS_FILL_H
#define HTBCTL_MAPS_FILL_H

#include <stdbool.h>
#include "htb/types.h"

/* One class as the config resolves it. */
struct htb_class_params {
	__u32 classid;
	__u32 depth;			/* 1..HTB_MAX_DEPTH */
	__u32 path[HTB_MAX_DEPTH];	/* path[0] = this class's index, then ancestors */
	bool leaf;
	__u64 rate_Bps;			/* > 0 */
	__u64 ceil_Bps;			/* 0: = rate */
	__u64 burst;			/* bytes of rate credit */
	__u64 cburst;			/* bytes of ceil credit */
	__s32 overhead;			/* added to every packet's length */
	__u16 mpu;			/* minimum packet unit */
	__u8 linklayer;			/* enum htb_linklayer */
	__u64 limit_ns;			/* 0: HTB_DEFAULT_LIMIT_NS */
	__u32 prio;
	__u32 quantum;
	bool aqm;			/* CoDel on the leaf's scheduled delay */
	bool ecn;			/* its signal: CE on ECT packets, not a drop */
	bool flows;			/* sparse flows ahead of the backlog */
	__u64 target_ns;		/* 0: HTB_CODEL_TARGET_NS */
	__u64 interval_ns;		/* 0: HTB_CODEL_INTERVAL_NS; capped at
					 * HTB_CODEL_INTERVAL_MAX */
};

/* ns it takes to send bytes at rate_Bps, exact (floor), saturating. */
__s64 htb_bytes_to_ns(__u64 bytes, __u64 rate_Bps);
/* A class's limit as the datapath keeps it (0: the default): never
 * shorter than HTB_LIMIT_FRAMES full frames at its ceil, so that a slow
 * class still takes a TCP initial window, or a burst of a few flows,
 * where a queue of packets (HTB's leaf qdiscs) would (log: 2026-12-05,
 * A limit shorter than two frames). */
#define HTB_LIMIT_FRAMES	10
/* ... up to 5 s (a ceil below 24 kbit/s): within fq's default horizon
 * of 10 s, which --no-qdisc and a reload leave as they find it. */
#define HTB_LIMIT_FLOOR_MAX_NS	(5 * 1000000000ull)
__u64 htb_limit_ns(__u64 limit_ns, __u64 ceil_Bps);

/* Fill c from p (mult/shift, buffers in ns, path, flags VALID [| LEAF]).
 * Returns 0, or -EINVAL for rate 0 or a depth outside 1..HTB_MAX_DEPTH. */
int htb_conf_from_params(const struct htb_class_params *p,
			 struct htb_class_conf *c);
/* HTB_CONF_CARRY and carry_due of leaf c from its ancestors' batch_lin
 * (path[1..n]), and for every leaf of a conf array by slot. */
__u32 htb_conf_carry_lin(const struct htb_class_conf *a);
void htb_conf_carry(struct htb_class_conf *c, const __u32 *anc_lin, __u32 n);
void htb_conf_carries(struct htb_class_conf *conf, __u32 n);

/* A new class: full buckets as of now, mode CAN_SEND, counters 0. */
void htb_state_init(struct htb_class_state *st, const struct htb_class_conf *c,
		    __u64 now);

/* The datapath's clock (bpf_ktime_get_ns: CLOCK_MONOTONIC), in ns. */
__u64 htb_clock_ns(void);

#endif
