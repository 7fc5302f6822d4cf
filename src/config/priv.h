/* SPDX-License-Identifier: GPL-2.0 */
/* Internal to src/config_*.c: the parse state shared by the parser, the
 * match parser and the resolver. Not an API. */
#ifndef HTBCTL_CONFIG_PRIV_H
#define HTBCTL_CONFIG_PRIV_H

#include <netinet/in.h>
#include <stdarg.h>
#include "config/config.h"

/* Where FILE:LINE messages go; counts them. */
struct cfg_diag {
	FILE *out;		/* NULL: count only */
	const char *name;
	unsigned errors;
	unsigned warnings;
};

#define CFG_MAX_ERRORS 50	/* then one "too many errors" and silence */
/* Warnings printed at most; the rest are counted and cfg_diag_end says how
 * many (a generated config of 100,000 classes can warn for each). */
#define CFG_MAX_WARNINGS 20

/* line 0: "NAME: message" (no line applies). */
void cfg_error(struct cfg_diag *d, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cfg_warn(struct cfg_diag *d, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* After the last diagnostic: the count of warnings not printed, if any. */
void cfg_diag_end(struct cfg_diag *d);

/* The candidate closest to word by edit distance, if close enough to be a
 * likely typo; else NULL. */
const char *cfg_suggest(const char *word, const char *const *cands, size_t n);

/* The AQM keys, in both sections (a [device] one is the classes'
 * default): each section's enum has them at the same offset. */
enum aqm_key { AK_AQM, AK_TARGET, AK_INTERVAL, AK_ECN, AK_FLOWS, AK_MAX };

enum dev_key {
	DK_DEFAULT, DK_HYSTERESIS, DK_R2Q, DK_LIMIT, DK_OVERHEAD, DK_MPU,
	DK_LINKLAYER, DK_UPLOAD_DEV, DK_DIRECTION, DK_IFB, DK_AQM,
	DK_MAX = DK_AQM + AK_MAX
};
enum class_key {
	CK_PARENT, CK_RATE, CK_CEIL, CK_BURST, CK_CBURST, CK_PRIO, CK_QUANTUM,
	CK_LIMIT, CK_MATCH, CK_UPLOAD_RATE, CK_UPLOAD_CEIL, CK_UPLOAD_BURST,
	CK_UPLOAD_CBURST, CK_AQM, CK_MAX = CK_AQM + AK_MAX
};

/* One [class] section as written (file order). */
struct raw_class {
	__u32 classid;
	__u32 line;
	__u32 parent_id;		/* as written: a bare minor has no major bits */
	__u32 key_line[CK_MAX];		/* first line of each key; 0 = absent */
	__u64 rate, ceil, burst, cburst, limit_ns;
	__u64 up_rate, up_ceil, up_burst, up_cburst;	/* upload_* as written */
	__u32 prio, quantum;
	struct config_aqm aqm;		/* the keys given: key_line[CK_AQM + AK_*] */
	__u32 match_first, nmatches;	/* slice of cfg_parse.m */
	/* resolver scratch */
	__u32 parent_raw;		/* raw index of the parent or CONFIG_NO_INDEX */
	__u32 final;			/* preorder index or CONFIG_NO_INDEX */
};

enum cfg_section { SECT_NONE, SECT_DEVICE, SECT_CLASS, SECT_SKIP };

/* A [class] key's last value that parsed, and what it gave (config/keys.c
 * memo_val): a value's meaning depends on its text only, and a generated
 * config repeats a few texts (docs/log.md 2026-12-06, second reload
 * section). text[0] == 0: empty. */
struct val_memo {
	char text[24];
	__u64 val;
};

struct cfg_parse {
	struct cfg_diag diag;
	struct raw_class *cls;
	__u32 ncls, cls_cap;
	struct config_match *m;		/* class_idx = raw class index here */
	__u32 nm, m_cap;
	struct config_device dev;
	__u32 dev_line;			/* line of [device], 0 if absent */
	__u32 dev_key_line[DK_MAX];
	enum cfg_section sect;
	__u32 cur;			/* raw index of the current [class] */
	char default_text[24];		/* [device] default as written, for messages */
	bool too_many;			/* CONFIG_MAX_CLASSES reported */
	__u32 masks[HTB_MAX_MARK_MASKS];
	__u32 nmasks;
	int cgroup_root_state;		/* 0 not looked up, 1 found, -1 none */
	char cgroup_root[32];
	struct val_memo memo[CK_MAX];	/* by enum class_key */
};

static inline bool cfg_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* config/keys.c: room for the classes and matches of a text this long
 * (only where the arrays would be BIG_MIN or more; no room is no error). */
void cfg_reserve(struct cfg_parse *ps, size_t text_len);
/* config/keys.c: s..e is a trimmed line starting with '['. */
void cfg_open_section(struct cfg_parse *ps, unsigned line, const char *s,
		      const char *e);
void cfg_device_key(struct cfg_parse *ps, unsigned line, const char *name,
		    const char *value);
void cfg_class_key(struct cfg_parse *ps, unsigned line, const char *name,
		   const char *value);

/* config/match.c */
int cfg_parse_match(struct cfg_parse *ps, const char *value, unsigned line,
		    struct config_match *m);
/* Fails on a prefix, port, mark or cgroup claimed by two classes; fills
 * cfg->nkeys. cfg->matches must be final (class_idx = final index);
 * scratch has room for cfg->nmatches pointers. */
int cfg_check_conflicts(struct cfg_parse *ps, struct htb_config *cfg,
			const struct config_match **scratch);
/* Formats a match as written in the config ("udp dport 80-90"). */
char *cfg_sprint_match(const struct config_match *m, char *buf, size_t len);
#define CFG_MATCH_BUF 96
/* A dst or src match: its direction ("dst", "src") and its prefix
 * ("198.18.1.0/24"), as check prints them. */
const char *cfg_prefix_dir(const struct config_match *m);
char *cfg_sprint_prefix(const struct config_match *m, char *buf, size_t len);
#define CFG_PREFIX_BUF (INET6_ADDRSTRLEN + 4)
/* A DSCP set as "N,N,...", ascending: all 64 values fit. */
char *cfg_sprint_dscp(__u64 mask, char *buf, size_t len);
#define CFG_DSCP_BUF 192

/* config/resolve.c */
int cfg_resolve(struct cfg_parse *ps, struct htb_config *cfg);

#endif
