#!/usr/bin/env bash
# Where the egress program's time goes, by source line: bench_prog --hold
# runs the steps table's first case (a depth-3 leaf within its rate, AQM
# off), perf samples that process (its own cache of build ids off: -N),
# and bench/prog_lines.c maps the samples in the program's functions to
# its lines through its line info. Needs root
# and perf (Debian: linux-perf). The per-step table (bench_prog --only
# steps) says how much each step costs; this says which lines, to within
# a sample's skid (docs/log.md, "2026-12-05: The leaf's step, 1.5x").
#   scripts/bench-profile.sh [SECONDS] [TOP]     (default 6 s, 40 lines)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
OUT=${OUTPUT:-build}
secs=${1:-6} lines=${2:-40}
[[ $secs =~ ^[1-9][0-9]*$ && $lines =~ ^[1-9][0-9]*$ ]] ||
	{ echo "usage: $0 [SECONDS] [TOP] (whole numbers above 0)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-profile: needs root to load BPF programs" >&2; exit 1; }
command -v perf > /dev/null || { echo "bench-profile: needs perf (apt install linux-perf)" >&2; exit 1; }
make -s OUTPUT="$OUT" "$OUT/bench/bench_prog" "$OUT/bench/prog_lines" > /dev/null
hold= tmp=$(mktemp -d /tmp/htbctl-profile.XXXXXX)
trap '[ -z "$hold" ] || kill "$hold" 2> /dev/null; wait 2> /dev/null; rm -rf "$tmp"' EXIT
"$OUT/bench/bench_prog" --hold $((secs + 4)) > "$tmp/hold" &
hold=$!
for _ in $(seq 50); do grep -q "prog id" "$tmp/hold" && break; sleep 0.1; done
id=$(sed -n 's/.*prog id \([0-9]*\).*/\1/p' "$tmp/hold")
[ -n "$id" ] || { echo "bench-profile: bench_prog --hold printed no program id" >&2; exit 1; }
sleep 1	# past the load and the first runs
perf record -q -N -F 20000 -e cpu-clock -p "$hold" -o "$tmp/perf.data" -- sleep "$secs" \
	> /dev/null 2> "$tmp/perf.err" ||
	{ echo "bench-profile: perf record failed: $(head -1 "$tmp/perf.err")" >&2; exit 1; }
perf script -i "$tmp/perf.data" -F ip,sym > "$tmp/samples" 2> "$tmp/perf.err" ||
	{ echo "bench-profile: perf script failed: $(head -1 "$tmp/perf.err")" >&2; exit 1; }
head -1 "$tmp/hold"
"$OUT/bench/prog_lines" "$id" "$lines" < "$tmp/samples"
wait "$hold"
hold=
tail -1 "$tmp/hold"
