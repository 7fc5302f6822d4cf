/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HTBCTL_COMMANDS_H
#define HTBCTL_COMMANDS_H

#include "common/common.h"

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

#endif
