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
#include <unistd.h>
#include <sys/stat.h>

#include "common/bigmem.h"
#include "common/common.h"
#include "config/priv.h"

#define CFG_MAX_FILE (64u << 20)

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
		if ((*p == '#' || *p == ';') && (p == s || cfg_is_blank(p[-1])))
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
	while (s < e && cfg_is_blank(*s))
		s++;
	while (e > s && cfg_is_blank(e[-1]))
		e--;
	if (s == e)
		return blank_line(str);
	len = e - s;
	if (*s == '[') {
		cfg_open_section(rd->ps, rd->lineno, s, e);
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
	for (s = sep + 1; s < e && cfg_is_blank(*s); s++)
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
		cfg_device_key(ps, line, name, value);
		break;
	case SECT_CLASS:
		cfg_class_key(ps, line, name, value);
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
