// SPDX-License-Identifier: GPL-2.0
/* htbctl import dev IFACE | script FILE [dev NAME] [-o FILE]: arguments,
 * the source read, the config written (import_*.c do the work). */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "import/import.h"

struct import_job {
	struct imp_tree *t;
	const char *source;
	int nclasses;
};

static int fill_config(const struct ctx *ctx, FILE *f, void *arg)
{
	struct import_job *j = arg;

	j->nclasses = import_write(ctx, j->t, j->source, f);
	return j->nclasses ? 0 : -1;
}

/* Strips "-o FILE" out of argv. */
static int take_output(const struct ctx *ctx, int *argc, char **argv, const char **file)
{
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "-o")) {
			argv[n++] = argv[i];
			continue;
		}
		if (i + 1 >= *argc) {
			p_err(ctx, "-o needs a file");
			return -1;
		}
		*file = argv[++i];
	}
	*argc = n;
	return 0;
}

int do_import(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *script = NULL, *file = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, false },
		{ "script", &script, false },
	};
	struct imp_tree t;
	struct import_job j = { .t = &t };
	char scratch_dev[32], source[4200];
	int rc;

	if (take_output(ctx, &argc, argv, &file) || parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (!dev && !script) {
		p_err(ctx, "import needs dev IFACE or script FILE");
		return EXIT_USAGE;
	}
	if (script) {
		if (import_script_apply(ctx, script, dev, scratch_dev, sizeof(scratch_dev)))
			return EXIT_FAIL;
		dev = scratch_dev;
		snprintf(source, sizeof(source), "the tc script %s (device %s)", script, dev);
	} else {
		snprintf(source, sizeof(source), "the live HTB tree on %s", dev);
	}
	if (import_read(ctx, dev, &t)) {
		import_free(&t);
		return EXIT_FAIL;
	}
	j.source = source;
	if (file)
		rc = write_file_atomic(ctx, file, fill_config, &j);
	else
		rc = fill_config(ctx, stdout, &j) || fflush(stdout) || ferror(stdout);
	import_free(&t);
	return rc ? EXIT_FAIL : EXIT_OK;
}
