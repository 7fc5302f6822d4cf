// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <string.h>
#include <json-c/json.h>

#include "print.h"
#include "units.h"

void printer_init(struct printer *p, bool json, FILE *out)
{
	memset(p, 0, sizeof(*p));
	p->json = json;
	p->out = out;
}

void printer_finish(struct printer *p)
{
	if (!p->json || !p->stack[0])
		return;
	fprintf(p->out, "%s\n", json_object_to_json_string_ext(p->stack[0],
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
		JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(p->stack[0]);
	p->stack[0] = NULL;
	p->depth = 0;
}

/* Adds v under key to the innermost open container (takes ownership). */
static void add(struct printer *p, const char *key, json_object *v)
{
	json_object *top;

	if (p->depth == 0) {		/* a bare value as the document */
		if (p->stack[0])
			json_object_put(p->stack[0]);
		p->stack[0] = v;
		return;
	}
	top = p->stack[p->depth - 1];
	if (json_object_is_type(top, json_type_array))
		json_object_array_add(top, v);
	else
		json_object_object_add(top, key ? key : "", v);
}

static void open_container(struct printer *p, const char *key, json_object *c)
{
	if (p->depth >= PRINT_MAX_NEST) {
		json_object_put(c);
		return;
	}
	if (p->depth == 0) {
		if (p->stack[0])
			json_object_put(p->stack[0]);
		p->stack[0] = c;	/* the document root, freed by finish */
	} else {
		add(p, key, c);		/* the parent owns it */
		p->stack[p->depth] = c;
	}
	p->depth++;
}

void print_open_object(struct printer *p, const char *key)
{
	if (p->json)
		open_container(p, key, json_object_new_object());
}

void print_open_array(struct printer *p, const char *key)
{
	if (p->json)
		open_container(p, key, json_object_new_array());
}

static void close_container(struct printer *p)
{
	if (p->json && p->depth > 0)
		p->depth--;	/* the root stays in stack[0] until finish */
}

void print_close_object(struct printer *p) { close_container(p); }
void print_close_array(struct printer *p) { close_container(p); }

void print_string(struct printer *p, const char *key, const char *fmt, const char *v)
{
	if (p->json)
		add(p, key, v ? json_object_new_string(v) : NULL);
	else if (fmt)
		fprintf(p->out, fmt, v);
}

void print_u64(struct printer *p, const char *key, const char *fmt, __u64 v)
{
	if (p->json)
		add(p, key, json_object_new_uint64(v));
	else if (fmt)
		fprintf(p->out, fmt, (unsigned long long)v);
}

void print_s64(struct printer *p, const char *key, const char *fmt, __s64 v)
{
	if (p->json)
		add(p, key, json_object_new_int64(v));
	else if (fmt)
		fprintf(p->out, fmt, (long long)v);
}

void print_bool(struct printer *p, const char *key, const char *fmt, bool v)
{
	if (p->json)
		add(p, key, json_object_new_boolean(v));
	else if (fmt)
		fprintf(p->out, fmt, v ? "on" : "off");
}

typedef char *(*unit_printer)(__u64, char *, size_t);

static void print_unit(struct printer *p, const char *key, const char *fmt,
		       __u64 v, unit_printer sprint)
{
	char buf[UNIT_BUF];

	if (p->json)
		add(p, key, json_object_new_uint64(v));
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

void print_text(struct printer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->json)
		return;
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
}
