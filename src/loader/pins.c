// SPDX-License-Identifier: GPL-2.0
/* Device names, the pin directories htbctl trusts and its lock on them,
 * the meta map, stale-pin detection (loader/pins.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include "loader/pins.h"

const char *meta_dir_name(__u32 dir)
{
	return dir == META_DIR_DOWNLOAD ? "download" : dir == META_DIR_UPLOAD ? "upload" : NULL;
}

int pin_dir(const char *ifname, char *buf, size_t len)
{
	int n;

	if (!ifname_valid(ifname, NULL))
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s", PIN_ROOT, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pin_path(const char *ifname, const char *name, char *buf, size_t len)
{
	int n;

	if (!ifname_valid(ifname, NULL))
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s/%s", PIN_ROOT, ifname, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- what htbctl trusts (loader/pins.h) ---- */

static int say(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Fills why; returns err. */
static int say(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return err;
}

/* 0 if the directory open at fd (path in messages) is root's and nobody
 * else can write to it. A process that runs htbctl with capabilities but
 * not as root trusts its own directories too (root still only root's). */
static int check_owner(int fd, const char *path, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return say(why, len, -errno, "%s: %s", path, strerror(errno));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return say(why, len, -EPERM, "%s belongs to uid %u, not root%s, and htbctl "
			   "keeps pins only where nobody else can change them: remove it "
			   "(rm -r %s) and run htbctl again", path, (unsigned)st.st_uid,
			   geteuid() ? " or this user" : "", path);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return say(why, len, -EPERM, "%s is writable by others (mode %04o), and "
			   "htbctl keeps pins only where nobody else can change them: remove "
			   "it (rm -r %s), or chmod 700 it if only root wrote there, and run "
			   "htbctl again", path, (unsigned)(st.st_mode & 07777), path);
	return 0;
}

/* Why name in dirfd could not be opened as a directory: -ENOENT if it is
 * not there (why untouched). */
static int open_failed(int dirfd, const char *name, const char *path, int err,
		       char *why, size_t len)
{
	struct stat st;

	if (err == ENOENT)
		return -ENOENT;
	if ((err == ENOTDIR || err == ELOOP) &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return say(why, len, -ELOOP, "%s is a symbolic link, and htbctl "
				   "follows none where it keeps pins: remove it (rm %s) "
				   "and run htbctl again", path, path);
		return say(why, len, -ENOTDIR, "%s is not a directory: remove it (rm %s) "
			   "and run htbctl again", path, path);
	}
	return say(why, len, -err, "opening %s: %s", path, strerror(err));
}

/* The directory name in dirfd (path in messages), opened without
 * following a symlink and checked: the fd, or a negative errno (-ENOENT:
 * not there). */
static int open_trusted(int dirfd, const char *name, const char *path,
			char *why, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return open_failed(dirfd, name, path, errno, why, len);
	rc = check_owner(fd, path, why, len);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* The bpffs root: if others may write to it, only its sticky bit keeps
 * them from renaming root's PIN_ROOT away and putting their own there. */
static int open_bpffs(char *why, size_t len)
{
	int fd = open(BPFFS, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return say(why, len, -errno, "opening %s: %s", BPFFS, strerror(errno));
	if (fstat(fd, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(st.st_mode & S_ISVTX)) {
		close(fd);
		return say(why, len, -EPERM, "%s is writable by others but not sticky "
			   "(mode %04o), so anyone could put a directory of their own "
			   "in place of %s: chmod +t %s", BPFFS,
			   (unsigned)(st.st_mode & 07777), PIN_ROOT, BPFFS);
	}
	return fd;
}

/* PIN_ROOT, checked: its fd, or a negative errno (-ENOENT: not there).
 * *bpffs (if not NULL) gets the bpffs root's fd, to close. */
static int open_root(int *bpffs, char *why, size_t len)
{
	int bfd = open_bpffs(why, len), fd;

	if (bfd < 0)
		return bfd;
	fd = open_trusted(bfd, PIN_ROOT_NAME, PIN_ROOT, why, len);
	if (bpffs && fd >= 0)
		*bpffs = bfd;
	else
		close(bfd);
	return fd;
}

/* 0 if IFACE's directory is there as htbctl trusts it, -ENOENT if it (or
 * PIN_ROOT) is not there, another negative errno with why filled. */
static int dev_dir_state(const char *ifname, const char *dir, char *why,
			 size_t len)
{
	int rfd = open_root(NULL, why, len), fd;

	if (rfd < 0)
		return rfd;
	fd = open_trusted(rfd, ifname, dir, why, len);
	close(rfd);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int lock_failed(int err, char *why, size_t len)
{
	if (err == EWOULDBLOCK)
		return say(why, len, -EWOULDBLOCK, "%s is locked by another htbctl command",
			   PIN_ROOT);
	return say(why, len, -err, "locking %s: %s", PIN_ROOT, strerror(err));
}

/* Locks PIN_ROOT open at fd (how: LOCK_EX, or with LOCK_NB -EWOULDBLOCK
 * while another command holds it); -EAGAIN (fd closed) if it is no longer
 * PIN_ROOT when the lock is had: the command that held it removed it. */
static int lock_root(int bfd, int fd, int how, char *why, size_t len)
{
	struct stat st, now;
	int rc = 0;

	if (fstat(fd, &st) < 0)
		rc = say(why, len, -errno, "%s: %s", PIN_ROOT, strerror(errno));
	/* whoever can open it can hold the lock */
	else if ((st.st_mode & 077) && fchmod(fd, 0700) < 0)
		rc = say(why, len, -errno, "making %s mode 0700: %s", PIN_ROOT,
			 strerror(errno));
	else if (flock(fd, how) < 0)
		rc = lock_failed(errno, why, len);
	else if (fstatat(bfd, PIN_ROOT_NAME, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
		 now.st_dev != st.st_dev || now.st_ino != st.st_ino)
		rc = -EAGAIN;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

#define LOCK_TRIES 100

static int lock_how(bool *created, int how, char *why, size_t whylen)
{
	for (int i = 0; i < LOCK_TRIES; i++) {
		int bfd = open_bpffs(why, whylen), fd;

		if (bfd < 0)
			return bfd;
		*created = mkdirat(bfd, PIN_ROOT_NAME, 0700) == 0;
		if (!*created && errno != EEXIST) {
			fd = say(why, whylen, -errno, "creating %s: %s", PIN_ROOT,
				 strerror(errno));
			close(bfd);
			return fd;
		}
		fd = open_trusted(bfd, PIN_ROOT_NAME, PIN_ROOT, why, whylen);
		if (fd >= 0)
			fd = lock_root(bfd, fd, how, why, whylen);
		close(bfd);
		if (fd != -ENOENT && fd != -EAGAIN)
			return fd;
	}
	*created = false;
	return say(why, whylen, -EAGAIN, "%s was removed and made again %d times "
		   "while htbctl waited for its lock; run htbctl again", PIN_ROOT,
		   LOCK_TRIES);
}

int pins_lock(bool *created, char *why, size_t whylen)
{
	return lock_how(created, LOCK_EX, why, whylen);
}

int pins_lock_try(bool *created, char *why, size_t whylen)
{
	return lock_how(created, LOCK_EX | LOCK_NB, why, whylen);
}

void pins_unlock(int fd, bool created)
{
	if (fd < 0)
		return;
	/* still under the lock: nobody else can have put pins there */
	if (created)
		rmdir(PIN_ROOT);
	close(fd);
}

/* IFACE's directory, created (under the lock, in a trusted PIN_ROOT) or
 * found as htbctl trusts it. */
static int mkdir_dev(const char *ifname)
{
	char dir[256], why[512];
	int rfd, rc;

	rc = pin_dir(ifname, dir, sizeof(dir));
	if (rc)
		return rc;
	rfd = open_root(NULL, why, sizeof(why));
	if (rfd < 0)
		return rfd;
	rc = mkdirat(rfd, ifname, 0700) < 0 && errno != EEXIST ? -errno : 0;
	close(rfd);
	return rc ? rc : dev_dir_state(ifname, dir, why, sizeof(why));
}

int meta_write(int fd, const struct htbctl_meta *m)
{
	unsigned char chunk[META_CHUNK] = { 0 };
	__u32 key = 0;

	_Static_assert(sizeof(struct htbctl_meta) <= META_CHUNK, "meta fits a chunk");
	memcpy(chunk, m, sizeof(*m));
	return bpf_map_update_elem(fd, &key, chunk, BPF_ANY) ? -errno : 0;
}

int meta_create_pinned(const char *ifname, const struct htbctl_meta *m,
		       const struct qdisc_tree *t)
{
	__u32 nchunks = t ? (t->len + META_CHUNK - 1) / META_CHUNK : 0;
	char path[256];
	int fd, rc;

	rc = mkdir_dev(ifname);
	if (rc)
		return rc;
	rc = pin_path(ifname, PIN_META, path, sizeof(path));
	if (rc)
		return rc;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "htbctl_meta", sizeof(__u32),
			    META_CHUNK, 1 + nchunks, NULL);
	if (fd < 0)
		return -errno;
	rc = meta_write(fd, m);
	for (__u32 i = 0; !rc && i < nchunks; i++) {
		unsigned char chunk[META_CHUNK] = { 0 };
		__u32 key = 1 + i, n = t->len - i * META_CHUNK;

		memcpy(chunk, t->blob + i * META_CHUNK, n > META_CHUNK ? META_CHUNK : n);
		if (bpf_map_update_elem(fd, &key, chunk, BPF_ANY))
			rc = -errno;
	}
	if (!rc && bpf_obj_pin(fd, path))
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int meta_open(const char *ifname, struct htbctl_meta *m, struct qdisc_tree *t)
{
	unsigned char chunk[META_CHUNK];
	struct bpf_map_info info = { 0 };
	__u32 ilen = sizeof(info), key = 0;
	char path[256];
	int fd, rc;

	rc = pin_path(ifname, PIN_META, path, sizeof(path));
	if (rc)
		return rc;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen) ||
	    info.type != BPF_MAP_TYPE_ARRAY || info.value_size != META_CHUNK) {
		close(fd);
		return -EINVAL;
	}
	if (bpf_map_lookup_elem(fd, &key, chunk)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	memcpy(m, chunk, sizeof(*m));
	if (m->magic != META_MAGIC || m->version < META_VERSION_MIN || m->version > META_VERSION ||
	    (__u64)m->saved_len > (__u64)(info.max_entries - 1) * META_CHUNK) {
		close(fd);
		return -EINVAL;
	}
	if (t) {
		memset(t, 0, sizeof(*t));
		t->is_default = m->saved_is_default;
		t->root_handle = m->saved_root_handle;
		memcpy(t->root_kind, m->saved_root_kind, QDISC_KIND_LEN);
		t->root_kind[QDISC_KIND_LEN - 1] = '\0';
		t->nqdiscs = m->saved_nqdiscs;
		t->nclasses = m->saved_nclasses;
		t->len = m->saved_len;
		if (t->len) {
			t->blob = malloc(t->len);
			if (!t->blob) {
				close(fd);
				return -ENOMEM;
			}
			for (__u32 off = 0; off < t->len; off += META_CHUNK) {
				__u32 n = t->len - off;

				key = 1 + off / META_CHUNK;
				if (bpf_map_lookup_elem(fd, &key, chunk)) {
					rc = -errno;
					qdisc_tree_free(t);
					close(fd);
					return rc;
				}
				memcpy(t->blob + off, chunk, n > META_CHUNK ? META_CHUNK : n);
			}
		}
	}
	return fd;
}

static int prog_id_of(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	return (int)info.id;
}

__u64 netns_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? (__u64)st.st_ino : 0;
}

/* An ifb of ingress shaping is shaped only while the redirect to it is
 * on its device's ingress (docs/loader.md "Directions"): without it,
 * stale, so that the daemon loads again and load refuses. */
static enum pin_state redirect_state(const struct htbctl_meta *m, const char *dir,
				     char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = m->redirect_handle,
		    .priority = m->redirect_prio);

	if (!(m->flags & META_F_REDIRECT_ATTACHED))
		return PINS_OK;
	hook.ifindex = m->ingress_of[0] ? (int)if_nametoindex(m->ingress_of) : 0;
	if (!hook.ifindex || (__u32)hook.ifindex != m->ingress_ifindex ||
	    bpf_tc_query(&hook, &q) ||
	    (m->redirect_prog_id && q.prog_id != m->redirect_prog_id)) {
		snprintf(why, whylen, "%s is pinned but the redirect of %s's ingress "
			 "(pref %u) is gone", dir, m->ingress_of, m->redirect_prio);
		return PINS_STALE;
	}
	return PINS_OK;
}

enum pin_state pins_check(const char *ifname, int ifindex,
			  struct htbctl_meta *m, bool *have_meta,
			  char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts);
	char dir[256], path[256];
	int fd, id;

	*have_meta = false;
	if (pin_dir(ifname, dir, sizeof(dir))) {
		snprintf(why, whylen, "'%s' is not a device name", ifname);
		return PINS_UNTRUSTED;
	}
	switch (dev_dir_state(ifname, dir, why, whylen)) {
	case -ENOENT:
		return PINS_NONE;
	case 0:
		break;
	default:
		return PINS_UNTRUSTED;
	}
	fd = meta_open(ifname, m, NULL);
	if (fd < 0) {
		snprintf(why, whylen, "%s has no readable metadata (an earlier load "
			 "stopped before it finished)", dir);
		return PINS_STALE;
	}
	close(fd);
	*have_meta = true;
	if (m->netns_ino && netns_ino() && m->netns_ino != netns_ino()) {
		snprintf(why, whylen, "%s belongs to a device named %s in another "
			 "network namespace (nsfs inode %llu); pins are shared by all "
			 "namespaces, so htbctl can manage only one device of this "
			 "name", dir, ifname, (unsigned long long)m->netns_ino);
		return PINS_FOREIGN;
	}
	if (!(m->flags & META_F_COMPLETE)) {
		snprintf(why, whylen, "%s belongs to a load that did not finish", dir);
		return PINS_STALE;
	}
	if (!ifindex) {
		snprintf(why, whylen, "%s belongs to a device that no longer exists", dir);
		return PINS_STALE;
	}
	if ((__u32)ifindex != m->ifindex) {
		snprintf(why, whylen, "%s belongs to an earlier device named %s "
			 "(ifindex %u, now %d)", dir, ifname, m->ifindex, ifindex);
		return PINS_STALE;
	}
	if (pin_path(ifname, PIN_PROG, path, sizeof(path)) == 0 &&
	    (fd = bpf_obj_get(path)) >= 0) {
		id = prog_id_of(fd);
		close(fd);
	} else {
		snprintf(why, whylen, "%s has no pinned program", dir);
		return PINS_STALE;
	}
	hook.ifindex = ifindex;
	opts.handle = m->filter_handle;
	opts.priority = m->filter_prio;
	if (bpf_tc_query(&hook, &opts)) {
		snprintf(why, whylen, "%s is pinned but no filter of htbctl is "
			 "attached to %s egress", dir, ifname);
		return PINS_STALE;
	}
	if ((int)opts.prog_id != id) {
		snprintf(why, whylen, "%s is pinned but the filter at %s egress "
			 "(pref %u handle %u) runs another program", dir, ifname,
			 m->filter_prio, m->filter_handle);
		return PINS_STALE;
	}
	return redirect_state(m, dir, why, whylen);
}

/* Every entry of the directory open at dfd (path in messages). */
static int remove_entries(int dfd, const char *path, char *why, size_t len)
{
	int fd = dup(dfd), rc = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return say(why, len, -errno, "reading %s: %s", path, strerror(errno));
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT && !rc)
			rc = say(why, len, -errno, "removing %s/%s: %s", path, de->d_name,
				 strerror(errno));
	}
	closedir(d);
	return rc;
}

int pins_remove(const char *ifname, char *why, size_t whylen)
{
	int bfd = -1, rfd, dfd, rc;
	char dir[256];

	rc = pin_dir(ifname, dir, sizeof(dir));
	if (rc)
		return say(why, whylen, rc, "'%s' is not a device name", ifname);
	rfd = open_root(&bfd, why, whylen);
	if (rfd < 0)
		return rfd == -ENOENT ? 0 : rfd;
	dfd = open_trusted(rfd, ifname, dir, why, whylen);
	rc = dfd == -ENOENT ? 0 : dfd;
	if (dfd >= 0) {
		rc = remove_entries(dfd, dir, why, whylen);
		close(dfd);
		if (!rc && unlinkat(rfd, ifname, AT_REMOVEDIR) < 0 && errno != ENOENT)
			rc = say(why, whylen, -errno, "removing %s: %s", dir, strerror(errno));
	}
	/* only if empty: other devices keep it */
	unlinkat(bfd, PIN_ROOT_NAME, AT_REMOVEDIR);
	close(rfd);
	close(bfd);
	return rc;
}
