// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the INI file: lines split here, in place, into `key = value`
 * (docs/config.md "Reading the file"). This was inih (Debian's libinih)
 * fed by a line reader of our own; the reader did all but the split at
 * the first '=' or ':', and inih's copy of every line, its scans and its
 * call per key were 15% of a 100,392-class reload (docs/log.md
 * 2026-12-06). What the split keeps from inih's rules:
 *  - a comment starts with '#' or ';' at the start of a line or after a
 *    blank; blanks around keys and values are dropped, so an indented line
 *    is an ordinary line (no multi-line values);
 *  - a key line splits at its first '=' or ':'; a line with neither is
 *    "expected 'key = value', a [section] or a comment";
 *  - a key name longer than inih's line buffer took (197 bytes) is "key
 *    name too long"; a value has no length limit.
 * Duplicate keys reach the handler once each: `match` may repeat, any
 * other key given twice in one section is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/bigmem.h"
#include "common/common.h"
#include "config/priv.h"

#define CFG_MAX_FILE (64u << 20)
#define CFG_MAX_KEY 197		/* inih's 200-byte line less " =\n" */

struct reader {
	struct cfg_parse *ps;
	const char *p, *end;	/* text not read yet */
	unsigned lineno;	/* the line being read */
	char *val;		/* the value, NUL-terminated */
	size_t val_cap;
};

/* The bytes a line's scan stops at: its end, a NUL, a comment's start,
 * a key's separator. Every other byte is passed over by one table look-up:
 * a memchr for the line's end, a second for a NUL and a loop for comments
 * were 17 instructions a byte (docs/log.md 2026-12-06, second reload
 * section). */
static const unsigned char line_stop[256] = {
	['\n'] = 1, ['\0'] = 1, ['#'] = 1, [';'] = 1, ['='] = 1, [':'] = 1,
};

/* One line from rd->p: its content in [*sp, *ep) (the comment and blanks
 * around it dropped; empty for a blank line or one with a NUL byte) and
 * in *sepp its first '=' or ':' before the comment, or NULL. false at the
 * end of the text. A comment starts with '#' or ';' at the line's start
 * or after a blank. */
static bool next_line(struct reader *rd, const char **sp, const char **ep,
		      const char **sepp)
{
	const char *s = rd->p, *p, *e = NULL, *sep = NULL;
	bool nul = false;

	if (s >= rd->end)
		return false;
	rd->lineno++;
	if (rd->lineno == 1 && rd->end - s >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;		/* UTF-8 byte order mark */
	for (p = s;; p++) {
		while (p < rd->end && !line_stop[(unsigned char)*p])
			p++;
		if (p == rd->end || *p == '\n')
			break;
		if (*p == '\0')
			nul = true;
		else if (*p == '#' || *p == ';') {
			if (!e && (p == s || cfg_is_blank(p[-1])))
				e = p;
		} else if (!sep && !e) {
			sep = p;
		}
	}
	rd->p = p < rd->end ? p + 1 : rd->end;
	if (!e)
		e = p;
	if (nul) {
		cfg_error(&rd->ps->diag, rd->lineno, "NUL byte in line");
		e = s;
	}
	while (s < e && cfg_is_blank(*s))
		s++;
	while (e > s && cfg_is_blank(e[-1]))
		e--;
	*sp = s;
	*ep = e;
	*sepp = sep;
	return true;
}

static void on_key(struct reader *rd, const char *name, const char *value)
{
	struct cfg_parse *ps = rd->ps;
	unsigned line = rd->lineno;

	if (!*name) {
		cfg_error(&ps->diag, line, "missing key name before '='");
		return;
	}
	switch (ps->sect) {
	case SECT_NONE:
		cfg_error(&ps->diag, line,
			  "key '%s' outside a section: put it under [device] or [class MAJOR:MINOR]",
			  name);
		break;
	case SECT_DEVICE:
		cfg_device_key(ps, line, name, value);
		break;
	case SECT_CLASS:
		cfg_class_key(ps, line, name, value);
		break;
	case SECT_SKIP:
		break;
	}
}

/* value [v, e) into rd->val, NUL-terminated; false out of memory. */
static bool take_value(struct reader *rd, const char *v, const char *e)
{
	size_t len = (size_t)(e - v);

	if (len + 1 > rd->val_cap) {
		char *p = realloc(rd->val, len + 1 > 256 ? len + 1 : 256);

		if (!p)
			return false;
		rd->val = p;
		rd->val_cap = len + 1 > 256 ? len + 1 : 256;
	}
	memcpy(rd->val, v, len);
	rd->val[len] = '\0';
	return true;
}

/* A trimmed, non-empty line that is not a section: KEY = VALUE; sep is
 * its first '=' or ':' (NULL: none). */
static void key_line(struct reader *rd, const char *s, const char *e,
		     const char *sep)
{
	char name[CFG_MAX_KEY + 1];
	const char *ne, *v;

	if (!sep) {
		cfg_error(&rd->ps->diag, rd->lineno,
			  "expected 'key = value', a [section] or a comment");
		return;
	}
	for (ne = sep; ne > s && cfg_is_blank(ne[-1]); ne--)
		;
	if (ne - s > CFG_MAX_KEY) {
		cfg_error(&rd->ps->diag, rd->lineno, "key name too long");
		return;
	}
	memcpy(name, s, (size_t)(ne - s));
	name[ne - s] = '\0';
	for (v = sep + 1; v < e && cfg_is_blank(*v); v++)
		;
	if (!take_value(rd, v, e)) {
		cfg_error(&rd->ps->diag, rd->lineno, "out of memory");
		return;
	}
	on_key(rd, name, rd->val);
}

static void read_lines(struct reader *rd)
{
	const char *s, *e, *sep;

	while (next_line(rd, &s, &e, &sep)) {
		if (s == e)
			continue;
		if (*s == '[')
			cfg_open_section(rd->ps, rd->lineno, s, e);
		else
			key_line(rd, s, e, sep);
	}
}

static void parse_free(struct cfg_parse *ps)
{
	for (__u32 i = 0; i < ps->nm; i++)
		free(ps->m[i].cgroup_path);
	big_free(ps->m);
	big_free(ps->cls);
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
			.aqm = { .codel = true, .ecn = true, .flows = true,
				 .target_ns = HTB_CODEL_TARGET_NS,
				 .interval_ns = HTB_CODEL_INTERVAL_NS },
		},
	};
	struct reader rd = { .ps = &ps, .p = text, .end = text + len };

	memset(cfg, 0, sizeof(*cfg));
	cfg_reserve(&ps, len);
	read_lines(&rd);
	free(rd.val);
	if (ps.diag.errors == 0)
		cfg_resolve(&ps, cfg);
	parse_free(&ps);
	cfg_diag_end(&ps.diag);
	cfg->nwarnings = ps.diag.warnings;
	if (ps.diag.errors) {
		config_free(cfg);
		return -1;
	}
	return 0;
}

/* 0 if fd is a regular file, else -1 and one line saying what it is. */
static int config_is_regular(struct cfg_diag *d, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		cfg_error(d, 0, "cannot read: %s", strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	cfg_error(d, 0, "%s, not a regular file: a config is read from a file",
		  file_kind(st.st_mode));
	return -1;
}

/* The first buffer holds the whole file as fstat saw it, and one byte
 * more so that the read finding its end needs no growth: doubling from
 * 64 KiB moved an 8.7 MB file through 8 reallocs. */
static size_t first_cap(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || st.st_size < 0 || (__u64)st.st_size >= CFG_MAX_FILE)
		return 65536;
	return (size_t)st.st_size + 1 > 65536 ? (size_t)st.st_size + 1 : 65536;
}

static char *grow_buf(char *buf, size_t cap, bool big)
{
	return big ? big_realloc(buf, cap, 1) : realloc(buf, cap);
}

static int read_file(const char *path, char **text, size_t *lenp, FILE *diag, bool big)
{
	struct cfg_diag d = { .out = diag, .name = path };
	char *buf = NULL;
	size_t len = 0, cap = 0, want;
	int fd;

	/* O_NONBLOCK: a FIFO without a writer would block open() (a daemon
	 * stuck there ignores its signals and starves its watchdog); only a
	 * regular file is read, so the flag changes nothing else */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		cfg_error(&d, 0, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (config_is_regular(&d, fd))
		goto fail;
	want = first_cap(fd);
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *p;

			if (cap >= CFG_MAX_FILE) {
				cfg_error(&d, 0, "file too large (over %u MiB)", CFG_MAX_FILE >> 20);
				goto fail;
			}
			cap = !cap ? want : cap * 2 < CFG_MAX_FILE ? cap * 2 : CFG_MAX_FILE;
			p = grow_buf(buf, cap, big);
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
	*text = buf;
	*lenp = len;
	return 0;
fail:
	close(fd);
	if (big)
		big_free(buf);
	else
		free(buf);
	return -1;
}

int config_read_file(const char *path, char **text, size_t *lenp, FILE *diag)
{
	return read_file(path, text, lenp, diag, false);
}

int config_read_file_big(const char *path, char **text, size_t *lenp, FILE *diag)
{
	return read_file(path, text, lenp, diag, true);
}

int config_load(const char *path, struct htb_config *cfg, FILE *diag)
{
	char *buf;
	size_t len;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (config_read_file(path, &buf, &len, diag))
		return -1;
	ret = config_parse_string(buf, len, path, cfg, diag);
	free(buf);
	return ret;
}
