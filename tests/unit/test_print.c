// SPDX-License-Identifier: GPL-2.0
/* The print layer (src/common/print.h): one sequence of calls, text with tc
 * units or streamed JSON with raw integers; JSON escaping per RFC 8259;
 * every JSON output parses back with json-c. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/print.h"

struct capture {
	FILE *f;
	char *buf;
	size_t len;
	struct printer p;
};

enum form { TEXT, JSON, JSON_COMPACT };

static void cap_open(struct capture *c, enum form form)
{
	c->buf = NULL;
	c->f = open_memstream(&c->buf, &c->len);
	cr_assert_not_null(c->f);
	printer_init(&c->p, form != TEXT, c->f);
	c->p.compact = form == JSON_COMPACT;
}

/* Finishes the printer; returns the output (caller frees). */
static char *cap_close(struct capture *c)
{
	printer_finish(&c->p);
	cr_assert_eq(fclose(c->f), 0);
	return c->buf;
}

/* Parses a whole document with json-c; fails the test if it is not one. */
static json_object *parse_json(const char *s)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;
	size_t end;

	cr_assert_not_null(tok);
	o = json_tokener_parse_ex(tok, s, (int)strlen(s));
	cr_assert_eq(json_tokener_get_error(tok), json_tokener_success,
		     "not JSON (%s): %s", json_tokener_error_desc(json_tokener_get_error(tok)), s);
	/* nothing but white space after the document */
	end = json_tokener_get_parse_end(tok);
	cr_assert_eq(strspn(s + end, " \n"), strlen(s + end), "trailing text: %s", s + end);
	json_tokener_free(tok);
	return o;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, key, &v), "no key '%s'", key);
	return v;
}

/* A class-like record, the way config_print and show use the layer. */
static void emit(struct printer *p)
{
	print_open_object(p, NULL);
	print_string(p, "dev", "dev %s:", "veth0");
	print_u64(p, "nclasses", " %llu classes", 3);
	print_bool(p, "hysteresis", " hysteresis %s", true);
	print_string(p, "default", NULL, NULL);			/* null in JSON */
	print_text(p, "\n");
	print_open_object(p, "limits");
	print_time(p, "limit", " limit %s", 100000000);
	print_s64(p, "tokens", " tokens %lld", -42);
	print_close_object(p);
	print_open_array(p, "mark_masks");
	print_u64(p, NULL, NULL, 255);
	print_u64(p, NULL, NULL, 0xffffffff);
	print_close_array(p);
	print_open_array(p, "classes");
	for (int i = 1; i <= 2; i++) {
		print_open_object(p, NULL);
		print_text(p, "  ");
		print_string(p, "classid", "class %s", i == 1 ? "1:10" : "1:20");
		print_rate(p, "rate", " rate %s", 5000000);		/* 40Mbit */
		print_size(p, "burst", " burst %s", 65536);		/* 64Kb */
		print_u64(p, "depth", NULL, 2);				/* JSON only */
		print_text(p, "\n");
		print_open_array(p, "matches");
		print_close_array(p);
		print_close_object(p);
	}
	print_close_array(p);
	print_open_object(p, "empty");
	print_close_object(p);
	print_close_object(p);
}

/* emit()'s output in one form (caller frees). */
static char *emitted(enum form form)
{
	struct capture c;

	cap_open(&c, form);
	emit(&c.p);
	return cap_close(&c);
}

Test(print, text_form)
{
	char *out = emitted(TEXT);

	cr_assert_str_eq(out,
		"dev veth0: 3 classes hysteresis on\n"
		" limit 100ms tokens -42"
		"  class 1:10 rate 40Mbit burst 64Kb\n"
		"  class 1:20 rate 40Mbit burst 64Kb\n");
	free(out);
}

Test(print, json_form_pretty)
{
	char *out = emitted(JSON);

	cr_assert_str_eq(out,
		"{\n"
		"  \"dev\": \"veth0\",\n"
		"  \"nclasses\": 3,\n"
		"  \"hysteresis\": true,\n"
		"  \"default\": null,\n"
		"  \"limits\": {\n"
		"    \"limit\": 100000000,\n"
		"    \"tokens\": -42\n"
		"  },\n"
		"  \"mark_masks\": [\n"
		"    255,\n"
		"    4294967295\n"
		"  ],\n"
		"  \"classes\": [\n"
		"    {\n"
		"      \"classid\": \"1:10\",\n"
		"      \"rate\": 5000000,\n"
		"      \"burst\": 65536,\n"
		"      \"depth\": 2,\n"
		"      \"matches\": []\n"
		"    },\n"
		"    {\n"
		"      \"classid\": \"1:20\",\n"
		"      \"rate\": 5000000,\n"
		"      \"burst\": 65536,\n"
		"      \"depth\": 2,\n"
		"      \"matches\": []\n"
		"    }\n"
		"  ],\n"
		"  \"empty\": {}\n"
		"}\n");
	free(out);
}

Test(print, json_parses_back_with_raw_integers)
{
	char *out = emitted(JSON);
	json_object *o = parse_json(out), *cl;

	cr_assert_str_eq(json_object_get_string(get(o, "dev")), "veth0");
	cr_assert_eq(json_object_get_int64(get(o, "nclasses")), 3);
	cr_assert(json_object_get_boolean(get(o, "hysteresis")));
	cr_assert_null(get(o, "default"));
	cr_assert_eq(json_object_get_int64(get(get(o, "limits"), "limit")), 100000000);
	cr_assert_eq(json_object_get_int64(get(get(o, "limits"), "tokens")), -42);
	cr_assert_eq(json_object_array_length(get(o, "mark_masks")), 2);
	cr_assert_eq(json_object_get_uint64(json_object_array_get_idx(get(o, "mark_masks"), 1)),
		     0xffffffffull);
	cl = get(o, "classes");
	cr_assert_eq(json_object_array_length(cl), 2);
	cr_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(cl, 1), "classid")),
			 "1:20");
	cr_assert_eq(json_object_get_int64(get(json_object_array_get_idx(cl, 0), "rate")), 5000000);
	cr_assert_eq(json_object_get_int64(get(json_object_array_get_idx(cl, 0), "burst")), 65536);
	cr_assert_eq(json_object_array_length(get(json_object_array_get_idx(cl, 0), "matches")), 0);
	cr_assert_eq(json_object_object_length(get(o, "empty")), 0);
	json_object_put(o);
	free(out);
}

Test(print, json_compact)
{
	char *out = emitted(JSON_COMPACT);

	cr_assert_str_eq(out,
		"{\"dev\":\"veth0\",\"nclasses\":3,\"hysteresis\":true,\"default\":null,"
		"\"limits\":{\"limit\":100000000,\"tokens\":-42},\"mark_masks\":[255,4294967295],"
		"\"classes\":[{\"classid\":\"1:10\",\"rate\":5000000,\"burst\":65536,\"depth\":2,"
		"\"matches\":[]},{\"classid\":\"1:20\",\"rate\":5000000,\"burst\":65536,\"depth\":2,"
		"\"matches\":[]}],\"empty\":{}}\n");
	json_object_put(parse_json(out));
	free(out);
}

Test(print, integer_limits)
{
	struct capture c;
	json_object *o;
	char *out;

	cap_open(&c, JSON_COMPACT);
	print_open_object(&c.p, NULL);
	print_u64(&c.p, "u0", NULL, 0);
	print_u64(&c.p, "umax", NULL, ~0ull);
	print_s64(&c.p, "s0", NULL, 0);
	print_s64(&c.p, "smin", NULL, INT64_MIN);
	print_s64(&c.p, "smax", NULL, INT64_MAX);
	print_rate(&c.p, "rate", NULL, ~0ull);
	print_close_object(&c.p);
	out = cap_close(&c);
	cr_assert_str_eq(out, "{\"u0\":0,\"umax\":18446744073709551615,\"s0\":0,"
			 "\"smin\":-9223372036854775808,\"smax\":9223372036854775807,"
			 "\"rate\":18446744073709551615}\n");
	o = parse_json(out);
	cr_assert_eq(json_object_get_uint64(get(o, "umax")), ~0ull);
	cr_assert_eq(json_object_get_int64(get(o, "smin")), INT64_MIN);
	json_object_put(o);
	free(out);
}

Test(print, text_units_and_null_fmt)
{
	struct capture c;
	char *out;

	cap_open(&c, TEXT);
	print_open_object(&c.p, NULL);
	print_rate(&c.p, "rate", "%s", 125000);		/* 1Mbit */
	print_size(&c.p, "size", " %s", 1000);
	print_time(&c.p, "t", " %s", 1500);
	print_bool(&c.p, "b", " %s", false);
	print_u64(&c.p, "hidden", NULL, 7);		/* JSON only */
	print_string(&c.p, "hidden2", NULL, "x");
	print_s64(&c.p, "s", " %lld", -1);
	print_close_object(&c.p);
	out = cap_close(&c);
	cr_assert_str_eq(out, "1Mbit 1000b 1.5us off -1");
	free(out);
}

/* The JSON string literal for s, through the printer. */
static char *json_literal(const char *s)
{
	struct capture c;

	cap_open(&c, JSON);
	print_string(&c.p, NULL, NULL, s);	/* a top-level value */
	return cap_close(&c);
}

Test(escape, rfc8259)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "\"\"\n" },
		{ "plain 1:10 /sys/fs/cgroup/a.slice", "\"plain 1:10 /sys/fs/cgroup/a.slice\"\n" },
		{ "q\"b\\", "\"q\\\"b\\\\\"\n" },
		{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"\n" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"\n" },	/* DEL needs no escape */
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n" },
		/* not UTF-8: a stray continuation byte, an overlong '/', a
		 * surrogate, a truncated sequence, a byte that never occurs */
		{ "a\x80z", "\"a\\ufffdz\"\n" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"\n" },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"\n" },
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"\n" },
		{ "\xff", "\"\\ufffd\"\n" },
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n" },	/* above U+10FFFF */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = json_literal(cases[i].in);

		cr_assert_str_eq(out, cases[i].out, "case %zu", i);
		free(out);
	}
}

Test(escape, every_byte_round_trips)
{
	/* each byte alone, and in the middle of text: the output parses, and
	 * decodes to the input (or U+FFFD where the input is not UTF-8) */
	for (int b = 1; b < 256; b++) {
		char in[4] = { 'x', (char)b, 'y', 0 }, want[8];
		char *out = json_literal(in);
		json_object *o = parse_json(out);

		if (b < 0x80)
			snprintf(want, sizeof(want), "x%cy", b);
		else
			snprintf(want, sizeof(want), "x\xef\xbf\xbdy");		/* U+FFFD */
		cr_assert_str_eq(json_object_get_string(o), want, "byte 0x%02x: %s", b, out);
		json_object_put(o);
		free(out);
	}
}

Test(escape, keys_are_escaped_too)
{
	struct capture c;
	json_object *o;
	char *out;

	cap_open(&c, JSON_COMPACT);
	print_open_object(&c.p, NULL);
	print_u64(&c.p, "a\"b\n", NULL, 1);
	print_u64(&c.p, NULL, NULL, 2);		/* NULL key in an object: "" */
	print_close_object(&c.p);
	out = cap_close(&c);
	cr_assert_str_eq(out, "{\"a\\\"b\\n\":1,\"\":2}\n");
	o = parse_json(out);
	cr_assert_eq(json_object_get_int64(get(o, "a\"b\n")), 1);
	cr_assert_eq(json_object_get_int64(get(o, "")), 2);
	json_object_put(o);
	free(out);
}

Test(structure, keys_ignored_in_arrays)
{
	struct capture c;
	char *out;

	cap_open(&c, JSON_COMPACT);
	print_open_array(&c.p, NULL);
	print_u64(&c.p, "ignored", NULL, 1);
	print_open_object(&c.p, "ignored");
	print_close_object(&c.p);
	print_open_array(&c.p, NULL);
	print_string(&c.p, NULL, NULL, NULL);
	print_close_array(&c.p);
	print_close_array(&c.p);
	out = cap_close(&c);
	cr_assert_str_eq(out, "[1,{},[null]]\n");
	free(out);
}

Test(structure, finish_closes_what_is_open)
{
	struct capture c;
	char *out;

	cap_open(&c, JSON);
	print_open_object(&c.p, NULL);
	print_open_array(&c.p, "a");
	print_u64(&c.p, NULL, NULL, 1);
	out = cap_close(&c);
	cr_assert_str_eq(out, "{\n  \"a\": [\n    1\n  ]\n}\n");
	json_object_put(parse_json(out));
	free(out);
}

Test(structure, too_deep_is_left_out)
{
	struct capture c;
	json_object *o, *v;
	char *out;
	int depth = 0;

	cap_open(&c, JSON);
	for (int i = 0; i < PRINT_MAX_NEST + 4; i++) {
		print_open_object(&c.p, "x");
		print_u64(&c.p, "level", NULL, i);
	}
	for (int i = 0; i < PRINT_MAX_NEST + 4; i++)
		print_close_object(&c.p);
	print_close_object(&c.p);		/* one too many: ignored */
	out = cap_close(&c);
	o = parse_json(out);
	for (v = o; json_object_object_get_ex(v, "x", &v);)
		depth++;
	cr_assert_eq(depth, PRINT_MAX_NEST - 1);
	json_object_put(o);
	free(out);
}

Test(structure, text_mode_ignores_json_structure)
{
	struct capture c;
	char *out;

	cap_open(&c, TEXT);
	print_open_array(&c.p, "a");
	print_close_object(&c.p);
	print_close_array(&c.p);
	print_text(&c.p, "%s=%d", "n", 5);
	out = cap_close(&c);
	cr_assert_str_eq(out, "n=5");
	free(out);
}

Test(structure, print_text_is_text_only)
{
	struct capture c;
	char *out;

	cap_open(&c, JSON);
	print_open_object(&c.p, NULL);
	print_text(&c.p, "not in JSON %d\n", 1);
	print_close_object(&c.p);
	out = cap_close(&c);
	cr_assert_str_eq(out, "{}\n");
	free(out);
}

Test(scale, hundred_thousand_records)
{
	struct capture c;
	json_object *o;
	char *out;

	cap_open(&c, JSON);
	print_open_object(&c.p, NULL);
	print_open_array(&c.p, "classes");
	for (int i = 0; i < 100000; i++) {
		print_open_object(&c.p, NULL);
		print_string(&c.p, "classid", NULL, "2:ffff");
		print_u64(&c.p, "rate", NULL, i);
		print_open_array(&c.p, "matches");
		print_close_array(&c.p);
		print_close_object(&c.p);
	}
	print_close_array(&c.p);
	print_close_object(&c.p);
	out = cap_close(&c);
	o = parse_json(out);
	cr_assert_eq(json_object_array_length(get(o, "classes")), 100000);
	cr_assert_eq(json_object_get_int64(get(json_object_array_get_idx(get(o, "classes"), 99999),
					       "rate")), 99999);
	json_object_put(o);
	free(out);
}

/* p_err in JSON mode: the message on stderr, {"error": ...} on stdout. */
Test(p_err, json_error_object, .init = cr_redirect_stdout)
{
	struct ctx ctx = { .json = true, .prog = "htbctl" };

	p_err(&ctx, "config %s rejected", "a\"b.ini");
	fflush(stdout);
	cr_assert_stdout_eq_str("{\"error\":\"config a\\\"b.ini rejected\"}\n");
}

Test(p_err, text_mode_prints_nothing_on_stdout, .init = cr_redirect_stdout)
{
	struct ctx ctx = { .json = false, .prog = "htbctl" };

	p_err(&ctx, "no JSON");
	fflush(stdout);
	cr_assert_stdout_eq_str("");
}
