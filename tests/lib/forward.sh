# Traffic and verdicts of the forwarding scenarios (issue 22), after
# tests/lib/shaping.sh and tests/lib/router.sh: many UDP flows per
# subscriber (tests/tools/flowgen: one unconnected socket per sender,
# paced, receivers counting per address pair), a ping among a class's
# flows, and the bars every such scenario shares:
# - each class within FWD_TOL% (3) of the fluid ideal (`htbctl
#   simulate`) of what its senders offered, and of kernel HTB's goodput
#   scaled to that offer (fwd_judge), on the wire (Ethernet + IP + UDP
#   headers counted, as both shapers count);
# - a class offered less than its rate: htbctl drops none of it, and at
#   most FWD_LOSS% (0.5) of what was sent goes missing on the way;
# - the ping, request by request beside kernel HTB + fq_codel's: more than
#   FWD_PING_MS (2) later on at most 1% of the requests more than HTB's
#   was, beyond chance, or else in at most 1% of the 250 ms blocks
#   (fwd_judge_ping), at most 1% lost.
# htbctl and kernel HTB run side by side, on two topologies at once, with
# the same traffic started together and one probe schedule: the
# emulator's stalls fall on both alike.
FG=${FLOWGEN:-$(dirname "$HTBCTL")/tests/tools/flowgen}
FWD_TP=${TSPROBE:-$(dirname "$HTBCTL")/tests/tools/tsprobe}
FWD_SECS=${FWD_SECS:-12}	# each receiver's run; senders run one more
FWD_SKIP=${FWD_SKIP:-3}	# seconds before the receivers count
FWD_LEN=1400		# UDP payload of every datagram
FWD_TOL=${FWD_TOL:-3}
FWD_PING_MS=${FWD_PING_MS:-2}
FWD_PING_GAP_US=10000
# Ten full frames of bucket for every class of these trees: a router's
# packets are at most one frame, and htbctl's default (one 64 KB GSO packet
# and more, 220 ms at 3 Mbit/s) held a parent's rate 4-8% high for the
# whole measured window under both shapers (the fluid ideal has no bursts).
FWD_BURSTS="burst=15kb cburst=15kb"
# the ping's frames, 98 bytes each way every 10 ms, in the loaded class
FWD_PING_BPS=$((98 * 8 * 1000000 / FWD_PING_GAP_US))
FWD_DIR=	# $work/fwd, from the first round on (scenario_begin makes $work)

# fwd_backlog_drops: packets the CPUs' backlogs dropped since boot (a veth
# hands a packet to the next namespace through the CPU's backlog, which
# drops past netdev_max_backlog; each round reports what it dropped, 0 in
# every run so far)
fwd_backlog_drops() {
	local n=0 a b rest
	while read -r a b rest; do
		n=$((n + 16#$b))
	done < /proc/net/softnet_stat
	echo $n
}

# fwd_offer ROLE SRC TARGET...: a flowgen sender in namespace ROLE (c or u)
# of the current topology, bound to SRC (empty: the namespace's choice),
# for FWD_SECS + 1 seconds, in the background, its report's window the
# receivers' (FWD_SKIP to FWD_SECS; each from its own start, the
# receivers' from the first datagram, so the two match to within the
# senders' start-up); the report goes to
# $FWD_DIR/PREFIX.send, each line after SRC (- for none).
fwd_offer() {
	local role=$1 src=$2; shift 2
	{ "in_$role" "$FG" send ${src:+--src "$src"} --size $FWD_LEN --seconds $((FWD_SECS + 1)) \
		--skip $FWD_SKIP --until $FWD_SECS "$@" 2>&1 |
		sed "s/^/${src:--} /" >> "$FWD_DIR/$FWD_PREFIX.send"; } &
	FWD_SENDERS+=($!)
}

# fwd_recv_up ROLE:PORT:FLOWS: a receiver of the current topology, in the
# background, its window from FWD_SKIP to FWD_SECS after the first
# datagram (under emulation the senders start seconds after the receivers
# say ready), on until fwd_round stops it after the senders; its report
# goes to $FWD_DIR/PREFIX.ROLE.recv.
FWD_SENDERS=() FWD_RECEIVERS=()
fwd_recv_up() {
	local role port flows
	IFS=: read -r role port flows <<<"$1"
	# nsenter itself, not in_ROLE: $! must be the receiver's pid (nsenter
	# execs it), not a subshell's that a SIGTERM would end without it
	if [ "$role" = c ]; then role=$FWD_C; else role=$FWD_U; fi
	nsenter --net=/run/netns/"$role" "$FG" recv --port "$port" --flows "$flows" \
		--seconds $((FWD_SECS + 60)) --skip $FWD_SKIP --until $FWD_SECS --from-first \
		> "$FWD_DIR/$FWD_PREFIX.${1%%:*}.recv" 2>&1 &
	FWD_RECEIVERS+=($!)
}

# fwd_stop_receivers: once the senders are done and a second has passed
# for what is still on its way, the receivers report. FWD_CPU_BUSY: how
# busy the CPUs were from FWD_CPU0 (cpu_ticks, taken before the offer) to
# the senders' end, in %.
fwd_stop_receivers() {
	wait "${FWD_SENDERS[@]}" 2> /dev/null
	FWD_CPU_BUSY=$(cpu_busy_since "${FWD_CPU0:-}")
	sleep 1
	kill -TERM "${FWD_RECEIVERS[@]}" 2> /dev/null
	wait "${FWD_RECEIVERS[@]}" 2> /dev/null
	FWD_SENDERS=() FWD_RECEIVERS=()
}

# fwd_ready FILE...: returns once every receiver has said ready, 1 after 30 s.
fwd_ready() {
	local f i
	for ((i = 0; i < 300; i++)); do
		local all=1
		for f; do
			grep -q '^ready' "$f" 2>/dev/null || { all=0; break; }
		done
		[ $all = 1 ] && return 0
		sleep 0.1
	done
	echo "receivers not ready after 30 s: $(tail -qn1 "$@" | tr '\n' ' ')" >&2
	return 1
}

# fwd_pings PREFIX...: for each "NAME:SRC[:DST]" of FWD_PINGS, a ping from
# SRC (empty: the namespace's choice) in the subscribers' namespace to DST
# (the server's SRV4 if none), in every topology on one schedule, from
# FWD_SKIP on, into $FWD_DIR/PREFIX.ping.NAME.
FWD_PINGS=
fwd_pings() {
	local p q name src dst
	export TSPROBE_START_NS=$(($(date +%s%N) + FWD_SKIP * 1000000000))
	for p; do
		fwd_use "$p"
		for q in $FWD_PINGS; do
			IFS=: read -r name src dst <<<"$q"
			TSPROBE_SRC=$src in_c timeout $((FWD_SECS + 10)) "$FWD_TP" ping "${dst:-$SRV4}" \
				"$(fwd_ping_count)" $FWD_PING_GAP_US > "$FWD_DIR/$p.ping.$name" 2>&1 &
			FWD_SENDERS+=($!)
		done
	done
	unset TSPROBE_START_NS
}
fwd_ping_count() { echo $(((FWD_SECS - FWD_SKIP - 1) * 1000000 / FWD_PING_GAP_US)); }

# fwd_drop_counters PREFIX...: every namespace's links' drops and the
# nonzero drop and error counters of its stack, for the record.
fwd_drop_counters() {
	local p n
	for p; do
		fwd_use "$p"
		for n in "$FWD_C" "$FWD_G" "$FWD_U"; do
			[ -e "/run/netns/$n" ] || continue
			echo "== $n"
			ip -n "$n" -s link | awk '/^[0-9]+:/ { d = $2 } /RX:|TX:/ { getline; print d, $0 }'
			nsenter --net=/run/netns/"$n" nstat -asz 2>/dev/null |	# -s: no history file written
				awk '$2 != 0 && $1 ~ /Err|Drop|Discard|Fail|Overflow|Prune|Collapse/'
		done
	done
}

# fwd_warm PREFIX...: one ping for each "SRC,DST" of FWD_WARM (SRC empty:
# the namespace's choice) from the subscribers' namespace, so that every
# neighbour on the way is resolved before the traffic starts: packets that
# find a neighbour unresolved wait in a queue of three and are dropped
# past it (scenario 13's first runs lost the first 3 of a class's
# datagrams there, before any shaper).
FWD_WARM=
fwd_warm() {
	local p w src dst
	for p; do
		fwd_use "$p"
		for w in $FWD_WARM; do
			IFS=, read -r src dst <<<"$w"
			in_c ping -c 1 -W 2 -q ${src:+-I "$src"} "$dst" > /dev/null 2>&1 ||
				{ echo "no echo reply from $dst (from ${src:-the default source}) in $p" >&2; return 1; }
		done
	done
}

# fwd_round HPREFIX HSHAPER KPREFIX KSHAPER SHAPE UNSHAPE OFFER RECV...:
# shapes both topologies (SHAPE PREFIX SHAPER), starts the receivers
# (RECV: ROLE:PORT:FLOWS) in both, then OFFER PREFIX in both and a ping
# from the subscribers' first address to the server in both on one
# schedule, waits, and removes the shapers. Leaves $FWD_DIR/PREFIX.*.
fwd_round() {
	local hp=$1 hs=$2 kp=$3 ks=$4 shape=$5 unshape=$6 offer=$7 p r files=() rc=0
	shift 7
	FWD_H=$hp FWD_K=$kp FWD_DIR=$work/fwd
	mkdir -p "$FWD_DIR"
	rm -f "$FWD_DIR"/*
	"$shape" "$hp" "$hs" && "$shape" "$kp" "$ks" && fwd_warm "$hp" "$kp" || rc=1
	if [ $rc = 0 ]; then
		for p in "$hp" "$kp"; do
			fwd_use "$p"
			for r; do
				fwd_recv_up "$r"
				files+=("$FWD_DIR/$p.${r%%:*}.recv")
			done
		done
		FWD_CPU0=
		if fwd_ready "${files[@]}"; then
			FWD_DROPS0=$(fwd_backlog_drops)
			FWD_CPU0=$(cpu_ticks)
			step "offering: $FWD_SECS s, counted from $FWD_SKIP s"
			"$offer" "$hp"
			"$offer" "$kp"
			fwd_pings "$hp" "$kp"
		else
			rc=1
		fi
		fwd_stop_receivers
		wait
		step "the CPUs' backlogs dropped $(($(fwd_backlog_drops) - ${FWD_DROPS0:-0})) packets"
		step "the receivers read at most $(fwd_read_lag "${files[@]}") after arrival; the CPUs were $FWD_CPU_BUSY% busy"
		fwd_drop_counters "$hp" "$kp" >> "$RESULTS/$SCENARIO.drops.log" 2>&1
		fwd_use "$hp"
		for r in $FWD_DOWN $FWD_UP; do
			echo "== $hp $r"
			in_g "$HTBCTL" show dev "$r" interval 0
			in_g "$HTBCTL" -j show dev "$r" interval 0 > "$FWD_DIR/$hp.$r.show.json"
		done >> "$RESULTS/$SCENARIO.show.log" 2>&1
		for p in "$hp" "$kp"; do
			fwd_use "$p"
			for r in $FWD_DOWN $FWD_UP; do
				echo "== $p $r: $(in_g tc -s qdisc show dev "$r" | tr -s ' \n' ' ')"
			done
		done >> "$RESULTS/$SCENARIO.qdisc.log"
	fi
	"$unshape" "$hp" "$hs"
	"$unshape" "$kp" "$ks"
	for p in "$hp" "$kp"; do
		cp "$FWD_DIR/$p".* "$RESULTS/" 2>/dev/null
	done
	return $rc
}

# fwd_class_bps FILE BY ADDR4 ADDR6: "payload_bps wire_bps" of one
# subscriber in a receiver's report, by src or dst address.
fwd_class_bps() {
	awk -v col="$([ "$2" = src ] && echo 1 || echo 2)" -v a4="$3" -v a6="$4" -v l=$FWD_LEN '
		$3 == "packets" && ($col == a4 || $col == a6) {
			p += $8; w += $8 * (l + ($col == a4 ? 42 : 62)) / l }
		END { printf "%.0f %.0f\n", p, w }' "$1"
}

# fwd_class_loss PREFIX ROLE BY ADDR4 ADDR6: "sent received" datagrams of
# one subscriber over the whole run: its senders' reports (by source: the
# senders bound to its addresses; by destination: the targets at them)
# and the ROLE receiver's totals.
fwd_class_loss() {
	local sent rcvd
	read -r sent _ <<<"$(fwd_sent_sums "$1" "$3" "$4" "$5")"
	rcvd=$(awk -v col="$([ "$3" = src ] && echo 1 || echo 2)" -v a4="$4" -v a6="$5" '
		$3 == "packets" && ($col == a4 || $col == a6) { n += $10 } END { print n + 0 }' \
		"$FWD_DIR/$1.$2.recv")
	echo "$sent $rcvd"
}

# fwd_sent_sums PREFIX BY ADDR4 ADDR6: "SENT DUE SKIPPED" summed over the
# lines of PREFIX's sender reports (tests/tools/flowgen's target lines,
# each after its SRC, - for none) that are the class's: by src, the
# target's own source (its fifth field) or else the line's SRC; by dst,
# its destination; ADDR6 - for none, which matches no line. SENT over the
# run, DUE and SKIPPED in the receivers' window.
fwd_sent_sums() {
	awk -v by="$2" -v a4="$3" -v a6="$4" '$2 == "target" {
			split($3, t, ","); k = (by == "src" ? (t[5] != "" ? t[5] : $1) : t[1])
			if (k == a4 || (a6 != "-" && k == a6)) { n += $5; due += $13; s += $15 } }
		END { print n + 0, due + 0, s + 0 }' "$FWD_DIR/$1.send"
}

# fwd_class_skipped PREFIX BY ADDR4 ADDR6: the share (0-1) of a class's
# datagrams that its senders (PREFIX's, by src or dst address) skipped in
# the receivers' window: credit dropped after the emulator stopped them
# (window_due and window_skipped), which no shaper could have sent.
fwd_class_skipped() {
	local due s
	read -r _ due s <<<"$(fwd_sent_sums "$@")"
	awk -v due="$due" -v s="$s" 'BEGIN { printf "%.6f\n", due ? s / due : 0 }'
}

# fwd_wire OFFER4 OFFER6: payload bit/s over IPv4 and IPv6 on the wire.
fwd_wire() {
	awk -v a="$1" -v b="$2" -v l=$FWD_LEN 'BEGIN { printf "%.0f", a * (l + 42) / l + b * (l + 62) / l }'
}

# fwd_ideals CONFIG PREFIX BY CLASS...: the fluid ideal (fluid_ideal's
# lines) of what PREFIX's senders offered: each class's offer less the
# share they skipped in the receivers' window (fwd_class_skipped).
fwd_ideals() {
	local conf=$1 pfx=$2 by=$3 c name cid a4 a6 o4 o6 sk offers=()
	shift 3
	for c; do
		read -r name cid a4 a6 o4 o6 <<<"$c"
		sk=$(fwd_class_skipped "$pfx" "$by" "$a4" "$a6")
		offers+=("$cid=$(($(fwd_wire "$(fwd_less "$o4" "$sk")" "$(fwd_less "$o6" "$sk")") + $(fwd_ping_bps "$name")))bit")
	done
	# (check's warnings, of buckets under a GSO packet, to a file)
	fluid_ideal "$conf" "${offers[@]}" 2> "$FWD_DIR/simulate.err"
}

# fwd_expect NAME CLASSID IDEAL: the class's wire bit/s in IDEAL (bytes/s)
# less its ping's, which the receivers do not count
fwd_expect() {
	awk -v b="$(ideal_of "$2" "$3")" -v p="$(fwd_ping_bps "$1")" 'BEGIN { printf "%.0f", b * 8 - p }'
}

# fwd_judge SCENARIO LABEL CONFIG ROLE BY CLASS...: the classes of one
# device, read from both topologies' ROLE receiver, by src or dst address.
# CLASS is "NAME CLASSID ADDR4 ADDR6 OFFER4 OFFER6" (payload bit/s per
# family; ADDR6 - for none); a class NAME of FWD_PINGS carries its ping.
# Each shaper is judged on what its own senders offered (fwd_ideals):
# htbctl within FWD_TOL% of its ideal, and of kernel HTB's result scaled
# to htbctl's ideal (HTB's times htbctl's ideal over HTB's). A sender the
# emulator stops skips datagrams no shaper could send: a class under its
# rate otherwise misses the ideal by that share, and differs from HTB's
# when the two topologies' senders skip differently (4.6% under both
# shapers with a host CPU taken 150 ms every 1.15 s; 4.8% skipped by
# htbctl's senders and none by HTB's in a run beside a compile; docs/log.md,
# "2026-12-05: Stalls come in runs"). Prints a row per class, a FAIL line
# per missed bar; returns 1 if any.
fwd_judge() {
	local scen=$1 label=$2 conf=$3 role=$4 by=$5 c name cid a4 a6 o4 o6 ok=0
	local ih ik h k hp kp exp expk kx rate
	shift 5
	ih=$(fwd_ideals "$conf" "$FWD_H" "$by" "$@") && ik=$(fwd_ideals "$conf" "$FWD_K" "$by" "$@") ||
		{ fail "$scen $label: no fluid ideal: $(head -1 "$FWD_DIR/simulate.err")"; return 1; }
	for c; do
		read -r name cid a4 a6 o4 o6 <<<"$c"
		read -r hp h <<<"$(fwd_class_bps "$FWD_DIR/$FWD_H.$role.recv" "$by" "$a4" "$a6")"
		read -r kp k <<<"$(fwd_class_bps "$FWD_DIR/$FWD_K.$role.recv" "$by" "$a4" "$a6")"
		exp=$(fwd_expect "$name" "$cid" "$ih") expk=$(fwd_expect "$name" "$cid" "$ik")
		kx=$(fwd_at_offer "$k" "$exp" "$expk")
		plot_row "$label $name" "$(mbit "$exp")" "$(mbit "$h")" "$(mbit "$k")"
		step "$label $name ($cid): htbctl $(mbit "$h"), kernel HTB $(mbit "$k"), ideal $(mbit "$exp") / $(mbit "$expk") Mbit/s on the wire; payload $(mbit "$hp") / $(mbit "$kp") of $(mbit $((o4 + o6))) offered, $(fwd_skipped_pct "$FWD_H" "$by" "$a4" "$a6") / $(fwd_skipped_pct "$FWD_K" "$by" "$a4" "$a6")% of it skipped by the senders"
		fwd_bar "$scen" "$label $name ($cid) Mbit/s on the wire" "$exp" "$h" "$kx" || ok=1
		rate=$(class_rate_bps "$conf" "$cid") || { fail "$scen $label: no rate for $cid"; ok=1; continue; }
		if [ "$(awk -v o="$(fwd_wire "$o4" "$o6")" -v r="$rate" 'BEGIN { print (o < r) }')" = 1 ]; then
			fwd_lossless "$scen" "$label $name under its rate: htbctl's drops; datagrams received of sent" \
				"$(fwd_class_drops "$role" "$cid")" \
				"$(fwd_class_loss "$FWD_H" "$role" "$by" "$a4" "$a6")" \
				"$(fwd_class_loss "$FWD_K" "$role" "$by" "$a4" "$a6")" || ok=1
		fi
	done
	return $ok
}

# fwd_at_offer BPS IDEAL_H IDEAL_K: kernel HTB's BPS scaled to htbctl's
# offer (its ideal IDEAL_H over HTB's IDEAL_K; BPS as it is without one)
fwd_at_offer() {
	awk -v k="$1" -v e="$2" -v f="$3" 'BEGIN { printf "%.0f", (f > 0 ? k * e / f : k) }'
}

# fwd_skipped_pct PREFIX BY ADDR4 ADDR6: fwd_class_skipped in %, one decimal
fwd_skipped_pct() { awk -v s="$(fwd_class_skipped "$@")" 'BEGIN { printf "%.1f", s * 100 }'; }

# fwd_less BPS SHARE: BPS less SHARE (0-1) of it, whole bit/s
fwd_less() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b * (1 - s) }'; }

# class_rate_bps CONFIG CLASSID: the class's rate in bit/s (check -j).
class_rate_bps() {
	"$HTBCTL" -j check config "$1" 2>/dev/null |
		jq -er --arg c "$2" '.classes[] | select(.classid == $c) | .rate * 8'
}

# fwd_ping_bps NAME: the wire bit/s of class NAME's ping (0 if none)
fwd_ping_bps() {
	[[ " $FWD_PINGS" == *" $1:"* ]] && echo $FWD_PING_BPS || echo 0
}

# fwd_bar SCENARIO WHAT IDEAL HTBCTL HTB: within FWD_TOL% of both (HTB:
# kernel HTB's result at htbctl's offer, fwd_judge).
fwd_bar() {
	local v=PASS
	if ! within "$4" "$3" "$FWD_TOL" || ! within "$4" "$5" "$FWD_TOL"; then
		v=FAIL
		fail "$1 $2: htbctl $(mbit "$4"), ideal $(mbit "$3") ($(rel_err "$4" "$3")%), kernel HTB at htbctl's offer $(mbit "$5") ($(rel_err "$4" "$5")%): more than $FWD_TOL% apart"
	fi
	summary_row "$1" "$2 (HTB at htbctl's offer)" "$(mbit "$3")" "$(mbit "$4")" "$(mbit "$5")" "$FWD_TOL%" $v
	[ $v = PASS ]
}

# fwd_class_drops ROLE CLASSID: what htbctl dropped of the class on the
# device toward ROLE's receiver (at its limit, and CoDel's), empty if show
# said nothing.
fwd_class_drops() {
	local dev
	fwd_use "$FWD_H"
	if [ "$1" = c ]; then dev=$FWD_DOWN; else dev=$FWD_UP; fi
	jq -r --arg c "$2" '.classes[] | select(.class == $c) | .drops + .aqm_drops' \
		"$FWD_DIR/$FWD_H.$dev.show.json" 2>/dev/null
}

# fwd_lossless SCENARIO WHAT DROPS "SENT RECEIVED" (htbctl) "SENT
# RECEIVED" (HTB): htbctl dropped none of the class's packets, and at
# most FWD_LOSS% (0.5) of what was sent went missing on the way (the
# veths and namespaces of the VM lose one datagram in a few thousand now
# and then, after every shaper: scenario 13 lost one IPv6 datagram of 362
# per direction with htbctl's class counting all 362 sent).
FWD_LOSS=${FWD_LOSS:-0.5}
fwd_lossless() {
	local v=PASS hs hr ks kr
	read -r hs hr <<<"$4"
	read -r ks kr <<<"$5"
	if [ "$3" != 0 ] || ! awk -v s="$hs" -v r="$hr" -v t=$FWD_LOSS 'BEGIN { exit !(s > 0 && s - r <= s * t / 100) }'; then
		v=FAIL
		fail "$1 $2: htbctl dropped ${3:-?}, delivered $hr of $hs sent (at most $FWD_LOSS% may go missing)"
	fi
	summary_row "$1" "$2" "0; all" "${3:-?}; $hr of $hs" "$kr of $ks" "0; $FWD_LOSS%" $v
	[ $v = PASS ]
}

# fwd_judge_ping SCENARIO LABEL NAME: ping NAME of both topologies, request
# by request (tests/lib/rtt.sh): htbctl more than FWD_PING_MS later than
# kernel HTB + fq_codel on at most 1% of the requests more than the other
# way round, beyond chance, or else in at most 1% of the blocks of
# RTT_BLOCK_MS, and at most 1% of the requests lost. The p99s are
# reported. The p99 was the bar until stop 31's CI, where the emulator put
# htbctl's at 15.4 ms against HTB's 4.9 while class B never queued in
# htbctl: a p99 of 800 requests is the eighth-longest stall. The blocks
# came at stop 40's CI, where stalls delayed requests in runs. The judge
# still fails a shaper that delays the pings itself: one of B's frames
# at its rate (9.3 ms) added to 5% of a quiet run's htbctl replies
# (tests/cli/rtt_judge.sh); what it lets pass is in tests/lib/rtt.sh.
fwd_judge_ping() {
	local scen=$1 label=$2 a50 a99 amax al h50 h99 hmax hl n m later earlier bm blater bearlier v=PASS
	n=$(fwd_ping_count)
	read -r a50 a99 amax _ _ _ al <<<"$(rtt_stats "$FWD_DIR/$FWD_H.ping.$3")"
	read -r h50 h99 hmax _ _ _ hl <<<"$(rtt_stats "$FWD_DIR/$FWD_K.ping.$3")"
	read -r m later earlier bm blater bearlier <<<"$(rtt_judge "$FWD_DIR/$FWD_H.ping.$3" "$FWD_DIR/$FWD_K.ping.$3" \
		$FWD_PING_MS $FWD_PING_GAP_US)"
	step "$label: network RTT p50/p99/max htbctl $a50/$a99/$amax ms ($al lost), kernel HTB + fq_codel $h50/$h99/$hmax ms ($hl lost); of $m requests htbctl's more than $FWD_PING_MS ms later on $later, HTB's on $earlier; of $bm blocks of $RTT_BLOCK_MS ms htbctl's later in $blater, HTB's in $bearlier"
	plot_row "$label RTT p99 ms" - "$a99" "$h99"
	if ! rtt_no_later "$m" "$later" "$earlier" "$bm" "$blater" "$bearlier"; then
		v=FAIL
		fail "$scen $label: htbctl's network RTT more than $FWD_PING_MS ms above HTB + fq_codel's on $later of $m requests and in $blater of $bm blocks of $RTT_BLOCK_MS ms, HTB's above htbctl's on $earlier and in $bearlier (p99 $a99 against $h99 ms)"
	fi
	if [ "$al" -gt $((n / 100)) ]; then
		v=FAIL
		fail "$scen $label: htbctl lost $al of $n requests, more than 1% (kernel HTB + fq_codel $hl)"
	fi
	summary_row "$scen" "$label: network RTT p50/p99/max ms (lost of $n); requests, ${RTT_BLOCK_MS}ms blocks later by ${FWD_PING_MS}ms" "later <= htb's + 1% + 3sd, by requests or blocks" \
		"$a50 / $a99 / $amax ($al); $later, $blater" "$h50 / $h99 / $hmax ($hl); $earlier, $bearlier" "${FWD_PING_MS}ms" $v
	[ $v = PASS ]
}

# ---- two subscribers behind a router or a bridge (scenarios 12, 13)
# Each middle box shapes its subscriber-side device (download, classes by
# destination address) and its upstream device (upload, by source) with
# the same tree:
#   A: rate 1.25 Mbit/s, ceil 3, offered twice its rate over 2,000 flows
#      (1,000 IPv4, 1,000 IPv6);
#   B: rate 1.25 Mbit/s, ceil 3, offered half its rate over 300 flows;
#   the rest: 500 kbit/s, ceil 3 (none of the traffic);
# A's leaf a FIFO (aqm = off, like scenario 9's borrowers: its share is
# only a tenth below its offer, and with CoDel's 5 ms queue, which the
# emulator's sender stalls drain, A got 2.21 of its 2.27 Mbit/s beside
# HTB's 2.28 in one run), B's the defaults (CoDel, sparse flows);
# and a ping every 10 ms from B's address: a sparse flow among hundreds in
# a class under its rate. (A ping in A, a class over its rate, is one
# sparse flow among thousands, which neither shaper can tell apart; kernel
# HTB + fq_codel dropped 95% of its requests, htbctl 5-20%, and what
# pings HTB dropped went to A's data, 3-4% of A's share: docs/log.md,
# "2026-12-03: The flow tag in the VM, before and after".)
SUB_A4=198.18.1.10 SUB_A6=fd00:1::10 SUB_B4=198.18.1.20 SUB_B6=fd00:1::20
# bit/s at scale 1 (fwd_subscribers scales them: tests/lib/scale.sh)
SUB_A_BPS=1250000 SUB_A_FLOWS=1000 SUB_A_PORT=6000	# per family
SUB_B_BPS=312500 SUB_B_FLOWS=150 SUB_B_PORT=7000

# sub_tree FILE src|dst: the subscribers' tree on one device
sub_tree() {
	{ ini device default=1:30
	  ini 'class 1:1' rate=$(sr 3)kbit $FWD_BURSTS
	  ini 'class 1:10' parent=1:1 rate=$(sk 1250)kbit ceil=$(sr 3)kbit $FWD_BURSTS aqm=off "match=$2 $SUB_A4/32" "match=$2 $SUB_A6/128"
	  ini 'class 1:20' parent=1:1 rate=$(sk 1250)kbit ceil=$(sr 3)kbit $FWD_BURSTS "match=$2 $SUB_B4/32" "match=$2 $SUB_B6/128"
	  ini 'class 1:30' parent=1:1 rate=$(sk 500)kbit ceil=$(sr 3)kbit $FWD_BURSTS; } > "$1"
}

sub_shape() {	# prefix shaper
	fwd_use "$1"
	fwd_dev up && shape_with "$2" "$work/conf/up.ini" fq_codel &&
		fwd_dev down && shape_with "$2" "$work/conf/down.ini" fq_codel
}
sub_unshape() {	# prefix shaper
	fwd_use "$1"
	fwd_dev up; unshape_with "$2"
	fwd_dev down; unshape_with "$2"
}

# Upload: each subscriber's own sockets, one per family; download: the
# server's one socket per family, to both subscribers.
sub_offer() {	# prefix
	local a="$SUB_A_PORT,$SUB_A_FLOWS,$SUB_A_BPS" b="$SUB_B_PORT,$SUB_B_FLOWS,$SUB_B_BPS"
	fwd_use "$1"
	fwd_offer c "$SUB_A4" "$SRV4,$a"
	fwd_offer c "$SUB_A6" "$SRV6,$a"
	fwd_offer c "$SUB_B4" "$SRV4,$b"
	fwd_offer c "$SUB_B6" "$SRV6,$b"
	fwd_offer u "" "$SUB_A4,$a" "$SUB_B4,$b"
	fwd_offer u "" "$SUB_A6,$a" "$SUB_B6,$b"
}

# fwd_subscribers SCENARIO HPREFIX KPREFIX LABEL: the whole scenario on two
# topologies already up (htbctl on HPREFIX, kernel HTB + fq_codel on
# KPREFIX); returns 1 if a bar was missed.
fwd_subscribers() {
	local scen=$1 hp=$2 kp=$3 label=$4 ports ok=0 dir recv by
	# two trees of 3 Mbit/s (both directions) on each of two topologies,
	# A offered twice its rate: 25 Mbit/s forwarded at scale 1
	scenario_load 25
	SUB_A_BPS=$(sb "$SUB_A_BPS") SUB_B_BPS=$(sb "$SUB_B_BPS")
	sub_tree "$work/conf/up.ini" src
	sub_tree "$work/conf/down.ini" dst
	ports=$((SUB_B_PORT + SUB_B_FLOWS - SUB_A_PORT))
	FWD_PINGS="B:$SUB_B4"
	FWD_WARM="$SUB_A4,$SRV4 $SUB_A6,$SRV6 $SUB_B4,$SRV4 $SUB_B6,$SRV6"
	fwd_round "$hp" htbctl "$kp" kernel_htb sub_shape sub_unshape sub_offer \
		"u:$SUB_A_PORT:$ports" "c:$SUB_A_PORT:$ports" ||
		{ fail "$scen: the round did not run"; return 1; }
	for dir in up down; do
		if [ $dir = up ]; then recv=u by=src; else recv=c by=dst; fi
		fwd_judge "$scen" "$label $dir" "$work/conf/$dir.ini" "$recv" "$by" \
			"A 1:10 $SUB_A4 $SUB_A6 $SUB_A_BPS $SUB_A_BPS" \
			"B 1:20 $SUB_B4 $SUB_B6 $SUB_B_BPS $SUB_B_BPS" || ok=1
	done
	fwd_judge_ping "$scen" "$label: B's ping, among its flows" B || ok=1
	return $ok
}

# Subscriber i (from 0) of the ISP-sized scenarios (15, 17): a /32 of its
# own in 198.18.16.0/20, 250 to a /24.
fwd_sub_addr() { echo "198.18.$((16 + $1 / 250)).$(($1 % 250 + 1))"; }
# fwd_read_lag RECV...: "L ms (U unstamped)": the longest any of these
# receivers took to read a datagram after it arrived ("- ms" if none
# says): how late the VM ran them at worst, which costs no accuracy as
# they count by arrival; and how many datagrams they had to place by the
# time read instead (no usable timestamp: 0 unless the kernel or the
# clocks misbehave).
fwd_read_lag() {
	awk '$1 == "read_lag" { f = 1; if ($3 > m) m = $3; u += $5 }
		END { if (f) printf "%.1f ms (%d unstamped)", m, u; else printf "- ms" }' "$@"
}

# fwd_judge_subs WANT RECV FIELD NSUB EVERY -> "n bad idle min% max% sum
# wsum first": every EVERYth of NSUB subscribers against WANT's "ADDR
# BIT/S" lines, on the wire (Ethernet + IP + UDP headers, as the shapers
# count), from flowgen recv's lines in RECV keyed by address FIELD (1 the
# source, for an upload; 2 the destination, for a download); the others
# idle: bad, idle: how many beyond FWD_TOL%, and how many idle ones got
# anything.
fwd_judge_subs() {
	awk -v l=$FWD_LEN -v tol=$FWD_TOL -v f="$3" -v nsub="$4" -v every="$5" '
		function addr(i) { return "198.18." (16 + int(i / 250)) "." (i % 250 + 1) }
		FNR == NR { want[$1] = $2; next }
		$3 == "packets" { got[$f] += $8 * (l + 42) / l }
		END {
			for (i = 0; i < nsub; i++) {
				a = addr(i)
				if (i % every) { if (got[a] > 0) idle++; continue }
				e = (got[a] - want[a]) * 100 / want[a]
				n++; sum += got[a]; wsum += want[a]
				if (n == 1 || e > max) max = e; if (n == 1 || e < min) min = e
				if (e > tol || e < -tol) { bad++; if (!first) first = sprintf("%s %.0f of %.0f", a, got[a], want[a]) }
			}
			printf "%d %d %d %.2f %.2f %.0f %.0f %s\n", n, bad + 0, idle + 0, min, max, sum, wsum, first
		}' "$1" "$2"
}
