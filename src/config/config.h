/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The class config (INI, shared/docs/interface.md; docs/config.md): parsed,
 * validated and resolved into the form the loader writes to the BPF maps.
 *
 * After a successful config_load() every default is resolved, every value
 * is in range and every cross-reference is checked: the loader needs no
 * further validation. classes[] is in preorder (a parent before its
 * children, siblings in file order), so array indexes can be used as the
 * dense class indexes of class_conf/class_state, and path[] and parent
 * are indexes into the same array.
 *
 * Matches are stored as the classifier maps' own key structs
 * (include/htb/types.h), so the loader copies them into the maps as they
 * are, with class_idx as the map value. No global state: several configs
 * may be loaded side by side (reload compares old and new).
 */
#ifndef HTBCTL_CONFIG_H
#define HTBCTL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "htb/types.h"
#include "common/print.h"

#define CONFIG_NO_INDEX		HTB_NO_CLASS	/* no parent / no default */
#define CONFIG_IFNAMSIZ		16		/* IFNAMSIZ: a device name and its NUL */

/* Resolution rules (docs/config.md says why). */
#define CONFIG_DEFAULT_R2Q	10
#define CONFIG_DEFAULT_LIMIT_NS	HTB_DEFAULT_LIMIT_NS	/* [device] limit: 100 ms */
#define CONFIG_QUANTUM_MIN	1000		/* rate/r2q is clamped to this range */
#define CONFIG_QUANTUM_MAX	200000
/* Default burst = CONFIG_GSO_WIRE_MAX + rate * CONFIG_BURST_NS (cburst
 * likewise from ceil): one 64 KiB GSO packet as wire_len counts it (the
 * headers of up to 248 segments included) plus 1 ms of credit. */
#define CONFIG_GSO_WIRE_MAX	(65536u + 16384u)
#define CONFIG_BURST_NS		1000000ull
#define CONFIG_MAX_PRIO		7
/* Class ids are major:minor with any major 1..fffe (the major is part of a
 * class's name, as with several HTB roots): a config is not bound to one
 * major's 65535 minors. This caps the tree (2^20 classes). */
#define CONFIG_MAX_CLASSES	1048576u
/* The largest CoDel interval (the control law's fixed point: 4.29 s) and
 * target (below the interval: a longer target never lets CoDel act). */
#define CONFIG_INTERVAL_MAX_NS	(4 * 1000000000ull)

/* A class's AQM settings (docs/config.md "AQM"): as a [device] default,
 * as written for one class, and resolved. */
struct config_aqm {
	bool codel;		/* aqm = codel (default) or off */
	bool ecn;		/* the signal: CE on ECT packets (default), else drop */
	bool flows;		/* sparse flows ahead of the backlog (default on) */
	__u64 target_ns;	/* default 5 ms */
	__u64 interval_ns;	/* default 100 ms, at most CONFIG_INTERVAL_MAX_NS */
};

/* A match kind is a classifier map: include/htb/types.h lists them, and
 * the kinds take its numbers. PRIO is never written in a config (a leaf
 * matches skb->priority == its classid by itself); the union below holds
 * each kind's key in the map's own layout. */
#define CONFIG_MATCH_ENUM_(id, nm, ktype, mtype, mflags, bit)	\
	CONFIG_MATCH_##id = HTB_CLS_##id,
enum config_match_kind {
	HTB_CLASSIFIERS(CONFIG_MATCH_ENUM_)
	CONFIG_MATCH_NKINDS = HTB_NCLS,
};
#undef CONFIG_MATCH_ENUM_

struct config_match {
	__u32 kind;		/* enum config_match_kind */
	__u32 class_idx;	/* the map value: index into htb_config.classes */
	__u32 line;		/* source line of the match rule */
	__u16 port_last;	/* PORT: last port of the range, key.port the first */
	__u16 pad;
	union {
		struct htb_mark_key mark;	/* value already masked */
		struct htb_lpm4_key lpm4;	/* address bytes in network order */
		struct htb_lpm6_key lpm6;
		struct htb_port_key port;	/* proto 0 = any; port host order */
		__u64 cgroup_id;		/* cgroup v2 id (inode number) */
		__u64 dscp;			/* DSCP: bit N set = value N (0..63),
						 * one map entry per bit */
	} key;
	char *cgroup_path;	/* CGROUP: the path as written */
};

/* The two directions one config shapes (docs/config.md "Directions"):
 * download with the plain keys on the device the config is loaded on (its
 * egress, or its ingress through an ifb), upload with the upload_* keys
 * and mirrored matches on [device] upload_dev. */
enum config_dir { CONFIG_DIR_DOWNLOAD, CONFIG_DIR_UPLOAD };

/* A class's rates in one direction, resolved. */
struct config_dir_rates {
	__u64 rate, ceil, burst, cburst;
	__u32 quantum;
};

struct config_class {
	__u32 classid;		/* major << 16 | minor */
	__u32 parent;		/* index of the parent, CONFIG_NO_INDEX at top level */
	__u32 depth;		/* entries used in path[]: 1 for a top-level class */
	__u32 path[HTB_MAX_DEPTH];	/* path[0] = this class, then its ancestors */
	bool is_leaf;
	__u32 nchildren;
	__u64 rate;		/* bytes/s, > 0 */
	__u64 ceil;		/* bytes/s, > 0 (may be below rate: tc accepts it) */
	__u64 burst;		/* bytes, > 0 */
	__u64 cburst;		/* bytes, > 0 */
	__u32 prio;		/* 0..7 */
	__u32 quantum;		/* bytes, > 0 */
	__u64 limit_ns;		/* > 0 */
	/* upload_rate, _ceil, _burst, _cburst and the quantum from them:
	 * each the plain value's when not written (config_direction()) */
	struct config_dir_rates up;
	struct config_aqm aqm;	/* leaves only; target < interval */
	struct config_match *matches;	/* slice of htb_config.matches */
	__u32 nmatches;		/* 0 on inner classes */
	__u32 line;		/* line of the [class] header */
};

struct config_device {
	__u32 default_classid;	/* 0: no default class */
	__u32 default_idx;	/* its index, CONFIG_NO_INDEX: unclassified passes unshaped */
	bool hysteresis;
	__u32 r2q;
	__u64 limit_ns;		/* the default class limit */
	__u32 overhead;		/* bytes added to each packet's length (0..65535) */
	__u32 mpu;		/* minimum packet unit (0..65535) */
	__u32 linklayer;	/* enum htb_linklayer */
	struct config_aqm aqm;	/* the classes' default */
	/* Directions (docs/config.md "Directions"): the device whose egress
	 * carries upload ("": none, one direction); download on the loaded
	 * device's ingress through an ifb (ifb: its name, "": the default
	 * name the loader derives from the device's) */
	char upload_dev[CONFIG_IFNAMSIZ];
	bool ingress;
	char ifb[CONFIG_IFNAMSIZ];
};

struct htb_config {
	struct config_device dev;
	__u32 major;			/* the major all class ids share; 0 when
					 * they use several (docs/config.md) */
	struct config_class *classes;	/* preorder */
	__u32 nclasses;
	struct config_match *matches;	/* grouped by class, in class order */
	__u32 nmatches;
	/* htb_tree_conf.mark_masks: most specific (most bits) first. */
	__u32 mark_masks[HTB_MAX_MARK_MASKS];
	__u32 nmasks;
	/* Entries each classifier map needs (ports expanded, duplicates of
	 * one class counted once): size the maps from these. */
	__u64 nkeys[CONFIG_MATCH_NKINDS];
	__u32 nwarnings;		/* warnings printed while loading */
	__u32 *by_classid;		/* class indexes sorted by classid
					 * (config_find_class's index) */
};

/*
 * Reads, validates and resolves PATH. Errors and warnings go to diag as
 * "PATH:LINE: message" / "PATH:LINE: warning: message" (diag may be NULL
 * for silence). Returns 0, or -1 when the file is invalid or unreadable;
 * on -1 cfg holds nothing (config_free is still safe).
 */
int config_load(const char *path, struct htb_config *cfg, FILE *diag);
/* The whole file at path into *text (malloc'ed, not terminated), at most
 * 64 MiB; the problem as FILE:0: message on diag. */
int config_read_file(const char *path, char **text, size_t *len, FILE *diag);
/* The same into memory from big_calloc (common/bigmem.h; big_free it): a
 * large file without the page faults of malloc's pages. */
int config_read_file_big(const char *path, char **text, size_t *len, FILE *diag);
/* The same from memory; name stands for the file in messages. text need
 * not be NUL-terminated. */
int config_parse_string(const char *text, size_t len, const char *name,
			struct htb_config *cfg, FILE *diag);
void config_free(struct htb_config *cfg);

/*
 * The tree one direction shapes, as a config of its own for the loader:
 * DOWNLOAD is a copy of cfg; UPLOAD has each class's up rates as its
 * rates and every match mirrored (src <-> dst, sport <-> dport; mark,
 * dscp, cgroup as they are), with nkeys to match. out is freed with
 * config_free. Returns 0, or -1 (out of memory; out holds nothing).
 */
int config_direction(const struct htb_config *cfg, enum config_dir dir,
		     struct htb_config *out);
/* "download" / "upload" */
const char *config_dir_name(enum config_dir dir);

/* The resolved tree: text like `tc class show` (tc units), or JSON with raw
 * integers (bytes/s, bytes, ns) when p->json. Returns 0. */
int config_print(const struct htb_config *cfg, struct printer *p);

/* Index of classid in cfg->classes, or -1. O(log n). */
int config_find_class(const struct htb_config *cfg, __u32 classid);

/* "MAJOR:MINOR" in hex as tc writes it, both parts required and nonzero,
 * major below ffff. Returns 0 or -1. */
int config_parse_classid(const char *s, __u32 *classid);
/* "1:a" (tc's %x:%x); buf of at least CONFIG_CLASSID_BUF bytes. */
#define CONFIG_CLASSID_BUF 12
char *config_sprint_classid(__u32 classid, char *buf, size_t len);

/* The default burst for a rate (docs/config.md). */
__u64 config_default_burst(__u64 rate_Bps);
/* rate / r2q clamped to [CONFIG_QUANTUM_MIN, CONFIG_QUANTUM_MAX];
 * *clamped tells whether the clamp applied. */
__u32 config_default_quantum(__u64 rate_Bps, __u32 r2q, bool *clamped);

#endif /* HTBCTL_CONFIG_H */
