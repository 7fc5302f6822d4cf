// SPDX-License-Identifier: GPL-2.0
/*
 * What every device command does before its work, in the order a user
 * would fix the problems (docs/loader.md "Checks first"): privileges and
 * kernel features, the device, the global lock (commands that change
 * something), and the state of the device's pins.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include "loader.h"

const char *stale_hint(char *buf, size_t len, const char *ifname)
{
	snprintf(buf, len, "'htbctl unload dev %s --force' removes them", ifname);
	return buf;
}

/* The pins as the command wants them; prints the problem otherwise. */
static int check_pins(struct session *s, const struct dev_cmd *cmd)
{
	char hint[128];

	switch (s->pins) {
	case PINS_NONE:
		if (cmd->want == WANT_LOADED)
			p_err(s->ctx, "htbctl is not loaded on %s (nothing to %s)",
			      s->ifname, cmd->verb);
		return cmd->want == WANT_LOADED ? -1 : 0;
	case PINS_OK:
		if (cmd->want == WANT_UNLOADED)
			p_err(s->ctx, "htbctl is already loaded on %s (use 'htbctl "
			      "reload', or 'htbctl unload' first)", s->ifname);
		return cmd->want == WANT_UNLOADED ? -1 : 0;
	case PINS_STALE:
		if (cmd->want == WANT_ANY)
			return 0;
		p_err(s->ctx, "%s; %s", s->why, stale_hint(hint, sizeof(hint), s->ifname));
		return -1;
	case PINS_FOREIGN:
		if (cmd->want == WANT_ANY)
			return 0;
		p_err(s->ctx, "%s", s->why);
		return -1;
	}
	return -1;
}

int session_open(struct session *s, const struct ctx *ctx,
		 const struct dev_cmd *cmd, const char *ifname)
{
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->ifname = ifname;
	s->lock = -1;
	loader_libbpf_log(ctx);
	if (privs_check(ctx, cmd->verb, cmd->need))
		return -1;
	s->ifindex = cmd->device_may_be_gone ? (int)if_nametoindex(ifname)
					     : dev_ifindex(ctx, ifname);
	if (!s->ifindex && !cmd->device_may_be_gone)
		return -1;
	if (cmd->lock) {
		s->lock = pins_lock();
		if (s->lock < 0) {
			p_err(ctx, "locking /sys/fs/bpf: %s", strerror(-s->lock));
			return -1;
		}
	}
	if (cmd->want == WANT_NOTHING)
		return 0;
	s->pins = pins_check(ifname, s->ifindex, &s->m, &s->have_meta, s->why,
			     sizeof(s->why));
	return check_pins(s, cmd);
}

void session_close(struct session *s)
{
	if (s->lock >= 0)
		close(s->lock);
	s->lock = -1;
}
