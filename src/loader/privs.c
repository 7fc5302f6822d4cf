// SPDX-License-Identifier: GPL-2.0
/*
 * Before a command changes anything: does it have the privileges, and does
 * the kernel have what it needs? Each miss is one line that says what to do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>

#include "loader/session.h"
#include "netlink/qdisc.h"

static bool have_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* Names of the capabilities `need` wants and the process lacks, or "" */
static void missing_caps(unsigned int need, char *buf, size_t len)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	buf[0] = '\0';
	if (syscall(SYS_capget, &h, d) < 0) {
		snprintf(buf, len, "capabilities unreadable: %s", strerror(errno));
		return;
	}
	if ((need & NEED_NET_ADMIN) && !have_cap(d, CAP_NET_ADMIN))
		snprintf(buf + strlen(buf), len - strlen(buf), "%sCAP_NET_ADMIN",
			 *buf ? ", " : "");
	if ((need & NEED_BPF) && !have_cap(d, CAP_BPF) && !have_cap(d, CAP_SYS_ADMIN))
		snprintf(buf + strlen(buf), len - strlen(buf), "%sCAP_BPF",
			 *buf ? ", " : "");
	if ((need & NEED_PROG) && !have_cap(d, CAP_PERFMON) && !have_cap(d, CAP_SYS_ADMIN))
		snprintf(buf + strlen(buf), len - strlen(buf), "%sCAP_PERFMON",
			 *buf ? ", " : "");
}

int privs_check(const struct ctx *ctx, const char *what, unsigned int need)
{
	char miss[128];
	struct statfs sf;
	int rc;

	if (need & (NEED_NET_ADMIN | NEED_BPF | NEED_PROG)) {
		missing_caps(need, miss, sizeof(miss));
		if (*miss) {
			p_err(ctx, "%s needs root (missing %s)", what, miss);
			return -1;
		}
	}
	if (need & NEED_BPFFS) {
		if (statfs(BPFFS, &sf) < 0 || sf.f_type != BPF_FS_MAGIC) {
			p_err(ctx, "no BPF filesystem at %s (mount it: mount -t bpf bpf %s)",
			      BPFFS, BPFFS);
			return -1;
		}
		if (access(BPFFS, W_OK | X_OK) < 0) {
			p_err(ctx, "%s needs root (cannot write %s: %s)", what, BPFFS,
			      strerror(errno));
			return -1;
		}
	}
	if (need & NEED_BPF) {
		rc = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, NULL);
		if (rc == 0 || rc == -ENOSYS || rc == -EOPNOTSUPP) {
			p_err(ctx, "this kernel cannot load tc BPF programs (no BPF "
			      "syscall or no cls_bpf): CONFIG_BPF_SYSCALL and "
			      "CONFIG_NET_CLS_BPF are needed");
			return -1;
		}
		if (rc < 0 && rc != -EPERM) {
			p_err(ctx, "probing BPF support: %s", strerror(-rc));
			return -1;
		}
		if (rc == -EPERM) {
			p_err(ctx, "%s needs root (the kernel refused to load a "
			      "BPF program: %s)", what, strerror(-rc));
			return -1;
		}
	}
	if (need & NEED_CLSACT) {
		rc = qdisc_kind_supported("clsact");
		if (rc == 0) {
			p_err(ctx, "this kernel has no clsact qdisc (CONFIG_NET_SCH_INGRESS)");
			return -1;
		}
		/* rc < 0: could not find out; attaching will say. */
	}
	if (need & NEED_FQ) {
		rc = qdisc_kind_supported("fq");
		if (rc == 0) {
			p_err(ctx, "this kernel has no fq qdisc (CONFIG_NET_SCH_FQ), so "
			      "nothing would enforce the departure times; load with "
			      "--no-qdisc to attach anyway (stamps computed, not enforced)");
			return -1;
		}
	}
	return 0;
}

int dev_name_check(const struct ctx *ctx, const char *ifname)
{
	char q[MSG_QUOTE_BUF];
	const char *why;

	if (ifname_valid(ifname, &why))
		return 0;
	p_err(ctx, "%s is not a valid device name: %s", msg_quote(q, sizeof(q), ifname),
	      why);
	return -1;
}

int dev_ifindex(const struct ctx *ctx, const char *ifname)
{
	unsigned int idx;

	if (dev_name_check(ctx, ifname))
		return 0;
	idx = if_nametoindex(ifname);
	if (!idx)
		p_err(ctx, "no device '%s' in this network namespace", ifname);
	return (int)idx;
}
