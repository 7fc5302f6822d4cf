// SPDX-License-Identifier: GPL-2.0
/* One reading of a loaded device's maps: see observe/snapshot.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/maps_fill.h"
#include "observe/snapshot.h"

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	for (__u32 i = 0; i < x->depth && i < y->depth; i++)
		if (x->ids[i] != y->ids[i])
			return x->ids[i] < y->ids[i] ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

char *sprint_classid(__u32 id, char *buf, size_t len)
{
	snprintf(buf, len, "%x:%x", id >> 16, id & 0xffff);
	return buf;
}

static int read_dev_stats(int fd, struct htb_dev_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct htb_dev_stats *v;
	__u32 key = 0;

	memset(sum, 0, sizeof(*sum));
	if (ncpu <= 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));	/* 72 bytes: already 8-aligned */
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, v)) {
		int rc = -errno;

		free(v);
		return rc;
	}
	for (int i = 0; i < ncpu; i++) {
		sum->unclassified_packets += v[i].unclassified_packets;
		sum->unclassified_bytes += v[i].unclassified_bytes;
		sum->control_packets += v[i].control_packets;
		sum->control_bytes += v[i].control_bytes;
		sum->stale_tstamps += v[i].stale_tstamps;
		sum->drops += v[i].drops;
	}
	free(v);
	return 0;
}

static int read_state(const struct maps *mp, struct snapshot *sn, __u64 interval_ns)
{
	int rc = maps_read_state(mp, sn->conf, sn->hw, sn->s1);

	sn->t1 = htb_clock_ns();
	if (!rc && interval_ns) {
		struct timespec ts = { interval_ns / HTB_NSEC_PER_SEC,
				       interval_ns % HTB_NSEC_PER_SEC };

		nanosleep(&ts, NULL);
		rc = maps_read_state(mp, sn->conf, sn->hw, sn->s2);
	} else if (!rc) {
		memcpy(sn->s2, sn->s1, (size_t)sn->hw * sizeof(*sn->s1));
	}
	sn->t2 = htb_clock_ns();
	return rc;
}

/* The loop's borrow limits, when its lease runs. */
static int read_share(const struct maps *mp, struct snapshot *sn)
{
	if (sn->t0 >= sn->rt.share_until_ns)
		return 0;
	sn->sh = calloc(sn->hw ? sn->hw : 1, sizeof(*sn->sh));
	if (!sn->sh)
		return -1;
	if (array_read(mp->fd[M_SHARE], 0, sn->hw, sn->sh, sizeof(*sn->sh), 0)) {
		free(sn->sh);
		sn->sh = NULL;
	}
	return 0;
}

int snapshot_take(const struct ctx *ctx, const struct maps *mp, __u32 hiwater,
		  __u64 interval_ns, struct snapshot *sn)
{
	__u32 hw;
	int rc = maps_get_runtime(mp, &sn->rt);

	sn->t0 = htb_clock_ns();
	if (rc) {
		p_err(ctx, "reading the runtime map: %s", strerror(-rc));
		return -1;
	}
	hw = sn->hw = hiwater < sn->rt.capacity ? hiwater : sn->rt.capacity;
	sn->conf = calloc(hw ? hw : 1, sizeof(*sn->conf));
	sn->s1 = calloc(hw ? hw : 1, sizeof(*sn->s1));
	sn->s2 = calloc(hw ? hw : 1, sizeof(*sn->s2));
	sn->rows = calloc(hw ? hw : 1, sizeof(*sn->rows));
	if (!sn->conf || !sn->s1 || !sn->s2 || !sn->rows) {
		p_err(ctx, "out of memory");
		return -1;
	}
	rc = array_read(mp->fd[M_CONF], (sn->rt.gen & 1) * sn->rt.capacity, hw,
			sn->conf, sizeof(*sn->conf), 0);
	if (rc) {
		p_err(ctx, "reading class_conf: %s", strerror(-rc));
		return -1;
	}
	sn->interval = interval_ns;
	rc = read_state(mp, sn, interval_ns);
	if (rc) {
		p_err(ctx, "reading class_state: %s", strerror(-rc));
		return -1;
	}
	if (read_dev_stats(mp->fd[M_DEVSTATS], &sn->ds))
		memset(&sn->ds, 0, sizeof(sn->ds));
	return read_share(mp, sn);
}

/* The valid classes, sorted as a tree: each after its parent, siblings by
 * class id. */
void snapshot_sort(struct snapshot *sn)
{
	for (__u32 s = 0; s < sn->hw; s++) {
		const struct htb_class_conf *c = &sn->conf[s];
		struct row *r;

		if (!(c->flags & HTB_CONF_VALID) || c->depth < 1 || c->depth > HTB_MAX_DEPTH)
			continue;
		r = &sn->rows[sn->nrows++];
		r->slot = s;
		r->depth = c->depth;
		for (__u32 d = 0; d < c->depth; d++) {
			__u32 ps = c->path[c->depth - 1 - d];

			r->ids[d] = ps < sn->hw ? sn->conf[ps].classid : 0;
		}
	}
	qsort(sn->rows, sn->nrows, sizeof(*sn->rows), row_cmp);
}

void snapshot_free(struct snapshot *sn)
{
	free(sn->conf);
	free(sn->s1);
	free(sn->s2);
	free(sn->sh);
	free(sn->rows);
	memset(sn, 0, sizeof(*sn));
}

__u64 snapshot_rate(const struct snapshot *sn, __u32 s, bool pkts)
{
	__u64 dt = sn->interval ? sn->t2 - sn->t1 : 0;
	__u64 d = pkts ? sn->s2[s].packets - sn->s1[s].packets : sn->s2[s].bytes - sn->s1[s].bytes;

	return dt ? (__u64)((unsigned __int128)d * HTB_NSEC_PER_SEC / dt) : 0;
}

static const char *const sort_names[] = {
	[SORT_RATE] = "rate", [SORT_DROPS] = "drops", [SORT_DELAY] = "delay",
	[SORT_BORROWED] = "borrowed",
};

int show_filter_parse(const struct ctx *ctx, const char *sort, const char *n,
		      struct show_filter *f)
{
	char *end;
	unsigned long v;
	int i;

	for (i = SORT_RATE; sort && i <= SORT_BORROWED; i++)
		if (!strcmp(sort, sort_names[i]))
			break;
	if (sort && i > SORT_BORROWED) {
		p_err(ctx, "sort '%s': expected rate, drops, delay or borrowed", sort);
		return -1;
	}
	if (sort)
		f->sort = (enum show_sort)i;
	if (!n)
		return 0;
	errno = 0;
	v = strtoul(n, &end, 10);
	if (*n < '1' || *n > '9' || *end || errno || v > 10000000) {
		p_err(ctx, "n '%s': expected a number of classes from 1", n);
		return -1;
	}
	f->n = (__u32)v;
	return 0;
}

/* The key a row sorts by, the largest first. */
static __u64 sort_key(const struct snapshot *sn, __u32 s, enum show_sort k)
{
	const struct htb_class_state *st = &sn->s2[s];

	switch (k) {
	case SORT_RATE: return snapshot_rate(sn, s, false);
	case SORT_DROPS: return st->drops + st->aqm_drops;
	case SORT_DELAY: return st->last_stamp > sn->t2 ? st->last_stamp - sn->t2 : 0;
	case SORT_BORROWED: return st->borrows;
	case SORT_TREE: break;
	}
	return 0;
}

static int by_key(const void *a, const void *b, void *arg)
{
	const struct snapshot *sn = ((void **)arg)[0];
	enum show_sort k = *(const enum show_sort *)((void **)arg)[1];
	__u64 x = sort_key(sn, ((const struct row *)a)->slot, k);
	__u64 y = sort_key(sn, ((const struct row *)b)->slot, k);

	return x < y ? 1 : x > y ? -1 : row_cmp(a, b);	/* ties in tree order */
}

/* Keeps the row of classid and its ancestors' (tree order holds them). */
static int keep_path(struct snapshot *sn, __u32 classid)
{
	__u32 n = 0, slot = ~0u;

	for (__u32 r = 0; r < sn->nrows; r++)
		if (sn->conf[sn->rows[r].slot].classid == classid)
			slot = sn->rows[r].slot;
	if (slot == ~0u)
		return -ENOENT;
	for (__u32 r = 0; r < sn->nrows; r++) {
		const struct htb_class_conf *c = &sn->conf[slot];
		bool on_path = false;

		for (__u32 d = 0; d < c->depth && d < HTB_MAX_DEPTH; d++)
			on_path |= c->path[d] == sn->rows[r].slot;
		if (on_path)
			sn->rows[n++] = sn->rows[r];
	}
	sn->nrows = n;
	return 0;
}

int show_filter_rows(struct snapshot *sn, const struct show_filter *f)
{
	if (f->classid && keep_path(sn, f->classid))
		return -ENOENT;
	if (f->sort != SORT_TREE) {
		void *arg[2] = { sn, (void *)&f->sort };

		qsort_r(sn->rows, sn->nrows, sizeof(*sn->rows), by_key, arg);
	}
	if (f->n && f->n < sn->nrows)
		sn->nrows = f->n;
	return 0;
}

void snapshot_memo_free(struct snapshot_memo *m)
{
	free(m->classid);
	free(m->bytes);
	free(m->packets);
	free(m->drops);
	memset(m, 0, sizeof(*m));
}

/* The previous reading as the snapshot's first read (its counters; drops
 * and aqm_drops together in s1.drops). */
void snapshot_memo_apply(const struct snapshot_memo *m, struct snapshot *sn)
{
	for (__u32 s = 0; s < sn->hw; s++) {
		const struct htb_class_state *b = &sn->s2[s];
		bool same = s < m->n && m->classid[s] == sn->conf[s].classid &&
			    m->bytes[s] <= b->bytes && m->packets[s] <= b->packets &&
			    m->drops[s] <= b->drops + b->aqm_drops;

		sn->s1[s].bytes = same ? m->bytes[s] : b->bytes;
		sn->s1[s].packets = same ? m->packets[s] : b->packets;
		sn->s1[s].drops = same ? m->drops[s] : b->drops + b->aqm_drops;
		sn->s1[s].aqm_drops = 0;
	}
	sn->t1 = m->t;
	sn->interval = sn->t2 - m->t;
}

/* This reading, for the next. Out of memory: no memo (two reads then). */
void snapshot_memo_save(struct snapshot_memo *m, const struct snapshot *sn)
{
	if (m->n != sn->hw) {
		snapshot_memo_free(m);
		m->classid = calloc(sn->hw + 1, sizeof(*m->classid));
		m->bytes = calloc(sn->hw + 1, sizeof(*m->bytes));
		m->packets = calloc(sn->hw + 1, sizeof(*m->packets));
		m->drops = calloc(sn->hw + 1, sizeof(*m->drops));
		if (!m->classid || !m->bytes || !m->packets || !m->drops) {
			snapshot_memo_free(m);
			return;
		}
		m->n = sn->hw;
	}
	for (__u32 s = 0; s < sn->hw; s++) {
		m->classid[s] = sn->conf[s].classid;
		m->bytes[s] = sn->s2[s].bytes;
		m->packets[s] = sn->s2[s].packets;
		m->drops[s] = sn->s2[s].drops + sn->s2[s].aqm_drops;
	}
	m->t = sn->t2;
}

