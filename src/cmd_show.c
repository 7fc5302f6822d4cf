// SPDX-License-Identifier: GPL-2.0
/* htbctl show dev IFACE [interval TIME]: see show.c. */
#include "commands.h"
#include "loader.h"
#include "units.h"

#define SHOW_DEFAULT_INTERVAL_NS	(200 * 1000 * 1000ull)

int do_show(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *interval = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "interval", &interval, false },
	};
	__u64 ns = SHOW_DEFAULT_INTERVAL_NS;

	if (parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (interval) {
		enum unit_err e = parse_time(interval, &ns);

		if (e != UNIT_OK) {
			p_err(ctx, "interval '%s': %s", interval, unit_strerror(e));
			return EXIT_USAGE;
		}
		if (ns > 60ull * 1000000000ull) {
			p_err(ctx, "interval '%s': at most 60s", interval);
			return EXIT_USAGE;
		}
	}
	return show_dev(ctx, dev, ns);
}
