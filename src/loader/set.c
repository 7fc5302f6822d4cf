// SPDX-License-Identifier: GPL-2.0
/* set: one field of the pinned runtime map, read by the program on every
 * packet, changed under the global lock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"

static void print_set(const struct ctx *ctx, const char *ifname, bool on)
{
	struct printer p;

	printer_init(&p, ctx->json, stdout);
	print_open_object(&p, NULL);
	print_string(&p, "dev", "%s:", ifname);
	print_bool(&p, "hysteresis", " hysteresis %s\n", on);
	print_close_object(&p);
	printer_finish(&p);
}

static int set_one(const struct ctx *ctx, const char *ifname, bool on)
{
	static const struct dev_cmd cmd = {
		.verb = "set", .need = NEED_BPF | NEED_BPFFS, .lock = true,
		.want = WANT_LOADED,
	};
	struct htb_runtime rt;
	struct session s;
	struct maps m;
	int rc, ret = EXIT_FAIL;

	if (session_open(&s, ctx, &cmd, ifname) || maps_open_pinned(ctx, ifname, &m))
		goto out;
	rc = maps_get_runtime(&m, &rt);
	if (!rc) {
		rt.hysteresis = on;
		rc = maps_set_runtime(&m, &rt);
	}
	maps_close(&m);
	if (rc) {
		p_err(ctx, "writing %s/%s/runtime: %s", PIN_ROOT, ifname, strerror(-rc));
		goto out;
	}
	print_set(ctx, ifname, on);
	ret = EXIT_OK;
out:
	session_close(&s);
	return ret;
}

/* Every device of the name: both directions of a config (docs/loader.md
 * "Directions"), download first. */
int loader_set_hysteresis(const struct ctx *ctx, const char *ifname, bool on)
{
	struct dev_group g;
	int ret = EXIT_OK;

	dirs_group_or_name(ifname, &g);
	for (int i = 0; i < g.n && ret == EXIT_OK; i++)
		ret = set_one(ctx, g.name[i], on);
	return ret;
}
