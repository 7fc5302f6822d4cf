// SPDX-License-Identifier: GPL-2.0
/*
 * Sparse flows inside a class (docs/design.md, "Sparse flows"), in
 * the userspace build of the shared code: one leaf at 10 Mbit/s kept
 * backlogged by a bulk flow, other flows beside it, a simulated clock, the
 * flow table as the program's LRU map would hold it (a flow's entry at
 * hash % FLOWS; the cases keep their hashes apart). tests/bpf/test_prog.c
 * repeats the key cases through the program.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "htb/sched.h"
#include "loader/maps_fill.h"

#define MS	1000000ull
#define SEC	1000000000ull
#define T0	(100 * SEC)
#define RATE	(10000000ull / 8)	/* 10 Mbit/s in bytes/s */
#define LEN	1500u
#define PING	98u
#define FLOWS	65536u
#define BULK_H	1u			/* the bulk flow's hash */
#define NSENT	400000

struct leaf {
	struct htb_class_conf conf;
	struct htb_class_state st;
	struct htb_env env;
	struct htb_params p;
	struct htb_flow *flows;
	/* what was sent: departure time and bytes, in sending order */
	__u64 *t;
	__u32 *len;
	int n;
};

/* One top-level leaf at RATE, limit 100 ms, flows as given, no AQM. */
static void leaf_init(struct leaf *l, bool flows, bool aqm)
{
	struct htb_class_params cp = {
		.classid = 0x10001, .depth = 1, .leaf = true,
		.rate_Bps = RATE, .burst = LEN, .cburst = LEN,
		.limit_ns = 100 * MS, .aqm = aqm, .flows = flows,
	};

	memset(l, 0, sizeof(*l));
	cr_assert_eq(htb_conf_from_params(&cp, &l->conf), 0);
	l->flows = calloc(FLOWS, sizeof(*l->flows));
	l->t = calloc(NSENT, sizeof(*l->t));
	l->len = calloc(NSENT, sizeof(*l->len));
	cr_assert(l->flows && l->t && l->len);
	l->env.conf = &l->conf;
	l->env.state = &l->st;
	l->env.n = 1;
	l->env.flows = l->flows;
	l->env.nflows = FLOWS;
	l->p.now = T0;
	l->p.horizon_ns = HTB_DEFAULT_HORIZON_NS;
	htb_state_init(&l->st, &l->conf, T0);
}

static void leaf_free(struct leaf *l)
{
	free(l->flows);
	free(l->t);
	free(l->len);
}

/* One packet of flow hash at the leaf's clock; records what was sent. */
static int send1(struct leaf *l, __u32 hash, __u32 len, __u64 in_ts,
		 struct htb_decision *d)
{
	int v;

	l->p.flow_hash = hash;
	v = htb_schedule(&l->env, &l->conf, &l->p, len, in_ts, d);
	if (v == HTB_SEND && l->n < NSENT) {
		l->t[l->n] = d->tstamp;
		l->len[l->n++] = len;
	}
	return v;
}

/* The bulk flow at twice the rate for dur_ns: a queue at the limit. */
static void bulk(struct leaf *l, __u64 dur_ns)
{
	struct htb_decision d;
	__u64 end = l->p.now + dur_ns;

	for (; l->p.now < end; l->p.now += LEN * SEC / (2 * RATE))
		send1(l, BULK_H, LEN, 0, &d);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The most bytes that leave in any window of win_ns (by departure time)
 * among the packets sent. */
static __u64 max_window_bytes(const struct leaf *l, __u64 win_ns)
{
	__u64 (*ev)[2] = calloc(l->n, sizeof(*ev)), sum = 0, best = 0;
	int lo = 0;

	cr_assert(ev);
	for (int i = 0; i < l->n; i++) {
		ev[i][0] = l->t[i];
		ev[i][1] = l->len[i];
	}
	qsort(ev, l->n, sizeof(*ev), cmp_u64);
	for (int hi = 0; hi < l->n; hi++) {
		sum += ev[hi][1];
		while (ev[hi][0] - ev[lo][0] >= win_ns)
			sum -= ev[lo++][1];
		if (sum > best)
			best = sum;
	}
	free(ev);
	return best;
}

Test(flows, sparse_packet_leaves_ahead_of_the_backlog)
{
	struct leaf l;
	struct htb_decision d;
	__u64 before, after;

	leaf_init(&l, true, false);
	bulk(&l, 80 * MS);	/* a queue of about 80 ms (it grows 1 ms a ms) */
	before = l.st.last_stamp;
	cr_assert_gt(before, l.p.now + 70 * MS, "no backlog to jump: %llu ms",
		     (before - l.p.now) / MS);
	cr_assert_eq(send1(&l, 7, PING, 0, &d), HTB_SEND);
	cr_expect(d.sparse, "the ping queued behind the bulk");
	cr_expect_eq(d.tstamp, l.p.now, "ping stamped %lld ns from now",
		     (long long)(d.tstamp - l.p.now));
	/* the class's next packet moves back by exactly the ping's cost */
	l.p.now += 1;
	cr_assert_eq(send1(&l, BULK_H, LEN, 0, &d), HTB_SEND);
	after = d.tstamp;
	cr_expect(!d.sparse);
	cr_expect_geq(after, before + (PING + LEN) * SEC / RATE - 2,
		      "bulk moved back %llu ns, the ping and its own cost %llu",
		      after - before, (PING + LEN) * SEC / RATE);
	cr_expect_leq(after, before + (PING + LEN) * SEC / RATE + 2);
	leaf_free(&l);
}

Test(flows, a_flow_with_a_packet_ahead_queues_behind_the_backlog)
{
	struct leaf l;
	struct htb_decision d;

	leaf_init(&l, true, false);
	bulk(&l, 80 * MS);
	cr_assert_eq(send1(&l, 7, 1000, 0, &d), HTB_SEND);
	cr_expect(d.sparse, "first packet of a new flow");
	/* a moment later the first is still ahead at the class's rate:
	 * 1000 + 1000 > 1514 bytes */
	l.p.now += 1000;
	cr_assert_eq(send1(&l, 7, 1000, 0, &d), HTB_SEND);
	cr_expect(!d.sparse, "a flow with 1000 bytes ahead is not sparse");
	cr_expect_gt(d.tstamp, l.p.now + 70 * MS);
	/* and stays bulk while that is ahead, even for a small packet */
	l.p.now += 1000;
	send1(&l, 7, PING, 0, &d);
	cr_expect(!d.sparse, "a flow queued behind the backlog is not sparse");
	leaf_free(&l);
}

Test(flows, acks_under_one_mtu_stay_sparse)
{
	struct leaf l;
	struct htb_decision d;

	leaf_init(&l, true, false);
	bulk(&l, 80 * MS);
	/* 22 ACKs of 66 bytes at once: 1452 bytes ahead, all sparse; the
	 * 23rd would make 1518 */
	for (int i = 0; i < 22; i++) {
		cr_assert_eq(send1(&l, 9, 66, 0, &d), HTB_SEND);
		cr_expect(d.sparse, "ACK %d not sparse", i);
	}
	send1(&l, 9, 66, 0, &d);
	cr_expect(!d.sparse, "the ACK past one MTU ahead was sparse");
	leaf_free(&l);
}

Test(flows, the_bulk_flow_is_never_sparse_once_queued)
{
	struct leaf l;

	leaf_init(&l, true, false);
	bulk(&l, 2 * SEC);
	/* its first packets may go before the queue builds */
	cr_expect_leq(l.st.sparse_packets, 2, "%llu bulk packets took the lane",
		      l.st.sparse_packets);
	leaf_free(&l);
}

Test(flows, stamps_never_decrease_within_a_flow)
{
	struct leaf l;
	struct htb_decision d;
	__u64 last[64] = { 0 };
	unsigned seed = 1;

	leaf_init(&l, true, false);
	/* 64 flows, random sizes and gaps, some with their own stamps
	 * (TCP's pacing) ahead of the clock: offered near twice the rate */
	for (int i = 0; i < 200000; i++) {
		__u32 h = rand_r(&seed) % 64, len = 64 + rand_r(&seed) % 1451;
		__u64 in_ts = h % 4 == 0 ? l.p.now + rand_r(&seed) % (20 * MS) : 0;

		l.p.now += rand_r(&seed) % (len * SEC / RATE);
		if (send1(&l, h + 100, len, in_ts, &d) != HTB_SEND)
			continue;
		cr_assert_geq(d.tstamp, last[h], "flow %u: stamp %llu after %llu",
			      h, d.tstamp, last[h]);
		last[h] = d.tstamp;
	}
	cr_expect_gt(l.st.sparse_packets, 100);
	cr_expect_gt(l.st.drops, 100, "the mix never filled the queue");
	leaf_free(&l);
}

Test(flows, a_flood_of_new_flows_leaves_at_the_class_rate)
{
	struct leaf l;
	struct htb_decision d;
	__u64 t_start, from, to, bytes = 0, got;

	leaf_init(&l, true, false);
	t_start = l.p.now;
	/* 60,000 one-packet flows at three times the rate, for 4.8 s */
	for (__u32 i = 0; i < 60000; i++, l.p.now += LEN * SEC / (3 * RATE))
		send1(&l, 1000 + i, LEN, 0, &d);
	/* what leaves from the first second to the end of the offer */
	from = t_start + SEC;
	to = l.p.now;
	for (int i = 0; i < l.n; i++)
		if (l.t[i] >= from && l.t[i] < to)
			bytes += l.len[i];
	got = bytes * SEC / (to - from);
	cr_expect(got >= RATE * 98 / 100 && got <= RATE * 102 / 100,
		  "%llu bytes/s left, the rate is %llu (sparse %llu of %d)",
		  got, RATE, l.st.sparse_packets, l.n);
	cr_expect_gt(l.st.sparse_packets, 1000, "the flood never took the lane");
	leaf_free(&l);
}

/* The bound of "Sparse flows": in any window W a leaf sends at most what
 * its buckets allow (rate * W + burst) plus min(rate * queue, rate/4 * W
 * + 2 full packets). Checked with a bulk flow at twice the rate and many
 * small flows offering far more than the lane takes. */
Test(flows, the_overshoot_in_any_window_is_bounded)
{
	static const __u64 wins[] = { 2 * MS, 10 * MS, 50 * MS, 100 * MS, SEC };
	struct leaf l;
	struct htb_decision d;
	__u64 end;
	__u32 h = 1000;

	leaf_init(&l, true, false);
	end = l.p.now + 3 * SEC;
	while (l.p.now < end) {
		/* per 0.6 ms (the bulk's gap at twice the rate): one bulk
		 * packet and two 200-byte packets of new flows */
		send1(&l, BULK_H, LEN, 0, &d);
		send1(&l, h++, 200, 0, &d);
		send1(&l, h++, 200, 0, &d);
		l.p.now += LEN * SEC / (2 * RATE);
	}
	cr_assert_gt(l.st.sparse_packets, 1000);
	for (unsigned i = 0; i < sizeof(wins) / sizeof(wins[0]); i++) {
		__u64 w = wins[i], got = max_window_bytes(&l, w);
		__u64 lane = (RATE >> HTB_SPARSE_SHIFT) * w / SEC +
			     HTB_SPARSE_BURST_PKTS * HTB_SPARSE_BYTES;
		__u64 queue = RATE * 100 * MS / SEC;
		__u64 bound = RATE * w / SEC + LEN + (lane < queue ? lane : queue);

		cr_expect_leq(got, bound, "window %llu ms: %llu bytes, bound %llu",
			      w / MS, got, bound);
		/* and the lane is what makes it: above the buckets' allowance */
		if (w <= 100 * MS)
			cr_expect_gt(got, RATE * w / SEC + LEN,
				     "window %llu ms: %llu bytes, no overshoot to bound",
				     w / MS, got);
	}
	leaf_free(&l);
}

Test(flows, off_is_the_fifo)
{
	struct leaf a, b;
	struct htb_decision da, db;
	unsigned seed = 3;

	leaf_init(&a, false, false);
	leaf_init(&b, false, false);
	b.env.flows = NULL;	/* no flow state at all */
	b.env.nflows = 0;
	for (int i = 0; i < 50000; i++) {
		__u32 h = rand_r(&seed) % 16, len = 64 + rand_r(&seed) % 1451;
		__u64 gap = rand_r(&seed) % (len * SEC / RATE);

		a.p.now += gap;
		b.p.now += gap;
		cr_assert_eq(send1(&a, h, len, 0, &da), send1(&b, h, len, 0, &db));
		cr_assert_eq(da.tstamp, db.tstamp);
		cr_assert(!da.sparse && !da.flow_new);
	}
	cr_expect_eq(a.st.sparse_packets, 0);
	leaf_free(&a);
	leaf_free(&b);
}

Test(flows, codel_is_not_reset_by_sparse_packets)
{
	struct leaf a, b;
	struct htb_decision d;
	__u64 end;

	/* the same bulk backlog under CoDel, b with a ping every 10 ms */
	leaf_init(&a, true, true);
	leaf_init(&b, true, true);
	end = a.p.now + 3 * SEC;
	for (__u64 k = 0; a.p.now < end; k++) {
		send1(&a, BULK_H, LEN, 0, &d);
		send1(&b, BULK_H, LEN, 0, &d);
		if (k % 17 == 0) {
			send1(&b, 7, PING, 0, &d);
			cr_expect(d.sparse || k < 200, "ping %llu queued", k / 17);
		}
		a.p.now += LEN * SEC / (2 * RATE);
		b.p.now = a.p.now;
	}
	cr_expect_gt(a.st.aqm_drops, 100);
	cr_expect_geq(b.st.aqm_drops, a.st.aqm_drops * 95 / 100,
		      "with pings %llu CoDel drops, without %llu",
		      b.st.aqm_drops, a.st.aqm_drops);
	leaf_free(&a);
	leaf_free(&b);
}

/* A flow without state (the program's map has no entry for it): behind a
 * backlog it is sparse, and the decision says it is new, with the
 * vfinish to store. In an idle class it leaves at once, and a packet that
 * leaves now keeps no flow state (nothing of its flow waits, its stamp is
 * no floor; docs/design.md, "Sparse flows"): nothing to add. */
Test(flows, a_new_flow_is_reported_for_the_caller_to_add)
{
	struct leaf l;
	struct htb_decision d;

	leaf_init(&l, true, false);
	l.env.nflows = 0;	/* flows kept, but none has an entry */
	cr_assert_eq(send1(&l, 5, PING, 0, &d), HTB_SEND);
	cr_expect(!d.flow_new && !d.sparse && d.tstamp == l.p.now,
		  "a packet that leaves now is not added (new %d, sparse %d)", d.flow_new, d.sparse);
	l.env.nflows = FLOWS;
	bulk(&l, 80 * MS);
	l.env.nflows = 0;
	cr_assert_eq(send1(&l, 6, PING, 0, &d), HTB_SEND);
	cr_expect(d.flow_new && d.sparse && d.tstamp == l.p.now);
	cr_expect_eq(d.vfinish, l.p.now + PING * SEC / RATE);
	leaf_free(&l);
}
