// SPDX-License-Identifier: GPL-2.0
/*
 * Batches (docs/design.md, "Batches"; struct htb_class_batch): inner
 * classes' charges collected per CPU and applied to the shared state when
 * due. Two CPUs are two environments over one conf and state, each with
 * its own batches, sending in turn on a simulated clock. A root of 10
 * Gbit/s and two leaves of 1 Gbit/s borrowing up to it: 1500-byte packets
 * cost the root 1.2 us, so its batches fill by tokens (17 packets), 64-byte
 * ones by count (HTB_BATCH_PKTS). The root's ceil is what binds.
 * tests/bpf/test_prog.c checks the program against this model and the
 * counters after two real CPUs.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "htb/sched.h"
#include "loader/maps_fill.h"

#define US	1000ull
#define MS	1000000ull
#define SEC	1000000000ull
#define T0	(100 * SEC)
#define GBIT(x)	((__u64)(x) * 1000000000 / 8)
#define NCPU	2
#define NPKT	200000
/* htb_apply's costs without a borrow limit (no sharing loop) */
static const struct htb_cost no_limit;

struct sim {
	struct htb_class_conf conf[3];
	struct htb_class_state st[3];
	struct htb_class_batch batch[NCPU][3];
	struct htb_path_carry carry[NCPU];
	struct htb_env env[NCPU];
	struct htb_params p;
	/* what was sent, in sending order: departure and bytes */
	__u64 *t;
	__u32 *len, n;
	__u64 bytes;
	__s32 overhead;		/* every class's, from sim_init_oh */
};

static void class_add(struct sim *s, __u32 idx, __u64 rate, __u64 ceil, __u64 burst)
{
	struct htb_class_params cp = {
		.classid = 0x10001 + idx, .rate_Bps = rate, .ceil_Bps = ceil,
		.burst = burst, .cburst = burst, .limit_ns = SEC, .leaf = idx != 0,
		.overhead = s->overhead,
	};

	cp.path[cp.depth++] = idx;
	if (idx)
		cp.path[cp.depth++] = 0;
	cr_assert_eq(htb_conf_from_params(&cp, &s->conf[idx]), 0);
	htb_state_init(&s->st[idx], &s->conf[idx], s->p.now);
}

/* burst: of every class, in bytes; leaf_ceil: the leaves' (above the
 * root's 10 Gbit/s, the root's ceil is what binds); batches: each CPU's
 * env has them. */
static void sim_init_oh(struct sim *s, __u64 burst, __u64 leaf_ceil, bool batches,
			__s32 overhead)
{
	memset(s, 0, sizeof(*s));
	s->overhead = overhead;
	s->p.now = T0;
	s->p.horizon_ns = HTB_DEFAULT_HORIZON_NS;
	class_add(s, 0, GBIT(10), GBIT(10), burst);
	class_add(s, 1, GBIT(1), leaf_ceil, burst);
	class_add(s, 2, GBIT(1), leaf_ceil, burst);
	htb_conf_carries(s->conf, 3);
	for (int c = 0; c < NCPU; c++) {
		s->env[c] = (struct htb_env){ .conf = s->conf, .state = s->st, .n = 3 };
		if (batches) {
			s->env[c].batch = s->batch[c];
			s->env[c].carry = &s->carry[c];
		}
	}
	s->t = calloc(2 * NPKT, sizeof(*s->t));
	s->len = calloc(2 * NPKT, sizeof(*s->len));
	cr_assert(s->t && s->len);
}

static void sim_init(struct sim *s, __u64 burst, __u64 leaf_ceil, bool batches)
{
	sim_init_oh(s, burst, leaf_ceil, batches, 0);
}

static void sim_free(struct sim *s)
{
	free(s->t);
	free(s->len);
}

/* One packet of CPU cpu to leaf 1 + cpu at the clock. */
static int send1(struct sim *s, int cpu, __u32 len)
{
	struct htb_decision d;
	int v = htb_schedule(&s->env[cpu], &s->conf[1 + cpu], &s->p, len, 0, &d);

	if (v == HTB_SEND) {
		s->t[s->n] = d.tstamp;
		s->len[s->n++] = len;
		s->bytes += len;
	}
	return v;
}

/* Both CPUs send npkt packets of len each, in turn, every gap ns. */
static void run(struct sim *s, __u32 len, __u64 gap, int npkt)
{
	for (int i = 0; i < npkt; i++) {
		for (int c = 0; c < NCPU; c++)
			cr_assert_eq(send1(s, c, len), HTB_SEND, "packet %d", i);
		s->p.now += gap;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Most bytes departing in any window of w ns (packets of one size). */
static __u64 max_window(struct sim *s, __u64 w)
{
	__u64 best = 0, sum = 0;
	__u32 i = 0;

	qsort(s->t, s->n, sizeof(*s->t), cmp_u64);
	for (__u32 j = 0; j < s->n; j++) {
		sum += s->len[j];
		while (s->t[j] - s->t[i] >= w)
			sum -= s->len[i++];
		if (sum > best)
			best = sum;
	}
	return best;
}

/* The root as show sees it: applied state and every CPU's batch. */
static struct htb_class_state root_view(const struct sim *s)
{
	struct htb_class_state v = s->st[0];

	for (int c = 0; c < NCPU; c++) {
		v.bytes += s->batch[c][0].bytes;
		v.packets += s->batch[c][0].packets;
		v.lends += s->batch[c][0].lends;
		v.borrows += s->batch[c][0].borrows;
	}
	return v;
}

/* A batch costs what its packets cost one by one: one CPU, caps out of
 * reach, the same stamps and levels (the CPU's view of a class is its
 * state minus its batch, carries included: what applying it would leave)
 * and, once applied, the same buckets, carries and counters. */
static void one_cpu(__u32 hyst)
{
	static struct sim a, b;
	__u64 worst = 0, held = 0;

	sim_init(&a, 1ull << 40, GBIT(40), true);
	sim_init(&b, 1ull << 40, GBIT(40), false);
	a.p.hysteresis = b.p.hysteresis = hyst;
	for (int i = 0; i < 3; i++)	/* empty: the caps stay out of reach */
		a.st[i].tokens = a.st[i].ctokens = b.st[i].tokens = b.st[i].ctokens = 0;
	for (int i = 0; i < NPKT; i++) {
		__u32 len = 64 + (__u32)(i * 7919) % 1437;

		cr_assert_eq(send1(&a, 0, len), HTB_SEND);
		cr_assert_eq(send1(&b, 0, len), HTB_SEND);
		worst = HTB_MAX(worst, a.t[a.n - 1] > b.t[b.n - 1] ? a.t[a.n - 1] - b.t[b.n - 1]
								     : b.t[b.n - 1] - a.t[a.n - 1]);
		a.p.now += 50;	/* 1.9x the root's 10 Gbit/s at 1.2 kB average */
		b.p.now += 50;
		held += a.batch[0][0].packets;
	}
	if (hyst) {	/* nothing batched: the thresholds follow the mode */
		cr_expect_eq(held, 0);
		cr_expect_eq(a.st[0].overlimits, b.st[0].overlimits);
		cr_expect_eq(a.st[0].mode, b.st[0].mode);
	} else {
		cr_expect_gt(held, 0);
	}
	cr_expect_eq(worst, 0, "stamps %llu ns apart", (unsigned long long)worst);
	/* apply what is pending, at the last packet's clock: the path carry
	 * into the root's batch, the batch into its state */
	a.p.now -= 50;
	htb_carry_flush(&a.env[0], &a.p);
	htb_apply(&a.conf[0], &a.st[0], a.p.now, &a.batch[0][0], &no_limit, 0);
	cr_expect_eq(a.st[0].t_c, b.st[0].t_c);
	cr_expect_eq(a.st[0].tokens, b.st[0].tokens);
	cr_expect_eq(a.st[0].ctokens, b.st[0].ctokens);
	cr_expect_eq(a.st[0].rcarry, b.st[0].rcarry);
	cr_expect_eq(a.st[0].ccarry, b.st[0].ccarry);
	cr_expect_eq(a.st[0].bytes, b.st[0].bytes);
	cr_expect_eq(a.st[0].lends, b.st[0].lends);
	cr_expect_eq(a.st[0].borrows, b.st[0].borrows);
	cr_expect_eq(a.st[1].tokens, b.st[1].tokens);
	if (!hyst) {	/* (on, the leaf's huge burst keeps it at its own level) */
		cr_expect_gt(b.st[0].lends, 0);
		cr_expect_gt(b.st[1].borrows, 0);	/* the leaf borrowed: the root lent */
	}
	sim_free(&a);
	sim_free(&b);
}

Test(batch, one_cpu_as_without_batches)
{
	one_cpu(0);
}

/* With hysteresis on a class's thresholds follow its mode, which only an
 * apply updates: nothing is batched, and everything matches, overlimits
 * and mode too. */
Test(batch, hysteresis_on_not_batched)
{
	one_cpu(1);
}

/* A class whose burst is under a batch is not batched (its cap would be
 * applied a batch late), nor carried. */
Test(batch, small_burst_not_batched)
{
	static struct sim s;

	sim_init(&s, 12000, GBIT(10), true);	/* 9.6 us at 10 Gbit/s */
	/* nor carried for it: a carry is a batch (htb_conf_carry_lin) */
	cr_assert(!(s.conf[1].flags & HTB_CONF_CARRY));
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(send1(&s, 0, 64), HTB_SEND);
		cr_assert_eq(s.batch[0][0].packets, 0, "packet %d batched", i);
		s.p.now += 100;
	}
	cr_expect_eq(s.st[0].packets, 1000);
	sim_free(&s);
}

/* After every packet each CPU holds less than a batch: under
 * HTB_BATCH_PKTS packets and under HTB_BATCH_NS of the root's tokens
 * (what the other CPU cannot see); and with the batches every byte is
 * counted. */
static void pending_bound(__u32 len, __u32 expect_full)
{
	static struct sim s;
	__u32 most = 0;

	sim_init(&s, 125000, GBIT(10), true);
	for (int i = 0; i < NPKT; i++) {
		for (int c = 0; c < NCPU; c++) {
			const struct htb_class_batch *a = &s.batch[c][0];

			cr_assert_eq(send1(&s, c, len), HTB_SEND);
			cr_assert_lt(a->packets, HTB_BATCH_PKTS);
			cr_assert_lt(htb_batch_ccost(&s.conf[0], a) >> s.conf[0].ceil.shift,
				     HTB_BATCH_NS);
			cr_assert_lt(htb_batch_rcost(&s.conf[0], a) >> s.conf[0].rate.shift,
				     HTB_BATCH_NS);
			most = HTB_MAX(most, a->packets);
		}
		s.p.now += len * 64 / 100;	/* offered: 2 x 1.25 x 10 Gbit/s */
	}
	cr_expect_eq(most, expect_full - 1, "largest pending batch %u", most);
	cr_expect_eq(root_view(&s).bytes, s.bytes);
	cr_expect_eq(root_view(&s).packets, 2ull * NPKT);
	cr_expect_gt(s.st[0].packets, 0);
	sim_free(&s);
}

Test(batch, pending_below_a_batch_full_frames)
{
	pending_bound(1500, 17);	/* 20 us / 1.2 us per frame */
}

Test(batch, pending_below_a_batch_small_packets)
{
	pending_bound(64, HTB_BATCH_PKTS);
}

/*
 * The error bound: two CPUs offering 2.5 times the root's ceil, with and
 * without batches. In any window the root sends at most what it does
 * without them plus what one CPU may hold unseen by the other: HTB_BATCH_NS
 * of its ceil (25 kB at 10 Gbit/s) and a frame; over the whole run the
 * schedule ends earlier by at most that.
 */
Test(batch, overshoot_bounded_by_a_batch_per_other_cpu)
{
	static struct sim a, b;
	const __u32 len = 1500;
	const __u64 ws[] = { 20 * US, 100 * US, MS, 10 * MS, 100 * MS };
	const double bound = (NCPU - 1) * (double)HTB_BATCH_NS * GBIT(10) / SEC + len;

	sim_init(&a, 125000, GBIT(10), true);
	sim_init(&b, 125000, GBIT(10), false);
	run(&a, len, 960, NPKT);	/* 1500 B each 960 ns per CPU: 2.5 x 10 Gbit/s */
	run(&b, len, 960, NPKT);
	for (unsigned i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		double ma = (double)max_window(&a, ws[i]), mb = (double)max_window(&b, ws[i]);

		cr_log_info("window %llu us: %.0f B with batches, %.0f without",
			    (unsigned long long)(ws[i] / US), ma, mb);
		cr_expect_leq(ma, mb + bound, "window %llu ns: %.0f > %.0f + %.0f",
			      (unsigned long long)ws[i], ma, mb, bound);
		/* and the root's ceil holds: ceil x w + its burst + the bound */
		cr_expect_leq(ma, (double)GBIT(10) * ws[i] / SEC + 125000 + bound + len);
	}
	/* the schedule's end: earlier by at most what the other CPU holds */
	cr_expect_leq((double)a.t[a.n - 1], (double)b.t[b.n - 1] + 1200.0,
		      "batched run ends at %llu, unbatched at %llu",
		      (unsigned long long)a.t[a.n - 1], (unsigned long long)b.t[b.n - 1]);
	cr_expect_geq((double)a.t[a.n - 1] + (NCPU - 1) * (HTB_BATCH_NS + 1200.0),
		      (double)b.t[b.n - 1]);
	sim_free(&a);
	sim_free(&b);
}

/* A reload that changes an inner class's rate may change its l2t shift
 * while CPUs hold batches in the old units: the next packet rescales the
 * batch, so what is pending keeps its worth in ns (within 1 ns). */
Test(batch, rate_change_rescales_a_pending_batch)
{
	static struct sim s;
	struct htb_class_conf old;
	__u64 before_r, before_c;
	__s64 ct0, want, took;
	struct htb_class_params cp = {
		.classid = 0x10001, .rate_Bps = GBIT(1) / 100, .ceil_Bps = GBIT(1) / 100,
		.burst = 125000, .cburst = 125000, .limit_ns = SEC,
	};
	const struct htb_class_batch *a = &s.batch[0][0];

	sim_init(&s, 125000, GBIT(10), true);
	s.env[0].carry = NULL;	/* the root's own batch, not the leaf's carry */
	for (int i = 0; i < 5; i++)
		cr_assert_eq(send1(&s, 0, 1500), HTB_SEND);
	cr_assert_eq(a->packets, 5);
	old = s.conf[0];
	before_r = htb_batch_rcost(&old, a) >> old.rate.shift;
	before_c = htb_batch_ccost(&old, a) >> old.ceil.shift;
	/* the root at 10 Mbit/s: another shift, and a frame is due alone */
	cp.path[cp.depth++] = 0;
	cr_assert_eq(htb_conf_from_params(&cp, &s.conf[0]), 0);
	s.p.gen++;	/* as a reload does: the batch's bytes become costs */
	cr_assert_neq(s.conf[0].rate.shift, old.rate.shift);
	/* a 64-byte packet: not due alone, goes into the batch, which is
	 * rescaled first; then it is due (10 Mbit/s) and applied */
	ct0 = s.st[0].ctokens;
	cr_assert_eq(send1(&s, 0, 64), HTB_SEND);
	cr_expect_eq(a->packets, 0, "the rescaled batch was applied");
	cr_expect_eq(s.st[0].packets, 6);
	/* what the apply took from the ceil bucket (the clock stood still):
	 * the five frames' ns at the old rate, within 1, and the new packet's
	 * at 10 Mbit/s */
	want = (__s64)(before_c + htb_l2t_ns(&s.conf[0].ceil, 64));
	took = ct0 - s.st[0].ctokens;
	cr_expect(took >= want - 1 && took <= want + 1, "took %lld ns, want %lld",
		  (long long)took, (long long)want);
	cr_expect_gt(before_r, 0);
	cr_expect_eq(htb_batch_units(1000ull << 20, 20, 24), 1000ull << 24);
	cr_expect_eq(htb_batch_units(1000ull << 24, 24, 20), 1000ull << 20);
	cr_expect_eq(htb_batch_units(12345, 7, 7), 12345);
	sim_free(&s);
}

/* A leaf of 1 Gbit/s under the root (10 Gbit/s), buckets empty and their
 * caps out of reach, sending len-byte packets in phases: over its rate
 * (a queue builds: the locked path) and under it (once the queue has
 * drained, the packets lend: the unlocked path through the batch). */
static void leaf_phases(struct sim *s, __u64 leaf_ceil, bool batches)
{
	sim_init(s, 1ull << 40, leaf_ceil, batches);
	for (int i = 0; i < 3; i++)
		s->st[i].tokens = s->st[i].ctokens = 0;
	for (int ph = 0; ph < 20; ph++)
		for (int i = 0; i < 5000; i++) {
			cr_assert_eq(send1(s, 0, 1000), HTB_SEND);
			/* 1000 B is 8 us at 1 Gbit/s: 4 us apart is 2x, 16 us 0.5x */
			s->p.now += ph % 2 ? 16 * US : 4 * US;
			/* an empty root: its batch is applied at the leaf's pace */
		}
}

/* The leaf's own charges skip its lock while it lends (htb_leaf_commit):
 * one CPU decides as without batches, through both paths and every
 * switch between them, and once applied the leaf's bucket and counters
 * are the same. Over its rate it queues (ceil = rate) or borrows. */
static void leaf_batched(__u64 leaf_ceil)
{
	static struct sim a, b;
	__u64 worst = 0, lends = 0;

	leaf_phases(&a, leaf_ceil, true);
	leaf_phases(&b, leaf_ceil, false);
	cr_assert_eq(a.n, b.n);
	for (__u32 i = 0; i < a.n; i++)
		worst = HTB_MAX(worst, a.t[i] > b.t[i] ? a.t[i] - b.t[i] : b.t[i] - a.t[i]);
	cr_expect_eq(worst, 0, "stamps %llu ns apart", (unsigned long long)worst);
	lends = a.batch[0][1].lends + a.st[1].lends;
	cr_expect_gt(a.batch[0][1].packets + a.batch[0][1].applied, 0, "the leaf never batched");
	cr_expect_eq(lends, b.st[1].lends);
	cr_expect_gt(b.st[1].lends, 0);
	if (leaf_ceil > GBIT(1))
		cr_expect_gt(b.st[1].borrows, 0, "no phase over the rate");
	else
		cr_expect_gt(b.st[1].shaped_until, 0, "no phase over the rate");
	htb_apply(&a.conf[1], &a.st[1], a.p.now - 16 * US, &a.batch[0][1], &no_limit, 0);
	cr_expect_eq(a.st[1].tokens, b.st[1].tokens);
	cr_expect_eq(a.st[1].ctokens, b.st[1].ctokens);
	cr_expect_eq(a.st[1].rcarry, b.st[1].rcarry);
	cr_expect_eq(a.st[1].bytes, b.st[1].bytes);
	cr_expect_eq(a.st[1].packets, b.st[1].packets);
	cr_expect_eq(a.st[1].shaped_until, b.st[1].shaped_until);
	/* a stamp not ahead of now is not written there (it orders nothing) */
	cr_expect_leq(a.st[1].last_stamp, b.st[1].last_stamp);
	sim_free(&a);
	sim_free(&b);
}

Test(batch, leaf_queueing_and_within_its_rate) { leaf_batched(GBIT(1)); }
Test(batch, leaf_borrowing_and_within_its_rate) { leaf_batched(GBIT(2)); }

/* CoDel and sparse flows beside the leaf's batch: a 10 Gbit/s leaf with
 * both on under a 100 Gbit/s root, a bulk flow at 2x the rate in some
 * phases (a queue builds, CoDel drops) and at half in others (it drains,
 * the leaf lends through its batch), some after a silence (the queue
 * gone at once), a ping flow throughout (sparse).
 * One CPU with batches decides every packet as without them, caps out of
 * reach. (At a cap a batch is pessimistic: applied at once, its packets
 * find the refill beyond the cap lost that, one by one, they would have
 * spent; under a batch of tokens, see "Batches".) */
#define FL_N	4096u
struct fsim {
	struct htb_class_conf conf[2];
	struct htb_class_state st[2];
	struct htb_class_batch batch[2];
	struct htb_flow flows[FL_N];
	struct htb_env env;
	struct htb_params p;
};

static void fsim_init(struct fsim *s, bool batches)
{
	struct htb_class_params root = {
		.classid = 0x10001, .rate_Bps = GBIT(100), .ceil_Bps = GBIT(100),
		.burst = 1ull << 40, .cburst = 1ull << 40, .limit_ns = SEC,
	}, leaf = {
		.classid = 0x10002, .rate_Bps = GBIT(10), .ceil_Bps = GBIT(10),
		.burst = 1ull << 40, .cburst = 1ull << 40, .limit_ns = 100 * MS,
		.leaf = true, .aqm = true, .flows = true,
	};

	memset(s, 0, sizeof(*s));
	s->p.now = T0;
	s->p.horizon_ns = HTB_DEFAULT_HORIZON_NS;
	root.path[root.depth++] = 0;
	leaf.path[leaf.depth++] = 1;
	leaf.path[leaf.depth++] = 0;
	cr_assert_eq(htb_conf_from_params(&root, &s->conf[0]), 0);
	cr_assert_eq(htb_conf_from_params(&leaf, &s->conf[1]), 0);
	htb_state_init(&s->st[0], &s->conf[0], T0);
	htb_state_init(&s->st[1], &s->conf[1], T0);
	for (int i = 0; i < 2; i++)	/* empty: the caps stay out of reach */
		s->st[i].tokens = s->st[i].ctokens = 0;
	s->env = (struct htb_env){ .conf = s->conf, .state = s->st, .n = 2,
				   .flows = s->flows, .nflows = FL_N,
				   .batch = batches ? s->batch : NULL };
}

/* One packet of flow hash; the flow's entry added as the program does
 * (flow_add) when the decision says it is new. */
static int fsend(struct fsim *s, __u32 hash, __u32 len, __u64 *T)
{
	struct htb_decision d;
	int v;

	s->p.flow_hash = hash;
	v = htb_schedule(&s->env, &s->conf[1], &s->p, len, 0, &d);
	*T = d.tstamp;
	return v;
}

Test(batch, codel_and_sparse_flows_as_without_batches)
{
	static struct fsim a, b;
	__u64 ta, tb, worst = 0, sent = 0, held = 0;

	fsim_init(&a, true);
	fsim_init(&b, false);
	for (int ph = 0; ph < 8; ph++)
		for (int i = 0; i < 250000; i++) {
			/* 1500 B is 1.2 us at 10 Gbit/s: 0.6 us apart is 2x (150
			 * ms: CoDel enters), 2.4 us is half */
			__u64 gap = ph % 2 ? 2400 : 600;

			if (i == 0 && ph % 4 == 2) {	/* silence: the queue is gone at once */
				a.p.now += 200 * MS;
				b.p.now += 200 * MS;
			}
			int va = fsend(&a, 7, 1500, &ta), vb = fsend(&b, 7, 1500, &tb);

			cr_assert_eq(va, vb, "phase %d packet %d: verdict %d against %d", ph, i, va, vb);
			worst = HTB_MAX(worst, ta > tb ? ta - tb : tb - ta);
			sent += va == HTB_SEND;
			if (i % 100 == 0) {	/* a ping, sparse */
				va = fsend(&a, 1000 + (__u32)i, 98, &ta);
				vb = fsend(&b, 1000 + (__u32)i, 98, &tb);
				cr_assert_eq(va, vb);
				worst = HTB_MAX(worst, ta > tb ? ta - tb : tb - ta);
			}
			held += a.batch[1].packets;
			a.p.now += gap;
			b.p.now += gap;
		}
	cr_expect_eq(worst, 0, "stamps %llu ns apart", (unsigned long long)worst);
	cr_expect_gt(held, 0, "the leaf never batched");
	cr_expect_gt(b.st[1].aqm_drops, 0, "CoDel never acted");
	cr_expect_gt(b.st[1].sparse_packets, 0, "no sparse packet");
	cr_expect_eq(a.st[1].aqm_drops, b.st[1].aqm_drops);
	cr_expect_eq(a.st[1].sparse_packets, b.st[1].sparse_packets);
	cr_expect_eq(a.st[1].drops, b.st[1].drops);
	cr_expect_eq(a.st[1].packets + a.batch[1].packets, b.st[1].packets);
	cr_expect_gt(sent, 0);
}

/* A linear class's batch sums bytes, due at conf.batch_lin: the fewest
 * length-adjusted bytes whose rate or ceil cost reaches HTB_BATCH_NS, so
 * a sum is due exactly where its costs would be; a class whose cost is
 * not linear in the length has none. */
Test(batch, byte_sum_due_where_costs_are)
{
	static const __u64 rates[] = { 1000, 125000, 1250000, GBIT(1) / 8 + 7,
				       GBIT(1), GBIT(10), GBIT(100), GBIT(400) };
	struct htb_class_params cp = { .classid = 0x10001, .burst = 100000,
				       .cburst = 100000, .depth = 1 };
	struct htb_class_conf c;

	for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		for (unsigned k = 0; k < 2; k++) {
			const struct htb_ratecfg *r;
			__u64 b;

			cp.rate_Bps = rates[i];
			cp.ceil_Bps = rates[i] * (k ? 3 : 1);
			cr_assert_eq(htb_conf_from_params(&cp, &c), 0);
			b = c.batch_lin;
			cr_assert_gt(b, 0, "rate %llu: no byte sum", (unsigned long long)rates[i]);
			/* the rate is the slower bucket: its cost decides */
			r = &c.rate;
			cr_expect_geq((b * r->mult) >> r->shift, HTB_BATCH_NS);
			cr_expect_lt(((b - 1) * r->mult) >> r->shift, HTB_BATCH_NS,
				     "rate %llu: %llu bytes is not the fewest",
				     (unsigned long long)rates[i], (unsigned long long)b);
		}
	}
	cp.rate_Bps = cp.ceil_Bps = GBIT(1);
	cp.overhead = 24;
	cr_assert_eq(htb_conf_from_params(&cp, &c), 0);
	cr_expect_gt(c.batch_lin, 0, "an overhead is linear");
	cp.overhead = -4;
	cr_assert_eq(htb_conf_from_params(&cp, &c), 0);
	cr_expect_eq(c.batch_lin, 0, "a negative overhead is not");
	cp.overhead = 0;
	cp.mpu = 64;
	cr_assert_eq(htb_conf_from_params(&cp, &c), 0);
	cr_expect_eq(c.batch_lin, 0, "an mpu is not");
	cp.mpu = 0;
	cp.linklayer = HTB_LINKLAYER_ATM;
	cr_assert_eq(htb_conf_from_params(&cp, &c), 0);
	cr_expect_eq(c.batch_lin, 0, "ATM cells are not");
}

/* Both CPUs through phases within the leaves' rates, over them
 * (borrowing) and idle, packets of many sizes, an overhead: with byte
 * sums (conf.batch_lin) and with costs summed per packet (batch_lin 0),
 * every stamp is the same, and once every batch is applied so is every
 * class's state, to the carries. */
static void mixed_phases(struct sim *s, bool bytes)
{
	__u32 len = 64;

	sim_init_oh(s, 1ull << 40, GBIT(2), true, 24);
	for (int i = 0; i < 3; i++) {
		s->st[i].tokens = s->st[i].ctokens = 0;
		if (!bytes)
			s->conf[i].batch_lin = 0;
	}
	htb_conf_carries(s->conf, 3);	/* costs: no carry */
	for (int ph = 0; ph < 12; ph++)
		for (int i = 0; i < 3000; i++) {
			for (int c = 0; c < NCPU; c++)
				cr_assert_eq(send1(s, c, len), HTB_SEND);
			len = len * 7 % 1501 + 60;	/* 60 .. 1560 bytes */
			s->p.now += ph % 3 == 0 ? 2 * US : ph % 3 == 1 ? 12 * US : 40 * US;
		}
}

Test(batch, byte_sums_charge_as_costs_do)
{
	static struct sim a, b;

	mixed_phases(&a, true);
	mixed_phases(&b, false);
	cr_assert_gt(a.conf[0].batch_lin, 0);
	cr_assert_eq(a.n, b.n);
	for (__u32 i = 0; i < a.n; i++)
		cr_assert_eq(a.t[i], b.t[i], "packet %u: %llu vs %llu", i,
			     (unsigned long long)a.t[i], (unsigned long long)b.t[i]);
	cr_expect_gt(b.st[1].borrows, 0, "no phase over the rate");
	cr_expect(a.conf[1].flags & HTB_CONF_CARRY);
	for (int c = 0; c < NCPU; c++)	/* the carries into the root's batches */
		htb_carry_flush(&a.env[c], &a.p);
	for (int k = 0; k < 3; k++) {
		for (int c = 0; c < NCPU; c++) {
			htb_apply(&a.conf[k], &a.st[k], a.p.now, &a.batch[c][k], &no_limit, 0);
			htb_apply(&b.conf[k], &b.st[k], b.p.now, &b.batch[c][k], &no_limit, 0);
		}
		cr_expect_eq(a.st[k].tokens, b.st[k].tokens, "class %d", k);
		cr_expect_eq(a.st[k].ctokens, b.st[k].ctokens, "class %d", k);
		cr_expect_eq(a.st[k].rcarry, b.st[k].rcarry, "class %d", k);
		cr_expect_eq(a.st[k].ccarry, b.st[k].ccarry, "class %d", k);
		cr_expect_eq(a.st[k].bytes, b.st[k].bytes, "class %d", k);
		cr_expect_eq(a.st[k].lends, b.st[k].lends, "class %d", k);
		cr_expect_eq(a.st[k].borrows, b.st[k].borrows, "class %d", k);
	}
	sim_free(&a);
	sim_free(&b);
}

/* The leaf's fast check (htb_leaf_lends_at) says what its snapshot says
 * (htb_ready_from: ceil_at, rate_at and last_stamp not after the packet's
 * own time), over random buckets, batches of costs and of bytes, clocks
 * and own stamps; with hysteresis on it says no (the lock then decides). */
Test(batch, leaf_fast_check_as_its_snapshot)
{
	static struct sim s;
	unsigned seed = 26;
	int yes = 0, no = 0;

	sim_init_oh(&s, 125000, GBIT(2), true, 0);
	for (int i = 0; i < 200000; i++) {
		struct htb_one x = { .c = &s.conf[1], .st = &s.st[1], .a = &s.batch[0][1] };
		struct htb_blimit bl = { 0 };
		struct htb_class_batch *a = &s.batch[0][1];
		struct htb_ready r;
		__u64 own = s.p.now + (rand_r(&seed) % 3 ? 0 : rand_r(&seed) % (200 * US));
		int want, got;

		s.st[1].tokens = (__s64)(rand_r(&seed) % (400 * US)) - 200 * (__s64)US;
		s.st[1].ctokens = (__s64)(rand_r(&seed) % (400 * US)) - 200 * (__s64)US;
		s.st[1].t_c = s.p.now - rand_r(&seed) % (100 * US);
		s.st[1].last_stamp = s.p.now + rand_r(&seed) % (400 * US) - 200 * US;
		s.st[1].rcarry = rand_r(&seed);
		memset(a, 0, sizeof(*a));
		if (rand_r(&seed) % 2) {	/* a batch of bytes, then maybe costs */
			for (int n = rand_r(&seed) % 8; n > 0; n--)
				htb_batch_take_lin(x.c, a, &s.p, 64 + rand_r(&seed) % 1400, 1);
			if (a->packets && rand_r(&seed) % 2)
				htb_batch_fold(a);
		}
		s.p.hysteresis = rand_r(&seed) % 8 == 0;
		htb_ready_from(&x, &bl, &s.p, &r);
		want = !s.p.hysteresis && HTB_MAX(r.ceil_at, r.rate_at) <= own &&
		       r.last_stamp <= own;
		got = htb_leaf_lends_at(&x, &s.p, own);
		cr_assert_eq(got, want, "case %d", i);
		yes += got;
		no += !got;
	}
	cr_expect_gt(yes, 10000);
	cr_expect_gt(no, 10000);
	sim_free(&s);
}

/* htb_leaf_lends_at's shortcut at its edge: a conf (random rates, ceils,
 * overheads), this CPU's batch of bytes at batch_lin - 1 or batch_lin,
 * both carries at their largest, the rate or the ceil bucket at
 * HTB_BATCH_NS - 1, HTB_BATCH_NS or + 1 (the shortcut's threshold) and the
 * other full, the batch of this tree or of the previous one summed at
 * half the rate: each decided as the snapshot decides. Some batches cost
 * exactly HTB_BATCH_NS (the bound is reached), so a threshold one lower,
 * or a batch at batch_lin let through, fails here. */
Test(batch, lends_at_its_shortcut_edge)
{
	unsigned seed = 2605;
	int tight = 0, refused = 0;

	for (int i = 0; i < 3000; i++) {
		__u64 rate = 10000 + rand_r(&seed) % GBIT(40);
		__u64 ceil = rate + (rand_r(&seed) % 2 ? 0 : rand_r(&seed) % GBIT(40));
		struct htb_class_params cp = {
			.classid = 0x10002, .rate_Bps = rate, .ceil_Bps = ceil,
			.limit_ns = SEC, .leaf = true, .overhead = rand_r(&seed) % 64,
		};
		struct htb_class_conf c, half;
		struct htb_class_state st;
		struct htb_class_batch a;
		struct htb_params p = { .now = T0, .gen = 7 };
		struct htb_one x = { .c = &c, .st = &st, .a = &a };
		struct htb_blimit bl = { 0 };
		struct htb_ready r;

		cp.burst = cp.cburst = (__u32)HTB_MIN(ceil / 100, 1u << 30);	/* 10 ms */
		cp.path[cp.depth++] = 1;
		cr_assert_eq(htb_conf_from_params(&cp, &c), 0);
		cp.rate_Bps = rate / 2;
		cr_assert_eq(htb_conf_from_params(&cp, &half), 0);
		if (!c.batch_lin)
			continue;
		for (int k = 0; k < 24; k++) {
			int ceil_edge = k & 1, prev = k >> 1 & 1, at_lin = k >> 2 & 1;
			__s64 edge = (__s64)HTB_BATCH_NS + (k >> 3) - 1;
			__s64 toks, ctoks;
			int want, got;

			memset(&st, 0, sizeof(st));
			st.t_c = p.now;
			st.tokens = ceil_edge ? c.buffer : edge;
			st.ctokens = ceil_edge ? edge : c.cbuffer;
			st.rcarry = (1ull << c.rate.shift) - 1;
			st.ccarry = (1ull << c.ceil.shift) - 1;
			memset(&a, 0, sizeof(a));
			htb_batch_lin_start(prev ? &half : &c, &a, prev ? p.gen - 1 : p.gen);
			a.lin = c.batch_lin - 1 + at_lin;
			a.packets = 3;
			htb_ready_from(&x, &bl, &p, &r);
			want = HTB_MAX(r.ceil_at, r.rate_at) <= p.now;
			got = htb_leaf_lends_at(&x, &p, p.now);
			cr_assert_eq(got, want, "rate %llu ceil %llu case %d: %d, the snapshot %d",
				     (unsigned long long)rate, (unsigned long long)ceil, k, got, want);
			refused += !want;
			htb_toks_at_now(&x, 0, &toks, &ctoks);
			tight += !prev && !at_lin &&
				 (ceil_edge ? edge - ctoks : edge - toks) == (__s64)HTB_BATCH_NS;
		}
	}
	cr_expect_gt(tight, 0, "no batch of bytes below batch_lin cost HTB_BATCH_NS");
	cr_expect_gt(refused, 0);
}

/* A batch of bytes holds its generation where a batch of costs holds its
 * borrow ns (htb_batch_rprod): the snapshot's borrow bucket must not take
 * the one for the other. With the sharing loop's limit on, the leaf's
 * borrow_at is as without the batch, whatever the reload count. */
Test(batch, a_batch_of_bytes_takes_nothing_from_the_borrow_bucket)
{
	static struct sim s;
	struct htb_one x;
	struct htb_blimit bl = { .word = (20ull << 32) | 0x80000000u, .bbuffer = 100 * US };
	struct htb_ready with, without;

	sim_init(&s, 125000, GBIT(2), true);
	x = (struct htb_one){ .c = &s.conf[1], .st = &s.st[1], .a = &s.batch[0][1] };
	s.st[1].btokens = 0;
	s.st[1].t_c = s.p.now;
	s.p.gen = 5000;
	htb_ready_from(&x, &bl, &s.p, &without);
	cr_assert_eq(htb_batch_take_lin(x.c, &s.batch[0][1], &s.p, 1000, 1), 1);
	cr_assert_eq(s.batch[0][1].lin, 1000);
	htb_ready_from(&x, &bl, &s.p, &with);
	cr_expect_eq(with.borrow_at, without.borrow_at, "borrow_at %llu, without the batch %llu",
		     (unsigned long long)with.borrow_at, (unsigned long long)without.borrow_at);
	sim_free(&s);
}

/* The path carry holds one leaf's packets at a time: on one CPU, leaf 1's
 * packets within its rate wait in it, leaf 2's go to the root's batch as
 * before, a due carry goes into the root's batch, and the root's state,
 * batch and carry together count every packet. */
Test(batch, the_path_carry_holds_one_leaf)
{
	static struct sim s;
	struct htb_decision d;
	__u32 most = 0, n1 = 0;

	sim_init(&s, 1ull << 40, GBIT(10), true);
	cr_assert(s.conf[1].flags & HTB_CONF_CARRY);
	cr_assert_eq(s.conf[1].carry_due, s.conf[0].batch_lin);
	for (int i = 0; i < 1000; i++) {
		__u32 l = i % 3 ? 1 : 2;
		struct htb_path_carry was = s.carry[0];

		cr_assert_eq(htb_schedule(&s.env[0], &s.conf[l], &s.p, 1000, 0, &d), HTB_SEND);
		/* another leaf's packet leaves a held carry as it was */
		if (was.packets && was.leaf != l)
			cr_assert_eq(memcmp(&was, &s.carry[0], sizeof(was)), 0, "packet %d", i);
		n1 += l == 1;
		most = HTB_MAX(most, s.carry[0].packets);
		s.p.now += 12 * US;
	}
	cr_expect_gt(most, 1, "nothing carried");
	cr_expect_lt(most, HTB_BATCH_PKTS);
	cr_expect_eq(s.st[1].packets, n1, "the leaf is charged at once (1 Gbit/s, 1000 B)");
	cr_expect_eq(s.st[0].packets + s.batch[0][0].packets + s.carry[0].packets, 1000);
	cr_expect_eq(s.st[0].bytes + s.batch[0][0].bytes + s.carry[0].bytes, 1000 * 1000);
	sim_free(&s);
}
