// SPDX-License-Identifier: GPL-2.0
/* htbctl metrics dev IFACE [interval TIME] [-o FILE] [--metrics-classes
 * inner|all|top:N]: argument parsing and the atomic file; the exposition
 * is observe/metrics.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "observe/metrics.h"
#include "common/units.h"

struct metrics_job {
	const char *ifname;
	const struct metrics_opts *o;
};

/* Strips "-o FILE" and "--metrics-classes X" out of argv; the rest stays
 * for parse_kwargs. 0, or -1 with one line printed. */
static int take_flags(const struct ctx *ctx, int *argc, char **argv, const char **file,
		      struct metrics_opts *o)
{
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		bool out = !strcmp(argv[i], "-o"), cls = !strcmp(argv[i], "--metrics-classes");

		if (!out && !cls) {
			argv[n++] = argv[i];
			continue;
		}
		if (i + 1 >= *argc) {
			p_err(ctx, "%s needs a value", argv[i]);
			return -1;
		}
		if (out)
			*file = argv[++i];
		else if (metrics_parse_classes(ctx, argv[++i], o))
			return -1;
	}
	*argc = n;
	return 0;
}

static int fill_metrics(const struct ctx *ctx, FILE *f, void *arg)
{
	const struct metrics_job *j = arg;

	return metrics_write(ctx, j->ifname, j->o, f);
}

int do_metrics(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *interval = NULL, *file = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "interval", &interval, false },
	};
	struct metrics_opts o = { .interval_ns = METRICS_DEFAULT_INTERVAL_NS };

	if (take_flags(ctx, &argc, argv, &file, &o) || parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (interval) {
		enum unit_err e = parse_time(interval, &o.interval_ns);

		if (e != UNIT_OK || o.interval_ns > 10ull * 1000000000ull) {
			p_err(ctx, "interval '%s': %s", interval,
			      e != UNIT_OK ? unit_strerror(e) : "at most 10s");
			return EXIT_USAGE;
		}
	}
	if (file)
	{
		struct metrics_job j = { dev, &o };

		return write_file_atomic(ctx, file, fill_metrics, &j) ? EXIT_FAIL : EXIT_OK;
	}
	if (metrics_write(ctx, dev, &o, stdout))
		return EXIT_FAIL;
	if (fflush(stdout) || ferror(stdout)) {
		p_err(ctx, "writing the output failed");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
