// SPDX-License-Identifier: GPL-2.0
/* The JSON reader (import/json.h): recursive descent over the text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/json.h"

struct jp {
	const char *s;
	size_t len, pos;
	unsigned line;
	char *err;
	size_t errlen;
	unsigned *err_line;
	bool failed;
};

static int jfail(struct jp *p, const char *why)
{
	if (!p->failed) {
		snprintf(p->err, p->errlen, "%s", why);
		*p->err_line = p->line;
		p->failed = true;
	}
	return -1;
}

static void skip_ws(struct jp *p)
{
	while (p->pos < p->len) {
		char ch = p->s[p->pos];

		if (ch == '\n')
			p->line++;
		else if (ch != ' ' && ch != '\t' && ch != '\r')
			return;
		p->pos++;
	}
}

/* A growing byte string. */
struct sbuf {
	char *b;
	size_t n, cap;
};

static int sb_put(struct jp *p, struct sbuf *sb, const char *bytes, size_t n)
{
	if (sb->n + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 32;
		char *b;

		while (cap < sb->n + n + 1)
			cap *= 2;
		b = realloc(sb->b, cap);
		if (!b)
			return jfail(p, "out of memory");
		sb->b = b;
		sb->cap = cap;
	}
	memcpy(sb->b + sb->n, bytes, n);
	sb->n += n;
	sb->b[sb->n] = '\0';
	return 0;
}

static int hex4(struct jp *p, unsigned *out)
{
	unsigned v = 0;

	if (p->pos + 4 > p->len)
		return jfail(p, "\\u needs four hex digits");
	for (int i = 0; i < 4; i++) {
		char ch = p->s[p->pos++];

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v |= ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			v |= ch - 'A' + 10;
		else
			return jfail(p, "\\u needs four hex digits");
	}
	*out = v;
	return 0;
}

static int put_utf8(struct jp *p, struct sbuf *sb, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return sb_put(p, sb, u, n);
}

/* \uXXXX, a surrogate pair as one character */
static int unicode_escape(struct jp *p, struct sbuf *sb)
{
	unsigned cp, lo;

	if (hex4(p, &cp))
		return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return jfail(p, "a lone low surrogate in \\u");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (p->pos + 2 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
			return jfail(p, "a high surrogate in \\u without its low one");
		p->pos += 2;
		if (hex4(p, &lo))
			return -1;
		if (lo < 0xdc00 || lo > 0xdfff)
			return jfail(p, "a high surrogate in \\u without its low one");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (!cp)
		return jfail(p, "\\u0000 (a NUL character) in a string");
	return put_utf8(p, sb, cp);
}

static int escape(struct jp *p, struct sbuf *sb)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	char ch;

	if (p->pos >= p->len)
		return jfail(p, "a string without its closing quote");
	ch = p->s[p->pos++];
	if (ch == 'u')
		return unicode_escape(p, sb);
	e = strchr(from, ch);
	if (!e || !ch)
		return jfail(p, "an unknown escape in a string");
	return sb_put(p, sb, &to[e - from], 1);
}

static int parse_string(struct jp *p, char **out)
{
	struct sbuf sb = { 0 };

	p->pos++;	/* the opening quote */
	if (sb_put(p, &sb, "", 0))
		return -1;
	for (;;) {
		size_t run = p->pos;
		unsigned char ch;

		while (run < p->len && p->s[run] != '"' && p->s[run] != '\\' &&
		       (unsigned char)p->s[run] >= 0x20)
			run++;
		if (sb_put(p, &sb, p->s + p->pos, run - p->pos))
			goto fail;
		p->pos = run;
		if (p->pos >= p->len) {
			jfail(p, "a string without its closing quote");
			goto fail;
		}
		ch = (unsigned char)p->s[p->pos++];
		if (ch == '"')
			break;
		if (ch < 0x20) {
			jfail(p, ch == '\n' ? "a string without its closing quote on its line" :
				 "a control character in a string (write it as \\uXXXX)");
			goto fail;
		}
		if (escape(p, &sb))
			goto fail;
	}
	*out = sb.b;
	return 0;
fail:
	free(sb.b);
	return -1;
}

static bool digit(const struct jp *p, size_t i)
{
	return i < p->len && p->s[i] >= '0' && p->s[i] <= '9';
}

static int parse_number(struct jp *p, struct json_value *v)
{
	size_t i = p->pos;

	if (i < p->len && p->s[i] == '-')
		i++;
	if (!digit(p, i))
		return jfail(p, "not a JSON value (a number, string, object, array, true, false or null)");
	if (p->s[i] == '0')
		i++;
	else
		while (digit(p, i))
			i++;
	if (i < p->len && p->s[i] == '.') {
		if (!digit(p, ++i))
			return jfail(p, "a number with no digit after its '.'");
		while (digit(p, i))
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (!digit(p, i))
			return jfail(p, "a number with no digit in its exponent");
		while (digit(p, i))
			i++;
	}
	v->type = JSON_NUMBER;
	v->str = strndup(p->s + p->pos, i - p->pos);
	if (!v->str)
		return jfail(p, "out of memory");
	p->pos = i;
	return 0;
}

static int parse_value(struct jp *p, struct json_value *v, int depth);

/* Room for one more element of n in *arr (cap doubling from 4); the new
 * element zeroed. NULL when out of memory. */
static void *list_grow(void **arr, unsigned n, unsigned *cap, size_t size)
{
	char *el;

	if (n == *cap) {
		unsigned c = *cap ? *cap * 2 : 4;
		void *it = realloc(*arr, c * size);

		if (!it)
			return NULL;
		*arr = it;
		*cap = c;
	}
	el = (char *)*arr + n * size;
	memset(el, 0, size);
	return el;
}

/* After an element of an array or object: 1 for a ',' (another follows),
 * 0 for the closing bracket, -1 (said) for anything else. */
static int list_next(struct jp *p, char close, const char *what)
{
	char why[64];

	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ',') {
		p->pos++;
		return 1;
	}
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	snprintf(why, sizeof(why), "expected ',' or '%c' in %s", close, what);
	return jfail(p, why);
}

/* An empty array or object: its closing bracket right after the opening
 * one (taken). */
static bool list_empty(struct jp *p, char close)
{
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return true;
	}
	return false;
}

static int parse_array(struct jp *p, struct json_value *v, int depth)
{
	int more = 1;

	v->type = JSON_ARRAY;
	if (list_empty(p, ']'))
		return 0;
	/* the formats read have no arrays: an element is checked and counted,
	 * not kept (a 10 MB array cost 381 MB at 52b6d7f) */
	while (more > 0) {
		struct json_value it = { .type = JSON_NULL };
		int rc = parse_value(p, &it, depth + 1);

		json_free(&it);
		if (rc)
			return -1;
		v->n++;
		more = list_next(p, ']', "an array");
	}
	return more;
}

static int parse_member(struct jp *p, struct json_member *m, int depth)
{
	skip_ws(p);
	if (p->pos >= p->len || p->s[p->pos] != '"')
		return jfail(p, "expected a member name in double quotes (or '}' after the last member, without a comma)");
	m->line = p->line;
	if (parse_string(p, &m->key))
		return -1;
	skip_ws(p);
	if (p->pos >= p->len || p->s[p->pos] != ':')
		return jfail(p, "expected ':' after a member name");
	p->pos++;
	return parse_value(p, &m->value, depth + 1);
}

static int parse_object(struct jp *p, struct json_value *v, int depth)
{
	unsigned cap = 0;
	int more = 1;

	v->type = JSON_OBJECT;
	if (list_empty(p, '}'))
		return 0;
	while (more > 0) {
		struct json_member *m = list_grow((void **)&v->members, v->n, &cap, sizeof(*m));

		if (!m)
			return jfail(p, "out of memory");
		v->n++;
		if (parse_member(p, m, depth))
			return -1;
		more = list_next(p, '}', "an object");
	}
	return more;
}

static int parse_word(struct jp *p, struct json_value *v, const char *w, enum json_type t, bool b)
{
	size_t n = strlen(w);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n))
		return jfail(p, "not a JSON value (a number, string, object, array, true, false or null)");
	p->pos += n;
	v->type = t;
	v->b = b;
	return 0;
}

static int parse_value(struct jp *p, struct json_value *v, int depth)
{
	if (depth > JSON_MAX_DEPTH)
		return jfail(p, "nested deeper than 64 levels");
	skip_ws(p);
	v->line = p->line;
	if (p->pos >= p->len)
		return jfail(p, "the text ends where a value should be");
	switch (p->s[p->pos]) {
	case '{':
		return parse_object(p, v, depth);
	case '[':
		return parse_array(p, v, depth);
	case '"':
		v->type = JSON_STRING;
		return parse_string(p, &v->str);
	case 't':
		return parse_word(p, v, "true", JSON_BOOL, true);
	case 'f':
		return parse_word(p, v, "false", JSON_BOOL, false);
	case 'n':
		return parse_word(p, v, "null", JSON_NULL, false);
	default:
		return parse_number(p, v);
	}
}

int json_parse(const char *text, size_t len, struct json_value *v, char *err, size_t errlen,
	       unsigned *err_line)
{
	struct jp p = { .s = text, .len = len, .line = 1, .err = err, .errlen = errlen,
			.err_line = err_line };

	memset(v, 0, sizeof(*v));
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		p.pos = 3;
	if (memchr(text, '\0', len)) {
		/* the line of the NUL, for the message */
		for (const char *q = text; *q; q++)
			p.line += *q == '\n';
		jfail(&p, "a NUL byte in the text");
		return -1;
	}
	if (parse_value(&p, v, 0))
		goto fail;
	skip_ws(&p);
	if (p.pos < p.len) {
		jfail(&p, "text after the end of the JSON value");
		goto fail;
	}
	return 0;
fail:
	json_free(v);
	return -1;
}

void json_free(struct json_value *v)
{
	for (unsigned i = 0; v->type == JSON_OBJECT && i < v->n; i++) {
		free(v->members[i].key);
		json_free(&v->members[i].value);
	}
	free(v->members);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

const struct json_member *json_get(const struct json_value *o, const char *key)
{
	for (unsigned i = 0; o->type == JSON_OBJECT && i < o->n; i++)
		if (!strcmp(o->members[i].key, key))
			return &o->members[i];
	return NULL;
}

const char *json_type_name(enum json_type t)
{
	static const char *const names[] = { "null", "true or false", "a number", "a string",
					     "an array", "an object" };

	return names[t];
}
