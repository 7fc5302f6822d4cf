#!/usr/bin/env bash
# Scenario 8: reload under traffic. Parent 20 Mbit/s with three 5 Mbit/s
# classes (ceil = rate), A fed 12 Mbit/s, B and C 7 Mbit/s of 1442-byte
# UDP frames (tests/tools/tsprobe, kernel receive stamps) for 14 s. At
# t = 6 s `htbctl reload` raises A to 10 Mbit/s. Rates are taken over
# windows counted from the moment the reload command returned.
# Pass: A runs at >= 95% of its new goodput from 0.25 s to 1 s after the
# reload (the first 0.25 s may still carry up to `limit`, 100 ms, of
# packets stamped at the old rate before the reload), and no whole second
# of B or C dips below 97% of their goodput.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
. tests/lib/shaping.sh
c1=$(mktemp --suffix=.ini) c2=$(mktemp --suffix=.ini) dir=$(mktemp -d)
trap 'topo_down; rm -rf "$c1" "$c2" "$dir"' EXIT
topo_up s8 || { fail "scenario8 setup"; exit 1; }

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
shape_htbctl "$c1" >/dev/null || { fail "scenario8: load failed"; exit 1; }
# port offered_bit/s -> one paced sender for 14 s and its receiver
flow() {
	local gap=$((FRAME * 8 * 1000000 / $2)) n
	n=$((14000000 / gap))
	in_rcv "$TP" recv "$1" "$n" 3 > "$dir/$1" &
	sleep 0.2
	in_snd "$TP" send "$RCV_IP4" "$1" "$n" "$gap" $FRAME > /dev/null &
}
flow 6001 12000000
flow 6002 7000000
flow 6003 7000000
sleep 6
t_start=$(date +%s%N)
in_snd "$HTBCTL" reload dev "$SND_IF" config "$c2" >/dev/null || { fail "scenario8: reload failed"; ok=0; }
td=$(date +%s%N)
wait
unshape_htbctl
echo "reload took $(( (td - t_start) / 1000000 )) ms; receiver goodput (Mbit/s) per second from the reload's end:"
tsv=$RESULTS/scenario8.tsv
printf 's from reload\tA (5 -> 10M)\tB (5M)\tC (5M)\n' > "$tsv"
for k in -4 -3 -2 -1 0 1 2 3; do
	from=$((td + k * 1000000000)) to=$((td + (k + 1) * 1000000000))
	ra=$(mbit "$(rate_in "$dir/6001" $from $to)") rb=$(mbit "$(rate_in "$dir/6002" $from $to)")
	rc=$(mbit "$(rate_in "$dir/6003" $from $to)")
	printf '  t=%+3d s  A %6s  B %6s  C %6s\n' "$k" "$ra" "$rb" "$rc"
	printf '%s\t%s\t%s\t%s\n' "$k" "$ra" "$rb" "$rc" >> "$tsv"
done
plot_lines "$tsv" "scenario 8: receiver goodput per second around the reload" "seconds from the reload's end"
first=$(rate_in "$dir/6001" $((td + 250000000)) $((td + 1000000000)))
if awk -v a="$first" -v e="$(good 10e6)" 'BEGIN { exit !(a >= 0.95 * e) }'; then
	pass "scenario8: A's new rate visible within a second of the reload"
	v=PASS
else
	fail "scenario8: A at $(mbit "$first") Mbit/s from 0.25 s to 1 s after the reload, expected $(mbit "$(good 10e6)")"
	v=FAIL ok=0
fi
summary_row scenario8 "A 5->10M, 0.25-1 s after reload" "$(mbit "$(good 10e6)")" "$(mbit "$first")" "-" "-5%" $v
for p in 6002 6003; do
	# whole seconds from the first packet + 1 s (the start's burst) to the last
	low=$(awk 'NR == 1 { t0 = $3 } { t = $3 } END { for (s = t0 + 1e9; s + 1e9 <= t; s += 1e9) printf "%.0f\n", s }' "$dir/$p" |
		while read -r s; do rate_in "$dir/$p" "$s" "$((s + 1000000000))"; echo; done | sort -g | head -1)
	if awk -v m="${low:-0}" -v e="$(good 5e6)" 'BEGIN { exit !(m >= 0.97 * e) }'; then
		v=PASS
	else
		v=FAIL ok=0; fail "scenario8: class on port $p dipped to $(mbit "${low:-0}") Mbit/s"
	fi
	summary_row scenario8 "port $p lowest second" "$(mbit "$(good 5e6)")" "$(mbit "${low:-0}")" "-" "-3%" $v
done
[ $ok = 1 ] && pass "scenario8: no other class dipped during the reload"
