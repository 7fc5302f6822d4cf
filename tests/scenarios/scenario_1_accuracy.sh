#!/usr/bin/env bash
# Scenario 1 (seed 000): one class reaches its rate at every packet size.
# UDP 64 and 400 bytes at 5 Mbit/s; 400, 1000, 1472 at 20 Mbit/s; TCP bulk
# at 100 Mbit/s. Pass: htbctl within 2% of the expected goodput
# R * L / (L + 42) for UDP, R * 1448 / 1514 for TCP (timestamps on).
# Rates at scale 1; tests/lib/scale.sh sizes them to the VM (20 Mbit/s of
# 400-byte datagrams offered at 1.2x is its heaviest UDP case).
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario1 s1
scenario_load 24 100
ok=1
# One tree per case, all in one config (side_by_side_trees), the leaf at
# the case's rate; the cases run one after another. One load per shaper (a
# load verifies the program again, seconds under emulation).
# label rate_mbit proto len
CASES="udp64@5M:5:udp:64 udp400@5M:5:udp:400 udp400@20M:20:udp:400
udp1000@20M:20:udp:1000 udp1472@20M:20:udp:1472 tcp@100M:100:tcp:0"
for c in $CASES; do
	IFS=: read -r _ r proto _ <<<"$c"
	echo "$(sr "$r")kbit $(sr "$r")kbit - $proto"
done | side_by_side_trees > "$conf"
declare -A got
measure() {	# shaper: every case in turn, into got[SHAPER.LABEL]
	local n=0 c label r proto len win o flow
	for c in $CASES; do
		IFS=: read -r label r proto len <<<"$c"
		n=$((n + 1))
		win=$UDP_WINDOW
		if [ "$proto" = udp ]; then
			# Offered 1.2x the expected goodput (iperf3's -b counts
			# payload): the class stays backlogged (run_flows gives
			# the sender a buffer deeper than the shaper's queue) and
			# the excess is dropped. 64-byte datagrams (5.9k packets/s
			# delivered) are sent with the default buffer instead: the
			# sender blocks at the class rate, and no CPU goes to
			# packets that are dropped; with the deep buffer the
			# emulated VM ran short of CPU and htbctl delivered 2.77.
			o=$(($(sr "$r") * 12 / 10 * len / (len + 42)))
			[ "$len" -lt 100 ] && win=
			flow="$((5200 + n)):udp:${o}K:$len"
		else
			flow="$((5200 + n)):tcp:0:128K"
		fi
		# 7 s (6 measured): over 4 (3 measured) the CI runs of
		# 2026-12-01 had one case of the 12 off by 2.2-2.4% each time,
		# either way (udp64 3.09, tcp 93.39 Mbit/s): what a late start or
		# end shifts in or out of the measured span counts half as much
		# (docs/vm.md, "Clock and timing under emulation").
		read -r _ got[$1.$label] _ <<<"$(UDP_WINDOW=$win run_flows 7 "$flow")"
		[ "$1" = htbctl ] && case_record "$label" "${flow%%:*}"
		step "$1 $label: $(mbit "${got[$1.$label]}") Mbit/s"
	done
}
each_shaper "$conf" measure || ok=0

printf '%-14s %10s %10s %10s %8s\n' case expected htbctl htb err%
for c in $CASES; do
	IFS=: read -r label r proto len <<<"$c"
	if [ "$proto" = udp ]; then
		exp=$(awk -v r="$(sr "$r")e3" -v l="$len" 'BEGIN { printf "%.0f", r * l / (l + 42) }')
	else
		exp=$(awk -v r="$(sr "$r")e3" 'BEGIN { printf "%.0f", r * 1448 / 1514 }')
	fi
	a=${got[htbctl.$label]:-0} h=${got[kernel_htb.$label]:-0}
	printf '%-14s %10s %10s %10s %8s\n' "$label" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "$(rel_err $a $exp)"
	plot_row "$label" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)"
	if within "$a" "$exp" 2; then
		v=PASS
	else
		v=FAIL ok=0
		fail "scenario1 $label: htbctl $(mbit $a) Mbit/s, expected $(mbit $exp) +-2%"
		case_explain "$label"
	fi
	summary_row scenario1 "$label" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "2%" $v
done
plot_bars "$tsv" "scenario 1: accuracy by packet size (receiver goodput)"
[ $ok = 1 ] && pass "scenario1: htbctl within 2% at every packet size"
