#!/usr/bin/env bash
# htbctl load/unload with the real fq (runs INSIDE the VM, whose kernel has
# sch_fq): scripts/vm.sh run "bash tests/vm/loader_fq.sh [CASE...]"
#   - fq as the root of a one-queue veth, with the parameters load derives
#     (docs/loader.md), and the device's default root back after unload;
#   - mq with one fq per TX queue on a 4-queue veth, and back;
#   - an htb tree (with a tbf child) replaced by fq and restored exactly;
#   - reload keeps the fq root; TCP through a 20 Mbit/s class is held there
#     (fq enforces the stamps).
# Every case starts from an unshaped pair (tests/lib/runner.sh) and loads
# what it needs itself.

setup_file() {
	"$HTBCTL" help > /dev/null 2>&1 || fail "htbctl does not run here"
}

# a.ini: 1:10 (the receiver) at 20 Mbit/s, no more; b.ini: 1:30 changed
fq_tree() {	# rate of 1:30
	ini device default=1:30 limit=200ms
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=20mbit ceil=20mbit "match=dst $RCV_IP4/32"
	ini 'class 1:30' parent=1:1 rate="$1" ceil=100mbit
}
setup() {
	fq_tree 1mbit > "$tmp/a.ini"
	fq_tree 2mbit > "$tmp/b.ini"
}
# load_json: a.ini loaded, what load said (-j) in $tmp/load.json
load_json() {
	h -j load dev "$SND_IF" config "$tmp/a.ini" > "$tmp/load.json" 2> "$tmp/err" ||
		fail "load: $(oneline "$tmp/err")"
}
bytes10() { jclass 1:10 bytes; }

# ---- one TX queue: fq as root

test_load_installs_fq() {
	load_json
	note "$(jq -r '"flow_limit \(.fq_flow_limit) limit \(.fq_limit) orphan_mask \(.fq_orphan_mask)"' "$tmp/load.json")"
}
test_fq_4854_is_root() {
	load_json
	root_qdisc_is "fq 4854:"
}
# flow_limit covers the largest leaf ceil x limit in minimum (42-byte)
# frames: 1:30's 100 Mbit/s x 200 ms = 2.5 MB = 59524 frames; horizon 10 s
test_fq_parameters_as_derived() {
	local q fl om
	load_json
	q=$(in_snd tc -d qdisc show dev "$SND_IF")
	fl=$(sed -n 's/.*flow_limit \([0-9]*\)p.*/\1/p' <<< "$q")
	om=$(sed -n 's/.*orphan_mask \([0-9]*\).*/\1/p' <<< "$q")
	[ "${fl:-0}" = "$(jq -r .fq_flow_limit "$tmp/load.json")" ] && [ "${fl:-0}" = 59524 ] &&
	[ "${om:-0}" = "$(jq -r .fq_orphan_mask "$tmp/load.json")" ] && grep -q 'horizon 10s' <<< "$q" ||
		fail "$(tr '\n' ' ' <<< "$q")"
	note "flow_limit $fl, orphan_mask $om, horizon 10s"
}

# TCP through the 20 Mbit/s class, enforced by fq: $bps
tcp_through_1_10() {	# seconds
	command -v iperf3 > /dev/null || skip "no iperf3"
	load_tree "$tmp/a.ini"
	bps=$(tcp_goodput "$1" 2> "$tmp/err") || fail "iperf3: $(oneline "$tmp/err")"
}
test_tcp_held_at_class_rate() {
	tcp_through_1_10 4
	# goodput of 20 Mbit/s at the Ethernet level: 20 * 1448 / 1514 = 19.1
	awk -v b="$bps" 'BEGIN { exit !(b > 17e6 && b < 20.5e6) }' ||
		fail "$(mbit "$bps") Mbit/s (want 17-20.5)"
	note "$(mbit "$bps") Mbit/s"
}
# show on this kernel: batched BPF_F_LOCK reads, the TCP bytes in 1:10
test_show_counts_tcp_bytes() {
	local b10
	tcp_through_1_10 1
	b10=$(h -j show dev "$SND_IF" interval 0 2> "$tmp/err" |
		jq -r '.classes[] | select(.class == "1:10") | .bytes' 2> /dev/null)
	[ "${b10:-0}" -gt 1000000 ] || fail "${b10:-none} $(oneline "$tmp/err")"
	note "$b10"
}
test_two_reloads_keep_fq_root_and_counters() {
	local b10
	load_tree "$tmp/a.ini"
	ping_rcv
	b10=$(bytes10)
	h reload dev "$SND_IF" config "$tmp/b.ini" > "$tmp/out" 2>&1 &&
		h reload dev "$SND_IF" config "$tmp/a.ini" >> "$tmp/out" 2>&1 || fail "$(oneline "$tmp/out")"
	[ "$(bytes10)" -ge "${b10:-1}" ] && [ "$b10" -gt 0 ] || fail "1:10 bytes $b10 -> $(bytes10)"
	root_qdisc_is "fq 4854:"
}
test_unload() {
	load_tree "$tmp/a.ini"
	ok h unload dev "$SND_IF"
}
test_default_root_back_after_unload() {
	snap "$tmp/s0"
	load_tree "$tmp/a.ini"
	h unload dev "$SND_IF" > /dev/null 2>&1
	unchanged_since "$tmp/s0"
}

# ---- four TX queues: mq + one fq per queue

load_4_queues() {
	fresh_topo 4
	snap "$tmp/s0"
	load_tree "$tmp/a.ini"
}
test_mq_with_fq_per_tx_queue() {
	load_4_queues
	root_qdisc_is "mq 4854:"
	[ "$(leaf_qdiscs fq)" = 4 ] || fail "$(leaf_qdiscs fq) fq leaves: $(oneline "$tmp/qdiscs")"
}
test_mq_fq_removed_default_root_back() {
	load_4_queues
	h unload dev "$SND_IF" > /dev/null 2>&1
	unchanged_since "$tmp/s0"
}

# ---- an htb tree replaced by fq and restored

load_over_htb() {
	fresh_topo 4
	in_snd tc qdisc add dev "$SND_IF" root handle 1: htb default 10 &&
	in_snd tc class add dev "$SND_IF" parent 1: classid 1:10 htb rate 50mbit ceil 100mbit &&
	in_snd tc class add dev "$SND_IF" parent 1: classid 1:20 htb rate 5mbit prio 2 &&
	in_snd tc qdisc add dev "$SND_IF" parent 1:20 handle 20: tbf rate 2mbit burst 10k latency 20ms ||
		fail "could not build the htb tree"
	snap "$tmp/s0"
	load_tree "$tmp/a.ini"
}
test_load_replaces_htb_root() {
	load_over_htb
	root_qdisc_is "mq 4854:"
}
test_htb_tree_restored_exactly() {
	load_over_htb
	h unload dev "$SND_IF" > /dev/null 2>&1
	unchanged_since "$tmp/s0"
}

. "$(dirname "$0")/../lib/runner.sh"
