#!/usr/bin/env bash
# `make bench`: cost per packet of the egress program against a minimal EDT
# program (bench/bench_prog.c says exactly what is measured), with and
# without its locks (the load-time switch bench_no_lock), and what the
# locks protect. Needs root. Builds nothing: `make bench` builds
# bench_prog, whose skeleton carries the program. Results:
# $OUTPUT/bench/results.txt
#   scripts/bench.sh [bench_prog options]   e.g. --trials 3 --max-classes 10000
#   make bench BENCH_ARGS="--trials 3"
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
OUT=${OUTPUT:-build}

if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root to load BPF programs" >&2
	exit 1
fi
[ -x "$OUT/bench/bench_prog" ] || { echo "bench: build first: make OUTPUT=$OUT bench" >&2; exit 1; }

{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r) $(git rev-parse --short HEAD 2>/dev/null || true)"
	echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
	"$OUT/bench/bench_prog" "$@"
	"$OUT/bench/bench_share"
	"$OUT/bench/bench_share" --classes 100000 --active 1000
} | tee "$OUT/bench/results.txt"
