#!/usr/bin/env bash
# Scenario 10 (seed 004, issue 12): latency inside a busy class. Two TCP
# uploads saturate a 20 Mbit/s class and a ping every 10 ms runs in the
# same class, and beside it, for reference, the same ping in its own prio-0
# class. htbctl and kernel HTB side by side on one probe schedule, as
# scenario 4 does (two veth pairs, request N of all four probes at the
# same instant: the emulator's stalls fall on all alike), in four rounds:
#   fifo       htbctl aqm=off flows=off      HTB, pfifo leaves (its default)
#   codel      htbctl aqm=codel flows=off    HTB, codel leaves (one queue)
#   defaults   htbctl (codel, flows on)      HTB, fq_codel leaves
#   ecn        the same, ECN TCP senders     HTB, cake leaves, ECN senders
# Reported: the network RTT (tsprobe, from the TX_SCHED stamp) p50/p99/max,
# TCP goodput and retransmissions, the class's CE marks and AQM drops
# (+ limit drops).
# Pass, for htbctl: with CoDel alone the in-class p50 near HTB + codel's
# and the p99 under half the FIFO's (issue 12 asked for under 10 ms: see
# the verdict below); with the defaults 95% of the in-class pings within
# 2 ms of the own-class ping's p99 of the same round, and no later than
# HTB + fq_codel's request by request;
# goodput at least 95% of the ideal in every AQM round; with ECN senders
# marks, and AQM drops (packets not ECT) at most 2% of the signals.
# Then a UDP flood at twice a 10 Mbit/s class's rate beside a TCP class of
# 10 Mbit/s, under CoDel (htbctl alone): the flood's class delivers its
# rate within 5%, CoDel drops, the TCP class keeps 95% of its share.
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario10 s10c s10k
# rates at scale 1 (tests/lib/scale.sh): two 20 Mbit/s trees of TCP side
# by side; the last round floods one with 20 Mbit/s of UDP
scenario_load 20 40

dir=$work/r
mkdir "$dir"
PINGS=800 GAP_US=10000 SECS=12
TP=$(dirname "$HTBCTL")/tests/tools/tsprobe
# 20 Mbit/s less the two pings' 98-byte frames every 10 ms, as TCP payload
# (MSS 1448 in 1514-byte frames with timestamps)
ideal=$(awk -v r="$(sr 20)e3" 'BEGIN { printf "%.0f", (r - 2 * 98 * 8 * 100) * 1448 / 1514 }')

# The tree of every round; KEYS go to [device] (aqm=..., flows=...).
# The ping is in 1:20 with the uploads unless it carries mark 0x10.
write_conf() {	# file keys...
	local f=$1
	shift
	{ ini device default=1:20 "$@"
	  ini 'class 1:1' rate=$(sr 20)kbit
	  ini 'class 1:10' parent=1:1 rate=$(sr 5)kbit ceil=$(sr 20)kbit prio=0 'match=mark 0x10'
	  ini 'class 1:20' parent=1:1 rate=$(sr 15)kbit ceil=$(sr 20)kbit prio=1 'match=tcp dport 5201'; } > "$f"
}

# "ecn_marks aqm_drops limit_drops sparse_packets" of htbctl's class 1:20
htbctl_signals() {
	in_snd "$HTBCTL" -j show dev "$SND_IF" interval 0 |
		jq -r '.classes[] | select(.class == "1:20") | "\(.ecn_marks) \(.aqm_drops) \(.drops) \(.sparse_packets)"'
}
# the same of kernel HTB's leaf qdisc on 1:20 (pfifo has no marks)
htb_signals() {
	in_snd tc -s -j qdisc show dev "$SND_IF" |
		jq -r '.[] | select(.parent == "1:20") |
			"\([.. | objects | .ecn_mark? // empty] | add // 0) - \(.drops)"'
}

# One round: both pairs shaped, two uploads on each, then the pings on
# both at once, in the class and in its own. Leaves
# $dir/ROUND.PAIR.{ping,own.ping,flows,signals}.
round() {	# name keys leaf-qdisc ecn(0|1)
	local name=$1 keys=$2 leaf=$3 ecn=$4 p
	write_conf "$work/$name.ini" ${keys//,/ }
	topo_use s10c
	shape_htbctl "$work/$name.ini" > /dev/null || { fail "scenario10 $name: htbctl setup failed"; return 1; }
	topo_use s10k
	shape_kernel_htb "$work/$name.ini" $leaf || { fail "scenario10 $name: kernel HTB setup failed"; return 1; }
	for p in s10c s10k; do
		topo_use $p
		in_snd sysctl -qw net.ipv4.tcp_ecn=$ecn
		run_flows $SECS "5201:tcp:0:128K:2" > "$dir/$name.$p.flows" &
	done
	sleep 2.5
	export TSPROBE_START_NS=$(($(date +%s%N) + 500000000))
	for p in s10c s10k; do
		topo_use $p
		in_snd timeout 30 "$TP" ping "$RCV_IP4" $PINGS $GAP_US > "$dir/$name.$p.ping" &
		in_snd timeout 30 "$TP" ping "$RCV_IP4" $PINGS $GAP_US 0x10 > "$dir/$name.$p.own.ping" &
	done
	wait
	unset TSPROBE_START_NS
	topo_use s10c
	htbctl_signals > "$dir/$name.s10c.signals"
	unshape_htbctl
	topo_use s10k
	htb_signals > "$dir/$name.s10k.signals"
	unshape_kernel_htb
	for p in s10c s10k; do
		cp "$dir/$name.$p.ping" "$RESULTS/scenario10.$name.$p.ping"
		cp "$dir/$name.$p.own.ping" "$RESULTS/scenario10.$name.$p.own.ping"
	done
}

# name, htbctl's [device] keys, kernel HTB's leaf, the senders'
# net.ipv4.tcp_ecn
rounds=(
	"fifo aqm=off,flows=off - 0"
	"codel aqm=codel,flows=off codel 0"
	"defaults - fq_codel 0"
	"ecn - cake,besteffort 1"
)
declare -A p50 p95 p99 res
ok=1
# sparse: the packets of 1:20 that left ahead of its backlog (the pings
# are 800 of them; more are the uploads' own, sparse after a pause)
row() { printf '%-9s %-22s %8s %8s %8s %8s %8s %6s %6s %7s %6s\n' "$@"; }
row round shaper net_p50 net_p99 net_max own_p99 goodput retr marks drops sparse
for r in "${rounds[@]}"; do
	read -r name keys leaf ecn <<<"$r"
	[ "$keys" = - ] && keys=
	leaf=${leaf//,/ }
	[ "$leaf" = - ] && leaf=
	step "round $name: htbctl ${keys:-defaults}, kernel HTB leaf ${leaf:-pfifo}, ECN $ecn"
	round "$name" "$keys" "$leaf" "$ecn" || { ok=0; continue; }
	read -r a50 a99 amax _ _ _ al <<<"$(rtt_stats "$dir/$name.s10c.ping")"
	read -r h50 h99 hmax _ _ _ hl <<<"$(rtt_stats "$dir/$name.s10k.ping")"
	read -r _ ao99 _ _ _ _ _ <<<"$(rtt_stats "$dir/$name.s10c.own.ping")"
	p95[$name]=$(net_rtts "$dir/$name.s10c.ping" | percentiles 95)
	read -r _ ho99 _ _ _ _ _ <<<"$(rtt_stats "$dir/$name.s10k.own.ping")"
	read -r _ abps aretr < "$dir/$name.s10c.flows"
	read -r _ hbps hretr < "$dir/$name.s10k.flows"
	read -r amarks adrops alimit asparse < "$dir/$name.s10c.signals"
	read -r hmarks _ hdrops < "$dir/$name.s10k.signals"
	p99[$name]=$a99 p99[htb.$name]=$h99 p50[$name]=$a50 p50[htb.$name]=$h50 p99[own.$name]=$ao99
	row "$name" "htbctl ${keys:-defaults}" "$a50" "$a99" "$amax" "$ao99" "$(mbit "${abps:-0}")" "$aretr" "$amarks" "$adrops+$alimit" "$asparse"
	row "$name" "htb ${leaf:-pfifo}" "$h50" "$h99" "$hmax" "$ho99" "$(mbit "${hbps:-0}")" "$hretr" "$hmarks" "$hdrops"
	plot_row "$name ping p99" "-" "$a99" "$h99"
	res[$name]="own-class p99 $ao99/$ho99, goodput $(mbit "${abps:-0}")/$(mbit "${hbps:-0}") retr $aretr/$hretr marks $amarks/$hmarks drops $adrops+$alimit/$hdrops lost $al/$hl"
	res[$name.gp]=${abps:-0} res[$name.marks]=${amarks:-0} res[$name.drops]=${adrops:-1}
	res[$name.line]="$a50 / $a99 / $amax|$h50 / $h99 / $hmax|${leaf:-pfifo}"
done

# verdict NAME EXPECTED WHY...: one summary row for a round
verdict() {
	local name=$1 exp=$2 why=$3 v=PASS line=${res[$1.line]:-}
	[ -n "$line" ] || return 0
	IFS='|' read -r a h leaf <<<"$line"
	[ -z "$why" ] || { v=FAIL ok=0; fail "scenario10 $name: $why"; }
	[ "$exp" = "(report)" ] && v=INFO
	summary_row scenario10 "in-class ping, htbctl $name vs HTB + ${leaf%% *}: net RTT p50/p99/max ms (${res[$name]})" \
		"$exp" "$a" "$h" "-" $v
}
goodput_why() {	# name
	awk -v g="${res[$1.gp]:-0}" -v i="$ideal" 'BEGIN { exit !(g >= 0.95 * i) }' ||
		echo "goodput $(mbit "${res[$1.gp]:-0}") Mbit/s, under 95% of $(mbit "$ideal"); "
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "nan" && b != "nan" && a + 0 < b + 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "nan" && b != "nan" && a + 0 <= b + 0) }'; }

verdict fifo "(report)" ""
# CoDel alone is one queue for the ping and the uploads: issue 12 asked
# for a p99 under 10 ms, which the kernel's own CoDel leaf misses as well
# here (p50 / p99 over four runs: htbctl 16.5-18.1 / 32.4-62.3 ms, HTB +
# codel 14.6-17.7 / 25.0-102.3; one run of each in docs/log.md,
# "2026-12-01: CoDel and sparse flows in the VM (scenario 10)").
# Judged: the standing queue (p50) within 5 ms of the kernel's CoDel on
# the same traffic, and the p99 under half the FIFO's (the p99 of one
# queue is a few bursts, 1.5x apart between runs of either).
why=$(goodput_why codel)
le "${p50[codel]:-nan}" "$(awk -v h="${p50[htb.codel]:-nan}" 'BEGIN { print h + 5 }')" ||
	why+="ping p50 ${p50[codel]:-?} ms, more than 5 ms above HTB + codel's ${p50[htb.codel]:-?}; "
le "${p99[codel]:-nan}" "$(awk -v f="${p99[fifo]:-nan}" 'BEGIN { print f / 2 }')" ||
	why+="ping p99 ${p99[codel]:-?} ms, not under half the FIFO's ${p99[fifo]:-?}; "
lt "${p99[codel]:-nan}" 10 || step "codel: ping p99 ${p99[codel]:-?} ms, not under issue 12's 10 ms (HTB + codel ${p99[htb.codel]:-?})"
verdict codel "p50 <= codel's + 5, p99 <= fifo/2" "${why%; }"
why=$(goodput_why defaults)
# With the defaults a ping leaves through the class's sparse lane, ahead
# of the backlog. The lane runs at a quarter of the class's rate and is
# not the pings' alone: a bulk upload whose queue ran dry (a CoDel drop,
# a stall of the emulator) sends its next frame there too (933 packets
# took the lane in a round of 800 pings, 2026-12-03), and a ping behind
# two or three such frames waits their time at a quarter of the rate
# (3.2 ms a frame at 15 Mbit/s). That happens to about 1% of the pings:
# the p99 was 1.3-1.5 ms in most runs and 5.3 ms in stop 30's CI (its
# own-class ping 2.0, HTB + fq_codel 6.6), so the bar on the lane's
# common case is the p95, within 2 ms of the own-class ping's p99, and
# the tail is judged against HTB + fq_codel's request by request, as the
# forwarding scenarios' (tests/lib/rtt.sh, rtt_judge): more than 2 ms
# later on at most 1% of the requests more than fq_codel's was, beyond
# chance, or else in at most 1% of the 250 ms blocks. (The p99 of the
# two was the bar until 2026-12-03: a p99 is the emulator's few longest
# stalls.)
le "${p95[defaults]:-nan}" "$(awk -v o="${p99[own.defaults]:-nan}" 'BEGIN { print o + 2 }')" ||
	why+="ping p95 ${p95[defaults]:-?} ms, more than 2 ms above its own class's p99 ${p99[own.defaults]:-?}; "
read -r m later earlier bm blater bearlier <<<"$(rtt_judge "$dir/defaults.s10c.ping" "$dir/defaults.s10k.ping" 2 $GAP_US)"
step "defaults: of $m requests htbctl's more than 2 ms later on $later, HTB + fq_codel's on $earlier; of $bm blocks of $RTT_BLOCK_MS ms htbctl's later in $blater, fq_codel's in $bearlier"
rtt_no_later "$m" "$later" "$earlier" "$bm" "$blater" "$bearlier" ||
	why+="ping more than 2 ms above HTB + fq_codel's on $later of $m requests and in $blater of $bm blocks of $RTT_BLOCK_MS ms, fq_codel's above htbctl's on $earlier and in $bearlier (p99 ${p99[defaults]:-?} against ${p99[htb.defaults]:-?}); "
verdict defaults "p95 <= own p99 + 2, later <= fq_codel's + 1% + 3sd by requests or blocks" "${why%; }"
# ECN: CoDel signals by marking the uploads' packets (ECT). A packet that
# is not ECT when a signal falls on it is dropped, as RFC 3168 says: the
# in-class ping's, and the connections' own pure ACKs and FINs (Linux
# sends those not-ECT), which the uploads' backlog holds at their end (CI
# of 2026-12-03 on a busy host: 106 marks, 1 AQM drop, no ping lost, no
# retransmit). Bar: marks, and drops at most 2% of the signals.
why=$(goodput_why ecn)
awk -v m="${res[ecn.marks]:-0}" -v d="${res[ecn.drops]:-1}" 'BEGIN { exit !(m > 0 && d <= 0.02 * (m + d)) }' ||
	why+="ECN senders: ${res[ecn.marks]:-?} marks, ${res[ecn.drops]:-?} AQM drops (want marks, drops at most 2% of the signals); "
verdict ecn "marks, drops <= 2% of signals" "${why%; }"
plot_bars "$tsv" "scenario 10: in-class ping RTT p99 under 2 TCP uploads" ms

# The UDP flood beside a TCP class, htbctl alone (the uploads of the
# rounds above ran beside kernel HTB's; this one needs no comparison).
step "UDP flood at 20 Mbit/s in a 10 Mbit/s class beside TCP"
topo_use s10c
{ ini device default=1:30
  ini 'class 1:1' rate=$(sr 20)kbit
  ini 'class 1:10' parent=1:1 rate=$(sr 10)kbit 'match=udp dport 5301'
  ini 'class 1:20' parent=1:1 rate=$(sr 10)kbit 'match=tcp dport 5302'
  ini 'class 1:30' parent=1:1 rate=$(sr 1)kbit; } > "$conf"
if shape_htbctl "$conf" > /dev/null; then
	in_snd sysctl -qw net.ipv4.tcp_ecn=0
	flows=$(run_flows 8 5301:udp:$(sr 20)K:1400 5302:tcp:0:128K)
	read -r udrops ulimit <<<"$(in_snd "$HTBCTL" -j show dev "$SND_IF" interval 0 |
		jq -r '.classes[] | select(.class == "1:10") | "\(.aqm_drops) \(.drops)"')"
	unshape_htbctl
	read -r _ ubps _ <<<"$(grep '^5301 ' <<<"$flows")"
	read -r _ tbps tretr <<<"$(grep '^5302 ' <<<"$flows")"
	uexp=$(awk -v r="$(sr 10)e3" 'BEGIN { printf "%.0f", r * 1400 / 1442 }')
	texp=$(awk -v r="$(sr 10)e3" 'BEGIN { printf "%.0f", r * 1448 / 1514 }')
	step "flood $(mbit "${ubps:-0}") Mbit/s (AQM drops $udrops, limit drops $ulimit), TCP $(mbit "${tbps:-0}") Mbit/s ($tretr retransmits)"
	why=
	within "${ubps:-0}" "$uexp" 5 || why="flood's class $(mbit "${ubps:-0}") Mbit/s, not within 5% of $(mbit "$uexp")"
	[ "${udrops:-0}" -gt 0 ] || why="${why:+$why; }no AQM drop in the flood's class"
	awk -v g="${tbps:-0}" -v e="$texp" 'BEGIN { exit !(g >= 0.95 * e) }' ||
		why="${why:+$why; }TCP class $(mbit "${tbps:-0}") Mbit/s, under 95% of $(mbit "$texp")"
	v=PASS
	[ -z "$why" ] || { v=FAIL ok=0; fail "scenario10 flood: $why"; }
	summary_row scenario10 "UDP flood 2x its class under CoDel: flood / TCP sibling Mbit/s (AQM drops $udrops)" \
		"$(mbit "$uexp") / $(mbit "$texp")" "$(mbit "${ubps:-0}") / $(mbit "${tbps:-0}")" "-" "5% / -5%" $v
else
	fail "scenario10 flood: htbctl setup failed"; ok=0
fi
[ $ok = 1 ] && pass "scenario10: with the defaults 95% of the in-class pings within 2 ms of its own class's p99 and no later than HTB + fq_codel's request by request, CoDel alone like the kernel's, ECN marks (drops only of packets that are not ECT), the goodput kept, a flood's class at its rate"
