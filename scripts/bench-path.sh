#!/usr/bin/env bash
# Whole-path benchmark (root; issue 13): what the egress path costs the
# sending CPU with (a) nothing, (b) kernel HTB and (c) htbctl on the same
# three-level tree, on this machine's kernel.
#
#   scripts/bench-path.sh [--rounds R] [--seconds D] [--cpus N] [--batch B] [--size BYTES]
#   flock /tmp/htbctl-root.lock scripts/bench-path.sh      (the lock other root tests hold)
#
# A UDP sender (tests/tools/udpblast) in the sender namespace of a veth
# pair sends BYTES-byte datagrams (default 64) as fast as it can, B per
# sendmmsg() (default 32), pinned to one CPU; with N senders (default: every
# CPU of this script's affinity mask) one per CPU, each on its own flow
# (source and destination port). Each sender reports its packets and its
# own CPU time; the table gives packets per second (all senders together)
# and CPU ns per packet (all senders' CPU time / all packets), the median
# over R rounds (default 5), and both as ratios to (a)'s median.
#   (a) nothing: the veth as it comes (noqueue, no filter);
#   (b) kernel HTB, depth 3: root qdisc htb, 1:1 -> 1:10 -> leaves 1:100,
#       1:101, ... (one per sender), a u32 filter per leaf on the UDP
#       source port, leaf qdiscs the default;
#   (c) htbctl, the same tree as a config, `load --no-qdisc`: the program's
#       whole cost (classify, charge, stamp) with nothing enforcing it.
# Every rate is far above what the senders reach, so nothing is shaped:
# (b) checks that its leaves saw no drops or overlimits and (c) that its
# leaves counted the packets, and each run prints what it found.
# A round runs 1 sender and then N senders, each through (a), (b), (c)
# back to back, D seconds each (default 3), the order of the cases rotated
# every round, so that a slow phase of this shared machine falls on every
# case alike.
#
# What "sender CPU" covers: on a veth the receiving side runs in softirq on
# the same CPU, in the sender's context (from the bottom-half enable at the
# end of dev_queue_xmit), and this kernel has no IRQ time accounting, so
# the sender's CPU time is the whole path from sendmmsg() to the drop at
# the sink, the same in every case. Packets per second also depends on how
# much of the CPU the sender got; CPU ns per packet does not, which makes
# it the steadier of the two on a busy machine.
#
# Environment: OUTPUT (build dir, default build), HTBCTL (default
# OUTPUT/htbctl), RESULTS (directory for TSV copies: bench-path.tsv, the
# table, and bench-path-runs.tsv, every run).
set -euo pipefail
. "$(dirname "$0")/../tests/lib/common.sh"
. tests/lib/netns.sh
set -euo pipefail	# common.sh says set -u only
BLAST=$top/$OUT/tests/tools/udpblast
SPORT0=20000	# sender i: source port SPORT0 + i, classified by it
DPORT0=30000	# and destination port DPORT0 + i, a sink socket of its own
SINK_PID= SENDERS=() tmp=

usage() {
	echo "usage: scripts/bench-path.sh [--rounds R] [--seconds D] [--cpus N] [--batch B] [--size BYTES]" >&2
	exit 2
}

# ---- arguments and preconditions

# The CPUs of this process's affinity mask, one per line (from "0-3,8").
affinity_cpus() {
	local part parts
	IFS=, read -ra parts < <(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
	for part in "${parts[@]}"; do
		if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
	done
}

parse_args() {
	ROUNDS=5 SECONDS_=3 NCPUS= BATCH=32 SIZE=64
	while [ $# -gt 0 ]; do
		[ $# -ge 2 ] || usage
		case $1 in
		--rounds) ROUNDS=$2 ;;
		--seconds) SECONDS_=$2 ;;
		--cpus) NCPUS=$2 ;;
		--batch) BATCH=$2 ;;
		--size) SIZE=$2 ;;
		*) usage ;;
		esac
		shift 2
	done
	[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench-path: --rounds: '$ROUNDS' is not a count" >&2; exit 2; }
	[[ $SECONDS_ =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v s="$SECONDS_" 'BEGIN { exit !(s > 0) }' ||
		{ echo "bench-path: --seconds: '$SECONDS_' is not a positive time" >&2; exit 2; }
	[[ $BATCH =~ ^[1-9][0-9]*$ ]] || { echo "bench-path: --batch: '$BATCH' is not a count" >&2; exit 2; }
	[[ $SIZE =~ ^[0-9]+$ ]] || { echo "bench-path: --size: '$SIZE' is not a byte count" >&2; exit 2; }
	mapfile -t ALLOWED < <(affinity_cpus)
	NCPUS=${NCPUS:-${#ALLOWED[@]}}
	[[ $NCPUS =~ ^[1-9][0-9]*$ ]] && [ "$NCPUS" -le ${#ALLOWED[@]} ] ||
		{ echo "bench-path: --cpus: '$NCPUS' is not 1..${#ALLOWED[@]} (the CPUs this process may use)" >&2; exit 2; }
	CPUS=("${ALLOWED[@]:0:NCPUS}")
	COUNTS=(1)
	[ "$NCPUS" -eq 1 ] || COUNTS+=("$NCPUS")
}

check_preconditions() {
	[ "$(id -u)" = 0 ] || { echo "bench-path: must run as root (namespaces, qdiscs, BPF)" >&2; exit 1; }
	[ -x "$HTBCTL" ] || { echo "bench-path: $HTBCTL not built (make -j2 OUTPUT=$OUT)" >&2; exit 1; }
	[ -x "$BLAST" ] || { echo "bench-path: $BLAST not built (make -j2 OUTPUT=$OUT $OUT/tests/tools/udpblast)" >&2; exit 1; }
	need_bpffs || { echo "bench-path: no bpffs at /sys/fs/bpf" >&2; exit 1; }
}

# ---- the pair, the sink, and cleaning up

# Whatever happens (an error, Ctrl-C), nothing stays: htbctl's pins, the
# namespaces with the veth pair and what runs in them, the temp directory.
cleanup() {
	local pins=/sys/fs/bpf/htbctl/$SND_IF
	# the sink and senders a Ctrl-C interrupted, by their pids, and reaped
	[ -z "$SINK_PID" ] || { kill "$SINK_PID" 2>/dev/null; wait "$SINK_PID" 2>/dev/null; } || true
	[ ${#SENDERS[@]} = 0 ] || { kill "${SENDERS[@]}" 2>/dev/null; wait "${SENDERS[@]}" 2>/dev/null; } || true
	if [ -n "$SND_IF" ] && [ -e "$pins" ]; then
		in_snd "$HTBCTL" unload dev "$SND_IF" --force >/dev/null 2>&1 ||
			"$HTBCTL" unload dev "$SND_IF" --force >/dev/null 2>&1 || true
		[ ! -e "$pins" ] || rm -rf "$pins"
	fi
	[ ! -d /sys/fs/bpf/htbctl ] || rmdir /sys/fs/bpf/htbctl 2>/dev/null || true
	topo_down
	[ -z "$tmp" ] || rm -rf "$tmp"
}

# The pair bp-s/bp-r in namespaces bps/bpr (tests/lib/netns.sh), with as
# many TX queues as senders, as a multiqueue NIC would have. A pair left by
# a run that was killed with SIGKILL has our names: it goes first.
pair_up() {
	local ns
	for ns in bps bpr; do
		[ ! -e /run/netns/$ns ] || { echo "bench-path: removing namespace $ns left by an earlier run" >&2; ip netns del $ns; }
	done
	topo_up bp "$NCPUS" || { echo "bench-path: veth pair failed" >&2; exit 1; }
}

# The receiver: one socket per sender that never reads (udpblast sink), so
# each datagram is dropped right after the socket lookup, its buffer being
# full. Without a socket the receiver would answer each datagram with ICMP
# port unreachable (rate limited, but the limit is checked per packet and
# the connected sender would get ECONNREFUSED); a tc drop at ingress would
# be cheaper still, but this kernel has neither matchall nor gact. One
# socket per flow keeps the two senders off a shared socket's counters.
sink_up() {
	local i
	in_rcv "$BLAST" sink --port $DPORT0 --count "$NCPUS" >"$tmp/sink.out" 2>&1 &
	SINK_PID=$!	# nsenter execs the sink: this is its pid
	for ((i = 0; i < 50; i++)); do
		grep -q '^ready$' "$tmp/sink.out" && return 0
		sleep 0.1
	done
	echo "bench-path: the sink did not start: $(head -c 300 "$tmp/sink.out")" >&2
	exit 1
}

# ---- the cases: set up, check after a run, take down

# Rates: every leaf 10gbit (64-byte UDP at 1 Mpps is 0.85 Gbit/s on the
# wire) and the inner classes at least the sum of their leaves, 100gbit or
# more, so no class ever runs out of its own tokens or borrows.
# Burst and cburst are given to both, htbctl's defaults (80 KiB + 1 ms of
# the rate, docs/config.md): with tc's own default (rate / HZ + MTU) this
# tc shows "burst 0b" at these rates, and HTB counted an overlimit (a mode
# change, the class into the wait queue) for every packet. Quantum set on
# every class (rate / r2q is beyond the clamps; tc warns even for inner
# classes).
LEAF_GBIT=10 QUANTUM=200000
inner_gbit() { echo $(($1 * LEAF_GBIT > 100 ? $1 * LEAF_GBIT : 100)); }
burst_of() { echo "$((81920 + $1 * 125000))b"; }	# gbit -> bytes, as htbctl's default
leaf_id() { printf '1:%x' $((0x100 + $1)); }

htb_up() {	# senders
	local n=$1 g i r b l lb
	g=$(inner_gbit "$n") l=${LEAF_GBIT}gbit
	r=${g}gbit b=$(burst_of "$g") lb=$(burst_of $LEAF_GBIT)
	{
		echo "qdisc add dev $SND_IF root handle 1: htb"
		echo "class add dev $SND_IF parent 1: classid 1:1 htb rate $r ceil $r burst $b cburst $b quantum $QUANTUM"
		echo "class add dev $SND_IF parent 1:1 classid 1:10 htb rate $r ceil $r burst $b cburst $b quantum $QUANTUM"
		for ((i = 0; i < n; i++)); do
			echo "class add dev $SND_IF parent 1:10 classid $(leaf_id $i) htb rate $l ceil $r burst $lb cburst $b quantum $QUANTUM"
			echo "filter add dev $SND_IF parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip sport $((SPORT0 + i)) 0xffff flowid $(leaf_id $i)"
		done
	} >"$tmp/htb.batch"
	in_snd tc -batch "$tmp/htb.batch" >/dev/null 2>"$tmp/tc.err" ||
		{ echo "bench-path: tc -batch failed: $(head -2 "$tmp/tc.err")" >&2; exit 1; }
}
# The leaves' packets, drops, overlimits and borrows, summed: "P D O B".
# Text: this tc (iproute2 6.1) prints classes as text even with -j.
htb_counts() {	# senders
	local i leaves=" "
	for ((i = 0; i < $1; i++)); do leaves+="$(leaf_id $i) "; done
	in_snd tc -s class show dev "$SND_IF" | awk -v leaves="$leaves" '
		/^class / { leaf = index(leaves, " " $3 " ") > 0 }
		leaf && /^ *Sent / { gsub(/[(),]/, " "); p += $4; d += $7; o += $9 }
		leaf && /^ *lended:/ { b += $4 }
		END { printf "%.0f %.0f %.0f %.0f\n", p, d, o, b }'
}
htb_check() {	# senders sent: prints the check, 1 if something was shaped or missed
	local c
	c=$(htb_counts "$1")
	set -- "$2" $c
	printf 'HTB leaves %s pkt, dropped %s, overlimits %s, borrowed %s' "${2-?}" "${3-?}" "${4-?}" "${5-?}"
	[ "${2-0}" -ge "$1" ] && [ "${3-}" = 0 ] && [ "${4-}" = 0 ]
}
htb_down() { in_snd tc qdisc del dev "$SND_IF" root; }

htbctl_up() {	# senders
	local n=$1 g i r b l lb
	g=$(inner_gbit "$n") l=${LEAF_GBIT}gbit
	r=${g}gbit b=$(burst_of "$g") lb=$(burst_of $LEAF_GBIT)
	{
		ini 'class 1:1' rate="$r" burst="$b" cburst="$b" quantum=$QUANTUM
		ini 'class 1:10' parent=1:1 rate="$r" burst="$b" cburst="$b" quantum=$QUANTUM
		for ((i = 0; i < n; i++)); do
			ini "class $(leaf_id $i)" parent=1:10 rate="$l" ceil="$r" burst="$lb" cburst="$b" \
				quantum=$QUANTUM "match=udp sport $((SPORT0 + i))"
		done
	} >"$tmp/tree.ini"
	chmod 644 "$tmp/tree.ini"
	in_snd "$HTBCTL" load dev "$SND_IF" config "$tmp/tree.ini" --no-qdisc >"$tmp/load.out" 2>&1 ||
		{ echo "bench-path: htbctl load failed: $(head -3 "$tmp/load.out")" >&2; exit 1; }
}
htbctl_check() {	# senders sent: prints the check, 1 if the leaves missed packets
	local n=$1 sent=$2 c
	c=$(in_snd "$HTBCTL" -j show dev "$SND_IF" interval 0 |
		jq -r '[.classes[] | select(.leaf)] | "\(map(.packets) | add) \(map(.drops) | add) \(map(.overlimits) | add) \(map(.borrows) | add)"')
	set -- $c
	printf 'htbctl leaves %s pkt, dropped %s, overlimits %s, borrowed %s' "${1-?}" "${2-?}" "${3-?}" "${4-?}"
	[ "${1-0}" -ge "$sent" ] && [ "${2-}" = 0 ] && [ "${3-}" = 0 ]
}
htbctl_down() { in_snd "$HTBCTL" unload dev "$SND_IF" >/dev/null; }

nothing_up() { :; }
nothing_check() { printf 'root qdisc %s' "$(in_snd tc qdisc show dev "$SND_IF" | awk '/ root / { print $2; exit }')"; }
nothing_down() { :; }

# ---- one run

# run_senders N: N udpblast senders, sender i on CPUS[i] with ports
# SPORT0+i -> DPORT0+i, started together at one instant so they overlap.
# Prints "packets cpu_ns pps late_ms busy errors" for all of them together:
# busy is their CPU time over their wall time, late_ms the latest start.
run_senders() {
	local n=$1 i start rc=0
	SENDERS=()
	start=$(($(date +%s%N) + 300000000))	# nsenter and exec take a few ms each
	for ((i = 0; i < n; i++)); do
		in_snd "$BLAST" send --dst "$RCV_IP4" --dport $((DPORT0 + i)) --sport $((SPORT0 + i)) \
			--cpu "${CPUS[i]}" --seconds "$SECONDS_" --size "$SIZE" --batch "$BATCH" \
			--start-at "$start" >"$tmp/send.$i" 2>&1 &
		SENDERS+=($!)
	done
	for i in "${SENDERS[@]}"; do wait "$i" || rc=1; done
	SENDERS=()
	[ $rc = 0 ] || { echo "bench-path: a sender failed: $(cat "$tmp"/send.*)" >&2; exit 1; }
	awk '
		{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
		  pk += v["packets"]; cpu += v["cpu_ns"]; pps += v["packets"] / v["elapsed_ns"] * 1e9
		  el += v["elapsed_ns"]; if (v["late_ns"] > late) late = v["late_ns"]; err += v["errors"] }
		END { printf "%.0f %.0f %.0f %.1f %.2f %.0f\n", pk, cpu, pps, late / 1e6, cpu / el, err }' "$tmp"/send.*
}

# run_case ROUND CASE N: one case set up, run with N senders, checked,
# taken down; a progress line, and a line of $tmp/runs.
run_case() {
	local round=$1 case=$2 n=$3 pk cpu pps late busy err nspp check ok=ok
	rm -f "$tmp"/send.*
	"${case}_up" "$n"
	run_senders "$n" >"$tmp/sum"	# not in $(...): cleanup must see SENDERS
	read -r pk cpu pps late busy err <"$tmp/sum"
	check=$("${case}_check" "$n" "$pk") || ok=CHECK-FAILED
	"${case}_down"
	[ "$pk" -gt 0 ] || { echo "bench-path: $case with $n senders sent nothing" >&2; exit 1; }
	# a sender that started a tenth of the run late did not overlap the others
	awk -v l="$late" -v d="$SECONDS_" 'BEGIN { exit !(l > d * 100) }' && ok=LATE-START
	nspp=$(awk -v c="$cpu" -v p="$pk" 'BEGIN { printf "%.3f", c / p }')
	printf '# round %d  %d sender(s)  %-8s %8.1f kpps %8.1f ns/pkt  busy %.2f  errors %d  late %.1f ms  %s%s\n' \
		"$round" "$n" "$case" "$(awk -v p="$pps" 'BEGIN { printf "%.3f", p / 1e3 }')" "$nspp" \
		"$busy" "$err" "$late" "$check" "$([ $ok = ok ] || echo "  <- $ok")"
	printf '%d\t%d\t%s\t%d\t%d\t%.0f\t%.3f\t%.3f\t%s\n' "$round" "$n" "$case" "$pk" "$cpu" "$pps" \
		"$nspp" "$busy" "$ok" >>"$tmp/runs"
}

# A short unmeasured run first: resolves the neighbour (the first datagram
# waits for ARP) and warms the caches and the sink.
warm_up() {
	local keep=$SECONDS_
	SECONDS_=0.3
	run_senders "$NCPUS" >/dev/null
	SECONDS_=$keep
}

rounds() {
	local r k n c cases=(nothing htb htbctl) order
	: >"$tmp/runs"
	for ((r = 1; r <= ROUNDS; r++)); do
		k=$(((r - 1) % 3))
		order=("${cases[@]:k}" "${cases[@]:0:k}")
		for n in "${COUNTS[@]}"; do
			for c in "${order[@]}"; do run_case "$r" "$c" "$n"; done
		done
	done
}

# ---- the report

header() {
	local dirty=
	[ -z "$(git status --porcelain -- bpf src include 2>/dev/null)" ] || dirty=" (bpf/, src/ or include/ has uncommitted changes)"
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r) $(git rev-parse --short HEAD 2>/dev/null || echo '?')$dirty"
	echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$HTBCTL" --version | head -1) built $(date -u -r "$HTBCTL" +%H:%M:%SZ)"
	echo "# $SIZE-byte UDP, sendmmsg batches of $BATCH, senders on CPUs ${CPUS[*]}; $ROUNDS rounds of $SECONDS_ s per case; veth with $NCPUS TX queues"
	echo "# tree: 1:1 -> 1:10 -> one leaf per sender (1:100...), leaves ${LEAF_GBIT}gbit, inner $(inner_gbit "$NCPUS")gbit with $NCPUS senders; htbctl --no-qdisc"
}

# The table: per sender count and case, the medians over rounds of pps
# and CPU ns per packet, their ratios to nothing's medians, and the range
# over rounds (how noisy the rounds were).
report() {
	local tsv=
	if [ -n "${RESULTS:-}" ]; then
		mkdir -p "$RESULTS"
		tsv=$RESULTS/bench-path.tsv
		{ printf 'round\tsenders\tcase\tpackets\tcpu_ns\tpps\tns_per_packet\tbusy\tcheck\n'; cat "$tmp/runs"; } >"$RESULTS/bench-path-runs.tsv"
	fi
	awk -F'\t' -v tsv="$tsv" '
	# the values of a space-separated list into a[1..m], ascending (mawk
	# has no asort; the lists are a few rounds long)
	function sorted(s, a,   m, i, j, t) {
		m = split(s, a, " ")
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return m
	}
	function median(s,   a, m) { m = sorted(s, a); return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
	function lo(s,   a) { sorted(s, a); return a[1] }
	function hi(s,   a) { return a[sorted(s, a)] }
	{ k = $2 SUBSEP $3; pps[k] = pps[k] " " $6; ns[k] = ns[k] " " $7; run[$1, k] = $7
	  if (!($2 in seen)) { seen[$2]; order[++nn] = $2 } if ($1 > nr) nr = $1 }
	END {
		name["nothing"] = "nothing"; name["htb"] = "kernel HTB d3"; name["htbctl"] = "htbctl d3"
		printf "%-8s %-14s %9s %12s %10s %10s %7s   %-15s %s\n", "senders", "case", "kpps", "ns/pkt(CPU)", "pps ratio", "CPU ratio", "paired", "kpps range", "ns/pkt range"
		if (tsv != "") printf "senders\tcase\tkpps\tns_per_packet\tpps_ratio\tcpu_ratio\tcpu_ratio_paired\tkpps_min\tkpps_max\tns_min\tns_max\n" > tsv
		for (i = 1; i <= nn; i++) {
			n = order[i]
			p0 = median(pps[n, "nothing"]); c0 = median(ns[n, "nothing"])
			split("nothing htb htbctl", cs, " ")
			for (j = 1; j <= 3; j++) {
				k = n SUBSEP cs[j]
				p = median(pps[k]); c = median(ns[k])
				# paired: the median over rounds of the ratio of the case to
				# nothing in the same round: a slow round cancels out
				pr = ""
				for (r = 1; r <= nr; r++) pr = pr " " run[r, k] / run[r, n, "nothing"]
				pr = median(pr)
				printf "%-8s %-14s %9.1f %12.1f %10.3f %10.3f %7.3f   %-15s %.1f-%.1f\n", n, name[cs[j]], p / 1e3, c, p / p0, c / c0, pr,
					sprintf("%.1f-%.1f", lo(pps[k]) / 1e3, hi(pps[k]) / 1e3), lo(ns[k]), hi(ns[k])
				if (tsv != "") printf "%s\t%s\t%.1f\t%.1f\t%.4f\t%.4f\t%.4f\t%.1f\t%.1f\t%.1f\t%.1f\n", n, cs[j], p / 1e3, c, p / p0, c / c0, pr,
					lo(pps[k]) / 1e3, hi(pps[k]) / 1e3, lo(ns[k]), hi(ns[k]) >> tsv
			}
		}
	}' "$tmp/runs"
	echo "# medians over $ROUNDS rounds; ratios: the case's median over nothing's; paired: median over rounds of the round's CPU ratio"
	echo "# ns/pkt: all senders' CPU time (user + sys, the receive softirq included) / packets; ranges: min-max over rounds"
	echo "# busy: sender CPU time / wall time (below 1: the senders lost CPU to other work, or to the hypervisor as steal)"
	if awk -F'\t' '$9 != "ok" { bad = 1 } END { exit !bad }' "$tmp/runs"; then
		echo "# WARNING: some runs failed a check (marked <- above): CHECK-FAILED shaped, dropped or uncounted packets; LATE-START senders that did not overlap"
	fi
}

main() {
	parse_args "$@"
	check_preconditions
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# htbctl may read its config with fewer privileges
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	header
	pair_up
	sink_up
	warm_up
	rounds
	report
}

main "$@"
