// SPDX-License-Identifier: GPL-2.0
/*
 * From a parsed config to what the maps must hold (a "plan"): class_conf
 * entries by slot, tree_conf, and the classifier maps' entries, sorted so
 * that a reload can diff them against what the maps hold now.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "maps_fill.h"

const struct cls_desc cls_desc[NCLS] = {
	[C_PRIO]   = { M_PRIO,   -1,                  4,  HTB_SKIP_PRIO,   false },
	[C_MARK]   = { M_MARK,   CONFIG_MATCH_MARK,   8,  0,               false },
	[C_DST4]   = { M_DST4,   CONFIG_MATCH_DST4,   8,  HTB_SKIP_DST4,   true },
	[C_SRC4]   = { M_SRC4,   CONFIG_MATCH_SRC4,   8,  HTB_SKIP_SRC4,   true },
	[C_DST6]   = { M_DST6,   CONFIG_MATCH_DST6,   20, HTB_SKIP_DST6,   true },
	[C_SRC6]   = { M_SRC6,   CONFIG_MATCH_SRC6,   20, HTB_SKIP_SRC6,   true },
	[C_PORT]   = { M_PORT,   CONFIG_MATCH_PORT,   4,  HTB_SKIP_PORT,   false },
	[C_CGROUP] = { M_CGROUP, CONFIG_MATCH_CGROUP, 8,  HTB_SKIP_CGROUP, false },
};

int kv_push(struct kv *kv, const void *key, __u32 val)
{
	struct ent *e;

	if (kv->n == kv->cap) {
		__u32 cap = kv->cap ? 2 * kv->cap : 64;
		struct ent *v = realloc(kv->e, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		kv->e = v;
		kv->cap = cap;
	}
	e = &kv->e[kv->n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->key, key, kv->ksize);
	e->val = val;
	return 0;
}

void kv_free(struct kv *kv)
{
	free(kv->e);
	kv->e = NULL;
	kv->n = kv->cap = 0;
}

/* An LPM key's address bits beyond its prefix do not take part in
 * matching; clear them so equal entries compare equal. */
void kv_normalize_lpm(struct ent *e, __u32 ksize)
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

static __u32 sort_ksize;

static int ent_cmp(const void *a, const void *b)
{
	return memcmp(((const struct ent *)a)->key, ((const struct ent *)b)->key,
		      sort_ksize);
}

/* Sorts by key and drops repeated keys (the last one wins). */
void kv_sort(struct kv *kv)
{
	__u32 w = 0;

	sort_ksize = kv->ksize;
	/* qsort is not stable: mark order in the value's companion first */
	qsort(kv->e, kv->n, sizeof(*kv->e), ent_cmp);
	for (__u32 r = 0; r < kv->n; r++) {
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
	free(p->conf);
	for (int i = 0; i < NCLS; i++)
		kv_free(&p->cls[i]);
	memset(p, 0, sizeof(*p));
}

static int add_match(struct plan *p, const struct config_match *m, __u32 slot)
{
	for (int c = 0; c < NCLS; c++) {
		struct kv *kv = &p->cls[c];
		int rc = 0;

		if (cls_desc[c].kind != (int)m->kind)
			continue;
		switch (m->kind) {
		case CONFIG_MATCH_MARK:
			return kv_push(kv, &m->key.mark, slot);
		case CONFIG_MATCH_DST4:
		case CONFIG_MATCH_SRC4:
		case CONFIG_MATCH_DST6:
		case CONFIG_MATCH_SRC6:
			rc = kv_push(kv, &m->key, slot);
			if (!rc)
				kv_normalize_lpm(&kv->e[kv->n - 1], kv->ksize);
			return rc;
		case CONFIG_MATCH_PORT: {
			struct htb_port_key k = m->key.port;

			for (__u32 port = m->key.port.port; port <= m->port_last && !rc; port++) {
				k.port = (__u16)port;
				rc = kv_push(kv, &k, slot);
			}
			return rc;
		}
		case CONFIG_MATCH_CGROUP:
			return kv_push(kv, &m->key.cgroup_id, slot);
		}
	}
	return -EINVAL;
}

int plan_build(struct plan *p, const struct htb_config *cfg, __u32 *slot,
	       __u32 nslots, __u32 capacity)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->slot = slot;
	p->nslots = nslots;
	p->capacity = capacity;
	for (int c = 0; c < NCLS; c++)
		p->cls[c].ksize = cls_desc[c].ksize;
	p->conf = calloc(nslots ? nslots : 1, sizeof(*p->conf));
	if (!p->conf)
		return -ENOMEM;

	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *cc = &cfg->classes[i];
		struct htb_class_params cp = { 0 };

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
		rc = htb_conf_from_params(&cp, &p->conf[slot[i]]);
		if (rc)
			return rc;
		if (cc->is_leaf) {
			rc = kv_push(&p->cls[C_PRIO], &cc->classid, slot[i]);
			if (rc)
				return rc;
		}
	}
	for (__u32 i = 0; i < cfg->nmatches; i++) {
		rc = add_match(p, &cfg->matches[i], slot[cfg->matches[i].class_idx]);
		if (rc)
			return rc;
	}
	p->tree.default_idx = cfg->dev.default_idx == CONFIG_NO_INDEX ?
			      HTB_NO_CLASS : slot[cfg->dev.default_idx];
	p->tree.nmasks = cfg->nmasks;
	memcpy(p->tree.mark_masks, cfg->mark_masks, sizeof(p->tree.mark_masks));
	for (int c = 0; c < NCLS; c++) {
		kv_sort(&p->cls[c]);
		if (!p->cls[c].n)
			p->tree.skip |= cls_desc[c].skip;
	}
	return 0;
}

/* ---- what fq needs to hold for these classes ---- */

void plan_fq_demand(const struct htb_config *cfg, __u32 mtu, struct fq_demand *d)
{
	memset(d, 0, sizeof(*d));
	d->mtu = mtu;
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *c = &cfg->classes[i];
		__u64 bytes = (__u64)((unsigned __int128)c->ceil * c->limit_ns /
				      1000000000u);

		if (c->limit_ns > d->max_limit_ns)
			d->max_limit_ns = c->limit_ns;
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
