// SPDX-License-Identifier: GPL-2.0
/* The pin directory of a device, the meta map, stale-pin detection. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pins.h"

#define BPFFS "/sys/fs/bpf"

int pin_dir(const char *ifname, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", PIN_ROOT, ifname);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pin_path(const char *ifname, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s/%s", PIN_ROOT, ifname, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The lock is on the bpffs root itself: it always exists, and htbctl
 * leaves nothing behind to hold a lock on. */
int pins_lock(void)
{
	int fd = open(BPFFS, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int mkdir_p(const char *ifname)
{
	char dir[256];
	int rc;

	if (mkdir(PIN_ROOT, 0700) < 0 && errno != EEXIST)
		return -errno;
	rc = pin_dir(ifname, dir, sizeof(dir));
	if (rc)
		return rc;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
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

	rc = mkdir_p(ifname);
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
	if (m->magic != META_MAGIC || m->version != META_VERSION ||
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

enum pin_state pins_check(const char *ifname, int ifindex,
			  struct htbctl_meta *m, bool *have_meta,
			  char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts);
	char dir[256], path[256];
	struct stat st;
	int fd, id;

	*have_meta = false;
	if (pin_dir(ifname, dir, sizeof(dir)) || stat(dir, &st) < 0)
		return PINS_NONE;
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
	return PINS_OK;
}

int pins_remove(const char *ifname)
{
	char dir[256], path[512];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (pin_dir(ifname, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (unlink(path) < 0 && errno != ENOENT)
				rc = -errno;
		}
		closedir(d);
		if (rmdir(dir) < 0 && errno != ENOENT)
			rc = -errno;
	} else if (errno != ENOENT) {
		rc = -errno;
	}
	rmdir(PIN_ROOT);	/* only if empty: other devices keep it */
	return rc;
}
