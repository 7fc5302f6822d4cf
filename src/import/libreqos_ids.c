// SPDX-License-Identifier: GPL-2.0
/*
 * import libreqos --keep-ids FILE: the class ids an earlier import gave
 * its circuits and nodes, read back from the comments it wrote above each
 * [class X] (`# circuit "Name" (ID)`, `# node "Name" ...`). LibreQoS
 * operators rebuild ShapedDevices.csv from their CRM every 30 minutes; ids
 * in file order would shift with every inserted row, and a reload would
 * take every class after it for a new one (fresh tokens, counters at 0).
 * Only the comments are read: anything else in FILE is ignored, and a
 * FILE with none keeps nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "import/libreqos.h"

/* Printable ASCII without a quote or a backslash: the text as it is. */
static bool plain_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* Called for every circuit and node written: the common case without a
 * copy to escape, a name that needs one on the stack (a malloc per call
 * was 2-3% of a 100,000-circuit import). */
const char *lqos_comment_text(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s), o = 0;
	char small[512], *esc;

	if (n < len && plain_text(s, n)) {
		memcpy(buf, s, n + 1);
		return buf;
	}
	esc = 2 * n + 1 <= sizeof(small) ? small : malloc(2 * n + 1);
	if (!esc) {
		snprintf(buf, len, "?");
		return buf;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			esc[o++] = '\\';
		esc[o++] = s[i];
	}
	esc[o] = '\0';
	msg_clip(buf, len, esc);
	if (esc != small)
		free(esc);
	return buf;
}

static bool same_key(const void *arg, __u32 idx, const void *key)
{
	const struct lqos *q = arg;

	return q->prev[idx].key && !strcmp(q->prev[idx].key, key);
}

/* The text inside "..." that starts at p (after the opening quote), as
 * written (escapes kept); *end gets the closing quote, NULL if none. */
static size_t quoted_len(const char *p, const char *eol, const char **end)
{
	const char *s = p;

	for (; s < eol && *s != '"'; s++)
		if (*s == '\\' && s + 1 < eol)
			s++;
	*end = s < eol ? s : NULL;
	return (size_t)(s - p);
}

/* "c" + the id of `# circuit "..." (ID)`, "n" + the name of `# node "..."`
 * into key (malloc'ed); NULL for another line. */
static char *comment_key(const char *line, const char *eol)
{
	static const char circuit[] = "# circuit \"", node[] = "# node \"";
	bool is_node = (size_t)(eol - line) > sizeof(node) - 1 && !memcmp(line, node, sizeof(node) - 1);
	bool is_circ = (size_t)(eol - line) > sizeof(circuit) - 1 &&
		       !memcmp(line, circuit, sizeof(circuit) - 1);
	const char *p, *end, *from;
	size_t n;
	char *key;

	if (!is_node && !is_circ)
		return NULL;
	p = line + (is_node ? sizeof(node) : sizeof(circuit)) - 1;
	n = quoted_len(p, eol, &end);
	if (!end)
		return NULL;
	from = p;
	if (is_circ) {
		/* the id: between `" (` and the line's last `)` */
		if (eol - end < 4 || memcmp(end, "\" (", 3) || eol[-1] != ')')
			return NULL;
		from = end + 3;
		n = (size_t)(eol - 1 - from);
	}
	key = malloc(n + 2);
	if (!key)
		return NULL;
	key[0] = is_node ? 'n' : 'c';
	memcpy(key + 1, from, n);
	key[n + 1] = '\0';
	return key;
}

/* "[class 1:a]" into its id; 0 for anything else. */
static __u32 class_line(const char *line, const char *eol)
{
	char buf[32], *end;
	unsigned long maj, min;

	if ((size_t)(eol - line) >= sizeof(buf) || eol - line < 10 || memcmp(line, "[class ", 7))
		return 0;
	memcpy(buf, line + 7, (size_t)(eol - line - 7));
	buf[eol - line - 7] = '\0';
	maj = strtoul(buf, &end, 16);
	if (*end != ':')
		return 0;
	min = strtoul(end + 1, &end, 16);
	if (strcmp(end, "]") || !maj || maj > 0xffff || !min || min > 0xffff)
		return 0;
	return (__u32)(maj << 16 | min);
}

/* One class of prev: a second class with the same key makes the key
 * useless (its ids stay reserved all the same: lqos_reserve_prev). */
static int add_prev(struct lqos *q, char *key, __u32 classid)
{
	__u32 h = lq_hash(&q->prev_by_key, key, strlen(key));
	long at = lq_map_find(&q->prev_by_key, h, same_key, q, key);

	if (at >= 0) {
		q->prev[at].ambiguous = true;
		free(key);
		key = NULL;
	}
	if (q->nprev == q->prevcap) {
		unsigned cap = q->prevcap ? q->prevcap * 2 : 256;
		struct lq_prev *p = realloc(q->prev, cap * sizeof(*p));

		if (!p)
			goto oom;
		q->prev = p;
		q->prevcap = cap;
	}
	if (key && lq_map_add(&q->prev_by_key, h, q->nprev))
		goto oom;
	/* a duplicate is kept without a key: only its id counts */
	q->prev[q->nprev].key = key;
	q->prev[q->nprev].ambiguous = false;
	q->prev[q->nprev++].classid = classid;
	return 0;
oom:
	free(key);
	snprintf(q->err, sizeof(q->err), "out of memory");
	return -1;
}

int lqos_read_prev(struct lqos *q, const struct lqos_text *t)
{
	const char *p = t->text, *end = t->text + t->len;
	char *pending = NULL;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *next;
		char *key;
		__u32 id;

		eol = eol ? eol : end;
		next = eol < end ? eol + 1 : end;
		if (eol > p && eol[-1] == '\r')
			eol--;
		key = comment_key(p, eol);
		id = key ? 0 : class_line(p, eol);
		if (key) {
			free(pending);
			pending = key;
		} else if (id && pending) {
			if (add_prev(q, pending, id))
				return -1;
			pending = NULL;
		} else if (id || (eol > p && *p != '#')) {
			/* a comment belongs to the [class] right below it */
			free(pending);
			pending = NULL;
		}
		p = next;
	}
	free(pending);
	return 0;
}

__u32 lqos_prev_id(const struct lqos *q, char kind, const char *raw)
{
	char key[LQ_COMMENT_BUF + 1];
	long at;

	if (!q->nprev)
		return 0;
	key[0] = kind;
	lqos_comment_text(raw, key + 1, sizeof(key) - 1);
	at = lq_map_find(&q->prev_by_key, lq_hash(&q->prev_by_key, key, strlen(key)), same_key, q, key);
	return at < 0 || q->prev[at].ambiguous ? 0 : q->prev[at].classid;
}
