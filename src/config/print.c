// SPDX-License-Identifier: GPL-2.0
/* `htbctl check`'s view of a resolved config: tc-like text or JSON, from
 * one sequence of print calls (common/print.h). */
#include <netinet/in.h>

#include "config/priv.h"

static void print_match(struct printer *p, const struct config_match *m,
			int indent)
{
	char a[CFG_PREFIX_BUF];
	const char *type;

	print_open_object(p, NULL);
	print_text(p, "%*smatch ", indent, "");
	switch (m->kind) {
	case CONFIG_MATCH_DST4:
	case CONFIG_MATCH_SRC4:
	case CONFIG_MATCH_DST6:
	case CONFIG_MATCH_SRC6:
		print_string(p, "type", "%s ", cfg_prefix_dir(m));
		print_string(p, "prefix", "%s", cfg_sprint_prefix(m, a, sizeof(a)));
		break;
	case CONFIG_MATCH_PORT:
		type = m->key.port.proto == IPPROTO_TCP ? "tcp" :
		       m->key.port.proto == IPPROTO_UDP ? "udp" : "any";
		print_string(p, "type", NULL,
			     m->key.port.dir == HTB_PORT_DST ? "dport" : "sport");
		print_string(p, "proto", m->key.port.proto ? "%s " : NULL, type);
		print_text(p, "%s ", m->key.port.dir == HTB_PORT_DST ? "dport" : "sport");
		print_u64(p, "first", "%llu", m->key.port.port);
		print_u64(p, "last", m->port_last != m->key.port.port ? "-%llu" : NULL,
			  m->port_last);
		break;
	case CONFIG_MATCH_MARK:
		print_string(p, "type", "%s ", "mark");
		print_u64(p, "value", "0x%llx", m->key.mark.value);
		print_u64(p, "mask", "/0x%llx", m->key.mark.mask);
		break;
	case CONFIG_MATCH_DSCP:
		print_string(p, "type", "%s ", "dscp");
		print_open_array(p, "values");
		for (int d = 0, n = 0; d < 64; d++)
			if (m->key.dscp & (1ull << d))
				print_u64(p, NULL, n++ ? ",%llu" : "%llu", d);
		print_close_array(p);
		break;
	case CONFIG_MATCH_CGROUP:
		print_string(p, "type", "%s ", "cgroup");
		print_string(p, "path", "%s", m->cgroup_path);
		print_u64(p, "id", " (id %llu)", m->key.cgroup_id);
		break;
	}
	print_text(p, "\n");
	print_close_object(p);
}

/* A class's upload values, on a line of their own below the class (the
 * plain values are its download): printed when the config has an upload
 * direction. */
static void print_upload(struct printer *p, const struct config_dir_rates *u,
			 int indent)
{
	print_open_object(p, "upload");
	print_text(p, "%*supload", indent, "");
	print_rate(p, "rate", " rate %s", u->rate);
	print_rate(p, "ceil", " ceil %s", u->ceil);
	print_size(p, "burst", " burst %s", u->burst);
	print_size(p, "cburst", " cburst %s", u->cburst);
	print_u64(p, "quantum", " quantum %llu", u->quantum);
	print_text(p, "\n");
	print_close_object(p);
}

/* Where each direction shapes; only what a config sets (direction
 * ingress, ifb, upload_dev), so a one-direction config prints as before. */
static void print_directions(struct printer *p, const struct config_device *d)
{
	if (d->ingress)
		print_string(p, "direction", " direction %s", "ingress");
	if (d->ifb[0])
		print_string(p, "ifb", " ifb %s", d->ifb);
	if (d->upload_dev[0])
		print_string(p, "upload_dev", " upload_dev %s", d->upload_dev);
}

static void print_class(struct printer *p, const struct htb_config *cfg,
			const struct config_class *c)
{
	char id[CONFIG_CLASSID_BUF], pid[CONFIG_CLASSID_BUF];
	int indent = 2 * (c->depth - 1);

	print_open_object(p, NULL);
	print_text(p, "%*s", indent, "");
	print_string(p, "classid", "class %s", config_sprint_classid(c->classid, id, sizeof(id)));
	if (c->parent == CONFIG_NO_INDEX) {
		print_string(p, "parent", " root", NULL);
	} else {
		config_sprint_classid(cfg->classes[c->parent].classid, pid, sizeof(pid));
		print_string(p, "parent", " parent %s", pid);
	}
	print_u64(p, "depth", NULL, c->depth);
	print_bool(p, "leaf", NULL, c->is_leaf);
	print_class_settings(p, &(struct print_class_settings){
		.prio = c->prio, .rate = c->rate, .ceil = c->ceil,
		.burst = c->burst, .cburst = c->cburst,
		.quantum = c->quantum, .limit_ns = c->limit_ns,
		.leaf = c->is_leaf, .codel = c->aqm.codel, .ecn = c->aqm.ecn,
		.flows = c->aqm.flows,
		.target_ns = c->aqm.target_ns, .interval_ns = c->aqm.interval_ns,
	});
	print_text(p, "\n");
	if (cfg->dev.upload_dev[0])
		print_upload(p, &c->up, indent + 4);
	print_open_array(p, "matches");
	for (__u32 i = 0; i < c->nmatches; i++)
		print_match(p, &c->matches[i], indent + 4);
	print_close_array(p);
	print_close_object(p);
}

int config_print(const struct htb_config *cfg, struct printer *p)
{
	const struct config_device *d = &cfg->dev;
	char id[CONFIG_CLASSID_BUF];

	print_open_object(p, NULL);
	print_open_object(p, "device");
	if (d->default_idx != CONFIG_NO_INDEX)
		print_string(p, "default", "device default %s",
			     config_sprint_classid(d->default_classid, id, sizeof(id)));
	else
		print_string(p, "default", "device default none", NULL);
	print_bool(p, "hysteresis", " hysteresis %s", d->hysteresis);
	print_u64(p, "r2q", " r2q %llu", d->r2q);
	print_time(p, "limit", " limit %s", d->limit_ns);
	print_u64(p, "overhead", " overhead %llu", d->overhead);
	print_u64(p, "mpu", " mpu %llu", d->mpu);
	print_string(p, "linklayer", " linklayer %s",
		     d->linklayer == HTB_LINKLAYER_ATM ? "atm" : "ethernet");
	print_string(p, "aqm", " aqm %s", d->aqm.codel ? "codel" : "off");
	print_time(p, "target", " target %s", d->aqm.target_ns);
	print_time(p, "interval", " interval %s", d->aqm.interval_ns);
	print_bool(p, "ecn", " ecn %s", d->aqm.ecn);
	print_bool(p, "flows", " flows %s", d->aqm.flows);
	print_directions(p, d);
	print_open_array(p, "mark_masks");
	for (__u32 i = 0; i < cfg->nmasks; i++)
		print_u64(p, NULL, NULL, cfg->mark_masks[i]);
	print_close_array(p);
	print_text(p, "\n");
	print_close_object(p);

	print_open_array(p, "classes");
	for (__u32 i = 0; i < cfg->nclasses; i++)
		print_class(p, cfg, &cfg->classes[i]);
	print_close_array(p);
	print_close_object(p);
	return 0;
}
