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
#include <limits.h>
#include <mntent.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "import/import.h"
#include "import/tc.h"


/* A veth per device the script names (one `ip link add` each, about
 * 5 ms): past this many the script is refused, naming the limit. */
#define MAX_DEVS 1024

/* After each command tc runs this unknown object, which it reports as a
 * failed command with its line number: the last one reported is the last
 * command tc got through (tc -batch exits mid-script on some parse
 * errors, and its exit status does not say where). */
#define PROBE "htbctl-applied"

struct script {
	const char *file;
	char *batch;			/* the tc commands, each followed by PROBE */
	size_t len, cap;
	unsigned *line;			/* command -> FILE line */
	bool *is_del;			/* a delete: failing on a fresh device is fine */
	unsigned n, capn;
	char (*devs)[IF_NAMESIZE];	/* sorted */
	int ndevs, capdevs;
	struct tc_line words;		/* the line being read */
};

static int grow_text(struct script *s, size_t need)
{
	if (s->len + need > s->cap) {
		size_t cap = (s->cap + need) * 2;
		char *b = realloc(s->batch, cap);

		if (!b)
			return -1;
		s->batch = b;
		s->cap = cap;
	}
	return 0;
}

static int grow_lines(struct script *s)
{
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
	return 0;
}

/* The checked words, quoted for tc, then the probe line. */
static int add_batch(struct script *s, unsigned line)
{
	size_t need = tc_join(&s->words, NULL, 0) + sizeof(PROBE) + 4;

	if (grow_text(s, need) || grow_lines(s))
		return -1;
	s->len += tc_join(&s->words, s->batch + s->len, s->cap - s->len);
	s->len += (size_t)snprintf(s->batch + s->len, s->cap - s->len, "\n" PROBE "\n");
	s->line[s->n] = line;
	s->is_del[s->n++] = s->words.del;
	return 0;
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Each device the command names, once (sorted: a script of thousands of
 * lines on a few devices looks each up by bisection). */
static int note_devs(const struct ctx *ctx, struct script *s, unsigned lineno)
{
	const char *name;
	int from = 0;

	while ((name = tc_next_dev(&s->words, &from))) {
		char key[IF_NAMESIZE];
		int at = 0;

		if (strlen(name) >= IF_NAMESIZE)
			continue;	/* tc refuses it, with its line */
		snprintf(key, sizeof(key), "%s", name);
		while (at < s->ndevs && strcmp(s->devs[at], key) < 0)
			at++;
		if (s->ndevs && bsearch(key, s->devs, s->ndevs, sizeof(s->devs[0]), cmp_dev))
			continue;
		if (s->ndevs == MAX_DEVS) {
			p_err(ctx, "%s:%u: device %s is more than %d devices: import script makes a veth for each (give the commands of fewer devices)",
			      s->file, lineno, key, MAX_DEVS);
			return -1;
		}
		if (s->ndevs == s->capdevs) {
			int cap = s->capdevs ? 2 * s->capdevs : 8;
			char (*v)[IF_NAMESIZE] = realloc(s->devs, cap * sizeof(*v));

			if (!v)
				return -1;
			s->devs = v;
			s->capdevs = cap;
		}
		memmove(s->devs[at + 1], s->devs[at], (s->ndevs - at) * sizeof(s->devs[0]));
		memcpy(s->devs[at], key, sizeof(key));
		s->ndevs++;
	}
	return 0;
}

static char *trim(char *l)
{
	char *e;

	while (*l == ' ' || *l == '\t')
		l++;
	for (e = l + strlen(l); e > l && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'); )
		*--e = '\0';
	return l;
}

/* One logical line (comments gone): tc's words, checked, into the batch. */
static int one_line(const struct ctx *ctx, struct script *s, char *l, unsigned lineno)
{
	char q[MSG_QUOTE_BUF];
	const char *why = NULL;
	char *t = trim(l);

	if (!*t)
		return 0;
	if (strpbrk(t, "$`")) {
		p_err(ctx, "%s:%u: shell expansion is not applied: give the expanded tc commands (for one, what `sh -x` prints)",
		      s->file, lineno);
		return -1;
	}
	msg_quote(q, sizeof(q), t);	/* before tc_split cuts it */
	if (tc_split(t, &s->words, &why)) {
		p_err(ctx, "%s:%u: %s: tc -batch would stop the script there", s->file, lineno, why);
		return -1;
	}
	tc_classify(&s->words);
	if (s->words.kind == TC_NONE) {
		p_warn(ctx, "%s:%u: skipped: not a tc command: %s", s->file, lineno, q);
		return 0;
	}
	why = tc_refusal(&s->words);
	if (why) {
		p_err(ctx, "%s:%u: %s", s->file, lineno, why);
		return -1;
	}
	if (note_devs(ctx, s, lineno))
		return -1;
	return add_batch(s, lineno);
}

/* A script is read whole from a regular file of at most this size: a
 * device (7112e5f read /dev/zero as one line until memory ran out) or a
 * FIFO (which blocks) is refused. 10,000 LibreQoS circuits are 1.6 MB. */
#define SCRIPT_MAX_BYTES	(64u << 20)

/* The file's bytes, at most SCRIPT_MAX_BYTES of them counted as read:
 * st_size alone let /proc/self/pagemap (size 0) grow past 7 GB. Read in
 * chunks of 64 KiB (pagemap takes only multiples of 8). An empty file
 * reads as one empty line (fmemopen takes no empty buffer). */
#define READ_CHUNK	(1u << 16)
static char *read_bounded(const struct ctx *ctx, const char *file, int fd, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	ssize_t k;

	do {
		if (n == cap) {
			char *b;

			cap = cap ? cap * 2 : READ_CHUNK;
			if (cap > SCRIPT_MAX_BYTES + READ_CHUNK)
				cap = SCRIPT_MAX_BYTES + READ_CHUNK;
			b = realloc(buf, cap);
			if (!b) {
				p_err(ctx, "%s: out of memory", file);
				free(buf);
				return NULL;
			}
			buf = b;
		}
		k = read(fd, buf + n, cap - n < READ_CHUNK ? cap - n : READ_CHUNK);
		n += k > 0 ? (size_t)k : 0;
	} while (k > 0 && n <= SCRIPT_MAX_BYTES);
	if (k < 0 || n > SCRIPT_MAX_BYTES) {
		if (k < 0)
			p_err(ctx, "%s: %s", file, strerror(errno));
		else
			p_err(ctx, "%s: over %u MiB: not a tc script htbctl reads", file,
			      SCRIPT_MAX_BYTES >> 20);
		free(buf);
		return NULL;
	}
	if (!n)
		buf[n++] = '\n';
	*len = n;
	return buf;
}

/* The script as a stream over its bytes (*text, freed by the caller). */
static FILE *open_script(const struct ctx *ctx, const char *file, char **text)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t len = 0;
	FILE *f;

	*text = NULL;
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
	*text = read_bounded(ctx, file, fd, &len);
	if (!*text)
		goto fail;
	close(fd);
	f = fmemopen(*text, len, "r");
	if (f)
		return f;
	p_err(ctx, "%s: %s", file, strerror(errno));
	free(*text);
	*text = NULL;
	return NULL;
fail:
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* The file as tc commands; continuation lines (ending in \) joined. */
static int read_script(const struct ctx *ctx, struct script *s)
{
	char *buf = NULL, *logical = NULL, *text;
	FILE *f = open_script(ctx, s->file, &text);
	size_t cap = 0, llen = 0;
	unsigned lineno = 0, start = 0;
	int rc = 0;

	if (!f)
		return -1;
	while (!rc && getline(&buf, &cap, f) >= 0) {
		size_t n = strcspn(buf, "#\r\n");	/* tc drops a comment before joining */
		bool more = n && buf[n - 1] == '\\' && buf[n] != '#';
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
	free(text);
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

/* tc and ip are the system's, found in these directories only, and run
 * with this environment only: the caller's PATH could name another tc,
 * and its TC_LIB_DIR load a library into the one that runs as root in
 * the scratch namespaces. */
static const char *const tool_dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
static char *const tool_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };

/* build/htbctl-test only: HTBCTL_TEST_TOOL_ENV=1 passes the caller's
 * environment on (tests/net/import.sh has TC_LIB_DIR load a probe into
 * tc to see what a command could do to the bpffs). */
#ifdef HTBCTL_TEST_HOOKS
extern char **environ;

static char *const *tool_environ(void)
{
	return getenv("HTBCTL_TEST_TOOL_ENV") ? environ : tool_env;
}
#else
static char *const *tool_environ(void)
{
	return tool_env;
}
#endif

/* The tool's path in tool_dirs (a regular executable), into buf; -1 with
 * errno ENOENT when none has it. */
static int tool_path(const char *name, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(tool_dirs) / sizeof(tool_dirs[0]); i++) {
		struct stat st;

		snprintf(buf, len, "%s/%s", tool_dirs[i], name);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			return 0;
	}
	errno = ENOENT;
	return -1;
}

/* Runs argv (argv[0] a tool of tool_dirs), its stdout to /dev/null and,
 * when err is given, its stderr into *err (malloc'ed). Its exit status,
 * 128 + the signal that ended it, or -1 with errno when it could not
 * start. */
static int run(char *const argv[], char **err)
{
	char path[64];

	posix_spawn_file_actions_t fa;
	int pfd[2] = { -1, -1 }, st = 0, rc;
	pid_t pid;

	if (tool_path(argv[0], path, sizeof(path)) || (err && pipe2(pfd, O_CLOEXEC)))
		return -1;
	posix_spawn_file_actions_init(&fa);
	if (err)
		posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, path, &fa, NULL, argv, tool_environ());
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

/* What tc said about one command: its lines since the previous command's
 * report, without the kernel's warnings about commands that worked
 * (sch_htb's "quantum ... is big") and the probe's own line, joined into
 * one line (in place). */
struct said {
	char *text;
	size_t len;
};

static void said_add(struct said *m, const char *l)
{
	if (!strncmp(l, "Warning:", 8) || !strncmp(l, "Object \"" PROBE "\"", sizeof(PROBE) + 7))
		return;
	if (m->len)
		m->text[m->len++] = ' ';
	memmove(m->text + m->len, l, strlen(l));
	m->len += strlen(l);
	m->text[m->len] = '\0';
}

/* "Command failed PATH:N" for our batch file: N, else 0. */
static unsigned failed_line(const char *l, const char *path)
{
	static const char head[] = "Command failed ";
	size_t plen = strlen(path);
	char *end;
	unsigned long n;

	if (strncmp(l, head, sizeof(head) - 1) || strncmp(l + sizeof(head) - 1, path, plen) ||
	    l[sizeof(head) - 1 + plen] != ':')
		return 0;
	n = strtoul(l + sizeof(head) + plen, &end, 10);
	return *end || n > 0xffffffffu ? 0 : (unsigned)n;
}

/*
 * tc -force -batch goes on after a failed command and names each one
 * ("Command failed FILE:N") after its message; command k is batch line
 * 2k-1, its probe 2k. A delete that fails is fine (the device is fresh:
 * there is nothing to delete); anything else that fails, or a command
 * whose probe never came (tc exited there), means the tree is not the
 * script's, so nothing is imported.
 */
static int check_failures(const struct ctx *ctx, const struct script *s, char *err,
			  const char *path, int status)
{
	struct said m = { err, 0 };
	unsigned done = 0;

	for (char *l = strtok(err, "\n"), *next; l; l = next) {
		unsigned n = failed_line(l, path);

		next = strtok(NULL, "\n");
		if (!n) {
			said_add(&m, l);
			continue;
		}
		if (n % 2 == 0) {
			done = n / 2;
		} else if ((n + 1) / 2 <= s->n && !s->is_del[(n - 1) / 2]) {
			p_err(ctx, "%s:%u: tc refused the command: %s", s->file, s->line[(n - 1) / 2],
			      m.len ? trim(m.text) : "(no message)");
			return -1;
		}
		m.len = 0;
	}
	if (done >= s->n)
		return 0;
	p_err(ctx, "%s:%u: tc stopped at this command (exit status %d), the rest not applied: %s",
	      s->file, s->line[done], status, m.len ? trim(m.text) : "(no message)");
	return -1;
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
	if (st < 0 || !err) {
		p_err(ctx, "%s: running tc: %s", s->file, st < 0 ? strerror(errno) : "out of memory");
		goto out;
	}
	rc = check_failures(ctx, s, err, path, st);
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

/*
 * The script's tc must not reach the machine's bpffs, whatever the line
 * checks let through (defence in depth: a bpf object's maps are pinned
 * there, and tc mounts a bpffs itself when it finds none). So the scratch
 * namespace has its own mounts too: nothing propagates back (/ private),
 * every bpffs mount is detached, and a fresh bpffs of its own (an empty
 * tmpfs where the kernel has none) covers /sys/fs/bpf, where tc looks
 * first. It all goes away with the process.
 */
static int detach_bpffs(void)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	char (*dirs)[PATH_MAX] = NULL;
	struct mntent *m;
	int n = 0, rc = 0;

	if (!f)
		return -1;
	while ((m = getmntent(f))) {
		char (*v)[PATH_MAX];

		if (strcmp(m->mnt_type, "bpf"))
			continue;
		v = realloc(dirs, (n + 1) * sizeof(*v));
		if (!v) {
			rc = -1;
			break;
		}
		dirs = v;
		snprintf(dirs[n++], PATH_MAX, "%s", m->mnt_dir);
	}
	endmntent(f);
	while (!rc && n--)	/* the last mounted first: a mount on a mount */
		if (umount2(dirs[n], MNT_DETACH) && errno != EINVAL && errno != ENOENT)
			rc = -1;
	free(dirs);
	return rc;
}

static int private_bpffs(const struct ctx *ctx)
{
	const char *step = "a private mount namespace";

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		goto fail;
	step = "detaching the machine's bpffs";
	if (detach_bpffs())
		goto fail;
	step = "a private bpffs on /sys/fs/bpf";
	if (mount("bpf", "/sys/fs/bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") &&
	    mount("tmpfs", "/sys/fs/bpf", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700,size=64k"))
		goto fail;
	return 0;
fail:
	p_err(ctx, "import script: %s: %s", step, strerror(errno));
	return -1;
}

int import_script_apply(const struct ctx *ctx, const char *file, const char *want_dev,
			char *dev, size_t devlen)
{
	struct script *s = calloc(1, sizeof(*s));
	int rc = -1;

	if (!s) {
		p_err(ctx, "out of memory");
		return -1;
	}
	s->file = file;
	if (read_script(ctx, s) || pick_dev(ctx, s, want_dev, dev, devlen))
		goto out;
	if (unshare(CLONE_NEWNET)) {
		p_err(ctx, "import script: a scratch network namespace: %s%s", strerror(errno),
		      errno == EPERM ? " (needs root: CAP_SYS_ADMIN)" : "");
		goto out;
	}
	if (private_bpffs(ctx) || make_devices(ctx, s) || apply_batch(ctx, s))
		goto out;
	rc = 0;
out:
	free(s->batch);
	free(s->line);
	free(s->is_del);
	free(s->devs);
	free(s);
	return rc;
}
