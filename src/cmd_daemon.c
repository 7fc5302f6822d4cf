// SPDX-License-Identifier: GPL-2.0
/* htbctl daemon dev IFACE config FILE [--no-qdisc]: argument parsing; the
 * work is daemon.c. */
#include <string.h>

#include "commands.h"
#include "loader.h"

int do_daemon(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct kwarg kw[] = {
		{ "dev", &o.ifname, true },
		{ "config", &o.config, true },
	};
	int n = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--no-qdisc"))
			o.no_qdisc = true;
		else
			argv[n++] = argv[i];
	}
	if (parse_kwargs(ctx, n, argv, kw, 2))
		return EXIT_USAGE;
	return daemon_run(ctx, &o);
}
