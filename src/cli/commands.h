/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HTBCTL_COMMANDS_H
#define HTBCTL_COMMANDS_H

#include <stdbool.h>
#include "common/common.h"

struct lqos;

/* Each takes the arguments after the command word. Returns an exit code. */
int do_load(const struct ctx *ctx, int argc, char **argv);
int do_reload(const struct ctx *ctx, int argc, char **argv);
int do_unload(const struct ctx *ctx, int argc, char **argv);
int do_show(const struct ctx *ctx, int argc, char **argv);
int do_set(const struct ctx *ctx, int argc, char **argv);
int do_check(const struct ctx *ctx, int argc, char **argv);
int do_daemon(const struct ctx *ctx, int argc, char **argv);
int do_simulate(const struct ctx *ctx, int argc, char **argv);
int do_metrics(const struct ctx *ctx, int argc, char **argv);
int do_top(const struct ctx *ctx, int argc, char **argv);
int do_import(const struct ctx *ctx, int argc, char **argv);


/* import libreqos's options (--upload-dev, --root-mbps, --keep-ids; one
 * table in cmd_import.c, so the daemon's feed takes the same) stripped
 * from argv into q and *keep_ids; *given: any of them. 0, or -1 with one
 * line printed. */
int libreqos_take_opts(const struct ctx *ctx, int *argc, char **argv, struct lqos *q,
		       const char **keep_ids, bool *given);

#endif
