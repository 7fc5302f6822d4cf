#!/usr/bin/env bash
# Scenario 4 (seed 004): latency under load. Four TCP uploads saturate a
# 50 Mbit/s parent while ping runs beside them, twice: ping in its own
# prio-0 class (matched by its SO_MARK), and ping inside the bulk class.
# RTT p50/p99/max for htbctl and kernel HTB (default pfifo leaves).
# Pass: in its own class htbctl's p99 is at most 1 ms above HTB's. The
# in-class numbers are reported as they are (how much of a FIFO a class is).
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
. tests/lib/shaping.sh
trap 'topo_down; rm -f "$own" "$inclass"' EXIT
topo_up s4 || { fail "scenario4 setup"; exit 1; }

own=$(mktemp --suffix=.ini) inclass=$(mktemp --suffix=.ini)
write_conf() {	# file ping_match_line
	cat > "$1" <<INI
[device]
default = 1:20
[class 1:1]
rate = 50mbit
[class 1:10]
parent = 1:1
rate = 5mbit
ceil = 50mbit
prio = 0
$2
[class 1:20]
parent = 1:1
rate = 45mbit
ceil = 50mbit
prio = 1
match = tcp dport 5201
INI
}
write_conf "$own" "match = mark 0x10"
write_conf "$inclass" ""

# RTTs of 150 pings at 50 ms while the link is saturated -> "p50 p99 max" (ms)
ping_under_load() {
	local dir
	dir=$(mktemp -d)
	in_rcv iperf3 -s -1 -p 5201 > /dev/null 2>&1 &
	sleep 0.5
	in_snd iperf3 -c "$RCV_IP4" -p 5201 -t 12 -P 4 > /dev/null 2>&1 &
	local ip=$!
	sleep 2
	in_snd ping -n -c 150 -i 0.05 -m 16 "$RCV_IP4" > "$dir/ping" 2>&1
	wait $ip; wait
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$dir/ping" | percentiles 50 99 100
	rm -rf "$dir"
}

ok=1
tsv=$RESULTS/scenario4.tsv
: > "$tsv"
printf '%-10s %-8s %8s %8s %8s\n' placement shaper p50 p99 max
for place in own inclass; do
	conf=${!place}
	shape_htbctl "$conf" > /dev/null || { fail "scenario4: load failed"; ok=0; continue; }
	read -r a50 a99 amax <<<"$(ping_under_load)"
	unshape_htbctl
	shape_kernel_htb "$conf" || { fail "scenario4: kernel HTB setup failed"; ok=0; continue; }
	read -r h50 h99 hmax <<<"$(ping_under_load)"
	unshape_kernel_htb
	printf '%-10s %-8s %8s %8s %8s\n' "$place" htbctl "$a50" "$a99" "$amax" "$place" htb "$h50" "$h99" "$hmax"
	printf '%s\t%s\t%s\t%s\n' "$place p99" "-" "$a99" "$h99" >> "$tsv"
	if [ "$place" = own ]; then
		if awk -v a="$a99" -v h="$h99" 'BEGIN { exit !(a != "nan" && a <= h + 1) }'; then
			v=PASS
		else
			v=FAIL ok=0; fail "scenario4: own-class ping p99 $a99 ms is more than 1 ms above HTB's $h99 ms"
		fi
		summary_row scenario4 "ping own class p99 ms" "<= htb+1" "$a99" "$h99" "+1ms" $v
	else
		summary_row scenario4 "ping in bulk class p99 ms" "(report)" "$a99" "$h99" "-" INFO
	fi
done
plot_bars "$tsv" "scenario 4: ping RTT p99 (ms) under 4 TCP uploads"
[ $ok = 1 ] && pass "scenario4: ping in its own class within 1 ms of kernel HTB at p99"
