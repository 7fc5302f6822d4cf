// SPDX-License-Identifier: GPL-2.0
/*
 * include/htb/sched.h compiled for userspace (plain arrays, no locks):
 * the departure-time algorithm without the kernel. The same code runs in
 * bpf/htbctl.bpf.c; tests/bpf/test_prog.c repeats the key cases there.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "htb/sched.h"
#include "loader/maps_fill.h"

#define MAXC	32
#define MS	1000000ull
#define SEC	1000000000ull
#define T0	(100 * SEC)	/* simulated clock start */
#define MBIT(x)	((__u64)(x) * 1000000 / 8)	/* bytes/s */
#define GBIT(x)	((__u64)(x) * 1000000000 / 8)

struct tree {
	struct htb_class_conf conf[MAXC];
	struct htb_class_state st[MAXC];
	__u32 parent[MAXC];
	struct htb_env env;
	struct htb_params p;
};

static void tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
	t->env.conf = t->conf;
	t->env.state = t->st;
	t->env.n = MAXC;
	t->p.now = T0;
	t->p.horizon_ns = HTB_DEFAULT_HORIZON_NS;
	for (int i = 0; i < MAXC; i++)
		t->parent[i] = HTB_NO_CLASS;
}

/* Class idx under parent (HTB_NO_CLASS: top level); bursts in bytes. */
static void add(struct tree *t, __u32 idx, __u32 parent, __u64 rate, __u64 ceil,
		__u64 burst, __u64 cburst, __u64 limit_ns)
{
	struct htb_class_params p = {
		.classid = 0x10000 | (idx + 1), .rate_Bps = rate, .ceil_Bps = ceil,
		.burst = burst, .cburst = cburst, .limit_ns = limit_ns, .leaf = true,
	};
	__u32 c = idx;

	t->parent[idx] = parent;
	while (c != HTB_NO_CLASS && p.depth < HTB_MAX_DEPTH) {
		p.path[p.depth++] = c;
		c = t->parent[c];
	}
	cr_assert_eq(htb_conf_from_params(&p, &t->conf[idx]), 0);
	if (parent != HTB_NO_CLASS)
		t->conf[parent].flags &= ~HTB_CONF_LEAF;
	htb_state_init(&t->st[idx], &t->conf[idx], t->p.now);
}

static int send(struct tree *t, __u32 leaf, __u32 len, __u64 in_ts,
		struct htb_decision *d)
{
	return htb_schedule(&t->env, &t->conf[leaf], &t->p, len, in_ts, d);
}

/* Stamp of one packet that must be sent. */
static __u64 stamp(struct tree *t, __u32 leaf, __u32 len)
{
	struct htb_decision d;

	cr_assert_eq(send(t, leaf, len, 0, &d), HTB_SEND);
	return d.tstamp;
}

/* ---------------------------------------------------------------- */

Test(sched, fresh_zero_state_is_full)
{
	struct tree t;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, 0);
	memset(&t.st[0], 0, sizeof(t.st[0]));	/* never initialised */
	for (int i = 0; i < 11; i++)
		cr_expect_eq(stamp(&t, 0, 1500), T0, "packet %d", i);
	cr_expect_eq(stamp(&t, 0, 1500), T0 + 1200000);
}

/* 10 Mbit/s, burst 15000 = 12 ms: 11 packets of 1500 (1.2 ms each) leave
 * at once (tokens >= 0 sends, as HTB), then one per 1.2 ms; after a long
 * idle period the credit is back, but not more than the burst. */
Test(sched, burst_credit_after_idle_and_cap)
{
	struct tree t;
	int i;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, SEC);
	for (i = 0; i < 11; i++)
		cr_expect_eq(stamp(&t, 0, 1500), T0, "packet %d", i);
	for (i = 1; i <= 5; i++)
		cr_expect_eq(stamp(&t, 0, 1500), T0 + i * 1200000ull);

	/* idle 10 s: the bucket refills to buffer (12 ms), no more */
	t.p.now = T0 + 10 * SEC;
	cr_expect_eq(t.st[0].tokens, -6 * 1200000ll);
	for (i = 0; i < 11; i++)
		cr_expect_eq(stamp(&t, 0, 1500), t.p.now, "after idle %d", i);
	cr_expect_eq(stamp(&t, 0, 1500), t.p.now + 1200000);

	/* partial refill: 6 ms idle after being 2.4 ms in debt */
	t.p.now += 2400000 + 6000000;
	cr_expect_eq(t.st[0].tokens, -2400000);
	for (i = 0; i < 6; i++)	/* 6 ms of credit: 5 packets + the one at 0 */
		cr_expect_eq(stamp(&t, 0, 1500), t.p.now, "partial %d", i);
	cr_expect_eq(stamp(&t, 0, 1500), t.p.now + 1200000);
}

/* A leaf with rate 1 Mbit, ceil 10 Mbit under a 100 Mbit parent: alone it
 * borrows, and its ceil caps it at 10 Mbit. */
Test(sched, ceil_caps_a_borrowing_class)
{
	struct tree t;
	__u64 prev = 0, T;
	int i;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC);
	add(&t, 1, 0, MBIT(1), MBIT(10), 1500, 1500, SEC);
	for (i = 0; i < 200; i++) {
		T = stamp(&t, 1, 1500);
		if (i >= 2)
			cr_expect_eq(T - prev, 1200000, "packet %d", i);
		prev = T;
	}
	/* 1 Mbit of own rate: 12 ms per packet; 10 Mbit: 1.2 ms */
	cr_expect_gt(t.st[1].borrows, 150);
	cr_expect_eq(t.st[0].lends, t.st[1].borrows);
	cr_expect_eq(t.st[0].bytes, 200 * 1500);
	cr_expect_eq(t.st[1].mode, HTB_MODE_CANT_SEND);
}

/* Parent 10 Mbit with two leaves A (1/10) and B (9/10), 1500-byte packets,
 * one-packet bursts, clock standing still. */
static void two_leaves(struct tree *t)
{
	tree_init(t);
	add(t, 0, HTB_NO_CLASS, MBIT(10), 0, 1500, 1500, SEC);
	add(t, 1, 0, MBIT(1), MBIT(10), 1500, 1500, SEC);
	add(t, 2, 0, MBIT(9), MBIT(10), 1500, 1500, SEC);
}

Test(sched, borrows_when_parent_has_tokens)
{
	struct htb_decision d;
	struct tree t;

	two_leaves(&t);
	/* own tokens: 2 packets (full bucket, then tokens 0 still sends) */
	cr_expect_eq(stamp(&t, 1, 1500), T0);
	cr_expect_eq(stamp(&t, 1, 1500), T0);
	/* then borrowing at the parent's pace, 1.2 ms, not its own 12 ms */
	cr_assert_eq(send(&t, 1, 1500, 0, &d), HTB_SEND);
	cr_expect_eq(d.level, 1);
	cr_expect_eq(d.tstamp, T0 + 1200000);
	cr_expect_eq(stamp(&t, 1, 1500), T0 + 2400000);
	cr_expect_eq(t.st[1].borrows, 2);
	cr_expect_eq(t.st[0].lends, 2);
}

Test(sched, no_borrowing_when_parent_has_none)
{
	struct htb_decision d;
	struct tree t;
	int i;

	two_leaves(&t);
	/* B alone puts the parent 100 packets (120 ms) in debt */
	for (i = 0; i < 101; i++)
		stamp(&t, 2, 1500);
	cr_expect_eq(t.st[0].tokens, -120 * (__s64)MS);
	/* A still gets its own rate at once: within its rate, never delayed */
	cr_expect_eq(stamp(&t, 1, 1500), T0);
	cr_expect_eq(stamp(&t, 1, 1500), T0);
	/* and then its own 12 ms per packet, no borrowing */
	for (i = 1; i <= 8; i++) {
		cr_assert_eq(send(&t, 1, 1500, 0, &d), HTB_SEND);
		cr_expect_eq(d.level, 0);
		cr_expect_eq(d.tstamp, T0 + i * 12000000ull);
	}
	cr_expect_eq(t.st[1].borrows, 0);
}

/* A fresh tree holding seed 003's classes: parent (0) 1 Gbit; A (1)
 * 500/1000, B (2) 100/100, C (3) 100/1000 Mbit. */
static void seed003_tree(struct tree *t)
{
	tree_init(t);
	add(t, 0, HTB_NO_CLASS, GBIT(1), 0, 125000, 125000, 0);
	add(t, 1, 0, MBIT(500), GBIT(1), 62500, 125000, 0);
	add(t, 2, 0, MBIT(100), MBIT(100), 12500, 12500, 0);
	add(t, 3, 0, MBIT(100), GBIT(1), 12500, 125000, 0);
}

/* Packets arriving at seed 003's leaves 1..3, leaf l's next at next[l]
 * and then every gap[l] ns: moves the clock to the earliest arrival and
 * returns its leaf, or 0 once that would be after end. */
static __u32 next_arrival(struct tree *t, __u64 next[4], const __u64 gap[4],
			  __u64 end)
{
	__u32 l = 1;

	for (__u32 i = 2; i <= 3; i++)
		if (next[i] < next[l])
			l = i;
	if (next[l] > end)
		return 0;
	t->p.now = next[l];
	next[l] += gap[l];
	return l;
}

/*
 * Seed 003, all three leaves backlogged (each offers 1.2 Gbit/s). Every
 * leaf gets at least its rate, B no more than its ceil, the parent no
 * more than 1 Gbit.
 */
static void seed003(__u32 len, __u32 hyst)
{
	const __u64 offered = GBIT(1) + GBIT(1) / 5;	/* per leaf, bytes/s */
	const __u64 dt = len * SEC / offered;		/* arrival spacing */
	const __u64 w0 = T0 + SEC / 2, w1 = T0 + 3 * SEC / 2;	/* window */
	const __u64 gap[4] = { 0, dt, dt, dt };
	__u64 got[4] = { 0 }, drops[4] = { 0 };
	__u64 next[4] = { 0, T0, T0 + dt / 3, T0 + 2 * dt / 3 };
	struct tree t;
	double mbit[4];
	__u32 l;

	seed003_tree(&t);
	t.p.hysteresis = hyst;
	while ((l = next_arrival(&t, next, gap, w1 + 200 * MS))) {
		struct htb_decision d;

		if (send(&t, l, len, 0, &d) == HTB_DROP) {
			drops[l]++;
			continue;
		}
		if (d.tstamp >= w0 && d.tstamp < w1)
			got[l] += len;
	}
	for (int i = 1; i <= 3; i++)
		mbit[i] = got[i] * 8 / 1e6;	/* window is 1 s */
	cr_log_info("seed 003, %u-byte packets, hysteresis %s: A %.1f, B %.1f, "
		    "C %.1f, total %.1f Mbit/s", len, hyst ? "on" : "off",
		    mbit[1], mbit[2], mbit[3], mbit[1] + mbit[2] + mbit[3]);
	cr_expect_geq(mbit[1], 500 * 0.999, "A %.2f", mbit[1]);
	cr_expect_geq(mbit[2], 100 * 0.999, "B %.2f", mbit[2]);
	cr_expect_leq(mbit[2], 100 * 1.001, "B %.2f above its ceil", mbit[2]);
	cr_expect_geq(mbit[3], 100 * 0.999, "C %.2f", mbit[3]);
	cr_expect_leq(mbit[1] + mbit[2] + mbit[3], 1000 * 1.001);
	cr_expect_geq(mbit[1] + mbit[2] + mbit[3], 1000 * 0.99, "not work-conserving");
	cr_expect_gt(drops[1] + drops[3], 0, "backlogged means drops at the limit");
}

Test(sched, seed003_every_leaf_keeps_its_rate_1500) { seed003(1500, 0); }
Test(sched, seed003_every_leaf_keeps_its_rate_400) { seed003(400, 0); }
Test(sched, seed003_every_leaf_keeps_its_rate_hysteresis) { seed003(1500, 1); }

/* Eight levels: the top has the rate, everything below only its ceil. The
 * leaf borrows from the top (level 7) at the top's pace. */
Test(sched, chain_8_deep)
{
	struct htb_decision d;
	struct tree t;
	__u64 prev = 0;
	int i;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC);
	for (i = 1; i < 8; i++)
		add(&t, i, i - 1, 1000, MBIT(100), 1500, 1500, SEC);
	cr_assert_eq(t.conf[7].depth, 8);
	for (i = 0; i < 100; i++) {
		cr_assert_eq(send(&t, 7, 1500, 0, &d), HTB_SEND);
		if (i >= 10) {
			cr_expect_eq(d.level, 7);
			cr_expect_eq(d.tstamp - prev, 120000, "packet %d", i);
		}
		prev = d.tstamp;
	}
	cr_expect_gt(t.st[0].lends, 80);
	for (i = 1; i < 8; i++) {
		cr_expect_eq(t.st[i].borrows, t.st[0].lends);
		cr_expect_eq(t.st[i].bytes, 100 * 1500);
	}
}

/* Hysteresis: a CAN_SEND class keeps sending down to -buffer, a CANT_SEND
 * one waits for ctokens 0. Same train, flipped at run time. */
Test(sched, hysteresis_on_vs_off)
{
	__u64 T[40];
	struct tree t;
	int i, now_off = 0, now_on = 0;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, SEC);
	for (i = 0; i < 40; i++)
		now_off += (T[i] = stamp(&t, 0, 1500)) == T0;
	cr_expect_eq(now_off, 11);	/* 12 ms of tokens, 1.2 ms each, down to 0 */
	cr_expect_eq(T[39], T0 + 29 * 1200000ull);

	tree_init(&t);
	t.p.hysteresis = 1;
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, SEC);
	for (i = 0; i < 40; i++)
		now_on += (T[i] = stamp(&t, 0, 1500)) == T0;
	cr_expect_eq(now_on, 21);	/* down to -buffer: twice the burst */
	/* then CANT_SEND waits for ctokens >= 0 (13.2 ms of debt), and from
	 * then on it is the same schedule as without hysteresis */
	cr_expect_eq(T[21], T0 + 13200000);
	for (i = 22; i < 40; i++)
		cr_expect_eq(T[i] - T[i - 1], 1200000);
	cr_expect_eq(T[39], T0 + 29 * 1200000ull);
	cr_expect_eq(t.st[0].overlimits, 1);
}

/* A limit shorter than ten full frames at the class's ceil holds ten:
 * at 185 kbit/s 100 ms is under two (65 ms each), and a few flows'
 * simultaneous packets lost all but two where a queue of packets keeps
 * them (log: 2026-12-05, A limit shorter than two frames). */
Test(sched, a_slow_class_holds_ten_frames)
{
	struct htb_decision d;
	struct tree t;
	int i, sent = 0;

	cr_expect_eq(htb_limit_ns(100 * MS, 23125), 10ull * 1514 * SEC / 23125);
	cr_expect_eq(htb_limit_ns(100 * MS, MBIT(100)), 100 * MS);
	cr_expect_eq(htb_limit_ns(0, MBIT(100)), HTB_DEFAULT_LIMIT_NS);
	cr_expect_eq(htb_limit_ns(2 * SEC, 23125), 2 * SEC);
	cr_expect_eq(htb_limit_ns(100 * MS, 1000), 5 * SEC);	/* the cap */
	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(100), 0, 1514, 1514, SEC);
	add(&t, 1, 0, 23125, 23125, 1514, 1514, 100 * MS);
	for (i = 0; i < 14; i++)
		sent += send(&t, 1, 1500, 0, &d) == HTB_SEND;
	/* two on the buckets (as in drop_beyond_limit), then one every
	 * 64.9 ms: the twelfth at 648.6, the next beyond 654.7 */
	cr_expect_eq(sent, 12);
	cr_expect_eq(t.st[1].drops, 2);
}

/* T - now > limit: dropped, counted, nothing charged. */
Test(sched, drop_beyond_limit)
{
	struct htb_class_state before;
	struct htb_decision d;
	struct tree t;
	int i, sent = 0;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC);
	/* 130 ms: above the floor of ten frames at 1 Mbit/s (121 ms) */
	add(&t, 1, 0, MBIT(1), MBIT(1), 1500, 1500, 130 * MS);
	for (i = 0; i < 16; i++)
		sent += send(&t, 1, 1500, 0, &d) == HTB_SEND;
	/* T = 0, 0, 12, 24, ..., 120 ms; 132 ms is beyond 130 */
	cr_expect_eq(sent, 12);
	cr_expect_eq(t.st[1].drops, 4);
	cr_expect_eq(t.st[1].last_stamp, T0 + 120 * MS);
	before = t.st[1];
	cr_assert_eq(send(&t, 1, 1500, 0, &d), HTB_DROP);
	cr_expect_eq(t.st[1].tokens, before.tokens);
	cr_expect_eq(t.st[1].ctokens, before.ctokens);
	cr_expect_eq(t.st[1].packets, 12);
	cr_expect_eq(t.st[0].packets, 12);
	/* time passes: accepted again */
	t.p.now += 20 * MS;
	cr_expect_eq(send(&t, 1, 1500, 0, &d), HTB_SEND);
	cr_expect_eq(d.tstamp, T0 + 132 * MS);
}

/* Random traffic on a small tree: stamps never decrease within a leaf,
 * never precede now, and every class counts exactly its bytes. */
Test(sched, non_decreasing_stamps_random)
{
	__u64 last[8] = { 0 }, bytes[8] = { 0 };
	struct tree t;

	srand(3);
	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(100), 0, 3000, 3000, 0);
	add(&t, 1, 0, MBIT(60), MBIT(100), 3000, 3000, 0);
	add(&t, 2, 1, MBIT(10), MBIT(80), 1500, 1500, 0);
	add(&t, 3, 1, MBIT(30), MBIT(50), 1500, 1500, 0);
	add(&t, 4, 0, MBIT(20), MBIT(100), 1500, 1500, 0);
	for (int i = 0; i < 200000; i++) {
		__u32 l = (__u32[]){ 2, 3, 4 }[rand() % 3];
		__u32 len = 64 + rand() % 9000;
		__u64 in_ts = 0;
		struct htb_decision d;

		t.p.now += rand() % 200000;
		t.p.hysteresis = (i / 5000) & 1;
		if (rand() % 4 == 0)
			in_ts = t.p.now + rand() % 2000000;
		if (send(&t, l, len, in_ts, &d) != HTB_SEND)
			continue;
		cr_assert_geq(d.tstamp, t.p.now);
		cr_assert_geq(d.tstamp, in_ts);
		cr_assert_geq(d.tstamp, last[l], "leaf %u went back", l);
		last[l] = d.tstamp;
		bytes[l] += len;
	}
	cr_expect_eq(t.st[1].bytes, bytes[2] + bytes[3]);
	cr_expect_eq(t.st[0].bytes, bytes[2] + bytes[3] + bytes[4]);
	for (int i = 2; i <= 4; i++)
		cr_expect_eq(t.st[i].bytes, bytes[i]);
}

/* A departure decided by the leaf's own tokens is still no earlier than an
 * earlier packet that went out by borrowing. */
Test(sched, non_decreasing_across_levels)
{
	struct htb_decision d;
	struct tree t;
	__u64 T1;

	two_leaves(&t);
	stamp(&t, 1, 1500);
	stamp(&t, 1, 1500);
	cr_assert_eq(send(&t, 1, 60000, 0, &d), HTB_SEND);	/* borrowed, 48 ms */
	cr_assert_eq(d.level, 1);
	T1 = d.tstamp;
	/* B pushes the parent far into debt: A falls back to its own rate,
	 * whose bucket would allow an earlier time than T1 */
	for (int i = 0; i < 60; i++)
		stamp(&t, 2, 1500);
	t.p.now += 40 * MS;
	cr_assert_eq(send(&t, 1, 100, 0, &d), HTB_SEND);
	cr_expect_eq(d.level, 0);
	cr_expect_geq(d.tstamp, T1);
}

/* An incoming EDT stamp (TCP) is honoured; beyond the horizon it is stale. */
Test(sched, incoming_tstamp)
{
	struct htb_decision d;
	struct tree t;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, 15000, 15000, SEC);
	cr_assert_eq(send(&t, 0, 1500, T0 + 5 * MS, &d), HTB_SEND);
	cr_expect_eq(d.tstamp, T0 + 5 * MS);
	cr_expect_eq(d.stale, 0);
	cr_assert_eq(send(&t, 0, 1500, T0 + 11 * SEC, &d), HTB_SEND);
	cr_expect_eq(d.tstamp, T0 + 5 * MS);	/* stale: ignored */
	cr_expect_eq(d.stale, 1);
	cr_assert_eq(send(&t, 0, 1500, T0 - SEC, &d), HTB_SEND);
	cr_expect_eq(d.stale, 0);		/* in the past: harmless */
}

/* One class, long train: the stamps follow the configured rate to 0.01%
 * at every rate and size (the carry at work). */
Test(sched, train_rate_exact)
{
	static const __u64 rates[] = { 125, MBIT(10), GBIT(1), GBIT(10),
				       GBIT(100), GBIT(400), GBIT(800) };
	static const __u32 sizes[] = { 64, 65, 577, 1500, 9001, 65536 };

	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct tree t;
			__u64 first = 0, T = 0;
			long n = 20000;

			/* HTB's mbuffer (60 s) clamps one packet costing
			 * more than that, as in the kernel: not a train */
			if (sizes[s] * SEC / rates[r] > 30 * SEC)
				continue;
			tree_init(&t);
			add(&t, 0, HTB_NO_CLASS, rates[r], 0, 0, 0, 1000 * SEC);
			if (rates[r] < 1000)
				n = 50;
			for (long i = 0; i <= n; i++) {
				/* a paced sender: the next packet arrives when
				 * the previous one leaves (far below mbuffer) */
				t.p.now = T ? T : T0;
				T = stamp(&t, 0, sizes[s]);
				if (i == 1)
					first = T;
			}
			/* n - 1 packet times between packet 1 and packet n */
			double got = (double)(n - 1) * sizes[s] * 1e9 / (double)(T - first);
			cr_expect(fabs(got / rates[r] - 1) <= 1e-4,
				  "rate %llu size %u: %.0f B/s",
				  (unsigned long long)rates[r], sizes[s], got);
		}
}

/* A borrow limit from the sharing loop (struct htb_class_share): while the
 * lease runs a class borrows at most that fast; with mult 0 not at all;
 * when the lease has run out (params.share 0) it borrows freely again. */
static void share_set(struct htb_class_share *sh, __u64 Bps)
{
	struct htb_ratecfg r;

	htb_ratecfg_precompute(&r, Bps, 0, 0, HTB_LINKLAYER_ETHERNET);
	sh->borrow_l2t = HTB_SHARE_ON | (__u64)r.shift << 32 | r.mult;
	sh->bbuffer = 2 * (__s64)MS;
	sh->borrow_Bps = Bps;
}

/* Class 1, 1 Mbit/s with a ceil of 100 under a 100 Mbit/s root, borrowing
 * under the loop's limits in sh (the lease running). */
static void borrower(struct tree *t, struct htb_class_share *sh)
{
	tree_init(t);
	t->env.share = sh;
	t->p.share = 1;
	add(t, 0, HTB_NO_CLASS, MBIT(100), 0, 1500, 1500, SEC);
	add(t, 1, 0, MBIT(1), MBIT(100), 1500, 1500, 10 * SEC);
}

/* n more 1500-byte packets of class 1 after one first: ms between them. */
static double ms_per_packet(struct tree *t, int n, __u64 *first)
{
	__u64 T1 = stamp(t, 1, 1500), T = T1;

	for (int i = 0; i < n; i++)
		T = stamp(t, 1, 1500);
	if (first)
		*first = T1;
	return (double)(T - T1) / n / 1e6;
}

Test(sched, borrow_limit_from_the_loop)
{
	struct htb_class_share sh[MAXC] = { 0 };
	struct tree t;
	__u64 T = 0;
	double ms;
	int i;

	borrower(&t, sh);
	share_set(&sh[1], MBIT(4));
	for (i = 0; i < 1000; i++)
		T = stamp(&t, 1, 1500);
	/* own 1 Mbit + borrowed 4 Mbit = 5 Mbit: 2.4 ms per packet */
	cr_expect(fabs((double)(T - T0) / (1000 * 2400000.0) - 1) < 0.01,
		  "%.3f ms per packet", (T - T0) / 1000 / 1e6);

	/* nothing to borrow: its own 1 Mbit/s, 12 ms per packet */
	sh[1].borrow_l2t = HTB_SHARE_ON;
	ms = ms_per_packet(&t, 100, NULL);
	cr_expect(fabs(ms / 12 - 1) < 0.01, "%.3f ms per packet", ms);

	/* the lease ran out: the parent's 100 Mbit/s, 0.12 ms per packet */
	t.p.share = 0;
	t.p.now = t.st[1].last_stamp;
	ms = ms_per_packet(&t, 100, NULL);
	cr_expect(fabs(ms / 0.12 - 1) < 0.02, "%.3f ms per packet", ms);
}

/* What the borrow bucket owes is bytes: a packet borrowed under a limit a
 * few kbit/s above nothing owes seconds at that limit, and once the loop
 * raises the limit the class borrows again after what that packet costs
 * at the new one, not after those seconds (htb_btokens_at). */
Test(sched, a_debt_under_a_small_limit_is_bytes_at_the_next)
{
	struct htb_class_share sh[MAXC] = { 0 };
	struct tree t;
	__u64 T1;
	double ms;

	borrower(&t, sh);
	share_set(&sh[1], 500);		/* 4 kbit/s: 3 s a packet */
	ms_per_packet(&t, 3, NULL);	/* the burst, then one borrowed */
	cr_assert_lt(t.st[1].btokens, -(__s64)SEC, "owes %.3f s", t.st[1].btokens / 1e9);
	share_set(&sh[1], MBIT(4));
	t.p.now += 20 * MS;
	ms = ms_per_packet(&t, 100, &T1);
	/* own 1 Mbit + borrowed 4 Mbit: 2.4 ms per packet from the first */
	cr_expect(fabs(ms / 2.4 - 1) < 0.02, "%.3f ms per packet", ms);
	cr_expect_lt(T1, t.p.now + 20 * MS, "the first waited %.3f ms",
		     (double)(T1 - t.p.now) / 1e6);
	/* the spacing a packet bought is bytes, at any limit */
	cr_expect_eq(htb_btokens_at(-(__s64)MS, 0, MBIT(4), MBIT(1)), -4 * (__s64)MS);
	cr_expect_eq(htb_btokens_at(-4 * (__s64)SEC, 0, 500, MBIT(4)), -4 * (__s64)SEC / 1000);
	cr_expect_eq(htb_btokens_at(5 * (__s64)MS, 0, 500, MBIT(4)), 5 * (__s64)MS, "credit stays");
	cr_expect_eq(htb_btokens_at(-(__s64)MS, 0, MBIT(400), 1), 1 - (__s64)HTB_MBUFFER_NS);
	cr_expect_eq(htb_btokens_at(-(__s64)MS, 0, MBIT(400), MBIT(1)), -400 * (__s64)MS);
	/* what is stamped ahead of now leaves as stamped: only the rest scales */
	cr_expect_eq(htb_btokens_at(-101 * (__s64)MS, 100 * MS, MBIT(4), MBIT(1)), -104 * (__s64)MS);
	cr_expect_eq(htb_btokens_at(-90 * (__s64)MS, 100 * MS, MBIT(4), MBIT(1)), -90 * (__s64)MS);
}

/* shaped_until: set when the shaper delays a packet, not when the packet's
 * own stamp (TCP's pacing) is what it waits for. */
Test(sched, shaped_until_only_for_the_shapers_delay)
{
	struct htb_decision d;
	struct tree t;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, 1500, 1500, SEC);
	cr_assert_eq(send(&t, 0, 1500, T0 + 5 * MS, &d), HTB_SEND);
	cr_expect_eq(d.tstamp, T0 + 5 * MS);
	cr_expect_eq(t.st[0].shaped_until, 0);
	cr_assert_eq(send(&t, 0, 1500, 0, &d), HTB_SEND);
	cr_expect_geq(d.tstamp, T0 + 5 * MS);	/* behind the first */
	cr_expect_eq(t.st[0].shaped_until, d.tstamp);
}

/*
 * Why charges are applied at now and not at the departure time (the
 * reasoning: docs/design.md, "Where t_c lives"): seed 003's tree, B
 * backlogged at its ceil, A and C offering 400 Mbit/s each, so the parent
 * has 100 Mbit/s to spare. C must borrow 300 Mbit/s. Charged at now, C's packets leave at
 * once. (Charged at T they queued behind B's frontier, at the limit: 99.9
 * ms on average, measured here against the charge-at-T switch the header
 * had up to commit 88e2a6e.)
 */
static double mean_delay_of_c(double *c_mbit)
{
	/* 1500-byte packets: A and C offer 400 Mbit/s, B 1200 */
	const __u64 gap[4] = { 0, 1500 * SEC / MBIT(400), 1500 * SEC / MBIT(1200),
			       1500 * SEC / MBIT(400) };
	const __u64 w0 = T0 + SEC / 2, w1 = T0 + 3 * SEC / 2;
	__u64 next[4] = { 0, T0 + 1000, T0 + 2000, T0 + 3000 }, got = 0, n = 0;
	double delay = 0;
	struct tree t;
	__u32 l;

	seed003_tree(&t);
	while ((l = next_arrival(&t, next, gap, w1 + 200 * MS))) {
		struct htb_decision d;

		if (send(&t, l, 1500, 0, &d) != HTB_SEND || l != 3)
			continue;
		if (t.p.now >= w0 && t.p.now < w1) {
			delay += d.tstamp - t.p.now;
			n++;
		}
		if (d.tstamp >= w0 && d.tstamp < w1)
			got += 1500;
	}
	*c_mbit = got * 8 / 1e6;
	return delay / n / 1e6;
}

Test(sched, charge_at_now_lets_siblings_borrow_without_delay)
{
	double c_mbit, d = mean_delay_of_c(&c_mbit);

	cr_log_info("C borrowing next to a backlogged capped sibling: %.1f "
		    "Mbit/s, mean delay %.2f ms", c_mbit, d);
	cr_expect_geq(c_mbit, 399);
	cr_expect_lt(d, 0.1);
}

/* The largest burst a config can write (2^64-1 bytes) must not wrap the
 * token arithmetic: the buffer is capped at HTB_BUFFER_MAX_NS, so a bucket
 * that has been full for a while still sends at once (7112e5f kept
 * INT64_MAX ns: tokens + elapsed overflowed and the class stalled for
 * mbuffer, 60 s). */
Test(sched, largest_burst_does_not_wrap)
{
	struct tree t;

	tree_init(&t);
	add(&t, 0, HTB_NO_CLASS, MBIT(10), 0, ~0ull, ~0ull, SEC);
	cr_expect_leq(t.conf[0].buffer, (__s64)HTB_BUFFER_MAX_NS);
	cr_expect_leq(t.conf[0].cbuffer, (__s64)HTB_BUFFER_MAX_NS);
	t.p.now += SEC;
	cr_expect_eq(stamp(&t, 0, 1500), t.p.now);
	t.p.now += 10 * SEC;
	cr_expect_eq(stamp(&t, 0, 1500), t.p.now);
}
