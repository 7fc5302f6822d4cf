#!/usr/bin/env bash
# Scenario 8: reload under traffic. Parent 40 Mbit/s with three 10 Mbit/s
# classes (ceil = rate), each fed 15 Mbit/s of 1400-byte UDP for 14 s. At
# t = 6 s `htbctl reload` raises A to 20 Mbit/s. Pass: A's new rate shows
# in the receiver's per-second rate within a second of the reload, and no
# second of B or C (after the first) dips below 97% of their goodput.
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
rate = 40mbit
[class 1:10]
parent = 1:1
rate = $2
match = udp dport 6001
[class 1:11]
parent = 1:1
rate = 10mbit
match = udp dport 6002
[class 1:12]
parent = 1:1
rate = 10mbit
match = udp dport 6003
[class 1:13]
parent = 1:1
rate = 1mbit
INI
}
write_conf "$c1" 10mbit
write_conf "$c2" 20mbit
L=1400
good() { awk -v r="$1" -v l=$L 'BEGIN { printf "%.0f", r * l / (l + 42) }'; }
ok=1
shape_htbctl "$c1" >/dev/null || { fail "scenario8: load failed"; exit 1; }
( sleep 6; date +%s.%N > "$RESULTS/reload.at"; in_snd "$HTBCTL" reload dev "$SND_IF" config "$c2" >/dev/null ) &
t0=$(date +%s.%N)
run_flows 14 6001:udp:25M:$L 6002:udp:15M:$L 6003:udp:15M:$L > /dev/null
wait
unshape_htbctl
tr=$(awk -v a="$(cat "$RESULTS/reload.at")" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
echo "reload at t=${tr}s; per-second receiver rates (Mbit/s):"
paste "$RESULTS/intervals.6001" "$RESULTS/intervals.6002" "$RESULTS/intervals.6003" |
	awk '{ printf "  t=%4.1f  A %6.2f  B %6.2f  C %6.2f\n", $1, $2/1e6, $4/1e6, $6/1e6 }'
# A reaches 95% of its new goodput in the first whole second after reload + 1 s.
seen=$(awk -v t="$tr" -v e="$(good 20e6)" '$1 >= t + 2 && $1 <= t + 3 && $2 >= 0.95 * e { print "yes" }' "$RESULTS/intervals.6001")
if [ -n "$seen" ]; then
	pass "scenario8: A's new rate visible within a second of the reload"
	v=PASS
else
	fail "scenario8: A did not reach its new rate within a second of the reload"
	v=FAIL ok=0
fi
summary_row scenario8 "A 10->20M within 1s" "$(mbit $(good 20e6))" \
	"$(mbit "$(awk -v t="$tr" '$1 >= t + 2 && $1 <= t + 3 { print $2 }' "$RESULTS/intervals.6001" | head -1)")" "-" "-5%" $v
for p in 6002 6003; do
	low=$(awk 'NR > 1 { print $2 }' "$RESULTS/intervals.$p" | sort -g | head -1)
	if awk -v m="$low" -v e="$(good 10e6)" 'BEGIN { exit !(m >= 0.97 * e) }'; then
		v=PASS
	else
		v=FAIL ok=0; fail "scenario8: class on port $p dipped to $(mbit $low) Mbit/s"
	fi
	summary_row scenario8 "port $p lowest second" "$(mbit $(good 10e6))" "$(mbit $low)" "-" "-3%" $v
done
[ $ok = 1 ] && pass "scenario8: no other class dipped during the reload"
