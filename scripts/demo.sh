#!/usr/bin/env bash
# The README's first command: shape a demo veth pair with seed 003's tree
# (configs/seed003.ini) and show that it works with real traffic.
#
# Three UDP senders offer 15, 4 and 15 Mbit/s to the three leaves of a
# 20 Mbit/s parent (A 10/20, B 2/2, C 2/20 Mbit/s). HTB's promise: every class gets
# at least its rate, B never more than its ceil, the parent its rate; and
# the spare goes by quantum (A 125000 : C 25000 bytes), so the fluid ideal
# is A 15, B 2, C 3 Mbit/s on the wire (goodput x 1400/1442). htbctl runs
# as `htbctl daemon`, whose loop shares the spare that way.
# On a kernel without sch_fq (nothing would enforce the stamps) the demo
# runs inside the project's VM with Debian's stock kernel (scripts/vm.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

has_fq() {	# try fq on a throwaway veth in a throwaway namespace
	local ns=htbdemo-probe$$ rc=1
	ip netns add $ns 2>/dev/null || return 1
	if ip -n $ns link add p0 type veth peer name p1 2>/dev/null &&
	   ip -n $ns link set p0 up && tc -n $ns qdisc add dev p0 root fq 2>/dev/null; then
		rc=0
	fi
	ip netns del $ns
	return $rc
}

if [ "${1:-}" != --here ]; then
	[ "$(id -u)" = 0 ] || { echo "demo: run as root (it creates namespaces and loads BPF)" >&2; exit 1; }
	scripts/setup.sh
	make -j"$(nproc)" >/dev/null
	if has_fq; then
		exec "$0" --here
	fi
	echo "demo: this kernel ($(uname -r)) has no sch_fq; running the demo in the VM with Debian's kernel"
	exec scripts/vm.sh run "scripts/demo.sh --here"
fi

. tests/lib/netns.sh
SCENARIO=demo
. tests/lib/shaping.sh
trap 'topo_down; rm -rf "$DAEMON_DIR"' EXIT
topo_up demo
conf=configs/seed003.ini
echo "== htbctl daemon dev $SND_IF config $conf   (kernel $(uname -r); log in $(daemon_log))"
shape_htbctl "$conf"
echo "== 10 s of UDP offered to A, B, C: 15, 4, 15 Mbit/s (1400-byte datagrams)"
out=$(run_flows 10 10194:udp:15M:1400 10196:udp:4M:1400 10197:udp:15M:1400)
# the fluid ideal of what was offered (15 and 4 Mbit/s of payload x 1442/1400)
ideal=$(fluid_ideal "$conf" 1:11=15450000bit 1:12=4120000bit 1:13=15450000bit)
printf '\n%-6s %-6s %8s %8s %14s %14s %14s\n' class id rate ceil "goodput@rate" "fluid ideal" "measured"
total=0
while read -r port bps _; do
	case $port in
	10194) c="A 1:11" r=10 ce=20 ;;
	10196) c="B 1:12" r=2 ce=2 ;;
	10197) c="C 1:13" r=2 ce=20 ;;
	esac
	printf '%-13s %5sM %7sM %13sM %13sM %13sM\n' "$c" $r $ce \
		"$(awk -v r=$r 'BEGIN { printf "%.2f", r * 1400 / 1442 }')" \
		"$(awk -v b="$(ideal_of "${c#* }" "$ideal")" 'BEGIN { printf "%.2f", b * 8 / 1e6 * 1400 / 1442 }')" \
		"$(mbit "$bps")"
	total=$(awk -v t=$total -v b="$bps" 'BEGIN { print t + b }')
done <<<"$out"
printf '%-13s %5sM %7sM %13sM %13sM %13sM\n' "parent 1:1" 20 20 \
	"$(awk 'BEGIN { printf "%.2f", 20 * 1400 / 1442 }')" "$(awk 'BEGIN { printf "%.2f", 20 * 1400 / 1442 }')" \
	"$(mbit "$total")"
echo
echo "== htbctl show dev $SND_IF"
in_snd "$HTBCTL" show dev "$SND_IF"
unshape_htbctl
echo "== daemon stopped, unloaded; $(in_snd tc qdisc show dev "$SND_IF" | head -1)"
