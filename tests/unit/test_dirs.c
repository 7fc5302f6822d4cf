// SPDX-License-Identifier: GPL-2.0
/* Directions (docs/loader.md "Directions"): the ifb's name derived from
 * the device's, and the meta's direction names. */
#include <criterion/criterion.h>
#include <string.h>

#include "loader/loader.h"

Test(ifb_name, short_names_get_a_prefix)
{
	char b[16];

	dirs_ifb_name("eth0", b, sizeof(b));
	cr_assert_str_eq(b, "ifb-eth0");
	dirs_ifb_name("abcdefghijk", b, sizeof(b));	/* 4 + 11 = 15 bytes: fits */
	cr_assert_str_eq(b, "ifb-abcdefghijk");
}

Test(ifb_name, long_names_fit_and_differ)
{
	static const char *const names[] = {
		"enp0s31f6abcde", "enp0s31f6abcdf", "abcdefghijkl", "abcdefghijklmno",
	};
	char b[4][16];

	for (int i = 0; i < 4; i++) {
		dirs_ifb_name(names[i], b[i], sizeof(b[i]));
		cr_assert_eq(strlen(b[i]), 15, "%s -> %s", names[i], b[i]);
		cr_assert(ifname_valid(b[i], NULL), "%s", b[i]);
		cr_assert(!strncmp(b[i], "ifb-", 4) && !strncmp(b[i] + 4, names[i], 7), "%s", b[i]);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(b[i], b[j], "%s and %s", names[i], names[j]);
	}
	/* deterministic: the same name, the same ifb */
	dirs_ifb_name(names[0], b[1], sizeof(b[1]));
	cr_assert_str_eq(b[0], b[1]);
}

Test(meta_dir, names)
{
	cr_assert_null(meta_dir_name(META_DIR_ONE));
	cr_assert_str_eq(meta_dir_name(META_DIR_DOWNLOAD), "download");
	cr_assert_str_eq(meta_dir_name(META_DIR_UPLOAD), "upload");
}
