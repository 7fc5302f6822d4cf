// SPDX-License-Identifier: GPL-2.0
/*
 * htbctl simulate: the config's classes as fluid nodes (same indexes:
 * the config is in preorder, so a parent's index is below its
 * children's, as share/fluid.h wants), the offers as the leaves' demands, one
 * fluid_solve(), and check's kind of output: tc units in text, raw
 * bytes/s in JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "share/fluid.h"
#include "share/simulate.h"
#include "common/units.h"

struct sim {
	const struct ctx *ctx;
	const char *file;
	struct htb_config cfg;
	struct fluid_node *n;
};

/* What holds a leaf back, in JSON and in text (enum fluid_limit). */
static const struct {
	const char *json, *text;
} limit_names[] = {
	[FLUID_IDLE] = { "idle", "idle" },
	[FLUID_DEMAND] = { "demand", "demand" },
	[FLUID_CEIL] = { "ceil", "ceil" },
	[FLUID_ANCESTOR_CEIL] = { "ancestor_ceil", "ancestor ceil" },
	[FLUID_SPARE] = { "spare", "spare" },
};

static void build_nodes(struct sim *s)
{
	const struct config_class *c;

	for (__u32 i = 0; i < s->cfg.nclasses; i++) {
		c = &s->cfg.classes[i];
		s->n[i] = (struct fluid_node){
			.parent = c->parent == CONFIG_NO_INDEX ? FLUID_NONE : c->parent,
			.leaf = c->is_leaf, .prio = c->prio, .quantum = c->quantum,
			.rate = c->rate, .ceil = c->ceil,
		};
	}
}

/* One offer onto the leaves' demands; -1 (said) for a class the config
 * lacks or an inner class. */
static int apply_offer(struct sim *s, const struct sim_offer *o)
{
	char q[MSG_QUOTE_BUF], id[CONFIG_CLASSID_BUF];
	int i;

	if (o->all) {
		for (__u32 k = 0; k < s->cfg.nclasses; k++)
			if (s->cfg.classes[k].is_leaf)
				s->n[k].demand = o->rate;
		return 0;
	}
	config_sprint_classid(o->classid, id, sizeof(id));
	i = config_find_class(&s->cfg, o->classid);
	if (i < 0) {
		p_err(s->ctx, "offer %s: no class %s in %s", msg_quote(q, sizeof(q), o->word),
		      id, s->file);
		return -1;
	}
	if (!s->cfg.classes[i].is_leaf) {
		p_err(s->ctx, "offer %s: %s is an inner class; only leaves offer traffic",
		      msg_quote(q, sizeof(q), o->word), id);
		return -1;
	}
	s->n[i].demand = o->rate;
	return 0;
}

/* " borrowed R from 1:1", or " borrowed R (R1 from 1:10, R2 from 1:1)";
 * JSON: borrowed and borrowed_from [{classid, level, rate}]. */
static void print_borrowed(struct printer *p, const struct sim *s, __u32 i)
{
	const struct config_class *c = &s->cfg.classes[i];
	const struct fluid_node *m = &s->n[i];
	char id[CONFIG_CLASSID_BUF], r[UNIT_BUF];
	__u64 total = 0;
	int lenders = 0, shown = 0;

	for (__u32 k = 1; k < c->depth; k++) {
		total += m->borrowed[k];
		lenders += !!m->borrowed[k];
	}
	print_rate(p, "borrowed", " borrowed %s", total);
	print_text(p, "%s", lenders > 1 ? " (" : "");
	print_open_array(p, "borrowed_from");
	for (__u32 k = 1; k < c->depth; k++) {
		if (!m->borrowed[k])
			continue;
		config_sprint_classid(s->cfg.classes[c->path[k]].classid, id, sizeof(id));
		print_open_object(p, NULL);
		print_string(p, "classid", NULL, id);
		print_u64(p, "level", NULL, k);
		print_rate(p, "rate", NULL, m->borrowed[k]);
		if (lenders > 1)
			print_text(p, "%s%s from %s", shown++ ? ", " : "",
				   sprint_rate(m->borrowed[k], r, sizeof(r)), id);
		else
			print_text(p, " from %s", id);
		print_close_object(p);
	}
	print_close_array(p);
	print_text(p, "%s", lenders > 1 ? ")" : "");
}

static void print_leaf(struct printer *p, const struct sim *s, __u32 i)
{
	const struct fluid_node *m = &s->n[i];
	char id[CONFIG_CLASSID_BUF];

	print_u64(p, "quantum", " quantum %llu", m->quantum);
	if (m->demand == FLUID_INF)
		print_string(p, "offered", " offered max", NULL);
	else
		print_rate(p, "offered", " offered %s", m->demand);
	print_bool(p, "backlogged", NULL, m->demand == FLUID_INF);
	print_rate(p, "gets", " gets %s", m->got);
	print_rate(p, "own", " own %s", m->own);
	print_borrowed(p, s, i);
	print_text(p, " limited by %s", limit_names[m->limit].text);
	print_string(p, "limited_by", NULL, limit_names[m->limit].json);
	if (m->limit == FLUID_ANCESTOR_CEIL)
		print_string(p, "limiter", " %s", config_sprint_classid(
			     s->cfg.classes[m->limiter].classid, id, sizeof(id)));
	else
		print_string(p, "limiter", NULL, NULL);
}

static void print_class(struct printer *p, const struct sim *s, __u32 i)
{
	const struct config_class *c = &s->cfg.classes[i];
	const struct fluid_node *m = &s->n[i];
	char id[CONFIG_CLASSID_BUF], pid[CONFIG_CLASSID_BUF];

	print_open_object(p, NULL);
	print_text(p, "%*s", 2 * (int)(c->depth - 1), "");
	print_string(p, "classid", "class %s", config_sprint_classid(c->classid, id, sizeof(id)));
	if (c->parent == CONFIG_NO_INDEX)
		print_string(p, "parent", " root", NULL);
	else
		print_string(p, "parent", " parent %s", config_sprint_classid(
			     s->cfg.classes[c->parent].classid, pid, sizeof(pid)));
	print_u64(p, "depth", NULL, c->depth);
	print_bool(p, "leaf", NULL, c->is_leaf);
	if (c->is_leaf)
		print_u64(p, "prio", " prio %llu", c->prio);
	print_rate(p, "rate", " rate %s", c->rate);
	print_rate(p, "ceil", " ceil %s", c->ceil);
	if (c->is_leaf) {
		print_leaf(p, s, i);
	} else {
		print_rate(p, "gets", " gets %s", m->got);
		print_rate(p, "own", " own %s", m->own);
		print_rate(p, "lent", " lent %s", m->lent);
	}
	print_text(p, "\n");
	print_close_object(p);
}

/* Offers, solve, print; the config is loaded. */
static int simulate(struct sim *s, const struct sim_args *a)
{
	struct fluid_scratch *scratch = NULL;
	struct printer p;
	int rc;

	build_nodes(s);
	for (int i = 0; i < a->noffers; i++)
		if (apply_offer(s, &a->offers[i]))
			return EXIT_USAGE;
	rc = fluid_solve(s->n, s->cfg.nclasses, &scratch);
	fluid_scratch_free(scratch);
	if (rc) {
		p_err(s->ctx, "solving the fluid ideal failed: %s", strerror(errno));
		return EXIT_FAIL;
	}
	printer_init(&p, s->ctx->json, stdout);
	print_open_object(&p, NULL);
	print_open_array(&p, "classes");
	for (__u32 i = 0; i < s->cfg.nclasses; i++)
		print_class(&p, s, i);
	print_close_array(&p);
	print_close_object(&p);
	printer_finish(&p);
	if (fflush(stdout) || ferror(stdout)) {
		p_err(s->ctx, "writing the output failed");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int simulate_run(const struct ctx *ctx, const struct sim_args *a)
{
	struct sim s = { .ctx = ctx, .file = a->file };
	int rc;

	if (config_load(a->file, &s.cfg, stderr)) {
		p_err(ctx, "config %s rejected", a->file);
		return EXIT_FAIL;
	}
	s.n = calloc(s.cfg.nclasses ? s.cfg.nclasses : 1, sizeof(*s.n));
	if (!s.n) {
		p_err(ctx, "out of memory for %u classes", s.cfg.nclasses);
		rc = EXIT_FAIL;
	} else {
		rc = simulate(&s, a);
	}
	free(s.n);
	config_free(&s.cfg);
	return rc;
}
