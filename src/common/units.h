/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tc-compatible units (shared/docs/tc-units.md): parse rates, sizes and
 * times as iproute2 does, stricter where tc is sloppy (inf, nan, hex
 * floats, overflow and trailing garbage are refused), and print them the
 * way tc prints them. Also the project's one strict integer parser.
 */
#ifndef HTBCTL_UNITS_H
#define HTBCTL_UNITS_H

#include <stddef.h>
#include <linux/types.h>

enum unit_err {
	UNIT_OK = 0,
	UNIT_EMPTY,		/* "" or only blanks */
	UNIT_NO_NUMBER,		/* does not start with a number */
	UNIT_NEGATIVE,
	UNIT_NOT_FINITE,	/* inf, nan */
	UNIT_HEX_FLOAT,		/* 0x1p3 and friends */
	UNIT_BAD_UNIT,		/* unknown unit suffix */
	UNIT_TRAILING,		/* garbage after number+unit */
	UNIT_OVERFLOW,		/* does not fit the result type */
	UNIT_ZERO_RATE,		/* reserved for callers: rate truncated to 0 */
	UNIT_ERR_MAX,
};

/* A short English description, e.g. "unknown unit". */
const char *unit_strerror(enum unit_err err);

/*
 * The parsers accept <number><unit> as tc does: a decimal with optional
 * fraction and exponent ("1.5mbit", "1e6bit", ".5ms"), the unit right
 * after it, case-insensitive. No sign, no blanks, no hex, no inf/nan;
 * results are computed exactly and truncated. On error *out is left
 * untouched.
 */

/* Rate in bytes per second, truncated ("1.5mbit" -> 187500). A bare
 * number is bits/s. "7bit" is UNIT_OK with 0: refusing a zero rate
 * (UNIT_ZERO_RATE) is the caller's call. */
enum unit_err parse_rate(const char *s, __u64 *Bps);
/* Size in bytes, truncated ("1.5kb" -> 1536). A bare number is bytes. */
enum unit_err parse_size(const char *s, __u64 *bytes);
/* Time in nanoseconds; a bare number is microseconds as in tc's
 * get_time() (not nanoseconds as in its get_time64()), and the 64-bit
 * units ns/nsec/nsecs are accepted. */
enum unit_err parse_time(const char *s, __u64 *ns);
/* Whole number, base 10, or base 16 with 0x when base is 0 (a leading 0
 * is never octal); no sign, no blanks, no trailing characters,
 * range-checked against max. Base 16 takes an optional 0x; bases 2..36
 * work, any other base gives UNIT_NO_NUMBER. */
enum unit_err parse_uint(const char *s, int base, __u64 max, __u64 *out);

/* tc's printing rules; each returns buf. 32 bytes are always enough.
 * Rates: 20Kbit, 1500Kbit, 1Gbit (truncating above 1e6 bit/s, as tc).
 * Sizes: 64Kb, 1Mb, 1Gb, 1600b. Times: 1.5s, 100ms, 10us, 500ns, 0us.
 * Every printed value parses back with the matching parser. */
#define UNIT_BUF 32
char *sprint_rate(__u64 Bps, char *buf, size_t len);
char *sprint_size(__u64 bytes, char *buf, size_t len);
char *sprint_time(__u64 ns, char *buf, size_t len);

#endif
