# iperf3 flows across the pair and their goodput at the receiver, on one
# clock for all flows (run_flows, flow_results). Sourced by shaping.sh;
# run_flows needs tests/lib/netns.sh (iperf_server, iperf_client,
# await_listen) and $RESULTS; flow_results only jq and $RESULTS.

# run_flows SECONDS FLOW... ; FLOW is "port:proto:rate:len[:parallel]"
# (rate as iperf3 -b takes it, 0 = unlimited TCP; len = UDP datagram size
# or TCP write size). Prints "port bits_per_second retransmits" per flow:
# the receiver's goodput over the window in which every flow ran, minus
# its first second (the initial burst credit, at most a few tens of KB,
# and TCP's slow start would inflate or deflate a short run); retransmits
# are TCP's (0 for UDP). The clients start one after the other, 0.2-1 s
# apart under emulation, so each server's clock starts at its own time:
# a flow's tail alone on the link took the spare of the flows that had
# ended (scenario 3's C at 3.43 Mbit/s against its 2.91 in a slow round,
# with the parent 2.75% over its ceil, kernel HTB right in the same run).
# flow_results places every server's intervals on one clock, from the
# time the server exited, and counts only whole intervals inside the
# common window. The per-second receiver rates go to $RESULTS/intervals.PORT.
# A flow that fails or hangs reports 0 and its error goes to stderr.
run_flows() {
	local dur=$1; shift
	local dir f port proto rate len par pids=() ports=()
	dir=$(mktemp -d)
	for f in "$@"; do
		IFS=: read -r port proto rate len <<<"$f"
		# the exit's wall time places the server's clock (flow_results)
		{ iperf_server $((dur + 30)) "$port" -J > "$dir/s.$port" 2>&1
		  echo "$EPOCHREALTIME" > "$dir/e.$port"; } &
		ports+=("$port")
	done
	await_listen "${ports[@]}"
	for f in "$@"; do
		IFS=: read -r port proto rate len par <<<"$f"
		local opts=(-c "$RCV_IP4" -p "$port" -t "$dur" -J -P "${par:-1}")
		if [ "$proto" = udp ]; then
			opts+=(-u -b "$rate" -l "$len" ${UDP_WINDOW:+-w "$UDP_WINDOW"})
		else
			[ "$rate" = 0 ] || opts+=(-b "$rate")
			opts+=(-l "$len")
		fi
		iperf_client $((dur + 20)) "${opts[@]}" > "$dir/c.$port" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}" 2>/dev/null
	wait
	flow_results "$dir" "$@"
	rm -rf "$dir"
}

# flow_results DIR FLOW...: run_flows' results from DIR's s.PORT (the
# server's JSON), c.PORT (the client's) and e.PORT (the server's exit, wall
# clock), with one jq for every flow: a jq start takes 0.5-1 s under
# emulation, one per flow added seconds to every step of a scenario. A
# server's clock starts at its exit less its last interval's end; the
# window is from the latest start plus a second to the earliest end, and
# a flow's goodput is its whole intervals inside it (0.05 s of slack for
# the exits' own delays). A file that is not JSON (the flow failed) goes
# in as null, and the flow reports 0 with the error on stderr.
flow_results() {
	local dir=$1 f port k e txt ports=() exits=() tag p a b win=
	local -A bps retr
	shift
	for f; do
		IFS=: read -r port _ <<<"$f"
		ports+=("$port")
		# read, not $(cat): a program start costs 0.2-1 s under emulation
		e=null; [ -s "$dir/e.$port" ] && read -r e < "$dir/e.$port"
		exits+=("$e")
		: > "$RESULTS/intervals.$port"
		for k in s c; do
			txt=
			IFS= read -r -d '' txt < "$dir/$k.$port" || :	# no NUL: read ends 1 at EOF (set -e callers)
			# the client may print a warning (e.g. datagram > MSS) before its JSON
			[[ $txt == "{"* ]] || txt="{${txt#*$'\n'\{}"
			[[ $txt == "{"*"}"*([[:space:]]) && $txt == *$'\n'* ]] || txt=null
			printf '%s\n' "$txt"
		done
	done > "$dir/all.json"
	jq -rn --arg ports "${ports[*]}" --argjson exits "[$(IFS=,; echo "${exits[*]}")]" '
		($ports | split(" ")) as $p | [range(0; $p | length) | {s: input, c: input}] as $f |
		[range(0; $p | length) as $i |
		 (try ($f[$i].s.intervals | map(.sum)) catch null) as $iv |
		 if ($iv | length) == 0 or $exits[$i] == null then null
		 else {t0: ($exits[$i] - $iv[-1].end), iv: $iv} end] as $g |
		([$g[] | values | .t0] | max + 1) as $w0 |
		([$g[] | values | .t0 + .iv[-1].end] | min) as $w1 |
		"W \($w1 - $w0)",
		(range(0; $p | length) as $i |
		 (if $g[$i] == null then null else
		   [$g[$i] as $x | $x.iv[] | select($x.t0 + .start >= $w0 - 0.05 and $x.t0 + .end <= $w1 + 0.05)] |
		   if length == 0 then null else (map(.bytes) | add) * 8 / (map(.seconds) | add) end
		  end) as $bps |
		 "F \($p[$i]) \($bps // "-") \(try ($f[$i].c.end.sum_sent.retransmits // 0) catch 0)",
		 (try ($g[$i].iv[] | "I \($p[$i]) \(.end) \(.bits_per_second)") catch empty))' \
		"$dir/all.json" > "$dir/j" 2>/dev/null
	while read -r tag p a b; do
		case $tag in
		W) win=$p ;;
		F) [ "$a" = - ] || bps[$p]=$a; retr[$p]=$b ;;
		I) echo "$a $b" >> "$RESULTS/intervals.$p" ;;
		esac
	done < "$dir/j"
	for f; do
		IFS=: read -r port _ <<<"$f"
		if [ -z "${bps[$port]:-}" ]; then
			if [ -s "$dir/e.$port" ] && grep -q '"intervals"' "$dir/s.$port"; then
				echo "iperf3 flow $f gave no whole second in the window all flows ran (${win:-?} s)" >&2
			else
				echo "iperf3 flow $f gave no result: $(grep -h -m1 -i error "$dir/c.$port" "$dir/s.$port")" >&2
			fi
		fi
		echo "$port ${bps[$port]:-0} ${retr[$port]:-0}"
	done
}
