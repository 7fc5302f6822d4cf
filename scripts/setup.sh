#!/usr/bin/env bash
# Install every Debian package that building, testing, the demo and the VM
# harness need. Idempotent: packages already present are not fetched again.
set -euo pipefail

pkgs=(
	# build
	make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev
	libmnl-dev libmicrohttpd-dev
	# unit tests (json-c parses htbctl's JSON back), fuzzing
	libcriterion-dev libjson-c-dev libclang-rt-14-dev
	# network tests, demo, scenarios
	iproute2 iperf3 iputils-ping jq gnuplot-nox ethtool tcpdump procps
	# metrics: promtool and a real Prometheus server scraping the daemon
	prometheus curl
	# htbctl top under a real terminal; the unit's checks (systemd-analyze)
	tmux systemd
	# the crash test (strace's fault injection), the hostile-user tests (setpriv, unshare)
	strace util-linux
	# VM harness (a Debian kernel with sch_fq under qemu; xz and zstd unpack
	# the kernels and modules of Debian 12 and 13). scripts/vm.sh runs
	# bookworm-backports' qemu from its cache, on this qemu's libraries.
	qemu-system-x86 cpio kmod busybox-static xz-utils zstd
)

[ "$(id -u)" = 0 ] || { echo "setup: must run as root to install packages" >&2; exit 1; }

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# No service a package brings (prometheus, iperf3) is started: the
	# tests start their own, in their own namespaces (policy-rc.d, the
	# Debian way, for the install only, unless one is there already).
	policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy"
	fi
	rc=0
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
	[ -z "$policy" ] || rm -f "$policy"
	[ "$rc" = 0 ] || exit "$rc"
fi

# bpffs is where htbctl pins its maps and program.
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
fi
echo "setup: all packages present"
