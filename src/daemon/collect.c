// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing loop's read of class_state (src/daemon/collect.h): the
 * collector program over the pinned class_state, and its class_seen mapped
 * into this process. Why not a batched lookup: bpf/htbctl_collect.bpf.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "daemon/collect.h"
#include "htbctl_collect.skel.h"

static int collect_load(struct collect *c, int state_fd, __u32 cap)
{
	struct htbctl_collect_bpf *s = htbctl_collect_bpf__open();
	int rc;

	if (!s)
		return -errno;
	c->skel = s;
	rc = bpf_map__reuse_fd(s->maps.class_state, state_fd);
	if (!rc)
		rc = bpf_map__set_max_entries(s->maps.class_seen, cap);
	if (!rc)
		rc = bpf_map__set_max_entries(s->maps.class_changed, (cap + 1) / 2);
	if (!rc)
		rc = htbctl_collect_bpf__load(s);
	if (rc)
		return rc;
	c->prog_fd = bpf_program__fd(s->progs.htb_collect);
	return 0;
}

/* The collector's map of cap values of vsize bytes, read-only here. */
static void *collect_mmap(const struct bpf_map *m, __u32 cap, size_t vsize, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = ((size_t)cap * vsize + page - 1) & ~(size_t)(page - 1);
	p = mmap(NULL, *len, PROT_READ, MAP_SHARED, bpf_map__fd(m), 0);
	return p == MAP_FAILED ? NULL : p;
}

static int collect_map(struct collect *c, __u32 cap)
{
	c->seen = collect_mmap(c->skel->maps.class_seen, cap, sizeof(*c->seen), &c->len);
	if (!c->seen)
		return -errno;
	c->changed = collect_mmap(c->skel->maps.class_changed, cap, sizeof(*c->changed),
				  &c->changed_len);
	return c->changed ? 0 : -errno;
}

int collect_open(struct collect *c, int state_fd, __u32 cap)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->cap = cap ? cap : 1;		/* a map holds one entry at least */
	rc = collect_load(c, state_fd, c->cap);
	if (!rc)
		rc = collect_map(c, c->cap);
	if (rc)
		collect_close(c);
	return rc;
}

int collect_run(struct collect *c, __u32 n)
{
	unsigned char frame[14] = { 0 };	/* what BPF_PROG_RUN needs of a tc run */
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame));

	c->skel->bss->n = n < c->cap ? n : c->cap;
	c->nchanged = 0;
	if (bpf_prog_test_run_opts(c->prog_fd, &o))
		return -errno;
	c->nchanged = c->skel->bss->changed;
	return 0;
}

void collect_close(struct collect *c)
{
	if (c->seen)
		munmap(c->seen, c->len);
	if (c->changed)
		munmap(c->changed, c->changed_len);
	htbctl_collect_bpf__destroy(c->skel);
	memset(c, 0, sizeof(*c));
}
