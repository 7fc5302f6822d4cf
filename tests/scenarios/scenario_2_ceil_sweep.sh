#!/usr/bin/env bash
# Scenario 2 (seed 001): no rate steps. A borrowing leaf (rate 1 Mbit/s)
# under a parent whose rate equals the ceil being swept; seed 001's table
# boundaries scaled by 1/40 (376..914 Mbit -> 9.4..22.85 Mbit/s), where
# the old rate tables jumped by up to 14%. (At 1/25 the top point needs
# 55 Mbit/s offered, more than the emulated VM's sender keeps up with.)
# 1000-byte UDP offered at 1.2x the expected goodput, 4 s per point (the
# first second, the burst, not counted). One tree holds every point (a parent
# at the ceil, its leaf matched by the point's own port) and the points run
# one after another, so each leaf is alone on the link: one load per shaper
# (a load verifies the program again, and a kernel HTB setup runs jq and
# tc: seconds each under emulation).
# Pass: htbctl's achieved rate is monotonic in the ceil (no point 1% or
# more below the one before it) and within 2% of R * L / (L + 42) at every
# point. The ceils at scale 1 (tests/lib/scale.sh sizes them to the VM:
# the top point offers 27 Mbit/s).
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario2 s2
scenario_load 27
L=1000 ok=1 prev=0
CEILS="9400 9425 10000 11425 12300 13325 16000 17775 20000 22850"
for c in $CEILS; do
	echo "$(sk "$c")kbit $(sk 1000)kbit $(sk "$c")kbit udp"
done | side_by_side_trees > "$conf"
declare -A got
measure() {	# shaper: every ceil in turn, into got[SHAPER.CEIL]
	local n=0 c
	for c in $CEILS; do
		n=$((n + 1))
		read -r _ got[$1.$c] _ <<<"$(run_flows 4 "$((5200 + n)):udp:$(($(sk "$c") * 1200 * L / (L + 42) / 1000))K:$L")"
		step "$1 ceil ${c}K: $(mbit "${got[$1.$c]}") Mbit/s"
	done
}
each_shaper "$conf" measure || ok=0

printf '%-10s %10s %10s %10s %8s\n' ceil expected htbctl htb err%
for c in $CEILS; do
	a=${got[htbctl.$c]:-0} h=${got[kernel_htb.$c]:-0}
	exp=$(awk -v r="$(sk "$c")e3" -v l=$L 'BEGIN { printf "%.0f", r * l / (l + 42) }')
	printf '%-10s %10s %10s %10s %8s\n' "${c}K" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "$(rel_err $a $exp)"
	plot_row "${c}K" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)"
	v=PASS
	if ! within "$a" "$exp" 2; then
		v=FAIL; ok=0; fail "scenario2 ceil ${c}kbit: $(mbit $a) Mbit/s, expected $(mbit $exp) +-2%"
	fi
	# A step is what seed 001 is about (the old rate tables: up to 14%);
	# a drop within 1% is the measurement's noise (the CI run of
	# 2026-12-01: 9.08 at 9400K, 9.05 at 9425K, 0.27% apart).
	if awk -v a="$a" -v p="$prev" 'BEGIN { exit !(a < 0.99 * p) }'; then
		v=FAIL; ok=0; fail "scenario2 ceil ${c}kbit: rate fell below the previous, smaller ceil's"
	fi
	prev=$a
	summary_row scenario2 "ceil ${c}K" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "2%" $v
done
plot_bars "$tsv" "scenario 2: achieved rate per ceil (seed 001 boundaries / 40)"
[ $ok = 1 ] && pass "scenario2: monotonic and within 2% at every ceil"
