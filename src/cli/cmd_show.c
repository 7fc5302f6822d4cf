// SPDX-License-Identifier: GPL-2.0
/* htbctl show dev IFACE [interval TIME] [class ID] [sort KEY] [n N]: see
 * observe/show.c. */
#include "cli/commands.h"
#include "config/config.h"
#include "observe/show.h"
#include "observe/snapshot.h"
#include "common/units.h"

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
	if (show_filter_parse(ctx, sort, n, &f))
		return EXIT_USAGE;
	return show_dev(ctx, dev, ns, &f);
}
