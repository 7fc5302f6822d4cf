#!/usr/bin/env bash
# Scenario 3 (seed 003): every class keeps its rate while siblings borrow,
# and the spare goes by quantum. Seed 003's tree at 1/50 scale
# (configs/seed003.ini): parent 20 Mbit/s; A 10/20, B 2/2, C 2/20; A and C
# offered 15 Mbit/s, B 4 Mbit/s of 1400-byte UDP (more load makes the
# emulated VM's senders CPU-bound). Expected: the fluid ideal
# (fluid_ideal, `htbctl simulate`): A 15, B 2, C 3 Mbit/s on the wire
# (the 6 Mbit/s spare split by the quanta 125000 : 25000), as goodput
# (x 1400/1442).
# Pass: A and C within 5% of the ideal, every class >= 98% of its rate's
# goodput, B <= 102% of its ceil, the parent's total within 2% of its rate.
# Rates at scale 1 (tests/lib/scale.sh sizes the tree and the offers to
# the VM: 34 Mbit/s of UDP offered).
. "$(dirname "$0")/../lib/shaping.sh"
# scenario 7 runs this one again on 4 TX queues, under its own name
scenario_begin "${SCENARIO_NAME:-scenario3}" "s3:${TXQ:-1}"
name=$SCENARIO
scenario_load 34
# FIFO leaves, as kernel HTB's pfifo beside it (docs/design.md, "Sharing
# spare bandwidth": CoDel's short queue and the VM's sender stalls)
conf=$work/conf/seed003.ini
scale_config configs/seed003.ini | sed 's/^\[device\]$/&\naqm = off/' > "$conf"
L=1400
good() { awk -v r="$1" -v l=$L 'BEGIN { printf "%.0f", r * l / (l + 42) }'; }

ok=1
# offered on the wire: 15 and 4 Mbit/s of payload x 1442/1400
ideal=$(fluid_ideal "$conf" 1:11=$(sk 15450)kbit 1:12=$(sk 4120)kbit 1:13=$(sk 15450)kbit) ||
	{ fail "$name: no fluid ideal"; ok=0; }
out=$(compare_shapers "$conf" 6 10194:udp:$(sr 15)K:$L 10196:udp:$(sr 4)K:$L 10197:udp:$(sr 15)K:$L)
printf '%-6s %-12s %10s %10s %10s %10s %8s %8s\n' class rate/ceil at-rate ideal htbctl htb err% htb-err%
total=0 htotal=0
while read -r port a h _; do
	case $port in
	10194) cls=A id=1:11 rate=$(sb 10000000) ceil=$(sb 20000000) ;;
	10196) cls=B id=1:12 rate=$(sb 2000000) ceil=$(sb 2000000) ;;
	10197) cls=C id=1:13 rate=$(sb 2000000) ceil=$(sb 20000000) ;;
	*) fail "$name: a row for no class: $port"; ok=0; continue ;;
	esac
	exp=$(good $rate)
	fl=$(ideal_of $id "$ideal")
	fl=$(good "$(awk -v b="${fl:-0}" 'BEGIN { print b * 8 }')")
	printf '%-6s %-12s %10s %10s %10s %10s %8s %8s\n' $cls "$(mbit $rate)/$(mbit $ceil)" \
		"$(mbit $exp)" "$(mbit $fl)" "$(mbit $a)" "$(mbit $h)" "$(rel_err "$a" "$fl")" "$(rel_err "$h" "$fl")"
	plot_row "$cls" "$(mbit $fl)" "$(mbit $a)" "$(mbit $h)"
	total=$(awk -v t=$total -v a=$a 'BEGIN { print t + a }')
	htotal=$(awk -v t=$htotal -v a=$h 'BEGIN { print t + a }')
	if [ $cls != B ]; then
		if within "$a" "$fl" 5; then
			v=PASS
		else
			v=FAIL; ok=0
			fail "$name class $cls got $(mbit $a) Mbit/s, the fluid ideal is $(mbit $fl) +-5% (kernel HTB $(mbit $h))"
		fi
		summary_row "$name" "$cls = fluid ideal (HTB $(rel_err "$h" "$fl")%)" "$(mbit $fl)" "$(mbit $a)" "$(mbit $h)" "5%" $v
	fi
	if awk -v a="$a" -v e="$exp" 'BEGIN { exit !(a >= 0.98 * e) }'; then
		v=PASS
	else
		v=FAIL; ok=0
		fail "$name class $cls got $(mbit $a) Mbit/s, below 98% of its rate ($(mbit $exp))"
	fi
	summary_row "$name" "$cls >= rate" "$(mbit $exp)" "$(mbit $a)" "$(mbit $h)" "-2%" $v
	if [ "$cls" = B ]; then
		capv=PASS
		awk -v a="$a" -v c="$(good $ceil)" 'BEGIN { exit !(a <= 1.02 * c) }' ||
			{ capv=FAIL; ok=0; fail "$name class B at $(mbit $a) Mbit/s exceeds its ceil by more than 2%"; }
		summary_row "$name" "B <= ceil" "$(mbit "$(good $ceil)")" "$(mbit $a)" "$(mbit $h)" "+2%" $capv
	fi
done <<<"$out"
pexp=$(good "$(sb 20000000)")
printf '%-6s %-12s %10s %10s %10s %10s %8s %8s\n' total 20/20 "$(mbit $pexp)" "$(mbit $pexp)" "$(mbit $total)" \
	"$(mbit $htotal)" "$(rel_err $total $pexp)" "$(rel_err $htotal $pexp)"
if within "$total" "$pexp" 2; then v=PASS; else v=FAIL; ok=0; fail "$name parent total $(mbit $total) not within 2% of $(mbit $pexp)"; fi
summary_row "$name" "parent total" "$(mbit $pexp)" "$(mbit $total)" "$(mbit $htotal)" "2%" $v
plot_bars "$tsv" "$name: seed 003 tree, receiver goodput (expected: the fluid ideal)"
[ $ok = 1 ] && pass "$name: A and C within 5% of the fluid ideal, every class >= 98% of its rate, B capped, total within 2%"
