#!/usr/bin/env bash
# Scenario 1 (seed 000): one class reaches its rate at every packet size.
# UDP 64 and 400 bytes at 5 Mbit/s; 400, 1000, 1472 at 20 Mbit/s; TCP bulk
# at 100 Mbit/s. Pass: htbctl within 2% of the expected goodput
# R * L / (L + 42) for UDP, R * 1448 / 1514 for TCP (timestamps on).
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
. tests/lib/shaping.sh
trap 'topo_down; rm -f "$conf"' EXIT
topo_up s1 || { fail "scenario1 setup"; exit 1; }

conf=$(mktemp --suffix=.ini)
tsv=$RESULTS/scenario1.tsv
: > "$tsv"
ok=1
printf '%-14s %10s %10s %10s %8s\n' case expected htbctl htb err%
run_case() {	# label rate proto len expected_bps
	local label=$1 rate=$2 proto=$3 len=$4 exp=$5 out a h err v
	cat > "$conf" <<INI
[device]
default = 1:10
[class 1:1]
rate = $rate
[class 1:10]
parent = 1:1
rate = $rate
match = $proto dport 5201
INI
	if [ "$proto" = udp ]; then
		out=$(compare_shapers "$conf" 8 "5201:udp:$(( ${rate%mbit} * 5 / 4 ))M:$len")
	else
		out=$(compare_shapers "$conf" 8 "5201:tcp:0:128K")
	fi
	read -r _ a h _ <<<"$out"
	err=$(rel_err "${a:-0}" "$exp")
	printf '%-14s %10s %10s %10s %8s\n' "$label" "$(mbit $exp)" "$(mbit ${a:-0})" "$(mbit ${h:-0})" "$err"
	printf '%s\t%s\t%s\t%s\n' "$label" "$(mbit $exp)" "$(mbit ${a:-0})" "$(mbit ${h:-0})" >> "$tsv"
	if within "${a:-0}" "$exp" 2; then v=PASS; else v=FAIL; ok=0; fail "scenario1 $label: htbctl $(mbit ${a:-0}) Mbit/s, expected $(mbit $exp) +-2%"; fi
	summary_row scenario1 "$label" "$(mbit $exp)" "$(mbit ${a:-0})" "$(mbit ${h:-0})" "2%" $v
}
udp_exp() { awk -v r="$1" -v l="$2" 'BEGIN { printf "%.0f", r * l / (l + 42) }'; }
for c in 5:64 5:400 20:400 20:1000 20:1472; do
	r=${c%%:*} l=${c##*:}
	run_case "udp${l}@${r}M" "${r}mbit" udp "$l" "$(udp_exp ${r}e6 $l)"
done
run_case "tcp@100M" 100mbit tcp 0 "$(awk 'BEGIN { printf "%.0f", 100e6 * 1448 / 1514 }')"
plot_bars "$tsv" "scenario 1: accuracy by packet size (receiver goodput)"
[ $ok = 1 ] && pass "scenario1: htbctl within 2% at every packet size"
