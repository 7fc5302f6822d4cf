#!/usr/bin/env bash
# src/qdisc.c against the real kernel (root): save a root qdisc tree,
# install another root in its place (mq + one per TX queue on a multi-queue
# veth), restore, and compare `tc` output before and after. This kernel has
# no sch_fq, so pfifo stands in for fq (tests/vm/loader_fq.sh does fq).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/lib/netns.sh
OUT=${OUTPUT:-build}
tmp=$(mktemp -d)
trap 'topo_down; rm -rf "$tmp"' EXIT

helper=$tmp/qdisc_helper
if [ ! -f "$OUT/libhtbctl.a" ]; then
	skip "qdisc: $OUT/libhtbctl.a not built (make OUTPUT=$OUT)"
	exit 0
fi
if ! cc -O2 -g -Iinclude -Isrc tests/net/qdisc_helper.c "$OUT/libhtbctl.a" \
	$(pkg-config --libs libbpf libmnl json-c inih) -lelf -lz -o "$helper" 2>"$tmp/cc.log"; then
	fail "qdisc: helper does not build: $(head -3 "$tmp/cc.log" | tr '\n' ' ')"
	exit 1
fi

# probe answers without changing anything here
r=$("$helper" probe clsact); [ "$r" = yes ] && pass "probe clsact" || fail "probe clsact: $r"
r=$("$helper" probe htb); [ "$r" = yes ] && pass "probe htb" || fail "probe htb: $r"
r=$("$helper" probe nosuchqdisc); [ "$r" = no ] && pass "probe unknown kind" || fail "probe unknown kind: $r"
r=$("$helper" probe fq)
case $r in yes|no) pass "probe fq ($r)" ;; *) fail "probe fq: $r" ;; esac

snap() {	# file: every qdisc and class of the sender's device, stats left out
	{ in_snd tc qdisc show dev "$SND_IF"; in_snd tc -d class show dev "$SND_IF"; } |
		sed "s/direct_packets_stat [0-9]*//" >"$1"
}

cycle() {	# name txqueues setup-commands...
	local name=$1 q=$2; shift 2
	topo_up hq "$q" || { fail "$name: topology"; return; }
	local cmd
	for cmd in "$@"; do
		in_snd sh -c "$cmd" || { fail "$name: setup '$cmd'"; topo_down; return; }
	done
	snap "$tmp/before"
	if ! in_snd "$helper" cycle "$SND_IF" pfifo >"$tmp/out" 2>&1; then
		fail "$name: $(tr '\n' ' ' <"$tmp/out")"
		topo_down; return
	fi
	snap "$tmp/after"
	if ! diff -u "$tmp/before" "$tmp/after" >"$tmp/diff"; then
		fail "$name: tree differs after restore: $(tr '\n' ' ' <"$tmp/diff" | cut -c1-400)"
	elif [ "$q" -gt 1 ] && [ "$(grep -c '^qdisc pfifo .*parent 4854:' "$tmp/out")" != "$q" ]; then
		fail "$name: expected mq with $q pfifo children: $(tr '\n' ' ' <"$tmp/out")"
	elif [ "$q" = 1 ] && ! grep -q '^qdisc pfifo 4854: root' "$tmp/out"; then
		fail "$name: expected pfifo 4854: as root: $(tr '\n' ' ' <"$tmp/out")"
	else
		pass "$name"
	fi
	topo_down
}

cycle "restore default root (noqueue)" 1
cycle "restore default root, 4 tx queues (mq in between)" 4
cycle "restore tbf root" 1 \
	"tc qdisc add dev $SND_IF root handle 5: tbf rate 10mbit burst 20k latency 40ms"
htb_tree=(
	"tc qdisc add dev $SND_IF root handle 1: htb default 10 r2q 5"
	"tc class add dev $SND_IF parent 1: classid 1:1 htb rate 10mbit burst 30k"
	"tc class add dev $SND_IF parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit prio 3"
	"tc class add dev $SND_IF parent 1:1 classid 1:20 htb rate 5mbit quantum 3000"
	"tc class add dev $SND_IF parent 1: classid 1:2 htb rate 20gbit"
	"tc qdisc add dev $SND_IF parent 1:20 handle 20: tbf rate 1mbit burst 10k latency 50ms"
	"tc qdisc add dev $SND_IF parent 1:10 handle 10: htb"
	"tc class add dev $SND_IF parent 10: classid 10:5 htb rate 1mbit"
	"tc qdisc add dev $SND_IF parent 10:5 handle 30: pfifo limit 77"
)
cycle "restore htb tree (nested htb, tbf, pfifo, 64-bit rate)" 1 "${htb_tree[@]}"
cycle "restore htb tree, 4 tx queues" 4 "${htb_tree[@]}"
cycle "restore mq root with non-default children" 4 \
	"tc qdisc add dev $SND_IF root handle 7: mq" \
	"tc qdisc add dev $SND_IF parent 7:2 handle 72: pfifo limit 55" \
	"tc qdisc add dev $SND_IF parent 7:4 handle 74: tbf rate 1mbit burst 10k latency 10ms"

# A tree with filters cannot be put back faithfully: save says so.
topo_up hq 1
in_snd tc qdisc add dev "$SND_IF" root handle 1: htb default 10
in_snd tc class add dev "$SND_IF" parent 1: classid 1:10 htb rate 1mbit
in_snd tc filter add dev "$SND_IF" parent 1: protocol ip u32 match ip dst 198.18.0.2 flowid 1:10
out=$(in_snd "$helper" save "$SND_IF" 2>&1)
case $out in
*"unrestorable: tc filters"*) pass "tree with filters is reported unrestorable" ;;
*) fail "tree with filters is reported unrestorable: $out" ;;
esac
topo_down
exit 0
