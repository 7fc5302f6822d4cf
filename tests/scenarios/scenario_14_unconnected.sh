#!/usr/bin/env bash
# Scenario 14 (issue 22): a host whose one unconnected UDP socket sends
# into two classes. fq keys a packet of an unconnected socket by its hash,
# which for one socket is one value (its sk_txhash) whatever the
# destination: before the flow tag, both classes' packets shared one fq
# flow. Classes by destination address on the host's own device:
#   A (198.18.1.2): rate 1.25 Mbit/s, ceil 3, offered twice its rate over
#      2,000 flows;
#   B (198.18.1.3): rate 1.25 Mbit/s, ceil 3, offered half its rate over
#      300 flows; both from the one socket of one flowgen;
# a ping to B's address every 10 ms; A's leaf a FIFO, B's the defaults, as
# in scenarios 12 and 13 (tests/lib/forward.sh says why). htbctl and kernel HTB with fq_codel
# leaves side by side on two hosts; the bars are tests/lib/forward.sh's:
# each class within 3% of HTB and of the ideal, B lossless, B's ping no
# later than HTB + fq_codel's, request by request.
. "$(dirname "$0")/../lib/shaping.sh"
. "$(dirname "$0")/../lib/router.sh"
. "$(dirname "$0")/../lib/forward.sh"
scenario_begin scenario14
scenario_load 13	# two 3 Mbit/s trees, A offered twice its rate; at scale 1

host_up s14h 2 3 && host_up s14k 2 3 || { fail "scenario14: host setup"; exit 1; }
conf=$work/conf/host.ini
{ ini device default=1:30
  ini 'class 1:1' rate=$(sr 3)kbit $FWD_BURSTS
  ini 'class 1:10' parent=1:1 rate=$(sk 1250)kbit ceil=$(sr 3)kbit $FWD_BURSTS aqm=off 'match=dst 198.18.1.2/32'
  ini 'class 1:20' parent=1:1 rate=$(sk 1250)kbit ceil=$(sr 3)kbit $FWD_BURSTS 'match=dst 198.18.1.3/32'
  ini 'class 1:30' parent=1:1 rate=$(sk 500)kbit ceil=$(sr 3)kbit $FWD_BURSTS; } > "$conf"

A_BPS=$(sb 2500000) B_BPS=$(sb 625000)
host_shape() { fwd_use "$1"; fwd_dev up && shape_with "$2" "$conf" fq_codel; }
host_unshape() { fwd_use "$1"; fwd_dev up; unshape_with "$2"; }
host_offer() {
	fwd_use "$1"
	fwd_offer c "" "198.18.1.2,6000,2000,$A_BPS" "198.18.1.3,8000,300,$B_BPS"
}

FWD_PINGS="B::198.18.1.3"
FWD_WARM=",198.18.1.2 ,198.18.1.3"
ok=1
if fwd_round s14h htbctl s14k kernel_htb host_shape host_unshape host_offer "u:6000:2300"; then
	fwd_judge scenario14 "one socket" "$conf" u dst \
		"A 1:10 198.18.1.2 - $A_BPS 0" "B 1:20 198.18.1.3 - $B_BPS 0" || ok=0
	fwd_judge_ping scenario14 "one socket: B's ping, among its flows" B || ok=0
else
	fail "scenario14: the round did not run"; ok=0
fi
plot_bars "$tsv" "scenario 14: one unconnected UDP socket into two classes"
[ $ok = 1 ] && pass "scenario14: one unconnected socket into two classes: within $FWD_TOL% of HTB and the ideal, B lossless, B's ping no later than HTB + fq_codel's request by request"
