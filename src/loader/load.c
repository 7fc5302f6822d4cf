// SPDX-License-Identifier: GPL-2.0
/*
 * load (docs/loader.md "What load does"): the steps below, in order. The
 * first ones only prepare (checks, config, the program and its filled
 * maps); from pin_everything on the device changes, and every change is
 * recorded in the pinned meta map before it is made, so a failure rolls
 * back newest first and a crash leaves enough for `unload --force`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/pkt_sched.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/bigmem.h"
#include "loader/loader.h"
#include "loader/plan.h"
#include "loader/maps_fill.h"
#include "htbctl.skel.h"
#include "htbctl_redirect.skel.h"
#include "htb/flowtag.h"
#include "netlink/link.h"

#define FILTER_HANDLE	1
#define EGRESS_PARENT	TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
#define INGRESS_PARENT	TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
#define CAPACITY_MIN	1024u
#define CAPACITY_MAX	(2u * CONFIG_MAX_CLASSES)

__u32 loader_capacity(__u32 nclasses)
{
	__u64 c = 2ull * nclasses;

	if (c < CAPACITY_MIN)
		c = CAPACITY_MIN;
	if (c > CAPACITY_MAX)
		c = CAPACITY_MAX;
	return (__u32)c;
}

/* Everything one load works with, from the first check to the summary. */
struct load_run {
	const struct ctx *ctx;
	const struct load_opts *o;
	struct session s;
	char *cfg_buf;				/* the file, when read here */
	const char *cfg_text;
	size_t cfg_len;
	struct htb_config own;		/* parsed here (no o->dir) */
	const struct htb_config *cfg;	/* own, or o->dir's tree */
	struct htbctl_bpf *skel;
	struct maps maps;
	struct plan plan;
	struct qdisc_info root;			/* the root qdisc found */
	char ingress[QDISC_KIND_LEN];		/* "clsact", "ingress" or "" */
	const char *leaf_kind;			/* "fq", or HTBCTL_TEST_QDISC */
	bool test_qdisc;
	__u32 ntxq;
	struct qdisc_tree saved;		/* the root tree, to put back */
	struct htbctl_meta m;			/* what is done so far */
	int meta_fd;
	bool pins;				/* the pin directory may exist */
	/* ingress shaping: the ifb is o->ifname, made by this load */
	const char *ingress_of;			/* NULL: o->ifname shapes its egress */
	int in_ifindex;				/* ingress_of's */
	char in_ingress[QDISC_KIND_LEN];	/* its clsact ("" none yet) */
	struct htbctl_redirect_bpf *redir;
};

/* Step results: done, nothing to do here, failed (message printed). */
enum { STEP_DONE = 0, STEP_SKIPPED = 1, STEP_FAILED = -1 };

static const struct dev_cmd load_cmd = {
	.verb = "load", .need = NEED_NET_ADMIN | NEED_BPF | NEED_PROG | NEED_BPFFS,
	.lock = true, .want = WANT_UNLOADED,
};

/* The ifb's name is free: a device of that name, whoever made it, is
 * never taken over (htbctl deletes its ifb at unload). */
static int ifb_name_free(struct load_run *r)
{
	char dir[256];

	if (!r->s.ifindex)
		return STEP_DONE;
	/* with pins, the lock's check of them says loaded, or stale */
	pin_dir(r->o->ifname, dir, sizeof(dir));
	if (access(dir, F_OK) == 0)
		return STEP_DONE;
	p_err(r->ctx, "device %s exists and htbctl did not create it: name "
	      "another ifb in [device] ifb = NAME, or remove it", r->o->ifname);
	return STEP_FAILED;
}

/* The ifb does not exist yet: its name and privileges are checked as a
 * device's, and the device whose ingress it shapes must be there. */
static int check_ifb(struct load_run *r)
{
	static const struct dev_cmd ifb_cmd = {
		.verb = "load", .need = NEED_NET_ADMIN | NEED_BPF | NEED_PROG | NEED_BPFFS,
		.lock = true, .device_may_be_gone = true, .want = WANT_UNLOADED,
	};

	if (session_check(&r->s, r->ctx, &ifb_cmd, r->o->ifname))
		return STEP_FAILED;
	r->in_ifindex = dev_ifindex(r->ctx, r->ingress_of);
	if (!r->in_ifindex)
		return STEP_FAILED;
	return ifb_name_free(r);
}

static int check_device(struct load_run *r)
{
	if (r->ingress_of)
		return check_ifb(r);
	return session_check(&r->s, r->ctx, &load_cmd, r->o->ifname) ? STEP_FAILED : STEP_DONE;
}

/* Before the lock: the file may be slow to read (a FIFO, a network
 * file system), and other commands must not wait for it. */
static int read_config_file(struct load_run *r)
{
	if (r->o->dir)
		return STEP_SKIPPED;	/* read and parsed by loader/dirs.c */
	return loader_config_text(r->ctx, r->o, &r->cfg_buf, &r->cfg_text, &r->cfg_len) ?
	       STEP_FAILED : STEP_DONE;
}

/* A filter of htbctl's without pins (its directory was removed by hand):
 * it would take every packet before the new one. */
static int orphaned_filter(struct load_run *r)
{
	struct tc_filter f;

	if (loader_own_filters(r->s.ifindex, &f, 1) <= 0)
		return 0;
	p_err(r->ctx, "%s egress already runs htbctl's program (filter pref %u) "
	      "without pins under %s/%s; 'htbctl unload dev %s --force' removes it",
	      r->o->ifname, f.pref, PIN_ROOT, r->o->ifname, r->o->ifname);
	return -1;
}

/* Ingress: the ifb gets a clsact of its own when it is made; the device
 * whose ingress it shapes needs clsact there (an ingress qdisc is in the
 * way, as on egress). */
static int lock_ifb(struct load_run *r)
{
	struct qdisc_info root;
	struct nlerr e = { 0 };

	if (qdisc_get_root(r->in_ifindex, &root, r->in_ingress, &e)) {
		p_err(r->ctx, "%s", e.msg);
		return STEP_FAILED;
	}
	if (!strcmp(r->in_ingress, "ingress")) {
		p_err(r->ctx, "%s has an ingress qdisc, and htbctl needs clsact in its "
		      "place to redirect it to %s ('tc qdisc del dev %s ingress' removes it)",
		      r->ingress_of, r->o->ifname, r->ingress_of);
		return STEP_FAILED;
	}
	if (privs_check(r->ctx, "load", NEED_CLSACT |
			(!r->o->no_qdisc && !r->test_qdisc ? NEED_FQ : 0)))
		return STEP_FAILED;
	return STEP_DONE;
}

/* The lock, the pins, and what the device has in the way of clsact. */
static int lock_device(struct load_run *r)
{
	struct nlerr e = { 0 };

	r->s.lock_held = r->o->lock_held;
	if (session_lock(&r->s, &load_cmd))
		return STEP_FAILED;
	if (r->ingress_of)
		return lock_ifb(r);
	if (qdisc_get_root(r->s.ifindex, &r->root, r->ingress, &e)) {
		p_err(r->ctx, "%s", e.msg);
		return STEP_FAILED;
	}
	if (!strcmp(r->ingress, "ingress")) {
		p_err(r->ctx, "%s has an ingress qdisc, and htbctl needs clsact in its "
		      "place ('tc qdisc del dev %s ingress' removes it)", r->o->ifname,
		      r->o->ifname);
		return STEP_FAILED;
	}
	if (orphaned_filter(r))
		return STEP_FAILED;
	if (privs_check(r->ctx, "load", (*r->ingress ? 0 : NEED_CLSACT) |
			(!r->o->no_qdisc && !r->test_qdisc ? NEED_FQ : 0)))
		return STEP_FAILED;
	return STEP_DONE;
}

static int parse_config(struct load_run *r)
{
	struct nlerr e = { 0 };

	/* parsed once for both directions (loader/dirs.c), and that tree
	 * outlives the run: used as it is, not copied */
	r->cfg = r->o->dir ? r->o->dir->cfg : &r->own;
	if (!r->o->dir &&
	    loader_parse_config(r->ctx, r->o, r->cfg_text, r->cfg_len, &r->own))
		return STEP_FAILED;
	if (r->ingress_of)
		return STEP_DONE;	/* an ifb has one TX queue (ntxq stays 1) */
	if (link_info(r->s.ifindex, &r->ntxq, &e)) {
		p_err(r->ctx, "%s", e.msg);
		return STEP_FAILED;
	}
	return STEP_DONE;
}

/* Whether the kernel is PREEMPT_RT (/sys/kernel/realtime reads 1): a tc
 * program may then be preempted on its CPU, and the program runs without
 * per-CPU batches (docs/design.md, "Batches"). */
static bool kernel_is_rt(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == '1';
}

/* The program and its maps, sized for the config; the verifier runs. */
static int load_program(struct load_run *r)
{
	__u32 cap = loader_capacity(r->cfg->nclasses), major, top_minor;
	int rc;

	if (plan_main_major(r->cfg, &major, &top_minor)) {
		p_err(r->ctx, "out of memory");
		return STEP_FAILED;
	}
	r->skel = htbctl_bpf__open();
	if (!r->skel) {
		p_err(r->ctx, "opening the BPF object: %s", strerror(errno));
		return STEP_FAILED;
	}
	if (maps_size_skel(r->skel, cap, r->cfg->nkeys, top_minor)) {
		p_err(r->ctx, "sizing the BPF maps failed");
		return STEP_FAILED;
	}
	r->skel->rodata->no_batch = kernel_is_rt();
	r->skel->rodata->flowtag_bits = htb_flowtag_bits(cap);
	rc = htbctl_bpf__load(r->skel);
	if (rc) {
		p_err(r->ctx, "loading the BPF program into the kernel: %s%s",
		      strerror(-rc), r->ctx->verbose ? "" : " (-v shows libbpf's log)");
		return STEP_FAILED;
	}
	maps_from_skel(&r->maps, r->skel);
	r->m.capacity = cap;
	return STEP_DONE;
}

/*
 * --no-qdisc leaves the root to the operator: say when it will not do what
 * htbctl's own would. fq's default orphan_mask (1023) puts the flows of
 * every packet without a connected socket (forwarded, bridged, unconnected
 * sockets) into 1024 flows whatever their class: the program's flow tag
 * (include/htb/flowtag.h) needs the whole hash.
 */
static void warn_foreign_root(struct load_run *r)
{
	const char *dev = r->o->ifname;
	struct nlerr e;
	__u32 mask;

	if (strcmp(r->root.kind, "fq") && strcmp(r->root.kind, "mq")) {
		p_warn(r->ctx, "the root qdisc of %s is %s, not fq: departure times "
		       "are computed but not enforced", dev, r->root.kind);
		return;
	}
	if (qdisc_fq_orphan_mask(r->s.ifindex, &mask, &e) > 0 && mask != HTB_FQ_ORPHAN_MASK)
		p_warn(r->ctx, "fq on %s has orphan_mask %u: packets without a connected "
		       "socket (forwarded, bridged) of different classes can share fq flows; "
		       "give fq orphan_mask %u, or load without --no-qdisc", dev, mask,
		       HTB_FQ_ORPHAN_MASK);
}

/* Config index i takes slot i; fq's parameters follow from the classes. */
static int plan_maps(struct load_run *r)
{
	__u32 n = r->cfg->nclasses, *slot = malloc((size_t)(n ? n : 1) * sizeof(*slot));
	struct fq_demand dem;
	int rc;

	if (!slot) {
		p_err(r->ctx, "out of memory");
		return STEP_FAILED;
	}
	for (__u32 i = 0; i < n; i++)
		slot[i] = i;
	rc = plan_build(&r->plan, r->cfg, slot, n, r->m.capacity);
	if (rc) {
		p_err(r->ctx, "preparing the maps: %s", strerror(-rc));
		return STEP_FAILED;
	}
	plan_fq_demand(r->cfg, &dem);
	fq_params_compute(&dem, &r->m.fq);
	return STEP_DONE;
}

static int fill_failed(struct load_run *r, const char *map, int rc)
{
	p_err(r->ctx, "filling map %s: %s", map, strerror(-rc));
	return STEP_FAILED;
}

/* Every map while nothing can see them. The plan's slots are the config
 * indexes here, so conf[i] is slot i's. Both generations get the tree, so
 * the first reload, like every later one, finds them equal and reads only
 * one (loader/reload.c). */
static int fill_maps(struct load_run *r)
{
	const struct plan *p = &r->plan;
	struct htb_runtime rt = {
		.capacity = p->capacity, .hysteresis = r->cfg->dev.hysteresis,
		.horizon_ns = (__u64)r->m.fq.horizon_us * 1000,
	};
	int rc;

	for (__u32 gen = 0; gen < 2; gen++)
		if ((rc = maps_put_conf(&r->maps, gen, p->capacity, p->slot, p->conf,
					p->nslots)))
			return fill_failed(r, "class_conf", rc);
	if ((rc = maps_init_state(&r->maps, p->slot, p->conf, p->nslots, htb_clock_ns())))
		return fill_failed(r, "class_state", rc);
	for (__u32 gen = 0; gen < 2; gen++)
		if ((rc = maps_put_tree(&r->maps, gen, &p->tree)))
			return fill_failed(r, "tree_conf", rc);
	if ((rc = maps_init_minor(&r->maps)))
		return fill_failed(r, "cls_minor", rc);
	for (int c = 0; c < HTB_NCLS; c++)
		if ((rc = maps_put_cls(&r->maps, c, p->cls[c].e, p->cls[c].n)))
			return fill_failed(r, map_name(M_CLS + c), rc);
	if ((rc = maps_set_runtime(&r->maps, &rt)))
		return fill_failed(r, "runtime", rc);
	return STEP_DONE;
}

/* What is there now, to put back at unload. */
static int save_root_qdisc(struct load_run *r)
{
	struct nlerr e = { 0 };
	const char *bad;

	if (r->o->no_qdisc)
		return STEP_SKIPPED;
	if (r->ingress_of) {
		/* the ifb goes at unload, and its qdiscs with it */
		r->saved.is_default = true;
		return STEP_SKIPPED;
	}
	if (qdisc_tree_save(r->s.ifindex, &r->saved, &e)) {
		p_err(r->ctx, "%s", e.msg);
		return STEP_FAILED;
	}
	bad = qdisc_tree_unrestorable(&r->saved);
	if (bad) {
		p_err(r->ctx, "the root qdisc of %s (%s %x:) could not be put back at "
		      "unload: %s; remove it first, or load with --no-qdisc",
		      r->o->ifname, r->saved.root_kind, r->saved.root_handle >> 16, bad);
		return STEP_FAILED;
	}
	return STEP_DONE;
}

/* meta as it stands before the first change. */
static void meta_begin(struct load_run *r)
{
	struct htbctl_meta *m = &r->m;

	m->magic = META_MAGIC;
	m->version = META_VERSION;
	m->ifindex = r->s.ifindex;
	snprintf(m->ifname, sizeof(m->ifname), "%s", r->o->ifname);
	m->hiwater = r->cfg->nclasses;
	m->ntxq = r->ntxq;
	snprintf(m->leaf_kind, sizeof(m->leaf_kind), "%s", r->leaf_kind);
	m->loaded_at = (__u64)time(NULL);
	m->netns_ino = netns_ino();
	snprintf(m->config, sizeof(m->config), "%s", r->o->config);
	m->flags |= META_F_GENS_SYNCED | (r->o->no_qdisc ? META_F_NO_QDISC : 0) |
		    (r->test_qdisc ? META_F_TEST_QDISC : 0);
	m->saved_is_default = r->saved.is_default;
	m->saved_root_handle = r->saved.root_handle;
	memcpy(m->saved_root_kind, r->saved.root_kind, QDISC_KIND_LEN);
	m->saved_nqdiscs = r->saved.nqdiscs;
	m->saved_nclasses = r->saved.nclasses;
	m->saved_len = r->saved.len;
	if (!r->o->dir)
		return;
	m->dir = r->o->dir->dir;
	if (r->o->dir->partner)
		snprintf(m->partner, sizeof(m->partner), "%s", r->o->dir->partner);
	if (r->ingress_of) {
		snprintf(m->ingress_of, sizeof(m->ingress_of), "%s", r->ingress_of);
		m->ingress_ifindex = r->in_ifindex;
	}
}

/* Records a change about to be made. */
static void meta_save(struct load_run *r)
{
	int rc = meta_write(r->meta_fd, &r->m);

	if (rc)
		p_warn(r->ctx, "recording progress in %s/%s/meta: %s", PIN_ROOT,
		       r->o->ifname, strerror(-rc));
}

/* meta first: from here on it records every change before it is made. */
static int create_meta(struct load_run *r)
{
	meta_begin(r);
	r->meta_fd = meta_create_pinned(r->o->ifname, &r->m, &r->saved);
	r->pins = true;		/* the directory may exist even if this failed */
	if (r->meta_fd < 0) {
		p_err(r->ctx, "pinning %s/%s/meta: %s", PIN_ROOT, r->o->ifname,
		      strerror(-r->meta_fd));
		return STEP_FAILED;
	}
	return STEP_DONE;
}

/* Every map of the program by its name, the program, the shadow. */
static int pin_everything(struct load_run *r)
{
	const char *ifname = r->o->ifname, *what = PIN_PROG;
	struct bpf_map *map;
	char path[256];
	int rc = 0;

	bpf_object__for_each_map(map, r->skel->obj) {
		if (strchr(bpf_map__name(map), '.'))	/* .rodata and friends */
			continue;
		what = bpf_map__name(map);
		pin_path(ifname, what, path, sizeof(path));
		if ((rc = bpf_map__pin(map, path) ? -errno : 0))
			goto fail;
	}
	what = PIN_PROG;
	pin_path(ifname, PIN_PROG, path, sizeof(path));
	if ((rc = bpf_program__pin(r->skel->progs.htb_egress, path) ? -errno : 0))
		goto fail;
	what = PIN_SHADOW;
	if ((rc = shadow_write(ifname, r->plan.cls, 0)))
		goto fail;
	return STEP_DONE;
fail:
	p_err(r->ctx, "pinning %s under %s/%s: %s", what, PIN_ROOT, ifname, strerror(-rc));
	return STEP_FAILED;
}

/* The ifb, recorded before it is made: a rollback or unload deletes it. */
static int create_ifb(struct load_run *r)
{
	struct nlerr e = { 0 };
	int ifindex = 0, rc;

	if (!r->ingress_of)
		return STEP_SKIPPED;
	r->m.flags |= META_F_IFB_CREATED;
	meta_save(r);
	rc = link_create_ifb(r->o->ifname, &ifindex, &e);
	if (rc == -EEXIST) {
		/* made by someone else since the check: not ours to delete */
		r->m.flags &= ~META_F_IFB_CREATED;
		p_err(r->ctx, "device %s exists and htbctl did not create it: name "
		      "another ifb in [device] ifb = NAME, or remove it", r->o->ifname);
		return STEP_FAILED;
	}
	if (ifindex) {
		r->s.ifindex = ifindex;
		r->m.ifindex = ifindex;
		meta_save(r);
	}
	if (rc) {
		p_err(r->ctx, "%s%s", e.msg, rc == -EOPNOTSUPP || rc == -ENOENT ?
		      " (does the kernel have ifb?)" : "");
		return STEP_FAILED;
	}
	return STEP_DONE;
}

static int install_qdisc(struct load_run *r)
{
	struct nlerr e = { 0 };

	if (r->o->no_qdisc)
		return STEP_SKIPPED;
	r->m.our_root = qdisc_free_handle(r->s.ifindex);
	r->m.flags |= META_F_QDISC_INSTALLED;
	meta_save(r);
	if (qdisc_install_root(r->s.ifindex, r->m.our_root, r->ntxq, r->leaf_kind,
			       &r->m.fq, &e)) {
		p_err(r->ctx, "%s", e.msg);
		return STEP_FAILED;
	}
	return STEP_DONE;
}

static int create_clsact(struct load_run *r)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = r->s.ifindex,
		    .attach_point = BPF_TC_EGRESS);
	int rc;

	if (*r->ingress)
		return STEP_SKIPPED;	/* clsact is there: used, and it stays */
	r->m.flags |= META_F_CLSACT_CREATED;
	meta_save(r);
	rc = bpf_tc_hook_create(&hook);
	if (rc == -EEXIST) {
		r->m.flags &= ~META_F_CLSACT_CREATED;
	} else if (rc) {
		p_err(r->ctx, "creating clsact on %s: %s", r->o->ifname, strerror(-rc));
		return STEP_FAILED;
	}
	return STEP_DONE;
}

/* The lowest pref not in use at parent (clsact egress or ingress; 1 when
 * there is none), or -ENOSPC. */
static int choose_prio(int ifindex, __u32 parent, __u32 *prio)
{
	__u32 prefs[256];
	struct nlerr e = { 0 };
	int n = tc_filter_prefs(ifindex, parent, prefs, 256, &e);

	*prio = 1;
	if (n < 0)
		return 0;	/* no clsact yet: nothing there */
	for (__u32 p = 1; p < 0xffff; p++) {
		bool used = false;

		for (int i = 0; i < n && i < 256; i++)
			used |= prefs[i] == p;
		if (!used) {
			*prio = p;
			return 0;
		}
	}
	return -ENOSPC;
}

static int attach_filter(struct load_run *r)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = r->s.ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, ao, .handle = FILTER_HANDLE,
		    .prog_fd = bpf_program__fd(r->skel->progs.htb_egress));
	struct nlerr e = { 0 };
	int others, rc;

	if (choose_prio(r->s.ifindex, EGRESS_PARENT, &r->m.filter_prio)) {
		p_err(r->ctx, "no free filter priority on %s egress", r->o->ifname);
		return STEP_FAILED;
	}
	others = tc_filter_count(r->s.ifindex, EGRESS_PARENT, &e);
	if (others > 0)
		p_warn(r->ctx, "%s egress already has %d filter%s; htbctl's is at pref "
		       "%u (lower prefs run first), and the packets it sees end the "
		       "chain there", r->o->ifname, others, others == 1 ? "" : "s",
		       r->m.filter_prio);
	ao.priority = r->m.filter_prio;
	r->m.filter_handle = FILTER_HANDLE;
	r->m.flags |= META_F_FILTER_ATTACHED;
	meta_save(r);
	rc = bpf_tc_attach(&hook, &ao);
	if (rc) {
		r->m.flags &= ~META_F_FILTER_ATTACHED;
		p_err(r->ctx, "attaching the program to %s egress: %s", r->o->ifname,
		      strerror(-rc));
		return STEP_FAILED;
	}
	r->m.prog_id = ao.prog_id;
	return STEP_DONE;
}

/* clsact on the device whose ingress the ifb shapes, if it has none. */
static int create_in_clsact(struct load_run *r)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = r->in_ifindex,
		    .attach_point = BPF_TC_INGRESS);
	int rc;

	if (*r->in_ingress)
		return STEP_DONE;	/* there: used, and it stays */
	r->m.flags |= META_F_IN_CLSACT_CREATED;
	meta_save(r);
	rc = bpf_tc_hook_create(&hook);
	if (rc == -EEXIST) {
		r->m.flags &= ~META_F_IN_CLSACT_CREATED;
	} else if (rc) {
		p_err(r->ctx, "creating clsact on %s: %s", r->ingress_of, strerror(-rc));
		return STEP_FAILED;
	}
	return STEP_DONE;
}

/* The redirect's program: two instructions, nothing for the verifier to
 * weigh. Pinned beside the ifb's maps. */
static int load_redirect(struct load_run *r)
{
	char path[256];
	int rc;

	r->redir = htbctl_redirect_bpf__open();
	if (!r->redir) {
		p_err(r->ctx, "opening the redirect BPF object: %s", strerror(errno));
		return STEP_FAILED;
	}
	rc = htbctl_redirect_bpf__load(r->redir);
	if (!rc) {
		pin_path(r->o->ifname, PIN_REDIRECT, path, sizeof(path));
		rc = bpf_program__pin(r->redir->progs.htb_redirect, path) ? -errno : 0;
	}
	if (rc) {
		p_err(r->ctx, "loading the ingress redirect program: %s", strerror(-rc));
		return STEP_FAILED;
	}
	return STEP_DONE;
}

/* Ingress shaping: every packet received on ingress_of goes to the ifb's
 * egress (bpf/htbctl_redirect.bpf.c and a mirred action,
 * netlink/link.c), recorded before it is attached. */
static int redirect_ingress(struct load_run *r)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = r->in_ifindex,
		    .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = FILTER_HANDLE);
	struct nlerr e = { 0 };
	int others, rc;

	if (!r->ingress_of)
		return STEP_SKIPPED;
	if (create_in_clsact(r) || load_redirect(r))
		return STEP_FAILED;
	if (choose_prio(r->in_ifindex, INGRESS_PARENT, &r->m.redirect_prio)) {
		p_err(r->ctx, "no free filter priority on %s ingress", r->ingress_of);
		return STEP_FAILED;
	}
	others = tc_filter_count(r->in_ifindex, INGRESS_PARENT, &e);
	if (others > 0)
		p_warn(r->ctx, "%s ingress already has %d filter%s; htbctl's redirect to "
		       "%s is at pref %u (lower prefs run first)", r->ingress_of, others,
		       others == 1 ? "" : "s", r->o->ifname, r->m.redirect_prio);
	r->m.redirect_handle = FILTER_HANDLE;
	r->m.flags |= META_F_REDIRECT_ATTACHED;
	meta_save(r);
	rc = link_redirect_to_ifb(r->in_ifindex, r->m.redirect_prio, FILTER_HANDLE,
				  bpf_program__fd(r->redir->progs.htb_redirect),
				  PIN_REDIRECT, r->s.ifindex, &e);
	if (rc) {
		r->m.flags &= ~META_F_REDIRECT_ATTACHED;
		p_err(r->ctx, "%s on %s ingress%s", e.msg, r->ingress_of,
		      rc == -ENOENT || rc == -EOPNOTSUPP ? " (does the kernel have act_mirred?)" : "");
		return STEP_FAILED;
	}
	q.priority = r->m.redirect_prio;
	if (bpf_tc_query(&hook, &q) == 0)
		r->m.redirect_prog_id = q.prog_id;
	return STEP_DONE;
}

static int mark_complete(struct load_run *r)
{
	int rc;

	r->m.flags |= META_F_COMPLETE;
	rc = meta_write(r->meta_fd, &r->m);
	if (rc) {
		p_err(r->ctx, "recording the load in %s/%s/meta: %s", PIN_ROOT,
		      r->o->ifname, strerror(-rc));
		return STEP_FAILED;
	}
	return STEP_DONE;
}

struct load_step {
	int (*run)(struct load_run *r);
	const char *phase;	/* -v timing up to here; NULL: with the next */
	const char *hook;	/* HTBCTL_TEST_FAIL name of the step */
	bool changes;		/* changes the device: a failure rolls back */
};

/* The steps of docs/loader.md "What load does", in order. */
static const struct load_step load_steps[] = {
	{ check_device,		NULL,				NULL,	  false },
	{ read_config_file,	NULL,				NULL,	  false },
	{ lock_device,		"checks",			NULL,	  false },
	{ parse_config,		"parsing the config",		NULL,	  false },
	{ load_program,		"BPF object load (verifier)",	NULL,	  false },
	{ plan_maps,		"plan",				NULL,	  false },
	{ fill_maps,		"filling the maps",		NULL,	  false },
	{ save_root_qdisc,	NULL,				NULL,	  false },
	{ create_meta,		NULL,				NULL,	  true },
	{ create_ifb,		NULL,				"ifb",	  true },
	{ pin_everything,	"saving the root, pinning",	"pins",	  true },
	{ install_qdisc,	NULL,				"qdisc",  true },
	{ create_clsact,	NULL,				"clsact", true },
	{ attach_filter,	"qdisc, clsact, attach",	"attach", true },
	{ redirect_ingress,	NULL,				"redirect", true },
	{ mark_complete,	NULL,				NULL,	  true },
};

void loader_print_loaded(const struct ctx *ctx, const char *ifname,
			 const struct htbctl_meta *m, __u32 nclasses, double ms)
{
	const char *dir = meta_dir_name(m->dir);
	struct printer p;
	char h[16];

	printer_init(&p, ctx->json, stdout);
	print_open_object(&p, NULL);
	print_string(&p, "dev", "%s: ", ifname);
	print_string(&p, "action", "%s", "loaded");
	if (dir)
		print_string(&p, "direction", " %s", dir);
	if (m->ingress_of[0])
		print_string(&p, "ingress_of", " (the ingress of %s)", m->ingress_of);
	print_u64(&p, "nclasses", " %llu classes", nclasses);
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
	if (m->flags & META_F_REDIRECT_ATTACHED)
		print_u64(&p, "redirect_pref", ", redirect pref %llu", m->redirect_prio);
	print_u64(&p, "elapsed_us", NULL, (__u64)(ms * 1000));
	print_text(&p, " in %.1f ms\n", ms);
	print_close_object(&p);
	printer_finish(&p);
}

/* HTBCTL_TEST_FAIL: a device of two directions answers to
 * "download-STEP" and "upload-STEP", so a test can fail either one. */
static bool test_fail(const struct load_run *r, const char *step)
{
	char name[64];
	const char *d = r->o->dir ? meta_dir_name(r->o->dir->dir) : NULL;

	if (!d)
		return loader_test_fail(r->ctx, step);
	snprintf(name, sizeof(name), "%s-%s", d, step);
	return loader_test_fail(r->ctx, name);
}

/* Runs the steps; a failure after the first change undoes them all. */
static int run_steps(struct load_run *r)
{
	struct timespec tp;
	char why[512];

	loader_phase(r->ctx, &tp, "load", NULL);
	for (size_t i = 0; i < sizeof(load_steps) / sizeof(load_steps[0]); i++) {
		const struct load_step *st = &load_steps[i];
		int rc = st->run(r);

		if (rc == STEP_DONE && st->hook && test_fail(r, st->hook))
			rc = STEP_FAILED;
		if (rc == STEP_FAILED) {
			if (st->changes)
				goto rollback;
			return -1;
		}
		if (st->phase)
			loader_phase(r->ctx, &tp, "load", st->phase);
	}
	return 0;
rollback:
	if (loader_undo(r->ctx, r->o->ifname, r->s.ifindex, &r->m, &r->saved, true, NULL))
		p_warn(r->ctx, "could not undo everything on %s (see above)", r->o->ifname);
	if (r->pins && pins_remove(r->o->ifname, why, sizeof(why)))
		p_warn(r->ctx, "%s", why);
	return -1;
}

/* A leaf below a parent with room above its rate: it borrows. */
bool loader_tree_borrows(const struct htb_config *cfg)
{
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *c = &cfg->classes[i];

		if (c->is_leaf && c->parent != CONFIG_NO_INDEX && c->ceil > c->rate)
			return true;
	}
	return false;
}

int loader_load_one(const struct ctx *ctx, const struct load_opts *o)
{
	struct load_run r = { .ctx = ctx, .o = o, .meta_fd = -1, .ntxq = 1,
			      .ingress_of = o->dir ? o->dir->ingress_of : NULL };
	const char *test_kind = loader_test_qdisc();
	struct timespec t0;
	int ret = EXIT_FAIL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r.test_qdisc = test_kind != NULL;
	r.leaf_kind = r.test_qdisc ? test_kind : "fq";
	if (run_steps(&r) == 0) {
		if (!o->quiet)
			loader_print_loaded(ctx, o->ifname, &r.m, r.cfg->nclasses,
					    ms_since(&t0));
		/* two directions: loader/dirs.c says it once for both */
		if (!o->quiet && (!o->dir || o->dir->dir == META_DIR_ONE) &&
		    loader_tree_borrows(r.cfg))
			p_info(ctx, "note: spare bandwidth goes by prio and quantum while "
			       "`htbctl daemon` runs for %s; without it borrowing classes "
			       "share it first come, first served", o->ifname);
		if (o->no_qdisc && !ctx->json && r.ingress_of)
			p_warn(ctx, "%s has no fq (--no-qdisc): departure times are "
			       "computed but not enforced", o->ifname);
		else if (o->no_qdisc && !ctx->json)
			warn_foreign_root(&r);
		ret = EXIT_OK;
		if (o->dir) {
			if (o->dir->done)
				*o->dir->done = r.m;
			o->dir->nclasses = r.cfg->nclasses;
		}
	}
	htbctl_redirect_bpf__destroy(r.redir);
	if (r.meta_fd >= 0)
		close(r.meta_fd);
	qdisc_tree_free(&r.saved);
	plan_free(&r.plan);
	htbctl_bpf__destroy(r.skel);
	config_free(&r.own);
	big_free(r.cfg_buf);
	session_close(&r.s);
	return ret;
}
