// SPDX-License-Identifier: GPL-2.0
/*
 * include/htb/rate.h: the kernel's mult/shift precompute, l2t accuracy
 * against the exact value (computed with 128-bit integers), overhead/mpu/
 * ATM, and packet trains reaching the configured rate.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "htb/rate.h"

typedef unsigned __int128 u128;

/* Seed 001: every ceil value of the table (kbit/s), and the 555 Mbit class. */
static const __u64 seed001_kbit[] = {
	376000, 377000, 400000, 401000, 426000, 427000, 457000, 458000,
	492000, 493000, 533000, 534000, 581000, 582000, 640000, 641000,
	711000, 712000, 800000, 801000, 914000, 915000, 555000,
};
#define NSEED (sizeof(seed001_kbit) / sizeof(seed001_kbit[0]))

/* Log sweep from 1 B/s (8 bit/s) to 1e11 B/s (800 Gbit/s), n + 1 points. */
static __u64 sweep_rate(int i, int n)
{
	double lr = log(1e11) * i / n;
	__u64 r = (__u64)llround(exp(lr));

	return r ? r : 1;
}

static void prep(struct htb_ratecfg *r, __u64 rate)
{
	htb_ratecfg_precompute(r, rate, 0, 0, HTB_LINKLAYER_ETHERNET);
}

/* |got - len*1e9/rate| <= max(1 ns, exact * 2^-30), exactly in integers:
 * |got*rate - len*1e9| * 2^30 <= max(rate * 2^30, len*1e9). */
static int within(__u64 got, __u64 len, __u64 rate)
{
	u128 exact_num = (u128)len * HTB_NSEC_PER_SEC;
	u128 g = (u128)got * rate;
	u128 diff = g > exact_num ? g - exact_num : exact_num - g;
	u128 b1 = (u128)rate << 30;

	return (diff << 30) <= (b1 > exact_num ? b1 : exact_num);
}

/* The kernel's psched_l2t_ns (truncating), for comparison. */
static __u64 kernel_l2t(const struct htb_ratecfg *r, __u32 len)
{
	return ((__u64)len * r->mult) >> r->shift;
}

Test(ratemath, precompute_known_values)
{
	struct htb_ratecfg r;

	prep(&r, 125000000);	/* 1 Gbit/s: 8 ns per byte exactly */
	cr_expect_eq(r.mult, 1u << 31);
	cr_expect_eq(r.shift, 28);
	cr_expect_eq(htb_l2t_ns(&r, 1500), 12000);

	prep(&r, 1);		/* 8 bit/s */
	cr_expect_eq(r.mult, 4000000000u);
	cr_expect_eq(r.shift, 2);
	cr_expect_eq(htb_l2t_ns(&r, 1), HTB_NSEC_PER_SEC);

	prep(&r, 100000000000ull);	/* 800 Gbit/s: factor hits bit 63 */
	cr_expect_eq(r.shift, 34);
	cr_expect_eq(r.mult, (__u32)((1000000000ull << 34) / 100000000000ull));

	prep(&r, 0);
	cr_expect_eq(r.mult, 0);
	cr_expect_eq(htb_l2t_ns(&r, 1500), 0);
}

/* mult = floor(1e9 * 2^shift / rate), stopped by bit 31 of mult or bit 63
 * of the factor, and never one round late. */
Test(ratemath, precompute_invariants)
{
	for (int i = 0; i <= 4000; i++) {
		__u64 rate = sweep_rate(i, 4000);
		struct htb_ratecfg r;
		u128 factor;

		prep(&r, rate);
		factor = (u128)HTB_NSEC_PER_SEC << r.shift;
		cr_assert_eq(r.rate_Bps, rate);
		cr_assert(factor < ((u128)1 << 64), "rate %llu", (unsigned long long)rate);
		cr_assert_eq((u128)r.mult, factor / rate, "rate %llu", (unsigned long long)rate);
		cr_assert((r.mult & (1u << 31)) || (factor >> 63),
			  "rate %llu stopped early", (unsigned long long)rate);
		if (r.shift > 0) {
			u128 prev = factor >> 1;

			cr_assert(!((prev / rate) & (1u << 31)) && !(prev >> 63),
				  "rate %llu stopped late", (unsigned long long)rate);
		}
	}
}

static long check_lengths(__u64 rate, int all, long *kernel_misses)
{
	struct htb_ratecfg r;
	long n = 0;
	__u32 len;

	prep(&r, rate);
	for (len = 1; len <= 262144; len += (all || len < 4096) ? 1 : 37) {
		__u64 got = htb_l2t_ns(&r, len);

		cr_assert(within(got, len, rate),
			  "rate %llu len %u: l2t %llu, exact %.3f",
			  (unsigned long long)rate, len, (unsigned long long)got,
			  (double)len * 1e9 / rate);
		if (kernel_misses && !within(kernel_l2t(&r, len), len, rate))
			(*kernel_misses)++;
		n++;
	}
	/* the boundaries of the range, and powers of two around them */
	for (int s = 0; s <= 18; s++) {
		__u32 l = 1u << s;

		cr_assert(within(htb_l2t_ns(&r, l), l, rate));
		cr_assert(within(htb_l2t_ns(&r, l + 1), l + 1, rate));
		cr_assert(within(htb_l2t_ns(&r, l - 1 ? l - 1 : 1), l - 1 ? l - 1 : 1, rate));
	}
	return n;
}

Test(ratemath, l2t_accuracy_log_sweep, .timeout = 120)
{
	long n = 0, kmiss = 0;

	for (int i = 0; i <= 2000; i++)
		n += check_lengths(sweep_rate(i, 2000), 0, &kmiss);
	cr_log_info("l2t: %ld (rate, len) pairs within max(1 ns, 2^-30); "
		    "kernel truncation misses %ld (%.2f%%)", n, kmiss,
		    100.0 * kmiss / n);
	/* the reason htb_l2t_ns rounds (see htb/rate.h) */
	cr_expect_gt(kmiss, 0);
}

Test(ratemath, l2t_accuracy_seed001_every_length, .timeout = 120)
{
	for (size_t i = 0; i < NSEED; i++)
		check_lengths(seed001_kbit[i] * 1000 / 8, 1, NULL);
}

Test(ratemath, overhead_mpu_atm)
{
	struct htb_ratecfg r;

	/* 1 Gbit/s = 8 ns per byte */
	htb_ratecfg_precompute(&r, 125000000, 24, 0, HTB_LINKLAYER_ETHERNET);
	cr_expect_eq(htb_l2t_ns(&r, 1500), (1500 + 24) * 8);
	htb_ratecfg_precompute(&r, 125000000, 0, 64, HTB_LINKLAYER_ETHERNET);
	cr_expect_eq(htb_l2t_ns(&r, 40), 64 * 8);
	cr_expect_eq(htb_l2t_ns(&r, 100), 100 * 8);
	htb_ratecfg_precompute(&r, 125000000, -10, 0, HTB_LINKLAYER_ETHERNET);
	cr_expect_eq(htb_l2t_ns(&r, 100), 90 * 8);
	cr_expect_eq(htb_l2t_ns(&r, 5), 0);
	/* ATM: whole 48-byte cells of 53 bytes */
	htb_ratecfg_precompute(&r, 125000000, 0, 0, HTB_LINKLAYER_ATM);
	cr_expect_eq(htb_l2t_ns(&r, 1), 53 * 8);
	cr_expect_eq(htb_l2t_ns(&r, 48), 53 * 8);
	cr_expect_eq(htb_l2t_ns(&r, 49), 2 * 53 * 8);
	cr_expect_eq(htb_l2t_ns(&r, 1500), 32 * 53 * 8);
	htb_ratecfg_precompute(&r, 125000000, 8, 0, HTB_LINKLAYER_ATM);
	cr_expect_eq(htb_l2t_ns(&r, 40), 53 * 8);
	cr_expect_eq(htb_l2t_ns(&r, 41), 2 * 53 * 8);
}

/* Sum of a train of n packets of len bytes through the carry. */
static u128 train(const struct htb_ratecfg *r, __u32 len, long n)
{
	__u64 carry = 0;
	u128 total = 0;

	for (long i = 0; i < n; i++)
		total += htb_l2t_carry(r, len, &carry);
	return total;
}

/* achieved / configured - 1 for a train lasting total ns */
static double rate_error(__u64 rate, __u32 len, long n, u128 total)
{
	double achieved = (double)n * len * 1e9 / (double)total;

	return achieved / (double)rate - 1.0;
}

static const __u32 train_sizes[] = {
	64, 65, 100, 127, 576, 1000, 1499, 1500, 4096, 9000, 9001, 65535, 65536,
};

static void check_train(__u64 rate)
{
	struct htb_ratecfg r;

	prep(&r, rate);
	for (size_t s = 0; s < sizeof(train_sizes) / sizeof(train_sizes[0]); s++) {
		__u32 len = train_sizes[s];
		double exact = (double)len * 1e9 / rate;
		/* long enough for 1 ns to be 5e-5 of the train, 100 at least */
		long n = (long)ceil(2e4 / exact);
		double err;

		if (n < 100)
			n = 100;
		err = rate_error(rate, len, n, train(&r, len, n));
		cr_assert(fabs(err) <= 1e-4,
			  "rate %llu B/s, %u-byte train of %ld: off by %.6f%%",
			  (unsigned long long)rate, len, n, err * 100);
	}
}

Test(ratemath, train_reaches_rate_log_sweep, .timeout = 120)
{
	for (int i = 0; i <= 400; i++)
		check_train(sweep_rate(i, 400));
}

Test(ratemath, train_reaches_rate_seed001)
{
	for (size_t i = 0; i < NSEED; i++)
		check_train(seed001_kbit[i] * 1000 / 8);
}

/* The carry is exact over a train: N * len * mult >> shift, not N times a
 * rounded l2t. */
Test(ratemath, carry_is_exact_cumulative)
{
	struct htb_ratecfg r;
	__u64 carry = 0;
	u128 sum = 0;

	prep(&r, 12500000000ull);	/* 100 Gbit/s */
	for (long i = 1; i <= 1000000; i++) {
		sum += htb_l2t_carry(&r, 64, &carry);
		if (i % 99991 == 0)
			cr_assert_eq((unsigned long long)sum,
				     (unsigned long long)(((u128)i * 64 * r.mult) >> r.shift));
	}
	cr_expect_lt(carry, 1ull << r.shift);
}

/* Why the carry: a per-packet l2t drifts at high rates and small packets. */
Test(ratemath, per_packet_l2t_drifts_without_carry)
{
	struct htb_ratecfg r;
	long n = 100000;
	u128 total = 0;

	prep(&r, 12500000000ull);	/* 100 Gbit/s, 5.12 ns per 64 bytes */
	for (long i = 0; i < n; i++)
		total += htb_l2t_ns(&r, 64);
	cr_expect_gt(fabs(rate_error(r.rate_Bps, 64, n, total)), 0.01);
	total = 0;
	for (long i = 0; i < n; i++)
		total += kernel_l2t(&r, 64);
	cr_expect_gt(fabs(rate_error(r.rate_Bps, 64, n, total)), 0.01);
}
