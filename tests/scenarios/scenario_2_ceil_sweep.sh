#!/usr/bin/env bash
# Scenario 2 (seed 001): no rate steps. A borrowing leaf (rate 1 Mbit/s)
# under a parent whose rate equals the ceil being swept; seed 001's table
# boundaries scaled by 1/40 (376..914 Mbit -> 9.4..22.85 Mbit/s), where
# the old rate tables jumped by up to 14%. (At 1/25 the top point needs
# 55 Mbit/s offered, more than the emulated VM's sender keeps up with.)
# 1000-byte UDP offered at 1.5x, 5 s per point (the first 2 s, the burst,
# not counted). htbctl is loaded once and reloaded with each ceil (a load
# verifies the program again, seconds under emulation); kernel HTB is set
# up afresh per point.
# Pass: htbctl's achieved rate is monotonic in the ceil and within 2% of
# R * L / (L + 42) at every point.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
. tests/lib/shaping.sh
trap 'topo_down; rm -f "$conf"' EXIT
topo_up s2 || { fail "scenario2 setup"; exit 1; }

conf=$(mktemp --suffix=.ini)
tsv=$RESULTS/scenario2.tsv
: > "$tsv"
L=1000 ok=1 prev=0
CEILS="9400 9425 10000 11425 12300 13325 16000 17775 20000 22850"
write_conf() {	# ceil_kbit
	cat > "$conf" <<INI
[device]
default = 1:10
[class 1:1]
rate = ${1}kbit
[class 1:10]
parent = 1:1
rate = 1mbit
ceil = ${1}kbit
INI
}
declare -A got_a got_h
first=1
for c in $CEILS; do
	write_conf "$c"
	if [ $first = 1 ]; then
		shape_htbctl "$conf" > /dev/null 2>&1 || { fail "scenario2: load failed"; exit 1; }
		first=0
	else
		in_snd "$HTBCTL" reload dev "$SND_IF" config "$conf" > /dev/null 2>&1 ||
			{ fail "scenario2: reload to ceil ${c}kbit failed"; ok=0; }
	fi
	read -r _ got_a[$c] _ <<<"$(run_flows 5 "5201:udp:$((c * 3 / 2))K:$L")"
	step "htbctl ceil ${c}K: $(mbit "${got_a[$c]}") Mbit/s"
done
unshape_htbctl
for c in $CEILS; do
	write_conf "$c"
	got_h[$c]=0
	if shape_kernel_htb "$conf"; then
		read -r _ got_h[$c] _ <<<"$(run_flows 5 "5201:udp:$((c * 3 / 2))K:$L")"
		step "kernel HTB ceil ${c}K: $(mbit "${got_h[$c]}") Mbit/s"
		unshape_kernel_htb
	fi
done

printf '%-10s %10s %10s %10s %8s\n' ceil expected htbctl htb err%
for c in $CEILS; do
	a=${got_a[$c]:-0} h=${got_h[$c]:-0}
	exp=$(awk -v r="${c}e3" -v l=$L 'BEGIN { printf "%.0f", r * l / (l + 42) }')
	printf '%-10s %10s %10s %10s %8s\n' "${c}K" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "$(rel_err $a $exp)"
	printf '%s\t%s\t%s\t%s\n' "${c}K" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" >> "$tsv"
	v=PASS
	if ! within "$a" "$exp" 2; then
		v=FAIL; ok=0; fail "scenario2 ceil ${c}kbit: $(mbit $a) Mbit/s, expected $(mbit $exp) +-2%"
	fi
	if awk -v a="$a" -v p="$prev" 'BEGIN { exit !(a < p) }'; then
		v=FAIL; ok=0; fail "scenario2 ceil ${c}kbit: rate fell below the previous, smaller ceil's"
	fi
	prev=$a
	summary_row scenario2 "ceil ${c}K" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "2%" $v
done
plot_bars "$tsv" "scenario 2: achieved rate per ceil (seed 001 boundaries / 40)"
[ $ok = 1 ] && pass "scenario2: monotonic and within 2% at every ceil"
