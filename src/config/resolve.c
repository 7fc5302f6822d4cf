// SPDX-License-Identifier: GPL-2.0
/*
 * From the classes as written to the resolved tree: class ids looked up by
 * sorting (no O(n^2) anywhere), parents resolved, cycles and depth checked,
 * classes put in preorder, defaults filled in (docs/config.md), matches
 * moved next to their class and checked for conflicts.
 */
#include <stdlib.h>
#include <string.h>

#include "common/bigmem.h"
#include "config/priv.h"
#include "common/units.h"

__u64 config_default_burst(__u64 rate_Bps)
{
	/* One maximum GSO packet as wire_len counts it, plus CONFIG_BURST_NS
	 * of credit at the rate (rounded up). docs/config.md says why. */
	unsigned __int128 b = (unsigned __int128)rate_Bps * CONFIG_BURST_NS;

	b = (b + HTB_NSEC_PER_SEC - 1) / HTB_NSEC_PER_SEC + CONFIG_GSO_WIRE_MAX;
	return b > ~0ull ? ~0ull : (__u64)b;
}

__u32 config_default_quantum(__u64 rate_Bps, __u32 r2q, bool *clamped)
{
	__u64 q = rate_Bps / (r2q ? r2q : CONFIG_DEFAULT_R2Q);

	*clamped = q < CONFIG_QUANTUM_MIN || q > CONFIG_QUANTUM_MAX;
	if (q < CONFIG_QUANTUM_MIN)
		q = CONFIG_QUANTUM_MIN;
	if (q > CONFIG_QUANTUM_MAX)
		q = CONFIG_QUANTUM_MAX;
	return (__u32)q;
}

struct id_ref {
	__u32 classid;
	__u32 raw;
};

static int cmp_id_ref(const void *pa, const void *pb)
{
	const struct id_ref *a = pa, *b = pb;

	if (a->classid != b->classid)
		return a->classid < b->classid ? -1 : 1;
	return a->raw < b->raw ? -1 : a->raw > b->raw;
}

static __u32 lookup(const struct id_ref *ids, __u32 n, __u32 classid)
{
	__u32 lo = 0, hi = n;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (ids[mid].classid == classid)
			return ids[mid].raw;
		if (ids[mid].classid < classid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return CONFIG_NO_INDEX;
}

static const char *cid(__u32 classid, char *buf)
{
	return config_sprint_classid(classid, buf, CONFIG_CLASSID_BUF);
}

/* Resolves a class id as written in parent/default to a raw index; a bare
 * minor takes major bare_major. Reports and returns CONFIG_NO_INDEX if the
 * class is not there. */
static __u32 resolve_ref(struct cfg_parse *ps, const struct id_ref *ids,
			 __u32 classid, __u32 bare_major, unsigned line,
			 const char *what, __u32 of, const char *hint)
{
	char a[CONFIG_CLASSID_BUF], b[CONFIG_CLASSID_BUF], ofs[32] = "";
	bool bare = !(classid >> 16);
	__u32 r;

	if (bare)
		classid |= bare_major << 16;
	r = lookup(ids, ps->ncls, classid);
	if (r != CONFIG_NO_INDEX)
		return r;
	if (of)
		snprintf(ofs, sizeof(ofs), " of class %s", cid(of, b));
	cfg_error(&ps->diag, line, "%s %s%s does not exist%s", what,
		  cid(classid, a), ofs, bare && hint ? hint : "");
	return r;
}

/* "1 and 2", "1, 2 and 3", "1, 2, 3 and 4 more": the distinct majors of
 * the sorted ids. */
static void sprint_majors(const struct id_ref *ids, __u32 n, char *buf, size_t len)
{
	__u32 maj[4], k = 0, total = 0;
	size_t off = 0;

	for (__u32 i = 0; i < n; i++) {
		if (i && ids[i].classid >> 16 == ids[i - 1].classid >> 16)
			continue;
		if (k < 4)
			maj[k++] = ids[i].classid >> 16;
		total++;
	}
	if (total > 4)
		k = 3;
	for (__u32 i = 0; i < k; i++)
		off += snprintf(buf + off, len - off, "%s%x",
				i == 0 ? "" : i + 1 < k || total > k ? ", " : " and ",
				maj[i]);
	if (total > k)
		snprintf(buf + off, len - off, " and %u more", total - k);
}

/* Every class not reached from the top level is on a parent cycle or
 * below one; report each cycle once, at the parent line of its first
 * class in the file. O(n): each class is walked once. */
static void report_cycles(struct cfg_parse *ps, __u32 *walk)
{
	for (__u32 i = 0; i < ps->ncls; i++) {
		__u32 c = i, first;
		char msg[200], a[CONFIG_CLASSID_BUF];
		size_t off = 0;
		int k = 0;

		if (ps->cls[i].final != CONFIG_NO_INDEX || walk[i])
			continue;
		while (c != CONFIG_NO_INDEX && !walk[c] &&
		       ps->cls[c].final == CONFIG_NO_INDEX) {
			walk[c] = i + 1;
			c = ps->cls[c].parent_raw;
		}
		if (c == CONFIG_NO_INDEX || walk[c] != i + 1)
			continue;	/* below a cycle already reported */
		/* c is on a new cycle: start the message at its first class */
		first = c;
		for (__u32 x = ps->cls[c].parent_raw; x != c; x = ps->cls[x].parent_raw)
			if (ps->cls[x].line < ps->cls[first].line)
				first = x;
		c = first;
		do {
			if (k++ == 8) {
				off += snprintf(msg + off, sizeof(msg) - off, "... -> ");
				break;
			}
			off += snprintf(msg + off, sizeof(msg) - off, "%s -> ",
					cid(ps->cls[c].classid, a));
			c = ps->cls[c].parent_raw;
		} while (c != first);
		snprintf(msg + off, sizeof(msg) - off, "%s", cid(ps->cls[first].classid, a));
		cfg_error(&ps->diag, ps->cls[first].key_line[CK_PARENT],
			  "parent cycle: %s", msg);
	}
}

/* Preorder numbering with an explicit stack: parents first, siblings in
 * file order. */
static void number_classes(struct cfg_parse *ps, const __u32 *first_child,
			   const __u32 *children, __u32 *stack, __u32 *depth)
{
	__u32 sp = 0, next = 0;

	for (__u32 i = ps->ncls; i-- > 0;) {
		if (ps->cls[i].parent_raw == CONFIG_NO_INDEX) {
			stack[sp++] = i;
			depth[i] = 1;
		}
	}
	while (sp) {
		__u32 r = stack[--sp];
		char a[CONFIG_CLASSID_BUF];

		ps->cls[r].final = next++;
		if (depth[r] == HTB_MAX_DEPTH + 1)
			cfg_error(&ps->diag, ps->cls[r].line,
				  "class %s is at depth %u: HTB allows at most %d levels",
				  cid(ps->cls[r].classid, a), depth[r], HTB_MAX_DEPTH);
		for (__u32 k = first_child[r + 1]; k-- > first_child[r];) {
			stack[sp++] = children[k];
			depth[children[k]] = depth[r] + 1;
		}
	}
}

/* A target at or beyond the interval never lets CoDel act (the delay
 * must stay above target for a whole interval, and would reach the limit
 * first), so it is refused; line: where the pair was set. */
static void check_aqm_pair(struct cfg_parse *ps, unsigned line, const char *whose,
			   const struct config_aqm *a)
{
	char t[UNIT_BUF], i[UNIT_BUF];

	if (a->target_ns < a->interval_ns)
		return;
	cfg_error(&ps->diag, line, "target %s of %s is not below its interval %s",
		  sprint_time(a->target_ns, t, sizeof(t)), whose,
		  sprint_time(a->interval_ns, i, sizeof(i)));
}

static bool any_key(const __u32 *key_line, int n)
{
	for (int k = 0; k < n; k++)
		if (key_line[k])
			return true;
	return false;
}

/* Each AQM key from the class if given, else from [device]. The device's
 * own pair is checked once (check_device_aqm); here only a class that
 * sets either. An AQM key on an inner class does nothing: warned. */
static void resolve_aqm(struct cfg_parse *ps, const struct raw_class *r,
			struct config_class *c)
{
	const __u32 *kl = &r->key_line[CK_AQM];
	const struct config_aqm *d = &ps->dev.aqm;
	char a[CONFIG_CLASSID_BUF], whose[32];

	c->aqm.codel = kl[AK_AQM] ? r->aqm.codel : d->codel;
	c->aqm.ecn = kl[AK_ECN] ? r->aqm.ecn : d->ecn;
	c->aqm.flows = kl[AK_FLOWS] ? r->aqm.flows : d->flows;
	c->aqm.target_ns = kl[AK_TARGET] ? r->aqm.target_ns : d->target_ns;
	c->aqm.interval_ns = kl[AK_INTERVAL] ? r->aqm.interval_ns : d->interval_ns;
	/* the class's id is formatted only for a message: a snprintf per
	 * class was 5% of a 100,392-class reload (docs/log.md 2026-12-06) */
	if (!any_key(kl, AK_MAX))
		return;
	config_sprint_classid(c->classid, a, sizeof(a));
	for (int k = 0; k < AK_MAX && !c->is_leaf; k++)
		if (kl[k]) {
			cfg_warn(&ps->diag, kl[k],
				 "AQM and flows keys of class %s have no effect: they act in leaf classes (set them on the leaves or in [device])",
				 a);
			break;
		}
	snprintf(whose, sizeof(whose), "class %s", a);
	if (kl[AK_TARGET] || kl[AK_INTERVAL])
		check_aqm_pair(ps, kl[AK_TARGET] ? kl[AK_TARGET] : kl[AK_INTERVAL],
			       whose, &c->aqm);
}

static void check_device_aqm(struct cfg_parse *ps)
{
	const __u32 *kl = &ps->dev_key_line[DK_AQM];

	check_aqm_pair(ps, kl[AK_TARGET] ? kl[AK_TARGET] : kl[AK_INTERVAL],
		       "[device]", &ps->dev.aqm);
}

/* A burst the config wrote (line != 0): less than a GSO packet is a
 * warning; longer than HTB's largest buffer at its rate an error (2^64-1
 * bytes was taken and capped without a word; tc cannot write it). */
static void check_burst(struct cfg_parse *ps, unsigned line, const char *key,
			__u64 bytes, __u32 classid, const char *rate_key, __u64 rate)
{
	char a[CONFIG_CLASSID_BUF], b[UNIT_BUF], t[UNIT_BUF], r[UNIT_BUF];
	unsigned __int128 ns = (unsigned __int128)bytes * HTB_NSEC_PER_SEC / rate;

	if (!line)
		return;
	sprint_size(bytes, b, sizeof(b));
	cid(classid, a);
	if (ns > HTB_BUFFER_MAX_NS)
		cfg_error(&ps->diag, line,
			  "%s %s of class %s lasts more than %s at its %s %s, HTB's largest buffer; lower it",
			  key, b, a, sprint_time(HTB_BUFFER_MAX_NS, t, sizeof(t)), rate_key,
			  sprint_rate(rate, r, sizeof(r)));
	else if (bytes < 65536)
		cfg_warn(&ps->diag, line,
			 "%s %s of class %s is less than one 64Kb GSO packet: the class may fall short of its %s",
			 key, b, a, rate_key);
}

/* Any upload_* key in the class: then its upload values are checked on
 * their own (else they are the plain ones, checked already). */
static unsigned upload_line(const struct raw_class *r)
{
	for (int k = CK_UPLOAD_RATE; k <= CK_UPLOAD_CBURST; k++)
		if (r->key_line[k])
			return r->key_line[k];
	return 0;
}

/* The upload direction's values: each upload_* key as written, else what
 * the plain key would give in its place, so a config without them is
 * symmetric: upload_ceil is ceil if written, else upload_rate (as ceil
 * defaults to rate); a burst is the written burst, else the default for
 * the upload rate; the quantum is the written one, else upload_rate / r2q.
 * Warned as the plain values are: ceil below rate, a burst too short or
 * too long. */
static void fill_upload(struct cfg_parse *ps, const struct raw_class *r,
			struct config_class *c)
{
	const __u32 *kl = r->key_line;
	struct config_dir_rates *u = &c->up;
	char a[CONFIG_CLASSID_BUF], b[UNIT_BUF], d[UNIT_BUF];
	bool clamped = false;

	u->rate = kl[CK_UPLOAD_RATE] ? r->up_rate : c->rate;
	u->ceil = kl[CK_UPLOAD_CEIL] ? r->up_ceil : kl[CK_CEIL] ? c->ceil : u->rate;
	u->burst = kl[CK_UPLOAD_BURST] ? r->up_burst :
		   kl[CK_BURST] ? c->burst : config_default_burst(u->rate);
	u->cburst = kl[CK_UPLOAD_CBURST] ? r->up_cburst :
		    kl[CK_CBURST] ? c->cburst : config_default_burst(u->ceil);
	u->quantum = kl[CK_QUANTUM] ? c->quantum :
		     config_default_quantum(u->rate, ps->dev.r2q, &clamped);
	if (!upload_line(r))
		return;
	cid(c->classid, a);
	if (!kl[CK_QUANTUM] && clamped && c->is_leaf && kl[CK_UPLOAD_RATE])
		cfg_warn(&ps->diag, kl[CK_UPLOAD_RATE],
			 "upload quantum of class %s clamped to %u (upload_rate / r2q is outside %u..%u); set quantum or [device] r2q",
			 a, u->quantum, CONFIG_QUANTUM_MIN, CONFIG_QUANTUM_MAX);
	if (u->ceil < u->rate)
		cfg_warn(&ps->diag, kl[CK_UPLOAD_CEIL] ? kl[CK_UPLOAD_CEIL] : upload_line(r),
			 "upload_ceil %s of class %s is below its upload_rate %s: accepted as tc does, the class never exceeds it",
			 sprint_rate(u->ceil, b, sizeof(b)), a,
			 sprint_rate(u->rate, d, sizeof(d)));
	check_burst(ps, kl[CK_UPLOAD_BURST], "upload_burst", u->burst, c->classid,
		    "upload_rate", u->rate);
	check_burst(ps, kl[CK_UPLOAD_CBURST], "upload_cburst", u->cburst, c->classid,
		    "upload_ceil", u->ceil);
}

static void fill_class(struct cfg_parse *ps, struct htb_config *cfg,
		       const struct raw_class *r, __u32 nchildren)
{
	struct config_class *c = &cfg->classes[r->final];
	char a[CONFIG_CLASSID_BUF], b[UNIT_BUF], d[UNIT_BUF];
	bool clamped;

	c->classid = r->classid;
	c->line = r->line;
	c->nchildren = nchildren;
	c->is_leaf = nchildren == 0;
	c->path[0] = r->final;
	if (r->parent_raw == CONFIG_NO_INDEX) {
		c->parent = CONFIG_NO_INDEX;
		c->depth = 1;
	} else {
		const struct config_class *p = &cfg->classes[ps->cls[r->parent_raw].final];

		c->parent = ps->cls[r->parent_raw].final;
		c->depth = p->depth + 1;
		memcpy(&c->path[1], p->path, p->depth * sizeof(p->path[0]));
	}
	c->rate = r->rate;
	c->ceil = r->key_line[CK_CEIL] ? r->ceil : r->rate;
	c->burst = r->key_line[CK_BURST] ? r->burst : config_default_burst(c->rate);
	c->cburst = r->key_line[CK_CBURST] ? r->cburst : config_default_burst(c->ceil);
	c->prio = r->prio;
	c->limit_ns = r->key_line[CK_LIMIT] ? r->limit_ns : ps->dev.limit_ns;
	resolve_aqm(ps, r, c);
	if (r->key_line[CK_QUANTUM]) {
		c->quantum = r->quantum;
	} else {
		c->quantum = config_default_quantum(c->rate, ps->dev.r2q, &clamped);
		/* only leaves' quanta weigh anything in HTB */
		if (clamped && c->is_leaf)
			cfg_warn(&ps->diag, r->line,
				 "quantum of class %s clamped to %u (rate / r2q = %llu is outside %u..%u); set quantum or [device] r2q",
				 cid(c->classid, a), c->quantum,
				 (unsigned long long)(c->rate / ps->dev.r2q),
				 CONFIG_QUANTUM_MIN, CONFIG_QUANTUM_MAX);
	}
	if (c->ceil < c->rate)
		cfg_warn(&ps->diag, r->key_line[CK_CEIL],
			 "ceil %s of class %s is below its rate %s: accepted as tc does, the class never exceeds ceil",
			 sprint_rate(c->ceil, b, sizeof(b)), cid(c->classid, a),
			 sprint_rate(c->rate, d, sizeof(d)));
	check_burst(ps, r->key_line[CK_BURST], "burst", c->burst, c->classid,
		    "rate", c->rate);
	check_burst(ps, r->key_line[CK_CBURST], "cburst", c->cburst, c->classid,
		    "ceil", c->ceil);
	fill_upload(ps, r, c);
}

static __u64 dir_rate(const struct config_class *c, enum config_dir dir)
{
	return dir == CONFIG_DIR_UPLOAD ? c->up.rate : c->rate;
}

/* In one direction; upload only where it differs from download (a config
 * without upload_* keys would say everything twice). */
static void warn_oversubscribed(struct cfg_parse *ps, struct htb_config *cfg,
				enum config_dir dir, __u64 *sum)
{
	char a[CONFIG_CLASSID_BUF], b[UNIT_BUF], d[UNIT_BUF];
	const char *what = dir == CONFIG_DIR_UPLOAD ? "upload rates" : "rates";
	const char *its = dir == CONFIG_DIR_UPLOAD ? "upload_rate" : "rate";
	memset(sum, 0, cfg->nclasses * sizeof(*sum));
	for (__u32 i = 0; i < cfg->nclasses; i++) {
		__u32 p = cfg->classes[i].parent;
		__u64 r = dir_rate(&cfg->classes[i], dir);

		if (p != CONFIG_NO_INDEX) {
			sum[p] += r;
			if (sum[p] < r)
				sum[p] = ~0ull;		/* saturate */
		}
	}
	for (__u32 i = 0; i < cfg->nclasses; i++)
		if (sum[i] > dir_rate(&cfg->classes[i], dir))
			cfg_warn(&ps->diag, cfg->classes[i].line,
				 "the %s of the children of class %s add up to %s, above its %s %s: they are guaranteed only while it can borrow",
				 what, cid(cfg->classes[i].classid, a),
				 sprint_rate(sum[i], b, sizeof(b)), its,
				 sprint_rate(dir_rate(&cfg->classes[i], dir), d, sizeof(d)));
}

/* The first upload_* key of the file, 0 if none. */
static unsigned first_upload_line(const struct cfg_parse *ps)
{
	unsigned first = 0;

	for (__u32 i = 0; i < ps->ncls; i++) {
		unsigned l = upload_line(&ps->cls[i]);

		if (l && (!first || l < first))
			first = l;
	}
	return first;
}

/* Keys that do nothing where they stand are warned, as AQM keys of an
 * inner class are: upload_* without upload_dev, ifb without ingress. */
static void check_directions(struct cfg_parse *ps, struct htb_config *cfg,
			     __u64 *sum)
{
	unsigned up = first_upload_line(ps);

	if (up && !ps->dev.upload_dev[0])
		cfg_warn(&ps->diag, up,
			 "upload_* keys have no effect without [device] upload_dev (the device whose egress carries the upload direction)");
	if (ps->dev_key_line[DK_IFB] && !ps->dev.ingress)
		cfg_warn(&ps->diag, ps->dev_key_line[DK_IFB],
			 "ifb has no effect without direction = ingress");
	if (up)
		warn_oversubscribed(ps, cfg, CONFIG_DIR_UPLOAD, sum);
}

/* Moves the matches next to their classes, in class order. */
static int place_matches(struct cfg_parse *ps, struct htb_config *cfg,
			 const __u32 *raw_of)
{
	__u32 k = 0;

	if (!ps->nm)
		return 0;
	cfg->matches = big_calloc(ps->nm, sizeof(*cfg->matches));
	if (!cfg->matches)
		return -1;
	for (__u32 f = 0; f < cfg->nclasses; f++) {
		const struct raw_class *r = &ps->cls[raw_of[f]];
		struct config_class *c = &cfg->classes[f];

		c->matches = r->nmatches ? &cfg->matches[k] : NULL;
		c->nmatches = r->nmatches;
		for (__u32 j = 0; j < r->nmatches; j++) {
			cfg->matches[k] = ps->m[r->match_first + j];
			cfg->matches[k].class_idx = f;
			ps->m[r->match_first + j].cgroup_path = NULL;	/* moved */
			k++;
		}
	}
	cfg->nmatches = k;
	return 0;
}

static void sort_masks(struct cfg_parse *ps, struct htb_config *cfg)
{
	/* most bits first, so a more specific mask wins; stable */
	for (__u32 i = 0; i < ps->nmasks; i++) {
		__u32 m = ps->masks[i], j = i;

		while (j > 0 && __builtin_popcount(cfg->mark_masks[j - 1]) <
				__builtin_popcount(m)) {
			cfg->mark_masks[j] = cfg->mark_masks[j - 1];
			j--;
		}
		cfg->mark_masks[j] = m;
	}
	cfg->nmasks = ps->nmasks;
}
/* What the steps of cfg_resolve() share. The arrays are scratch, freed
 * when it returns; only cfg keeps what the steps build. */
struct resolve {
	struct cfg_parse *ps;
	struct htb_config *cfg;
	__u32 n;		/* classes */
	__u32 nmajors;		/* distinct majors among them */
	struct id_ref *ids;	/* sorted by class id, for lookup() */
	/* children of raw p: children[first_child[p] .. first_child[p + 1]] */
	__u32 *first_child, *children;
	/* 2n, reused: the numbering's stack and depths, then the cycle
	 * walk's marks, then the raw index of each final index */
	__u32 *tmp;
	const struct config_match **mptr;	/* nm, for cfg_check_conflicts */
	__u64 *sums;			/* n, for warn_oversubscribed */
};

/* One zeroed block for all six arrays: malloc'ed apart, each below
 * BIG_MIN, they took 200-300 page faults of 4 KiB apiece at 100,392
 * classes (docs/log.md 2026-12-06, reload, second round). */
static int alloc_scratch(struct resolve *rs)
{
	size_t n = rs->n;
	char *p = big_calloc(rs->ps->nm * sizeof(*rs->mptr) + n * sizeof(*rs->sums) +
			     n * sizeof(*rs->ids) + (n + 2 + n + 2 * n) * sizeof(__u32), 1);

	if (!p) {
		cfg_error(&rs->ps->diag, 0, "out of memory");
		return -1;
	}
	rs->mptr = (const struct config_match **)p;
	rs->sums = (__u64 *)(rs->mptr + rs->ps->nm);
	rs->ids = (struct id_ref *)(rs->sums + n);
	rs->first_child = (__u32 *)(rs->ids + n);
	rs->children = rs->first_child + n + 2;
	rs->tmp = rs->children + n;
	return 0;
}

static void free_scratch(struct resolve *rs)
{
	big_free(rs->mptr);
}

/* Sorted, duplicates are adjacent: found without comparing every pair. */
static void sort_ids(struct resolve *rs)
{
	struct cfg_parse *ps = rs->ps;
	struct id_ref *ids = rs->ids;
	char a[CONFIG_CLASSID_BUF];
	bool sorted = true;

	for (__u32 i = 0; i < rs->n; i++) {
		ids[i] = (struct id_ref){ ps->cls[i].classid, i };
		sorted = sorted && (!i || ids[i - 1].classid < ids[i].classid);
	}
	/* generated and imported files come in class id order */
	if (!sorted)
		qsort(ids, rs->n, sizeof(*ids), cmp_id_ref);
	for (__u32 i = 1; i < rs->n; i++)
		if (ids[i].classid == ids[i - 1].classid)
			cfg_error(&ps->diag, ps->cls[ids[i].raw].line,
				  "duplicate class %s (first at line %u)",
				  cid(ids[i].classid, a), ps->cls[ids[i - 1].raw].line);
}

static __u32 count_majors(const struct id_ref *ids, __u32 n)
{
	__u32 nmajors = 0;

	for (__u32 i = 0; i < n; i++)
		if (i == 0 || ids[i].classid >> 16 != ids[i - 1].classid >> 16)
			nmajors++;
	return nmajors;
}

/* Also reports a class without a rate: in the same pass, so that each
 * class's rate and parent errors come out together in file order. */
/* c's parent's raw index (c has a parent key). Siblings are written one
 * after another, so the previous class's parent (*last, found) is tried
 * before the binary search: a search per class was 4% of a 100,392-class
 * reload (docs/log.md 2026-12-06, reload, second round). */
static __u32 parent_of(struct resolve *rs, const struct raw_class *c,
		       const char *hint, struct id_ref *last)
{
	__u32 id = c->parent_id >> 16 ? c->parent_id :
		   (c->classid & 0xffff0000u) | c->parent_id;
	__u32 r;

	if (last->raw != CONFIG_NO_INDEX && last->classid == id)
		return last->raw;
	r = resolve_ref(rs->ps, rs->ids, c->parent_id, c->classid >> 16,
			c->key_line[CK_PARENT], "parent", c->classid, hint);
	if (r != CONFIG_NO_INDEX)
		*last = (struct id_ref){ id, r };
	return r;
}

static void resolve_parents(struct resolve *rs)
{
	struct cfg_parse *ps = rs->ps;
	struct cfg_diag *d = &ps->diag;
	/* the hint helps only where another major could have been meant */
	const char *hint = rs->nmajors > 1 ?
		" (a bare minor takes the major of its class)" : NULL;
	char a[CONFIG_CLASSID_BUF];
	struct id_ref last = { 0, CONFIG_NO_INDEX };

	for (__u32 i = 0; i < rs->n; i++) {
		struct raw_class *c = &ps->cls[i];

		c->final = CONFIG_NO_INDEX;
		c->parent_raw = CONFIG_NO_INDEX;
		if (!c->key_line[CK_RATE])
			cfg_error(d, c->line, "class %s has no rate (rate is required)",
				  cid(c->classid, a));
		if (!c->key_line[CK_PARENT])
			continue;
		c->parent_raw = parent_of(rs, c, hint, &last);
		if (c->parent_raw == i) {
			cfg_error(d, c->key_line[CK_PARENT], "class %s cannot be its own parent",
				  cid(c->classid, a));
			c->parent_raw = CONFIG_NO_INDEX;
		}
	}
}

/* Counting sort on the parent, so each parent's children stay in file
 * order. */
static void link_children(struct resolve *rs)
{
	const struct raw_class *cls = rs->ps->cls;
	__u32 n = rs->n, *first_child = rs->first_child;

	for (__u32 i = 0; i < n; i++)
		if (cls[i].parent_raw != CONFIG_NO_INDEX)
			first_child[cls[i].parent_raw + 2]++;
	for (__u32 i = 2; i < n + 2; i++)
		first_child[i] += first_child[i - 1];
	for (__u32 i = 0; i < n; i++)
		if (cls[i].parent_raw != CONFIG_NO_INDEX)
			rs->children[first_child[cls[i].parent_raw + 1]++] = i;
}

/* Preorder, so filling in final order finds each parent already filled. */
static int fill_classes(struct resolve *rs)
{
	struct cfg_parse *ps = rs->ps;
	struct htb_config *cfg = rs->cfg;
	const __u32 *fc = rs->first_child;
	__u32 n = rs->n, *raw_of = rs->tmp;

	cfg->major = rs->nmajors == 1 ? rs->ids[0].classid >> 16 : 0;
	cfg->dev = ps->dev;
	cfg->nclasses = n;
	cfg->classes = big_calloc(n, sizeof(*cfg->classes));
	cfg->by_classid = malloc(n * sizeof(*cfg->by_classid));
	if (!cfg->classes || !cfg->by_classid) {
		cfg_error(&ps->diag, 0, "out of memory");
		return -1;
	}
	for (__u32 i = 0; i < n; i++)
		raw_of[ps->cls[i].final] = i;
	for (__u32 f = 0; f < n; f++) {
		__u32 r = raw_of[f];

		fill_class(ps, cfg, &ps->cls[r], fc[r + 1] - fc[r]);
	}
	for (__u32 i = 0; i < n; i++)
		cfg->by_classid[i] = ps->cls[rs->ids[i].raw].final;
	return 0;
}

/* A bare minor only when the major is unambiguous. */
static void resolve_default(struct resolve *rs)
{
	struct cfg_parse *ps = rs->ps;
	struct htb_config *cfg = rs->cfg;
	__u32 line = ps->dev_key_line[DK_DEFAULT];
	char a[CONFIG_CLASSID_BUF];
	__u32 r;

	if (!ps->dev.default_classid)
		return;
	if (!(ps->dev.default_classid >> 16) && rs->nmajors > 1) {
		char majors[64];

		sprint_majors(rs->ids, rs->n, majors, sizeof(majors));
		cfg_error(&ps->diag, line,
			  "default '%s' is ambiguous: classes use majors %s; write MAJOR:MINOR",
			  ps->default_text, majors);
		return;
	}
	r = resolve_ref(ps, rs->ids, ps->dev.default_classid, rs->ids[0].classid >> 16,
			line, "default class", 0, NULL);
	if (r != CONFIG_NO_INDEX) {
		struct config_class *c = &cfg->classes[ps->cls[r].final];

		if (!c->is_leaf)
			cfg_error(&ps->diag, line,
				  "default class %s is not a leaf (it has child classes)",
				  cid(c->classid, a));
		cfg->dev.default_classid = c->classid;
		cfg->dev.default_idx = ps->cls[r].final;
	}
}

static void check_matches_on_leaves(struct resolve *rs)
{
	struct cfg_parse *ps = rs->ps;
	char a[CONFIG_CLASSID_BUF];

	for (__u32 i = 0; i < rs->n; i++) {
		const struct raw_class *r = &ps->cls[i];

		if (r->nmatches && rs->first_child[i + 1] > rs->first_child[i])
			cfg_error(&ps->diag, ps->m[r->match_first].line,
				  "class %s has child classes: matches are allowed on leaves only",
				  cid(r->classid, a));
	}
}

/* The d->errors checks stand where the next steps would work on what has
 * been reported broken (duplicate ids, missing parents, cycles, matches on
 * inner classes); the steps between two checks report faults independent
 * of each other, so one run lists them all. */
int cfg_resolve(struct cfg_parse *ps, struct htb_config *cfg)
{
	struct cfg_diag *d = &ps->diag;
	struct resolve rs = { .ps = ps, .cfg = cfg, .n = ps->ncls };
	int ret = -1;

	if (rs.n == 0) {
		cfg_error(d, 0, "no classes: a config needs at least one [class MAJOR:MINOR] section");
		return -1;
	}
	check_device_aqm(ps);
	if (alloc_scratch(&rs))
		goto out;
	sort_ids(&rs);
	if (d->errors)
		goto out;
	rs.nmajors = count_majors(rs.ids, rs.n);
	resolve_parents(&rs);
	if (d->errors)
		goto out;
	link_children(&rs);
	number_classes(ps, rs.first_child, rs.children, rs.tmp, rs.tmp + rs.n);
	/* report_cycles marks its walks in zeroed space; the stack is free */
	memset(rs.tmp, 0, rs.n * sizeof(*rs.tmp));
	report_cycles(ps, rs.tmp);
	if (d->errors)
		goto out;
	if (fill_classes(&rs))
		goto out;
	resolve_default(&rs);
	check_matches_on_leaves(&rs);
	if (d->errors)
		goto out;
	if (place_matches(ps, cfg, rs.tmp)) {
		cfg_error(d, 0, "out of memory");
		goto out;
	}
	if (cfg_check_conflicts(ps, cfg, rs.mptr))
		goto out;
	sort_masks(ps, cfg);
	warn_oversubscribed(ps, cfg, CONFIG_DIR_DOWNLOAD, rs.sums);
	check_directions(ps, cfg, rs.sums);
	ret = 0;
out:
	free_scratch(&rs);
	return ret;
}
