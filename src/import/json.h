/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A JSON reader (RFC 8259) that keeps what json-c (which only the unit
 * tests link) does not: the line of every value and key, for FILE:LINE in
 * import's messages, and every member of an object in file order, a key
 * given twice included (json-c keeps the last one silently, which would
 * drop a subtree of network.json without a word).
 */
#ifndef HTBCTL_IMPORT_JSON_H
#define HTBCTL_IMPORT_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 64

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_member;

struct json_value {
	enum json_type type;
	unsigned line;
	bool b;
	char *str;		/* a string's UTF-8 (no NUL inside); a number's text */
	unsigned n;		/* members of an object, items of an array */
	struct json_member *members;
	/* an array's items are checked and counted (n), not kept: the
	 * formats read have none, and json_parse stays bounded in memory */
};

struct json_member {
	char *key;
	unsigned line;		/* the key's */
	struct json_value value;
};

/* Parses text (len bytes) into *v. 0, or -1 with err (and *err_line)
 * saying what and where; *v is then empty. */
int json_parse(const char *text, size_t len, struct json_value *v, char *err, size_t errlen,
	       unsigned *err_line);
void json_free(struct json_value *v);
/* The member of o named key (the first one), or NULL. */
const struct json_member *json_get(const struct json_value *o, const char *key);
const char *json_type_name(enum json_type t);

#endif
