// SPDX-License-Identifier: GPL-2.0
/*
 * import script FILE: the script's tc commands applied to veth devices of
 * the same names in a scratch network namespace this process moves into
 * (the machine's own devices are never touched: the namespace holds only
 * what the script makes, and it goes away with the process). The kernel
 * then holds the tree, and import reads it as from a live device: tc
 * itself parses the script, so every tc spelling means what tc means.
 * veth, not dummy: the project's test kernels have veth built in, dummy
 * not always.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "import.h"

extern char **environ;

#define MAX_DEVS 8

struct script {
	const char *file;
	char *batch;			/* the tc commands, one per line */
	size_t len, cap;
	unsigned *line;			/* batch line -> FILE line */
	bool *is_del;			/* a delete: failing on a fresh device is fine */
	unsigned n, capn;
	char devs[MAX_DEVS][IF_NAMESIZE];
	int ndevs;
};

static int add_batch(struct script *s, const char *cmd, unsigned line, bool del)
{
	size_t need = strlen(cmd) + 2;

	if (s->len + need > s->cap) {
		size_t cap = (s->cap + need) * 2;
		char *b = realloc(s->batch, cap);

		if (!b)
			return -1;
		s->batch = b;
		s->cap = cap;
	}
	if (s->n == s->capn) {
		unsigned cap = s->capn ? 2 * s->capn : 256;
		unsigned *l = realloc(s->line, cap * sizeof(*l));
		bool *d = l ? realloc(s->is_del, cap * sizeof(*d)) : NULL;

		if (l)
			s->line = l;
		if (!d)
			return -1;
		s->is_del = d;
		s->capn = cap;
	}
	s->len += snprintf(s->batch + s->len, s->cap - s->len, "%s\n", cmd);
	s->line[s->n] = line;
	s->is_del[s->n++] = del;
	return 0;
}

static void note_dev(struct script *s, const char *cmd)
{
	const char *p = strstr(cmd, " dev ");
	char name[64];

	if (!p || sscanf(p + 5, "%63s", name) != 1 || strlen(name) >= IF_NAMESIZE)
		return;
	for (int i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i], name))
			return;
	if (s->ndevs < MAX_DEVS)
		snprintf(s->devs[s->ndevs++], IF_NAMESIZE, "%s", name);
}

/* The tc command in one logical line, or NULL: "tc qdisc add ...",
 * "/sbin/tc ...", "sudo tc ..." and a batch file's "qdisc add ..." all
 * give "qdisc add ...". */
static const char *tc_command(char *l)
{
	static const char *const objects[] = { "qdisc", "class", "filter", "chain", "action", "actions" };
	char *w = l;
	size_t n;

	if (!strncmp(w, "sudo ", 5))
		w += 5;
	n = strcspn(w, " \t");
	if ((n == 2 && !strncmp(w, "tc", 2)) || (n > 3 && !strncmp(w + n - 3, "/tc", 3))) {
		w += n;
		while (*w == ' ' || *w == '\t')
			w++;
		while (*w == '-') {		/* tc's own options: -s, -d, -force */
			w += strcspn(w, " \t");
			while (*w == ' ' || *w == '\t')
				w++;
		}
	}
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		size_t k = strlen(objects[i]);

		if (!strncmp(w, objects[i], k) && (w[k] == ' ' || w[k] == '\t' || !w[k]))
			return w;
	}
	return NULL;
}

static char *trim(char *l)
{
	char *e, *hash = strchr(l, '#');

	if (hash)
		*hash = '\0';
	while (*l == ' ' || *l == '\t')
		l++;
	for (e = l + strlen(l); e > l && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'); )
		*--e = '\0';
	return l;
}

static int one_line(const struct ctx *ctx, struct script *s, char *l, unsigned lineno)
{
	const char *cmd;
	char *t = trim(l);

	if (!*t)
		return 0;
	if (strpbrk(t, "$`")) {
		p_err(ctx, "%s:%u: shell expansion is not applied: give the expanded tc commands (for one, what `sh -x` prints)",
		      s->file, lineno);
		return -1;
	}
	cmd = tc_command(t);
	if (cmd && (strstr(cmd, " bpf ") || strstr(cmd, " object-file ") || strstr(cmd, " obj "))) {
		p_err(ctx, "%s:%u: a bpf filter or action is not imported (it would load a program, and may pin maps outside the scratch namespace)",
		      s->file, lineno);
		return -1;
	}
	if (!cmd) {
		char q[MSG_QUOTE_BUF];

		p_warn(ctx, "%s:%u: skipped: not a tc command: %s", s->file, lineno,
		       msg_quote(q, sizeof(q), t));
		return 0;
	}
	note_dev(s, cmd);
	return add_batch(s, cmd, lineno, strstr(cmd, " del ") || strstr(cmd, " delete ") ||
				       strstr(cmd, " flush"));
}

/* A script is read whole from a regular file of at most this size: a
 * device (7112e5f read /dev/zero as one line until memory ran out) or a
 * FIFO (which blocks) is refused. 10,000 LibreQoS circuits are 1.6 MB. */
#define SCRIPT_MAX_BYTES	(64u << 20)

static FILE *open_script(const struct ctx *ctx, const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	FILE *f;

	if (fd < 0 || fstat(fd, &st)) {
		p_err(ctx, "%s: %s", file, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		p_err(ctx, "%s: %s, not a regular file: a script is read from a file", file,
		      file_kind(st.st_mode));
		goto fail;
	}
	if ((unsigned long long)st.st_size > SCRIPT_MAX_BYTES) {
		p_err(ctx, "%s: over %u MiB: not a tc script htbctl reads", file,
		      SCRIPT_MAX_BYTES >> 20);
		goto fail;
	}
	f = fdopen(fd, "r");
	if (f)
		return f;
	p_err(ctx, "%s: %s", file, strerror(errno));
fail:
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* The file as tc commands; continuation lines (ending in \) joined. */
static int read_script(const struct ctx *ctx, struct script *s)
{
	FILE *f = open_script(ctx, s->file);
	char *buf = NULL, *logical = NULL;
	size_t cap = 0, llen = 0;
	unsigned lineno = 0, start = 0;
	int rc = 0;

	if (!f)
		return -1;
	while (!rc && getline(&buf, &cap, f) >= 0) {
		size_t n = strcspn(buf, "\r\n");
		bool more = n && buf[n - 1] == '\\';
		char *grown = realloc(logical, llen + n + 2);

		lineno++;
		if (!grown) {
			rc = -1;
			break;
		}
		logical = grown;
		if (!llen)
			start = lineno;
		memcpy(logical + llen, buf, n - more);
		llen += n - more;
		logical[llen++] = ' ';
		logical[llen] = '\0';
		if (!more) {
			rc = one_line(ctx, s, logical, start);
			llen = 0;
		}
	}
	if (!rc && llen)
		rc = one_line(ctx, s, logical, start);
	free(buf);
	free(logical);
	fclose(f);
	return rc;
}

/* Reads fd to its end into a malloc'ed string (*out; NULL on OOM, the
 * rest still read so the writer never blocks or dies of SIGPIPE). */
static void read_all(int fd, char **out)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap), scratch[4096];

	for (;;) {
		ssize_t k;

		if (buf && cap - len <= sizeof(scratch)) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
		k = read(fd, buf ? buf + len : scratch, buf ? cap - len - 1 : sizeof(scratch));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (buf)
			len += (size_t)k;
	}
	if (buf)
		buf[len] = '\0';
	*out = buf;
}

/* Runs argv, its stdout to /dev/null and, when err is given, its stderr
 * into *err (malloc'ed). Its exit status, 128 + the signal that ended it,
 * or -1 with errno when it could not start. */
static int run(char *const argv[], char **err)
{
	posix_spawn_file_actions_t fa;
	int pfd[2] = { -1, -1 }, st = 0, rc;
	pid_t pid;

	if (err && pipe2(pfd, O_CLOEXEC))
		return -1;
	posix_spawn_file_actions_init(&fa);
	if (err)
		posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		close(pfd[1]);
		if (rc == 0)
			read_all(pfd[0], err);
		close(pfd[0]);
	}
	if (rc) {
		errno = rc;
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int make_devices(const struct ctx *ctx, const struct script *s)
{
	for (int i = 0; i < s->ndevs; i++) {
		char peer[24], *argv[] = { "ip", "link", "add", (char *)s->devs[i], "type",
						    "veth", "peer", "name", peer, NULL };

		snprintf(peer, sizeof(peer), "htbimp%d", i);
		if (run(argv, NULL)) {
			p_err(ctx, "%s: cannot make device %s in the scratch namespace (ip link add failed)",
			      s->file, s->devs[i]);
			return -1;
		}
	}
	return 0;
}

/* The reason tc gave for one failed command: its lines before "Command
 * failed", without the kernel's warnings about earlier commands that
 * worked (sch_htb's "quantum ... is big"), joined into one line. */
static char *last_reason(char *msg)
{
	char *out = msg, *w = msg, *l;

	for (l = strtok(msg, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strncmp(l, "Warning:", 8))
			continue;
		if (w != out)
			*w++ = ' ';
		memmove(w, l, strlen(l));
		w += strlen(l);
	}
	*w = '\0';
	return trim(out);
}

/*
 * tc -force -batch goes on after a failed command and names each one
 * ("Command failed FILE:N"), after its message. A delete that fails is
 * fine (the device is fresh: there is nothing to delete); anything else
 * that fails means the tree is not the script's, so nothing is imported.
 */
static int check_failures(const struct ctx *ctx, const struct script *s, char *err)
{
	char *msg = err, *p;

	while ((p = strstr(msg, "Command failed "))) {
		char *colon, *eol = strchr(p, '\n');
		unsigned long n;

		*p = '\0';
		if (eol)
			*eol = '\0';	/* the number is the last thing on its line */
		colon = strrchr(p + 15, ':');
		n = colon ? strtoul(colon + 1, NULL, 10) : 0;
		if (n >= 1 && n <= s->n && !s->is_del[n - 1]) {
			char *m = last_reason(msg);

			p_err(ctx, "%s:%u: tc refused the command: %s", s->file, s->line[n - 1],
			      *m ? m : "(no message)");
			return -1;
		}
		msg = eol ? eol + 1 : p + strlen(p + 1) + 1;
		if (!eol)
			break;
	}
	return 0;
}

static int apply_batch(const struct ctx *ctx, const struct script *s)
{
	char path[64], *err = NULL;
	int fd = memfd_create("htbctl-import", 0), rc = -1, st;
	char *argv[] = { "tc", "-force", "-batch", path, NULL };

	if (fd < 0 || write(fd, s->batch, s->len) != (ssize_t)s->len) {
		p_err(ctx, "%s: %s", s->file, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	st = run(argv, &err);
	if (st < 0 || st >= 128 || !err) {
		p_err(ctx, "%s: running tc: %s", s->file,
		      st < 0 ? strerror(errno) : !err ? "out of memory" : "it was killed");
		goto out;
	}
	rc = check_failures(ctx, s, err);
out:
	if (fd >= 0)
		close(fd);
	free(err);
	return rc;
}

static int pick_dev(const struct ctx *ctx, const struct script *s, const char *want, char *dev,
		    size_t devlen)
{
	for (int i = 0; want && i < s->ndevs; i++)
		if (!strcmp(s->devs[i], want)) {
			snprintf(dev, devlen, "%s", want);
			return 0;
		}
	if (want) {
		p_err(ctx, "%s: no tc command names device %s", s->file, want);
		return -1;
	}
	if (!s->ndevs) {
		p_err(ctx, "%s: no tc command in the script names a device (dev NAME)", s->file);
		return -1;
	}
	if (s->ndevs > 1) {
		p_err(ctx, "%s: the script shapes %d devices: say which with dev NAME", s->file, s->ndevs);
		return -1;
	}
	snprintf(dev, devlen, "%s", s->devs[0]);
	return 0;
}

int import_script_apply(const struct ctx *ctx, const char *file, const char *want_dev,
			char *dev, size_t devlen)
{
	struct script s = { .file = file };
	int rc = -1;

	if (read_script(ctx, &s) || pick_dev(ctx, &s, want_dev, dev, devlen))
		goto out;
	if (unshare(CLONE_NEWNET)) {
		p_err(ctx, "import script: a scratch network namespace: %s%s", strerror(errno),
		      errno == EPERM ? " (needs root: CAP_SYS_ADMIN)" : "");
		goto out;
	}
	if (make_devices(ctx, &s) || apply_batch(ctx, &s))
		goto out;
	rc = 0;
out:
	free(s.batch);
	free(s.line);
	free(s.is_del);
	return rc;
}
