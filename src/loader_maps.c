// SPDX-License-Identifier: GPL-2.0
/* The pinned maps of a device and batched reads and writes of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "loader.h"
#include "pins.h"

const char *const map_names[M_NMAPS] = {
	[M_CONF] = "class_conf", [M_STATE] = "class_state",
	[M_RUNTIME] = "runtime", [M_TREE] = "tree_conf",
	[M_PRIO] = "cls_prio", [M_MARK] = "cls_mark",
	[M_DST4] = "cls_dst4", [M_SRC4] = "cls_src4",
	[M_DST6] = "cls_dst6", [M_SRC6] = "cls_src6",
	[M_PORT] = "cls_port", [M_CGROUP] = "cls_cgroup",
	[M_DEVSTATS] = "dev_stats",
};

void maps_close(struct maps *m)
{
	for (int i = 0; i < M_NMAPS; i++) {
		if (m->fd[i] > 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

int maps_open_pinned(const struct ctx *ctx, const char *ifname, struct maps *m)
{
	for (int i = 0; i < M_NMAPS; i++)
		m->fd[i] = -1;
	for (int i = 0; i < M_NMAPS; i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		char path[256];

		pin_path(ifname, map_names[i], path, sizeof(path));
		m->fd[i] = bpf_obj_get(path);
		if (m->fd[i] < 0) {
			p_err(ctx, "opening %s: %s", path, strerror(errno));
			maps_close(m);
			return -1;
		}
		if (bpf_obj_get_info_by_fd(m->fd[i], &info, &len) == 0)
			m->max_entries[i] = info.max_entries;
	}
	return 0;
}

/* The kernel's answer to a batch operation the map type lacks. */
static bool batch_unsupported(int err)
{
	return err == -EINVAL || err == -EOPNOTSUPP ||
	       err == -ENOSYS || err == -524 /* the kernel's ENOTSUPP */;
}

int array_read(int fd, __u32 first, __u32 n, void *vals, __u32 vsize,
	       __u64 elem_flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = elem_flags);
	__u32 *keys, done = 0, in, out;
	int rc = 0;

	if (!n)
		return 0;
	keys = malloc((size_t)n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	while (done < n) {
		__u32 count = n - done;

		/* in_batch is the key before the first one wanted. */
		in = first + done - 1;
		rc = bpf_map_lookup_batch(fd, first + done ? &in : NULL, &out,
					  keys, (char *)vals + (size_t)done * vsize,
					  &count, &opts);
		if (rc < 0)
			rc = -errno;
		if (rc && rc != -ENOENT) {
			if (!batch_unsupported(rc) || done)
				break;
			/* one by one */
			rc = 0;
			for (__u32 i = 0; i < n && !rc; i++) {
				__u32 k = first + i;

				if (bpf_map_lookup_elem_flags(fd, &k, (char *)vals +
							      (size_t)i * vsize, elem_flags))
					rc = -errno;
			}
			break;
		}
		done += count;
		if (rc == -ENOENT || count == 0) {
			rc = done < n ? -ENOENT : 0;
			break;
		}
		rc = 0;
	}
	free(keys);
	return rc;
}

int map_update_many(int fd, const void *keys, __u32 ksize, const void *vals,
		    __u32 vsize, __u32 n, __u64 elem_flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = elem_flags);
	__u32 done = 0;
	int rc;

	while (done < n) {
		__u32 count = n - done;

		rc = bpf_map_update_batch(fd, (const char *)keys + (size_t)done * ksize,
					  (const char *)vals + (size_t)done * vsize,
					  &count, &opts);
		if (rc == 0) {
			done += count;
			continue;
		}
		rc = -errno;
		if (!batch_unsupported(rc) || count)
			return rc;
		break;
	}
	for (; done < n; done++)
		if (bpf_map_update_elem(fd, (const char *)keys + (size_t)done * ksize,
					(const char *)vals + (size_t)done * vsize,
					elem_flags ? elem_flags : BPF_ANY))
			return -errno;
	return 0;
}

int map_delete_many(int fd, const void *keys, __u32 ksize, __u32 n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 done = 0;
	int rc;

	while (done < n) {
		__u32 count = n - done;

		rc = bpf_map_delete_batch(fd, (const char *)keys + (size_t)done * ksize,
					  &count, &opts);
		if (rc == 0) {
			done += count;
			continue;
		}
		rc = -errno;
		if (!batch_unsupported(rc) || count)
			return rc;
		break;
	}
	for (; done < n; done++)
		if (bpf_map_delete_elem(fd, (const char *)keys + (size_t)done * ksize) &&
		    errno != ENOENT)
			return -errno;
	return 0;
}

long map_dump(int fd, __u32 ksize, __u32 vsize, __u32 max_entries,
	      void **keysp, void **valsp)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t cap = max_entries ? max_entries : 1;
	unsigned char *keys, *vals, *prev = NULL, *batch = NULL;
	long n = 0;
	int rc;

	keys = malloc(cap * ksize);
	vals = malloc(cap * vsize);
	batch = malloc(ksize < 8 ? 8 : ksize);	/* hash maps: a bucket cursor */
	if (!keys || !vals || !batch) {
		rc = -ENOMEM;
		goto fail;
	}
	for (;;) {
		__u32 count = cap - n;

		if (!count)
			break;
		rc = bpf_map_lookup_batch(fd, n ? batch : NULL, batch,
					  keys + n * ksize, vals + n * vsize,
					  &count, &opts);
		if (rc < 0)
			rc = -errno;
		n += count;
		if (rc == -ENOENT)
			break;
		if (rc == 0)
			continue;
		if (!batch_unsupported(rc) || n)
			goto fail;
		/* No batch lookup for this map type: walk the keys. */
		n = 0;
		for (;;) {
			if (bpf_map_get_next_key(fd, prev, keys + n * ksize)) {
				if (errno == ENOENT)
					break;
				rc = -errno;
				goto fail;
			}
			if (bpf_map_lookup_elem(fd, keys + n * ksize, vals + n * vsize) == 0) {
				prev = keys + n * ksize;
				if ((size_t)++n == cap)
					break;
			} else if (errno != ENOENT) {
				rc = -errno;
				goto fail;
			} else {
				prev = keys + n * ksize;	/* vanished: go on past it */
			}
		}
		break;
	}
	free(batch);
	*keysp = keys;
	*valsp = vals;
	return n;
fail:
	free(keys);
	free(vals);
	free(batch);
	return rc;
}
