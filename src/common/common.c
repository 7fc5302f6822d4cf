// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <net/if.h>

#include "common/common.h"

/* The bytes of the character at s that msg_clip copies as they are, or 0
 * when it escapes s[0]. C1 controls (U+0080..U+009F) are escapes to some
 * terminals, as ESC is. */
static size_t printable_len(const unsigned char *s)
{
	size_t n;

	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] < 0x80)
		return 0;
	n = utf8_len(s);
	return n == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 0 : n;
}

/* Whether s, escaped, fits len bytes with its NUL. */
static bool fits(const unsigned char *s, size_t len)
{
	size_t o = 0;

	for (size_t n; *s && o < len; s += n ? n : 1) {
		n = printable_len(s);
		o += n ? n : 4;
	}
	return !*s && o < len;
}

size_t msg_clip(char *out, size_t len, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	/* room for "..." unless all of s fits */
	size_t i = 0, o = 0, room = fits(s, len) ? 0 : 3;

	if (!len)
		return 0;
	while (s[i]) {
		size_t n = printable_len(s + i), w = n ? n : 4;

		if (o + w + room >= len)
			break;
		if (n) {
			memcpy(out + o, s + i, n);
		} else {
			out[o] = '\\';
			out[o + 1] = 'x';
			out[o + 2] = hex[s[i] >> 4];
			out[o + 3] = hex[s[i] & 15];
		}
		o += w;
		i += n ? n : 1;
	}
	if (s[i] && o + 3 < len) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return i;
}

const char *msg_quote(char *buf, size_t len, const char *s)
{
	/* "' (18446744073709551615 bytes)" fits */
	char tail[40] = "'";
	size_t n = strlen(s), used;

	if (len < sizeof(tail) + 8) {
		msg_clip(buf, len, s);
		return buf;
	}
	buf[0] = '\'';
	used = msg_clip(buf + 1, len - sizeof(tail), s);
	if (used < n)
		snprintf(tail, sizeof(tail), "' (%zu bytes)", n);
	strcat(buf, tail);
	return buf;
}

static void vmsg(const struct ctx *ctx, const char *level, bool json_too,
		 const char *fmt, va_list ap)
{
	char raw[1024], buf[1024];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	msg_clip(buf, sizeof(buf), raw);
	if (ctx && ctx->tap && json_too)	/* an error */
		snprintf(ctx->tap->last, sizeof(ctx->tap->last), "%s", buf);
	if (ctx && ctx->tap && ctx->tap->mute)
		return;
	fprintf(stderr, "%s: %s%s\n", ctx && ctx->prog ? ctx->prog : "htbctl",
		level, buf);
	if (json_too && ctx && ctx->json) {
		/* {"error":"..."} on one line of stdout, for scripts */
		struct printer p;

		printer_init(&p, true, stdout);
		p.compact = true;
		print_open_object(&p, NULL);
		print_string(&p, "error", NULL, buf);
		print_close_object(&p);
		printer_finish(&p);
	}
}

void p_err(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(ctx, "", true, fmt, ap);
	va_end(ap);
}

void p_warn(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(ctx, "warning: ", false, fmt, ap);
	va_end(ap);
}

void p_info(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx && ctx->json)
		return;
	va_start(ap, fmt);
	vmsg(ctx, "", false, fmt, ap);
	va_end(ap);
}

int parse_kwargs(const struct ctx *ctx, int argc, char **argv,
		 struct kwarg *kw, int nkw)
{
	for (int i = 0; i < argc; i += 2) {
		int k;

		for (k = 0; k < nkw; k++)
			if (!strcmp(argv[i], kw[k].name))
				break;
		if (k == nkw) {
			p_err(ctx, "unexpected argument '%s'", argv[i]);
			return -1;
		}
		if (i + 1 >= argc) {
			p_err(ctx, "'%s' needs a value", argv[i]);
			return -1;
		}
		if (*kw[k].value) {
			p_err(ctx, "'%s' given twice", argv[i]);
			return -1;
		}
		*kw[k].value = argv[i + 1];
	}
	for (int k = 0; k < nkw; k++) {
		if (kw[k].required && !*kw[k].value) {
			p_err(ctx, "missing '%s'", kw[k].name);
			return -1;
		}
	}
	return 0;
}

const char *file_kind(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO or pipe" :
	       S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

/*
 * What -o may replace: nothing yet, or a regular file (not followed
 * through a link) of the caller's, whose group and mode the new file keeps
 * less the bits that let others write it (*old, with *exists). A device
 * node, FIFO, socket, directory or link is refused: a rename over
 * /dev/null would replace the machine's device with a file. So is a file
 * of another user: its owner planted it (52b6d7f handed the new config to
 * that owner, still writable by whoever could write the old one).
 */
static int out_file_check(const struct ctx *ctx, const char *file, struct stat *old,
			  bool *exists)
{
	*exists = false;
	if (lstat(file, old)) {
		if (errno == ENOENT)
			return 0;
		p_err(ctx, "-o %s: %s", file, strerror(errno));
		return -1;
	}
	if (!S_ISREG(old->st_mode)) {
		p_err(ctx, "-o %s: %s: -o writes a regular file (or creates one)", file,
		      file_kind(old->st_mode));
		return -1;
	}
	if (old->st_uid != geteuid()) {
		p_err(ctx, "-o %s: owned by uid %u, not by you (uid %u): remove it first or write elsewhere",
		      file, (unsigned)old->st_uid, (unsigned)geteuid());
		return -1;
	}
	*exists = true;
	return 0;
}

int write_file_atomic(const struct ctx *ctx, const char *file,
		      int (*fill)(const struct ctx *ctx, FILE *f, void *arg), void *arg)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd = -1, rc = -1;
	struct stat old;
	bool exists;

	if (out_file_check(ctx, file, &old, &exists))
		return -1;
	if (asprintf(&tmp, "%s.XXXXXX", file) < 0) {
		p_err(ctx, "out of memory");
		return -1;
	}
	fd = mkstemp(tmp);
	/* 0755: never group or world write, setuid, setgid or sticky */
	if (fd < 0 || fchmod(fd, exists ? old.st_mode & 0755 : 0644) ||
	    (exists && fchown(fd, (uid_t)-1, old.st_gid)) || !(f = fdopen(fd, "w"))) {
		p_err(ctx, "-o %s: %s", file, strerror(errno));
		goto out;
	}
	fd = -1;
	if (fill(ctx, f, arg))
		goto out;
	if (fflush(f) || fsync(fileno(f)) || ferror(f)) {
		p_err(ctx, "-o %s: writing: %s", file, strerror(errno));
		goto out;
	}
	if (rename(tmp, file)) {
		p_err(ctx, "-o %s: %s", file, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* The user root acts for: under sudo, the one who ran it (SUDO_UID,
 * which only root's own environment sets; an operator's clone of the
 * project stays theirs), else nobody but root. */
static bool sudo_user(uid_t uid)
{
	const char *v = geteuid() == 0 ? getenv("SUDO_UID") : NULL;
	char *end;
	unsigned long u;

	if (!v || !*v)
		return false;
	errno = 0;
	u = strtoul(v, &end, 10);
	return !*end && !errno && u == uid;
}

/* Whom st lets change the file: its owner is root, the caller or the user
 * the caller runs sudo for, and neither group nor others may write it (a
 * directory: unless sticky, as /tmp is, where others may not rename over
 * what is not theirs). */
static const char *untrusted(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid() && !sudo_user(st->st_uid))
		return "owned by another user";
	if ((st->st_mode & 022) && !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX)))
		return "writable by group or others";
	return NULL;
}

int file_trusted(const struct ctx *ctx, const char *what, const char *path)
{
	char *copy = strdup(path), dir[PATH_MAX];
	const char *why = NULL, *which = path;
	struct stat st;

	if (!copy) {
		p_err(ctx, "out of memory");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", dirname(copy));
	free(copy);
	if (!stat(path, &st))
		why = untrusted(&st);
	if (!why && !stat(dir, &st) && (why = untrusted(&st)))
		which = dir;
	if (!why)
		return 0;
	p_err(ctx, "%s %s: %s%s (uid %u, mode %04o): anyone who can change it would choose what "
	      "htbctl loads as root; make it root's and not writable by others (chown root, chmod go-w)",
	      what, path, which == dir ? "its directory is " : "", why, (unsigned)st.st_uid,
	      (unsigned)(st.st_mode & 07777));
	return -1;
}

bool ifname_valid(const char *name, const char **why)
{
	const char *bad = NULL;

	if (!*name)
		bad = "it is empty";
	else if (strnlen(name, IFNAMSIZ) >= IFNAMSIZ)
		bad = "it is longer than 15 bytes";
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		bad = "'.' and '..' are not allowed";
	for (const char *c = name; !bad && *c; c++) {
		if (*c == '/')
			bad = "it contains '/'";
		else if (*c == ':')
			bad = "it contains ':'";
		/* the kernel's isspace(), which counts Latin-1's no-break
		 * space (0xa0) as white space too */
		else if (isspace((unsigned char)*c) || (unsigned char)*c == 0xa0)
			bad = "it contains white space";
	}
	if (why)
		*why = bad;
	return !bad;
}
