// SPDX-License-Identifier: GPL-2.0
/* htbctl simulate config FILE [offer CLASS=RATE ...]: parses the words;
 * share/simulate.c does the rest. Needs no privileges. */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "config/config.h"
#include "share/fluid.h"
#include "share/simulate.h"
#include "common/units.h"

/* RATE of an offer (qword: the whole word, quoted): tc units, or max /
 * inf for a backlogged class. */
static int parse_offer_rate(const struct ctx *ctx, const char *qword, const char *s,
			    __u64 *rate)
{
	char qr[MSG_QUOTE_BUF];
	enum unit_err e;

	if (!strcmp(s, "max") || !strcmp(s, "inf")) {
		*rate = FLUID_INF;
		return 0;
	}
	e = parse_rate(s, rate);
	if (e == UNIT_OK)
		return 0;
	p_err(ctx, "offer %s: rate %s: %s (tc units as 15mbit, or max)", qword,
	      msg_quote(qr, sizeof(qr), s), unit_strerror(e));
	return -1;
}

/* One CLASS=RATE word into o. */
static int parse_offer(const struct ctx *ctx, char *word, struct sim_offer *o)
{
	char qw[MSG_QUOTE_BUF], qc[MSG_QUOTE_BUF];
	char *eq = strchr(word, '=');
	int rc;

	msg_quote(qw, sizeof(qw), word);
	o->word = word;
	if (!eq) {
		p_err(ctx, "offer %s: no '=' (CLASS=RATE)", qw);
		return -1;
	}
	*eq = '\0';	/* the class part alone, for its parser and message */
	o->all = !strcmp(word, "all");
	rc = o->all ? 0 : config_parse_classid(word, &o->classid);
	if (rc)
		p_err(ctx, "offer %s: %s is no class id (MAJOR:MINOR in hex) nor 'all'",
		      qw, msg_quote(qc, sizeof(qc), word));
	*eq = '=';
	return rc ? -1 : parse_offer_rate(ctx, qw, eq + 1, &o->rate);
}

/* config FILE and offer WORDS..., in any order; after `offer` every word
 * up to the next keyword is an offer. */
static int parse_args(const struct ctx *ctx, int argc, char **argv, struct sim_args *a)
{
	char q[MSG_QUOTE_BUF];
	bool offers = false;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "config")) {
			if (i + 1 >= argc || a->file) {
				p_err(ctx, a->file ? "'config' given twice" : "'config' needs a value");
				return -1;
			}
			a->file = argv[++i];
			offers = false;
		} else if (!strcmp(argv[i], "offer")) {
			offers = true;
		} else if (!offers) {
			p_err(ctx, "unexpected argument %s", msg_quote(q, sizeof(q), argv[i]));
			return -1;
		} else if (parse_offer(ctx, argv[i], &a->offers[a->noffers++])) {
			return -1;
		}
	}
	if (!a->file)
		p_err(ctx, "missing 'config'");
	return a->file ? 0 : -1;
}

int do_simulate(const struct ctx *ctx, int argc, char **argv)
{
	struct sim_args a = { .offers = calloc(argc + 1, sizeof(*a.offers)) };
	int rc;

	if (!a.offers) {
		p_err(ctx, "out of memory");
		return EXIT_FAIL;
	}
	rc = parse_args(ctx, argc, argv, &a) ? EXIT_USAGE : simulate_run(ctx, &a);
	free(a.offers);
	return rc;
}
