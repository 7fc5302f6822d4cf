// SPDX-License-Identifier: GPL-2.0
/*
 * No prefix, port, mark or cgroup may be claimed by two classes. All
 * matches are sorted once (O(n log n)); equal claims end up adjacent, and
 * overlapping port ranges are found in one sweep.
 *
 * What counts as the same claim is what the datapath could not decide:
 *  - prefixes: the same address and length in the same direction (different
 *    lengths are fine: the longest prefix wins in the LPM trie);
 *  - ports: overlapping ranges with the same protocol and direction. A
 *    protocol-less rule ("dport 53") and a tcp/udp one ("udp dport 53") are
 *    not in conflict: the datapath looks up the specific protocol first;
 *  - marks: the same masked value under the same mask (different masks are
 *    tried most specific first, so they do not conflict);
 *  - cgroups: the same cgroup id, however the path was written.
 * The same claim twice within one class is harmless and counted once.
 */
#include <stdlib.h>
#include <string.h>

#include "config/priv.h"

static int cmp_match(const void *pa, const void *pb)
{
	const struct config_match *a = *(const struct config_match *const *)pa;
	const struct config_match *b = *(const struct config_match *const *)pb;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == CONFIG_MATCH_PORT) {
		if (a->key.port.proto != b->key.port.proto)
			return a->key.port.proto < b->key.port.proto ? -1 : 1;
		if (a->key.port.dir != b->key.port.dir)
			return a->key.port.dir < b->key.port.dir ? -1 : 1;
		if (a->key.port.port != b->key.port.port)
			return a->key.port.port < b->key.port.port ? -1 : 1;
	} else if (a->kind == CONFIG_MATCH_CGROUP) {
		if (a->key.cgroup_id != b->key.cgroup_id)
			return a->key.cgroup_id < b->key.cgroup_id ? -1 : 1;
	} else if (a->kind == CONFIG_MATCH_DSCP) {
		;	/* in file order: the first claim of a value owns it */
	} else {
		c = memcmp(&a->key, &b->key, sizeof(a->key));
		if (c)
			return c;
	}
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return 0;
}

/* a and b (of different classes) claim the same packets. */
static void conflict(struct cfg_parse *ps, const struct htb_config *cfg,
		     const struct config_match *a, const struct config_match *b)
{
	char ta[CFG_MATCH_BUF], tb[CFG_MATCH_BUF], id[CONFIG_CLASSID_BUF];
	const struct config_match *tmp;

	if (a->line > b->line) {	/* report at the later line */
		tmp = a;
		a = b;
		b = tmp;
	}
	cfg_sprint_match(a, ta, sizeof(ta));
	cfg_sprint_match(b, tb, sizeof(tb));
	config_sprint_classid(cfg->classes[a->class_idx].classid, id, sizeof(id));
	if (!strcmp(ta, tb))
		cfg_error(&ps->diag, b->line, "'%s' is already claimed by class %s (line %u)",
			  tb, id, a->line);
	else
		cfg_error(&ps->diag, b->line, "'%s' %s '%s' of class %s (line %u)", tb,
			  b->kind == CONFIG_MATCH_CGROUP ? "is the same cgroup as" : "overlaps",
			  ta, id, a->line);
}

static bool same_key(const struct config_match *a, const struct config_match *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == CONFIG_MATCH_CGROUP)
		return a->key.cgroup_id == b->key.cgroup_id;
	return !memcmp(&a->key, &b->key, sizeof(a->key));
}

static void check_ports(struct cfg_parse *ps, struct htb_config *cfg,
			const struct config_match **v, size_t n)
{
	const struct config_match *owner = v[0];
	__u32 lo = v[0]->key.port.port, hi = v[0]->port_last;

	for (size_t i = 1; i <= n; i++) {
		const struct config_match *m = i < n ? v[i] : NULL;

		if (m && m->key.port.proto == owner->key.port.proto &&
		    m->key.port.dir == owner->key.port.dir && m->key.port.port <= hi) {
			if (m->class_idx != owner->class_idx)
				conflict(ps, cfg, owner, m);
			if (m->port_last > hi) {
				hi = m->port_last;
				owner = m;
			}
			continue;
		}
		cfg->nkeys[CONFIG_MATCH_PORT] += hi - lo + 1;
		if (m) {
			owner = m;
			lo = m->key.port.port;
			hi = m->port_last;
		}
	}
}

/* DSCP sets: each value belongs to one class; a map entry per value. */
static void check_dscp(struct cfg_parse *ps, struct htb_config *cfg,
		       const struct config_match **v, size_t n)
{
	const struct config_match *owner[64] = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct config_match *told[64];
		int ntold = 0;

		for (int d = 0; d < 64; d++) {
			bool again = false;

			if (!(v[i]->key.dscp & (1ull << d)))
				continue;
			if (!owner[d]) {
				owner[d] = v[i];
				cfg->nkeys[CONFIG_MATCH_DSCP]++;
				continue;
			}
			if (owner[d]->class_idx == v[i]->class_idx)
				continue;
			for (int k = 0; k < ntold; k++)	/* each clashing rule once */
				again |= told[k] == owner[d];
			if (!again) {
				told[ntold++] = owner[d];
				conflict(ps, cfg, owner[d], v[i]);
			}
		}
	}
}

int cfg_check_conflicts(struct cfg_parse *ps, struct htb_config *cfg,
			const struct config_match **v)
{
	unsigned errors = ps->diag.errors;
	size_t n = cfg->nmatches, i, j;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		v[i] = &cfg->matches[i];
	/* a generated file's matches often come in order already: the check
	 * is n compares, the sort n log n (5% of a 100,392-class reload) */
	for (i = 1; i < n && cmp_match(&v[i - 1], &v[i]) <= 0; i++)
		;
	if (i < n)
		qsort(v, n, sizeof(*v), cmp_match);
	for (i = 0; i < n; i = j) {
		if (v[i]->kind == CONFIG_MATCH_PORT) {
			for (j = i; j < n && v[j]->kind == CONFIG_MATCH_PORT; j++)
				;
			check_ports(ps, cfg, v + i, j - i);
			continue;
		}
		if (v[i]->kind == CONFIG_MATCH_DSCP) {
			for (j = i; j < n && v[j]->kind == CONFIG_MATCH_DSCP; j++)
				;
			check_dscp(ps, cfg, v + i, j - i);
			continue;
		}
		cfg->nkeys[v[i]->kind]++;
		for (j = i + 1; j < n && same_key(v[i], v[j]); j++)
			if (v[j]->class_idx != v[i]->class_idx)
				conflict(ps, cfg, v[i], v[j]);
	}
	return ps->diag.errors == errors ? 0 : -1;
}
