// SPDX-License-Identifier: GPL-2.0
/*
 * What the sharing loop of `htbctl daemon` (src/share/share.c,
 * src/daemon/share_run.c) costs per tick at N classes: the daemon's tick
 * exactly (the collector's read of class_state from the loaded program's
 * map, src/daemon/collect.c; the estimates, the fluid ideal, the limits
 * stored into an mmap() of class_share), on a LibreQoS-like tree: a root,
 * sites of 100 leaves each (1,000 sites at 100,000 classes). Every leaf
 * active, or K of them (--active K, spread evenly over the sites; the
 * others sent once, before the first tick). Of the active leaves half are
 * backlogged, half send 1 Mbit/s. After the ticks, the collector's copy is
 * checked against one batched lookup of class_state.
 *   bench_share [--classes N[,N...]] [--active K] [--ticks N]      (root)
 * Prints per N the median of the collector's read and of the arithmetic,
 * the tick (both), the period the daemon runs it at (share_period: 10 ms,
 * stretched to three times the cost of a tick that costs more than a
 * third of that) and so the loop's share of one CPU, and the tick's CPU
 * time (the wall-clock tick less the time the thread waited for a CPU).
 * scripts/bench_share.sh prints it beside a baseline build's.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../tests/bpf/prog_util.h"
#include "share/share.h"
#include "daemon/collect.h"


static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Class i's conf: 0 the root, 1..sites the sites, then the leaves. */
static void tree_conf(struct htb_class_conf *conf, __u32 n, __u32 sites)
{
	for (__u32 i = 0; i < n; i++) {
		struct htb_class_params p = {
			.classid = PU_CLASSID(i), .rate_Bps = PU_MBIT(10), .ceil_Bps = PU_MBIT(100),
			.burst = 15000, .cburst = 15000, .limit_ns = 100 * PU_MS,
			.leaf = i > sites, .quantum = 1000 + i % 5 * 1000, .prio = i % 3,
		};

		p.path[p.depth++] = i;
		if (i > sites) {
			p.path[p.depth++] = 1 + i % sites;
			p.rate_Bps = PU_MBIT(1);
		}
		if (i)
			p.path[p.depth++] = 0;
		if (!i)
			p.rate_Bps = p.ceil_Bps = PU_GBIT(100);
		if (htb_conf_from_params(&p, &conf[i]))
			exit(1);
	}
}

/* The leaves that send: every one, or k spread evenly (slots into act). */
static __u32 active_slots(__u32 n, __u32 sites, __u32 k, __u32 *act)
{
	__u32 leaves = n - sites - 1, m = 0;

	if (!k || k > leaves)
		k = leaves;
	for (__u32 j = 0; j < k; j++)
		act[m++] = sites + 1 + (__u32)((__u64)j * leaves / k);
	return m;
}

/* Every leaf sent once before the first tick. */
static void history(struct htb_class_state *st, __u32 n, __u32 sites)
{
	for (__u32 i = sites + 1; i < n; i++)
		st[i].bytes = 1000000 + i;
}

/* The active leaves' bytes grow by 1 Mbit/s per tick's worth, half
 * backlogged; their entries into class_state. */
static void activity(struct fx *f, struct htb_class_state *st, const __u32 *act,
		     __u32 m, struct htb_class_state *vals)
{
	__u64 now = htb_clock_ns();

	for (__u32 j = 0; j < m; j++) {
		struct htb_class_state *v = &st[act[j]];

		v->bytes += 1250;
		v->shaped_until = act[j] % 2 ? now + 50 * PU_MS : 0;
		vals[j] = *v;
	}
	if (map_update_many(f->state, act, sizeof(*act), vals, sizeof(*vals), m, 0))
		exit(1);
}

/* What one_size measures per tick, by index into its medians. */
enum { C_COLLECT, C_MATH, C_CPU, C_N };

static double median(__u64 *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[n / 2];
}

/* This thread's CPU time, ns: the collector's run counts (a syscall). */
static __u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* One tick, as share_run_tick: the collector, then the arithmetic on what
 * it read; the two times into c[C_COLLECT], c[C_MATH], the tick's CPU time
 * (without the time the thread waited for a CPU: this host is shared)
 * into c[C_CPU]. */
static void one_tick(struct collect *col, struct share_loop *loop,
		     struct htb_class_share *sh, __u64 *c)
{
	__u64 cpu0 = cpu_ns(), t0 = htb_clock_ns(), t1;

	if (collect_run(col, loop->hw))
		exit(1);
	t1 = htb_clock_ns();
	if (share_tick(loop, col->seen, col->changed, col->nchanged, htb_clock_ns(), sh))
		exit(1);
	c[C_COLLECT] = t1 - t0;
	c[C_MATH] = htb_clock_ns() - t1;
	c[C_CPU] = cpu_ns() - cpu0;
}

/* The collector's copy is what one batched lookup of class_state reads. */
static void check_copy(struct fx *f, const struct collect *col, __u32 n,
		       struct htb_class_state *st)
{
	if (array_read(f->state, 0, n, st, sizeof(*st), 0))
		exit(1);
	for (__u32 i = 0; i < n; i++)
		if (col->seen[i].bytes != st[i].bytes ||
		    col->seen[i].shaped_until != st[i].shaped_until) {
			fprintf(stderr, "bench_share: the collector's copy of slot %u is "
				"not class_state's\n", i);
			exit(1);
		}
}

/* The state before the first tick, the tree's conf and the loop planned. */
static void set_up(struct fx *f, struct htb_class_conf *conf, struct htb_class_state *st,
		   __u32 *slots, __u32 n, __u32 sites, struct share_loop *loop)
{
	tree_conf(conf, n, sites);
	history(st, n, sites);
	for (__u32 i = 0; i < n; i++)
		slots[i] = i;
	if (maps_put_conf(&f->maps, 0, n, slots, conf, n) ||
	    map_update_many(f->state, slots, sizeof(*slots), st, sizeof(*st), n, 0) ||
	    share_plan(loop, conf, n)) {
		fprintf(stderr, "bench_share: filling %u classes failed\n", n);
		exit(1);
	}
}

static void medians(const __u64 *c, int ticks, double med[C_N])
{
	for (int k = 0; k < C_N; k++) {
		__u64 v[ticks];

		for (int t = 0; t < ticks; t++)
			v[t] = c[C_N * t + k];
		med[k] = median(v, ticks) / 1e3;
	}
}

static void one_size(__u32 n, __u32 k, int ticks, double med[C_N], __u32 *members)
{
	__u32 sites = n / 100 ? n / 100 : 1, *slots = malloc(n * sizeof(*slots)), m;
	struct htb_class_conf *conf = calloc(n, sizeof(*conf));
	struct htb_class_state *st = calloc(n, sizeof(*st)), *vals = calloc(n, sizeof(*vals));
	__u32 *act = calloc(n, sizeof(*act));
	__u64 *c = calloc(C_N * (size_t)ticks, sizeof(*c));
	struct share_loop loop = { 0 };
	struct htb_class_share *sh;
	struct collect col;
	size_t len;
	struct fx f;

	if (!slots || !conf || !st || !vals || !act || !c || fx_open(&f, n) ||
	    collect_open(&col, f.state, n)) {
		fprintf(stderr, "bench_share: setting up %u classes failed\n", n);
		exit(1);
	}
	len = ((size_t)n * sizeof(*sh) + 4095) & ~(size_t)4095;
	sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f.maps.fd[M_SHARE], 0);
	if (sh == MAP_FAILED)
		exit(1);
	set_up(&f, conf, st, slots, n, sites, &loop);
	m = active_slots(n, sites, k, act);
	for (int t = 0; t < ticks + 1; t++) {	/* the first tick takes every leaf: not counted */
		activity(&f, st, act, m, vals);
		one_tick(&col, &loop, sh, &c[C_N * (t ? t - 1 : 0)]);
	}
	medians(c, ticks, med);
	*members = loop.nmember;
	check_copy(&f, &col, n, st);
	share_free(&loop);
	collect_close(&col);
	munmap(sh, len);
	fx_close(&f);
	free(slots);
	free(conf);
	free(st);
	free(vals);
	free(act);
	free(c);
}

int main(int argc, char **argv)
{
	char sizes[256] = "1000,10000,100000", *tok, *save;
	int ticks = 30, o;
	__u32 k = 0;

	while ((o = getopt_long(argc, argv, "", (struct option[]){
			{ "classes", required_argument, NULL, 'c' },
			{ "active", required_argument, NULL, 'a' },
			{ "ticks", required_argument, NULL, 't' }, { 0 } }, NULL)) != -1) {
		if (o == 'c')
			snprintf(sizes, sizeof(sizes), "%s", optarg);
		else if (o == 'a')
			k = (__u32)strtoul(optarg, NULL, 0);
		else if (o == 't')
			ticks = atoi(optarg) > 0 ? atoi(optarg) : 30;
		else
			return 2;
	}
	libbpf_set_print(NULL);
	printf("\nsharing loop (htbctl daemon), one tick, %s\n",
	       k ? "some leaves active" : "every leaf active");
	printf("%10s %10s %12s %12s %10s %12s %8s %14s\n", "classes", "active",
	       "collect (us)", "arith. (us)", "tick (us)", "period (ms)", "CPU",
	       "tick CPU (us)");
	for (tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		__u32 n = (__u32)strtoul(tok, NULL, 0), members;
		struct share_loop one = { .borrowers = 1 };
		double med[C_N], us, period;

		n = n < 3 ? 3 : n;
		one_size(n, k, ticks, med, &members);
		us = med[C_COLLECT] + med[C_MATH];
		period = (double)share_period(&one, (__u64)(us * 1e3)) / 1e6;
		printf("%10u %10u %12.1f %12.1f %10.1f %12.0f %7.1f%% %14.1f\n", n, members,
		       med[C_COLLECT], med[C_MATH], us, period, us / 1e3 / period * 100,
		       med[C_CPU]);
	}
	return 0;
}
