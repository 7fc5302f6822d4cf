// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: import libreqos's readers and converter on arbitrary
 * bytes. The input is ShapedDevices.csv, then a line "===", then
 * network.json (without that line: the bytes as each file, the other one
 * fixed). Whatever the import accepts, the config it writes must be one
 * htbctl's config parser accepts (the promise `htbctl check` relies on);
 * a rejected input leaves its one line in q.err. The earlier config for
 * --keep-ids is the input itself, so its comment reader runs too.
 * --strict, --generated-pn and --root-mbps vary with the inputs' sizes.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "import/json.h"
#include "import/libreqos.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	return 0;
}

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static const char fixed_csv[] =
	"Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,"
	"Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment\n"
	"1,A,1,d,AP,,100.64.0.1,2001:db8::/56,1,1,10,5,\n";
static const char fixed_json[] = "{\"AP\": {\"downloadBandwidthMbps\": 100, \"uploadBandwidthMbps\": 50}}";

static void import_once(const char *csv, size_t clen, const char *json, size_t jlen,
			const char *prev, size_t plen)
{
	struct lqos_text c = { "d.csv", csv, clen }, j = { "n.json", json, jlen }, p = { "p.ini", prev, plen };
	/* the options from the sizes: both modes, with and without
	 * generated parent nodes and a link */
	struct lqos q = { .strict = clen & 1, .gen_pn = (unsigned)(jlen % 4),
			  .root_set = { clen & 2 ? 100000000 : 0, clen & 2 ? 20000000 : 0 } };
	struct htb_config cfg;
	char *out = NULL;
	size_t olen = 0;
	FILE *f;

	if (lqos_parse(&q, &c, &j, &p) == 0) {
		CHECK(q.ncirc > 0 && q.nclasses >= 2 + q.ncirc && q.nclasses <= 2 + q.ncirc + q.nnodes);
		q.upload_dev = "up0";
		f = open_memstream(&out, &olen);
		CHECK(f && lqos_write(&q, f) == 0);
		fclose(f);
		CHECK(config_parse_string(out, olen, "imported", &cfg, devnull) == 0);
		CHECK(cfg.nclasses == q.nclasses);
		config_free(&cfg);
		free(out);
	} else {
		CHECK(q.err[0] && !strchr(q.err, '\n'));
	}
	lqos_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *sep = memmem(s, size, "\n===\n", 5);
	struct json_value v;
	char err[200];
	unsigned line;

	if (sep) {
		import_once(s, (size_t)(sep - s) + 1, sep + 5, size - (size_t)(sep - s) - 5, s, size);
	} else {
		import_once(s, size, fixed_json, sizeof(fixed_json) - 1, s, size);
		import_once(fixed_csv, sizeof(fixed_csv) - 1, s, size, s, size);
	}
	if (json_parse(s, size, &v, err, sizeof(err), &line) == 0)
		json_free(&v);
	else
		CHECK(line >= 1 && err[0]);
	return 0;
}
