# Helpers for the cases that drive htbctl on the runner's veth pair
# (sourced by tests/lib/runner.sh, which defines fail, ok and $tmp).

# htbctl in the sender's namespace.
h() { in_snd "$HTBCTL" "$@"; }

# nobody CMD...: CMD as user nobody (no groups, no capabilities), in the
# sender's namespace so that the runner ends it with the pair.
nobody() { in_snd setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# The pin directory of the sender's device.
pins() { echo "/sys/fs/bpf/htbctl/$SND_IF"; }

# load_tree CONFIG [load options]: the case needs CONFIG loaded.
load_tree() {
	local conf=$1
	shift
	h load dev "$SND_IF" config "$conf" "$@" > "$tmp/load.out" 2>&1 ||
		fail "load of $(basename "$conf") failed: $(oneline "$tmp/load.out")"
}

# loaded: the test file's tree (its function conf prints it) loaded
# without a qdisc (the host's kernel has no fq; what the program counts
# does not need one).
loaded() {
	conf > "$tmp/c.ini"
	load_tree "$tmp/c.ini" --no-qdisc
}

# jclass CLASSID FIELD: the field of one class in `show -j`.
jclass() {
	h -j show dev "$SND_IF" interval 0 |
		jq -r --arg c "$1" --arg f "$2" '.classes[] | select(.class == $c) | .[$f]'
}

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds; 1 if
# it did not within SECONDS.
wait_for() {
	local t=$(($1 * 10))
	shift
	while [ $t -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# ping_rcv [COUNT]: COUNT (5) echo requests to the receiver, 10 ms apart.
ping_rcv() { in_snd ping -c "${1:-5}" -i 0.01 -W 1 -q "$RCV_IP4" > /dev/null 2>&1; }

# snap FILE: the sender device's qdiscs, classes and egress filters, without
# the counters that change by themselves.
snap() {
	{ in_snd tc qdisc show dev "$SND_IF"; in_snd tc -d class show dev "$SND_IF"
	  in_snd tc filter show dev "$SND_IF" egress; } 2>&1 |
		sed 's/direct_packets_stat [0-9]*//; s/refcnt [0-9]*//' > "$1"
}

# unchanged_since FILE: the device is as snap saw it then, and no pins.
unchanged_since() {
	snap "$tmp/now"
	cmp -s "$1" "$tmp/now" || fail "the device changed: $(diff "$1" "$tmp/now" | tr '\n' ' ' | cut -c1-300)"
	[ ! -e "$(pins)" ] || fail "$(pins) is still there"
}

# nothing_left: no filter or clsact of ours on the device, no pins.
nothing_left() {
	! in_snd tc filter show dev "$SND_IF" egress 2> /dev/null | grep -q htb_egress ||
		fail "a filter is still attached"
	! in_snd tc qdisc show dev "$SND_IF" | grep -q clsact || fail "clsact is still there"
	[ ! -e "$(pins)" ] || fail "$(pins) still exists: $(ls "$(pins)" | tr '\n' ' ')"
}

# root_qdisc_is "KIND HANDLE": the sender's root qdisc, e.g. "fq 4854:".
root_qdisc_is() {
	in_snd tc qdisc show dev "$SND_IF" > "$tmp/qdiscs"
	grep -q "^qdisc $1 root" "$tmp/qdiscs" || fail "root is not $1: $(oneline "$tmp/qdiscs")"
}

# leaf_qdiscs KIND: how many KIND qdiscs hang below mq 4854:.
leaf_qdiscs() { in_snd tc qdisc show dev "$SND_IF" | grep -c "^qdisc $1 .*parent 4854:"; }
