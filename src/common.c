// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "common.h"

static void vmsg(const struct ctx *ctx, const char *level, bool json_too,
		 const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s%s\n", ctx && ctx->prog ? ctx->prog : "htbctl",
		level, buf);
	if (json_too && ctx && ctx->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "error", json_object_new_string(buf));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
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
