# The start every test script shares (tests/lib/runner.sh, the scenarios
# through tests/lib/shaping.sh, scripts/bench-load.sh): strict variables,
# the repo top as the working directory, the build directory and htbctl.
#   top      the repo top (also the working directory from here on)
#   OUT      the build directory, relative to top ($OUTPUT, default build)
#   HTBCTL   the htbctl binary ($HTBCTL, default $top/$OUT/htbctl); HTBCTL_TEST
#            the test build with its hooks (default $top/$OUT/htbctl-test)
set -u
cd "${BASH_SOURCE[0]%/*}/../.." || exit 1
top=$PWD
OUT=${OUTPUT:-build}
HTBCTL=${HTBCTL:-$top/$OUT/htbctl}
# htbctl with its test hooks (HTBCTL_TEST_FAIL, HTBCTL_TEST_QDISC), which
# the installed binary has not (src/loader/loader.h)
HTBCTL_TEST=${HTBCTL_TEST:-$top/$OUT/htbctl-test}

# htbctl pins its maps in the bpffs; a fresh boot (the VM) may not have it.
need_bpffs() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

# ini SECTION [KEY=VALUE...]: one section of an htbctl config on stdout,
#   ini 'class 1:20' parent=1:1 rate=5mbit 'match=udp dport 9'
ini() {
	local kv
	printf '[%s]\n' "$1"
	shift
	for kv; do
		printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"
	done
}

mbit() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'; }
