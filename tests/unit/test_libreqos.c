// SPDX-License-Identifier: GPL-2.0
/* import libreqos's readers (src/import/csv.c, src/import/json.c) and
 * its model (src/import/libreqos.c): fields and lines as LibreQoS's files
 * have them, the errors with their lines, Mbps exactly, class ids past
 * 16 bits, circuits merged, node rates, bad rows' messages. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdlib.h>
#include <string.h>

#include "import/csv.h"
#include "import/json.h"
#include "import/libreqos.h"
#include "import/lq_map.h"

/* ---- CSV ---------------------------------------------------------------- */

static struct csv c;

static void csv_on(const char *text)
{
	csv_init(&c, text, strlen(text));
}

static void csv_done(void)
{
	csv_free(&c);
}

TestSuite(csv, .fini = csv_done);

Test(csv, quoted_fields)
{
	csv_on("a,\"b, c\",\"say \"\"hi\"\"\",,\n");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(c.nfield, 5);
	cr_assert_str_eq(c.field[0], "a");
	cr_assert_str_eq(c.field[1], "b, c");
	cr_assert_str_eq(c.field[2], "say \"hi\"");
	cr_assert_str_eq(c.field[3], "");
	cr_assert_str_eq(c.field[4], "");
	cr_assert_eq(csv_next(&c), 0);
}

Test(csv, comments_blank_lines_and_line_numbers)
{
	csv_on("# one\n\n  # two, \"unbalanced\n h1,h2\n\t\nx,\"multi\nline\"\ny,z");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(c.rec_line, 4);
	cr_assert_str_eq(c.field[0], " h1");	/* blanks are the field's: the caller trims */
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(c.rec_line, 6);
	cr_assert_str_eq(c.field[1], "multi\nline");
	cr_assert_eq(csv_next(&c), 1);	/* the last line without its newline */
	cr_assert_eq(c.rec_line, 8);
	cr_assert_str_eq(c.field[1], "z");
	cr_assert_eq(csv_next(&c), 0);
}

Test(csv, crlf_and_byte_order_mark)
{
	csv_on("\xef\xbb\xbf" "a,b\r\n\r\n\"c\r\nd\",e\r\n");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_str_eq(c.field[0], "a");
	cr_assert_str_eq(c.field[1], "b");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(c.rec_line, 3);
	cr_assert_str_eq(c.field[0], "c\r\nd");
	cr_assert_str_eq(c.field[1], "e");
	cr_assert_eq(csv_next(&c), 0);
}

Test(csv, quote_after_blanks_opens)
{
	csv_on("1, \"a, b\" ,2\n");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(c.nfield, 3);
	cr_assert_str_eq(c.field[1], "a, b");
}

Test(csv, unclosed_quote_names_its_line)
{
	csv_on("a,b\n1,\"open\n2,3\n");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(csv_next(&c), -1);
	cr_assert_eq(c.err_line, 2);
	cr_assert(strstr(c.err, "opened on line 2 has no closing quote"), "%s", c.err);
}

Test(csv, text_after_closing_quote)
{
	csv_on("\n\"a\"b,c\n");
	cr_assert_eq(csv_next(&c), -1);
	cr_assert_eq(c.err_line, 2);
	cr_assert(strstr(c.err, "after a field's closing quote"), "%s", c.err);
}

Test(csv, nul_byte_refused)
{
	static const char t[] = "a,b\nc,d\0e\n";

	csv_init(&c, t, sizeof(t) - 1);
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(csv_next(&c), -1);
	cr_assert_eq(c.err_line, 2);
}

Test(csv, many_fields_and_long_values)
{
	static char t[40000];
	size_t o = 0;

	for (int i = 0; i < 100; i++)
		o += (size_t)snprintf(t + o, sizeof(t) - o, "%s%d", i ? "," : "", i);
	t[o++] = '\n';
	memset(t + o, 'x', 30000);
	t[o + 30000] = '\0';
	csv_on(t);
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(c.nfield, 100);
	cr_assert_str_eq(c.field[99], "99");
	cr_assert_eq(csv_next(&c), 1);
	cr_assert_eq(strlen(c.field[0]), 30000);
}

/* ---- JSON --------------------------------------------------------------- */

static struct json_value v;
static char err[200];
static unsigned err_line;

static int parse(const char *text)
{
	return json_parse(text, strlen(text), &v, err, sizeof(err), &err_line);
}

static void json_done(void)
{
	json_free(&v);
}

TestSuite(json, .fini = json_done);

Test(json, members_in_order_with_lines)
{
	cr_assert_eq(parse("{\n\t\"a\": 1,\n\t\"b\":\n\t\t{\"c\": [true, null, \"x\"]},\n\t\"a\": -2.5e3\n}"), 0,
		     "%s", err);
	cr_assert_eq(v.type, JSON_OBJECT);
	cr_assert_eq(v.n, 3);
	cr_assert_str_eq(v.members[0].key, "a");
	cr_assert_eq(v.members[0].line, 2);
	cr_assert_eq(v.members[1].line, 3);
	cr_assert_eq(v.members[1].value.line, 4);
	cr_assert_eq(v.members[1].value.members[0].value.n, 3);
	/* a key given twice is kept twice, for the caller to refuse */
	cr_assert_str_eq(v.members[2].key, "a");
	cr_assert_str_eq(v.members[2].value.str, "-2.5e3");
	cr_assert_eq(v.members[2].line, 5);
	cr_assert_str_eq(json_get(&v, "a")->value.str, "1");
	cr_assert_null(json_get(&v, "z"));
}

Test(json, string_escapes)
{
	cr_assert_eq(parse("\"a\\n\\t\\\"\\\\\\/ \\u00e9 \\ud83d\\ude00\""), 0, "%s", err);
	cr_assert_str_eq(v.str, "a\n\t\"\\/ \xc3\xa9 \xf0\x9f\x98\x80");
}

static void refused(const char *text, unsigned line, const char *what)
{
	cr_assert_eq(parse(text), -1, "accepted %s", text);
	cr_assert_eq(err_line, line, "%s: line %u, wanted %u (%s)", text, err_line, line, err);
	cr_assert(strstr(err, what), "%s: said '%s', wanted '%s'", text, err, what);
	cr_assert_eq(v.type, JSON_NULL);
}

Test(json, errors_with_lines)
{
	refused("{\n\"a\": 1,\n}", 3, "expected a member name");
	refused("{\"a\" 1}", 1, "expected ':'");
	refused("[1,\n2\n3]", 3, "expected ',' or ']'");
	refused("\n\n\"open", 3, "without its closing quote");
	refused("\"a\nb\"", 1, "closing quote on its line");
	refused("\"\\x\"", 1, "unknown escape");
	refused("\"\\ud83d\"", 1, "without its low one");
	refused("\"\\ude00\"", 1, "lone low surrogate");
	refused("\"\\u0000\"", 1, "NUL");
	refused("{} x", 1, "text after the end");
	refused("01", 1, "text after the end");
	refused("1.", 1, "no digit after its '.'");
	refused("1e", 1, "no digit in its exponent");
	refused("-", 1, "not a JSON value");
	refused("tru", 1, "not a JSON value");
	refused("", 1, "ends where a value should be");
}

Test(json, nesting_bounded)
{
	char deep[200];

	memset(deep, '[', 100);
	memset(deep + 100, ']', 99);
	deep[199] = '\0';
	refused(deep, 1, "deeper than 64");
	memset(deep, 0, sizeof(deep));
	memset(deep, '[', 60);
	memset(deep + 60, ']', 60);
	cr_assert_eq(parse(deep), 0, "%s", err);
}

/* ---- the model ---------------------------------------------------------- */

Test(lqos, mbps_exact)
{
	static const struct {
		const char *s;
		__u64 bits;
	} ok[] = {
		{ "100", 100000000 }, { "2.5", 2500000 }, { ".5", 500000 }, { "0.000001", 1 },
		{ "1.0000019", 1000001 }, { "9999999.999999", 9999999999999ull }, { "0", 0 },
		{ "155.50", 155500000 },
	};
	static const char *const bad[] = { "", ".", "1.2.3", "1e3", "-1", "12345678", " 1",
					   "1 ", "1,5", "10mbit", "0x10" };
	__u64 b;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(lqos_parse_mbps(ok[i].s, &b), 0, "%s", ok[i].s);
		cr_assert_eq(b, ok[i].bits, "%s: %llu", ok[i].s, (unsigned long long)b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(lqos_parse_mbps(bad[i], &b), -1, "accepted '%s'", bad[i]);
}

Test(lqos, class_ids_past_16_bits)
{
	cr_assert_eq(lqos_classid(0), 0x10001);
	cr_assert_eq(lqos_classid(0xfffe), 0x1ffff);
	cr_assert_eq(lqos_classid(0xffff), 0x20001);
	cr_assert_eq(lqos_classid(2 * 0xffff + 4), 0x30005);
}

#define HDR "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6," \
	    "Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment,sqm\n"

static struct lqos q;

static int lq_as(const char *csv, const char *json, bool strict)
{
	struct lqos_text a = { "d.csv", csv, strlen(csv) }, b = { "n.json", json, strlen(json) };

	memset(&q, 0, sizeof(q));
	q.strict = strict;
	return lqos_parse(&q, &a, &b, NULL);
}

static int lq(const char *csv, const char *json)
{
	return lq_as(csv, json, false);
}

static void lq_done(void)
{
	lqos_free(&q);
}

TestSuite(lqos, .fini = lq_done);

static const char net[] =
	"{\"S\": {\"downloadBandwidthMbps\": 1000, \"uploadBandwidthMbps\": 100, \"children\": {\n"
	" \"A1\": {\"downloadBandwidthMbps\": 600, \"uploadBandwidthMbps\": 50},\n"
	" \"V\": {\"virtual\": true, \"downloadBandwidthMbps\": 1, \"uploadBandwidthMbps\": 1,\n"
	"  \"children\": {\"A2\": {\"downloadBandwidthMbps\": 600, \"uploadBandwidthMbps\": 50}}}}}}\n";

Test(lqos, circuits_merged_and_placed)
{
	cr_assert_eq(lq(HDR
			"7,Seven,1,d1,A1,,\"10.0.0.1, 10.0.0.2\",2001:db8::/64,1,2,10,20,a, b,cake\n"
			"8,Eight,2,d2,V,,10.0.0.3,,1,1,5,5,,\n"
			"7,Seven,3,d3,A1,,,2001:db8:1::1,1,2,10,20,,\n", net), 0, "%s", q.err);
	cr_assert_eq(q.rows, 3);
	cr_assert_eq(q.ncirc, 2);
	cr_assert_eq(q.naddr, 5);
	cr_assert_eq(q.circ[0].rows, 2);
	cr_assert_eq(q.circ[0].min[LQ_UP], 2000000);
	cr_assert_eq(q.circ[0].max[LQ_DOWN], 10000000);
	/* V is virtual: circuit 8 hangs on S, its nearest shaped ancestor */
	cr_assert_eq(q.nnodes, 4);
	cr_assert_eq(q.nodes[q.circ[1].parent].shaped, 0);
	/* classes: 1:1 root, 1:2 default, 1:3 S, 1:4 circuit 8 (S's own), 1:5 A1, 1:6 circuit 7, 1:7 A2 */
	cr_assert_eq(q.nodes[0].classid, 0x10003);
	cr_assert_eq(q.circ[1].classid, 0x10004);
	cr_assert_eq(q.nodes[1].classid, 0x10005);
	cr_assert_eq(q.circ[0].classid, 0x10006);
	cr_assert_eq(q.nodes[3].classid, 0x10007);
	cr_assert_eq(q.nclasses, 7);
}

/* A prefix in two circuits: the one LibreQoS maps last keeps it (the
 * later mapping replaces the earlier), whatever the file's order: S's own
 * circuit 8 is mapped before its children's, A1's 7, then A2's 9 (names
 * in order). A prefix twice in one circuit is written once. Each dropped
 * claim: a warning. */
Test(lqos, a_prefix_claimed_twice)
{
	cr_assert_eq(lq(HDR
			"7,Seven,1,d1,A1,,\"10.0.0.1, 10.0.0.2\",,1,1,10,5,,\n"
			"8,Eight,2,d2,S,,\"10.0.0.1/32, 10.0.0.2\",,1,1,5,5,,\n"
			"9,Nine,3,d3,A2,,10.0.0.2,,1,1,5,5,,\n"
			"9,Nine,4,d4,A2,,10.0.0.2,,1,1,5,5,,\n", net), 0, "%s", q.err);
	cr_assert_eq(q.naddr, 6);
	cr_assert_eq(q.nkept_addr, 2);
	/* 10.0.0.1: circuit 7 (1:6) over circuit 8 (1:4) */
	cr_assert(!q.addr[0].dropped && q.addr[2].dropped);
	/* 10.0.0.2: circuit 9 (A2's, mapped last) over 7 and 8; its repeat once */
	cr_assert(q.addr[1].dropped && q.addr[3].dropped && !q.addr[4].dropped && q.addr[5].dropped);
	cr_assert_eq(q.nwarn, 4);
	cr_assert_str_eq(q.warns[0], "d.csv:3: IPv4 10.0.0.1/32 of circuit '8' is also at line 2 "
			 "(circuit '7'), which keeps it: the circuit LibreQoS maps last does");
	cr_assert(strstr(q.warns[2], "d.csv:2: IPv4 10.0.0.2/32 of circuit '7' is also at line 4 (circuit '9')"),
		  "%s", q.warns[2]);
	cr_assert_str_eq(q.warns[3], "d.csv:5: IPv4 10.0.0.2/32 of circuit '9' is also at line 4: written once");
}

/* S's 1000 Mbit/s less circuit 8's min (200) split between A1 and A2 (600
 * each, 1200 wanted) in proportion: 400 each; upload 100 - 10 = 90 over
 * 50 + 50: 45 each. The root: S's bandwidth and the default's 1 Mbit/s. */
Test(lqos, node_rates_fit_their_parent)
{
	cr_assert_eq(lq(HDR "8,Eight,2,d2,S,,10.0.0.3,,200,10,500,50,,\n", net), 0, "%s", q.err);
	cr_assert_eq(q.nodes[0].rate[LQ_DOWN], 1000000000);
	cr_assert_eq(q.nodes[1].rate[LQ_DOWN], 400000000);
	cr_assert_eq(q.nodes[3].rate[LQ_DOWN], 400000000);
	cr_assert_eq(q.nodes[1].rate[LQ_UP], 45000000);
	cr_assert_eq(q.nodes[1].bw[LQ_DOWN], 600000000);
	cr_assert_eq(q.root[LQ_DOWN], 1001000000);
	cr_assert_eq(q.root[LQ_UP], 101000000);
}

static void bad_row_as(const char *rows, const char *want, bool strict)
{
	char text[2048];

	snprintf(text, sizeof(text), HDR "%s", rows);
	cr_assert_eq(lq_as(text, net, strict), -1, "accepted %s", rows);
	cr_assert(strstr(q.err, want), "%s: said '%s', wanted '%s'", rows, q.err, want);
	lqos_free(&q);
}

static void bad_row(const char *rows, const char *want)
{
	bad_row_as(rows, want, false);
}

/* LibreQoS takes the first row's rates and warns; --strict refuses. */
Test(lqos, bad_rows)
{
	const char *rates = "1,A,1,d,A1,,10.0.0.1,,1,1,10,5,,\n1,A,2,e,A1,,10.0.0.2,,1,1.5,10,5,,\n";
	char text[2048];

	snprintf(text, sizeof(text), HDR "%s", rates);
	cr_assert_eq(lq(text, net), 0, "%s", q.err);
	cr_assert_eq(q.circ[0].min[LQ_UP], 1000000);
	cr_assert(q.nwarn == 1 && strstr(q.warns[0], "the circuit keeps that line's"), "%s", q.nwarn ? q.warns[0] : "");
	lqos_free(&q);
	bad_row_as(rates, "d.csv:3: Upload Min Mbps '1.5' of circuit '1' differs from line 2 ('1')", true);
	bad_row("1,A,1,d,A1,,10.0.0.1,,1,1,10,5,,\n1,A,2,e,,,10.0.0.2,,1,1,10,5,,\n",
		"d.csv:3: Parent Node '' of circuit '1' differs from line 2 (A1)");
	bad_row_as("1,A,1,d,A9,,10.0.0.1,,1,1,10,5,,\n", "d.csv:2: Parent Node 'A9' is not a node of 'n.json'", true);
	bad_row("1,A,1,d,A1,,10.0.0.1,,11,1,10,5,,\n",
		"d.csv:2: Download Min Mbps '11' is above Download Max Mbps '10'");
	bad_row("1,A,1,d,A1,,10.0.0.1,,1,1,10,0.0,,\n", "d.csv:2: Upload Max Mbps '0.0' is zero");
	bad_row("1,A,1,d,A1,,10.0.0.1,,1,1,ten,5,,\n",
		"d.csv:2: Download Max Mbps 'ten' is not a number of Mbps");
	bad_row_as("1,A,1,d,A1,,,fe80::1/10,1,1,10,5,,\n",
		   "d.csv:2: IPv6 'fe80::1/10' has host bits set (did you mean fe80::/10?)", true);
	bad_row("1,A,1,d,A1,,10.0.0.1,,1,1,10\n", "d.csv:2: 11 fields, the header (line 1) has 14");
	bad_row("\n# note\n \"\",A,1,d,A1,,10.0.0.1,,1,1,10,5,,\n", "d.csv:4: Circuit ID is empty");
}

Test(lqos, bad_network)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "{\"A\": 5}", "n.json:1: node 'A' is a number, not an object" },
		{ "{\"A\": {\"downloadBandwidthMbps\": 1, \"uploadBandwidthMbps\": 1,\n \"virtual\": \"yes\"}}",
		  "n.json:2: node 'A': \"virtual\" is a string, not true or false" },
		{ "{\"A\": {\"downloadBandwidthMbps\": 1, \"uploadBandwidthMbps\": 1,\n \"children\": []}}",
		  "n.json:2: node 'A': \"children\" is an array, not an object" },
		{ "{\"\": {\"downloadBandwidthMbps\": 1, \"uploadBandwidthMbps\": 1}}",
		  "n.json:1: a node with an empty name" },
		{ "{\"A\": {\"downloadBandwidthMbps\": -1, \"uploadBandwidthMbps\": 1}}",
		  "n.json:1: node 'A': \"downloadBandwidthMbps\" '-1' is not a number of Mbps" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(lq(HDR "1,A,1,d,,,10.0.0.1,,1,1,10,5,,\n", cases[i].json), -1, "%s", cases[i].json);
		cr_assert(strstr(q.err, cases[i].want), "said '%s', wanted '%s'", q.err, cases[i].want);
		lqos_free(&q);
	}
}

/* 1e3 in network.json is 1000 Mbps (JSON allows exponents; the CSV does not). */
Test(lqos, json_exponent_bandwidth)
{
	cr_assert_eq(lq(HDR "1,A,1,d,A,,10.0.0.1,,1,1,10,5,,\n",
			"{\"A\": {\"downloadBandwidthMbps\": 1e3, \"uploadBandwidthMbps\": 2.5E2}}"), 0, "%s", q.err);
	cr_assert_eq(q.nodes[0].bw[LQ_DOWN], 1000000000);
	cr_assert_eq(q.nodes[0].bw[LQ_UP], 250000000);
}

/* --keep-ids: the earlier config's ids by the comments above its classes. */
static int lq_prev(const char *csv, const char *json, const char *prev)
{
	struct lqos_text a = { "d.csv", csv, strlen(csv) }, b = { "n.json", json, strlen(json) },
			 p = { "old.ini", prev, strlen(prev) };

	memset(&q, 0, sizeof(q));
	return lqos_parse(&q, &a, &b, &p);
}

static const char two_aps[] =
	"{\"A1\": {\"downloadBandwidthMbps\": 10, \"uploadBandwidthMbps\": 10},\n"
	" \"A2\": {\"downloadBandwidthMbps\": 10, \"uploadBandwidthMbps\": 10}}";

Test(lqos, kept_ids)
{
	/* circuit "x \"y\" (z)" and node A2 kept; circuit 7's key given twice
	 * (neither kept, both ids reserved); a comment not right above its
	 * class does not count; 5 is new and gets the first id no class of the
	 * old config had */
	static const char old[] =
		"[device]\ndefault = 1:2\n\n# circuit \"n\" (x \\\"y\\\" (z))\n[class 1:20]\nrate = 1mbit\n"
		"# node \"A2\" (AP)\n[class 2:5]\n"
		"# circuit \"a\" (7)\n[class 1:4]\n# circuit \"b\" (7)\n[class 1:6]\n"
		"# circuit \"c\" (8)\nrate = 1mbit\n[class 1:7]\n"
		"# circuit \"d\" (9)\r\n[class 1:8]\r\n";

	cr_assert_eq(lq_prev(HDR "\"x \"\"y\"\" (z)\",n,1,d,A1,,10.0.0.1,,1,1,10,5,,\n"
			     "7,a,2,d,A1,,10.0.0.2,,1,1,10,5,,\n"
			     "8,c,3,d,A2,,10.0.0.3,,1,1,10,5,,\n"
			     "9,d,4,d,,,10.0.0.4,,1,1,10,5,,\n"
			     "5,e,5,d,,,10.0.0.5,,1,1,10,5,,\n", two_aps, old), 0, "%s", q.err);
	cr_assert_eq(q.circ[0].classid, 0x10020, "%x", q.circ[0].classid);
	cr_assert_eq(q.nodes[1].classid, 0x20005, "%x", q.nodes[1].classid);
	cr_assert_eq(q.circ[3].classid, 0x10008, "CRLF: %x", q.circ[3].classid);
	cr_assert_eq(q.kept, 3);
	/* new ones in write order, each the next id neither taken nor the old
	 * config's: 1:3 A1, 1:5 circuit 7 (1:4 is reserved), 1:7 circuit 8
	 * (1:6 reserved; 1:7 is free: its comment was not right above it),
	 * 1:9 circuit 5 (1:8 kept by 9) */
	cr_assert_eq(q.nodes[0].classid, 0x10003, "%x", q.nodes[0].classid);
	cr_assert_eq(q.circ[1].classid, 0x10005, "%x", q.circ[1].classid);
	cr_assert_eq(q.circ[2].classid, 0x10007, "%x", q.circ[2].classid);
	cr_assert_eq(q.circ[4].classid, 0x10009, "%x", q.circ[4].classid);
}

Test(lqos, comment_text_escapes)
{
	char buf[LQ_COMMENT_BUF];

	cr_assert_str_eq(lqos_comment_text("a\"b\\c\nd", buf, sizeof(buf)), "a\\\"b\\\\c\\x0ad");
	cr_assert_str_eq(lqos_comment_text("", buf, sizeof(buf)), "");
}

/* --root-mbps 500/40: S (1000/100) is the only top-level node; the root
 * keeps 1 Mbit/s for the default class and 5 for the circuit on it (no
 * generated parent nodes: gen_pn 0), so S gets 494 down and 34 up as
 * rate, its bandwidth capped at the link's as ceil. */
Test(lqos, root_given)
{
	struct lqos_text a = { "d.csv", HDR "9,n,1,d,,,10.0.0.9,,5,5,50,50,,\n", 0 },
			 b = { "n.json", net, sizeof(net) - 1 };

	a.len = strlen(a.text);
	memset(&q, 0, sizeof(q));
	q.root_set[LQ_DOWN] = 500000000;
	q.root_set[LQ_UP] = 40000000;
	cr_assert_eq(lqos_parse(&q, &a, &b, NULL), 0, "%s", q.err);
	cr_assert_eq(q.root[LQ_DOWN], 500000000);
	cr_assert_eq(q.root[LQ_UP], 40000000);
	cr_assert_eq(q.nodes[0].rate[LQ_DOWN], 494000000);
	cr_assert_eq(q.nodes[0].rate[LQ_UP], 34000000);
	cr_assert_eq(q.nodes[0].bw[LQ_DOWN], 500000000);	/* capped at the link */
}

/* lqos_prefix_text formats addresses itself (inet_ntop was a fifth of a
 * large import): the same text as inet_ntop, zero runs of every length
 * and place included, over 200,000 random prefixes of both families. */
Test(lqos, prefix_text_as_inet_ntop)
{
	unsigned seed = 7, bad = 0;

	for (int i = 0; i < 200000; i++) {
		struct lq_prefix p = { .af = i % 2 ? AF_INET : AF_INET6 };
		char a[INET6_ADDRSTRLEN], want[LQ_PREFIX_BUF + 8], got[LQ_PREFIX_BUF];

		for (int k = 0; k < 16; k++)
			p.addr[k] = rand_r(&seed) % 3 ? 0 : (__u8)rand_r(&seed);
		p.plen = (__u8)(rand_r(&seed) % (p.af == AF_INET ? 33 : 129));
		inet_ntop(p.af, p.addr, a, sizeof(a));
		snprintf(want, sizeof(want), "%s/%u", a, p.plen);
		if (strcmp(lqos_prefix_text(&p, got, sizeof(got)), want) && !bad++)
			cr_log_error("%s, wanted %s", got, want);
	}
	cr_assert_eq(bad, 0);
}

/* The index's hash is keyed: ids that all collide in FNV-1a's low 10 bits
 * (52b6d7f's hash; a map of 1024 slots probed them one after another,
 * quadratic over a file of them) spread over a seeded map, and two seeded
 * maps hash a key differently. */
static bool same_id(const void *arg, __u32 idx, const void *key)
{
	return !strcmp(((const char *const *)arg)[idx], key);
}

Test(lqos, map_hash_is_keyed)
{
	static char ids[64][16];
	const char *ptr[64];
	struct lq_map m = { 0 }, other = { 0 };
	unsigned n = 0, longest = 0;

	for (unsigned k = 0; n < 64; k++) {
		__u32 h = 2166136261u;

		snprintf(ids[n], sizeof(ids[n]), "c%u", k);
		for (const char *c = ids[n]; *c; c++)
			h = (h ^ (unsigned char)*c) * 16777619u;
		if (!(h & 1023))
			ptr[n] = ids[n], n++;
	}
	cr_assert(!lq_map_seed(&m) && !lq_map_seed(&other));
	cr_assert_neq(lq_hash(&m, "c1", 2), lq_hash(&other, "c1", 2));
	for (unsigned i = 0; i < n; i++) {
		__u32 h = lq_hash(&m, ptr[i], strlen(ptr[i]));

		cr_assert_eq(lq_map_find(&m, h, same_id, ptr, ptr[i]), -1);
		cr_assert_eq(lq_map_add(&m, h, i), 0);
	}
	for (unsigned s = 0; s < m.cap; s++) {
		unsigned d;

		if (!m.slot[s].idx1)
			continue;
		d = (s - (m.slot[s].hash & (m.cap - 1))) & (m.cap - 1);
		longest = d > longest ? d : longest;
		cr_assert_eq(lq_map_find(&m, m.slot[s].hash, same_id, ptr, ptr[m.slot[s].idx1 - 1]),
			     m.slot[s].idx1 - 1);
	}
	cr_assert_lt(longest, 16, "a key %u slots from its own among %u keys in %u", longest, n, m.cap);
	lq_map_free(&m);
}
