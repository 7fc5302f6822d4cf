/* SPDX-License-Identifier: GPL-2.0 */
/* Filters decoded into htbctl's one-field matches (filter.c). */
#ifndef HTBCTL_IMPORT_FILTER_H
#define HTBCTL_IMPORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/netlink.h>
#include "import/tree.h"

/* A filter message (RTM_NEWTFILTER) decoded into rules (u32 may give
 * several, or none for its hash tables). */
int imp_filter_decode(struct imp_tree *t, const struct nlmsghdr *nlh);
/* The actions of a filter (an ACT nest, or u32/fw's legacy police): a
 * note, or r->why when they decide the packet's fate. */
/* The kinds of the actions in an ACT nest ("police, mirred"), false if
 * none. */
bool imp_action_kinds(const struct nlattr *act, char *out, size_t len);
void imp_rule_actions(struct imp_tree *t, struct imp_rule *r, const struct nlattr *act,
		      bool legacy_police);

void imp_key_mask(struct imp_key *k);

/* The keys of r as one htbctl match line in r->text, or why not in r->why. */
void imp_rule_express(struct imp_rule *r);

#endif
