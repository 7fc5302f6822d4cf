// SPDX-License-Identifier: GPL-2.0
/* The datapath's maps and every read and write of them: src/loader/maps.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/bigmem.h"
#include "loader/maps.h"
#include "loader/maps_fill.h"
#include "htb/sched.h"
#include "loader/pins.h"
#include "htbctl.skel.h"

#define CLS_NAME_(id, nm, ktype, mtype, mflags, bit)	[M_CLS + HTB_CLS_##id] = #nm,
static const char *const names[M_NMAPS] = {
	[M_CONF] = "class_conf", [M_STATE] = "class_state",
	[M_RUNTIME] = "runtime", [M_TREE] = "tree_conf",
	[M_DEVSTATS] = "dev_stats", [M_SHARE] = "class_share",
	[M_FLOWS] = "flow_state", [M_BATCH] = "class_batch",
	[M_MINOR] = "cls_minor",
	HTB_CLASSIFIERS(CLS_NAME_)
};
#undef CLS_NAME_

#define CLS_DESC_(id, nm, ktype, mtype, mflags, bit)	\
	[HTB_CLS_##id] = { sizeof(ktype), HTB_SKIP_##id, mtype == BPF_MAP_TYPE_LPM_TRIE },
const struct cls_desc cls_desc[HTB_NCLS] = { HTB_CLASSIFIERS(CLS_DESC_) };
#undef CLS_DESC_

const char *map_name(enum map_id id)
{
	return id < M_NMAPS ? names[id] : "?";
}

/* Entries of a classifier map for nkeys config entries: room for a reload
 * that replaces all of them (old and new coexist during the switch). */
static __u32 cls_capacity(__u64 nkeys)
{
	__u64 c = 2 * nkeys;

	if (c < 1024)
		c = 1024;
	if (c > (1u << 24))
		c = 1u << 24;
	return (__u32)c;
}

/* Entries of flow_state for cap class slots: 16 flows a slot, at least
 * 4096 and at most 2^20 (about 80 MB of kernel memory at 80 bytes an LRU
 * entry). A full map evicts its least recently used flow, which then
 * looks new once: its next packet may take the sparse lane. */
static __u32 flows_capacity(__u32 cap)
{
	__u64 c = 16ull * cap;

	if (c < 4096)
		c = 4096;
	if (c > (1u << 20))
		c = 1u << 20;
	return (__u32)c;
}

/* The skeleton's maps by map_id: typed access, no lookup by name. */
static void skel_maps(struct htbctl_bpf *skel, struct bpf_map *out[M_NMAPS])
{
	out[M_CONF] = skel->maps.class_conf;
	out[M_STATE] = skel->maps.class_state;
	out[M_RUNTIME] = skel->maps.runtime;
	out[M_TREE] = skel->maps.tree_conf;
	out[M_DEVSTATS] = skel->maps.dev_stats;
	out[M_SHARE] = skel->maps.class_share;
	out[M_FLOWS] = skel->maps.flow_state;
	out[M_BATCH] = skel->maps.class_batch;
	out[M_MINOR] = skel->maps.cls_minor;
#define CLS_SKEL_(id, nm, ktype, mtype, mflags, bit)	\
	out[M_CLS + HTB_CLS_##id] = skel->maps.nm;
	HTB_CLASSIFIERS(CLS_SKEL_)
#undef CLS_SKEL_
}

int maps_size_skel(struct htbctl_bpf *skel, __u32 cap, const __u64 *nkeys,
		   __u32 top_minor)
{
	__u32 minors = top_minor >= cap ? top_minor + 1 : cap;
	struct bpf_map *map[M_NMAPS];
	int rc = 0;

	skel_maps(skel, map);
	rc |= bpf_map__set_max_entries(map[M_CONF], 2 * cap);	/* two generations */
	rc |= bpf_map__set_max_entries(map[M_STATE], cap);
	rc |= bpf_map__set_max_entries(map[M_SHARE], cap);
	rc |= bpf_map__set_max_entries(map[M_BATCH], cap);
	rc |= bpf_map__set_max_entries(map[M_FLOWS], flows_capacity(cap));
	/* cls_prio has an entry per leaf: as many as there are slots */
	rc |= bpf_map__set_max_entries(map[M_CLS + HTB_CLS_PRIO], cap);
	/* its array of one major: as many, or up to the load's highest
	 * minor (8 bytes an entry, beside class_conf's two 200-odd a slot;
	 * 512 kB at most); a later minor past it goes to the hash */
	rc |= bpf_map__set_max_entries(map[M_MINOR], minors < 0x10000 ? minors : 0x10000);
	for (int c = 0; c < HTB_NCLS; c++)
		if (c != HTB_CLS_PRIO)
			rc |= bpf_map__set_max_entries(map[M_CLS + c],
						       cls_capacity(nkeys[c]));
	return rc;
}

void maps_from_skel(struct maps *m, struct htbctl_bpf *skel)
{
	struct bpf_map *map[M_NMAPS];

	skel_maps(skel, map);
	m->owned = false;
	for (int i = 0; i < M_NMAPS; i++) {
		m->fd[i] = bpf_map__fd(map[i]);
		m->max_entries[i] = bpf_map__max_entries(map[i]);
	}
}

void maps_close(struct maps *m)
{
	for (int i = 0; i < M_NMAPS; i++) {
		if (m->owned && m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

/* The value size a pinned map must have, 0: not checked. The class maps
 * grew with the classifier slots per generation and with AQM (issue 12);
 * a program and maps of two layouts would misread every entry. */
static size_t pinned_value_size(int i)
{
	if (i >= M_CLS || i == M_MINOR)
		return sizeof(struct htb_cls_val);
	if (i == M_CONF)
		return sizeof(struct htb_class_conf);
	if (i == M_STATE)
		return sizeof(struct htb_class_state);
	if (i == M_BATCH)
		return sizeof(struct htb_class_batch);
	if (i == M_DEVSTATS)	/* it holds the path carry since issue 26 */
		return sizeof(struct htb_dev_stats);
	return 0;
}

/* m->prio_major from tree_conf (both generations hold the same). */
static int read_prio_major(const struct ctx *ctx, struct maps *m)
{
	struct htb_tree_conf t;
	__u32 key = 0;

	if (bpf_map_lookup_elem(m->fd[M_TREE], &key, &t)) {
		p_err(ctx, "reading tree_conf: %s", strerror(errno));
		maps_close(m);
		return -1;
	}
	m->prio_major = t.prio_major;
	if (m->fd[M_MINOR] < 0 && m->prio_major) {
		p_err(ctx, "tree_conf names major %x for cls_minor, which is not pinned",
		      m->prio_major);
		maps_close(m);
		return -1;
	}
	return 0;
}

int maps_open_pinned(const struct ctx *ctx, const char *ifname, struct maps *m)
{
	m->owned = true;
	for (int i = 0; i < M_NMAPS; i++)
		m->fd[i] = -1;
	for (int i = 0; i < M_NMAPS; i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		char path[256];

		pin_path(ifname, names[i], path, sizeof(path));
		m->fd[i] = bpf_obj_get(path);
		if (m->fd[i] < 0 && errno == ENOENT && i == M_MINOR) {
			/* pinned by an htbctl before cls_minor, whose program
			 * looks in cls_prio alone, where every entry then goes
			 * (tree_conf's prio_major was a zero pad) */
			m->max_entries[i] = 0;
			continue;
		}
		if (m->fd[i] < 0) {
			p_err(ctx, "opening %s: %s", path, strerror(errno));
			maps_close(m);
			return -1;
		}
		if (bpf_obj_get_info_by_fd(m->fd[i], &info, &len) == 0)
			m->max_entries[i] = info.max_entries;
		if (pinned_value_size(i) && info.value_size != pinned_value_size(i)) {
			p_err(ctx, "%s has %u-byte values, not %zu: it was pinned by an "
			      "older htbctl ('htbctl unload' and 'htbctl load' make it "
			      "anew)", path, info.value_size, pinned_value_size(i));
			maps_close(m);
			return -1;
		}
	}
	return read_prio_major(ctx, m);
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

/* Updates (vals) or deletes (vals NULL) n entries: batches while the
 * kernel takes them, one by one where the map type has no batch op. */
static int map_write_many(int fd, const void *keys, __u32 ksize, const void *vals,
			  __u32 vsize, __u32 n, __u64 elem_flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = elem_flags);
	const char *k = keys, *v = vals;
	__u32 done = 0;
	int rc;

	while (done < n) {
		__u32 count = n - done;

		rc = vals ? bpf_map_update_batch(fd, k + (size_t)done * ksize,
						 v + (size_t)done * vsize, &count, &opts)
			  : bpf_map_delete_batch(fd, k + (size_t)done * ksize, &count, &opts);
		if (rc == 0) {
			done += count;
			continue;
		}
		rc = -errno;
		if (!batch_unsupported(rc) || count)
			return rc;
		break;
	}
	for (; done < n; done++) {
		rc = vals ? bpf_map_update_elem(fd, k + (size_t)done * ksize,
						v + (size_t)done * vsize,
						elem_flags ? elem_flags : BPF_ANY)
			  : bpf_map_delete_elem(fd, k + (size_t)done * ksize);
		if (rc && (vals || errno != ENOENT))
			return -errno;
	}
	return 0;
}

int map_update_many(int fd, const void *keys, __u32 ksize, const void *vals,
		    __u32 vsize, __u32 n, __u64 elem_flags)
{
	return map_write_many(fd, keys, ksize, vals, vsize, n, elem_flags);
}

int map_delete_many(int fd, const void *keys, __u32 ksize, __u32 n)
{
	return map_write_many(fd, keys, ksize, NULL, 0, n, 0);
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

/* ---- the datapath's entries ---- */

int maps_put_conf(const struct maps *m, __u32 gen, __u32 cap, const __u32 *slots,
		  const struct htb_class_conf *conf, __u32 n)
{
	__u32 *keys = malloc((size_t)(n ? n : 1) * sizeof(*keys));
	int rc;

	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++)
		keys[i] = (gen & 1) * cap + slots[i];
	rc = map_update_many(m->fd[M_CONF], keys, sizeof(*keys), conf, sizeof(*conf), n, 0);
	free(keys);
	return rc;
}

int maps_clear_batches(const struct maps *m, const __u32 *slots, __u32 n)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 vsize, chunk = 256;
	void *z;
	int rc = 0;

	if (ncpu < 1)
		return ncpu ? ncpu : -EINVAL;
	vsize = (__u32)ncpu * sizeof(struct htb_class_batch);
	z = calloc(chunk, vsize);
	if (!z)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !rc; i += chunk)
		rc = map_update_many(m->fd[M_BATCH], slots + i, sizeof(*slots), z, vsize,
				     n - i < chunk ? n - i : chunk, 0);
	free(z);
	return rc;
}

int maps_init_state(const struct maps *m, const __u32 *slots,
		    const struct htb_class_conf *conf, __u32 n, __u64 now)
{
	struct htb_class_state *st = calloc(n ? n : 1, sizeof(*st));
	int rc;

	if (!st)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++)
		htb_state_init(&st[i], &conf[i], now);
	rc = map_update_many(m->fd[M_STATE], slots, sizeof(*slots), st, sizeof(*st),
			     n, BPF_F_LOCK);
	free(st);
	return rc;
}

int maps_clear_state(const struct maps *m, const __u32 *slots, __u32 n)
{
	struct htb_class_state *z = calloc(n ? n : 1, sizeof(*z));
	int rc;

	if (!z)
		return -ENOMEM;
	rc = map_update_many(m->fd[M_STATE], slots, sizeof(*slots), z, sizeof(*z),
			     n, BPF_F_LOCK);
	if (!rc)
		rc = maps_clear_batches(m, slots, n);
	free(z);
	return rc;
}

/* A class's state with one CPU's batch in it. */
static void fold_batch(const struct htb_class_conf *c, struct htb_class_state *st,
		       const struct htb_class_batch *a)
{
	if (!a->packets)
		return;
	st->tokens -= (__s64)(htb_batch_rcost(c, a) >> c->rate.shift);
	st->ctokens -= (__s64)(htb_batch_ccost(c, a) >> c->ceil.shift);
	st->btokens -= (__s64)htb_batch_bns(a);
	st->bytes += a->bytes;
	st->packets += a->packets;
	st->lends += a->lends;
	st->borrows += a->borrows;
}

/* Whether CPU k's batch of a class was applied between two reads. */
static bool applied_between(const struct htb_class_batch *b1,
			    const struct htb_class_batch *b2, int ncpu)
{
	for (int k = 0; k < ncpu; k++)
		if (b1[k].applied != b2[k].applied)
			return true;
	return false;
}

/* One class read again alone, batches before and after its state, until
 * no batch was applied in between (a few tries; then as read). */
static int reread_class(const struct maps *m, __u32 slot, int ncpu,
			struct htb_class_state *st, struct htb_class_batch *b1,
			struct htb_class_batch *b2)
{
	for (int t = 0; t < 4; t++) {
		if (bpf_map_lookup_elem(m->fd[M_BATCH], &slot, b1) ||
		    bpf_map_lookup_elem_flags(m->fd[M_STATE], &slot, st, BPF_F_LOCK) ||
		    bpf_map_lookup_elem(m->fd[M_BATCH], &slot, b2))
			return -errno;
		if (!applied_between(b1, b2, ncpu))
			break;
	}
	return 0;
}

/*
 * State and batches of n slots in chunks of 256: batches, state, batches.
 * A batch applied between the two batch reads may or may not be in the
 * state read (it would be counted twice or not at all), so such a class
 * is read again alone (reread_class).
 */
int maps_read_state(const struct maps *m, const struct htb_class_conf *conf,
		    __u32 n, struct htb_class_state *st)
{
	int ncpu = libbpf_num_possible_cpus(), rc = 0;
	const __u32 chunk = 256;
	struct htb_class_batch *b1, *b2;
	__u32 vsize;

	if (ncpu < 1)
		return -EINVAL;
	vsize = (__u32)ncpu * sizeof(*b1);
	b1 = calloc(chunk, vsize);
	b2 = calloc(chunk, vsize);
	for (__u32 first = 0; first < n && !rc && b1 && b2; first += chunk) {
		__u32 cnt = n - first < chunk ? n - first : chunk;

		rc = array_read(m->fd[M_BATCH], first, cnt, b1, vsize, 0);
		if (!rc)
			rc = array_read(m->fd[M_STATE], first, cnt, st + first, sizeof(*st),
					BPF_F_LOCK);
		if (!rc)
			rc = array_read(m->fd[M_BATCH], first, cnt, b2, vsize, 0);
		for (__u32 i = 0; i < cnt && !rc; i++) {
			const struct htb_class_conf *c = &conf[first + i];
			struct htb_class_batch *x = b1 + (size_t)i * ncpu, *y = b2 + (size_t)i * ncpu;

			if (!(c->flags & HTB_CONF_VALID))
				continue;
			if (applied_between(x, y, ncpu))
				rc = reread_class(m, first + i, ncpu, &st[first + i], x, y);
			for (int k = 0; k < ncpu && !rc; k++)
				fold_batch(c, &st[first + i], &y[k]);
		}
	}
	if (!b1 || !b2)
		rc = -ENOMEM;
	free(b1);
	free(b2);
	return rc;
}

int maps_put_tree(struct maps *m, __u32 gen, const struct htb_tree_conf *t)
{
	__u32 key = gen & 1;

	m->prio_major = t->prio_major;
	return map_update_many(m->fd[M_TREE], &key, sizeof(key), t, sizeof(*t), 1, 0);
}

/* The keys of e[0..n) packed at the map's key size. */
static unsigned char *ent_keys(const struct ent *e, __u32 n, __u32 ksize)
{
	unsigned char *keys = malloc((size_t)(n ? n : 1) * ksize);

	for (__u32 i = 0; keys && i < n; i++)
		memcpy(keys + (size_t)i * ksize, e[i].key, ksize);
	return keys;
}

/* The entries of n ents at the map's key size, and their values. */
static int put_ents(int fd, __u32 ksize, const struct ent *e, __u32 n)
{
	struct htb_cls_val *vals = malloc((size_t)(n ? n : 1) * sizeof(*vals));
	unsigned char *keys = ent_keys(e, n, ksize);
	int rc = -ENOMEM;

	if (keys && vals) {
		for (__u32 i = 0; i < n; i++)
			memcpy(vals[i].slot, e[i].val, sizeof(vals[i].slot));
		rc = map_update_many(fd, keys, ksize, vals, sizeof(*vals), n, 0);
	}
	free(keys);
	free(vals);
	return rc;
}

/* The keys of n ents out of a map of ksize-byte keys. */
static int del_ents(int fd, __u32 ksize, const struct ent *e, __u32 n)
{
	unsigned char *keys = ent_keys(e, n, ksize);
	int rc = keys ? map_delete_many(fd, keys, ksize, n) : -ENOMEM;

	free(keys);
	return rc;
}

/* Whether classid cid's priority entry lives in cls_minor. */
static bool in_minor(const struct maps *m, __u32 cid)
{
	return m->prio_major && cid >> 16 == m->prio_major &&
	       (cid & 0xffff) < m->max_entries[M_MINOR];
}

/* cls_prio's entries split by where they live: mine, rekeyed by minor
 * (cls_minor), and rest (cls_prio). */
struct prio_split {
	struct ent *mine, *rest;
	__u32 nmine, nrest;
};

static int split_prio(const struct maps *m, const struct ent *e, __u32 n,
		      struct prio_split *sp)
{
	sp->mine = calloc(n ? n : 1, sizeof(*sp->mine));
	sp->rest = calloc(n ? n : 1, sizeof(*sp->rest));
	sp->nmine = sp->nrest = 0;
	if (!sp->mine || !sp->rest)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		__u32 cid, minor;

		memcpy(&cid, e[i].key, sizeof(cid));
		if (!in_minor(m, cid)) {
			sp->rest[sp->nrest++] = e[i];
			continue;
		}
		minor = cid & 0xffff;
		sp->mine[sp->nmine] = e[i];
		memset(sp->mine[sp->nmine].key, 0, sizeof(sp->mine[0].key));
		memcpy(sp->mine[sp->nmine++].key, &minor, sizeof(minor));
	}
	return 0;
}

static void split_free(struct prio_split *sp)
{
	free(sp->mine);
	free(sp->rest);
}

/* cls_prio's entries: rest into the hash; mine into the array, or "no
 * class" there in place of a delete (del). */
static int put_prio(const struct maps *m, const struct ent *e, __u32 n, bool del)
{
	struct prio_split sp;
	int rc = split_prio(m, e, n, &sp);

	for (__u32 i = 0; !rc && del && i < sp.nmine; i++)
		sp.mine[i].val[0] = sp.mine[i].val[1] = HTB_NO_CLASS;
	if (!rc)
		rc = put_ents(m->fd[M_MINOR], sizeof(__u32), sp.mine, sp.nmine);
	if (!rc)
		rc = (del ? del_ents : put_ents)(m->fd[M_CLS + HTB_CLS_PRIO],
						 sizeof(__u32), sp.rest, sp.nrest);
	split_free(&sp);
	return rc;
}

int maps_init_minor(const struct maps *m)
{
	__u32 n = m->max_entries[M_MINOR];
	struct ent *e = calloc(n ? n : 1, sizeof(*e));
	int rc;

	if (!e)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		memcpy(e[i].key, &i, sizeof(i));
		e[i].val[0] = e[i].val[1] = HTB_NO_CLASS;
	}
	rc = put_ents(m->fd[M_MINOR], sizeof(__u32), e, n);
	free(e);
	return rc;
}

int maps_put_cls(const struct maps *m, enum htb_cls c, const struct ent *e, __u32 n)
{
	if (c == HTB_CLS_PRIO)
		return put_prio(m, e, n, false);
	return put_ents(m->fd[M_CLS + c], cls_desc[c].ksize, e, n);
}

int maps_del_cls(const struct maps *m, enum htb_cls c, const struct ent *e, __u32 n)
{
	if (c == HTB_CLS_PRIO)
		return put_prio(m, e, n, true);
	return del_ents(m->fd[M_CLS + c], cls_desc[c].ksize, e, n);
}

/* cls_minor's entries that select a class in either generation, keyed by
 * classid, appended to e[0..n) (room for its size). Returns the new n. */
static long dump_minor(const struct maps *m, struct ent *e, long n)
{
	__u32 size = m->max_entries[M_MINOR];
	struct htb_cls_val *v = calloc(size ? size : 1, sizeof(*v));
	int rc = v ? array_read(m->fd[M_MINOR], 0, size, v, sizeof(*v), 0) : -ENOMEM;

	for (__u32 i = 0; !rc && i < size; i++) {
		__u32 cid = m->prio_major << 16 | i;

		if (v[i].slot[0] == HTB_NO_CLASS && v[i].slot[1] == HTB_NO_CLASS)
			continue;
		memset(&e[n], 0, sizeof(e[n]));
		memcpy(e[n].key, &cid, sizeof(cid));
		memcpy(e[n].val, v[i].slot, sizeof(e[n].val));
		n++;
	}
	free(v);
	return rc ? rc : n;
}

long maps_dump_cls(const struct maps *m, enum htb_cls c, struct ent **out)
{
	__u32 ksize = cls_desc[c].ksize;
	__u32 extra = c == HTB_CLS_PRIO ? m->max_entries[M_MINOR] : 0;
	void *keys = NULL, *vals = NULL;
	long n = map_dump(m->fd[M_CLS + c], ksize, sizeof(struct htb_cls_val),
			  m->max_entries[M_CLS + c], &keys, &vals);
	struct ent *e;

	if (n < 0)
		return n;
	e = big_calloc((size_t)n + extra, sizeof(*e));
	for (long i = 0; e && i < n; i++) {
		memcpy(e[i].key, (char *)keys + i * ksize, ksize);
		memcpy(e[i].val, ((struct htb_cls_val *)vals)[i].slot, sizeof(e[i].val));
		if (cls_desc[c].lpm)
			ent_normalize_lpm(&e[i], ksize);
	}
	free(keys);
	free(vals);
	if (!e)
		return -ENOMEM;
	if (extra)
		n = dump_minor(m, e, n);
	if (n < 0) {
		big_free(e);
		return n;
	}
	*out = e;
	return n;
}

int maps_get_runtime(const struct maps *m, struct htb_runtime *rt)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(m->fd[M_RUNTIME], &key, rt) ? -errno : 0;
}

int maps_set_runtime(const struct maps *m, const struct htb_runtime *rt)
{
	__u32 key = 0;

	return map_update_many(m->fd[M_RUNTIME], &key, sizeof(key), rt, sizeof(*rt), 1, 0);
}

void ent_normalize_lpm(struct ent *e, __u32 ksize)
{
	__u32 plen, nbytes = ksize - 4;
	__u8 *a = e->key + 4;

	memcpy(&plen, e->key, 4);
	if (plen > nbytes * 8)
		plen = nbytes * 8;
	for (__u32 i = 0; i < nbytes; i++) {
		__u32 bits = plen > i * 8 ? plen - i * 8 : 0;

		if (bits >= 8)
			continue;
		a[i] &= (__u8)(0xff00u >> bits);
	}
}
