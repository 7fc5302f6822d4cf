// SPDX-License-Identifier: GPL-2.0
/* The ifb device of ingress shaping (netlink/link.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <libmnl/libmnl.h>

#include "netlink/link.h"
#include "netlink/nl.h"

static struct nlmsghdr *link_msg(void *buf, int type, int flags, int ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh;
}

static int link_request(struct nlmsghdr *(*build)(struct nl *nl, const void *arg),
			const void *arg, const char *what, struct nlerr *e)
{
	struct nl nl;
	int rc;

	if (nl_open(&nl, e))
		return e->err ? e->err : -EIO;
	rc = nl_talk(&nl, build(&nl, arg), NULL, NULL, e, what);
	nl_close(&nl);
	return rc;
}

/* NLM_F_EXCL: a device of that name, whoever made it, is never taken. */
static struct nlmsghdr *new_ifb(struct nl *nl, const void *arg)
{
	struct nlmsghdr *nlh = link_msg(nl->buf, RTM_NEWLINK,
					NLM_F_CREATE | NLM_F_EXCL, 0);
	struct nlattr *info;

	mnl_attr_put_strz(nlh, IFLA_IFNAME, arg);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "ifb");
	mnl_attr_nest_end(nlh, info);
	return nlh;
}

static struct nlmsghdr *set_up(struct nl *nl, const void *arg)
{
	struct nlmsghdr *nlh = link_msg(nl->buf, RTM_NEWLINK, 0, *(const int *)arg);
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return nlh;
}

static struct nlmsghdr *del_link(struct nl *nl, const void *arg)
{
	return link_msg(nl->buf, RTM_DELLINK, 0, *(const int *)arg);
}

int link_create_ifb(const char *name, int *ifindex, struct nlerr *e)
{
	char what[64];
	int rc;

	snprintf(what, sizeof(what), "creating ifb device %s", name);
	rc = link_request(new_ifb, name, what, e);
	if (rc)
		return rc;
	*ifindex = (int)if_nametoindex(name);
	if (!*ifindex) {
		nl_set_err(e, -ENODEV, "%s: it vanished after it was made", what);
		return -ENODEV;
	}
	snprintf(what, sizeof(what), "setting %s up", name);
	return link_request(set_up, ifindex, what, e);
}

int link_delete(int ifindex, struct nlerr *e)
{
	return link_request(del_link, &ifindex, "deleting the ifb device", e);
}

struct kind_q {
	char *kind;
};

static int info_cb(const struct nlattr *a, void *data)
{
	struct kind_q *q = data;

	if (mnl_attr_get_type(a) == IFLA_INFO_KIND &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		snprintf(q->kind, LINK_KIND_LEN, "%s", mnl_attr_get_str(a));
	return MNL_CB_OK;
}

static int kind_attr_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == IFLA_LINKINFO)
		mnl_attr_parse_nested(a, info_cb, data);
	return MNL_CB_OK;
}

static int kind_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWLINK)
		mnl_attr_parse(nlh, sizeof(struct ifinfomsg), kind_attr_cb, data);
	return 0;
}

int link_kind(int ifindex, char *kind, struct nlerr *e)
{
	struct kind_q q = { .kind = kind };
	struct nl nl;
	int rc;

	kind[0] = '\0';
	if (nl_open(&nl, e))
		return e->err ? e->err : -EIO;
	rc = nl_talk(&nl, link_msg(nl.buf, RTM_GETLINK, 0, ifindex), kind_cb, &q, e,
		     "reading the device's kind");
	nl_close(&nl);
	return rc;
}

#ifndef TC_H_CLSACT
#define TC_H_CLSACT TC_H_INGRESS
#endif

struct redirect_req {
	int ifindex, ifb_ifindex, prog_fd;
	__u32 prio, handle;
	const char *prog_name;
};

/* mirred: egress redirect to the ifb, the packet stolen from ingress. */
static void put_mirred(struct nlmsghdr *nlh, int ifb_ifindex)
{
	struct tc_mirred m = {
		.action = TC_ACT_STOLEN, .eaction = TCA_EGRESS_REDIR,
		.ifindex = (__u32)ifb_ifindex,
	};
	struct nlattr *acts, *act, *opts;

	acts = mnl_attr_nest_start(nlh, TCA_BPF_ACT);
	act = mnl_attr_nest_start(nlh, 1);	/* the first (and only) action */
	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "mirred");
	opts = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
	mnl_attr_put(nlh, TCA_MIRRED_PARMS, sizeof(m), &m);
	mnl_attr_nest_end(nlh, opts);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
}

static struct nlmsghdr *new_redirect(struct nl *nl, const void *arg)
{
	const struct redirect_req *q = arg;
	struct nlmsghdr *nlh = tc_msg(nl->buf, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL,
				      q->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
				      q->handle);
	struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct nlattr *opts;

	tcm->tcm_info = TC_H_MAKE(q->prio << 16, htons(ETH_P_ALL));
	mnl_attr_put_strz(nlh, TCA_KIND, "bpf");
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_BPF_FD, (__u32)q->prog_fd);
	mnl_attr_put_strz(nlh, TCA_BPF_NAME, q->prog_name);
	put_mirred(nlh, q->ifb_ifindex);
	mnl_attr_nest_end(nlh, opts);
	return nlh;
}

int link_redirect_to_ifb(int ifindex, __u32 prio, __u32 handle, int prog_fd,
			 const char *prog_name, int ifb_ifindex, struct nlerr *e)
{
	struct redirect_req q = {
		.ifindex = ifindex, .ifb_ifindex = ifb_ifindex, .prog_fd = prog_fd,
		.prio = prio, .handle = handle, .prog_name = prog_name,
	};

	return link_request(new_redirect, &q, "attaching the redirect to the ifb", e);
}
