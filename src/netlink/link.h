/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ifb device of ingress shaping (docs/loader.md "Directions"):
 * created, brought up, asked for its kind and deleted over rtnetlink
 * (libmnl), one request and its ack per call, as netlink/qdisc.c does.
 */
#ifndef HTBCTL_LINK_H
#define HTBCTL_LINK_H

#include <linux/types.h>
#include "netlink/qdisc.h"	/* struct nlerr */

#define LINK_KIND_LEN 16

/* Creates an ifb named name and sets it up; *ifindex gets its index.
 * -EEXIST when a device of that name is there (nothing changed). */
int link_create_ifb(const char *name, int *ifindex, struct nlerr *e);
/* The kind of device ifindex ("ifb", "veth"; "" for a device without
 * one, as a physical NIC). */
int link_kind(int ifindex, char *kind, struct nlerr *e);
/* Deletes the device ifindex. */
int link_delete(int ifindex, struct nlerr *e);
/*
 * The redirect of ifindex's ingress to the ifb: a cls_bpf filter at
 * clsact ingress, pref prio, handle handle, running prog_fd (not
 * direct-action: the program matches every packet) with a mirred action
 * that redirects to the ifb's egress. mirred, not the program's
 * bpf_redirect(), since an ifb takes only packets marked redirected
 * (skb->redirected), which on 6.1 mirred sets and bpf_redirect() does not.
 */
int link_redirect_to_ifb(int ifindex, __u32 prio, __u32 handle, int prog_fd,
			 const char *prog_name, int ifb_ifindex, struct nlerr *e);

#endif
