// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the INI file: inih splits `key = value` lines; a line reader of
 * our own feeds it, because Debian's libinih (55, default build options)
 * does not give what the config needs:
 *  - no line numbers (INI_HANDLER_LINENO=0): the reader counts lines, and
 *    inih calls the handler for a line before it asks for the next one;
 *  - inline comments only with ';' (INI_INLINE_COMMENT_PREFIXES=";"), so
 *    `rate = 40mbit  # note` would arrive with the note: the reader drops a
 *    '#' or ';' comment that starts a line or follows a blank;
 *  - no call for a section without keys (INI_CALL_HANDLER_ON_NEW_SECTION=0)
 *    and sections cut at 50 characters: the reader opens sections itself;
 *  - multi-line values (a line starting with a blank continues the
 *    previous key): the reader strips leading blanks, so an indented line
 *    is an ordinary line;
 *  - 200-byte line buffer (longer lines split into bogus ones): a longer
 *    line reaches inih as `key =` and the handler takes the value from the
 *    reader;
 *  - syntax errors reported only as the first bad line of inih's own
 *    count: the reader notices a key line the handler was not called for.
 * Duplicate keys reach the handler once each: `match` may repeat, any
 * other key given twice in one section is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_priv.h"
#include "units.h"

#define CFG_MAX_FILE (64u << 20)

static const char *const dev_keys[DK_MAX] = {
	[DK_DEFAULT] = "default", [DK_HYSTERESIS] = "hysteresis",
	[DK_R2Q] = "r2q", [DK_LIMIT] = "limit", [DK_OVERHEAD] = "overhead",
	[DK_MPU] = "mpu", [DK_LINKLAYER] = "linklayer",
};

static const char *const class_keys[CK_MAX] = {
	[CK_PARENT] = "parent", [CK_RATE] = "rate", [CK_CEIL] = "ceil",
	[CK_BURST] = "burst", [CK_CBURST] = "cburst", [CK_PRIO] = "prio",
	[CK_QUANTUM] = "quantum", [CK_LIMIT] = "limit", [CK_MATCH] = "match",
};

struct reader {
	struct cfg_parse *ps;
	const char *p, *end;	/* text not read yet */
	unsigned lineno;	/* line last handed to inih */
	bool expect_call;	/* that line was a key line ... */
	bool got_call;		/* ... and inih called the handler for it */
	bool use_longval;
	char *longval;		/* value of a line too long for inih */
	size_t longval_cap;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int find_key(const char *name, const char *const *keys, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, keys[i]))
			return i;
	return -1;
}

/* ---- values ---- */

static bool val_err(struct cfg_parse *ps, unsigned line, const char *what,
		    const char *key, const char *v, enum unit_err e)
{
	cfg_error(&ps->diag, line, "invalid %s '%s' for '%s': %s", what, v, key,
		  unit_strerror(e));
	return false;
}

static bool val_rate(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 *out)
{
	enum unit_err e = parse_rate(v, out);

	if (e == UNIT_OK && *out == 0)
		e = UNIT_ZERO_RATE;
	return e == UNIT_OK || val_err(ps, line, "rate", key, v, e);
}

static bool val_size(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 *out)
{
	enum unit_err e = parse_size(v, out);

	if (e != UNIT_OK)
		return val_err(ps, line, "size", key, v, e);
	if (*out == 0) {
		cfg_error(&ps->diag, line, "invalid size '%s' for '%s': must be at least 1 byte",
			  v, key);
		return false;
	}
	return true;
}

static bool val_time(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 *out)
{
	enum unit_err e = parse_time(v, out);

	if (e != UNIT_OK)
		return val_err(ps, line, "time", key, v, e);
	if (*out == 0) {
		cfg_error(&ps->diag, line, "invalid time '%s' for '%s': must be above 0",
			  v, key);
		return false;
	}
	return true;
}

static bool val_uint(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 min, __u64 max, __u64 *out)
{
	enum unit_err e = parse_uint(v, 10, max, out);

	if (e == UNIT_OK && *out >= min)
		return true;
	if (e == UNIT_OK || e == UNIT_OVERFLOW)
		cfg_error(&ps->diag, line, "invalid value '%s' for '%s': out of range %llu..%llu",
			  v, key, (unsigned long long)min, (unsigned long long)max);
	else
		val_err(ps, line, "number", key, v, e);
	return false;
}

/* A class id, or a bare hex minor ("30" means MAJOR:30, as tc's default);
 * a bare minor is returned without major bits. */
static bool val_classid(struct cfg_parse *ps, unsigned line, const char *key,
			const char *v, __u32 *out)
{
	char buf[24];

	if (strchr(v, ':')) {
		if (!config_parse_classid(v, out))
			return true;
	} else if (strlen(v) <= 16) {
		snprintf(buf, sizeof(buf), "1:%s", v);
		if (!config_parse_classid(buf, out)) {
			*out &= 0xffff;
			return true;
		}
	}
	cfg_error(&ps->diag, line,
		  "invalid class id '%s' for '%s': expected hex MAJOR:MINOR (or MINOR), e.g. 1:10",
		  v, key);
	return false;
}

/* ---- keys ---- */

static bool dup_key(struct cfg_parse *ps, unsigned line, const char *key,
		    const char *where, __u32 *first)
{
	if (*first) {
		cfg_error(&ps->diag, line, "duplicate key '%s' in %s (first at line %u)",
			  key, where, *first);
		return true;
	}
	*first = line;
	return false;
}

static void unknown_key(struct cfg_parse *ps, unsigned line, const char *name,
			const char *where, const char *const *keys, int n,
			const char *const *other, int nother, const char *other_sect)
{
	const char *s;

	if (find_key(name, other, nother) >= 0) {
		cfg_error(&ps->diag, line, "key '%s' belongs in a %s section, not in %s",
			  name, other_sect, where);
		return;
	}
	s = cfg_suggest(name, keys, n);
	if (s)
		cfg_error(&ps->diag, line, "unknown key '%s' in %s (did you mean '%s'?)",
			  name, where, s);
	else
		cfg_error(&ps->diag, line, "unknown key '%s' in %s", name, where);
}

static void device_key(struct cfg_parse *ps, unsigned line, const char *name,
		       const char *v)
{
	struct config_device *d = &ps->dev;
	int k = find_key(name, dev_keys, DK_MAX);
	__u64 n;

	if (k < 0) {
		unknown_key(ps, line, name, "[device]", dev_keys, DK_MAX,
			    class_keys, CK_MAX, "[class]");
		return;
	}
	if (dup_key(ps, line, name, "[device]", &ps->dev_key_line[k]))
		return;
	switch (k) {
	case DK_DEFAULT:
		val_classid(ps, line, name, v, &d->default_classid);
		break;
	case DK_HYSTERESIS:
		if (!strcmp(v, "on") || !strcmp(v, "off"))
			d->hysteresis = !strcmp(v, "on");
		else
			cfg_error(&ps->diag, line,
				  "invalid value '%s' for 'hysteresis': expected on or off", v);
		break;
	case DK_R2Q:
		if (val_uint(ps, line, name, v, 1, 0xffffffffu, &n))
			d->r2q = (__u32)n;
		break;
	case DK_LIMIT:
		val_time(ps, line, name, v, &d->limit_ns);
		break;
	case DK_OVERHEAD:
	case DK_MPU:
		if (val_uint(ps, line, name, v, 0, 0xffff, &n)) {
			if (k == DK_MPU)
				d->mpu = (__u32)n;
			else
				d->overhead = (__u32)n;
		}
		break;
	case DK_LINKLAYER:
		if (!strcmp(v, "ethernet"))
			d->linklayer = HTB_LINKLAYER_ETHERNET;
		else if (!strcmp(v, "atm"))
			d->linklayer = HTB_LINKLAYER_ATM;
		else
			cfg_error(&ps->diag, line,
				  "invalid value '%s' for 'linklayer': expected ethernet or atm", v);
		break;
	}
}

static bool grow(void **arr, __u32 *cap, __u32 need, size_t elem)
{
	__u32 ncap;
	void *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, (size_t)ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

static void class_key(struct cfg_parse *ps, unsigned line, const char *name,
		      const char *v)
{
	struct raw_class *c = &ps->cls[ps->cur];
	char where[32], idbuf[CONFIG_CLASSID_BUF];
	int k = find_key(name, class_keys, CK_MAX);
	__u64 n;

	snprintf(where, sizeof(where), "[class %s]",
		 config_sprint_classid(c->classid, idbuf, sizeof(idbuf)));
	if (k < 0) {
		unknown_key(ps, line, name, where, class_keys, CK_MAX,
			    dev_keys, DK_MAX, "[device]");
		return;
	}
	if (k == CK_MATCH) {
		struct config_match m;

		if (!c->key_line[k])
			c->key_line[k] = line;
		if (cfg_parse_match(ps, v, line, &m))
			return;
		if (!grow((void **)&ps->m, &ps->m_cap, ps->nm + 1, sizeof(m))) {
			free(m.cgroup_path);
			cfg_error(&ps->diag, line, "out of memory");
			return;
		}
		m.class_idx = ps->cur;
		if (c->nmatches == 0)
			c->match_first = ps->nm;
		ps->m[ps->nm++] = m;
		c->nmatches++;
		return;
	}
	if (dup_key(ps, line, name, where, &c->key_line[k]))
		return;
	switch (k) {
	case CK_PARENT:
		val_classid(ps, line, name, v, &c->parent_id);
		break;
	case CK_RATE:
		val_rate(ps, line, name, v, &c->rate);
		break;
	case CK_CEIL:
		val_rate(ps, line, name, v, &c->ceil);
		break;
	case CK_BURST:
		val_size(ps, line, name, v, &c->burst);
		break;
	case CK_CBURST:
		val_size(ps, line, name, v, &c->cburst);
		break;
	case CK_PRIO:
		if (val_uint(ps, line, name, v, 0, CONFIG_MAX_PRIO, &n))
			c->prio = (__u32)n;
		break;
	case CK_QUANTUM:
		if (val_uint(ps, line, name, v, 1, 0xffffffffu, &n))
			c->quantum = (__u32)n;
		break;
	case CK_LIMIT:
		val_time(ps, line, name, v, &c->limit_ns);
		break;
	}
}

/* ---- sections ---- */

static void open_class(struct cfg_parse *ps, unsigned line, const char *id)
{
	struct raw_class *c;
	__u32 classid;

	if (!*id) {
		cfg_error(&ps->diag, line, "[class] needs a class id: [class MAJOR:MINOR], e.g. [class 1:10]");
		return;
	}
	if (config_parse_classid(id, &classid)) {
		cfg_error(&ps->diag, line,
			  "invalid class id '%s': expected hex MAJOR:MINOR, e.g. [class 1:10] (major 1..fffe, minor 1..ffff)",
			  id);
		return;
	}
	if (!ps->major) {
		ps->major = classid >> 16;
		ps->major_line = line;
	} else if (classid >> 16 != ps->major) {
		cfg_error(&ps->diag, line,
			  "class %s has major %x, but the classes above use %x (line %u): all classes of a device share one major",
			  id, classid >> 16, ps->major, ps->major_line);
		return;
	}
	if (!grow((void **)&ps->cls, &ps->cls_cap, ps->ncls + 1, sizeof(*c))) {
		cfg_error(&ps->diag, line, "out of memory");
		return;
	}
	c = &ps->cls[ps->ncls];
	memset(c, 0, sizeof(*c));
	c->classid = classid;
	c->line = line;
	ps->cur = ps->ncls++;
	ps->sect = SECT_CLASS;
}

/* s..e is a whole trimmed line starting with '['. */
static void open_section(struct cfg_parse *ps, unsigned line, const char *s,
			 const char *e)
{
	static const char *const sects[] = { "device", "class" };
	char buf[256];
	char *word, *rest, *p;
	size_t len;
	const char *sug;

	ps->sect = SECT_SKIP;	/* keys of a bad section are not checked */
	if (e[-1] != ']' || e - s < 2) {
		cfg_error(&ps->diag, line, memchr(s, ']', e - s) ?
			  "text after ']' in section header" :
			  "missing ']' in section header");
		return;
	}
	len = e - s - 2;
	if (len >= sizeof(buf)) {
		cfg_error(&ps->diag, line, "section header too long");
		return;
	}
	memcpy(buf, s + 1, len);
	buf[len] = '\0';
	for (word = buf; is_blank(*word); word++)
		;
	for (p = word; *p && !is_blank(*p); p++)
		;
	rest = p;
	if (*rest)
		*rest++ = '\0';
	while (is_blank(*rest))
		rest++;
	for (p = rest + strlen(rest); p > rest && is_blank(p[-1]); p--)
		*(p - 1) = '\0';

	if (!strcmp(word, "device")) {
		if (*rest) {
			cfg_error(&ps->diag, line, "[device] takes no name ('%s')", rest);
		} else if (ps->dev_line) {
			cfg_error(&ps->diag, line, "duplicate [device] section (first at line %u)",
				  ps->dev_line);
		} else {
			ps->dev_line = line;
			ps->sect = SECT_DEVICE;
		}
	} else if (!strcmp(word, "class")) {
		open_class(ps, line, rest);
	} else if ((sug = cfg_suggest(word, sects, 2))) {
		cfg_error(&ps->diag, line, "unknown section [%s] (did you mean [%s%s]?)",
			  word, sug, !strcmp(sug, "class") ? " MAJOR:MINOR" : "");
	} else {
		cfg_error(&ps->diag, line,
			  "unknown section [%s] (expected [device] or [class MAJOR:MINOR])", word);
	}
}

/* ---- the reader inih pulls lines from ---- */

static void check_previous(struct reader *rd)
{
	if (rd->expect_call && !rd->got_call)
		cfg_error(&rd->ps->diag, rd->lineno,
			  "expected 'key = value', a [section] or a comment");
	rd->expect_call = false;
	rd->use_longval = false;
}

/* End of the line's content: a '#' or ';' at its start or after a blank
 * begins a comment. */
static const char *strip_comment(const char *s, const char *e)
{
	for (const char *p = s; p < e; p++)
		if ((*p == '#' || *p == ';') && (p == s || is_blank(p[-1])))
			return p;
	return e;
}

static char *blank_line(char *str)
{
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

static char *read_line(char *str, int num, void *stream)
{
	struct reader *rd = stream;
	const char *s, *e, *nl, *sep;
	size_t len;

	check_previous(rd);
	if (rd->p >= rd->end || num < 8)
		return NULL;
	s = rd->p;
	nl = memchr(s, '\n', rd->end - s);
	e = nl ? nl : rd->end;
	rd->p = nl ? nl + 1 : rd->end;
	rd->lineno++;
	if (rd->lineno == 1 && e - s >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;		/* UTF-8 byte order mark */
	if (memchr(s, '\0', e - s)) {
		cfg_error(&rd->ps->diag, rd->lineno, "NUL byte in line");
		return blank_line(str);
	}
	e = strip_comment(s, e);
	while (s < e && is_blank(*s))
		s++;
	while (e > s && is_blank(e[-1]))
		e--;
	if (s == e)
		return blank_line(str);
	len = e - s;
	if (*s == '[') {
		open_section(rd->ps, rd->lineno, s, e);
		if (len + 2 > (size_t)num)
			return blank_line(str);
	} else {
		rd->expect_call = true;
		rd->got_call = false;
	}
	if (len + 2 <= (size_t)num) {
		memcpy(str, s, len);
		str[len] = '\n';
		str[len + 1] = '\0';
		return str;
	}
	/* Too long for inih: hand it `key =`, keep the value here. */
	for (sep = s; sep < e && *sep != '=' && *sep != ':'; sep++)
		;
	if (sep == e) {
		/* no separator: inih would refuse it too */
		return blank_line(str);
	}
	if ((size_t)(sep - s) + 3 > (size_t)num) {
		cfg_error(&rd->ps->diag, rd->lineno, "key name too long");
		rd->expect_call = false;
		return blank_line(str);
	}
	len = e - (sep + 1);
	if (len + 1 > rd->longval_cap) {
		char *p = realloc(rd->longval, len + 1);

		if (!p) {
			cfg_error(&rd->ps->diag, rd->lineno, "out of memory");
			rd->expect_call = false;
			return blank_line(str);
		}
		rd->longval = p;
		rd->longval_cap = len + 1;
	}
	memcpy(str, s, sep - s);	/* the key and '=' go to inih */
	str[sep - s] = '=';
	str[sep - s + 1] = '\n';
	str[sep - s + 2] = '\0';
	for (s = sep + 1; s < e && is_blank(*s); s++)
		;
	memcpy(rd->longval, s, e - s);
	rd->longval[e - s] = '\0';
	rd->use_longval = true;
	return str;
}

static int on_key(void *user, const char *section, const char *name,
		  const char *value)
{
	struct reader *rd = user;
	struct cfg_parse *ps = rd->ps;
	unsigned line = rd->lineno;

	(void)section;		/* the reader tracks sections */
	rd->got_call = true;
	if (rd->use_longval)
		value = rd->longval;
	if (!value)
		value = "";
	if (!*name) {
		cfg_error(&ps->diag, line, "missing key name before '='");
		return 1;
	}
	switch (ps->sect) {
	case SECT_NONE:
		cfg_error(&ps->diag, line,
			  "key '%s' outside a section: put it under [device] or [class MAJOR:MINOR]",
			  name);
		break;
	case SECT_DEVICE:
		device_key(ps, line, name, value);
		break;
	case SECT_CLASS:
		class_key(ps, line, name, value);
		break;
	case SECT_SKIP:
		break;
	}
	return 1;
}

static void parse_free(struct cfg_parse *ps)
{
	for (__u32 i = 0; i < ps->nm; i++)
		free(ps->m[i].cgroup_path);
	free(ps->m);
	free(ps->cls);
}

int config_parse_string(const char *text, size_t len, const char *name,
			struct htb_config *cfg, FILE *diag)
{
	struct cfg_parse ps = {
		.diag = { .out = diag, .name = name ? name : "config" },
		.dev = {
			.default_idx = CONFIG_NO_INDEX,
			.r2q = CONFIG_DEFAULT_R2Q,
			.limit_ns = CONFIG_DEFAULT_LIMIT_NS,
			.linklayer = HTB_LINKLAYER_ETHERNET,
		},
	};
	struct reader rd = { .ps = &ps, .p = text, .end = text + len };
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	ret = ini_parse_stream(read_line, &rd, on_key, &rd);
	check_previous(&rd);
	free(rd.longval);
	if (ret == -2)
		cfg_error(&ps.diag, 0, "out of memory");
	if (ps.diag.errors == 0)
		cfg_resolve(&ps, cfg);
	parse_free(&ps);
	cfg->nwarnings = ps.diag.warnings;
	if (ps.diag.errors) {
		config_free(cfg);
		return -1;
	}
	return 0;
}

int config_load(const char *path, struct htb_config *cfg, FILE *diag)
{
	struct cfg_diag d = { .out = diag, .name = path };
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, ret;

	memset(cfg, 0, sizeof(*cfg));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cfg_error(&d, 0, "cannot open: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *p;

			if (cap >= CFG_MAX_FILE) {
				cfg_error(&d, 0, "file too large (over %u MiB)", CFG_MAX_FILE >> 20);
				goto fail;
			}
			cap = cap ? cap * 2 : 65536;
			p = realloc(buf, cap);
			if (!p) {
				cfg_error(&d, 0, "out of memory");
				goto fail;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cfg_error(&d, 0, "cannot read: %s", strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	ret = config_parse_string(buf, len, path, cfg, diag);
	free(buf);
	return ret;
fail:
	close(fd);
	free(buf);
	return -1;
}
