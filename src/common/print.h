/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One print call emits both forms (the iproute2 json_print idea): in text
 * mode the value is formatted for people (tc units), in JSON mode it is
 * written as a member of the current object or array, as a raw integer
 * (bytes/s, bytes, ns).
 *
 * JSON is streamed: every call writes its part of the document at once
 * (nothing is built in memory, so 100000 classes cost no more than a few
 * buffers), pretty-printed with two-space indentation, or on one line
 * with p->compact. Each document at the top level ends with a newline.
 * Strings are escaped per RFC 8259: '"', '\\' and control characters
 * (\n, \t, ..., else \u00XX); bytes that are not valid UTF-8 become
 * U+FFFD, so the output is always valid JSON. Keys are written as given
 * (a key given twice appears twice); a NULL key inside an object is "".
 */
#ifndef HTBCTL_PRINT_H
#define HTBCTL_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define PRINT_MAX_NEST 16	/* deeper containers are left out, content and all */

struct printer {
	bool json;
	bool compact;		/* JSON on one line: set after printer_init */
	FILE *out;
	int depth;		/* open JSON containers */
	int skipped;		/* containers opened beyond PRINT_MAX_NEST */
	bool is_array[PRINT_MAX_NEST];
	bool has_members[PRINT_MAX_NEST];	/* the next member needs a comma */
};

void printer_init(struct printer *p, bool json, FILE *out);
/* Closes any container left open, so the document is complete. Does not
 * flush p->out. */
void printer_finish(struct printer *p);

/* key may be NULL inside an array (and is ignored there). */
void print_open_object(struct printer *p, const char *key);
void print_close_object(struct printer *p);
void print_open_array(struct printer *p, const char *key);
void print_close_array(struct printer *p);

/* fmt is the text form and takes one conversion of the stated type
 * (%s for the unit printers); NULL fmt prints nothing in text mode.
 * A NULL string is null in JSON. */
void print_string(struct printer *p, const char *key, const char *fmt, const char *v);
void print_u64(struct printer *p, const char *key, const char *fmt, __u64 v);
void print_s64(struct printer *p, const char *key, const char *fmt, __s64 v);
void print_bool(struct printer *p, const char *key, const char *fmt, bool v);
void print_rate(struct printer *p, const char *key, const char *fmt, __u64 Bps);
void print_size(struct printer *p, const char *key, const char *fmt, __u64 bytes);
void print_time(struct printer *p, const char *key, const char *fmt, __u64 ns);
/*
 * A class's settings, the part `htbctl check` and `htbctl show` print
 * alike: " prio P rate R ceil C burst B cburst B quantum Q limit L" in
 * text, the keys prio, rate, ceil, burst, cburst, quantum, limit in JSON
 * (bytes/s, bytes, ns); a leaf's AQM after them (" aqm codel target T
 * interval I ecn on" or " aqm off", then " flows on|off"; aqm
 * "codel"/"off", target, interval, ecn, flows).
 */
struct print_class_settings {
	__u64 prio, rate, ceil, burst, cburst, quantum, limit_ns;
	bool leaf, codel, ecn, flows;
	__u64 target_ns, interval_ns;
};
void print_class_settings(struct printer *p, const struct print_class_settings *s);

/* Text only: literal text (e.g. newlines, indentation). */
void print_text(struct printer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A JSON string literal for s (quotes included), escaped as above. */
void print_json_string(FILE *out, const char *s);

/* Length of the valid UTF-8 sequence at s (2..4 bytes), or 0: overlong
 * forms, surrogates and code points above U+10FFFF are not valid. The
 * string's NUL stops a truncated sequence (it is no continuation byte). */
size_t utf8_len(const unsigned char *s);

#endif
