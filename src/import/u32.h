/* SPDX-License-Identifier: GPL-2.0 */
/* u32 filters: hash tables, links and keys resolved into rules (u32.c). */
#ifndef HTBCTL_IMPORT_U32_H
#define HTBCTL_IMPORT_U32_H

#include <linux/netlink.h>
#include <linux/types.h>
#include "import/tree.h"

/* u32's nodes are kept until every one is read: links point anywhere. */
struct u32_graph;
struct u32_graph *u32_graph_new(void);
int u32_graph_add(struct u32_graph *g, __u32 attach, __u32 pref, __u16 proto,
		  const struct nlmsghdr *nlh);
void u32_graph_resolve(struct u32_graph *g, struct imp_tree *t);
void u32_graph_free(struct u32_graph *g);

#endif
