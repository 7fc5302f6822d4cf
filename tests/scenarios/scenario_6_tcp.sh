#!/usr/bin/env bash
# Scenario 6: TCP through one 100 Mbit/s class, 1 and 8 parallel flows.
# Pass: goodput within 3% of R * 1448 / 1514 (MSS 1448 with timestamps in
# 1514-byte frames); retransmissions are reported as they are. The rate
# at scale 1 (tests/lib/scale.sh).
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario6 s6
scenario_load 0 100
{ ini device default=1:10
  ini 'class 1:1' rate=$(sr 100)kbit
  ini 'class 1:10' parent=1:1 rate=$(sr 100)kbit 'match=tcp dport 5201'; } > "$conf"
ok=1
exp=$(awk -v r="$(sr 100)e3" 'BEGIN { printf "%.0f", r * 1448 / 1514 }')
# One load per shaper for both runs (a load verifies the program again,
# seconds under emulation).
declare -A bps retr
measure() {	# shaper: 1, then 8 flows, into bps and retr[SHAPER.FLOWS]
	local n
	for n in 1 8; do
		read -r _ bps[$1.$n] retr[$1.$n] <<<"$(run_flows 6 "5201:tcp:0:128K:$n")"
		step "$1, $n flows: $(mbit "${bps[$1.$n]}") Mbit/s, ${retr[$1.$n]} retransmits"
	done
}
each_shaper "$conf" measure || ok=0
printf '%-8s %10s %10s %10s %8s %12s\n' flows expected htbctl htb err% 'retr(h/k)'
for n in 1 8; do
	a=${bps[htbctl.$n]:-} h=${bps[kernel_htb.$n]:-} ar=${retr[htbctl.$n]:-} hr=${retr[kernel_htb.$n]:-}
	printf '%-8s %10s %10s %10s %8s %12s\n' "$n" "$(mbit $exp)" "$(mbit ${a:-0})" "$(mbit ${h:-0})" \
		"$(rel_err ${a:-0} $exp)" "${ar:-?}/${hr:-?}"
	plot_row "tcp x$n" "$(mbit $exp)" "$(mbit ${a:-0})" "$(mbit ${h:-0})"
	v=PASS
	within "${a:-0}" "$exp" 3 || { v=FAIL; ok=0; fail "scenario6 $n flows: $(mbit ${a:-0}) Mbit/s, expected $(mbit $exp) +-3%"; }
	summary_row scenario6 "tcp x$n (retr ${ar:-?}/${hr:-?})" "$(mbit $exp)" "$(mbit ${a:-0})" "$(mbit ${h:-0})" "3%" $v
done
plot_bars "$tsv" "scenario 6: TCP goodput through a 100 Mbit/s class"
[ $ok = 1 ] && pass "scenario6: 1 and 8 TCP flows within 3%"
