// SPDX-License-Identifier: GPL-2.0
/*
 * Drives src/netlink/qdisc.c directly for tests/net/qdisc.sh (built by that script):
 *   qdisc_helper probe KIND             -> "yes" / "no"
 *   qdisc_helper cycle IFACE KIND       save the root tree, install KIND as
 *                                       the root (mq + KIND per TX queue on a
 *                                       multi-queue device), print the qdiscs,
 *                                       restore, exit 0 if all went well
 *   qdisc_helper save IFACE             print what would be saved
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netlink/qdisc.h"

int main(int argc, char **argv)
{
	struct qdisc_tree t;
	struct nlerr e = { 0 };
	__u32 ntxq = 1, h;
	const char *why;
	int ifindex, rc;

	if (argc == 3 && !strcmp(argv[1], "probe")) {
		rc = qdisc_kind_supported(argv[2]);
		printf("%s\n", rc > 0 ? "yes" : rc == 0 ? "no" : "unknown");
		return rc < 0;
	}
	if (argc < 3)
		return 2;
	ifindex = if_nametoindex(argv[2]);
	if (!ifindex) {
		fprintf(stderr, "no device %s\n", argv[2]);
		return 1;
	}
	if (qdisc_tree_save(ifindex, &t, &e)) {
		fprintf(stderr, "save: %s\n", e.msg);
		return 1;
	}
	why = qdisc_tree_unrestorable(&t);
	printf("saved: root %s default=%d qdiscs=%u classes=%u filters=%u bytes=%u%s%s\n",
	       t.root_kind, t.is_default, t.nqdiscs, t.nclasses, t.nfilters, t.len,
	       why ? " unrestorable: " : "", why ? why : "");
	if (!strcmp(argv[1], "save"))
		return 0;
	if (strcmp(argv[1], "cycle") || argc != 4)
		return 2;
	if (link_info(ifindex, &ntxq, &e)) {
		fprintf(stderr, "link: %s\n", e.msg);
		return 1;
	}
	h = qdisc_free_handle(ifindex);
	printf("installing %s with handle %x: on %u tx queues\n", argv[3], h >> 16, ntxq);
	fflush(stdout);
	if (qdisc_install_root(ifindex, h, ntxq, argv[3], NULL, &e)) {
		fprintf(stderr, "install: %s\n", e.msg);
		if (qdisc_tree_restore(ifindex, &t, h, &e))
			fprintf(stderr, "restore after failed install: %s\n", e.msg);
		return 1;
	}
	printf("--- installed\n");
	fflush(stdout);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "tc qdisc show dev %s", argv[2]);
	if (system(cmd))
		return 1;
	if (qdisc_tree_restore(ifindex, &t, h, &e)) {
		fprintf(stderr, "restore: %s\n", e.msg);
		return 1;
	}
	printf("--- restored\n");
	qdisc_tree_free(&t);
	return 0;
}
