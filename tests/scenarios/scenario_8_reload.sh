#!/usr/bin/env bash
# Scenario 8: reload under traffic. Parent 20 Mbit/s with three 5 Mbit/s
# classes (ceil = rate), A fed 12 Mbit/s, B and C 7 Mbit/s of 1400-byte UDP
# for 14 s. At t = 6 s `htbctl reload` raises A to 10 Mbit/s. Pass: the
# first whole second of the receiver's rate after the reload shows A's new
# rate, and no whole second of B or C (after the first) dips below 97% of
# their goodput.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
. tests/lib/shaping.sh
trap 'topo_down; rm -f "$c1" "$c2"' EXIT
topo_up s8 || { fail "scenario8 setup"; exit 1; }

c1=$(mktemp --suffix=.ini) c2=$(mktemp --suffix=.ini)
write_conf() {	# file rate_of_A
	cat > "$1" <<INI
[device]
default = 1:13
[class 1:1]
rate = 20mbit
[class 1:10]
parent = 1:1
rate = $2
match = udp dport 6001
[class 1:11]
parent = 1:1
rate = 5mbit
match = udp dport 6002
[class 1:12]
parent = 1:1
rate = 5mbit
match = udp dport 6003
[class 1:13]
parent = 1:1
rate = 1mbit
INI
}
write_conf "$c1" 5mbit
write_conf "$c2" 10mbit
L=1400
good() { awk -v r="$1" -v l=$L 'BEGIN { printf "%.0f", r * l / (l + 42) }'; }
ok=1
shape_htbctl "$c1" >/dev/null || { fail "scenario8: load failed"; exit 1; }
( sleep 6; date +%s.%N > "$RESULTS/reload.at"; in_snd "$HTBCTL" reload dev "$SND_IF" config "$c2" >/dev/null ) &
t0=$(date +%s.%N)
run_flows 14 6001:udp:12M:$L 6002:udp:7M:$L 6003:udp:7M:$L > /dev/null
wait
unshape_htbctl
tr=$(awk -v a="$(cat "$RESULTS/reload.at")" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
echo "reload at t=${tr}s; per-second receiver rates (Mbit/s):"
paste "$RESULTS/intervals.6001" "$RESULTS/intervals.6002" "$RESULTS/intervals.6003" |
	awk '{ printf "  t=%4.1f  A %6.2f  B %6.2f  C %6.2f\n", $1, $2/1e6, $4/1e6, $6/1e6 }'
# Interval times count from the test's start, about 0.5 s after t0 (the
# servers start first). The first whole second that starts after the
# reload must show A at 95% of its new goodput.
first=$(awk -v t="$tr" '$1 - 1 >= t - 0.5 { print $2; exit }' "$RESULTS/intervals.6001")
if awk -v a="${first:-0}" -v e="$(good 10e6)" 'BEGIN { exit !(a >= 0.95 * e) }'; then
	pass "scenario8: A's new rate visible in the first second after the reload"
	v=PASS
else
	fail "scenario8: A at $(mbit ${first:-0}) Mbit/s in the first second after the reload, expected $(mbit $(good 10e6))"
	v=FAIL ok=0
fi
summary_row scenario8 "A 5->10M, 1st second after" "$(mbit $(good 10e6))" "$(mbit ${first:-0})" "-" "-5%" $v
for p in 6002 6003; do
	# whole seconds only: the last interval is a fraction of one
	low=$(awk 'NR > 1 && $1 - prev > 0.9 { print $2 } { prev = $1 }' "$RESULTS/intervals.$p" | sort -g | head -1)
	if awk -v m="$low" -v e="$(good 5e6)" 'BEGIN { exit !(m >= 0.97 * e) }'; then
		v=PASS
	else
		v=FAIL ok=0; fail "scenario8: class on port $p dipped to $(mbit $low) Mbit/s"
	fi
	summary_row scenario8 "port $p lowest second" "$(mbit $(good 5e6))" "$(mbit $low)" "-" "-3%" $v
done
[ $ok = 1 ] && pass "scenario8: no other class dipped during the reload"
