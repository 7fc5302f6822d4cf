/* SPDX-License-Identifier: GPL-2.0 */
/* Sparse flows: a flow with nothing queued leaves ahead of the class's
 * backlog (docs/design.md, "Sparse flows"). */
#ifndef HTB_FLOWS_H
#define HTB_FLOWS_H

#include "htb/env.h"

/* ---- Sparse flows (docs/design.md, "Sparse flows") ---- */

/* Where the flow's sparse packets end, at the class's rate, once this
 * one of cost ns is added: now + what it has ahead + cost;
 * HTB_FLOW_BULK while a packet of it waits behind the backlog. A new
 * flow (no state) has nothing ahead. */
HTB_INLINE __u64 htb_flow_end(const struct htb_flow *fl, __u64 now, __u64 cost)
{
	if (!fl)
		return now + cost;
	if (fl->vfinish == HTB_FLOW_BULK)
		return fl->last_stamp > now ? HTB_FLOW_BULK : now + cost;
	return HTB_MAX(fl->vfinish, now) + cost;
}

/* The lane's clock once it takes a packet costing lane ns there. */
HTB_INLINE __u64 htb_lane_next(const struct htb_class_state *st, __u64 now,
			       __u64 lane)
{
	return HTB_MAX(st->sparse_next, now) + lane;
}

/* When a packet may leave through the leaf's sparse lane (caller holds
 * the leaf's lock), ~0 if its flow is not sparse: the flow has at most one
 * full frame ahead with it (end, htb_flow_end); the lane, at a quarter of
 * the rate, lets it go once its clock is at most its burst ahead (lane:
 * the packet's cost there); never before floor (the packet's own valid
 * stamp and its flow's last one). */
HTB_INLINE __u64 htb_sparse_T(const struct htb_class_conf *c,
			      const struct htb_class_state *st, __u64 now,
			      __u64 end, __u64 lane, __u64 floor)
{
	__u64 burst = (HTB_SPARSE_BURST_PKTS * c->mtu_ns) << HTB_SPARSE_SHIFT;
	__u64 next = htb_lane_next(st, now, lane), T = now;

	if (end == HTB_FLOW_BULK || end - now > c->mtu_ns)
		return ~0ull;
	if (next > now + burst)
		T = next - burst;	/* waits its turn in the lane */
	return HTB_MAX(T, floor);
}

/* The flow's state after a packet leaving at T (caller holds the leaf's
 * lock): vfinish end, or HTB_FLOW_BULK if it waits behind the backlog.
 * Returns the new vfinish. */
HTB_INLINE __u64 htb_flow_update(struct htb_flow *fl, __u64 T, __u64 end,
				 int queued)
{
	__u64 v = queued ? HTB_FLOW_BULK : end;

	if (fl) {
		fl->vfinish = v;
		if (T > fl->last_stamp)
			fl->last_stamp = T;
	}
	return v;
}

#endif /* HTB_FLOWS_H */
