#!/usr/bin/env bash
# Boot Debian's stock kernel (it has sch_fq as a module, this machine's kernel
# has none) under qemu software emulation, with this machine's root shared
# read-write over virtio-9p, and run a command there. VM_KERNEL picks the
# kernel: Debian 12's (6.1, the oldest htbctl supports) or Debian 13's from
# trixie-backports (7.2.x, with newer features such as the BPF qdisc).
#
#   scripts/vm.sh run 'COMMAND'   run COMMAND (bash -c) in the guest, in the repo
#                                 top; its stdout+stderr come to our stdout and
#                                 its exit status is ours
#   scripts/vm.sh fetch           only download the kernel and build the cache
#   scripts/vm.sh shell           interactive shell in the guest (needs a tty)
#
# Environment:
#   VM_KERNEL=stable    stable: Debian 12's linux-image-amd64 (6.1), through
#                       the machine's apt; backports: the newest 7.2.x of
#                       trixie-backports (linux-binary/-modules/-base-7.2.N+deb13-
#                       amd64), through a private apt configuration in the cache
#                       (the machine's sources and package state are not touched)
#   VM_BACKPORTS_SERIES=7.2  the backports kernel's series (major.minor)
#   VM_BACKPORTS_MIRROR=http://deb.debian.org/debian  where trixie-backports is
#                       (and bookworm-backports, for VM_QEMU=backports)
#   VM_QEMU=backports   the emulator: backports: bookworm-backports'
#                       qemu-system-x86 (10.0.x) with its seabios, fetched into
#                       the cache as the backports kernel is and run from there
#                       (its libraries are those of Debian 12's qemu, which
#                       scripts/setup.sh installs); system: the machine's
#                       qemu-system-x86_64 (Debian 12: 7.2, whose vCPUs stop
#                       taking interrupts for 0.1-0.35 s under a 7.2 guest's
#                       traffic: docs/vm.md)
#   VM_TIMEOUT=900      seconds before qemu is killed (run and shell)
#   VM_BOOT_TIMEOUT=180 seconds for the guest to reach init (run); booted
#                       again once when it does not
#   VM_SMP=2 VM_MEM=2048 VM_CPU=max   (qemu -smp, -m, -cpu)
#   VM_MODULES="..."    extra modules to load at boot (any other module of the
#                       Debian kernel also loads on demand, e.g. by tc)
#   VM_ENV="A B"        host variables to pass into the command's environment
#                       (CI, OUTPUT, V, RESULTS, HTBCTL* and SCENARIO_* always
#                       are, when set; nothing else of the host's environment is)
#   VM_KEEP=1           keep the run's temp dir (console log) for debugging
#   VM_DEBUG=1          full kernel console (in the console log), init traces
#   VM_CLOCK=tsc        guest clocksource: tsc (taken as reliable) or hpet
#   VM_APPEND="..."     extra kernel command line
#   VM_9P_CACHE=loose   the host root's 9p cache mode in the guest: loose keeps
#                       the files it read in the guest's page cache, so a
#                       program starts 2.5x faster (awk 0.148 -> 0.058 s, jq
#                       0.50 -> 0.24: docs/vm.md); none reads every exec over
#                       9p again. Writes go to the host as they are made in
#                       both; loose does not see the host change a file the
#                       guest already read (nothing the tests run does that)
#
# Exit status of run: COMMAND's, or 125 when the VM could not boot or run it,
# 124 on timeout. Cache: .vm-cache/<package>_<version>/ at the repo top
# (kernel, depmod'ed module tree, initramfs), one per kernel, so both kernels
# can be used one after the other; .vm-cache/apt-backports/ holds the private
# apt lists of trixie-backports, .vm-cache/apt-qemu/ those of
# bookworm-backports, and .vm-cache/qemu_<version>/ its unpacked qemu. See
# docs/vm.md.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/.vm-cache
VM_TIMEOUT=${VM_TIMEOUT:-900}
VM_9P_CACHE=${VM_9P_CACHE-loose}
VM_SMP=${VM_SMP:-2}
VM_MEM=${VM_MEM:-2048}
VM_CPU=${VM_CPU:-max}
VM_CLOCK=${VM_CLOCK:-tsc}
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-180}
VM_KERNEL=${VM_KERNEL:-stable}
VM_BACKPORTS_SERIES=${VM_BACKPORTS_SERIES:-7.2}
VM_QEMU=${VM_QEMU:-backports}

# Loaded at boot, in this order, with their dependencies (from modules.dep).
# The 9p stack first: without it the guest has no root. A leading '?' marks a
# module that may be built in or absent (sch_mq is built in on Debian 6.1).
base_modules=(virtio_pci 9pnet_virtio 9p)
net_modules=(sch_fq veth sch_ingress cls_bpf sch_htb cls_u32 '?sch_mq' sch_codel sch_fq_codel sch_cake ifb act_mirred)

die() { echo "vm.sh: $*" >&2; exit 125; }
log() { echo "vm.sh: $*" >&2; }
for v in VM_TIMEOUT VM_BOOT_TIMEOUT VM_SMP VM_MEM; do
	[[ ${!v} =~ ^[1-9][0-9]{0,6}$ ]] || die "$v='${!v}' is not a positive whole number"
done
case $VM_CLOCK in
tsc|hpet) ;;
*) die "VM_CLOCK='$VM_CLOCK' is neither tsc nor hpet" ;;
esac
case $VM_KERNEL in
stable|backports) ;;
*) die "VM_KERNEL='$VM_KERNEL' is neither stable nor backports" ;;
esac
case $VM_QEMU in
system|backports) ;;
*) die "VM_QEMU='$VM_QEMU' is neither backports nor system" ;;
esac
[[ $VM_BACKPORTS_SERIES =~ ^[0-9]+\.[0-9]+$ ]] ||
	die "VM_BACKPORTS_SERIES='$VM_BACKPORTS_SERIES' is not MAJOR.MINOR"

# apt's options for a private configuration in DIR (its sources list, lists
# and cache): the machine's sources and package state are not touched.
# APT::Sandbox::User=root: apt verifies the Release signature as its
# sandbox user _apt, which failed here on 2026-12-03 ("gpgv ... required for
# verification, but neither seems installed": apt-key could not open
# /dev/null as _apt, for a while a root-owned plain file on this machine);
# downloads into the cache run unsandboxed all the same.
private_apt_opts() {	# DIR
	printf '%s\n' -o "Dir::Etc::sourcelist=$1/sources.list" -o Dir::Etc::sourceparts=- \
		-o "Dir::State::Lists=$1/lists" -o "Dir::Cache=$1/cache" \
		-o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=- \
		-o APT::Sandbox::User=root
}
# DIR's sources list made SUITE's (main, signed by Debian's archive key),
# and its lists fetched.
private_apt_update() {	# DIR SUITE
	local -a o
	mapfile -t o < <(private_apt_opts "$1")
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $VM_BACKPORTS_MIRROR $2 main" \
		>"$1/sources.list"
	apt-get "${o[@]}" update -qq >&2 || true
	touch "$1/lists"
}

# ---------------------------------------------------------------- cache
# Each kernel has its own cache directories ($kprefix*_VERSION) and memo.
#   stable: the versioned package that linux-image-amd64 depends on, from
#     the machine's own apt lists.
#   backports: the newest linux-binary-SERIES.N+debNN-amd64 of
#     trixie-backports (its linux-image-amd64 follows the newest series,
#     7.3 on 2026-12-03, so it is not asked), with its -modules and -base
#     packages (the image alone has no modules; -base has the config and
#     modules.builtin). Asked through a private apt configuration: its own
#     sources list, lists and cache under $cache/apt-backports, so the
#     machine's sources and what apt would install or upgrade on it are not
#     touched.
# The answer is remembered until the apt lists it came from change
# (apt-cache takes about a second).
if [ "$VM_KERNEL" = stable ]; then
	kprefix=linux-image-
	memo=$cache/resolved
	aptdir=
	apt_opts=()
else
	kprefix=linux-binary-$VM_BACKPORTS_SERIES.
	memo=$cache/resolved-backports-$VM_BACKPORTS_SERIES
	aptdir=$cache/apt-backports
	mapfile -t apt_opts < <(private_apt_opts "$aptdir")
fi
VM_BACKPORTS_MIRROR=${VM_BACKPORTS_MIRROR:-http://deb.debian.org/debian}

apt_lists() { if [ -n "$aptdir" ]; then echo "$aptdir/lists"; else echo /var/lib/apt/lists; fi; }
apt_key() { stat -c %Y "$(apt_lists)" 2>/dev/null || echo none; }
apt_update() {
	if [ -n "$aptdir" ]; then
		private_apt_update "$aptdir" trixie-backports
	else
		apt-get update -qq >&2 || true
	fi
}
ask_apt() {
	local p
	if [ -n "$aptdir" ]; then
		[ -f "$aptdir/sources.list" ] || return 0
		p=$(apt-cache "${apt_opts[@]}" pkgnames "$kprefix" 2>/dev/null |
			grep -E "^linux-binary-${VM_BACKPORTS_SERIES//./\\.}\.[0-9]+\+deb[0-9]+-amd64\$" |
			sort -V | tail -1)
		[ -n "$p" ] || return 0
		apt-cache "${apt_opts[@]}" show --no-all-versions "$p" 2>/dev/null |
			sed -n "s/^Version: /$p /p" | head -1
	else
		apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
			sed -n 's/^Depends: .*\(linux-image-[0-9][^ ,]*\) (= \([^)]*\)).*/\1 \2/p' | head -1
	fi
}
resolve_kernel() {
	local key k ans d
	key=$(apt_key)
	if [ -f "$memo" ] && read -r k kpkg kpkgver <"$memo" && [ "$k" = "$key" ] &&
		[ -n "${kpkgver:-}" ] && [ -f "$cache/${kpkg}_$kpkgver/ready" ]; then
		kdir=$cache/${kpkg}_$kpkgver
		return 0
	fi
	ans=$(ask_apt)
	if [ -z "$ans" ]; then
		log "apt-cache knows no $VM_KERNEL kernel ($kprefix*); running apt-get update${aptdir:+ (private lists in ${aptdir#$top/})}"
		apt_update
		key=$(apt_key)
		ans=$(ask_apt)
	fi
	if [ -n "$ans" ]; then
		read -r kpkg kpkgver <<<"$ans"
		echo "$key $kpkg $kpkgver" >"$memo"
	else
		# Offline: fall back to what is cached already.
		d=$(ls -d "$cache/$kprefix"*_*/ 2>/dev/null | sort -V | tail -1) || true
		[ -n "$d" ] && [ -f "$d/ready" ] ||
			die "cannot resolve the $VM_KERNEL kernel ($kprefix*) with apt-cache and nothing is cached"
		d=$(basename "$d")
		kpkg=${d%%_*} kpkgver=${d#*_}
		log "apt-cache failed; using cached $kpkg $kpkgver"
	fi
	kdir=$cache/${kpkg}_$kpkgver
}

# PKG=VERSION... downloaded with apt-get (its options: the array named
# OPTS) into DIR/dl and unpacked into DIR/tree, which is made anew. 1 when
# the download fails: DIR removed, apt's complaint printed.
debs_unpacked() {	# DIR OPTS PKG=VERSION...
	local d=$1 p
	local -n opts=$2
	shift 2
	rm -rf "$d"
	mkdir -p "$d/dl"
	if ! (cd "$d/dl" && apt-get "${opts[@]}" download "$@" >"$d/dl.log" 2>&1); then
		log "apt-get download $* failed:"
		grep -v '^W: Download is performed unsandboxed' "$d/dl.log" | tail -5 >&2
		rm -rf "$d"
		return 1
	fi
	for p in "$d"/dl/*.deb; do
		dpkg-deb -x "$p" "$d/tree"
	done
	rm -rf "$d/dl" "$d/dl.log"
}

# ---------------------------------------------------------------- emulator
# VM_QEMU=backports: qemu-system-x86 of bookworm-backports with the packages
# it needs beside the machine's libraries (-common, -data, seabios), asked
# and downloaded through a private apt configuration ($cache/apt-qemu, as the
# backports kernel's), unpacked into $cache/qemu_VERSION/tree and run from
# there; the machine's qemu is not touched. Why: Debian 12's qemu 7.2 stops
# a 7.2 guest's vCPUs for 0.1-0.35 s under traffic (docs/log.md, "Where the
# 7.2 guest's stops are"); under 10.0 they are rarer and shorter (docs/vm.md).
qemu_ask() {	# -> "VERSION" of qemu-system-x86 in bookworm-backports, or nothing
	[ -f "$cache/apt-qemu/sources.list" ] || return 0
	apt-cache "${qemu_apt[@]}" show qemu-system-x86 2>/dev/null |
		sed -n 's/^Version: \(.*~bpo12.*\)/\1/p' | sort -V | tail -1
}
# A version's directory: its epoch's colon as apt spells it in file names
# (a colon would end a path in QEMU_MODULE_DIR or -L).
qemu_dir() { echo "$cache/qemu_${1//:/%3a}"; }
qemu_download() {	# VERSION -> $(qemu_dir VERSION)/tree, ready
	local v=$1 d p seabios missing
	d=$(qemu_dir "$v")
	seabios=$(apt-cache "${qemu_apt[@]}" show seabios 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
	log "fetching qemu-system-x86 $v (bookworm-backports; once, cached in ${d#$top/})"
	debs_unpacked "$d" qemu_apt qemu-system-x86="$v" qemu-system-common="$v" \
		qemu-system-data="$v" ${seabios:+seabios="$seabios"} || return 1
	missing=$(ldd "$d/tree/usr/bin/qemu-system-x86_64" 2>&1 | sed -n 's/^[[:space:]]*\([^ ]*\) => not found/\1/p' | tr '\n' ' ')
	[ -z "$missing" ] ||
		die "bookworm-backports' qemu $v needs libraries this machine lacks: $missing(scripts/setup.sh installs Debian 12's qemu-system-x86, whose libraries it uses; or VM_QEMU=system)"
	touch "$d/ready"
	for p in "$cache"/qemu_*/; do
		[ "${p%/}" = "$d" ] || rm -rf "$p"
	done
}
mapfile -t qemu_apt < <(private_apt_opts "$cache/apt-qemu")
fetch_qemu() {	# -> qemu_cmd (the emulator and its firmware paths)
	local v d
	if [ "$VM_QEMU" = system ]; then
		qemu_cmd=(qemu-system-x86_64)
		return 0
	fi
	v=$(qemu_ask)
	[ -n "$v" ] || { private_apt_update "$cache/apt-qemu" bookworm-backports; v=$(qemu_ask); }
	if [ -n "$v" ] && [ ! -f "$(qemu_dir "$v")/ready" ] && ! qemu_download "$v"; then
		private_apt_update "$cache/apt-qemu" bookworm-backports
		v=$(qemu_ask)
		[ -z "$v" ] || [ -f "$(qemu_dir "$v")/ready" ] || qemu_download "$v" || v=
	fi
	if [ -n "$v" ] && [ -f "$(qemu_dir "$v")/ready" ]; then
		d=$(qemu_dir "$v")
	else
		# Offline: what is cached.
		d=$(ls -d "$cache"/qemu_*/ready 2>/dev/null | sort -V | tail -1) || true
		[ -n "$d" ] || die "cannot fetch qemu-system-x86 from bookworm-backports and none is cached (VM_QEMU=system runs the machine's)"
		d=$(dirname "$d")
		log "cannot resolve bookworm-backports' qemu; using the cached ${d##*/qemu_}"
	fi
	qemu_version=$("$d/tree/usr/bin/qemu-system-x86_64" --version | sed -n '1s/^QEMU emulator version //p')
	d=$d/tree
	qemu_cmd=(env "QEMU_MODULE_DIR=$d/usr/lib/x86_64-linux-gnu/qemu" "$d/usr/bin/qemu-system-x86_64"
		-L "$d/usr/share/seabios" -L "$d/usr/share/qemu")
}

# The init of the initramfs. Generic: per-run details come from the kernel
# command line (vmrun=DIR) and DIR/stage2.sh on the shared root.
init_script() {
	cat <<'EOF'
#!/bin/sh
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
say() { echo "vm-init: $*" >/dev/console; }
halt() { sync; poweroff -f; sleep 10; }
while read -r ko; do
	insmod "/modules/$ko" || say "insmod $ko failed"
done </modules/load.list
run= top= debug= cache=
for w in $(cat /proc/cmdline); do
	case $w in
	vmcache=*) cache=,cache=${w#vmcache=} ;;
	vmrun=*) run=${w#vmrun=} ;;
	vmtop=*) top=${w#vmtop=} ;;
	vmdebug=*) debug=1 ;;
	esac
done
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000$cache hostroot /host ||
	{ say "cannot mount the host root over 9p"; halt; }
[ -n "$run" ] && [ -f "/host$run/stage2.sh" ] || { say "no stage2 in '$run'"; halt; }
echo booted >"/host$run/booted"
# The guest's own kernel file systems over the shared root. Done here with
# busybox: host binaries start slowly over 9p (about 1 s per mount(8)).
m() { [ -z "$debug" ] || say "$(cat /proc/uptime) mount $*"; mount "$@" || say "mount $* failed"; }
m -t proc proc /host/proc
m -t sysfs sys /host/sys
m -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
m -t devpts devpts /host/dev/pts
m -t tmpfs tmpfs /host/dev/shm
m -t bpf bpf /host/sys/fs/bpf
m -t cgroup2 cgroup2 /host/sys/fs/cgroup
m -t tracefs tracefs /host/sys/kernel/tracing
m -t debugfs debugfs /host/sys/kernel/debug
# A guest-private /run (ip netns keeps its files there) and /tmp (iperf3
# needs a tmpfs TMPDIR: 9p refuses its temp file), unless the repo or this
# run's directory lives below them.
case "$top/ $run/" in
/run/* | *" /run/"*) ;;
*) m -t tmpfs tmpfs /host/run ;;
esac
case "$top/ $run/" in
/tmp/* | *" /tmp/"*) tmpdir=/dev/shm ;;
*) m -t tmpfs tmpfs /host/tmp; tmpdir=/tmp ;;
esac
ip link set lo up
[ -z "$debug" ] || say "$(cat /proc/uptime) chroot"
TMPDIR=$tmpdir chroot /host /bin/bash "$run/stage2.sh"
say "stage2 exited $?"
halt
EOF
}

# Kernel's on-demand module loads (request_module) run /sbin/modprobe in the
# initramfs root; hand them to the host's modprobe over the cached tree.
modprobe_script() {
	cat <<EOF
#!/bin/sh
exec chroot /host /sbin/modprobe -d "$1" "\$@"
EOF
}

# Prints the .ko paths (load order, deduplicated) for the given modules.
module_closure() {
	local tree=$1 kver=$2 m opt line
	shift 2
	for m in "$@"; do
		opt=0
		case $m in '?'*) opt=1 m=${m#\?} ;; esac
		if ! line=$(modprobe -d "$tree" -S "$kver" --show-depends "$m" 2>/dev/null); then
			[ "$opt" = 1 ] && continue
			die "module $m not found in $kpkg"
		fi
		# "insmod PATH [options]" or "builtin NAME"
		awk '$1 == "insmod" { print $2 }' <<<"$line"
	done | awk '!seen[$0]++'
}

build_initramfs() {	# -> $kdir/initramfs.cpio
	local kver=$1 stage mods ko name
	stage=$(mktemp -d "$cache/initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,sbin,proc,sys,dev,host,modules}
	cp /bin/busybox "$stage/bin/busybox"
	for a in $("$stage/bin/busybox" --list); do
		[ "$a" = busybox ] || ln -s busybox "$stage/bin/$a"
	done
	rm -f "$stage/sbin/modprobe" "$stage/bin/modprobe"
	modprobe_script "$kdir/tree" >"$stage/sbin/modprobe"
	chmod +x "$stage/sbin/modprobe"
	init_script >"$stage/init"
	chmod +x "$stage/init"
	mods=$(module_closure "$kdir/tree" "$kver" "${base_modules[@]}" "${net_modules[@]}" ${VM_MODULES:-})
	: >"$stage/modules/load.list"
	for ko in $mods; do
		name=$(basename "$ko")
		case $name in
		*.ko) cp "$ko" "$stage/modules/$name" ;;
		*.ko.xz) name=${name%.xz}; xz -dc "$ko" >"$stage/modules/$name" ;;
		*.ko.zst) name=${name%.zst}; zstd -qdc "$ko" >"$stage/modules/$name" ;;
		*.ko.gz) name=${name%.gz}; gzip -dc "$ko" >"$stage/modules/$name" ;;
		*) die "unknown module file $ko" ;;
		esac
		echo "$name" >>"$stage/modules/load.list"
	done
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --quiet) >"$kdir/initramfs.cpio.tmp"
	mv "$kdir/initramfs.cpio.tmp" "$kdir/initramfs.cpio"
	rm -rf "$stage"
}

# The bzImage decompresses itself (xz) in about 12 s under emulation; with
# CONFIG_PVH qemu boots the plain ELF vmlinux directly instead. Extract it
# once; leave none (and boot the bzImage) when that does not work.
extract_vmlinux() {
	local kver=$1 img off
	img=$kdir/tree/boot/vmlinuz-$kver
	grep -qx 'CONFIG_PVH=y' "$kdir/tree/boot/config-$kver" 2>/dev/null || return 0
	# Debian 12's bzImage holds an xz stream, Debian 13's a zstd frame.
	for off in $(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$img" | cut -d: -f1 | head -3); do
		tail -c +$((off + 1)) "$img" | xz -dc --single-stream >"$kdir/vmlinux" 2>/dev/null || true
		if [ "$(head -c 4 "$kdir/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
			return 0
		fi
	done
	# zstd stops with an error at the bytes after the frame (the payload's
	# size), having written the whole frame.
	for off in $(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$img" | cut -d: -f1 | head -3); do
		tail -c +$((off + 1)) "$img" | zstd -qdc >"$kdir/vmlinux" 2>/dev/null || true
		if [ "$(head -c 4 "$kdir/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
			return 0
		fi
	done
	rm -f "$kdir/vmlinux"
	log "could not extract an ELF vmlinux from $img; booting the bzImage (slower)"
}

# Stamp of what the initramfs is built from: rebuild when any of it changes.
initramfs_stamp() {
	{ init_script; modprobe_script "$kdir/tree"
	  printf '%s\n' "${base_modules[@]}" "${net_modules[@]}" ${VM_MODULES:-}
	  stat -c %s /bin/busybox; } | md5sum | cut -d' ' -f1
}

download_kernel() {	# $kpkg $kpkgver -> $kdir with tree/, vmlinux, kver, ready
	local kver d p pkgs=("$kpkg")
	# trixie-backports splits the kernel: the image, its modules, and -base
	# (config, modules.builtin: without it modprobe cannot tell a built-in
	# module from a missing one).
	[ -z "$aptdir" ] || pkgs+=("${kpkg/#linux-binary-/linux-modules-}" "${kpkg/#linux-binary-/linux-base-}")
	log "fetching ${pkgs[*]} $kpkgver (once; cached in ${kdir#$top/})"
	debs_unpacked "$kdir" apt_opts "${pkgs[@]/%/=$kpkgver}" || return 1
	# Debian 13 ships /usr/lib/modules/KVER/{vmlinuz,config}; Debian 12's
	# depmod and modprobe (kmod 30) look in /lib/modules, and the rest of
	# this script in /boot: put them where Debian 12 has them.
	if [ ! -d "$kdir/tree/lib/modules" ] && [ -d "$kdir/tree/usr/lib/modules" ]; then
		mkdir -p "$kdir/tree/lib" "$kdir/tree/boot"
		mv "$kdir/tree/usr/lib/modules" "$kdir/tree/lib/modules"
		for d in "$kdir"/tree/lib/modules/*/; do
			kver=$(basename "$d")
			[ ! -f "$d/vmlinuz" ] || mv "$d/vmlinuz" "$kdir/tree/boot/vmlinuz-$kver"
			[ ! -f "$d/config" ] || mv "$d/config" "$kdir/tree/boot/config-$kver"
		done
	fi
	kver=$(ls "$kdir/tree/lib/modules" | head -1)
	[ -n "$kver" ] && [ -f "$kdir/tree/boot/vmlinuz-$kver" ] ||
		die "$kpkg has no vmlinuz/modules"
	depmod -b "$kdir/tree" "$kver"
	extract_vmlinux "$kver"
	echo "$kver" >"$kdir/kver"
	touch "$kdir/ready"
	# Older versions' caches of this kernel are dead weight (hundreds of MB
	# each); the other kernel's stay.
	for d in "$cache/$kprefix"*_*/; do
		[ "${d%/}" = "$kdir" ] || rm -rf "$d"
	done
}

fetch() {
	mkdir -p "$cache"
	exec 9>"$cache/lock"
	flock 9
	resolve_kernel
	local kver stamp
	if [ ! -f "$kdir/ready" ] && ! download_kernel; then
		# The mirror may have moved on since apt's lists were fetched.
		log "retrying after apt-get update"
		apt_update
		rm -f "$memo"
		resolve_kernel
		if [ ! -f "$kdir/ready" ] && ! download_kernel; then
			local d
			d=$(ls -d "$cache/$kprefix"*_*/ready 2>/dev/null | sort -V | tail -1) || true
			[ -n "$d" ] || die "cannot download $kpkg=$kpkgver and nothing is cached"
			kdir=$(dirname "$d")
			log "cannot download $kpkg=$kpkgver; using the cached $(basename "$kdir")"
		fi
	fi
	kver=$(cat "$kdir/kver")
	stamp=$(initramfs_stamp)
	if [ ! -f "$kdir/initramfs.cpio" ] || [ "$(cat "$kdir/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
		build_initramfs "$kver"
		echo "$stamp" >"$kdir/initramfs.stamp"
	fi
	kernel=$kdir/tree/boot/vmlinuz-$kver
	[ ! -f "$kdir/vmlinux" ] || kernel=$kdir/vmlinux
	initrd=$kdir/initramfs.cpio
	fetch_qemu
	exec 9>&-
}

# ---------------------------------------------------------------- run
# Runs in the guest as host bash, chrooted into the shared root.
write_stage2() {	# rundir interactive
	local run=$1 interactive=$2 v
	{
		echo 'set -u'
		printf 'run=%q top=%q interactive=%q modroot=%q limit=%q\n' "$run" "$top" "$interactive" \
			"$kdir/tree" $((VM_TIMEOUT > 120 ? VM_TIMEOUT - 60 : VM_TIMEOUT * 3 / 4))
		cat <<'EOF'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 VM_GUEST=1 VM_MODROOT=$modroot
unset TERM
[ "$interactive" = 1 ] && export TERM=linux
. "$run/env"
cd "$top" || { echo "vm.sh: guest: no $top" >/dev/console; exit 1; }
if [ "$interactive" = 1 ]; then
	# --norc: a login's rc files (pyenv and the like) take minutes here.
	PS1='vm:\w# ' setsid -c bash --norc -i </dev/console >/dev/console 2>&1
	echo $? >"$run/rc"
else
	# The command gets its own process group and a watchdog that ends it
	# before the host kills the VM: a hang then shows what was stuck (the
	# processes, and the kernel's blocked tasks) instead of nothing.
	setsid bash -c "$(<"$run/cmd")" vm.sh </dev/null >"$run/out" 2>&1 &
	cpid=$!
	{
		sleep "$limit"
		{ echo "vm.sh: guest: the command ran longer than ${limit}s; its processes:"
		  ps -eo pid,ppid,stat,etimes,wchan:24,args --forest 2>&1 | grep -v -E '\[.*\]$'
		  echo 1 >/proc/sys/kernel/sysrq && echo w >/proc/sysrq-trigger
		  echo "vm.sh: guest: blocked tasks (sysrq w):"
		  dmesg | sed -n '/sysrq: Show Blocked State/,$p' | head -n 150; } >>"$run/out" 2>&1
		kill -TERM -- -"$cpid" 2>/dev/null; sleep 3; kill -KILL -- -"$cpid" 2>/dev/null
	} &
	wpid=$!
	wait "$cpid"
	rc=$?
	kill "$wpid" 2>/dev/null
	# A kernel warning or lockup during the run fails it, tests passed or not.
	taint=$(cat /proc/sys/kernel/tainted)
	if [ "$taint" != 0 ]; then
		{ echo "vm.sh: the guest kernel is tainted ($taint) after the run:"
		  dmesg | grep -a -A60 -m1 -E 'BUG:|WARNING:|Oops|lockup' | head -80; } >>"$run/out"
		[ "$rc" != 0 ] || rc=1
	fi
	# fq (7.2) on a departure time written without its clock (tstamp_type
	# 0): htbctl says MONO, so a line here is a stamp of ours gone wrong.
	if dmesg | grep -a -q 'fq: likely mono tstamp'; then
		{ echo "vm.sh: fq warned of a stamp without its clock during the run:"
		  dmesg | grep -a -m3 'fq: likely mono tstamp'; } >>"$run/out"
		[ "$rc" != 0 ] || rc=1
	fi
	echo $rc >"$run/rc"
fi
EOF
	} >"$run/stage2.sh"
	: >"$run/env"
	for v in CI OUTPUT V RESULTS $(compgen -e HTBCTL) $(compgen -e SCENARIO_) ${VM_ENV:-}; do
		[ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}" >>"$run/env"
	done
	return 0
}

qemu_args() {	# rundir interactive
	local run=$1 interactive=$2 append
	# A lockup panics (the guest then exits, -no-reboot) instead of hanging
	# until the timeout, and panic() prints the stuck CPU's stack whatever
	# the loglevel.
	append="console=ttyS0 panic=-1 softlockup_panic=1 softlockup_all_cpu_backtrace=1"
	append+=" vmrun=$run vmtop=$top${VM_9P_CACHE:+ vmcache=$VM_9P_CACHE}"
	if [ "$interactive" = 1 ]; then
		append+=" quiet loglevel=3"
	else
		if [ -n "${VM_DEBUG:-}" ]; then
			append+=" ignore_loglevel vmdebug=1"
		else
			append+=" quiet loglevel=4"
		fi
	fi
	# The kernel would drop the emulated TSC by rule (an AMD model without
	# constant_tsc) and read hpet, emulated device I/O on every clock read:
	# packets then now and then wait milliseconds (docs/vm.md measured it).
	if [ "$VM_CLOCK" = tsc ]; then
		append+=" tsc=reliable"
	else
		append+=" clocksource=hpet"
	fi
	append+="${VM_APPEND:+ $VM_APPEND}"
	qargs=("${qemu_cmd[@]}" -machine pc -accel tcg,thread=multi -cpu "$VM_CPU"
		-smp "$VM_SMP" -m "$VM_MEM" -nographic -nodefaults -no-reboot -nic none
		-kernel "$kernel" -initrd "$initrd" -append "$append"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,id=hostroot,multidevs=remap")
	if [ "$interactive" = 1 ]; then
		qargs+=(-serial mon:stdio)
	else
		qargs+=(-serial "file:$run/console.log" -monitor none)
	fi
}

run_vm() {	# interactive command
	local interactive=$1 cmd=$2 rc
	fetch
	case $top in *[[:space:]]*) die "the repo path '$top' has white space; the guest cannot take it" ;; esac
	qpid= tpid=
	run=$(mktemp -d "$cache/run.XXXXXX")
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	printf '%s\n' "$cmd" >"$run/cmd"
	write_stage2 "$run" "$interactive"
	qemu_args "$run" "$interactive"
	: >"$run/out"
	rc=0
	if [ "$interactive" = 1 ]; then
		# In the foreground: qemu owns the terminal (Ctrl-A x quits).
		timeout --foreground "$VM_TIMEOUT" "${qargs[@]}" || rc=$?
	else
		boot_and_run "$run"
		if [ "$rc" = boot-hung ]; then
			# Nothing of the command ran (init writes "booted" before
			# stage 2), so booting again cannot repeat any of it.
			log "the guest did not reach init within VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT}s (it takes 3-10 s); booting it again"
			tail_console "$run"
			rm -f "$run/console.log" "$run/qemu.log"
			: >"$run/out"
			boot_and_run "$run"
		fi
		if [ "$rc" = boot-hung ]; then
			log "the guest did not reach init within VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT}s, twice"
			tail_console "$run"
			exit 125
		fi
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		log "TIMEOUT: the VM ran longer than VM_TIMEOUT=${VM_TIMEOUT}s; qemu killed ($([ -f "$run/booted" ] && echo "the guest had booted" || echo "the guest never reached init"))"
		tail_console "$run"
		exit 124
	fi
	if [ -f "$run/rc" ]; then
		exit "$(cat "$run/rc")"
	fi
	if [ -f "$run/booted" ]; then
		log "the guest booted but the command left no exit status (qemu exit $rc)"
	else
		log "the VM did not boot (qemu exit $rc)"
	fi
	[ ! -s "$run/qemu.log" ] || { log "qemu said:"; tail -20 "$run/qemu.log" >&2; }
	tail_console "$run"
	exit 125
}

# Boots qemu in the background and streams the command's output; sets rc
# to qemu's exit status, or to boot-hung when init had not started within
# VM_BOOT_TIMEOUT (the CI run at c6cf0e5 lost its 600 s to a guest that never
# printed a line; every other boot here took 5-30 s).
boot_and_run() {	# rundir
	local run=$1 t=0
	rc=0
	timeout -k 10 "$VM_TIMEOUT" "${qargs[@]}" </dev/null >"$run/qemu.log" 2>&1 &
	qpid=$!
	# Streams the command's output while it runs; reads the rest and
	# stops once qemu has exited.
	tail -n +1 -s 0.2 -f --pid="$qpid" "$run/out" &
	tpid=$!
	while [ ! -f "$run/booted" ] && kill -0 "$qpid" 2>/dev/null; do
		if [ $t -ge "$VM_BOOT_TIMEOUT" ]; then
			kill "$qpid" 2>/dev/null || true
			wait "$qpid" 2>/dev/null || true
			wait "$tpid" 2>/dev/null || true
			qpid= tpid=
			rc=boot-hung
			return 0
		fi
		sleep 1
		t=$((t + 1))
	done
	wait "$qpid" || rc=$?
	qpid=
	wait "$tpid" || true
	tpid=
}

cleanup() {	# keeps the exit status
	local rc=$? p
	set +e
	for p in $qpid $tpid; do kill "$p" 2>/dev/null; done
	if [ -n "${VM_KEEP:-}" ]; then log "kept $run"; else rm -rf "$run"; fi
	exit "$rc"
}

tail_console() {
	[ -s "$1/console.log" ] || return 0
	log "last lines of the guest console:"
	local first
	# A kernel report is shown from its first line (stacks are long).
	first=$(grep -a -n -m1 -E 'BUG:|Oops|Kernel panic|WARNING:|INFO: rcu' "$1/console.log" | cut -d: -f1) || true
	{ if [ -n "$first" ]; then tail -n "+$first" "$1/console.log" | head -300; else tail -40 "$1/console.log"; fi; } |
		tr -d '\r' | sed -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' -e 's/^/    /' >&2
}

# Whole-file parse before running: an edit of this file while it runs (the
# checkout is shared) cannot change what a running instance executes.
main() {
	case ${1:-} in
	fetch)
		[ $# = 1 ] || die "usage: $0 fetch"
		fetch
		log "qemu: ${qemu_version:-of the system} (VM_QEMU=$VM_QEMU)"
		log "ready: $kernel (kernel $(cat "$kdir/kver"))" ;;
	run)
		[ $# = 2 ] || die "usage: $0 run 'COMMAND'"
		[ "$(id -u)" = 0 ] || die "needs root (the guest shares / read-write as root)"
		run_vm 0 "$2" ;;
	shell)
		[ -t 0 ] || die "shell needs a terminal"
		[ "$(id -u)" = 0 ] || die "needs root"
		run_vm 1 "" ;;
	*)
		echo "usage: $0 run 'COMMAND' | fetch | shell" >&2
		exit 2 ;;
	esac
}
main "$@"; exit $?
