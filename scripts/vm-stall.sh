#!/usr/bin/env bash
# Stalls the test VM as a busy host does, to reproduce the emulator's
# stalls that CI's runs met (docs/log.md, "2026-12-05: Scenario 17 and the
# emulator's stalls" and "2026-12-05: Stalls come in runs"). Runs beside a
# tier (tests/run.sh scenarios ...) until killed, and acts only on the
# qemus of this checkout's VMs (their command lines name this checkout's
# .vm-cache), waiting for one to start.
#
#   scripts/vm-stall.sh vm ON_MS EVERY_MS
#       the whole VM stopped (SIGSTOP, then SIGCONT) for ON_MS every
#       EVERY_MS, as a host that deschedules the VM's process does
#   scripts/vm-stall.sh cpu ON_MS EVERY_MS
#       one host CPU taken at a time, as a busy neighbour does: a
#       SCHED_FIFO busy loop on the first host CPU this script may use for
#       ON_MS every EVERY_MS, on the second the next time (whatever CPUs
#       qemu may run on). The VM's threads on that CPU wait until the host
#       moves them, the others run on: some of the guest's CPUs stop, not
#       all. Needs two host CPUs.
#
# Needs root (signals to qemu, SCHED_FIFO). However it ends, the VM runs
# on: each stop is ended by a process of its own.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "vm-stall: $*" >&2; exit 2; }
usage() { die "usage: $0 vm|cpu ON_MS EVERY_MS"; }

[ $# = 3 ] || usage
mode=$1 on_ms=$2 every_ms=$3
[[ $mode == vm || $mode == cpu ]] || usage
[[ $on_ms =~ ^[1-9][0-9]*$ && $every_ms =~ ^[1-9][0-9]*$ ]] ||
	die "ON_MS and EVERY_MS are whole milliseconds above 0, not '$on_ms' '$every_ms'"
[ "$on_ms" -lt "$every_ms" ] || die "ON_MS ($on_ms) must be less than EVERY_MS ($every_ms)"
[ "$(id -u)" = 0 ] || die "needs root (signals to qemu, SCHED_FIFO)"

on=$(awk -v m="$on_ms" 'BEGIN { printf "%.3f", m / 1000 }')
off=$(awk -v m="$on_ms" -v e="$every_ms" 'BEGIN { printf "%.3f", (e - m) / 1000 }')

# the qemus of this checkout's VMs, if any run: the emulator itself, not
# the timeout that runs it (its command line starts with timeout)
our_qemus() {
	local p
	for p in $(pgrep -f '^[^ ]*qemu-system-' || true); do
		grep -qzF -- "$top/.vm-cache/" /proc/"$p"/cmdline 2>/dev/null && echo "$p"
	done
	return 0
}

# The VM is let go by a process of its own, so that this script dying in
# the middle (any signal, even KILL) does not leave it stopped.
stop_vms() {	# PID...
	setsid sh -c 'sleep "$1"; shift; kill -CONT "$@"' _ "$on" "$@" > /dev/null 2>&1 < /dev/null &
	kill -STOP "$@" 2>/dev/null || true
	wait $! || true
}

# A busy loop above every normal task: CFS threads of the VM on that CPU
# wait until the host moves them. (Real-time throttling lets it run 950
# ms of each second at most: kernel.sched_rt_runtime_us.)
take_cpu() {	# HOST_CPU
	timeout "$on" chrt -f 10 taskset -c "$1" sh -c 'while :; do :; done' || true
}
# the host CPUs this script may run on; cpu mode takes the first two
allowed_cpus() {
	local c
	for ((c = 0; c < $(getconf _NPROCESSORS_CONF); c++)); do
		taskset -c $c true 2> /dev/null && echo $c
	done
	return 0
}

cpus=($(allowed_cpus))
[ "$mode" = vm ] || [ ${#cpus[@]} -ge 2 ] || die "cpu needs two host CPUs, this process may use ${#cpus[@]}"
pids= cpu=0
trap '[ -z "$pids" ] || kill -CONT $pids 2>/dev/null; exit 0' INT TERM HUP
while :; do
	pids=$(our_qemus)
	if [ -n "$pids" ]; then
		if [ "$mode" = vm ]; then
			stop_vms $pids
		else
			take_cpu "${cpus[$cpu]}"
			cpu=$((1 - cpu))
		fi
	fi
	sleep "$off"
done
