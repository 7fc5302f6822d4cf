# Shared by the scenario tests (and scripts/demo.sh): shape the sender's
# veth with htbctl or with kernel HTB configured to the same tree, run
# iperf3 flows across the pair and read the receiver's goodput. A scenario
# script starts with
#     . "$(dirname "$0")/../lib/shaping.sh"
#     scenario_begin NAME PAIR[:TXQUEUES]...
# and prints "PASS/FAIL NAME: ..." lines itself (pass, fail: unlike a case
# of tests/lib/runner.sh, a failed row does not end the scenario).
#
# The kernel HTB side is built from `htbctl -j check` output, so both
# shapers get exactly the same resolved tree (rates, bursts, quanta, prio).
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
declare -F topo_up > /dev/null || . tests/lib/netns.sh

RESULTS=${RESULTS:-build/results}
mkdir -p "$RESULTS"

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }

# scenario_begin NAME PAIR[:TXQUEUES]...: sets SCENARIO=NAME, brings up
# the veth pairs (one TX queue unless said), $work (a directory removed on
# exit), $conf (a config path in it) and $tsv (NAME's plot data, emptied).
scenario_begin() {
	local p q
	SCENARIO=$1
	shift
	work=$(mktemp -d)
	conf=$work/conf.ini tsv=$RESULTS/$SCENARIO.tsv
	trap scenario_end EXIT
	for p; do
		q=1
		[[ $p == *:* ]] && q=${p#*:}
		topo_up "${p%%:*}" "$q" || { fail "$SCENARIO setup"; exit 1; }
	done
	: > "$tsv"
}
scenario_end() {
	topo_down
	rm -rf "$work"
}

# UDP senders get a socket buffer larger than either shaper's queue
# (htbctl's 100 ms limit, HTB's 1000 packets), so an overloaded class stays
# backlogged and the excess is dropped by the shaper. With the default
# buffer (208 KB, ~30 ms of 400-byte packets at 20 Mbit/s) the sender
# blocks on it instead, and a wake-up late by more than that under
# emulation leaves the class idle: 12-17 instead of 18.1 Mbit/s, for both
# shapers. The limit is global, so it is raised only in the VM (whose
# kernel belongs to the run). A caller may set UDP_WINDOW= (empty) for the
# default buffer: a sender that blocks at the class rate wastes no CPU on
# packets the shaper drops, which is what decides tiny packets in the VM.
UDP_WINDOW=
if [ "${VM_GUEST:-}" = 1 ]; then
	sysctl -qw net.core.wmem_max=4194304 net.core.rmem_max=4194304 && UDP_WINDOW=4M
fi

shape_htbctl() {	# config [load options]
	local conf=$1; shift
	in_snd "$HTBCTL" load dev "$SND_IF" config "$conf" "$@"
}

unshape_htbctl() {
	in_snd "$HTBCTL" unload dev "$SND_IF" >/dev/null
}

# Prints the tc -batch lines for kernel HTB + u32 filters equal to config.
htb_tc_batch() {	# config dev
	"$HTBCTL" -j check config "$1" 2>/dev/null | jq -r --arg dev "$2" '
	def minor: split(":")[1];
	"qdisc add dev \($dev) root handle 1: htb r2q \(.device.r2q)" +
	  (if .device.default then " default \(.device.default | minor)" else "" end),
	(.classes[] |
	  "class add dev \($dev) parent \(.parent // "1:") classid \(.classid) htb" +
	  " rate \(.rate * 8)bit ceil \(.ceil * 8)bit burst \(.burst)b cburst \(.cburst)b" +
	  " prio \(.prio) quantum \(.quantum)"),
	(.classes[] | . as $c | .matches[] |
	  "filter add dev \($dev) parent 1: protocol ip prio 1 u32" +
	  (if .proto == "udp" then " match ip protocol 17 0xff"
	   elif .proto == "tcp" then " match ip protocol 6 0xff" else "" end) +
	  (if .type == "dport" then " match ip dport \(.first) 0xffff"
	   elif .type == "sport" then " match ip sport \(.first) 0xffff"
	   elif .type == "dst" then " match ip dst \(.prefix)"
	   elif .type == "src" then " match ip src \(.prefix)"
	   elif .type == "mark" then " match mark \(.value) \(.mask)"
	   else error("no u32 form for match type \(.type)") end) +
	  " flowid \($c.classid)")'
}

shape_kernel_htb() {	# config
	local batch
	batch=$(mktemp)
	htb_tc_batch "$1" "$SND_IF" > "$batch" || { rm -f "$batch"; return 1; }
	in_snd tc -batch "$batch"
	local rc=$?
	rm -f "$batch"
	return $rc
}

unshape_kernel_htb() {
	in_snd tc qdisc del dev "$SND_IF" root 2>/dev/null
	return 0
}

# side_by_side_trees: a config of independent two-level trees, one per
# stdin line "PARENT_RATE LEAF_RATE LEAF_CEIL PROTO" (LEAF_CEIL "-": the
# leaf's rate). Tree n (from 1) is parent 1:n with leaf 1:n+0x40 taking
# PROTO to port 5200+n, so one load serves every case of a scenario and
# each leaf is alone on the link; the rest goes to 1:ff at 1 Mbit/s.
side_by_side_trees() {
	local n=0 pr lr lc proto
	printf '[device]\ndefault = 1:ff\n'
	while read -r pr lr lc proto; do
		n=$((n + 1))
		printf '[class 1:%x]\nrate = %s\n' $n "$pr"
		printf '[class 1:%x]\nparent = 1:%x\nrate = %s\n' $((n + 0x40)) $n "$lr"
		[ "$lc" = - ] || printf 'ceil = %s\n' "$lc"
		printf 'match = %s dport %d\n' "$proto" $((5200 + n))
	done
	printf '[class 1:ff]\nrate = 1mbit\n'
}

# shape_with htbctl|kernel_htb CONFIG: the scenarios' loop over both
# shapers; a failure says which setup failed, on stdout as a FAIL line.
shape_with() {
	if [ "$1" = htbctl ]; then
		shape_htbctl "$2" > /dev/null 2>&1 || { fail "${SCENARIO:-scenario}: htbctl load failed"; return 1; }
	else
		shape_kernel_htb "$2" || { fail "${SCENARIO:-scenario}: kernel HTB setup failed"; return 1; }
	fi
}
unshape_with() {	# htbctl|kernel_htb
	if [ "$1" = htbctl ]; then unshape_htbctl; else unshape_kernel_htb; fi
}

# each_shaper CONFIG FUNC: htbctl, then kernel HTB, each set up from
# CONFIG, then `FUNC SHAPER`, then removed. Returns 1 if a shaper could not
# be set up (its FAIL line says which); the other still runs.
each_shaper() {
	local shaper rc=0
	for shaper in htbctl kernel_htb; do
		shape_with $shaper "$1" || { rc=1; continue; }
		"$2" $shaper
		unshape_with $shaper
	done
	return $rc
}

# plot_row LABEL EXPECTED HTBCTL HTB: one row of the scenario's $tsv
# (plot_bars reads it).
plot_row() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$tsv"; }

# A progress line with the guest's wall clock: a run that hangs shows
# where it stopped, and the times show where the suite's minutes go.
step() { printf '[%(%T)T] %s\n' -1 "$*"; }

# run_flows SECONDS FLOW... ; FLOW is "port:proto:rate:len[:parallel]"
# (rate as iperf3 -b takes it, 0 = unlimited TCP; len = UDP datagram size
# or TCP write size). Prints "port bits_per_second retransmits" per flow:
# the receiver's goodput over the run minus its first second (the initial
# burst credit, at most a few tens of KB, and TCP's slow start would
# inflate or deflate a short run); retransmits are TCP's
# (0 for UDP). The per-second receiver rates go to $RESULTS/intervals.PORT.
# A flow that fails or hangs reports 0 and its error goes to stderr.
run_flows() {
	local dur=$1; shift
	local dir f port proto rate len par pids=() ports=()
	dir=$(mktemp -d)
	for f in "$@"; do
		IFS=: read -r port proto rate len <<<"$f"
		iperf_server $((dur + 30)) "$port" -J > "$dir/s.$port" 2>&1 &
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
	for f in "$@"; do
		IFS=: read -r port proto rate len <<<"$f"
		local bps retr
		# One jq per flow: jq takes about a second to start under emulation.
		# The client may print a warning (e.g. datagram > MSS) before its JSON.
		sed -n '/^{/,$p' "$dir/c.$port" > "$dir/c.$port.json"
		jq -r --slurpfile c "$dir/c.$port.json" '
			([.intervals[1:][].sum] | (map(.bytes) | add) * 8 / (map(.seconds) | add)),
			($c[0].end.sum_sent.retransmits // 0),
			(.intervals[].sum | "\(.end) \(.bits_per_second)")' \
			"$dir/s.$port" > "$dir/j.$port" 2>/dev/null
		{ read -r bps; read -r retr; cat > "$RESULTS/intervals.$port"; } < "$dir/j.$port"
		[ -n "$bps" ] || echo "iperf3 flow $f gave no result: $(grep -h -m1 -i error "$dir/c.$port" "$dir/s.$port")" >&2
		echo "$port ${bps:-0} ${retr:-0}"
	done
	rm -rf "$dir"
}

# Nearest-rank percentiles of the numbers on stdin: `percentiles 50 99 100`
# prints "p50 p99 max" (nan for no input).
percentiles() {
	sort -g | awk -v ps="$*" '{ v[NR] = $1 }
		END { n = split(ps, p, " ")
		      for (k = 1; k <= n; k++) {
			i = int(NR * p[k] / 100 + 0.5); if (i < 1) i = 1
			printf "%s%s", (k > 1 ? " " : ""), (NR ? sprintf("%.3f", v[i]) : "nan") }
		      print "" }'
}

# Relative error of measured against expected, in percent (signed).
rel_err() { awk -v m="$1" -v e="$2" 'BEGIN { printf "%.2f", (m - e) * 100 / e }'; }
within() { awk -v m="$1" -v e="$2" -v t="$3" 'BEGIN { d = (m - e) / e; exit !(d <= t/100 && d >= -t/100) }'; }

# compare_shapers CONFIG SECONDS FLOW... ->
# "port htbctl_bps htb_bps htbctl_retransmits htb_retransmits" lines.
# The same flows, first through htbctl (+ fq), then through kernel HTB.
compare_shapers() {
	local conf=$1 dur=$2; shift 2
	local a b
	a=$(mktemp) b=$(mktemp)
	if shape_htbctl "$conf" >/dev/null; then
		run_flows "$dur" "$@" > "$a"
		unshape_htbctl
		step "htbctl: $(tr '\n' ' ' < "$a")" >&2
	else
		echo "htbctl load failed" >&2
	fi
	if shape_kernel_htb "$conf"; then
		run_flows "$dur" "$@" > "$b"
		unshape_kernel_htb
		step "kernel HTB: $(tr '\n' ' ' < "$b")" >&2
	else
		echo "kernel HTB setup failed" >&2
	fi
	# files, not <(...): the VM's /dev has no /dev/fd
	sort -o "$a" "$a"; sort -o "$b" "$b"
	join -a1 -e 0 -o 0,1.2,2.2,1.3,2.3 "$a" "$b"
	rm -f "$a" "$b"
}

# Appends one row to the suite's summary (build/results/summary.tsv).
summary_row() {		# scenario case expected htbctl htb tolerance verdict
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$RESULTS/summary.tsv"
}

# The lines every plot starts with: FILE.tsv TITLE YLABEL
gnuplot_head() {
	printf '%s\n' "set terminal pngcairo size 900,500 noenhanced" \
		"set output '${1%.tsv}.png'" "set title '$2'" "set ylabel '$3'" \
		"set key below" "set datafile separator '\t'"
}

# plot_bars FILE.tsv TITLE [UNIT] -> FILE.png: columns label, expected,
# htbctl, htb (in UNIT, Mbit/s by default)
plot_bars() {
	command -v gnuplot >/dev/null || return 0
	{ gnuplot_head "$1" "$2" "${3:-Mbit/s}"; cat <<GP; } | gnuplot 2>/dev/null
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
plot '$1' using 2 title 'expected', '' using 3:xtic(1) title 'htbctl', '' using 4 title 'kernel HTB'
GP
}

# plot_lines FILE.tsv TITLE XLABEL -> FILE.png: column 1 is x, the others
# series (Mbit/s), titled by the file's header line.
plot_lines() {
	command -v gnuplot >/dev/null || return 0
	{ gnuplot_head "$1" "$2" "Mbit/s"; cat <<GP; } | gnuplot 2>/dev/null
set xlabel '$3'
set grid
set key autotitle columnhead
plot for [i=2:*] '$1' using 1:i with linespoints
GP
}

