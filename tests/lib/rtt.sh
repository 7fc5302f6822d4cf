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
# through htbctl, one through kernel HTB, judged request by request:
# rtt_paired FILE_A FILE_B X -> "n a_later b_later": of the n requests both
# answered, how many had A's network RTT more than X ms above B's, and B's
# above A's. An emulator stall delays whichever probe is in flight, A's or
# B's alike, so it lands in both counts (2026-12-03, scenarios 12 and 13
# beside a busy loop on the host: 177 and 174, 165 and 189 of 800 at 2 ms,
# where the p99s read 32.6 against 26.7 and 96.1 against 76.2 ms); a delay
# of htbctl's own lands in the first count only.
rtt_paired() {
	# a request is its sequence number and its round (files of several
	# rounds repeat the numbers)
	awk -v x="$3" '{ k = $1 SUBSEP (FNR == NR ? ka[$1]++ : kb[$1]++); r = "" }
		$4 > 0 && $3 > 0 { r = ($4 - $3) / 1e6 }
		NR == FNR { if (r != "") a[k] = r; next }
		r != "" && (k in a) { n++; d = a[k] - r; if (d > x) la++; if (d < -x) lb++ }
		END { printf "%d %d %d\n", n, la, lb }' "$1" "$2"
}
# rtt_no_later "N A_LATER B_LATER": A was later on at most 1% of the N
# requests more than B was, beyond chance (a sign test: three standard
# deviations of a fair coin over the requests where they differed by X)
rtt_no_later() {
	awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(n > 0 && a <= b + n / 100 + 3 * sqrt(a + b)) }'
}
