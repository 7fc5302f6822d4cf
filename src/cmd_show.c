// SPDX-License-Identifier: GPL-2.0
/* htbctl show dev IFACE [interval TIME] [class ID] [sort KEY] [n N]: see
 * show.c. */
#include <errno.h>
#include <stdlib.h>

#include "commands.h"
#include "config.h"
#include "snapshot.h"
#include "units.h"

#define SHOW_DEFAULT_INTERVAL_NS	(200 * 1000 * 1000ull)

int do_show(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *interval = NULL, *cls = NULL, *sort = NULL, *n = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "interval", &interval, false },
		{ "class", &cls, false },
		{ "sort", &sort, false },
		{ "n", &n, false },
	};
	struct show_filter f = { 0 };
	__u64 ns = SHOW_DEFAULT_INTERVAL_NS;

	if (parse_kwargs(ctx, argc, argv, kw, 5))
		return EXIT_USAGE;
	if (cls && config_parse_classid(cls, &f.classid)) {
		p_err(ctx, "class '%s': not a class id (MAJOR:MINOR in hex, e.g. 1:10)", cls);
		return EXIT_USAGE;
	}
	if (sort && show_sort_parse(sort, &f.sort)) {
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
		f.n = (__u32)v;
	}
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
	return show_dev(ctx, dev, ns, &f);
}
