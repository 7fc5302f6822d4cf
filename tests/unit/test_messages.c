// SPDX-License-Identifier: GPL-2.0
/* What htbctl echoes from its user: values in messages quoted, bounded
 * and escaped (msg_clip, msg_quote, p_err in src/common/common.c), and device
 * names checked as the kernel checks them (ifname_valid in src/common/common.c)
 * before any path is built from them. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <json-c/json.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/pins.h"

static const char *quoted(const char *s)
{
	static char buf[MSG_QUOTE_BUF];

	return msg_quote(buf, sizeof(buf), s);
}

Test(msg, plain_value_quoted_as_is)
{
	cr_assert_str_eq(quoted("10mbit"), "'10mbit'");
	cr_assert_str_eq(quoted(""), "''");
}

Test(msg, control_characters_escaped)
{
	cr_assert_str_eq(quoted("\x1b[31mred\a\n"), "'\\x1b[31mred\\x07\\x0a'");
	cr_assert_str_eq(quoted("a\x7f" "b"), "'a\\x7fb'");
}

/* UTF-8 text stays; C1 controls (U+009B is CSI to some terminals) and
 * bytes that are no UTF-8 are escaped. */
Test(msg, utf8_kept_c1_and_invalid_escaped)
{
	cr_assert_str_eq(quoted("gr\xc3\xbc\xc3\x9f"), "'gr\xc3\xbc\xc3\x9f'");
	cr_assert_str_eq(quoted("\xc2\x9b" "2J"), "'\\xc2\\x9b2J'");
	cr_assert_str_eq(quoted("\xff\xc3"), "'\\xff\\xc3'");
}

Test(msg, long_value_cut_with_its_length)
{
	size_t n = 1 << 20;
	char *big = malloc(n + 1);
	const char *q;

	cr_assert_not_null(big);
	memset(big, 'x', n);
	big[n] = '\0';
	q = quoted(big);
	cr_assert_lt(strlen(q), MSG_QUOTE_BUF);
	cr_assert_not_null(strstr(q, "...' (1048576 bytes)"), "%s", q);
	cr_assert_eq(strncmp(q, "'xxxxxxxx", 9), 0, "%s", q);
	free(big);
}

/* An escape is never cut in half, and the result always fits. */
Test(msg, clip_never_splits_an_escape)
{
	char out[12];
	size_t used = msg_clip(out, sizeof(out), "\x1b\x1b\x1b\x1b\x1b");

	cr_assert_str_eq(out, "\\x1b\\x1b...");
	cr_assert_eq(used, 2);
	cr_assert_eq(msg_clip(out, sizeof(out), "abcdefghijk"), 11);
	cr_assert_str_eq(out, "abcdefghijk");
	cr_assert_eq(msg_clip(out, sizeof(out), "abcdefghijkl"), 8);
	cr_assert_str_eq(out, "abcdefgh...");
}

/* p_err: one short line on stderr, and valid JSON on stdout with -j,
 * whatever the value held. */
Test(msg, p_err_bounded_escaped_and_json, .init = cr_redirect_stderr)
{
	struct ctx ctx = { .json = true, .prog = "htbctl" };
	size_t n = 100000;
	char *big = malloc(n + 1), line[4096];
	struct json_object *o;
	FILE *f = tmpfile();

	cr_assert_not_null(big);
	cr_assert_not_null(f);
	memset(big, 'y', n);
	memcpy(big, "\x1b]0;t\a\xff", 7);
	big[n] = '\0';
	stdout = f;
	p_err(&ctx, "no device '%s'", big);
	fflush(f);
	rewind(f);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	o = json_tokener_parse(line);
	cr_assert_not_null(o, "not JSON: %s", line);
	cr_assert_null(strchr(json_object_get_string(json_object_object_get(o, "error")), '\x1b'));
	json_object_put(o);
	fflush(stderr);
	{
		FILE *e = cr_get_redirected_stderr();
		char err[4096];

		cr_assert_not_null(fgets(err, sizeof(err), e));
		cr_assert_lt(strlen(err), 1100);
		cr_assert_null(strchr(err, '\x1b'));
		const char *want = "htbctl: no device '\\x1b]0;t\\x07\\xffyyy";

		cr_assert_eq(strncmp(err, want, strlen(want)), 0, "%s", err);
	}
	free(big);
}

/* ---- device names: as the kernel's dev_valid_name() */

Test(ifname, kernel_names_accepted)
{
	const char *ok[] = { "eth0", "ht-s", "a", "012345678901234", "veth.10", "br_0", "-" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_assert(ifname_valid(ok[i], NULL), "%s", ok[i]);
}

Test(ifname, paths_and_bad_names_refused_with_why)
{
	struct { const char *name, *why; } bad[] = {
		{ "", "it is empty" },
		{ "0123456789abcdef", "it is longer than 15 bytes" },
		{ ".", "'.' and '..' are not allowed" },
		{ "..", "'.' and '..' are not allowed" },
		{ "../rzvictim", "it contains '/'" },
		{ "a/b", "it contains '/'" },
		{ "a:b", "it contains ':'" },
		{ "a b", "it contains white space" },
		{ "a\tb", "it contains white space" },
		{ "a\nb", "it contains white space" },
		{ "a\xa0" "b", "it contains white space" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;

		cr_assert_not(ifname_valid(bad[i].name, &why), "%s", bad[i].name);
		cr_assert_str_eq(why, bad[i].why, "%s", bad[i].name);
	}
}

Test(ifname, no_pin_path_from_a_bad_name)
{
	char buf[256];

	cr_assert_eq(pin_dir("..", buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(pin_path("../x", "meta", buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(pin_path("eth0", "meta", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "/sys/fs/bpf/htbctl/eth0/meta");
}
