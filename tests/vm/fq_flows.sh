#!/usr/bin/env bash
# Classes never share an fq flow (issue 22), with the real fq (runs INSIDE
# the VM): scripts/vm.sh run "bash tests/vm/fq_flows.sh [CASE...]"
#
# Packets without a connected socket go into fq's flow hash & orphan_mask.
# Echo requests of one identifier from one address to another all have
# one hash (the flow dissector takes the identifier, not the sequence), so
# two raw-socket pings of one identifier that differ only by their mark,
# put by htbctl into two classes, are the case where two classes would
# share an fq flow: A far over a tiny rate (a 98-byte frame every 39 ms),
# B far under its rate. In one fq flow B's requests wait for A's: fq
# holds a flow until its head's time, and a request that arrives while
# the flow waits for A's next one waits with it (up to 39 ms). Tagged with the class (include/htb/flowtag.h),
# B's flow is its own and its requests leave at once.

setup_file() {
	"$HTBCTL" help > /dev/null 2>&1 || fail "htbctl does not run here"
}

marks_tree() {
	ini device default=1:30 aqm=off flows=off limit=100ms
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=20kbit ceil=20kbit 'match=mark 0x1'
	ini 'class 1:20' parent=1:1 rate=20mbit ceil=20mbit 'match=mark 0x2'
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}

# B's pings (mark 2, every 10 ms) while A's (mark 1, every 1 ms: 784
# kbit/s of 98-byte frames against 20) keep A's queue at its limit;
# prints B's network RTT p50 and p99 (ms) and how many were lost.
b_beside_a() {
	local tp
	tp=$(dirname "$HTBCTL")/tests/tools/tsprobe
	export TSPROBE_IDENT=4242
	TSPROBE_SEQ0=30000 in_snd timeout 20 "$tp" ping "$RCV_IP4" 4000 1000 0x1 > /dev/null 2>&1 &
	sleep 1.5
	in_snd timeout 20 "$tp" ping "$RCV_IP4" 200 10000 0x2 > "$tmp/b.ping" 2> "$tmp/err" ||
		fail "B's ping: $(oneline "$tmp/err")"
	wait
	awk '$4 > 0 && $3 > 0 { printf "%.3f\n", ($4 - $3) / 1e6 }' "$tmp/b.ping" | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) { print "nan nan 200"; exit }
			printf "%s %s %d\n", v[int(NR * 0.5 + 0.5)], v[int(NR * 0.99 + 0.5)], 200 - NR }'
}

test_two_classes_of_one_hash_get_two_fq_flows() {
	local p50 p99 lost
	marks_tree > "$tmp/m.ini"
	h load dev "$SND_IF" config "$tmp/m.ini" > "$tmp/load.out" 2>&1 ||
		fail "load: $(oneline "$tmp/load.out")"
	read -r p50 p99 lost <<<"$(b_beside_a)"
	[ "$(jclass 1:10 drops)" -gt 0 ] || fail "A was not over its rate (no drops at its limit)"
	awk -v p="$p99" -v l="$lost" 'BEGIN { exit !(p != "nan" && p < 10 && l <= 2) }' ||
		fail "B's network RTT p50 $p50 p99 $p99 ms, $lost of 200 lost: it waited for A's packets"
	note "B's RTT p50 $p50 p99 $p99 ms beside A over its rate"
}

# The same with the classes by mark on forwarded packets is scenario 12's
# job; here the tag's other half: load gives fq the whole hash.
test_fq_takes_the_whole_hash() {
	marks_tree > "$tmp/m.ini"
	h -j load dev "$SND_IF" config "$tmp/m.ini" > "$tmp/load.json" 2> "$tmp/err" ||
		fail "load: $(oneline "$tmp/err")"
	[ "$(jq -r .fq_orphan_mask "$tmp/load.json")" = 4294967295 ] ||
		fail "load says orphan_mask $(jq -r .fq_orphan_mask "$tmp/load.json")"
	in_snd tc qdisc show dev "$SND_IF" | grep -q 'orphan_mask 4294967295' ||
		fail "fq's orphan_mask: $(in_snd tc qdisc show dev "$SND_IF" | grep -o 'orphan_mask [0-9]*' | head -1)"
}

# --no-qdisc over the operator's own fq: its default orphan_mask is said,
# the whole hash is not.
test_no_qdisc_says_a_narrow_orphan_mask() {
	marks_tree > "$tmp/m.ini"
	in_snd tc qdisc add dev "$SND_IF" root fq 2> "$tmp/err" || fail "fq: $(oneline "$tmp/err")"
	h load dev "$SND_IF" config "$tmp/m.ini" --no-qdisc > "$tmp/out" 2>&1 || fail "load: $(oneline "$tmp/out")"
	grep -q "has orphan_mask 1023: .*give fq orphan_mask 4294967295" "$tmp/out" ||
		fail "no word of fq's orphan_mask 1023: $(oneline "$tmp/out")"
	h unload dev "$SND_IF" > /dev/null 2>&1 || fail "unload"
	in_snd tc qdisc replace dev "$SND_IF" root fq orphan_mask 4294967295 2> "$tmp/err" ||
		fail "fq: $(oneline "$tmp/err")"
	h load dev "$SND_IF" config "$tmp/m.ini" --no-qdisc > "$tmp/out" 2>&1 || fail "load: $(oneline "$tmp/out")"
	! grep -q "has orphan_mask" "$tmp/out" || fail "a warning for the whole hash: $(oneline "$tmp/out")"
}

. "$(dirname "$0")/../lib/runner.sh"
