// SPDX-License-Identifier: GPL-2.0
/*
 * What the sharing loop of `htbctl daemon` (src/share/share.c,
 * src/daemon/share_run.c) costs per tick at N classes, every leaf active: the
 * daemon's tick exactly (the collector's copy of class_state from the loaded
 * program's map, src/daemon/collect.c; the estimates, the fluid ideal, the
 * limits stored into an mmap() of class_share), on a LibreQoS-like tree: a
 * root, sites of 100 leaves each. Half the leaves are backlogged, half send
 * 1 Mbit/s. Beside it, in the same run, the read it replaced: one batched
 * lookup of class_state (the baseline).
 *   bench_share [--classes N[,N...]] [--ticks N]      (root)
 * Prints per N the median of each read and of the arithmetic, the tick
 * (collector and arithmetic), the period the daemon runs it at
 * (share_period: 10 ms, stretched to three times the cost of a tick that
 * costs more than a third of that) and so the loop's share of one CPU.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* Leaves active: bytes grow by 1 Mbit/s per tick's worth, half backlogged. */
static void activity(struct htb_class_state *st, __u32 n, __u32 sites, __u64 now, int t)
{
	for (__u32 i = sites + 1; i < n; i++) {
		st[i].bytes = (__u64)t * 1250;
		st[i].shaped_until = i % 2 ? now + 50 * PU_MS : 0;
	}
}

/* What one_size measures per tick, by index into its medians. */
enum { C_LOOKUP, C_COLLECT, C_MATH, C_N };

static double median(__u64 *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[n / 2];
}

/* One tick: both reads (their results must agree), then the arithmetic on
 * what the collector read; the three times into c[0..2]. */
static void one_tick(struct fx *f, struct collect *col, struct share_loop *loop,
		     struct htb_class_state *st, struct htb_class_seen *seen,
		     struct htb_class_share *sh, __u64 *c)
{
	__u64 t0 = htb_clock_ns(), t1, t2;

	if (array_read(f->state, 0, loop->hw, st, sizeof(*st), 0))
		exit(1);
	t1 = htb_clock_ns();
	if (collect_run(col, loop->hw))
		exit(1);
	t2 = htb_clock_ns();
	share_seen(st, loop->hw, seen);
	if (memcmp(seen, col->seen, loop->hw * sizeof(*seen))) {
		fprintf(stderr, "bench_share: the collector read other values than the lookup\n");
		exit(1);
	}
	if (share_tick(loop, col->seen, htb_clock_ns(), sh))
		exit(1);
	c[C_LOOKUP] = t1 - t0;
	c[C_COLLECT] = t2 - t1;
	c[C_MATH] = htb_clock_ns() - t2;
}

static void one_size(__u32 n, int ticks, double med[C_N])
{
	__u32 sites = n / 100 ? n / 100 : 1, *slots = malloc(n * sizeof(*slots));
	struct htb_class_conf *conf = calloc(n, sizeof(*conf));
	struct htb_class_state *st = calloc(n, sizeof(*st));
	struct htb_class_seen *seen = calloc(n, sizeof(*seen));
	__u64 *c = calloc(C_N * (size_t)ticks, sizeof(*c));
	struct share_loop loop = { 0 };
	struct htb_class_share *sh;
	struct collect col;
	size_t len;
	struct fx f;

	if (!slots || !conf || !st || !seen || !c || fx_open(&f, n) ||
	    collect_open(&col, f.state, n)) {
		fprintf(stderr, "bench_share: setting up %u classes failed\n", n);
		exit(1);
	}
	len = ((size_t)n * sizeof(*sh) + 4095) & ~(size_t)4095;
	sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f.maps.fd[M_SHARE], 0);
	tree_conf(conf, n, sites);
	for (__u32 i = 0; i < n; i++)
		slots[i] = i;
	if (sh == MAP_FAILED || maps_put_conf(&f.maps, 0, n, slots, conf, n) ||
	    share_plan(&loop, conf, n)) {
		fprintf(stderr, "bench_share: filling %u classes failed\n", n);
		exit(1);
	}
	for (int t = 0; t < ticks; t++) {
		activity(st, n, sites, htb_clock_ns(), t);
		map_update_many(f.state, slots, sizeof(*slots), st, sizeof(*st), n, 0);
		one_tick(&f, &col, &loop, st, seen, sh, &c[C_N * t]);
	}
	for (int k = 0; k < C_N; k++) {
		__u64 v[ticks];

		for (int t = 0; t < ticks; t++)
			v[t] = c[C_N * t + k];
		med[k] = median(v, ticks) / 1e3;
	}
	share_free(&loop);
	collect_close(&col);
	munmap(sh, len);
	fx_close(&f);
	free(slots);
	free(conf);
	free(st);
	free(seen);
	free(c);
}

int main(int argc, char **argv)
{
	char sizes[256] = "1000,10000,100000", *tok, *save;
	int ticks = 30, o;

	while ((o = getopt_long(argc, argv, "", (struct option[]){
			{ "classes", required_argument, NULL, 'c' },
			{ "ticks", required_argument, NULL, 't' }, { 0 } }, NULL)) != -1) {
		if (o == 'c')
			snprintf(sizes, sizeof(sizes), "%s", optarg);
		else if (o == 't')
			ticks = atoi(optarg) > 0 ? atoi(optarg) : 30;
		else
			return 2;
	}
	libbpf_set_print(NULL);
	printf("\nsharing loop (htbctl daemon), one tick, every leaf active\n");
	printf("%10s %12s %12s %8s %12s %10s %12s %8s\n", "classes", "lookup (us)",
	       "collect (us)", "ratio", "arith. (us)", "tick (us)", "period (ms)", "CPU");
	for (tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		__u32 n = (__u32)strtoul(tok, NULL, 0);
		struct share_loop one = { .borrowers = 1 };
		double med[C_N], us, period;

		one_size(n < 2 ? 2 : n, ticks, med);
		us = med[C_COLLECT] + med[C_MATH];
		period = (double)share_period(&one, (__u64)(us * 1e3)) / 1e6;
		printf("%10u %12.1f %12.1f %7.2fx %12.1f %10.1f %12.0f %7.1f%%\n", n,
		       med[C_LOOKUP], med[C_COLLECT], med[C_COLLECT] / med[C_LOOKUP],
		       med[C_MATH], us, period, us / 1e3 / period * 100);
	}
	return 0;
}
