#!/usr/bin/env bash
# What the VM carries, unshaped, measured the way the scenarios send:
# three UDP streams of 1400-byte datagrams at once (the test machines'
# note: about 140 Mbit/s on an AMD EPYC host, 50 on an Intel Xeon one) and
# one TCP flow, over a veth pair with no qdisc of ours. Each is the median
# of its per-second rates at the receiver (the first second not counted):
# one run of the mean swung from 155 to 358 Mbit/s of UDP on one host,
# as the emulator's stalls fell. Run in the VM by tests/run.sh at the start
# of the scenarios tier; prints one line
#     capacity UDP_BPS TCP_BPS
# which sets the scale the scenarios run at (tests/lib/scale.sh).
. "$(dirname "$0")/shaping.sh"
scenario_begin capacity cap
median_rate() {	# port: the median of intervals.PORT's per-second rates after the first
	awk 'NR > 1 { print $2 }' "$RESULTS/intervals.$1" | percentiles 50 | awk '{ printf "%.0f", $1 }'
}
run_flows 7 5301:udp:0:1400:3 > /dev/null
udp=$(median_rate 5301)
run_flows 5 5302:tcp:0:128K > /dev/null
tcp=$(median_rate 5302)
rm -f "$RESULTS/intervals.5301" "$RESULTS/intervals.5302"
echo "capacity ${udp:-0} ${tcp:-0}"
