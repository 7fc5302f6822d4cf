// SPDX-License-Identifier: GPL-2.0
/* htbctl top dev IFACE [interval TIME] [sort KEY] [n N]: argument parsing;
 * the view is top.c. */
#include <errno.h>
#include <stdlib.h>

#include "commands.h"
#include "top.h"
#include "units.h"

int do_top(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *interval = NULL, *sort = NULL, *n = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "interval", &interval, false },
		{ "sort", &sort, false },
		{ "n", &n, false },
	};
	struct top_opts o = { .interval_ns = TOP_DEFAULT_INTERVAL_NS, .sort = SORT_RATE };

	if (parse_kwargs(ctx, argc, argv, kw, 4))
		return EXIT_USAGE;
	if (interval) {
		enum unit_err e = parse_time(interval, &o.interval_ns);

		if (e != UNIT_OK || o.interval_ns < 100000000ull || o.interval_ns > 60000000000ull) {
			p_err(ctx, "interval '%s': %s", interval,
			      e != UNIT_OK ? unit_strerror(e) : "from 100ms to 60s");
			return EXIT_USAGE;
		}
	}
	if (sort && show_sort_parse(sort, &o.sort)) {
		p_err(ctx, "sort '%s': expected rate, drops, delay or borrowed", sort);
		return EXIT_USAGE;
	}
	if (n) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(n, &end, 10);
		if (*n < '1' || *n > '9' || *end || errno || v > 10000000) {
			p_err(ctx, "n '%s': expected a number of classes from 1", n);
			return EXIT_USAGE;
		}
		o.n = (__u32)v;
	}
	return top_dev(ctx, dev, &o);
}
