// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

static void vmsg(const struct ctx *ctx, const char *level, bool json_too,
		 const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s%s\n", ctx && ctx->prog ? ctx->prog : "htbctl",
		level, buf);
	if (json_too && ctx && ctx->json) {
		/* {"error":"..."} on one line of stdout, for scripts */
		struct printer p;

		printer_init(&p, true, stdout);
		p.compact = true;
		print_open_object(&p, NULL);
		print_string(&p, "error", NULL, buf);
		print_close_object(&p);
		printer_finish(&p);
	}
}

void p_err(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(ctx, "", true, fmt, ap);
	va_end(ap);
}

void p_warn(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(ctx, "warning: ", false, fmt, ap);
	va_end(ap);
}

void p_info(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx && ctx->json)
		return;
	va_start(ap, fmt);
	vmsg(ctx, "", false, fmt, ap);
	va_end(ap);
}

int parse_kwargs(const struct ctx *ctx, int argc, char **argv,
		 struct kwarg *kw, int nkw)
{
	for (int i = 0; i < argc; i += 2) {
		int k;

		for (k = 0; k < nkw; k++)
			if (!strcmp(argv[i], kw[k].name))
				break;
		if (k == nkw) {
			p_err(ctx, "unexpected argument '%s'", argv[i]);
			return -1;
		}
		if (i + 1 >= argc) {
			p_err(ctx, "'%s' needs a value", argv[i]);
			return -1;
		}
		if (*kw[k].value) {
			p_err(ctx, "'%s' given twice", argv[i]);
			return -1;
		}
		*kw[k].value = argv[i + 1];
	}
	for (int k = 0; k < nkw; k++) {
		if (kw[k].required && !*kw[k].value) {
			p_err(ctx, "missing '%s'", kw[k].name);
			return -1;
		}
	}
	return 0;
}
