#!/usr/bin/env bash
# tests/lib/rtt.sh, the ping judge of the scenarios: two probes on one
# schedule compared request by request (rtt_paired), and the sign test
# over them (rtt_no_later). Files are tsprobe's "SEQ SEND SCHED RECV"
# lines, made up here.
RUN_TOPO=none
needs() { :; }
. tests/lib/rtt.sh

# probe FILE N [SEQ:EXTRA_US...]: N requests every 10 ms, each answered
# 300 us after it was scheduled, EXTRA_US more for the listed ones (-1: the
# request was never answered)
probe() {
	local f=$1 n=$2; shift 2
	awk -v n="$n" -v extra="$*" 'BEGIN {
		k = split(extra, e, " ")
		for (i = 1; i <= k; i++) { split(e[i], p, ":"); add[p[1]] = p[2] }
		for (s = 0; s < n; s++) {
			t = 1000000000 + s * 10000000
			r = (s in add && add[s] < 0) ? 0 : t + 100000 + 300000 + 1000 * add[s]
			printf "%d %.0f %.0f %.0f\n", s, t, t + 100000, r } }' >> "$f"
}
# some SEQ_FROM COUNT STEP EXTRA_US: "SEQ:EXTRA_US" for COUNT requests
some() { local i; for ((i = 0; i < $2; i++)); do printf '%d:%d ' $(($1 + i * $3)) "$4"; done; }

test_equal_probes_differ_nowhere() {
	probe "$tmp/a" 800
	[ "$(rtt_paired "$tmp/a" "$tmp/a" 0)" = "800 0 0" ] || fail "$(rtt_paired "$tmp/a" "$tmp/a" 0)"
	rtt_no_later 800 0 0 || fail "no difference judged later"
}
test_later_counted_past_x_only() {
	probe "$tmp/a" 100 3:2500 4:1500 5:-1
	probe "$tmp/b" 100 7:2500 5:0
	# 3 is 2.5 ms later in a, 4 only 1.5, 7 later in b, 5 lost in a
	[ "$(rtt_paired "$tmp/a" "$tmp/b" 2)" = "99 1 1" ] || fail "$(rtt_paired "$tmp/a" "$tmp/b" 2)"
}
test_rounds_pair_by_round() {
	# two rounds in each file, the same sequence numbers: round 2 of a
	# is late where round 2 of b is, round 1 nowhere
	probe "$tmp/a" 50; probe "$tmp/a" 50 $(some 0 10 1 5000)
	probe "$tmp/b" 50; probe "$tmp/b" 50 $(some 0 10 1 5000)
	[ "$(rtt_paired "$tmp/a" "$tmp/b" 2)" = "100 0 0" ] || fail "$(rtt_paired "$tmp/a" "$tmp/b" 2)"
}
test_shared_stalls_pass() {
	# stalls on 20% of the requests, each hitting one probe of the two,
	# as many on either side (scenarios 12 and 13 beside a busy loop)
	probe "$tmp/a" 800 $(some 0 80 10 30000)
	probe "$tmp/b" 800 $(some 5 80 10 30000)
	rtt_no_later $(rtt_paired "$tmp/a" "$tmp/b" 2) || fail "$(rtt_paired "$tmp/a" "$tmp/b" 2) judged later"
}
test_one_frame_on_5_percent_fails() {
	# one 9.3 ms frame added to 5% of htbctl's replies on a quiet run
	probe "$tmp/a" 800 $(some 3 40 20 9300)
	probe "$tmp/b" 800 1:3000 2:3000
	! rtt_no_later $(rtt_paired "$tmp/a" "$tmp/b" 2) || fail "$(rtt_paired "$tmp/a" "$tmp/b" 2) passed"
	# and on 1%, the p99's own allowance, it passes
	probe "$tmp/c" 800 $(some 3 8 20 9300)
	rtt_no_later $(rtt_paired "$tmp/c" "$tmp/b" 2) || fail "$(rtt_paired "$tmp/c" "$tmp/b" 2) failed"
}
test_later_on_one_side_beside_stalls_fails() {
	# the stalls of test_shared_stalls_pass, and a probe late on 10% more
	probe "$tmp/a" 800 $(some 0 80 10 30000) $(some 1 80 10 9300)
	probe "$tmp/b" 800 $(some 5 80 10 30000)
	! rtt_no_later $(rtt_paired "$tmp/a" "$tmp/b" 2) || fail "$(rtt_paired "$tmp/a" "$tmp/b" 2) passed"
}
test_nothing_answered_fails() {
	! rtt_no_later 0 0 0 || fail "no request answered, judged no later"
}

. "$(dirname "$0")/../lib/runner.sh"
