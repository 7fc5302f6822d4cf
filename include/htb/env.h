/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the departure-time algorithm (htb/sched.h) needs from its caller,
 * and what it gives back: the environment (maps in BPF, arrays in
 * userspace), the per-packet parameters, the verdict and decision.
 */
#ifndef HTB_ENV_H
#define HTB_ENV_H

#include "htb/types.h"
#include "htb/rate.h"

/*
 * Environment. The includer provides (defaults below are the userspace
 * ones: plain arrays, no locks):
 *   struct htb_env			opaque per-packet environment
 *   HTB_ENV_CONF(env, idx)		const struct htb_class_conf * or NULL
 *   HTB_ENV_CONF_AT(env, idx, gen)	the same in generation gen's tree
 *					(htb_params.gen; the program keeps two)
 *   HTB_ENV_STATE(env, idx)		struct htb_class_state * or NULL
 *   HTB_ENV_SHARE(env, idx)		const struct htb_class_share * or NULL
 *   HTB_ENV_BATCH(env, idx)		this CPU's struct htb_class_batch * or
 *					NULL (no batches: every charge at once)
 *   HTB_ENV_CARRY(env)			this CPU's struct htb_path_carry * or
 *					NULL (ancestors charged per packet)
 *   HTB_ENV_HAS_FLOWS(env)		flow state kept (else flows count as off)
 *   HTB_ENV_FLOW(env, idx, hash)	struct htb_flow * or NULL (a new flow)
 *   HTB_LOCK(st) / HTB_UNLOCK(st)	take / release st's lock
 *   HTB_RAISE(p, v)			*p = max(*p, v), atomic against other
 *					CPUs doing the same without the lock
 *   HTB_CAS(p, old, v)		*p = v if *p == old, atomically
 */
#ifndef HTB_ENV_CONF
/* Userspace default: classes are array elements 0..n-1. */
struct htb_env {
	const struct htb_class_conf *conf;
	struct htb_class_state *state;
	const struct htb_class_share *share;	/* NULL: no sharing loop */
	struct htb_flow *flows;	/* NULL: no flow state; else nflows entries,
				 * a flow's at hash % nflows (the caller keeps
				 * its hashes apart) */
	struct htb_class_batch *batch;	/* NULL: no batches; else n entries,
					 * the batches of the CPU this env is */
	struct htb_path_carry *carry;	/* NULL: none; else that CPU's */
	__u32 n, nflows;
};
#define HTB_ENV_CONF(env, idx)	((idx) < (env)->n ? &(env)->conf[idx] : (void *)0)
#define HTB_ENV_CONF_AT(env, idx, gen)	HTB_ENV_CONF(env, idx)	/* one tree */
#define HTB_ENV_STATE(env, idx)	((idx) < (env)->n ? &(env)->state[idx] : (void *)0)
#define HTB_ENV_SHARE(env, idx)	((idx) < (env)->n && (env)->share ? &(env)->share[idx] : (void *)0)
#define HTB_ENV_BATCH(env, idx)	((idx) < (env)->n && (env)->batch ? &(env)->batch[idx] : (void *)0)
#define HTB_ENV_CARRY(env)	((env)->carry)
#define HTB_ENV_HAS_FLOWS(env)	((env)->flows != (void *)0)
#define HTB_ENV_FLOW(env, idx, hash) \
	((env)->nflows ? &(env)->flows[(hash) % (env)->nflows] : (void *)0)
#define HTB_LOCK(st)		do { } while (0)
#define HTB_UNLOCK(st)		do { } while (0)
#define HTB_RAISE(p, v)		do { if (*(p) < (v)) *(p) = (v); } while (0)
#define HTB_CAS(p, old, v)	do { if (*(p) == (old)) *(p) = (v); } while (0)
#endif

/* A function the BPF program makes a global subprogram, verified once on
 * its own (htb/sched.h says why); in userspace a static inline one. */
#ifndef HTB_SUBPROG
#define HTB_SUBPROG static inline
#endif

/* One load the compiler may neither split nor repeat. */
#define HTB_LOAD_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define HTB_MIN(a, b)	((a) < (b) ? (a) : (b))
#define HTB_MAX(a, b)	((a) > (b) ? (a) : (b))

enum htb_verdict {
	HTB_SEND = 0,		/* stamp decision.tstamp */
	HTB_DROP = 1,		/* beyond the leaf's limit or CoDel's signal on a
				 * packet that cannot be marked: nothing charged */
	HTB_UNSHAPED = 2,	/* broken conf (no path): pass untouched */
	HTB_SEND_CE = 3,	/* as HTB_SEND, and set CE (CoDel's signal on ECT) */
};

struct htb_decision {
	__u64 tstamp;		/* departure time (HTB_SEND) */
	__u32 level;		/* path index of the lender */
	__u32 stale;		/* the incoming stamp was beyond the horizon */
	__u32 sparse;		/* it left ahead of the backlog (sparse flow) */
	__u32 flow_new;		/* flows on and the flow had no state: the
				 * caller adds {tstamp, sparse ? vfinish : BULK} */
	__u64 vfinish;		/* the flow's new vfinish (struct htb_flow) */
};

/* Settings read per packet from the runtime map. The BPF program passes
 * this struct to global subprograms; its 4 bytes of tail padding are
 * never written, which the verifier accepts from a loader with
 * CAP_PERFMON (uninitialized stack), as `load` requires (its packet reads
 * need it too: src/loader/privs.c). */
struct htb_params {
	__u64 now;
	__u64 horizon_ns;
	__u32 hysteresis;
	__u32 share;		/* the sharing loop's lease runs: class_share counts */
	__u32 ect;		/* the packet is ECT(0) or ECT(1): CE may replace a drop */
	__u32 flow_hash;	/* the packet's flow (skb hash), for sparse flows */
	__u32 gen;		/* htb_runtime.gen: a reload moves it on */
};

#endif /* HTB_ENV_H */
