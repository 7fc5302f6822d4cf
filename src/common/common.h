/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HTBCTL_COMMON_H
#define HTBCTL_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>
#include "common/print.h"

/* Exit codes (shared/docs/interface.md). */
#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2

/* The daemon's hold on messages while a failure repeats: each error line
 * is kept in last (the newest), and printed only if mute is false. */
struct msg_tap {
	bool mute;
	char last[1024];
};

/* Everything a command needs from the command line; no globals. */
struct ctx {
	bool json;
	int verbose;
	const char *prog;	/* name messages start with; main() sets "htbctl" */
	struct msg_tap *tap;	/* NULL: every message printed */
};

/* One line on stderr ("htbctl: ..."); in JSON mode also {"error": ...} on
 * stdout so a script reading JSON sees the failure. The line is at most
 * about 1000 characters and escaped as msg_clip does, so whatever a value
 * in it holds reaches the terminal as text. */
void p_err(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void p_warn(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void p_info(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Values in messages (p_err and the config's FILE:LINE lines): a value a
 * user gave may be long, or hold a terminal's escape sequences.
 * msg_clip copies s into out (len bytes, NUL included) with every byte
 * that is not printable ASCII or part of a printable UTF-8 character
 * (control characters, C1 controls, invalid UTF-8) written as \xNN; if s
 * does not fit it ends in "...". Returns how many bytes of s it took.
 * msg_quote puts s in single quotes the same way, and says the length of
 * a value it cut: 'xxxx...' (1048576 bytes). MSG_QUOTE_BUF shows about
 * 80 characters of a value.
 */
#define MSG_QUOTE_BUF 128
size_t msg_clip(char *out, size_t len, const char *s);
const char *msg_quote(char *buf, size_t len, const char *s);

/*
 * Keyword arguments of the form "dev IFACE config FILE". Each wanted
 * keyword is given with a pointer to store its value; unknown keywords,
 * missing values and missing required keywords are usage errors.
 */
struct kwarg {
	const char *name;
	const char **value;
	bool required;
};
int parse_kwargs(const struct ctx *ctx, int argc, char **argv,
		 struct kwarg *kw, int nkw);

/*
 * Writes file through fill as a temporary file next to it, fsync'ed and
 * renamed over it: a reader sees the old file or the new, never a part
 * (node_exporter's textfile collector, a config a daemon watches). A new
 * file gets mode 0644, a replaced one keeps its group and its mode less
 * group and world write; anything but a regular file (a device, FIFO,
 * socket, directory, symbolic link) or a file of another user is refused
 * before fill runs. On failure the old file stays and one line is
 * printed.
 */
/* A file htbctl acts on as root (a config): 0 when its owner is root, the
 * caller or the user root runs sudo for, and neither group nor others may
 * write it or its directory (unless that is sticky); else -1 with one line
 * naming WHAT and why. */
int file_trusted(const struct ctx *ctx, const char *what, const char *path);

int write_file_atomic(const struct ctx *ctx, const char *file,
		      int (*fill)(const struct ctx *ctx, FILE *f, void *arg), void *arg);

/* What a file that is not a regular one is, for a message ("a FIFO"). */
const char *file_kind(mode_t mode);

/* Whether name can be a network device's: what the kernel's
 * dev_valid_name() accepts (1 to 15 bytes, not "." or "..", no '/', ':' or
 * white space). *why (if why is not NULL) gets the problem. */
bool ifname_valid(const char *name, const char **why);

#endif
