#!/usr/bin/env bash
# src/netlink/qdisc.c against the real kernel (root): save a root qdisc tree,
# install another root in its place (mq + one per TX queue on a multi-queue
# veth), restore, and compare `tc` output before and after. This kernel has
# no sch_fq, so pfifo stands in for fq (tests/vm/loader_fq.sh does fq).
# The helper that drives src/netlink/qdisc.c is built once, by setup_file.

setup_file() {
	[ -f "$OUT/libhtbctl.a" ] || skip "$OUT/libhtbctl.a not built (make OUTPUT=$OUT)"
	cc -O2 -g -Isrc -Iinclude tests/net/qdisc_helper.c "$OUT/libhtbctl.a" \
		$(pkg-config --libs libbpf libmnl) -lelf -lz -o "$file_tmp/qdisc_helper" \
		2> "$tmp/cc.log" || fail "the helper does not build: $(head -3 "$tmp/cc.log" | tr '\n' ' ')"
}
helper() { "$file_tmp/qdisc_helper" "$@"; }

# probe answers without changing anything here
probe_says() {	# kind answer
	local r
	r=$(helper probe "$1")
	[ "$r" = "$2" ] || fail "probe $1: $r"
}
test_probe_clsact() { probe_says clsact yes; }
test_probe_htb() { probe_says htb yes; }
test_probe_unknown_kind() { probe_says nosuchqdisc no; }
test_probe_fq() {
	local r
	r=$(helper probe fq)
	case $r in yes|no) note "$r" ;; *) fail "probe fq: $r" ;; esac
}

# cycle TXQUEUES [SETUP...]: each SETUP a tc command run in the sender's
# namespace with $DEV its device; then save, install pfifo (or mq with a
# pfifo per queue), restore, and the tree must be as before.
cycle() {
	local q=$1 cmd
	shift
	[ "$q" = 1 ] || fresh_topo "$q"
	for cmd; do
		in_snd env DEV="$SND_IF" sh -c "$cmd" || fail "setup '$cmd'"
	done
	snap "$tmp/before"
	in_snd "$file_tmp/qdisc_helper" cycle "$SND_IF" pfifo > "$tmp/out" 2>&1 || fail "$(oneline "$tmp/out")"
	if [ "$q" -gt 1 ]; then
		[ "$(grep -c '^qdisc pfifo .*parent 4854:' "$tmp/out")" = "$q" ] ||
			fail "expected mq with $q pfifo children: $(oneline "$tmp/out")"
	else
		grep -q '^qdisc pfifo 4854: root' "$tmp/out" || fail "expected pfifo 4854: as root: $(oneline "$tmp/out")"
	fi
	snap "$tmp/after"
	diff -u "$tmp/before" "$tmp/after" > "$tmp/diff" || fail "tree differs after restore: $(oneline "$tmp/diff")"
}

HTB_TREE=(
	'tc qdisc add dev $DEV root handle 1: htb default 10 r2q 5'
	'tc class add dev $DEV parent 1: classid 1:1 htb rate 10mbit burst 30k'
	'tc class add dev $DEV parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit prio 3'
	'tc class add dev $DEV parent 1:1 classid 1:20 htb rate 5mbit quantum 3000'
	'tc class add dev $DEV parent 1: classid 1:2 htb rate 20gbit'
	'tc qdisc add dev $DEV parent 1:20 handle 20: tbf rate 1mbit burst 10k latency 50ms'
	'tc qdisc add dev $DEV parent 1:10 handle 10: htb'
	'tc class add dev $DEV parent 10: classid 10:5 htb rate 1mbit'
	'tc qdisc add dev $DEV parent 10:5 handle 30: pfifo limit 77'
)
test_restore_default_root() { cycle 1; }
test_restore_default_root_4_queues() { cycle 4; }
test_restore_tbf_root() {
	cycle 1 'tc qdisc add dev $DEV root handle 5: tbf rate 10mbit burst 20k latency 40ms'
}
# nested htb, tbf, pfifo, 64-bit rate
test_restore_htb_tree() { cycle 1 "${HTB_TREE[@]}"; }
test_restore_htb_tree_4_queues() { cycle 4 "${HTB_TREE[@]}"; }
test_restore_mq_root_with_other_children() {
	cycle 4 'tc qdisc add dev $DEV root handle 7: mq' \
		'tc qdisc add dev $DEV parent 7:2 handle 72: pfifo limit 55' \
		'tc qdisc add dev $DEV parent 7:4 handle 74: tbf rate 1mbit burst 10k latency 10ms'
}

# A tree with filters cannot be put back faithfully: save says so.
test_tree_with_filters_unrestorable() {
	local out
	in_snd tc qdisc add dev "$SND_IF" root handle 1: htb default 10
	in_snd tc class add dev "$SND_IF" parent 1: classid 1:10 htb rate 1mbit
	in_snd tc filter add dev "$SND_IF" parent 1: protocol ip u32 match ip dst "$RCV_IP4" flowid 1:10
	out=$(in_snd "$file_tmp/qdisc_helper" save "$SND_IF" 2>&1)
	[[ $out == *"unrestorable: tc filters"* ]] || fail "$out"
}

. "$(dirname "$0")/../lib/runner.sh"
