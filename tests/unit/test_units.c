// SPDX-License-Identifier: GPL-2.0
/* tc-compatible units: parsing, printing, errors (shared/docs/tc-units.md). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include "common/units.h"

typedef enum unit_err (*parse_fn)(const char *s, __u64 *out);
typedef char *(*sprint_fn)(__u64 v, char *buf, size_t len);

struct ok_case {
	const char *in;
	__u64 want;
};

struct err_case {
	const char *in;
	enum unit_err want;
};

struct print_case {
	__u64 in;
	const char *want;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_ok(parse_fn fn, const char *what,
		     const struct ok_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		__u64 v = 0xdeadbeef;
		enum unit_err err = fn(c[i].in, &v);

		cr_expect_eq(err, UNIT_OK, "%s(\"%s\"): %s", what, c[i].in,
			     unit_strerror(err));
		cr_expect_eq(v, c[i].want, "%s(\"%s\") = %llu, want %llu",
			     what, c[i].in, (unsigned long long)v,
			     (unsigned long long)c[i].want);
	}
}

/* Also checks that a failed parse leaves the output alone. */
static void check_err(parse_fn fn, const char *what,
		      const struct err_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		__u64 v = 0xdeadbeef;
		enum unit_err err = fn(c[i].in, &v);

		cr_expect_eq(err, c[i].want, "%s(\"%s\"): got \"%s\", want \"%s\"",
			     what, c[i].in, unit_strerror(err),
			     unit_strerror(c[i].want));
		cr_expect_eq(v, 0xdeadbeef, "%s(\"%s\") wrote its output on error",
			     what, c[i].in);
	}
}

static void check_print(sprint_fn fn, const char *what,
			const struct print_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char buf[UNIT_BUF];

		cr_expect_str_eq(fn(c[i].in, buf, sizeof(buf)), c[i].want,
				 "%s(%llu)", what, (unsigned long long)c[i].in);
	}
}

/* Errors every number parser shares. */
static const struct err_case common_errors[] = {
	{ "", UNIT_EMPTY },
	{ " ", UNIT_EMPTY },
	{ " \t\n", UNIT_EMPTY },
	{ "abc", UNIT_NO_NUMBER },
	{ ".", UNIT_NO_NUMBER },
	{ ".e3", UNIT_NO_NUMBER },
	{ "+1", UNIT_NO_NUMBER },
	{ " 1", UNIT_NO_NUMBER },
	{ "-1", UNIT_NEGATIVE },
	{ "-0", UNIT_NEGATIVE },
	{ "-inf", UNIT_NEGATIVE },
	{ "inf", UNIT_NOT_FINITE },
	{ "INF", UNIT_NOT_FINITE },
	{ "infinity", UNIT_NOT_FINITE },
	{ "nan", UNIT_NOT_FINITE },
	{ "NaN", UNIT_NOT_FINITE },
	{ "nan(0x1)", UNIT_NOT_FINITE },
	{ "0x1p3", UNIT_HEX_FLOAT },
	{ "0X1P3", UNIT_HEX_FLOAT },
	{ "0x10", UNIT_HEX_FLOAT },
	{ "0x", UNIT_HEX_FLOAT },
	{ "1 ", UNIT_TRAILING },
	{ "1.5.5", UNIT_TRAILING },
	{ "1,5", UNIT_TRAILING },
	{ "10xyz", UNIT_BAD_UNIT },
	{ "1e", UNIT_BAD_UNIT },
	{ "1e+", UNIT_BAD_UNIT },
	{ "1e999999999999999999999", UNIT_OVERFLOW },
	{ "1e30", UNIT_OVERFLOW },
};

/* ---- rates ---- */

Test(rate, every_unit)
{
	static const struct ok_case c[] = {
		{ "8", 1 },
		{ "8bit", 1 },
		{ "1kbit", 125 },
		{ "1mbit", 125000 },
		{ "1gbit", 125000000 },
		{ "1tbit", 125000000000ULL },
		{ "1kibit", 128 },
		{ "1mibit", 131072 },
		{ "1gibit", 134217728 },
		{ "1tibit", 137438953472ULL },
		{ "1bps", 1 },
		{ "1kbps", 1000 },
		{ "1mbps", 1000000 },
		{ "1gbps", 1000000000 },
		{ "1tbps", 1000000000000ULL },
		{ "1kibps", 1024 },
		{ "1mibps", 1048576 },
		{ "1gibps", 1073741824 },
		{ "1tibps", 1099511627776ULL },
	};

	check_ok(parse_rate, "parse_rate", c, N(c));
}

Test(rate, doc_examples)
{
	static const struct ok_case c[] = {
		{ "1Gbit", 125000000 },
		{ "500mbit", 62500000 },
		{ "1.5mbit", 187500 },
		{ "10mbps", 10000000 },
		{ "8bit", 1 },
	};

	check_ok(parse_rate, "parse_rate", c, N(c));
}

Test(rate, case_insensitive)
{
	static const struct ok_case c[] = {
		{ "1KBIT", 125 },
		{ "1Kbit", 125 },
		{ "1kBiT", 125 },
		{ "1MBit", 125000 },
		{ "1GBPS", 1000000000 },
		{ "1Gbps", 1000000000 },
		{ "1KiBit", 128 },
		{ "1MiBps", 1048576 },
		{ "1TIBPS", 1099511627776ULL },
		{ "1BIT", 0 },
		{ "1E6BIT", 125000 },
	};

	check_ok(parse_rate, "parse_rate", c, N(c));
}

Test(rate, fractions_and_exponents)
{
	static const struct ok_case c[] = {
		{ "1.5mbit", 187500 },
		{ ".5mbit", 62500 },
		{ "5.mbit", 625000 },
		{ "0.001gbit", 125000 },
		{ "1e6bit", 125000 },
		{ "1e6", 125000 },
		{ "1E6bit", 125000 },
		{ "1e+6bit", 125000 },
		{ "1000e-3mbit", 125000 },
		{ "2.5e3kbit", 312500 },
		{ "12.5e-1gbit", 156250000 },
		{ "0.000000001gbit", 0 },
		{ "1e-400gbit", 0 },
		{ "0e999999999", 0 },
		{ "000000000000000000000000001kbit", 125 },
		{ "1.000000000000000000000000000000000000001gbit", 125000000 },
		{ "0.99999999999999999999999999999999mbit", 124999 },
	};

	check_ok(parse_rate, "parse_rate", c, N(c));
}

/* tc stores bytes/s and truncates: 7bit is 0, which HTB refuses later. */
Test(rate, truncation)
{
	static const struct ok_case c[] = {
		{ "0", 0 },
		{ "0bit", 0 },
		{ "7bit", 0 },
		{ "7.99bit", 0 },
		{ "8bit", 1 },
		{ "15bit", 1 },
		{ "16bit", 2 },
		{ "1.999bps", 1 },
		{ "1.0009kbit", 125 },
		{ "1.001kbit", 125 },
		{ "1.008kbit", 126 },
		{ "0.1bps", 0 },
		{ "1kibit", 128 },
		{ "1.1kibit", 140 },	/* 140.8 */
		{ "3.3mibit", 432537 },	/* 432537.6 */
	};

	check_ok(parse_rate, "parse_rate", c, N(c));
}

/* Doubles would get these wrong; they must be exact. */
Test(rate, exact_64bit)
{
	static const struct ok_case c[] = {
		{ "400gbit", 50000000000ULL },
		{ "800gbit", 100000000000ULL },
		{ "1tbit", 125000000000ULL },
		{ "1tibps", 1099511627776ULL },
		{ "1.5tibps", 1649267441664ULL },
		{ "100tbit", 12500000000000ULL },
		{ "18446744073709551615bps", UINT64_MAX },
		{ "18446744073709551615", UINT64_MAX / 8 },
		{ "147573952589676412927bit", UINT64_MAX },
		{ "147573952589676412927.999bit", UINT64_MAX },
		{ "18446744073709551.615kbps", UINT64_MAX },
		{ "9007199254740993bps", 9007199254740993ULL },	/* 2^53 + 1 */
		{ "123456789.123456789mbit", 15432098640432ULL },
	};

	check_ok(parse_rate, "parse_rate", c, N(c));
}

Test(rate, overflow)
{
	static const struct err_case c[] = {
		{ "1e30gbit", UNIT_OVERFLOW },
		{ "16777216tibps", UNIT_OVERFLOW },
		{ "18446744073709551616bps", UNIT_OVERFLOW },
		{ "147573952589676412928bit", UNIT_OVERFLOW },
		{ "18446744073709551.616kbps", UNIT_OVERFLOW },
		{ "1e20bps", UNIT_OVERFLOW },
		{ "99999999999999999999999999999999999999999999bit", UNIT_OVERFLOW },
		{ "0.00000000000000000001e99999999bit", UNIT_OVERFLOW },
	};

	check_err(parse_rate, "parse_rate", c, N(c));
}

Test(rate, errors)
{
	static const struct err_case c[] = {
		{ "10mbit/s", UNIT_TRAILING },
		{ "10 mbit", UNIT_TRAILING },
		{ "10mbit ", UNIT_TRAILING },
		{ "10mbit\n", UNIT_TRAILING },
		{ "10mbits", UNIT_BAD_UNIT },
		{ "10m", UNIT_BAD_UNIT },
		{ "10kb", UNIT_BAD_UNIT },
		{ "10b", UNIT_BAD_UNIT },
		{ "10mbyte", UNIT_BAD_UNIT },
		{ "10pbit", UNIT_BAD_UNIT },
		{ "mbit", UNIT_NO_NUMBER },
		{ "-10mbit", UNIT_NEGATIVE },
		{ "infmbit", UNIT_NOT_FINITE },
		{ "nanbit", UNIT_NOT_FINITE },
		{ "0x1p3mbit", UNIT_HEX_FLOAT },
		{ "0x10mbit", UNIT_HEX_FLOAT },
	};

	check_err(parse_rate, "parse_rate", common_errors, N(common_errors));
	check_err(parse_rate, "parse_rate", c, N(c));
}

Test(rate, null_is_empty)
{
	__u64 v = 42;

	cr_expect_eq(parse_rate(NULL, &v), UNIT_EMPTY);
	cr_expect_eq(v, 42);
}

/* ---- sizes ---- */

Test(size, every_unit)
{
	static const struct ok_case c[] = {
		{ "1", 1 },
		{ "1600", 1600 },
		{ "1b", 1 },
		{ "1k", 1024 },
		{ "1kb", 1024 },
		{ "1m", 1048576 },
		{ "1mb", 1048576 },
		{ "1g", 1073741824 },
		{ "1gb", 1073741824 },
		{ "1kbit", 128 },
		{ "1mbit", 131072 },
		{ "1gbit", 134217728 },
	};

	check_ok(parse_size, "parse_size", c, N(c));
}

Test(size, fractions_case_truncation)
{
	static const struct ok_case c[] = {
		{ "64k", 65536 },
		{ "64K", 65536 },
		{ "64KB", 65536 },
		{ "64Kb", 65536 },
		{ "1.5kb", 1536 },
		{ "1.5KB", 1536 },
		{ "1.9b", 1 },
		{ "0.5", 0 },
		{ "1.0001k", 1024 },
		{ "1.001k", 1025 },	/* 1025.024 */
		{ "1.5MBIT", 196608 },
		{ "2e3", 2000 },
		{ "1e3k", 1024000 },
		{ "16777216g", 18014398509481984ULL },
		{ "17179869183.999999999g", UINT64_MAX - 1 },	/* 2^64 - 2^30 + 1073741822.9 */
		{ "18446744073709551615", UINT64_MAX },
		{ "18446744073709551615b", UINT64_MAX },
	};

	check_ok(parse_size, "parse_size", c, N(c));
}

Test(size, errors)
{
	static const struct err_case c[] = {
		{ "1tb", UNIT_BAD_UNIT },
		{ "1t", UNIT_BAD_UNIT },
		{ "1bit", UNIT_BAD_UNIT },
		{ "1kbps", UNIT_BAD_UNIT },
		{ "1bytes", UNIT_BAD_UNIT },
		{ "64k/8", UNIT_TRAILING },
		{ "64 k", UNIT_TRAILING },
		{ "18446744073709551616", UNIT_OVERFLOW },
		{ "17179869184g", UNIT_OVERFLOW },
		{ "1e30gb", UNIT_OVERFLOW },
	};

	check_err(parse_size, "parse_size", common_errors, N(common_errors));
	check_err(parse_size, "parse_size", c, N(c));
}

/* ---- times ---- */

Test(time, every_unit)
{
	static const struct ok_case c[] = {
		{ "1", 1000 },		/* bare number: microseconds */
		{ "1s", 1000000000ULL },
		{ "1sec", 1000000000ULL },
		{ "1secs", 1000000000ULL },
		{ "1ms", 1000000 },
		{ "1msec", 1000000 },
		{ "1msecs", 1000000 },
		{ "1us", 1000 },
		{ "1usec", 1000 },
		{ "1usecs", 1000 },
		{ "1ns", 1 },
		{ "1nsec", 1 },
		{ "1nsecs", 1 },
	};

	check_ok(parse_time, "parse_time", c, N(c));
}

Test(time, fractions_case_truncation)
{
	static const struct ok_case c[] = {
		{ "1.5ms", 1500000 },
		{ "1.5MS", 1500000 },
		{ "2SEC", 2000000000ULL },
		{ "10Usecs", 10000 },
		{ "0.5", 500 },
		{ "0.0015", 1 },
		{ "0.0005", 0 },
		{ "1.9ns", 1 },
		{ "0.1us", 100 },
		{ "1e-9s", 1 },
		{ "1e3ms", 1000000000ULL },
		{ "100ms", 100000000 },
		{ "18446744073.709551615s", UINT64_MAX },
		{ "18446744073709551615ns", UINT64_MAX },
	};

	check_ok(parse_time, "parse_time", c, N(c));
}

Test(time, errors)
{
	static const struct err_case c[] = {
		{ "1m", UNIT_BAD_UNIT },
		{ "1min", UNIT_BAD_UNIT },
		{ "1h", UNIT_BAD_UNIT },
		{ "1seconds", UNIT_BAD_UNIT },
		{ "1mbit", UNIT_BAD_UNIT },
		{ "1 s", UNIT_TRAILING },
		{ "1s.", UNIT_TRAILING },
		{ "18446744073.709551616s", UNIT_OVERFLOW },
		{ "18446744073709551616ns", UNIT_OVERFLOW },
		{ "18446744073709552", UNIT_OVERFLOW },
		{ "1e11s", UNIT_OVERFLOW },
	};

	check_err(parse_time, "parse_time", common_errors, N(common_errors));
	check_err(parse_time, "parse_time", c, N(c));
}

/* ---- parse_uint ---- */

static enum unit_err uint10(const char *s, __u64 *out)
{
	return parse_uint(s, 10, UINT64_MAX, out);
}

static enum unit_err uint0(const char *s, __u64 *out)
{
	return parse_uint(s, 0, UINT64_MAX, out);
}

Test(uint, decimal)
{
	static const struct ok_case c[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "010", 10 },
		{ "4294967296", 4294967296ULL },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const struct err_case e[] = {
		{ "", UNIT_EMPTY },
		{ "  ", UNIT_EMPTY },
		{ "-1", UNIT_NEGATIVE },
		{ "+1", UNIT_NO_NUMBER },
		{ " 1", UNIT_NO_NUMBER },
		{ "abc", UNIT_NO_NUMBER },
		{ "a1", UNIT_NO_NUMBER },
		{ "1 ", UNIT_TRAILING },
		{ "1a", UNIT_TRAILING },
		{ "1.0", UNIT_TRAILING },
		{ "1e3", UNIT_TRAILING },
		{ "1k", UNIT_TRAILING },
		{ "0x10", UNIT_HEX_FLOAT },
		{ "0x", UNIT_HEX_FLOAT },
		{ "18446744073709551616", UNIT_OVERFLOW },
		{ "99999999999999999999999", UNIT_OVERFLOW },
	};

	check_ok(uint10, "parse_uint10", c, N(c));
	check_err(uint10, "parse_uint10", e, N(e));
}

Test(uint, base0)
{
	static const struct ok_case c[] = {
		{ "0", 0 },
		{ "10", 10 },
		{ "010", 10 },		/* never octal */
		{ "0x10", 16 },
		{ "0X10", 16 },
		{ "0xfF", 255 },
		{ "0x0", 0 },
		{ "0xffffffffffffffff", UINT64_MAX },
		{ "0x0000000000000000000001", 1 },
	};
	static const struct err_case e[] = {
		{ "0x", UNIT_NO_NUMBER },
		{ "0X", UNIT_NO_NUMBER },
		{ "0x ", UNIT_NO_NUMBER },
		{ "0xg", UNIT_NO_NUMBER },
		{ "0x-1", UNIT_NO_NUMBER },
		{ "0x1g", UNIT_TRAILING },
		{ "ff", UNIT_NO_NUMBER },
		{ "-0x1", UNIT_NEGATIVE },
		{ "+0x1", UNIT_NO_NUMBER },
		{ "0x10000000000000000", UNIT_OVERFLOW },
		{ "0x1 ", UNIT_TRAILING },
	};

	check_ok(uint0, "parse_uint0", c, N(c));
	check_err(uint0, "parse_uint0", e, N(e));
}

Test(uint, max)
{
	__u64 v = 7;

	cr_expect_eq(parse_uint("255", 10, 255, &v), UNIT_OK);
	cr_expect_eq(v, 255);
	v = 7;
	cr_expect_eq(parse_uint("256", 10, 255, &v), UNIT_OVERFLOW);
	cr_expect_eq(v, 7);
	cr_expect_eq(parse_uint("0xffff", 0, 0xffff, &v), UNIT_OK);
	cr_expect_eq(v, 0xffff);
	cr_expect_eq(parse_uint("0x10000", 0, 0xffff, &v), UNIT_OVERFLOW);
	cr_expect_eq(parse_uint("0", 10, 0, &v), UNIT_OK);
	cr_expect_eq(v, 0);
	cr_expect_eq(parse_uint("1", 10, 0, &v), UNIT_OVERFLOW);
	cr_expect_eq(parse_uint("9", 10, 8, &v), UNIT_OVERFLOW);
	cr_expect_eq(parse_uint("4294967295", 10, UINT32_MAX, &v), UNIT_OK);
	cr_expect_eq(v, UINT32_MAX);
	cr_expect_eq(parse_uint("4294967296", 10, UINT32_MAX, &v),
		     UNIT_OVERFLOW);
	cr_expect_eq(parse_uint("00000000000000000000000255", 10, 255, &v),
		     UNIT_OK);
	cr_expect_eq(v, 255);
}

Test(uint, other_bases)
{
	__u64 v = 0;

	cr_expect_eq(parse_uint("ff", 16, UINT64_MAX, &v), UNIT_OK);
	cr_expect_eq(v, 255);
	cr_expect_eq(parse_uint("0xff", 16, UINT64_MAX, &v), UNIT_OK);
	cr_expect_eq(v, 255);
	cr_expect_eq(parse_uint("101", 2, UINT64_MAX, &v), UNIT_OK);
	cr_expect_eq(v, 5);
	cr_expect_eq(parse_uint("102", 2, UINT64_MAX, &v), UNIT_TRAILING);
	cr_expect_eq(parse_uint("1", 1, UINT64_MAX, &v), UNIT_NO_NUMBER);
	cr_expect_eq(parse_uint("1", 37, UINT64_MAX, &v), UNIT_NO_NUMBER);
	cr_expect_eq(parse_uint("1", -1, UINT64_MAX, &v), UNIT_NO_NUMBER);
	cr_expect_eq(parse_uint(NULL, 10, UINT64_MAX, &v), UNIT_EMPTY);
}

/* ---- printing ---- */

Test(print, rate)
{
	static const struct print_case c[] = {
		{ 0, "0bit" },
		{ 1, "8bit" },
		{ 124, "992bit" },
		{ 125, "1Kbit" },
		{ 126, "1008bit" },
		{ 2500, "20Kbit" },
		{ 187500, "1500Kbit" },
		{ 62500000, "500Mbit" },
		{ 125000000, "1Gbit" },
		{ 10000000, "80Mbit" },
		{ 124999, "999992bit" },
		{ 125001, "1Mbit" },		/* >= 1e6 bit: divides, truncating */
		{ 125126, "1001Kbit" },
		{ 128, "1024bit" },
		{ 131072, "1048Kbit" },
		{ 1048576, "8388Kbit" },
		{ 50000000000ULL, "400Gbit" },
		{ 100000000000ULL, "800Gbit" },
		{ 125000000000ULL, "1Tbit" },
		{ 1099511627776ULL, "8796Gbit" },
		{ 12500000000000ULL, "100Tbit" },
		{ 125000000000000ULL, "1000Tbit" },	/* no unit above T */
		{ UINT64_MAX, "147573952Tbit" },
	};

	check_print(sprint_rate, "sprint_rate", c, N(c));
}

Test(print, size)
{
	static const struct print_case c[] = {
		{ 0, "0b" },
		{ 1, "1b" },
		{ 1023, "1023b" },
		{ 1024, "1Kb" },
		{ 1039, "1Kb" },
		{ 1040, "1040b" },
		{ 1600, "1600b" },
		{ 2047, "2Kb" },
		{ 2032, "2032b" },
		{ 2033, "2Kb" },
		{ 65536, "64Kb" },
		{ 1536, "1536b" },
		{ 1048575, "1024Kb" },
		{ 1048576, "1Mb" },
		{ 1048576 + 1023, "1Mb" },
		{ 1048576 + 1024, "1025Kb" },
		{ 1048576 + 1040, "1049616b" },
		{ 2097152 - 1023, "2Mb" },
		{ 1073741824, "1Gb" },
		{ 1073741824 - 1, "1024Mb" },	/* below 1 G: never Gb */
		{ 1073741824 + 1023, "1Gb" },
		{ 1073741824 + 1024, "1048577Kb" },
		{ 10737418240ULL, "10Gb" },
		{ 10737418240ULL - 1, "10Gb" },
		{ 0xffffffffc0000000ULL, "17179869183Gb" },
		{ 0xffffffffc0000000ULL + 1023, "17179869183Gb" },
		{ UINT64_MAX, "18446744073709551615b" },	/* 2^64 would overflow */
		{ UINT64_MAX - 1024, "18014398509481983Kb" },
	};

	check_print(sprint_size, "sprint_size", c, N(c));
}

Test(print, time)
{
	static const struct print_case c[] = {
		{ 0, "0us" },
		{ 1, "1ns" },
		{ 500, "500ns" },
		{ 999, "999ns" },
		{ 1000, "1us" },
		{ 1500, "1.5us" },
		{ 10000, "10us" },
		{ 999000, "999us" },
		{ 999499, "999us" },
		{ 999999, "1ms" },		/* tc: 1e+03us */
		{ 1000000, "1ms" },
		{ 1500000, "1.5ms" },
		{ 100000000, "100ms" },
		{ 123456789, "123ms" },
		{ 999999999, "1s" },		/* tc: 1e+03ms */
		{ 1000000000, "1s" },
		{ 2345678901ULL, "2.35s" },
		{ 60000000000ULL, "60s" },
		{ 1200000000000ULL, "1.2e+03s" },	/* as tc */
	};

	check_print(sprint_time, "sprint_time", c, N(c));
}

Test(print, short_buffer)
{
	char buf[4];

	cr_expect_str_eq(sprint_rate(125000000, buf, sizeof(buf)), "1Gb");
	cr_expect_str_eq(sprint_size(1600, buf, sizeof(buf)), "160");
	cr_expect_str_eq(sprint_time(1500000, buf, sizeof(buf)), "1.5");
}

Test(print, fits_unit_buf)
{
	char buf[UNIT_BUF];
	const __u64 v[] = { 0, 1, 999, 1000001, 123456789123ULL, UINT64_MAX,
			    UINT64_MAX - 1, (__u64)INT64_MAX };

	for (size_t i = 0; i < N(v); i++) {
		cr_expect_lt(strlen(sprint_rate(v[i], buf, sizeof(buf))), UNIT_BUF - 1);
		cr_expect_lt(strlen(sprint_size(v[i], buf, sizeof(buf))), UNIT_BUF - 1);
		cr_expect_lt(strlen(sprint_time(v[i], buf, sizeof(buf))), UNIT_BUF - 1);
	}
}

/* ---- round trips: what we print, we parse back ---- */

/* print(parse(x)) is the canonical spelling, and parsing it again gives
 * the same value. */
static void check_round_trip(parse_fn parse, sprint_fn print, const char *in,
			     const char *printed)
{
	char buf[UNIT_BUF];
	__u64 a = 0, b = 0;

	cr_assert_eq(parse(in, &a), UNIT_OK, "parse(\"%s\")", in);
	cr_expect_str_eq(print(a, buf, sizeof(buf)), printed, "print(parse(\"%s\"))", in);
	cr_assert_eq(parse(buf, &b), UNIT_OK, "parse(\"%s\")", buf);
	cr_expect_eq(a, b, "\"%s\" -> %llu -> \"%s\" -> %llu", in,
		     (unsigned long long)a, buf, (unsigned long long)b);
}

Test(round_trip, rate)
{
	static const char *const c[][2] = {
		{ "1gbit", "1Gbit" },
		{ "500mbit", "500Mbit" },
		{ "1.5mbit", "1500Kbit" },
		{ "10mbps", "80Mbit" },
		{ "20kbit", "20Kbit" },
		{ "8bit", "8bit" },
		{ "1000bit", "1Kbit" },
		{ "400gbit", "400Gbit" },
		{ "800gbit", "800Gbit" },
		{ "1tbit", "1Tbit" },
		{ "2.5tbit", "2500Gbit" },
		{ "1kibit", "1024bit" },
		{ "1kibps", "8192bit" },
	};

	for (size_t i = 0; i < N(c); i++)
		check_round_trip(parse_rate, sprint_rate, c[i][0], c[i][1]);
}

/* tc's rate printing truncates above 1e6 bit/s; so do we. */
Test(round_trip, rate_lossy_is_tc)
{
	char buf[UNIT_BUF];
	__u64 v;

	cr_assert_eq(parse_rate("1tibps", &v), UNIT_OK);
	cr_expect_str_eq(sprint_rate(v, buf, sizeof(buf)), "8796Gbit");
	cr_assert_eq(parse_rate("1mibps", &v), UNIT_OK);
	cr_expect_str_eq(sprint_rate(v, buf, sizeof(buf)), "8388Kbit");
}

Test(round_trip, rate_every_value_small)
{
	char buf[UNIT_BUF];

	/* Below 125000 B/s (1 Mbit) printing is exact: every value. */
	for (__u64 v = 0; v < 200000; v++) {
		__u64 back = ~0ULL;

		sprint_rate(v, buf, sizeof(buf));
		if (v < 125000 || v % 125 == 0) {
			cr_assert_eq(parse_rate(buf, &back), UNIT_OK, "%s", buf);
			cr_assert_eq(back, v, "%llu -> %s -> %llu",
				     (unsigned long long)v, buf,
				     (unsigned long long)back);
		}
	}
}

Test(round_trip, size)
{
	static const char *const c[][2] = {
		{ "64k", "64Kb" },
		{ "64kb", "64Kb" },
		{ "1600", "1600b" },
		{ "1600b", "1600b" },
		{ "1.5kb", "1536b" },
		{ "1m", "1Mb" },
		{ "3g", "3Gb" },
		{ "1kbit", "128b" },
		{ "8kbit", "1Kb" },
		{ "8mbit", "1Mb" },
		{ "8gbit", "1Gb" },
	};

	for (size_t i = 0; i < N(c); i++)
		check_round_trip(parse_size, sprint_size, c[i][0], c[i][1]);
}

Test(round_trip, time)
{
	static const char *const c[][2] = {
		{ "1", "1us" },
		{ "0", "0us" },
		{ "500ns", "500ns" },
		{ "1.5us", "1.5us" },
		{ "250", "250us" },
		{ "1ms", "1ms" },
		{ "1000us", "1ms" },
		{ "1.5ms", "1.5ms" },
		{ "100msec", "100ms" },
		{ "1s", "1s" },
		{ "2.5secs", "2.5s" },
		{ "1e3s", "1e+03s" },
	};

	for (size_t i = 0; i < N(c); i++)
		check_round_trip(parse_time, sprint_time, c[i][0], c[i][1]);
}

/* Whatever we print parses back, and close to the value: exact for
 * bytes below 1 KiB, rates within tc's truncation, sizes within the
 * rounding slack, times within %.3g. A fixed-seed LCG keeps it
 * reproducible. */
static __u64 next_rand(__u64 *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> (*state >> 58);	/* vary the magnitude too */
}

static void check_reparses(__u64 v)
{
	char buf[UNIT_BUF];
	__u64 back;

	sprint_rate(v, buf, sizeof(buf));
	cr_assert_eq(parse_rate(buf, &back), UNIT_OK, "rate %s", buf);
	cr_assert_leq(back, v, "rate %llu -> %s", (unsigned long long)v, buf);
	cr_assert_geq(back, v - v / 1000, "rate %llu -> %s",
		      (unsigned long long)v, buf);

	sprint_size(v, buf, sizeof(buf));
	cr_assert_eq(parse_size(buf, &back), UNIT_OK, "size %s", buf);
	cr_assert_lt(back > v ? back - v : v - back, 1024, "size %llu -> %s",
		     (unsigned long long)v, buf);

	sprint_time(v, buf, sizeof(buf));
	cr_assert_eq(parse_time(buf, &back), UNIT_OK, "time %s", buf);
	cr_assert_leq(back > v ? back - v : v - back, v / 200 + 1,
		      "time %llu -> %s", (unsigned long long)v, buf);
}

Test(round_trip, printed_values_parse_back)
{
	__u64 state = 42;

	for (int shift = 0; shift < 64; shift++) {
		__u64 p = 1ULL << shift;

		check_reparses(p);
		check_reparses(p - 1);
		check_reparses(p + 1);
		check_reparses(~0ULL - p);
	}
	for (int i = 0; i < 100000; i++)
		check_reparses(next_rand(&state));
}

/* ---- error texts ---- */

Test(strerror, every_error_has_distinct_text)
{
	for (int i = 0; i < UNIT_ERR_MAX; i++) {
		const char *t = unit_strerror(i);

		cr_assert_not_null(t);
		cr_expect_gt(strlen(t), 0);
		cr_expect_str_neq(t, "unknown error", "error %d has no text", i);
		for (int j = 0; j < i; j++)
			cr_expect_str_neq(t, unit_strerror(j), "%d and %d", i, j);
	}
}

Test(strerror, texts)
{
	cr_expect_str_eq(unit_strerror(UNIT_BAD_UNIT), "unknown unit");
	cr_expect_str_eq(unit_strerror(UNIT_TRAILING), "trailing characters");
	cr_expect_str_eq(unit_strerror(UNIT_OVERFLOW), "value too large");
	cr_expect_str_eq(unit_strerror(UNIT_NOT_FINITE), "not a finite number");
	cr_expect_str_eq(unit_strerror(UNIT_HEX_FLOAT),
			 "hex numbers are not accepted");
	cr_expect_str_eq(unit_strerror(UNIT_ERR_MAX), "unknown error");
	cr_expect_str_eq(unit_strerror((enum unit_err)-1), "unknown error");
}
