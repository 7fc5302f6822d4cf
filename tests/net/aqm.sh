#!/usr/bin/env bash
# CoDel on the schedule with real packets through the loaded program (root;
# --no-qdisc, no sch_fq here: the program stamps and nothing holds packets
# back, but the class's schedule, and so CoDel's view of its delay, are
# those of a shaped link). A UDP flood at twice the class's rate: Not-ECT
# packets are dropped by CoDel, ECT(0) ones (iperf3 --tos 2) marked CE and
# never dropped by it; show says so and shows the queue delay. The latency
# this buys is the VM's to measure (issue 12).

aqm_conf() {	# [class keys...]
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=4mbit ceil=4mbit limit=1s "match=udp dport 5301" "$@"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}

# a UDP flood to 1:10 at 8 Mbit/s for $1 seconds; iperf3 options after it
flood() {
	local t=$1
	shift
	iperf_server $((t + 5)) 5301 > /dev/null 2>&1 &
	sleep 0.5
	iperf_client $((t + 5)) -c "$RCV_IP4" -p 5301 -u -b 8M -l 1400 -t "$t" "$@" \
		> "$tmp/iperf.out" 2>&1 &
}

test_not_ect_dropped_by_codel() {
	local qd
	aqm_conf > "$tmp/c.ini"
	load_tree "$tmp/c.ini" --no-qdisc
	flood 3
	sleep 2
	qd=$(jclass 1:10 queue_delay)
	wait
	[ "$(jclass 1:10 aqm_drops)" -gt 0 ] && [ "$(jclass 1:10 ecn_marks)" = 0 ] &&
	[ "${qd:-0}" -gt 5000000 ] ||
		fail "aqm_drops $(jclass 1:10 aqm_drops), ecn_marks $(jclass 1:10 ecn_marks), queue_delay $qd during the flood"
	note "aqm_drops $(jclass 1:10 aqm_drops), limit drops $(jclass 1:10 drops), queue delay $((qd / 1000000)) ms"
}

test_ect_marked_not_dropped() {
	aqm_conf > "$tmp/c.ini"
	load_tree "$tmp/c.ini" --no-qdisc
	flood 3 --tos 2
	wait
	[ "$(jclass 1:10 ecn_marks)" -gt 0 ] && [ "$(jclass 1:10 aqm_drops)" = 0 ] ||
		fail "ecn_marks $(jclass 1:10 ecn_marks), aqm_drops $(jclass 1:10 aqm_drops)"
	note "ecn_marks $(jclass 1:10 ecn_marks)"
}

test_aqm_off_no_signal() {
	aqm_conf aqm=off > "$tmp/c.ini"
	load_tree "$tmp/c.ini" --no-qdisc
	flood 3
	wait
	[ "$(jclass 1:10 packets)" -gt 100 ] &&
	[ "$(jclass 1:10 ecn_marks)" = 0 ] && [ "$(jclass 1:10 aqm_drops)" = 0 ] ||
		fail "packets $(jclass 1:10 packets), ecn_marks $(jclass 1:10 ecn_marks), aqm_drops $(jclass 1:10 aqm_drops)"
}

# Sparse flows: pings to the flooded class's address (so in the class)
# leave ahead of its queue; with flows off none does.
sparse_conf() {	# flows on|off
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=4mbit ceil=4mbit limit=1s "match=dst $RCV_IP4/32" "flows=$1"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}

test_sparse_ping_ahead_of_a_flood() {
	local on off
	for f in on off; do
		sparse_conf $f > "$tmp/c.ini"
		load_tree "$tmp/c.ini" --no-qdisc
		flood 3
		sleep 1
		in_snd ping -q -c 5 -i 0.2 "$RCV_IP4" > /dev/null 2>&1
		wait
		eval "$f=\$(jclass 1:10 sparse_packets)"
		h unload dev "$SND_IF" > /dev/null
	done
	[ "${on:-0}" -ge 5 ] && [ "${off:-1}" = 0 ] ||
		fail "sparse packets: $on with flows on (5 pings), $off with flows off"
	note "flows on: $on sparse packets (5 pings sent), off: $off"
}

. "$(dirname "$0")/../lib/runner.sh"
