// SPDX-License-Identifier: GPL-2.0
/*
 * One config, two directions (docs/loader.md "Directions"): load, reload
 * and unload on every device a config or a device's name stands for. The
 * download direction shapes the device named on the command line (its
 * egress), or its ingress through an ifb htbctl creates; the upload
 * direction shapes [device] upload_dev's egress. Each shaped device keeps
 * its own pins and meta (load.c, reload.c, unload.c do one device); here
 * they are run in order under one hold of the global lock, so no other
 * command sees one direction without the other, and a load or reload of
 * two is all or nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>

#include "common/bigmem.h"
#include "loader/loader.h"

#define CHANGE_NEEDS	(NEED_NET_ADMIN | NEED_BPF | NEED_BPFFS)

void dirs_ifb_name(const char *ifname, char *buf, size_t len)
{
	__u32 h = 2166136261u;		/* FNV-1a */

	if (strlen(ifname) + 4 < IFNAMSIZ) {
		snprintf(buf, len, "ifb-%s", ifname);
		return;
	}
	for (const char *c = ifname; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(buf, len, "ifb-%.7s%04x", ifname, h & 0xffff);
}

/* ---- the devices of a name ---- */

static bool read_meta(const char *dev, struct htbctl_meta *m)
{
	int fd;

	if (!ifname_valid(dev, NULL))
		return false;
	fd = meta_open(dev, m, NULL);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* An ifb htbctl made to shape name's ingress, found by its meta: name
 * has no pins of its own when only its ingress is shaped. */
static bool find_ingress_ifb(const char *name, char *ifb, struct htbctl_meta *m)
{
	DIR *d = opendir(PIN_ROOT);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		found = read_meta(e->d_name, m) && !strcmp(m->ingress_of, name);
		if (found)
			snprintf(ifb, IFNAMSIZ, "%.15s", e->d_name);
	}
	closedir(d);
	return found;
}

static bool has_pins(const char *dev)
{
	char dir[256];

	return pin_dir(dev, dir, sizeof(dir)) == 0 && access(dir, F_OK) == 0;
}

static void group_add(struct dev_group *g, const char *dev, __u32 dir)
{
	for (int i = 0; i < g->n; i++)
		if (!strcmp(g->dev[i], dev))
			return;
	if (g->n == 2)
		return;
	snprintf(g->dev[g->n], sizeof(g->dev[0]), "%s", dev);
	g->name[g->n] = g->dev[g->n];
	g->dir[g->n++] = dir;
}

void dirs_group(const char *name, struct dev_group *g)
{
	struct htbctl_meta m, pm;
	char dev[IFNAMSIZ];

	memset(g, 0, sizeof(*g));
	if (read_meta(name, &m))
		snprintf(dev, sizeof(dev), "%s", name);
	else if (!find_ingress_ifb(name, dev, &m))
		return;
	group_add(g, dev, m.dir);
	/* a partner only with pins: a load that stopped before it, or an
	 * unload --force that took it, leaves none */
	if (m.dir != META_DIR_ONE && m.partner[0] && has_pins(m.partner))
		group_add(g, m.partner, read_meta(m.partner, &pm) ? pm.dir :
			  m.dir == META_DIR_DOWNLOAD ? META_DIR_UPLOAD : META_DIR_DOWNLOAD);
	if (g->n == 2 && g->dir[0] == META_DIR_UPLOAD) {	/* download first */
		char t[IFNAMSIZ];

		memcpy(t, g->dev[0], sizeof(t));
		memcpy(g->dev[0], g->dev[1], sizeof(t));
		memcpy(g->dev[1], t, sizeof(t));
		g->dir[0] = META_DIR_DOWNLOAD;
		g->dir[1] = META_DIR_UPLOAD;
	}
}

void dirs_group_or_name(const char *name, struct dev_group *g)
{
	dirs_group(name, g);
	if (g->n)
		return;
	g->n = 1;
	g->dir[0] = META_DIR_ONE;
	g->name[0] = name;
}

/* ---- what a command of both directions shares ---- */

/* Everything one command over the devices of a config works with. */
struct dirs_run {
	const struct ctx *ctx;
	const struct load_opts *o;
	const char *verb;
	char *cfg_buf;
	const char *cfg_text;
	size_t cfg_len;
	struct htb_config cfg;		/* as parsed */
	struct htb_config up;		/* the upload's tree; the download's is cfg
					 * (config_direction(DOWNLOAD) is a copy) */
	char down_dev[IFNAMSIZ];	/* IFACE, or the ifb of its ingress */
	const char *up_dev;		/* NULL: one direction */
	const char *ingress_of;		/* IFACE when its ingress is shaped */
	char iface[IFNAMSIZ];		/* IFACE: the name given, or the device
					 * whose ingress the ifb named shapes */
	int lock;			/* the global lock, -1 if the caller holds it */
	bool root_created;
};

static bool two_dirs(const struct htb_config *cfg)
{
	return cfg->dev.ingress || cfg->dev.upload_dev[0];
}

/* The device's name and the privileges, as each device's command checks
 * them first (a user without them hears that before anything else). */
static int check_caller(struct dirs_run *d)
{
	if (dev_name_check(d->ctx, d->o->ifname) ||
	    privs_check(d->ctx, d->verb, CHANGE_NEEDS))
		return -1;
	return dev_ifindex(d->ctx, d->o->ifname) ? 0 : -1;
}

/* The text goes once parsed: the pages it held (8.7 MB at 100,392
 * classes) serve the plan's arrays instead of fresh ones. */
static int read_config(struct dirs_run *d)
{
	int rc;

	if (loader_config_text(d->ctx, d->o, &d->cfg_buf, &d->cfg_text, &d->cfg_len))
		return -1;
	rc = loader_parse_config(d->ctx, d->o, d->cfg_text, d->cfg_len, &d->cfg);
	big_free(d->cfg_buf);
	d->cfg_buf = NULL;
	d->cfg_text = NULL;
	return rc;
}

/* Which devices the config shapes from IFACE, and that they can be. */
static int choose_devices(struct dirs_run *d)
{
	const struct config_device *dev = &d->cfg.dev;
	const char *iface = d->iface, *cfgf = d->o->config;

	if (dev->ingress) {
		d->ingress_of = iface;
		if (dev->ifb[0])
			snprintf(d->down_dev, sizeof(d->down_dev), "%s", dev->ifb);
		else
			dirs_ifb_name(iface, d->down_dev, sizeof(d->down_dev));
		if (!strcmp(d->down_dev, iface)) {
			p_err(d->ctx, "config %s: ifb %s is the device itself; name another",
			      cfgf, dev->ifb);
			return -1;
		}
	} else {
		snprintf(d->down_dev, sizeof(d->down_dev), "%s", iface);
	}
	if (!dev->upload_dev[0])
		return 0;
	d->up_dev = dev->upload_dev;
	if (!strcmp(d->up_dev, d->down_dev)) {
		p_err(d->ctx, "config %s: upload_dev %s is the device the download "
		      "direction shapes%s", cfgf, d->up_dev, dev->ingress ? " (the ifb)" :
		      "; on a host, shape downloads on its ingress: direction = ingress");
		return -1;
	}
	if (!if_nametoindex(d->up_dev)) {
		p_err(d->ctx, "config %s: upload_dev %s: no such device in this network "
		      "namespace", cfgf, d->up_dev);
		return -1;
	}
	return 0;
}

/* The upload's tree, when there is an upload (choose_devices first). */
static int split_config(struct dirs_run *d)
{
	if (d->up_dev && config_direction(&d->cfg, CONFIG_DIR_UPLOAD, &d->up)) {
		p_err(d->ctx, "out of memory");
		return -1;
	}
	return 0;
}

/* One hold of the lock over both devices' commands (each is told it is
 * held): no other command runs between them. */
static int take_lock(struct dirs_run *d)
{
	char why[512];

	d->lock = -1;
	if (d->o->lock_held)
		return 0;
	d->lock = pins_lock(&d->root_created, why, sizeof(why));
	if (d->lock < 0) {
		p_err(d->ctx, "%s", why);
		return -1;
	}
	return 0;
}

static void dirs_free(struct dirs_run *d)
{
	if (d->lock >= 0)
		pins_unlock(d->lock, d->root_created);
	d->lock = -1;
	config_free(&d->up);
	config_free(&d->cfg);
	big_free(d->cfg_buf);
}

/* The options of one device's command. */
static struct load_opts dev_opts(const struct dirs_run *d, const char *dev,
				 struct load_dir *ld)
{
	struct load_opts o = *d->o;

	o.ifname = dev;
	o.lock_held = true;
	o.quiet = true;
	o.dir = ld;
	return o;
}

/* ---- load ---- */

static int load_one_dir(struct dirs_run *d, int i, struct load_dir *ld)
{
	struct load_opts o;

	ld->cfg = i ? &d->up : &d->cfg;
	ld->dir = i ? META_DIR_UPLOAD : META_DIR_DOWNLOAD;
	ld->partner = i ? d->down_dev : d->up_dev;
	ld->ingress_of = i ? NULL : d->ingress_of;
	o = dev_opts(d, i ? d->up_dev : d->down_dev, ld);
	return loader_load_one(d->ctx, &o);
}

/* The upload failed: the download, complete by now, goes as unload takes
 * it, so the devices are as they were. Says which it is. */
static void roll_back_download(struct dirs_run *d)
{
	struct load_opts o = dev_opts(d, d->down_dev, NULL);

	o.one = true;
	if (loader_unload_one(d->ctx, &o))
		p_err(d->ctx, "loading the upload direction on %s failed, and the download "
		      "direction on %s could not be removed again (see above); 'htbctl "
		      "unload dev %s' removes it", d->up_dev, d->down_dev, d->o->ifname);
	else
		p_err(d->ctx, "loading the upload direction on %s failed: nothing "
		      "changed (the download direction on %s was removed again)",
		      d->up_dev, d->down_dev);
}

static void print_loaded_dirs(struct dirs_run *d, const struct load_dir *ld,
			      const struct htbctl_meta *m, double ms)
{
	if (d->o->quiet)
		return;
	loader_print_loaded(d->ctx, d->down_dev, &m[0], ld[0].nclasses, ms);
	if (d->up_dev)
		loader_print_loaded(d->ctx, d->up_dev, &m[1], ld[1].nclasses, ms);
	if (loader_tree_borrows(&d->cfg))
		p_info(d->ctx, "note: spare bandwidth goes by prio and quantum while "
		       "`htbctl daemon` runs for %s; without it borrowing classes share "
		       "it first come, first served", d->o->ifname);
}

/* Both directions, download first (the ifb, and the redirect to it), then
 * upload; a failed upload takes the download back. */
static int load_dirs(struct dirs_run *d)
{
	struct htbctl_meta m[2] = { 0 };
	struct load_dir ld[2] = { { .done = &m[0] }, { .done = &m[1] } };
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (choose_devices(d) || split_config(d) || take_lock(d))
		return EXIT_FAIL;
	if (load_one_dir(d, 0, &ld[0]))
		return EXIT_FAIL;
	if (d->up_dev && load_one_dir(d, 1, &ld[1])) {
		roll_back_download(d);
		return EXIT_FAIL;
	}
	print_loaded_dirs(d, ld, m, ms_since(&t0));
	return EXIT_OK;
}

int loader_load(const struct ctx *ctx, const struct load_opts *o)
{
	struct dirs_run d = { .ctx = ctx, .o = o, .verb = "load", .lock = -1 };
	int ret = EXIT_FAIL;

	if (o->dir)
		return loader_load_one(ctx, o);
	snprintf(d.iface, sizeof(d.iface), "%s", o->ifname);
	if (check_caller(&d) || read_config(&d))
		goto out;
	if (two_dirs(&d.cfg)) {
		ret = load_dirs(&d);
	} else {
		/* one direction, as before directions: parsed once here */
		struct load_dir ld = { .cfg = &d.cfg, .dir = META_DIR_ONE };
		struct load_opts one = *o;

		one.dir = &ld;
		ret = loader_load_one(ctx, &one);
	}
out:
	dirs_free(&d);
	return ret;
}

/* ---- reload ---- */

/* reload dev IFB stands for the device whose ingress the ifb shapes. */
static void set_iface(struct dirs_run *d)
{
	struct htbctl_meta m;

	if (read_meta(d->o->ifname, &m) && m.ingress_of[0])
		snprintf(d->iface, sizeof(d->iface), "%s", m.ingress_of);
	else
		snprintf(d->iface, sizeof(d->iface), "%s", d->o->ifname);
}

/* The devices the config shapes are the ones loaded for IFACE: a reload
 * changes trees, not where they are (unload and load do). */
static int same_devices(struct dirs_run *d, const struct dev_group *g)
{
	bool same;
	char want[64], have[64];

	if (!g->n)
		return 0;	/* not loaded: the device's reload says so */
	if (!two_dirs(&d->cfg))
		same = g->n == 1 && g->dir[0] == META_DIR_ONE &&
		       !strcmp(g->dev[0], d->iface);
	else
		same = !strcmp(g->dev[0], d->down_dev) && g->dir[0] == META_DIR_DOWNLOAD &&
		       (d->up_dev ? g->n == 2 && !strcmp(g->dev[1], d->up_dev)
				  : g->n == 1);
	if (same)
		return 0;
	snprintf(want, sizeof(want), "%s%s%s", two_dirs(&d->cfg) ? d->down_dev : d->iface,
		 d->up_dev ? " and " : "", d->up_dev ? d->up_dev : "");
	snprintf(have, sizeof(have), "%s%s%s", g->dev[0], g->n > 1 ? " and " : "",
		 g->n > 1 ? g->dev[1] : "");
	p_err(d->ctx, "config %s shapes %s, but %s is loaded on %s: a reload changes "
	      "the trees, not the devices ('htbctl unload dev %s', then load)",
	      d->o->config, want, d->o->ifname, have, d->o->ifname);
	return -1;
}

/* HTBCTL_TEST_FAIL=download-flip or upload-flip: that direction's flip
 * fails right after it went through, so its switch back runs (and for the
 * upload, the download's). */
static int flip_dir(struct dirs_run *d, struct reload_run *r, const char *hook)
{
	if (loader_reload_flip(r))
		return -1;
	if (loader_test_fail(d->ctx, hook)) {
		loader_reload_cancel(r, true);
		return 1;	/* flipped and put back: cancelled */
	}
	return 0;
}

/* Both devices prepared, then flipped, then finished: a failure anywhere
 * before both flips leaves both trees as they were. */
static int reload_dirs(struct dirs_run *d)
{
	struct load_dir ld[2] = { { .cfg = &d->cfg, .dir = META_DIR_DOWNLOAD },
				  { .cfg = &d->up, .dir = META_DIR_UPLOAD } };
	struct load_opts o[2];
	struct reload_run *r[2] = { NULL, NULL };
	int n = d->up_dev ? 2 : 1, rc;

	o[0] = dev_opts(d, d->down_dev, &ld[0]);
	if (n == 2)
		o[1] = dev_opts(d, d->up_dev, &ld[1]);
	for (int i = 0; i < n; i++) {
		o[i].quiet = d->o->quiet;
		r[i] = loader_reload_prepare(d->ctx, &o[i]);
		if (!r[i])
			goto cancel;
		if (loader_test_fail(d->ctx, i ? "upload-prepare" : "download-prepare")) {
			loader_reload_cancel(r[i], false);
			r[i] = NULL;
			goto cancel;
		}
	}
	rc = flip_dir(d, r[0], "download-flip");
	if (rc) {
		if (rc < 0)
			loader_reload_cancel(r[0], false);
		r[0] = NULL;
		goto cancel;
	}
	rc = n == 2 ? flip_dir(d, r[1], "upload-flip") : 0;
	if (rc) {
		if (rc < 0)
			loader_reload_cancel(r[1], false);
		r[1] = NULL;
		loader_reload_cancel(r[0], true);
		r[0] = NULL;
		goto cancel;
	}
	for (int i = 0; i < n; i++)
		loader_reload_finish(r[i]);
	return EXIT_OK;
cancel:
	for (int i = 0; i < n; i++)
		if (r[i])
			loader_reload_cancel(r[i], false);
	if (n == 2)
		p_err(d->ctx, "neither %s nor %s changed", d->down_dev, d->up_dev);
	return EXIT_FAIL;
}

int loader_reload(const struct ctx *ctx, const struct load_opts *o)
{
	struct dirs_run d = { .ctx = ctx, .o = o, .verb = "reload", .lock = -1 };
	struct dev_group g;
	int ret = EXIT_FAIL;

	if (o->dir)
		return loader_reload_one(ctx, o);
	set_iface(&d);
	if (check_caller(&d) || read_config(&d))
		goto out;
	if (two_dirs(&d.cfg) && (choose_devices(&d) || split_config(&d)))
		goto out;
	if (take_lock(&d))
		goto out;
	dirs_group(o->ifname, &g);
	if (same_devices(&d, &g))
		goto out;
	if (two_dirs(&d.cfg)) {
		ret = reload_dirs(&d);
	} else {
		struct load_dir ld = { .cfg = &d.cfg, .dir = META_DIR_ONE };
		struct load_opts one = dev_opts(&d, o->ifname, &ld);

		one.quiet = o->quiet;
		ret = loader_reload_one(ctx, &one);
	}
out:
	dirs_free(&d);
	return ret;
}

/* ---- unload ---- */

/* Every device of the name, upload first, so the download's clsact on a
 * host's device (made by the redirect) is the last thing to go. The
 * first refusal (stale pins without --force, a daemon) stops it: the
 * download then stays whole beside an upload that stays as it was. */
int loader_unload(const struct ctx *ctx, const struct load_opts *o)
{
	struct dirs_run d = { .ctx = ctx, .o = o, .verb = "unload", .lock = -1 };
	struct dev_group g;
	int ret = EXIT_OK;

	if (o->one)
		return loader_unload_one(ctx, o);
	if (dev_name_check(ctx, o->ifname) || privs_check(ctx, "unload", CHANGE_NEEDS))
		return EXIT_FAIL;
	if (take_lock(&d))
		return EXIT_FAIL;
	/* nothing of a pair: the device's own unload says what there is */
	dirs_group_or_name(o->ifname, &g);
	for (int i = g.n; i-- > 0;) {
		struct load_opts one = dev_opts(&d, g.name[i], NULL);

		one.quiet = o->quiet;
		one.one = true;
		if (loader_unload_one(ctx, &one)) {
			ret = EXIT_FAIL;
			break;
		}
	}
	dirs_free(&d);
	return ret;
}
