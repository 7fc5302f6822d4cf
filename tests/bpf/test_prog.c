// SPDX-License-Identifier: GPL-2.0
/*
 * The real egress program (bpf/htbctl.bpf.c via its skeleton) in the
 * kernel, driven with BPF_PROG_TEST_RUN on crafted packets and the test
 * clock (runtime.test_now_ns). Needs root.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <bpf/btf.h>

#include "prog_util.h"
#include "common/bigmem.h"
#include "htb/sched.h"
#include "share/share.h"
#include "daemon/collect.h"

#define T0	PU_T0
#define MS	PU_MS
#define SEC	PU_SEC
#define MBIT	PU_MBIT
#define GBIT	PU_GBIT

typedef unsigned __int128 u128;

static struct fx F;

static void setup(void)
{
	int err = fx_open(&F, 0);

	cr_assert_eq(err, 0, "loading the program: %s (needs root)", strerror(-err));
}

static void teardown(void)
{
	if (F.skel)
		fx_close(&F);
}

TestSuite(prog, .init = setup, .fini = teardown);

static __u64 send_ok(__u32 idx, __u32 len)
{
	struct run_out o = fx_send(&F, idx, len);

	cr_assert_eq(o.retval, TC_ACT_OK_, "packet to class %u not sent", idx);
	return o.tstamp;
}

/* ---------------------------------------------------------------- */

Test(prog, loads_and_state_btf_names_fields)
{
	struct btf *btf = bpf_object__btf(F.skel->obj);
	const char *want[] = { "tokens", "ctokens", "t_c", "mode", "lock",
			       "codel_count", "codel_lastcount", "codel_first_above",
			       "codel_drop_next", "codel_dropping", "ecn_marks",
			       "aqm_drops" };
	const struct btf_member *m;
	const struct btf_type *t;
	__s32 id;

	cr_assert_not_null(btf);
	id = btf__find_by_name_kind(btf, "htb_class_state", BTF_KIND_STRUCT);
	cr_assert_gt(id, 0);
	t = btf__type_by_id(btf, id);
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		bool found = false;

		m = btf_members(t);
		for (int i = 0; i < btf_vlen(t); i++, m++)
			found |= !strcmp(btf__name_by_offset(btf, m->name_off), want[w]);
		cr_expect(found, "class_state BTF lacks %s", want[w]);
	}
	cr_expect_eq(bpf_map__value_size(F.skel->maps.class_state),
		     sizeof(struct htb_class_state));
}

/* The verifier's work stays far from its 1,000,000-instruction limit (the
 * per-class steps are global subprograms; inlined they came close to it:
 * docs/log.md, "2026-12-01: Verifier counts, and the steps inlined", has
 * the counts). */
Test(prog, verifier_budget)
{
	static char log[1 << 16];
	struct htbctl_bpf *s = htbctl_bpf__open();
	long processed = -1;
	char *at;

	cr_assert_not_null(s);
	bpf_program__set_log_buf(s->progs.htb_egress, log, sizeof(log));
	bpf_program__set_log_level(s->progs.htb_egress, 4);	/* stats only */
	cr_assert_eq(htbctl_bpf__load(s), 0);
	at = strstr(log, "processed ");
	if (at)
		processed = strtol(at + 10, NULL, 10);
	htbctl_bpf__destroy(s);
	/* each function's stack, main first: on 6.1 the deepest chain of
	 * calls must stay within 512 bytes (the vm tier loads it there) */
	cr_log_info("verifier: %ld instructions processed, %.40s", processed,
		    strstr(log, "stack depth") ? strstr(log, "stack depth") : "");
	cr_assert_gt(processed, 0);
	cr_expect_lt(processed, 100000);
}

/*
 * One class at a fixed clock: packet n leaves at
 *	T0 + max(0, cum(n) - buffer),  cum(n) = floor(n * len * mult >> shift)
 * computed here independently of the program's per-packet carry, and
 * within 1 ns (+2^-30) of the ideal n * len / rate - burst / rate.
 */
static void one_class(__u64 rate, __u32 len, __u64 burst, int n)
{
	struct htb_class_conf c;
	__u64 buffer;

	fx_close(&F);
	cr_assert_eq(fx_open(&F, 0), 0);
	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, rate, 0, burst, burst, 1000 * SEC), 0);
	c = fx_conf(&F, 0);
	buffer = c.buffer;
	for (int i = 0; i < n; i++) {
		u128 cum = ((u128)i * len * c.rate.mult) >> c.rate.shift;
		__u64 want = T0 + (cum > buffer ? (__u64)(cum - buffer) : 0);
		double ideal = (double)i * len * 1e9 / rate - (double)burst * 1e9 / rate;
		__u64 T = send_ok(0, len);

		cr_assert_eq(T, want, "rate %llu len %u packet %d: %llu, want %llu",
			     (unsigned long long)rate, len, i,
			     (unsigned long long)(T - T0), (unsigned long long)(want - T0));
		if (ideal > 2)
			cr_assert(fabs((double)(T - T0) - ideal) <= 1 + ideal / (1 << 30) + 1,
				  "rate %llu len %u packet %d: %llu vs ideal %.2f",
				  (unsigned long long)rate, len, i,
				  (unsigned long long)(T - T0), ideal);
	}
}

Test(prog, one_class_1kbit)
{
	one_class(125, 125, 250, 40);		/* 1 s per packet */
	one_class(125, 1000, 1000, 6);		/* 8 s per packet */
}

Test(prog, one_class_10mbit) { one_class(MBIT(10), 1500, 15000, 200); }
Test(prog, one_class_1gbit) { one_class(GBIT(1), 1500, 15000, 200); one_class(GBIT(1), 64, 15000, 500); }
Test(prog, one_class_10gbit) { one_class(GBIT(10), 1500, 64000, 300); one_class(GBIT(10), 64, 3000, 1000); }
Test(prog, one_class_100gbit) { one_class(GBIT(100), 64, 3000, 1000); one_class(GBIT(100), 9000, 64000, 200); }
Test(prog, one_class_400gbit) { one_class(GBIT(400), 64, 3000, 2000); one_class(GBIT(400), 1500, 64000, 300); one_class(GBIT(400), 65536, 200000, 100); }

Test(prog, burst_credit_after_idle_and_cap)
{
	int i;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, SEC), 0);
	for (i = 0; i < 11; i++)
		cr_expect_eq(send_ok(0, 1500), T0, "packet %d", i);
	for (i = 1; i <= 5; i++)
		cr_expect_eq(send_ok(0, 1500), T0 + i * 1200000ull);
	/* idle 10 s: credit back up to the burst, not beyond */
	fx_clock(&F, T0 + 10 * SEC);
	for (i = 0; i < 11; i++)
		cr_expect_eq(send_ok(0, 1500), T0 + 10 * SEC, "after idle %d", i);
	cr_expect_eq(send_ok(0, 1500), T0 + 10 * SEC + 1200000);
}

Test(prog, ceil_caps_a_borrowing_class)
{
	__u64 prev = 0, T;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC), 0);
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(1), MBIT(10), 1500, 1500, SEC), 0);
	for (int i = 0; i < 100; i++) {
		T = send_ok(1, 1500);
		if (i >= 2)
			cr_expect_eq(T - prev, 1200000, "packet %d", i);
		prev = T;
	}
	/* its own 1 Mbit pays whenever its bucket is ready by the stamp:
	 * 2 packets of burst, then one per 12 ms of the 118.8 ms */
	cr_expect_eq(fx_view(&F, 1).lends, 11);
	cr_expect_eq(fx_view(&F, 1).borrows, 89);
	cr_expect_eq(fx_view(&F, 0).lends, 89);
	cr_expect_eq(fx_view(&F, 1).mode, HTB_MODE_CANT_SEND);
}

/* The sharing loop's limit (class_share) while its lease runs: 1 Mbit/s
 * own + 4 borrowed, one packet per 2.4 ms; with nothing to borrow its own
 * 12 ms; after the lease the parent's 100 Mbit/s pace. */
Test(prog, borrow_limit_from_the_sharing_loop)
{
	struct htb_class_share sh = {
		.borrow_l2t = share_word(MBIT(4)), .bbuffer = 2 * MS, .borrow_Bps = MBIT(4),
	};
	__u64 T = 0, T1;
	__u32 key = 1;
	int i;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC), 0);
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(1), MBIT(100), 1500, 1500, 10 * SEC), 0);
	cr_assert_eq(bpf_map_update_elem(F.maps.fd[M_SHARE], &key, &sh, 0), 0);
	F.runtime.share_until_ns = T0 + 100 * SEC;
	cr_assert_eq(fx_set_runtime(&F), 0);
	for (i = 0; i < 1000; i++)
		T = send_ok(1, 1500);
	cr_expect(fabs((double)(T - T0) / (1000 * 2400000.0) - 1) < 0.01,
		  "%.3f ms per packet", (T - T0) / 1000 / 1e6);
	sh.borrow_l2t = HTB_SHARE_ON;
	cr_assert_eq(bpf_map_update_elem(F.maps.fd[M_SHARE], &key, &sh, 0), 0);
	T1 = send_ok(1, 1500);
	for (i = 0; i < 50; i++)
		T = send_ok(1, 1500);
	cr_expect(fabs((double)(T - T1) / (50 * 12000000.0) - 1) < 0.01,
		  "%.3f ms per packet", (T - T1) / 50 / 1e6);
	cr_expect_eq(fx_view(&F, 1).shaped_until, T, "shaped_until is the last stamp");
	F.runtime.share_until_ns = 0;
	cr_assert_eq(fx_clock(&F, T), 0);
	T1 = send_ok(1, 1500);
	for (i = 0; i < 100; i++)
		T = send_ok(1, 1500);
	cr_expect(fabs((double)(T - T1) / (100 * 120000.0) - 1) < 0.02,
		  "%.3f ms per packet", (T - T1) / 100 / 1e6);
}

/* The sharing loop's read (src/daemon/collect.c): what the collector
 * copies of each slot is what class_state holds, and only the slots asked;
 * it lists the slots that changed since, and only those. */
Test(prog, the_collector_copies_what_the_loop_reads)
{
	struct collect col;
	__u32 i;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(10), 0, 1500, 1500, SEC), 0);
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(1), MBIT(1), 1500, 1500, SEC), 0);
	cr_assert_eq(fx_class(&F, 2, 0, MBIT(5), MBIT(10), 1500, 1500, SEC), 0);
	for (i = 0; i < 40; i++)
		send_ok(1 + i % 2, 1000 + i);
	cr_assert_eq(collect_open(&col, F.state, F.cap), 0, "loading the collector");
	cr_assert_eq(collect_run(&col, 2), 0);
	cr_expect_gt(col.seen[1].bytes, 0);
	cr_expect_gt(col.seen[1].shaped_until, T0, "class 1 was held back");
	cr_expect_eq(col.seen[2].bytes, 0, "slot 2 was not asked for");
	cr_assert_eq(collect_run(&col, F.cap + 5), 0, "more than the map holds");
	for (i = 0; i < F.cap; i++) {
		struct htb_class_state v;

		cr_assert_eq(bpf_map_lookup_elem(F.state, &i, &v), 0);
		cr_expect_eq(col.seen[i].bytes, v.bytes, "slot %u", i);
		cr_expect_eq(col.seen[i].shaped_until, v.shaped_until, "slot %u", i);
	}
	cr_expect_gt(col.seen[0].bytes, col.seen[2].bytes, "the root counts both leaves");
	cr_assert_eq(collect_run(&col, F.cap), 0);
	cr_expect_eq(col.nchanged, 0, "nothing sent since: nothing listed");
	send_ok(2, 2000);
	cr_assert_eq(collect_run(&col, F.cap), 0);
	cr_assert_geq(col.nchanged, 1);
	for (i = 0; i < col.nchanged; i++)
		cr_expect(col.changed[i] == 2 || col.changed[i] == 0,
			  "slot %u listed, only class 2 and its root sent", col.changed[i]);
	cr_expect_eq(col.changed[0] == 2 || (col.nchanged > 1 && col.changed[1] == 2), 1,
		     "class 2 listed");
	collect_close(&col);
}

static void two_leaves(void)
{
	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(10), 0, 1500, 1500, SEC), 0);
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(1), MBIT(10), 1500, 1500, SEC), 0);
	cr_assert_eq(fx_class(&F, 2, 0, MBIT(9), MBIT(10), 1500, 1500, SEC), 0);
}

Test(prog, borrows_when_parent_has_tokens)
{
	two_leaves();
	cr_expect_eq(send_ok(1, 1500), T0);
	cr_expect_eq(send_ok(1, 1500), T0);
	cr_expect_eq(send_ok(1, 1500), T0 + 1200000);	/* parent's pace */
	cr_expect_eq(send_ok(1, 1500), T0 + 2400000);
	cr_expect_eq(fx_view(&F, 1).borrows, 2);
	cr_expect_eq(fx_view(&F, 0).lends, 2);
}

Test(prog, no_borrowing_when_parent_has_none)
{
	two_leaves();
	for (int i = 0; i < 101; i++)
		send_ok(2, 1500);
	cr_expect_eq(fx_view(&F, 0).tokens, -120 * (__s64)MS);
	cr_expect_eq(send_ok(1, 1500), T0);
	cr_expect_eq(send_ok(1, 1500), T0);
	for (int i = 1; i <= 8; i++)
		cr_expect_eq(send_ok(1, 1500), T0 + i * 12 * MS);
	cr_expect_eq(fx_view(&F, 1).borrows, 0);
}

Test(prog, chain_8_deep)
{
	__u64 prev = 0, T;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC), 0);
	for (int i = 1; i < 8; i++)
		cr_assert_eq(fx_class(&F, i, i - 1, 1000, MBIT(100), 1500, 1500, SEC), 0);
	cr_assert_eq(fx_conf(&F, 7).depth, 8);
	for (int i = 0; i < 100; i++) {
		T = send_ok(7, 1500);
		if (i >= 10)
			cr_expect_eq(T - prev, 120000, "packet %d", i);
		prev = T;
	}
	for (int i = 1; i < 8; i++) {
		cr_expect_eq(fx_view(&F, i).borrows, fx_view(&F, 0).lends);
		cr_expect_eq(fx_view(&F, i).bytes, 100 * 1500);
	}
	cr_expect_gt(fx_view(&F, 0).lends, 80);
}

/* Hysteresis flipped in the runtime map between two runs of the same
 * train, without reloading. */
Test(prog, hysteresis_on_vs_off_runtime_flip)
{
	__u64 off[40], on[40];
	int n_off = 0, n_on = 0;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, SEC), 0);
	for (int i = 0; i < 40; i++)
		n_off += (off[i] = send_ok(0, 1500)) == T0;
	/* same class, fresh buckets, hysteresis on */
	F.runtime.hysteresis = 1;
	cr_assert_eq(fx_clock(&F, T0 + 100 * SEC), 0);
	cr_assert_eq(maps_init_state(&F.maps, &(__u32){ 0 }, &(struct htb_class_conf){ 0 }, 1, 0), 0);
	for (int i = 0; i < 40; i++)
		n_on += (on[i] = send_ok(0, 1500) - 100 * SEC) == T0;
	cr_expect_eq(n_off, 11);
	cr_expect_eq(n_on, 21);
	cr_expect_eq(on[21], T0 + 13200000);
	cr_expect_eq(off[39], on[39]);
	cr_expect_eq(fx_view(&F, 0).overlimits, 1);
}

Test(prog, drop_beyond_limit)
{
	struct htb_class_state before;
	int sent = 0;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC), 0);
	/* 130 ms: above the floor of ten frames at 1 Mbit/s (121 ms) */
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(1), MBIT(1), 1500, 1500, 130 * MS), 0);
	for (int i = 0; i < 16; i++)
		sent += fx_send(&F, 1, 1500).retval == TC_ACT_OK_;
	cr_expect_eq(sent, 12);
	before = fx_view(&F, 1);
	cr_expect_eq(before.drops, 4);
	cr_expect_eq(fx_dev_stats(&F).drops, 4);
	cr_expect_eq(fx_send(&F, 1, 1500).retval, TC_ACT_SHOT_);
	cr_expect_eq(fx_view(&F, 1).tokens, before.tokens);
	cr_expect_eq(fx_view(&F, 1).packets, 12);
	cr_expect_eq(fx_view(&F, 0).packets, 12);
}

/*
 * The same random traffic through the program and through the userspace
 * build of include/htb/sched.h: identical stamps, verdicts and state,
 * batches and the path carry included (the test runs on CPU 0: the model's batches are that
 * CPU's; packets of 64 bytes at 100 Mbit/s are batched, 1500 are not).
 * Also: stamps never decrease within a leaf.
 */
Test(prog, identical_to_userspace_model_and_non_decreasing)
{
	struct htb_class_conf uc[8];
	struct htb_class_state us[8];
	struct htb_class_batch ub[8] = { 0 };
	struct htb_path_carry ucy = { 0 }, kcy;
	struct htb_env env = { .conf = uc, .state = us, .batch = ub, .carry = &ucy, .n = 8 };
	struct htb_params p = { .now = T0, .horizon_ns = HTB_DEFAULT_HORIZON_NS };
	__u64 last[8] = { 0 }, batched = 0;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 3000, 3000, 20 * MS), 0);
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(60), MBIT(100), 3000, 3000, 20 * MS), 0);
	cr_assert_eq(fx_class(&F, 2, 1, MBIT(10), MBIT(80), 1500, 1500, 2 * MS), 0);
	cr_assert_eq(fx_class(&F, 3, 1, MBIT(30), MBIT(50), 1500, 1500, 3 * MS), 0);
	cr_assert_eq(fx_class(&F, 4, 0, MBIT(20), MBIT(100), 1500, 1500, 5 * MS), 0);
	for (__u32 i = 0; i < 5; i++) {
		uc[i] = fx_conf(&F, i);
		us[i] = fx_state(&F, i);
	}
	cr_assert_eq(pu_pin(0), 0);
	srand(7);
	for (int i = 0; i < 20000; i++) {
		__u32 l = (__u32[]){ 2, 3, 4 }[rand() % 3];
		__u32 len = 64 + rand() % 1437;
		struct run_in in = { .priority = PU_CLASSID(l) };
		struct htb_decision d;
		struct run_out o;
		struct pkt pk;
		int v;

		p.now += rand() % 60000;
		p.hysteresis = (i / 2000) & 1;
		if (rand() % 4 == 0)
			in.tstamp = p.now + rand() % 2000000;
		if (rand() % 50 == 0)
			in.tstamp = p.now + 20 * SEC;	/* stale */
		F.runtime.hysteresis = p.hysteresis;
		cr_assert_eq(fx_clock(&F, p.now), 0);
		pkt_udp4(&pk, len);
		cr_assert_eq(fx_run(&F, &pk, &in, &o), 0);
		v = htb_schedule(&env, &uc[l], &p, len, in.tstamp, &d);
		cr_assert_eq(o.retval, v == HTB_DROP ? TC_ACT_SHOT_ : TC_ACT_OK_, "packet %d", i);
		if (v != HTB_SEND)
			continue;
		cr_assert_eq(o.tstamp, d.tstamp, "packet %d", i);
		batched += ub[0].packets || ub[1].packets;
		cr_assert_geq(o.tstamp, last[l]);
		cr_assert_geq(o.tstamp, p.now);
		last[l] = o.tstamp;
	}
	for (__u32 i = 0; i < 5; i++) {
		struct htb_class_state k = fx_state(&F, i);
		struct htb_class_batch b;

		cr_expect_eq(k.tokens, us[i].tokens, "class %u", i);
		cr_expect_eq(k.ctokens, us[i].ctokens, "class %u", i);
		cr_expect_eq(k.t_c, us[i].t_c);
		cr_expect_eq(k.bytes, us[i].bytes);
		cr_expect_eq(k.drops, us[i].drops);
		cr_expect_eq(k.lends, us[i].lends);
		cr_expect_eq(k.borrows, us[i].borrows);
		cr_expect_eq(k.overlimits, us[i].overlimits);
		b = fx_batch(&F, i, 0);
		cr_expect_eq(memcmp(&b, &ub[i], sizeof(b)), 0, "class %u: batch", i);
	}
	kcy = fx_carry(&F, 0);
	cr_expect_eq(memcmp(&kcy, &ucy, sizeof(kcy)), 0, "path carry: leaf %u, %u packets (model: %u, %u)",
		     kcy.leaf, kcy.packets, ucy.leaf, ucy.packets);
	/* (every other 2000 packets run with hysteresis, unbatched) */
	cr_expect_gt(batched, 300, "packets left in a batch: %llu", (unsigned long long)batched);
	cr_expect_gt(us[2].drops + us[3].drops + us[4].drops, 0);
	cr_expect_gt(us[2].borrows + us[3].borrows + us[4].borrows, 0);
}

/* Seed 003 through the kernel: every leaf keeps its rate while siblings
 * borrow; B stays at its ceil. */
Test(prog, seed003_tree, .timeout = 120)
{
	const __u32 len = 1500;
	const __u64 dt = len * SEC / (GBIT(1) + GBIT(1) / 5);
	const __u64 w0 = T0 + 100 * MS, w1 = T0 + 300 * MS;
	__u64 next[4] = { 0, T0, T0 + dt / 3, T0 + 2 * dt / 3 }, got[4] = { 0 };
	double mbit[4];

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, GBIT(1), 0, 125000, 125000, 0), 0);
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(500), GBIT(1), 62500, 125000, 0), 0);
	cr_assert_eq(fx_class(&F, 2, 0, MBIT(100), MBIT(100), 12500, 12500, 0), 0);
	cr_assert_eq(fx_class(&F, 3, 0, MBIT(100), GBIT(1), 12500, 125000, 0), 0);
	for (;;) {
		struct run_out o;
		__u32 l = 1;

		for (__u32 i = 2; i <= 3; i++)
			if (next[i] < next[l])
				l = i;
		if (next[l] > w1 + 150 * MS)
			break;
		fx_clock(&F, next[l]);
		next[l] += dt;
		o = fx_send(&F, l, len);
		if (o.retval == TC_ACT_OK_ && o.tstamp >= w0 && o.tstamp < w1)
			got[l] += len;
	}
	for (int i = 1; i <= 3; i++)
		mbit[i] = got[i] * 8 / 1e6 / 0.2;
	cr_log_info("seed 003 in the kernel: A %.1f, B %.1f, C %.1f Mbit/s",
		    mbit[1], mbit[2], mbit[3]);
	cr_expect_geq(mbit[1], 500 * 0.995);
	cr_expect_geq(mbit[2], 100 * 0.995);
	cr_expect_leq(mbit[2], 100 * 1.005);
	cr_expect_geq(mbit[3], 100 * 0.995);
	cr_expect_leq(mbit[1] + mbit[2] + mbit[3], 1000 * 1.005);
}

/* ---- classification ---- */

/* Leaves 1..7 under 0, one per classifier; 8 is the default. */
enum { L_PRIO = 1, L_MARK, L_DST, L_SRC, L_PORT, L_CGROUP, L_ANYPORT, L_DEFAULT };

static void cls_tree(void)
{
	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, GBIT(1), 0, 1 << 20, 1 << 20, SEC), 0);
	for (__u32 i = 1; i <= 8; i++)
		cr_assert_eq(fx_class(&F, i, 0, GBIT(1), 0, 1 << 20, 1 << 20, SEC), 0);
}

/* A classifier entry: slot g0 in generation 0, g1 in generation 1. */
static void put_gens(struct bpf_map *m, const void *key, __u32 g0, __u32 g1)
{
	struct htb_cls_val v = { .slot = { g0, g1 } };

	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(m), key, &v, BPF_ANY), 0,
		     "%s: %s", bpf_map__name(m), strerror(errno));
}

static void put(struct bpf_map *m, const void *key, __u32 idx)
{
	put_gens(m, key, idx, idx);
}

static void lpm4(struct bpf_map *m, const char *addr, __u32 plen, __u32 idx)
{
	struct htb_lpm4_key k = { .prefixlen = plen };

	inet_pton(AF_INET, addr, k.addr);
	put(m, &k, idx);
}

static void lpm6(struct bpf_map *m, const char *addr, __u32 plen, __u32 idx)
{
	struct htb_lpm6_key k = { .prefixlen = plen };

	inet_pton(AF_INET6, addr, k.addr);
	put(m, &k, idx);
}

static void port(__u8 proto, __u8 dir, __u16 p, __u32 idx)
{
	struct htb_port_key k = { .proto = proto, .dir = dir, .port = p };

	put(F.skel->maps.cls_port, &k, idx);
}

/* Which leaf a packet went to (by the packets counters), -1: none. */
static int classified(const struct pkt *p, const struct run_in *in,
		      struct run_out *out)
{
	__u64 before[9];
	struct run_out o;
	int which = -1;

	for (__u32 i = 1; i <= 8; i++)
		before[i] = fx_view(&F, i).packets;
	cr_assert_eq(fx_run(&F, p, in, &o), 0);
	for (__u32 i = 1; i <= 8; i++)
		if (fx_view(&F, i).packets != before[i]) {
			cr_assert_eq(which, -1, "charged twice");
			which = i;
		}
	if (out)
		*out = o;
	return which;
}

/* Move this process into a fresh cgroup v2 and return its id (inode), or
 * 0 if there is no cgroup2 hierarchy. */
static char cg_dir[256];
static const char cg_own_mount[] = "/run/htbctl-test-cgroup2";
static int cg_mounted;

static __u64 find_and_enter_cgroup(void)
{
	FILE *m = fopen("/proc/self/mounts", "r");
	char dev[64], mnt[200], type[32], path[300];
	struct stat sb;
	__u64 id = 0;
	FILE *procs;

	while (m && fscanf(m, "%63s %199s %31s %*[^\n]", dev, mnt, type) == 3) {
		if (strcmp(type, "cgroup2"))
			continue;
		snprintf(cg_dir, sizeof(cg_dir), "%s/htbctl-test-%d", mnt, getpid());
		if (mkdir(cg_dir, 0755) && errno != EEXIST)
			break;
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
		procs = fopen(path, "w");
		if (!procs)
			break;
		fprintf(procs, "%d\n", getpid());
		if (fclose(procs) == 0 && !stat(cg_dir, &sb))
			id = sb.st_ino;
		break;
	}
	if (m)
		fclose(m);
	return id;
}

/* A machine with no cgroup2 mounted gets one of the test's own, so the
 * cgroup classifier is always exercised, never skipped. */
static __u64 enter_cgroup(void)
{
	__u64 id = find_and_enter_cgroup();

	if (id)
		return id;
	mkdir(cg_own_mount, 0755);
	if (mount("none", cg_own_mount, "cgroup2", 0, NULL) == 0)
		cg_mounted = 1;
	return find_and_enter_cgroup();
}

static void leave_cgroup(void)
{
	char path[300], *slash;
	FILE *procs;

	if (!cg_dir[0])
		return;
	snprintf(path, sizeof(path), "%s", cg_dir);
	slash = strrchr(path, '/');
	if (slash) {
		strcpy(slash, "/cgroup.procs");
		procs = fopen(path, "w");
		if (procs) {
			fprintf(procs, "%d\n", getpid());
			fclose(procs);
		}
	}
	rmdir(cg_dir);
	cg_dir[0] = 0;
	if (cg_mounted) {
		umount(cg_own_mount);
		rmdir(cg_own_mount);
		cg_mounted = 0;
	}
}

Test(prog, classifiers_and_precedence)
{
	struct pkt_spec s = {
		.proto = IPPROTO_TCP, .src = "198.18.0.7", .dst = "198.18.1.9",
		.sport = 40000, .dport = 10194, .payload = 100,
	};
	struct run_in in = { .priority = PU_CLASSID(L_PRIO), .mark = 0x1234 };
	struct htb_mark_key mk = { .value = 0x34, .mask = 0xff };
	struct htb_mark_key mk2 = { .value = 0x1200, .mask = 0xff00 };
	__u64 cg = enter_cgroup();
	struct pkt p;

	cls_tree();
	F.treeconf.default_idx = L_DEFAULT;
	F.treeconf.nmasks = 2;
	F.treeconf.mark_masks[0] = 0xff;
	F.treeconf.mark_masks[1] = 0xff00;
	cr_assert_eq(fx_put_tree(&F), 0);
	put(F.skel->maps.cls_mark, &mk, L_MARK);
	put(F.skel->maps.cls_mark, &mk2, L_ANYPORT);	/* second mask */
	lpm4(F.skel->maps.cls_dst4, "198.18.1.0", 24, L_DST);
	lpm4(F.skel->maps.cls_src4, "198.18.0.0", 16, L_SRC);
	port(IPPROTO_TCP, HTB_PORT_DST, 10194, L_PORT);
	port(0, HTB_PORT_SRC, 40000, L_ANYPORT);
	if (cg)
		put(F.skel->maps.cls_cgroup, &cg, L_CGROUP);
	pkt_build(&p, &s);

	/* everything matches: the precedence order decides */
	cr_expect_eq(classified(&p, &in, NULL), L_PRIO);
	in.priority = 0x20001;		/* another major: not a class */
	cr_expect_eq(classified(&p, &in, NULL), L_MARK);
	in.mark = 0x1200;		/* only the second mask matches */
	cr_expect_eq(classified(&p, &in, NULL), L_ANYPORT);
	in.mark = 0x99;
	cr_expect_eq(classified(&p, &in, NULL), L_DST);
	s.dst = "198.18.2.9";		/* outside the dst prefix */
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_SRC);
	s.src = "198.19.0.7";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_PORT);	/* tcp dport */
	s.proto = IPPROTO_UDP;		/* the dport rule is tcp only */
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_ANYPORT);	/* any sport */
	port(IPPROTO_UDP, HTB_PORT_SRC, 40000, L_DST);	/* udp sport beats any */
	cr_expect_eq(classified(&p, &in, NULL), L_DST);
	port(0, HTB_PORT_DST, 10194, L_SRC);	/* any-proto dport beats sport */
	cr_expect_eq(classified(&p, &in, NULL), L_SRC);
	s.sport = 40001;
	s.dport = 9;
	pkt_build(&p, &s);
	if (cg) {
		cr_expect_eq(classified(&p, &in, NULL), L_CGROUP);
		leave_cgroup();
	} else {
		cr_expect_fail("no cgroup2 hierarchy, and mounting one failed: %s",
			       strerror(errno));
	}
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);

	/* non-first fragments carry no ports */
	s.sport = 40000;
	s.frag_later = 1;
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);
	s.frag_later = 0;
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_DST);	/* udp sport 40000 */

	/* a longer prefix in the same trie wins */
	lpm4(F.skel->maps.cls_dst4, "198.18.2.0", 23, L_MARK);
	lpm4(F.skel->maps.cls_dst4, "198.18.2.9", 32, L_CGROUP);
	cr_expect_eq(classified(&p, &in, NULL), L_CGROUP);
	s.dst = "198.18.3.1";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_MARK);
}

/* The priority classifier's entries live in cls_minor (the tree's
 * prio_major, a minor below the array's size) or in cls_prio (the rest):
 * the loader's writes, reads and deletes place and find every one, and a
 * minor of the major without an entry is no class, not slot 0. */
Test(prog, the_priority_classifier_finds_every_major)
{
	/* cls_tree's leaves have 1:1-1:9; these select leaves 1-3 too */
	const __u32 cid[] = { 0x10030, 0x10000 | 200, 0x20030 };
	struct pkt_spec s = {
		.proto = IPPROTO_UDP, .src = "198.18.0.7", .dst = "198.18.1.9",
		.sport = 4000, .dport = 5000, .payload = 100,
	};
	struct ent e[3] = { 0 }, *got = NULL;
	struct run_in in = { 0 };
	struct htb_cls_val v;
	__u32 minor = 0x30;
	struct pkt p;
	long n, before, found = 0;

	cls_tree();
	F.treeconf.default_idx = L_DEFAULT;
	cr_assert_eq(fx_put_tree(&F), 0);
	before = maps_dump_cls(&F.maps, HTB_CLS_PRIO, &got);
	big_free(got);
	cr_assert_leq(F.maps.max_entries[M_MINOR], 200, "1:c8 must be past cls_minor");
	for (int i = 0; i < 3; i++) {
		memcpy(e[i].key, &cid[i], sizeof(cid[i]));
		e[i].val[0] = e[i].val[1] = (__u32)i + 1;
	}
	cr_assert_eq(maps_put_cls(&F.maps, HTB_CLS_PRIO, e, 3), 0);
	cr_assert_eq(bpf_map_lookup_elem(F.maps.fd[M_MINOR], &minor, &v), 0);
	cr_expect_eq(v.slot[0], 1, "1:30 is in cls_minor");
	cr_expect_neq(bpf_map_lookup_elem(F.maps.fd[M_CLS + HTB_CLS_PRIO], &cid[0], &v), 0);
	for (int i = 1; i < 3; i++)
		cr_expect_eq(bpf_map_lookup_elem(F.maps.fd[M_CLS + HTB_CLS_PRIO], &cid[i], &v),
			     0, "%x is in cls_prio", cid[i]);

	pkt_build(&p, &s);
	for (int i = 0; i < 3; i++) {
		in.priority = cid[i];
		cr_expect_eq(classified(&p, &in, NULL), i + 1, "priority %x", cid[i]);
	}
	in.priority = 0x10031;		/* the major's, no entry */
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);
	in.priority = 0x10000 | 201;	/* past the array, no entry */
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);

	n = maps_dump_cls(&F.maps, HTB_CLS_PRIO, &got);
	cr_assert_eq(n, before + 3);
	for (long i = 0; i < n; i++) {
		__u32 k;
		int j = 0;

		memcpy(&k, got[i].key, sizeof(k));
		while (j < 3 && cid[j] != k)
			j++;
		if (j < 3 && got[i].val[1] == (__u32)j + 1)
			found++;
	}
	big_free(got);
	cr_expect_eq(found, 3, "the dump has each key written, with its slot");

	cr_assert_eq(maps_del_cls(&F.maps, HTB_CLS_PRIO, e, 3), 0);
	for (int i = 0; i < 3; i++) {
		in.priority = cid[i];
		cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT, "priority %x", cid[i]);
	}
	got = NULL;
	cr_expect_eq(maps_dump_cls(&F.maps, HTB_CLS_PRIO, &got), before);
	big_free(got);
}

/* An entry that does not match in the generation in force is a miss: the
 * next classifier decides. A reload writes the new generation's column
 * first, so until the flip the old tree classifies every packet. */
Test(prog, classifier_entries_per_generation)
{
	struct pkt_spec s = {
		.proto = IPPROTO_UDP, .src = "198.18.0.7", .dst = "198.18.1.200",
		.sport = 40000, .dport = 10194, .payload = 100,
	};
	struct htb_lpm4_key k24 = { .prefixlen = 24 }, k25 = { .prefixlen = 25 };
	struct htb_port_key kp = { .proto = IPPROTO_UDP, .dir = HTB_PORT_DST, .port = 10194 };
	struct pkt p;

	F.treeconf.default_idx = L_DEFAULT;
	for (F.gen = 2; F.gen--; ) {	/* the same classes in both generations */
		cls_tree();
		cr_assert_eq(fx_put_tree(&F), 0);
	}
	inet_pton(AF_INET, "198.18.1.0", k24.addr);
	inet_pton(AF_INET, "198.18.1.128", k25.addr);
	/* generation 1 adds the /25 in a class of its own; in generation 0
	 * the /25 selects what the /24 there selects */
	put_gens(F.skel->maps.cls_dst4, &k24, L_DST, L_DST);
	put_gens(F.skel->maps.cls_dst4, &k25, L_DST, L_SRC);
	put_gens(F.skel->maps.cls_port, &kp, HTB_NO_CLASS, L_PORT);	/* added in 1 */
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, NULL, NULL), L_DST);
	s.dst = "198.18.2.1";			/* no prefix: the port decides */
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, NULL, NULL), L_DEFAULT, "a port entry of generation 1 only");
	F.runtime.gen = 1;
	cr_assert_eq(fx_set_runtime(&F), 0);
	cr_expect_eq(classified(&p, NULL, NULL), L_PORT);
	s.dst = "198.18.1.200";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, NULL, NULL), L_SRC, "the /25 of generation 1");
	/* a prefix only generation 0 has, removed in 1: no match in 1 */
	put_gens(F.skel->maps.cls_dst4, &k25, L_SRC, HTB_NO_CLASS);
	put_gens(F.skel->maps.cls_dst4, &k24, L_SRC, HTB_NO_CLASS);
	cr_expect_eq(classified(&p, NULL, NULL), L_PORT, "no prefix matches in generation 1");
}

/* DSCP comes after mark and before the prefixes (docs/design.md,
 * "Classification"). */
Test(prog, dscp_classifier_v4_v6_and_precedence)
{
	struct pkt_spec s = {
		.proto = IPPROTO_UDP, .src = "198.18.0.7", .dst = "198.18.1.9",
		.sport = 1, .dport = 2, .payload = 10,
	};
	struct htb_mark_key mk = { .value = 7, .mask = 0xff };
	struct run_in marked = { .mark = 7 };
	__u8 ef = 46, af41 = 34;
	struct pkt p;

	cls_tree();
	F.treeconf.default_idx = L_DEFAULT;
	F.treeconf.nmasks = 1;
	F.treeconf.mark_masks[0] = 0xff;
	cr_assert_eq(fx_put_tree(&F), 0);
	put(F.skel->maps.cls_dscp, &ef, L_PORT);
	put(F.skel->maps.cls_dscp, &af41, L_ANYPORT);
	put(F.skel->maps.cls_mark, &mk, L_MARK);
	lpm4(F.skel->maps.cls_dst4, "198.18.1.0", 24, L_DST);
	lpm6(F.skel->maps.cls_dst6, "fd00:1::", 64, L_DST);
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, NULL, NULL), L_DST, "DSCP 0: no entry");
	pkt_set_dscp(&p, 0, ef);
	cr_expect_eq(classified(&p, NULL, NULL), L_PORT, "EF before the prefix");
	cr_expect_eq(classified(&p, &marked, NULL), L_MARK, "mark before DSCP");
	pkt_set_dscp(&p, 0, af41);
	cr_expect_eq(classified(&p, NULL, NULL), L_ANYPORT);
	s.v6 = 1;
	s.src = "fd00:1::7";
	s.dst = "fd00:1::9";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, NULL, NULL), L_DST, "IPv6, DSCP 0");
	pkt_set_dscp(&p, 1, ef);
	cr_expect_eq(classified(&p, NULL, NULL), L_PORT, "IPv6 EF (traffic class 0xb8)");
	pkt_set_dscp(&p, 1, af41);
	cr_expect_eq(classified(&p, NULL, NULL), L_ANYPORT, "IPv6 AF41 (traffic class 0x88)");
	F.treeconf.skip = HTB_SKIP_DSCP;
	cr_assert_eq(fx_put_tree(&F), 0);
	cr_expect_eq(classified(&p, NULL, NULL), L_DST, "the skip bit skips the lookup");
}

Test(prog, skip_bits_skip_lookups)
{
	struct pkt_spec s = {
		.proto = IPPROTO_UDP, .src = "198.18.0.7", .dst = "198.18.1.9",
		.sport = 1, .dport = 2, .payload = 10,
	};
	struct run_in in = { .priority = PU_CLASSID(L_PRIO) };
	struct pkt p;

	cls_tree();
	F.treeconf.default_idx = L_DEFAULT;
	lpm4(F.skel->maps.cls_dst4, "198.18.1.0", 24, L_DST);
	pkt_build(&p, &s);
	cr_assert_eq(fx_put_tree(&F), 0);
	cr_expect_eq(classified(&p, &in, NULL), L_PRIO);
	F.treeconf.skip = HTB_SKIP_PRIO;
	cr_assert_eq(fx_put_tree(&F), 0);
	cr_expect_eq(classified(&p, &in, NULL), L_DST);
	F.treeconf.skip = HTB_SKIP_PRIO | HTB_SKIP_DST4;
	cr_assert_eq(fx_put_tree(&F), 0);
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);
}

Test(prog, ipv6_prefixes_ports_ext_headers)
{
	struct pkt_spec s = {
		.v6 = 1, .proto = IPPROTO_UDP, .src = "fd00::7", .dst = "fd00:1::9",
		.sport = 40000, .dport = 10194, .payload = 100,
	};
	struct run_in in = { 0 };
	struct run_out o;
	struct pkt p;

	cls_tree();
	F.treeconf.default_idx = L_DEFAULT;
	cr_assert_eq(fx_put_tree(&F), 0);
	lpm6(F.skel->maps.cls_dst6, "fd00:1::", 32, L_DST);
	lpm6(F.skel->maps.cls_src6, "fd00::", 64, L_SRC);
	lpm4(F.skel->maps.cls_dst4, "0.0.0.0", 0, L_MARK);	/* v4 only */
	port(IPPROTO_UDP, HTB_PORT_DST, 10194, L_PORT);
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, &o), L_DST);
	cr_expect_eq(o.retval, TC_ACT_OK_);
	s.dst = "fd00:2::9";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_SRC);
	s.src = "fd01::7";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_PORT);
	s.v6_ext = 1;			/* hop-by-hop before UDP */
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_PORT);
	s.frag_later = 1;		/* hop-by-hop, fragment (not first) */
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);
	s.v6_ext = 0;
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);
	/* and an IPv4 packet still uses the v4 trie */
	s.v6 = 0;
	s.frag_later = 0;
	s.src = "10.0.0.1";
	s.dst = "10.0.0.2";
	pkt_build(&p, &s);
	cr_expect_eq(classified(&p, &in, NULL), L_MARK);
}

/* No class and no default: passes unshaped, tstamp untouched, counted. */
Test(prog, unclassified_without_default_passes_unshaped)
{
	struct run_in in = { .tstamp = T0 + 5 * MS, .mark = 7 };
	struct htb_dev_stats ds;
	struct run_out o;
	struct pkt p;

	cls_tree();
	pkt_udp4(&p, 700);
	cr_expect_eq(classified(&p, &in, &o), -1);
	cr_expect_eq(o.retval, TC_ACT_OK_);
	cr_expect_eq(o.tstamp, T0 + 5 * MS);
	in.tstamp = 0;
	cr_expect_eq(classified(&p, &in, &o), -1);
	cr_expect_eq(o.tstamp, 0);
	ds = fx_dev_stats(&F);
	cr_expect_eq(ds.unclassified_packets, 2);
	cr_expect_eq(ds.unclassified_bytes, 1400);
	/* a classifier pointing at an inner class falls back to the default */
	in.priority = PU_CLASSID(0);
	F.treeconf.default_idx = L_DEFAULT;
	cr_assert_eq(fx_put_tree(&F), 0);
	cr_expect_eq(classified(&p, &in, NULL), L_DEFAULT);
}

/* A GSO packet is charged by wire_len (all segments' headers), not len. */
Test(prog, gso_charged_by_wire_len)
{
	struct run_in in = { .priority = PU_CLASSID(0), .wire_len = 45000 };
	struct run_out o;
	struct pkt p;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC), 0);
	pkt_udp4(&p, 1500);
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.tstamp, T0);
	cr_expect_eq(o.wire_len, 45000);
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	/* 45000 - 1500 bytes of debt at 80 ns per byte */
	cr_expect_eq(o.tstamp, T0 + 43500ull * 80);
	cr_expect_eq(fx_view(&F, 0).bytes, 90000);
}

/* TCP stamps its own EDT time: honoured (never moved earlier), and the
 * class's later packets follow it. */
Test(prog, incoming_tcp_tstamp_honoured)
{
	struct pkt_spec s = {
		.proto = IPPROTO_TCP, .src = "198.18.0.1", .dst = "198.18.1.1",
		.sport = 1, .dport = 2, .payload = 1446,
	};
	struct run_in in = { .priority = PU_CLASSID(0), .tstamp = T0 + 3 * MS };
	struct run_out o;
	struct pkt p;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 15000, 15000, SEC), 0);
	pkt_build(&p, &s);
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.tstamp, T0 + 3 * MS);
	in.tstamp = T0 + 1 * MS;	/* earlier than the class's last stamp */
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.tstamp, T0 + 3 * MS);
	cr_expect_eq(fx_dev_stats(&F).stale_tstamps, 0);
}

/* A forwarded packet's CLOCK_REALTIME stamp is beyond the horizon: ignored
 * and counted. */
Test(prog, stale_tstamp_ignored_and_counted)
{
	struct run_in in = { .priority = PU_CLASSID(0),
			     .tstamp = 1700000000ull * SEC };
	struct run_out o;
	struct pkt p;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 15000, 15000, SEC), 0);
	pkt_udp4(&p, 1500);
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.tstamp, T0);
	cr_expect_eq(fx_dev_stats(&F).stale_tstamps, 1);
	/* just beyond a configured horizon of 1 s is stale too */
	F.runtime.horizon_ns = SEC;
	fx_set_runtime(&F);
	in.tstamp = T0 + SEC + 1;
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.tstamp, T0);
	in.tstamp = T0 + SEC;
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.tstamp, T0 + SEC);
	cr_expect_eq(fx_dev_stats(&F).stale_tstamps, 2);
}

/* The conf is double-buffered: writing generation 1 changes nothing until
 * runtime.gen flips; state carries over. */
Test(prog, generation_flip)
{
	struct htb_class_conf c;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(10), 0, 1500, 1500, SEC), 0);
	send_ok(0, 1500);
	send_ok(0, 1500);
	cr_expect_eq(send_ok(0, 1500), T0 + 1200000);
	/* generation 1: 100 Mbit */
	c = fx_conf(&F, 0);
	htb_ratecfg_precompute(&c.rate, MBIT(100), 0, 0, 0);
	htb_ratecfg_precompute(&c.ceil, MBIT(100), 0, 0, 0);
	cr_assert_eq(maps_put_conf(&F.maps, 1, F.cap, &(__u32){ 0 }, &c, 1), 0);
	cr_expect_eq(send_ok(0, 1500), T0 + 2400000);	/* still gen 0 */
	F.runtime.gen = 1;
	cr_assert_eq(fx_set_runtime(&F), 0);
	/* the debt (ns) carries over; new packets cost 0.12 ms */
	cr_expect_eq(send_ok(0, 1500), T0 + 3600000);
	cr_expect_eq(send_ok(0, 1500), T0 + 3600000 + 120000);
}

/* A reload prices the path carry by the tree its packets were sent in
 * (htb_carry_into): the leaf's packets within its rate wait in CPU 0's
 * carry; after a flip to a tree whose root is 1000 times slower, the next
 * packet (charged through the new tree) flushes them into the root at the
 * old tree's price: 5 x 1000 bytes at 10 Gbit/s, 4 us, not 4 ms. */
Test(prog, a_reload_prices_the_carry_by_its_own_tree)
{
	struct htb_class_params rp = { .rate_Bps = MBIT(10), .burst = 1000000,
				       .cburst = 1000000, .limit_ns = SEC, .depth = 1 };
	struct htb_class_conf c[2];
	struct htb_class_state before;
	__u32 lin, idx[2] = { 0, 1 };
	__s64 took;

	cr_assert_eq(pu_pin(0), 0);
	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, GBIT(10), 0, 1000000, 1000000, SEC), 0);
	cr_assert_eq(fx_class(&F, 1, 0, GBIT(1), 0, 1000000, 1000000, SEC), 0);
	cr_assert(fx_conf(&F, 1).flags & HTB_CONF_CARRY);
	for (int i = 0; i < 5; i++)
		send_ok(1, 1000);
	cr_assert_eq(fx_carry(&F, 0).packets, 5, "the packets wait in the carry");
	/* generation 1: the root at 10 Mbit/s, the leaf as it was */
	rp.path[0] = 0;
	rp.classid = fx_conf(&F, 0).classid;
	cr_assert_eq(htb_conf_from_params(&rp, &c[0]), 0);
	c[1] = fx_conf(&F, 1);
	lin = htb_conf_carry_lin(&c[0]);
	htb_conf_carry(&c[1], &lin, 1);
	cr_assert_eq(maps_put_conf(&F.maps, 1, F.cap, idx, c, 2), 0);
	F.runtime.gen = 1;
	cr_assert_eq(fx_set_runtime(&F), 0);
	before = fx_state(&F, 0);
	send_ok(1, 1000);	/* at the same clock: no refill */
	took = before.ctokens - fx_state(&F, 0).ctokens;
	cr_expect_eq(fx_carry(&F, 0).packets, 0, "the carry flushed");
	/* the new packet at 10 Mbit/s (800 us) and the carried 5,000 bytes
	 * at 10 Gbit/s (4 us) */
	cr_expect(took >= 804000 - 2 && took <= 804000 + 2, "took %lld ns", (long long)took);
	cr_expect_eq(fx_state(&F, 0).packets, 6);
}

/* ---- concurrency ---- */

/* Two CPUs, 1,000,003 packets each on sibling leaves: the shared parent
 * and root count exactly the sum with the CPUs' batches and path carries,
 * every bucket moved by exactly the sum of the charges applied to it, and
 * what is not applied is less than a batch and a carry per CPU
 * (pu_two_cpus in prog_util.h). */
Test(prog, two_cpus_no_lost_charge, .timeout = 300)
{
	const long N = 1000003;
	struct pu_2cpu r;
	int err;

	if (libbpf_num_possible_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs 2 CPUs");
	err = pu_two_cpus(&F, N, &r);
	cr_assert_eq(err, 0, "%s", strerror(-err));
	cr_expect_eq(r.vf[2].packets, N);
	cr_expect_eq(r.vf[3].packets, N);
	cr_expect_eq(r.vf[2].bytes, N * r.len);
	cr_expect_eq(r.vf[3].bytes, N * r.len);
	cr_expect_eq(r.lost_parent, 0, "parent lost %lld bytes", r.lost_parent);
	cr_expect_eq(r.lost_root, 0, "root lost %lld bytes", r.lost_root);
	cr_expect_eq(r.vf[0].packets, 2 * N);
	cr_expect_eq(r.vf[1].packets, 2 * N);
	/* N is no multiple of the batch: something is left in one */
	cr_expect_gt(r.pending_max, 0);
	cr_expect_lt(r.pending_max, HTB_BATCH_PKTS);
	/* the root's applied state is behind by less than a batch and a path
	 * carry per CPU (the carry goes into the root's batch when due) */
	cr_expect_leq(2 * N - (long)r.sf[0].packets, 2 * 2 * (HTB_BATCH_PKTS - 1));
	cr_expect(r.worst_ns == 0, "token arithmetic off by %.3f ns", r.worst_ns);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(r.sf[i].drops, 0);
	/* every packet lent by exactly one class of its path */
	cr_expect_eq(r.vf[0].lends + r.vf[1].lends + r.vf[2].lends + r.vf[3].lends, 2 * N);
	cr_log_info("2 CPUs x %ld packets: lends root %llu, parent %llu, leaves %llu/%llu",
		    N, (unsigned long long)r.vf[0].lends, (unsigned long long)r.vf[1].lends,
		    (unsigned long long)r.vf[2].lends, (unsigned long long)r.vf[3].lends);
}

/* Both CPUs on one leaf within its rate: the leaf's charges go through
 * each CPU's batch without its lock (htb_leaf_commit), and the same exact
 * invariant holds for every class, the leaf's included. */
Test(prog, two_cpus_one_leaf_no_lost_charge, .timeout = 300)
{
	const long N = 1000003;
	struct pu_2cpu r;
	int err;

	if (libbpf_num_possible_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs 2 CPUs");
	err = pu_two_cpus_on(&F, N, 1, &r);
	cr_assert_eq(err, 0, "%s", strerror(-err));
	cr_expect_eq(r.vf[2].packets, 2 * N);
	cr_expect_eq(r.vf[2].bytes, 2 * N * r.len);
	cr_expect_eq(r.vf[2].lends, 2 * N, "the leaf lent %llu", (unsigned long long)r.vf[2].lends);
	cr_expect_eq(r.vf[3].packets, 0);
	cr_expect_eq(r.lost_parent, 0, "parent lost %lld bytes", r.lost_parent);
	cr_expect_eq(r.lost_root, 0, "root lost %lld bytes", r.lost_root);
	cr_expect_lt(r.pending_max, HTB_BATCH_PKTS);
	/* the leaf's applied state is behind by less than a batch per CPU */
	cr_expect_leq(2 * N - (long)r.sf[2].packets, 2 * (HTB_BATCH_PKTS - 1));
	cr_expect_lt((long)r.sf[2].packets, 2 * N - 0, "nothing batched");
	cr_expect(r.worst_ns == 0, "token arithmetic off by %.3f ns", r.worst_ns);
	cr_expect_eq(r.sf[2].drops, 0);
}

/* ARP and IPv6 neighbour discovery pass unshaped and uncharged, even when
 * the default class they would fall into is full; other ICMPv6 does not. */
Test(prog, link_control_bypasses_a_full_class)
{
	struct run_in in = { 0 };
	struct pkt_spec nd = {
		.v6 = 1, .proto = 58, .src = "fd00:18::1", .dst = "ff02::1:ff00:2",
		.payload = 24,
	};
	struct htb_class_state before;
	struct htb_dev_stats ds;
	struct run_out o;
	struct pkt arp, p;

	cr_assert_eq(fx_class(&F, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC), 0);
	/* 130 ms: above the floor of ten frames at 1 Mbit/s (121 ms) */
	cr_assert_eq(fx_class(&F, 1, 0, MBIT(1), MBIT(1), 1500, 1500, 130 * MS), 0);
	F.treeconf.default_idx = 1;
	cr_assert_eq(fx_put_tree(&F), 0);
	pkt_udp4(&p, 1500);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(fx_run(&F, &p, &in, NULL), 0);
	cr_assert_gt(fx_view(&F, 1).drops, 0);	/* the default class is full */
	before = fx_view(&F, 1);

	memset(&arp, 0, sizeof(arp));
	memset(arp.data, 0xff, 6);
	arp.data[12] = 0x08; arp.data[13] = 0x06;
	arp.len = 42;
	cr_assert_eq(fx_run(&F, &arp, &in, &o), 0);
	cr_expect_eq(o.retval, TC_ACT_OK_);
	cr_expect_eq(o.tstamp, 0);

	pkt_build(&p, &nd);
	p.data[14 + 40] = 135;	/* neighbour solicitation */
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.retval, TC_ACT_OK_);
	cr_expect_eq(o.tstamp, 0);

	ds = fx_dev_stats(&F);
	cr_expect_eq(ds.control_packets, 2);
	cr_expect_eq(ds.control_bytes, 42 + p.len);
	cr_expect_eq(fx_view(&F, 1).packets, before.packets);
	cr_expect_eq(fx_view(&F, 1).tokens, before.tokens);
	cr_expect_eq(fx_view(&F, 1).drops, before.drops);

	p.data[14 + 40] = 128;	/* echo request: ordinary traffic */
	cr_assert_eq(fx_run(&F, &p, &in, &o), 0);
	cr_expect_eq(o.retval, TC_ACT_SHOT_);
	cr_expect_eq(fx_dev_stats(&F).control_packets, 2);
}

/* ---- AQM: CoDel on the schedule (docs/design.md, "AQM") ---- */

/* A UDP packet of 1000 bytes to leaf 0, IPv4 or IPv6, with ECN field ecn. */
static void codel_pkt(struct pkt *pk, int v6, unsigned ecn)
{
	struct pkt_spec s = {
		.v6 = v6, .proto = IPPROTO_UDP, .sport = 5000, .dport = 6000,
		.src = v6 ? "2001:db8::1" : "198.18.0.1",
		.dst = v6 ? "2001:db8::2" : "198.18.1.1",
		.payload = 1000 - (v6 ? 62 : 42),
	};

	pkt_build(pk, &s);
	pkt_set_ecn(pk, v6, ecn);
}

/* Offer pk to leaf 0 every gap_ns (10 Mbit/s leaf: 0.8 ms a packet) until
 * CoDel's first signal; returns the result of that packet, the state
 * just before it in *before. */
static struct run_out until_signal(const struct pkt *pk, __u64 gap_ns,
				   struct htb_class_state *before)
{
	struct run_in in = { .priority = PU_CLASSID(0) };
	struct run_out o = { .retval = -1 };
	__u64 now = T0;

	for (int i = 0; i < 5000; i++, now += gap_ns) {
		cr_assert_eq(fx_clock(&F, now), 0);
		*before = fx_view(&F, 0);
		cr_assert_eq(fx_run(&F, pk, &in, &o), 0);
		if (fx_view(&F, 0).aqm_drops + fx_view(&F, 0).ecn_marks)
			return o;
		cr_assert_eq(o.retval, TC_ACT_OK_, "packet %d dropped without a signal", i);
	}
	cr_assert_fail("no signal in 5000 packets");
	return o;
}

/* A fresh program and CoDel leaf (ecn_on), 2x overload with one kind of
 * packet until the first signal: its result, the state around it. */
static struct run_out first_signal(int v6, unsigned ecn, bool ecn_on, struct pkt *pk,
				   struct htb_class_state *before,
				   struct htb_class_state *after)
{
	struct run_out o;

	fx_close(&F);
	cr_assert_eq(fx_open(&F, 0), 0);
	cr_assert_eq(fx_codel_leaf(&F, 0, MBIT(10), ecn_on), 0);
	codel_pkt(pk, v6, ecn);
	if (!v6)
		cr_assert_eq(pkt_ip4_sum(pk->data), 0xffff);
	o = until_signal(pk, 400000, before);
	*after = fx_view(&F, 0);
	return o;
}

/* ECT(0) and ECT(1), IPv4 and IPv6: CoDel's signal is CE, the packet is
 * sent and charged, and IPv4's header checksum is still right. */
Test(prog, codel_marks_ect_with_ce)
{
	for (int v6 = 0; v6 <= 1; v6++)
		for (unsigned ecn = 1; ecn <= 2; ecn++) {
			struct htb_class_state before, after;
			struct pkt pk;
			struct run_out o = first_signal(v6, ecn, true, &pk, &before, &after);

			cr_expect_eq(o.retval, TC_ACT_OK_, "v6 %d ecn %u", v6, ecn);
			cr_expect_eq(pkt_ecn(o.head, v6), 3, "v6 %d ecn %u: no CE", v6, ecn);
			if (!v6)
				cr_expect_eq(pkt_ip4_sum(o.head), 0xffff, "IPv4 checksum broken by CE");
			cr_expect_eq(after.ecn_marks, 1);
			cr_expect_eq(after.aqm_drops, 0);
			cr_expect_eq(after.packets, before.packets + 1);
			cr_expect_eq(after.bytes, before.bytes + pk.len);
			cr_expect_gt(o.tstamp, T0);
		}
}

/* Not-ECT, or ECT with ecn off: the signal is a drop that charges
 * nothing; the packets before it left unmarked. */
Test(prog, codel_drops_not_ect_charging_nothing)
{
	for (int c = 0; c < 3; c++) {
		int v6 = c == 1, ecn_on = c != 2;
		unsigned ecn = c == 2 ? 2 : 0;
		struct htb_class_state before, after;
		struct pkt pk;
		struct run_out o = first_signal(v6, ecn, ecn_on, &pk, &before, &after);

		cr_expect_eq(o.retval, TC_ACT_SHOT_, "case %d", c);
		cr_expect_eq(after.aqm_drops, 1);
		cr_expect_eq(after.ecn_marks, 0);
		cr_expect_eq(after.drops, 0);
		cr_expect_eq(after.tokens, before.tokens);
		cr_expect_eq(after.ctokens, before.ctokens);
		cr_expect_eq(after.bytes, before.bytes);
		cr_expect_eq(after.packets, before.packets);
		cr_expect_eq(after.last_stamp, before.last_stamp);
		cr_expect_eq(fx_dev_stats(&F).drops, 1);
	}
}

/* The program's signals are the model's, packet for packet: the same
 * overload with pauses (first signal, rising rate, reset, re-entry)
 * through both, ECT and Not-ECT mixed; and a class within its rate, or
 * with aqm off, never signals. */
Test(prog, codel_identical_to_userspace_model)
{
	struct htb_class_conf uc;
	struct htb_class_state us;
	struct htb_env env = { .conf = &uc, .state = &us, .n = 1 };
	struct htb_params p = { .now = T0, .horizon_ns = HTB_DEFAULT_HORIZON_NS };
	struct run_in in = { .priority = PU_CLASSID(0) };
	struct htb_class_state k;
	int marks = 0;

	cr_assert_eq(fx_codel_leaf(&F, 0, MBIT(10), true), 0);
	uc = fx_conf(&F, 0);
	us = fx_view(&F, 0);
	srand(12);
	for (int i = 0; i < 6000; i++) {
		int v6 = rand() & 1, v;
		unsigned ecn = rand() % 3;
		struct htb_decision d;
		struct run_out o = { 0 };
		struct pkt pk;

		/* 2 s of 2x overload, 300 ms within rate, repeated */
		p.now += (i % 3000) < 2500 ? 400000 : 1000000;
		cr_assert_eq(fx_clock(&F, p.now), 0);
		codel_pkt(&pk, v6, ecn);
		cr_assert_eq(fx_run(&F, &pk, &in, &o), 0);
		p.ect = ecn != 0;
		v = htb_schedule(&env, &uc, &p, pk.len, 0, &d);
		cr_assert_eq(o.retval, v == HTB_DROP ? TC_ACT_SHOT_ : TC_ACT_OK_, "packet %d", i);
		cr_assert_eq(pkt_ecn(o.head, v6), v == HTB_SEND_CE ? 3 : ecn, "packet %d", i);
		marks += v == HTB_SEND_CE;
		if (v != HTB_DROP)
			cr_assert_eq(o.tstamp, d.tstamp, "packet %d", i);
	}
	k = fx_view(&F, 0);
	cr_expect_eq(k.ecn_marks, us.ecn_marks);
	cr_expect_eq(k.aqm_drops, us.aqm_drops);
	cr_expect_eq(k.codel_count, us.codel_count);
	cr_expect_eq(k.codel_drop_next, us.codel_drop_next);
	cr_expect_eq(k.tokens, us.tokens);
	cr_expect_eq(k.bytes, us.bytes);
	cr_expect_gt(marks, 10);
	cr_expect_gt(us.aqm_drops, 5);
}

/* Within its rate a class with CoDel sees no signal; above it with aqm
 * off, nothing but the limit (and ECN bits untouched). */
Test(prog, codel_quiet_within_rate_and_when_off)
{
	struct run_in in = { .priority = PU_CLASSID(0) };
	struct htb_class_state k;
	struct run_out o = { 0 };
	struct pkt pk;
	__u64 now = T0;

	cr_assert_eq(fx_codel_leaf(&F, 0, MBIT(10), true), 0);
	codel_pkt(&pk, 0, 2);
	for (int i = 0; i < 3000; i++, now += 900000) {	/* 8.9 Mbit/s */
		cr_assert_eq(fx_clock(&F, now), 0);
		cr_assert_eq(fx_run(&F, &pk, &in, &o), 0);
		cr_assert_eq(o.retval, TC_ACT_OK_);
		cr_assert_eq(pkt_ecn(o.head, 0), 2);
	}
	k = fx_view(&F, 0);
	cr_expect_eq(k.ecn_marks + k.aqm_drops, 0);

	cr_assert_eq(fx_class(&F, 1, HTB_NO_CLASS, MBIT(10), 0, 1500, 1500, 10 * SEC), 0);
	in.priority = PU_CLASSID(1);
	for (int i = 0; i < 3000; i++, now += 400000) {	/* 2x, 1.2 s */
		cr_assert_eq(fx_clock(&F, now), 0);
		cr_assert_eq(fx_run(&F, &pk, &in, &o), 0);
		cr_assert_eq(o.retval, TC_ACT_OK_);
		cr_assert_eq(pkt_ecn(o.head, 0), 2);
	}
	k = fx_view(&F, 1);
	cr_expect_eq(k.ecn_marks + k.aqm_drops + k.drops, 0);
	cr_expect_eq(k.packets, 3000);
}

/* ---- Sparse flows (docs/design.md, "Sparse flows") ---- */

/* A UDP packet of len bytes (on the wire) from sport: its own flow. */
static void flow_pkt(struct pkt *pk, __u16 sport, __u32 len)
{
	struct pkt_spec s = {
		.proto = IPPROTO_UDP, .sport = sport, .dport = 6000,
		.src = "198.18.0.1", .dst = "198.18.1.1", .payload = len - 42,
	};

	pkt_build(pk, &s);
}

/* A fresh program, leaf 0 at 10 Mbit/s with flows on (aqm off, 100 ms
 * limit). */
static void flows_leaf(void)
{
	struct htb_class_params p = {
		.rate_Bps = MBIT(10), .burst = 1500, .cburst = 1500,
		.limit_ns = 100 * MS, .flows = true,
	};

	fx_close(&F);
	cr_assert_eq(fx_open(&F, 0), 0);
	cr_assert_eq(fx_class_p(&F, 0, HTB_NO_CLASS, &p), 0);
}

static struct run_out flow_send(__u16 sport, __u32 len, __u64 now)
{
	struct run_in in = { .priority = PU_CLASSID(0) };
	struct run_out o = { .retval = -1 };
	struct pkt pk;

	flow_pkt(&pk, sport, len);
	cr_assert_eq(fx_clock(&F, now), 0);
	cr_assert_eq(fx_run(&F, &pk, &in, &o), 0);
	return o;
}

/* A bulk flow keeps 80 ms queued; a small packet of another flow leaves
 * at once, the bulk's next one moves back by its cost, and both flows have
 * their entry in flow_state. */
Test(prog, sparse_flow_leaves_ahead_of_the_bulk)
{
	struct run_out o;
	__u64 now = T0, last = 0, cost;
	struct htb_flow_key k, next;
	int entries = 0;

	flows_leaf();
	for (int i = 0; i < 200; i++, now += 400000) {	/* 1000 B each 0.4 ms: 2x */
		o = flow_send(5000, 1000, now);
		cr_assert_eq(o.retval, TC_ACT_OK_);
		last = o.tstamp;
	}
	cr_assert_gt(last, now + 70 * MS, "no queue: %llu ms", (last - now) / MS);
	o = flow_send(5001, 100, now);
	cr_assert_eq(o.retval, TC_ACT_OK_);
	cr_expect_eq(o.tstamp, now, "the small flow's packet %lld ns from now",
		     (long long)(o.tstamp - now));
	o = flow_send(5000, 1000, now + 1);
	cr_assert_eq(o.retval, TC_ACT_OK_);
	cost = (100 + 1000) * SEC / MBIT(10);
	cr_expect(o.tstamp >= last + cost - 2 && o.tstamp <= last + cost + 2,
		  "the bulk moved back %llu ns, its own and the small packet's cost %llu",
		  o.tstamp - last, cost);
	cr_expect_leq(fx_view(&F, 0).sparse_packets, 3);
	cr_expect_geq(fx_view(&F, 0).sparse_packets, 2);
	for (int err = bpf_map_get_next_key(bpf_map__fd(F.skel->maps.flow_state), NULL, &next);
	     !err; err = bpf_map_get_next_key(bpf_map__fd(F.skel->maps.flow_state), &k, &next)) {
		cr_expect_eq(next.slot, 0);
		k = next;
		entries++;
	}
	cr_expect_eq(entries, 2, "flow_state holds %d flows, 2 sent", entries);
}

/* 30,000 one-packet flows at three times the rate: what leaves from the
 * first second on (by stamp) is the class's rate within 2%. */
Test(prog, a_flood_of_new_flows_leaves_at_the_class_rate, .timeout = 120)
{
	static __u64 ts[30000];
	__u64 now = T0, gap = 1000 * SEC / (3 * MBIT(10)), bytes = 0, got;
	struct run_out o;
	int sent = 0;

	flows_leaf();
	for (int i = 0; i < 30000; i++, now += gap) {
		o = flow_send((__u16)(1024 + i), 1000, now);
		ts[i] = o.retval == TC_ACT_OK_ ? o.tstamp : 0;
		sent += o.retval == TC_ACT_OK_;
	}
	for (int i = 0; i < 30000; i++)
		if (ts[i] >= T0 + SEC && ts[i] < now)
			bytes += 1000;
	got = bytes * SEC / (now - T0 - SEC);
	cr_expect(got >= MBIT(10) * 98 / 100 && got <= MBIT(10) * 102 / 100,
		  "%llu bytes/s left (rate %llu), %d of 30000 sent, %llu sparse",
		  got, MBIT(10), sent, fx_view(&F, 0).sparse_packets);
	cr_expect_gt(fx_view(&F, 0).sparse_packets, 1000);
}
