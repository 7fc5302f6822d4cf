// SPDX-License-Identifier: GPL-2.0
/*
 * reload: apply a changed config to a loaded device without losing state.
 *
 * Classes are identified by class id. Survivors keep their slot (so their
 * token state and counters), new classes take slots the active generation
 * does not use, and the tree is switched over in this order:
 *   1. the inactive conf generation is written completely (only slots that
 *      differ from what it holds), and its tree_conf;
 *   2. new classes get full buckets;
 *   3. classifier entries are added or re-pointed (a new class's slot is
 *      invalid in the active generation, so its packets take the default
 *      class until the flip);
 *   4. runtime.gen flips: one word, the new tree is in force;
 *   5. classifier entries of removed classes (and removed matches) go;
 *   6. removed classes' state is zeroed.
 * A check that fails (bad file, does not fit) comes before step 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "loader.h"
#include "maps_fill.h"

struct old_class {
	__u32 classid;
	__u32 slot;
};

static int old_cmp(const void *a, const void *b)
{
	const struct old_class *x = a, *y = b;

	return x->classid < y->classid ? -1 : x->classid > y->classid;
}

/* Current entries of one classifier map, normalized and sorted. */
static int kv_from_map(int fd, __u32 max_entries, struct kv *cur, bool lpm)
{
	void *keys = NULL, *vals = NULL;
	long n = map_dump(fd, cur->ksize, sizeof(__u32), max_entries, &keys, &vals);
	int rc = 0;

	if (n < 0)
		return (int)n;
	for (long i = 0; i < n && !rc; i++) {
		rc = kv_push(cur, (char *)keys + i * cur->ksize, ((__u32 *)vals)[i]);
		if (!rc && lpm)
			kv_normalize_lpm(&cur->e[cur->n - 1], cur->ksize);
	}
	free(keys);
	free(vals);
	if (!rc)
		kv_sort(cur);
	return rc;
}

/* want vs cur: entries to write (new or re-pointed) and to delete; how
 * many keys of want are not in cur yet. */
static int kv_diff(const struct kv *want, const struct kv *cur, struct kv *upd,
		   struct kv *del, __u32 *added)
{
	__u32 i = 0, j = 0, k = want->ksize;
	int rc = 0;

	*added = 0;
	while (!rc && (i < want->n || j < cur->n)) {
		int c;

		if (i == want->n)
			c = 1;
		else if (j == cur->n)
			c = -1;
		else
			c = memcmp(want->e[i].key, cur->e[j].key, k);
		if (c < 0) {
			rc = kv_push(upd, want->e[i].key, want->e[i].val);
			(*added)++;
			i++;
		} else if (c > 0) {
			rc = kv_push(del, cur->e[j].key, cur->e[j].val);
			j++;
		} else {
			if (want->e[i].val != cur->e[j].val)
				rc = kv_push(upd, want->e[i].key, want->e[i].val);
			i++;
			j++;
		}
	}
	return rc;
}

static const struct ent *kv_find(const struct kv *kv, const void *key)
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

static void phase(const struct ctx *ctx, struct timespec *t, const char *name)
{
	loader_phase(ctx, t, "reload", name);
}

int loader_reload(const struct ctx *ctx, const struct load_opts *o)
{
	struct timespec tp;
	struct htb_class_conf *active = NULL, *inactive = NULL;
	struct htb_config cfg = { 0 };
	struct htbctl_meta m;
	struct htb_runtime rt;
	struct plan plan = { 0 };
	struct maps mp;
	struct kv cur[NCLS], upd[NCLS], del[NCLS];
	struct old_class *old = NULL;
	struct timespec t0;
	__u32 nold = 0, g, n, cap, hw, nslots, *slot = NULL, *wslots = NULL;
	__u32 *newslots = NULL, *gone = NULL;
	__u32 nnew = 0, ngone = 0, nkept = 0, nchanged = 0, nw = 0, *kept_mark = NULL;
	__u32 *cslots = NULL, nc = 0;
	bool trusted, synced, have_shadow;
	unsigned char *used = NULL;
	int lock, ifindex, meta_fd = -1, rc, ret = EXIT_FAIL;
	bool maps_open = false, flipped = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	phase(ctx, &tp, NULL);
	memset(cur, 0, sizeof(cur));
	memset(upd, 0, sizeof(upd));
	memset(del, 0, sizeof(del));
	loader_libbpf_log(ctx);
	if (privs_check(ctx, "reload", NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS))
		return EXIT_FAIL;
	if (!dev_ifindex(ctx, o->ifname))
		return EXIT_FAIL;
	lock = pins_lock();
	if (lock < 0) {
		p_err(ctx, "locking /sys/fs/bpf: %s", strerror(-lock));
		return EXIT_FAIL;
	}
	ifindex = loader_attached(ctx, o->ifname, "reload", &m);
	if (!ifindex)
		goto out;
	phase(ctx, &tp, "checks");
	if (config_load(o->config, &cfg, stderr)) {
		p_err(ctx, "config %s rejected; nothing changed", o->config);
		goto out;
	}
	phase(ctx, &tp, "parsing the config");
	if (maps_open_pinned(ctx, o->ifname, &mp))
		goto out;
	maps_open = true;
	meta_fd = meta_open(o->ifname, &m, NULL);
	if (meta_fd < 0) {
		p_err(ctx, "reading %s/%s/meta: %s", PIN_ROOT, o->ifname, strerror(-meta_fd));
		goto out;
	}
	rc = htb_map_get_runtime(mp.fd[M_RUNTIME], &rt);
	if (rc) {
		p_err(ctx, "reading the runtime map: %s", strerror(-rc));
		goto out;
	}
	g = rt.gen & 1;
	n = g ^ 1;
	cap = rt.capacity;
	hw = m.hiwater;
	if (cap != m.capacity || hw > cap || 2ull * cap > mp.max_entries[M_CONF]) {
		p_err(ctx, "the pinned maps of %s disagree with their metadata "
		      "(capacity %u vs %u); unload and load again", o->ifname, cap,
		      m.capacity);
		goto out;
	}

	/* The tree in force: class id -> slot. */
	trusted = !(m.flags & META_F_RELOADING);
	synced = trusted && (m.flags & META_F_GENS_SYNCED);
	active = calloc(hw ? hw : 1, sizeof(*active));
	inactive = synced ? active : calloc(hw ? hw : 1, sizeof(*inactive));
	old = calloc(hw ? hw : 1, sizeof(*old));
	used = calloc(cap, 1);
	slot = malloc((size_t)(cfg.nclasses ? cfg.nclasses : 1) * sizeof(*slot));
	newslots = malloc((size_t)(cfg.nclasses ? cfg.nclasses : 1) * sizeof(*newslots));
	kept_mark = calloc(hw ? hw : 1, sizeof(*kept_mark));
	if (!active || !inactive || !old || !used || !slot || !newslots || !kept_mark) {
		p_err(ctx, "out of memory");
		goto out;
	}
	/* A reload that finished leaves both generations equal (and the
	 * shadow of the classifier maps current); one that did not, or a
	 * fresh load, makes this one read everything. */
	rc = array_read(mp.fd[M_CONF], g * cap, hw, active, sizeof(*active), 0);
	if (!rc && !synced)
		rc = array_read(mp.fd[M_CONF], n * cap, hw, inactive, sizeof(*inactive), 0);
	if (rc) {
		p_err(ctx, "reading class_conf: %s", strerror(-rc));
		goto out;
	}
	phase(ctx, &tp, "reading class_conf");
	for (__u32 s = 0; s < hw; s++) {
		if (!(active[s].flags & HTB_CONF_VALID))
			continue;
		old[nold].classid = active[s].classid;
		old[nold].slot = s;
		nold++;
		used[s] = 1;
	}
	{
		bool sorted = true;	/* usual: slots were given in class id order */

		for (__u32 i = 1; i < nold && sorted; i++)
			sorted = old[i - 1].classid < old[i].classid;
		if (!sorted)
			qsort(old, nold, sizeof(*old), old_cmp);
	}

	/* Survivors keep their slot; new classes take free ones, lowest first
	 * (a slot freed by an earlier reload is free in the active tree). */
	if (cfg.by_classid) {
		/* both in class id order: one merge */
		__u32 j = 0;

		for (__u32 k = 0; k < cfg.nclasses; k++) {
			__u32 i = cfg.by_classid[k], id = cfg.classes[i].classid;

			while (j < nold && old[j].classid < id)
				j++;
			slot[i] = j < nold && old[j].classid == id ? old[j].slot : HTB_NO_CLASS;
			if (slot[i] != HTB_NO_CLASS)
				kept_mark[slot[i]] = 1;
		}
	} else {
		for (__u32 i = 0; i < cfg.nclasses; i++) {
			struct old_class key = { .classid = cfg.classes[i].classid };
			struct old_class *f = bsearch(&key, old, nold, sizeof(*old), old_cmp);

			slot[i] = f ? f->slot : HTB_NO_CLASS;
			if (f)
				kept_mark[f->slot] = 1;
		}
	}
	nslots = hw;
	{
		__u32 next = 0;

		for (__u32 i = 0; i < cfg.nclasses; i++) {
			if (slot[i] != HTB_NO_CLASS)
				continue;
			while (next < cap && used[next])
				next++;
			if (next >= cap) {
				__u32 need = nold;

				for (__u32 k = 0; k < cfg.nclasses; k++)
					need += !bsearch(&(struct old_class){ .classid =
						cfg.classes[k].classid }, old, nold,
						sizeof(*old), old_cmp);
				p_err(ctx, "config %s does not fit the maps of %s: the %u "
				      "classes in force and the %u new ones need %u class "
				      "slots during the switch, and load fixed the capacity "
				      "at %u; nothing changed ('htbctl unload' and 'htbctl "
				      "load' size the maps anew)", o->config, o->ifname,
				      nold, need - nold, need, cap);
				goto out;
			}
			slot[i] = next;
			used[next] = 1;
			newslots[nnew++] = next;
			if (next + 1 > nslots)
				nslots = next + 1;
		}
	}
	for (__u32 s = 0; s < hw; s++)
		if ((active[s].flags & HTB_CONF_VALID) && !kept_mark[s])
			ngone++;
	nkept = nold - ngone;
	gone = malloc((size_t)(ngone ? ngone : 1) * sizeof(*gone));
	if (!gone) {
		p_err(ctx, "out of memory");
		goto out;
	}
	ngone = 0;
	for (__u32 s = 0; s < hw; s++)
		if ((active[s].flags & HTB_CONF_VALID) && !kept_mark[s])
			gone[ngone++] = s;

	{
		__u32 *slot_copy = malloc((size_t)(cfg.nclasses ? cfg.nclasses : 1) *
					  sizeof(*slot_copy));

		if (!slot_copy) {
			p_err(ctx, "out of memory");
			goto out;
		}
		memcpy(slot_copy, slot, (size_t)cfg.nclasses * sizeof(*slot));
		phase(ctx, &tp, "slots");
		rc = plan_build(&plan, &cfg, slot_copy, nslots, cap);
		if (rc) {
			p_err(ctx, "preparing the maps: %s", strerror(-rc));
			goto out;
		}
	}
	for (__u32 i = 0; i < cfg.nclasses; i++) {
		__u32 s = slot[i];

		if (s < hw && kept_mark[s] &&
		    memcmp(&active[s], &plan.conf[s], sizeof(active[s])))
			nchanged++;
	}

	phase(ctx, &tp, "plan");
	/* Classifier maps: what changes, and does it fit? */
	for (int c = 0; c < NCLS; c++)
		cur[c].ksize = upd[c].ksize = del[c].ksize = cls_desc[c].ksize;
	have_shadow = trusted && shadow_read(o->ifname, cur, m.reloads) == 0;
	for (int c = 0; c < NCLS; c++) {
		enum map_id id = cls_desc[c].map;
		__u32 added;

		rc = have_shadow ? 0 : kv_from_map(mp.fd[id], mp.max_entries[id],
						   &cur[c], cls_desc[c].lpm);
		if (!rc)
			rc = kv_diff(&plan.cls[c], &cur[c], &upd[c], &del[c], &added);
		if (rc) {
			p_err(ctx, "reading %s: %s", map_names[id], strerror(-rc));
			goto out;
		}
		if ((__u64)cur[c].n + added > mp.max_entries[id]) {
			p_err(ctx, "config %s does not fit the maps of %s: %s holds %u "
			      "entries and would need %u during the switch, and load "
			      "fixed its size at %u; nothing changed ('htbctl unload' "
			      "and 'htbctl load' size the maps anew)", o->config,
			      o->ifname, map_names[id], cur[c].n, cur[c].n + added,
			      mp.max_entries[id]);
			goto out;
		}
	}

	phase(ctx, &tp, have_shadow ? "classifier maps: shadow, diff"
				    : "classifier maps: read, diff");
	/* 1. the inactive generation, only where it differs; and the slots
	 * where the tree in force differs, to bring that generation level
	 * after the flip */
	wslots = malloc((size_t)(nslots ? nslots : 1) * sizeof(*wslots));
	cslots = malloc((size_t)(nslots ? nslots : 1) * sizeof(*cslots));
	if (!wslots || !cslots) {
		p_err(ctx, "out of memory");
		goto out;
	}
	for (__u32 s = 0; s < nslots; s++) {
		static const struct htb_class_conf zero;
		const struct htb_class_conf *have = s < hw ? &inactive[s] : &zero;
		const struct htb_class_conf *now = s < hw ? &active[s] : &zero;

		if (memcmp(have, &plan.conf[s], sizeof(*have)))
			wslots[nw++] = s;
		if (memcmp(now, &plan.conf[s], sizeof(*now)))
			cslots[nc++] = s;
	}
	m.flags |= META_F_RELOADING;
	m.flags &= ~META_F_GENS_SYNCED;
	rc = meta_write(meta_fd, &m);
	if (rc) {
		p_err(ctx, "updating %s/%s/meta: %s; nothing changed", PIN_ROOT,
		      o->ifname, strerror(-rc));
		goto out;
	}
	rc = write_conf(mp.fd[M_CONF], n, cap, wslots, plan.conf, nw);
	if (!rc && bpf_map_update_elem(mp.fd[M_TREE], &n, &plan.tree, BPF_ANY))
		rc = -errno;
	if (rc) {
		p_err(ctx, "writing generation %u of class_conf: %s; the tree in force "
		      "is unchanged", n, strerror(-rc));
		goto out;
	}
	/* 2. new classes start full */
	rc = init_state(mp.fd[M_STATE], newslots, nnew, plan.conf);
	if (rc) {
		p_err(ctx, "initializing class_state: %s; the tree in force is "
		      "unchanged", strerror(-rc));
		goto out;
	}
	/* 3. classifier entries in */
	for (int c = 0; c < NCLS; c++) {
		rc = kv_update(mp.fd[cls_desc[c].map], &upd[c], upd[c].e, upd[c].n);
		if (rc) {
			p_err(ctx, "writing %s: %s; putting the old entries back",
			      map_names[cls_desc[c].map], strerror(-rc));
			for (int b = c; b >= 0; b--) {
				for (__u32 i = 0; i < upd[b].n; i++) {
					const struct ent *was = kv_find(&cur[b], upd[b].e[i].key);
					int fd = mp.fd[cls_desc[b].map];

					if (was)
						bpf_map_update_elem(fd, was->key, &was->val, BPF_ANY);
					else
						bpf_map_delete_elem(fd, upd[b].e[i].key);
				}
			}
			goto out;
		}
	}
	phase(ctx, &tp, "writes before the flip");
	/* 4. the flip */
	rt.gen = n;
	rt.hysteresis = cfg.dev.hysteresis;
	rc = htb_map_set_runtime(mp.fd[M_RUNTIME], &rt);
	if (rc) {
		p_err(ctx, "switching to the new tree: %s", strerror(-rc));
		goto out;
	}
	flipped = true;
	/* 5. entries of removed classes and matches out; 6. their state */
	for (int c = 0; c < NCLS; c++) {
		rc = kv_delete(mp.fd[cls_desc[c].map], &del[c], del[c].e, del[c].n);
		if (rc)
			p_warn(ctx, "removing old entries of %s: %s",
			       map_names[cls_desc[c].map], strerror(-rc));
	}
	if (ngone) {
		struct htb_class_state *z = calloc(ngone, sizeof(*z));

		rc = z ? map_update_many(mp.fd[M_STATE], gone, sizeof(*gone), z,
					 sizeof(*z), ngone, BPF_F_LOCK) : -ENOMEM;
		free(z);
		if (rc)
			p_warn(ctx, "clearing the state of removed classes: %s", strerror(-rc));
	}
	phase(ctx, &tp, "flip and clean-up");
	/* The generation just left behind takes the new tree too, and the
	 * shadow records the classifier maps: the next reload reads less. */
	m.hiwater = nslots;
	m.reloads++;
	snprintf(m.config, sizeof(m.config), "%s", o->config);
	if (write_conf(mp.fd[M_CONF], g, cap, cslots, plan.conf, nc) == 0 &&
	    shadow_write(o->ifname, plan.cls, m.reloads) == 0)
		m.flags = (m.flags & ~META_F_RELOADING) | META_F_GENS_SYNCED;
	phase(ctx, &tp, "level generations, shadow");
	rc = meta_write(meta_fd, &m);
	if (rc)
		p_warn(ctx, "updating %s/%s/meta: %s", PIN_ROOT, o->ifname, strerror(-rc));

	if (!o->quiet) {
		struct printer p;
		double ms = ms_since(&t0);

		printer_init(&p, ctx->json, stdout);
		print_open_object(&p, NULL);
		print_string(&p, "dev", "%s: ", o->ifname);
		print_string(&p, "action", "%s", "reloaded");
		print_u64(&p, "nclasses", " %llu classes", cfg.nclasses);
		print_u64(&p, "kept", " (%llu kept", nkept);
		print_u64(&p, "changed", ", %llu changed", nchanged);
		print_u64(&p, "added", ", %llu added", nnew);
		print_u64(&p, "removed", ", %llu removed)", ngone);
		print_u64(&p, "generation", ", generation %llu", n);
		print_u64(&p, "elapsed_us", NULL, (__u64)(ms * 1000));
		print_text(&p, " in %.1f ms\n", ms);
		print_close_object(&p);
		printer_finish(&p);
	}
	ret = EXIT_OK;
out:
	(void)flipped;
	for (int c = 0; c < NCLS; c++) {
		kv_free(&cur[c]);
		kv_free(&upd[c]);
		kv_free(&del[c]);
	}
	if (inactive != active)
		free(inactive);
	free(active);
	free(old);
	free(used);
	free(slot);
	free(newslots);
	free(kept_mark);
	free(gone);
	free(wslots);
	free(cslots);
	plan_free(&plan);
	if (meta_fd >= 0)
		close(meta_fd);
	if (maps_open)
		maps_close(&mp);
	config_free(&cfg);
	close(lock);
	return ret;
}
