// SPDX-License-Identifier: GPL-2.0
/* htbctl load / reload / unload: argument parsing; the work is loader*.c. */
#include <string.h>

#include "cli/commands.h"
#include "loader/loader.h"

/* Takes the flag out of argv if present. */
static bool take_flag(int *argc, char **argv, const char *flag)
{
	bool found = false;
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (!strcmp(argv[i], flag))
			found = true;
		else
			argv[n++] = argv[i];
	}
	*argc = n;
	return found;
}

/* Anything still starting with "--" is an unknown option. */
static int no_stray_options(const struct ctx *ctx, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--", 2)) {
			p_err(ctx, "unknown option '%s'", argv[i]);
			return -1;
		}
	}
	return 0;
}

int do_load(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct kwarg kw[] = {
		{ "dev", &o.ifname, true },
		{ "config", &o.config, true },
	};

	o.no_qdisc = take_flag(&argc, argv, "--no-qdisc");
	if (no_stray_options(ctx, argc, argv) || parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (file_trusted(ctx, "config", o.config))
		return EXIT_FAIL;
	return loader_load(ctx, &o);
}

int do_reload(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct kwarg kw[] = {
		{ "dev", &o.ifname, true },
		{ "config", &o.config, true },
	};

	if (no_stray_options(ctx, argc, argv) || parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (file_trusted(ctx, "config", o.config))
		return EXIT_FAIL;
	return loader_reload(ctx, &o);
}

int do_unload(const struct ctx *ctx, int argc, char **argv)
{
	struct load_opts o = { 0 };
	struct kwarg kw[] = { { "dev", &o.ifname, true } };

	o.force = take_flag(&argc, argv, "--force");
	if (no_stray_options(ctx, argc, argv) || parse_kwargs(ctx, argc, argv, kw, 1))
		return EXIT_USAGE;
	return loader_unload(ctx, &o);
}
