#!/usr/bin/env bash
# The scenarios' first runs, counted (issue 24: every scenario passes on
# its first run, 20 runs in a row; the suite retries nothing, so every
# run of the tier is a first run). The ledger is docs/first-runs.tsv, a
# line per scenario file per run:
#   date added (UTC)  label  commit  scenario  PASS|FAIL
#
#   scripts/first-runs.sh add LOG LABEL [COMMIT]
#       a run's output (tests/run.sh scenarios or kernel2, or a CI log)
#       into the ledger; LABEL says which run (tier, ci, kernel2); COMMIT
#       defaults to HEAD. A file counts as failed when any of its cases
#       failed, or when it started and printed no result (a guest that died).
#   scripts/first-runs.sh void COMMIT
#       every run of COMMIT marked VOID: a commit whose program did not
#       load (every htbctl case failed at its setup) measured the commit,
#       not the scenarios' first runs. Say why in docs/log.md.
#   scripts/first-runs.sh [LABEL]
#       per scenario (LABEL: only runs with that label): runs, passes in a
#       row up to the latest run, failures, and the latest failure's run;
#       kernel2's runs (the second kernel, 7.2) are rows of their own. A
#       VOID run is neither a pass nor a failure: counted apart.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ledger=${FIRST_RUNS_LEDGER:-$top/docs/first-runs.tsv}	# the env: tests

# LOG -> "scenarioN PASS|FAIL" per file that ran, in order of appearance
results_of() {
	awk '
	# tests/run.sh recaps the failures of every tier at the end: a log cut
	# at a later tier (kernel2) would take them for its own
	/^=== failures/ { exit }
	/^--- tests\/scenarios\/scenario_[0-9]+_/ {
		match($0, /scenario_[0-9]+/); s = "scenario" substr($0, RSTART + 9, RLENGTH - 9)
		if (!(s in seen)) { seen[s] = 1; order[n++] = s }
	}
	# tests/run.sh: "FAIL tests/scenarios/scenario_3_guarantee.sh: did not
	# run (the VM ended ...)", a file the guest took with it
	/^FAIL tests\/scenarios\/scenario_[0-9]+_/ {
		match($0, /scenario_[0-9]+/); s = "scenario" substr($0, RSTART + 9, RLENGTH - 9)
		if (!(s in seen)) { seen[s] = 1; order[n++] = s }
		bad[s] = 1
	}
	/^(PASS|FAIL) scenario[0-9]+[: ]/ {
		s = $2; sub(/:.*/, "", s)
		if (!(s in seen)) { seen[s] = 1; order[n++] = s }
		if ($1 == "FAIL") bad[s] = 1; else good[s] = 1
	}
	END { for (i = 0; i < n; i++) print order[i], (order[i] in bad || !(order[i] in good)) ? "FAIL" : "PASS" }
	' "$1"
}

do_add() {
	local log=$1 label=$2 commit=${3:-} when n=0
	[ -r "$log" ] || { echo "first-runs: cannot read $log" >&2; exit 1; }
	case $label in *[[:space:]]*|"") echo "first-runs: LABEL is one word" >&2; exit 2 ;; esac
	commit=${commit:-$(git -C "$top" rev-parse --short HEAD)}
	when=$(date -u +%Y-%m-%dT%H:%M)
	[ -f "$ledger" ] || printf 'date\tlabel\tcommit\tscenario\tresult\n' > "$ledger"
	while read -r s r; do
		printf '%s\t%s\t%s\t%s\t%s\n' "$when" "$label" "$commit" "$s" "$r" >> "$ledger"
		n=$((n + 1))
	done < <(results_of "$log")
	[ $n -gt 0 ] || { echo "first-runs: no scenario results in $log" >&2; exit 1; }
	echo "first-runs: $n scenario files of $label at $commit added"
}

do_void() {
	local commit=$1 n
	n=$(awk -F'\t' -v c="$commit" 'NR > 1 && $3 == c' "$ledger" | wc -l)
	[ "$n" -gt 0 ] || { echo "first-runs: no runs of $commit in the ledger" >&2; exit 1; }
	awk -F'\t' -v OFS='\t' -v c="$commit" 'NR > 1 && $3 == c { $5 = "VOID" } { print }' \
		"$ledger" > "$ledger.new" && mv "$ledger.new" "$ledger"
	echo "first-runs: $n runs of $commit marked VOID"
}

do_report() {
	local label=${1:-}
	[ -f "$ledger" ] || { echo "first-runs: no ledger yet ($ledger)" >&2; exit 1; }
	awk -F'\t' -v want="$label" '
	NR == 1 { next }
	want != "" && $2 != want { next }
	{
		s = $4 ($2 == "kernel2" ? " 7.2" : "")
		if (!(s in runs)) { order[n++] = s; runs[s] = 0 }
		if ($5 == "VOID") { void[s]++; next }
		runs[s]++
		if ($5 == "PASS") streak[s]++
		else { streak[s] = 0; fails[s]++; last[s] = $1 " " $2 " " $3 }
	}
	END {
		printf "%-16s %5s %13s %6s %5s  %s\n", "scenario", "runs", "pass in a row", "fails", "void", "latest failure"
		for (i = 0; i < n; i++) {
			s = order[i]
			printf "%-16s %5d %13d %6d %5d  %s\n", s, runs[s], streak[s], fails[s], void[s], (s in last) ? last[s] : "-"
		}
	}' "$ledger" | { read -r h; echo "$h"; sort -V; }
}

case ${1:-} in
add) shift; [ $# -ge 2 ] || { echo "usage: $0 add LOG LABEL [COMMIT]" >&2; exit 2; }; do_add "$@" ;;
void) shift; [ $# -eq 1 ] || { echo "usage: $0 void COMMIT" >&2; exit 2; }; do_void "$1" ;;
-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//' ;;
*) do_report "${1:-}" ;;
esac
