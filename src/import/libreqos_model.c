// SPDX-License-Identifier: GPL-2.0
/*
 * import libreqos, what its reading (libreqos.c) and its tree
 * (libreqos_tree.c) share: the messages, the growing arrays, the nodes'
 * array, Mbps as text.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bigmem.h"
#include "import/libreqos.h"

/* ---- messages ------------------------------------------------------- */

/* "FILE:LINE: " (LINE 0: "FILE: ") and the message into buf. */
static void lq_vformat(char *buf, size_t len, const char *file, unsigned line, const char *fmt,
		       va_list ap)
{
	char f[MSG_QUOTE_BUF];
	size_t n;

	msg_clip(f, sizeof(f), file);
	n = line ? (size_t)snprintf(buf, len, "%s:%u: ", f, line) :
		   (size_t)snprintf(buf, len, "%s: ", f);
	vsnprintf(buf + n, len - n, fmt, ap);
}

int lq_err(struct lqos *q, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lq_vformat(q->err, sizeof(q->err), file, line, fmt, ap);
	va_end(ap);
	return -1;
}

/* A warning: the import goes on, and the line is printed with the summary
 * (what was read but is not in the config). 0, or -1 out of memory. */
static int lq_vwarn(struct lqos *q, const char *file, unsigned line, const char *fmt, va_list ap)
{
	char text[1024];

	lq_vformat(text, sizeof(text), file, line, fmt, ap);
	q->warns = lq_grow(q->warns, &q->warncap, q->nwarn, sizeof(*q->warns));
	if (!q->warns || !(q->warns[q->nwarn] = strdup(text)))
		return lq_err(q, file, 0, "out of memory");
	q->nwarn++;
	return 0;
}

int lq_warn(struct lqos *q, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = lq_vwarn(q, file, line, fmt, ap);
	va_end(ap);
	return rc;
}

/* What LibreQoS accepts with a warning: a warning that ends with what
 * happens then (": then"), or with --strict the error it was before
 * htbctl followed LibreQoS there. */
int lq_lenient(struct lqos *q, const char *file, unsigned line, const char *then,
	       const char *fmt, ...)
{
	char text[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (q->strict)
		return lq_err(q, file, line, "%s", text);
	return lq_warn(q, file, line, "%s: %s", text, then);
}

/* ---- growing arrays -------------------------------------------------- */

void *lq_grow(void *arr, unsigned *cap, unsigned n, size_t size)
{
	void *a;
	unsigned c;

	if (n < *cap)
		return arr;
	c = *cap ? *cap * 2 : 64;
	a = big_realloc(arr, c, size);	/* zeroes what it adds */
	if (!a)
		return NULL;
	*cap = c;
	return a;
}

struct lq_node *lq_node_new(struct lqos *q)
{
	struct lq_node *n;

	q->nodes = lq_grow(q->nodes, &q->nodecap, q->nnodes, sizeof(*q->nodes));
	if (!q->nodes)
		return NULL;
	n = &q->nodes[q->nnodes++];
	memset(n, 0, sizeof(*n));
	return n;
}

void lq_sprint_mbps(__u64 bits, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%llu.%06llu", (unsigned long long)(bits / 1000000),
			 (unsigned long long)(bits % 1000000));

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
}
