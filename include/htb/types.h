/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF program and userspace: map keys and values.
 * Fixed-width types and explicit padding only, so both sides agree on the
 * layout byte for byte. Field names of struct htb_class_state are part of
 * the user contract (bpftool map dump shows them).
 */
#ifndef HTB_TYPES_H
#define HTB_TYPES_H

#ifdef __BPF__
#include "vmlinux.h"
#else
#include <linux/types.h>
#include <linux/bpf.h>
#endif

#define HTB_MAX_DEPTH		8	/* levels of classes, as in HTB */
#define HTB_NO_CLASS		0xffffffffu
#define HTB_MAX_MARK_MASKS	8	/* distinct mark masks in one config */
#define HTB_NSEC_PER_SEC	1000000000ull
#define HTB_MBUFFER_NS		(60 * HTB_NSEC_PER_SEC)	/* HTB's mbuffer */
/* The longest buffer (burst at the rate): HTB's, 2^32 ticks of 64 ns
 * (tc_htb_opt.buffer is a __u32 of PSCHED ticks), 274.9 s. It also keeps
 * tokens + elapsed time far from overflowing an __s64. */
#define HTB_BUFFER_MAX_NS	(0x100000000ull << 6)
/* htb_runtime.horizon_ns == 0 means this (fq's default horizon). */
#define HTB_DEFAULT_HORIZON_NS	(10 * HTB_NSEC_PER_SEC)
/* htb_class_conf.limit_ns == 0 means this. */
#define HTB_DEFAULT_LIMIT_NS	(100 * 1000 * 1000ull)
/* CoDel's defaults (RFC 8289, Linux's include/net/codel.h) and the
 * "backlog below one MTU" floor, in bytes as fq_codel counts a full frame. */
#define HTB_CODEL_TARGET_NS	(5 * 1000 * 1000ull)
#define HTB_CODEL_INTERVAL_NS	(100 * 1000 * 1000ull)
#define HTB_CODEL_MTU		1514u
/* interval * (1/sqrt(count) in Q0.32) must fit 64 bits: 4.29 s at most. */
#define HTB_CODEL_INTERVAL_MAX	0xffffffffull

/* HTB's class modes (enum htb_cmode in sch_htb.c), same numbering. */
enum htb_mode {
	HTB_MODE_CANT_SEND = 0,
	HTB_MODE_MAY_BORROW = 1,
	HTB_MODE_CAN_SEND = 2,
};

enum htb_linklayer {
	HTB_LINKLAYER_ETHERNET = 0,
	HTB_LINKLAYER_ATM = 1,
};

/* A rate with its precomputed l2t multiplier (psched_ratecfg). */
struct htb_ratecfg {
	__u64 rate_Bps;		/* bytes per second */
	__u32 mult;		/* l2t(len) = (len * mult) >> shift */
	__u8 shift;
	__u8 linklayer;		/* enum htb_linklayer */
	__u16 mpu;
	__s32 overhead;
	__u32 pad;
};

/*
 * Per-class parameters, written by the loader, read-only to the program.
 * The conf map holds two generations (key = gen * capacity + index); a
 * reload fills the inactive one and flips htb_runtime.gen, so a packet
 * never sees a half-written tree.
 */
struct htb_class_conf {
	struct htb_ratecfg rate;
	struct htb_ratecfg ceil;
	__s64 buffer;		/* ns of rate tokens a full bucket holds (burst) */
	__s64 cbuffer;		/* ns of ceil tokens (cburst) */
	__u64 limit_ns;		/* packets scheduled further out are dropped */
	__u32 classid;		/* tc handle: major << 16 | minor */
	__u32 depth;		/* entries used in path[] */
	__u32 path[HTB_MAX_DEPTH];	/* path[0] = this class, then ancestors */
	__u32 prio;
	__u32 quantum;
	__u32 flags;		/* HTB_CONF_* */
	/* A batch of this class is due at this many length-adjusted bytes
	 * (HTB_BATCH_NS of its rate or ceil tokens, whichever first), for a
	 * class whose costs are linear in the length (ethernet, mpu 0,
	 * overhead >= 0 and one overhead for rate and ceil); 0 otherwise.
	 * Such a class's batch sums bytes, not costs (htb_batch_take_lin). */
	__u32 batch_lin;
	/* CoDel on the leaf's scheduled delay (HTB_CONF_AQM; docs/design.md,
	 * "AQM"). mtu_ns: what HTB_CODEL_MTU bytes take at the class's rate,
	 * CoDel's "backlog below one MTU" as a delay. */
	__u64 target_ns;
	__u64 interval_ns;	/* <= HTB_CODEL_INTERVAL_MAX */
	__u64 mtu_ns;
	/* A leaf whose ancestors may be charged through this CPU's path carry
	 * (HTB_CONF_CARRY, struct htb_path_carry): the carry is due at this
	 * many length-adjusted bytes, the smallest batch_lin of its ancestors. */
	__u32 carry_due;
	__u32 pad_carry;
};

#define HTB_CONF_VALID	(1u << 0)
#define HTB_CONF_LEAF	(1u << 1)
#define HTB_CONF_AQM	(1u << 2)	/* CoDel on (leaves) */
#define HTB_CONF_ECN	(1u << 3)	/* signal ECT packets with CE, not a drop */
#define HTB_CONF_FLOWS	(1u << 4)	/* sparse flows ahead of the backlog (leaves) */
#define HTB_CONF_CARRY	(1u << 5)	/* the leaf's path is linear and batches (carry_due) */

/*
 * Live token state of one class (HTB's struct htb_class fields), in ns.
 * tokens/ctokens are as of t_c, the clock at the class's last charge (see
 * docs/design.md, "Buckets": a negative value is how far the class's
 * schedule runs ahead of the clock). Everything is updated under the lock, so
 * counters are exact across CPUs. An all-zero entry is a fresh class with
 * full buckets (t_c == 0 is read as "idle for ever").
 */
struct htb_class_state {
	struct bpf_spin_lock lock;
	__u32 mode;		/* enum htb_mode after the last charge */
	__s64 tokens;
	__s64 ctokens;
	__u64 t_c;		/* time the tokens were last brought up to date */
	__u64 last_stamp;	/* latest departure given to this class's packets */
	__u64 bytes;		/* charged bytes (wire_len), this class and below */
	__u64 packets;
	__u64 drops;		/* packets beyond limit_ns (leaves) */
	__u64 overlimits;	/* changes into HTB_MODE_CANT_SEND */
	__u64 lends;
	__u64 borrows;
	/* Sub-nanosecond remainders of the rate/ceil/borrow charges
	 * (htb_l2t_carry in include/htb/rate.h), below 2^shift. */
	__u64 rcarry;
	__u64 ccarry;
	__s64 btokens;		/* borrow bucket, as of t_c (htb_class_share) */
	__u64 bcarry;
	/* Latest departure the shaper itself imposed on this class's packets
	 * (a stamp later than both the clock and the packet's own stamp):
	 * while it lies ahead of the clock the class is backlogged, which is
	 * how the sharing loop tells a class that wants more from one that
	 * sends all it has (src/share/share.c). */
	__u64 shaped_until;
	/* CoDel (RFC 8289) on the leaf's scheduled delay, Linux's names:
	 * first_above is when the delay, above target since, makes signalling
	 * allowed (0: below target); drop_next the next signal while dropping;
	 * rec_inv_sqrt 1/sqrt(count) in Q0.32 for the control law. */
	__u64 codel_first_above;
	__u64 codel_drop_next;
	__u32 codel_count;
	__u32 codel_lastcount;
	__u32 codel_rec_inv_sqrt;
	__u32 codel_dropping;
	__u64 ecn_marks;	/* CoDel signals given as CE on an ECT packet */
	__u64 aqm_drops;	/* CoDel signals given as a drop (charged nothing) */
	/* Sparse flows (HTB_CONF_FLOWS; docs/design.md, "Sparse flows"): the
	 * sparse lane's clock (a packet may take it while it lies less than
	 * HTB_SPARSE_BURST ahead of now) and the packets that took it. */
	__u64 sparse_next;
	__u64 sparse_packets;
	/* The borrow limit (B/s, htb_class_share.borrow_Bps) btokens is
	 * counted at; 0: none. A new limit rescales what the bucket owes
	 * (htb_btokens_at). */
	__u64 brate;
	/* Never used: the next slot's lock and tokens must not share a cache
	 * line with this class's fields. An array map's values start 56 bytes
	 * into a line on 6.18 (struct bpf_array's header is 312 bytes), so
	 * without it each class's first 8 bytes sat in the line of its
	 * neighbour's CoDel fields, and two CPUs on neighbouring leaves wrote
	 * one line per packet (docs/design.md, "Batches"). 64
	 * bytes keep any alignment apart. */
	__u64 pad[8];
};

/*
 * Charges of one inner class made on one CPU and not yet applied to its
 * class_state: a PERCPU_ARRAY by class slot (docs/design.md,
 * "Batches"). A CPU adds a packet's costs here without a lock and without
 * writing a cache line another CPU writes; it applies the batch to the
 * shared state under the class's lock once it holds HTB_BATCH_PKTS packets
 * or HTB_BATCH_NS of the class's rate, ceil or borrow tokens. The class's
 * true counters are its class_state's plus every CPU's batch (`htbctl
 * show` adds them; `bpftool map dump` of class_state shows the applied
 * part). A leaf's batch holds its packets charged without its lock (within
 * its rate: htb_leaf_try_unlocked), applied with its next locked packet or
 * when due.
 */
struct htb_class_batch {
	__u64 r;		/* rate cost, 2^-rshift ns (htb_l2t_prod) */
	__u64 c;		/* ceil cost, 2^-cshift ns */
	__u64 b;		/* borrow bucket cost, ns (rounded down per packet) */
	__u64 bytes;
	__u32 packets;
	__u8 lends;		/* at most HTB_BATCH_PKTS */
	__u8 borrows;
	/* The class's rate.shift and ceil.shift when the batch began: a reload
	 * that changes the class's rate may change them, and the costs are
	 * then rescaled to the new ones (htb_batch_units). */
	__u8 rshift;
	__u8 cshift;
	/* Batches of this CPU applied to the class so far (wraps): a reader
	 * of state and batches retries a class whose batch was applied
	 * between its reads (maps_read_state). */
	__u32 applied;
	/* A linear class's batch sums the packets' length-adjusted bytes
	 * here instead of their costs in r and c (htb_batch_take_lin); r,
	 * rshift, cshift and b then say what the bytes cost (include/htb/
	 * bucket.h, htb_batch_rprod). */
	__u32 lin;
};

/* A batch is applied at 128 packets or 20 us of the class's rate or ceil
 * tokens, whichever comes first; a packet worth 20 us or more alone is
 * applied at once, as without batches (at 20 Mbit/s a 1500-byte frame is
 * 600 us: every scenario's class). What other CPUs cannot see of a class
 * is below that per CPU: the bound, and the measurements behind the two
 * numbers, are in docs/design.md, "Batches". lends and borrows count up
 * to HTB_BATCH_PKTS in a byte. */
#define HTB_BATCH_PKTS		128
_Static_assert(HTB_BATCH_PKTS <= 255, "lends and borrows are bytes");
#define HTB_BATCH_NS		20000ull

/*
 * One flow of a leaf (fq's notion: the packet's hash, the socket's for
 * local traffic), in the LRU map flow_state. Written under the leaf's lock
 * only, so a flow's stamps never decrease. vfinish: when the flow's sparse
 * packets would have left at the class's rate, one after the other (so
 * vfinish - now is what it has ahead, as a time), HTB_FLOW_BULK once a
 * packet of it queued behind the class's backlog (until last_stamp).
 */
struct htb_flow_key {
	__u32 slot;		/* the leaf's class slot */
	__u32 hash;
};

struct htb_flow {
	__u64 last_stamp;	/* latest departure given to the flow */
	__u64 vfinish;
};

#define HTB_FLOW_BULK		(~0ull)
/* A flow with at most this ahead, at the class's rate, is sparse (one
 * full frame, fq_codel's quantum and new-flow rule: conf.mtu_ns). */
#define HTB_SPARSE_BYTES	HTB_CODEL_MTU
/* The sparse lane runs at a quarter of the class's rate (shift 2), with a
 * burst of two full packets at that rate: what sparse packets can add to
 * the class's rate in a window shorter than its queue (docs/design.md,
 * "Sparse flows"). */
#define HTB_SPARSE_SHIFT	2
#define HTB_SPARSE_BURST_PKTS	2

/*
 * What a leaf may borrow, set by the sharing loop (`htbctl daemon`,
 * src/share/share.c) from the fluid ideal of prio and quantum; one entry per
 * class slot, like class_state. The map is mmap()ed by the loop, which
 * stores borrow_l2t with one 8-byte store, and the program loads it with
 * one 8-byte load, so a packet never sees a rate and a shift of two
 * different updates. The entries count only while the loop's lease in
 * htb_runtime.share_until_ns runs: a loop that dies leaves borrowing first
 * come, first served, and rates and ceils exactly enforced.
 */
struct htb_class_share {
	__u64 borrow_l2t;	/* 0: no limit; else HTB_SHARE_ON | shift << 32 | mult
				 * (the class's own overhead/mpu/linklayer), mult 0:
				 * may not borrow at all */
	__s64 bbuffer;		/* ns of borrow tokens a full bucket holds */
	__u64 borrow_Bps;	/* the rate borrow_l2t encodes (for show, bpftool) */
	__u64 demand_Bps;	/* the loop's estimate of what the class offers;
				 * ~0: backlogged, takes all it can get */
};

/*
 * What the sharing loop reads of a class each tick (estimate in
 * src/share/share.c), copied from class_state by bpf/htbctl_collect.bpf.c
 * into an array the daemon mmap()s; class_state itself, with its lock,
 * cannot be mapped.
 */
struct htb_class_seen {
	__u64 bytes;		/* class_state.bytes */
	__u64 shaped_until;	/* class_state.shaped_until */
};

#define HTB_SHARE_ON		(1ull << 63)
#define HTB_SHARE_MULT(w)	((__u32)(w))
#define HTB_SHARE_SHIFT(w)	((__u8)((w) >> 32))

/* Values a running program reads on every packet; settable at run time. */
struct htb_runtime {
	__u32 gen;		/* reloads so far: gen & 1 is the active conf generation */
	__u32 capacity;		/* class slots per generation */
	__u32 hysteresis;	/* 0 off (default), 1 on */
	__u32 pad;
	__u64 horizon_ns;	/* an incoming tstamp beyond now + horizon is stale */
	__u64 test_now_ns;	/* tests only (a program loaded with test_clock): nonzero replaces the clock */
	/* The sharing loop's lease: class_share counts while the clock is
	 * below it. The loop stores both with single 8-byte stores through
	 * its mmap() of this map; 0: no loop has run. */
	__u64 share_until_ns;
	__u64 share_run_ns;	/* when the loop last ran */
};

/* Per-generation classification settings (key = gen). */
struct htb_tree_conf {
	__u32 default_idx;	/* HTB_NO_CLASS: unclassified passes unshaped */
	__u32 nmasks;
	__u32 mark_masks[HTB_MAX_MARK_MASKS];	/* tried in this order */
	__u32 skip;		/* HTB_SKIP_*: classifier maps known empty */
	/* The major whose leaves cls_minor holds by minor (the load's most
	 * common leaf major; the same in both generations, and kept by every
	 * reload): its priority lookups skip cls_prio's hash. 0: none. */
	__u32 prio_major;
};

/*
 * The classifier maps, one line each, in the order the program tries them
 * (docs/design.md, "Classification"). This list is the one place a match
 * kind is declared: the program declares its maps from it, and userspace
 * sizes, pins, fills, diffs and skips them by it (src/loader/maps.c), and numbers
 * the config's match kinds after it (src/config/config.h).
 *   X(ID, map name, key type, BPF map type, map flags, skip bit)
 * The skip bit is set in htb_tree_conf.skip when the loader leaves the map
 * empty, so the program skips its lookups (and the header parsing when no
 * address or port map is in use); 0, the safe default, probes all. The
 * bits are part of the pinned maps' format: a newer htbctl reloading a
 * device writes them for the program already running there, so a bit never
 * changes meaning. The order is part of cls_shadow's format likewise.
 */
#define HTB_CLASSIFIERS(X)							\
	X(PRIO,   cls_prio,   __u32,               BPF_MAP_TYPE_HASH,     0, 0)	\
	X(MARK,   cls_mark,   struct htb_mark_key, BPF_MAP_TYPE_HASH,     0, 7)	\
	X(DSCP,   cls_dscp,   __u8,                BPF_MAP_TYPE_HASH,     0, 8)	\
	X(DST4,   cls_dst4,   struct htb_lpm4_key, BPF_MAP_TYPE_LPM_TRIE, BPF_F_NO_PREALLOC, 1) \
	X(SRC4,   cls_src4,   struct htb_lpm4_key, BPF_MAP_TYPE_LPM_TRIE, BPF_F_NO_PREALLOC, 2) \
	X(DST6,   cls_dst6,   struct htb_lpm6_key, BPF_MAP_TYPE_LPM_TRIE, BPF_F_NO_PREALLOC, 3) \
	X(SRC6,   cls_src6,   struct htb_lpm6_key, BPF_MAP_TYPE_LPM_TRIE, BPF_F_NO_PREALLOC, 4) \
	X(PORT,   cls_port,   struct htb_port_key, BPF_MAP_TYPE_HASH,     0, 5)	\
	X(CGROUP, cls_cgroup, __u64,               BPF_MAP_TYPE_HASH,     0, 6)

#define HTB_CLS_ENUM_(id, name, key, type, flags, bit)	HTB_CLS_##id,
enum htb_cls { HTB_CLASSIFIERS(HTB_CLS_ENUM_) HTB_NCLS };
#undef HTB_CLS_ENUM_

#define HTB_CLS_SKIP_(id, name, key, type, flags, bit)	HTB_SKIP_##id = 1u << (bit),
enum htb_skip { HTB_CLASSIFIERS(HTB_CLS_SKIP_) };
#undef HTB_CLS_SKIP_

/*
 * This CPU's charges for the ancestors of one leaf, made by its packets
 * within its rate and not yet in the ancestors' batches (docs/design.md,
 * "Batches", the path carry). One leaf at a time; a packet of another
 * leaf charges its path as before.
 */
struct htb_path_carry {
	__u32 leaf;		/* the leaf's slot, while packets > 0 */
	__u32 packets;
	__u64 bytes;
	__u32 gen;		/* htb_params.gen of its packets: their tree's conf */
	__u32 pad;
};

/* Device-wide per-CPU counters (key 0), and the CPU's path carry: one
 * entry, one lookup, for a packet that needs either. */
struct htb_dev_stats {
	__u64 unclassified_packets;
	__u64 unclassified_bytes;
	__u64 stale_tstamps;
	__u64 drops;
	__u64 control_packets;	/* ARP and IPv6 neighbour discovery: never shaped */
	__u64 control_bytes;
	struct htb_path_carry carry;
};

/* The value of every classifier map: the class slot the key selects in
 * each conf generation (slot[htb_runtime.gen] is the one in force), or
 * HTB_NO_CLASS where the key does not match in that generation: a reload
 * writes the new generation's column before the flip and levels the other
 * after it, so a reload stopped at any point classifies every packet by
 * the old tree or by the new one, never by a mix (docs/loader.md). For a
 * prefix map the column holds what that generation's longest matching
 * prefix selects, so an entry one generation lacks does not hide a
 * shorter prefix it has. */
struct htb_cls_val {
	__u32 slot[2];
};

/* Classifier keys. */
struct htb_lpm4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct htb_lpm6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

struct htb_mark_key {
	__u32 value;		/* already masked */
	__u32 mask;
};

enum htb_port_dir {
	HTB_PORT_SRC = 0,
	HTB_PORT_DST = 1,
};

struct htb_port_key {
	__u8 proto;		/* 0 = any, IPPROTO_TCP, IPPROTO_UDP */
	__u8 dir;		/* enum htb_port_dir */
	__u16 port;		/* host byte order */
};

#endif /* HTB_TYPES_H */
