// SPDX-License-Identifier: GPL-2.0
/*
 * metrics: a loaded device's state as one Prometheus text exposition
 * (format 0.0.4), for `htbctl metrics` (a file for node_exporter's
 * textfile collector, or stdout) and the daemon's /metrics. It is one
 * snapshot of the maps (observe/snapshot.c: a few batched reads, two of
 * class_state METRICS_DEFAULT_INTERVAL_NS apart for the current rate; the
 * daemon reads once and measures the rate since its previous scrape).
 *
 * Names follow Prometheus's: base units (bytes, seconds), counters end in
 * _total, every family has HELP and TYPE, its samples together. A family
 * is one row of a table below: a new one touches its table and nothing
 * else. Labels of a class: device, class, parent ("root" at the top),
 * leaf ("true"/"false").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "loader/session.h"
#include "loader/maps_fill.h"
#include "observe/metrics.h"
#include "observe/snapshot.h"

/* A sample's value: counters exactly, nanoseconds as exact decimal
 * seconds, other gauges as decimals. */
enum val_kind { V_DOUBLE, V_U64, V_NS };

struct val {
	enum val_kind kind;
	__u64 u;
	__s64 ns;
	double d;
};

#define U(x)	((struct val){ .kind = V_U64, .u = (x) })
#define NS(x)	((struct val){ .kind = V_NS, .ns = (x) })
#define D(x)	((struct val){ .d = (x) })

static const struct htb_class_state *st_of(const struct snapshot *sn, __u32 s)
{
	return &sn->s2[s];
}

static struct val c_bytes(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->bytes); }
static struct val c_packets(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->packets); }
static struct val c_drops(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->drops); }
static struct val c_overlimits(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->overlimits); }
static struct val c_lends(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->lends); }
static struct val c_borrows(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->borrows); }
static struct val c_marks(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->ecn_marks); }
static struct val c_aqm_drops(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->aqm_drops); }
static struct val c_sparse(const struct snapshot *sn, __u32 s) { return U(st_of(sn, s)->sparse_packets); }
static struct val c_tokens(const struct snapshot *sn, __u32 s) { return NS(st_of(sn, s)->tokens); }
static struct val c_ctokens(const struct snapshot *sn, __u32 s) { return NS(st_of(sn, s)->ctokens); }
static struct val c_rate(const struct snapshot *sn, __u32 s) { return U(sn->conf[s].rate.rate_Bps); }
static struct val c_ceil(const struct snapshot *sn, __u32 s) { return U(sn->conf[s].ceil.rate_Bps); }
static struct val c_cur(const struct snapshot *sn, __u32 s) { return U(snapshot_rate(sn, s, false)); }

static struct val c_delay(const struct snapshot *sn, __u32 s)
{
	__u64 last = st_of(sn, s)->last_stamp;

	return NS(last > sn->t2 ? (__s64)(last - sn->t2) : 0);
}

static const struct class_family {
	const char *name, *type, *help;
	struct val (*get)(const struct snapshot *sn, __u32 s);
	bool leaf_only;
} class_families[] = {
	{ "htbctl_class_bytes_total", "counter", "Bytes the class sent (wire length).", c_bytes, false },
	{ "htbctl_class_packets_total", "counter", "Packets the class sent.", c_packets, false },
	{ "htbctl_class_drops_total", "counter", "Packets dropped beyond the class's limit.", c_drops, true },
	{ "htbctl_class_overlimits_total", "counter", "Times the class went over its ceil (HTB's overlimits).", c_overlimits, false },
	{ "htbctl_class_lends_total", "counter", "Packets the class sent from its own rate.", c_lends, false },
	{ "htbctl_class_borrows_total", "counter", "Packets the class sent with tokens borrowed from an ancestor.", c_borrows, false },
	{ "htbctl_class_ecn_marks_total", "counter", "Packets CoDel marked CE.", c_marks, true },
	{ "htbctl_class_aqm_drops_total", "counter", "Packets CoDel dropped.", c_aqm_drops, true },
	{ "htbctl_class_sparse_packets_total", "counter", "Packets of sparse flows sent ahead of the class's backlog.", c_sparse, true },
	{ "htbctl_class_tokens_seconds", "gauge", "The class's rate bucket, in seconds of its rate (negative: in debt).", c_tokens, false },
	{ "htbctl_class_ctokens_seconds", "gauge", "The class's ceil bucket, in seconds of its ceil.", c_ctokens, false },
	{ "htbctl_class_rate_bytes_per_second", "gauge", "The class's configured rate.", c_rate, false },
	{ "htbctl_class_ceil_bytes_per_second", "gauge", "The class's configured ceil.", c_ceil, false },
	{ "htbctl_class_current_rate_bytes_per_second", "gauge", "What the class sent per second over the scrape's interval.", c_cur, false },
	{ "htbctl_class_queue_delay_seconds", "gauge", "How far the class's schedule runs ahead of now (its queue, as a time).", c_delay, true },
};

/* What the device families read: the snapshot, the meta record, the
 * daemon (or NULL). */
struct dev_in {
	const struct snapshot *sn;
	const struct htbctl_meta *m;
	const struct metrics_daemon *dm;
};

static struct val d_uncl_pkts(const struct dev_in *i) { return U(i->sn->ds.unclassified_packets); }
static struct val d_uncl_bytes(const struct dev_in *i) { return U(i->sn->ds.unclassified_bytes); }
static struct val d_ctl_pkts(const struct dev_in *i) { return U(i->sn->ds.control_packets); }
static struct val d_ctl_bytes(const struct dev_in *i) { return U(i->sn->ds.control_bytes); }
static struct val d_stale(const struct dev_in *i) { return U(i->sn->ds.stale_tstamps); }
static struct val d_drops(const struct dev_in *i) { return U(i->sn->ds.drops); }
static struct val d_reloads(const struct dev_in *i) { return U(i->m->reloads); }
static struct val d_classes(const struct dev_in *i) { return U(i->sn->nrows); }
static struct val d_capacity(const struct dev_in *i) { return U(i->sn->rt.capacity); }
static struct val d_hyst(const struct dev_in *i) { return U(!!i->sn->rt.hysteresis); }
static struct val d_sharing(const struct dev_in *i) { return U(i->sn->t0 < i->sn->rt.share_until_ns); }
static struct val d_rl_ok(const struct dev_in *i) { return U(i->dm->last_ok); }
static struct val d_rl_time(const struct dev_in *i) { return D(i->dm->last_time); }

static const struct dev_family {
	const char *name, *type, *help;
	struct val (*get)(const struct dev_in *i);
	bool daemon_reload;	/* only from a daemon that has reloaded */
} dev_families[] = {
	{ "htbctl_unclassified_packets_total", "counter", "Packets no class matched (passed unshaped).", d_uncl_pkts, false },
	{ "htbctl_unclassified_bytes_total", "counter", "Bytes no class matched.", d_uncl_bytes, false },
	{ "htbctl_link_control_packets_total", "counter", "ARP and neighbour discovery packets, passed unshaped.", d_ctl_pkts, false },
	{ "htbctl_link_control_bytes_total", "counter", "ARP and neighbour discovery bytes.", d_ctl_bytes, false },
	{ "htbctl_stale_tstamps_total", "counter", "Packets whose own departure time lay beyond the horizon (ignored).", d_stale, false },
	{ "htbctl_device_drops_total", "counter", "Packets the program dropped (limit or AQM).", d_drops, false },
	{ "htbctl_reloads_total", "counter", "Reloads since the load.", d_reloads, false },
	{ "htbctl_classes", "gauge", "Classes in the tree in force.", d_classes, false },
	{ "htbctl_class_capacity", "gauge", "Class slots the maps were sized for at load.", d_capacity, false },
	{ "htbctl_hysteresis", "gauge", "1 when mode hysteresis is on.", d_hyst, false },
	{ "htbctl_sharing_by_prio_quantum", "gauge", "1 while the daemon's sharing loop shares spare bandwidth.", d_sharing, false },
	{ "htbctl_daemon_last_reload_success", "gauge", "1 when the daemon's last reload put its config in force.", d_rl_ok, true },
	{ "htbctl_daemon_last_reload_timestamp_seconds", "gauge", "When the daemon's last reload ended.", d_rl_time, true },
};

#define N_OF(a)	(sizeof(a) / sizeof((a)[0]))

/* The digits of v ending at e (no terminator); returns their start. */
static char *digits(char *e, __u64 v)
{
	do
		*--e = (char)('0' + v % 10);
	while ((v /= 10));
	return e;
}

/* " 123\n", " -0.0075144\n": by hand, not printf: a scrape of 100,000
 * classes prints 1.5 million values (printf's float path was a fifth of
 * its time). Nanoseconds print as exact seconds, trailing zeros cut. */
static void put_val(FILE *f, struct val v)
{
	char b[48], *e = b + sizeof(b), *q = e;

	if (v.kind == V_DOUBLE) {
		fprintf(f, " %.15g\n", v.d);	/* a timestamp's ms survive */
		return;
	}
	*--q = '\n';
	if (v.kind == V_U64) {
		q = digits(q, v.u);
	} else {
		__u64 a = v.ns < 0 ? -(__u64)v.ns : (__u64)v.ns;
		__u64 frac = a % 1000000000ull;

		if (frac) {
			char *end = q;
			int w = 9;

			while (frac % 10 == 0) {
				frac /= 10;
				w--;
			}
			q = digits(q, frac);
			while (end - q < w)
				*--q = '0';
			*--q = '.';
		}
		q = digits(q, a / 1000000000ull);
		if (v.ns < 0)
			*--q = '-';
	}
	*--q = ' ';
	fwrite_unlocked(q, 1, (size_t)(e - q), f);
}

static void put_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A class's label set, "{device=...,leaf=...}", malloc'ed: written once
 * per class, then once per family. dev is the device's labels
 * (dev_labels), escaped once; class ids need no escaping. */
static char *class_labels(const char *dev, const struct snapshot *sn, __u32 s)
{
	const struct htb_class_conf *c = &sn->conf[s];
	char id[16], pid[16] = "root", *buf;

	if (c->depth > 1 && c->path[1] < sn->hw)
		sprint_classid(sn->conf[c->path[1]].classid, pid, sizeof(pid));
	if (asprintf(&buf, "{%s,class=\"%s\",parent=\"%s\",leaf=\"%s\"}", dev,
		     sprint_classid(c->classid, id, sizeof(id)), pid,
		     c->flags & HTB_CONF_LEAF ? "true" : "false") < 0)
		return NULL;
	return buf;
}

/* A label value as the format wants it (\, " and newline escaped),
 * malloc'ed. */
char *metrics_label_value(const char *v)
{
	char *out = malloc(2 * strlen(v) + 1), *o = out;

	for (; out && *v; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n')
			*o++ = '\\';
		*o++ = *v == '\n' ? 'n' : *v;
	}
	if (out)
		*o = '\0';
	return out;
}

static bool is_leaf(const struct snapshot *sn, __u32 row)
{
	return sn->conf[sn->rows[row].slot].flags & HTB_CONF_LEAF;
}

static int by_rate_desc(const void *a, const void *b, void *arg)
{
	__u64 x = snapshot_rate(arg, *(const __u32 *)a, false);
	__u64 y = snapshot_rate(arg, *(const __u32 *)b, false);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The slots that get series, in tree order: inner classes, and all leaves
 * or the top_n by current rate. Returns how many (sel malloc'ed; NULL
 * when out of memory). */
static __u32 select_rows(const struct snapshot *sn, const struct metrics_opts *o, __u32 **sel)
{
	__u32 n = 0, nl = 0, *leaves = calloc(sn->nrows + 1, sizeof(*leaves));
	bool *top = calloc(sn->hw + 1, sizeof(*top));

	*sel = calloc(sn->nrows + 1, sizeof(**sel));
	if (!leaves || !top || !*sel) {
		free(*sel);
		*sel = NULL;
		goto out;
	}
	for (__u32 r = 0; r < sn->nrows; r++)
		if (is_leaf(sn, r))
			leaves[nl++] = sn->rows[r].slot;
	if (o->classes == METRICS_TOP) {
		qsort_r(leaves, nl, sizeof(*leaves), by_rate_desc, (void *)sn);
		for (__u32 k = 0; k < nl && k < o->top_n; k++)
			top[leaves[k]] = true;
	}
	for (__u32 r = 0; r < sn->nrows; r++) {
		__u32 slot = sn->rows[r].slot;

		if (!is_leaf(sn, r) || o->classes == METRICS_ALL || top[slot])
			(*sel)[n++] = slot;
	}
out:
	free(leaves);
	free(top);
	return n;
}

/*
 * One shaped device's reading, and its labels: a config of two
 * directions is two devices in one exposition (docs/loader.md
 * "Directions"), each family's samples of both together, as the format
 * wants, told apart by device and direction.
 */
struct dev_read {
	struct session s;
	struct maps mp;
	bool maps_open;
	struct snapshot sn;
	__u32 *sel, n;
	char *lab;		/* device="...",direction="..." (escaped) */
	char **class_lab;	/* by sel's index */
	struct dev_in in;
};

/* device="IFACE", and direction="download|upload" for a device of two. */
static char *dev_labels(const char *ifname, const struct htbctl_meta *m)
{
	const char *dir = meta_dir_name(m->dir);
	char *dev = metrics_label_value(ifname), *buf = NULL;

	if (dev && asprintf(&buf, "device=\"%s\"%s%s%s", dev, dir ? ",direction=\"" : "",
			    dir ? dir : "", dir ? "\"" : "") < 0)
		buf = NULL;
	free(dev);
	return buf;
}

static void put_device(FILE *f, const struct dev_read *r, int nr)
{
	for (size_t i = 0; i < N_OF(dev_families); i++) {
		const struct dev_family *d = &dev_families[i];

		if (d->daemon_reload && (!r[0].in.dm || !r[0].in.dm->reloaded))
			continue;
		put_head(f, d->name, d->type, d->help);
		for (int k = 0; k < nr; k++) {
			fprintf(f, "%s{%s}", d->name, r[k].lab);
			put_val(f, d->get(&r[k].in));
		}
	}
}

/* One counter of the daemon's in two samples by a label, for every
 * device it shapes (both from its start, at 0, so that increase() sees
 * the first of either). */
static void put_daemon_pair(FILE *f, const struct dev_read *r, int nr, const char *name,
			    const char *help, const char *label, const char *a, __u64 va,
			    const char *b, __u64 vb)
{
	put_head(f, name, "counter", help);
	for (int k = 0; k < nr; k++) {
		fprintf(f, "%s{%s,%s=\"%s\"}", name, r[k].lab, label, a);
		put_val(f, U(va));
		fprintf(f, "%s{%s,%s=\"%s\"}", name, r[k].lab, label, b);
		put_val(f, U(vb));
	}
}

/* What only a daemon knows: its reloads and re-attaches by result, and
 * the /metrics connections it shut down, by reason. */
static void put_daemon_reloads(FILE *f, const struct dev_read *r, int nr,
			       const struct metrics_daemon *dm)
{
	if (!dm)
		return;
	put_daemon_pair(f, r, nr, "htbctl_daemon_reloads_total",
			"Times the daemon applied its config (a changed file, SIGHUP), by "
			"result: ok, or failed (the tree before stayed).",
			"result", "ok", dm->reloads_ok, "failed", dm->reloads_failed);
	put_daemon_pair(f, r, nr, "htbctl_daemon_reattaches_total",
			"Times the daemon loaded the device again after htbctl's attachment "
			"went (removed, the device re-created), by result.",
			"result", "ok", dm->reattaches_ok, "failed", dm->reattaches_failed);
	put_daemon_pair(f, r, nr, "htbctl_metrics_connections_shut_total",
			"/metrics connections the daemon shut down: past their deadline (5 s "
			"to a request, 60 s to send it, 2 s in which its reader took less than "
			"64 KB), or beyond 32 the oldest waiting one or the one read least lately.",
			"reason", "deadline", dm->conns_deadline, "limit", dm->conns_limit);
}

static int label_classes(struct dev_read *r)
{
	r->class_lab = calloc(r->n + 1, sizeof(*r->class_lab));
	if (!r->class_lab)
		return -1;
	for (__u32 k = 0; k < r->n; k++)
		if (!(r->class_lab[k] = class_labels(r->lab, &r->sn, r->sel[k])))
			return -1;
	return 0;
}

static void put_classes(FILE *f, const struct dev_read *r, int nr)
{
	for (size_t i = 0; i < N_OF(class_families); i++) {
		const struct class_family *cf = &class_families[i];
		bool head = false;

		for (int d = 0; d < nr; d++) {
			const struct snapshot *sn = &r[d].sn;

			for (__u32 k = 0; k < r[d].n; k++) {
				if (cf->leaf_only && !(sn->conf[r[d].sel[k]].flags & HTB_CONF_LEAF))
					continue;
				if (!head)
					put_head(f, cf->name, cf->type, cf->help);
				head = true;
				fputs_unlocked(cf->name, f);
				fputs_unlocked(r[d].class_lab[k], f);
				put_val(f, cf->get(sn, r[d].sel[k]));
			}
		}
	}
}

int metrics_parse_classes(const struct ctx *ctx, const char *s, struct metrics_opts *o)
{
	char *end;
	unsigned long n;

	if (!strcmp(s, "inner") || !strcmp(s, "all")) {
		o->classes = s[0] == 'i' ? METRICS_INNER : METRICS_ALL;
		return 0;
	}
	if (!strncmp(s, "top:", 4)) {
		errno = 0;
		n = strtoul(s + 4, &end, 10);
		if (s[4] >= '0' && s[4] <= '9' && !*end && !errno && n >= 1 && n <= 1000000) {
			o->classes = METRICS_TOP;
			o->top_n = (__u32)n;
			return 0;
		}
	}
	p_err(ctx, "--metrics-classes '%s': expected inner, all or top:N (N from 1 to 1000000)", s);
	return -1;
}

/* A device's snapshot, rows and labels; errors printed. The memo (the
 * daemon's previous scrape) stands for one device, so only a single
 * device uses it. */
static int read_dev(const struct ctx *ctx, const char *ifname,
		    const struct metrics_opts *o, bool use_memo, struct dev_read *r)
{
	static const struct dev_cmd cmd = {
		.verb = "metrics", .need = NEED_BPF | NEED_BPFFS, .want = WANT_LOADED,
	};
	bool memo;

	if (session_open(&r->s, ctx, &cmd, ifname) || maps_open_pinned(ctx, ifname, &r->mp))
		return -1;
	r->maps_open = true;
	memo = use_memo && o->memo && o->memo->t &&
	       htb_clock_ns() - o->memo->t < SNAPSHOT_MEMO_MAX_AGE_NS;
	if (snapshot_take(ctx, &r->mp, r->s.m.hiwater, memo ? 0 : o->interval_ns, &r->sn))
		return -1;
	if (memo)
		snapshot_memo_apply(o->memo, &r->sn);
	if (use_memo && o->memo)
		snapshot_memo_save(o->memo, &r->sn);
	snapshot_sort(&r->sn);
	r->n = select_rows(&r->sn, o, &r->sel);
	r->in = (struct dev_in){ .sn = &r->sn, .m = &r->s.m, .dm = o->daemon };
	r->lab = dev_labels(ifname, &r->s.m);
	if (!r->sel || !r->lab || label_classes(r)) {
		p_err(ctx, "out of memory");
		return -1;
	}
	return 0;
}

static void free_dev(struct dev_read *r)
{
	for (__u32 k = 0; r->class_lab && k < r->n; k++)
		free(r->class_lab[k]);
	free(r->class_lab);
	free(r->lab);
	free(r->sel);
	if (r->maps_open)
		maps_close(&r->mp);
	snapshot_free(&r->sn);
	session_close(&r->s);
}

int metrics_write(const struct ctx *ctx, const char *ifname,
		  const struct metrics_opts *o, FILE *out)
{
	struct dev_read r[2] = { { .s.lock = -1 }, { .s.lock = -1 } };
	struct dev_group g;
	int ret = 0;

	dirs_group_or_name(ifname, &g);
	for (int k = 0; k < g.n && !ret; k++)
		ret = read_dev(ctx, g.name[k], o, g.n == 1, &r[k]);
	if (!ret) {
		put_device(out, r, g.n);
		put_daemon_reloads(out, r, g.n, o->daemon);
		put_classes(out, r, g.n);
	}
	for (int k = 0; k < g.n; k++)
		free_dev(&r[k]);
	return ret;
}
