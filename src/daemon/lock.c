// SPDX-License-Identifier: GPL-2.0
/*
 * One daemon per device: two would fight over the tree, each reloading
 * its own file. The lock is a flock on a file in a directory only root
 * can write, so no other user can take it first or swap the file; bpffs
 * cannot hold regular files, hence /run. The device name is a path
 * component here: the daemon's checks (session_open) found a device of
 * that name, and the kernel allows no '/' in one, nor "." or "..".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "daemon/lock.h"

/* DAEMON_RUN_DIR, created if missing; refused unless it is a directory
 * (not a symlink to one) of root's that nobody else may write. */
static int run_dir_open(const struct ctx *ctx)
{
	struct stat st;
	int fd;

	if (mkdir(DAEMON_RUN_DIR, 0700) < 0 && errno != EEXIST) {
		p_err(ctx, "daemon: creating %s: %s", DAEMON_RUN_DIR, strerror(errno));
		return -1;
	}
	fd = open(DAEMON_RUN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* a symlink fails as ENOTDIR (O_DIRECTORY) or ELOOP */
		bool link = lstat(DAEMON_RUN_DIR, &st) == 0 && S_ISLNK(st.st_mode);

		p_err(ctx, "daemon: %s: %s (it must be a directory of root's, mode 0700; "
		      "remove it and htbctl makes it)", DAEMON_RUN_DIR,
		      link ? "a symlink" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		p_err(ctx, "daemon: %s: %s", DAEMON_RUN_DIR, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		p_err(ctx, "daemon: %s is owned by uid %u with mode %04o: another user could "
		      "take the daemon's lock (chown root %s; chmod 700 %s)", DAEMON_RUN_DIR,
		      (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), DAEMON_RUN_DIR,
		      DAEMON_RUN_DIR);
		close(fd);
		return -1;
	}
	return fd;
}

/* The lock is held: says by whom, from the pid its holder wrote. */
static void report_holder(const struct ctx *ctx, int fd, const char *ifname,
			  const char *name)
{
	char pid[24] = "";
	ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

	pid[n > 0 ? n : 0] = '\0';
	pid[strcspn(pid, "\n")] = '\0';
	p_err(ctx, "daemon: another daemon (pid %s) already keeps %s shaped (it holds "
	      "%s/%s); stop it first", *pid ? pid : "not written yet", ifname,
	      DAEMON_RUN_DIR, name);
}

static int write_pid(int fd)
{
	char pid[24];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, n, 0) != n)
		return -1;
	return 0;
}

int daemon_holder(const char *ifname)
{
	char path[sizeof(DAEMON_RUN_DIR) + 64], pid[24];
	int fd, holder = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/daemon.%s", DAEMON_RUN_DIR, ifname);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* a shared lock, at once released: it is refused only while the
	 * daemon holds its exclusive one */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		holder = atoi(pid) > 0 ? atoi(pid) : -1;
	}
	close(fd);
	return holder;
}

int daemon_lock(const struct ctx *ctx, const char *ifname)
{
	int dir = run_dir_open(ctx), fd;
	char name[64];
	struct stat st;

	if (dir < 0)
		return -1;
	snprintf(name, sizeof(name), "daemon.%s", ifname);
	fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dir);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0) {
		p_err(ctx, "daemon: %s/%s: %s", DAEMON_RUN_DIR, name,
		      fd < 0 ? strerror(errno) : "not a regular file of root's");
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			report_holder(ctx, fd, ifname, name);
		else
			p_err(ctx, "daemon: locking %s/%s: %s", DAEMON_RUN_DIR, name,
			      strerror(errno));
		goto fail;
	}
	if (write_pid(fd) < 0) {
		p_err(ctx, "daemon: writing %s/%s: %s", DAEMON_RUN_DIR, name, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}
