// SPDX-License-Identifier: GPL-2.0
/*
 * Cost per packet of the egress program (bpf/htbctl.bpf.c), measured with
 * BPF_PROG_TEST_RUN, as a ratio to a minimal one-bucket EDT program
 * (bpf/edt_baseline.bpf.c) measured in the same process the same way.
 *
 *   bench_prog [--trials N] [--repeat N] [--max-classes N] [--cpus N]
 *              [--only depth|path|steps|cpus]   (only that table)
 *   bench_prog --hold SECONDS [--repeat N]   (one case alone, for
 *                                            scripts/bench-profile.sh)
 *
 * What is measured (printed with the results):
 * - "hot": one test_run call with repeat R re-runs the same packet R times
 *   on one CPU; the kernel reports the mean ns per run. The classes touched
 *   stay in cache. All cases of a table are run round-robin --trials times
 *   and each keeps its minimum (other load on a shared machine only adds
 *   time; interleaving gives every case the same quiet moments).
 * - "spread": test_run calls with repeat 1, each to a random leaf, in 20
 *   rounds of 10,000 alternating between htbctl and the baseline (with as
 *   many buckets); the lowest round mean of the kernel-reported times
 *   (which include ~2 clock reads per run, for both alike): the cache and
 *   TLB misses of large trees.
 * - The clock is the real one, read as the loaded program reads it (the
 *   load-time switch test_clock off) and rates are huge
 *   (1 Tbit/s), so repeated packets never queue and nothing is dropped;
 *   the incoming tstamp of a repeated run is its own previous stamp.
 * - "own": the leaf is within its rate (level 0: the snapshot reads the
 *   leaf only, the charge walks and locks every class of the path).
 *   "borrow": every class below the top has a tiny rate, so the packet
 *   borrows from the top (the snapshot reads every class too).
 * - Only the priority classifier is in use (tree_conf.skip marks the other
 *   maps empty, as the loader does), so classification is one array
 *   lookup (cls_minor; the baseline's is a hash lookup). "unclassified"
 *   probes every classifier and misses.
 * - "no-lock": the same skeleton loaded a second time with the load-time
 *   switch bench_no_lock set (bpf/htbctl.bpf.c), i.e. without
 *   bpf_spin_lock: the cost of the locks, and two CPUs charging sibling
 *   leaves for what the locks protect.
 * - "aqm": the leaf of a chain with CoDel off, on with a Not-ECT packet,
 *   and on with ecn and an ECT(0) packet (the program then reads the ECN
 *   field before the lock), and a config's defaults (CoDel, ecn and
 *   sparse flows on: the flow's hash and its flow_state lookup; the one
 *   flow is sparse). Nothing queues, so CoDel takes its below-target
 *   path: what every packet of a class within its rate pays.
 * - "a packet's origin" (issue 22): what the flow hash costs. The program
 *   reads every packet's hash (bpf_get_hash_recalc): a local socket's
 *   packet comes with one (sk_txhash), and so does a packet forwarded from
 *   a NIC with RSS; one forwarded from a device without RX hashing (a veth)
 *   has none, and the kernel's flow dissector computes it. Under test_run
 *   a packet never comes with a hash (ctx_in cannot set it), but the runs
 *   of one call share one skb, and the hash the first run sets (the
 *   program's bpf_set_hash) is there for the others: the program as
 *   shipped dissects once per call, so every other table measures a
 *   packet that comes with a hash. Here the load-time switch bench_hash
 *   (bpf/htbctl.bpf.c) gives every run, before anything else, a constant
 *   hash ("hash": a local packet and a forwarded one with RSS alike, as
 *   test_run tells them apart by nothing else; the program reads no
 *   socket) or none ("no hash": bpf_set_hash_invalid, every run
 *   dissects), each one helper call (a few ns) that the shipped program
 *   does not make. The leaf of a depth-3 chain with a config's defaults
 *   (CoDel, ecn, flows), without flows, and with CoDel off; for IPv4 UDP,
 *   IPv6 TCP and IPv4 UDP behind an 802.1Q tag (the dissector walks it).
 * - The verifier's work for both variants (verified insns, loaded size).
 * - "N CPUs at once" (issue 13): each case on one CPU alone and on the
 *   first N CPUs of the affinity mask at once (--cpus N; default all),
 *   wall clock per packet and the aggregate against one CPU: the flat
 *   program with a bucket per CPU (the ceiling: nothing shared) and with
 *   one bucket for all, htbctl at depth 1 with a leaf per CPU (nothing
 *   shared), at depth 3 with a leaf per CPU under a shared parent and
 *   root, with and without batches (the load-time switch no_batch), and
 *   all on one leaf; rounds of one CPU then N, the median of the rounds'
 *   ratios.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "../tests/bpf/prog_util.h"
#include "share/share.h"
#include "edt_baseline.skel.h"

#define TBIT	(1000ull * PU_GBIT(1))
/* 8 MB: 67 us at 1 Tbit/s. A class whose bucket holds less than a batch's
 * 20 us is not batched (include/htb/sched.h, htb_batchable), and the 1 MB
 * these trees had (8 us) kept every class of the N-CPU table unbatched. */
#define BURST	(8u << 20)

/* The command line. */
struct bench {
	int trials;
	__u32 repeat;
	__u32 max_classes;
	int ncpus;		/* --cpus: the first N CPUs of the affinity mask */
	int cpus[CPU_SETSIZE];	/* that mask, in order */
	int nmask;
	const char *only;	/* --only TABLE: depth, path, steps or cpus */
	int hold;		/* --hold SECONDS: one case, for a profiler */
};

/*
 * A case: a loaded program and the packet to run. All cases of a table are
 * measured together, round-robin, trials times, and each keeps its
 * minimum: on a shared machine other load only ever adds time, and
 * interleaving exposes every case to the same quiet moments.
 */
struct bcase {
	int prog;
	struct run_in in;
	const struct pkt *pkt;	/* NULL: the table's packet */
	double min;
};

static void measure(const struct bench *b, struct bcase *c, int n, const struct pkt *p)
{
	for (int i = 0; i < n; i++)
		c[i].min = 1e18;
	for (int t = 0; t < b->trials; t++)
		for (int i = 0; i < n; i++) {
			struct fx f = { .prog = c[i].prog };
			struct run_in in = c[i].in;
			struct run_out o = { .retval = -1 };

			in.repeat = b->repeat;
			if (fx_run(&f, c[i].pkt ? c[i].pkt : p, &in, &o) ||
			    o.retval != TC_ACT_OK_) {
				fprintf(stderr, "bench: test_run failed (retval %d)\n", o.retval);
				exit(1);
			}
			if (o.duration < c[i].min)
				c[i].min = o.duration;
		}
}

/* Mean over calls of repeat 1, each to a random key from keys[0..nkeys). */
static double spread(int prog, const struct pkt *p, const __u32 *prio, __u32 nkeys,
		     long calls)
{
	struct fx f = { .prog = prog };
	double sum = 0;

	for (long i = 0; i < calls; i++) {
		struct run_in in = { .priority = prio[(__u32)rand() % nkeys], .repeat = 1 };
		struct run_out o = { .retval = -1 };

		if (fx_run(&f, p, &in, &o) || o.retval != TC_ACT_OK_) {
			fprintf(stderr, "bench: test_run failed\n");
			exit(1);
		}
		sum += o.duration;
	}
	return sum / calls;
}

/* ---- the baseline ---- */

struct baseline {
	struct edt_baseline_bpf *skel;
	int prog;
};

static void baseline_open(struct baseline *b, __u32 nkeys)
{
	int fd;

	b->skel = edt_baseline_bpf__open();
	if (!b->skel) {
		perror("bench: edt_baseline open");
		exit(1);
	}
	bpf_map__set_max_entries(b->skel->maps.edt_buckets, nkeys < 64 ? 64 : nkeys);
	if (edt_baseline_bpf__load(b->skel)) {
		fprintf(stderr, "bench: edt_baseline load failed (root?)\n");
		exit(1);
	}
	b->prog = bpf_program__fd(b->skel->progs.edt_egress);
	fd = bpf_map__fd(b->skel->maps.edt_buckets);
	for (__u32 i = 0; i < nkeys; i++) {
		struct { __u64 rate, t_last, horizon; } v = { TBIT, 0, 2 * PU_SEC };
		__u32 key = PU_CLASSID(i);

		bpf_map_update_elem(fd, &key, &v, BPF_ANY);
	}
}

/* ---- htbctl trees ---- */

static void die_err(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
		exit(1);
	}
}

/*
 * The program loaded with cap class slots on the real clock: classes get
 * their state as of now. (fx_open starts the test clock at PU_T0, 1000 s:
 * on a machine up for less than that, states began in the future, never
 * refilled, and every "within rate" case measured a leaf over its rate.)
 */
static int bench_open(struct fx *f, __u32 cap, int variant)
{
	int err = fx_open_variant(f, cap, variant | PU_SHIPPED_CLOCK);

	if (err)
		return err;
	f->runtime.test_now_ns = 0;
	return fx_set_runtime(f);
}

/* Dies unless every packet the leaf sent was sent at the level the case
 * is named after: at its own rate (it lent), or borrowed (all but the few,
 * 0.1%, that its 8 kbit/s rate lets through, about one a second). */
static void expect_level(struct fx *f, __u32 leaf, int borrow, const char *name)
{
	struct htb_class_state st = fx_state(f, leaf);
	__u64 n;

	for (int cpu = 0; cpu < libbpf_num_possible_cpus(); cpu++) {	/* fx_view, any slot */
		struct htb_class_batch a = fx_batch(f, leaf, cpu);

		st.packets += a.packets;
		st.lends += a.lends;
		st.borrows += a.borrows;
	}
	n = borrow ? st.borrows : st.lends;

	if (!st.packets || (borrow ? n * 1000 < st.packets * 999 : n != st.packets)) {
		fprintf(stderr, "bench: %s: the leaf %s %llu of its %llu packets: the case "
			"does not measure what it is named\n", name, borrow ? "borrowed for" : "lent",
			(unsigned long long)(borrow ? st.borrows : st.lends),
			(unsigned long long)st.packets);
		exit(1);
	}
}

static void use_prio_only(struct fx *f)
{
	f->runtime.test_now_ns = 0;
	die_err(fx_set_runtime(f), "runtime");
	f->treeconf.skip = ~HTB_SKIP_PRIO;
	die_err(fx_put_tree(f), "tree_conf");
}

/* A chain of depth classes 0 <- 1 <- ... <- depth-1 (the leaf). */
static void chain(struct fx *f, int depth, int borrow)
{
	struct htb_class_params p = {
		.rate_Bps = TBIT, .ceil_Bps = TBIT, .burst = BURST,
		.cburst = BURST, .limit_ns = PU_SEC,
	};

	for (int i = 0; i < depth; i++) {
		if (borrow && i > 0) {
			p.rate_Bps = 1000;	/* 8 kbit/s: always borrowing */
			p.burst = 1;
		}
		die_err(fx_class_p(f, i, i ? (__u32)i - 1 : HTB_NO_CLASS, &p), "class");
	}
	use_prio_only(f);
}

/* n classes, depth 3: a root, ~sqrt(n) inner classes, the rest leaves
 * spread over them. Returns the number of leaves; their indexes follow
 * the inner ones. */
static __u32 tree3(struct fx *f, __u32 n, int borrow, __u32 *first_leaf)
{
	struct htb_class_params top = {
		.rate_Bps = TBIT, .ceil_Bps = TBIT, .burst = BURST,
		.cburst = BURST, .limit_ns = PU_SEC,
	}, low = top;
	__u32 inner = (__u32)sqrt((double)n);

	if (inner < 1)
		inner = 1;
	if (borrow) {
		low.rate_Bps = 1000;
		low.burst = 1;
	}
	die_err(fx_class_p(f, 0, HTB_NO_CLASS, &top), "root");
	for (__u32 i = 1; i <= inner; i++)
		die_err(fx_class_p(f, i, 0, &low), "inner");
	for (__u32 i = inner + 1; i < n; i++)
		die_err(fx_class_p(f, i, 1 + (i % inner), &low), "leaf");
	use_prio_only(f);
	*first_leaf = inner + 1;
	return n - inner - 1;
}

/* What the verifier did with one loaded variant. */
static void print_verifier(const char *name, const struct fx *f)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	die_err(bpf_obj_get_info_by_fd(f->prog, &info, &len) ? -errno : 0, "prog info");
	printf("%-8s htb_egress: %u insns verified, %u loaded (xlated)\n", name,
	       info.verified_insns, info.xlated_prog_len / 8);
}

/* Table 1: the baseline, the fixed overhead, and depth x {own, borrow} x
 * {locked, no-lock}. Leaves f0 loaded (a one-class chain) for the
 * unclassified case. */
static void table_depth(const struct bench *bn, const struct baseline *b,
			struct fx *f0, const struct pkt *p)
{
	enum { ND = 5 };
	static const int depths[ND] = { 1, 2, 3, 4, 8 };
	/* [depth][own, borrow][locked, no-lock] */
	static struct fx fd[ND][2][2];
	struct bcase cs[2 + ND * 4];
	double base, own1 = 0, own8 = 0, bor1 = 0, bor8 = 0;
	int n = 0;

	cs[n++] = (struct bcase){ .prog = b->prog, .in = { .priority = PU_CLASSID(0) } };
	die_err(bench_open(f0, 16, 0), "load htbctl (root?)");
	chain(f0, 1, 0);
	/* a classid that is no class: an empty cls_minor entry, no default */
	cs[n++] = (struct bcase){ .prog = f0->prog, .in = { .priority = PU_CLASSID(9) } };
	for (int i = 0; i < ND; i++)
		for (int mode = 0; mode < 2; mode++)
			for (int v = 0; v < 2; v++) {
				struct fx *f = &fd[i][mode][v];

				die_err(bench_open(f, 16, v), "load htbctl");
				chain(f, depths[i], mode);
				cs[n++] = (struct bcase){ .prog = f->prog,
					.in = { .priority = PU_CLASSID(depths[i] - 1) } };
			}
	print_verifier("locked", &fd[0][0][0]);
	print_verifier("no-lock", &fd[0][0][1]);
	printf("\n");
	measure(bn, cs, n, p);
	base = cs[0].min;
	printf("baseline (edt_baseline: hash lookup, division, stamp): %.1f ns\n", base);
	printf("htbctl without scheduling (no class, no default): %.1f ns, %.2fx\n\n",
	       cs[1].min, cs[1].min / base);
	printf("%-30s %10s %8s %12s %10s\n", "hierarchy depth (10 slots)", "ns/pkt", "ratio",
	       "no-lock ns", "lock ns");
	for (int i = 0, k = 2; i < ND; i++)
		for (int mode = 0; mode < 2; mode++, k += 2) {
			double lk = cs[k].min, nl = cs[k + 1].min;
			char name[64];

			snprintf(name, sizeof(name), "depth %d, %s", depths[i],
				 mode ? "borrow from top" : "leaf within rate");
			expect_level(&fd[i][mode][0], (__u32)depths[i] - 1, mode && depths[i] > 1, name);
			expect_level(&fd[i][mode][1], (__u32)depths[i] - 1, mode && depths[i] > 1, name);
			printf("%-30s %10.1f %7.2fx %12.1f %10.1f\n", name, lk, lk / base,
			       nl, (lk - nl) / depths[i]);
			if (i == 0)
				*(mode ? &bor1 : &own1) = lk;
			if (i == ND - 1)
				*(mode ? &bor8 : &own8) = lk;
		}
	printf("(lock ns: (locked - no-lock) / classes on the path: one "
	       "uncontended bpf_spin_lock/unlock pair)\n");
	printf("per extra level: %.1f ns leaf within rate, %.1f ns borrowing "
	       "(depth 1 -> 8)\n", (own8 - own1) / 7, (bor8 - bor1) / 7);
	for (int i = 0; i < ND; i++)
		for (int mode = 0; mode < 2; mode++)
			for (int v = 0; v < 2; v++)
				fx_close(&fd[i][mode][v]);
}

/* With the sharing loop's lease running: every class on the path has its
 * class_share entry read (a limit of 1 Tbit/s on the leaf, so nothing
 * queues), beside the same chain without a lease, all interleaved. */
static void table_share(const struct bench *bn, const struct baseline *b,
			const struct pkt *p)
{
	enum { ND = 3 };
	static const int depths[ND] = { 1, 3, 8 };
	static struct fx fd[ND][2][2];		/* [depth][own, borrow][no lease, lease] */
	struct bcase cs[1 + ND * 4];
	int n = 0;

	cs[n++] = (struct bcase){ .prog = b->prog, .in = { .priority = PU_CLASSID(0) } };
	for (int i = 0; i < ND; i++)
		for (int mode = 0; mode < 2; mode++)
			for (int lease = 0; lease < 2; lease++) {
				struct fx *f = &fd[i][mode][lease];
				struct htb_class_share sh = {
					.borrow_l2t = share_word(TBIT), .bbuffer = PU_MS,
				};
				__u32 leaf = (__u32)depths[i] - 1;

				die_err(bench_open(f, 16, 0), "load htbctl");
				chain(f, depths[i], mode);
				if (lease) {
					die_err(bpf_map_update_elem(f->maps.fd[M_SHARE], &leaf, &sh, 0)
						? -errno : 0, "class_share");
					f->runtime.share_until_ns = ~0ull;
					die_err(fx_set_runtime(f), "runtime");
				}
				cs[n++] = (struct bcase){ .prog = f->prog,
					.in = { .priority = PU_CLASSID(leaf) } };
			}
	measure(bn, cs, n, p);
	printf("\n%-30s %10s %10s %8s %8s\n", "sharing loop's lease", "none ns", "lease ns",
	       "ratio", "+ns");
	for (int i = 0, k = 1; i < ND; i++)
		for (int mode = 0; mode < 2; mode++, k += 2) {
			char name[64];

			snprintf(name, sizeof(name), "depth %d, %s", depths[i],
				 mode ? "borrow from top" : "leaf within rate");
			expect_level(&fd[i][mode][0], (__u32)depths[i] - 1, mode && depths[i] > 1, name);
			expect_level(&fd[i][mode][1], (__u32)depths[i] - 1, mode && depths[i] > 1, name);
			printf("%-30s %10.1f %10.1f %7.2fx %8.1f\n", name, cs[k].min,
			       cs[k + 1].min, cs[k + 1].min / cs[0].min, cs[k + 1].min - cs[k].min);
		}
	printf("(ratio: with the lease, against the baseline, %.1f ns, of this table)\n",
	       cs[0].min);
	for (int i = 0; i < ND; i++)
		for (int mode = 0; mode < 2; mode++)
			for (int lease = 0; lease < 2; lease++)
				fx_close(&fd[i][mode][lease]);
}

/* CoDel on the chain's leaf, ecn on, flows as given (both on: the
 * defaults of a config). */
static void leaf_aqm(struct fx *f, __u32 leaf, bool flows)
{
	struct htb_class_conf c = fx_conf(f, leaf);

	c.flags |= HTB_CONF_AQM | HTB_CONF_ECN | (flows ? HTB_CONF_FLOWS : 0);
	die_err(maps_put_conf(&f->maps, f->gen, f->cap, &leaf, &c, 1), "class_conf");
}

/* AQM off and on, interleaved, at depth 1 and 3 (leaf within rate). */
static void table_aqm(const struct bench *bn, const struct baseline *b,
		      const struct pkt *p)
{
	enum { ND = 2, NV = 4 };
	static const int depths[ND] = { 1, 3 };
	static const char *const vname[NV] = { "off", "codel, Not-ECT", "codel, ECT(0)",
					       "codel + flows, Not-ECT" };
	static struct fx fd[ND][NV];
	struct bcase cs[1 + ND * NV];
	struct pkt ect = *p;
	int n = 0;

	pkt_set_ecn(&ect, 0, 2);
	cs[n++] = (struct bcase){ .prog = b->prog, .in = { .priority = PU_CLASSID(0) } };
	for (int i = 0; i < ND; i++)
		for (int v = 0; v < NV; v++) {
			__u32 leaf = (__u32)depths[i] - 1;

			die_err(bench_open(&fd[i][v], 16, 0), "load htbctl");
			chain(&fd[i][v], depths[i], 0);
			if (v)
				leaf_aqm(&fd[i][v], leaf, v == 3);
			cs[n++] = (struct bcase){ .prog = fd[i][v].prog,
				.in = { .priority = PU_CLASSID(leaf) },
				.pkt = v == 2 ? &ect : NULL };
		}
	measure(bn, cs, n, p);
	printf("\n%-30s %10s %8s %8s\n", "aqm (leaf within rate)", "ns/pkt", "ratio", "+ns");
	for (int i = 0, k = 1; i < ND; i++)
		for (int v = 0; v < NV; v++, k++) {
			char name[64];

			snprintf(name, sizeof(name), "depth %d, %s", depths[i], vname[v]);
			expect_level(&fd[i][v], (__u32)depths[i] - 1, 0, name);
			printf("%-30s %10.1f %7.2fx %8.1f\n", name, cs[k].min,
			       cs[k].min / cs[0].min, cs[k].min - cs[1 + i * NV].min);
		}
	printf("(ratio: against the baseline, %.1f ns, of this table; +ns: against aqm off)\n",
	       cs[0].min);
	for (int i = 0; i < ND; i++)
		for (int v = 0; v < NV; v++)
			fx_close(&fd[i][v]);
}

/* ---- where a packet's time goes (issue 26) ---- */

/* The leaf's settings of a steps column. */
static const struct steps_conf {
	const char *name;
	int aqm, flows, lease;
} steps_confs[] = {
	{ "aqm off", 0, 0, 0 }, { "codel", 1, 0, 0 },
	{ "defaults", 1, 1, 0 }, { "+ lease", 1, 1, 1 },
};
#define NSTEPC	(int)(sizeof(steps_confs) / sizeof(steps_confs[0]))
/* the program cut after step n (bench_stop; 0 whole), at depth 1 or 3 */
static const struct { int stop, depth; } steps_cuts[] = {
	{ 1, 1 }, { 2, 1 }, { 3, 1 }, { 4, 1 }, { 5, 1 }, { 0, 1 }, { 0, 3 },
};
#define NCUT	(int)(sizeof(steps_cuts) / sizeof(steps_cuts[0]))

static void steps_open(struct fx *f, const struct steps_conf *sc, int stop, int depth)
{
	struct htb_class_share sh = { .borrow_l2t = share_word(TBIT), .bbuffer = PU_MS };

	die_err(bench_open(f, 16, PU_STOP(stop)), "load htbctl");
	chain(f, depth, 0);
	if (sc->aqm)
		leaf_aqm(f, (__u32)depth - 1, sc->flows);
	if (!sc->lease)
		return;
	for (__u32 i = 0; i < (__u32)depth; i++)
		die_err(bpf_map_update_elem(f->maps.fd[M_SHARE], &i, &sh, 0) ? -errno : 0,
			"class_share");
	f->runtime.share_until_ns = ~0ull;
	die_err(fx_set_runtime(f), "runtime");
}

/* One row: the step's ns in every column, cs[cut a] - cs[cut b]. */
static void steps_row(const char *name, const struct bcase *cs, int a, int b)
{
	printf("%-34s", name);
	for (int c = 0; c < NSTEPC; c++)
		printf(" %9.1f", cs[1 + c * NCUT + a].min - (b < 0 ? 0 : cs[1 + c * NCUT + b].min));
	printf("\n");
}

/*
 * Where the time of a depth-3 leaf's packet within its rate goes: the
 * program cut after each step (the load-time switch bench_stop), one
 * variant per cut, all interleaved; a step's cost is the difference of
 * two cuts. Columns: the leaf's AQM and flows, and the sharing loop's
 * lease (every class's class_share read).
 */
static void table_steps(const struct bench *bn, const struct baseline *b,
			const struct pkt *p)
{
	static struct fx fd[NSTEPC][NCUT];
	struct bcase cs[1 + NSTEPC * NCUT];
	int n = 0;

	cs[n++] = (struct bcase){ .prog = b->prog, .in = { .priority = PU_CLASSID(0) } };
	for (int c = 0; c < NSTEPC; c++)
		for (int k = 0; k < NCUT; k++) {
			steps_open(&fd[c][k], &steps_confs[c], steps_cuts[k].stop,
				   steps_cuts[k].depth);
			cs[n++] = (struct bcase){ .prog = fd[c][k].prog,
				.in = { .priority = PU_CLASSID(steps_cuts[k].depth - 1) } };
		}
	measure(bn, cs, n, p);
	printf("\n%-34s", "where the ns go (ns/pkt)");
	for (int c = 0; c < NSTEPC; c++)
		printf(" %9.9s", steps_confs[c].name);
	printf("\n");
	steps_row("maps, test_run's own (cut 1)", cs, 0, -1);
	steps_row("hash, link control", cs, 1, 0);
	steps_row("classify (prio lookup), set hash", cs, 2, 1);
	steps_row("clock, the stamp written", cs, 3, 2);
	steps_row("ECT, params", cs, 4, 3);
	steps_row("leaf (depth 1 schedule)", cs, 5, 4);
	steps_row("two ancestors (depth 3 - 1)", cs, 6, 5);
	steps_row("total, depth 3", cs, 6, -1);
	printf("%-34s", "ratio to the baseline");
	for (int c = 0; c < NSTEPC; c++)
		printf(" %8.2fx", cs[1 + c * NCUT + 6].min / cs[0].min);
	printf("\n(the leaf of a depth-3 chain within its rate, 1000-byte IPv4 UDP, the\n"
	       " packet with a hash; the program cut after each step, every cut loaded\n"
	       " alone and all interleaved; codel: CoDel, ecn; defaults: + sparse\n"
	       " flows; lease: the sharing loop's limits read on every class.\n"
	       " baseline %.1f ns, of this table)\n", cs[0].min);
	for (int c = 0; c < NSTEPC; c++)
		for (int k = 0; k < NCUT; k++) {
			if (!steps_cuts[k].stop)
				expect_level(&fd[c][k], (__u32)steps_cuts[k].depth - 1, 0,
					     "where the ns go");
			fx_close(&fd[c][k]);
		}
}

/* ---- a packet's origin (issue 22) ---- */

/* The packets, 1000 bytes each: the flow dissector walks each differently. */
static const struct origin_pkt {
	const char *name;
	struct pkt_spec spec;
	int vlan;		/* an 802.1Q tag after the MACs */
} origin_pkts[] = {
	{ .name = "IPv4 UDP", .spec = { .proto = IPPROTO_UDP, .src = "198.18.0.1",
		.dst = "198.18.1.1", .sport = 5000, .dport = 6000, .payload = 1000 - 42 } },
	{ .name = "IPv6 TCP", .spec = { .v6 = 1, .proto = IPPROTO_TCP, .src = "2001:db8::1",
		.dst = "2001:db8:1::1", .sport = 5000, .dport = 6000, .payload = 1000 - 74 } },
	{ .name = "802.1Q IPv4 UDP", .vlan = 1, .spec = { .proto = IPPROTO_UDP,
		.src = "198.18.0.1", .dst = "198.18.1.1", .sport = 5000, .dport = 6000,
		.payload = 1000 - 46 } },
};

/* The leaf's AQM: a config's defaults, then without flows, then off. */
static const struct origin_conf {
	const char *name;
	int aqm, flows;
} origin_confs[] = {
	{ "aqm + flows", 1, 1 }, { "aqm, no flows", 1, 0 }, { "aqm off", 0, 0 },
};

/* The two variants (bench_hash): every packet comes with a hash, or without one. */
static const int origin_variants[] = { PU_HASH_SET, PU_HASH_NONE };

#define NKIND	(int)(sizeof(origin_pkts) / sizeof(origin_pkts[0]))
#define NCONF	(int)(sizeof(origin_confs) / sizeof(origin_confs[0]))
#define NORIG	(int)(sizeof(origin_variants) / sizeof(origin_variants[0]))

static void origin_pkt_build(struct pkt *p, const struct origin_pkt *o)
{
	pkt_build(p, &o->spec);
	if (!o->vlan)
		return;
	memmove(p->data + 16, p->data + 12, p->len - 12);
	p->data[12] = 0x81;	/* ETH_P_8021Q */
	p->data[13] = 0x00;
	p->data[14] = 0x00;	/* PCP 0, VID 10 */
	p->data[15] = 10;
	p->len += 4;
}

/* The leaf (slot 2) of a depth-3 chain, its AQM as conf gives it. */
static void origin_open(struct fx *f, const struct origin_conf *conf, int variant)
{
	die_err(bench_open(f, 16, variant), "load htbctl");
	chain(f, 3, 0);
	if (conf->aqm)
		leaf_aqm(f, 2, conf->flows);
}

/* The rows: per packet kind and AQM, cs[i] with a hash, cs[i + 1] without;
 * cs[0] the baseline. */
static void origin_print(const struct bcase *cs)
{
	printf("\n%-32s %10s %7s %12s %7s %10s\n", "a packet's origin (depth 3)",
	       "hash ns", "ratio", "no hash ns", "ratio", "dissector");
	for (int k = 0, i = 1; k < NKIND; k++)
		for (int c = 0; c < NCONF; c++, i += NORIG) {
			double a = cs[i].min, none = cs[i + 1].min;
			char name[64];

			snprintf(name, sizeof(name), "%s, %s", origin_pkts[k].name,
				 origin_confs[c].name);
			printf("%-32s %10.1f %6.2fx %12.1f %6.2fx %+9.1f\n", name, a, a / cs[0].min,
			       none, none / cs[0].min, none - a);
		}
	printf("(the leaf of a depth-3 chain within its rate; 1000-byte packets. hash: the\n"
	       " packet comes with skb->hash set, a local socket's (sk_txhash) or a forwarded\n"
	       " one's from the NIC (RSS): one figure for both, as under test_run nothing\n"
	       " else tells them apart (the program reads no socket). no hash: forwarded from\n"
	       " a device without RX hashing (veth): bpf_get_hash_recalc runs the flow\n"
	       " dissector. Each pays one helper call the shipped program does not, setting\n"
	       " or clearing the hash. dissector: no hash - hash. ratio: against the\n"
	       " baseline, %.1f ns, of this table)\n", cs[0].min);
}

/* Each packet kind x the leaf's AQM, through both variants, interleaved
 * with the baseline. */
static void table_path(const struct bench *bn, const struct baseline *b)
{
	static struct fx fd[NCONF][NORIG];
	struct bcase cs[1 + NKIND * NCONF * NORIG];
	struct pkt pk[NKIND];
	int n = 0;

	for (int k = 0; k < NKIND; k++)
		origin_pkt_build(&pk[k], &origin_pkts[k]);
	for (int c = 0; c < NCONF; c++)
		for (int o = 0; o < NORIG; o++)
			origin_open(&fd[c][o], &origin_confs[c], origin_variants[o]);
	cs[n++] = (struct bcase){ .prog = b->prog, .in = { .priority = PU_CLASSID(0) } };
	for (int k = 0; k < NKIND; k++)
		for (int c = 0; c < NCONF; c++)
			for (int o = 0; o < NORIG; o++)
				cs[n++] = (struct bcase){ .prog = fd[c][o].prog, .pkt = &pk[k],
					.in = { .priority = PU_CLASSID(2) } };
	measure(bn, cs, n, &pk[0]);
	origin_print(cs);
	for (int c = 0; c < NCONF; c++)
		for (int o = 0; o < NORIG; o++) {
			expect_level(&fd[c][o], 2, 0, "a packet's origin");
			fx_close(&fd[c][o]);
		}
}

/* Classification worst case: every classifier probed, all miss. */
static void table_unclassified(const struct bench *bn, const struct baseline *b,
			       struct fx *f0, const struct pkt *p)
{
	struct bcase cs[2];

	f0->treeconf.skip = 0;
	die_err(fx_put_tree(f0), "tree_conf");
	cs[0] = (struct bcase){ .prog = b->prog, .in = { .priority = PU_CLASSID(0) } };
	cs[1] = (struct bcase){ .prog = f0->prog, .in = { .priority = 0 } };
	measure(bn, cs, 2, p);
	printf("%-30s %10.1f %7.2fx  (prio, mark, 2 LPM, 4 port, cgroup lookups)\n",
	       "unclassified, all maps probed", cs[1].min, cs[1].min / cs[0].min);
}

/* Table 2: tree size, depth 3, hot and spread over the leaves. */
static void table_size(const struct bench *bn, const struct pkt *p)
{
	static const __u32 sizes[] = { 10, 10000, 1000000 };

	printf("\n%-30s %10s %8s %12s %8s\n", "classes (depth 3)", "hot ns", "ratio",
	       "spread ns", "ratio");
	for (int s = 0; s < 3; s++) {
		__u32 sz = sizes[s], first, nleaves, *prio;
		struct bcase cs[3];
		struct baseline bb;
		struct fx f0, f1;
		double sp, bsp;
		long calls = 200000;
		char name[64];

		if (sz > bn->max_classes)
			continue;
		die_err(bench_open(&f0, sz, 0), "load htbctl");
		tree3(&f0, sz, 0, &first);
		die_err(bench_open(&f1, sz, 0), "load htbctl");
		nleaves = tree3(&f1, sz, 1, &first);
		baseline_open(&bb, sz);
		cs[0] = (struct bcase){ .prog = bb.prog, .in = { .priority = PU_CLASSID(first) } };
		cs[1] = (struct bcase){ .prog = f0.prog,
			.in = { .priority = PU_CLASSID(first + nleaves - 1) } };
		cs[2] = (struct bcase){ .prog = f1.prog,
			.in = { .priority = PU_CLASSID(first + nleaves - 1) } };
		measure(bn, cs, 3, p);
		expect_level(&f0, first + nleaves - 1, 0, "depth 3, own rate");
		expect_level(&f1, first + nleaves - 1, 1, "depth 3, borrowed");
		prio = calloc(nleaves, sizeof(*prio));
		for (__u32 i = 0; i < nleaves; i++)
			prio[i] = PU_CLASSID(first + i);
		/* rounds of calls to random leaves, alternating the two
		 * programs; the minimum round mean of each */
		sp = bsp = 1e18;
		for (int r = 0; r < 20; r++) {
			double x;

			srand(r);
			x = spread(f1.prog, p, prio, nleaves, calls / 20);
			sp = x < sp ? x : sp;
			srand(r);
			x = spread(bb.prog, p, prio, nleaves, calls / 20);
			bsp = x < bsp ? x : bsp;
		}
		free(prio);
		snprintf(name, sizeof(name), "%u, leaf within rate", sz);
		printf("%-30s %10.1f %7.2fx\n", name, cs[1].min, cs[1].min / cs[0].min);
		snprintf(name, sizeof(name), "%u, borrow from top", sz);
		printf("%-30s %10.1f %7.2fx %12.1f %7.2fx  (baseline: hot %.1f, spread %.1f)\n",
		       name, cs[2].min, cs[2].min / cs[0].min, sp, sp / bsp, cs[0].min, bsp);
		edt_baseline_bpf__destroy(bb.skel);
		fx_close(&f0);
		fx_close(&f1);
	}
}

/* ---- several CPUs at once (issue 13) ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct mc_worker {
	pthread_barrier_t *go;
	int prog, cpu, err;
	__u32 prio;
	long n;
	double wall_ns;
};

static void *mc_run(void *arg)
{
	struct mc_worker *w = arg;
	struct fx f = { .prog = w->prog };
	struct timespec t0, t1;

	w->err = pu_pin(w->cpu);
	pthread_barrier_wait(w->go);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!w->err)
		w->err = pu_run_n(&f, w->prio, w->n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w->wall_ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	return NULL;
}

/* ncpu workers at once, worker i on the bench's CPU i with priority
 * prio(i); n packets each. Returns the slowest worker's ns per packet. */
static double mc_once(const struct bench *bn, int ncpu, int prog,
		      __u32 (*prio)(int), long n)
{
	struct mc_worker w[CPU_SETSIZE];
	pthread_t th[CPU_SETSIZE];
	pthread_barrier_t go;
	double worst = 0;

	pthread_barrier_init(&go, NULL, (unsigned)ncpu);
	for (int i = 0; i < ncpu; i++) {
		w[i] = (struct mc_worker){ .go = &go, .prog = prog, .cpu = bn->cpus[i],
					   .prio = prio(i), .n = n };
		pthread_create(&th[i], NULL, mc_run, &w[i]);
	}
	for (int i = 0; i < ncpu; i++) {
		pthread_join(th[i], NULL);
		die_err(w[i].err, "test_run on several CPUs");
		if (w[i].wall_ns / n > worst)
			worst = w[i].wall_ns / n;
	}
	pthread_barrier_destroy(&go);
	return worst;
}

static int mc_nleaves;	/* leaves under the parent: one per CPU */
static __u32 mc_own_key(int i) { return PU_CLASSID(i); }
static __u32 mc_one_key(int i) { (void)i; return PU_CLASSID(0); }
static __u32 mc_own_leaf(int i) { return PU_CLASSID(2 + i); }
static __u32 mc_one_leaf(int i) { (void)i; return PU_CLASSID(2); }
static __u32 mc_own_top(int i) { return PU_CLASSID(2 + mc_nleaves + i); }

/* Root 0 <- parent 1 <- leaves 2..n+1, rates of 1 Tbit/s (nothing
 * queues): depth 3, every leaf's packets charge the shared parent and
 * root; and n top-level leaves n+2..2n+1 (depth 1, nothing shared). */
static void mc_tree(struct fx *f, int nleaves)
{
	struct htb_class_params c = {
		.rate_Bps = TBIT, .ceil_Bps = TBIT, .burst = BURST,
		.cburst = BURST, .limit_ns = PU_SEC,
	};

	die_err(fx_class_p(f, 0, HTB_NO_CLASS, &c), "root");
	die_err(fx_class_p(f, 1, 0, &c), "parent");
	for (int i = 0; i < nleaves; i++)
		die_err(fx_class_p(f, 2 + (__u32)i, 1, &c), "leaf");
	for (int i = 0; i < nleaves; i++)
		die_err(fx_class_p(f, 2 + (__u32)(nleaves + i), HTB_NO_CLASS, &c), "top leaf");
	use_prio_only(f);
}

/*
 * The multi-CPU table: each case on one CPU alone, then on N at once
 * (rounds interleaved, the best of each); per-packet cost and the
 * aggregate throughput of N against one. The flat EDT program with a
 * bucket per CPU is the ceiling (nothing shared); with one bucket shared
 * it shows what a written shared cache line costs.
 */
static void table_cpus(const struct bench *bn)
{
	enum { NC = 6, ROUNDS = 11 };
	static const char *const name[NC] = {
		"flat EDT, a bucket per CPU", "flat EDT, one bucket",
		"htbctl d1, a leaf per CPU", "htbctl d3, a leaf per CPU",
		"htbctl d3, all on one leaf", "d3 a leaf per CPU, no batches",
	};
	__u32 (*const prio[NC])(int) = { mc_own_key, mc_one_key, mc_own_top,
					 mc_own_leaf, mc_one_leaf, mc_own_leaf };
	const long n = 1000000;
	int ncpu = bn->ncpus, prog[NC];
	double one[NC], all[NC], ratio[NC][ROUNDS];
	struct baseline bb;
	struct fx f, fnb;
	__u64 bytes0;

	if (ncpu < 2) {
		printf("\nseveral CPUs: SKIP (%d CPU%s to run on; --cpus N)\n", ncpu,
		       ncpu == 1 ? "" : "s");
		return;
	}
	baseline_open(&bb, (__u32)ncpu);
	mc_nleaves = ncpu;
	die_err(bench_open(&f, 2 * (__u32)ncpu + 2 < 16 ? 16 : 2 * (__u32)ncpu + 2, 0),
		"load htbctl");
	mc_tree(&f, ncpu);
	die_err(bench_open(&fnb, f.cap, PU_NO_BATCH), "load htbctl");
	mc_tree(&fnb, ncpu);
	bytes0 = fx_view(&f, 0).bytes;
	prog[0] = prog[1] = bb.prog;
	prog[2] = prog[3] = prog[4] = f.prog;
	prog[5] = fnb.prog;
	for (int c = 0; c < NC; c++)
		one[c] = all[c] = 1e18;
	for (int r = 0; r < ROUNDS; r++)
		for (int c = 0; c < NC; c++) {
			double a = mc_once(bn, 1, prog[c], prio[c], n);
			double b = mc_once(bn, ncpu, prog[c], prio[c], n);

			one[c] = a < one[c] ? a : one[c];
			all[c] = b < all[c] ? b : all[c];
			ratio[c][r] = ncpu * a / b;
		}
	for (int i = 0; i < 2 * ncpu; i++) {
		expect_level(&f, 2 + (__u32)i, 0, "N CPUs");
		if (i < ncpu)
			expect_level(&fnb, 2 + (__u32)i, 0, "N CPUs, no batches");
	}
	printf("\n%d CPUs at once (%ld packets each, %d rounds; CPUs", ncpu, n, ROUNDS);
	for (int i = 0; i < ncpu; i++)
		printf(" %d", bn->cpus[i]);
	printf(")\n%-30s %10s %12s %12s %16s\n", "", "1 CPU ns", "N CPUs ns", "aggregate",
	       "round min-max");
	for (int c = 0; c < NC; c++) {
		qsort(ratio[c], ROUNDS, sizeof(double), cmp_double);
		printf("%-30s %10.1f %12.1f %11.2fx %8.2f-%.2fx\n", name[c], one[c], all[c],
		       ratio[c][ROUNDS / 2], ratio[c][0], ratio[c][ROUNDS - 1]);
	}
	printf("(ns per packet per CPU, wall clock, the best round of each; aggregate: N CPUs'\n"
	       " packets per second against one CPU's in the same round, the median round;\n"
	       " a round runs every case on one CPU and then on N)\n");
	/* every packet of every round, once on one CPU and once on each */
	printf("root counted %llu bytes of %llu sent (its state, the CPUs' batches and carries)\n",
	       (unsigned long long)(fx_view(&f, 0).bytes + fx_carried(&f, 0).bytes - bytes0),
	       (unsigned long long)ROUNDS * 2 * (1 + (__u64)ncpu) * n * 1000);
	edt_baseline_bpf__destroy(bb.skel);
	fx_close(&f);
	fx_close(&fnb);
}

/* What the locks protect: two CPUs charging sibling leaves. */
static void two_cpus(void)
{
	const long np = 1000000;
	struct pu_2cpu r;
	struct fx f;

	if (libbpf_num_possible_cpus() < 2)
		return;
	printf("\ntwo CPUs, %ld packets each to sibling leaves (shared parent and root):\n", np);
	for (int v = 0; v < 2; v++) {
		struct timespec t0, t1;
		double wall;

		die_err(bench_open(&f, 16, v), "load htbctl");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		die_err(pu_two_cpus(&f, np, &r), "two CPUs");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		wall = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
		printf("  %-8s parent lost %lld bytes, root lost %lld bytes, worst token "
		       "error %.0f ns; %.0f ns/packet per CPU (wall)\n",
		       v ? "no-lock" : "locked", r.lost_parent, r.lost_root,
		       r.worst_ns, wall / np);
		fx_close(&f);
	}
}

/*
 * --hold SECONDS: the steps table's first case alone (the leaf of a
 * depth-3 chain within its rate, AQM off, the whole program) run on this
 * CPU for SECONDS, for scripts/bench-profile.sh, which samples it with
 * perf and maps the samples to source lines through the program's id,
 * printed first. Prints the case's best ns per packet at the end.
 */
static int hold_one(const struct bench *bn, const struct pkt *p)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	struct bench one = *bn;
	struct timespec t0, t;
	struct bcase c;
	struct fx f;
	double best = 1e18;

	steps_open(&f, &steps_confs[0], 0, 3);
	die_err(bpf_obj_get_info_by_fd(f.prog, &info, &len) ? -errno : 0, "prog info");
	printf("htb_egress prog id %u: %s, depth 3, leaf within rate, %d s\n",
	       info.id, steps_confs[0].name, bn->hold);
	fflush(stdout);
	c = (struct bcase){ .prog = f.prog, .in = { .priority = PU_CLASSID(2) } };
	one.trials = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		measure(&one, &c, 1, p);
		if (c.min < best)
			best = c.min;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < bn->hold);
	expect_level(&f, 2, 0, "hold");
	printf("best %.1f ns/pkt\n", best);
	fx_close(&f);
	return 0;
}

static int parse_args(struct bench *bn, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "trials", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "max-classes", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "only", required_argument, NULL, 'o' },
		{ "hold", required_argument, NULL, 'h' },
		{ 0 },
	};
	int c, table_opts = 0;	/* options of the tables, which --hold refuses */
	cpu_set_t mask;

	*bn = (struct bench){ .trials = 40, .repeat = 100000, .max_classes = 1000000 };
	/* the CPUs this process may run on, before main pins itself to one */
	if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &mask))
				bn->cpus[bn->nmask++] = i;
	bn->ncpus = bn->nmask;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': bn->trials = atoi(optarg); table_opts++; break;
		case 'r': bn->repeat = strtoul(optarg, NULL, 10); break;
		case 'm': bn->max_classes = strtoul(optarg, NULL, 10); table_opts++; break;
		case 'c': bn->ncpus = atoi(optarg); table_opts++; break;
		case 'h':
			bn->hold = atoi(optarg);
			if (bn->hold < 1) {
				fprintf(stderr, "bench: --hold %s: seconds, at least 1\n", optarg);
				return -1;
			}
			break;
		case 'o':
			if (strcmp(optarg, "cpus") && strcmp(optarg, "depth") &&
			    strcmp(optarg, "path") && strcmp(optarg, "steps")) {
				fprintf(stderr, "bench: --only %s: the tables are depth, path, "
					"steps and cpus\n", optarg);
				return -1;
			}
			bn->only = optarg;
			table_opts++;
			break;
		default:
			fprintf(stderr, "usage: %s [--trials N] [--repeat N] "
				"[--max-classes N] [--cpus N] [--only depth|path|steps|cpus] "
				"[--hold SECONDS]\n", argv[0]);
			return -1;
		}
	}
	if (bn->hold && table_opts) {
		fprintf(stderr, "bench: --hold runs one case on one CPU: not with --only, "
			"--trials, --max-classes or --cpus (--repeat sets its batch)\n");
		return -1;
	}
	if (bn->ncpus < 1 || bn->ncpus > bn->nmask) {
		fprintf(stderr, "bench: --cpus %d: this process may run on %d CPUs\n",
			bn->ncpus, bn->nmask);
		return -1;
	}
	if (bn->trials < 1)
		bn->trials = 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct baseline b;
	struct bench bn;
	cpu_set_t set;
	struct pkt p;
	struct fx f0;

	if (parse_args(&bn, argc, argv))
		return 2;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	libbpf_set_print(NULL);
	pkt_udp4(&p, 1000);
	if (bn.hold)
		return hold_one(&bn, &p);
	if (bn.only && !strcmp(bn.only, "cpus")) {
		table_cpus(&bn);
		return 0;
	}

	printf("htbctl egress program: cost per packet via BPF_PROG_TEST_RUN\n");
	printf("(1000-byte UDP packet, real clock, 1 Tbit/s rates so nothing queues;\n"
	       " each figure: minimum of %d runs of repeat %u on CPU 0, all cases of a\n"
	       " table interleaved; see bench/bench_prog.c)\n\n", bn.trials, bn.repeat);
	baseline_open(&b, 10);
	if (!bn.only || !strcmp(bn.only, "depth")) {
		table_depth(&bn, &b, &f0, &p);
		if (!bn.only)
			table_unclassified(&bn, &b, &f0, &p);
		fx_close(&f0);
	}
	if (!bn.only) {
		table_share(&bn, &b, &p);
		table_aqm(&bn, &b, &p);
	}
	if (!bn.only || !strcmp(bn.only, "path"))
		table_path(&bn, &b);
	if (!bn.only || !strcmp(bn.only, "steps"))
		table_steps(&bn, &b, &p);
	edt_baseline_bpf__destroy(b.skel);
	if (bn.only)
		return 0;
	table_size(&bn, &p);
	two_cpus();
	table_cpus(&bn);
	return 0;
}
