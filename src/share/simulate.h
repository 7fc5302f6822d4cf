/* SPDX-License-Identifier: GPL-2.0 */
/* htbctl simulate: a config and offered rates -> the fluid ideal
 * (src/share/fluid.h), printed like check. */
#ifndef HTBCTL_SIMULATE_H
#define HTBCTL_SIMULATE_H

#include <stdbool.h>
#include <linux/types.h>

#include "common/common.h"

/* One CLASS=RATE word, parsed; the class is checked against the config
 * by simulate_run. */
struct sim_offer {
	const char *word;	/* as given, for messages */
	bool all;		/* all=RATE: every leaf */
	__u32 classid;
	__u64 rate;		/* bytes/s; FLUID_INF: max (backlogged) */
};

struct sim_args {
	const char *file;
	struct sim_offer *offers;	/* in command-line order: later ones win */
	int noffers;
};

/* Loads the config, applies the offers, solves and prints. Returns an
 * exit code: EXIT_FAIL for a rejected config, EXIT_USAGE for an offer
 * naming a class the config lacks or an inner class. */
int simulate_run(const struct ctx *ctx, const struct sim_args *a);

#endif
