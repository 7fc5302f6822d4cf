// SPDX-License-Identifier: GPL-2.0
/*
 * What every device command does before its work, in the order a user
 * would fix the problems (docs/loader.md "Checks first"): the device's
 * name, privileges and kernel features, the device, the global lock
 * (commands that change something), and the state of the device's pins.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include "loader/loader.h"

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
	case PINS_UNTRUSTED:	/* not even unload --force touches them */
		p_err(s->ctx, "%s", s->why);
		return -1;
	}
	return -1;
}

int session_check(struct session *s, const struct ctx *ctx,
		  const struct dev_cmd *cmd, const char *ifname)
{
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->ifname = ifname;
	s->lock = -1;
	loader_libbpf_log(ctx);
	if (dev_name_check(ctx, ifname) || privs_check(ctx, cmd->verb, cmd->need))
		return -1;
	s->ifindex = cmd->device_may_be_gone ? (int)if_nametoindex(ifname)
					     : dev_ifindex(ctx, ifname);
	return !s->ifindex && !cmd->device_may_be_gone ? -1 : 0;
}

int session_lock(struct session *s, const struct dev_cmd *cmd)
{
	if (cmd->lock && !s->lock_held) {
		s->lock = pins_lock(&s->root_created, s->why, sizeof(s->why));
		if (s->lock < 0) {
			p_err(s->ctx, "%s", s->why);
			return -1;
		}
	}
	s->pins = pins_check(s->ifname, s->ifindex, &s->m, &s->have_meta, s->why,
			     sizeof(s->why));
	if (cmd->want == WANT_NOTHING && s->pins != PINS_UNTRUSTED)
		return 0;
	return check_pins(s, cmd);
}

int session_open(struct session *s, const struct ctx *ctx,
		 const struct dev_cmd *cmd, const char *ifname)
{
	if (session_check(s, ctx, cmd, ifname))
		return -1;
	return session_lock(s, cmd);
}

void session_close(struct session *s)
{
	pins_unlock(s->lock, s->root_created);
	s->lock = -1;
	s->root_created = false;
}
