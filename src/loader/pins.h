/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What htbctl keeps in bpffs per device, under /sys/fs/bpf/htbctl/IFACE/:
 * every map of the program by its name (the state map as class_state), the
 * program as htb_egress, and two maps htbctl creates itself: `meta`, with
 * what unload needs (the root qdisc that was there as replayable netlink
 * messages, whether clsact was created by htbctl, the filter's handle and
 * priority, how far load got), and `cls_shadow`, the classifier entries as
 * last written (loader/plan.c). See docs/loader.md.
 */
#ifndef HTBCTL_PINS_H
#define HTBCTL_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "common/common.h"
#include "netlink/qdisc.h"

#define BPFFS		"/sys/fs/bpf"
#define PIN_ROOT_NAME	"htbctl"
#define PIN_ROOT	BPFFS "/" PIN_ROOT_NAME
#define PIN_PROG	"htb_egress"
#define PIN_META	"meta"

#define META_MAGIC	0x43425448u	/* "HTBC" */
/* 2 since cls_minor (issue 26): an htbctl older than that would write
 * the priority classifier's entries where the program no longer looks,
 * so it must not take the pins for its own; this one still reads 1 (its
 * pins have no cls_minor: src/loader/maps.c, maps_open_pinned). */
#define META_VERSION	2
#define META_VERSION_MIN 1
#define META_CHUNK	4096		/* value size of the meta map */

/* meta.flags */
#define META_F_COMPLETE		(1u << 0)	/* load finished */
#define META_F_QDISC_INSTALLED	(1u << 1)	/* our root qdisc is in place */
#define META_F_CLSACT_CREATED	(1u << 2)	/* clsact was not there before */
#define META_F_NO_QDISC		(1u << 3)	/* loaded with --no-qdisc */
#define META_F_FILTER_ATTACHED	(1u << 4)
#define META_F_TEST_QDISC	(1u << 5)	/* tests: another kind stood in for fq */
#define META_F_RELOADING	(1u << 6)	/* a reload is changing the maps */
#define META_F_GENS_SYNCED	(1u << 7)	/* both conf generations are equal */
/* Ingress shaping (docs/loader.md "Directions"), in the ifb's meta: */
#define META_F_IFB_CREATED	(1u << 8)	/* this device is an ifb htbctl made */
#define META_F_IN_CLSACT_CREATED (1u << 9)	/* clsact on ingress_of was made by htbctl */
#define META_F_REDIRECT_ATTACHED (1u << 10)	/* the redirect on ingress_of's ingress */

/* meta.dir: which direction of a config this device shapes */
#define META_DIR_ONE		0	/* a config of one direction (and every
					 * meta written before directions) */
#define META_DIR_DOWNLOAD	1
#define META_DIR_UPLOAD		2
#define PIN_REDIRECT	"htb_redirect"	/* the ingress redirect's program, in the ifb's pins */

#define PIN_SHADOW	"cls_shadow"	/* the classifier entries, sorted (loader/plan.c) */

/* Entry 0 of the meta map; entries 1.. hold the saved tree's blob. */
struct htbctl_meta {
	__u32 magic;
	__u32 version;
	__u32 ifindex;
	__u32 flags;
	char ifname[16];
	__u32 filter_handle;
	__u32 filter_prio;
	__u32 prog_id;
	__u32 capacity;		/* class slots fixed at load */
	__u32 our_root;		/* handle of the fq / mq htbctl installed */
	__u32 ntxq;
	char leaf_kind[QDISC_KIND_LEN];	/* "fq" */
	struct fq_params fq;
	__u64 loaded_at;	/* CLOCK_REALTIME, s */
	__u64 reloads;
	/* the root qdisc tree found at load (struct qdisc_tree) */
	__u32 saved_is_default;
	__u32 saved_root_handle;
	char saved_root_kind[QDISC_KIND_LEN];
	__u32 saved_nqdiscs;
	__u32 saved_nclasses;
	__u32 saved_len;
	__u32 hiwater;		/* slots ever used: class indexes are below it */
	char config[256];	/* config path as given to the last (re)load */
	__u64 netns_ino;	/* network namespace of the device (its nsfs inode) */
	/* While META_F_RELOADING: the generation and config the reload
	 * switches to (runtime.gen == pending_gen: the switch happened). */
	__u32 pending_gen;
	char pending_config[256];
	/* Directions (docs/loader.md "Directions"): which one this device
	 * shapes, the device of the other, and for an ifb htbctl made, the
	 * device whose ingress it shapes and the redirect filter there. */
	__u32 dir;			/* META_DIR_* */
	char partner[16];		/* "": none */
	char ingress_of[16];		/* "": this device's own egress traffic */
	__u32 ingress_ifindex;
	__u32 redirect_prio;
	__u32 redirect_handle;
	__u32 redirect_prog_id;
};

/* "download", "upload", or NULL for META_DIR_ONE. */
const char *meta_dir_name(__u32 dir);

/* "/sys/fs/bpf/htbctl/IFACE" and "/sys/fs/bpf/htbctl/IFACE/NAME";
 * -EINVAL for a name that is no device's (it could be a path). */
int pin_dir(const char *ifname, char *buf, size_t len);
int pin_path(const char *ifname, const char *name, char *buf, size_t len);

/*
 * What htbctl trusts (docs/loader.md "Pins and the lock"): PIN_ROOT and
 * IFACE below it are directories of root's that nobody else can write to,
 * none of them a symlink; the bpffs root is sticky if others can write to
 * it (the kernel mounts it 1777), so nobody else can rename them either.
 * Else nobody could put pins of their own there, or a link to someone
 * else's.
 *
 * pins_lock is the exclusive lock over every htbctl change: flock on
 * PIN_ROOT, which it creates (0700) if absent, after checking it as above
 * and making it 0700 if others could open it (and so hold the lock). It
 * retries when the directory was removed while it waited (an unload of
 * the last device). *created says whether this call made it. Returns the
 * fd, or a negative errno with why filled.
 */
int pins_lock(bool *created, char *why, size_t whylen);
/* pins_lock without waiting: -EWOULDBLOCK while another command holds it
 * (the daemon's loop, which must not stall). */
int pins_lock_try(bool *created, char *why, size_t whylen);
/* Closes the lock; PIN_ROOT goes too if pins_lock made it and it is empty,
 * so that a command that fails leaves none behind. */
void pins_unlock(int fd, bool created);

/* Creates the meta map sized for t's blob, writes m and the blob, and pins
 * it as IFACE/meta (the directory is created). Returns the map fd. */
int meta_create_pinned(const char *ifname, const struct htbctl_meta *m,
		       const struct qdisc_tree *t);
int meta_write(int fd, const struct htbctl_meta *m);
/* Opens IFACE/meta; fills m and, if t is not NULL, the saved tree. */
int meta_open(const char *ifname, struct htbctl_meta *m, struct qdisc_tree *t);

enum pin_state {
	PINS_NONE = 0,		/* nothing of htbctl for this device */
	PINS_OK,		/* loaded and attached */
	PINS_STALE,		/* pins without a working attachment */
	PINS_FOREIGN,		/* pins of a device in another network namespace */
	PINS_UNTRUSTED,		/* PIN_ROOT or IFACE is not as htbctl trusts it */
};

/* Inode of this process's network namespace (0 if unknown). */
__u64 netns_ino(void);

/* Looks at IFACE's pin directory and whether the filter it names is
 * attached with the pinned program. m is filled when meta is readable.
 * why gets a sentence for PINS_STALE, PINS_FOREIGN and PINS_UNTRUSTED
 * (what is wrong and the fix). ifindex 0: the device is gone. */
enum pin_state pins_check(const char *ifname, int ifindex,
			  struct htbctl_meta *m, bool *have_meta,
			  char *why, size_t whylen);

/* Removes every file in IFACE's pin directory, the directory, and
 * PIN_ROOT if it is then empty, following no symlink and only in
 * directories as htbctl trusts them. Missing things are not errors;
 * others a negative errno with why filled. */
int pins_remove(const char *ifname, char *why, size_t whylen);

#endif
