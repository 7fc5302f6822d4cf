// SPDX-License-Identifier: GPL-2.0
/*
 * CoDel on the departure schedule (docs/design.md, "AQM"), in the
 * userspace build of the shared code: one leaf kept backlogged by packets
 * offered faster than its rate, a simulated clock, the caller saying
 * whether each packet is ECT. tests/bpf/test_prog.c repeats the key cases
 * through the program.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "htb/sched.h"
#include "loader/maps_fill.h"

#define MS	1000000ull
#define SEC	1000000000ull
#define T0	(100 * SEC)
#define MBIT(x)	((__u64)(x) * 1000000 / 8)
#define LEN	1500u

struct leaf {
	struct htb_class_conf conf;
	struct htb_class_state st;
	struct htb_env env;
	struct htb_params p;
};

/* One top-level leaf at 10 Mbit/s (1.2 ms a packet), limit 10 s so only
 * CoDel acts; aqm and ecn as given, CoDel's default target/interval. */
static void leaf_init(struct leaf *l, bool aqm, bool ecn)
{
	struct htb_class_params cp = {
		.classid = 0x10001, .depth = 1, .leaf = true,
		.rate_Bps = MBIT(10), .burst = LEN, .cburst = LEN,
		.limit_ns = 10 * SEC, .aqm = aqm, .ecn = ecn,
	};

	memset(l, 0, sizeof(*l));
	cr_assert_eq(htb_conf_from_params(&cp, &l->conf), 0);
	l->env.conf = &l->conf;
	l->env.state = &l->st;
	l->env.n = 1;
	l->p.now = T0;
	l->p.horizon_ns = HTB_DEFAULT_HORIZON_NS;
	htb_state_init(&l->st, &l->conf, T0);
}

static int send1(struct leaf *l, bool ect)
{
	struct htb_decision d;

	l->p.ect = ect;
	return htb_schedule(&l->env, &l->conf, &l->p, LEN, 0, &d);
}

/* Offer packets every gap_ns for dur_ns; the times of CoDel's signals
 * (CE or drop, by its counters: never the limit's) go to sig[] (up to
 * max); returns how many. */
static int offer(struct leaf *l, __u64 gap_ns, __u64 dur_ns, bool ect,
		 __u64 *sig, int max)
{
	__u64 end = l->p.now + dur_ns, nsig;
	int n = 0, v;

	for (; l->p.now < end; l->p.now += gap_ns) {
		nsig = l->st.aqm_drops + l->st.ecn_marks;
		v = send1(l, ect);
		cr_assert(v == HTB_SEND || v == HTB_SEND_CE || v == HTB_DROP);
		cr_assert(v != HTB_SEND_CE || ect, "CE on a Not-ECT packet");
		cr_assert_eq(l->st.drops, 0, "the limit acted");
		if (l->st.aqm_drops + l->st.ecn_marks == nsig)
			continue;
		cr_assert_neq(v, HTB_SEND, "a signal the verdict does not show");
		if (n < max)
			sig[n] = l->p.now;
		n++;
	}
	return n;
}

/* The delay the next packet would get (the leaf's schedule ahead of now). */
static __u64 delay_now(const struct leaf *l)
{
	return l->st.last_stamp > l->p.now ? l->st.last_stamp - l->p.now : 0;
}

Test(codel, rsqrt_table_and_newton_track_one_over_sqrt)
{
	__u32 y = htb_rsqrt_q32[1];

	for (__u32 n = 1; n <= 100000; n++) {
		double want = 1.0 / sqrt(n), got;

		y = htb_codel_rsqrt(n, y);
		got = y / 4294967296.0;
		cr_assert(fabs(got - want) / want < 0.002,
			  "count %u: 1/sqrt %.6f, want %.6f", n, got, want);
	}
}

Test(codel, within_rate_no_signal)
{
	struct leaf l;
	__u64 sig[4];

	leaf_init(&l, true, false);
	/* 1500 bytes every 1.5 ms: 8 Mbit/s into 10 */
	cr_expect_eq(offer(&l, 1500000, 10 * SEC, false, sig, 4), 0);
	cr_expect_eq(l.st.aqm_drops + l.st.ecn_marks, 0);
	cr_expect_eq(l.st.codel_first_above, 0);
}

Test(codel, below_target_no_signal)
{
	struct leaf l;
	__u64 sig[4];

	leaf_init(&l, true, false);
	/* a standing queue of 3 packets (3.6 ms < 5 ms target), kept there:
	 * 4 packets at once, then one per packet time */
	for (int i = 0; i < 4; i++)
		cr_assert_eq(send1(&l, false), HTB_SEND);
	cr_expect_eq(offer(&l, 1200000, 10 * SEC, false, sig, 4), 0);
	cr_expect_lt(delay_now(&l), HTB_CODEL_TARGET_NS);
}

/* Overload by 1.5x: the delay passes target after ~15 ms; the first
 * signal comes one interval after that, not before. */
Test(codel, first_signal_one_interval_after_target)
{
	struct htb_decision d;
	struct leaf l;
	__u64 sig[1], above = 0;
	int v;

	leaf_init(&l, true, false);
	for (; l.p.now < T0 + SEC; l.p.now += 800000) {
		v = htb_schedule(&l.env, &l.conf, &l.p, LEN, 0, &d);
		if (v == HTB_DROP)
			break;
		if (!above && d.tstamp - l.p.now >= HTB_CODEL_TARGET_NS)
			above = l.p.now;
	}
	sig[0] = l.p.now;
	cr_assert(above, "the delay never reached target");
	cr_expect_geq(sig[0], above + HTB_CODEL_INTERVAL_NS);
	cr_expect_leq(sig[0], above + HTB_CODEL_INTERVAL_NS + 2 * 800000);
	cr_expect_eq(l.st.aqm_drops, 1);
	cr_expect_eq(l.st.codel_count, 1);
	cr_expect_eq(l.st.codel_dropping, 1);
}

/* An unresponsive sender (2x the rate): the gaps between signals shrink
 * as interval / sqrt(count), each within a packet gap of the law. */
Test(codel, signal_rate_rises_with_count)
{
	__u64 sig[40];
	struct leaf l;
	int n;

	leaf_init(&l, true, false);
	n = offer(&l, 600000, 3 * SEC, false, sig, 40);
	cr_assert_geq(n, 20);
	for (int i = 1; i < 20; i++) {
		double want = (double)HTB_CODEL_INTERVAL_NS / sqrt(i);
		double got = (double)(sig[i] - sig[i - 1]);

		cr_expect(fabs(got - want) <= 600000 + want * 0.002,
			  "gap %d: %.0f ns, want %.0f", i, got, want);
		/* strictly shrinking while the law's steps exceed a packet gap */
		if (i > 1 && i <= 12)
			cr_expect_lt(sig[i] - sig[i - 1], sig[i - 1] - sig[i - 2]);
	}
}

/* A signalled packet that is dropped charges nothing: tokens, bytes and
 * the schedule are what they were. */
Test(codel, drop_charges_nothing)
{
	struct htb_class_state before = { 0 };
	struct leaf l;
	int v = HTB_SEND;

	leaf_init(&l, true, false);
	while (l.p.now < T0 + SEC) {
		before = l.st;
		v = send1(&l, false);
		if (v == HTB_DROP)
			break;
		l.p.now += 600000;
	}
	cr_assert_eq(v, HTB_DROP);
	cr_expect_eq(l.st.tokens, before.tokens);
	cr_expect_eq(l.st.ctokens, before.ctokens);
	cr_expect_eq(l.st.bytes, before.bytes);
	cr_expect_eq(l.st.packets, before.packets);
	cr_expect_eq(l.st.last_stamp, before.last_stamp);
	cr_expect_eq(l.st.t_c, before.t_c);
	cr_expect_eq(l.st.aqm_drops, before.aqm_drops + 1);
	cr_expect_eq(l.st.drops, 0);
}

/* ECT packets are marked, never dropped (the limit being far), and a
 * marked packet is charged and stamped like any other; ecn off drops
 * ECT packets too. */
Test(codel, ect_marked_not_dropped_and_charged)
{
	struct htb_class_state before;
	struct leaf l;
	__u64 sig[64];
	int n, v;

	leaf_init(&l, true, true);
	n = offer(&l, 600000, 2 * SEC, true, sig, 64);
	cr_expect_eq(l.st.drops, 0);
	cr_assert_gt(n, 5);
	cr_expect_eq(l.st.ecn_marks, (__u64)n);
	cr_expect_eq(l.st.aqm_drops, 0);
	do {
		before = l.st;
		l.p.now += 600000;
		v = send1(&l, true);
	} while (v == HTB_SEND);
	cr_assert_eq(v, HTB_SEND_CE);
	cr_expect_eq(l.st.packets, before.packets + 1);
	cr_expect_eq(l.st.bytes, before.bytes + LEN);

	leaf_init(&l, true, false);
	n = offer(&l, 600000, 2 * SEC, true, sig, 64);
	cr_expect_eq(l.st.aqm_drops, (__u64)n);
	cr_expect_eq(l.st.ecn_marks, 0);
}

/* The delay falls below target: the dropping state ends. Back above
 * within 16 intervals, CoDel starts again with the count of the last
 * state (count - lastcount); after a long pause, with 1. */
Test(codel, reset_and_reentry)
{
	__u32 count1;
	struct leaf l;
	__u64 sig[64];
	int n;

	leaf_init(&l, true, false);
	n = offer(&l, 600000, SEC, false, sig, 64);
	cr_assert_gt(n, 4);
	count1 = l.st.codel_count;
	cr_assert_eq(count1, (__u32)n);
	/* idle until the schedule drains: the next packet sees no delay */
	l.p.now = l.st.last_stamp + 1;
	cr_assert_eq(send1(&l, false), HTB_SEND);
	cr_expect_eq(l.st.codel_dropping, 0);
	cr_expect_eq(l.st.codel_first_above, 0);
	/* overload again at once: re-entry with the previous count */
	n = offer(&l, 600000, 300 * MS, false, sig, 64);
	cr_assert_gt(n, 0);
	/* count - lastcount: the signals after the state's first one */
	cr_expect_eq(l.st.codel_lastcount, count1 - 1,
		     "re-entered with %u, the last state ended at count %u",
		     l.st.codel_lastcount, count1);
	/* the first signals come at the old, faster rate */
	if (n > 1)
		cr_expect_lt(sig[1] - sig[0], HTB_CODEL_INTERVAL_NS / 2);

	/* a pause of 16 intervals and more: back to count 1 */
	l.p.now = l.st.last_stamp + 17 * HTB_CODEL_INTERVAL_NS;
	cr_assert_eq(send1(&l, false), HTB_SEND);
	n = offer(&l, 600000, 300 * MS, false, sig, 64);
	cr_assert_gt(n, 0);
	cr_expect_eq(l.st.codel_lastcount, 1);
}

/* Backlog below one MTU at the class's rate is not a queue (Linux's
 * rule): a target below that never enters. */
Test(codel, backlog_below_one_mtu_never_enters)
{
	struct htb_decision d;
	struct leaf l;
	__u64 sig[4];

	leaf_init(&l, true, false);
	l.conf.target_ns = 1000;	/* 1 us: one packet's delay is above it */
	/* one packet ahead all the time: each waits 1.2 ms = l2t(1500),
	 * less than mtu_ns (1514 bytes) */
	cr_assert_eq(send1(&l, false), HTB_SEND);
	cr_assert_eq(send1(&l, false), HTB_SEND);
	cr_expect_eq(offer(&l, 1200000, 2 * SEC, false, sig, 4), 0);
	cr_assert_eq(htb_schedule(&l.env, &l.conf, &l.p, LEN, 0, &d), HTB_SEND);
	cr_expect_gt(d.tstamp - l.p.now, l.conf.target_ns);
	cr_expect_leq(d.tstamp - l.p.now, l.conf.mtu_ns);
	/* the same with the floor below one packet: CoDel acts */
	l.conf.mtu_ns = 0;
	cr_expect_gt(offer(&l, 1200000, SEC, false, sig, 4), 0);
}

/* aqm off: the same overload gives the same stamps and state as a conf
 * without the AQM fields (the code before AQM), and never a signal. */
Test(codel, aqm_off_changes_nothing)
{
	struct leaf a, b;

	leaf_init(&a, false, true);
	leaf_init(&b, false, true);
	b.conf.target_ns = b.conf.interval_ns = b.conf.mtu_ns = 0;
	b.conf.flags &= ~HTB_CONF_ECN;
	for (int i = 0; i < 1500; i++) {	/* up to 0.9 s ahead */
		struct htb_decision da, db;

		a.p.ect = i & 1;
		cr_assert_eq(htb_schedule(&a.env, &a.conf, &a.p, LEN, 0, &da), HTB_SEND);
		cr_assert_eq(htb_schedule(&b.env, &b.conf, &b.p, LEN, 0, &db), HTB_SEND);
		cr_assert_eq(da.tstamp, db.tstamp);
		a.p.now += 600000;
		b.p.now += 600000;
	}
	cr_expect_eq(memcmp(&a.st, &b.st, sizeof(a.st)), 0);
	cr_expect_eq(a.st.aqm_drops + a.st.ecn_marks, 0);
}

/* A sender's own pacing stamp is not queueing: packets stamped by the
 * sender far ahead (TCP's EDT) but within the class's rate get no
 * signal. */
Test(codel, own_stamp_delay_is_not_queueing)
{
	struct leaf l;
	int v;

	leaf_init(&l, true, false);
	for (int i = 0; i < 2000; i++) {
		struct htb_decision d;

		v = htb_schedule(&l.env, &l.conf, &l.p, LEN, l.p.now + 50 * MS, &d);
		cr_assert_eq(v, HTB_SEND);
		l.p.now += 1500000;
	}
	cr_expect_eq(l.st.aqm_drops, 0);
}
