// SPDX-License-Identifier: GPL-2.0
/*
 * reload: apply a changed config to a loaded device without losing state
 * (docs/loader.md "Reload"). Classes are identified by class id: survivors
 * keep their slot (so their token state and counters), new classes take
 * slots the active generation does not use. The steps in reload_steps[]
 * first work out the change without touching anything (a bad file or a
 * tree that does not fit changes nothing), then switch over in this order:
 *   1. the inactive conf generation is written completely (only slots that
 *      differ from what it holds), and its tree_conf;
 *   2. new classes get full buckets;
 *   3. classifier entries are added or re-pointed (a new class's slot is
 *      invalid in the active generation, so its packets take the default
 *      class until the flip);
 *   4. runtime.gen flips: one word, the new tree is in force;
 *   5. classifier entries of removed classes (and removed matches) go;
 *   6. removed classes' state is zeroed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/bigmem.h"
#include "loader/loader.h"
#include "loader/plan.h"
#include "loader/maps_fill.h"

struct old_class {
	__u32 classid;
	__u32 slot;
};

/* Everything one reload works with. Slot-indexed arrays cover [0, hw). */
struct reload_run {
	const struct ctx *ctx;
	const struct load_opts *o;
	struct timespec t0, tp;		/* start; -v step timing */
	struct session s;
	char *cfg_buf;			/* the file, when read here */
	const char *cfg_text;
	size_t cfg_len;
	struct htb_config own;		/* parsed here (no o->dir) */
	const struct htb_config *cfg;	/* own, or o->dir's tree */
	struct maps maps;
	bool maps_open;
	int meta_fd;
	struct htb_runtime rt, rt_before;	/* rt_before: to switch back */
	__u32 gen, next;		/* active generation, the one written */
	__u32 cap, hw;			/* capacity, slots ever used (meta) */
	bool trusted, synced;		/* the last reload finished; gens equal */
	struct htb_class_conf *active, *inactive;
	struct old_class *old;		/* the tree in force, by class id */
	__u32 nold;
	unsigned char *used, *kept;	/* by slot: in force; kept by the config */
	__u32 *slot;			/* config index -> slot */
	__u32 *newslots, nnew;		/* slots of new classes */
	__u32 *gone, ngone;		/* slots of removed classes */
	__u32 nslots, nchanged;
	struct plan plan;
	bool have_shadow;
	/* per classifier: the entries there are (cur), the pairs written
	 * before the flip (upd), the keys deleted after it (del), the pairs
	 * that level the generation left behind (lvl) */
	struct kv cur[HTB_NCLS], upd[HTB_NCLS], del[HTB_NCLS], lvl[HTB_NCLS];
	__u32 *wslots, nw;		/* differ in the inactive generation */
	__u32 *cslots, nc;		/* differ in the active one */
};

static void *alloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int out_of_memory(struct reload_run *r)
{
	p_err(r->ctx, "out of memory");
	return -1;
}

static const struct dev_cmd reload_cmd = {
	.verb = "reload", .need = NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS,
	.lock = true, .want = WANT_LOADED,
};

static int check_device(struct reload_run *r)
{
	return session_check(&r->s, r->ctx, &reload_cmd, r->o->ifname);
}

/* Before the lock, as load does (loader/load.c). */
static int read_config_file(struct reload_run *r)
{
	if (r->o->dir)
		return 0;	/* read and parsed by loader/dirs.c */
	return loader_config_text(r->ctx, r->o, &r->cfg_buf, &r->cfg_text, &r->cfg_len);
}

static int lock_device(struct reload_run *r)
{
	r->s.lock_held = r->o->lock_held;
	return session_lock(&r->s, &reload_cmd);
}

/* With o->dir, the direction's tree loader/dirs.c parsed, which outlives
 * this run: used as it is (a copy cost 58 ms and 27 MB at 100,392
 * classes, docs/log.md 2026-12-06). */
static int parse_config(struct reload_run *r)
{
	r->cfg = r->o->dir ? r->o->dir->cfg : &r->own;
	if (r->o->dir)
		return 0;
	return loader_parse_config(r->ctx, r->o, r->cfg_text, r->cfg_len, &r->own);
}

/* The pinned maps, meta and runtime, and whether they agree. */
static int open_pinned(struct reload_run *r)
{
	int rc;

	if (maps_open_pinned(r->ctx, r->o->ifname, &r->maps))
		return -1;
	r->maps_open = true;
	r->meta_fd = meta_open(r->o->ifname, &r->s.m, NULL);
	if (r->meta_fd < 0) {
		p_err(r->ctx, "reading %s/%s/meta: %s", PIN_ROOT, r->o->ifname,
		      strerror(-r->meta_fd));
		return -1;
	}
	rc = maps_get_runtime(&r->maps, &r->rt);
	if (rc) {
		p_err(r->ctx, "reading the runtime map: %s", strerror(-rc));
		return -1;
	}
	r->rt_before = r->rt;
	r->gen = r->rt.gen & 1;
	r->next = r->gen ^ 1;
	r->cap = r->rt.capacity;
	r->hw = r->s.m.hiwater;
	if (r->cap != r->s.m.capacity || r->hw > r->cap ||
	    2ull * r->cap > r->maps.max_entries[M_CONF]) {
		p_err(r->ctx, "the pinned maps of %s disagree with their metadata "
		      "(capacity %u vs %u); unload and load again", r->o->ifname,
		      r->cap, r->s.m.capacity);
		return -1;
	}
	return 0;
}

static int old_cmp(const void *a, const void *b)
{
	const struct old_class *x = a, *y = b;

	return x->classid < y->classid ? -1 : x->classid > y->classid;
}

/* a[0..n) by class id: LSD radix, 16 bits a pass (slots are in the
 * config's preorder, so the ids are not in order: qsort took 3.4% of a
 * 100,392-class reload). -1 out of memory, a left as it was. */
static int radix_old(struct old_class *a, __u32 n)
{
	/* one block: two mallocs below BIG_MIN took 160 page faults */
	__u32 *count = big_calloc(0x10000 + 2 * (size_t)n, sizeof(*count));
	struct old_class *tmp = count ? (struct old_class *)(count + 0x10000) : NULL;

	for (int pass = 0; tmp && count && pass < 2; pass++) {
		struct old_class *src = pass ? tmp : a, *dst = pass ? a : tmp;
		int sh = 16 * pass;
		__u32 pos = 0;

		memset(count, 0, 0x10000 * sizeof(*count));
		for (__u32 i = 0; i < n; i++)
			count[(src[i].classid >> sh) & 0xffff]++;
		for (__u32 k = 0; k < 0x10000; k++) {
			__u32 c = count[k];

			count[k] = pos;
			pos += c;
		}
		for (__u32 i = 0; i < n; i++)
			dst[count[(src[i].classid >> sh) & 0xffff]++] = src[i];
	}
	if (!count)
		return -1;
	big_free(count);
	return 0;
}

/* The classes in force, by class id. */
static void index_old(struct reload_run *r)
{
	bool sorted = true;

	for (__u32 s = 0; s < r->hw; s++) {
		if (!(r->active[s].flags & HTB_CONF_VALID))
			continue;
		r->old[r->nold].classid = r->active[s].classid;
		r->old[r->nold].slot = s;
		r->nold++;
		r->used[s] = 1;
	}
	for (__u32 i = 1; i < r->nold && sorted; i++)
		sorted = r->old[i - 1].classid < r->old[i].classid;
	if (!sorted && radix_old(r->old, r->nold))
		qsort(r->old, r->nold, sizeof(*r->old), old_cmp);
}

/* old, slot, newslots, used and kept in one zeroed block (r->old frees
 * it): calloc'ed apart, each below BIG_MIN, they took about 250 page
 * faults of 4 KiB at 100,392 classes (docs/log.md 2026-12-06, second
 * reload section). */
static int alloc_index(struct reload_run *r, __u32 hw, __u32 nc)
{
	size_t slot_at = (size_t)hw * sizeof(*r->old),
	       new_at = slot_at + (size_t)nc * sizeof(*r->slot),
	       used_at = new_at + (size_t)nc * sizeof(*r->newslots),
	       kept_at = used_at + r->cap;
	char *p = big_calloc(kept_at + hw + 1, 1);

	if (!p)
		return -1;
	r->old = (struct old_class *)p;
	r->slot = (__u32 *)(p + slot_at);
	r->newslots = (__u32 *)(p + new_at);
	r->used = (unsigned char *)(p + used_at);
	r->kept = (unsigned char *)(p + kept_at);
	return 0;
}

/* class_conf of the tree in force. A reload that finished leaves both
 * generations equal (and the shadow of the classifier maps current); one
 * that did not, or a fresh load, makes this one read both. */
static int read_tree(struct reload_run *r)
{
	__u32 hw = r->hw, nc = r->cfg->nclasses;
	int rc;

	r->trusted = !(r->s.m.flags & META_F_RELOADING);
	r->synced = r->trusted && (r->s.m.flags & META_F_GENS_SYNCED);
	r->active = big_calloc(hw, sizeof(*r->active));
	r->inactive = r->synced ? r->active : big_calloc(hw, sizeof(*r->inactive));
	if (!r->active || !r->inactive || alloc_index(r, hw, nc))
		return out_of_memory(r);
	rc = array_read(r->maps.fd[M_CONF], r->gen * r->cap, hw, r->active,
			sizeof(*r->active), 0);
	if (!rc && !r->synced)
		rc = array_read(r->maps.fd[M_CONF], r->next * r->cap, hw, r->inactive,
				sizeof(*r->inactive), 0);
	if (rc) {
		p_err(r->ctx, "reading class_conf: %s", strerror(-rc));
		return -1;
	}
	index_old(r);
	return 0;
}

/* The slot a class keeps, or HTB_NO_CLASS for a new one. */
static __u32 old_slot(const struct reload_run *r, __u32 classid)
{
	struct old_class key = { .classid = classid };
	const struct old_class *f = bsearch(&key, r->old, r->nold, sizeof(*r->old),
					    old_cmp);

	return f ? f->slot : HTB_NO_CLASS;
}

/* Survivors keep their slot: a merge when both lists are in class id
 * order, else a search per class. */
static void keep_survivors(struct reload_run *r)
{
	const struct htb_config *cfg = r->cfg;
	__u32 j = 0;

	for (__u32 k = 0; k < cfg->nclasses; k++) {
		__u32 i = cfg->by_classid ? cfg->by_classid[k] : k;
		__u32 id = cfg->classes[i].classid;

		if (cfg->by_classid) {
			while (j < r->nold && r->old[j].classid < id)
				j++;
			r->slot[i] = j < r->nold && r->old[j].classid == id ?
				     r->old[j].slot : HTB_NO_CLASS;
		} else {
			r->slot[i] = old_slot(r, id);
		}
		if (r->slot[i] != HTB_NO_CLASS)
			r->kept[r->slot[i]] = 1;
	}
}

static int does_not_fit(struct reload_run *r)
{
	__u32 need = r->nold;

	for (__u32 k = 0; k < r->cfg->nclasses; k++)
		need += old_slot(r, r->cfg->classes[k].classid) == HTB_NO_CLASS;
	p_err(r->ctx, "config %s does not fit the maps of %s: the %u classes in "
	      "force and the %u new ones need %u class slots during the switch, and "
	      "load fixed the capacity at %u; nothing changed ('htbctl unload' and "
	      "'htbctl load' size the maps anew)", r->o->config, r->o->ifname,
	      r->nold, need - r->nold, need, r->cap);
	return -1;
}

/* New classes take free slots, lowest first (a slot freed by an earlier
 * reload is free in the active tree); removed classes are listed. */
static int assign_slots(struct reload_run *r)
{
	__u32 next = 0;

	keep_survivors(r);
	r->nslots = r->hw;
	for (__u32 i = 0; i < r->cfg->nclasses; i++) {
		if (r->slot[i] != HTB_NO_CLASS)
			continue;
		while (next < r->cap && r->used[next])
			next++;
		if (next >= r->cap)
			return does_not_fit(r);
		r->slot[i] = next;
		r->used[next] = 1;
		r->newslots[r->nnew++] = next;
		if (next + 1 > r->nslots)
			r->nslots = next + 1;
	}
	r->gone = alloc_n(r->nold, sizeof(*r->gone));
	if (!r->gone)
		return out_of_memory(r);
	for (__u32 s = 0; s < r->hw; s++)
		if ((r->active[s].flags & HTB_CONF_VALID) && !r->kept[s])
			r->gone[r->ngone++] = s;
	return 0;
}

/* What the maps must hold; how many kept classes change. */
static int plan_tree(struct reload_run *r)
{
	__u32 n = r->cfg->nclasses, *slot_copy = alloc_n(n, sizeof(*slot_copy));
	int rc;

	if (!slot_copy)
		return out_of_memory(r);
	memcpy(slot_copy, r->slot, (size_t)n * sizeof(*r->slot));
	rc = plan_build(&r->plan, r->cfg, slot_copy, r->nslots, r->cap);
	if (rc) {
		p_err(r->ctx, "preparing the maps: %s", strerror(-rc));
		return -1;
	}
	/* cls_minor's major is the load's: its entries are keyed by minor
	 * alone, in both generations */
	r->plan.tree.prio_major = r->maps.prio_major;
	for (__u32 i = 0; i < n; i++) {
		__u32 s = r->slot[i];

		if (s < r->hw && r->kept[s] &&
		    memcmp(&r->active[s], &r->plan.conf[s], sizeof(r->active[s])))
			r->nchanged++;
	}
	return 0;
}

/* Current entries of classifier c from its map, sorted. */
static int kv_from_map(struct reload_run *r, int c)
{
	struct kv *cur = &r->cur[c];
	long n = maps_dump_cls(&r->maps, c, &cur->e);

	if (n < 0)
		return (int)n;
	cur->n = cur->cap = (__u32)n;
	kv_sort(cur);
	return 0;
}

/* Prefix lengths present in an LPM entry set: a cover is looked for only
 * at lengths there are (a config of /32s has one). */
struct lens {
	bool has[129];
};

static void lens_of(const struct kv *set, struct lens *l)
{
	memset(l, 0, sizeof(*l));
	for (__u32 i = 0; i < set->n; i++) {
		__u32 plen;

		memcpy(&plen, set->e[i].key, 4);
		l->has[plen <= 128 ? plen : 128] = true;
	}
}

/* What generation col of set selects for LPM key k, which set does not
 * hold: the slot of the longest shorter prefix in set that covers k. */
static __u32 lpm_cover(const struct kv *set, const struct lens *l,
		       const struct ent *k, int col)
{
	struct ent probe = *k;
	__u32 plen;

	memcpy(&plen, k->key, 4);
	for (int q = (int)(plen <= 128 ? plen : 128) - 1; q >= 0; q--) {
		const struct ent *f;
		__u32 ql = (__u32)q;

		if (!l->has[q])
			continue;
		memcpy(probe.key, &ql, 4);
		ent_normalize_lpm(&probe, set->ksize);
		f = kv_find(set, probe.key);
		if (f)
			return f->val[col];
	}
	return HTB_NO_CLASS;
}

/* Everything one classifier's diff needs. */
struct cls_diff {
	const struct kv *want, *cur;	/* new tree (both columns equal); now */
	struct kv *upd, *del, *lvl;
	struct lens want_lens, cur_lens;
	bool lpm;
	int a, n;			/* column in force, column written */
	__u32 added;
};

/* Records what key k needs: pair is what it must hold before the flip
 * (column a unchanged), have what it holds (NULL: nothing). */
static int diff_one(struct cls_diff *d, const struct ent *pair, const struct ent *have,
		    bool in_new)
{
	int rc = 0;

	if (!have || memcmp(have->val, pair->val, sizeof(pair->val)))
		rc = kv_push_ent(d->upd, pair);
	if (!rc && !in_new)
		rc = kv_push_ent(d->del, pair);
	if (!rc && in_new && pair->val[d->a] != pair->val[d->n]) {
		struct ent level = *pair;

		level.val[d->a] = level.val[d->n];
		rc = kv_push_ent(d->lvl, &level);
	}
	return rc;
}

/* The pair for a key only the new tree has: column a says what the tree
 * in force selects for it (a miss, or a covering prefix's slot). */
static int diff_added(struct cls_diff *d, const struct ent *w)
{
	struct ent pair = *w;

	pair.val[d->a] = d->lpm ? lpm_cover(d->cur, &d->cur_lens, w, d->a) : HTB_NO_CLASS;
	d->added++;
	return diff_one(d, &pair, NULL, true);
}

/* A key only the tree in force has: column n says what the new tree
 * selects for it until it is deleted after the flip. */
static int diff_removed(struct cls_diff *d, const struct ent *c)
{
	struct ent pair = *c;

	pair.val[d->n] = d->lpm ? lpm_cover(d->want, &d->want_lens, c, 0) : HTB_NO_CLASS;
	return diff_one(d, &pair, c, false);
}

/* want vs cur, merged in key order. */
static int kv_diff(struct cls_diff *d)
{
	const struct kv *want = d->want, *cur = d->cur;
	__u32 i = 0, j = 0;
	int rc = 0;

	if (d->lpm) {
		lens_of(want, &d->want_lens);
		lens_of(cur, &d->cur_lens);
	}
	while (!rc && (i < want->n || j < cur->n)) {
		int c = i == want->n ? 1 : j == cur->n ? -1 :
			memcmp(want->e[i].key, cur->e[j].key, want->ksize);

		if (c < 0) {
			rc = diff_added(d, &want->e[i++]);
		} else if (c > 0) {
			rc = diff_removed(d, &cur->e[j++]);
		} else {
			struct ent pair = cur->e[j];

			pair.val[d->n] = want->e[i].val[0];
			rc = diff_one(d, &pair, &cur->e[j], true);
			i++;
			j++;
		}
	}
	return rc;
}

/* Classifier maps: what changes, and does it fit? From the shadow when it
 * is current, else from the maps themselves. */
static int diff_classifiers(struct reload_run *r)
{
	for (int c = 0; c < HTB_NCLS; c++)
		r->cur[c].ksize = r->upd[c].ksize = r->del[c].ksize = r->lvl[c].ksize =
			cls_desc[c].ksize;
	r->have_shadow = r->trusted && shadow_read(r->o->ifname, r->cur, r->s.m.reloads) == 0;
	for (int c = 0; c < HTB_NCLS; c++) {
		struct cls_diff d = {
			.want = &r->plan.cls[c], .cur = &r->cur[c], .upd = &r->upd[c],
			.del = &r->del[c], .lvl = &r->lvl[c], .lpm = cls_desc[c].lpm,
			.a = (int)r->gen, .n = (int)r->next,
		};
		__u32 added, size = r->maps.max_entries[M_CLS + c];
		int rc = r->have_shadow ? 0 : kv_from_map(r, c);

		if (!rc)
			rc = kv_diff(&d);
		added = d.added;
		if (rc) {
			p_err(r->ctx, "reading %s: %s", map_name(M_CLS + c), strerror(-rc));
			return -1;
		}
		if ((__u64)r->cur[c].n + added > size) {
			p_err(r->ctx, "config %s does not fit the maps of %s: %s holds %u "
			      "entries and would need %u during the switch, and load fixed "
			      "its size at %u; nothing changed ('htbctl unload' and 'htbctl "
			      "load' size the maps anew)", r->o->config, r->o->ifname,
			      map_name(M_CLS + c), r->cur[c].n, r->cur[c].n + added, size);
			return -1;
		}
	}
	loader_phase(r->ctx, &r->tp, "reload", r->have_shadow ?
		     "classifier maps: shadow, diff" : "classifier maps: read, diff");
	return 0;
}

/* Slots where the inactive generation differs from the new tree (written
 * before the flip), and where the active one does (written after it, to
 * bring that generation level). */
static int diff_generations(struct reload_run *r)
{
	static const struct htb_class_conf zero;

	r->wslots = alloc_n(r->nslots, sizeof(*r->wslots));
	r->cslots = alloc_n(r->nslots, sizeof(*r->cslots));
	if (!r->wslots || !r->cslots)
		return out_of_memory(r);
	for (__u32 s = 0; s < r->nslots; s++) {
		const struct htb_class_conf *have = s < r->hw ? &r->inactive[s] : &zero;
		const struct htb_class_conf *now = s < r->hw ? &r->active[s] : &zero;
		/* generations in sync are one array: compared once */
		bool cdiff = memcmp(now, &r->plan.conf[s], sizeof(*now)) != 0;
		bool wdiff = have == now ? cdiff : memcmp(have, &r->plan.conf[s], sizeof(*have)) != 0;

		if (wdiff)
			r->wslots[r->nw++] = s;
		if (cdiff)
			r->cslots[r->nc++] = s;
	}
	return 0;
}

/* meta says a reload is under way before the first write: a reload that
 * finds it set trusts neither the shadow nor equal generations. */
static int mark_reloading(struct reload_run *r)
{
	struct htbctl_meta *m = &r->s.m;
	int rc;

	m->flags |= META_F_RELOADING;
	m->flags &= ~META_F_GENS_SYNCED;
	/* Slots in use after the flip are below hiwater from now on, so a
	 * reload after a crash reads them; and show can tell which tree is in
	 * force if this one does not finish. */
	if (r->nslots > m->hiwater)
		m->hiwater = r->nslots;
	m->pending_gen = r->next;
	snprintf(m->pending_config, sizeof(m->pending_config), "%s", r->o->config);
	rc = meta_write(r->meta_fd, m);
	if (rc) {
		p_err(r->ctx, "updating %s/%s/meta: %s; nothing changed", PIN_ROOT,
		      r->o->ifname, strerror(-rc));
		return -1;
	}
	return 0;
}

/* The plan's conf of the given slots, in their order (maps_put_conf and
 * maps_init_state take values beside their slots); NULL: out of memory. */
static struct htb_class_conf *plan_conf_of(const struct reload_run *r,
					   const __u32 *slots, __u32 n)
{
	struct htb_class_conf *conf = alloc_n(n, sizeof(*conf));

	for (__u32 i = 0; conf && i < n; i++)
		conf[i] = r->plan.conf[slots[i]];
	return conf;
}

/* Generation gen of class_conf at the given slots, from the plan. */
static int put_plan_conf(struct reload_run *r, __u32 gen, const __u32 *slots, __u32 n)
{
	struct htb_class_conf *conf = plan_conf_of(r, slots, n);
	int rc = conf ? maps_put_conf(&r->maps, gen, r->cap, slots, conf, n) : -ENOMEM;

	free(conf);
	return rc;
}

/* 1. the inactive generation, only where it differs, and its tree_conf */
static int write_next_generation(struct reload_run *r)
{
	int rc = put_plan_conf(r, r->next, r->wslots, r->nw);

	if (!rc)
		rc = maps_put_tree(&r->maps, r->next, &r->plan.tree);
	if (rc) {
		p_err(r->ctx, "writing generation %u of class_conf: %s; the tree in "
		      "force is unchanged", r->next, strerror(-rc));
		return -1;
	}
	return 0;
}

/* 2. new classes start full, with no batches (a kept class keeps its
 * batches, leaf or inner: both kinds batch alike) */
static int init_new_classes(struct reload_run *r)
{
	struct htb_class_conf *conf = plan_conf_of(r, r->newslots, r->nnew);
	int rc = conf ? maps_init_state(&r->maps, r->newslots, conf, r->nnew,
					htb_clock_ns()) : -ENOMEM;

	free(conf);
	if (!rc)
		rc = maps_clear_batches(&r->maps, r->newslots, r->nnew);

	if (rc) {
		p_err(r->ctx, "initializing class_state: %s; the tree in force is "
		      "unchanged", strerror(-rc));
		return -1;
	}
	return 0;
}

/* After a failed write of classifiers 0..last: their old entries back.
 * Returns 0 when every one went back. */
static int put_back_entries(struct reload_run *r, int last)
{
	int rc = 0;

	for (int c = last; c >= 0; c--) {
		for (__u32 i = 0; i < r->upd[c].n; i++) {
			const struct ent *was = kv_find(&r->cur[c], r->upd[c].e[i].key);
			int err;

			if (was)
				rc |= maps_put_cls(&r->maps, c, was, 1);
			else if ((err = maps_del_cls(&r->maps, c, &r->upd[c].e[i], 1)) &&
				 err != -ENOENT)
				rc = -1;
		}
	}
	return rc;
}

/* 3. classifier entries in */
static int add_entries(struct reload_run *r)
{
	for (int c = 0; c < HTB_NCLS; c++) {
		int rc = maps_put_cls(&r->maps, c, r->upd[c].e, r->upd[c].n);

		if (rc) {
			p_err(r->ctx, "writing %s: %s; putting the old entries back",
			      map_name(M_CLS + c), strerror(-rc));
			put_back_entries(r, c);
			return -1;
		}
	}
	return 0;
}

/* 4. the flip (hysteresis from the config too: the file is the source of
 * truth; `htbctl set` overrides until the next reload) */
static int flip(struct reload_run *r)
{
	int rc;

	/* counted, not just flipped: gen & 1 is the tree in force, and a
	 * CPU's batch of bytes tells a reload by the whole count
	 * (include/htb/bucket.h, htb_batch_rprod) */
	r->rt.gen = r->rt.gen + 1;
	r->rt.hysteresis = r->cfg->dev.hysteresis;
	rc = maps_set_runtime(&r->maps, &r->rt);
	if (rc) {
		p_err(r->ctx, "switching to the new tree: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

/* 5. entries of removed classes and matches out; 6. their state. The new
 * tree is in force: a failure here leaves garbage, not a wrong tree. */
static int remove_old(struct reload_run *r)
{
	int rc;

	for (int c = 0; c < HTB_NCLS; c++) {
		rc = maps_del_cls(&r->maps, c, r->del[c].e, r->del[c].n);
		if (rc)
			p_warn(r->ctx, "removing old entries of %s: %s",
			       map_name(M_CLS + c), strerror(-rc));
	}
	rc = r->ngone ? maps_clear_state(&r->maps, r->gone, r->ngone) : 0;
	if (rc)
		p_warn(r->ctx, "clearing the state of removed classes: %s", strerror(-rc));
	return 0;
}

/* The shadow read was the maps' entries and this reload wrote none: it
 * holds the new tree's entries already (an added or removed key, or a
 * changed slot in either column, is in upd, del or lvl). */
static bool classifiers_unchanged(const struct reload_run *r)
{
	if (!r->have_shadow)
		return false;
	for (int c = 0; c < HTB_NCLS; c++)
		if (r->upd[c].n || r->del[c].n || r->lvl[c].n)
			return false;
	return true;
}

/* Shadow of the classifier maps under the new count: the old one
 * retagged when it is still right, else written anew. */
static int record_shadow(struct reload_run *r, __u64 tag)
{
	if (classifiers_unchanged(r) && shadow_retag(r->o->ifname, tag - 1, tag) == 0)
		return 0;
	return shadow_write(r->o->ifname, r->plan.cls, tag);
}

/* The generation just left behind takes the new tree too, and the shadow
 * records the classifier maps: the next reload reads less. */
static int level_generations(struct reload_run *r)
{
	struct htbctl_meta *m = &r->s.m;
	int rc;

	bool level = put_plan_conf(r, r->gen, r->cslots, r->nc) == 0;

	for (int c = 0; c < HTB_NCLS && level; c++)
		level = maps_put_cls(&r->maps, c, r->lvl[c].e, r->lvl[c].n) == 0;
	m->reloads++;
	snprintf(m->config, sizeof(m->config), "%s", r->o->config);
	if (level && record_shadow(r, m->reloads) == 0)
		m->flags = (m->flags & ~META_F_RELOADING) | META_F_GENS_SYNCED;
	rc = meta_write(r->meta_fd, m);
	if (rc)
		p_warn(r->ctx, "updating %s/%s/meta: %s", PIN_ROOT, r->o->ifname,
		       strerror(-rc));
	return 0;
}

struct reload_step {
	int (*run)(struct reload_run *r);
	const char *phase;	/* -v timing up to here; NULL: with the next */
};

/* Nothing changes before mark_reloading, and nothing in force before the
 * flip: a reload that stops here leaves the tree in force as it was. */
static const struct reload_step prepare_steps[] = {
	{ check_device,		NULL },
	{ read_config_file,	NULL },
	{ lock_device,		"checks" },
	{ parse_config,		"parsing the config" },
	{ open_pinned,		NULL },
	{ read_tree,		"reading class_conf" },
	{ assign_slots,		"slots" },
	{ plan_tree,		"plan" },
	{ diff_classifiers,	NULL },		/* times itself: shadow or maps */
	{ diff_generations,	NULL },
	{ mark_reloading,	NULL },
	{ write_next_generation, NULL },
	{ init_new_classes,	NULL },
	{ add_entries,		"writes before the flip" },
};

/* After the flip nothing fails: what is left is clean-up. */
static const struct reload_step finish_steps[] = {
	{ remove_old,		"flip and clean-up" },
	{ level_generations,	"level generations, shadow" },
};

static int run_reload_steps(struct reload_run *r, const struct reload_step *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (st[i].run(r))
			return -1;
		if (st[i].phase)
			loader_phase(r->ctx, &r->tp, "reload", st[i].phase);
	}
	return 0;
}

static void print_reloaded(const struct reload_run *r, double ms)
{
	struct printer p;

	printer_init(&p, r->ctx->json, stdout);
	print_open_object(&p, NULL);
	print_string(&p, "dev", "%s: ", r->o->ifname);
	print_string(&p, "action", "%s", "reloaded");
	if (r->o->dir && meta_dir_name(r->o->dir->dir))
		print_string(&p, "direction", " %s", meta_dir_name(r->o->dir->dir));
	print_u64(&p, "nclasses", " %llu classes", r->cfg->nclasses);
	print_u64(&p, "kept", " (%llu kept", r->nold - r->ngone);
	print_u64(&p, "changed", ", %llu changed", r->nchanged);
	print_u64(&p, "added", ", %llu added", r->nnew);
	print_u64(&p, "removed", ", %llu removed)", r->ngone);
	print_u64(&p, "generation", ", generation %llu", r->next);
	print_u64(&p, "elapsed_us", NULL, (__u64)(ms * 1000));
	print_text(&p, " in %.1f ms\n", ms);
	print_close_object(&p);
	printer_finish(&p);
}

void loader_reload_free(struct reload_run *r)
{
	for (int c = 0; c < HTB_NCLS; c++) {
		kv_free(&r->cur[c]);
		kv_free(&r->upd[c]);
		kv_free(&r->del[c]);
		kv_free(&r->lvl[c]);
	}
	if (r->inactive != r->active)
		big_free(r->inactive);
	big_free(r->active);
	big_free(r->old);	/* and slot, newslots, used, kept */
	free(r->gone);
	free(r->wslots);
	free(r->cslots);
	plan_free(&r->plan);
	if (r->meta_fd >= 0)
		close(r->meta_fd);
	if (r->maps_open)
		maps_close(&r->maps);
	config_free(&r->own);
	big_free(r->cfg_buf);
	session_close(&r->s);
	free(r);
}

struct reload_run *loader_reload_prepare(const struct ctx *ctx, const struct load_opts *o)
{
	struct reload_run *r = calloc(1, sizeof(*r));

	if (!r) {
		p_err(ctx, "reload: out of memory");
		return NULL;
	}
	r->ctx = ctx;
	r->o = o;
	r->meta_fd = -1;
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	loader_phase(ctx, &r->tp, "reload", NULL);
	if (run_reload_steps(r, prepare_steps, sizeof(prepare_steps) / sizeof(prepare_steps[0]))) {
		loader_reload_free(r);
		return NULL;
	}
	return r;
}

int loader_reload_flip(struct reload_run *r)
{
	return flip(r);
}

/* The tree before in force again (after a flip, before the finish: the
 * generation left behind and the removed classes' entries are still
 * there), the entries the reload added taken back, and meta says no
 * reload is under way once all of that went through. */
void loader_reload_cancel(struct reload_run *r, bool flipped)
{
	int rc = 0;

	if (flipped) {
		__u32 gen = r->rt.gen + 1;	/* the tree before; a count never reused */

		r->rt = r->rt_before;
		r->rt.gen = gen;
		rc = maps_set_runtime(&r->maps, &r->rt);
		if (rc)
			p_warn(r->ctx, "%s: switching back to the tree before: %s",
			       r->o->ifname, strerror(-rc));
	}
	if (put_back_entries(r, HTB_NCLS - 1) && !rc)
		rc = -1;
	if (!rc) {
		r->s.m.flags &= ~META_F_RELOADING;
		meta_write(r->meta_fd, &r->s.m);
	}
	loader_reload_free(r);
}

int loader_reload_finish(struct reload_run *r)
{
	run_reload_steps(r, finish_steps, sizeof(finish_steps) / sizeof(finish_steps[0]));
	if (!r->o->quiet)
		print_reloaded(r, ms_since(&r->t0));
	loader_reload_free(r);
	return EXIT_OK;
}

int loader_reload_one(const struct ctx *ctx, const struct load_opts *o)
{
	struct reload_run *r = loader_reload_prepare(ctx, o);

	if (!r)
		return EXIT_FAIL;
	if (loader_reload_flip(r)) {
		loader_reload_cancel(r, false);
		return EXIT_FAIL;
	}
	return loader_reload_finish(r);
}
