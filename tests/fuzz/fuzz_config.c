// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the config parser, validator and printer on arbitrary
 * bytes. Whatever it accepts must satisfy every promise config/config.h makes to
 * the loader; a broken promise traps.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	return 0;
}

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void check_invariants(const struct htb_config *cfg)
{
	__u32 nm = 0;

	CHECK(cfg->nclasses > 0 && cfg->nclasses <= CONFIG_MAX_CLASSES);
	CHECK(cfg->nmasks <= HTB_MAX_MARK_MASKS);
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		const struct config_class *c = &cfg->classes[i];

		CHECK(!cfg->major || c->classid >> 16 == cfg->major);
		CHECK(config_find_class(cfg, c->classid) == (int)i);
		CHECK(c->depth >= 1 && c->depth <= HTB_MAX_DEPTH);
		CHECK(c->path[0] == i);
		if (c->parent == CONFIG_NO_INDEX) {
			CHECK(c->depth == 1);
		} else {
			const struct config_class *p = &cfg->classes[c->parent];

			CHECK(c->parent < i);	/* preorder */
			CHECK(c->depth == p->depth + 1);
			CHECK(!memcmp(&c->path[1], p->path, p->depth * sizeof(__u32)));
			CHECK(!p->is_leaf);
		}
		CHECK(c->is_leaf == (c->nchildren == 0));
		CHECK(c->rate && c->ceil && c->burst && c->cburst && c->quantum);
		CHECK(c->prio <= CONFIG_MAX_PRIO && c->limit_ns);
		CHECK(c->is_leaf || c->nmatches == 0);
		CHECK(c->nmatches == 0 || c->matches == &cfg->matches[nm]);
		for (__u32 k = 0; k < c->nmatches; k++) {
			const struct config_match *m = &c->matches[k];

			CHECK(m->class_idx == i && m->kind < CONFIG_MATCH_NKINDS);
			if (m->kind == CONFIG_MATCH_PORT)
				CHECK(m->key.port.port >= 1 && m->key.port.port <= m->port_last);
			if (m->kind == CONFIG_MATCH_MARK)
				CHECK(m->key.mark.mask && !(m->key.mark.value & ~m->key.mark.mask));
			if (m->kind == CONFIG_MATCH_DST4 || m->kind == CONFIG_MATCH_SRC4)
				CHECK(m->key.lpm4.prefixlen <= 32);
			if (m->kind == CONFIG_MATCH_DST6 || m->kind == CONFIG_MATCH_SRC6)
				CHECK(m->key.lpm6.prefixlen <= 128);
		}
		nm += c->nmatches;
	}
	CHECK(nm == cfg->nmatches);
	if (cfg->dev.default_idx != CONFIG_NO_INDEX) {
		CHECK(cfg->dev.default_idx < cfg->nclasses);
		CHECK(cfg->classes[cfg->dev.default_idx].is_leaf);
		CHECK(cfg->classes[cfg->dev.default_idx].classid == cfg->dev.default_classid);
	}
	CHECK(cfg->dev.r2q > 0 && cfg->dev.limit_ns > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct htb_config cfg;
	struct printer p;

	if (config_parse_string((const char *)data, size, "fuzz", &cfg, devnull) == 0) {
		check_invariants(&cfg);
		printer_init(&p, false, devnull);
		config_print(&cfg, &p);
		printer_finish(&p);
		printer_init(&p, true, devnull);
		config_print(&cfg, &p);
		printer_finish(&p);
	} else {
		CHECK(cfg.nclasses == 0 && cfg.classes == NULL && cfg.matches == NULL);
	}
	config_free(&cfg);
	return 0;
}
