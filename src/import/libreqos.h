/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htbctl import libreqos: LibreQoS's ShapedDevices.csv (circuits and their
 * devices' addresses) and network.json (the tree of sites and APs) into
 * one htbctl config with both directions. Everything is read and checked
 * first (lqos_parse); only a model without an error is written
 * (lqos_write), so a bad row leaves nothing behind. docs/import.md has the
 * mapping, the class ids and every check.
 */
#ifndef HTBCTL_IMPORT_LIBREQOS_H
#define HTBCTL_IMPORT_LIBREQOS_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "common/common.h"
#include "import/lq_map.h"

enum lq_dir { LQ_DOWN, LQ_UP };

/* A network.json node (a site, an AP, ...). The array is in preorder:
 * a node's subtree follows it. */
struct lq_node {
	char *name, *type;
	unsigned line;
	int parent;		/* index, -1: top level */
	int up;			/* the node whose class is its class's parent, -1: the
				 * root (place_nodes: LibreQoS flattens deep nodes) */
	int shaped;		/* whose class it is: itself, or for a virtual node its
				 * nearest shaped ancestor (-1: the root) */
	bool virt;
	bool generated;		/* one of LibreQoS's Generated_PN_k (lqos_generate_pn) */
	unsigned level;		/* its class's HTB level (the root is 1) */
	unsigned kids;		/* shaped nodes whose class hangs on its class */
	__u64 bw[2];		/* bit/s, by enum lq_dir */
	__u64 rate[2];
	__u32 classid;
};

struct lq_circuit {
	char *id, *name;
	unsigned line;		/* its first row */
	unsigned rows;		/* its devices */
	int parent;		/* the node its rows name, -1: none (the root) */
	__u64 min[2], max[2];	/* bit/s */
	unsigned rank;		/* its place in LibreQoS's mapping order (lqos_claim_order) */
	__u32 classid;
};

struct lq_prefix {		/* a map key: memcmp'able */
	__u8 af, plen, pad[2];
	__u8 addr[16];
};

struct lq_addr {
	struct lq_prefix p;
	unsigned circuit, line;
	unsigned by_circuit;	/* lqos_write's: slot k holds the k-th address in circuit order */
	/* A prefix claimed twice: first_of is 1 + the first claim's index
	 * (0: this is the first); the first claim's winner is 1 + the claim
	 * that keeps it (resolve_claims); a claim that lost is dropped. */
	unsigned first_of, winner;
	bool dropped;
	bool owns_dev;		/* dev_name and dev_id are its (the row's first address) */
	char *dev_name, *dev_id;	/* the row's device, shared by its addresses */
};

/* A class of an earlier import's config (--keep-ids): key is 'c' and the
 * circuit's id, or 'n' and the node's name, as lqos_comment_text wrote
 * them; ambiguous where two classes had the same key (neither is kept). */
struct lq_prev {
	char *key;
	__u32 classid;
	bool ambiguous;
};

struct lqos {
	const char *csv_name, *json_name, *upload_dev, *prev_name;
	struct lq_node *nodes;
	unsigned nnodes, nodecap;
	struct lq_circuit *circ;
	unsigned ncirc, circcap;
	struct lq_addr *addr;
	unsigned naddr, addrcap;
	struct lq_map node_by_name, circ_by_id, addr_by_prefix;
	/* the circuits by the class they hang on (number_classes) */
	unsigned *corder, *cstart;
	struct lq_prev *prev;
	unsigned nprev, prevcap;
	struct lq_map prev_by_key;
	unsigned kept;		/* classes that kept their id from prev */
	unsigned rows;
	__u64 root_set[2];	/* bit/s, --root-mbps (set before lqos_parse); 0: the sum */
	/* Set before lqos_parse: --strict (refuse what LibreQoS accepts with
	 * a warning), --generated-pn COUNT and --generated-pn-mbps DOWN/UP
	 * (0: LQ_GEN_PN_DEFAULT_MBPS). */
	bool strict;
	unsigned gen_pn;
	__u64 gen_bw[2];
	bool flat;		/* network.json is {}: Parent Node is ignored */
	unsigned flat_said;	/* rows whose Parent Node that ignored */
	__u64 root[2], defrate;
	__u32 nclasses;
	unsigned nkept_addr;	/* addresses written: naddr less the dropped claims */
	char **warns;		/* FILE:LINE lines about what was read but not written */
	unsigned nwarn, warncap;
	char err[1024];		/* the one line lqos_parse failed with */
};

struct lqos_text {
	const char *name;	/* for messages: the file as the user named it */
	const char *text;
	size_t len;
};

/* import/libreqos_model.c: messages, for import/libreqos*.c: lq_err ends the
 * import (q->err, -1); lq_warn goes on (0, -1 out of memory); lq_lenient is
 * lq_warn where LibreQoS accepts with a warning what --strict refuses. */
int lq_err(struct lqos *q, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int lq_warn(struct lqos *q, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int lq_lenient(struct lqos *q, const char *file, unsigned line, const char *then,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A value in a message: quoted, bounded, escaped (one per call site:
 * each needs its own buffer). */
#define QV(buf, s) msg_quote(buf, sizeof(buf), s)
void lq_sprint_mbps(__u64 bits, char *buf, size_t len);

/* LibreQoS's generated parent nodes' bandwidth (lqos.conf's
 * generated_pn_download_mbps and generated_pn_upload_mbps) */
#define LQ_GEN_PN_DEFAULT_MBPS	1000

/* import/libreqos_model.c: a new node at the end of q->nodes, zeroed;
 * NULL out of memory. lq_grow: arr with room for element n (zeroed past
 * the old *cap), in common/bigmem's mappings (freed with big_free): the
 * circuits and addresses of 100,000 circuits are megabytes. */
struct lq_node *lq_node_new(struct lqos *q);
void *lq_grow(void *arr, unsigned *cap, unsigned n, size_t size);

/* import/libreqos_tree.c: the tree LibreQoS builds. */
/* Where each node's class hangs and its HTB level: a virtual node's
 * children move up to its nearest shaped ancestor, nodes below LibreQoS's
 * sixth level to their fifth-level ancestor. */
int lqos_place_nodes(struct lqos *q);
/* Circuits without a Parent Node (or on a top-level virtual node) go
 * round-robin under Generated_PN_1..COUNT, as LibreQoS places them. */
int lqos_generate_pn(struct lqos *q);
/* Node rates top-down, each node's circuits' Mins cut to fit its rate. */
int lqos_node_rates(struct lqos *q);
/* q->corder, q->cstart: the circuits grouped by the class they hang on. */
int lqos_group_circuits(struct lqos *q);
/* c->rank: LibreQoS's order of mapping addresses (resolve_claims). */
int lqos_claim_order(struct lqos *q);

/* A prefix as text, "100.64.0.14/32" or "2001:db8::/48", in buf (at
 * least LQ_PREFIX_BUF bytes): the config's matches and the warnings. */
#define LQ_PREFIX_BUF	(INET6_ADDRSTRLEN + 4)
const char *lqos_prefix_text(const struct lq_prefix *p, char *buf, size_t len);

/* The class id of the k-th class written: minors 1..ffff of major 1, then
 * of major 2, ... (tc's minor has 16 bits; an htbctl config may use
 * several majors). */
__u32 lqos_classid(__u32 k);
/* "2.5" (Mbps, at most 9999999.999999) in bit/s. 0, or -1. */
int lqos_parse_mbps(const char *s, __u64 *bits);

/* Reads and checks both texts into q (zeroed by the caller); with prev
 * (else NULL), an earlier import's config, circuits and nodes found there
 * keep their class ids. 0, or -1 with q->err. */
int lqos_parse(struct lqos *q, const struct lqos_text *csv, const struct lqos_text *json,
	       const struct lqos_text *prev);

/* A name or id from the files as the config's comments carry it, inside
 * "...": a quote and a backslash escaped with a backslash, then controls
 * and invalid UTF-8 as \xNN (msg_clip), cut to fit; one line whatever it
 * holds. --keep-ids compares these forms. */
#define LQ_COMMENT_BUF 600
const char *lqos_comment_text(const char *s, char *buf, size_t len);

/* import/libreqos_ids.c: the classes of prev by their comments; the id
 * prev gave a circuit ('c', its Circuit ID) or node ('n', its name), or
 * 0. */
int lqos_read_prev(struct lqos *q, const struct lqos_text *prev);
__u32 lqos_prev_id(const struct lqos *q, char kind, const char *raw);
/* The config. 0, or -1 on a write error. */
int lqos_write(struct lqos *q, FILE *out);
void lqos_free(struct lqos *q);

/* The whole import of two files: one line printed on an error. */
int lqos_read_files(const struct ctx *ctx, struct lqos *q, const char *csv_file,
		    const char *json_file, const char *prev_file);

#endif
