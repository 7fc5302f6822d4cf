/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for driving the real egress program (the skeleton of
 * bpf/htbctl.bpf.c) with BPF_PROG_TEST_RUN: load it with small maps, fill
 * the maps through src/loader/maps.h (the loader's own writes), build
 * Ethernet/IPv4/IPv6/TCP/UDP packets, run them with a test clock.
 * Shared by tests/bpf/test_*.c and bench/bench_prog.c.
 */
#ifndef HTBCTL_TESTS_PROG_UTIL_H
#define HTBCTL_TESTS_PROG_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "htb/types.h"
#include "loader/maps.h"
#include "loader/maps_fill.h"
#include "htbctl.skel.h"

#define PU_MAXC		64
#define PU_MS		1000000ull
#define PU_SEC		1000000000ull
#define PU_T0		(1000 * PU_SEC)		/* test clock start */
#define PU_MBIT(x)	((__u64)(x) * 1000000 / 8)
#define PU_GBIT(x)	((__u64)(x) * 1000000000 / 8)
/* Class ids: 1:1, 1:2, ... 1:ffff, then 2:1 ... (the bench has 1e6). */
#define PU_CLASSID(idx)	((((idx) / 0xffffu + 1) << 16) | ((idx) % 0xffffu + 1))

struct fx {
	struct htbctl_bpf *skel;
	struct maps maps;		/* the loader's view of the maps */
	int prog, conf, state, rt, tree, dev_stats;
	__u32 cap;
	__u32 gen;
	struct htb_runtime runtime;
	struct htb_tree_conf treeconf;
};

static inline int fx_loaded(struct fx *f)
{
	maps_from_skel(&f->maps, f->skel);
	f->prog = bpf_program__fd(f->skel->progs.htb_egress);
	f->conf = f->maps.fd[M_CONF];
	f->state = f->maps.fd[M_STATE];
	f->rt = f->maps.fd[M_RUNTIME];
	f->tree = f->maps.fd[M_TREE];
	f->dev_stats = f->maps.fd[M_DEVSTATS];
	f->runtime.capacity = f->cap;
	f->runtime.test_now_ns = PU_T0;
	f->treeconf.default_idx = HTB_NO_CLASS;
	f->treeconf.prio_major = 1;	/* PU_CLASSID's first major */
	maps_put_tree(&f->maps, 0, &f->treeconf);
	maps_put_tree(&f->maps, 1, &f->treeconf);
	return maps_init_minor(&f->maps) ?: maps_set_runtime(&f->maps, &f->runtime);
}

/* Size the maps for cap classes (cls_prio too), both generations. */
static inline void fx_size(struct fx *f)
{
	bpf_map__set_max_entries(f->skel->maps.class_state, f->cap);
	bpf_map__set_max_entries(f->skel->maps.class_share, f->cap);
	bpf_map__set_max_entries(f->skel->maps.class_batch, f->cap);
	bpf_map__set_max_entries(f->skel->maps.class_conf, 2 * f->cap);
	if (f->cap > PU_MAXC) {
		bpf_map__set_max_entries(f->skel->maps.cls_prio, f->cap);
		/* PU_CLASSID's minors run 1..cap */
		bpf_map__set_max_entries(f->skel->maps.cls_minor,
					 f->cap < 0xffff ? f->cap + 1 : 0x10000);
	}
}

/* The bench's variants of the program (its load-time switches). */
#define PU_NO_LOCK	1	/* bench_no_lock: without bpf_spin_locks */
#define PU_NO_BATCH	2	/* no_batch: every charge at once */
#define PU_HASH_SET	4	/* bench_hash 1: the packet comes with a hash */
#define PU_HASH_NONE	8	/* bench_hash 2: without one, every run */
#define PU_SHIPPED_CLOCK 16	/* test_clock off: the kernel's clock only, as loaded */
#define PU_STOP(n)	((n) << 8)	/* bench_stop n: the program ends after step n */

/* Open and load the program (the skeleton) with cap class slots (0:
 * PU_MAXC); variant: PU_NO_*, PU_HASH_* switches. Returns 0 or -errno. */
static inline int fx_open_variant(struct fx *f, __u32 cap, int variant)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->cap = cap ? cap : PU_MAXC;
	f->skel = htbctl_bpf__open();
	if (!f->skel)
		return -errno;
	f->skel->rodata->bench_no_lock = !!(variant & PU_NO_LOCK);
	f->skel->rodata->no_batch = !!(variant & PU_NO_BATCH);
	f->skel->rodata->bench_hash = variant & PU_HASH_SET ? 1 : variant & PU_HASH_NONE ? 2 : 0;
	/* runtime.test_now_ns, when set; the bench measures the shipped clock */
	f->skel->rodata->test_clock = !(variant & PU_SHIPPED_CLOCK);
	f->skel->rodata->bench_stop = (__u32)variant >> 8;
	fx_size(f);
	err = htbctl_bpf__load(f->skel);
	return err ? err : fx_loaded(f);
}

static inline int fx_open(struct fx *f, __u32 cap)
{
	return fx_open_variant(f, cap, 0);
}

static inline void fx_close(struct fx *f)
{
	htbctl_bpf__destroy(f->skel);
	f->skel = NULL;
}

static inline int fx_set_runtime(struct fx *f)
{
	return maps_set_runtime(&f->maps, &f->runtime);
}

static inline int fx_clock(struct fx *f, __u64 now)
{
	f->runtime.test_now_ns = now;
	return fx_set_runtime(f);
}

static inline int fx_put_tree(struct fx *f)
{
	return maps_put_tree(&f->maps, f->gen, &f->treeconf);
}

/* Class idx under parent (HTB_NO_CLASS: top level; a parent is written
 * before its children), written to generation f->gen with fresh state as
 * of the test clock; its classid (PU_CLASSID) goes into cls_prio. */
static inline int fx_class_p(struct fx *f, __u32 idx, __u32 parent,
			     struct htb_class_params *p)
{
	struct htb_class_conf c, pc;
	__u32 key, cid = PU_CLASSID(idx);
	int err = 0;

	p->path[0] = idx;
	p->depth = 1;
	if (parent != HTB_NO_CLASS) {
		key = f->gen * f->cap + parent;
		if (bpf_map_lookup_elem(f->conf, &key, &pc))
			return -errno;
		for (__u32 i = 0; i < pc.depth && p->depth < HTB_MAX_DEPTH; i++)
			p->path[p->depth++] = pc.path[i];
		if (pc.flags & HTB_CONF_LEAF) {
			pc.flags &= ~(HTB_CONF_LEAF | HTB_CONF_CARRY);
			err = maps_put_conf(&f->maps, f->gen, f->cap, &parent, &pc, 1);
		}
	}
	p->classid = cid;
	p->leaf = true;
	if (!err)
		err = htb_conf_from_params(p, &c);
	if (!err) {	/* the path carry, as plan_build sets it */
		__u32 lin[HTB_MAX_DEPTH] = { 0 };

		for (__u32 k = 1; k < p->depth && !err; k++) {
			key = f->gen * f->cap + p->path[k];
			if (bpf_map_lookup_elem(f->conf, &key, &pc))
				err = -errno;
			lin[k - 1] = htb_conf_carry_lin(&pc);
		}
		htb_conf_carry(&c, lin, p->depth - 1);
	}
	if (!err)
		err = maps_put_conf(&f->maps, f->gen, f->cap, &idx, &c, 1);
	if (!err)
		err = maps_init_state(&f->maps, &idx, &c, 1,
				      f->runtime.test_now_ns ?: htb_clock_ns());
	if (!err) {
		struct ent e = { .val = { idx, idx } };

		memcpy(e.key, &cid, sizeof(cid));
		err = maps_put_cls(&f->maps, HTB_CLS_PRIO, &e, 1);
	}
	return err;
}

/* A top-level leaf at rate with CoDel on (defaults: 5 ms / 100 ms), ecn
 * as given, a 10 s limit so only CoDel acts. */
static inline int fx_codel_leaf(struct fx *f, __u32 idx, __u64 rate, bool ecn)
{
	struct htb_class_params p = {
		.rate_Bps = rate, .burst = 1500, .cburst = 1500,
		.limit_ns = 10 * PU_SEC, .aqm = true, .ecn = ecn,
	};

	return fx_class_p(f, idx, HTB_NO_CLASS, &p);
}

static inline int fx_class(struct fx *f, __u32 idx, __u32 parent, __u64 rate,
			   __u64 ceil, __u64 burst, __u64 cburst, __u64 limit_ns)
{
	struct htb_class_params p = {
		.rate_Bps = rate, .ceil_Bps = ceil, .burst = burst,
		.cburst = cburst, .limit_ns = limit_ns,
	};

	return fx_class_p(f, idx, parent, &p);
}

static inline struct htb_class_state fx_state(struct fx *f, __u32 idx)
{
	struct htb_class_state st;

	memset(&st, 0, sizeof(st));
	bpf_map_lookup_elem(f->state, &idx, &st);
	return st;
}

/* Class idx's batch on CPU cpu (struct htb_class_batch); zero if none. */
static inline struct htb_class_batch fx_batch(struct fx *f, __u32 idx, int cpu)
{
	int ncpu = libbpf_num_possible_cpus();
	struct htb_class_batch b, *all = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*all)) : NULL;

	memset(&b, 0, sizeof(b));
	if (all && cpu < ncpu && !bpf_map_lookup_elem(f->maps.fd[M_BATCH], &idx, all))
		b = all[cpu];
	free(all);
	return b;
}

/* CPU cpu's path carry (its dev_stats entry) */
static inline struct htb_path_carry fx_carry(struct fx *f, int cpu)
{
	int ncpu = libbpf_num_possible_cpus();
	struct htb_dev_stats *all = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*all)) : NULL;
	struct htb_path_carry cy = { 0 };
	__u32 zero = 0;

	if (all && cpu < ncpu && !bpf_map_lookup_elem(f->maps.fd[M_DEVSTATS], &zero, all))
		cy = all[cpu].carry;
	free(all);
	return cy;
}

static inline struct htb_class_conf fx_conf(struct fx *f, __u32 idx);

/* What every CPU's path carry holds for ancestor idx (bytes, packets):
 * charged, in no state or batch yet, and left out of fx_view as of show. */
static inline struct htb_path_carry fx_carried(struct fx *f, __u32 idx)
{
	int ncpu = libbpf_num_possible_cpus();
	struct htb_path_carry sum = { 0 };

	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct htb_path_carry cy = fx_carry(f, cpu);
		struct htb_class_conf leaf;

		if (!cy.packets)
			continue;
		leaf = fx_conf(f, cy.leaf);
		for (__u32 k = 1; k < leaf.depth && k < HTB_MAX_DEPTH; k++)
			if (leaf.path[k] == idx) {
				sum.bytes += cy.bytes;
				sum.packets += cy.packets;
			}
	}
	return sum;
}

/* Class idx as `htbctl show` sees it: its applied state with every CPU's
 * batch in it (maps_read_state; not the path carries), by the conf of
 * the generation in force. */
static inline struct htb_class_state fx_view(struct fx *f, __u32 idx)
{
	struct htb_class_conf c[PU_MAXC];
	struct htb_class_state st[PU_MAXC];
	__u32 n = f->cap < PU_MAXC ? f->cap : PU_MAXC;

	memset(st, 0, sizeof(st));
	memset(c, 0, sizeof(c));
	if (idx >= n)
		return st[0];
	for (__u32 i = 0; i < n; i++) {
		__u32 key = (f->runtime.gen & 1) * f->cap + i;

		bpf_map_lookup_elem(f->conf, &key, &c[i]);
	}
	maps_read_state(&f->maps, c, n, st);
	return st[idx];
}

static inline struct htb_class_conf fx_conf(struct fx *f, __u32 idx)
{
	struct htb_class_conf c;
	__u32 key = f->gen * f->cap + idx;

	memset(&c, 0, sizeof(c));
	bpf_map_lookup_elem(f->conf, &key, &c);
	return c;
}

static inline struct htb_dev_stats fx_dev_stats(struct fx *f)
{
	int ncpu = libbpf_num_possible_cpus();
	struct htb_dev_stats *v = calloc(ncpu, sizeof(*v)), sum = { 0 };
	__u32 zero = 0;

	if (v && !bpf_map_lookup_elem(f->dev_stats, &zero, v))
		for (int i = 0; i < ncpu; i++) {
			sum.unclassified_packets += v[i].unclassified_packets;
			sum.unclassified_bytes += v[i].unclassified_bytes;
			sum.stale_tstamps += v[i].stale_tstamps;
			sum.drops += v[i].drops;
			sum.control_packets += v[i].control_packets;
			sum.control_bytes += v[i].control_bytes;
		}
	free(v);
	return sum;
}

/* ---- packets ---- */

struct pkt {
	__u8 data[1600];
	__u32 len;
};

struct pkt_spec {
	int v6;
	__u8 proto;		/* IPPROTO_TCP, IPPROTO_UDP, or other */
	const char *src, *dst;	/* addresses as text */
	__u16 sport, dport;
	__u32 payload;		/* bytes after the L4 header */
	int frag_later;		/* a non-first fragment */
	int v6_ext;		/* IPv6: prepend a hop-by-hop header */
};

static inline void pkt_build(struct pkt *p, const struct pkt_spec *s)
{
	__u8 *d = p->data;
	__u32 off = 14, l4len, iplen;

	memset(p, 0, sizeof(*p));
	memset(d, 0x02, 12);	/* MACs */
	l4len = (s->proto == IPPROTO_TCP ? 20 : 8) + s->payload;
	if (!s->v6) {
		d[12] = 0x08; d[13] = 0x00;
		iplen = 20 + l4len;
		d[off] = 0x45;
		d[off + 2] = iplen >> 8; d[off + 3] = iplen & 0xff;
		if (s->frag_later) {
			d[off + 6] = 0x00; d[off + 7] = 0xb9;	/* offset 185*8 */
		}
		d[off + 8] = 64;
		d[off + 9] = s->proto;
		inet_pton(AF_INET, s->src, d + off + 12);
		inet_pton(AF_INET, s->dst, d + off + 16);
		off += 20;
	} else {
		__u8 nh = s->proto;
		__u32 ext = (s->v6_ext ? 8 : 0) + (s->frag_later ? 8 : 0);

		d[12] = 0x86; d[13] = 0xdd;
		d[off] = 0x60;
		d[off + 4] = (l4len + ext) >> 8; d[off + 5] = (l4len + ext) & 0xff;
		d[off + 7] = 64;
		inet_pton(AF_INET6, s->src, d + off + 8);
		inet_pton(AF_INET6, s->dst, d + off + 24);
		if (s->v6_ext)
			d[off + 6] = 0;		/* hop-by-hop first */
		else if (s->frag_later)
			d[off + 6] = 44;
		else
			d[off + 6] = nh;
		off += 40;
		if (s->v6_ext) {
			d[off] = s->frag_later ? 44 : nh;
			d[off + 1] = 0;		/* 8 bytes */
			d[off + 2] = 1;		/* PadN */
			d[off + 3] = 4;
			off += 8;
		}
		if (s->frag_later) {
			d[off] = nh;
			d[off + 2] = 0x05; d[off + 3] = 0xc8;	/* offset 185*8 */
			off += 8;
		}
	}
	if (s->proto == IPPROTO_TCP || s->proto == IPPROTO_UDP) {
		d[off] = s->sport >> 8; d[off + 1] = s->sport & 0xff;
		d[off + 2] = s->dport >> 8; d[off + 3] = s->dport & 0xff;
		if (s->proto == IPPROTO_TCP)
			d[off + 12] = 0x50;
		else {
			d[off + 4] = (8 + s->payload) >> 8;
			d[off + 5] = (8 + s->payload) & 0xff;
		}
	}
	p->len = off + l4len;
}

/* The DS field of a built packet (IPv4 TOS byte, IPv6 traffic class),
 * upper six bits: what `match = dscp` reads. */
static inline void pkt_set_dscp(struct pkt *p, int v6, unsigned dscp)
{
	if (!v6) {
		p->data[15] = (__u8)(dscp << 2);
		return;
	}
	p->data[14] = (__u8)(0x60 | dscp >> 2);			/* version, TC high nibble */
	p->data[15] = (__u8)((p->data[15] & 0x3f) | (dscp & 3) << 6);	/* TC low nibble */
}

/* The ECN field of a built packet (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE),
 * as the program would see it in data (a packet or run_out.head). */
static inline unsigned pkt_ecn(const __u8 *data, int v6)
{
	return v6 ? (data[15] >> 4) & 3 : data[15] & 3;
}

/* The one's complement sum of the IPv4 header (14..33): 0xffff when its
 * checksum is right. */
static inline __u16 pkt_ip4_sum(const __u8 *data)
{
	__u32 sum = 0;

	for (int i = 14; i < 34; i += 2)
		sum += (__u32)data[i] << 8 | data[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Set the ECN field; an IPv4 header gets its checksum (pkt_build leaves
 * it 0) so a CE mark's incremental update can be checked. */
static inline void pkt_set_ecn(struct pkt *p, int v6, unsigned ecn)
{
	__u16 c;

	if (v6) {
		p->data[15] = (__u8)((p->data[15] & ~0x30) | (ecn & 3) << 4);
		return;
	}
	p->data[15] = (__u8)((p->data[15] & ~3) | (ecn & 3));
	p->data[24] = p->data[25] = 0;
	c = (__u16)~pkt_ip4_sum(p->data);
	p->data[24] = c >> 8;
	p->data[25] = c & 0xff;
}

/* A plain IPv4 UDP packet of total (Ethernet) length len. */
static inline void pkt_udp4(struct pkt *p, __u32 len)
{
	struct pkt_spec s = {
		.proto = IPPROTO_UDP, .src = "198.18.0.1", .dst = "198.18.1.1",
		.sport = 5000, .dport = 6000, .payload = len - 42,
	};

	pkt_build(p, &s);
}

struct run_in {
	__u32 priority;
	__u32 mark;
	__u64 tstamp;
	__u32 wire_len;
	__u32 repeat;
};

struct run_out {
	int retval;		/* TC_ACT_* */
	__u64 tstamp;
	__u32 wire_len;
	__u32 duration;		/* ns per run, averaged over repeat */
	__u8 head[64];		/* the packet as the program left it (CE marks) */
};

static inline int fx_run(struct fx *f, const struct pkt *p,
			 const struct run_in *in, struct run_out *out)
{
	struct __sk_buff ctx_in, ctx_out;
	__u8 data_out[1600];
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = p->data, .data_size_in = p->len,
		.data_out = data_out, .data_size_out = sizeof(data_out),
		.ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in),
		.ctx_out = &ctx_out, .ctx_size_out = sizeof(ctx_out),
		.repeat = in ? in->repeat : 0);
	int err;

	memset(&ctx_in, 0, sizeof(ctx_in));
	memset(&ctx_out, 0, sizeof(ctx_out));
	if (in) {
		ctx_in.priority = in->priority;
		ctx_in.mark = in->mark;
		ctx_in.tstamp = in->tstamp;
		ctx_in.wire_len = in->wire_len;
	}
	err = bpf_prog_test_run_opts(f->prog, &o);
	if (err)
		return -errno;
	if (out) {
		out->retval = o.retval;
		out->tstamp = ctx_out.tstamp;
		out->wire_len = ctx_out.wire_len;
		out->duration = o.duration;
		memcpy(out->head, data_out, sizeof(out->head));
	}
	return 0;
}

/* One packet of len bytes to the leaf idx (by skb->priority). */
static inline struct run_out fx_send(struct fx *f, __u32 idx, __u32 len)
{
	struct run_in in = { .priority = PU_CLASSID(idx) };
	struct run_out out = { .retval = -1 };
	struct pkt p;

	pkt_udp4(&p, len > 1500 ? 1500 : len);
	if (len > 1500)
		in.wire_len = len;	/* a GSO packet */
	fx_run(f, &p, &in, &out);
	return out;
}

#define TC_ACT_OK_	0
#define TC_ACT_SHOT_	2

/* ---- two CPUs charging one tree at once ---- */

#include <pthread.h>
#include <sched.h>

struct pu_worker {
	struct fx *f;
	int cpu;
	__u32 leaf;
	long n;
	int err;
};

/* Pins the calling thread to cpu; 0 or -errno. */
static inline int pu_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* n 1000-byte UDP packets with skb->priority prio through f's program,
 * in runs of up to 100,000; 0, or -errno / -EPROTO for one not sent. */
static inline int pu_run_n(struct fx *f, __u32 prio, long n)
{
	struct run_in in = { .priority = prio };
	struct pkt p;
	int err = 0;

	pkt_udp4(&p, 1000);
	for (long done = 0; !err && done < n; done += in.repeat) {
		struct run_out o;

		in.repeat = n - done < 100000 ? n - done : 100000;
		err = fx_run(f, &p, &in, &o);
		if (!err && o.retval != TC_ACT_OK_)
			err = -EPROTO;
	}
	return err;
}

static inline void *pu_worker_run(void *arg)
{
	struct pu_worker *w = arg;

	w->err = pu_pin(w->cpu);
	if (!w->err)
		w->err = pu_run_n(w->f, PU_CLASSID(w->leaf), w->n);
	return NULL;
}

/* Off by how many ns (in 2^-shift units, exactly) the bucket moved from
 * what the charges add up to: with caps out of reach,
 *	((tok0 - tokf) + (t_cf - t_c0)) << shift + carryf - carry0
 *	== charged packets * len * mult. */
static inline double pu_bucket_error(__s64 tok0, __s64 tokf, __u64 t0, __u64 tf,
				     __u64 c0, __u64 cf,
				     const struct htb_ratecfg *r, __u64 npk,
				     __u32 len)
{
	__int128 lhs = (__int128)(tok0 - tokf) + (__int128)(tf - t0);
	__int128 want = (__int128)npk * len * r->mult;

	lhs = lhs * ((__int128)1 << r->shift) + (__int128)cf - (__int128)c0;
	return (double)(lhs - want) / (double)((__int128)1 << r->shift);
}

struct pu_2cpu {
	struct htb_class_state s0[4], sf[4];	/* applied state, before and after */
	struct htb_class_state vf[4];	/* after, with every CPU's batch (fx_view)
					 * and, for the parent and root, carry */
	__u32 pending_max;		/* most packets in one CPU's batch */
	struct htb_class_conf c[4];
	long n;			/* packets per CPU */
	__u32 len;
	long long lost_parent;	/* bytes missing from the shared classes */
	long long lost_root;
	double worst_ns;	/* largest token arithmetic error, any bucket */
	int err;
};

/*
 * Root(100G) -> parent(40G, ceil 100G) -> leaves 2 and 3 (10G, ceil 100G),
 * buffers of 1e6 s (caps out of reach), buckets starting at 0, real clock;
 * CPU 0 sends n packets of 1000 bytes to leaf 2, CPU 1 to leaf 3, at once;
 * or (one_leaf) both to leaf 2, every class of its path at 1 Tbit/s, more
 * than two CPUs send, so it lends: its packets skip its lock.
 * The invariant checked (worst_ns): each bucket's applied state moved by
 * exactly the costs of the packets applied to it (sf's packets); what is
 * not applied is in the CPUs' batches, and with them (vf) every byte and
 * packet is counted.
 */
static inline int pu_two_cpus_on(struct fx *f, long n, int one_leaf, struct pu_2cpu *r)
{
	const __s64 huge = 1000000ll * PU_SEC;
	const __u64 huge_s = huge / PU_SEC;
	struct htb_class_params par = { .limit_ns = 50 * PU_SEC };
	struct pu_worker w[2] = { { f, 0, 2, n, 0 }, { f, 1, one_leaf ? 2 : 3, n, 0 } };
	const __u64 sib[4] = { PU_GBIT(100), PU_GBIT(40), PU_GBIT(10), PU_GBIT(10) };
	const __u64 one[4] = { PU_GBIT(1000), PU_GBIT(1000), PU_GBIT(1000), PU_GBIT(10) };
	const __u64 *rates = one_leaf ? one : sib;
	const __u32 parents[4] = { HTB_NO_CLASS, 0, 1, 1 };
	pthread_t th[2];
	__u64 now;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->len = 1000;
	f->runtime.test_now_ns = 0;
	if ((r->err = fx_set_runtime(f)))
		return r->err;
	par.ceil_Bps = rates[0];
	par.cburst = huge_s * par.ceil_Bps;
	for (__u32 i = 0; i < 4; i++) {
		par.rate_Bps = rates[i];
		par.burst = huge_s * par.rate_Bps;
		if ((r->err = fx_class_p(f, i, parents[i], &par)))
			return r->err;
	}
	now = htb_clock_ns();
	for (__u32 i = 0; i < 4; i++) {
		struct htb_class_state st = { .mode = HTB_MODE_CAN_SEND, .t_c = now };

		if (bpf_map_update_elem(f->state, &i, &st, BPF_ANY))
			return r->err = -errno;
		r->s0[i] = fx_state(f, i);
		r->c[i] = fx_conf(f, i);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, pu_worker_run, &w[i]);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		if (w[i].err)
			r->err = w[i].err;
	}
	for (__u32 i = 0; i < 4; i++) {
		struct htb_class_state *a = &r->s0[i], *b = &r->sf[i];
		double e1, e2;

		*b = fx_state(f, i);
		e1 = pu_bucket_error(a->tokens, b->tokens, a->t_c, b->t_c, a->rcarry,
				     b->rcarry, &r->c[i].rate, b->packets - b->borrows,
				     r->len);
		e2 = pu_bucket_error(a->ctokens, b->ctokens, a->t_c, b->t_c, a->ccarry,
				     b->ccarry, &r->c[i].ceil, b->packets, r->len);
		if (e1 < 0)
			e1 = -e1;
		if (e2 < 0)
			e2 = -e2;
		if (e1 > r->worst_ns)
			r->worst_ns = e1;
		if (e2 > r->worst_ns)
			r->worst_ns = e2;
	}
	for (__u32 i = 0; i < 4; i++) {
		struct htb_path_carry cy = fx_carried(f, i);

		r->vf[i] = fx_view(f, i);
		r->vf[i].bytes += cy.bytes;
		r->vf[i].packets += cy.packets;
		for (int cpu = 0; cpu < 2; cpu++) {
			__u32 q = fx_batch(f, i, cpu).packets;

			r->pending_max = q > r->pending_max ? q : r->pending_max;
		}
	}
	r->lost_parent = 2LL * n * r->len - (long long)r->vf[1].bytes;
	r->lost_root = 2LL * n * r->len - (long long)r->vf[0].bytes;
	return r->err;
}

static inline int pu_two_cpus(struct fx *f, long n, struct pu_2cpu *r)
{
	return pu_two_cpus_on(f, n, 0, r);
}

#endif
