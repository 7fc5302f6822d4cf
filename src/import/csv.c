// SPDX-License-Identifier: GPL-2.0
/* The CSV reader (import/csv.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/csv.h"

void csv_init(struct csv *c, const char *text, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->text = text;
	c->len = len;
	c->line = 1;
	c->max_fields = CSV_MAX_FIELDS;
	/* Excel's "CSV UTF-8" starts with a byte order mark */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		c->pos = 3;
}

void csv_free(struct csv *c)
{
	free(c->buf);
	free(c->off);
	free(c->field);
	c->buf = NULL;
	c->off = NULL;
	c->field = NULL;
}

static int fail(struct csv *c, unsigned line, const char *why)
{
	snprintf(c->err, sizeof(c->err), "%s", why);
	c->err_line = line;
	return -1;
}

static int put_bytes(struct csv *c, const char *s, size_t n)
{
	if (!n)
		return 0;
	if (c->buflen + n > c->bufcap) {
		size_t cap = c->bufcap ? c->bufcap : 256;
		char *b;

		while (cap < c->buflen + n)
			cap *= 2;
		b = realloc(c->buf, cap);
		if (!b)
			return fail(c, c->line, "out of memory");
		c->buf = b;
		c->bufcap = cap;
	}
	memcpy(c->buf + c->buflen, s, n);
	c->buflen += n;
	return 0;
}

static int put_byte(struct csv *c, char ch)
{
	if (c->buflen < c->bufcap) {
		c->buf[c->buflen++] = ch;
		return 0;
	}
	return put_bytes(c, &ch, 1);
}

static int start_field(struct csv *c)
{
	if (c->nfield == c->max_fields) {
		char why[96];

		snprintf(why, sizeof(why), "more than %u fields (a field with commas needs double quotes)",
			 c->max_fields);
		return fail(c, c->rec_line, why);
	}
	if (c->nfield == c->offcap) {
		unsigned cap = c->offcap ? c->offcap * 2 : 16;
		size_t *o = realloc(c->off, cap * sizeof(*o));
		char **f = realloc(c->field, cap * sizeof(*f));

		if (o)
			c->off = o;
		if (f)
			c->field = f;
		if (!o || !f)
			return fail(c, c->line, "out of memory");
		c->offcap = cap;
	}
	c->off[c->nfield++] = c->buflen;
	return 0;
}

static bool at_eol(const struct csv *c)
{
	return c->pos >= c->len || c->text[c->pos] == '\n' ||
	       (c->text[c->pos] == '\r' && c->pos + 1 < c->len && c->text[c->pos + 1] == '\n') ||
	       (c->text[c->pos] == '\r' && c->pos + 1 == c->len);
}

static void skip_eol(struct csv *c)
{
	if (c->pos < c->len && c->text[c->pos] == '\r')
		c->pos++;
	if (c->pos < c->len && c->text[c->pos] == '\n') {
		c->pos++;
		c->line++;
	}
}

/* Blank lines and comment lines are not records. */
static void skip_non_records(struct csv *c)
{
	while (c->pos < c->len) {
		size_t line_start = c->pos;

		while (c->pos < c->len && (c->text[c->pos] == ' ' || c->text[c->pos] == '\t'))
			c->pos++;
		if (c->pos < c->len && c->text[c->pos] == '#') {
			while (!at_eol(c))
				c->pos++;
		} else if (!at_eol(c)) {
			/* a record: its blanks are its first field's */
			c->pos = line_start;
			return;
		} else if (c->pos >= c->len) {
			return;
		}
		skip_eol(c);
	}
}

/* A quoted field, from its opening quote to the character after its
 * closing one. */
static int read_quoted(struct csv *c)
{
	unsigned opened = c->line;

	c->pos++;
	for (;;) {
		char ch;

		if (c->pos >= c->len) {
			char why[96];

			snprintf(why, sizeof(why), "the quoted field opened on line %u has no closing quote", opened);
			return fail(c, opened, why);
		}
		ch = c->text[c->pos++];
		if (ch == '"') {
			if (c->pos < c->len && c->text[c->pos] == '"') {
				c->pos++;
			} else {
				break;
			}
		} else if (ch == '\n') {
			c->line++;
		} else if (ch == '\0') {
			return fail(c, c->line, "a NUL byte in a field");
		}
		if (put_byte(c, ch))
			return -1;
	}
	/* blanks may follow the closing quote; anything else is ambiguous */
	while (c->pos < c->len && (c->text[c->pos] == ' ' || c->text[c->pos] == '\t'))
		c->pos++;
	if (!at_eol(c) && c->text[c->pos] != ',')
		return fail(c, c->line, "text after a field's closing quote (a quote inside a quoted field is written \"\")");
	return 0;
}

/* An unquoted field: the span up to a comma or the line's end, copied at
 * once (byte by byte, the reader was a fifth of a 100,000-circuit
 * import). A '\r' not before '\n' or the end is the field's. */
static int read_plain(struct csv *c)
{
	const char *t = c->text;
	size_t e = c->pos;

	for (;;) {
		while (e < c->len && t[e] != ',' && t[e] != '\n' && t[e] != '\r' && t[e] != '\0')
			e++;
		if (e < c->len && t[e] == '\r' && e + 1 < c->len && t[e + 1] != '\n') {
			e++;
			continue;
		}
		break;
	}
	if (e < c->len && t[e] == '\0')
		return fail(c, c->line, "a NUL byte in a field");
	if (put_bytes(c, t + c->pos, e - c->pos))
		return -1;
	c->pos = e;
	return 0;
}

static int read_field(struct csv *c)
{
	size_t p = c->pos;

	if (start_field(c))
		return -1;
	/* a hand-edited file has `a, "b, c"`: the quote after blanks still opens */
	while (p < c->len && (c->text[p] == ' ' || c->text[p] == '\t'))
		p++;
	if (p < c->len && c->text[p] == '"') {
		c->pos = p;
		if (read_quoted(c))
			return -1;
	} else if (read_plain(c)) {
		return -1;
	}
	return put_byte(c, '\0');
}

int csv_next(struct csv *c)
{
	c->nfield = 0;
	c->buflen = 0;
	skip_non_records(c);
	if (c->pos >= c->len)
		return 0;
	c->rec_line = c->line;
	for (;;) {
		if (read_field(c))
			return -1;
		if (at_eol(c))
			break;
		c->pos++;	/* the comma */
	}
	skip_eol(c);
	for (unsigned i = 0; i < c->nfield; i++)
		c->field[i] = c->buf + c->off[i];
	return 1;
}
