/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HTBCTL_COMMON_H
#define HTBCTL_COMMON_H

#include <stdbool.h>
#include "print.h"

/* Exit codes (interface.md). */
#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2

/* Everything a command needs from the command line; no globals. */
struct ctx {
	bool json;
	int verbose;
	const char *prog;	/* name messages start with; main() sets "htbctl" */
};

/* One line on stderr ("htbctl: ..."); in JSON mode also {"error": ...} on
 * stdout so a script reading JSON sees the failure. */
void p_err(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void p_warn(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void p_info(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Keyword arguments of the form "dev IFACE config FILE". Each wanted
 * keyword is given with a pointer to store its value; unknown keywords,
 * missing values and missing required keywords are usage errors.
 */
struct kwarg {
	const char *name;
	const char **value;
	bool required;
};
int parse_kwargs(const struct ctx *ctx, int argc, char **argv,
		 struct kwarg *kw, int nkw);

#endif
