# Round trips of tsprobe's pings (tests/tools/tsprobe: "SEQ SEND SCHED
# RECV" lines, ns; RECV 0 for a request never answered), and the judge of
# two probes on one schedule. Sourced by tests/lib/shaping.sh.

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

# net_rtts FILE: the network's round trips (ms, from the TX_SCHED stamp)
# of tsprobe ping's answered lines, one per line
net_rtts() { awk '$4 > 0 && $3 > 0 { printf "%.6f\n", ($4 - $3) / 1e6 }' "$1"; }
# RTTs of tsprobe ping's "SEQ SEND SCHED RECV" lines -> "net_p50 net_p99
# net_max ping_p50 ping_p99 ping_max lost" (ms): the network's round trip
# from the TX_SCHED stamp, and ping(8)'s from before sendto.
rtt_stats() {	# file
	echo "$(net_rtts "$1" | percentiles 50 99 100)" \
	     "$(awk '$4 > 0 { printf "%.6f\n", ($4 - $2) / 1e6 }' "$1" | percentiles 50 99 100)" \
	     "$(awk '$4 == 0' "$1" | wc -l)"
}

# Two probes on one schedule (request N of both at the same instant), one
# through htbctl, one through kernel HTB, compared request by request:
# rtt_paired FILE_A FILE_B X [K] -> "n a_later b_later": of the n requests
# both answered, how many had A's network RTT more than X ms above B's,
# and B's above A's. With K, the units are blocks of K requests in a row
# instead: a block is A's when more of its requests were later through A
# than through B, B's the other way round (n counts the blocks).
rtt_paired() {
	# a request is its sequence number and its round (files of several
	# rounds repeat the numbers)
	awk -v x="$3" -v k="${4:-1}" '{ r = (FNR == NR ? ra[$1]++ : rb[$1]++); key = $1 SUBSEP r; v = "" }
		$4 > 0 && $3 > 0 { v = ($4 - $3) / 1e6 }
		NR == FNR { if (v != "") a[key] = v; next }
		v != "" && (key in a) {
			u = r SUBSEP int($1 / k); seen[u] = 1; d = a[key] - v
			if (d > x) c[u]++; if (d < -x) c[u]-- }
		END { for (u in seen) { n++; if (c[u] > 0) la++; if (c[u] < 0) lb++ }
		      printf "%d %d %d\n", n, la, lb }' "$1" "$2"
}

# rtt_judge FILE_A FILE_B X GAP_US -> "n a_later b_later bn ba bb": the
# requests' counts (rtt_paired), then the counts of blocks of
# RTT_BLOCK_MS (requests GAP_US apart), for rtt_no_later.
#
# Why blocks: an emulator stall delays whichever probe is in flight, and
# what it leaves queued behind it, for up to ~300 ms, so up to 30
# requests in a row go one way, and the next stall's run may go the
# other. Counted request by request, runs with host CPUs taken now and
# then fail a sign test that takes requests as independent (3 of 8 here,
# and stop 40's CI); counted in blocks about a run long, a run is one or
# two trials (docs/log.md, "2026-12-05: Stalls come in runs").
RTT_BLOCK_MS=250
rtt_judge() {
	local k=$((RTT_BLOCK_MS * 1000 / $4))
	[ "$k" -ge 1 ] || k=1
	echo "$(rtt_paired "$1" "$2" "$3") $(rtt_paired "$1" "$2" "$3" "$k")"
}

# rtt_no_later N A_LATER B_LATER [BN BA BB]: A was later on at most 1% of
# the N requests more than B was, beyond chance (a sign test: three
# standard deviations of a fair coin over the requests that went one way
# or the other); or, given the blocks' counts (rtt_judge), in at most 1%
# of the blocks more than B, beyond chance. A fails when it is later both
# ways: taken as independent requests, and taken in runs. The price, with
# B never later over 800 requests (32 blocks): A passes late on up to 22
# requests spread over the run, or on any number in up to 9 blocks, so
# delays of A's own that come in a few runs of up to 250 ms each pass as
# stalls do. Cases: tests/cli/rtt_judge.sh.
rtt_no_later() {
	awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(n > 0 && a <= b + n / 100 + 3 * sqrt(a + b)) }' ||
		{ [ $# = 6 ] && rtt_no_later "$4" "$5" "$6"; }
}
