/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Filling the datapath's maps (docs/DESIGN.md "Datapath"): from a class's
 * rate/burst parameters to struct htb_class_conf, the initial token
 * state, and the few writes that install them. Used by the loader and by
 * the BPF tests and benchmarks, so all of them fill maps the same way.
 *
 * Order of a (re)load, so that a packet never sees a half-written tree:
 *   1. runtime[0] is read for the active generation g (0 on a new map);
 *      the new tree is written to generation n = first load ? 0 : !g:
 *      htb_map_put_conf(conf_fd, n, capacity, idx, &conf) for every class
 *      (slots not in the tree: write a zeroed conf, flags 0 = invalid),
 *      htb_map_put_tree(tree_fd, n, &tree).
 *   2. class_state[idx]: htb_map_init_state() for a new class (full
 *      buckets, t_c = now). A class kept across a reload keeps its state.
 *      (An all-zero entry also works: the datapath reads t_c == 0 as a
 *      class idle for ever, i.e. full.)
 *   3. classifier maps (values: class index).
 *   4. htb_map_set_runtime() with gen = n: the flip.
 */
#ifndef HTBCTL_MAPS_FILL_H
#define HTBCTL_MAPS_FILL_H

#include <stdbool.h>
#include "htb_types.h"

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
	__u64 borrow_Bps;		/* 0: no borrow limit (reserved) */
	__u64 bburst;
};

/* ns it takes to send bytes at rate_Bps, exact (floor), saturating. */
__s64 htb_bytes_to_ns(__u64 bytes, __u64 rate_Bps);

/* Fill c from p (mult/shift, buffers in ns, path, flags VALID [| LEAF]).
 * Returns 0, or -EINVAL for rate 0 or a depth outside 1..HTB_MAX_DEPTH. */
int htb_conf_from_params(const struct htb_class_params *p,
			 struct htb_class_conf *c);

/* A new class: full buckets as of now, mode CAN_SEND, counters 0. */
void htb_state_init(struct htb_class_state *st, const struct htb_class_conf *c,
		    __u64 now);

/* The datapath's clock (bpf_ktime_get_ns: CLOCK_MONOTONIC), in ns. */
__u64 htb_clock_ns(void);

/* Map writes; each returns 0 or -errno. */
int htb_map_put_conf(int conf_fd, __u32 gen, __u32 capacity, __u32 idx,
		     const struct htb_class_conf *c);
int htb_map_init_state(int state_fd, __u32 idx, const struct htb_class_conf *c,
		       __u64 now);
int htb_map_put_tree(int tree_fd, __u32 gen, const struct htb_tree_conf *t);
int htb_map_get_runtime(int runtime_fd, struct htb_runtime *rt);
int htb_map_set_runtime(int runtime_fd, const struct htb_runtime *rt);

#endif
