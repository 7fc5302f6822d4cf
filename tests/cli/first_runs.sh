#!/usr/bin/env bash
# scripts/first-runs.sh, the ledger of the scenarios' first runs: what a
# run's output counts as (a failed case, a file without a result, a file
# the guest took with it) and the passes in a row. The ledger is a file of
# the case's own (FIRST_RUNS_LEDGER); the logs are made up here.
RUN_TOPO=none
needs() { echo awk; }

run_log() {	# FILE: scenario 1 passes, 2 prints no result, 3 did not run, 4 fails a case
	cat > "$1" <<'LOG'
PASS scenario1: fine
--- tests/scenarios/scenario_1_accuracy.sh: 30 s
--- tests/scenarios/scenario_2_ceil_sweep.sh: 3 s
PASS scenario4: one case
FAIL scenario4 another case: 3.43 Mbit/s
--- tests/scenarios/scenario_4_latency.sh: 60 s
FAIL tests/scenarios/scenario_3_guarantee.sh: did not run (the VM ended with status 125 before it)
LOG
}

test_results_of_a_run() {
	export FIRST_RUNS_LEDGER=$tmp/ledger.tsv
	run_log "$tmp/log"
	scripts/first-runs.sh add "$tmp/log" tier abc123 > /dev/null || fail "add failed"
	[ "$(cut -f3- "$tmp/ledger.tsv" | sed 1d | sort | tr '\t\n' ' ;')" = \
	  "abc123 scenario1 PASS;abc123 scenario2 FAIL;abc123 scenario3 FAIL;abc123 scenario4 FAIL;" ] ||
		fail "$(cat "$tmp/ledger.tsv")"
}

test_passes_in_a_row() {
	export FIRST_RUNS_LEDGER=$tmp/ledger.tsv
	run_log "$tmp/log"
	printf 'PASS scenario1: x\nPASS scenario2: x\nPASS scenario3: x\nPASS scenario4: x\n' > "$tmp/good"
	printf 'PASS scenario3: on 7.2\n' > "$tmp/k2"
	scripts/first-runs.sh add "$tmp/log" tier a > /dev/null &&
		scripts/first-runs.sh add "$tmp/good" ci b > /dev/null &&
		scripts/first-runs.sh add "$tmp/good" tier c > /dev/null &&
		scripts/first-runs.sh add "$tmp/k2" kernel2 c > /dev/null || fail "add failed"
	scripts/first-runs.sh > "$tmp/out" || fail "report failed"
	# scenario1: 3 runs, 3 in a row; scenario2: 3 runs, 2 in a row, its failure in run a
	grep -Eq '^scenario1 +3 +3 +0 +0 +-$' "$tmp/out" || fail "$(cat "$tmp/out")"
	grep -Eq '^scenario2 +3 +2 +1 +0 +.* tier a$' "$tmp/out" || fail "$(cat "$tmp/out")"
	grep -Eq '^scenario3 7.2 +1 +1 +0 +0 +-$' "$tmp/out" || fail "kernel2 not its own row: $(cat "$tmp/out")"
	scripts/first-runs.sh ci | grep -Eq '^scenario4 +1 +1 +0' || fail "by label: $(scripts/first-runs.sh ci)"
}

# a run of a commit whose program did not load, marked VOID, neither ends
# a streak nor counts as a run; an unknown commit is refused
test_a_void_run_is_counted_apart() {
	export FIRST_RUNS_LEDGER=$tmp/ledger.tsv
	printf 'PASS scenario1: x\n' > "$tmp/good"
	printf 'FAIL scenario1: htbctl setup failed\n' > "$tmp/bad"
	scripts/first-runs.sh add "$tmp/good" tier a > /dev/null &&
		scripts/first-runs.sh add "$tmp/bad" tier b > /dev/null &&
		scripts/first-runs.sh add "$tmp/good" tier c > /dev/null || fail "add failed"
	scripts/first-runs.sh | grep -Eq '^scenario1 +3 +1 +1 +0 ' || fail "before: $(scripts/first-runs.sh)"
	scripts/first-runs.sh void b > /dev/null || fail "void failed"
	scripts/first-runs.sh | grep -Eq '^scenario1 +2 +2 +0 +1 +-$' || fail "after: $(scripts/first-runs.sh)"
	! scripts/first-runs.sh void zzz 2> "$tmp/err" || fail "an unknown commit marked"
	grep -q "no runs of zzz" "$tmp/err" || fail "$(cat "$tmp/err")"
}

test_a_log_without_scenarios_is_refused() {
	export FIRST_RUNS_LEDGER=$tmp/ledger.tsv
	echo "=== summary" > "$tmp/log"
	! scripts/first-runs.sh add "$tmp/log" tier a 2> "$tmp/err" || fail "accepted"
	grep -q "no scenario results" "$tmp/err" || fail "$(cat "$tmp/err")"
}

# the recap of failures at the end of tests/run.sh's output is not a
# tier's: the kernel2 part of a log cut there takes only its own results
test_the_failures_recap_is_no_result() {
	export FIRST_RUNS_LEDGER=$tmp/ledger.tsv
	printf '%s\n' '=== tier kernel2' 'PASS scenario3: on 7.2' \
		'--- tests/scenarios/scenario_3_guarantee.sh: 20 s' \
		'=== failures' 'FAIL scenario17 up: 14 of 32 active circuits beyond 3%' '=== summary' > "$tmp/k2"
	scripts/first-runs.sh add "$tmp/k2" kernel2 a > /dev/null || fail "add failed"
	[ "$(cut -f3- "$tmp/ledger.tsv" | sed 1d | tr '\t\n' ' ;')" = "a scenario3 PASS;" ] ||
		fail "$(cat "$tmp/ledger.tsv")"
}

. "$(dirname "$0")/../lib/runner.sh"
