/* SPDX-License-Identifier: GPL-2.0 */
/* rtnetlink basics (libmnl): see netlink/nl.c. */
#ifndef HTBCTL_NL_H
#define HTBCTL_NL_H

#include <linux/types.h>
#include <linux/netlink.h>

#include "netlink/qdisc.h"	/* struct nlerr */

#define NL_BUF (64 * 1024)

struct nl {
	struct mnl_socket *sk;
	unsigned int portid;
	unsigned int seq;
	char *buf;
};

typedef int (*nl_msg_cb)(const struct nlmsghdr *nlh, void *data);

void nl_set_err(struct nlerr *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int nl_open(struct nl *nl, struct nlerr *e);
void nl_close(struct nl *nl);
/* Sends nlh and reads its ack or the whole dump; replies go to cb. */
int nl_talk(struct nl *nl, struct nlmsghdr *nlh, nl_msg_cb cb, void *data,
	    struct nlerr *e, const char *what);
/* A tcmsg request in buf. */
struct nlmsghdr *tc_msg(void *buf, int type, int flags, int ifindex,
			__u32 parent, __u32 handle);

/* A tc message's TCA_KIND ("" if none), pointing into nlh. */
const char *tc_msg_kind(const struct nlmsghdr *nlh);

#endif
