// SPDX-License-Identifier: GPL-2.0
/*
 * The print layer (common/print.h): text with tc units, or JSON written as it is
 * printed. A stack of open containers (object or array, and whether it
 * has a member yet) is all the state JSON needs: a member writes a comma
 * if its container has one already, then a newline and indentation, then
 * its key inside an object.
 */
#define _GNU_SOURCE		/* the *_unlocked stdio calls */
#include <stdarg.h>
#include <string.h>

#include "common/print.h"
#include "common/units.h"

/* One printer writes a document from one thread: stdio's per-call locking
 * is pure cost at a few million calls. */
#define put_c(c, f)		fputc_unlocked((c), (f))
#define put_n(s, n, f)		fwrite_unlocked((s), 1, (n), (f))
#define put_s(s, f)		fputs_unlocked((s), (f))

void printer_init(struct printer *p, bool json, FILE *out)
{
	memset(p, 0, sizeof(*p));
	p->json = json;
	p->out = out;
}

/* ---- JSON ---- */

size_t utf8_len(const unsigned char *s)
{
	unsigned cp, min;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void print_json_string(FILE *f, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *run = s;

	put_c('"', f);
	while (*s) {
		unsigned char c = *s;
		size_t n = 1;
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0x80 && (n = utf8_len(s))) {
			s += n;
			continue;
		}
		put_n(run, s - run, f);
		switch (c) {
		case '"':  put_s("\\\"", f); break;
		case '\\': put_s("\\\\", f); break;
		case '\b': put_s("\\b", f); break;
		case '\f': put_s("\\f", f); break;
		case '\n': put_s("\\n", f); break;
		case '\r': put_s("\\r", f); break;
		case '\t': put_s("\\t", f); break;
		default:
			if (c < 0x20) {
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 0xf];
				put_n(esc, 6, f);
			} else {
				put_s("\\ufffd", f);	/* not UTF-8 */
			}
		}
		run = ++s;
	}
	put_n(run, s - run, f);
	put_c('"', f);
}

static void put_u64(FILE *f, __u64 v, bool negative)
{
	char buf[21], *e = buf + sizeof(buf), *b = e;

	do {
		*--b = '0' + v % 10;
		v /= 10;
	} while (v);
	if (negative)
		*--b = '-';
	put_n(b, e - b, f);
}

static void newline(struct printer *p, int depth)
{
	static const char spaces[] = "                                ";

	if (p->compact)
		return;
	put_c('\n', p->out);
	put_n(spaces, 2 * depth, p->out);	/* depth <= PRINT_MAX_NEST */
}

/* Starts a member of the current container (a top-level value needs
 * nothing). Returns false when the value is to be left out. */
static bool member(struct printer *p, const char *key)
{
	int d = p->depth;

	if (p->skipped)
		return false;
	if (d == 0)
		return true;
	if (p->has_members[d - 1])
		put_c(',', p->out);
	p->has_members[d - 1] = true;
	newline(p, d);
	if (!p->is_array[d - 1]) {
		print_json_string(p->out, key ? key : "");
		put_s(p->compact ? ":" : ": ", p->out);
	}
	return true;
}

/* After a value: a document at the top level ends with a newline. */
static void end_value(struct printer *p)
{
	if (p->depth == 0)
		put_c('\n', p->out);
}

static void open_container(struct printer *p, const char *key, bool array)
{
	if (!p->json)
		return;
	if (p->skipped || p->depth >= PRINT_MAX_NEST) {
		p->skipped++;
		return;
	}
	member(p, key);
	put_c(array ? '[' : '{', p->out);
	p->is_array[p->depth] = array;
	p->has_members[p->depth] = false;
	p->depth++;
}

/* Closes the innermost container, whichever kind it is. */
static void close_container(struct printer *p)
{
	if (!p->json)
		return;
	if (p->skipped) {
		p->skipped--;
		return;
	}
	if (p->depth == 0)
		return;
	p->depth--;
	if (p->has_members[p->depth])
		newline(p, p->depth);
	put_c(p->is_array[p->depth] ? ']' : '}', p->out);
	end_value(p);
}

void print_open_object(struct printer *p, const char *key) { open_container(p, key, false); }
void print_open_array(struct printer *p, const char *key) { open_container(p, key, true); }
void print_close_object(struct printer *p) { close_container(p); }
void print_close_array(struct printer *p) { close_container(p); }

void printer_finish(struct printer *p)
{
	while (p->json && (p->depth || p->skipped))
		close_container(p);
}

static void json_u64(struct printer *p, const char *key, __u64 v, bool negative)
{
	if (member(p, key)) {
		put_u64(p->out, v, negative);
		end_value(p);
	}
}

/* ---- both forms ---- */

void print_string(struct printer *p, const char *key, const char *fmt, const char *v)
{
	if (p->json) {
		if (!member(p, key))
			return;
		if (v)
			print_json_string(p->out, v);
		else
			put_s("null", p->out);
		end_value(p);
	} else if (fmt) {
		fprintf(p->out, fmt, v);
	}
}

void print_u64(struct printer *p, const char *key, const char *fmt, __u64 v)
{
	if (p->json)
		json_u64(p, key, v, false);
	else if (fmt)
		fprintf(p->out, fmt, (unsigned long long)v);
}

void print_s64(struct printer *p, const char *key, const char *fmt, __s64 v)
{
	if (p->json)
		json_u64(p, key, v < 0 ? 0 - (__u64)v : (__u64)v, v < 0);
	else if (fmt)
		fprintf(p->out, fmt, (long long)v);
}

void print_bool(struct printer *p, const char *key, const char *fmt, bool v)
{
	if (p->json) {
		if (member(p, key)) {
			put_s(v ? "true" : "false", p->out);
			end_value(p);
		}
	} else if (fmt) {
		fprintf(p->out, fmt, v ? "on" : "off");
	}
}

typedef char *(*unit_printer)(__u64, char *, size_t);

static void print_unit(struct printer *p, const char *key, const char *fmt,
		       __u64 v, unit_printer sprint)
{
	char buf[UNIT_BUF];

	if (p->json)
		json_u64(p, key, v, false);
	else if (fmt)
		fprintf(p->out, fmt, sprint(v, buf, sizeof(buf)));
}

void print_rate(struct printer *p, const char *key, const char *fmt, __u64 Bps)
{
	print_unit(p, key, fmt, Bps, sprint_rate);
}

void print_size(struct printer *p, const char *key, const char *fmt, __u64 bytes)
{
	print_unit(p, key, fmt, bytes, sprint_size);
}

void print_time(struct printer *p, const char *key, const char *fmt, __u64 ns)
{
	print_unit(p, key, fmt, ns, sprint_time);
}

void print_class_settings(struct printer *p, const struct print_class_settings *s)
{
	print_u64(p, "prio", " prio %llu", s->prio);
	print_rate(p, "rate", " rate %s", s->rate);
	print_rate(p, "ceil", " ceil %s", s->ceil);
	print_size(p, "burst", " burst %s", s->burst);
	print_size(p, "cburst", " cburst %s", s->cburst);
	print_u64(p, "quantum", " quantum %llu", s->quantum);
	print_time(p, "limit", " limit %s", s->limit_ns);
	if (!s->leaf)
		return;		/* CoDel runs in leaves only */
	print_string(p, "aqm", " aqm %s", s->codel ? "codel" : "off");
	if (s->codel) {
		print_time(p, "target", " target %s", s->target_ns);
		print_time(p, "interval", " interval %s", s->interval_ns);
		print_bool(p, "ecn", " ecn %s", s->ecn);
	}
	print_bool(p, "flows", " flows %s", s->flows);
}

void print_text(struct printer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->json)
		return;
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
}
