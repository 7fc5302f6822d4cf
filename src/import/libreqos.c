// SPDX-License-Identifier: GPL-2.0
/*
 * import libreqos, the reading half: network.json into nodes, then
 * ShapedDevices.csv row by row into circuits and their addresses, every
 * check on the way (import/libreqos.h). The first problem ends the import
 * with one line, FILE:LINE and the column or key with its value.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "import/csv.h"
#include "import/json.h"
#include "common/bigmem.h"
#include "import/libreqos.h"

/* ---- class ids and rates -------------------------------------------- */

__u32 lqos_classid(__u32 k)
{
	return ((1 + k / 0xffff) << 16) | (1 + k % 0xffff);
}

int lqos_parse_mbps(const char *s, __u64 *bits)
{
	__u64 whole = 0, frac = 0;
	int nint = 0, nfrac = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, nint++)
		if (nint < 8)
			whole = whole * 10 + (__u64)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++)
			if (nfrac < 6)	/* 1e-6 Mbps is 1 bit/s: finer digits are noise */
				frac = frac * 10 + (__u64)(*p - '0');
	if (*p || (!nint && !nfrac) || nint > 7)
		return -1;
	for (int i = nfrac; i < 6; i++)
		frac *= 10;
	*bits = whole * 1000000 + frac;
	return 0;
}

/* ---- maps (import/lq_map.h) --------------------------------------- */

static bool same_node(const void *arg, __u32 idx, const void *key)
{
	const struct lqos *q = arg;

	return !strcmp(q->nodes[idx].name, key);
}

static bool same_circuit(const void *arg, __u32 idx, const void *key)
{
	const struct lqos *q = arg;

	return !strcmp(q->circ[idx].id, key);
}

static bool same_prefix(const void *arg, __u32 idx, const void *key)
{
	const struct lqos *q = arg;

	return !memcmp(&q->addr[idx].p, key, sizeof(struct lq_prefix));
}

static long node_find(const struct lqos *q, const char *name)
{
	return lq_map_find(&q->node_by_name, lq_hash(&q->node_by_name, name, strlen(name)), same_node, q, name);
}

/* ---- network.json ---------------------------------------------------- */

static const char *const dir_key[2] = { "downloadBandwidthMbps", "uploadBandwidthMbps" };

/* A JSON number of Mbps: the decimal text exactly, an exponent through a
 * double (1e3), in bit/s. */
static int json_mbps(const struct json_value *v, __u64 *bits)
{
	double d;

	if (v->type != JSON_NUMBER)
		return -1;
	if (!lqos_parse_mbps(v->str, bits))
		return 0;
	errno = 0;
	d = strtod(v->str, NULL);
	if (errno || !isfinite(d) || d < 0 || d >= 1e7)
		return -1;
	*bits = (__u64)llround(d * 1e6);
	return 0;
}

/* What a node without a bandwidth (or with 0) takes, as LibreQoS's
 * fix_zero_bandwidths does: its parent's, at the top the link's
 * (--root-mbps); 0 when there is none. */
static __u64 inherited_bw(const struct lqos *q, const struct lq_node *n, int d)
{
	int p = n->parent;

	while (p >= 0 && q->nodes[p].virt)	/* a virtual node shapes nothing */
		p = q->nodes[p].parent;
	return p >= 0 ? q->nodes[p].bw[d] : q->root_set[d];
}

static int node_bw_missing(struct lqos *q, const struct lq_node *n, const char *name, int d,
			   unsigned line, const char *what)
{
	char a[MSG_QUOTE_BUF], mb[32];
	__u64 bw = inherited_bw(q, n, d);

	if (!bw || q->strict)
		return lq_err(q, q->json_name, line, "node %s %s%s", QV(a, name), what,
			      bw ? "" : " (LibreQoS takes the link's: give --root-mbps DOWN/UP)");
	lq_sprint_mbps(bw, mb, sizeof(mb));
	return lq_warn(q, q->json_name, line, "node %s %s: %s Mbps taken, %s's, as LibreQoS does",
		       QV(a, name), what, mb, n->parent >= 0 ? "its parent" : "the link");
}

/* A node's bandwidth, capped at its parent's (at the top, the link's) as
 * LibreQoS's inheritBandwidthMaxes caps it. */
static int node_bandwidth(struct lqos *q, const struct json_value *node, const char *name,
			  struct lq_node *n)
{
	char a[MSG_QUOTE_BUF], b[MSG_QUOTE_BUF], what[96];

	for (int d = LQ_DOWN; d <= LQ_UP; d++) {
		const struct json_member *m = json_get(node, dir_key[d]);
		__u64 cap = inherited_bw(q, n, d);

		if (!m) {
			snprintf(what, sizeof(what), "has no \"%s\"", dir_key[d]);
			if (node_bw_missing(q, n, name, d, node->line, what))
				return -1;
			n->bw[d] = cap;
			continue;
		}
		if (json_mbps(&m->value, &n->bw[d]))
			return lq_err(q, q->json_name, m->line,
				      "node %s: \"%s\" %s is not a number of Mbps (like 1000 or 2.5)",
				      QV(a, name), dir_key[d],
				      m->value.type == JSON_NUMBER || m->value.type == JSON_STRING ?
				      QV(b, m->value.str) : json_type_name(m->value.type));
		if (!n->bw[d]) {
			snprintf(what, sizeof(what), "has \"%s\" 0", dir_key[d]);
			if (node_bw_missing(q, n, name, d, m->line, what))
				return -1;
			n->bw[d] = cap;
		}
		if (n->bw[d] < 8)
			return lq_err(q, q->json_name, m->line,
				      "node %s: \"%s\" %s is below 8 bit/s: a node needs bandwidth",
				      QV(a, name), dir_key[d], QV(b, m->value.str));
		if (cap && n->bw[d] > cap)
			n->bw[d] = cap;
	}
	return 0;
}

/* The keys of a node LibreQoS's own tools use and htbctl has no use for
 * are ignored ("type" goes into the class's comment). */
static int node_flags(struct lqos *q, const struct json_value *node, const char *name,
		      struct lq_node *n)
{
	const struct json_member *virt = json_get(node, "virtual");
	const struct json_member *type = json_get(node, "type");
	char a[MSG_QUOTE_BUF];

	if (virt && virt->value.type != JSON_BOOL)
		return lq_err(q, q->json_name, virt->line, "node %s: \"virtual\" is %s, not true or false",
			      QV(a, name), json_type_name(virt->value.type));
	n->virt = virt && virt->value.b;
	if (type && type->value.type == JSON_STRING && !(n->type = strdup(type->value.str)))
		return lq_err(q, q->json_name, 0, "out of memory");
	return 0;
}

static int add_nodes(struct lqos *q, const struct json_value *obj, int parent, int depth);

/* A key the import reads, given twice in one node: JSON leaves that open
 * and a reader keeps one silently (the first here, the last elsewhere),
 * so the operator decides. A pass per key read: linear in the node's
 * members. */
static int keys_once(struct lqos *q, const struct json_value *node, const char *name)
{
	static const char *const keys[] = { "downloadBandwidthMbps", "uploadBandwidthMbps",
					    "children", "virtual", "type" };
	char a[MSG_QUOTE_BUF];

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const struct json_member *first = NULL;

		for (unsigned i = 0; i < node->n; i++) {
			const struct json_member *m = &node->members[i];

			if (strcmp(m->key, keys[k]))
				continue;
			if (first)
				return lq_err(q, q->json_name, m->line,
					      "node %s: \"%s\" given twice (also line %u)", QV(a, name),
					      keys[k], first->line);
			first = m;
		}
	}
	return 0;
}

static int add_node(struct lqos *q, const struct json_member *m, int parent, int depth)
{
	const struct json_value *v = &m->value;
	const struct json_member *kids;
	char a[MSG_QUOTE_BUF];
	struct lq_node *n;
	long dup;
	__u32 h = lq_hash(&q->node_by_name, m->key, strlen(m->key));
	unsigned idx = q->nnodes;

	if (v->type != JSON_OBJECT)
		return lq_err(q, q->json_name, m->line, "node %s is %s, not an object", QV(a, m->key),
			      json_type_name(v->type));
	if (!m->key[0])
		return lq_err(q, q->json_name, m->line, "a node with an empty name");
	dup = lq_map_find(&q->node_by_name, h, same_node, q, m->key);
	if (dup >= 0)
		return lq_err(q, q->json_name, m->line,
			      "node name %s given twice (also line %u): ShapedDevices.csv's Parent Node could not tell them apart",
			      QV(a, m->key), q->nodes[dup].line);
	n = lq_node_new(q);
	if (!n || lq_map_add(&q->node_by_name, h, idx))
		return lq_err(q, q->json_name, 0, "out of memory");
	n->line = m->line;
	n->parent = parent;
	if (!(n->name = strdup(m->key)))
		return lq_err(q, q->json_name, 0, "out of memory");
	if (keys_once(q, v, m->key) || node_flags(q, v, m->key, n) ||
	    node_bandwidth(q, v, m->key, n))
		return -1;
	kids = json_get(v, "children");
	if (!kids)
		return 0;
	if (kids->value.type != JSON_OBJECT)
		return lq_err(q, q->json_name, kids->line, "node %s: \"children\" is %s, not an object",
			      QV(a, m->key), json_type_name(kids->value.type));
	return add_nodes(q, &kids->value, (int)idx, depth + 1);
}

static int add_nodes(struct lqos *q, const struct json_value *obj, int parent, int depth)
{
	if (depth > JSON_MAX_DEPTH)
		return lq_err(q, q->json_name, obj->line, "nodes nested deeper than %d levels",
			      JSON_MAX_DEPTH);
	for (unsigned i = 0; i < obj->n; i++)
		if (add_node(q, &obj->members[i], parent, depth))
			return -1;
	return 0;
}

static int read_network(struct lqos *q, const struct lqos_text *t)
{
	struct json_value root;
	char why[160];
	unsigned line = 0;
	int rc;

	if (json_parse(t->text, t->len, &root, why, sizeof(why), &line))
		return lq_err(q, t->name, line, "%s", why);
	if (root.type != JSON_OBJECT) {
		lq_err(q, t->name, root.line,
		       "the top is %s: network.json is an object of nodes ({} for a flat network)",
		       json_type_name(root.type));
		json_free(&root);
		return -1;
	}
	rc = add_nodes(q, &root, -1, 0);
	json_free(&root);
	q->flat = !rc && !q->nnodes;
	return rc ? rc : lqos_place_nodes(q);
}

/* ---- ShapedDevices.csv: the header ---------------------------------- */

enum lq_col {
	COL_CIRCUIT_ID, COL_CIRCUIT_NAME, COL_DEVICE_ID, COL_DEVICE_NAME, COL_PARENT, COL_MAC,
	COL_IPV4, COL_IPV6, COL_DOWN_MIN, COL_UP_MIN, COL_DOWN_MAX, COL_UP_MAX, COL_COMMENT,
	COL_SQM, NCOLS
};

static const struct {
	const char *name;
	bool required;
} cols[NCOLS] = {
	[COL_CIRCUIT_ID] = { "Circuit ID", true },
	[COL_CIRCUIT_NAME] = { "Circuit Name", false },
	[COL_DEVICE_ID] = { "Device ID", false },
	[COL_DEVICE_NAME] = { "Device Name", false },
	[COL_PARENT] = { "Parent Node", true },
	[COL_MAC] = { "MAC", false },
	[COL_IPV4] = { "IPv4", true },
	[COL_IPV6] = { "IPv6", true },
	[COL_DOWN_MIN] = { "Download Min Mbps", true },
	[COL_UP_MIN] = { "Upload Min Mbps", true },
	[COL_DOWN_MAX] = { "Download Max Mbps", true },
	[COL_UP_MAX] = { "Upload Max Mbps", true },
	[COL_COMMENT] = { "Comment", false },
	[COL_SQM] = { "sqm", false },
};

/* Where each column is in the file: the header's order. */
struct lq_header {
	int at[NCOLS];		/* field index, -1: absent */
	unsigned nfields, line;
	unsigned need;		/* fields a row needs: up to the last required column */
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* A name as LibreQoS compares header names: its letters and digits,
 * lower-cased ("circuit_id" is "Circuit ID"). */
static void header_key(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (; *s && n + 1 < len; s++)
		if (isalnum((unsigned char)*s))
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
}

/* LibreQoS takes a rate column with or without its "Mbps". */
static bool same_column(const char *field, const char *col)
{
	char f[64], k[64];
	size_t n;

	header_key(field, f, sizeof(f));
	header_key(col, k, sizeof(k));
	if (!strcmp(f, k))
		return true;
	n = strlen(f);
	return n + 4 == strlen(k) && !strncmp(f, k, n) && !strcmp(k + n, "mbps");
}

static int read_header(struct lqos *q, struct csv *c, struct lq_header *h)
{
	char a[MSG_QUOTE_BUF];
	int rc = csv_next(c);

	if (rc < 0)
		return lq_err(q, q->csv_name, c->err_line, "%s", c->err);
	if (!rc)
		return lq_err(q, q->csv_name, 0, "no header row and no circuits: an empty file");
	h->line = c->rec_line;
	h->nfields = c->nfield;
	for (int k = 0; k < NCOLS; k++)
		h->at[k] = -1;
	for (unsigned i = 0; i < c->nfield; i++) {
		const char *f = trim(c->field[i]);

		for (int k = 0; k < NCOLS; k++) {
			if (!same_column(f, cols[k].name))
				continue;
			if (h->at[k] >= 0)
				return lq_err(q, q->csv_name, h->line, "column %s given twice in the header",
					      QV(a, cols[k].name));
			h->at[k] = (int)i;
		}
	}
	h->need = 0;
	for (int k = 0; k < NCOLS; k++) {
		if (cols[k].required && h->at[k] < 0)
			return lq_err(q, q->csv_name, h->line,
				      "the header has no %s column (LibreQoS's header: Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment)",
				      QV(a, cols[k].name));
		if (cols[k].required && (unsigned)h->at[k] + 1 > h->need)
			h->need = (unsigned)h->at[k] + 1;
	}
	return 0;
}

/* fields a row may have past the header's: unquoted commas in Comment */
#define LQ_EXTRA_FIELDS	64

/* ---- ShapedDevices.csv: one row -------------------------------------- */

struct lq_row {
	unsigned line;
	const char *v[NCOLS];	/* trimmed; "" for a column the row lacks */
	__u64 min[2], max[2];
	int parent;
};

/*
 * The row's fields by column. A row may stop after its last required
 * column (Comment and sqm left out). A row with more fields than the
 * header has a comma in an unquoted Comment (LibreQoS's own example has
 * "Down=cake, Up=fq_codel"): the columns after Comment are counted from
 * the end.
 */
static int map_fields(struct lqos *q, const struct csv *c, const struct lq_header *h,
		      struct lq_row *r)
{
	unsigned extra = 0;

	if (c->nfield < h->need)
		return lq_err(q, q->csv_name, c->rec_line, "%u fields, the header (line %u) has %u",
			      c->nfield, h->line, h->nfields);
	if (c->nfield > h->nfields) {
		if (h->at[COL_COMMENT] < 0)
			return lq_err(q, q->csv_name, c->rec_line,
				      "%u fields, the header (line %u) has %u (a field with a comma needs double quotes)",
				      c->nfield, h->line, h->nfields);
		extra = c->nfield - h->nfields;
	}
	for (int k = 0; k < NCOLS; k++) {
		int at = h->at[k];

		if (at > h->at[COL_COMMENT] && h->at[COL_COMMENT] >= 0)
			at += (int)extra;
		r->v[k] = at >= 0 && (unsigned)at < c->nfield ? trim(c->field[at]) : "";
	}
	return 0;
}

static int row_rates(struct lqos *q, struct lq_row *r)
{
	static const int mins[2] = { COL_DOWN_MIN, COL_UP_MIN }, maxs[2] = { COL_DOWN_MAX, COL_UP_MAX };
	char a[MSG_QUOTE_BUF], b[MSG_QUOTE_BUF];

	for (int d = LQ_DOWN; d <= LQ_UP; d++) {
		const int col[2] = { mins[d], maxs[d] };
		__u64 *val[2] = { &r->min[d], &r->max[d] };

		for (int i = 0; i < 2; i++) {
			const char *s = r->v[col[i]];

			if (lqos_parse_mbps(s, val[i]))
				return lq_err(q, q->csv_name, r->line,
					      "%s %s is not a number of Mbps (like 100 or 2.5)",
					      cols[col[i]].name, QV(a, s));
			if (!*val[i])
				return lq_err(q, q->csv_name, r->line, "%s %s is zero: a circuit needs a rate above 0",
					      cols[col[i]].name, QV(a, s));
			if (*val[i] < 8)
				return lq_err(q, q->csv_name, r->line,
					      "%s %s is below 8 bit/s (0.000008 Mbps), the least rate a class can have",
					      cols[col[i]].name, QV(a, s));
		}
		if (r->min[d] > r->max[d])
			return lq_err(q, q->csv_name, r->line, "%s %s is above %s %s",
				      cols[mins[d]].name, QV(a, r->v[mins[d]]), cols[maxs[d]].name,
				      QV(b, r->v[maxs[d]]));
	}
	return 0;
}

/* 0, 1 to leave the row out (its Parent Node is not in network.json, as
 * LibreQoS leaves such a circuit unshaped), or -1. */
static int row_parent(struct lqos *q, struct lq_row *r)
{
	char a[MSG_QUOTE_BUF], f[MSG_QUOTE_BUF];
	long n;

	r->parent = -1;
	if (!r->v[COL_PARENT][0])
		return 0;
	if (q->flat && !q->strict) {
		/* LibreQoS forces every Parent Node to none in a flat network */
		if (!q->flat_said++ && lq_warn(q, q->csv_name, r->line,
					       "Parent Node %s ignored, as every one is: %s is flat ({}), and LibreQoS ignores the column then",
					       QV(a, r->v[COL_PARENT]), QV(f, q->json_name)))
			return -1;
		return 0;
	}
	n = node_find(q, r->v[COL_PARENT]);
	if (n < 0)
		return lq_lenient(q, q->csv_name, r->line,
				  "the row is left out, its device unshaped, as LibreQoS leaves it",
				  "Parent Node %s is not a node of %s%s",
				  QV(a, r->v[COL_PARENT]), QV(f, q->json_name),
				  q->nnodes ? "" : " (it has none: a flat network leaves Parent Node empty)") ?: 1;
	/* a virtual node's circuits hang on its nearest shaped ancestor */
	if (q->nodes[n].shaped >= 0 && q->nodes[q->nodes[n].shaped].level >= HTB_MAX_DEPTH)
		return lq_err(q, q->csv_name, r->line,
			      "Parent Node %s is at HTB level %d: a circuit below it would be one more than HTB's %d",
			      QV(a, r->v[COL_PARENT]), HTB_MAX_DEPTH, HTB_MAX_DEPTH);
	r->parent = (int)n;
	return 0;
}

/* A circuit's devices share its parent (LibreQoS refuses a difference)
 * and its rates (LibreQoS warns and takes the first row's). */
static int same_as_circuit(struct lqos *q, const struct lq_row *r, const struct lq_circuit *c)
{
	static const int colof[2][2] = { { COL_DOWN_MIN, COL_DOWN_MAX }, { COL_UP_MIN, COL_UP_MAX } };
	char a[MSG_QUOTE_BUF], b[MSG_QUOTE_BUF], was[32];

	if (r->parent != c->parent)
		return lq_err(q, q->csv_name, r->line,
			      "Parent Node %s of circuit %s differs from line %u (%s): the devices of one circuit share its parent",
			      QV(a, r->v[COL_PARENT]), QV(b, c->id), c->line,
			      c->parent < 0 ? "none" : q->nodes[c->parent].name);
	for (int d = LQ_DOWN; d <= LQ_UP; d++) {
		const __u64 got[2] = { r->min[d], r->max[d] }, had[2] = { c->min[d], c->max[d] };

		for (int i = 0; i < 2; i++) {
			if (got[i] == had[i])
				continue;
			lq_sprint_mbps(had[i], was, sizeof(was));
			return lq_lenient(q, q->csv_name, r->line,
					  "the circuit keeps that line's, as LibreQoS takes the first",
					  "%s %s of circuit %s differs from line %u ('%s')",
					  cols[colof[d][i]].name, QV(a, r->v[colof[d][i]]), QV(b, c->id),
					  c->line, was);
		}
	}
	return 0;
}

/* The row's circuit: a new one, or the one an earlier row began. */
static int row_circuit(struct lqos *q, const struct lq_row *r, unsigned *ci)
{
	const char *id = r->v[COL_CIRCUIT_ID];
	__u32 h = lq_hash(&q->circ_by_id, id, strlen(id));
	long at = lq_map_find(&q->circ_by_id, h, same_circuit, q, id);
	struct lq_circuit *c;

	if (!id[0])
		return lq_err(q, q->csv_name, r->line, "Circuit ID is empty: every row needs one");
	if (at >= 0) {
		*ci = (unsigned)at;
		q->circ[at].rows++;
		return same_as_circuit(q, r, &q->circ[at]);
	}
	q->circ = lq_grow(q->circ, &q->circcap, q->ncirc, sizeof(*q->circ));
	if (!q->circ || lq_map_add(&q->circ_by_id, h, q->ncirc))
		return lq_err(q, q->csv_name, 0, "out of memory");
	c = &q->circ[q->ncirc];
	*ci = q->ncirc++;
	c->line = r->line;
	c->rows = 1;
	c->parent = r->parent;
	memcpy(c->min, r->min, sizeof(c->min));
	memcpy(c->max, r->max, sizeof(c->max));
	c->id = strdup(id);
	c->name = strdup(r->v[COL_CIRCUIT_NAME]);
	if (!c->id || !c->name)
		return lq_err(q, q->csv_name, 0, "out of memory");
	return 0;
}

/* "100.64.0.1" or "fdd7:b724::/56" of the family of the column. */
static int parse_prefix(struct lqos *q, const struct lq_row *r, int col, const char *word,
			struct lq_prefix *p)
{
	char addr[INET6_ADDRSTRLEN + 8], a[MSG_QUOTE_BUF], net[INET6_ADDRSTRLEN];
	const char *slash = strchr(word, '/');
	size_t alen = slash ? (size_t)(slash - word) : strlen(word);
	int af = col == COL_IPV4 ? AF_INET : AF_INET6, other = col == COL_IPV4 ? AF_INET6 : AF_INET;
	unsigned max = af == AF_INET ? 32 : 128, plen = max;
	bool host_bits = false;
	__u8 tmp[16];

	memset(p, 0, sizeof(*p));
	if (alen >= sizeof(addr))
		return lq_err(q, q->csv_name, r->line, "%s %s is not an address", cols[col].name,
			      QV(a, word));
	memcpy(addr, word, alen);
	addr[alen] = '\0';
	if (inet_pton(af, addr, p->addr) != 1)
		return lq_err(q, q->csv_name, r->line, "%s %s is not an %s address%s", cols[col].name,
			      QV(a, word), cols[col].name,
			      inet_pton(other, addr, tmp) == 1 ? " (it is in the other family's column)" : "");
	if (slash) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || errno || v > max || slash[1] < '0' || slash[1] > '9')
			return lq_err(q, q->csv_name, r->line, "%s %s has an invalid prefix length (0..%u)",
				      cols[col].name, QV(a, word), max);
		plen = (unsigned)v;
	}
	for (unsigned i = 0; i < max / 8; i++) {
		unsigned keep = plen >= (i + 1) * 8 ? 8 : plen > i * 8 ? plen - i * 8 : 0;
		__u8 mask = keep ? (__u8)(0xff << (8 - keep)) : 0;

		host_bits |= (p->addr[i] & ~mask) != 0;
		p->addr[i] &= mask;
	}
	if (host_bits)
		inet_ntop(af, p->addr, net, sizeof(net));
	if (host_bits && lq_lenient(q, q->csv_name, r->line,
				    "taken as that prefix, which LibreQoS's maps match",
				    "%s %s has host bits set (did you mean %s/%u?)",
				    cols[col].name, QV(a, word), net, plen))
		return -1;
	p->af = (__u8)af;
	p->plen = (__u8)plen;
	return 0;
}

/* A row's device as its addresses share it. */
struct lq_dev {
	char *name, *id;
	bool copied;		/* name and id are copies an address owns */
};

static int add_addr(struct lqos *q, const struct lq_row *r, int col, const char *word,
		    unsigned ci, struct lq_dev *dev)
{
	struct lq_prefix p;
	struct lq_addr *e;
	long dup;
	__u32 h;

	if (parse_prefix(q, r, col, word, &p))
		return -1;
	h = lq_hash(&q->addr_by_prefix, &p, sizeof(p));
	/* a prefix claimed again is kept as a claim: which one the config
	 * gets is decided once the classes are in order (resolve_claims) */
	dup = lq_map_find(&q->addr_by_prefix, h, same_prefix, q, &p);
	q->addr = lq_grow(q->addr, &q->addrcap, q->naddr, sizeof(*q->addr));
	if (!q->addr || (dup < 0 && lq_map_add(&q->addr_by_prefix, h, q->naddr)))
		return lq_err(q, q->csv_name, 0, "out of memory");
	e = &q->addr[q->naddr];
	memset(e, 0, sizeof(*e));
	e->first_of = dup < 0 ? 0 : (unsigned)dup + 1;
	e->p = p;
	e->circuit = ci;
	e->line = r->line;
	q->naddr++;
	/* the row's device, one copy for all its addresses (a copy each was
	 * a fifth of a 100,000-circuit import's page faults); the first
	 * address owns it */
	e->owns_dev = !dev->copied;
	if (e->owns_dev) {
		dev->copied = true;
		dev->name = strdup(r->v[COL_DEVICE_NAME]);
		dev->id = strdup(r->v[COL_DEVICE_ID]);
	}
	e->dev_name = dev->name;
	e->dev_id = dev->id;
	if (!e->dev_name || !e->dev_id)
		return lq_err(q, q->csv_name, 0, "out of memory");
	return 0;
}

/* "100.64.0.1, 100.64.0.14": a list in one field, blanks around the
 * commas allowed, an empty item skipped. */
static int row_addrs(struct lqos *q, const struct lq_row *r, unsigned ci)
{
	static const int acol[2] = { COL_IPV4, COL_IPV6 };
	struct lq_dev dev = { 0 };
	unsigned before = q->naddr;

	for (int i = 0; i < 2; i++) {
		/* split in place: the row's fields are the reader's copy, and
		 * nothing reads this one after */
		char *list = (char *)r->v[acol[i]], *save = NULL;

		for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			w = trim(w);
			if (*w && add_addr(q, r, acol[i], w, ci, &dev))
				return -1;
		}
	}
	if (q->naddr == before)
		return lq_lenient(q, q->csv_name, r->line,
				  "its circuit's class is written, and nothing is classified into it for this device, as in LibreQoS",
				  "no address: a device needs an IPv4 or an IPv6 address (or both)");
	return 0;
}

static int read_row(struct lqos *q, const struct csv *c, const struct lq_header *h)
{
	struct lq_row r = { .line = c->rec_line };
	unsigned ci = 0;

	int rc;

	if (map_fields(q, c, h, &r) || row_rates(q, &r))
		return -1;
	rc = row_parent(q, &r);
	if (rc)
		return rc < 0 ? -1 : 0;
	q->rows++;
	if (row_circuit(q, &r, &ci))
		return -1;
	return row_addrs(q, &r, ci);
}

static int read_devices(struct lqos *q, const struct lqos_text *t)
{
	struct lq_header h = { .line = 0 };
	struct csv c;
	int rc;

	csv_init(&c, t->text, t->len);
	rc = read_header(q, &c, &h);
	/* a Comment may hold unquoted commas (LibreQoS's own example does):
	 * that many fields past the header's, not millions (10 MB of commas
	 * cost 162 MB at 52b6d7f) */
	c.max_fields = h.nfields + LQ_EXTRA_FIELDS;
	while (!rc) {
		int got = csv_next(&c);

		if (got < 0)
			rc = lq_err(q, q->csv_name, c.err_line, "%s", c.err);
		if (got <= 0)
			break;
		rc = read_row(q, &c, &h);
	}
	csv_free(&c);
	if (!rc && !q->ncirc)
		rc = lq_err(q, q->csv_name, 0, "no circuits: the file has only its header");
	return rc;
}

/* ---- the tree: rates of nodes and the root, class ids ---------------- */

/* A class id's place in lqos_classid's order, or -1 for one it never
 * gives (the root's and the default class's places are taken). */
static long id_index(__u32 id)
{
	__u32 maj = id >> 16, min = id & 0xffff;
	__u64 k = (__u64)(maj - 1) * 0xffff + (min - 1);

	return maj && min && k >= 2 && k < CONFIG_MAX_CLASSES ? (long)k : -1;
}

/* used[k]: the id of place k is free (0), taken by a class of this import
 * (ID_TAKEN), or an id the earlier config gave a class (ID_PREV): kept for
 * that class's circuit or node, and given to a new class only when no
 * other id is left, so that a reload does not hand a deleted subscriber's
 * counters to a new one. */
enum { ID_FREE, ID_TAKEN, ID_PREV };

static void reserve_prev(const struct lqos *q, unsigned char *used)
{
	for (unsigned i = 0; i < q->nprev; i++) {
		long k = id_index(q->prev[i].classid);

		if (k >= 0)
			used[k] = ID_PREV;
	}
}

/* --keep-ids: the class a circuit or node had in the earlier config. */
static __u32 kept_id(struct lqos *q, char kind, const char *key, unsigned char *used)
{
	__u32 id = lqos_prev_id(q, kind, key);
	long k = id ? id_index(id) : -1;

	if (k < 0 || used[k] == ID_TAKEN)
		return 0;
	used[k] = ID_TAKEN;
	q->kept++;
	return id;
}

/* The next free id after *next; past the last, an earlier config's. */
static __u32 fresh_id(unsigned char *used, __u32 *next)
{
	while (*next < CONFIG_MAX_CLASSES && used[*next] != ID_FREE)
		(*next)++;
	if (*next == CONFIG_MAX_CLASSES)
		for (*next = 2; used[*next] == ID_TAKEN; (*next)++)
			;
	used[*next] = ID_TAKEN;
	return lqos_classid((*next)++);
}

/* Ids: the root 1:1, the default class 1:2, then with --keep-ids the
 * earlier config's id of each circuit and node it had; every other class
 * the next id not taken, in the order lqos_write writes the classes (each
 * shaped node followed by its circuits, then the root's own circuits). */
static int number_classes(struct lqos *q)
{
	__u64 total = 2 + (__u64)q->ncirc;
	__u32 next = 2;
	unsigned char *used;
	char f[MSG_QUOTE_BUF];

	for (unsigned i = 0; i < q->nnodes; i++)
		total += !q->nodes[i].virt;
	if (total > CONFIG_MAX_CLASSES)
		return lq_err(q, q->csv_name, 0,
			      "%llu classes (circuits, nodes of %s, the root and the default class): an htbctl config holds at most %u",
			      (unsigned long long)total, QV(f, q->json_name), CONFIG_MAX_CLASSES);
	q->nclasses = (__u32)total;
	/* total <= CONFIG_MAX_CLASSES: fresh_id always finds a free place */
	used = calloc(CONFIG_MAX_CLASSES, 1);
	if (!used)
		return lq_err(q, q->csv_name, 0, "out of memory");
	reserve_prev(q, used);
	for (unsigned i = 0; i < q->nnodes; i++)
		if (!q->nodes[i].virt)
			q->nodes[i].classid = kept_id(q, 'n', q->nodes[i].name, used);
	for (unsigned c = 0; c < q->ncirc; c++)
		q->circ[c].classid = kept_id(q, 'c', q->circ[c].id, used);
	for (unsigned b = 0; b <= q->nnodes; b++) {
		if (b < q->nnodes && !q->nodes[b].virt && !q->nodes[b].classid)
			q->nodes[b].classid = fresh_id(used, &next);
		for (unsigned i = q->cstart[b]; i < q->cstart[b + 1]; i++)
			if (!q->circ[q->corder[i]].classid)
				q->circ[q->corder[i]].classid = fresh_id(used, &next);
	}
	free(used);
	return 0;
}

/* Prefixes as text without inet_ntop and printf, which took a third of
 * a 100,000-circuit import's time (callgrind: 21% inet_ntop, 15% the
 * rest of this function): "a.b.c.d/n", and IPv6 as inet_ntop writes it
 * (RFC 5952: the first longest run of two or more zero groups as "::"). */
static char *put_dec(char *out, unsigned v)
{
	char d[10];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*out++ = d[--n];
	return out;
}

static char *v4_text(const __u8 *a, char *out)
{
	for (int i = 0; i < 4; i++) {
		out = put_dec(out, a[i]);
		if (i < 3)
			*out++ = '.';
	}
	return out;
}

static char *v6_text(const __u8 *a, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int best = -1, blen = 1, run = 0;

	for (int g = 0; g < 8; g++) {
		run = (a[2 * g] | a[2 * g + 1]) ? 0 : run + 1;
		if (run > blen)
			best = g - run + 1, blen = run;
	}
	for (int g = 0; g < 8; g++) {
		unsigned v = (unsigned)a[2 * g] << 8 | a[2 * g + 1];
		int shift = 12;

		if (g == best) {
			*out++ = ':';
			if (g == 0)
				*out++ = ':';
			g += blen - 1;
			continue;
		}
		while (shift > 0 && !(v >> shift))
			shift -= 4;
		for (; shift >= 0; shift -= 4)
			*out++ = hex[(v >> shift) & 15];
		if (g < 7)
			*out++ = ':';
	}
	return out;
}

const char *lqos_prefix_text(const struct lq_prefix *p, char *buf, size_t len)
{
	static const __u8 zero[10];
	char *e;

	/* inet_ntop writes an address with five zero groups first as IPv4
	 * (::ffff:a.b.c.d): left to it */
	if (len < LQ_PREFIX_BUF || (p->af == AF_INET6 && !memcmp(p->addr, zero, sizeof(zero)))) {
		char a[INET6_ADDRSTRLEN];

		if (!inet_ntop(p->af, p->addr, a, sizeof(a)))
			snprintf(a, sizeof(a), "?");
		snprintf(buf, len, "%s/%u", a, p->plen);
		return buf;
	}
	e = p->af == AF_INET ? v4_text(p->addr, buf) : v6_text(p->addr, buf);
	*e++ = '/';
	*put_dec(e, p->plen) = '\0';
	return buf;
}

/* One claim dropped, with its warning: w keeps the prefix. */
static int drop_claim(struct lqos *q, struct lq_addr *lost, const struct lq_addr *w)
{
	char pf[LQ_PREFIX_BUF], a[MSG_QUOTE_BUF], b[MSG_QUOTE_BUF];

	lost->dropped = true;
	q->nkept_addr--;
	if (lost->circuit == w->circuit)
		return lq_warn(q, q->csv_name, lost->line,
			       "%s %s of circuit %s is also at line %u: written once",
			       lost->p.af == AF_INET6 ? "IPv6" : "IPv4", lqos_prefix_text(&lost->p, pf, sizeof(pf)),
			       QV(a, q->circ[lost->circuit].id), w->line);
	return lq_warn(q, q->csv_name, lost->line,
		       "%s %s of circuit %s is also at line %u (circuit %s), which keeps it: "
		       "the circuit LibreQoS maps last does",
		       lost->p.af == AF_INET6 ? "IPv6" : "IPv4", lqos_prefix_text(&lost->p, pf, sizeof(pf)),
		       QV(a, q->circ[lost->circuit].id), w->line, QV(b, q->circ[w->circuit].id));
}

/*
 * A prefix in two circuits' rows: LibreQoS warns ("is duplicate") and
 * maps its addresses circuit by circuit in the order it walks its tree
 * (lqos_claim_order), each mapping replacing the one before, so the
 * circuit mapped last keeps the address: of a prefix's claims that one is
 * kept and the others are dropped with a warning naming both lines. The
 * same prefix twice in one circuit is written once.
 */
static int resolve_claims(struct lqos *q)
{
	q->nkept_addr = q->naddr;
	for (unsigned k = 0; k < q->naddr; k++) {
		struct lq_addr *e = &q->addr[k], *first, *w;

		if (!e->first_of)
			continue;
		first = &q->addr[e->first_of - 1];
		w = &q->addr[first->winner ? first->winner - 1 : e->first_of - 1];
		if (e->circuit != w->circuit && q->circ[e->circuit].rank > q->circ[w->circuit].rank) {
			first->winner = k + 1;
			if (drop_claim(q, w, e))
				return -1;
		} else if (drop_claim(q, e, w)) {
			return -1;
		}
	}
	return 0;
}

int lqos_parse(struct lqos *q, const struct lqos_text *csv, const struct lqos_text *json,
	       const struct lqos_text *prev)
{
	q->csv_name = csv->name;
	q->json_name = json->name;
	if (lq_map_seed(&q->node_by_name) || lq_map_seed(&q->circ_by_id) ||
	    lq_map_seed(&q->addr_by_prefix) || lq_map_seed(&q->prev_by_key))
		return lq_err(q, csv->name, 0, "no random bytes for the hash: %s", strerror(errno));
	q->defrate = 1000000;	/* the default class's guarantee: 1 Mbit/s */
	if (prev) {
		q->prev_name = prev->name;
		if (lqos_read_prev(q, prev))
			return -1;
	}
	if (read_network(q, json) || read_devices(q, csv) || lqos_generate_pn(q) ||
	    lqos_node_rates(q) || number_classes(q) || lqos_claim_order(q))
		return -1;
	return resolve_claims(q);
}

void lqos_free(struct lqos *q)
{
	for (unsigned i = 0; i < q->nnodes; i++) {
		free(q->nodes[i].name);
		free(q->nodes[i].type);
	}
	for (unsigned i = 0; i < q->ncirc; i++) {
		free(q->circ[i].id);
		free(q->circ[i].name);
	}
	for (unsigned i = 0; i < q->nwarn; i++)
		free(q->warns[i]);
	big_free(q->warns);
	for (unsigned i = 0; i < q->naddr; i++) {
		if (q->addr[i].owns_dev) {
			free(q->addr[i].dev_name);
			free(q->addr[i].dev_id);
		}
	}
	big_free(q->nodes);
	big_free(q->circ);
	big_free(q->addr);
	for (unsigned i = 0; i < q->nprev; i++)
		free(q->prev[i].key);
	free(q->prev);
	lq_map_free(&q->prev_by_key);
	lq_map_free(&q->node_by_name);
	lq_map_free(&q->circ_by_id);
	lq_map_free(&q->addr_by_prefix);
	free(q->corder);
	free(q->cstart);
	memset(q, 0, sizeof(*q));
}

/* ---- the files ------------------------------------------------------- */

/* Either file at most: 100,000 generated circuits (130,000 devices) are
 * 15 MB, so the config's 1,048,576 classes fit in a sixth of it. */
#define LQ_MAX_FILE (256ull << 20)

static int slurp(const struct ctx *ctx, const char *file, char **text, size_t *len)
{
	char f[MSG_QUOTE_BUF];
	struct stat st;
	size_t got = 0;
	/* O_NONBLOCK: a FIFO's open would wait for a writer before fstat
	 * could refuse it (a regular file's reads ignore the flag) */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &st)) {
		p_err(ctx, "%s: %s", QV(f, file), strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || (__u64)st.st_size > LQ_MAX_FILE) {
		p_err(ctx, "%s: %s", QV(f, file),
		      S_ISREG(st.st_mode) ? "larger than 256 MiB" : file_kind(st.st_mode));
		goto fail;
	}
	*text = big_calloc((size_t)st.st_size + 1, 1);	/* huge pages: fewer faults */
	if (!*text) {
		p_err(ctx, "%s: out of memory", QV(f, file));
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, *text + got, (size_t)st.st_size - got);

		if (n <= 0) {
			p_err(ctx, "%s: %s", QV(f, file), n ? strerror(errno) : "it shrank while read");
			big_free(*text);
			goto fail;
		}
		got += (size_t)n;
	}
	(*text)[got] = '\0';
	*len = got;
	close(fd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int lqos_read_files(const struct ctx *ctx, struct lqos *q, const char *csv_file,
		    const char *json_file, const char *prev_file)
{
	struct lqos_text csv = { .name = csv_file }, json = { .name = json_file },
			 prev = { .name = prev_file };
	char *ctext = NULL, *jtext = NULL, *ptext = NULL;
	int rc = -1;

	if (slurp(ctx, json_file, &jtext, &json.len) || slurp(ctx, csv_file, &ctext, &csv.len) ||
	    (prev_file && slurp(ctx, prev_file, &ptext, &prev.len)))
		goto out;
	csv.text = ctext;
	json.text = jtext;
	prev.text = ptext;
	rc = lqos_parse(q, &csv, &json, prev_file ? &prev : NULL);
	if (rc)
		p_err(ctx, "%s", q->err);
out:
	big_free(ctext);
	big_free(jtext);
	big_free(ptext);
	return rc;
}
