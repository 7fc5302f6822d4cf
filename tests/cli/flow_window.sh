#!/usr/bin/env bash
# tests/lib/flows.sh, the goodput the scenarios judge: every flow measured
# over the window in which all of them ran, on one clock made from the
# servers' exits (flow_results). The iperf3 files are made up here.
RUN_TOPO=none
needs() { echo jq; }
. tests/lib/flows.sh

# server DIR PORT EXIT MBIT...: s.PORT with one interval a second at each
# rate (the last one may be "RATE@SECONDS", a partial interval), c.PORT
# with 2 retransmits, and e.PORT, the server's exit at EXIT (wall clock)
server() {
	local dir=$1 port=$2 exit=$3; shift 3
	awk -v spec="$*" 'BEGIN {
		n = split(spec, r, " "); t = 0; printf "{\"intervals\": ["
		for (i = 1; i <= n; i++) {
			s = 1; if (split(r[i], p, "@") == 2) s = p[2]
			printf "%s{\"sum\": {\"start\": %.3f, \"end\": %.3f, \"seconds\": %.3f, \"bytes\": %.0f, \"bits_per_second\": %.0f}}",
				(i > 1 ? ", " : ""), t, t + s, s, p[1] * 1e6 * s / 8, p[1] * 1e6
			t += s }
		print "]}" }' > "$dir/s.$port"
	echo '{"end": {"sum_sent": {"retransmits": 2}}}' > "$dir/c.$port"
	echo "$exit" > "$dir/e.$port"
}

rate_of() { awk -v p="$1" '$1 == p { printf "%.0f", $2 / 1000 }' "$tmp/out"; }	# kbit/s

test_a_late_flow_tail_is_left_out() {
	RESULTS=$tmp/results; mkdir -p "$RESULTS" "$tmp/d"
	# A from 93.99 to 100.00, C from 94.60 to 100.80: alone after A ended,
	# C took 18 Mbit/s; counted, its mean would be 6.2 Mbit/s
	server "$tmp/d" 10194 100.00 14 15 15 15 15 15 15@0.01
	server "$tmp/d" 10197 100.80 3 3 3 3 3 18 18@0.2
	flow_results "$tmp/d" 10194:udp:15M:1400 10197:udp:15M:1400 > "$tmp/out" 2> "$tmp/err" ||
		fail "flow_results failed: $(cat "$tmp/err")"
	[ "$(rate_of 10194)" = 15000 ] || fail "A: $(cat "$tmp/out")"
	[ "$(rate_of 10197)" = 3000 ] || fail "C: $(cat "$tmp/out") (the tail counted)"
	grep -q '^10194 .* 2$' "$tmp/out" || fail "retransmits: $(cat "$tmp/out")"
	[ "$(wc -l < "$RESULTS/intervals.10197")" = 7 ] || fail "the per-second file keeps every interval"
	[ ! -s "$tmp/err" ] || fail "stderr: $(cat "$tmp/err")"
}

test_one_flow_loses_only_its_first_second() {
	RESULTS=$tmp/results; mkdir -p "$RESULTS" "$tmp/d"
	server "$tmp/d" 5201 50 40 10 10 10 10 10@0.5
	flow_results "$tmp/d" 5201:tcp:0:1400 > "$tmp/out" 2> "$tmp/err" || fail "flow_results failed"
	[ "$(rate_of 5201)" = 10000 ] || fail "$(cat "$tmp/out")"
}

test_a_failed_flow_is_zero_the_others_measured() {
	RESULTS=$tmp/results; mkdir -p "$RESULTS" "$tmp/d"
	server "$tmp/d" 10194 100 5 5 5 5 5
	echo 'iperf3: error - unable to connect to server' > "$tmp/d/c.10196"
	echo 'iperf3: error - the server timed out' > "$tmp/d/s.10196"
	echo 101 > "$tmp/d/e.10196"
	flow_results "$tmp/d" 10194:udp:5M:1400 10196:udp:5M:1400 > "$tmp/out" 2> "$tmp/err"
	[ "$(rate_of 10194)" = 5000 ] || fail "$(cat "$tmp/out")"
	grep -q '^10196 0 0$' "$tmp/out" || fail "$(cat "$tmp/out")"
	grep -q 'no result: iperf3: error - unable to connect' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
}

test_flows_that_barely_overlap_give_no_rate() {
	RESULTS=$tmp/results; mkdir -p "$RESULTS" "$tmp/d"
	# B starts 3.5 s after A: they ran together 1.5 s, less its first second
	server "$tmp/d" 1 100 5 5 5 5 5
	server "$tmp/d" 2 103.5 5 5 5 5 5
	flow_results "$tmp/d" 1:udp:5M:1400 2:udp:5M:1400 > "$tmp/out" 2> "$tmp/err"
	grep -q '^1 0 ' "$tmp/out" && grep -q '^2 0 ' "$tmp/out" || fail "$(cat "$tmp/out")"
	grep -q 'no whole second in the window all flows ran (0.5 s)' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
}

. "$(dirname "$0")/../lib/runner.sh"
