// SPDX-License-Identifier: GPL-2.0
/* htbctl check config FILE: validate and print the resolved class tree.
 * Reads FILE only; needs no privileges. */
#include <stdio.h>

#include "cli/commands.h"
#include "config/config.h"

int do_check(const struct ctx *ctx, int argc, char **argv)
{
	const char *file = NULL;
	struct kwarg kw[] = { { "config", &file, true } };
	struct htb_config cfg;
	struct printer p;

	if (parse_kwargs(ctx, argc, argv, kw, 1))
		return EXIT_USAGE;
	if (config_load(file, &cfg, stderr)) {
		p_err(ctx, "config %s rejected", file);
		return EXIT_FAIL;
	}
	printer_init(&p, ctx->json, stdout);
	config_print(&cfg, &p);
	printer_finish(&p);
	config_free(&cfg);
	if (fflush(stdout) || ferror(stdout)) {
		p_err(ctx, "writing the output failed");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
