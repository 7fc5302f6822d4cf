// SPDX-License-Identifier: GPL-2.0
/*
 * Test hooks (docs/loader.md "Test hooks"), linked only into
 * build/htbctl-test (loader/loader.h): HTBCTL_TEST_FAIL=STEP makes load
 * fail right after STEP as if its next step had failed, so the rollback
 * runs; HTBCTL_TEST_FAIL=crash-STEP exits on the spot after STEP, as a
 * crash would, leaving what a crash leaves. STEP: pins, qdisc, clsact,
 * attach; for two directions download-STEP and upload-STEP, and for their
 * reload download-prepare, upload-prepare, download-flip, upload-flip
 * (dirs.c). HTBCTL_TEST_QDISC=KIND: load installs KIND instead of fq.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/loader.h"

bool loader_test_fail(const struct ctx *ctx, const char *step)
{
	const char *v = getenv("HTBCTL_TEST_FAIL");

	if (!v)
		return false;
	if (!strncmp(v, "crash-", 6) && !strcmp(v + 6, step))
		_exit(9);
	if (strcmp(v, step))
		return false;
	p_err(ctx, "failing after step '%s' (HTBCTL_TEST_FAIL)", step);
	return true;
}

const char *loader_test_qdisc(void)
{
	const char *v = getenv("HTBCTL_TEST_QDISC");

	return v && *v ? v : NULL;
}
