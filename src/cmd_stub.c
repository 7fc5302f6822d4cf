// SPDX-License-Identifier: GPL-2.0
/* Commands whose issue has not landed yet: they say so and fail. Each
 * moves to its own file when implemented. */
#include "commands.h"

#define NOT_YET(fn, name)						\
int fn(const struct ctx *ctx, int argc, char **argv)			\
{									\
	p_err(ctx, "'%s' is not implemented yet", name);		\
	return EXIT_FAIL;						\
}

NOT_YET(do_daemon, "daemon")
