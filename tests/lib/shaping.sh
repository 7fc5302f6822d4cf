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
#
# htbctl shapes under `htbctl daemon` (shape_htbctl): sharing a parent's
# spare bandwidth by prio and quantum is the daemon's loop, and a plain
# load shares it first come, first served. load_htbctl is the plain load,
# for a case that measures that on purpose (shaper htbctl_fcfs).
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/scale.sh"
. "$(dirname "${BASH_SOURCE[0]}")/rtt.sh"
. "$(dirname "${BASH_SOURCE[0]}")/flows.sh"
declare -F topo_up > /dev/null || . tests/lib/netns.sh

RESULTS=${RESULTS:-build/results}
mkdir -p "$RESULTS"

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }

# scenario_begin NAME PAIR[:TXQUEUES]...: sets SCENARIO=NAME, brings up
# the veth pairs (one TX queue unless said), $work (a directory removed on
# exit), $conf (a config path in $work/conf, a directory of its own: the
# daemon watches a config's directory, so measurements go elsewhere) and
# $tsv (NAME's plot data, emptied).
scenario_begin() {
	local p q
	SCENARIO=$1
	shift
	work=$(mktemp -d)
	mkdir "$work/conf"
	conf=$work/conf/conf.ini tsv=$RESULTS/$SCENARIO.tsv
	trap scenario_end EXIT
	for p; do
		q=1
		[[ $p == *:* ]] && q=${p#*:}
		topo_up "${p%%:*}" "$q" || { fail "$SCENARIO setup"; exit 1; }
		: > "$(daemon_log)"
	done
	: > "$tsv"
}
scenario_end() {
	topo_down
	! declare -F fwd_down > /dev/null || fwd_down
	rm -rf "$work" "$DAEMON_DIR"
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

# big_socket_buffers / default_socket_buffers: the default send and
# receive buffers of every socket raised to 4 MB for a case's paced UDP
# (tsprobe), and put back. At the defaults, 208 KB, a 1442-byte datagram
# takes ~2.3 KB, so a sender holds ~93 packets in flight: ~107 ms of a
# 10 Mbit/s class whose shaper queue alone is 100 ms. A sender or receiver
# late by more than that under emulation leaves the class idle or drops at
# the receiver (scenario 8 on 2026-12-04: A at 8.9 Mbit/s for two seconds
# after its rate doubled, both shapers exposed). Only in the VM, whose
# kernel belongs to the run; elsewhere a no-op.
big_socket_buffers() {
	[ "${VM_GUEST:-}" = 1 ] || return 0
	SOCKET_BUFFERS_WERE=$(sysctl -n net.core.wmem_default net.core.rmem_default | tr '\n' ' ')
	sysctl -qw net.core.wmem_default=4194304 net.core.rmem_default=4194304
	step "socket buffers: $(sysctl -n net.core.wmem_default net.core.rmem_default | tr '\n' ' ')(were $SOCKET_BUFFERS_WERE)"
}
default_socket_buffers() {
	local w r
	[ -n "${SOCKET_BUFFERS_WERE:-}" ] || return 0
	read -r w r <<<"$SOCKET_BUFFERS_WERE"
	sysctl -qw net.core.wmem_default="$w" net.core.rmem_default="$r"
	SOCKET_BUFFERS_WERE=
}

# udp_rcvbuf_errors: datagrams the receiver's sockets dropped for want of
# buffer so far (its namespace's UdpRcvbufErrors), to tell a receiver that
# fell behind from a shaper that sent too little.
udp_rcvbuf_errors() {
	in_rcv nstat -asz UdpRcvbufErrors 2>/dev/null | awk '$1 == "UdpRcvbufErrors" { n = $2 } END { print n + 0 }'
}

# shape_htbctl CONFIG [daemon options]: `htbctl daemon dev $SND_IF config
# CONFIG` in the background in the sender's namespace, its output appended
# to $RESULTS/SCENARIO.daemon.DEV.log; returns once the daemon says it
# shares spare bandwidth by prio and quantum (its loop holds the maps; the
# lease that the datapath reads follows within a tick, 10 ms, and `show
# -j` says "prio_quantum" from then on), printing the daemon's load line. If it does not within DAEMON_WAIT seconds, or the
# daemon exits, it says why on stderr, stops the daemon, unloads and
# returns 1. The daemon re-applies CONFIG when it changes (the way to
# change the tree under it); `htbctl reload` by hand works beside it. Keep
# CONFIG's directory quiet: every write there wakes the daemon.
# The daemon is not a child of this shell (a bare `wait`, as in run_flows,
# would wait for it for ever): a detached subshell waits for it and writes
# its exit status to a file.
# unshape_htbctl: SIGTERM, wait for the daemon to exit (it leaves the device
# shaped), unload. A daemon that was gone before the SIGTERM, or that does
# not exit 0 within DAEMON_WAIT seconds, is a FAIL line on stdout.
# The bound: in the VM a load takes 2-4.5 s (it verifies the program; the
# daemon's sharing runs 1-5 s after its start), more on a busy host.
DAEMON_WAIT=${DAEMON_WAIT:-15}
DAEMON_DIR=$(mktemp -d)
declare -A DAEMON_PID=() DAEMON_RUN=()
DAEMON_SEQ=0
daemon_log() { echo "$RESULTS/${SCENARIO:-shaping}.daemon.$SND_IF.log"; }
# daemon_gone RUN: the daemon of that run has exited (its status is in RUN.rc)
daemon_gone() { [ -s "$1.rc" ]; }
daemon_tail() { grep -v '^== ' "$(daemon_log)" | tail -2 | tr '\n' ' '; }
shape_htbctl() {	# config [daemon options]
	local conf=$1; shift
	local log run pid= t0=$SECONDS s= txt line
	log=$(daemon_log)
	DAEMON_SEQ=$((DAEMON_SEQ + 1))
	run=$DAEMON_DIR/$SND_IF.$BASHPID.$DAEMON_SEQ	# a subshell counts on its own
	rm -f "$run.pid" "$run.rc"
	printf '== [%(%T)T] htbctl daemon dev %s config %s %s(start %s)\n' -1 "$SND_IF" "$conf" "${*:+$* }" "$run" >> "$log"
	# nsenter itself, not in_snd: the pid must be the daemon's (nsenter
	# execs it), not a subshell's that a SIGTERM would end without it
	( { nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$conf" "$@" \
		< /dev/null >> "$log" 2>&1 &
	    echo $! > "$run.pid"
	    wait $!
	    echo $? > "$run.rc"; } & )
	while [ -z "$pid" ] && [ $((SECONDS - t0)) -lt "$DAEMON_WAIT" ]; do
		[ -s "$run.pid" ] && read -r pid < "$run.pid" || sleep 0.1
	done
	DAEMON_PID[$SND_IF]=$pid DAEMON_RUN[$SND_IF]=$run
	while :; do
		# the daemon's own line, read by bash: a `show -j` takes 0.9 s in
		# the VM, each look added a second to every htbctl step
		txt=
		IFS= read -r -d '' txt < "$log" || :	# no NUL: read ends 1 at EOF (set -e callers)
		txt=${txt##*"(start $run)"}
		# on the device, or on the ifb of its ingress (direction =
		# ingress: the ifb is the device htbctl shapes)
		if [[ $txt == *"sharing spare bandwidth on $SND_IF by prio and quantum"* ||
		      $txt == *"sharing spare bandwidth on ifb-$SND_IF by prio and quantum"* ]]; then
			printf '== [%(%T)T] sharing prio_quantum after %d s\n' -1 $((SECONDS - t0)) >> "$log"
			# this daemon's load line
			while IFS= read -r line; do
				[[ $line == "$SND_IF: "* || $line == "ifb-$SND_IF: "* ]] && s=$line
			done <<<"$txt"
			[ -z "$s" ] || printf '%s\n' "$s"
			return 0
		fi
		if daemon_gone "$run"; then
			echo "htbctl daemon on $SND_IF exited ($(cat "$run.rc")) before its sharing loop ran: $(daemon_tail)(log $log)" >&2
			unset "DAEMON_PID[$SND_IF]"
			in_snd "$HTBCTL" unload dev "$SND_IF" > /dev/null 2>&1
			return 1
		fi
		[ $((SECONDS - t0)) -lt "$DAEMON_WAIT" ] || break
		sleep 0.2
	done
	echo "htbctl daemon on $SND_IF: no 'sharing spare bandwidth' line after $DAEMON_WAIT s (log $log)" >&2
	unshape_htbctl > /dev/null
	return 1
}

unshape_htbctl() {
	local pid=${DAEMON_PID[$SND_IF]-none} run=${DAEMON_RUN[$SND_IF]:-} log i rc s
	log=$(daemon_log)
	if [ "$pid" != none ]; then
		unset "DAEMON_PID[$SND_IF]"
		if daemon_gone "$run" || [ -z "$pid" ]; then
			fail "${SCENARIO:-shaping}: the htbctl daemon on $SND_IF had exited ($(cat "$run.rc" 2>/dev/null)) before its SIGTERM: $(daemon_tail)(log $log)"
		else
			kill -TERM "$pid"
			for ((i = 0; i < DAEMON_WAIT * 10; i++)); do
				daemon_gone "$run" && break
				sleep 0.1
			done
			if ! daemon_gone "$run"; then
				kill -KILL "$pid"
				fail "${SCENARIO:-shaping}: the htbctl daemon on $SND_IF ignored SIGTERM for $DAEMON_WAIT s (log $log)"
			elif [ "$(cat "$run.rc")" != 0 ]; then
				fail "${SCENARIO:-shaping}: the htbctl daemon on $SND_IF exited $(cat "$run.rc") on SIGTERM (log $log)"
			fi
		fi
		printf '== [%(%T)T] stopped\n' -1 >> "$log"
		# its loop's longest gap: a class's share off the ideal in a
		# run where it is long says the loop, not the datapath
		s=$(grep -o 'sharing loop: .*' "$log" | tail -n 1)
		[ -z "$s" ] || step "daemon on $SND_IF: $s" >&2
	fi
	in_snd "$HTBCTL" unload dev "$SND_IF" >/dev/null
}

# load_htbctl CONFIG [load options]: the plain load, no daemon: spare
# bandwidth first come, first served (unshape_htbctl removes it too).
load_htbctl() {
	local conf=$1; shift
	in_snd "$HTBCTL" load dev "$SND_IF" config "$conf" "$@"
}

# Prints the tc -batch lines for kernel HTB + u32 filters equal to config,
# and a qdisc on each leaf class when LEAF (tc's words for it) is given.
# With HTB_TC_VLAN=1 every filter also comes as `protocol 802.1q`: for a
# frame whose VLAN tag sits in the skb's metadata (a bridge forwarding
# tagged frames), tc's protocol is the tag's, so `protocol ip` never
# matches it; u32's offsets still start at the inner IP header.
htb_tc_batch() {	# config dev [leaf]
	"$HTBCTL" -j check config "$1" 2>/dev/null | jq -r --arg dev "$2" --arg leaf "${3:-}" \
		--arg vlan "${HTB_TC_VLAN:-0}" '
	def minor: split(":")[1];
	"qdisc add dev \($dev) root handle 1: htb r2q \(.device.r2q)" +
	  (if .device.default then " default \(.device.default | minor)" else "" end),
	(.classes[] |
	  "class add dev \($dev) parent \(.parent // "1:") classid \(.classid) htb" +
	  " rate \(.rate * 8)bit ceil \(.ceil * 8)bit burst \(.burst)b cburst \(.cburst)b" +
	  " prio \(.prio) quantum \(.quantum)"),
	(if $leaf == "" then empty else
	  .classes as $all | .classes[] |
	  select(.classid as $id | [$all[] | select(.parent == $id)] | length == 0) |
	  "qdisc add dev \($dev) parent \(.classid) \($leaf)" end),
	(.classes[] | . as $c | .matches[] |
	  ((.prefix // "") | test(":")) as $v6 |
	  (if $vlan == "1" then ["", "802.1q prio 3"] else [""] end)[] as $tagged |
	  "filter add dev \($dev) parent 1: protocol \(if $tagged != "" then $tagged
	    elif $v6 then "ipv6 prio 2" else "ip prio 1" end) u32" +
	  (if .proto == "udp" then " match ip protocol 17 0xff"
	   elif .proto == "tcp" then " match ip protocol 6 0xff" else "" end) +
	  (if .type == "dport" then " match ip dport \(.first) 0xffff"
	   elif .type == "sport" then " match ip sport \(.first) 0xffff"
	   elif .type == "dst" then " match \(if $v6 then "ip6" else "ip" end) dst \(.prefix)"
	   elif .type == "src" then " match \(if $v6 then "ip6" else "ip" end) src \(.prefix)"
	   elif .type == "mark" then " match mark \(.value) \(.mask)"
	   else error("no u32 form for match type \(.type)") end) +
	  " flowid \($c.classid)")'
}

# shape_kernel_htb CONFIG [LEAF QDISC...]: kernel HTB on the config's tree,
# each leaf class with the given qdisc (e.g. fq_codel; HTB's default leaf,
# a pfifo, without).
shape_kernel_htb() {	# config [leaf qdisc words]
	local batch conf=$1
	shift
	batch=$(mktemp)
	htb_tc_batch "$conf" "$SND_IF" "$*" > "$batch" || { rm -f "$batch"; return 1; }
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

# shape_with SHAPER CONFIG [LEAF]: the scenarios' loop over the shapers: htbctl
# (under the daemon), kernel_htb (or htb), or htbctl_fcfs (a plain load, for a
# first-come-first-served baseline), LEAF kernel HTB's leaf qdisc (tc's
# words, e.g. fq_codel); a failure says which setup failed and
# why, on stdout as a FAIL line.
shape_with() {
	local why rc=0
	# the reason through a file: shape_htbctl must not run in a subshell
	# (it keeps the daemon's pid)
	why=$(mktemp)
	case $1 in
	htbctl)
		shape_htbctl "$2" 2> "$why" > /dev/null ||
			{ fail "${SCENARIO:-scenario}: htbctl under the daemon: $(tr '\n' ' ' < "$why")"; rc=1; } ;;
	htbctl_fcfs)
		load_htbctl "$2" 2> "$why" > /dev/null ||
			{ fail "${SCENARIO:-scenario}: htbctl load failed: $(tr '\n' ' ' < "$why")"; rc=1; } ;;
	kernel_htb|htb)
		# shellcheck disable=SC2086 # $3: the leaf qdisc's words, if any
		shape_kernel_htb "$2" ${3:-} || { fail "${SCENARIO:-scenario}: kernel HTB setup failed"; rc=1; } ;;
	*)
		fail "${SCENARIO:-scenario}: no shaper '$1'"; rc=1 ;;
	esac
	rm -f "$why"
	return $rc
}
unshape_with() {	# SHAPER
	case $1 in
	kernel_htb|htb) unshape_kernel_htb ;;
	*) unshape_htbctl ;;
	esac
}

# each_shaper CONFIG FUNC [SHAPER...]: each SHAPER (default htbctl, then
# kernel_htb) set up from CONFIG, then `FUNC SHAPER`, then removed. Returns
# 1 if a shaper could not be set up (its FAIL line says which); the others
# still run.
each_shaper() {
	local conf=$1 func=$2 shaper rc=0
	shift 2
	[ $# -gt 0 ] || set -- htbctl kernel_htb
	for shaper; do
		shape_with "$shaper" "$conf" || { rc=1; continue; }
		"$func" "$shaper"
		unshape_with "$shaper"
	done
	return $rc
}

# case_record LABEL PORT: after an htbctl case, what would explain its
# number, kept in $RESULTS/$SCENARIO.LABEL.*: the receiver's seconds, fq's
# and htbctl's counters, the receiver's UDP counters (cumulative). Two
# program starts, about 1.5 s in the VM. case_explain LABEL prints them
# as one line when the case fails: CI shows its output, not $RESULTS.
case_record() {
	local base=$RESULTS/$SCENARIO.$1
	cp "$RESULTS/intervals.$2" "$base.intervals" 2>/dev/null || :
	in_snd tc -s qdisc show dev "$SND_IF" > "$base.qdisc" 2>&1 || :
	in_snd "$HTBCTL" -j show dev "$SND_IF" interval 0 > "$base.show.json" 2>&1 || :
	in_rcv cat /proc/net/snmp > "$base.snmp" 2>&1 || :
}
case_explain() {
	local base=$RESULTS/$SCENARIO.$1
	printf '  %s: per second (Mbit/s) %s; fq %s; htbctl %s; receiver UDP %s\n' "$1" \
		"$(awk '{ printf "%.2f ", $2 / 1e6 }' "$base.intervals" 2>/dev/null)" \
		"$(grep -o 'dropped [0-9]*\|flows_plimit [0-9]*\|horizon_drops [0-9]*' "$base.qdisc" 2>/dev/null |
			awk '{ n[$1] += $2 } END { for (k in n) printf "%s %d ", k, n[k] }')" \
		"$(jq -r '.classes[] | select(.packets > 0) | "\(.class) \(.packets) pkt dropped \(.drops) aqm \(.aqm_drops // 0)"' \
			"$base.show.json" 2>/dev/null | tr '\n' ' ')" \
		"$(awk '$1 == "Udp:" && n++ { print "in", $2, "rcvbuf errors", $6 }' "$base.snmp" 2>/dev/null)"
}

# plot_row LABEL EXPECTED HTBCTL HTB: one row of the scenario's $tsv
# (plot_bars reads it).
plot_row() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$tsv"; }

# A progress line with the guest's wall clock: a run that hangs shows
# where it stopped, and the times show where the suite's minutes go.
step() { printf '[%(%T)T] %s\n' -1 "$*"; }

# cpu_ticks: "BUSY TOTAL" clock ticks of all this machine's CPUs so far
# (/proc/stat; busy: user, nice, system, irq, softirq and steal, the time
# a host ran something else while this VM wanted its CPU; total adds idle
# and iowait; guest time is inside user and nice). cpu_busy_since MARK:
# the share of the CPUs' time that was busy since cpu_ticks printed MARK,
# in % ("-" without a MARK): how near its limit a case ran the VM (a
# sender that finds no CPU skips its credit).
cpu_ticks() {
	local cpu u n s i w q sq st
	read -r cpu u n s i w q sq st _ < /proc/stat
	echo $((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))
}
cpu_busy_since() {
	local b0 t0 b1 t1
	[ -n "$1" ] || { echo -; return; }
	read -r b0 t0 <<<"$1"
	read -r b1 t1 <<<"$(cpu_ticks)"
	echo $((t1 > t0 ? (b1 - b0) * 100 / (t1 - t0) : 0))
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
	# FAIL lines to stderr: stdout is the rows (the runner counts both)
	if shape_with htbctl "$conf" >&2; then
		run_flows "$dur" "$@" > "$a"
		unshape_htbctl >&2
		step "htbctl: $(tr '\n' ' ' < "$a")" >&2
	fi
	if shape_with kernel_htb "$conf" >&2; then
		run_flows "$dur" "$@" > "$b"
		unshape_kernel_htb
		step "kernel HTB: $(tr '\n' ' ' < "$b")" >&2
	fi
	# files, not <(...): the VM's /dev has no /dev/fd
	sort -o "$a" "$a"; sort -o "$b" "$b"
	# a shaper that could not be set up gives 0 for each flow
	join -a1 -a2 -e 0 -o 0,1.2,2.2,1.3,2.3 "$a" "$b"
	rm -f "$a" "$b"
}

# fluid_ideal CONFIG OFFER...: the fluid ideal of issue 11, `htbctl
# simulate`, for CONFIG under the offered loads, OFFER being CLASS=RATE
# (tc units, on the wire: a UDP flow of L-byte datagrams sent at R offers
# R * (L + 42) / L; max = backlogged). Prints "CLASSID BYTES_PER_S" per
# class; returns 1 (simulate's message on stderr) when it has no answer.
fluid_ideal() {
	local conf=$1 out
	shift
	out=$("$HTBCTL" -j simulate config "$conf" offer "$@") || return 1
	jq -er '.classes[] | "\(.classid) \(.gets)"' <<<"$out"
}

# ideal_of CLASSID FLUID_OUTPUT: that class's bytes/s in fluid_ideal's
# output (empty if it is not there).
ideal_of() { awk -v c="$1" '$1 == c { print $2 }' <<<"$2"; }

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

