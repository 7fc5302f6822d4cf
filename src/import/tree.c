// SPDX-License-Identifier: GPL-2.0
/*
 * import: the tree read from the kernel (import/tree.h): notes, rules and
 * the class index, shared by the reader, the filter decoders and the
 * writer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/tree.h"

void imp_note(struct imp_tree *t, __u32 at, bool warn, const char *fmt, ...)
{
	struct imp_note *n;
	va_list ap;

	if (t->nnotes == t->capnotes) {
		int cap = t->capnotes ? 2 * t->capnotes : 16;
		struct imp_note *v = realloc(t->notes, cap * sizeof(*v));

		if (!v)
			return;		/* a note lost to OOM; the config is still right */
		t->notes = v;
		t->capnotes = cap;
	}
	n = &t->notes[t->nnotes++];
	n->at = at;
	n->warn = warn;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

struct imp_rule *imp_rule_new(struct imp_tree *t)
{
	if (t->nrules == t->caprules) {
		int cap = t->caprules ? 2 * t->caprules : 64;
		struct imp_rule *v = realloc(t->rules, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->rules = v;
		t->caprules = cap;
	}
	memset(&t->rules[t->nrules], 0, sizeof(t->rules[0]));
	return &t->rules[t->nrules++];
}

static int cmp_class(const void *pa, const void *pb)
{
	const struct imp_class *a = pa, *b = pb;

	return a->classid < b->classid ? -1 : a->classid > b->classid;
}

void imp_class_sort(struct imp_tree *t)
{
	qsort(t->cls, t->ncls, sizeof(t->cls[0]), cmp_class);
}

/* t->cls is sorted by class id once the classes are read. */
const struct imp_class *imp_class_find(const struct imp_tree *t, __u32 classid)
{
	struct imp_class key = { .classid = classid };

	return t->ncls ? bsearch(&key, t->cls, t->ncls, sizeof(key), cmp_class) : NULL;
}

void import_free(struct imp_tree *t)
{
	free(t->cls);
	free(t->rules);
	free(t->by_class);
	free(t->notes);
	memset(t, 0, sizeof(*t));
}
