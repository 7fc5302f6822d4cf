#!/usr/bin/env bash
# Scenario 4 (seed 004): latency under load. Four TCP uploads saturate a
# 20 Mbit/s parent while pings run beside them, twice: ping in its own
# prio-0 class (matched by its SO_MARK), and ping inside the bulk class.
# RTT p50/p99/max of 1600 echo requests (every 5 ms; twice in own class)
# for htbctl and kernel HTB (default pfifo leaves), from tests/tools/tsprobe,
# which records for
# each request the time ping(8) would start from (before sendto) and the
# kernel's TX_SCHED stamp (entering __dev_queue_xmit, before tc egress),
# and the kernel's receive stamp of the reply. The network RTT (from
# TX_SCHED) is what the shapers are judged on; ping's RTT adds the
# sender's own socket path, which under software emulation shows
# millisecond stalls whatever the shaper, and is reported beside it.
#
# The two shapers run side by side, at the same time, on two veth pairs
# (htbctl on one, kernel HTB on the other, each with its own uploads and
# pings), and the two probes send request N at the same instant: the
# emulator's stalls, which move either shaper's p99 between 0.6 and 5 ms
# from one run to the next, then fall on both alike. (Run one after the
# other, the same code measured htbctl 2.1 / HTB 0.96 ms in one run and
# 0.64 / 2.4 ms in the next.)
# Pass: in its own class, request by request, htbctl's network RTT is more
# than 1 ms above HTB's on at most 1% of the requests more than HTB's is
# above htbctl's, beyond chance, or else in at most 1% of the 250 ms
# blocks (tests/lib/rtt.sh, rtt_judge: stalls delay requests in runs), and
# no request is lost. (The bar was the p99 within 1 ms until 2026-12-03: a
# p99 is the emulator's few longest stalls.) The in-class numbers are
# reported as they are (how much of a FIFO a class is).
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario4 s4c s4k
scenario_load 0 40	# two 20 Mbit/s trees of TCP at once; rates at scale 1

own=$work/own.ini inclass=$work/inclass.ini dir=$work/pings
mkdir "$dir"
write_conf() {	# file [ping's match=...]
	{ ini device default=1:20
	  ini 'class 1:1' rate=$(sr 20)kbit
	  ini 'class 1:10' parent=1:1 rate=$(sr 5)kbit ceil=$(sr 20)kbit prio=0 ${2:+"$2"}
	  ini 'class 1:20' parent=1:1 rate=$(sr 15)kbit ceil=$(sr 20)kbit prio=1 'match=tcp dport 5201'; } > "$1"
}
write_conf "$own" "match=mark 0x10"
write_conf "$inclass"

PINGS=1600 GAP_US=5000
TP=$(dirname "$HTBCTL")/tests/tools/tsprobe

# Both pairs shaped with config: four uploads on each, then pings on both
# at once, appended to $dir/htbctl.ping and $dir/htb.ping (kept in
# $RESULTS as scenario4.PLACEMENT.SHAPER.ping).
pings_side_by_side() {	# config
	local conf=$1 p
	topo_use s4c
	shape_htbctl "$conf" > /dev/null || { fail "scenario4: load failed"; return 1; }
	topo_use s4k
	shape_kernel_htb "$conf" || { fail "scenario4: kernel HTB setup failed"; return 1; }
	for p in s4c s4k; do
		topo_use $p
		iperf_server 40 5201 > /dev/null 2>&1 &
		await_listen 5201 >&2
		iperf_client 30 -c "$RCV_IP4" -p 5201 -t 11 -P 4 > /dev/null 2>&1 &
	done
	sleep 1.5
	# Both probes start at the same instant, 0.5 s from now, and keep
	# one schedule: request N of each leaves at the same moment.
	export TSPROBE_START_NS=$(($(date +%s%N) + 500000000))
	topo_use s4c
	in_snd timeout 30 "$TP" ping "$RCV_IP4" $PINGS $GAP_US 0x10 >> "$dir/htbctl.ping" &
	topo_use s4k
	in_snd timeout 30 "$TP" ping "$RCV_IP4" $PINGS $GAP_US 0x10 >> "$dir/htb.ping" &
	wait
	unset TSPROBE_START_NS
	topo_use s4c
	unshape_htbctl
	topo_use s4k
	unshape_kernel_htb
}

ok=1
row() { printf '%-10s %-8s %9s %9s %9s %9s %9s %9s %5s\n' "$@"; }
row placement shaper net_p50 net_p99 net_max ping_p50 ping_p99 ping_max lost
for place in own inclass; do
	rm -f "$dir"/*.ping
	# The judged placement runs twice and pools its samples: the stalls
	# that set a p99 come in clusters of 50-100 ms, a few per run.
	rounds=1; [ $place = own ] && rounds=2
	for ((r = 0; r < rounds; r++)); do
		pings_side_by_side "${!place}" || { ok=0; continue 2; }
	done
	read -r a50 a99 amax p50 p99 pmax al <<<"$(rtt_stats "$dir/htbctl.ping")"
	read -r h50 h99 hmax q50 q99 qmax hl <<<"$(rtt_stats "$dir/htb.ping")"
	step "$place: network RTT p99 htbctl $a99 ms ($al lost), kernel HTB $h99 ms ($hl lost)"
	cp "$dir/htbctl.ping" "$RESULTS/scenario4.$place.htbctl.ping"
	cp "$dir/htb.ping" "$RESULTS/scenario4.$place.htb.ping"
	row "$place" htbctl "$a50" "$a99" "$amax" "$p50" "$p99" "$pmax" "$al"
	row "$place" htb "$h50" "$h99" "$hmax" "$q50" "$q99" "$qmax" "$hl"
	plot_row "$place network RTT p99" "-" "$a99" "$h99"
	plot_row "$place ping RTT p99" "-" "$p99" "$q99"
	if [ "$place" = own ]; then
		read -r m later earlier bm blater bearlier <<<"$(rtt_judge "$dir/htbctl.ping" "$dir/htb.ping" 1 $GAP_US)"
		step "own: of $m requests htbctl's more than 1 ms later on $later, HTB's on $earlier; of $bm blocks of $RTT_BLOCK_MS ms htbctl's later in $blater, HTB's in $bearlier"
		if rtt_no_later "$m" "$later" "$earlier" "$bm" "$blater" "$bearlier" && [ "$al" = 0 ]; then
			v=PASS
		else
			v=FAIL ok=0
			fail "scenario4: own-class network RTT more than 1 ms above HTB's on $later of $m requests and in $blater of $bm blocks of $RTT_BLOCK_MS ms, HTB's above htbctl's on $earlier and in $bearlier (p99 $a99 against $h99 ms), $al lost"
		fi
		summary_row scenario4 "ping own class: network RTT p50/p99/max ms; requests, ${RTT_BLOCK_MS}ms blocks later by 1ms" "later <= htb's + 1% + 3sd, by requests or blocks" \
			"$a50 / $a99 / $amax; $later, $blater" "$h50 / $h99 / $hmax; $earlier, $bearlier" "1ms" $v
		summary_row scenario4 "ping own class: ping(8) RTT p50/p99/max ms" "(report)" "$p50 / $p99 / $pmax" "$q50 / $q99 / $qmax" "-" INFO
	else
		summary_row scenario4 "ping in bulk class: network RTT p50/p99/max ms (lost of $PINGS)" "(report)" \
			"$a50 / $a99 / $amax ($al)" "$h50 / $h99 / $hmax ($hl)" "-" INFO
	fi
done
plot_bars "$tsv" "scenario 4: ping RTT p99 under 4 TCP uploads" ms
[ $ok = 1 ] && pass "scenario4: ping in its own class no later than kernel HTB's request by request, none lost"
