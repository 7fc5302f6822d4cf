// SPDX-License-Identifier: GPL-2.0
/*
 * What load, reload and unload share: libbpf's messages, -v step timing,
 * the HTBCTL_TEST_FAIL hooks, and the undo of what meta records.
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

#include "loader/loader.h"
#include "netlink/link.h"

#define EGRESS_PARENT	TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
#define INGRESS_PARENT	TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)

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

double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

int loader_config_text(const struct ctx *ctx, const struct load_opts *o,
		       char **buf, const char **text, size_t *len)
{
	*buf = NULL;
	if (o->config_text) {
		*text = o->config_text;
		*len = o->config_len;
		return 0;
	}
	if (config_read_file_big(o->config, buf, len, stderr)) {
		p_err(ctx, "config %s rejected; nothing changed", o->config);
		return -1;
	}
	*text = *buf;
	return 0;
}

int loader_parse_config(const struct ctx *ctx, const struct load_opts *o,
			const char *text, size_t len, struct htb_config *cfg)
{
	if (config_parse_string(text, len, o->config, cfg, stderr)) {
		p_err(ctx, "config %s rejected; nothing changed", o->config);
		return -1;
	}
	return 0;
}

/* The egress filter at pref and handle: 0, or 1 with a warning. */
static int detach_filter(const struct ctx *ctx, const char *ifname, int ifindex,
			 __u32 pref, __u32 handle)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, d, .handle = handle, .priority = pref);
	int rc = bpf_tc_detach(&hook, &d);

	if (rc && rc != -ENOENT) {
		p_warn(ctx, "removing the filter at %s egress pref %u: %s", ifname,
		       pref, strerror(-rc));
		return 1;
	}
	return 0;
}

/* The filter, if it still runs the program meta names. */
static int undo_filter(const struct ctx *ctx, const char *ifname, int ifindex,
		       const struct htbctl_meta *m)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = m->filter_handle,
		    .priority = m->filter_prio);

	if (bpf_tc_query(&hook, &q))
		return 0;	/* gone already */
	if (m->prog_id && q.prog_id != m->prog_id) {
		p_warn(ctx, "the filter at %s egress pref %u runs another program "
		       "(id %u); left in place", ifname, m->filter_prio, q.prog_id);
		return 0;
	}
	return detach_filter(ctx, ifname, ifindex, m->filter_prio, m->filter_handle);
}

/* clsact, if htbctl created it and nobody else's filters hang off it. */
static int undo_clsact(const struct ctx *ctx, const char *ifname, int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	struct nlerr e = { 0 };
	int ne = tc_filter_count(ifindex, EGRESS_PARENT, &e);
	int ni = tc_filter_count(ifindex, INGRESS_PARENT, &e);
	int rc;

	if (ne > 0 || ni > 0) {
		p_warn(ctx, "clsact on %s now holds filters of others (%d egress, %d "
		       "ingress); left in place", ifname, ne > 0 ? ne : 0,
		       ni > 0 ? ni : 0);
		return 0;
	}
	rc = bpf_tc_hook_destroy(&hook);
	if (rc && rc != -ENOENT && rc != -EINVAL) {
		p_warn(ctx, "removing clsact from %s: %s", ifname, strerror(-rc));
		return 1;
	}
	return 0;
}

/* The saved root, if the root is still the qdisc htbctl installed (a
 * rollback restores it whatever is there: the load put it there).
 * *restored says whether it was put back. */
static int undo_qdisc(const struct ctx *ctx, const char *ifname, int ifindex,
		      const struct htbctl_meta *m, const struct qdisc_tree *saved,
		      bool rollback, bool *restored)
{
	struct qdisc_info root;
	struct nlerr e = { 0 };
	bool ours;

	if (qdisc_get_root(ifindex, &root, NULL, &e)) {
		p_warn(ctx, "%s", e.msg);
		return 1;
	}
	ours = root.handle == m->our_root &&
	       (!strcmp(root.kind, "mq") || !strcmp(root.kind, m->leaf_kind));
	if (!ours && !rollback) {
		p_warn(ctx, "the root qdisc of %s is %s %x: now, not the %s htbctl "
		       "installed; left in place", ifname, root.kind,
		       root.handle >> 16, m->leaf_kind);
		return 0;
	}
	if (ours && qdisc_tree_restore(ifindex, saved, m->our_root, &e)) {
		p_warn(ctx, "%s", e.msg);
		return 1;
	}
	*restored = ours;
	return 0;
}

/* The device whose ingress an ifb shapes, if it is still the one meta
 * names (0: gone, or another device has its name now). */
static int ingress_dev(const struct htbctl_meta *m)
{
	int ifindex = m->ingress_of[0] ? (int)if_nametoindex(m->ingress_of) : 0;

	return ifindex && (__u32)ifindex == m->ingress_ifindex ? ifindex : 0;
}

/* The redirect on ingress_of's ingress, if it still runs the program meta
 * names; then its clsact, if htbctl made it and it is empty. */
static int undo_redirect(const struct ctx *ctx, struct htbctl_meta *m)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = m->redirect_handle,
		    .priority = m->redirect_prio);
	int ifindex = ingress_dev(m), bad = 0;

	if (ifindex && (m->flags & META_F_REDIRECT_ATTACHED)) {
		hook.ifindex = ifindex;
		if (bpf_tc_query(&hook, &q) == 0) {
			if (m->redirect_prog_id && q.prog_id != m->redirect_prog_id) {
				p_warn(ctx, "the filter at %s ingress pref %u runs another "
				       "program (id %u); left in place", m->ingress_of,
				       m->redirect_prio, q.prog_id);
			} else {
				LIBBPF_OPTS(bpf_tc_opts, d, .handle = m->redirect_handle,
					    .priority = m->redirect_prio);
				int rc = bpf_tc_detach(&hook, &d);

				if (rc && rc != -ENOENT) {
					p_warn(ctx, "removing the redirect at %s ingress pref %u: %s",
					       m->ingress_of, m->redirect_prio, strerror(-rc));
					bad++;
				}
			}
		}
	}
	m->flags &= ~META_F_REDIRECT_ATTACHED;
	if (ifindex && (m->flags & META_F_IN_CLSACT_CREATED))
		bad += undo_clsact(ctx, m->ingress_of, ifindex);
	m->flags &= ~META_F_IN_CLSACT_CREATED;
	return bad;
}

/* The ifb htbctl made, if it is still the one meta names: its qdiscs,
 * clsact and filter go with it. */
static int undo_ifb(const struct ctx *ctx, const char *ifname, int ifindex,
		    struct htbctl_meta *m)
{
	char kind[LINK_KIND_LEN];
	struct nlerr e = { 0 };

	m->flags &= ~(META_F_IFB_CREATED | META_F_FILTER_ATTACHED |
		      META_F_CLSACT_CREATED | META_F_QDISC_INSTALLED);
	if (link_kind(ifindex, kind, &e) || strcmp(kind, "ifb")) {
		p_warn(ctx, "%s is no longer the ifb htbctl created (%s); left in place",
		       ifname, e.err ? e.msg : kind);
		return 0;
	}
	if (link_delete(ifindex, &e) && e.err != -ENODEV) {
		p_warn(ctx, "%s", e.msg);
		return 1;
	}
	return 0;
}

int loader_undo(const struct ctx *ctx, const char *ifname, int ifindex,
		struct htbctl_meta *m, const struct qdisc_tree *saved, bool rollback,
		bool *restored)
{
	bool put_back = false;
	int bad = 0;

	if (restored)
		*restored = false;
	/* the redirect first: no packet may go to an ifb being removed */
	bad += undo_redirect(ctx, m);
	if (!ifindex)
		return bad;
	if (m->flags & META_F_IFB_CREATED)
		return bad + undo_ifb(ctx, ifname, ifindex, m);
	if (m->flags & META_F_FILTER_ATTACHED)
		bad += undo_filter(ctx, ifname, ifindex, m);
	m->flags &= ~META_F_FILTER_ATTACHED;
	if (m->flags & META_F_CLSACT_CREATED)
		bad += undo_clsact(ctx, ifname, ifindex);
	m->flags &= ~META_F_CLSACT_CREATED;
	if (m->flags & META_F_QDISC_INSTALLED)
		bad += undo_qdisc(ctx, ifname, ifindex, m, saved, rollback, &put_back);
	m->flags &= ~META_F_QDISC_INSTALLED;
	if (restored)
		*restored = put_back;
	return bad;
}

/* ---- htbctl's own filters, found by their program ---- */

static bool map_named(__u32 id, const char *name)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_map_get_fd_by_id(id);
	bool yes;

	if (fd < 0)
		return false;
	yes = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && !strcmp(info.name, name);
	close(fd);
	return yes;
}

/* A program of htbctl's: SCHED_CLS, named htb_egress, and using maps
 * named class_conf and class_state (a name alone is anyone's to take). */
static bool prog_is_ours(__u32 id)
{
	struct bpf_prog_info info = { 0 };
	__u32 ids[64], len = sizeof(info), n;
	int fd = bpf_prog_get_fd_by_id(id), found = 0;

	if (fd < 0)
		return false;
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != BPF_PROG_TYPE_SCHED_CLS || strcmp(info.name, PIN_PROG)) {
		close(fd);
		return false;
	}
	close(fd);
	n = info.nr_map_ids < sizeof(ids) / sizeof(ids[0]) ? info.nr_map_ids
							  : sizeof(ids) / sizeof(ids[0]);
	for (__u32 i = 0; i < n; i++)
		found += map_named(ids[i], "class_conf") || map_named(ids[i], "class_state");
	return found == 2;
}

int loader_own_filters(int ifindex, struct tc_filter *own, int max)
{
	struct tc_filter f[64];
	struct nlerr e = { 0 };
	int n = tc_filters(ifindex, EGRESS_PARENT, f, 64, &e), k = 0;

	if (n < 0)
		return 0;	/* no clsact: no filter */
	for (int i = 0; i < n && i < 64; i++)
		if (f[i].prog_id && prog_is_ours(f[i].prog_id) && k++ < max)
			own[k - 1] = f[i];
	return k;
}

int loader_remove_own_filters(const struct ctx *ctx, const char *ifname, int ifindex)
{
	struct tc_filter f[16];
	int n = loader_own_filters(ifindex, f, 16), done = 0;

	for (int i = 0; i < n && i < 16; i++)
		done += !detach_filter(ctx, ifname, ifindex, f[i].pref, f[i].handle);
	return done;
}
