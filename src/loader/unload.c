// SPDX-License-Identifier: GPL-2.0
/*
 * unload (docs/loader.md "Unload", "Stale pins"): undo what meta records
 * as far as the device still has it, then remove the pins. --force also
 * takes stale pins (a crashed run, a deleted device, another namespace's
 * device), touching the device only where it is still the one meta names,
 * and removes htbctl's filters that no pins name (found by their program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "daemon/lock.h"
#include "loader/loader.h"

/* Without --force, only a device that is loaded and attached. With it,
 * which device (if any) may be touched: 0 when it is gone, has another
 * ifindex than meta's, or is in another namespace. */
static int unload_target(struct session *s, bool force)
{
	char dir[256], hint[128];

	if (!s->ifindex && !force) {
		pin_dir(s->ifname, dir, sizeof(dir));
		if (access(dir, F_OK) == 0)
			p_err(s->ctx, "%s belongs to a device that no longer exists; %s",
			      dir, stale_hint(hint, sizeof(hint), s->ifname));
		else
			dev_ifindex(s->ctx, s->ifname);	/* says why */
		return -1;
	}
	switch (s->pins) {
	case PINS_NONE:
		if (force && s->ifindex)
			return 0;	/* its filter may be there without pins */
		p_err(s->ctx, "nothing to unload: htbctl is not loaded on %s", s->ifname);
		return -1;
	case PINS_STALE:
		if (!force) {
			p_err(s->ctx, "%s; %s", s->why, stale_hint(hint, sizeof(hint), s->ifname));
			return -1;
		}
		if (s->ifindex && s->have_meta && s->m.ifindex != (__u32)s->ifindex)
			s->ifindex = 0;	/* another device has the name now: pins only */
		return 0;
	case PINS_FOREIGN:
		if (!force) {
			p_err(s->ctx, "%s; run unload in that namespace, or add --force to "
			      "remove only the pins (that device stays shaped, unmanaged)",
			      s->why);
			return -1;
		}
		s->ifindex = 0;	/* its device is not ours to touch from here */
		return 0;
	case PINS_OK:
		return 0;
	case PINS_UNTRUSTED:	/* refused by session_open */
		return -1;
	}
	return -1;
}

/*
 * A daemon keeping the device shaped loads its config again within a
 * couple of seconds of an unload (7112e5f's unload was silently undone):
 * refused, saying which daemon and how to stop it; with --force the unload
 * goes on and says the daemon will load again.
 */
static int daemon_of(const struct ctx *ctx, const struct load_opts *o, const char *dev)
{
	int pid = daemon_holder(dev);
	char p[24] = "starting";

	if (!pid || pid == getpid())
		return 0;	/* none, or the daemon itself clearing stale pins */
	if (pid > 0)
		snprintf(p, sizeof(p), "pid %d", pid);
	if (!o->force) {
		p_err(ctx, "the htbctl daemon for %s (%s) would load it again: stop it first "
		      "(systemctl stop htbctl@%s, or kill it), or add --force", dev, p, dev);
		return -1;
	}
	p_warn(ctx, "the htbctl daemon for %s (%s) runs and will load it again", dev, p);
	return 0;
}

/* The daemon runs for the device its config was loaded on: this one, or
 * for an ifb the device whose ingress it shapes, or the download's device
 * of an upload (docs/loader.md "Directions"). */
static int daemon_in_the_way(const struct ctx *ctx, const struct load_opts *o,
			     const struct session *s)
{
	if (daemon_of(ctx, o, o->ifname))
		return -1;
	if (!s->have_meta)
		return 0;
	if (s->m.ingress_of[0] && daemon_of(ctx, o, s->m.ingress_of))
		return -1;
	if (s->m.dir == META_DIR_UPLOAD && s->m.partner[0] && daemon_of(ctx, o, s->m.partner))
		return -1;
	return 0;
}

/* meta with the saved root, and the id of the pinned program: the filter
 * to remove is the one running it. false if meta cannot be read. */
static bool read_meta(const char *ifname, struct htbctl_meta *m,
		      struct qdisc_tree *saved)
{
	struct bpf_prog_info pi = { 0 };
	__u32 len = sizeof(pi);
	char path[256];
	int fd = meta_open(ifname, m, saved);

	if (fd < 0)
		return false;
	close(fd);
	pin_path(ifname, PIN_PROG, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &pi, &len) == 0)
		m->prog_id = pi.id;
	if (fd >= 0)
		close(fd);
	return true;
}

/* restored: the kind of the root qdisc put back, NULL if none was;
 * orphans: filters removed that no pins named. */
static void print_unloaded(const struct ctx *ctx, const char *ifname, const char *dir,
			   const char *restored, int orphans)
{
	struct printer p;

	printer_init(&p, ctx->json, stdout);
	print_open_object(&p, NULL);
	print_string(&p, "dev", "%s: ", ifname);
	print_string(&p, "action", "%s", "unloaded");
	if (dir)
		print_string(&p, "direction", " %s", dir);
	if (restored)
		print_string(&p, "restored_qdisc", ", root qdisc %s restored", restored);
	if (orphans) {
		print_u64(&p, "removed_orphaned_filters", ", removed %llu filter", orphans);
		print_text(&p, "%s of htbctl's that no pins named", orphans == 1 ? "" : "s");
	}
	print_text(&p, "\n");
	print_close_object(&p);
	printer_finish(&p);
}

int loader_unload_one(const struct ctx *ctx, const struct load_opts *o)
{
	static const struct dev_cmd cmd = {
		.verb = "unload", .need = NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS,
		.lock = true, .device_may_be_gone = true, .want = WANT_ANY,
	};
	struct qdisc_tree saved = { 0 };
	bool have_meta, restored = false;
	struct session s;
	int ret = EXIT_FAIL, orphans = 0, rc = session_check(&s, ctx, &cmd, o->ifname);

	s.lock_held = o->lock_held;
	if (rc || session_lock(&s, &cmd) || unload_target(&s, o->force) ||
	    daemon_in_the_way(ctx, o, &s))
		goto out;
	have_meta = s.have_meta && read_meta(o->ifname, &s.m, &saved);
	if (have_meta && loader_undo(ctx, o->ifname, s.ifindex, &s.m, &saved, false,
				     &restored) && !o->force) {
		p_err(ctx, "could not remove everything from %s (see above); the pins "
		      "stay under %s/%s", o->ifname, PIN_ROOT, o->ifname);
		goto out;
	}
	if (o->force && s.ifindex)
		orphans = loader_remove_own_filters(ctx, o->ifname, s.ifindex);
	if (s.pins == PINS_NONE && !orphans) {
		p_err(ctx, "nothing to unload: htbctl is not loaded on %s", o->ifname);
		goto out;
	}
	if (pins_remove(o->ifname, s.why, sizeof(s.why))) {
		p_err(ctx, "%s", s.why);
		goto out;
	}
	if (!o->quiet)
		print_unloaded(ctx, o->ifname, have_meta ? meta_dir_name(s.m.dir) : NULL,
			       restored ? saved.root_kind : NULL, orphans);
	ret = EXIT_OK;
out:
	qdisc_tree_free(&saved);
	session_close(&s);
	return ret;
}
