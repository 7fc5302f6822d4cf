// SPDX-License-Identifier: GPL-2.0
/*
 * `match =` rules, parsed straight into the classifier maps' key structs
 * (include/htb/types.h): prefixes, port ranges, marks, cgroups.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "common/common.h"
#include "config/priv.h"
#include "common/units.h"

#define MATCH_USAGE "expected src|dst PREFIX, [tcp|udp] sport|dport PORT[-PORT], " \
	"mark VALUE[/MASK], dscp VALUE[,VALUE...] or cgroup PATH"

/* The next blank-separated word of *p into out; "" at the end. Returns
 * false if the word does not fit. */
static bool next_word(const char **p, char *out, size_t outlen)
{
	const char *s = *p, *e;

	while (*s == ' ' || *s == '\t')
		s++;
	for (e = s; *e && *e != ' ' && *e != '\t'; e++)
		;
	*p = e;
	if ((size_t)(e - s) >= outlen) {
		out[0] = '\0';
		return false;
	}
	memcpy(out, s, e - s);
	out[e - s] = '\0';
	return true;
}

static int match_err(struct cfg_parse *ps, unsigned line, const char *v,
		     const char *fmt, const char *arg)
{
	char msg[256], q[MSG_QUOTE_BUF];

	snprintf(msg, sizeof(msg), fmt, arg);
	cfg_error(&ps->diag, line, "invalid match %s: %s", msg_quote(q, sizeof(q), v), msg);
	return -1;
}

/* A dotted quad as inet_pton(AF_INET) takes it (four decimal numbers of
 * 0..255 without leading zeros, nothing else) into 4 bytes; false for
 * anything else, which inet_pton then reads as before. Its calls were 5%
 * of a 100,392-class reload (docs/log.md 2026-12-06, second reload
 * section). */
static bool dotted_quad(const char *s, __u8 *bytes)
{
	for (int i = 0; i < 4; i++) {
		unsigned v = 0, n = 0;

		if (i && *s++ != '.')
			return false;
		for (; *s >= '0' && *s <= '9'; s++, n++) {
			if (n && v == 0)
				return false;	/* a leading zero */
			v = v * 10 + (*s - '0');
			if (v > 255)
				return false;
		}
		if (!n)
			return false;
		bytes[i] = (__u8)v;
	}
	return !*s;
}

static int parse_prefix(struct cfg_parse *ps, unsigned line, const char *v,
			const char *word, bool dst, struct config_match *m)
{
	char addr[INET6_ADDRSTRLEN + 8], net[INET6_ADDRSTRLEN];
	const char *slash = strchr(word, '/');
	size_t alen = slash ? (size_t)(slash - word) : strlen(word);
	__u8 bytes[16];
	unsigned maxlen, nbytes;
	bool host_bits = false;
	__u64 plen;
	int af;

	if (alen >= sizeof(addr))
		return match_err(ps, line, v, "invalid address '%s'", word);
	memcpy(addr, word, alen);
	addr[alen] = '\0';
	if (dotted_quad(addr, bytes) || inet_pton(AF_INET, addr, bytes) == 1) {
		af = AF_INET;
		maxlen = 32;
	} else if (inet_pton(AF_INET6, addr, bytes) == 1) {
		af = AF_INET6;
		maxlen = 128;
	} else {
		return match_err(ps, line, v,
				 "invalid address '%s' (expected IPv4 or IPv6, optionally /LENGTH)",
				 addr);
	}
	plen = maxlen;
	if (slash && parse_uint(slash + 1, 10, maxlen, &plen) != UNIT_OK)
		return match_err(ps, line, v, af == AF_INET ?
				 "invalid prefix length '%s' (expected 0..32)" :
				 "invalid prefix length '%s' (expected 0..128)", slash + 1);
	nbytes = maxlen / 8;
	for (unsigned i = 0; i < nbytes; i++) {
		unsigned keep = plen >= (i + 1) * 8 ? 8 : plen > i * 8 ? plen - i * 8 : 0;
		__u8 mask = keep ? (__u8)(0xff << (8 - keep)) : 0;

		if (bytes[i] & ~mask)
			host_bits = true;
		bytes[i] &= mask;
	}
	if (host_bits) {
		char msg[160];

		inet_ntop(af, bytes, net, sizeof(net));
		snprintf(msg, sizeof(msg), "%s has host bits set (did you mean %s/%u?)",
			 word, net, (unsigned)plen);
		return match_err(ps, line, v, "%s", msg);
	}
	if (af == AF_INET) {
		m->kind = dst ? CONFIG_MATCH_DST4 : CONFIG_MATCH_SRC4;
		m->key.lpm4.prefixlen = (__u32)plen;
		memcpy(m->key.lpm4.addr, bytes, 4);
	} else {
		m->kind = dst ? CONFIG_MATCH_DST6 : CONFIG_MATCH_SRC6;
		m->key.lpm6.prefixlen = (__u32)plen;
		memcpy(m->key.lpm6.addr, bytes, 16);
	}
	return 0;
}

static int parse_port(struct cfg_parse *ps, unsigned line, const char *v,
		      const char *word, const char *what, __u64 *port)
{
	enum unit_err e = parse_uint(word, 10, 65535, port);

	if (e == UNIT_OVERFLOW || (e == UNIT_OK && *port == 0)) {
		char msg[96];

		snprintf(msg, sizeof(msg), "%s '%s' out of range 1..65535", what, word);
		return match_err(ps, line, v, "%s", msg);
	}
	if (e != UNIT_OK) {
		char msg[96];

		snprintf(msg, sizeof(msg), "invalid %s '%s': %s", what, word, unit_strerror(e));
		return match_err(ps, line, v, "%s", msg);
	}
	return 0;
}

static int parse_ports(struct cfg_parse *ps, unsigned line, const char *v,
		       const char *word, struct config_match *m)
{
	char lo_s[16];
	const char *dash = strchr(word, '-');
	__u64 lo, hi;

	if (!*word)
		return match_err(ps, line, v, "missing port after '%s'",
				 m->key.port.dir == HTB_PORT_DST ? "dport" : "sport");
	if (dash) {
		if ((size_t)(dash - word) >= sizeof(lo_s))
			return match_err(ps, line, v, "invalid port range '%s'", word);
		memcpy(lo_s, word, dash - word);
		lo_s[dash - word] = '\0';
		if (parse_port(ps, line, v, lo_s, "port", &lo) ||
		    parse_port(ps, line, v, dash + 1, "port", &hi))
			return -1;
		if (lo > hi)
			return match_err(ps, line, v,
					 "port range '%s' is backwards (first port above last)", word);
	} else {
		if (parse_port(ps, line, v, word, "port", &lo))
			return -1;
		hi = lo;
	}
	m->kind = CONFIG_MATCH_PORT;
	m->key.port.port = (__u16)lo;
	m->port_last = (__u16)hi;
	return 0;
}

static int parse_mark(struct cfg_parse *ps, unsigned line, const char *v,
		      const char *word, struct config_match *m)
{
	char val_s[24];
	const char *slash = strchr(word, '/');
	__u64 val, mask = 0xffffffffu;
	enum unit_err e;
	__u32 i;

	if (!*word)
		return match_err(ps, line, v, "missing value after '%s'", "mark");
	if ((slash ? (size_t)(slash - word) : strlen(word)) >= sizeof(val_s))
		return match_err(ps, line, v, "invalid mark '%s'", word);
	snprintf(val_s, sizeof(val_s), "%.*s",
		 (int)(slash ? slash - word : (int)strlen(word)), word);
	e = parse_uint(val_s, 0, 0xffffffffu, &val);
	if (e != UNIT_OK) {
		char msg[96];

		snprintf(msg, sizeof(msg), "invalid mark value '%s': %s", val_s,
			 e == UNIT_OVERFLOW ? "above 0xffffffff" : unit_strerror(e));
		return match_err(ps, line, v, "%s", msg);
	}
	if (slash) {
		e = parse_uint(slash + 1, 0, 0xffffffffu, &mask);
		if (e != UNIT_OK) {
			char msg[96];

			snprintf(msg, sizeof(msg), "invalid mark mask '%s': %s", slash + 1,
				 e == UNIT_OVERFLOW ? "above 0xffffffff" : unit_strerror(e));
			return match_err(ps, line, v, "%s", msg);
		}
		if (mask == 0)
			return match_err(ps, line, v, "%s",
					 "mask 0 matches every packet (use [device] default instead)");
	}
	if (val & ~mask) {
		char msg[96];

		snprintf(msg, sizeof(msg), "value 0x%llx has bits outside mask 0x%llx",
			 (unsigned long long)val, (unsigned long long)mask);
		return match_err(ps, line, v, "%s", msg);
	}
	for (i = 0; i < ps->nmasks && ps->masks[i] != mask; i++)
		;
	if (i == ps->nmasks) {
		if (ps->nmasks == HTB_MAX_MARK_MASKS) {
			char msg[128];

			snprintf(msg, sizeof(msg),
				 "mask 0x%llx would be distinct mask number %d; at most %d per config",
				 (unsigned long long)mask, HTB_MAX_MARK_MASKS + 1,
				 HTB_MAX_MARK_MASKS);
			return match_err(ps, line, v, "%s", msg);
		}
		ps->masks[ps->nmasks++] = (__u32)mask;
	}
	m->kind = CONFIG_MATCH_MARK;
	m->key.mark.value = (__u32)val;
	m->key.mark.mask = (__u32)mask;
	return 0;
}

/* DSCP names (RFC 2474 class selectors, RFC 2597 assured forwarding,
 * RFC 3246 expedited forwarding, RFC 5865 voice admit, RFC 8622 lower
 * effort), as tc and iptables accept them. */
static const struct { const char *name; __u8 value; } dscp_names[] = {
	{ "cs0", 0 }, { "cs1", 8 }, { "cs2", 16 }, { "cs3", 24 }, { "cs4", 32 },
	{ "cs5", 40 }, { "cs6", 48 }, { "cs7", 56 },
	{ "af11", 10 }, { "af12", 12 }, { "af13", 14 }, { "af21", 18 },
	{ "af22", 20 }, { "af23", 22 }, { "af31", 26 }, { "af32", 28 },
	{ "af33", 30 }, { "af41", 34 }, { "af42", 36 }, { "af43", 38 },
	{ "ef", 46 }, { "va", 44 }, { "le", 1 },
};

static int dscp_value(const char *s, __u64 *out)
{
	for (size_t i = 0; i < sizeof(dscp_names) / sizeof(dscp_names[0]); i++) {
		if (!strcasecmp(s, dscp_names[i].name)) {
			*out = dscp_names[i].value;
			return 0;
		}
	}
	return parse_uint(s, 10, 63, out) == UNIT_OK ? 0 : -1;
}

/* dscp VALUE[,VALUE...]: values 0..63 (the DS field's upper six bits, in
 * IPv4's TOS byte and IPv6's traffic class) or their names. */
static int parse_dscp(struct cfg_parse *ps, unsigned line, const char *v,
		      const char *list, struct config_match *m)
{
	char buf[80], *save = NULL;

	if (!*list)
		return match_err(ps, line, v, "%s", "missing value after 'dscp' "
				 "(0..63 or a name such as ef, af41, cs1)");
	if (list[strlen(list) - 1] == ',' || strstr(list, ",,") || *list == ',')
		return match_err(ps, line, v, "empty DSCP value in '%s'", list);
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		__u64 d;

		if (dscp_value(w, &d))
			return match_err(ps, line, v, "invalid DSCP '%s' (expected 0..63 "
					 "or a name such as ef, af41, cs1)", w);
		m->key.dscp |= 1ull << d;
	}
	m->kind = CONFIG_MATCH_DSCP;
	return 0;
}

static bool is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Relative cgroup paths are below the cgroup v2 mount: /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid (v1 + v2) system. An absolute path
 * that is not itself on cgroup2 is read the way /proc/PID/cgroup writes
 * it ("0::/system.slice/x.service"): below that mount too. */
static const char *cgroup_root(struct cfg_parse *ps)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

	if (ps->cgroup_root_state == 0) {
		ps->cgroup_root_state = -1;
		for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
			if (is_cgroup2(roots[i])) {
				snprintf(ps->cgroup_root, sizeof(ps->cgroup_root), "%s", roots[i]);
				ps->cgroup_root_state = 1;
				break;
			}
		}
	}
	return ps->cgroup_root_state > 0 ? ps->cgroup_root : NULL;
}

/* fmt takes the full path, then detail; full is freed. */
static int cgroup_err(struct cfg_parse *ps, unsigned line, const char *v,
		      const char *fmt, char *full, const char *detail)
{
	char q[MSG_QUOTE_BUF], shown[200], msg[400];

	msg_clip(shown, sizeof(shown), full);
	snprintf(msg, sizeof(msg), fmt, shown, detail);
	free(full);
	cfg_error(&ps->diag, line, "invalid match %s: %s", msg_quote(q, sizeof(q), v), msg);
	return -1;
}

static int parse_cgroup(struct cfg_parse *ps, unsigned line, const char *v,
			const char *path, struct config_match *m)
{
	const char *root = NULL;
	struct stat st;
	char *full;
	size_t len;

	if (!*path)
		return match_err(ps, line, v, "missing path after '%s'", "cgroup");
	if (path[0] != '/' || !is_cgroup2(path)) {
		root = cgroup_root(ps);
		if (!root)
			return match_err(ps, line, v, "%s",
					 "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified");
	}
	len = strlen(path) + (root ? strlen(root) + 1 : 0) + 1;
	full = malloc(len);
	if (!full) {
		cfg_error(&ps->diag, line, "out of memory");
		return -1;
	}
	if (root)
		snprintf(full, len, "%s/%s", root, path + strspn(path, "/"));
	else
		snprintf(full, len, "%s", path);
	if (stat(full, &st))
		return cgroup_err(ps, line, v, "cgroup %s: %s", full, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cgroup_err(ps, line, v, "cgroup %s is not a directory%s", full, "");
	if (!is_cgroup2(full))
		return cgroup_err(ps, line, v, "%s is not in a cgroup v2 hierarchy%s", full, "");
	free(full);
	m->kind = CONFIG_MATCH_CGROUP;
	m->key.cgroup_id = st.st_ino;
	m->cgroup_path = strdup(path);
	if (!m->cgroup_path) {
		cfg_error(&ps->diag, line, "out of memory");
		return -1;
	}
	return 0;
}

int cfg_parse_match(struct cfg_parse *ps, const char *v, unsigned line,
		    struct config_match *m)
{
	static const char *const words[] = {
		"src", "dst", "sport", "dport", "tcp", "udp", "mark", "dscp", "cgroup"
	};
	char w1[16], w2[80], w3[80];
	const char *p = v, *sug;
	int ret;

	memset(m, 0, sizeof(*m));
	m->line = line;
	if (!next_word(&p, w1, sizeof(w1)) || !*w1) {
		if (!*w1 && !*p)
			return match_err(ps, line, v, "%s", MATCH_USAGE);
		goto unknown;
	}
	if (!strcmp(w1, "cgroup")) {
		char *path = strdup(p + strspn(p, " \t"));
		size_t l;

		if (!path) {
			cfg_error(&ps->diag, line, "out of memory");
			return -1;
		}
		for (l = strlen(path); l && (path[l - 1] == ' ' || path[l - 1] == '\t'); l--)
			path[l - 1] = '\0';
		ret = parse_cgroup(ps, line, v, path, m);
		free(path);
		return ret;
	}
	if (!next_word(&p, w2, sizeof(w2)))
		return match_err(ps, line, v, "'%s' is followed by an overlong word", w1);
	if (!strcmp(w1, "tcp") || !strcmp(w1, "udp")) {
		m->key.port.proto = w1[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP;
		if (strcmp(w2, "sport") && strcmp(w2, "dport"))
			return match_err(ps, line, v, "expected sport or dport after '%s'", w1);
		memcpy(w1, w2, 6);
		if (!next_word(&p, w2, sizeof(w2)))
			return match_err(ps, line, v, "invalid port range after '%s'", w1);
	}
	if (!strcmp(w1, "src") || !strcmp(w1, "dst")) {
		if (!*w2)
			return match_err(ps, line, v, "missing prefix after '%s'", w1);
		ret = parse_prefix(ps, line, v, w2, w1[0] == 'd', m);
	} else if (!strcmp(w1, "sport") || !strcmp(w1, "dport")) {
		m->key.port.dir = w1[0] == 'd' ? HTB_PORT_DST : HTB_PORT_SRC;
		ret = parse_ports(ps, line, v, w2, m);
	} else if (!strcmp(w1, "mark")) {
		ret = parse_mark(ps, line, v, w2, m);
	} else if (!strcmp(w1, "dscp")) {
		ret = parse_dscp(ps, line, v, w2, m);
	} else {
		goto unknown;
	}
	if (ret)
		return ret;
	if (!next_word(&p, w3, sizeof(w3)) || *w3)
		return match_err(ps, line, v, "unexpected '%s' at the end", w3);
	return 0;
unknown:
	sug = cfg_suggest(w1, words, sizeof(words) / sizeof(words[0]));
	if (sug) {
		char msg[64];

		snprintf(msg, sizeof(msg), "unknown type '%s' (did you mean '%s'?)", w1, sug);
		return match_err(ps, line, v, "%s", msg);
	}
	if (*w1) {
		char msg[200];

		snprintf(msg, sizeof(msg), "unknown type '%s': %s", w1, MATCH_USAGE);
		return match_err(ps, line, v, "%s", msg);
	}
	return match_err(ps, line, v, "%s", MATCH_USAGE);
}

const char *cfg_prefix_dir(const struct config_match *m)
{
	return m->kind == CONFIG_MATCH_DST4 || m->kind == CONFIG_MATCH_DST6 ? "dst" : "src";
}

char *cfg_sprint_prefix(const struct config_match *m, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	bool v6 = m->kind == CONFIG_MATCH_DST6 || m->kind == CONFIG_MATCH_SRC6;

	inet_ntop(v6 ? AF_INET6 : AF_INET,
		  v6 ? (const void *)m->key.lpm6.addr : (const void *)m->key.lpm4.addr,
		  a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, v6 ? m->key.lpm6.prefixlen : m->key.lpm4.prefixlen);
	return buf;
}

char *cfg_sprint_dscp(__u64 mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int d = 0; d < 64 && off < len; d++)
		if (mask & (1ull << d))
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", d);
	return buf;
}

char *cfg_sprint_match(const struct config_match *m, char *buf, size_t len)
{
	char a[CFG_PREFIX_BUF];
	const char *proto;

	switch (m->kind) {
	case CONFIG_MATCH_MARK:
		snprintf(buf, len, "mark 0x%x/0x%x", m->key.mark.value, m->key.mark.mask);
		break;
	case CONFIG_MATCH_DST4:
	case CONFIG_MATCH_SRC4:
	case CONFIG_MATCH_DST6:
	case CONFIG_MATCH_SRC6:
		snprintf(buf, len, "%s %s", cfg_prefix_dir(m), cfg_sprint_prefix(m, a, sizeof(a)));
		break;
	case CONFIG_MATCH_PORT:
		proto = m->key.port.proto == IPPROTO_TCP ? "tcp " :
			m->key.port.proto == IPPROTO_UDP ? "udp " : "";
		if (m->port_last != m->key.port.port)
			snprintf(buf, len, "%s%s %u-%u", proto,
				 m->key.port.dir == HTB_PORT_DST ? "dport" : "sport",
				 m->key.port.port, m->port_last);
		else
			snprintf(buf, len, "%s%s %u", proto,
				 m->key.port.dir == HTB_PORT_DST ? "dport" : "sport",
				 m->key.port.port);
		break;
	case CONFIG_MATCH_DSCP:
	{
		char d[CFG_DSCP_BUF];

		snprintf(buf, len, "dscp %s", cfg_sprint_dscp(m->key.dscp, d, sizeof(d)));
		break;
	}
	case CONFIG_MATCH_CGROUP:
		snprintf(buf, len, "cgroup %s", m->cgroup_path ? m->cgroup_path : "?");
		break;
	default:
		snprintf(buf, len, "?");
	}
	return buf;
}
