// SPDX-License-Identifier: GPL-2.0
/* Config helpers: FILE:LINE diagnostics, typo suggestions, class ids,
 * freeing. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/bigmem.h"
#include "common/common.h"
#include "config/priv.h"
#include "common/units.h"

/* One line, bounded and escaped (msg_clip): the file's name and the
 * values in the message come from the user. */
static void vdiag(struct cfg_diag *d, unsigned line, const char *level,
		  const char *fmt, va_list ap)
{
	char name[256], raw[1024], msg[1024];

	if (!d->out)
		return;
	msg_clip(name, sizeof(name), d->name);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	msg_clip(msg, sizeof(msg), raw);
	if (line)
		fprintf(d->out, "%s:%u: %s%s\n", name, line, level, msg);
	else
		fprintf(d->out, "%s: %s%s\n", name, level, msg);
}

void cfg_error(struct cfg_diag *d, unsigned line, const char *fmt, ...)
{
	va_list ap;

	d->errors++;
	if (d->errors > CFG_MAX_ERRORS) {
		if (d->errors == CFG_MAX_ERRORS + 1 && d->out)
			fprintf(d->out, "%s: too many errors, stopping here\n", d->name);
		return;
	}
	va_start(ap, fmt);
	vdiag(d, line, "", fmt, ap);
	va_end(ap);
}

void cfg_warn(struct cfg_diag *d, unsigned line, const char *fmt, ...)
{
	va_list ap;

	d->warnings++;
	if (d->warnings > CFG_MAX_WARNINGS)
		return;		/* counted; cfg_diag_end says how many more */
	va_start(ap, fmt);
	vdiag(d, line, "warning: ", fmt, ap);
	va_end(ap);
}

void cfg_diag_end(struct cfg_diag *d)
{
	if (d->out && d->warnings > CFG_MAX_WARNINGS)
		fprintf(d->out, "%s: %u more warnings not shown (%u in all)\n", d->name,
			d->warnings - CFG_MAX_WARNINGS, d->warnings);
}

/* Edit distance with adjacent transpositions (optimal string alignment),
 * for words of up to SUGGEST_MAX characters: "dts" is one edit from "dst". */
#define SUGGEST_MAX 32
static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned rows[3][SUGGEST_MAX + 1];
	unsigned *pp = rows[0], *prev = rows[1], *cur = rows[2], *t;

	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned v = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			cur[j] = v;
		}
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *cfg_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t lw = strlen(word);
	const char *best = NULL;
	unsigned best_d = ~0u;

	if (lw == 0 || lw > SUGGEST_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t lc = strlen(cands[i]);
		unsigned d, limit;

		if (lc > SUGGEST_MAX)
			continue;
		d = edit_distance(word, cands[i]);
		/* a likely typo: one edit (a transposition counts one) in a word
		 * of up to four letters, two in a longer one: two edits turn
		 * 'sctp' into 'dscp', which no one mistypes */
		limit = lc <= 4 ? 1 : 2;
		if (d <= limit && d < best_d) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}

/* 1..16 hex digits of value at most 0xffff (leading zeros allowed), as
 * parse_uint("0x...", 0, 0xffff) took them; read here directly: the copy
 * and the call were 9% of a 100,392-class reload (docs/log.md 2026-12-06). */
static int parse_hex16(const char *s, size_t len, __u64 *v)
{
	__u64 n = 0;

	if (len == 0 || len > 16)
		return -1;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		n = n * 16 + d;
		if (n > 0xffff)
			return -1;
	}
	*v = n;
	return 0;
}

int config_parse_classid(const char *s, __u32 *classid)
{
	const char *colon = strchr(s, ':');
	__u64 maj, min;

	if (!colon || parse_hex16(s, colon - s, &maj) ||
	    parse_hex16(colon + 1, strlen(colon + 1), &min))
		return -1;
	if (maj == 0 || maj == 0xffff || min == 0)
		return -1;
	*classid = (__u32)(maj << 16 | min);
	return 0;
}

char *config_sprint_classid(__u32 classid, char *buf, size_t len)
{
	snprintf(buf, len, "%x:%x", classid >> 16, classid & 0xffff);
	return buf;
}

int config_find_class(const struct htb_config *cfg, __u32 classid)
{
	size_t lo = 0, hi = cfg->nclasses;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		__u32 id = cfg->classes[cfg->by_classid[mid]].classid;

		if (id == classid)
			return (int)cfg->by_classid[mid];
		if (id < classid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void config_free(struct htb_config *cfg)
{
	if (!cfg)
		return;
	for (__u32 i = 0; i < cfg->nmatches; i++)
		free(cfg->matches[i].cgroup_path);
	big_free(cfg->matches);
	big_free(cfg->classes);
	free(cfg->by_classid);
	memset(cfg, 0, sizeof(*cfg));
}
