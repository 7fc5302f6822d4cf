// SPDX-License-Identifier: GPL-2.0
/*
 * Ingress shaping on a host (docs/design.md "Directions"): attached to the
 * clsact ingress of the device whose downloads are shaped, as a cls_bpf
 * filter that is not direct-action, it matches every packet, and the
 * filter's mirred action sends it to the egress of the ifb htbctl
 * created, where htb_egress and fq shape it; the ifb then hands it back to
 * this device's receive path. Not bpf_redirect(): an ifb drops what is not
 * marked redirected, and on 6.1 only mirred marks it (the helper does on
 * 6.18); measured in the VM, where every packet was lost.
 *
 * The stamp is cleared first: what a received skb->tstamp holds is no
 * departure time of this host. It is an RX time on the realtime clock when
 * a socket asked for timestamps, which fq on 6.1 would take as a time
 * beyond its horizon and drop (sch_fq.c fq_enqueue; the shaping program
 * only ignores it as a floor, and leaves it on packets it passes
 * unshaped, such as ARP), or a sender's stamp from another namespace of
 * this host (veth keeps a delivery time), which would delay the packet by
 * the sender's pacing rather than this device's classes. Zero is "no
 * stamp": fq sends it now, htb_egress schedules from now.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tc")
int htb_redirect(struct __sk_buff *skb)
{
	skb->tstamp = 0;
	return -1;	/* a match (the filter's classid): its action runs */
}

char LICENSE[] SEC("license") = "GPL";
