// SPDX-License-Identifier: GPL-2.0
/* htbctl daemon dev IFACE config FILE [--no-qdisc] [--metrics ADDR:PORT
 * [--metrics-classes inner|all|top:N]]: argument parsing; the work is
 * daemon/daemon.c (and daemon/metrics_server.c). */
#include <string.h>

#include "cli/commands.h"
#include "daemon/daemon.h"
#include "loader/loader.h"

int do_daemon(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct daemon_metrics_opts mo = { .opts.interval_ns = METRICS_DEFAULT_INTERVAL_NS };
	struct kwarg kw[] = {
		{ "dev", &o.ifname, true },
		{ "config", &o.config, true },
	};
	const char *classes = NULL;
	int n = 0;

	for (int i = 0; i < argc; i++) {
		bool m = !strcmp(argv[i], "--metrics"), c = !strcmp(argv[i], "--metrics-classes");

		if (!strcmp(argv[i], "--no-qdisc")) {
			o.no_qdisc = true;
		} else if ((m || c) && i + 1 >= argc) {
			p_err(ctx, "%s needs a value", argv[i]);
			return EXIT_USAGE;
		} else if (m) {
			if (metrics_addr_parse(ctx, argv[++i], &mo.addr))
				return EXIT_USAGE;
			mo.on = true;
		} else if (c) {
			classes = argv[++i];
			if (metrics_parse_classes(ctx, classes, &mo.opts))
				return EXIT_USAGE;
		} else {
			argv[n++] = argv[i];
		}
	}
	if (classes && !mo.on) {
		p_err(ctx, "--metrics-classes without --metrics: nothing would serve them");
		return EXIT_USAGE;
	}
	if (parse_kwargs(ctx, n, argv, kw, 2))
		return EXIT_USAGE;
	return daemon_run(ctx, &o, &mo);
}
