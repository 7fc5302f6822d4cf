// SPDX-License-Identifier: GPL-2.0
/* Filling the datapath's maps: src/loader/maps_fill.h. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "loader/maps_fill.h"
#include "htb/rate.h"

__s64 htb_bytes_to_ns(__u64 bytes, __u64 rate_Bps)
{
	unsigned __int128 ns;

	if (!rate_Bps)
		return 0;
	ns = (unsigned __int128)bytes * HTB_NSEC_PER_SEC / rate_Bps;
	return ns > (unsigned __int128)INT64_MAX ? INT64_MAX : (__s64)ns;
}

__u64 htb_limit_ns(__u64 limit_ns, __u64 ceil_Bps)
{
	__u64 floor = (__u64)htb_bytes_to_ns((__u64)HTB_LIMIT_FRAMES * HTB_CODEL_MTU, ceil_Bps);

	if (floor > HTB_LIMIT_FLOOR_MAX_NS)
		floor = HTB_LIMIT_FLOOR_MAX_NS;
	if (!limit_ns)
		limit_ns = HTB_DEFAULT_LIMIT_NS;
	return limit_ns > floor ? limit_ns : floor;
}

/* A bucket's time: capped at HTB_BUFFER_MAX_NS. A config's burst beyond
 * it is refused (config/resolve.c); only a default burst at a rate below
 * 2.4 kbit/s (80 KB in 274.9 s) reaches the cap. */
static __s64 buffer_ns(__u64 bytes, __u64 rate_Bps)
{
	__s64 ns = htb_bytes_to_ns(bytes, rate_Bps);

	return ns > (__s64)HTB_BUFFER_MAX_NS ? (__s64)HTB_BUFFER_MAX_NS : ns;
}

/* The byte sum at which a linear class's batch is due (struct
 * htb_class_conf.batch_lin): the fewest length-adjusted bytes whose rate
 * or ceil cost reaches HTB_BATCH_NS, so that a byte sum is due exactly
 * where the sum of its costs would be. 0 for a class whose cost is not
 * linear in the length (ATM cells, an mpu, a negative overhead, two
 * overheads). */
static __u32 batch_lin_of(const struct htb_class_conf *c)
{
	const struct htb_ratecfg *r[2] = { &c->rate, &c->ceil };
	unsigned __int128 b, best = 1u << 30;	/* + a packet stays in 32 bits */
	int i;

	if (c->rate.linklayer != HTB_LINKLAYER_ETHERNET ||
	    c->ceil.linklayer != HTB_LINKLAYER_ETHERNET || c->rate.mpu ||
	    c->ceil.mpu || c->rate.overhead < 0 ||
	    c->rate.overhead != c->ceil.overhead || c->rate.overhead > (1 << 20))
		return 0;
	for (i = 0; i < 2; i++) {
		if (!r[i]->mult || r[i]->shift > 63)
			return 0;
		b = ((unsigned __int128)HTB_BATCH_NS << r[i]->shift) + r[i]->mult - 1;
		b /= r[i]->mult;
		if (b < best)
			best = b;
	}
	return (__u32)best;
}

int htb_conf_from_params(const struct htb_class_params *p,
			 struct htb_class_conf *c)
{
	__u64 ceil = p->ceil_Bps ? p->ceil_Bps : p->rate_Bps;
	__u32 i;

	if (!p->rate_Bps || p->depth < 1 || p->depth > HTB_MAX_DEPTH)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	htb_ratecfg_precompute(&c->rate, p->rate_Bps, p->overhead, p->mpu,
			       p->linklayer);
	htb_ratecfg_precompute(&c->ceil, ceil, p->overhead, p->mpu,
			       p->linklayer);
	c->buffer = buffer_ns(p->burst, p->rate_Bps);
	c->cbuffer = buffer_ns(p->cburst, ceil);
	c->limit_ns = htb_limit_ns(p->limit_ns, ceil);
	c->classid = p->classid;
	c->depth = p->depth;
	for (i = 0; i < HTB_MAX_DEPTH; i++)
		c->path[i] = i < p->depth ? p->path[i] : HTB_NO_CLASS;
	c->prio = p->prio;
	c->quantum = p->quantum;
	c->flags = HTB_CONF_VALID | (p->leaf ? HTB_CONF_LEAF : 0) |
		   (p->aqm ? HTB_CONF_AQM : 0) | (p->ecn ? HTB_CONF_ECN : 0) |
		   (p->flows ? HTB_CONF_FLOWS : 0);
	c->target_ns = p->target_ns ? p->target_ns : HTB_CODEL_TARGET_NS;
	c->interval_ns = p->interval_ns ? p->interval_ns : HTB_CODEL_INTERVAL_NS;
	if (c->interval_ns > HTB_CODEL_INTERVAL_MAX)
		c->interval_ns = HTB_CODEL_INTERVAL_MAX;
	c->mtu_ns = (__u64)htb_bytes_to_ns(HTB_CODEL_MTU, p->rate_Bps);
	c->batch_lin = batch_lin_of(c);
	return 0;
}

/* Whether leaf c carries its ancestors' charges (struct htb_path_carry):
 * HTB_CONF_CARRY when it and its ancestors are linear and they batch, due
 * at the smallest batch_lin above it (anc_lin: path[1..n]'s, from
 * htb_conf_carry_lin). The tree's classes share one overhead, mpu and
 * link layer, so a linear leaf has linear ancestors unless a rate is out
 * of range. */
void htb_conf_carry(struct htb_class_conf *c, const __u32 *anc_lin, __u32 n)
{
	__u32 due = ~0u;

	c->flags &= ~HTB_CONF_CARRY;
	c->carry_due = 0;
	if (!(c->flags & HTB_CONF_LEAF) || !c->batch_lin || !n)
		return;
	for (__u32 k = 0; k < n; k++) {
		if (!anc_lin[k])
			return;
		if (anc_lin[k] < due)
			due = anc_lin[k];
	}
	c->flags |= HTB_CONF_CARRY;
	c->carry_due = due;
}

/* What an ancestor a takes from a carry, for htb_conf_carry: its
 * batch_lin, or 0 when its charges may not wait in a batch (a burst or
 * cburst under a batch: htb_batchable), since a carry is a batch too. */
__u32 htb_conf_carry_lin(const struct htb_class_conf *a)
{
	if (a->buffer < (__s64)HTB_BATCH_NS || a->cbuffer < (__s64)HTB_BATCH_NS)
		return 0;
	return a->batch_lin;
}

/* htb_conf_carry for every leaf of conf[0..n), by slot */
void htb_conf_carries(struct htb_class_conf *conf, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		struct htb_class_conf *c = &conf[i];
		__u32 lin[HTB_MAX_DEPTH], k;

		for (k = 1; k < c->depth && k < HTB_MAX_DEPTH; k++)
			lin[k - 1] = c->path[k] < n ? htb_conf_carry_lin(&conf[c->path[k]]) : 0;
		htb_conf_carry(c, lin, k - 1);
	}
}

void htb_state_init(struct htb_class_state *st, const struct htb_class_conf *c,
		    __u64 now)
{
	memset(st, 0, sizeof(*st));
	st->tokens = c->buffer;
	st->ctokens = c->cbuffer;
	st->btokens = (__s64)HTB_MBUFFER_NS;	/* full under any limit */
	st->t_c = now;
	st->mode = HTB_MODE_CAN_SEND;
}

__u64 htb_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * HTB_NSEC_PER_SEC + (__u64)ts.tv_nsec;
}
