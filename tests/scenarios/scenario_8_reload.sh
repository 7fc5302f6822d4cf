#!/usr/bin/env bash
# Scenario 8: reload under traffic. Parent 20 Mbit/s with three 5 Mbit/s
# classes (ceil = rate), A fed 12 Mbit/s, B and C 7 Mbit/s of 1442-byte
# UDP frames (tests/tools/tsprobe, kernel receive stamps) for 14 s. At
# t = 6 s `htbctl reload` raises A to 10 Mbit/s; in a second run, kernel
# HTB from the same trees gets `tc class change`. Rates are taken over
# windows counted from the moment the change command returned.
# Pass: A runs at >= 95% of its new goodput from 0.25 s to 1 s after the
# reload (the first 0.25 s may still carry up to `limit`, 100 ms, of
# packets stamped at the old rate before the reload), and no whole second
# of B or C dips below 97% of their goodput. The sockets' buffers are
# raised in the VM (tests/lib/shaping.sh, big_socket_buffers), and each
# run's receiver drops are printed beside it.
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario8 s8
scenario_load 26	# rates at scale 1 (tests/lib/scale.sh)
c1=$work/conf/c1.ini c2=$work/conf/c2.ini dir=$work

# A (1:10), B, C on UDP ports 6001-6003; the rest to 1:13
write_conf() {	# file rate_of_A
	local rates=("$2" $(sr 5)kbit $(sr 5)kbit) i
	# aqm off: FIFO leaves, as kernel HTB's pfifo (scenario 3 says why)
	{ ini device default=1:13 aqm=off
	  ini 'class 1:1' rate=$(sr 20)kbit
	  for i in 0 1 2; do
		ini "class 1:1$i" parent=1:1 rate="${rates[i]}" "match=udp dport 600$((i + 1))"
	  done
	  ini 'class 1:13' parent=1:1 rate=$(sr 1)kbit; } > "$1"
}
write_conf "$c1" $(sr 5)kbit
write_conf "$c2" $(sr 10)kbit
TP=$(dirname "$HTBCTL")/tests/tools/tsprobe
FRAME=1442 L=1400	# UDP payload = frame - 42
good() { awk -v r="$1" -v l=$L 'BEGIN { printf "%.0f", r * l / (l + 42) }'; }
# Goodput (bit/s) of the packets received in [from, to) (ns) of a tsprobe
# receiver's "SEQ SEND_NS RECV_NS FRAME" lines.
rate_in() {	# file from_ns to_ns
	awk -v a="$2" -v b="$3" '$3 >= a && $3 < b { s += ($4 - 42) * 8 }
		END { printf "%.0f", s * 1e9 / (b - a) }' "$1"
}
ok=1
# port offered_bit/s file -> one paced sender for 14 s and its receiver
flow() {
	local gap=$((FRAME * 8 * 1000000 / $2)) n
	n=$((14000000 / gap))
	in_rcv "$TP" recv "$1" "$n" 3 > "$3" &
	sleep 0.2
	in_snd "$TP" send -q "$RCV_IP4" "$1" "$n" "$gap" $FRAME &
}
# Kernel HTB's equivalent of the reload: change class 1:10 to c2's line.
htb_change() {
	htb_tc_batch "$c2" "$SND_IF" | grep ' classid 1:10 ' | sed 's/^class add/class change/' > "$dir/change"
	in_snd tc -batch "$dir/change"
}
# One run: flows for 14 s, the change at 6 s; $dir/SHAPER.PORT and
# $dir/SHAPER.td (ns when the change command returned).
run_with() {	# htbctl|htb
	local sh=$1 t_start td e0 p
	shape_with "$sh" "$c1" || return 1
	e0=$(udp_rcvbuf_errors)
	flow 6001 "$(sb 12000000)" "$dir/$sh.6001"
	flow 6002 "$(sb 7000000)" "$dir/$sh.6002"
	flow 6003 "$(sb 7000000)" "$dir/$sh.6003"
	sleep 6
	t_start=$(date +%s%N)
	if [ "$sh" = htbctl ]; then
		in_snd "$HTBCTL" reload dev "$SND_IF" config "$c2" >/dev/null || { fail "scenario8: reload failed"; ok=0; }
	else
		htb_change || { fail "scenario8: tc class change failed"; ok=0; }
	fi
	td=$(date +%s%N)
	echo "$td" > "$dir/$sh.td"
	wait
	unshape_with "$sh"
	echo $(($(udp_rcvbuf_errors) - e0)) > "$dir/$sh.rcvbuf"
	for p in 6001 6002 6003; do cp "$dir/$sh.$p" "$RESULTS/scenario8.$sh.$p.rx"; done
	echo "$sh: the change took $(( (td - t_start) / 1000000 )) ms;" \
		"the receiver dropped $(cat "$dir/$sh.rcvbuf") datagrams for want of buffer"
}
big_socket_buffers	# tsprobe's paced UDP, as scenario 9's
run_with htbctl || exit 1
run_with htb || ok=0
default_socket_buffers

printf 's from reload\tA (5 -> 10M)\tB (5M)\tC (5M)\tHTB A\tHTB B\tHTB C\n' > "$tsv"
echo "receiver goodput (Mbit/s) per second from the change's end: htbctl | kernel HTB"
for k in -4 -3 -2 -1 0 1 2 3; do
	row=$k line=$(printf '  t=%+3d s' "$k")
	for sh in htbctl htb; do
		td=$(cat "$dir/$sh.td" 2>/dev/null || echo 0)
		from=$((td + k * 1000000000)) to=$((td + (k + 1) * 1000000000))
		for p in 6001 6002 6003; do
			r=$(mbit "$(rate_in "$dir/$sh.$p" $from $to 2>/dev/null || echo 0)")
			row+=$'\t'$r line+=$(printf ' %6s' "$r")
		done
		[ $sh = htbctl ] && line+="  |"
	done
	echo "$line"
	echo "$row" >> "$tsv"
done
plot_lines "$tsv" "scenario 8: receiver goodput per second around the change" "seconds from the change's end"

# A: 0.25 s to 1 s after the change; B, C: their lowest whole second.
new_rate() {	# shaper
	local td
	td=$(cat "$dir/$1.td" 2>/dev/null || echo 0)
	rate_in "$dir/$1.6001" $((td + 250000000)) $((td + 1000000000)) 2>/dev/null || echo 0
}
lowest_second() {	# file
	awk 'NR == 1 { t0 = $3 } { t = $3 } END { for (s = t0 + 1e9; s + 1e9 <= t; s += 1e9) printf "%.0f\n", s }' "$1" 2>/dev/null |
		while read -r s; do rate_in "$1" "$s" "$((s + 1000000000))"; echo; done | sort -g | head -1
}
first=$(new_rate htbctl) kfirst=$(new_rate htb)
if awk -v a="$first" -v e="$(good "$(sb 10000000)")" 'BEGIN { exit !(a >= 0.95 * e) }'; then
	pass "scenario8: A's new rate visible within a second of the reload"
	v=PASS
else
	fail "scenario8: A at $(mbit "$first") Mbit/s from 0.25 s to 1 s after the reload, expected $(mbit "$(good "$(sb 10000000)")") (the receiver dropped $(cat "$dir/htbctl.rcvbuf") datagrams for want of buffer)"
	v=FAIL ok=0
fi
summary_row scenario8 "A 5->10M, 0.25-1 s after the change" "$(mbit "$(good "$(sb 10000000)")")" "$(mbit "$first")" "$(mbit "$kfirst")" "-5%" $v
for p in 6002 6003; do
	low=$(lowest_second "$dir/htbctl.$p") klow=$(lowest_second "$dir/htb.$p")
	if awk -v m="${low:-0}" -v e="$(good "$(sb 5000000)")" 'BEGIN { exit !(m >= 0.97 * e) }'; then
		v=PASS
	else
		v=FAIL ok=0; fail "scenario8: class on port $p dipped to $(mbit "${low:-0}") Mbit/s"
	fi
	summary_row scenario8 "port $p lowest second" "$(mbit "$(good "$(sb 5000000)")")" "$(mbit "${low:-0}")" "$(mbit "${klow:-0}")" "-3%" $v
done
[ $ok = 1 ] && pass "scenario8: no other class dipped during the reload"
