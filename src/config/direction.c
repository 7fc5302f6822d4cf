// SPDX-License-Identifier: GPL-2.0
/*
 * One config, two directions (docs/config.md "Directions"): the tree the
 * upload device shapes is the config's tree with the upload rates, and
 * with every match seen from the other end of the link: what a subscriber
 * receives is addressed to it (dst), what it sends comes from it (src).
 */
#include <stdlib.h>
#include <string.h>

#include "common/bigmem.h"
#include "config/config.h"

const char *config_dir_name(enum config_dir dir)
{
	return dir == CONFIG_DIR_UPLOAD ? "upload" : "download";
}

/* The match kind of the other end: dst <-> src; others are themselves. */
static __u32 mirror_kind(__u32 kind)
{
	switch (kind) {
	case CONFIG_MATCH_DST4:	return CONFIG_MATCH_SRC4;
	case CONFIG_MATCH_SRC4:	return CONFIG_MATCH_DST4;
	case CONFIG_MATCH_DST6:	return CONFIG_MATCH_SRC6;
	case CONFIG_MATCH_SRC6:	return CONFIG_MATCH_DST6;
	default:		return kind;
	}
}

/* src <-> dst, sport <-> dport; mark, dscp, cgroup say nothing of an end. */
static void mirror_match(struct config_match *m)
{
	m->kind = mirror_kind(m->kind);
	if (m->kind == CONFIG_MATCH_PORT)
		m->key.port.dir = m->key.port.dir == HTB_PORT_DST ? HTB_PORT_SRC
								  : HTB_PORT_DST;
}

static void use_upload_rates(struct config_class *c)
{
	c->rate = c->up.rate;
	c->ceil = c->up.ceil;
	c->burst = c->up.burst;
	c->cburst = c->up.cburst;
	c->quantum = c->up.quantum;
}

static int copy_arrays(const struct htb_config *cfg, struct htb_config *out)
{
	size_t nc = cfg->nclasses;

	out->classes = big_calloc(nc, sizeof(*out->classes));
	out->by_classid = malloc(nc * sizeof(*out->by_classid));
	out->matches = cfg->nmatches ? big_calloc(cfg->nmatches, sizeof(*out->matches)) : NULL;
	if (!out->classes || !out->by_classid || (cfg->nmatches && !out->matches))
		return -1;
	memcpy(out->classes, cfg->classes, nc * sizeof(*out->classes));
	memcpy(out->by_classid, cfg->by_classid, nc * sizeof(*out->by_classid));
	if (cfg->nmatches)
		memcpy(out->matches, cfg->matches, cfg->nmatches * sizeof(*out->matches));
	/* the slices point into the copy; the cgroup paths are its own */
	for (__u32 i = 0; i < cfg->nclasses; i++)
		if (cfg->classes[i].matches)
			out->classes[i].matches = out->matches +
				(cfg->classes[i].matches - cfg->matches);
	for (__u32 i = 0; i < cfg->nmatches; i++)
		out->matches[i].cgroup_path = NULL;
	out->nmatches = cfg->nmatches;	/* config_free frees what was copied */
	for (__u32 i = 0; i < cfg->nmatches; i++) {
		if (cfg->matches[i].cgroup_path &&
		    !(out->matches[i].cgroup_path = strdup(cfg->matches[i].cgroup_path)))
			return -1;
	}
	return 0;
}

int config_direction(const struct htb_config *cfg, enum config_dir dir,
		     struct htb_config *out)
{
	*out = *cfg;
	out->classes = NULL;
	out->matches = NULL;
	out->by_classid = NULL;
	out->nmatches = 0;
	if (copy_arrays(cfg, out)) {
		config_free(out);
		return -1;
	}
	if (dir == CONFIG_DIR_DOWNLOAD)
		return 0;
	for (__u32 i = 0; i < out->nclasses; i++)
		use_upload_rates(&out->classes[i]);
	for (__u32 i = 0; i < out->nmatches; i++)
		mirror_match(&out->matches[i]);
	for (int k = 0; k < CONFIG_MATCH_NKINDS; k++)
		out->nkeys[mirror_kind(k)] = cfg->nkeys[k];
	return 0;
}
