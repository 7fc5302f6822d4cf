// SPDX-License-Identifier: GPL-2.0
/*
 * load, reload, unload (docs/loader.md). Every change to the device is
 * recorded in the pinned meta map before it is made, so a failure rolls
 * back in reverse order and a crash leaves enough for `unload --force`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/pkt_sched.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "maps_fill.h"
#include "htbctl.skel.h"

#define FILTER_HANDLE	1
#define EGRESS_PARENT	TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
#define INGRESS_PARENT	TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
#define CAPACITY_MIN	1024u
#define CAPACITY_MAX	(2u * CONFIG_MAX_CLASSES)

/* ---- libbpf's messages ---- */

static int libbpf_verbose;

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	if (!libbpf_verbose || (level == LIBBPF_DEBUG && libbpf_verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void loader_libbpf_log(const struct ctx *ctx)
{
	libbpf_verbose = ctx->verbose;
	libbpf_set_print(libbpf_print_fn);
}

/* -v: how long each phase took (wall clock, and CPU time of this
 * process, kernel included), on stderr. name NULL starts the clock. */
void loader_phase(const struct ctx *ctx, struct timespec *t, const char *cmd,
		  const char *name)
{
	static struct timespec cpu0;
	struct timespec cpu;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	if (ctx->verbose && name)
		fprintf(stderr, "htbctl: %s: %-30s %8.2f ms (cpu %.2f ms)\n", cmd,
			name, ms_since(t), (cpu.tv_sec - cpu0.tv_sec) * 1e3 +
			(cpu.tv_nsec - cpu0.tv_nsec) / 1e6);
	cpu0 = cpu;
	clock_gettime(CLOCK_MONOTONIC, t);
}

__u32 loader_capacity(__u32 nclasses)
{
	__u64 c = 2ull * nclasses;

	if (c < CAPACITY_MIN)
		c = CAPACITY_MIN;
	if (c > CAPACITY_MAX)
		c = CAPACITY_MAX;
	return (__u32)c;
}

static __u32 cls_capacity(__u64 nkeys)
{
	__u64 c = 2 * nkeys;

	if (c < CAPACITY_MIN)
		c = CAPACITY_MIN;
	if (c > (1u << 24))
		c = 1u << 24;
	return (__u32)c;
}

static __u64 now_realtime_s(void)
{
	return (__u64)time(NULL);
}

const char *stale_hint(char *buf, size_t len, const char *ifname)
{
	snprintf(buf, len, "'htbctl unload dev %s --force' removes them", ifname);
	return buf;
}

int loader_attached(const struct ctx *ctx, const char *ifname, const char *what,
		    struct htbctl_meta *m)
{
	char why[512], hint[128];
	bool have_meta;
	int ifindex;

	ifindex = dev_ifindex(ctx, ifname);
	if (!ifindex)
		return 0;
	switch (pins_check(ifname, ifindex, m, &have_meta, why, sizeof(why))) {
	case PINS_NONE:
		p_err(ctx, "htbctl is not loaded on %s (nothing to %s)", ifname, what);
		return 0;
	case PINS_STALE:
		p_err(ctx, "%s; %s", why, stale_hint(hint, sizeof(hint), ifname));
		return 0;
	case PINS_FOREIGN:
		p_err(ctx, "%s", why);
		return 0;
	case PINS_OK:
		break;
	}
	return ifindex;
}

/* ---- writing a plan into the maps ---- */

/* class_conf slots gen*cap + [0, n) from conf[]. */
int write_conf(int fd, __u32 gen, __u32 cap, const __u32 *slots,
		      const struct htb_class_conf *conf, __u32 n)
{
	__u32 *keys = malloc((size_t)(n ? n : 1) * sizeof(*keys));
	struct htb_class_conf *vals = malloc((size_t)(n ? n : 1) * sizeof(*vals));
	int rc;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < n; i++) {
		keys[i] = gen * cap + slots[i];
		vals[i] = conf[slots[i]];
	}
	rc = map_update_many(fd, keys, sizeof(*keys), vals, sizeof(*vals), n, 0);
	free(keys);
	free(vals);
	return rc;
}

/* Full buckets for the given slots. */
int init_state(int fd, const __u32 *slots, __u32 n,
		      const struct htb_class_conf *conf)
{
	struct htb_class_state *st = calloc(n ? n : 1, sizeof(*st));
	__u64 now = htb_clock_ns();
	int rc;

	if (!st)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++)
		htb_state_init(&st[i], &conf[slots[i]], now);
	rc = map_update_many(fd, slots, sizeof(*slots), st, sizeof(*st), n,
			     BPF_F_LOCK);
	free(st);
	return rc;
}

int kv_update(int fd, const struct kv *kv, const struct ent *e, __u32 n)
{
	unsigned char *keys = malloc((size_t)(n ? n : 1) * kv->ksize);
	__u32 *vals = malloc((size_t)(n ? n : 1) * sizeof(*vals));
	int rc;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < n; i++) {
		memcpy(keys + (size_t)i * kv->ksize, e[i].key, kv->ksize);
		vals[i] = e[i].val;
	}
	rc = map_update_many(fd, keys, kv->ksize, vals, sizeof(*vals), n, 0);
	free(keys);
	free(vals);
	return rc;
}

int kv_delete(int fd, const struct kv *kv, const struct ent *e, __u32 n)
{
	unsigned char *keys = malloc((size_t)(n ? n : 1) * kv->ksize);
	int rc;

	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++)
		memcpy(keys + (size_t)i * kv->ksize, e[i].key, kv->ksize);
	rc = map_delete_many(fd, keys, kv->ksize, n);
	free(keys);
	return rc;
}

/* ---- load ---- */

/*
 * Test hooks (docs/loader.md): HTBCTL_TEST_FAIL=STEP makes load fail
 * right after STEP as if its next step had failed, so the rollback runs;
 * HTBCTL_TEST_FAIL=crash-STEP exits on the spot after STEP, as a crash
 * would, leaving what a crash leaves. STEP: pins, qdisc, clsact, attach.
 */
static bool test_fail(const struct ctx *ctx, const char *step)
{
	const char *v = getenv("HTBCTL_TEST_FAIL");

	if (!v)
		return false;
	if (!strncmp(v, "crash-", 6) && !strcmp(v + 6, step))
		_exit(9);
	if (strcmp(v, step))
		return false;
	p_err(ctx, "failing after step '%s' (HTBCTL_TEST_FAIL)", step);
	return true;
}

struct txn {
	const struct ctx *ctx;
	const char *ifname;
	int ifindex;
	struct htbctl_meta m;
	int meta_fd;
	struct qdisc_tree saved;
	bool pins;
};

static void meta_save(struct txn *t)
{
	int rc = meta_write(t->meta_fd, &t->m);

	if (rc)
		p_warn(t->ctx, "recording progress in %s/%s/meta: %s", PIN_ROOT,
		       t->ifname, strerror(-rc));
}

/* Undoes what m records, newest first. Used by a failed load and by
 * unload. Returns the number of steps that could not be undone. */
static int undo(const struct ctx *ctx, const char *ifname, int ifindex,
		struct htbctl_meta *m, const struct qdisc_tree *saved,
		bool rollback)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex);
	struct nlerr e = { 0 };
	int bad = 0, rc;

	if (ifindex && (m->flags & META_F_FILTER_ATTACHED)) {
		LIBBPF_OPTS(bpf_tc_opts, q, .handle = m->filter_handle,
			    .priority = m->filter_prio);

		hook.attach_point = BPF_TC_EGRESS;
		rc = bpf_tc_query(&hook, &q);
		if (rc == 0 && m->prog_id && q.prog_id != m->prog_id) {
			p_warn(ctx, "the filter at %s egress pref %u runs another "
			       "program (id %u); left in place", ifname,
			       m->filter_prio, q.prog_id);
		} else if (rc == 0) {
			LIBBPF_OPTS(bpf_tc_opts, d, .handle = m->filter_handle,
				    .priority = m->filter_prio);

			rc = bpf_tc_detach(&hook, &d);
			if (rc && rc != -ENOENT) {
				p_warn(ctx, "removing the filter from %s egress: %s",
				       ifname, strerror(-rc));
				bad++;
			}
		}
		m->flags &= ~META_F_FILTER_ATTACHED;
	}
	if (ifindex && (m->flags & META_F_CLSACT_CREATED)) {
		int ne = tc_filter_prefs(ifindex, EGRESS_PARENT, NULL, 0, &e);
		int ni = tc_filter_prefs(ifindex, INGRESS_PARENT, NULL, 0, &e);

		if (ne > 0 || ni > 0) {
			p_warn(ctx, "clsact on %s now holds filters of others (%d "
			       "egress, %d ingress); left in place", ifname,
			       ne > 0 ? ne : 0, ni > 0 ? ni : 0);
		} else {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			rc = bpf_tc_hook_destroy(&hook);
			if (rc && rc != -ENOENT && rc != -EINVAL) {
				p_warn(ctx, "removing clsact from %s: %s", ifname,
				       strerror(-rc));
				bad++;
			}
		}
		m->flags &= ~META_F_CLSACT_CREATED;
	}
	if (ifindex && (m->flags & META_F_QDISC_INSTALLED)) {
		struct qdisc_info root;
		bool ours;

		rc = qdisc_get_root(ifindex, &root, NULL, &e);
		ours = rc == 0 && root.handle == m->our_root &&
		       (!strcmp(root.kind, "mq") || !strcmp(root.kind, m->leaf_kind));
		if (rc) {
			p_warn(ctx, "%s", e.msg);
			bad++;
		} else if (!ours && !rollback) {
			p_warn(ctx, "the root qdisc of %s is %s %x: now, not the %s "
			       "htbctl installed; left in place", ifname, root.kind,
			       root.handle >> 16, m->leaf_kind);
		} else if (ours) {
			rc = qdisc_tree_restore(ifindex, saved, m->our_root, &e);
			if (rc) {
				p_warn(ctx, "%s", e.msg);
				bad++;
			}
		}
		m->flags &= ~META_F_QDISC_INSTALLED;
	}
	return bad;
}

static int choose_prio(int ifindex, __u32 *prio, struct nlerr *e)
{
	__u32 prefs[256];
	int n = tc_filter_prefs(ifindex, EGRESS_PARENT, prefs, 256, e);

	if (n < 0) {
		/* no clsact yet: nothing there */
		*prio = 1;
		return 0;
	}
	for (__u32 p = 1; p < 0xffff; p++) {
		bool used = false;

		for (int i = 0; i < n && i < 256; i++)
			used |= prefs[i] == p;
		if (!used) {
			*prio = p;
			return n;
		}
	}
	return -ENOSPC;
}

static int set_sizes(struct htbctl_bpf *skel, const struct htb_config *cfg,
		     __u32 cap)
{
	int rc = 0;

	rc |= bpf_map__set_max_entries(skel->maps.class_conf, 2 * cap);
	rc |= bpf_map__set_max_entries(skel->maps.class_state, cap);
	rc |= bpf_map__set_max_entries(skel->maps.cls_prio, cap);
	rc |= bpf_map__set_max_entries(skel->maps.cls_mark,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_MARK]));
	rc |= bpf_map__set_max_entries(skel->maps.cls_dst4,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_DST4]));
	rc |= bpf_map__set_max_entries(skel->maps.cls_src4,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_SRC4]));
	rc |= bpf_map__set_max_entries(skel->maps.cls_dst6,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_DST6]));
	rc |= bpf_map__set_max_entries(skel->maps.cls_src6,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_SRC6]));
	rc |= bpf_map__set_max_entries(skel->maps.cls_port,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_PORT]));
	rc |= bpf_map__set_max_entries(skel->maps.cls_cgroup,
				       cls_capacity(cfg->nkeys[CONFIG_MATCH_CGROUP]));
	return rc;
}

static int skel_map_fd(struct htbctl_bpf *skel, enum map_id id)
{
	struct bpf_map *m = bpf_object__find_map_by_name(skel->obj, map_names[id]);

	return m ? bpf_map__fd(m) : -1;
}

/* The first fill: generation 0, every class new. */
static int fill_new(struct htbctl_bpf *skel, const struct plan *p,
		    const struct htb_config *cfg, __u64 horizon_ns, const char **what)
{
	struct htb_runtime rt = { 0 };
	__u32 n = cfg->nclasses;
	int rc;

	/* Both generations get the tree, so the first reload, like every
	 * later one, finds them equal and reads only one (loader_reload.c). */
	*what = "class_conf";
	rc = write_conf(skel_map_fd(skel, M_CONF), 0, p->capacity, p->slot, p->conf, n);
	if (!rc)
		rc = write_conf(skel_map_fd(skel, M_CONF), 1, p->capacity, p->slot, p->conf, n);
	if (rc)
		return rc;
	*what = "class_state";
	rc = init_state(skel_map_fd(skel, M_STATE), p->slot, n, p->conf);
	if (rc)
		return rc;
	*what = "tree_conf";
	for (__u32 gen = 0; gen < 2; gen++)
		if (bpf_map_update_elem(skel_map_fd(skel, M_TREE), &gen, &p->tree, BPF_ANY))
			return -errno;
	for (int c = 0; c < NCLS; c++) {
		*what = map_names[cls_desc[c].map];
		rc = kv_update(skel_map_fd(skel, cls_desc[c].map), &p->cls[c],
			       p->cls[c].e, p->cls[c].n);
		if (rc)
			return rc;
	}
	*what = "runtime";
	rt.gen = 0;
	rt.capacity = p->capacity;
	rt.hysteresis = cfg->dev.hysteresis;
	rt.horizon_ns = horizon_ns;
	return htb_map_set_runtime(skel_map_fd(skel, M_RUNTIME), &rt);
}

static int pin_all(struct htbctl_bpf *skel, const char *ifname, const char **what)
{
	struct bpf_map *map;
	char path[256];

	bpf_object__for_each_map(map, skel->obj) {
		const char *name = bpf_map__name(map);

		if (strchr(name, '.'))		/* .rodata and friends */
			continue;
		*what = name;
		pin_path(ifname, name, path, sizeof(path));
		if (bpf_map__pin(map, path))
			return -errno;
	}
	*what = PIN_PROG;
	pin_path(ifname, PIN_PROG, path, sizeof(path));
	return bpf_program__pin(skel->progs.htb_egress, path) ? -errno : 0;
}

static void print_summary(const struct ctx *ctx, const char *verb,
			  const char *ifname, const struct htb_config *cfg,
			  const struct htbctl_meta *m, double ms)
{
	struct printer p;
	char h[16];

	printer_init(&p, ctx->json, stdout);
	print_open_object(&p, NULL);
	print_string(&p, "dev", "%s: ", ifname);
	print_string(&p, "action", "%s", verb);
	print_u64(&p, "nclasses", " %llu classes", cfg->nclasses);
	print_u64(&p, "capacity", " (capacity %llu)", m->capacity);
	if (m->flags & META_F_QDISC_INSTALLED) {
		print_string(&p, "qdisc", ", %s", m->ntxq > 1 ? "mq" : m->leaf_kind);
		print_string(&p, "qdisc_handle", " %s root", tc_handle_str(m->our_root, h, sizeof(h)));
		if (m->ntxq > 1)
			print_u64(&p, "tx_queues", " with one fq per tx queue (%llu)", m->ntxq);
		print_u64(&p, "fq_flow_limit", ", flow_limit %llu", m->fq.flow_plimit);
		print_u64(&p, "fq_limit", " limit %llu", m->fq.plimit);
		print_u64(&p, "fq_orphan_mask", " orphan_mask %llu", m->fq.orphan_mask);
		print_time(&p, "fq_horizon", " horizon %s", (__u64)m->fq.horizon_us * 1000);
	} else {
		print_string(&p, "qdisc", NULL, "none");
		print_text(&p, ", root qdisc left alone (--no-qdisc)");
	}
	print_u64(&p, "filter_pref", ", filter pref %llu", m->filter_prio);
	print_u64(&p, "elapsed_us", NULL, (__u64)(ms * 1000));
	print_text(&p, " in %.1f ms\n", ms);
	print_close_object(&p);
	printer_finish(&p);
}

double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

int loader_load(const struct ctx *ctx, const struct load_opts *o)
{
	struct htbctl_bpf *skel = NULL;
	struct htb_config cfg = { 0 };
	struct plan plan = { 0 };
	struct txn t = { .ctx = ctx, .ifname = o->ifname, .meta_fd = -1 };
	struct qdisc_info root;
	struct fq_demand dem;
	struct nlerr e = { 0 };
	struct timespec t0, tp;
	char ingress[QDISC_KIND_LEN], why[512], hint[128];
	const char *leaf_kind = getenv("HTBCTL_TEST_QDISC");
	const char *what = "";
	__u32 cap, ntxq = 1, *slot;
	bool have_meta, test_qdisc = leaf_kind && *leaf_kind;
	int lock = -1, rc, ret = EXIT_FAIL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	loader_phase(ctx, &tp, "load", NULL);
	if (!test_qdisc)
		leaf_kind = "fq";
	loader_libbpf_log(ctx);
	if (privs_check(ctx, "load", NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS))
		return EXIT_FAIL;
	t.ifindex = dev_ifindex(ctx, o->ifname);
	if (!t.ifindex)
		return EXIT_FAIL;
	lock = pins_lock();
	if (lock < 0) {
		p_err(ctx, "locking /sys/fs/bpf: %s", strerror(-lock));
		return EXIT_FAIL;
	}
	switch (pins_check(o->ifname, t.ifindex, &t.m, &have_meta, why, sizeof(why))) {
	case PINS_OK:
		p_err(ctx, "htbctl is already loaded on %s (use 'htbctl reload', or "
		      "'htbctl unload' first)", o->ifname);
		goto out;
	case PINS_STALE:
		p_err(ctx, "%s; %s", why, stale_hint(hint, sizeof(hint), o->ifname));
		goto out;
	case PINS_FOREIGN:
		p_err(ctx, "%s", why);
		goto out;
	case PINS_NONE:
		break;
	}
	if (qdisc_get_root(t.ifindex, &root, ingress, &e)) {
		p_err(ctx, "%s", e.msg);
		goto out;
	}
	if (!strcmp(ingress, "ingress")) {
		p_err(ctx, "%s has an ingress qdisc, and htbctl needs clsact in its "
		      "place ('tc qdisc del dev %s ingress' removes it)", o->ifname,
		      o->ifname);
		goto out;
	}
	if (privs_check(ctx, "load", (*ingress ? 0 : NEED_CLSACT) |
			(!o->no_qdisc && !test_qdisc ? NEED_FQ : 0)))
		goto out;
	loader_phase(ctx, &tp, "load", "checks");
	if (config_load(o->config, &cfg, stderr)) {
		p_err(ctx, "config %s rejected; nothing changed", o->config);
		goto out;
	}
	loader_phase(ctx, &tp, "load", "parsing the config");
	if (link_info(t.ifindex, &ntxq, &e)) {
		p_err(ctx, "%s", e.msg);
		goto out;
	}
	cap = loader_capacity(cfg.nclasses);

	/* The program and its maps, filled before anything is attached. */
	skel = htbctl_bpf__open();
	if (!skel) {
		p_err(ctx, "opening the BPF object: %s", strerror(errno));
		goto out;
	}
	if (set_sizes(skel, &cfg, cap)) {
		p_err(ctx, "sizing the BPF maps failed");
		goto out;
	}
	rc = htbctl_bpf__load(skel);
	if (rc) {
		p_err(ctx, "loading the BPF program into the kernel: %s%s",
		      strerror(-rc), ctx->verbose ? "" : " (-v shows libbpf's log)");
		goto out;
	}
	loader_phase(ctx, &tp, "load", "BPF object load (verifier)");
	slot = malloc((size_t)(cfg.nclasses ? cfg.nclasses : 1) * sizeof(*slot));
	if (!slot) {
		p_err(ctx, "out of memory");
		goto out;
	}
	for (__u32 i = 0; i < cfg.nclasses; i++)
		slot[i] = i;
	rc = plan_build(&plan, &cfg, slot, cfg.nclasses, cap);
	if (rc) {
		p_err(ctx, "preparing the maps: %s", strerror(-rc));
		goto out;
	}
	loader_phase(ctx, &tp, "load", "plan");
	plan_fq_demand(&cfg, &dem);
	memset(&t.m, 0, sizeof(t.m));
	fq_params_compute(&dem, &t.m.fq);
	rc = fill_new(skel, &plan, &cfg, (__u64)t.m.fq.horizon_us * 1000, &what);
	if (rc) {
		p_err(ctx, "filling map %s: %s", what, strerror(-rc));
		goto out;
	}

	loader_phase(ctx, &tp, "load", "filling the maps");
	/* What is there now, to put back at unload. */
	if (!o->no_qdisc) {
		const char *bad;

		if (qdisc_tree_save(t.ifindex, &t.saved, &e)) {
			p_err(ctx, "%s", e.msg);
			goto out;
		}
		bad = qdisc_tree_unrestorable(&t.saved);
		if (bad) {
			p_err(ctx, "the root qdisc of %s (%s %x:) could not be put back "
			      "at unload: %s; remove it first, or load with --no-qdisc",
			      o->ifname, t.saved.root_kind, t.saved.root_handle >> 16, bad);
			goto out;
		}
	}

	/* From here on the device changes: meta first, so that a failure
	 * (or a crash) knows what to undo. */
	t.m.magic = META_MAGIC;
	t.m.version = META_VERSION;
	t.m.ifindex = t.ifindex;
	snprintf(t.m.ifname, sizeof(t.m.ifname), "%s", o->ifname);
	t.m.capacity = cap;
	t.m.hiwater = cfg.nclasses;
	t.m.ntxq = ntxq;
	snprintf(t.m.leaf_kind, sizeof(t.m.leaf_kind), "%s", leaf_kind);
	t.m.loaded_at = now_realtime_s();
	t.m.netns_ino = netns_ino();
	snprintf(t.m.config, sizeof(t.m.config), "%s", o->config);
	t.m.flags |= META_F_GENS_SYNCED;
	if (o->no_qdisc)
		t.m.flags |= META_F_NO_QDISC;
	if (test_qdisc)
		t.m.flags |= META_F_TEST_QDISC;
	t.m.saved_is_default = t.saved.is_default;
	t.m.saved_root_handle = t.saved.root_handle;
	memcpy(t.m.saved_root_kind, t.saved.root_kind, QDISC_KIND_LEN);
	t.m.saved_nqdiscs = t.saved.nqdiscs;
	t.m.saved_nclasses = t.saved.nclasses;
	t.m.saved_len = t.saved.len;
	t.meta_fd = meta_create_pinned(o->ifname, &t.m, &t.saved);
	t.pins = true;	/* the directory may exist even if this failed */
	if (t.meta_fd < 0) {
		p_err(ctx, "pinning %s/%s/meta: %s", PIN_ROOT, o->ifname,
		      strerror(-t.meta_fd));
		goto rollback;
	}
	rc = pin_all(skel, o->ifname, &what);
	if (rc) {
		p_err(ctx, "pinning %s under %s/%s: %s", what, PIN_ROOT, o->ifname,
		      strerror(-rc));
		goto rollback;
	}
	rc = shadow_write(o->ifname, plan.cls, 0);
	if (rc) {
		p_err(ctx, "pinning %s under %s/%s: %s", PIN_SHADOW, PIN_ROOT,
		      o->ifname, strerror(-rc));
		goto rollback;
	}
	loader_phase(ctx, &tp, "load", "saving the root, pinning");
	if (test_fail(ctx, "pins"))
		goto rollback;

	if (!o->no_qdisc) {
		t.m.our_root = qdisc_free_handle(t.ifindex);
		t.m.flags |= META_F_QDISC_INSTALLED;
		meta_save(&t);
		if (qdisc_install_root(t.ifindex, t.m.our_root, ntxq, leaf_kind,
				       &t.m.fq, &e)) {
			p_err(ctx, "%s", e.msg);
			goto rollback;
		}
		if (test_fail(ctx, "qdisc"))
			goto rollback;
	}
	if (!*ingress) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = t.ifindex,
			    .attach_point = BPF_TC_EGRESS);

		t.m.flags |= META_F_CLSACT_CREATED;
		meta_save(&t);
		rc = bpf_tc_hook_create(&hook);
		if (rc == -EEXIST) {
			t.m.flags &= ~META_F_CLSACT_CREATED;
		} else if (rc) {
			p_err(ctx, "creating clsact on %s: %s", o->ifname, strerror(-rc));
			goto rollback;
		}
		if (test_fail(ctx, "clsact"))
			goto rollback;
	}
	{
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = t.ifindex,
			    .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, ao, .handle = FILTER_HANDLE,
			    .prog_fd = bpf_program__fd(skel->progs.htb_egress));
		int others = choose_prio(t.ifindex, &t.m.filter_prio, &e);

		if (others < 0) {
			p_err(ctx, "no free filter priority on %s egress", o->ifname);
			goto rollback;
		}
		if (others > 0)
			p_warn(ctx, "%s egress already has %d filter%s; htbctl's is "
			       "at pref %u (lower prefs run first), and the packets "
			       "it sees end the chain there", o->ifname, others,
			       others == 1 ? "" : "s", t.m.filter_prio);
		ao.priority = t.m.filter_prio;
		t.m.filter_handle = FILTER_HANDLE;
		t.m.flags |= META_F_FILTER_ATTACHED;
		meta_save(&t);
		rc = bpf_tc_attach(&hook, &ao);
		if (rc) {
			t.m.flags &= ~META_F_FILTER_ATTACHED;
			p_err(ctx, "attaching the program to %s egress: %s", o->ifname,
			      strerror(-rc));
			goto rollback;
		}
		t.m.prog_id = ao.prog_id;
		if (test_fail(ctx, "attach"))
			goto rollback;
	}
	loader_phase(ctx, &tp, "load", "qdisc, clsact, attach");
	t.m.flags |= META_F_COMPLETE;
	rc = meta_write(t.meta_fd, &t.m);
	if (rc) {
		p_err(ctx, "recording the load in %s/%s/meta: %s", PIN_ROOT,
		      o->ifname, strerror(-rc));
		goto rollback;
	}
	if (!o->quiet)
		print_summary(ctx, "loaded", o->ifname, &cfg, &t.m, ms_since(&t0));
	if (o->no_qdisc && !ctx->json) {
		if (strcmp(root.kind, "fq") && strcmp(root.kind, "mq"))
			p_warn(ctx, "the root qdisc of %s is %s, not fq: departure "
			       "times are computed but not enforced", o->ifname, root.kind);
	}
	ret = EXIT_OK;
	goto out;

rollback:
	if (undo(ctx, o->ifname, t.ifindex, &t.m, &t.saved, true))
		p_warn(ctx, "could not undo everything on %s (see above)", o->ifname);
	if (t.pins)
		pins_remove(o->ifname);
out:
	if (t.meta_fd >= 0)
		close(t.meta_fd);
	qdisc_tree_free(&t.saved);
	plan_free(&plan);
	htbctl_bpf__destroy(skel);
	config_free(&cfg);
	if (lock >= 0)
		close(lock);
	return ret;
}

/* ---- unload ---- */

int loader_unload(const struct ctx *ctx, const struct load_opts *o)
{
	struct htbctl_meta m = { 0 };
	struct qdisc_tree saved = { 0 };
	char why[512], hint[128];
	bool have_meta;
	int ifindex = 0, lock, fd, ret = EXIT_FAIL;

	loader_libbpf_log(ctx);
	if (privs_check(ctx, "unload", NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS))
		return EXIT_FAIL;
	/* The device may be gone: its pins are then stale, and --force
	 * removes them. */
	ifindex = (int)if_nametoindex(o->ifname);
	if (!ifindex && !o->force) {
		char dir[256];

		pin_dir(o->ifname, dir, sizeof(dir));
		if (access(dir, F_OK) == 0)
			p_err(ctx, "%s belongs to a device that no longer exists; %s",
			      dir, stale_hint(hint, sizeof(hint), o->ifname));
		else
			dev_ifindex(ctx, o->ifname);	/* says why */
		return EXIT_FAIL;
	}
	lock = pins_lock();
	if (lock < 0) {
		p_err(ctx, "locking /sys/fs/bpf: %s", strerror(-lock));
		return EXIT_FAIL;
	}
	switch (pins_check(o->ifname, ifindex, &m, &have_meta, why, sizeof(why))) {
	case PINS_NONE:
		p_err(ctx, "nothing to unload: htbctl is not loaded on %s", o->ifname);
		goto out;
	case PINS_STALE:
		if (!o->force) {
			p_err(ctx, "%s; %s", why, stale_hint(hint, sizeof(hint), o->ifname));
			goto out;
		}
		if (ifindex && have_meta && m.ifindex != (__u32)ifindex) {
			/* Another device has the name now: touch only the pins. */
			ifindex = 0;
		}
		break;
	case PINS_FOREIGN:
		if (!o->force) {
			p_err(ctx, "%s; run unload in that namespace, or add --force to "
			      "remove only the pins (that device stays shaped, unmanaged)",
			      why);
			goto out;
		}
		ifindex = 0;	/* its device is not ours to touch from here */
		break;
	case PINS_OK:
		break;
	}
	if (have_meta) {
		fd = meta_open(o->ifname, &m, &saved);
		if (fd >= 0)
			close(fd);
		else
			have_meta = false;
	}
	if (have_meta) {
		/* The filter to remove is the one running the pinned program. */
		char path[256];
		struct bpf_prog_info pi = { 0 };
		__u32 len = sizeof(pi);

		pin_path(o->ifname, PIN_PROG, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &pi, &len) == 0)
			m.prog_id = pi.id;
		if (fd >= 0)
			close(fd);
	}
	if (have_meta && undo(ctx, o->ifname, ifindex, &m, &saved, false) && !o->force) {
		p_err(ctx, "could not remove everything from %s (see above); the pins "
		      "stay under %s/%s", o->ifname, PIN_ROOT, o->ifname);
		goto out;
	}
	if (pins_remove(o->ifname)) {
		p_err(ctx, "removing %s/%s: %s", PIN_ROOT, o->ifname, strerror(errno));
		goto out;
	}
	if (!o->quiet) {
		struct printer p;

		printer_init(&p, ctx->json, stdout);
		print_open_object(&p, NULL);
		print_string(&p, "dev", "%s: ", o->ifname);
		print_string(&p, "action", "%s", "unloaded");
		if (have_meta && !(m.flags & META_F_NO_QDISC))
			print_string(&p, "restored_qdisc", ", root qdisc %s restored",
				     saved.root_kind);
		print_text(&p, "\n");
		print_close_object(&p);
		printer_finish(&p);
	}
	ret = EXIT_OK;
out:
	qdisc_tree_free(&saved);
	close(lock);
	return ret;
}
