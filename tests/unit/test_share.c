// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing loop (src/share/share.c) beside the departure-time code
 * (include/htb/sched.h) on a simulated clock: senders offer packets, the
 * program's algorithm stamps them, the loop runs every 10 ms, and what
 * leaves (by stamp) is compared with the fluid ideal (src/share/fluid.h) for the
 * same offers. Each class within 2% of it. Without the loop (the lease not
 * running) the same cases show first come, first served, logged beside.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "htb/sched.h"
#include "loader/maps_fill.h"
#include "share/share.h"

#define MAXC	16
#define MS	1000000ull
#define SEC	1000000000ull
#define T0	(100 * SEC)
#define MBIT(x)	((__u64)((x) * 1e6 / 8))
#define STEP	(20 * 1000ull)		/* the senders' clock step: 20 us */
#define NBINS	100			/* 100 ms bins of departures */
#define BIN	(100 * MS)
#define LEN	1500

/* A sender: rate > 0 offers that many B/s; rate 0 keeps `window` packets
 * waiting in the shaper (a TCP flow under TSQ: sends when one leaves). */
struct src {
	__u32 leaf;
	__u64 rate;
	__u32 window;
	__u64 start, stop;		/* ns after T0; stop 0: never */
	double next;			/* ns: when the next packet is due */
	__u64 seed;			/* nonzero: Poisson arrivals (an LCG) */
	__u64 out[64];			/* window senders: stamps in flight */
};

struct sim {
	struct htb_class_conf conf[MAXC];
	struct htb_class_state st[MAXC];
	struct htb_class_seen seen[MAXC];	/* what the collector copies */
	__u32 changed[MAXC];			/* ... and lists */
	struct htb_class_share sh[MAXC];
	__u32 parent[MAXC];
	__u32 n;
	struct htb_env env;
	struct htb_params p;
	struct share_loop loop;
	__u64 let_go;			/* the loop's count, kept past share_free */
	bool use_loop;
	struct src src[MAXC];
	__u32 nsrc;
	double bytes[MAXC][NBINS];	/* by departure time */
};

static void sim_init(struct sim *s, bool use_loop)
{
	memset(s, 0, sizeof(*s));
	s->env.conf = s->conf;
	s->env.state = s->st;
	s->env.share = s->sh;
	s->env.n = MAXC;
	s->p.now = T0;
	s->p.horizon_ns = HTB_DEFAULT_HORIZON_NS;
	s->use_loop = use_loop;
}

/* Class idx (in preorder) under parent; rates in Mbit/s. */
static void cls(struct sim *s, __u32 idx, __u32 parent, double rate, double ceil,
		__u32 prio, __u32 quantum)
{
	struct htb_class_params p = {
		.classid = 0x10000 | (idx + 1), .rate_Bps = MBIT(rate),
		.ceil_Bps = MBIT(ceil), .burst = 15000, .cburst = 15000,
		.limit_ns = 100 * MS, .leaf = true, .prio = prio, .quantum = quantum,
	};
	__u32 c = idx;

	s->parent[idx] = parent;
	while (c != HTB_NO_CLASS && p.depth < HTB_MAX_DEPTH) {
		p.path[p.depth++] = c;
		c = s->parent[c];
	}
	cr_assert_eq(htb_conf_from_params(&p, &s->conf[idx]), 0);
	if (parent != HTB_NO_CLASS)
		s->conf[parent].flags &= ~HTB_CONF_LEAF;
	htb_state_init(&s->st[idx], &s->conf[idx], T0);
	s->n = idx + 1 > s->n ? idx + 1 : s->n;
}

static void offer(struct sim *s, __u32 leaf, double mbit, double start_s, double stop_s)
{
	struct src *r = &s->src[s->nsrc++];

	r->leaf = leaf;
	r->rate = mbit > 0 ? MBIT(mbit) : 0;
	r->window = mbit > 0 ? 0 : 4;
	r->start = (__u64)(start_s * SEC);
	r->stop = (__u64)(stop_s * SEC);
	r->next = (double)r->start;
}

static void send_one(struct sim *s, struct src *r)
{
	struct htb_decision d;
	__u64 b;

	if (htb_schedule(&s->env, &s->conf[r->leaf], &s->p, LEN, 0, &d) != HTB_SEND)
		return;
	b = (d.tstamp - T0) / BIN;
	if (b < NBINS)
		s->bytes[r->leaf][b] += LEN;
	if (r->window)
		for (__u32 k = 0; k < r->window; k++)
			if (r->out[k] <= s->p.now) {
				r->out[k] = d.tstamp;
				break;
			}
}

static void src_step(struct sim *s, struct src *r, __u64 t)
{
	if (t < r->start || (r->stop && t >= r->stop))
		return;
	if (r->window) {
		for (__u32 k = 0; k < r->window; k++)
			if (r->out[k] <= s->p.now)
				send_one(s, r);
		return;
	}
	while (r->next <= (double)t) {
		double gap = (double)LEN * 1e9 / (double)r->rate;

		send_one(s, r);
		if (r->seed) {
			r->seed = r->seed * 6364136223846793005ull + 1442695040888963407ull;
			gap *= -log(((double)(r->seed >> 11) + 0.5) / 9007199254740992.0);
		}
		r->next += gap;
	}
}

/* Runs the senders for secs; the loop every SHARE_TICK_NS. */
static void run(struct sim *s, double secs)
{
	__u64 end = (__u64)(secs * SEC), next_tick = 0;

	if (s->use_loop)
		cr_assert_eq(share_plan(&s->loop, s->conf, s->n), 0);
	s->p.share = s->use_loop;
	for (__u64 t = 0; t < end; t += STEP) {
		s->p.now = T0 + t;
		if (s->use_loop && t >= next_tick) {
			__u32 nch = share_seen(s->st, s->n, s->seen, s->changed);

			cr_assert_eq(share_tick(&s->loop, s->seen, s->changed, nch, s->p.now,
						s->sh), 0);
			next_tick += SHARE_TICK_NS;
		}
		for (__u32 i = 0; i < s->nsrc; i++)
			src_step(s, &s->src[i], t);
	}
	s->let_go = s->loop.let_go;
	share_free(&s->loop);
}

/* Mbit/s class idx sent between from and to (seconds after T0). */
static double got(const struct sim *s, __u32 idx, double from, double to)
{
	double b = 0;

	for (__u32 i = (__u32)(from * 10 + 0.5); i < (__u32)(to * 10 + 0.5); i++)
		b += s->bytes[idx][i];
	return b * 8 / (to - from) / 1e6;
}

/* The fluid ideal for the sim's tree and its senders active at time t
 * (window senders offer all they can get), in Mbit/s per class. */
static void ideal(const struct sim *s, double t, double *mbit)
{
	struct fluid_node n[MAXC];
	struct fluid_scratch *scr = NULL;

	memset(n, 0, sizeof(n));
	for (__u32 i = 0; i < s->n; i++) {
		n[i].parent = s->parent[i] == HTB_NO_CLASS ? FLUID_NONE : s->parent[i];
		n[i].leaf = !!(s->conf[i].flags & HTB_CONF_LEAF);
		n[i].prio = (__u8)s->conf[i].prio;
		n[i].quantum = s->conf[i].quantum;
		n[i].rate = s->conf[i].rate.rate_Bps;
		n[i].ceil = s->conf[i].ceil.rate_Bps;
	}
	for (__u32 k = 0; k < s->nsrc; k++) {
		const struct src *r = &s->src[k];
		__u64 ns = (__u64)(t * SEC);

		if (ns >= r->start && (!r->stop || ns < r->stop))
			n[r->leaf].demand = r->window ? FLUID_INF : r->rate;
	}
	cr_assert_eq(fluid_solve(n, s->n, &scr), 0);
	fluid_scratch_free(scr);
	for (__u32 i = 0; i < s->n; i++)
		mbit[i] = (double)n[i].got * 8 / 1e6;
}

/* Every leaf within tol (relative) of the ideal over [from, to). */
static void expect_ideal(const struct sim *s, double from, double to, double tol)
{
	double want[MAXC];

	ideal(s, (from + to) / 2, want);
	for (__u32 i = 0; i < s->n; i++) {
		double g = got(s, i, from, to);

		if (!(s->conf[i].flags & HTB_CONF_LEAF) || want[i] == 0)
			continue;
		cr_log_info("class 1:%x: %.3f Mbit/s, ideal %.3f (%+.2f%%)%s", i + 1, g,
			    want[i], (g / want[i] - 1) * 100, s->use_loop ? "" : " [no loop]");
		if (s->use_loop)
			cr_expect(fabs(g / want[i] - 1) <= tol,
				  "class 1:%x got %.3f Mbit/s, ideal %.3f", i + 1, g, want[i]);
	}
}

typedef void (*setup_fn)(struct sim *s);

/* The case with the loop (asserted) and without it (logged). */
static void both(setup_fn setup, double secs, double from, double to)
{
	static struct sim s;

	for (int loop = 1; loop >= 0; loop--) {
		sim_init(&s, loop);
		setup(&s);
		run(&s, secs);
		expect_ideal(&s, from, to, 0.02);
	}
}

/* ---------------------------------------------------------------- */

/* Parent 100 Mbit/s, n leaves of 5 Mbit/s (ceil 100) flooding 100 Mbit/s
 * each, quanta q[]. */
static void siblings(struct sim *s, const __u32 *q, __u32 n)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	for (__u32 i = 0; i < n; i++) {
		cls(s, 1 + i, 0, 5, 100, 0, q[i]);
		offer(s, 1 + i, 100, 0, 0);
	}
}

static void q_1_1(struct sim *s) { static const __u32 q[] = { 3000, 3000 }; siblings(s, q, 2); }
static void q_1_3(struct sim *s) { static const __u32 q[] = { 1000, 3000 }; siblings(s, q, 2); }
static void q_1_2_5(struct sim *s) { static const __u32 q[] = { 1000, 2000, 5000 }; siblings(s, q, 3); }

Test(share, quantum_1_1) { both(q_1_1, 2, 1, 2); }
Test(share, quantum_1_3) { both(q_1_3, 2, 1, 2); }
Test(share, quantum_1_2_5) { both(q_1_2_5, 2, 1, 2); }

/* prio 0 takes the spare first; prio 1 what 0's ceil leaves; prio 2 none. */
static void prios(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	cls(s, 1, 0, 10, 50, 0, 1000);
	cls(s, 2, 0, 10, 100, 1, 1000);
	cls(s, 3, 0, 10, 100, 2, 1000);
	for (__u32 i = 1; i <= 3; i++)
		offer(s, i, 100, 0, 0);
}
Test(share, prio_0_then_1_then_2) { both(prios, 2, 1, 2); }

/* A ceil-capped borrower and a demand-limited one leave the rest to the
 * third. */
static void capped(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	cls(s, 1, 0, 10, 25, 0, 1000);
	cls(s, 2, 0, 10, 100, 0, 1000);
	cls(s, 3, 0, 10, 100, 0, 1000);
	offer(s, 1, 100, 0, 0);
	offer(s, 2, 18, 0, 0);
	offer(s, 3, 100, 0, 0);
}
Test(share, capped_and_demand_limited_leave_their_rest) { both(capped, 2, 1, 2); }

/* A flood and a window-limited sender, equal prio and quantum. */
static void flood_vs_window(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	cls(s, 1, 0, 10, 100, 0, 1000);
	cls(s, 2, 0, 10, 100, 0, 1000);
	offer(s, 1, 300, 0, 0);
	offer(s, 2, 0, 0, 0);
}
Test(share, flood_buys_nothing) { both(flood_vs_window, 2, 1, 2); }

/* Senders with Poisson arrivals (bursts and gaps the loop's estimates
 * must ride out): quanta 1:3 between two floods, and a third, paced one
 * that offers less than its share. */
static void poisson(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	cls(s, 1, 0, 10, 100, 0, 1000);
	cls(s, 2, 0, 10, 100, 0, 3000);
	cls(s, 3, 0, 10, 100, 0, 3000);
	offer(s, 1, 120, 0, 0);
	offer(s, 2, 120, 0, 0);
	offer(s, 3, 15, 0, 0);
	for (__u32 i = 0; i < 3; i++)
		s->src[i].seed = 12345 + i;
}
Test(share, poisson_arrivals) { both(poisson, 3, 1, 3); }

/* Scenario 9 (c): a borrower capped by its ceil beside one that takes the
 * rest, Poisson senders. */
static void ceil_poisson(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 20, 20, 0, 1000);
	cls(s, 1, 0, 2, 5, 0, 3000);
	cls(s, 2, 0, 2, 20, 0, 3000);
	offer(s, 1, 15.45, 0, 0);
	offer(s, 2, 18.54, 0, 0);
	s->src[0].seed = 7;
	s->src[1].seed = 8;
}
Test(share, ceil_capped_poisson) { both(ceil_poisson, 4, 1, 4); }

/* Three levels: the top (100) lends to two inner classes (20 each, ceil
 * 100) with two leaves each; the second inner class's leaves have quanta
 * 1:3. */
static void three_levels(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	cls(s, 1, 0, 20, 100, 0, 1000);
	cls(s, 2, 1, 5, 100, 0, 2000);
	cls(s, 3, 1, 5, 100, 0, 2000);
	cls(s, 4, 0, 20, 100, 0, 1000);
	cls(s, 5, 4, 5, 100, 0, 1000);
	cls(s, 6, 4, 5, 100, 0, 3000);
	for (__u32 i = 2; i <= 6; i++)
		if (i != 4)
			offer(s, i, 100, 0, 0);
}
Test(share, three_levels) { both(three_levels, 2, 1, 2); }

/* Seed 003 (configs/seed003.ini at 1/50): A and C share by quanta
 * 125000 : 25000: A 15, B 2, C 3 Mbit/s. */
static void seed003(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 20, 20, 0, 200000);
	cls(s, 1, 0, 10, 20, 0, 125000);
	cls(s, 2, 0, 2, 2, 0, 25000);
	cls(s, 3, 0, 2, 20, 0, 25000);
	offer(s, 1, 15, 0, 0);
	offer(s, 2, 4, 0, 0);
	offer(s, 3, 15, 0, 0);
}
Test(share, seed003) { both(seed003, 3, 1, 3); }

/* A class starts at 2 s and stops at 4 s: within 300 ms of each the
 * shares are those of the new ideal (each 100 ms bin from then on). */
static void start_stop(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 100, 100, 0, 1000);
	cls(s, 1, 0, 10, 100, 0, 1000);
	cls(s, 2, 0, 10, 100, 0, 3000);
	offer(s, 1, 150, 0, 0);
	offer(s, 2, 150, 2, 4);
}
/* Scenario 9 (f)'s tree at 1/1: the first class's 100 ms queue holds its
 * parent's tokens when the second starts, and the parent has little to
 * spare beyond the two shares to pay that back. */
static void start_in_debt(struct sim *s)
{
	cls(s, 0, HTB_NO_CLASS, 24, 24, 0, 1000);
	cls(s, 1, 0, 4, 24, 0, 3000);
	cls(s, 2, 0, 4, 24, 0, 3000);
	offer(s, 1, 30, 0, 0);
	offer(s, 2, 30, 2, 0);
}
Test(share, converges_within_300ms_when_in_debt)
{
	static struct sim s;

	sim_init(&s, true);
	start_in_debt(&s);
	run(&s, 4);
	for (double t = 2.0; t < 2.35; t += 0.1)
		cr_log_info("%.1f s: %.2f / %.2f", t, got(&s, 1, t, t + 0.1), got(&s, 2, t, t + 0.1));
	for (double t = 2.3; t < 3.95; t += 0.1)
		expect_ideal(&s, t, t + 0.1, 0.05);
}

Test(share, converges_within_300ms)
{
	static struct sim s;

	sim_init(&s, true);
	start_stop(&s);
	run(&s, 6);
	for (double t = 2.3; t < 3.95; t += 0.1)
		expect_ideal(&s, t, t + 0.1, 0.02);
	for (double t = 4.3; t < 5.95; t += 0.1)
		expect_ideal(&s, t, t + 0.1, 0.02);
	/* the class that stopped let go of its share, and the flood never */
	cr_expect_eq(s.let_go, 1, "backlogged leaves let go %llu times",
		     (unsigned long long)s.let_go);
}
