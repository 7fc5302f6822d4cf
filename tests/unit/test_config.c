// SPDX-License-Identifier: GPL-2.0
/* The config's resolution rules (docs/config.md) and the data the loader
 * reads from struct htb_config. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "loader/plan.h"

/* Parses text; diagnostics land in *diag (caller frees). */
static int parse(const char *text, struct htb_config *cfg, char **diag)
{
	size_t len;
	FILE *f = open_memstream(diag, &len);
	int ret;

	cr_assert_not_null(f);
	ret = config_parse_string(text, strlen(text), "t.ini", cfg, f);
	fclose(f);
	return ret;
}

/* A config that must be accepted: returns its warnings (caller frees). */
static char *accepted(const char *text, struct htb_config *cfg)
{
	char *diag = NULL;

	cr_assert_eq(parse(text, cfg, &diag), 0, "config refused: %s", diag);
	return diag;
}

static void parse_ok(const char *text, struct htb_config *cfg)
{
	free(accepted(text, cfg));
}

/* A config that must be refused: returns its messages (caller frees).
 * Every refused config leaves nothing in cfg (config/config.h). */
static char *refused(const char *text)
{
	struct htb_config cfg;
	char *diag = NULL;

	cr_assert_eq(parse(text, &cfg, &diag), -1, "config accepted: %.200s", text);
	cr_assert_eq(cfg.nclasses, 0);
	cr_assert_null(cfg.classes);
	cr_assert_null(cfg.matches);
	return diag;
}

static const struct config_class *cls(const struct htb_config *cfg, __u32 id)
{
	int i = config_find_class(cfg, id);

	cr_assert_geq(i, 0, "class %x:%x not found", id >> 16, id & 0xffff);
	return &cfg->classes[i];
}

Test(burst, default_formula)
{
	/* one GSO packet as wire_len counts it + 1 ms at the rate */
	cr_assert_eq(CONFIG_GSO_WIRE_MAX, 81920);
	cr_assert_eq(config_default_burst(1), 81920 + 1);		/* rounded up */
	cr_assert_eq(config_default_burst(125000), 81920 + 125);	/* 1 Mbit */
	cr_assert_eq(config_default_burst(2500000), 81920 + 2500);	/* 20 Mbit */
	cr_assert_eq(config_default_burst(125000000), 81920 + 125000);	/* 1 Gbit */
	cr_assert_eq(config_default_burst(1250000000), 81920 + 1250000); /* 10 Gbit */
	cr_assert_eq(config_default_burst(1001), 81920 + 2);
	/* never tc's 1600-byte trap: at least a 64 KiB GSO packet at any rate */
	for (__u64 r = 1; r < (1ull << 40); r = r * 3 + 1)
		cr_assert_geq(config_default_burst(r), 65536);
	/* no overflow at absurd rates */
	cr_assert_eq(config_default_burst(~0ull), ~0ull / 1000 + 1 + 81920);
}

Test(burst, applied_from_rate_and_ceil)
{
	struct htb_config cfg;

	parse_ok("[class 1:1]\nrate = 20mbit\nceil = 40mbit\n"
		 "[class 1:2]\nrate = 1gbit\nburst = 10k\n", &cfg);
	cr_assert_eq(cls(&cfg, 0x10001)->burst, 81920 + 2500);
	cr_assert_eq(cls(&cfg, 0x10001)->cburst, 81920 + 5000);
	cr_assert_eq(cls(&cfg, 0x10002)->burst, 10240);		/* given */
	cr_assert_eq(cls(&cfg, 0x10002)->cburst, 81920 + 125000);
	cr_assert_eq(cls(&cfg, 0x10002)->ceil, 125000000);	/* = rate */
	config_free(&cfg);
}

Test(quantum, clamp)
{
	static const struct {
		__u64 rate;
		__u32 r2q, quantum;
		bool clamped;
	} c[] = {
		{ 5000, 10, 1000, true },
		{ 10000, 10, 1000, false },
		{ 1250000, 10, 125000, false },
		{ 2000000, 10, 200000, false },
		{ 2000010, 10, 200000, true },
		{ 125000000, 10, 200000, true },
		{ 125000000, 1000, 125000, false },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		bool clamped;

		cr_assert_eq(config_default_quantum(c[i].rate, c[i].r2q, &clamped), c[i].quantum,
			     "rate %llu r2q %u", (unsigned long long)c[i].rate, c[i].r2q);
		cr_assert_eq(clamped, c[i].clamped, "rate %llu r2q %u",
			     (unsigned long long)c[i].rate, c[i].r2q);
	}
}

Test(quantum, warns_for_leaves_only)
{
	struct htb_config cfg;
	char *diag = accepted("[class 1:1]\nrate = 1gbit\n"
			      "[class 1:10]\nparent = 1:1\nrate = 100mbit\n"
			      "[class 1:20]\nparent = 1:1\nrate = 1mbit\nquantum = 100\n"
			      "[class 1:30]\nparent = 1:1\nrate = 8kbit\n", &cfg);

	cr_assert_eq(cfg.nwarnings, 2, "%s", diag);
	cr_assert_not_null(strstr(diag, "t.ini:3: warning: quantum of class 1:10 clamped to 200000"), "%s", diag);
	cr_assert_not_null(strstr(diag, "t.ini:10: warning: quantum of class 1:30 clamped to 1000"), "%s", diag);
	cr_assert_eq(cls(&cfg, 0x10001)->quantum, 200000);	/* inner: silent */
	cr_assert_eq(cls(&cfg, 0x10020)->quantum, 100);		/* given: kept */
	config_free(&cfg);
	free(diag);
}

Test(quantum, r2q)
{
	struct htb_config cfg;

	parse_ok("[device]\nr2q = 100\n[class 1:1]\nrate = 100mbit\n", &cfg);
	cr_assert_eq(cfg.classes[0].quantum, 125000);
	config_free(&cfg);
}

Test(tree, preorder_path_depth)
{
	struct htb_config cfg;
	const struct config_class *c;

	/* children before parents in the file */
	parse_ok("[class 1:111]\nparent = 1:11\nrate = 1mbit\n"
		 "[class 1:12]\nparent = 1:1\nrate = 1mbit\n"
		 "[class 1:11]\nparent = 1:1\nrate = 2mbit\n"
		 "[class 1:1]\nrate = 4mbit\n"
		 "[class 1:2]\nrate = 1mbit\n", &cfg);
	cr_assert_eq(cfg.nclasses, 5);
	cr_assert_eq(cfg.major, 1);
	/* preorder, siblings in file order: 1:1, 1:12, 1:11, 1:111, 1:2 */
	cr_assert_eq(cfg.classes[0].classid, 0x10001);
	cr_assert_eq(cfg.classes[1].classid, 0x10012);
	cr_assert_eq(cfg.classes[2].classid, 0x10011);
	cr_assert_eq(cfg.classes[3].classid, 0x10111);
	cr_assert_eq(cfg.classes[4].classid, 0x10002);
	for (__u32 i = 0; i < cfg.nclasses; i++) {
		c = &cfg.classes[i];
		cr_assert_eq(c->path[0], i);
		if (c->parent != CONFIG_NO_INDEX)
			cr_assert_lt(c->parent, i);
	}
	c = cls(&cfg, 0x10111);
	cr_assert_eq(c->depth, 3);
	cr_assert_eq(c->path[0], 3);
	cr_assert_eq(c->path[1], 2);
	cr_assert_eq(c->path[2], 0);
	cr_assert_eq(c->parent, 2);
	cr_assert(c->is_leaf);
	c = cls(&cfg, 0x10001);
	cr_assert_eq(c->depth, 1);
	cr_assert_eq(c->parent, CONFIG_NO_INDEX);
	cr_assert_eq(c->nchildren, 2);
	cr_assert_not(c->is_leaf);
	cr_assert_eq(cls(&cfg, 0x10002)->depth, 1);
	cr_assert_eq(config_find_class(&cfg, 0x10003), -1);
	config_free(&cfg);
}

Test(tree, depth_limit)
{
	char text[1024] = "", *diag;
	struct htb_config cfg;

	for (int i = 1; i <= 8; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "[class 1:%d]\nparent = 1:%d\nrate = 1mbit\n", i, i - 1);
	/* 1:1's "parent = 1:0" is invalid: make it top level */
	memcpy(strstr(text, "parent = 1:0"), "prio = 0    ", 12);
	parse_ok(text, &cfg);
	cr_assert_eq(cls(&cfg, 0x10008)->depth, HTB_MAX_DEPTH);
	config_free(&cfg);
	strcat(text, "[class 1:9]\nparent = 1:8\nrate = 1mbit\n");
	diag = refused(text);
	cr_assert_not_null(strstr(diag, "t.ini:25: class 1:9 is at depth 9"), "%s", diag);
	free(diag);
}

Test(defaults, device_and_class)
{
	struct htb_config cfg;
	const struct config_class *c;

	parse_ok("[class 1:a]\nrate = 8mbit\n", &cfg);
	cr_assert_eq(cfg.dev.default_classid, 0);
	cr_assert_eq(cfg.dev.default_idx, CONFIG_NO_INDEX);
	cr_assert_eq(cfg.dev.r2q, 10);
	cr_assert_eq(cfg.dev.limit_ns, 100000000);
	cr_assert_not(cfg.dev.hysteresis);
	cr_assert_eq(cfg.dev.linklayer, HTB_LINKLAYER_ETHERNET);
	c = &cfg.classes[0];
	cr_assert_eq(c->classid, 0x1000a);
	cr_assert_eq(c->rate, 1000000);
	cr_assert_eq(c->ceil, 1000000);
	cr_assert_eq(c->prio, 0);
	cr_assert_eq(c->quantum, 100000);
	cr_assert_eq(c->limit_ns, 100000000);
	config_free(&cfg);

	parse_ok("[device]\nlimit = 20ms\ndefault = b\n[class 1:a]\nrate = 8mbit\nlimit = 5ms\n"
		 "[class 1:b]\nrate = 1mbit\nprio = 7\n", &cfg);
	cr_assert_eq(cls(&cfg, 0x1000a)->limit_ns, 5000000);
	cr_assert_eq(cls(&cfg, 0x1000b)->limit_ns, 20000000);
	cr_assert_eq(cls(&cfg, 0x1000b)->prio, 7);
	cr_assert_eq(cfg.dev.default_classid, 0x1000b);	/* bare minor, tc style */
	cr_assert_eq(cfg.dev.default_idx, (__u32)config_find_class(&cfg, 0x1000b));
	config_free(&cfg);
}

Test(defaults, aqm_device_and_class)
{
	struct htb_config cfg;
	const struct config_class *c;

	parse_ok("[class 1:a]\nrate = 8mbit\n", &cfg);
	c = &cfg.classes[0];
	cr_assert(c->aqm.codel && c->aqm.ecn);
	cr_assert_eq(c->aqm.target_ns, 5000000);
	cr_assert_eq(c->aqm.interval_ns, 100000000);
	config_free(&cfg);

	parse_ok("[device]\naqm = off\ntarget = 1ms\necn = off\n"
		 "[class 1:a]\nrate = 8mbit\naqm = codel\ninterval = 20ms\n"
		 "[class 1:b]\nrate = 8mbit\n", &cfg);
	c = cls(&cfg, 0x1000a);
	cr_assert(c->aqm.codel && !c->aqm.ecn);
	cr_assert_eq(c->aqm.target_ns, 1000000);	/* the device's */
	cr_assert_eq(c->aqm.interval_ns, 20000000);	/* its own */
	c = cls(&cfg, 0x1000b);
	cr_assert(!c->aqm.codel);
	cr_assert_eq(c->aqm.interval_ns, 100000000);
	config_free(&cfg);
}

/* The loader's conf: AQM on leaves only, in the flags, for 300 leaves of
 * two kinds (the plan's memo copies identical classes' confs). */
Test(defaults, aqm_in_the_plan)
{
	char text[16384], *t = text;
	struct htb_config cfg;
	struct plan pl = { 0 };
	__u32 *slot = calloc(301, sizeof(*slot));	/* the plan takes it */

	t += sprintf(t, "[class 1:1]\nrate = 1gbit\n");
	for (int i = 0; i < 300; i++)
		t += sprintf(t, "[class 1:%x]\nparent = 1:1\nrate = 1mbit\n%s",
			     0x100 + i, i % 2 ? "aqm = off\n" : "");
	parse_ok(text, &cfg);
	cr_assert_not_null(slot);
	for (__u32 i = 0; i < cfg.nclasses; i++)
		slot[i] = i;
	cr_assert_eq(plan_build(&pl, &cfg, slot, cfg.nclasses, cfg.nclasses), 0);
	for (__u32 i = 0; i < cfg.nclasses; i++) {
		const struct htb_class_conf *k = &pl.conf[i];
		bool want = cfg.classes[i].is_leaf && cfg.classes[i].aqm.codel;

		cr_assert_eq(!!(k->flags & HTB_CONF_AQM), want, "class %u", i);
		cr_assert(k->flags & HTB_CONF_ECN);
		cr_assert_eq(k->target_ns, 5000000);
		cr_assert_eq(k->mtu_ns, i ? 1514 * 8000ull : 1514 * 8ull,
			     "1514 bytes at 1 Mbit/s (1 Gbit/s for 1:1)");
		cr_assert_eq(k->classid, cfg.classes[i].classid);
	}
	plan_free(&pl);
	config_free(&cfg);
}

Test(matches, keys_for_the_maps)
{
	struct htb_config cfg;
	const struct config_class *c;
	const struct config_match *m;

	parse_ok("[class 1:1]\nrate = 10mbit\n"
		 "[class 1:10]\nparent = 1:1\nrate = 1mbit\n"
		 "match = dst 198.18.1.0/24\nmatch = src fd00::1\n"
		 "match = tcp dport 80-82\nmatch = sport 53\nmatch = mark 0x10/0xf0\n", &cfg);
	c = cls(&cfg, 0x10010);
	cr_assert_eq(c->nmatches, 5);
	cr_assert_eq(c->matches, &cfg.matches[0]);
	for (__u32 i = 0; i < c->nmatches; i++)
		cr_assert_eq(c->matches[i].class_idx, (__u32)(c - cfg.classes));
	m = &c->matches[0];
	cr_assert_eq(m->kind, CONFIG_MATCH_DST4);
	cr_assert_eq(m->key.lpm4.prefixlen, 24);
	cr_assert_arr_eq(m->key.lpm4.addr, ((__u8[]){ 198, 18, 1, 0 }), 4);
	cr_assert_eq(m->line, 6);
	m = &c->matches[1];
	cr_assert_eq(m->kind, CONFIG_MATCH_SRC6);
	cr_assert_eq(m->key.lpm6.prefixlen, 128);
	cr_assert_eq(m->key.lpm6.addr[0], 0xfd);
	cr_assert_eq(m->key.lpm6.addr[15], 1);
	m = &c->matches[2];
	cr_assert_eq(m->kind, CONFIG_MATCH_PORT);
	cr_assert_eq(m->key.port.proto, IPPROTO_TCP);
	cr_assert_eq(m->key.port.dir, HTB_PORT_DST);
	cr_assert_eq(m->key.port.port, 80);
	cr_assert_eq(m->port_last, 82);
	m = &c->matches[3];
	cr_assert_eq(m->key.port.proto, 0);
	cr_assert_eq(m->key.port.dir, HTB_PORT_SRC);
	cr_assert_eq(m->port_last, 53);
	m = &c->matches[4];
	cr_assert_eq(m->kind, CONFIG_MATCH_MARK);
	cr_assert_eq(m->key.mark.value, 0x10);
	cr_assert_eq(m->key.mark.mask, 0xf0);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_DST4], 1);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_SRC6], 1);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_PORT], 4);	/* 80, 81, 82 and 53 */
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_MARK], 1);
	config_free(&cfg);
}

Test(matches, precedence_data)
{
	struct htb_config cfg;

	/* masks come out most specific first, ties in order of appearance;
	 * overlapping ranges of one class count each port once */
	parse_ok("[class 1:1]\nrate = 1mbit\nmatch = mark 1/1\nmatch = mark 0x10/0xf0\n"
		 "match = mark 5\nmatch = mark 0x100/0xf00\nmatch = mark 0x20/0xff\n"
		 "match = udp dport 10-20\nmatch = udp dport 15-30\nmatch = dport 10\n"
		 "match = dst 198.18.0.0/16\nmatch = dst 198.18.0.0/16\n"
		 "[class 1:2]\nrate = 1mbit\nmatch = tcp dport 10\nmatch = dst 198.18.0.0/24\n",
		 &cfg);
	cr_assert_eq(cfg.nmasks, 5);
	cr_assert_eq(cfg.mark_masks[0], 0xffffffff);
	cr_assert_eq(cfg.mark_masks[1], 0xff);
	cr_assert_eq(cfg.mark_masks[2], 0xf0);
	cr_assert_eq(cfg.mark_masks[3], 0xf00);
	cr_assert_eq(cfg.mark_masks[4], 1);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_PORT], 21 + 1 + 1);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_DST4], 2);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_MARK], 5);
	config_free(&cfg);
}

Test(matches, conflicts_refused)
{
	static const char *const bad[] = {
		"[class 1:1]\nrate=1mbit\nmatch = dport 5-9\n[class 1:2]\nrate=1mbit\nmatch = dport 1-5\n",
		"[class 1:1]\nrate=1mbit\nmatch = udp sport 100\n[class 1:2]\nrate=1mbit\nmatch = udp sport 1-65535\n",
		"[class 1:1]\nrate=1mbit\nmatch = mark 3\n[class 1:2]\nrate=1mbit\nmatch = mark 0x3\n",
		"[class 1:1]\nrate=1mbit\nmatch = src fd00::/16\n[class 1:2]\nrate=1mbit\nmatch = src fd00:0::/16\n",
		/* the owner of the widest range is the same class: still caught */
		"[class 1:1]\nrate=1mbit\nmatch = dport 1-100\n[class 1:2]\nrate=1mbit\nmatch = dport 40-50\n"
		"[class 1:1]\nrate=1mbit\n",
		"[class 1:1]\nrate=1mbit\nmatch = dport 1-10\nmatch = dport 5-100\n[class 1:2]\nrate=1mbit\nmatch = dport 50\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *diag = refused(bad[i]);

		cr_assert(strstr(diag, "claimed by class") || strstr(diag, "overlaps") ||
			  strstr(diag, "duplicate class"), "case %zu: %s", i, diag);
		free(diag);
	}
}

/* One DSCP set per match, names as tc knows them; one map entry per
 * value, a value claimed twice by one class counted once. */
Test(matches, dscp_values_and_names)
{
	struct htb_config cfg;
	const struct config_class *c;

	parse_ok("[class 1:10]\nrate = 1mbit\nmatch = dscp ef,VA,0\nmatch = dscp 46\n"
		 "[class 1:20]\nrate = 1mbit\nmatch = dscp af11,AF43,cs7,le\n", &cfg);
	c = cls(&cfg, 0x10010);
	cr_assert_eq(c->nmatches, 2);
	cr_expect_eq(c->matches[0].kind, CONFIG_MATCH_DSCP);
	cr_expect_eq(c->matches[0].key.dscp, 1ull << 46 | 1ull << 44 | 1ull << 0);
	cr_expect_eq(c->matches[1].key.dscp, 1ull << 46);
	cr_expect_eq(cls(&cfg, 0x10020)->matches[0].key.dscp,
		     1ull << 10 | 1ull << 38 | 1ull << 56 | 1ull << 1);
	cr_expect_eq(cfg.nkeys[CONFIG_MATCH_DSCP], 7, "46, 44, 0, 10, 38, 56, 1");
	config_free(&cfg);
	free(refused("[class 1:10]\nrate = 1mbit\nmatch = dscp 46\n"
		     "[class 1:20]\nrate = 1mbit\nmatch = dscp 10,ef\n"));
}

Test(matches, any_and_specific_protocol_coexist)
{
	struct htb_config cfg;

	parse_ok("[class 1:1]\nrate=1mbit\nmatch = dport 53\n"
		 "[class 1:2]\nrate=1mbit\nmatch = udp dport 53\n"
		 "[class 1:3]\nrate=1mbit\nmatch = tcp dport 53\nmatch = tcp sport 53\n", &cfg);
	cr_assert_eq(cfg.nkeys[CONFIG_MATCH_PORT], 4);
	config_free(&cfg);
}

Test(classid, parse_and_print)
{
	char buf[CONFIG_CLASSID_BUF];
	__u32 id;

	cr_assert_eq(config_parse_classid("1:10", &id), 0);
	cr_assert_eq(id, 0x10010);
	cr_assert_eq(config_parse_classid("fffe:FFFF", &id), 0);
	cr_assert_eq(id, 0xfffeffff);
	cr_assert_eq(config_parse_classid("0001:000a", &id), 0);
	cr_assert_eq(id, 0x1000a);
	cr_assert_str_eq(config_sprint_classid(0x1000a, buf, sizeof(buf)), "1:a");
	static const char *const bad[] = {
		"", ":", "1:", ":1", "1:0", "0:1", "ffff:1", "1:10000", "1:-1",
		"1 :1", "1:1 ", "0x1:1", "1:1:1", "g:1", "10",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(config_parse_classid(bad[i], &id), -1, "'%s' accepted", bad[i]);
}

Test(diag, line_numbers_and_comments)
{
	/* '#' after a value is a comment; so is ';'; the line count survives
	 * blank lines, comments, CRLF and indented lines */
	char *diag = refused("# c\n\n[class 1:1]   # x\r\n  rate = 40mbit   # note\n"
			     "\tceil = 50mbit ; note\n\n; c\nrat = 1\n");

	cr_assert_str_eq(diag, "t.ini:8: unknown key 'rat' in [class 1:1] (did you mean 'rate'?)\n");
	free(diag);
}

Test(diag, long_lines)
{
	char text[2048];
	struct htb_config cfg;

	/* far beyond inih's 200-byte line buffer */
	snprintf(text, sizeof(text), "[class 1:1]\nrate = 1mbit%*s# %0600d\nprio = 3\n", 400, "", 0);
	parse_ok(text, &cfg);
	cr_assert_eq(cfg.classes[0].prio, 3);
	config_free(&cfg);
}

Test(diag, nothing_on_failure)
{
	struct htb_config cfg;
	char *diag = NULL;

	cr_assert_eq(parse("[class 1:1]\nrate = 1mbit\nmatch = dst 198.18.0.0/15\n"
			   "[class 1:2]\nrate = 0\n", &cfg, &diag), -1);
	cr_assert_eq(cfg.nclasses, 0);
	cr_assert_null(cfg.classes);
	cr_assert_null(cfg.matches);
	config_free(&cfg);	/* safe */
	free(diag);
}

Test(load, missing_file)
{
	struct htb_config cfg;
	char *diag = NULL;
	size_t len;
	FILE *f = open_memstream(&diag, &len);

	cr_assert_eq(config_load("/nonexistent/htbctl.ini", &cfg, f), -1);
	fclose(f);
	cr_assert_str_eq(diag, "/nonexistent/htbctl.ini: cannot open: No such file or directory\n");
	free(diag);
}

Test(tree, cycles_reported_once)
{
	/* a cycle 1:2 -> 1:3 -> 1:2 with 1:4 and 1:5 hanging below it, and a
	 * second cycle of ten classes (the message is cut after eight) */
	char *diag = refused("[class 1:1]\nrate = 1mbit\n"
			     "[class 1:4]\nparent = 1:3\nrate = 1mbit\n"
			     "[class 1:2]\nparent = 1:3\nrate = 1mbit\n"
			     "[class 1:3]\nparent = 1:2\nrate = 1mbit\n"
			     "[class 1:5]\nparent = 1:4\nrate = 1mbit\n"
			     "[class 1:10]\nparent=1:19\nrate=8\n[class 1:11]\nparent=1:10\nrate=8\n"
			     "[class 1:12]\nparent=1:11\nrate=8\n[class 1:13]\nparent=1:12\nrate=8\n"
			     "[class 1:14]\nparent=1:13\nrate=8\n[class 1:15]\nparent=1:14\nrate=8\n"
			     "[class 1:16]\nparent=1:15\nrate=8\n[class 1:17]\nparent=1:16\nrate=8\n"
			     "[class 1:18]\nparent=1:17\nrate=8\n[class 1:19]\nparent=1:18\nrate=8\n");
	const char *p;
	int n = 0;

	for (p = diag; (p = strstr(p, "parent cycle")); p++)
		n++;
	cr_assert_eq(n, 2, "%s", diag);
	cr_assert_not_null(strstr(diag, "t.ini:7: parent cycle: 1:2 -> 1:3 -> 1:2\n"), "%s", diag);
	cr_assert_not_null(strstr(diag, "t.ini:16: parent cycle: 1:10 -> 1:19 -> 1:18 -> 1:17 -> "
				  "1:16 -> 1:15 -> 1:14 -> 1:13 -> ... -> 1:10\n"), "%s", diag);
	free(diag);
}

Test(warnings, oversubscribed_parent)
{
	struct htb_config cfg;
	/* the sum saturates instead of wrapping around */
	char *diag = accepted("[class 1:1]\nrate = 1mbit\n"
			      "[class 1:2]\nparent = 1:1\nrate = 18446744073709551615bps\nquantum = 1\n"
			      "[class 1:3]\nparent = 1:1\nrate = 18446744073709551615bps\nquantum = 1\n",
			      &cfg);

	cr_assert_eq(cfg.nwarnings, 1, "%s", diag);
	cr_assert_not_null(strstr(diag, "t.ini:1: warning: the rates of the children of class 1:1 add up to"),
			   "%s", diag);
	config_free(&cfg);
	free(diag);
}

/* ---- class ids with several majors (docs/config.md) ---- */

Test(majors, several_majors_one_tree)
{
	struct htb_config cfg;
	const struct config_class *c;

	/* 1:10 and 2:10 are different classes; a bare parent minor takes the
	 * major of its own class */
	parse_ok("[device]\ndefault = 2:20\n"
		 "[class 1:1]\nrate = 10mbit\n"
		 "[class 1:10]\nparent = 1:1\nrate = 1mbit\n"
		 "[class 2:10]\nparent = 1:1\nrate = 1mbit\n"
		 "[class 2:20]\nparent = 10\nrate = 1mbit\n"
		 "[class fffe:ffff]\nparent = 1:10\nrate = 1mbit\n", &cfg);
	cr_assert_eq(cfg.nclasses, 5);
	cr_assert_eq(cfg.major, 0);		/* several */
	c = cls(&cfg, 0x20020);
	cr_assert_eq(cfg.classes[c->parent].classid, 0x20010);
	cr_assert_eq(c->depth, 3);
	cr_assert_eq(cfg.classes[cls(&cfg, 0xfffeffff)->parent].classid, 0x10010);
	cr_assert_eq(cfg.dev.default_classid, 0x20020);
	cr_assert_eq(cfg.dev.default_idx, (__u32)(c - cfg.classes));
	cr_assert_eq(config_find_class(&cfg, 0x10020), -1);
	cr_assert_eq(config_find_class(&cfg, 0x30010), -1);
	/* preorder as ever: 1:1, 1:10, fffe:ffff, 2:10, 2:20 */
	cr_assert_eq(cfg.classes[2].classid, 0xfffeffff);
	cr_assert_eq(cfg.classes[4].classid, 0x20020);
	config_free(&cfg);
}

Test(majors, bare_default_with_one_major)
{
	struct htb_config cfg;

	parse_ok("[device]\ndefault = b\n[class 5:a]\nrate = 8mbit\n"
		 "[class 5:b]\nparent = a\nrate = 1mbit\n", &cfg);
	cr_assert_eq(cfg.major, 5);
	cr_assert_eq(cfg.dev.default_classid, 0x5000b);
	cr_assert_eq(cfg.classes[cls(&cfg, 0x5000b)->parent].classid, 0x5000a);
	config_free(&cfg);
}

Test(majors, bare_default_ambiguous)
{
	char *diag = refused("[device]\ndefault = 30\n[class 1:30]\nrate = 1mbit\n"
			     "[class 2:30]\nrate = 1mbit\n");

	cr_assert_str_eq(diag, "t.ini:2: default '30' is ambiguous: classes use majors 1 and 2; "
			 "write MAJOR:MINOR\n");
	free(diag);
	diag = refused("[device]\ndefault = 030\n[class 1:30]\nrate = 1mbit\n"
		       "[class 2:30]\nrate = 1mbit\n[class 3:30]\nrate = 1mbit\n"
		       "[class 4:30]\nrate = 1mbit\n[class 5:30]\nrate = 1mbit\n");
	cr_assert_not_null(strstr(diag, "default '030' is ambiguous: classes use majors 1, 2, 3 "
				  "and 2 more; write MAJOR:MINOR"), "%s", diag);
	free(diag);
}

Test(majors, bare_parent_stays_in_its_major)
{
	char *diag = refused("[class 1:1]\nrate = 1mbit\n[class 2:10]\nparent = 1\nrate = 1mbit\n");

	cr_assert_str_eq(diag, "t.ini:4: parent 2:1 of class 2:10 does not exist "
			 "(a bare minor takes the major of its class)\n");
	free(diag);
}

/* n classes: 1:1 on top, the others its children, ids counting up through
 * the majors (1:2 .. 1:ffff, 2:1 ..). Caller frees. */
static char *many_classes(__u32 n)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	fputs("[class 1:1]\nrate = 100gbit\n", f);
	for (__u32 k = 1; k < n; k++)
		fprintf(f, "[class %x:%x]\nparent = 1:1\nrate = 8kbit\nquantum = 1000\n",
			1 + k / 65535, 1 + k % 65535);
	fclose(f);
	return text;
}

Test(majors, beyond_one_major)
{
	struct htb_config cfg;
	char *text = many_classes(100000), *diag = accepted(text, &cfg);

	cr_assert_eq(cfg.nclasses, 100000);
	cr_assert_eq(cfg.major, 0);
	cr_assert_eq(cfg.classes[0].nchildren, 99999);
	cr_assert_eq(cfg.classes[65534].classid, 0x1ffff);
	cr_assert_eq(cfg.classes[65535].classid, 0x20001);
	cr_assert_eq(config_find_class(&cfg, 0x20001), 65535);
	cr_assert_eq(config_find_class(&cfg, 0x20000 | (1 + 99999 % 65535)), 99999);
	config_free(&cfg);
	free(text);
	free(diag);
}

Test(majors, too_many_classes, .timeout = 60)
{
	char *text = many_classes(CONFIG_MAX_CLASSES + 2), *diag = refused(text);
	const char *p;
	int n = 0;

	for (p = diag; (p = strstr(p, "too many classes")); p++)
		n++;
	cr_assert_eq(n, 1, "%s", diag);		/* once */
	cr_assert_not_null(strstr(diag, "t.ini:4194303: too many classes: a config holds at most 1048576\n"),
			   "%.300s", diag);
	free(text);
	free(diag);
}

/* ---- directions (docs/config.md "Directions") ---- */

Test(directions, upload_defaults_to_the_plain_values)
{
	struct htb_config cfg;
	const struct config_class *c;

	parse_ok("[device]\nupload_dev = up0\n"
		 "[class 1:1]\nrate = 20mbit\nceil = 40mbit\nburst = 100k\n"
		 "[class 1:2]\nrate = 8mbit\nupload_rate = 2mbit\n"
		 "[class 1:3]\nrate = 8mbit\nceil = 16mbit\nupload_rate = 2mbit\n"
		 "quantum = 3000\nupload_cburst = 90k\n", &cfg);
	cr_assert_str_eq(cfg.dev.upload_dev, "up0");
	cr_assert_not(cfg.dev.ingress);
	/* no upload keys: the upload values are the plain ones */
	c = cls(&cfg, 0x10001);
	cr_assert_eq(c->up.rate, c->rate);
	cr_assert_eq(c->up.ceil, 5000000);
	cr_assert_eq(c->up.burst, 102400);
	cr_assert_eq(c->up.cburst, c->cburst);
	cr_assert_eq(c->up.quantum, c->quantum);
	/* upload_rate alone: ceil, bursts and quantum follow it as the plain
	 * ones follow rate */
	c = cls(&cfg, 0x10002);
	cr_assert_eq(c->up.rate, 250000);
	cr_assert_eq(c->up.ceil, 250000);
	cr_assert_eq(c->up.burst, config_default_burst(250000));
	cr_assert_eq(c->up.cburst, config_default_burst(250000));
	cr_assert_eq(c->up.quantum, 25000);
	cr_assert_eq(c->rate, 1000000);		/* download untouched */
	cr_assert_eq(c->quantum, 100000);
	/* a written ceil and quantum stay; an upload_cburst is its own */
	c = cls(&cfg, 0x10003);
	cr_assert_eq(c->up.ceil, 2000000);
	cr_assert_eq(c->up.quantum, 3000);
	cr_assert_eq(c->up.cburst, 92160);
	cr_assert_eq(c->up.burst, config_default_burst(250000));
	config_free(&cfg);
}

Test(directions, device_keys)
{
	struct htb_config cfg;
	char *w;

	parse_ok("[device]\ndirection = ingress\nifb = ifb-wan\nupload_dev = eth0\n"
		 "[class 1:1]\nrate = 1mbit\n", &cfg);
	cr_assert(cfg.dev.ingress);
	cr_assert_str_eq(cfg.dev.ifb, "ifb-wan");
	cr_assert_str_eq(cfg.dev.upload_dev, "eth0");
	config_free(&cfg);
	parse_ok("[device]\ndirection = egress\n[class 1:1]\nrate = 1mbit\n", &cfg);
	cr_assert_not(cfg.dev.ingress);
	cr_assert_eq(cfg.dev.ifb[0], '\0');
	cr_assert_eq(cfg.dev.upload_dev[0], '\0');
	config_free(&cfg);
	/* keys that do nothing where they stand are warned, not refused */
	w = accepted("[device]\nifb = x\n[class 1:1]\nrate = 1mbit\nupload_rate = 2mbit\n", &cfg);
	cr_assert(strstr(w, "t.ini:2: warning: ifb has no effect without direction = ingress"), "%s", w);
	cr_assert(strstr(w, "t.ini:5: warning: upload_* keys have no effect without [device] upload_dev"), "%s", w);
	free(w);
	config_free(&cfg);
}

Test(directions, refused)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "[device]\nupload_dev = a/b\n[class 1:1]\nrate = 1mbit\n",
		  "t.ini:2: invalid device name 'a/b' for 'upload_dev': it contains '/'" },
		{ "[device]\nifb = 0123456789abcdef\n[class 1:1]\nrate = 1mbit\n",
		  "t.ini:2: invalid device name '0123456789abcdef' for 'ifb': it is longer than 15 bytes" },
		{ "[device]\ndirection = in\n[class 1:1]\nrate = 1mbit\n",
		  "t.ini:2: invalid value 'in' for 'direction': expected egress or ingress" },
		{ "[class 1:1]\nrate = 1mbit\nupload_rate = 0\n",
		  "t.ini:3: invalid rate '0' for 'upload_rate'" },
		{ "[class 1:1]\nrate = 1mbit\nupload_ceil = fast\n",
		  "t.ini:3: invalid rate 'fast' for 'upload_ceil'" },
		{ "[class 1:1]\nrate = 1mbit\nupload_burst = 0\n",
		  "t.ini:3: invalid size '0' for 'upload_burst'" },
		{ "[device]\nupload_dev = u\n[class 1:1]\nrate = 1mbit\nupload_cburst = 100mb\n",
		  "t.ini:5: upload_cburst 100Mb of class 1:1 lasts more than 275s at its upload_ceil 1Mbit" },
		{ "[device]\nupload_rate = 1mbit\n[class 1:1]\nrate = 1mbit\n",
		  "t.ini:2: key 'upload_rate' belongs in a [class] section, not in [device]" },
		{ "[class 1:1]\nrate = 1mbit\nupload_dev = x\n",
		  "t.ini:3: key 'upload_dev' belongs in a [device] section, not in [class 1:1]" },
		{ "[class 1:1]\nrate = 1mbit\nupload_rat = 1mbit\n",
		  "t.ini:3: unknown key 'upload_rat' in [class 1:1] (did you mean 'upload_rate'?)" },
		{ "[class 1:1]\nrate = 1mbit\nupload_rate = 1mbit\nupload_rate = 2mbit\n",
		  "t.ini:4: duplicate key 'upload_rate' in [class 1:1] (first at line 3)" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *d = refused(bad[i].text);

		cr_assert(strstr(d, bad[i].msg), "want '%s', got '%s'", bad[i].msg, d);
		free(d);
	}
}

Test(directions, upload_checked_like_the_plain_values)
{
	struct htb_config cfg;
	char *w;

	w = accepted("[device]\nupload_dev = u\n"
		     "[class 1:1]\nrate = 10mbit\nupload_rate = 4mbit\n"
		     "[class 1:2]\nparent = 1:1\nrate = 5mbit\nupload_rate = 3mbit\nupload_ceil = 2mbit\n"
		     "[class 1:3]\nparent = 1:1\nrate = 5mbit\nupload_rate = 3mbit\nupload_burst = 1600\n", &cfg);
	cr_assert(strstr(w, "t.ini:10: warning: upload_ceil 2Mbit of class 1:2 is below its upload_rate 3Mbit"), "%s", w);
	cr_assert(strstr(w, "t.ini:15: warning: upload_burst 1600b of class 1:3 is less than one 64Kb GSO packet"), "%s", w);
	cr_assert(strstr(w, "t.ini:3: warning: the upload rates of the children of class 1:1 add up to 6Mbit, above its upload_rate 4Mbit"), "%s", w);
	/* download's rates add up to the parent's: no word about them */
	cr_assert_null(strstr(w, "warning: the rates of"), "%s", w);
	free(w);
	config_free(&cfg);
}

Test(directions, upload_view_mirrors_matches)
{
	struct htb_config cfg, up, down;
	const struct config_class *c;

	parse_ok("[device]\nupload_dev = u\n"
		 "[class 1:1]\nrate = 10mbit\nupload_rate = 4mbit\n"
		 "[class 1:10]\nparent = 1:1\nrate = 5mbit\nupload_rate = 1mbit\n"
		 "match = dst 198.18.5.7/32\nmatch = src fd00::/64\n"
		 "match = tcp dport 80-81\nmatch = udp sport 53\n"
		 "match = mark 0x10\nmatch = dscp 46\n", &cfg);
	cr_assert_eq(config_direction(&cfg, CONFIG_DIR_UPLOAD, &up), 0);
	cr_assert_eq(config_direction(&cfg, CONFIG_DIR_DOWNLOAD, &down), 0);
	cr_assert_eq(up.nclasses, 2);
	c = &up.classes[config_find_class(&up, 0x10010)];
	cr_assert_eq(c->rate, 125000);
	cr_assert_eq(c->ceil, 125000);
	cr_assert_eq(c->burst, config_default_burst(125000));
	cr_assert_eq(c->quantum, 12500);
	cr_assert_eq(c->nmatches, 6);
	cr_assert(c->matches >= up.matches && c->matches < up.matches + up.nmatches);
	cr_assert_eq(c->matches[0].kind, CONFIG_MATCH_SRC4);
	cr_assert_arr_eq(c->matches[0].key.lpm4.addr, ((__u8[]){ 198, 18, 5, 7 }), 4);
	cr_assert_eq(c->matches[1].kind, CONFIG_MATCH_DST6);
	cr_assert_eq(c->matches[2].key.port.dir, HTB_PORT_SRC);
	cr_assert_eq(c->matches[2].key.port.proto, IPPROTO_TCP);
	cr_assert_eq(c->matches[3].key.port.dir, HTB_PORT_DST);
	cr_assert_eq(c->matches[4].kind, CONFIG_MATCH_MARK);
	cr_assert_eq(c->matches[5].kind, CONFIG_MATCH_DSCP);
	cr_assert_eq(up.nkeys[CONFIG_MATCH_SRC4], 1);
	cr_assert_eq(up.nkeys[CONFIG_MATCH_DST4], 0);
	cr_assert_eq(up.nkeys[CONFIG_MATCH_DST6], 1);
	cr_assert_eq(up.nkeys[CONFIG_MATCH_SRC6], 0);
	cr_assert_eq(up.nkeys[CONFIG_MATCH_PORT], 3);
	/* download is the config as written; the original is untouched */
	c = &down.classes[config_find_class(&down, 0x10010)];
	cr_assert_eq(c->rate, 625000);
	cr_assert_eq(c->matches[0].kind, CONFIG_MATCH_DST4);
	cr_assert_eq(cfg.matches[0].kind, CONFIG_MATCH_DST4);
	cr_assert_eq(cfg.classes[1].rate, 625000);
	config_free(&up);
	config_free(&down);
	config_free(&cfg);
	cr_assert_str_eq(config_dir_name(CONFIG_DIR_UPLOAD), "upload");
	cr_assert_str_eq(config_dir_name(CONFIG_DIR_DOWNLOAD), "download");
}

/* fq's parameters take a class's limit in force: ten full frames at a
 * 185 kbit/s ceil (654.7 ms), not the configured 100 ms. */
Test(config, fq_demand_takes_the_limit_in_force)
{
	struct htb_config cfg;
	struct fq_demand d;

	parse_ok("[device]\ndefault = 1:20\n"
		 "[class 1:1]\nrate = 20mbit\n"
		 "[class 1:10]\nparent = 1:1\nrate = 185kbit\n"
		 "[class 1:20]\nparent = 1:1\nrate = 10mbit\n", &cfg);
	plan_fq_demand(&cfg, &d);
	cr_expect_eq(d.max_limit_ns, 10ull * 1514 * 1000000000ull / 23125);
	/* 1:20's 10 Mbit/s x 100 ms is the most bytes */
	cr_expect_eq(d.max_class_bytes, 125000);
	config_free(&cfg);
}

/* cls_minor's major: the one most leaves have, the lowest of a tie,
 * and the highest minor of its leaves (inner classes do not count). */
Test(config, the_main_major_of_the_leaves)
{
	struct htb_config cfg;
	__u32 major, top;

	parse_ok("[device]\ndefault = 2:10\n"
		 "[class 1:1]\nrate = 20mbit\n"
		 "[class 1:fff0]\nparent = 1:1\nrate = 1mbit\n"
		 "[class 2:1]\nrate = 20mbit\n"
		 "[class 2:10]\nparent = 2:1\nrate = 1mbit\n"
		 "[class 2:20]\nparent = 2:1\nrate = 1mbit\n", &cfg);
	cr_assert_eq(plan_main_major(&cfg, &major, &top), 0);
	cr_expect_eq(major, 2);
	cr_expect_eq(top, 0x20);
	config_free(&cfg);
	parse_ok("[device]\ndefault = 2:10\n"
		 "[class 1:1]\nrate = 20mbit\n"
		 "[class 1:fff0]\nparent = 1:1\nrate = 1mbit\n"
		 "[class 2:1]\nrate = 20mbit\n"
		 "[class 2:10]\nparent = 2:1\nrate = 1mbit\n", &cfg);
	cr_assert_eq(plan_main_major(&cfg, &major, &top), 0);
	cr_expect_eq(major, 1, "a tie: the lowest major");
	cr_expect_eq(top, 0xfff0);
	config_free(&cfg);
}

/* config/match.c reads dotted quads itself and leaves the rest to
 * inet_pton: what it takes, and the bytes, are inet_pton's. */
Test(matches, dotted_quads_as_inet_pton)
{
	static const char *const addrs[] = {
		"1.2.3.4", "0.0.0.0", "255.255.255.255", "198.18.0.10",
		"01.2.3.4", "1.2.3.04", "00.1.2.3", "1.2.3.256", "1.2.3.2555",
		"1.2.3", "1.2.3.4.5", "1..3.4", "1.2.3.", ".1.2.3", "1.2.3.4x",
		"1.2.3.-4", "1.2.3.0x4", "::ffff:1.2.3.4", "1.2.3.4:5",
	};
	char text[128];

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		__u8 want[16];
		int v4 = inet_pton(AF_INET, addrs[i], want) == 1;
		bool ok = v4 || inet_pton(AF_INET6, addrs[i], want) == 1;
		struct htb_config cfg;
		char *diag = NULL;

		snprintf(text, sizeof(text), "[class 1:1]\nrate = 1mbit\nmatch = dst %s\n", addrs[i]);
		cr_assert_eq(parse(text, &cfg, &diag), ok ? 0 : -1, "%s: %s", addrs[i], diag);
		if (v4) {
			cr_assert_eq(cfg.matches[0].kind, CONFIG_MATCH_DST4, "%s", addrs[i]);
			cr_assert_arr_eq(cfg.matches[0].key.lpm4.addr, want, 4, "%s", addrs[i]);
		}
		if (ok)
			config_free(&cfg);
		free(diag);
	}
}

/* A value is parsed once per run of the same text (config/keys.c
 * memo_val): the same value each time, a new text parsed anew, and a bad
 * value reported at each line it is on. */
Test(diag, repeated_values)
{
	struct htb_config cfg;
	char *diag;

	parse_ok("[class 1:1]\nrate = 8mbit\n"
		 "[class 1:2]\nparent = 1\nrate = 2mbit\nceil = 4mbit\n"
		 "[class 1:3]\nparent = 1\nrate = 2mbit\nceil = 4mbit\n"
		 "[class 1:4]\nparent = 1\nrate = 3mbit\nceil = 4mbit\n"
		 "[class 1:5]\nparent = 1:1\nrate = 2mbit\n", &cfg);
	cr_assert_eq(cls(&cfg, 0x10002)->rate, 250000);
	cr_assert_eq(cls(&cfg, 0x10003)->rate, 250000);
	cr_assert_eq(cls(&cfg, 0x10004)->rate, 375000);
	cr_assert_eq(cls(&cfg, 0x10005)->rate, 250000);
	cr_assert_eq(cls(&cfg, 0x10004)->ceil, 500000);
	for (__u32 m = 2; m <= 5; m++)
		cr_assert_eq(cls(&cfg, 0x10000 | m)->parent, (__u32)config_find_class(&cfg, 0x10001));
	config_free(&cfg);

	diag = refused("[class 1:1]\nrate = 8mbit\n"
		       "[class 1:2]\nparent = 1\nrate = 2mbt\n"
		       "[class 1:3]\nparent = 1\nrate = 2mbt\n");
	cr_assert_str_eq(diag,
			 "t.ini:5: invalid rate '2mbt' for 'rate': unknown unit\n"
			 "t.ini:8: invalid rate '2mbt' for 'rate': unknown unit\n");
	free(diag);
}

/* From about 58 kB of text the class and match arrays are reserved from
 * its length (config/keys.c cfg_reserve): many classes, and few classes in
 * a long text, parse as ever. */
Test(diag, long_texts)
{
	size_t cap = 4 << 20, off = 0;
	char *text = malloc(cap);
	struct htb_config cfg;

	cr_assert_not_null(text);
	off += snprintf(text + off, cap - off, "[class 1:1]\nrate = 100mbit\n");
	for (unsigned i = 2; i <= 20000; i++)
		off += snprintf(text + off, cap - off,
				"[class 1:%x]\nparent = 1:1\nrate = 1kbit\nmatch = dst 10.%u.%u.%u\n",
				i, i >> 16, (i >> 8) & 0xff, i & 0xff);
	parse_ok(text, &cfg);
	cr_assert_eq(cfg.nclasses, 20000);
	cr_assert_eq(cfg.nmatches, 19999);
	cr_assert_eq(cls(&cfg, 0x14e20)->matches[0].key.lpm4.addr[3], 0x20);
	config_free(&cfg);

	off = snprintf(text, cap, "[class 1:1]\nrate = 1mbit\n");
	while (off < (2u << 20))
		off += snprintf(text + off, cap - off, "# %100s\n", "");
	snprintf(text + off, cap - off, "[class 1:2]\nparent = 1:1\nrate = 1kbit\n");
	parse_ok(text, &cfg);
	cr_assert_eq(cfg.nclasses, 2);
	config_free(&cfg);
	free(text);
}
