// SPDX-License-Identifier: GPL-2.0
/* htbctl daemon dev IFACE config FILE [libreqos CSV JSON [--upload-dev IFACE]
 * [--root-mbps DOWN/UP]] [--no-qdisc] [--metrics ADDR:PORT
 * [--metrics-classes inner|all|top:N]]: argument parsing; the work is
 * daemon/daemon.c (and daemon/metrics_server.c, daemon/feed.c). */
#include <string.h>

#include "cli/commands.h"
#include "daemon/daemon.h"
#include "daemon/feed.h"
#include "loader/loader.h"

/* "libreqos CSV JSON" and import libreqos's options, stripped from argv. */
static int take_feed(const struct ctx *ctx, int *argc, char **argv, struct feed_opts *fo)
{
	const char *keep_ids;
	bool given;
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		/* a file named libreqos is config's value, not the word */
		bool value = i && (!strcmp(argv[i - 1], "config") || !strcmp(argv[i - 1], "dev"));

		if (value || strcmp(argv[i], "libreqos")) {
			argv[n++] = argv[i];
			continue;
		}
		if (i + 2 >= *argc || fo->file[FEED_CSV]) {
			p_err(ctx, fo->file[FEED_CSV] ? "libreqos given twice"
			      : "libreqos needs ShapedDevices.csv and network.json");
			return -1;
		}
		fo->file[FEED_CSV] = argv[++i];
		fo->file[FEED_JSON] = argv[++i];
	}
	*argc = n;
	if (libreqos_take_opts(ctx, argc, argv, &fo->tmpl, &keep_ids, &given))
		return -1;
	if (keep_ids) {
		p_err(ctx, "--keep-ids: the daemon keeps the class ids of its config FILE, "
		      "which it writes");
		return -1;
	}
	if (given && !fo->file[FEED_CSV]) {
		p_err(ctx, "--upload-dev, --root-mbps, --generated-pn, --generated-pn-mbps and --strict are options of libreqos CSV JSON");
		return -1;
	}
	return 0;
}

int do_daemon(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct daemon_metrics_opts mo = { .opts.interval_ns = METRICS_DEFAULT_INTERVAL_NS };
	struct feed_opts fo = { 0 };
	struct kwarg kw[] = {
		{ "dev", &o.ifname, true },
		{ "config", &o.config, true },
	};
	const char *classes = NULL;
	int n = 0;

	if (take_feed(ctx, &argc, argv, &fo))
		return EXIT_USAGE;
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
	/* each later read checks it again (daemon/daemon.c) */
	if (file_trusted(ctx, "config", o.config))
		return EXIT_FAIL;
	return daemon_run(ctx, &o, &mo, &fo);
}
