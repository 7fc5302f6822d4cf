// SPDX-License-Identifier: GPL-2.0
/* htbctl import dev IFACE | script FILE [dev NAME] [-o FILE] |
 * libreqos CSV JSON [import libreqos's options, take_libreqos_opts's table]
 * [-o FILE]: arguments, the source read, the config written (src/import/
 * does the work). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "import/import.h"
#include "import/libreqos.h"

struct import_job {
	struct imp_tree *t;
	const char *source;
	int nclasses;
};

static int fill_config(const struct ctx *ctx, FILE *f, void *arg)
{
	struct import_job *j = arg;

	j->nclasses = import_write(ctx, j->t, j->source, f);
	return j->nclasses ? 0 : -1;
}

/* Strips "-o FILE" out of argv. */
static int take_output(const struct ctx *ctx, int *argc, char **argv, const char **file)
{
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "-o")) {
			argv[n++] = argv[i];
			continue;
		}
		if (i + 1 >= *argc) {
			p_err(ctx, "-o needs a file");
			return -1;
		}
		*file = argv[++i];
	}
	*argc = n;
	return 0;
}

static int fill_libreqos(const struct ctx *ctx, FILE *f, void *arg)
{
	return lqos_write(arg, f);
}

/* import libreqos's options: each with a value, or a flag ("1"). */
struct lq_opts {
	const char *upload_dev, *keep_ids, *root_mbps, *gen_pn, *gen_pn_mbps, *strict;
};

/* Strips the options out of argv (argv keeps the rest, in order). */
static int take_libreqos_opts(const struct ctx *ctx, int *argc, char **argv, struct lq_opts *o)
{
	const struct {
		const char *name, **val, *what;	/* what: NULL for a flag */
	} opts[] = {
		{ "--upload-dev", &o->upload_dev, "device" },
		{ "--keep-ids", &o->keep_ids, "file" },
		{ "--root-mbps", &o->root_mbps, "DOWN/UP in Mbps" },
		{ "--generated-pn", &o->gen_pn, "count" },
		{ "--generated-pn-mbps", &o->gen_pn_mbps, "DOWN/UP in Mbps" },
		{ "--strict", &o->strict, NULL },
	};
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		size_t k = 0;

		while (k < sizeof(opts) / sizeof(opts[0]) && strcmp(argv[i], opts[k].name))
			k++;
		if (k == sizeof(opts) / sizeof(opts[0])) {
			argv[n++] = argv[i];
			continue;
		}
		if (opts[k].what && i + 1 >= *argc) {
			p_err(ctx, "%s needs a %s", argv[i], opts[k].what);
			return -1;
		}
		if (*opts[k].val) {
			p_err(ctx, "%s given twice", argv[i]);
			return -1;
		}
		*opts[k].val = opts[k].what ? argv[++i] : "1";
	}
	*argc = n;
	return 0;
}

/* "10000/2000": DOWN/UP Mbps, as LibreQoS's lqos.conf gives the link
 * (downlink_bandwidth_mbps, uplink_bandwidth_mbps), each at least 1. */
static int parse_root_mbps(const char *s, __u64 bits[2])
{
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : 0;
	char down[32];

	if (!slash || n >= sizeof(down))
		return -1;
	memcpy(down, s, n);
	down[n] = '\0';
	if (lqos_parse_mbps(down, &bits[LQ_DOWN]) || lqos_parse_mbps(slash + 1, &bits[LQ_UP]))
		return -1;
	return bits[LQ_DOWN] >= 1000000 && bits[LQ_UP] >= 1000000 ? 0 : -1;
}

/* --generated-pn COUNT, 0..4096; by default one per CPU of this machine,
 * as LibreQoS makes one per CPU queue of the shaper it runs on. */
static int parse_gen_pn(const struct ctx *ctx, const char *s, unsigned *count)
{
	char v[MSG_QUOTE_BUF], *end;
	unsigned long n;
	long cpus;

	if (!s) {
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
		*count = cpus > 0 ? (unsigned)cpus : 1;
		return 0;
	}
	errno = 0;
	n = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || n > 4096) {
		p_err(ctx, "--generated-pn %s: expected a count of nodes, 0..4096 (LibreQoS makes one per CPU queue)",
		      msg_quote(v, sizeof(v), s));
		return -1;
	}
	*count = (unsigned)n;
	return 0;
}

/* The device's name goes into the config as a value: what the kernel
 * would refuse as a device name (and so anything that could break the
 * line) is refused. */
static int check_libreqos_opts(const struct ctx *ctx, const struct lq_opts *o, struct lqos *q)
{
	char v[MSG_QUOTE_BUF];
	const char *why;

	if (o->upload_dev && !ifname_valid(o->upload_dev, &why)) {
		p_err(ctx, "--upload-dev %s: %s", msg_quote(v, sizeof(v), o->upload_dev), why);
		return -1;
	}
	q->upload_dev = o->upload_dev;
	if (o->root_mbps && parse_root_mbps(o->root_mbps, q->root_set)) {
		p_err(ctx, "--root-mbps %s: expected DOWN/UP in Mbps, each at least 1 (like 10000/2000)",
		      msg_quote(v, sizeof(v), o->root_mbps));
		return -1;
	}
	if (o->gen_pn_mbps && parse_root_mbps(o->gen_pn_mbps, q->gen_bw)) {
		p_err(ctx, "--generated-pn-mbps %s: expected DOWN/UP in Mbps, each at least 1 (like 1000/1000)",
		      msg_quote(v, sizeof(v), o->gen_pn_mbps));
		return -1;
	}
	q->strict = o->strict;
	return parse_gen_pn(ctx, o->gen_pn, &q->gen_pn);
}

int libreqos_take_opts(const struct ctx *ctx, int *argc, char **argv, struct lqos *q,
		       const char **keep_ids, bool *given)
{
	struct lq_opts o = { 0 };

	if (take_libreqos_opts(ctx, argc, argv, &o) || check_libreqos_opts(ctx, &o, q))
		return -1;
	*keep_ids = o.keep_ids;
	*given = o.upload_dev || o.keep_ids || o.root_mbps || o.gen_pn || o.gen_pn_mbps || o.strict;
	return 0;
}

/* What was written: a line on stderr, or with -j and -o an object on
 * stdout (without -o stdout is the config itself). */
static void libreqos_summary(const struct ctx *ctx, const struct lqos *q, const char *file)
{
	struct printer p;
	char f[MSG_QUOTE_BUF];

	for (unsigned i = 0; i < q->nwarn; i++)
		p_warn(ctx, "import: %s", q->warns[i]);
	p_info(ctx, "import: %u circuits (%u devices, %u addresses), %u nodes: %u classes",
	       q->ncirc, q->rows, q->nkept_addr, q->nnodes, q->nclasses);
	if (q->prev_name)
		p_info(ctx, "import: %u of them kept their class id from %s", q->kept,
		       msg_quote(f, sizeof(f), q->prev_name));
	if (!ctx->json || !file)
		return;
	printer_init(&p, true, stdout);
	print_open_object(&p, NULL);
	print_string(&p, "file", NULL, file);
	print_u64(&p, "circuits", NULL, q->ncirc);
	print_u64(&p, "devices", NULL, q->rows);
	print_u64(&p, "addresses", NULL, q->nkept_addr);
	print_u64(&p, "warnings", NULL, q->nwarn);
	print_u64(&p, "nodes", NULL, q->nnodes);
	print_u64(&p, "classes", NULL, q->nclasses);
	if (q->prev_name)
		print_u64(&p, "kept_ids", NULL, q->kept);
	print_close_object(&p);
	printer_finish(&p);
}

/* import libreqos ShapedDevices.csv network.json: both files read and
 * checked before anything is written. */
static int import_libreqos(const struct ctx *ctx, int argc, char **argv, const char *file)
{
	struct lqos q = { 0 };
	const char *keep_ids;
	bool given;
	int rc;

	if (libreqos_take_opts(ctx, &argc, argv, &q, &keep_ids, &given))
		return EXIT_USAGE;
	if (argc < 3) {
		p_err(ctx, "import libreqos needs ShapedDevices.csv and network.json");
		return EXIT_USAGE;
	}
	if (argc > 3) {
		char v[MSG_QUOTE_BUF];

		p_err(ctx, "unexpected argument %s after import libreqos CSV JSON",
		      msg_quote(v, sizeof(v), argv[3]));
		return EXIT_USAGE;
	}
	if (lqos_read_files(ctx, &q, argv[1], argv[2], keep_ids)) {
		lqos_free(&q);
		return EXIT_FAIL;
	}
	if (file)
		rc = write_file_atomic(ctx, file, fill_libreqos, &q);
	else
		rc = lqos_write(&q, stdout) || fflush(stdout) || ferror(stdout);
	if (rc && !file)
		p_err(ctx, "writing the config to stdout: %s", strerror(errno));
	else if (!rc)
		libreqos_summary(ctx, &q, file);
	lqos_free(&q);
	return rc ? EXIT_FAIL : EXIT_OK;
}

int do_import(const struct ctx *ctx, int argc, char **argv)
{
	const char *dev = NULL, *script = NULL, *file = NULL;
	struct kwarg kw[] = {
		{ "dev", &dev, false },
		{ "script", &script, false },
	};
	struct imp_tree t;
	struct import_job j = { .t = &t };
	char scratch_dev[32], source[4200];
	int rc;

	if (take_output(ctx, &argc, argv, &file))
		return EXIT_USAGE;
	if (argc && !strcmp(argv[0], "libreqos"))
		return import_libreqos(ctx, argc, argv, file);
	if (parse_kwargs(ctx, argc, argv, kw, 2))
		return EXIT_USAGE;
	if (!dev && !script) {
		p_err(ctx, "import needs dev IFACE, script FILE or libreqos CSV JSON");
		return EXIT_USAGE;
	}
	if (script) {
		if (import_script_apply(ctx, script, dev, scratch_dev, sizeof(scratch_dev)))
			return EXIT_FAIL;
		dev = scratch_dev;
		snprintf(source, sizeof(source), "the tc script %s (device %s)", script, dev);
	} else {
		snprintf(source, sizeof(source), "the live HTB tree on %s", dev);
	}
	if (import_read(ctx, dev, &t)) {
		import_free(&t);
		return EXIT_FAIL;
	}
	j.source = source;
	if (file)
		rc = write_file_atomic(ctx, file, fill_config, &j);
	else
		rc = fill_config(ctx, stdout, &j) || fflush(stdout) || ferror(stdout);
	import_free(&t);
	return rc ? EXIT_FAIL : EXIT_OK;
}
