// SPDX-License-Identifier: GPL-2.0
/*
 * tc-compatible units (shared/docs/tc-units.md).
 *
 * tc parses with strtod() and multiplies in double, which rounds large
 * values (800gbit, 1tibps are fine, but e.g. 18446744073709551615bps is
 * not), follows the locale's decimal point and lets inf, nan and hex
 * floats through. We parse the decimal text ourselves and compute
 * floor(value * scale) exactly in integers instead, so every result is
 * what exact arithmetic followed by tc's truncation gives.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "common/units.h"

typedef unsigned __int128 u128;

/* A unit multiplies the number by num/den to get the stored value. Only
 * rates in bits need den 8; everything else is a whole multiplier. */
struct unit {
	const char *name;
	__u64 num;
	__u64 den;
};

#define KI	1024ULL
#define MI	(KI * KI)
#define GI	(MI * KI)
#define TI	(GI * KI)

/* bytes per second */
static const struct unit rate_units[] = {
	{ "",		1,		8 },	/* bare number: bits/s */
	{ "bit",	1,		8 },
	{ "kbit",	1000ULL / 8,	1 },
	{ "mbit",	1000000ULL / 8,	1 },
	{ "gbit",	1000000000ULL / 8, 1 },
	{ "tbit",	1000000000000ULL / 8, 1 },
	{ "kibit",	KI / 8,		1 },
	{ "mibit",	MI / 8,		1 },
	{ "gibit",	GI / 8,		1 },
	{ "tibit",	TI / 8,		1 },
	{ "bps",	1,		1 },	/* bytes, not bits */
	{ "kbps",	1000ULL,	1 },
	{ "mbps",	1000000ULL,	1 },
	{ "gbps",	1000000000ULL,	1 },
	{ "tbps",	1000000000000ULL, 1 },
	{ "kibps",	KI,		1 },
	{ "mibps",	MI,		1 },
	{ "gibps",	GI,		1 },
	{ "tibps",	TI,		1 },
	{ NULL, 0, 0 }
};

/* bytes; tc's size units stop at g, there is no t */
static const struct unit size_units[] = {
	{ "",		1,		1 },
	{ "b",		1,		1 },
	{ "k",		KI,		1 },
	{ "kb",		KI,		1 },
	{ "m",		MI,		1 },
	{ "mb",		MI,		1 },
	{ "g",		GI,		1 },
	{ "gb",		GI,		1 },
	{ "kbit",	KI / 8,		1 },
	{ "mbit",	MI / 8,		1 },
	{ "gbit",	GI / 8,		1 },
	{ NULL, 0, 0 }
};

/* nanoseconds; a bare number is microseconds like tc's get_time() */
static const struct unit time_units[] = {
	{ "",		1000,		1 },
	{ "s",		1000000000ULL,	1 },
	{ "sec",	1000000000ULL,	1 },
	{ "secs",	1000000000ULL,	1 },
	{ "ms",		1000000ULL,	1 },
	{ "msec",	1000000ULL,	1 },
	{ "msecs",	1000000ULL,	1 },
	{ "us",		1000,		1 },
	{ "usec",	1000,		1 },
	{ "usecs",	1000,		1 },
	{ "ns",		1,		1 },
	{ "nsec",	1,		1 },
	{ "nsecs",	1,		1 },
	{ NULL, 0, 0 }
};

static const char *const unit_errors[UNIT_ERR_MAX] = {
	[UNIT_OK]	 = "success",
	[UNIT_EMPTY]	 = "empty value",
	[UNIT_NO_NUMBER] = "expected a number",
	[UNIT_NEGATIVE]	 = "negative value",
	[UNIT_NOT_FINITE] = "not a finite number",
	[UNIT_HEX_FLOAT] = "hex numbers are not accepted",
	[UNIT_BAD_UNIT]	 = "unknown unit",
	[UNIT_TRAILING]	 = "trailing characters",
	[UNIT_OVERFLOW]	 = "value too large",
	[UNIT_ZERO_RATE] = "rate is below 1 byte/s (8bit)",
};

const char *unit_strerror(enum unit_err err)
{
	if ((unsigned int)err >= UNIT_ERR_MAX || !unit_errors[err])
		return "unknown error";
	return unit_errors[err];
}

/* Locale-independent on purpose: isdigit()/isalpha() follow LC_CTYPE. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f';
}

/*
 * A decimal as written: the digits before and after the point and the
 * exponent. Digit k of the whole digit string has the place value
 * 10^(point - 1 - k), where point = nint + exp.
 */
struct decimal {
	const char *intd;
	size_t nint;
	const char *frac;
	size_t nfrac;
	long long point;
};

/* Any nonzero mantissa overflows long before 10^EXP_CLAMP, and any
 * fraction is gone long before 10^-EXP_CLAMP; clamping keeps the
 * exponent arithmetic and the loops below bounded. */
#define EXP_CLAMP	100000

/* Digit k of the digit string, 0 outside it (the zeros the exponent
 * shifts in). */
static unsigned int dec_digit(const struct decimal *d, long long k)
{
	if (k < 0)
		return 0;
	if ((unsigned long long)k < d->nint)
		return d->intd[k] - '0';
	k -= d->nint;
	if ((unsigned long long)k < d->nfrac)
		return d->frac[k] - '0';
	return 0;
}

static bool dec_is_zero(const struct decimal *d)
{
	long long k, n = d->nint + d->nfrac;

	for (k = 0; k < n; k++)
		if (dec_digit(d, k))
			return false;
	return true;
}

static size_t scan_digits(const char *s)
{
	size_t n = 0;

	while (is_digit(s[n]))
		n++;
	return n;
}

/* Optional exponent: e or E, an optional sign, at least one digit. An
 * "e" without digits is left alone, so it ends up as (unknown) unit,
 * the way strtod() leaves it. Returns the characters consumed. */
static size_t scan_exponent(const char *s, long long *exp)
{
	size_t i = 1;
	bool neg = false;
	long long e = 0;

	*exp = 0;
	if (s[0] != 'e' && s[0] != 'E')
		return 0;
	if (s[i] == '+' || s[i] == '-')
		neg = s[i++] == '-';
	if (!is_digit(s[i]))
		return 0;
	for (; is_digit(s[i]); i++)
		if (e < EXP_CLAMP)
			e = e * 10 + (s[i] - '0');
	*exp = neg ? -e : e;
	return i;
}

/* Refusals strtod() would not make, checked before the digits. */
static enum unit_err check_prefix(const char *s)
{
	if (s[0] == '-')
		return UNIT_NEGATIVE;
	if (!strncasecmp(s, "inf", 3) || !strncasecmp(s, "nan", 3))
		return UNIT_NOT_FINITE;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return UNIT_HEX_FLOAT;
	return UNIT_OK;
}

static enum unit_err check_empty(const char *s)
{
	if (!s)
		return UNIT_EMPTY;
	while (is_blank(*s))
		s++;
	return *s ? UNIT_OK : UNIT_EMPTY;
}

/* [digits][.digits][e[+-]digits] with at least one mantissa digit; no
 * sign and no leading blanks (stricter than strtod). */
static enum unit_err scan_decimal(const char *s, struct decimal *d,
				  const char **end)
{
	enum unit_err err;
	long long exp;

	err = check_empty(s);
	if (!err)
		err = check_prefix(s);
	if (err)
		return err;

	d->intd = s;
	d->nint = scan_digits(s);
	s += d->nint;
	d->frac = s;
	d->nfrac = 0;
	if (*s == '.') {
		d->frac = ++s;
		d->nfrac = scan_digits(s);
		s += d->nfrac;
	}
	if (!d->nint && !d->nfrac)
		return UNIT_NO_NUMBER;
	s += scan_exponent(s, &exp);
	/* nint is bounded by the string length, far below LLONG_MAX */
	d->point = (long long)d->nint + exp;
	*end = s;
	return UNIT_OK;
}

/* The unit is the run of letters after the number; anything after it
 * is trailing garbage ("10mbit/s", "10 mbit"). */
static enum unit_err find_unit(const char *s, const struct unit *table,
			       const struct unit **unit)
{
	size_t n = 0;

	while (is_alpha(s[n]))
		n++;
	for (; table->name; table++) {
		if (strlen(table->name) == n &&
		    !strncasecmp(table->name, s, n)) {
			*unit = table;
			return s[n] ? UNIT_TRAILING : UNIT_OK;
		}
	}
	return UNIT_BAD_UNIT;
}

/* Anything above this overflows for every unit (den <= 8), and
 * LIMIT * num still fits in 128 bits (num < 2^44). */
#define INT_LIMIT	((u128)1 << 68)

/* floor(d * u->num / u->den), exactly. */
static enum unit_err dec_scale(const struct decimal *d, const struct unit *u,
			       __u64 *out)
{
	long long k, n = d->nint + d->nfrac;
	u128 ipart = 0, total;
	__u64 fpart = 0;

	if (dec_is_zero(d)) {
		*out = 0;
		return UNIT_OK;
	}

	/* The integer part, including zeros shifted in by the exponent.
	 * Only leading zeros of the digit string can keep it at 0, so the
	 * loop ends after n + 21 rounds at the latest. */
	for (k = 0; k < d->point; k++) {
		ipart = ipart * 10 + dec_digit(d, k);
		if (ipart > INT_LIMIT)
			return UNIT_OVERFLOW;
	}

	/*
	 * floor(fraction * num), from the last digit towards the point:
	 * floor((a + floor(b)) / 10) == floor((a + b) / 10) for integer a,
	 * so each step stays exact and below num. Zeros between the point
	 * and the first digit (negative exponent) only divide by 10.
	 */
	for (k = n - 1; k >= d->point && k >= 0; k--)
		fpart = (dec_digit(d, k) * u->num + fpart) / 10;
	for (k = d->point; k < 0 && fpart; k++)
		fpart /= 10;

	/* (ipart + frac) * num / den: the fraction's remainder below
	 * fpart is < 1 and cannot reach the next multiple of den. */
	total = (ipart * u->num + fpart) / u->den;
	if (total > (__u64)-1)
		return UNIT_OVERFLOW;
	*out = (__u64)total;
	return UNIT_OK;
}

static enum unit_err parse_unit(const char *s, const struct unit *table,
				__u64 *out)
{
	const struct unit *unit = NULL;
	struct decimal d;
	enum unit_err err;
	const char *end;

	err = scan_decimal(s, &d, &end);
	if (err)
		return err;
	err = find_unit(end, table, &unit);
	if (err)
		return err;
	return dec_scale(&d, unit, out);
}

enum unit_err parse_rate(const char *s, __u64 *Bps)
{
	return parse_unit(s, rate_units, Bps);
}

enum unit_err parse_size(const char *s, __u64 *bytes)
{
	return parse_unit(s, size_units, bytes);
}

enum unit_err parse_time(const char *s, __u64 *ns)
{
	return parse_unit(s, time_units, ns);
}

static int digit_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/*
 * Base 0 means decimal or 0x-hex, never octal: "010" is ten, since a
 * config author writing a leading zero does not mean octal. An invalid
 * base (not 0 or 2..36) is a caller bug and reads as "no number".
 */
enum unit_err parse_uint(const char *s, int base, __u64 max, __u64 *out)
{
	enum unit_err err;
	__u64 v = 0;
	size_t i;
	int dv;

	err = check_empty(s);
	if (err)
		return err;
	if (s[0] == '-')
		return UNIT_NEGATIVE;
	if (base == 0 || base == 16) {
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			s += 2;
			base = 16;
		} else if (base == 0) {
			base = 10;
		}
	}
	if (base < 2 || base > 36 || digit_value(s[0]) >= base)
		return UNIT_NO_NUMBER;

	for (i = 0; (dv = digit_value(s[i])) < base; i++) {
		if ((__u64)dv > max || v > (max - dv) / base)
			return UNIT_OVERFLOW;
		v = v * base + dv;
	}
	if (s[i]) {
		/* "0x10" in base 10 deserves a clearer word than trailing */
		if (base == 10 && i == 1 && s[0] == '0' &&
		    (s[1] == 'x' || s[1] == 'X'))
			return UNIT_HEX_FLOAT;
		return UNIT_TRAILING;
	}
	*out = v;
	return UNIT_OK;
}

/*
 * Rates as tc's print_rate(): in bits/s, divide by 1000 while the value
 * is at least 1000 and either divides exactly or is still at least 1e6.
 * Bytes * 8 can exceed 64 bits, hence 128-bit arithmetic; the printed
 * value is always below 2^64 (below 1e6, or at most 2^67 / 1e12).
 */
char *sprint_rate(__u64 Bps, char *buf, size_t len)
{
	static const char *const prefix[] = { "", "K", "M", "G", "T" };
	u128 bits = (u128)Bps * 8;
	size_t i;

	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]) - 1; i++) {
		if (bits < 1000)
			break;
		if (bits % 1000 && bits < 1000000)
			break;
		bits /= 1000;
	}
	snprintf(buf, len, "%llu%sbit", (unsigned long long)bits, prefix[i]);
	return buf;
}

struct size_fmt {
	__u64 unit;
	__u64 slack;	/* how close to a whole multiple is close enough */
	const char *suffix;
};

/*
 * Sizes as tc's sprint_size(): the nearest whole Gb/Mb when within 1024
 * bytes of it, Kb when within 16, else exact bytes. tc computes this in
 * double and prints with %g (1e+06Gb beyond a petabyte); we compute it
 * in integers and print the integer, identical below 10^6 units. Near
 * 2^64 we do not round up to a value that would not parse back.
 */
char *sprint_size(__u64 bytes, char *buf, size_t len)
{
	static const struct size_fmt fmt[] = {
		{ GI, 1024, "Gb" },
		{ MI, 1024, "Mb" },
		{ KI, 16, "Kb" },
	};
	size_t i;

	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		__u64 r = bytes % fmt[i].unit, q = bytes / fmt[i].unit;

		if (bytes < fmt[i].unit)
			continue;
		if (r >= fmt[i].slack) {
			/* rounding up must not print what parses as overflow */
			if (fmt[i].unit - r >= fmt[i].slack ||
			    q + 1 > (__u64)-1 / fmt[i].unit)
				continue;
			q++;
		}
		snprintf(buf, len, "%llu%s", (unsigned long long)q,
			 fmt[i].suffix);
		return buf;
	}
	snprintf(buf, len, "%llub", (unsigned long long)bytes);
	return buf;
}

/*
 * Times as tc's print_time64(): "%.3gs" from 1 s, "%.3gms" from 1 ms,
 * "%.3gus" from 1 us (which is tc's "Nus" for whole microseconds), and
 * below 1 us the exact "Nns", so sub-microsecond values the ns units can
 * express are not printed as 0. Zero prints "0us" (a bare number is us).
 * One deliberate difference: where %.3g rounds up to 1000 (999.9 ms), tc
 * prints "1e+03ms"; we print the next unit, "1s".
 */
char *sprint_time(__u64 ns, char *buf, size_t len)
{
	static const struct {
		__u64 unit;
		const char *suffix;
	} fmt[] = {
		{ 1000000000ULL, "s" },
		{ 1000000ULL, "ms" },
		{ 1000ULL, "us" },
	};
	char num[UNIT_BUF];
	size_t i;

	if (ns && ns < 1000) {
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
		return buf;
	}
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		if (ns < fmt[i].unit && i + 1 < sizeof(fmt) / sizeof(fmt[0]))
			continue;
		snprintf(num, sizeof(num), "%.3g", (double)ns / (double)fmt[i].unit);
		if (i > 0 && !strcmp(num, "1e+03"))
			snprintf(buf, len, "1%s", fmt[i - 1].suffix);
		else
			snprintf(buf, len, "%s%s", num, fmt[i].suffix);
		return buf;
	}
	return buf;	/* not reached: the last row takes everything */
}
