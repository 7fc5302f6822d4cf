// SPDX-License-Identifier: GPL-2.0
/* htbctl top dev IFACE [interval TIME] [sort KEY] [n N]: argument parsing;
 * the view is observe/top.c. */
#include "cli/commands.h"
#include "observe/top.h"
#include "common/units.h"

int do_top(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *interval = NULL, *sort = NULL, *n = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "interval", &interval, false },
		{ "sort", &sort, false },
		{ "n", &n, false },
	};
	struct top_opts o = { .interval_ns = TOP_DEFAULT_INTERVAL_NS };
	struct show_filter f = { .sort = SORT_RATE };

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
	if (show_filter_parse(ctx, sort, n, &f))
		return EXIT_USAGE;
	o.sort = f.sort;
	o.n = f.n;
	return top_dev(ctx, dev, &o);
}
