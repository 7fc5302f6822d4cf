/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htbctl import: a kernel HTB setup (qdisc, classes, leaf qdiscs, filters)
 * read over netlink (import/read.c), its filters decoded into htbctl's
 * one-field matches (import/filter.c, import/u32.c), and written as an
 * htbctl config with what could not be converted as comments
 * (import/write.c). docs/import.md says what converts and what does not.
 */
#ifndef HTBCTL_IMPORT_H
#define HTBCTL_IMPORT_H

#include <stdio.h>

#include "common/common.h"
#include "import/tree.h"

/* Reads the HTB tree on dev (root HTB qdisc) into t. 0, or -1 with one
 * line printed. */
int import_read(const struct ctx *ctx, const char *dev, struct imp_tree *t);
/* Filters turned into each leaf's matches (precedence checked), then the
 * config. Returns how many classes were written (0: nothing converted). */
int import_write(const struct ctx *ctx, struct imp_tree *t, const char *source, FILE *out);

/* import script: a scratch network namespace with the script's devices,
 * the script applied with tc -batch. 0, or -1 with one line printed
 * (FILE:LINE for a line tc refused). *dev gets the device to import. */
int import_script_apply(const struct ctx *ctx, const char *file, const char *want_dev,
			char *dev, size_t devlen);

#endif
