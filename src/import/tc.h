/* SPDX-License-Identifier: GPL-2.0 */
/* A script line as tc -batch reads it (tc.c): words, object, verb,
 * what htbctl refuses to run. */
#ifndef HTBCTL_IMPORT_TC_H
#define HTBCTL_IMPORT_TC_H

#include <stdbool.h>
#include <stddef.h>

#define TC_MAX_WORDS 511		/* tc's makeargs exits past this */

enum tc_object { TC_NONE, TC_QDISC, TC_CLASS, TC_FILTER, TC_CHAIN, TC_ACTIONS, TC_MONITOR,
		 TC_EXEC, TC_HELP };

struct tc_line {
	char *w[TC_MAX_WORDS];
	int n;
	int obj;			/* the object's word: tc's command starts there */
	enum tc_object kind;		/* TC_NONE: not a tc command */
	bool del;			/* its verb deletes (delete, flush) */
};

bool tc_matches(const char *word, const char *name);
int tc_split(char *line, struct tc_line *l, const char **why);
void tc_classify(struct tc_line *l);
const char *tc_refusal(const struct tc_line *l);
size_t tc_join(const struct tc_line *l, char *out, size_t len);
const char *tc_next_dev(const struct tc_line *l, int *from);

#endif
