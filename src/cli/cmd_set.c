// SPDX-License-Identifier: GPL-2.0
/* htbctl set dev IFACE hysteresis on|off: argument parsing; the work is
 * loader/set.c. */
#include <string.h>

#include "cli/commands.h"
#include "loader/loader.h"

int do_set(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *hyst = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "hysteresis", &hyst, true },
	};

	if (parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (strcmp(hyst, "on") && strcmp(hyst, "off")) {
		p_err(ctx, "hysteresis '%s': expected on or off", hyst);
		return EXIT_USAGE;
	}
	return loader_set_hysteresis(ctx, dev, !strcmp(hyst, "on"));
}
