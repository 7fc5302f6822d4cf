// SPDX-License-Identifier: GPL-2.0
/*
 * From a parsed config to what the maps must hold (a "plan"): class_conf
 * entries by slot, tree_conf, and the classifier maps' entries, sorted so
 * that a reload can diff them against what the maps hold now.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <bpf/bpf.h>

#include "common/bigmem.h"
#include "loader/pins.h"
#include "loader/plan.h"
#include "loader/maps_fill.h"

int kv_reserve(struct kv *kv, __u32 n)
{
	struct ent *v;

	if (n <= kv->cap)
		return 0;
	v = big_realloc(kv->e, n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	kv->e = v;
	kv->cap = n;
	return 0;
}

int kv_push(struct kv *kv, const void *key, __u32 val)
{
	struct ent *e;

	if (kv->n == kv->cap && kv_reserve(kv, kv->cap ? 2 * kv->cap : 64))
		return -ENOMEM;
	e = &kv->e[kv->n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->key, key, kv->ksize);
	e->val[0] = e->val[1] = val;
	return 0;
}

int kv_push_ent(struct kv *kv, const struct ent *e)
{
	int rc = kv_push(kv, e->key, 0);

	if (!rc)
		memcpy(kv->e[kv->n - 1].val, e->val, sizeof(e->val));
	return rc;
}

const struct ent *kv_find(const struct kv *kv, const void *key)
{
	__u32 lo = 0, hi = kv->n;

	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;
		int c = memcmp(kv->e[mid].key, key, kv->ksize);

		if (!c)
			return &kv->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void kv_free(struct kv *kv)
{
	big_free(kv->e);
	kv->e = NULL;
	kv->n = kv->cap = 0;
}

/*
 * Sorts by key in memcmp order (LSD radix sort, a byte per pass from the
 * last byte to the first; passes where every key has the same byte are
 * skipped) and drops repeated keys (the config allows a key twice only
 * within one class, so which copy stays does not matter).
 */
void kv_sort(struct kv *kv)
{
	struct ent *tmp, *src = kv->e, *dst;
	bool sorted = true;
	__u32 w = 0, n = kv->n;

	for (__u32 i = 1; i < n && sorted; i++)
		sorted = memcmp(src[i - 1].key, src[i].key, kv->ksize) <= 0;
	if (!sorted && (tmp = big_calloc(n, sizeof(*tmp)))) {
		dst = tmp;
		for (int b = (int)kv->ksize - 1; b >= 0; b--) {
			__u32 count[256] = { 0 }, pos = 0;

			for (__u32 i = 0; i < n; i++)
				count[src[i].key[b]]++;
			if (count[src[0].key[b]] == n)
				continue;
			for (int d = 0; d < 256; d++) {
				__u32 c = count[d];

				count[d] = pos;
				pos += c;
			}
			for (__u32 i = 0; i < n; i++)
				dst[count[src[i].key[b]]++] = src[i];
			struct ent *t = src;

			src = dst;
			dst = t;
		}
		if (src != kv->e)
			memcpy(kv->e, src, (size_t)n * sizeof(*src));
		big_free(tmp);
	}
	for (__u32 r = 0; r < n; r++) {
		if (w && !memcmp(kv->e[w - 1].key, kv->e[r].key, kv->ksize))
			kv->e[w - 1] = kv->e[r];
		else
			kv->e[w++] = kv->e[r];
	}
	kv->n = w;
}

void plan_free(struct plan *p)
{
	free(p->slot);
	big_free(p->conf);
	for (int i = 0; i < HTB_NCLS; i++)
		kv_free(&p->cls[i]);
	memset(p, 0, sizeof(*p));
}

/* A match's entries: its key as the map has it (the config parsed it in
 * that layout), a port range or a DSCP set expanded to one entry each. */
static int add_match(struct plan *p, const struct config_match *m, __u32 slot)
{
	struct kv *kv = &p->cls[m->kind];
	int rc = 0;

	if (m->kind >= HTB_NCLS)
		return -EINVAL;
	if (m->kind == CONFIG_MATCH_PORT) {
		struct htb_port_key k = m->key.port;

		for (__u32 port = m->key.port.port; port <= m->port_last && !rc; port++) {
			k.port = (__u16)port;
			rc = kv_push(kv, &k, slot);
		}
		return rc;
	}
	if (m->kind == CONFIG_MATCH_DSCP) {
		for (__u8 d = 0; d < 64 && !rc; d++)
			if (m->key.dscp & (1ull << d))
				rc = kv_push(kv, &d, slot);
		return rc;
	}
	rc = kv_push(kv, &m->key, slot);
	if (!rc && cls_desc[m->kind].lpm)
		ent_normalize_lpm(&kv->e[kv->n - 1], kv->ksize);
	return rc;
}

/* Every classifier's entries reserved before the first push: grown by
 * doubling, each went through malloc'ed blocks and their copies, 300-500
 * page faults of 4 KiB per classifier at 100,000 entries (docs/log.md
 * 2026-12-06, reload, second round). A leaf's prio entry is counted for
 * every class; what is not used is not touched. */
static int reserve_entries(struct plan *p, const struct htb_config *cfg)
{
	__u32 n[HTB_NCLS] = { [HTB_CLS_PRIO] = cfg->nclasses };

	for (__u32 i = 0; i < cfg->nmatches; i++) {
		const struct config_match *m = &cfg->matches[i];

		if (m->kind >= HTB_NCLS)
			continue;
		if (m->kind == CONFIG_MATCH_PORT)
			n[m->kind] += m->port_last - m->key.port.port + 1u;
		else if (m->kind == CONFIG_MATCH_DSCP)
			n[m->kind] += (__u32)__builtin_popcountll(m->key.dscp);
		else
			n[m->kind]++;
	}
	for (int c = 0; c < HTB_NCLS; c++)
		if (n[c] && kv_reserve(&p->cls[c], n[c]))
			return -ENOMEM;
	return 0;
}

/*
 * Many classes share their parameters (every leaf of a generated tree, the
 * customers of one plan), and htb_conf_from_params spends most of its time
 * in the rate precomputation. So conf is computed once per distinct set of
 * parameters and copied, with the per-class fields (classid, depth, path,
 * flags) set as htb_conf_from_params sets them. Every 64th copy is checked
 * against a full computation; a mismatch turns the memo off.
 * The table holds at most MEMO_MAX sets, and takes no more once half
 * full: sized by the classes (2 x 100,392, 75 MB), each set it held was a
 * fresh page; a config whose classes mostly differ gains nothing from it.
 */
#define MEMO_MAX (1u << 14)

struct memo {
	struct htb_class_params key;	/* classid, depth, path, leaf zeroed */
	struct htb_class_conf conf;
	bool used;
};

struct memo_tab {
	struct memo *e;		/* NULL: no memo */
	__u32 size, used, reuse;
	bool off;
};

static __u64 memo_hash(const struct htb_class_params *k)
{
	const unsigned char *b = (const unsigned char *)k;
	__u64 h = 0x9e3779b97f4a7c15ull, w;
	size_t i;

	for (i = 0; i + 8 <= sizeof(*k); i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int conf_memo(struct memo_tab *t, const struct htb_class_params *cp,
		     struct htb_class_conf *out)
{
	struct memo *tab = t->e;
	__u32 tabsz = t->size;
	struct htb_class_params k;
	struct memo *m;
	__u32 i;
	int rc;

	if (!tab || t->off)
		return htb_conf_from_params(cp, out);
	memcpy(&k, cp, sizeof(k));
	k.classid = 0;
	k.depth = 0;
	memset(k.path, 0, sizeof(k.path));
	k.leaf = false;
	for (i = memo_hash(&k) & (tabsz - 1);; i = (i + 1) & (tabsz - 1)) {
		m = &tab[i];
		if (!m->used || !memcmp(&m->key, &k, sizeof(k)))
			break;
	}
	if (!m->used) {
		rc = htb_conf_from_params(cp, out);
		if (rc || 2 * (t->used + 1) > tabsz)
			return rc;	/* full: computed, not kept */
		t->used++;
		m->used = true;
		memcpy(&m->key, &k, sizeof(k));
		m->conf = *out;
		return 0;
	}
	*out = m->conf;
	out->classid = cp->classid;
	out->depth = cp->depth;
	for (__u32 d = 0; d < HTB_MAX_DEPTH; d++)
		out->path[d] = d < cp->depth ? cp->path[d] : HTB_NO_CLASS;
	out->flags = (m->conf.flags & ~(HTB_CONF_VALID | HTB_CONF_LEAF)) |
		     HTB_CONF_VALID | (cp->leaf ? HTB_CONF_LEAF : 0);
	if ((++t->reuse & 63) == 1) {
		struct htb_class_conf full;

		rc = htb_conf_from_params(cp, &full);
		if (rc)
			return rc;
		if (memcmp(&full, out, sizeof(full))) {
			t->off = true;
			*out = full;
		}
	}
	return 0;
}

int plan_main_major(const struct htb_config *cfg, __u32 *major, __u32 *top_minor)
{
	__u32 *count = calloc(0x10000, sizeof(*count)), best = 0;

	if (!count)
		return -ENOMEM;
	for (__u32 i = 0; i < cfg->nclasses; i++)
		if (cfg->classes[i].is_leaf)
			count[cfg->classes[i].classid >> 16]++;
	for (__u32 mj = 1; mj < 0x10000; mj++)
		if (count[mj] > count[best])
			best = mj;
	free(count);
	*major = best;
	*top_minor = 0;
	for (__u32 i = 0; best && i < cfg->nclasses; i++) {
		const struct config_class *c = &cfg->classes[i];

		if (c->is_leaf && c->classid >> 16 == best && (c->classid & 0xffff) > *top_minor)
			*top_minor = c->classid & 0xffff;
	}
	return 0;
}

int plan_build(struct plan *p, const struct htb_config *cfg, __u32 *slot,
	       __u32 nslots, __u32 capacity)
{
	struct memo_tab tab = { .size = 1 };
	__u32 top_minor;
	int rc;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->slot = slot;
	p->nslots = nslots;
	p->capacity = capacity;
	for (int c = 0; c < HTB_NCLS; c++)
		p->cls[c].ksize = cls_desc[c].ksize;
	p->conf = big_calloc(nslots, sizeof(*p->conf));
	if (!p->conf || reserve_entries(p, cfg))
		return -ENOMEM;

	while (tab.size < 2 * cfg->nclasses && tab.size < MEMO_MAX)
		tab.size <<= 1;
	tab.e = calloc(tab.size, sizeof(*tab.e));	/* NULL: no memo, still correct */
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *cc = &cfg->classes[i];
		struct htb_class_params cp;

		memset(&cp, 0, sizeof(cp));	/* padding too: the memo compares bytes */

		cp.classid = cc->classid;
		cp.depth = cc->depth;
		for (__u32 d = 0; d < cc->depth && d < HTB_MAX_DEPTH; d++)
			cp.path[d] = slot[cc->path[d]];
		cp.leaf = cc->is_leaf;
		cp.rate_Bps = cc->rate;
		cp.ceil_Bps = cc->ceil;
		cp.burst = cc->burst;
		cp.cburst = cc->cburst;
		cp.overhead = (__s32)cfg->dev.overhead;
		cp.mpu = (__u16)cfg->dev.mpu;
		cp.linklayer = (__u8)cfg->dev.linklayer;
		cp.limit_ns = cc->limit_ns;
		cp.prio = cc->prio;
		cp.quantum = cc->quantum;
		cp.aqm = cc->is_leaf && cc->aqm.codel;	/* a leaf's queue */
		cp.ecn = cc->aqm.ecn;
		cp.flows = cc->is_leaf && cc->aqm.flows;
		cp.target_ns = cc->aqm.target_ns;
		cp.interval_ns = cc->aqm.interval_ns;
		rc = conf_memo(&tab, &cp, &p->conf[slot[i]]);
		if (rc) {
			free(tab.e);
			return rc;
		}
		if (cc->is_leaf) {
			rc = kv_push(&p->cls[HTB_CLS_PRIO], &cc->classid, slot[i]);
			if (rc) {
				free(tab.e);
				return rc;
			}
		}
	}
	free(tab.e);
	htb_conf_carries(p->conf, nslots);
	for (__u32 i = 0; i < cfg->nmatches; i++) {
		rc = add_match(p, &cfg->matches[i], slot[cfg->matches[i].class_idx]);
		if (rc)
			return rc;
	}
	p->tree.default_idx = cfg->dev.default_idx == CONFIG_NO_INDEX ?
			      HTB_NO_CLASS : slot[cfg->dev.default_idx];
	p->tree.nmasks = cfg->nmasks;
	memcpy(p->tree.mark_masks, cfg->mark_masks, sizeof(p->tree.mark_masks));
	for (int c = 0; c < HTB_NCLS; c++) {
		kv_sort(&p->cls[c]);
		if (!p->cls[c].n)
			p->tree.skip |= cls_desc[c].skip;
	}
	return plan_main_major(cfg, &p->tree.prio_major, &top_minor);
}

/* ---- what fq needs to hold for these classes ---- */

void plan_fq_demand(const struct htb_config *cfg, struct fq_demand *d)
{
	memset(d, 0, sizeof(*d));
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *c = &cfg->classes[i];
		__u64 limit = htb_limit_ns(c->limit_ns, c->ceil);
		__u64 bytes = (__u64)((unsigned __int128)c->ceil * limit / 1000000000u);

		if (limit > d->max_limit_ns)
			d->max_limit_ns = limit;
		if (c->is_leaf) {
			d->nleaves++;
			if (bytes > d->max_class_bytes)
				d->max_class_bytes = bytes;
		}
	}
	/* Top-level classes bound what the whole device can have queued. */
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *c = &cfg->classes[i];

		if (c->parent == CONFIG_NO_INDEX)
			d->total_bytes += (__u64)((unsigned __int128)c->ceil *
						  d->max_limit_ns / 1000000000u);
	}
}

/* ---- the shadow of the classifier maps ---- */

#define SHADOW_MAGIC	0x32444853u	/* "SHD2": entries with a slot per generation */
#define SHADOW_CHUNK	4096u

struct shadow_hdr {
	__u32 magic;
	__u32 ncls;
	__u64 tag;
	__u32 n[HTB_NCLS];
};

int shadow_write(const char *ifname, const struct kv cls[HTB_NCLS], __u64 tag)
{
	struct shadow_hdr hdr = { .magic = SHADOW_MAGIC, .ncls = HTB_NCLS, .tag = tag };
	size_t len = sizeof(hdr), off;
	char path[256], tmp[272];
	__u32 nchunks, *keys = NULL;
	unsigned char *buf;
	int fd, rc = 0;

	for (int c = 0; c < HTB_NCLS; c++) {
		hdr.n[c] = cls[c].n;
		len += (size_t)cls[c].n * sizeof(struct ent);
	}
	nchunks = (__u32)((len + SHADOW_CHUNK - 1) / SHADOW_CHUNK);
	buf = big_calloc(nchunks, SHADOW_CHUNK);
	keys = malloc((size_t)nchunks * sizeof(*keys));
	if (!buf || !keys) {
		big_free(buf);
		free(keys);
		return -ENOMEM;
	}
	memcpy(buf, &hdr, sizeof(hdr));
	off = sizeof(hdr);
	for (int c = 0; c < HTB_NCLS; c++) {
		if (cls[c].n)	/* an empty kind's e is NULL, which memcpy may not take */
			memcpy(buf + off, cls[c].e, (size_t)cls[c].n * sizeof(struct ent));
		off += (size_t)cls[c].n * sizeof(struct ent);
	}
	for (__u32 i = 0; i < nchunks; i++)
		keys[i] = i;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "htbctl_shadow", sizeof(__u32),
			    SHADOW_CHUNK, nchunks, NULL);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = map_update_many(fd, keys, sizeof(*keys), buf, SHADOW_CHUNK, nchunks, 0);
	pin_path(ifname, PIN_SHADOW, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s_new", path);	/* bpffs refuses dots */
	unlink(tmp);
	if (!rc && bpf_obj_pin(fd, tmp))
		rc = -errno;
	/* bpffs renames atomically: a reader sees the old or the new one */
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	close(fd);
out:
	big_free(buf);
	free(keys);
	return rc;
}

/* Only chunk 0 (the header) is rewritten, in place: an element of an
 * ARRAY map is replaced whole, so a reader sees the old tag or the new. */
int shadow_retag(const char *ifname, __u64 old_tag, __u64 tag)
{
	unsigned char chunk[SHADOW_CHUNK];
	struct shadow_hdr hdr;
	char path[256];
	__u32 key = 0;
	int fd, rc = -EINVAL;

	pin_path(ifname, PIN_SHADOW, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &key, chunk)) {
		rc = -errno;
		goto out;
	}
	memcpy(&hdr, chunk, sizeof(hdr));
	if (hdr.magic != SHADOW_MAGIC || hdr.ncls != HTB_NCLS || hdr.tag != old_tag)
		goto out;
	hdr.tag = tag;
	memcpy(chunk, &hdr, sizeof(hdr));
	rc = bpf_map_update_elem(fd, &key, chunk, BPF_EXIST) ? -errno : 0;
out:
	close(fd);
	return rc;
}

int shadow_read(const char *ifname, struct kv cls[HTB_NCLS], __u64 tag)
{
	struct bpf_map_info info = { 0 };
	__u32 ilen = sizeof(info);
	struct shadow_hdr hdr;
	unsigned char *buf = NULL;
	size_t len = sizeof(hdr), off;
	char path[256];
	int fd, rc;

	pin_path(ifname, PIN_SHADOW, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	rc = -EINVAL;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen) || info.type != BPF_MAP_TYPE_ARRAY ||
	    info.value_size != SHADOW_CHUNK || !info.max_entries)
		goto out;
	buf = big_calloc(info.max_entries, SHADOW_CHUNK);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	rc = array_read(fd, 0, info.max_entries, buf, SHADOW_CHUNK, 0);
	if (rc)
		goto out;
	rc = -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != SHADOW_MAGIC || hdr.ncls != HTB_NCLS || hdr.tag != tag)
		goto out;
	for (int c = 0; c < HTB_NCLS; c++)
		len += (size_t)hdr.n[c] * sizeof(struct ent);
	if (len > (size_t)info.max_entries * SHADOW_CHUNK)
		goto out;
	off = sizeof(hdr);
	for (int c = 0; c < HTB_NCLS; c++) {
		cls[c].e = big_calloc(hdr.n[c], sizeof(struct ent));
		if (!cls[c].e) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(cls[c].e, buf + off, (size_t)hdr.n[c] * sizeof(struct ent));
		cls[c].n = cls[c].cap = hdr.n[c];
		off += (size_t)hdr.n[c] * sizeof(struct ent);
	}
	rc = 0;
out:
	if (rc)
		for (int c = 0; c < HTB_NCLS; c++)
			kv_free(&cls[c]);
	big_free(buf);
	close(fd);
	return rc;
}
