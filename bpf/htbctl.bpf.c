// SPDX-License-Identifier: GPL-2.0
/*
 * tc clsact egress: classify, compute the HTB departure time, stamp it.
 *
 * The algorithm is include/htb/sched.h (shared with the userspace tests);
 * this file provides its environment (array-map lookups, bpf_spin_lock),
 * the classifier and the glue. Maps and their keys: docs/design.md,
 * "Maps", and include/htb/types.h. Sizes are set by the loader before load
 * (bpf_map__set_max_entries); the defaults here are deliberately small.
 *
 * Only helpers that Debian's 6.1 has are used: map lookups,
 * bpf_ktime_get_ns, bpf_skb_load_bytes, bpf_skb_cgroup_id, bpf_spin_lock,
 * bpf_skb_ecn_set_ce (5.2), bpf_get_hash_recalc (4.8), bpf_set_hash (4.13).
 * Loops are plain bounded loops.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "htb/types.h"
#include "htb/flowtag.h"

#define TC_ACT_OK		0
#define TC_ACT_SHOT		2
#define ETH_HLEN		14
#define ETH_P_IP		0x0800
#define ETH_P_IPV6		0x86DD
#define ETH_P_ARP		0x0806
#define ETH_P_8021Q		0x8100
#define ETH_P_8021AD		0x88A8
#define IPPROTO_TCP_		6
#define IPPROTO_UDP_		17
#define IPPROTO_ICMPV6_		58
#define NEXTHDR_HOP		0
#define NEXTHDR_ROUTING		43
#define NEXTHDR_FRAGMENT	44
#define NEXTHDR_AUTH		51
#define NEXTHDR_DEST		60
#define HTB_V6_EXT_MAX		4	/* extension headers walked at most */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * 64);
	__type(key, __u32);
	__type(value, struct htb_class_conf);
} class_conf SEC(".maps");

#include "class_state.h"

/* The sharing loop (htbctl daemon) writes these two through mmap():
 * its lease in runtime, the borrow limits in class_share. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct htb_class_share);
} class_share SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct htb_runtime);
} runtime SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct htb_tree_conf);
} tree_conf SEC(".maps");

/* The classifier maps, from the one list in include/htb/types.h. Keys:
 * cls_prio a leaf's classid, cls_cgroup a cgroup v2 id, the others their
 * struct; every value is the class slot per generation. */
#define HTB_CLS_MAP_(id, nm, ktype, mtype, mflags, bit)		\
struct {								\
	__uint(type, mtype);						\
	__uint(max_entries, 64);					\
	__uint(map_flags, mflags);					\
	__type(key, ktype);						\
	__type(value, struct htb_cls_val);				\
} nm SEC(".maps");
HTB_CLASSIFIERS(HTB_CLS_MAP_)
#undef HTB_CLS_MAP_

/* cls_prio's entries of tree_conf.prio_major, by minor: an array lookup,
 * which the verifier inlines: classification 3-4 ns, 8-9 with the hash (log:
 * 2026-12-05, The priority classifier's array). Minors past its size
 * (the load's class slots or highest minor, at most 65,536) and other
 * majors stay in cls_prio; an empty entry holds HTB_NO_CLASS in both
 * columns. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct htb_cls_val);
} cls_minor SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct htb_dev_stats);
} dev_stats SEC(".maps");

/* Inner classes' charges not yet applied, per CPU (struct htb_class_batch;
 * docs/design.md, "Batches"); by class slot, like class_state. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct htb_class_batch);
} class_batch SEC(".maps");

/* Sparse flows: one entry per flow of a leaf with flows on, the least
 * recently used one evicted when full (sized by the loader: src/loader/maps.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct htb_flow_key);
	__type(value, struct htb_flow);
} flow_state SEC(".maps");

/* ---- the environment of include/htb/sched.h ---- */

struct htb_env {
	__u32 gen;
	__u32 cap;
};

/* idx's conf in generation gen's half of class_conf (a reload leaves the
 * other half as it was until the next one) */
static __always_inline const struct htb_class_conf *
env_conf_at(const struct htb_env *env, __u32 idx, __u32 gen)
{
	__u32 key = (gen & 1) * env->cap + idx;

	if (idx >= env->cap)
		return NULL;
	return bpf_map_lookup_elem(&class_conf, &key);
}

/* idx's conf in the tree this packet uses */
static __always_inline const struct htb_class_conf *
env_conf(const struct htb_env *env, __u32 idx)
{
	return env_conf_at(env, idx, env->gen);
}

static __always_inline struct htb_class_state *
env_state(const struct htb_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&class_state, &idx);
}

static __always_inline const struct htb_class_share *
env_share(const struct htb_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&class_share, &idx);
}

/* Load-time switch: every charge applied at once, without batches. The
 * loader sets it on PREEMPT_RT kernels, where a tc program may be
 * preempted by another on its CPU between a batch's add and apply
 * (docs/design.md, "Batches"); bench/bench_prog.c sets it to measure them. */
const volatile bool no_batch = false;

static __always_inline struct htb_class_batch *env_batch(__u32 idx)
{
	if (no_batch)
		return NULL;
	return bpf_map_lookup_elem(&class_batch, &idx);
}

/* This CPU's dev_stats entry: looked up where a packet needs it (its
 * counters, for the rarer packets: link control, unclassified, dropped,
 * stale stamps; its carry, for a leaf's within its rate), not for every
 * packet up front. */
static __always_inline struct htb_dev_stats *this_cpu_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&dev_stats, &zero);
}

/* This CPU's path carry; none without batches (the same preemption as
 * theirs). */
static __always_inline struct htb_path_carry *env_carry(void)
{
	struct htb_dev_stats *ds;

	if (no_batch)
		return NULL;
	ds = this_cpu_stats();
	return ds ? &ds->carry : NULL;
}

static __always_inline struct htb_flow *
env_flow(__u32 idx, __u32 hash)
{
	struct htb_flow_key k = { .slot = idx, .hash = hash };

	return bpf_map_lookup_elem(&flow_state, &k);
}

/*
 * Load-time switch (.rodata, set through the skeleton before load; the
 * loader never sets it): the program without its bpf_spin_locks, only for
 * bench/bench_prog.c to measure what the locks cost and what they protect.
 * The verifier reads the frozen value as a constant, so the branch not
 * taken is neither verified nor kept in the loaded program.
 */
const volatile bool bench_no_lock = false;

/*
 * Load-time switch (.rodata, like bench_no_lock; the loader never sets
 * it): the flow hash a packet arrives with, only for bench/bench_prog.c.
 * Under BPF_PROG_TEST_RUN a packet has none, and the runs of one call
 * share one skb, so the hash a run sets is there for the next. 1: a hash
 * set (a local socket's sk_txhash, a NIC's RSS hash); 2: none, cleared
 * (a packet forwarded from a device without RX hashing, e.g. a veth):
 * every run's bpf_get_hash_recalc runs the flow dissector.
 */
const volatile __u32 bench_hash = 0;

/*
 * Load-time switch: the low bits of the flow hash that carry the class
 * slot (include/htb/flowtag.h). The loader sets htb_flowtag_bits(capacity);
 * the default holds every capacity, so a program loaded without it still
 * keeps classes in flows of their own.
 */
const volatile __u32 flowtag_bits = HTB_FLOWTAG_BITS_MAX;

/*
 * Load-time switch (.rodata; the loader never sets it): the clock is
 * runtime.test_now_ns when that is nonzero, for tests/bpf's runs at given
 * instants. Off, the verifier drops the branch: a loaded program reads
 * the kernel's clock and nothing else (before, every packet read the map
 * field as well).
 */
const volatile bool test_clock = false;

/*
 * Load-time switch (.rodata; the loader never sets it): the program ends
 * after step N, only for bench/bench_prog.c's table of where a packet's
 * time goes (--only steps): 1 its maps, 2 the hash and link control, 3
 * classification, 4 the clock, 5 the packet's parameters. 0, the
 * shipped value: the verifier drops every check.
 *
 * What it drops is a jump it never saw taken to code no other path
 * reaches; a load of the switch it leaves. So htb_egress reads the
 * switches once (stop, given_hash), and each cut's taken branch is a
 * block of its own (the empty asm with the cut's number: clang would
 * otherwise jump straight to the program's shared return of TC_ACT_OK,
 * which the verifier does see taken). Five loads and three kept
 * compares were 0.5-1 ns a packet (docs/log.md, "2026-12-05: The leaf's
 * step, 1.5x").
 */
const volatile __u32 bench_stop = 0;
#define BENCH_STOP(n)	do {							\
	if (stop == (n)) {							\
		asm volatile("" :: "i"(n));					\
		return TC_ACT_OK;						\
	}									\
} while (0)

#define HTB_ENV_CONF(env, idx)	env_conf(env, idx)
#define HTB_ENV_CONF_AT(env, idx, gen)	env_conf_at(env, idx, gen)
#define HTB_ENV_STATE(env, idx)	env_state(env, idx)
#define HTB_ENV_SHARE(env, idx)	env_share(env, idx)
#define HTB_ENV_BATCH(env, idx)	env_batch(idx)
#define HTB_ENV_CARRY(env)	env_carry()
#define HTB_ENV_HAS_FLOWS(env)	1
#define HTB_ENV_FLOW(env, idx, hash)	env_flow(idx, hash)
#define HTB_LOCK(st)		do { if (!bench_no_lock) bpf_spin_lock(&(st)->lock); } while (0)
#define HTB_UNLOCK(st)		do { if (!bench_no_lock) bpf_spin_unlock(&(st)->lock); } while (0)
/* *p = max(*p, v) against other CPUs doing the same without a lock: a
 * failed cmpxchg means another CPU moved *p in between (a packet of the
 * class there), so 16 tries outlast any number of CPUs sending at once. */
#define HTB_RAISE(p, v)	do {							\
	__u64 o_ = *(volatile __u64 *)(p), v_ = (v);				\
	for (int i_ = 0; i_ < 16 && o_ < v_; i_++) {				\
		__u64 w_ = __sync_val_compare_and_swap((p), o_, v_);		\
		if (w_ == o_)							\
			break;							\
		o_ = w_;							\
	}									\
} while (0)
/* *p = v if *p is still old (the flow's vfinish: see htb_leaf_try_unlocked) */
#define HTB_CAS(p, old, v)	((void)__sync_val_compare_and_swap((p), (old), (v)))

/* The per-class steps of htb/sched.h as global subprograms: each is
 * verified once, alone (see there). */
#define HTB_SUBPROG __attribute__((noinline))

#include "htb/sched.h"

/* ---- classification ---- */

struct pkt {
	__u8 family;		/* 4, 6 or 0 (not IP) */
	__u8 l4proto;
	__u8 has_ports;
	__u8 dscp;		/* the DS field's upper six bits */
	__u16 sport, dport;	/* host order */
	union {
		struct {
			__u8 saddr[16];
			__u8 daddr[16];
		};
		__u8 addrs[32];	/* both, as IPv6's header has them */
	};
};

/*
 * len bytes of the packet at off into to: from the linear part, where an
 * egress packet's headers are, with one bounds check; through
 * bpf_skb_load_bytes only when they are not there. The helper call was
 * most of a CoDel leaf's ECN read: 18 ns a packet on the bench host
 * (bench_prog --only steps; docs/log.md, "2026-12-03: Where a packet's
 * nanoseconds go").
 */
#define HDR_MAX_OFF	256	/* the headers we read all lie below */
static __always_inline int hdr_load(struct __sk_buff *skb, __u32 off, void *to,
				    const __u32 len)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	void *at;

	if (off < HDR_MAX_OFF) {
		at = data + off;
		barrier_var(at);
		if (at + len <= end) {
			__builtin_memcpy(to, at, len);
			return 0;
		}
	}
	return bpf_skb_load_bytes(skb, off, to, len);
}

/*
 * The EtherType of the packet's network header (host order), past at most
 * one 802.1Q/802.1ad tag, and in *off where that header starts; 0 if the
 * tag cannot be read. Both parse() and is_link_control() start here.
 */
static __always_inline __u16 l3_proto(struct __sk_buff *skb, __u32 *off)
{
	__u16 proto = bpf_ntohs(skb->protocol);
	__be16 inner;

	*off = ETH_HLEN;
	if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
		return proto;
	if (hdr_load(skb, ETH_HLEN + 2, &inner, sizeof(inner)))
		return 0;
	*off += 4;
	return bpf_ntohs(inner);
}

/* Parse L3/L4 far enough for the address and port classifiers. */
static __always_inline void parse(struct __sk_buff *skb, struct pkt *pk)
{
	__u32 off, l4off = 0;
	__u16 proto = l3_proto(skb, &off);
	__u8 nexthdr = 0;
	int i;

	if (proto == ETH_P_IP) {
		struct iphdr ip;

		if (hdr_load(skb, off, &ip, sizeof(ip)) ||
		    ip.version != 4 || ip.ihl < 5)
			return;
		pk->family = 4;
		pk->dscp = ip.tos >> 2;
		__builtin_memcpy(pk->saddr, &ip.saddr, 4);
		__builtin_memcpy(pk->daddr, &ip.daddr, 4);
		/* no ports in non-first fragments */
		if (bpf_ntohs(ip.frag_off) & 0x1fff)
			return;
		nexthdr = ip.protocol;
		l4off = off + ip.ihl * 4;
	} else if (proto == ETH_P_IPV6) {
		/* version, class, label, length, next header, hops (the
		 * builtin: libbpf's offsetof is no constant to clang, and as an
		 * index it cost the verifier 940 instructions more) */
		__u8 fixed[__builtin_offsetof(struct ipv6hdr, saddr)];

		/* the addresses straight into pk: copied through a whole
		 * header, their bytes were spilled, 40 bytes of htb_egress's
		 * stack, which the deepest calls' 512 on 6.1 no longer had
		 * room for (docs/design.md, "Program size") */
		if (hdr_load(skb, off, fixed, sizeof(fixed)) ||
		    hdr_load(skb, off + sizeof(fixed), pk->addrs, sizeof(pk->addrs)))
			return;
		pk->family = 6;
		/* traffic class: the version's low nibble, then the next byte's high */
		pk->dscp = ((fixed[0] & 0xf) << 2) | (fixed[1] >> 6);
		nexthdr = fixed[__builtin_offsetof(struct ipv6hdr, nexthdr)];
		l4off = off + sizeof(struct ipv6hdr);
		/* A few extension headers; anything stranger gets no ports. */
		for (i = 0; i < HTB_V6_EXT_MAX; i++) {
			__u8 h[8];

			if (nexthdr != NEXTHDR_HOP && nexthdr != NEXTHDR_ROUTING &&
			    nexthdr != NEXTHDR_DEST && nexthdr != NEXTHDR_FRAGMENT &&
			    nexthdr != NEXTHDR_AUTH)
				break;
			if (hdr_load(skb, l4off, h, sizeof(h)))
				return;
			if (nexthdr == NEXTHDR_FRAGMENT) {
				if (((h[2] << 8) | h[3]) & 0xfff8)
					return;	/* not the first fragment */
				l4off += 8;
			} else if (nexthdr == NEXTHDR_AUTH) {
				l4off += (h[1] + 2) * 4;
			} else {
				l4off += (h[1] + 1) * 8;
			}
			nexthdr = h[0];
		}
	} else {
		return;
	}

	if (nexthdr == IPPROTO_TCP_ || nexthdr == IPPROTO_UDP_) {
		__be16 ports[2];

		if (hdr_load(skb, l4off, ports, sizeof(ports)))
			return;
		pk->l4proto = nexthdr;
		pk->sport = bpf_ntohs(ports[0]);
		pk->dport = bpf_ntohs(ports[1]);
		pk->has_ports = 1;
	}
}

/* The slot a classifier entry selects in generation gen; HTB_NO_CLASS (a
 * miss) when there is no entry or it does not match in that generation: a
 * reload writes the new generation's column beside the one in force, so
 * the flip switches classification and the tree in one word (docs/loader.md
 * "Reload"). */
static __always_inline __u32 cls_slot(const struct htb_cls_val *v, __u32 gen)
{
	return v ? v->slot[gen & 1] : HTB_NO_CLASS;
}

static __always_inline __u32 lookup_port(__u8 proto, __u8 dir, __u16 port,
					 __u32 gen)
{
	struct htb_port_key key = { .proto = proto, .dir = dir, .port = port };

	return cls_slot(bpf_map_lookup_elem(&cls_port, &key), gen);
}

/* The classifiers that need the packet's headers parsed. */
#define PARSE_SKIP (HTB_SKIP_DSCP | HTB_SKIP_DST4 | HTB_SKIP_SRC4 | \
		    HTB_SKIP_DST6 | HTB_SKIP_SRC6 | HTB_SKIP_PORT)

/* Precedence (docs/design.md, "Classification"): priority == leaf
 * classid, mark, DSCP, dst prefix, src prefix, ports (dport before sport,
 * protocol before any), cgroup. */
static __always_inline __u32 classify(struct __sk_buff *skb,
				      const struct htb_tree_conf *tc, __u32 gen)
{
	__u32 skip = tc->skip, nmasks = tc->nmasks, v;
	__u32 prio = skb->priority, mark = skb->mark;
	int i;

	if (!(skip & HTB_SKIP_PRIO) && (prio >> 16)) {
		const struct htb_cls_val *e = NULL;
		__u32 minor = prio & 0xffff;

		if (prio >> 16 == tc->prio_major)
			e = bpf_map_lookup_elem(&cls_minor, &minor);
		if (!e)
			e = bpf_map_lookup_elem(&cls_prio, &prio);
		v = cls_slot(e, gen);
		if (v != HTB_NO_CLASS)
			return v;
	}

	for (i = 0; i < HTB_MAX_MARK_MASKS; i++) {
		struct htb_mark_key mk;

		if (i >= nmasks)
			break;
		mk.mask = tc->mark_masks[i];
		mk.value = mark & mk.mask;
		v = cls_slot(bpf_map_lookup_elem(&cls_mark, &mk), gen);
		if (v != HTB_NO_CLASS)
			return v;
	}

	if ((skip & PARSE_SKIP) != PARSE_SKIP) {
		struct pkt pk = {};

		parse(skb, &pk);
		if (pk.family && !(skip & HTB_SKIP_DSCP)) {
			v = cls_slot(bpf_map_lookup_elem(&cls_dscp, &pk.dscp), gen);
			if (v != HTB_NO_CLASS)
				return v;
		}
		if (pk.family == 4) {
			struct htb_lpm4_key k4 = { .prefixlen = 32 };

			if (!(skip & HTB_SKIP_DST4)) {
				__builtin_memcpy(k4.addr, pk.daddr, 4);
				v = cls_slot(bpf_map_lookup_elem(&cls_dst4, &k4), gen);
				if (v != HTB_NO_CLASS)
					return v;
			}
			if (!(skip & HTB_SKIP_SRC4)) {
				__builtin_memcpy(k4.addr, pk.saddr, 4);
				v = cls_slot(bpf_map_lookup_elem(&cls_src4, &k4), gen);
				if (v != HTB_NO_CLASS)
					return v;
			}
		} else if (pk.family == 6) {
			struct htb_lpm6_key k6 = { .prefixlen = 128 };

			if (!(skip & HTB_SKIP_DST6)) {
				__builtin_memcpy(k6.addr, pk.daddr, 16);
				v = cls_slot(bpf_map_lookup_elem(&cls_dst6, &k6), gen);
				if (v != HTB_NO_CLASS)
					return v;
			}
			if (!(skip & HTB_SKIP_SRC6)) {
				__builtin_memcpy(k6.addr, pk.saddr, 16);
				v = cls_slot(bpf_map_lookup_elem(&cls_src6, &k6), gen);
				if (v != HTB_NO_CLASS)
					return v;
			}
		}
		if (pk.has_ports && !(skip & HTB_SKIP_PORT)) {
			v = lookup_port(pk.l4proto, HTB_PORT_DST, pk.dport, gen);
			if (v == HTB_NO_CLASS)
				v = lookup_port(0, HTB_PORT_DST, pk.dport, gen);
			if (v == HTB_NO_CLASS)
				v = lookup_port(pk.l4proto, HTB_PORT_SRC, pk.sport, gen);
			if (v == HTB_NO_CLASS)
				v = lookup_port(0, HTB_PORT_SRC, pk.sport, gen);
			if (v != HTB_NO_CLASS)
				return v;
		}
	}

	if (!(skip & HTB_SKIP_CGROUP)) {
		__u64 cg = bpf_skb_cgroup_id(skb);

		if (cg) {
			v = cls_slot(bpf_map_lookup_elem(&cls_cgroup, &cg), gen);
			if (v != HTB_NO_CLASS)
				return v;
		}
	}
	return tc->default_idx;
}

/*
 * Link control: ARP, and IPv6 neighbour discovery (ICMPv6 133-137 right
 * after the fixed header, as ND is sent). These pass unshaped and
 * uncharged: behind a full class they would wait up to its limit or be
 * dropped at it, neighbour resolution would stall, and every class to that
 * neighbour with it (docs/log.md, "2026-11-30: Link control in the
 * default class (scenario 5)", has what scenario 5 measured). fq keeps
 * its own queue for TC_PRIO_CONTROL packets for the same reason.
 */
static __always_inline int is_link_control(struct __sk_buff *skb)
{
	__u32 off;
	__u16 proto = l3_proto(skb, &off);
	__u8 nh_type[2];

	if (proto == ETH_P_ARP)
		return 1;
	if (proto != ETH_P_IPV6)
		return 0;
	/* next header (byte 6) and, if ICMPv6, the ICMPv6 type (byte 40) */
	if (hdr_load(skb, off + 6, &nh_type[0], 1) || nh_type[0] != IPPROTO_ICMPV6_ ||
	    hdr_load(skb, off + 40, &nh_type[1], 1))
		return 0;
	return nh_type[1] >= 133 && nh_type[1] <= 137;
}

/*
 * Whether the packet is ECN-capable (ECT(0), ECT(1) or already CE: the
 * ECN field of IPv4's TOS byte or IPv6's traffic class is nonzero), read
 * before the leaf's lock because CoDel's signal is decided under it and a
 * drop is the answer for a packet that cannot carry CE. Two bytes of the
 * network header; only for a leaf with AQM and ECN on.
 */
static __always_inline __u32 is_ect(struct __sk_buff *skb)
{
	__u32 off;
	__u16 proto = l3_proto(skb, &off);
	__u8 b[2];

	if ((proto != ETH_P_IP && proto != ETH_P_IPV6) ||
	    hdr_load(skb, off, b, sizeof(b)))
		return 0;
	if (proto == ETH_P_IP)
		return b[0] >> 4 == 4 && (b[1] & 3);
	return b[0] >> 4 == 6 && ((b[1] >> 4) & 3);	/* TC's low nibble is b[1]'s high */
}

#define AQM_ECN (HTB_CONF_AQM | HTB_CONF_ECN)

/* The conf of a valid leaf, or NULL. */
static __always_inline const struct htb_class_conf *
leaf_conf(const struct htb_env *env, __u32 idx)
{
	const struct htb_class_conf *c;

	if (idx == HTB_NO_CLASS)
		return NULL;
	c = env_conf(env, idx);
	if (!c || (c->flags & (HTB_CONF_VALID | HTB_CONF_LEAF)) !=
		  (HTB_CONF_VALID | HTB_CONF_LEAF))
		return NULL;
	return c;
}

/* A flow's first packet: its state, added outside the leaf's lock (a
 * helper may not run under it). Another CPU adding the same flow at the
 * same moment keeps its own entry (BPF_NOEXIST). */
static __always_inline void flow_add(__u32 idx, __u32 hash,
				     const struct htb_decision *d)
{
	struct htb_flow_key k = { .slot = idx, .hash = hash };
	struct htb_flow v = {
		.last_stamp = d->tstamp,
		.vfinish = d->vfinish,
	};

	bpf_map_update_elem(&flow_state, &k, &v, BPF_NOEXIST);
}

/* The departure time, with its clock said: the monotonic one. A plain
 * store keeps the skb's tstamp_type as it was, and only a local TCP
 * packet comes as MONO; a forwarded or UDP packet comes as 0 (realtime).
 * fq on 7.2 reads such a stamp as realtime: below year 2000 it logs
 * "fq: likely mono tstamp with tstamp_type 0" through net_ratelimit for
 * every packet and repairs the type itself (docs/log.md, "fq on 7.2
 * warns of htbctl's stamps"); a mono stamp also survives the crossing
 * into a peer's namespace as a delivery time, as TCP's does. The helper
 * takes only IPv4 and IPv6 (skb->protocol): another protocol keeps the
 * plain store, which is what 6.1's fq reads either way. */
static __always_inline void stamp_departure(struct __sk_buff *skb, __u64 t)
{
	if (skb->tstamp_type != BPF_SKB_TSTAMP_DELIVERY_MONO &&
	    !bpf_skb_set_tstamp(skb, t, BPF_SKB_TSTAMP_DELIVERY_MONO))
		return;
	skb->tstamp = t;
}

SEC("tc")
int htb_egress(struct __sk_buff *skb)
{
	const struct htb_class_conf *conf;
	const struct htb_tree_conf *tc;
	const struct htb_runtime *rt;
	struct htb_dev_stats *ds;
	struct htb_decision d;
	struct htb_params p;
	struct htb_env env;
	__u32 zero = 0, len, idx, hash;
	__u32 stop = bench_stop, given_hash = bench_hash;
	int verdict;

	if (given_hash == 1)
		bpf_set_hash(skb, 0x9e3779b9);
	else if (given_hash == 2)
		bpf_set_hash_invalid(skb);
	rt = bpf_map_lookup_elem(&runtime, &zero);
	if (!rt)
		return TC_ACT_OK;
	env.gen = rt->gen & 1;
	env.cap = rt->capacity;
	tc = bpf_map_lookup_elem(&tree_conf, &env.gen);
	if (!tc)
		return TC_ACT_OK;

	len = skb->wire_len;
	if (!len)
		len = skb->len;
	BENCH_STOP(1);

	/* fq's flow for a packet without a connected socket is this hash
	 * (include/htb/flowtag.h): the packet's own, computed once here and
	 * kept for fq, which would otherwise compute it itself. A packet that
	 * has one (a local socket's, a NIC's RSS hash, ours from an earlier
	 * hop of a veth) is read as it is, without the helper call: 5 ns (bench
	 * --only steps). Only a NIC's hash of the addresses alone (not the
	 * ports; recalc would redo it) makes a host's flows one flow here. */
	hash = skb->hash;
	if (!hash)
		hash = bpf_get_hash_recalc(skb);
	if (is_link_control(skb)) {
		ds = this_cpu_stats();
		if (ds) {
			ds->control_packets++;
			ds->control_bytes += len;
		}
		bpf_set_hash(skb, htb_flowtag_unshaped(hash, flowtag_bits));
		return TC_ACT_OK;
	}
	BENCH_STOP(2);
	idx = classify(skb, tc, env.gen);
	conf = leaf_conf(&env, idx);
	if (!conf && idx != tc->default_idx)
		conf = leaf_conf(&env, tc->default_idx);
	if (!conf)
		goto unshaped;
	bpf_set_hash(skb, htb_flowtag(hash, conf->path[0], flowtag_bits));
	BENCH_STOP(3);

	p.now = test_clock && rt->test_now_ns ? rt->test_now_ns : bpf_ktime_get_ns();
	if (stop == 4) {	/* the clock alone, and the stamp's write */
		stamp_departure(skb, p.now);
		return TC_ACT_OK;
	}
	p.horizon_ns = rt->horizon_ns ? rt->horizon_ns : HTB_DEFAULT_HORIZON_NS;
	p.hysteresis = rt->hysteresis;
	/* The generation a batch of bytes is marked with must be the tree's
	 * this packet uses (env.gen, read above): a reload that flipped in
	 * between is not this packet's. Read here, not kept from above: p
	 * then shares its stack with classification's, and the program stays
	 * within 6.1's 512 bytes for its deepest calls. */
	p.gen = rt->gen;
	if ((p.gen ^ env.gen) & 1)
		p.gen--;
	p.share = p.now < rt->share_until_ns;
	p.ect = (conf->flags & AQM_ECN) == AQM_ECN ? is_ect(skb) : 0;
	/* a flow of the class, as fq's: a local socket's hash (sk_txhash), a
	 * forwarded packet's own */
	p.flow_hash = conf->flags & HTB_CONF_FLOWS ? hash : 0;
	if (stop == 5) {	/* kept: the compiler may not drop p */
		skb->tstamp = p.now + p.ect + p.flow_hash + p.share;
		return TC_ACT_OK;
	}
	verdict = htb_schedule(&env, conf, &p, len, skb->tstamp, &d);
	if (d.stale && (ds = this_cpu_stats()))
		ds->stale_tstamps++;
	if (d.flow_new && (verdict == HTB_SEND || verdict == HTB_SEND_CE))
		flow_add(conf->path[0], p.flow_hash, &d);
	if (verdict == HTB_SEND_CE) {
		/* decided under the leaf's lock, applied outside it: a helper
		 * may not run while a lock is held */
		bpf_skb_ecn_set_ce(skb);
		verdict = HTB_SEND;
	}
	if (verdict == HTB_SEND) {
		stamp_departure(skb, d.tstamp);
		return TC_ACT_OK;
	}
	if (verdict == HTB_DROP) {
		ds = this_cpu_stats();
		if (ds)
			ds->drops++;
		return TC_ACT_SHOT;
	}
unshaped:
	ds = this_cpu_stats();
	if (ds) {
		ds->unclassified_packets++;
		ds->unclassified_bytes += len;
	}
	bpf_set_hash(skb, htb_flowtag_unshaped(hash, flowtag_bits));
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
