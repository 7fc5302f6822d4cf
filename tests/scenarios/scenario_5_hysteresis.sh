#!/usr/bin/env bash
# Scenario 5 (seed 002): hysteresis on a 512 kbit/s link. A VoIP-like class
# (200-byte UDP frames every 20 ms = 80 kbit/s, within its 128 kbit/s rate,
# matched by SO_MARK) beside a bulk class that borrows (1442-byte frames
# offered at 1 Mbit/s). Bursts are set small as on an ADSL line (3000 B).
# Both streams come from tests/tools/tsprobe, which timestamps each packet
# at the sender and in the receiving kernel.
#
# VoIP interarrival jitter at the receiver is RFC 3550's: the change in
# transit time between consecutive packets, p99 and max over 1000 packets.
# It is measured over two spans:
#   shaper:   from the kernel's TX_SCHED stamp (entry to __dev_queue_xmit,
#             just before tc egress) to the receiving kernel: tc, the qdisc
#             and the link, i.e. what the shaper does to the call;
#   end-to-end: from the sender's clock_gettime() before send(); adds the
#             sender's own socket and IP path, which under software
#             emulation alone shows up to ~2 ms at p99 with no shaper at
#             all (the unshaped rows), so it is reported, not judged.
# Also: VoIP packets lost, and the bulk class's largest burst (bytes
# received in any 10 ms window), with hysteresis off and on, for htbctl
# and kernel HTB.
#
# The shapers run side by side, each on its own veth pair, with both
# probes on one schedule (TSPROBE_START_NS): packet N of every call leaves
# at the same instant, so a stall of the emulated machine falls on all of
# them alike. A second round carries two unshaped pairs, one with the bulk
# stream and one without: the emulator's own floor.
#
# The clocksource matters here (printed below): on hpet, the kernel's
# default under this emulator, now and then a whole run of one pair got a
# cluster of 2.5-3 ms delays on 2-3% of its VoIP packets, p99 = the
# cluster, on htbctl's pair and on HTB's alike (CI: htbctl 3.7 ms); on
# tsc, scripts/vm.sh's default now, none since (docs/vm.md).
#
# Pass: htbctl with hysteresis off keeps the shaper's VoIP jitter p99
# under 2 ms and loses no VoIP packet.
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario5 s5i s5n s5c s5k
# An ADSL line's rates: what the case is about (a 1442-byte frame takes
# 22 ms at 512 kbit/s), so not scaled; 4 Mbit/s on four pairs is far below
# a quarter of any VM here (tests/lib/scale.sh).
scenario_load 4
dir=$work

# small bursts, as on an ADSL line
small=(burst=3000 cburst=3000)
{ ini device default=1:20
  ini 'class 1:1' rate=512kbit "${small[@]}"
  ini 'class 1:10' parent=1:1 rate=128kbit ceil=512kbit "${small[@]}" prio=0 'match=mark 0x10'
  ini 'class 1:20' parent=1:1 rate=384kbit ceil=512kbit "${small[@]}" prio=1 'match=udp dport 7001'
} > "$conf"

VOIPS=1000		# 20 s of VoIP
LEAD_S=2		# the bulk stream starts this much earlier
START_S=3		# time for every probe of a round to start
# 1442-byte frames every 11.536 ms = 1 Mbit/s, until the call ends
BULKS=$(((LEAD_S * 1000000 + VOIPS * 20000) / 11536))
VP=$(dirname "$HTBCTL")/tests/tools/tsprobe

# RFC 3550 transit changes (ms) of "SEQ T_SEND T_RECV" lines -> "p99 max"
jitter_of() {
	awk 'NR > 1 { d = ($3 - pr) - ($2 - ps); if (d < 0) d = -d; printf "%.6f\n", d / 1e6 }
	     { pr = $3; ps = $2 }' "$1" | percentiles 99 100
}

# "p99 max" of both spans: received lines "SEQ USER_NS RECV_NS LEN" and the
# sender's "SEQ USER_NS SCHED_NS" -> "shaper_p99 shaper_max e2e_p99 e2e_max"
voip_jitter() {	# recv_file send_file
	awk 'FNR == NR { s[$1] = $3; next } ($1 in s) && s[$1] > 0 { print $1, s[$1], $3 }' \
		"$2" "$1" > "$dir/sched"
	echo "$(jitter_of "$dir/sched") $(jitter_of "$1")"
}

# Largest number of bytes received in any 10 ms window ("... RECV_NS FRAME").
max_burst_10ms() {
	sort -n -k3 "$1" | awk '{ t[NR] = $3; l[NR] = $4 }
		END { j = 1; s = 0; m = 0
		      for (i = 1; i <= NR; i++) { s += l[i]
			while (t[i] - t[j] >= 10000000) { s -= l[j]; j++ }
			if (s > m) m = s }
		      print m }'
}

# One round: the pairs given as PAIR:LABEL (LABEL names the raw stamps
# kept in $RESULTS/scenario5.LABEL.*), each with its shaper already set
# up, carry a call and (unless LABEL is none-idle) the bulk stream, all on
# one schedule. Then each pair's shaper is removed (what it still holds is
# dropped, so no receiver waits for a queue to drain) and the round's
# result per pair goes to $dir/LABEL.res: "shaper_p99 shaper_max e2e_p99
# e2e_max voip_lost burst10ms_bytes".
round() {	# PAIR:LABEL...
	local pl pair label start senders=()
	start=$(($(date +%s%N) + START_S * 1000000000))
	for pl in "$@"; do
		pair=${pl%%:*} label=${pl#*:}
		topo_use "$pair"
		in_rcv "$VP" recv 7000 $VOIPS 5 > "$dir/$label.voip" &
		if [ "$label" != none-idle ]; then
			in_rcv "$VP" recv 7001 $BULKS 3 > "$dir/$label.bulk" &
			# HTB's queue blocks a bulk sender and delays its
			# schedule: it stops with the call.
			in_snd timeout $((START_S + LEAD_S + VOIPS / 50)) \
				env TSPROBE_START_NS=$start "$VP" send -q "$RCV_IP4" 7001 $BULKS 11536 1442 &
			senders+=($!)
		else
			: > "$dir/$label.bulk"
		fi
		in_snd env TSPROBE_START_NS=$((start + LEAD_S * 1000000000)) \
			"$VP" send "$RCV_IP4" 7000 $VOIPS 20000 200 0x10 > "$dir/$label.voip.tx" &
		senders+=($!)
	done
	wait "${senders[@]}"
	step "senders done"
	for pl in "$@"; do
		pair=${pl%%:*} label=${pl#*:}
		topo_use "$pair"
		case $label in
		htbctl-*) unshape_htbctl ;;
		htb-*) unshape_kernel_htb ;;
		esac
	done
	wait
	step "receivers done"
	for pl in "$@"; do
		label=${pl#*:}
		cp "$dir/$label.voip" "$RESULTS/scenario5.$label.voip.rx"
		cp "$dir/$label.voip.tx" "$RESULTS/scenario5.$label.voip.tx"
		cp "$dir/$label.bulk" "$RESULTS/scenario5.$label.bulk.rx"
		echo "$(voip_jitter "$dir/$label.voip" "$dir/$label.voip.tx")" \
		     "$((VOIPS - $(wc -l < "$dir/$label.voip")))" \
		     "$(max_burst_10ms "$dir/$label.bulk")" > "$dir/$label.res"
	done
}

ok=1
row() { printf '%-8s %-5s %-5s %10s %10s %10s %10s %6s %12s\n' "$@"; }
step "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
row shaper hyst bulk shaper_p99 shaper_max e2e_p99 e2e_max lost burst10ms_B
hp=/sys/module/sch_htb/parameters/htb_hysteresis
res() { if [ -s "$dir/$1.res" ]; then cat "$dir/$1.res"; else echo "- - - - - -"; fi; }
for h in off on; do
	pairs=()
	topo_use s5c
	if shape_htbctl "$conf" > /dev/null 2>&1 &&
	   in_snd "$HTBCTL" set dev "$SND_IF" hysteresis $h > /dev/null; then
		pairs+=(s5c:htbctl-hyst-$h)
	else
		unshape_htbctl
		fail "scenario5: htbctl load or set hysteresis $h failed"
		ok=0
	fi
	# sch_htb's hysteresis is a module parameter: writable only if the
	# module was built with it as such; otherwise it is off.
	topo_use s5k
	if [ -w $hp ]; then echo $([ $h = on ] && echo 1 || echo 0) > $hp; fi
	if [ $h = off ] || [ -w $hp ]; then
		if shape_kernel_htb "$conf"; then
			pairs+=(s5k:htb-hyst-$h)
		else
			fail "scenario5: kernel HTB setup failed"
			ok=0
		fi
	fi
	step "hysteresis $h: ${pairs[*]}"
	round "${pairs[@]}"
	if [ $h = off ]; then
		step "no shaper: s5i:none-idle s5n:none-bulk"
		round s5i:none-idle s5n:none-bulk
	fi
	[ -w $hp ] && echo 0 > $hp
	if [ $h = off ]; then
		read -r fj fjm fe fem fl fb <<<"$(res none-idle)"
		row none - no "$fj" "$fjm" "$fe" "$fem" "$fl" -
		summary_row scenario5 "voip jitter p99 ms, no shaper, idle: shaper/e2e" "(floor)" "$fj / $fe" "-" "-" INFO
		read -r fj fjm fe fem fl fb <<<"$(res none-bulk)"
		row none - yes "$fj" "$fjm" "$fe" "$fem" "$fl" "$fb"
		summary_row scenario5 "voip jitter p99 ms, no shaper, bulk: shaper/e2e" "(floor)" "$fj / $fe" "-" "-" INFO
	fi
	read -r j jm e em l b <<<"$(res htbctl-hyst-$h)"
	read -r kj kjm ke kem kl kb <<<"$(res htb-hyst-$h)"
	row htbctl $h yes "$j" "$jm" "$e" "$em" "$l" "$b"
	row htb $h yes "$kj" "$kjm" "$ke" "$kem" "$kl" "$kb"
	plot_row "shaper jitter p99, hyst $h" "-" "$j" "$kj"
	plot_row "end-to-end jitter p99, hyst $h" "-" "$e" "$ke"
	if [ $h = off ]; then
		if awk -v j="$j" -v l="$l" 'BEGIN { exit !(j != "-" && j >= 0 && j < 2 && l == 0) }'; then
			v=PASS
		else
			v=FAIL ok=0
			fail "scenario5: VoIP jitter p99 $j ms, $l lost, with hysteresis off (limit 2 ms, none lost)"
		fi
		summary_row scenario5 "voip jitter p99 ms (shaper), hyst off" "< 2" "$j" "$kj" "2ms" $v
	else
		summary_row scenario5 "voip jitter p99 ms (shaper), hyst on" "(report)" "$j" "$kj" "-" INFO
	fi
	summary_row scenario5 "voip jitter p99 ms (end-to-end), hyst $h" "(report)" "$e" "$ke" "-" INFO
	summary_row scenario5 "voip lost of $VOIPS, hyst $h" "(report)" "$l" "$kl" "-" INFO
	summary_row scenario5 "bulk max bytes/10ms, hyst $h" "(report)" "$b" "$kb" "-" INFO
done
plot_bars "$tsv" "scenario 5: VoIP jitter p99, hysteresis off/on" ms
[ $ok = 1 ] && pass "scenario5: VoIP jitter p99 (shaper) under 2 ms and no VoIP lost with hysteresis off"
