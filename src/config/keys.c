// SPDX-License-Identifier: GPL-2.0
/*
 * The config's sections and keys: what each key accepts, its range and
 * the message when a value is wrong (docs/config.md has the table).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/bigmem.h"
#include "common/common.h"
#include "config/priv.h"
#include "common/units.h"

/* The AQM keys of both sections, from base (DK_AQM, CK_AQM) on. */
#define AQM_KEY_NAMES(base)						\
	[(base) + AK_AQM] = "aqm", [(base) + AK_TARGET] = "target",	\
	[(base) + AK_INTERVAL] = "interval", [(base) + AK_ECN] = "ecn",	\
	[(base) + AK_FLOWS] = "flows"

static const char *const dev_keys[DK_MAX] = {
	[DK_DEFAULT] = "default", [DK_HYSTERESIS] = "hysteresis",
	[DK_R2Q] = "r2q", [DK_LIMIT] = "limit", [DK_OVERHEAD] = "overhead",
	[DK_MPU] = "mpu", [DK_LINKLAYER] = "linklayer",
	[DK_UPLOAD_DEV] = "upload_dev", [DK_DIRECTION] = "direction",
	[DK_IFB] = "ifb", AQM_KEY_NAMES(DK_AQM),
};

static const char *const class_keys[CK_MAX] = {
	[CK_PARENT] = "parent", [CK_RATE] = "rate", [CK_CEIL] = "ceil",
	[CK_BURST] = "burst", [CK_CBURST] = "cburst", [CK_PRIO] = "prio",
	[CK_QUANTUM] = "quantum", [CK_LIMIT] = "limit", [CK_MATCH] = "match",
	[CK_UPLOAD_RATE] = "upload_rate", [CK_UPLOAD_CEIL] = "upload_ceil",
	[CK_UPLOAD_BURST] = "upload_burst", [CK_UPLOAD_CBURST] = "upload_cburst",
	AQM_KEY_NAMES(CK_AQM),
};

static int find_key(const char *name, const char *const *keys, int n)
{
	/* the first byte first: strcmp, mostly from here, was 4.7% of a
	 * 100,392-class reload (docs/log.md 2026-12-06, reload, second
	 * round) */
	for (int i = 0; i < n; i++)
		if (name[0] == keys[i][0] && !strcmp(name, keys[i]))
			return i;
	return -1;
}

/* ---- values ---- */

static bool val_err(struct cfg_parse *ps, unsigned line, const char *what,
		    const char *key, const char *v, enum unit_err e)
{
	char q[MSG_QUOTE_BUF];

	cfg_error(&ps->diag, line, "invalid %s %s for '%s': %s", what,
		  msg_quote(q, sizeof(q), v), key, unit_strerror(e));
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

/* A size or time in tc units that must not be 0; why is in if_zero. */
static bool val_nonzero(struct cfg_parse *ps, unsigned line, const char *what,
			enum unit_err (*parse)(const char *, __u64 *),
			const char *if_zero, const char *key, const char *v,
			__u64 *out)
{
	enum unit_err e = parse(v, out);
	char q[MSG_QUOTE_BUF];

	if (e != UNIT_OK)
		return val_err(ps, line, what, key, v, e);
	if (*out == 0) {
		cfg_error(&ps->diag, line, "invalid %s %s for '%s': %s", what,
			  msg_quote(q, sizeof(q), v), key, if_zero);
		return false;
	}
	return true;
}

static bool val_size(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 *out)
{
	return val_nonzero(ps, line, "size", parse_size, "must be at least 1 byte",
			   key, v, out);
}

static bool val_time(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 *out)
{
	return val_nonzero(ps, line, "time", parse_time, "must be above 0", key, v, out);
}

static bool val_uint(struct cfg_parse *ps, unsigned line, const char *key,
		     const char *v, __u64 min, __u64 max, __u64 *out)
{
	enum unit_err e = parse_uint(v, 10, max, out);
	char q[MSG_QUOTE_BUF];

	if (e == UNIT_OK && *out >= min)
		return true;
	if (e == UNIT_OK || e == UNIT_OVERFLOW)
		cfg_error(&ps->diag, line, "invalid value %s for '%s': out of range %llu..%llu",
			  msg_quote(q, sizeof(q), v), key, (unsigned long long)min,
			  (unsigned long long)max);
	else
		val_err(ps, line, "number", key, v, e);
	return false;
}

/* One of two words: *out = (v is yes). */
static bool val_choice(struct cfg_parse *ps, unsigned line, const char *key,
		       const char *v, const char *yes, const char *no, bool *out)
{
	char q[MSG_QUOTE_BUF];

	if (!strcmp(v, yes) || !strcmp(v, no)) {
		*out = !strcmp(v, yes);
		return true;
	}
	cfg_error(&ps->diag, line, "invalid value %s for '%s': expected %s or %s",
		  msg_quote(q, sizeof(q), v), key, yes, no);
	return false;
}

/* A network device's name, as the kernel's dev_valid_name() takes it. */
static bool val_ifname(struct cfg_parse *ps, unsigned line, const char *key,
		       const char *v, char *out)
{
	char q[MSG_QUOTE_BUF];
	const char *why;

	if (ifname_valid(v, &why)) {
		snprintf(out, CONFIG_IFNAMSIZ, "%s", v);
		return true;
	}
	cfg_error(&ps->diag, line, "invalid device name %s for '%s': %s",
		  msg_quote(q, sizeof(q), v), key, why);
	return false;
}

/* aqm, target, interval, ecn, flows: the same in [device] (the default)
 * and [class]. The interval's cap is the control law's fixed point
 * (include/htb/types.h HTB_CODEL_INTERVAL_MAX); target < interval is a
 * check of the resolved pair (config/resolve.c). */
static void aqm_key(struct cfg_parse *ps, unsigned line, int k, const char *key,
		    const char *v, struct config_aqm *a)
{
	char q[MSG_QUOTE_BUF];

	switch (k) {
	case AK_AQM:
		val_choice(ps, line, key, v, "codel", "off", &a->codel);
		break;
	case AK_TARGET:
		val_time(ps, line, key, v, &a->target_ns);
		break;
	case AK_INTERVAL:
		if (val_time(ps, line, key, v, &a->interval_ns) &&
		    a->interval_ns > CONFIG_INTERVAL_MAX_NS)
			cfg_error(&ps->diag, line,
				  "invalid time %s for 'interval': must be at most 4s",
				  msg_quote(q, sizeof(q), v));
		break;
	case AK_ECN:
		val_choice(ps, line, key, v, "on", "off", &a->ecn);
		break;
	case AK_FLOWS:
		val_choice(ps, line, key, v, "on", "off", &a->flows);
		break;
	}
}

/* A class id, or a bare hex minor ("30" means MAJOR:30, as tc's default);
 * a bare minor is returned without major bits: the resolver gives it a
 * major (the class's own for parent, the only one for default). */
static bool val_classid(struct cfg_parse *ps, unsigned line, const char *key,
			const char *v, __u32 *out)
{
	char buf[24], q[MSG_QUOTE_BUF];

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
		  "invalid class id %s for '%s': expected hex MAJOR:MINOR (or MINOR), e.g. 1:10",
		  msg_quote(q, sizeof(q), v), key);
	return false;
}

/* ---- keys ---- */

typedef bool (*val_fn)(struct cfg_parse *ps, unsigned line, const char *key,
		       const char *v, __u64 *out);

/* parse(v) into *out, or what it gave for the same text last time: a
 * value that parsed once parses the same way again, and one that did not
 * is never kept, so its error is said at every line. */
static bool memo_val(struct cfg_parse *ps, int k, unsigned line,
		     const char *key, const char *v, __u64 *out, val_fn parse)
{
	struct val_memo *m = &ps->memo[k];
	size_t len;

	if (m->text[0] && !strcmp(m->text, v)) {
		*out = m->val;
		return true;
	}
	if (!parse(ps, line, key, v, out))
		return false;
	len = strlen(v);
	if (len < sizeof(m->text)) {
		memcpy(m->text, v, len + 1);
		m->val = *out;
	}
	return true;
}

static bool val_parent(struct cfg_parse *ps, unsigned line, const char *key,
		       const char *v, __u64 *out)
{
	__u32 id;

	if (!val_classid(ps, line, key, v, &id))
		return false;
	*out = id;
	return true;
}

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

void cfg_device_key(struct cfg_parse *ps, unsigned line, const char *name,
		       const char *v)
{
	struct config_device *d = &ps->dev;
	int k = find_key(name, dev_keys, DK_MAX);
	bool b;
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
		if (val_classid(ps, line, name, v, &d->default_classid))
			snprintf(ps->default_text, sizeof(ps->default_text), "%s", v);
		break;
	case DK_HYSTERESIS:
		val_choice(ps, line, name, v, "on", "off", &d->hysteresis);
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
		if (val_choice(ps, line, name, v, "ethernet", "atm", &b))
			d->linklayer = b ? HTB_LINKLAYER_ETHERNET : HTB_LINKLAYER_ATM;
		break;
	case DK_UPLOAD_DEV:
		val_ifname(ps, line, name, v, d->upload_dev);
		break;
	case DK_DIRECTION:
		if (val_choice(ps, line, name, v, "egress", "ingress", &b))
			d->ingress = !b;
		break;
	case DK_IFB:
		val_ifname(ps, line, name, v, d->ifb);
		break;
	default:
		aqm_key(ps, line, k - DK_AQM, name, v, &d->aqm);
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
	p = big_realloc(*arr, ncap, elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

/* A section is at least 12 bytes ("[class 1:1]\n"), so is a match line
 * ("match=mark 1\n" less one): len / 12 bounds both counts. */
#define CFG_MIN_LINE 12

/* Room for the most classes and matches text_len bytes can hold, where
 * that is BIG_MIN or more (a mapping: what is not used is not touched).
 * Grown by doubling from 64, each array went through malloc'ed blocks and
 * their copies first, 500 page faults of 4 KiB at 100,392 classes
 * (docs/log.md 2026-12-06, reload, second round). */
void cfg_reserve(struct cfg_parse *ps, size_t text_len)
{
	size_t most = text_len / CFG_MIN_LINE + 1;
	__u32 ncls = most < CONFIG_MAX_CLASSES ? (__u32)most : CONFIG_MAX_CLASSES;
	__u32 nm = most < UINT32_MAX / 2 ? (__u32)most : UINT32_MAX / 2;

	if ((size_t)ncls * sizeof(*ps->cls) >= BIG_MIN)
		grow((void **)&ps->cls, &ps->cls_cap, ncls, sizeof(*ps->cls));
	if ((size_t)nm * sizeof(*ps->m) >= BIG_MIN)
		grow((void **)&ps->m, &ps->m_cap, nm, sizeof(*ps->m));
}

void cfg_class_key(struct cfg_parse *ps, unsigned line, const char *name,
		      const char *v)
{
	struct raw_class *c = &ps->cls[ps->cur];
	char where[32] = "", idbuf[CONFIG_CLASSID_BUF];
	int k = find_key(name, class_keys, CK_MAX);
	__u64 n;

	if (k < 0 || (k != CK_MATCH && c->key_line[k]))	/* an error: name the section */
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
		if (memo_val(ps, k, line, name, v, &n, val_parent))
			c->parent_id = (__u32)n;
		break;
	case CK_RATE:
		memo_val(ps, k, line, name, v, &c->rate, val_rate);
		break;
	case CK_CEIL:
		memo_val(ps, k, line, name, v, &c->ceil, val_rate);
		break;
	case CK_BURST:
		memo_val(ps, k, line, name, v, &c->burst, val_size);
		break;
	case CK_CBURST:
		memo_val(ps, k, line, name, v, &c->cburst, val_size);
		break;
	case CK_UPLOAD_RATE:
		memo_val(ps, k, line, name, v, &c->up_rate, val_rate);
		break;
	case CK_UPLOAD_CEIL:
		memo_val(ps, k, line, name, v, &c->up_ceil, val_rate);
		break;
	case CK_UPLOAD_BURST:
		memo_val(ps, k, line, name, v, &c->up_burst, val_size);
		break;
	case CK_UPLOAD_CBURST:
		memo_val(ps, k, line, name, v, &c->up_cburst, val_size);
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
	default:
		aqm_key(ps, line, k - CK_AQM, name, v, &c->aqm);
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
	if (ps->ncls >= CONFIG_MAX_CLASSES) {
		if (!ps->too_many)
			cfg_error(&ps->diag, line, "too many classes: a config holds at most %u",
				  CONFIG_MAX_CLASSES);
		ps->too_many = true;
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
void cfg_open_section(struct cfg_parse *ps, unsigned line, const char *s,
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
	for (word = buf; cfg_is_blank(*word); word++)
		;
	for (p = word; *p && !cfg_is_blank(*p); p++)
		;
	rest = p;
	if (*rest)
		*rest++ = '\0';
	while (cfg_is_blank(*rest))
		rest++;
	for (p = rest + strlen(rest); p > rest && cfg_is_blank(p[-1]); p--)
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
