// SPDX-License-Identifier: GPL-2.0
/* htbctl set dev IFACE hysteresis on|off: one field of the pinned runtime
 * map, read by the program on every packet. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "commands.h"
#include "loader.h"
#include "maps_fill.h"

int do_set(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *hyst = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, true },
		{ "hysteresis", &hyst, true },
	};
	struct htbctl_meta m;
	struct htb_runtime rt;
	char path[256];
	int fd, lock, rc, ret = EXIT_FAIL;
	__u32 on;

	if (parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (!strcmp(hyst, "on")) {
		on = 1;
	} else if (!strcmp(hyst, "off")) {
		on = 0;
	} else {
		p_err(ctx, "hysteresis '%s': expected on or off", hyst);
		return EXIT_USAGE;
	}
	loader_libbpf_log(ctx);
	if (privs_check(ctx, "set", NEED_BPF | NEED_BPFFS))
		return EXIT_FAIL;
	lock = pins_lock();
	if (lock < 0) {
		p_err(ctx, "locking /sys/fs/bpf: %s", strerror(-lock));
		return EXIT_FAIL;
	}
	if (!loader_attached(ctx, dev, "set", &m))
		goto out;
	pin_path(dev, "runtime", path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0) {
		p_err(ctx, "opening %s: %s", path, strerror(errno));
		goto out;
	}
	rc = htb_map_get_runtime(fd, &rt);
	if (!rc) {
		rt.hysteresis = on;
		rc = htb_map_set_runtime(fd, &rt);
	}
	close(fd);
	if (rc) {
		p_err(ctx, "writing %s: %s", path, strerror(-rc));
		goto out;
	}
	{
		struct printer p;

		printer_init(&p, ctx->json, stdout);
		print_open_object(&p, NULL);
		print_string(&p, "dev", "%s:", dev);
		print_bool(&p, "hysteresis", " hysteresis %s\n", on);
		print_close_object(&p);
		printer_finish(&p);
	}
	ret = EXIT_OK;
out:
	close(lock);
	return ret;
}
