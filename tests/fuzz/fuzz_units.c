// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the unit parsers and printers (src/common/units.h).
 * Checks the promises common/units.h makes: the output is untouched on error,
 * printed values parse back with the matching parser, and errors have a
 * description.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define POISON 0x5a5a5a5a5a5a5a5aull

typedef enum unit_err (*parser)(const char *, __u64 *);
typedef char *(*printer)(__u64, char *, size_t);

static void one(parser parse, printer sprint, const char *s)
{
	char buf[UNIT_BUF];
	__u64 v = POISON, back = POISON;
	enum unit_err e = parse(s, &v);

	CHECK(e >= UNIT_OK && e < UNIT_ERR_MAX);
	CHECK(unit_strerror(e) && *unit_strerror(e));
	if (e != UNIT_OK) {
		CHECK(v == POISON);
		return;
	}
	sprint(v, buf, sizeof(buf));
	CHECK(strlen(buf) < sizeof(buf));
	CHECK(parse(buf, &back) == UNIT_OK);
}

static void printed(printer sprint, parser parse, __u64 v)
{
	char buf[UNIT_BUF];
	__u64 back;

	sprint(v, buf, sizeof(buf));
	CHECK(parse(buf, &back) == UNIT_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	__u64 v = POISON, max;
	enum unit_err e;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	one(parse_rate, sprint_rate, s);
	one(parse_size, sprint_size, s);
	one(parse_time, sprint_time, s);
	for (int base = 0; base <= 16; base += 2) {
		if (base == 2 || base == 4 || base == 6 || base == 12 || base == 14)
			continue;
		for (int k = 0; k < 2; k++) {
			max = ~0ull;
			if (k && size >= 8)
				memcpy(&max, data, 8);
			v = POISON;
			e = parse_uint(s, base, max, &v);
			CHECK(e >= UNIT_OK && e < UNIT_ERR_MAX);
			CHECK(e == UNIT_OK ? v <= max : v == POISON);
		}
	}
	if (size >= 8) {
		memcpy(&v, data, 8);
		printed(sprint_rate, parse_rate, v);
		printed(sprint_size, parse_size, v);
		printed(sprint_time, parse_time, v);
	}
	free(s);
	return 0;
}
