// SPDX-License-Identifier: GPL-2.0
/*
 * show: the class tree in force with its settings and live statistics,
 * like `tc -s class show`, from one snapshot of the pinned maps
 * (observe/snapshot.c); the difference of its two reads gives the current rate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/loader.h"
#include "loader/maps_fill.h"
#include "observe/show.h"
#include "observe/snapshot.h"
#include "common/units.h"

static const char *mode_name(__u32 mode)
{
	switch (mode) {
	case HTB_MODE_CANT_SEND: return "cant_send";
	case HTB_MODE_MAY_BORROW: return "may_borrow";
	case HTB_MODE_CAN_SEND: return "can_send";
	}
	return "unknown";
}


/* Bytes of a bucket of ns at rate: the burst the config gave (exact below
 * 8 Gbit/s, where buffer = floor(burst * 1e9 / rate) loses nothing). */
static __u64 bucket_bytes(__s64 ns, __u64 rate)
{
	unsigned __int128 b = (unsigned __int128)(ns > 0 ? ns : 0) * rate;

	return (__u64)((b + HTB_NSEC_PER_SEC - 1) / HTB_NSEC_PER_SEC);
}

/* A signed time: raw ns in JSON, tc units with a sign in text. */
static void print_stime(struct printer *p, const char *key, const char *label, __s64 ns)
{
	char buf[UNIT_BUF];

	if (p->json) {
		print_s64(p, key, NULL, ns);
		return;
	}
	sprint_time(ns < 0 ? (__u64)-ns : (__u64)ns, buf, sizeof(buf));
	print_text(p, "%s%s%s", label, ns < 0 ? "-" : "", buf);
}

/* A leaf's borrow limit from the sharing loop (while it runs). */
static void print_share(struct printer *p, const struct htb_class_share *sh)
{
	bool backlogged = sh->demand_Bps == ~0ull;

	print_rate(p, "borrow_limit", "\n share: may borrow %s", sh->borrow_Bps);
	print_bool(p, "backlogged", NULL, backlogged);
	if (backlogged)
		print_text(p, ", backlogged (wants more)");
	else
		print_rate(p, "demand", ", offers %s", sh->demand_Bps);
}

/* A leaf's AQM counters and its queue delay: how far its schedule runs
 * ahead of the clock at the read (tc's backlog, as a time). */
static void print_aqm(struct printer *p, const struct htb_class_state *s, __u64 now)
{
	print_u64(p, "ecn_marks", "\n aqm: marked %llu", s->ecn_marks);
	print_u64(p, "aqm_drops", " dropped %llu", s->aqm_drops);
	print_time(p, "queue_delay", ", queue delay %s",
		   s->last_stamp > now ? s->last_stamp - now : 0);
	print_u64(p, "sparse_packets", ", sparse %llu pkt", s->sparse_packets);
}

static void print_class(struct printer *p, const struct htb_class_conf *c,
			const struct htb_class_conf *conf,
			const struct htb_class_state *s1,
			const struct htb_class_state *s2, __u64 dt_ns, __u64 now,
			const struct htb_class_share *sh)
{
	char id[16];
	__u64 rate_est = 0, pps_est = 0;

	if (dt_ns) {
		rate_est = (__u64)((unsigned __int128)(s2->bytes - s1->bytes) *
				   HTB_NSEC_PER_SEC / dt_ns);
		pps_est = (__u64)((unsigned __int128)(s2->packets - s1->packets) *
				  HTB_NSEC_PER_SEC / dt_ns);
	}
	print_open_object(p, NULL);
	print_string(p, "class", "class htb %s", sprint_classid(c->classid, id, sizeof(id)));
	print_u64(p, "index", NULL, c->path[0]);	/* its key in class_state */
	if (c->depth > 1)
		print_string(p, "parent", " parent %s",
			     sprint_classid(conf[c->path[1]].classid, id, sizeof(id)));
	else
		print_string(p, "parent", " %s", "root");
	print_bool(p, "leaf", NULL, c->flags & HTB_CONF_LEAF);
	print_text(p, "%s", c->flags & HTB_CONF_LEAF ? " leaf" : "");
	print_class_settings(p, &(struct print_class_settings){
		.prio = c->prio, .rate = c->rate.rate_Bps, .ceil = c->ceil.rate_Bps,
		.burst = bucket_bytes(c->buffer, c->rate.rate_Bps),
		.cburst = bucket_bytes(c->cbuffer, c->ceil.rate_Bps),
		.quantum = c->quantum, .limit_ns = c->limit_ns,
		.leaf = c->flags & HTB_CONF_LEAF, .codel = c->flags & HTB_CONF_AQM,
		.ecn = c->flags & HTB_CONF_ECN, .flows = c->flags & HTB_CONF_FLOWS,
		.target_ns = c->target_ns,
		.interval_ns = c->interval_ns,
	});
	print_u64(p, "bytes", "\n Sent %llu bytes", s2->bytes);
	print_u64(p, "packets", " %llu pkt", s2->packets);
	print_u64(p, "drops", " (dropped %llu", s2->drops);
	print_u64(p, "overlimits", ", overlimits %llu)", s2->overlimits);
	print_rate(p, "current_rate", "\n rate %s", rate_est);
	print_u64(p, "current_pps", " %llupps", pps_est);
	print_u64(p, "lends", "\n lended: %llu", s2->lends);
	print_u64(p, "borrows", " borrowed: %llu", s2->borrows);
	print_stime(p, "tokens", " tokens: ", s2->tokens);
	print_stime(p, "ctokens", " ctokens: ", s2->ctokens);
	print_string(p, "mode", " mode %s", mode_name(s2->mode));
	print_u64(p, "t_c", NULL, s2->t_c);
	if (c->flags & HTB_CONF_LEAF)
		print_aqm(p, s2, now);
	if (sh && (c->flags & HTB_CONF_LEAF))
		print_share(p, sh);
	print_text(p, "\n\n");
	print_close_object(p);
}

/* The config whose tree is in force. A reload that did not finish (meta
 * still says RELOADING) switched to its tree if the generation flipped. */
static void print_config(struct printer *p, const struct htbctl_meta *m, __u32 gen)
{
	bool interrupted = m->flags & META_F_RELOADING;
	bool switched = interrupted && gen == m->pending_gen;

	print_string(p, "config", "\n config %s", switched ? m->pending_config : m->config);
	print_bool(p, "reload_interrupted", NULL, interrupted);
	if (!interrupted)
		return;
	print_string(p, "reload_config", NULL, m->pending_config);
	print_bool(p, "reload_switched", NULL, switched);
	print_text(p, "\n a reload to %s did not finish: %s", m->pending_config,
		   switched ? "its tree is in force" : "the tree before it is in force");
	print_text(p, " (the next reload or load completes the change)");
}

/* Whether the daemon's sharing loop runs (its lease) and when it last ran. */
static void print_sharing(struct printer *p, const struct htb_runtime *rt, __u64 now)
{
	bool on = now < rt->share_until_ns;
	char buf[UNIT_BUF];

	print_string(p, "sharing", NULL, on ? "prio_quantum" : "fcfs");
	if (rt->share_run_ns && rt->share_run_ns <= now)
		print_u64(p, "sharing_age_ns", NULL, now - rt->share_run_ns);
	if (!on) {
		print_text(p, "\n spare bandwidth: first come, first served (no sharing loop "
			   "runs: `htbctl daemon` shares it by prio and quantum)");
		return;
	}
	sprint_time(now - rt->share_run_ns, buf, sizeof(buf));
	print_text(p, "\n spare bandwidth: by prio and quantum (the daemon's sharing "
		   "loop, last run %s ago)", buf);
}

/* Which direction of its config the device shapes, and where the other
 * is (docs/loader.md "Directions"); nothing for a config of one. */
static void print_direction(struct printer *p, const struct htbctl_meta *m)
{
	const char *dir = meta_dir_name(m->dir);

	if (!dir)
		return;
	print_string(p, "direction", "\n direction %s", dir);
	if (m->ingress_of[0])
		print_string(p, "ingress_of", ": the ingress of %s", m->ingress_of);
	if (m->partner[0]) {
		print_text(p, ", %s on", m->dir == META_DIR_DOWNLOAD ? "upload" : "download");
		print_string(p, "partner", " %s", m->partner);
	}
}

static void print_device(struct printer *p, const char *ifname,
			 const struct htbctl_meta *m, const struct snapshot *sn)
{
	const struct htb_dev_stats *ds = &sn->ds;
	char h[16];

	print_string(p, "dev", "dev %s:", ifname);
	print_u64(p, "nclasses", " %llu classes", sn->nrows);
	print_u64(p, "capacity", " (capacity %llu)", sn->rt.capacity);
	print_u64(p, "generation", ", generation %llu", sn->rt.gen & 1);
	print_u64(p, "reloads", ", %llu reloads", m->reloads);
	print_bool(p, "hysteresis", ", hysteresis %s", sn->rt.hysteresis);
	if (m->flags & META_F_NO_QDISC) {
		print_string(p, "qdisc", NULL, "none");
		print_text(p, ", qdisc left alone (--no-qdisc)");
	} else {
		print_string(p, "qdisc", ", qdisc %s", m->ntxq > 1 ? "mq" : m->leaf_kind);
		print_string(p, "qdisc_handle", " %s", tc_handle_str(m->our_root, h, sizeof(h)));
	}
	print_direction(p, m);
	print_config(p, m, sn->rt.gen & 1);
	print_sharing(p, &sn->rt, sn->t0);
	print_u64(p, "unclassified_packets", "\n unclassified: %llu pkt", ds->unclassified_packets);
	print_u64(p, "unclassified_bytes", " %llu bytes", ds->unclassified_bytes);
	print_u64(p, "control_packets", ", link control (ARP, ND, unshaped): %llu pkt", ds->control_packets);
	print_u64(p, "control_bytes", " %llu bytes", ds->control_bytes);
	print_u64(p, "stale_tstamps", ", stale tstamps %llu", ds->stale_tstamps);
	print_u64(p, "drops", ", dropped %llu", ds->drops);
	print_time(p, "interval", ", rates over %s", sn->t2 - sn->t1);
	print_text(p, "\n\n");
}

static int print_snapshot(const struct ctx *ctx, struct printer *p, const char *ifname,
			  const struct htbctl_meta *m, const struct snapshot *sn,
			  __u64 interval_ns)
{
	print_open_object(p, NULL);
	print_device(p, ifname, m, sn);
	print_open_array(p, "classes");
	for (__u32 i = 0; i < sn->nrows; i++) {
		__u32 s = sn->rows[i].slot;

		print_class(p, &sn->conf[s], sn->conf, &sn->s1[s], &sn->s2[s],
			    interval_ns ? sn->t2 - sn->t1 : 0, sn->t2,
			    sn->sh ? &sn->sh[s] : NULL);
	}
	print_close_array(p);
	print_close_object(p);
	if (fflush(stdout) || ferror(stdout)) {
		p_err(ctx, "writing the output failed");
		return -1;
	}
	return 0;
}

static int show_one(const struct ctx *ctx, struct printer *p, const char *ifname,
		    __u64 interval_ns, const struct show_filter *f)
{
	static const struct dev_cmd cmd = {
		.verb = "show", .need = NEED_BPF | NEED_BPFFS, .want = WANT_LOADED,
	};
	struct snapshot sn = { 0 };
	struct session s;
	struct maps mp;
	int ret = EXIT_FAIL;

	if (session_open(&s, ctx, &cmd, ifname) || maps_open_pinned(ctx, ifname, &mp))
		goto out;
	if (snapshot_take(ctx, &mp, s.m.hiwater, interval_ns, &sn) == 0) {
		char id[16];

		snapshot_sort(&sn);
		if (show_filter_rows(&sn, f))
			p_err(ctx, "class %s: no such class in the tree in force on %s",
			      sprint_classid(f->classid, id, sizeof(id)), ifname);
		else if (print_snapshot(ctx, p, ifname, &s.m, &sn, interval_ns) == 0)
			ret = EXIT_OK;
	}
	maps_close(&mp);
out:
	snapshot_free(&sn);
	session_close(&s);
	return ret;
}

/* Both directions of a config, download first: one block each, in JSON
 * an array of the two objects (one direction: the object, as before). */
int show_dev(const struct ctx *ctx, const char *ifname, __u64 interval_ns,
	     const struct show_filter *f)
{
	struct dev_group g;
	struct printer p;
	int ret = EXIT_OK;

	dirs_group_or_name(ifname, &g);
	printer_init(&p, ctx->json, stdout);
	if (g.n > 1)
		print_open_array(&p, NULL);
	for (int i = 0; i < g.n && ret == EXIT_OK; i++)
		ret = show_one(ctx, &p, g.name[i], interval_ns, f);
	if (g.n > 1)
		print_close_array(&p);
	printer_finish(&p);
	return ret;
}
