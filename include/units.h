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

/* Rate in bytes per second, truncated ("1.5mbit" -> 187500). */
enum unit_err parse_rate(const char *s, __u64 *Bps);
/* Size in bytes, truncated ("1.5kb" -> 1536). */
enum unit_err parse_size(const char *s, __u64 *bytes);
/* Time in nanoseconds; a bare number is microseconds as in tc, and the
 * 64-bit units ns/nsec/nsecs are accepted. */
enum unit_err parse_time(const char *s, __u64 *ns);
/* Whole number, base 10, or base 16 with 0x when base is 0; no sign, no
 * blanks, no trailing characters, range-checked against max. */
enum unit_err parse_uint(const char *s, int base, __u64 max, __u64 *out);

/* tc's printing rules; each returns buf. 32 bytes are always enough. */
#define UNIT_BUF 32
char *sprint_rate(__u64 Bps, char *buf, size_t len);
char *sprint_size(__u64 bytes, char *buf, size_t len);
char *sprint_time(__u64 ns, char *buf, size_t len);

#endif
