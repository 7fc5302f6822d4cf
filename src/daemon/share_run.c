// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing loop inside `htbctl daemon` (src/share/share.h does the
 * arithmetic): every SHARE_TICK_NS it reads class_state of the tree in
 * force (through the collector, src/daemon/collect.h, which lists the
 * classes that sent), computes the borrow limits of the active leaves and
 * stores them into class_share through an mmap() of it, then renews its lease in runtime, through an mmap() of that. No
 * lock is taken: the loop writes only what no other writer touches
 * (class_share; the lease and run-time fields of runtime), and a reload
 * in between is seen as a new generation at the next tick, which plans
 * the tree again. The pins are opened again when they are no longer the
 * maps the loop holds (an unload and load, by the daemon or by hand).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "daemon/share_run.h"
#include "loader/maps.h"
#include "loader/maps_fill.h"
#include "loader/pins.h"

static void *map_mmap(int fd, size_t vsize, __u32 n, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = ((((vsize + 7) & ~(size_t)7) * n) + page - 1) & ~(size_t)(page - 1);
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The id of the runtime map pinned under IFACE now (0: none). */
static __u32 pinned_id(const char *ifname)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info), id = 0;
	char path[256];
	int fd;

	pin_path(ifname, "runtime", path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
		id = info.id;
	close(fd);
	return id;
}

/* What the loop cost, in the daemon's log. */
static void share_run_report(const struct ctx *ctx, const struct share_run *r)
{
	if (!r->ticks)
		return;
	p_info(ctx, "daemon: sharing loop: %llu ticks, %.1f us each, longest gap %.1f ms "
	       "(ending %.3f s after the first tick), period %.0f ms, backlogged leaves let "
	       "go %llu times", (unsigned long long)r->ticks,
	       (double)r->busy_ns / (double)r->ticks / 1e3, (double)r->max_gap_ns / 1e6,
	       r->max_gap_ns ? (double)(r->gap_end_ns - r->first_ns) / 1e9 : 0.0,
	       (double)r->period_ns / 1e6, (unsigned long long)r->loop.let_go);
}

void share_run_close(const struct ctx *ctx, struct share_run *r)
{
	share_run_report(ctx, r);
	if (r->rt) {
		/* a daemon that stops ends its lease: first come, first served
		 * at once, not after SHARE_LEASE_NS */
		__atomic_store_n(&r->rt->share_until_ns, 0, __ATOMIC_RELAXED);
		munmap(r->rt, r->rt_len);
	}
	if (r->sh)
		munmap(r->sh, r->sh_len);
	if (r->open)
		maps_close(&r->mp);
	free(r->conf);
	collect_close(&r->col);
	share_free(&r->loop);
	*r = (struct share_run){ .gen = ~0u, .period_ns = SHARE_TICK_NS };
}

static int share_run_map(struct share_run *r)
{
	r->cap = r->mp.max_entries[M_STATE];
	if (r->mp.max_entries[M_SHARE] < r->cap || r->mp.max_entries[M_CONF] < 2 * r->cap)
		return -1;
	r->rt = map_mmap(r->mp.fd[M_RUNTIME], sizeof(*r->rt), 1, &r->rt_len);
	r->sh = map_mmap(r->mp.fd[M_SHARE], sizeof(*r->sh), r->cap, &r->sh_len);
	r->conf = calloc(r->cap ? r->cap : 1, sizeof(*r->conf));
	return r->rt && r->sh && r->conf ? 0 : -1;
}

/* Holds the maps pinned under IFACE (again, when they changed); when
 * IFACE is not shaped, none: the loop waits for it. */
void share_run_attach(const struct ctx *ctx, struct share_run *r, const char *ifname)
{
	__u32 id = pinned_id(ifname);

	__u32 failed = r->failed_id;
	int rc;

	if (id && (id == r->map_id || id == failed))
		return;		/* held, or said once that it cannot be */
	share_run_close(ctx, r);
	if (!id)
		return;
	r->failed_id = id;
	if (maps_open_pinned(ctx, ifname, &r->mp))
		return;
	r->open = true;
	if (share_run_map(r)) {
		p_warn(ctx, "daemon: the sharing loop cannot map %s's maps (%s; pinned by "
		       "an older htbctl? 'htbctl unload' and load make them anew); borrowing "
		       "stays first come, first served", ifname, strerror(errno));
		share_run_close(ctx, r);
		r->failed_id = id;
		return;
	}
	rc = collect_open(&r->col, r->mp.fd[M_STATE], r->cap);
	if (rc) {
		p_warn(ctx, "daemon: the sharing loop cannot load its reader of %s's "
		       "class_state (%s; -v shows libbpf's log); borrowing stays first "
		       "come, first served", ifname, strerror(-rc));
		share_run_close(ctx, r);
		r->failed_id = id;
		return;
	}
	r->failed_id = 0;
	r->map_id = id;
	p_info(ctx, "daemon: sharing spare bandwidth on %s by prio and quantum "
	       "(loop every %llu ms)", ifname, SHARE_TICK_NS / SHARE_MS);
}

/* The tree of generation gen, when it is not the one planned. */
static int plan(struct share_run *r, __u32 gen)
{
	int rc;

	if (gen == r->gen)
		return 0;
	rc = array_read(r->mp.fd[M_CONF], gen * r->cap, r->cap, r->conf,
			sizeof(*r->conf), 0);
	if (rc || share_plan(&r->loop, r->conf, r->cap))
		return -1;
	r->gen = gen;
	return 0;
}

/* One tick; a failure skips it (the lease runs out if they go on). */
void share_run_tick(const struct ctx *ctx, struct share_run *r)
{
	__u64 t0 = htb_clock_ns(), now;

	r->next_ns = t0 + r->period_ns;
	if (!r->map_id)
		return;
	if (plan(r, __atomic_load_n(&r->rt->gen, __ATOMIC_ACQUIRE) & 1) ||
	    (r->loop.hw && collect_run(&r->col, r->loop.hw)))
		return;
	now = htb_clock_ns();
	if (share_tick(&r->loop, r->col.seen, r->col.changed,
		       r->loop.hw ? r->col.nchanged : 0, now, r->sh))
		return;
	__atomic_store_n(&r->rt->share_run_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&r->rt->share_until_ns, now + share_lease(r->period_ns),
			 __ATOMIC_RELEASE);
	if (!r->first_ns)
		r->first_ns = now;
	if (r->last_ns && now - r->last_ns > r->max_gap_ns) {
		r->max_gap_ns = now - r->last_ns;
		r->gap_end_ns = now;
	}
	r->last_ns = now;
	r->ticks++;
	r->busy_ns += htb_clock_ns() - t0;
	r->period_ns = share_period(&r->loop, htb_clock_ns() - t0);
}
