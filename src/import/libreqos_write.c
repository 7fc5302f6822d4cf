// SPDX-License-Identifier: GPL-2.0
/*
 * import libreqos, the writing half: the checked model (import/libreqos.c)
 * as an htbctl config. The plain keys are the download direction (the
 * device the config is loaded on faces the subscribers), upload_* the
 * upload direction on [device] upload_dev; a circuit's addresses are
 * `match = dst` (the subscriber is the destination of its downloads; the
 * upload direction mirrors src and dst itself). Names go into comments so
 * that an operator finds a subscriber's class with grep.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "import/libreqos.h"

static const char *cid(__u32 id, char *buf, size_t len)
{
	snprintf(buf, len, "%x:%x", id >> 16, id & 0xffff);
	return buf;
}

/* The lines of every circuit go out through these rather than fprintf,
 * whose format parsing was a quarter of a 100,000-circuit import
 * (callgrind). */
static void put(FILE *out, const char *s)
{
	fputs_unlocked(s, out);
}

static void put_u64(FILE *out, __u64 v, int base)
{
	char d[24];
	int n = 0;

	do
		d[n++] = "0123456789abcdef"[v % (unsigned)base];
	while (v /= (unsigned)base);
	while (n)
		fputc_unlocked(d[--n], out);
}

/* "KEY = MAJOR:MINOR" and a newline. */
static void put_cid(FILE *out, const char *key, __u32 id)
{
	put(out, key);
	put_u64(out, id >> 16, 16);
	fputc_unlocked(':', out);
	put_u64(out, id & 0xffff, 16);
	put(out, key[0] == '[' ? "]\n" : "\n");
}

/* tc's units, exact: "155mbit", "2500kbit", "100001bit". */
static void write_rate(FILE *out, const char *key, __u64 bits)
{
	const char *unit = bits % 1000000 == 0 ? "mbit\n" : bits % 1000 == 0 ? "kbit\n" : "bit\n";

	put(out, key);
	put(out, " = ");
	put_u64(out, bits % 1000000 == 0 ? bits / 1000000 : bits % 1000 == 0 ? bits / 1000 : bits, 10);
	put(out, unit);
}

static void write_rates(FILE *out, const __u64 rate[2], const __u64 ceil[2])
{
	write_rate(out, "rate", rate[LQ_DOWN]);
	write_rate(out, "ceil", ceil[LQ_DOWN]);
	write_rate(out, "upload_rate", rate[LQ_UP]);
	write_rate(out, "upload_ceil", ceil[LQ_UP]);
}

static __u64 clamp_quantum(__u64 q)
{
	return q < CONFIG_QUANTUM_MIN ? CONFIG_QUANTUM_MIN : q > CONFIG_QUANTUM_MAX ? CONFIG_QUANTUM_MAX : q;
}

/* A leaf's quantum where rate / r2q (10) falls outside HTB's 1000..200000
 * bytes in either direction (one quantum serves both): the download's,
 * clamped as the config would take it, so that `htbctl check` of 10,000
 * circuits does not warn about each one. */
static void write_quantum(FILE *out, const __u64 bits[2])
{
	__u64 down = bits[LQ_DOWN] / 8 / CONFIG_DEFAULT_R2Q, up = bits[LQ_UP] / 8 / CONFIG_DEFAULT_R2Q;

	if (clamp_quantum(down) != down || clamp_quantum(up) != up)
		fprintf(out, "quantum = %llu\n", (unsigned long long)clamp_quantum(down));
}

static void write_header(FILE *out, const struct lqos *q)
{
	char a[LQ_COMMENT_BUF], b[LQ_COMMENT_BUF], id[16];

	fprintf(out, "# htbctl config imported from LibreQoS: \"%s\" (%u rows, %u circuits)",
		lqos_comment_text(q->csv_name, a, sizeof(a)), q->rows, q->ncirc);
	fprintf(out, " and \"%s\" (%u nodes)\n", lqos_comment_text(q->json_name, b, sizeof(b)), q->nnodes);
	fprintf(out, "# by `htbctl import libreqos`. The plain keys (rate, ceil) are the download\n"
		     "# direction, on the device this config is loaded on; upload_rate and\n"
		     "# upload_ceil the upload direction, on upload_dev. Circuits: rate is\n"
		     "# Min Mbps, ceil Max Mbps; nodes: ceil is their bandwidth, rate their share\n"
		     "# of their parent's rate.\n");
	fprintf(out, "[device]\ndefault = %s\n", cid(lqos_classid(1), id, sizeof(id)));
	if (q->upload_dev)
		fprintf(out, "upload_dev = %s\n", q->upload_dev);
	else
		fprintf(out, "# upload_dev = IFACE   (not given: htbctl import libreqos ... --upload-dev IFACE)\n");
}

static void write_root_and_default(FILE *out, const struct lqos *q)
{
	const __u64 def[2] = { q->defrate, q->defrate };
	char id[16], up[16];

	if (q->root_set[LQ_DOWN])
		fprintf(out, "\n# the root: the link, as --root-mbps gave it\n");
	else
		fprintf(out, "\n# the root: the top-level nodes' bandwidth, the ceilings of the circuits\n"
			     "# without a parent node and the default class's rate (--root-mbps DOWN/UP\n"
			     "# gives the link's instead)\n");
	fprintf(out, "[class %s]\n", cid(lqos_classid(0), id, sizeof(id)));
	write_rates(out, q->root, q->root);
	fprintf(out, "\n# default: traffic of no circuit (addresses not in ShapedDevices.csv),\n"
		     "# guaranteed 1mbit, the spare bandwidth last (prio 7)\n");
	fprintf(out, "[class %s]\nparent = %s\n", cid(lqos_classid(1), id, sizeof(id)),
		cid(lqos_classid(0), up, sizeof(up)));
	write_rates(out, def, q->root);
	fprintf(out, "prio = 7\n");
}

static __u32 parent_class(const struct lqos *q, int node)
{
	int up = node < 0 ? -1 : q->nodes[node].shaped;

	return up < 0 ? lqos_classid(0) : q->nodes[up].classid;
}

static void write_node(FILE *out, const struct lqos *q, unsigned i)
{
	const struct lq_node *n = &q->nodes[i];
	char a[LQ_COMMENT_BUF], b[LQ_COMMENT_BUF], id[16];

	fprintf(out, "\n# node \"%s\"", lqos_comment_text(n->name, a, sizeof(a)));
	if (n->type)
		fprintf(out, " (%s)", lqos_comment_text(n->type, b, sizeof(b)));
	fprintf(out, "\n[class %s]\n", cid(n->classid, id, sizeof(id)));
	fprintf(out, "parent = %s\n", cid(n->up < 0 ? lqos_classid(0) : q->nodes[n->up].classid,
					  id, sizeof(id)));
	write_rates(out, n->rate, n->bw);
	if (!n->kids && q->cstart[i] == q->cstart[i + 1])
		write_quantum(out, n->rate);	/* a node with nothing below is a leaf */
}

static void write_match(FILE *out, const struct lq_addr *e)
{
	char pf[LQ_PREFIX_BUF], a[256], b[256];

	put(out, "match = dst ");
	put(out, lqos_prefix_text(&e->p, pf, sizeof(pf)));
	if (e->dev_name[0] || e->dev_id[0]) {
		put(out, "   # device \"");
		put(out, lqos_comment_text(e->dev_name, a, sizeof(a)));
		put(out, "\" (");
		put(out, lqos_comment_text(e->dev_id, b, sizeof(b)));
		fputc_unlocked(')', out);
	}
	fputc_unlocked('\n', out);
}

static void write_circuit(FILE *out, const struct lqos *q, unsigned ci, const unsigned *astart)
{
	const struct lq_circuit *c = &q->circ[ci];
	char a[LQ_COMMENT_BUF];

	put(out, "\n# circuit \"");
	put(out, lqos_comment_text(c->name, a, sizeof(a)));
	put(out, "\" (");
	put(out, lqos_comment_text(c->id, a, sizeof(a)));
	put(out, ")\n");
	put_cid(out, "[class ", c->classid);
	put_cid(out, "parent = ", parent_class(q, c->parent));
	write_rates(out, c->min, c->max);
	write_quantum(out, c->min);
	for (unsigned k = astart[ci]; k < astart[ci + 1]; k++)
		write_match(out, &q->addr[q->addr[k].by_circuit]);
}

/* The addresses by circuit, in file order, the dropped claims left out
 * (resolve_claims): slots astart[c] .. astart[c + 1] - 1 of the
 * by_circuit list are circuit c's. */
static unsigned *group_addrs(struct lqos *q)
{
	unsigned *astart = calloc((size_t)q->ncirc + 2, sizeof(*astart)), *next;

	if (!astart)
		return NULL;
	for (unsigned k = 0; k < q->naddr; k++)
		astart[q->addr[k].circuit + 1] += !q->addr[k].dropped;
	for (unsigned c = 0; c < q->ncirc; c++)
		astart[c + 1] += astart[c];
	next = malloc(((size_t)q->ncirc + 1) * sizeof(*next));
	if (!next) {
		free(astart);
		return NULL;
	}
	memcpy(next, astart, ((size_t)q->ncirc + 1) * sizeof(*next));
	for (unsigned k = 0; k < q->naddr; k++)
		if (!q->addr[k].dropped)
			q->addr[next[q->addr[k].circuit]++].by_circuit = k;
	free(next);
	return astart;
}

int lqos_write(struct lqos *q, FILE *out)
{
	unsigned *astart = group_addrs(q);

	if (!astart)
		return -1;
	write_header(out, q);
	write_root_and_default(out, q);
	for (unsigned b = 0; b <= q->nnodes; b++) {
		if (b < q->nnodes && q->nodes[b].virt)
			continue;
		if (b < q->nnodes)
			write_node(out, q, b);
		for (unsigned i = q->cstart[b]; i < q->cstart[b + 1]; i++)
			write_circuit(out, q, q->corder[i], astart);
	}
	free(astart);
	return ferror(out) ? -1 : 0;
}
