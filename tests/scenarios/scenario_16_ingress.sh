#!/usr/bin/env bash
# Scenario 16 (issue 27): a host shaping its downloads on ingress. The
# shaped host is the pair's sender side ($SND_NS); the traffic comes to it
# from the other end, so every packet is shaped where it arrives: htbctl
# redirects $SND_IF's ingress to the ifb it creates (direction = ingress)
# and shapes the ifb's egress with its program and fq; kernel HTB gets the
# same tree on an ifb of its own behind tc's mirred redirect, as HTB users
# do by hand. One tree, by destination port:
#   1:1 10 Mbit/s; A 4/4 (rate/ceil), B 2/2, C 1 ceil 10 (borrows),
#   D 3 ceil 10 carries one TCP download, alone.
# Phase 1 offers A, B and C twice their ceil's share (UDP, 1000 bytes);
# expected (the fluid ideal): A 4, B 2, C 4. Phase 2: one TCP download in
# D gets D's ceil, 10 Mbit/s on the wire. Pass: each within 3% of the ideal
# and of kernel HTB's (or within 1% of the ideal, whatever HTB's error),
# TCP within 5% of HTB's. htbctl runs under its
# daemon (sharing by prio and quantum), as in every scenario.
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario16 s16
scenario_load 20 10
ok=1
KIFB=ifbk-$SND_IF	# kernel HTB's ifb

{
	ini device default=1:ff direction=ingress
	ini 'class 1:1' rate="$(sr 10)kbit"
	ini 'class 1:a' parent=1:1 rate="$(sr 4)kbit" 'match=udp dport 5301'
	ini 'class 1:b' parent=1:1 rate="$(sr 2)kbit" 'match=udp dport 5302'
	ini 'class 1:c' parent=1:1 rate="$(sr 1)kbit" ceil="$(sr 10)kbit" 'match=udp dport 5303'
	ini 'class 1:d' parent=1:1 rate="$(sr 3)kbit" ceil="$(sr 10)kbit" 'match=tcp dport 5304'
	ini 'class 1:ff' rate=1mbit
} > "$conf"

# down_flows SECONDS FLOW...: run_flows the other way round: the servers
# (receivers) on the shaped host, the clients on the far end, so the data
# arrives on $SND_IF's ingress. run_flows puts its servers in the
# receiver namespace and its clients in the sender's, connecting to
# $RCV_IP4: the two ends swapped for the call.
down_flows() {
	local s_ns=$SND_NS r_ns=$RCV_NS s_ip=$RCV_IP4 out
	SND_NS=$r_ns RCV_NS=$s_ns RCV_IP4=$SND_IP4
	out=$(run_flows "$@")
	SND_NS=$s_ns RCV_NS=$r_ns RCV_IP4=$s_ip
	printf '%s\n' "$out"
}

# kernel HTB on ingress: an ifb, the device's ingress redirected to it by
# mirred (u32 matching everything), HTB on the ifb's root.
shape_kernel_ingress() {
	local batch
	batch=$(mktemp)
	{ echo "qdisc add dev $SND_IF handle ffff: ingress"
	  echo "filter add dev $SND_IF parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev $KIFB"
	  htb_tc_batch "$conf" "$KIFB"; } > "$batch"
	in_snd ip link add "$KIFB" type ifb && in_snd ip link set "$KIFB" up &&
		in_snd tc -batch "$batch"
	local rc=$?
	rm -f "$batch"
	return $rc
}
unshape_kernel_ingress() {
	in_snd tc qdisc del dev "$SND_IF" ingress 2> /dev/null
	in_snd ip link del "$KIFB" 2> /dev/null
	return 0
}

declare -A got
measure() {	# SHAPER
	local o r line port bps
	# UDP payload offered at twice the class's share (ceil for A and B,
	# the spare 4 for C): iperf3's -b counts payload
	o() { echo "$(($(sr "$1") * 1000 / 1042))K"; }
	r=$(down_flows 8 "5301:udp:$(o 8):1000" "5302:udp:$(o 4):1000" "5303:udp:$(o 8):1000")
	while read -r port bps _; do
		got[$1.$port]=$bps
	done <<<"$r"
	step "$1 UDP: A $(mbit "${got[$1.5301]}") B $(mbit "${got[$1.5302]}") C $(mbit "${got[$1.5303]}") Mbit/s"
	read -r _ bps _ <<<"$(down_flows 8 "5304:tcp:0:128K")"
	got[$1.5304]=$bps
	step "$1 TCP: D $(mbit "$bps") Mbit/s"
}

for shaper in htbctl kernel_htb; do
	if [ $shaper = htbctl ]; then
		shape_with htbctl "$conf" || { ok=0; continue; }
		in_snd "$HTBCTL" -j show dev "$SND_IF" interval 0 > "$work/show.json" 2>&1
		jq -e '.dev == "ifb-'"$SND_IF"'" and .direction == "download"' "$work/show.json" \
			> /dev/null || { fail "scenario16: not shaping the ingress: $(head -c 200 "$work/show.json")"; ok=0; }
		measure htbctl
		# every byte through the ifb was counted by the program
		in_snd "$HTBCTL" -j show dev "$SND_IF" interval 0 > "$work/show.json" 2>&1
		step "htbctl classes: $(jq -c '[.classes[] | {(.class): .bytes}] | add' "$work/show.json")"
		unshape_htbctl
		! in_snd ip link show "ifb-$SND_IF" > /dev/null 2>&1 ||
			{ fail "scenario16: ifb-$SND_IF is still there after unload"; ok=0; }
	else
		shape_kernel_ingress || { fail "scenario16: kernel HTB on an ifb: setup failed"; ok=0; continue; }
		measure kernel_htb
		unshape_kernel_ingress
	fi
done

# the ideal, on the wire: UDP offered at R * 1042 / 1000 goodput
ideal=$(fluid_ideal "$conf" 1:a="$(sr 8)kbit" 1:b="$(sr 4)kbit" 1:c="$(sr 8)kbit") ||
	{ fail "scenario16: no fluid ideal"; ok=0; }
printf '%-8s %10s %10s %10s %8s %8s\n' class ideal htbctl htb err% vs_htb%
for c in a:5301:A b:5302:B c:5303:C; do
	IFS=: read -r cls port name <<<"$c"
	exp=$(awk -v b="$(ideal_of "1:$cls" "$ideal")" 'BEGIN { printf "%.0f", b * 8 * 1000 / 1042 }')
	a=${got[htbctl.$port]:-0} h=${got[kernel_htb.$port]:-0}
	printf '%-8s %10s %10s %10s %8s %8s\n' "$name" "$(mbit "$exp")" "$(mbit "$a")" "$(mbit "$h")" \
		"$(rel_err "$a" "$exp")" "$(rel_err "$a" "${h/#0/1}")"
	plot_row "$name (UDP)" "$(mbit "$exp")" "$(mbit "$a")" "$(mbit "$h")"
	# the ideal within 3%, and kernel HTB's within 3% unless htbctl is
	# within 1% of the ideal: HTB on an ifb gave C 3.95 Mbit/s where the
	# ideal is 3.84 (2.9% over) in the first run, htbctl 3.83, and a 3%
	# bar to HTB then judged htbctl by HTB's own error (scenario 11's
	# shaping bar has the same reason)
	if within "$a" "$exp" 3 && { within "$a" "${h/#0/1}" 3 || within "$a" "$exp" 1; }; then
		v=PASS
	else
		v=FAIL ok=0
		fail "scenario16 $name: htbctl $(mbit "$a") Mbit/s, ideal $(mbit "$exp"), kernel HTB $(mbit "$h") (3%)"
	fi
	summary_row scenario16 "ingress $name" "$(mbit "$exp")" "$(mbit "$a")" "$(mbit "$h")" "3% (1% of ideal)" $v
done
# TCP in D, alone: its ceil on the wire, 1448 of 1514 bytes goodput
exp=$(awk -v r="$(sr 10)e3" 'BEGIN { printf "%.0f", r * 1448 / 1514 }')
a=${got[htbctl.5304]:-0} h=${got[kernel_htb.5304]:-0}
printf '%-8s %10s %10s %10s %8s %8s\n' "D tcp" "$(mbit "$exp")" "$(mbit "$a")" "$(mbit "$h")" \
	"$(rel_err "$a" "$exp")" "$(rel_err "$a" "${h/#0/1}")"
plot_row "D (TCP)" "$(mbit "$exp")" "$(mbit "$a")" "$(mbit "$h")"
if within "$a" "${h/#0/1}" 5; then
	v=PASS
else
	v=FAIL ok=0
	fail "scenario16 D: htbctl TCP $(mbit "$a") Mbit/s, kernel HTB $(mbit "$h") (5%)"
fi
summary_row scenario16 "ingress D tcp" "$(mbit "$exp")" "$(mbit "$a")" "$(mbit "$h")" "5% of HTB" $v
plot_bars "$tsv" "scenario 16: a host's downloads shaped on ingress (ifb)"
[ $ok = 1 ] && pass "scenario16: downloads shaped on ingress through htbctl's ifb: A, B, C within 3% of the ideal and of kernel HTB on an ifb, TCP within 5% of HTB's"
