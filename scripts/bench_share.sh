#!/usr/bin/env bash
# The sharing loop's tick (bench/bench_share.c) of this build beside a
# baseline build's, in one run. Needs root.
#   scripts/bench_share.sh BASE_BUILD [ROUNDS]     e.g. /tmp/base/build 3
# Each round runs the baseline's bench_share and this build's, one after
# the other, every leaf active at 1,000, 10,000 and 100,000 classes, then
# this build's at 100,000 classes with 1,000 leaves active (the others
# sent once, before the first tick). Prints per case the lowest of the
# rounds' median ticks (us) of each, and new / baseline. The 1,000-active
# case has no run of its own in a baseline that has no --active: beside
# it stands the baseline's tick at the same size, every leaf active (the
# loop before the active set read and solved every class however many
# sent; docs/log.md, "2026-12-06: The sharing loop's tick, proportional to
# the active classes", has that loop measured at 1,000 active too).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUTPUT:-$top/build}
BASE=${1:?usage: scripts/bench_share.sh BASE_BUILD [ROUNDS]}
ROUNDS=${2:-3}
SIZES=1000,10000,100000

for b in "$BASE/bench/bench_share" "$OUT/bench/bench_share"; do
	[ -x "$b" ] || { echo "bench_share: no $b (make bench first)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench_share: needs root to load BPF programs" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "classes tick" per line, from bench_share's table: the tick is column 6
# of the baseline's (classes lookup collect ratio arith tick ...) and
# column 5 of this build's (classes active collect arith tick period CPU
# cpu-tick), its CPU time column 8.
ticks() {	# column...
	awk -v c="$*" '$1 ~ /^[0-9]+$/ { n = split(c, k, " "); l = $1
		for (i = 1; i <= n; i++) l = l " " $k[i]; print l }'
}

for r in $(seq "$ROUNDS"); do
	"$BASE/bench/bench_share" --classes "$SIZES" | ticks 6 >> "$tmp/base"
	"$OUT/bench/bench_share" --classes "$SIZES" | ticks 5 8 >> "$tmp/new"
	"$OUT/bench/bench_share" --classes 100000 --active 1000 | ticks 5 8 >> "$tmp/active"
	echo "round $r of $ROUNDS done" >&2
done

best() {	# file classes [field]
	awk -v n="$2" -v f="${3:-2}" '$1 == n { if (m == "" || $f < m) m = $f } END { print m }' "$1"
}

row() {	# classes active base-file new-file
	local b t c
	b=$(best "$3" "$1") t=$(best "$4" "$1") c=$(best "$4" "$1" 3)
	printf '%10s %10s %14s %14s %7.2fx %16s\n' "$1" "$2" "$b" "$t" \
		"$(echo "$t / $b" | bc -l)" "$c"
}

printf '\nsharing loop, one tick (us), lowest median of %s rounds, baseline %s\n' \
	"$ROUNDS" "$BASE"
printf '%10s %10s %14s %14s %8s %16s\n' classes active "baseline (us)" "this (us)" ratio \
	"this, CPU (us)"
for n in ${SIZES//,/ }; do
	row "$n" all "$tmp/base" "$tmp/new"
done
row 100000 1000 "$tmp/base" "$tmp/active"
echo "(100,000 / 1,000: the baseline's tick with every leaf active; CPU: the tick less the"
echo " time the thread waited for a CPU)"
