/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One print call emits both forms (the iproute2 json_print idea): in text
 * mode the value is formatted for people (tc units), in JSON mode it is
 * added to the current object as a raw integer (bytes/s, bytes, ns).
 */
#ifndef HTBCTL_PRINT_H
#define HTBCTL_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define PRINT_MAX_NEST 16

struct json_object;

struct printer {
	bool json;
	FILE *out;
	int depth;
	struct json_object *stack[PRINT_MAX_NEST];
};

void printer_init(struct printer *p, bool json, FILE *out);
/* Flushes the JSON document (if any) and frees it. */
void printer_finish(struct printer *p);

/* key may be NULL inside an array. */
void print_open_object(struct printer *p, const char *key);
void print_close_object(struct printer *p);
void print_open_array(struct printer *p, const char *key);
void print_close_array(struct printer *p);

/* fmt is the text form and takes one conversion of the stated type
 * (%s for the unit printers); NULL fmt prints nothing in text mode. */
void print_string(struct printer *p, const char *key, const char *fmt, const char *v);
void print_u64(struct printer *p, const char *key, const char *fmt, __u64 v);
void print_s64(struct printer *p, const char *key, const char *fmt, __s64 v);
void print_bool(struct printer *p, const char *key, const char *fmt, bool v);
void print_rate(struct printer *p, const char *key, const char *fmt, __u64 Bps);
void print_size(struct printer *p, const char *key, const char *fmt, __u64 bytes);
void print_time(struct printer *p, const char *key, const char *fmt, __u64 ns);
/* Text only: literal text (e.g. newlines, indentation). */
void print_text(struct printer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
