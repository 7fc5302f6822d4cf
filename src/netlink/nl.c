// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink basics shared by netlink/qdisc.c (the root tree) and import/read.c
 * (reading a kernel HTB setup): a socket per call, one request and its ack
 * or dump, the kernel's extended ack in the error text.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "netlink/nl.h"
void nl_set_err(struct nlerr *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	e->err = err;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

int nl_open(struct nl *nl, struct nlerr *e)
{
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->buf = malloc(NL_BUF);
	nl->sk = mnl_socket_open(NETLINK_ROUTE);
	if (!nl->buf || !nl->sk) {
		nl_set_err(e, -errno, "rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	if (mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		nl_set_err(e, -errno, "rtnetlink bind: %s", strerror(errno));
		goto fail;
	}
	/* Best effort: the kernel's reason for a refusal, and short acks. */
	mnl_socket_setsockopt(nl->sk, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sk);
	nl->seq = (unsigned int)time(NULL);
	return 0;
fail:
	if (nl->sk)
		mnl_socket_close(nl->sk);
	free(nl->buf);
	nl->sk = NULL;
	nl->buf = NULL;
	return -1;
}

void nl_close(struct nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	free(nl->buf);
	nl->sk = NULL;
	nl->buf = NULL;
}

/* The extended ack's text, if the kernel sent one. */
static const char *extack_msg(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	unsigned int off = sizeof(*err);
	const struct nlattr *a;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if (MNL_ALIGN(off) + sizeof(struct nlmsghdr) >= nlh->nlmsg_len)
		return NULL;
	mnl_attr_for_each(a, nlh, MNL_ALIGN(off)) {
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			return mnl_attr_get_str(a);
	}
	return NULL;
}

/*
 * Sends nlh (NLM_F_ACK is added) and reads until its ack, error or
 * NLMSG_DONE; every other reply goes to cb. what names the request in
 * error messages.
 */
int nl_talk(struct nl *nl, struct nlmsghdr *nlh, nl_msg_cb cb,
		   void *data, struct nlerr *e, const char *what)
{
	/* NLM_F_REPLACE shares its bit with NLM_F_ROOT: only GETs dump. */
	bool dump = (nlh->nlmsg_type & 3) == 2 &&
		    (nlh->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;

	nlh->nlmsg_seq = ++nl->seq;
	if (!dump)
		nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0) {
		nl_set_err(e, -errno, "%s: %s", what, strerror(errno));
		return -errno;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl->sk, nl->buf, NL_BUF);
		const struct nlmsghdr *r;
		int len;

		if (n < 0) {
			nl_set_err(e, -errno, "%s: %s", what, strerror(errno));
			return -errno;
		}
		len = (int)n;
		for (r = (const struct nlmsghdr *)nl->buf; mnl_nlmsg_ok(r, len);
		     r = mnl_nlmsg_next(r, &len)) {
			if (r->nlmsg_seq != nl->seq || r->nlmsg_pid != nl->portid)
				continue;
			if (r->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *me = mnl_nlmsg_get_payload(r);
				const char *ext;

				if (me->error == 0)
					return 0;
				ext = extack_msg(r);
				nl_set_err(e, me->error, "%s: %s%s%s", what,
					strerror(-me->error), ext ? ": " : "",
					ext ? ext : "");
				return me->error;
			}
			if (r->nlmsg_type == NLMSG_DONE) {
				int derr = 0;

				if (mnl_nlmsg_get_payload_len(r) >= sizeof(int))
					derr = *(int *)mnl_nlmsg_get_payload(r);
				if (derr < 0) {
					nl_set_err(e, derr, "%s: %s", what, strerror(-derr));
					return derr;
				}
				return 0;
			}
			if (cb) {
				int rc = cb(r, data);

				if (rc < 0) {
					nl_set_err(e, rc, "%s: %s", what, strerror(-rc));
					return rc;
				}
			}
		}
	}
}

struct nlmsghdr *tc_msg(void *buf, int type, int flags, int ifindex,
			       __u32 parent, __u32 handle)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	return nlh;
}

const char *tc_msg_kind(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg))
		if (mnl_attr_get_type(a) == TCA_KIND &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			return mnl_attr_get_str(a);
	return "";
}
